//! What decides a query's result on a server besides its rows, made part of what a run is
//! judged on. Three parts, the same on every session sqlgate opens (the scoring sessions, the
//! start-up check, the data digests):
//!
//! - the settings that change a result are pinned by sqlgate after connecting and after every
//!   session reset, so `init_connect` or a role- or database-level default (`ALTER ROLE ...
//!   SET`, which PostgreSQL's check refuses anyway, pinned or not) cannot change them:
//!   [`POSTGRES_PINS`], [`mysql_pin`], [`MARIADB_PINS`];
//! - the settings that are the server's or the database's to choose (collations, locale, the
//!   server's `sql_mode`) are read back and recorded with the data digests
//!   ([`postgres_settings`], [`mysql_settings`]), so a change of them is a change of the data;
//! - what no digest could vouch for is refused at start-up (exit 2, naming it): relations that
//!   are not plain tables (views compute their rows per session), row-level security, triggers
//!   and rules, user-defined functions, operators, casts, types, collations or conversions,
//!   relations added to a system schema, role- and database-level settings, invisible or
//!   virtual generated columns, and MariaDB tables on a storage engine that reads its rows
//!   from elsewhere or forgets them (FEDERATED, CONNECT, SPIDER, MERGE, BLACKHOLE)
//!   ([`postgres_levers`], [`mysql_levers`]).
//!
//! A superuser can still change how the server itself computes (a catalog edit, a server
//! program): the step that prepares the server must be the base commit's (docs/SECURITY.md).

use crate::engine::server::StartError;

/// The PostgreSQL settings every sqlgate session sets: output formats (dates, intervals,
/// floats, `bytea`, XML's binary data), the time zone and its abbreviations, the locale of
/// money, numbers and dates in `to_char` (`C`), the `search_path` (`pg_catalog` first, then
/// `public`: no other schema's operator, function or table is found by an unqualified name),
/// and the switches that change what a query means or returns (`xmloption`, a GIN index's
/// `gin_fuzzy_search_limit`, which cuts an indexed text search's rows, `quote_all_identifiers`).
/// `row_security = off` makes a read that a policy would filter an error instead;
/// `synchronize_seqscans = off` makes a plain scan start at the table's first page, so it
/// returns the rows in the heap order the data digests record (`data_digest`).
pub const POSTGRES_PINS: &str = "SET DateStyle = 'ISO, MDY'; SET IntervalStyle = 'postgres'; \
     SET extra_float_digits = 1; SET TimeZone = 'UTC'; SET bytea_output = 'hex'; \
     SET search_path = pg_catalog, public; SET standard_conforming_strings = on; \
     SET transform_null_equals = off; SET array_nulls = on; SET row_security = off; \
     SET synchronize_seqscans = off; SET xmloption = content; SET xmlbinary = base64; \
     SET lc_monetary = 'C'; SET lc_numeric = 'C'; SET lc_time = 'C'; \
     SET timezone_abbreviations = 'Default'; SET gin_fuzzy_search_limit = 0; \
     SET quote_all_identifiers = off";

/// The first object id PostgreSQL gives after `initdb`: anything at or above it was created
/// later, by someone.
const FIRST_USER_OID: u32 = 16384;

/// How many levers a refusal lists.
pub(crate) const LISTED: i64 = 12;

/// The per-role and per-database defaults (`ALTER ROLE / DATABASE ... SET`) that apply to the
/// session's role in its database, each as a lever naming `name=value` and the statement that
/// removes it. They apply at every connection and every `DISCARD ALL`, and no list of pinned
/// settings can be complete (`timezone_abbreviations`, `enable_*`, a custom `search_path`...),
/// so all of them are refused, the pinned ones too. A role's settings apply to its sessions
/// only, but those of every role the session's role is a member of are refused as well.
const ROLE_SETTINGS: &str = "SELECT 'a setting ' || cfg || ' of ' || CASE WHEN s.setrole = 0 \
       THEN 'every role' ELSE 'role ' || quote_ident(r.rolname) END || CASE WHEN \
       s.setdatabase = 0 THEN ' in every database' ELSE ' in this database' END || \
       ' (remove it: ' || CASE WHEN s.setrole = 0 AND s.setdatabase = 0 THEN 'ALTER ROLE ALL' \
       WHEN s.setrole = 0 THEN 'ALTER DATABASE ' || quote_ident(current_database()) \
       ELSE 'ALTER ROLE ' || quote_ident(r.rolname) END || CASE WHEN s.setrole <> 0 AND \
       s.setdatabase <> 0 THEN ' IN DATABASE ' || quote_ident(current_database()) ELSE '' END \
       || ' RESET ' || split_part(cfg, '=', 1) || ')' FROM pg_db_role_setting s \
       LEFT JOIN pg_roles r ON r.oid = s.setrole CROSS JOIN LATERAL unnest(s.setconfig) AS cfg \
       WHERE s.setdatabase IN (0, (SELECT d.oid FROM pg_database d \
         WHERE d.datname = current_database())) \
       AND (s.setrole = 0 OR pg_has_role(session_user, s.setrole, 'MEMBER'))";

/// What in the session's PostgreSQL database can change a query's result beyond the rows, each
/// described with its name: views, materialized views, foreign and partitioned tables, child
/// tables, row-level security and policies, triggers, rules, and user-defined functions and
/// operators in any schema (one the role cannot reach is still called by a constraint, a
/// default or an index the planner reads), casts, collations, conversions, text search
/// configurations and dictionaries, operator classes and families, and types (but
/// enums, whose labels [`postgres_settings`] records) the role can reach or that a column uses,
/// composite types (`CREATE TYPE ... AS (...)`: a name a cast can test for, `NULL::t IS NULL`,
/// which no digest reads; red team round 14),
/// relations created in a system schema (`pg_catalog` comes first on the pinned `search_path`,
/// so a table there would shadow `public`'s; the digests skip those schemas), and every role-
/// or database-level setting that applies to the session (`ROLE_SETTINGS`).
pub fn postgres_levers(
    client: &mut postgres::Client,
    limit: i64,
) -> Result<Vec<String>, postgres::Error> {
    let sql = format!(
        "SELECT lever FROM (\
         SELECT CASE c.relkind WHEN 'v' THEN 'a view ' WHEN 'm' THEN 'a materialized view ' \
           WHEN 'f' THEN 'a foreign table ' ELSE 'a partitioned table ' END || c.oid::regclass::text AS lever \
           FROM pg_class c WHERE c.oid >= {FIRST_USER_OID} AND c.relkind IN ('v','m','f','p') \
           AND has_schema_privilege(c.relnamespace, 'USAGE') \
         UNION ALL SELECT 'a child table ' || i.inhrelid::regclass::text || ' of ' || \
           i.inhparent::regclass::text FROM pg_inherits i \
         UNION ALL SELECT 'row-level security on ' || c.oid::regclass::text FROM pg_class c \
           WHERE c.relrowsecurity OR c.relforcerowsecurity \
         UNION ALL SELECT 'a row-level security policy ' || quote_ident(p.polname) || ' on ' || \
           p.polrelid::regclass::text FROM pg_policy p \
         UNION ALL SELECT 'a trigger ' || quote_ident(t.tgname) || ' on ' || t.tgrelid::regclass::text \
           FROM pg_trigger t WHERE NOT t.tgisinternal \
         UNION ALL SELECT 'a rule ' || quote_ident(r.rulename) || ' on ' || r.ev_class::regclass::text \
           FROM pg_rewrite r WHERE r.oid >= {FIRST_USER_OID} AND r.rulename <> '_RETURN' \
         UNION ALL SELECT 'a user-defined function ' || p.oid::regprocedure::text FROM pg_proc p \
           WHERE p.oid >= {FIRST_USER_OID} \
         UNION ALL SELECT 'a user-defined operator ' || o.oid::regoperator::text FROM pg_operator o \
           WHERE o.oid >= {FIRST_USER_OID} \
         UNION ALL SELECT 'a user-defined cast (' || format_type(k.castsource, NULL) || ' AS ' || \
           format_type(k.casttarget, NULL) || ')' FROM pg_cast k WHERE k.oid >= {FIRST_USER_OID} \
         UNION ALL SELECT 'a user-defined collation ' || l.oid::regcollation::text \
           FROM pg_collation l WHERE l.oid >= {FIRST_USER_OID} \
         UNION ALL SELECT 'a user-defined conversion ' || quote_ident(v.conname) \
           FROM pg_conversion v WHERE v.oid >= {FIRST_USER_OID} \
         UNION ALL SELECT 'a user-defined text search configuration ' || f.oid::regconfig::text \
           FROM pg_ts_config f WHERE f.oid >= {FIRST_USER_OID} \
         UNION ALL SELECT 'a user-defined text search dictionary ' || \
           t.oid::regdictionary::text FROM pg_ts_dict t WHERE t.oid >= {FIRST_USER_OID} \
         UNION ALL SELECT 'a user-defined operator class ' || quote_ident(o.opcname) \
           FROM pg_opclass o WHERE o.oid >= {FIRST_USER_OID} \
         UNION ALL SELECT 'a user-defined operator family ' || quote_ident(o.opfname) \
           FROM pg_opfamily o WHERE o.oid >= {FIRST_USER_OID} \
         UNION ALL SELECT 'a user-defined type ' || format_type(t.oid, NULL) FROM pg_type t \
           WHERE t.oid >= {FIRST_USER_OID} AND t.typrelid = 0 AND t.typtype <> 'e' \
           AND NOT EXISTS (SELECT 1 FROM pg_type e WHERE e.oid = t.typelem \
             AND (e.typrelid <> 0 OR e.typtype = 'e')) \
           AND (has_schema_privilege(t.typnamespace, 'USAGE') \
             OR EXISTS (SELECT 1 FROM pg_attribute a WHERE a.atttypid = t.oid))\
         UNION ALL SELECT 'a composite type ' || c.oid::regclass::text FROM pg_class c \
           WHERE c.oid >= {FIRST_USER_OID} AND c.relkind = 'c' \
         UNION ALL SELECT 'a relation ' || quote_ident(n.nspname) || '.' || quote_ident(c.relname) \
           || ' in a system schema' FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
           WHERE c.oid >= {FIRST_USER_OID} AND c.relpersistence <> 't' \
           AND (n.nspname = 'information_schema' OR n.nspname LIKE 'pg\\_%') \
           AND NOT (n.nspname = 'pg_toast' AND c.relkind IN ('t', 'i')) \
         UNION ALL {ROLE_SETTINGS}\
         ) levers ORDER BY 1 LIMIT $1"
    );
    // With `pg_catalog` alone on the path, every name is written with its schema.
    let mut transaction = client.transaction()?;
    transaction.batch_execute("SET LOCAL search_path = pg_catalog")?;
    let rows = transaction.query(&sql, &[&limit])?;
    transaction.rollback()?;
    Ok(rows.iter().map(|row| row.get(0)).collect())
}

/// What a state-changing prediction on a clone can read of the server beyond its database, as
/// one line (`kind name ...; ...`, sorted), recorded when items run on clones
/// (`dataset.engine.admin_url_env`): there a prediction is any SQL (a function it creates may
/// read whatever its role may), so no word is refused and what it could read is recorded
/// instead (red team round 15: a role the preparation created, read from `pg_roles`; a setting
/// of every role, `ALTER ROLE ALL SET`). Every role with its attributes and memberships, every
/// database and tablespace, every role- or database-level setting, and every custom setting of
/// the server's configuration (`Customized Options`); the run's own roles, templates and clones
/// (`sqlgate_live_...`) left out.
pub fn postgres_server_state(client: &mut postgres::Client) -> Result<String, postgres::Error> {
    let ours = "'sqlgate\\_live\\_%'";
    let sql = format!(
        "SELECT coalesce(string_agg(part, '; ' ORDER BY part), '') FROM (\
         SELECT 'role ' || quote_ident(r.rolname) || ' ' || concat_ws(',', \
           CASE WHEN r.rolsuper THEN 'superuser' END, CASE WHEN r.rolinherit THEN 'inherit' END, \
           CASE WHEN r.rolcreaterole THEN 'createrole' END, \
           CASE WHEN r.rolcreatedb THEN 'createdb' END, CASE WHEN r.rolcanlogin THEN 'login' END, \
           CASE WHEN r.rolreplication THEN 'replication' END, \
           CASE WHEN r.rolbypassrls THEN 'bypassrls' END, 'connlimit ' || r.rolconnlimit, \
           'valid until ' || r.rolvaliduntil) AS part FROM pg_roles r \
           WHERE r.rolname NOT LIKE {ours} \
         UNION ALL SELECT 'member ' || quote_ident(m.rolname) || ' of ' || quote_ident(g.rolname) \
           FROM pg_auth_members a JOIN pg_roles m ON m.oid = a.member \
           JOIN pg_roles g ON g.oid = a.roleid \
           WHERE m.rolname NOT LIKE {ours} AND g.rolname NOT LIKE {ours} \
         UNION ALL SELECT 'database ' || quote_ident(d.datname) FROM pg_database d \
           WHERE d.datname NOT LIKE {ours} \
         UNION ALL SELECT 'tablespace ' || quote_ident(t.spcname) FROM pg_tablespace t \
         UNION ALL SELECT 'role setting ' || coalesce(quote_ident(d.datname), '(every database)') \
           || ' ' || coalesce(quote_ident(r.rolname), '(every role)') || ' ' || \
           array_to_string(s.setconfig, ',') FROM pg_db_role_setting s \
           LEFT JOIN pg_database d ON d.oid = s.setdatabase \
           LEFT JOIN pg_roles r ON r.oid = s.setrole \
           WHERE coalesce(d.datname, '') NOT LIKE {ours} AND coalesce(r.rolname, '') NOT LIKE {ours} \
         UNION ALL SELECT {SETTING_LINE} FROM pg_settings WHERE category = 'Customized Options'\
         ) parts"
    );
    Ok(client.query_one(&sql, &[])?.get(0))
}

/// The PostgreSQL settings a run is judged under that the server or the database chooses, as
/// one line (`name=value; ...`): the database's collation, character type and locale provider,
/// the locale and text-search settings, the pinned settings as they took effect, each column
/// whose collation is not the database's with its collation, and each enum type's labels in
/// their order (which sorts its values).
pub fn postgres_settings(client: &mut postgres::Client) -> Result<String, postgres::Error> {
    let row = client.query_one(
        "SELECT (SELECT string_agg(lower(name) || '=' || setting, '; ' ORDER BY lower(name)) \
           FROM pg_settings WHERE lower(name) IN ('datestyle', 'intervalstyle', 'timezone', \
           'extra_float_digits', 'search_path', 'standard_conforming_strings', \
           'transform_null_equals', 'array_nulls', 'row_security', 'server_encoding', \
           'lc_collate', 'lc_ctype', 'lc_monetary', 'lc_numeric', 'lc_time', \
           'default_text_search_config', 'gin_fuzzy_search_limit', 'xmloption', 'xmlbinary', \
           'timezone_abbreviations', 'quote_all_identifiers')), \
         (SELECT string_agg(k || '=' || coalesce(v, ''), '; ' ORDER BY k) \
           FROM pg_database d, jsonb_each_text(to_jsonb(d)) AS e(k, v) \
           WHERE d.datname = current_database() AND k IN ('encoding', 'datcollate', 'datctype', \
           'datlocprovider', 'daticulocale', 'datlocale', 'daticurules')), \
         (SELECT string_agg(format_type(enumtypid, NULL) || ':' || enumlabel, ',' \
           ORDER BY format_type(enumtypid, NULL), enumsortorder) FROM pg_enum), \
         (SELECT string_agg(col, ',' ORDER BY col) FROM (SELECT quote_ident(n.nspname) || '.' || \
           quote_ident(c.relname) || '.' || quote_ident(a.attname) || ' ' || \
           quote_ident(l.collname) AS col FROM pg_attribute a \
           JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
           JOIN pg_collation l ON l.oid = a.attcollation \
           WHERE a.attnum > 0 AND NOT a.attisdropped AND a.attcollation <> 100 \
           AND c.relkind IN ('r','p','v','m','f') AND n.nspname <> 'information_schema' \
           AND n.nspname NOT LIKE 'pg\\_%') cols)",
        &[],
    )?;
    let part = |i: usize| row.get::<_, Option<String>>(i).unwrap_or_default();
    Ok(format!(
        "{}; {}; enums={}; collations={}",
        part(0),
        part(1),
        part(2),
        part(3)
    ))
}

/// How a setting is recorded: the value a session starts with (`reset_val`) and whether a
/// change waits for a restart, which every role reads (a reload of a configuration file
/// restored afterwards without one leaves the value as it was but a restart pending; red team
/// round 21). Not `source`: a setting the digest session pins reads `session` there and
/// `default` on a session that does not, so the start-up check of a run on clones reads it
/// instead, on the administrator's session (`refuse_foreign_state`).
const SETTING_LINE: &str = "'setting ' || name || '=' || coalesce(reset_val, '') \
     || CASE WHEN pending_restart THEN ' (pending restart)' ELSE '' END";

/// The settings [`postgres_structure`] leaves out: those whose `reset_val` is the digest
/// session's own (its client's name, its transaction's characteristics), and the port the
/// server listens on (where the workflow started it; no SQL changes it).
const NOT_RECORDED: &str = "'application_name', 'transaction_isolation', \
     'transaction_read_only', 'transaction_deferrable', 'port'";

/// What a PostgreSQL preparation can set that changes the plans of the session's database, so
/// the order a query without a full `ORDER BY` returns its rows, as one line (`kind name=value;
/// ...`, sorted): every index of a table outside the system schemas by its definition
/// (`pg_get_indexdef`: columns, `DESC`, operator class, `INCLUDE`, partial `WHERE`) and whether
/// it is valid, each table's storage options (`reloptions`), each column's statistics target
/// and options (an `n_distinct` override) where not the default, every extended statistics
/// object, every constraint by its definition (`pg_get_constraintdef`: a `CHECK` the planner
/// uses to exclude a `UNION ALL` member) and every column default and generation expression
/// (`pg_get_expr`), every user-defined function, view, trigger, rule, policy, event trigger,
/// extension, type, operator and cast with a digest of its definition (refused at start-up on a
/// read-only run, so none there; the state a run on clones copies into every clone, red team
/// round 15), every table the role can read no column of in a schema it may use, by its
/// name and columns (a cast can test for its row type, `NULL::t IS NULL`, while no digest reads
/// it; red team round 14: recorded, not refused, since a deployment may keep such tables), and
/// every setting a scoring session starts with ([`SETTING_LINE`]: the server's configuration,
/// `ALTER SYSTEM` included), but the session's own ([`NOT_RECORDED`]): not chosen
/// categories, which were beaten by the ones they left out (red team round 14: `Resource
/// Usage`'s `max_stack_depth`; round 17: a logging setting read with `current_setting`).
/// Every large object with a digest of its contents (`lo_get` reads them where its grants or
/// `lo_compat_privileges` allow). Every sequence, large object, and schema holding relations,
/// the role cannot read (`unreadable ...`; refused on a run on clones, whose predictions read
/// them; a readable sequence's state is digested as a table's rows are, red team round 16).
/// One query; the statistics' contents (what `ANALYZE` gathers) are not recorded.
pub fn postgres_structure(client: &mut postgres::Client) -> Result<String, postgres::Error> {
    let user_relation = "n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\\_%'";
    let sql = format!(
        "SELECT coalesce(string_agg(part, '; ' ORDER BY part), '') FROM (\
         SELECT 'index ' || i.indexrelid::regclass::text || '=' || pg_get_indexdef(i.indexrelid) \
           || CASE WHEN i.indisvalid THEN '' ELSE ' (invalid)' END AS part FROM pg_index i \
           JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
           WHERE {user_relation} \
         UNION ALL SELECT 'options ' || c.oid::regclass::text || '=' || \
           array_to_string(c.reloptions, ',') FROM pg_class c \
           JOIN pg_namespace n ON n.oid = c.relnamespace \
           WHERE c.reloptions IS NOT NULL AND c.relkind IN ('r', 'p', 'm') AND {user_relation} \
         UNION ALL SELECT 'column ' || c.oid::regclass::text || '.' || quote_ident(a.attname) || \
           '=statistics ' || coalesce(a.attstattarget::int, -1) || ' options ' || \
           coalesce(array_to_string(a.attoptions, ','), '') FROM pg_attribute a \
           JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
           WHERE a.attnum > 0 AND NOT a.attisdropped AND {user_relation} \
           AND (coalesce(a.attstattarget::int, -1) <> -1 OR a.attoptions IS NOT NULL) \
         UNION ALL SELECT 'statistics ' || quote_ident(n.nspname) || '.' || \
           quote_ident(s.stxname) || '=' || pg_get_statisticsobjdef(s.oid) || ' target ' || \
           coalesce(s.stxstattarget::int, -1) FROM pg_statistic_ext s \
           JOIN pg_namespace n ON n.oid = s.stxnamespace \
         UNION ALL SELECT 'constraint ' || k.conrelid::regclass::text || '.' || \
           quote_ident(k.conname) || '=' || pg_get_constraintdef(k.oid) || CASE WHEN \
           k.convalidated THEN '' ELSE ' (not validated)' END FROM pg_constraint k \
           JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
           WHERE {user_relation} \
         UNION ALL SELECT 'default ' || c.oid::regclass::text || '.' || quote_ident(a.attname) || \
           '=' || pg_get_expr(d.adbin, d.adrelid) || CASE a.attgenerated WHEN '' THEN '' \
           ELSE ' (generated)' END FROM pg_attrdef d \
           JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum \
           JOIN pg_class c ON c.oid = d.adrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
           WHERE NOT a.attisdropped AND {user_relation} \
         UNION ALL SELECT 'function ' || p.oid::regprocedure::text || ' ' || md5(concat_ws('|', \
           l.lanname, p.prokind, p.provolatile, p.proretset, p.prosecdef, \
           format_type(p.prorettype, NULL), p.prosrc, p.probin, pg_get_function_arguments(p.oid), \
           array_to_string(p.proconfig, ','))) FROM pg_proc p \
           JOIN pg_language l ON l.oid = p.prolang WHERE p.oid >= {FIRST_USER_OID} \
         UNION ALL SELECT 'view ' || c.oid::regclass::text || ' ' || md5(pg_get_viewdef(c.oid)) \
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
           WHERE c.relkind IN ('v', 'm') AND {user_relation} \
         UNION ALL SELECT 'trigger ' || quote_ident(t.tgname) || ' on ' || \
           t.tgrelid::regclass::text || ' ' || md5(pg_get_triggerdef(t.oid)) || ' ' || \
           t.tgenabled::text FROM pg_trigger t WHERE NOT t.tgisinternal \
         UNION ALL SELECT 'rule ' || quote_ident(r.rulename) || ' on ' || \
           r.ev_class::regclass::text || ' ' || md5(pg_get_ruledef(r.oid)) FROM pg_rewrite r \
           WHERE r.oid >= {FIRST_USER_OID} AND r.rulename <> '_RETURN' \
         UNION ALL SELECT 'policy ' || quote_ident(p.polname) || ' on ' || \
           p.polrelid::regclass::text || ' ' || md5(concat_ws('|', p.polcmd, p.polpermissive, \
           pg_get_expr(p.polqual, p.polrelid), pg_get_expr(p.polwithcheck, p.polrelid))) \
           FROM pg_policy p \
         UNION ALL SELECT 'event trigger ' || quote_ident(e.evtname) || ' ' || e.evtevent || ' ' \
           || e.evtfoid::regprocedure::text || ' ' || e.evtenabled::text FROM pg_event_trigger e \
         UNION ALL SELECT 'extension ' || quote_ident(x.extname) || ' ' || x.extversion \
           FROM pg_extension x WHERE x.oid >= {FIRST_USER_OID} \
         UNION ALL SELECT 'type ' || format_type(t.oid, NULL) || ' ' || t.typtype::text FROM pg_type t \
           WHERE t.oid >= {FIRST_USER_OID} AND t.typcategory <> 'A' AND (t.typrelid = 0 \
             OR EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = t.typrelid AND c.relkind = 'c')) \
         UNION ALL SELECT 'operator ' || o.oid::regoperator::text || ' ' || \
           o.oprcode::regprocedure::text FROM pg_operator o WHERE o.oid >= {FIRST_USER_OID} \
         UNION ALL SELECT 'cast ' || format_type(k.castsource, NULL) || ' as ' || \
           format_type(k.casttarget, NULL) || ' ' || k.castmethod::text || ' ' || k.castcontext::text || \
           coalesce(' ' || nullif(k.castfunc, 0)::regprocedure::text, '') FROM pg_cast k \
           WHERE k.oid >= {FIRST_USER_OID} \
         UNION ALL SELECT 'unreadable table ' || c.oid::regclass::text || '(' || \
           coalesce((SELECT string_agg(quote_ident(a.attname) || ' ' || \
             format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum) FROM pg_attribute a \
             WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '') || ')' \
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
           WHERE c.relkind IN ('r', 'p') AND c.relpersistence <> 't' AND {user_relation} \
           AND has_schema_privilege(n.oid, 'USAGE') \
           AND NOT has_any_column_privilege(c.oid, 'SELECT') \
         UNION ALL SELECT 'unreadable sequence ' || c.oid::regclass::text FROM pg_class c \
           JOIN pg_namespace n ON n.oid = c.relnamespace \
           WHERE c.relkind = 'S' AND c.relpersistence <> 't' AND {user_relation} \
           AND NOT (has_schema_privilege(n.oid, 'USAGE') AND has_table_privilege(c.oid, 'SELECT')) \
         UNION ALL SELECT CASE WHEN current_setting('lo_compat_privileges')::bool \
           OR pg_has_role(l.lomowner, 'MEMBER') OR EXISTS (SELECT 1 FROM aclexplode(l.lomacl) a \
             WHERE a.privilege_type = 'SELECT' AND (a.grantee = 0 OR pg_has_role(a.grantee, 'MEMBER'))) \
           THEN 'large object ' || l.oid::text || '=' || md5(lo_get(l.oid)) \
           ELSE 'unreadable large object ' || l.oid::text END FROM pg_largeobject_metadata l \
         UNION ALL SELECT 'unreadable schema ' || quote_ident(n.nspname) FROM pg_namespace n \
           WHERE n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\\_%' \
           AND NOT has_schema_privilege(n.oid, 'USAGE') AND EXISTS (SELECT 1 FROM pg_class c \
             WHERE c.relnamespace = n.oid AND c.relkind IN ('r', 'p', 'S', 'v', 'm', 'f')) \
         UNION ALL SELECT {SETTING_LINE} FROM pg_settings WHERE name NOT IN ({NOT_RECORDED})\
         ) parts"
    );
    Ok(client.query_one(&sql, &[])?.get(0))
}

/// The MariaDB / MySQL variables recorded with a schema's structure (those the server has),
/// each read in a session as a scoring session starts: the optimizer's and the buffers' that
/// choose plans, so the order of rows a query does not fully order; and the global-only ones
/// (no session can pin them) that change what a query returns: MySQL's regular-expression
/// limits (past which `REGEXP` is an error), `max_allowed_packet` (a string result longer than
/// it is NULL: `REPEAT`, `CONCAT`, ...), the full-text search's word lengths, boolean syntax,
/// stopwords and query expansion (`MATCH ... AGAINST`), `thread_stack` (how deep an expression
/// may nest before it is an error) and `old` (MariaDB's pre-5.0 index-hint behaviour).
const MYSQL_RECORDED: &[&str] = &[
    "optimizer_switch",
    "use_stat_tables",
    "optimizer_use_condition_selectivity",
    "optimizer_search_depth",
    "optimizer_prune_level",
    "optimizer_adjust_secondary_key_costs",
    "optimizer_extra_pruning_depth",
    "optimizer_join_limit_pref_ratio",
    "optimizer_max_sel_arg_weight",
    "optimizer_max_sel_args",
    "optimizer_selectivity_sampling_limit",
    "in_predicate_conversion_threshold",
    "expensive_subquery_limit",
    "max_seeks_for_key",
    "max_rowid_filter_size",
    "rowid_merge_buff_size",
    "join_cache_level",
    "join_buffer_space_limit",
    "mrr_buffer_size",
    "read_rnd_buffer_size",
    "tmp_memory_table_size",
    "tmp_table_size",
    "max_heap_table_size",
    "histogram_size",
    "histogram_type",
    "eq_range_index_dive_limit",
    "sort_buffer_size",
    "join_buffer_size",
    "max_length_for_sort_data",
    "regexp_time_limit",
    "regexp_stack_limit",
    "max_allowed_packet",
    "ft_boolean_syntax",
    "ft_min_word_len",
    "ft_max_word_len",
    "ft_query_expansion_limit",
    "ft_stopword_file",
    "innodb_ft_min_token_size",
    "innodb_ft_max_token_size",
    "innodb_ft_server_stopword_table",
    "thread_stack",
    "old",
];

/// What a MariaDB / MySQL preparation can set that changes the plans on `schema`, as one line
/// (`kind name=value; ...`, sorted): every index of its tables (`information_schema.STATISTICS`:
/// name, uniqueness, type, columns in order with their `A` / `D` collation and prefix length,
/// and whether the optimizer ignores it, where the server says), each table's
/// `CREATE_OPTIONS`, each column's default and generation expression (`DEFAULT(col)` reads
/// the default), each `CHECK` constraint, and the session's [`MYSQL_RECORDED`] variables (the server's, or what
/// `init_connect` set: a scoring session starts the same way). Needs a
/// `group_concat_max_len` that holds the line.
pub fn mysql_structure(conn: &mut mysql::Conn, schema: &str) -> Result<String, mysql::Error> {
    use mysql::prelude::Queryable;
    let flags: Vec<String> = conn.query(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = \
         'information_schema' AND table_name = 'STATISTICS' \
         AND column_name IN ('IGNORED', 'IS_VISIBLE') ORDER BY 1",
    )?;
    let flag: String = flags
        .iter()
        .map(|name| format!(", ' {}=', MAX({name})", name.to_lowercase()))
        .collect();
    let structure: Option<Option<String>> = conn.exec_first(
        format!(
            "SELECT GROUP_CONCAT(part ORDER BY part SEPARATOR '; ') FROM (\
             SELECT CONCAT('index ', table_name, '.', index_name, '=', \
               IF(MAX(non_unique) = 0, 'UNIQUE ', ''), MAX(index_type), ' (', \
               GROUP_CONCAT(CONCAT(column_name, IFNULL(CONCAT('(', sub_part, ')'), ''), ' ', \
               IFNULL(collation, '-')) ORDER BY seq_in_index SEPARATOR ', '), ')'{flag}) part \
               FROM information_schema.statistics WHERE table_schema = ? \
               GROUP BY table_name, index_name \
             UNION ALL SELECT CONCAT('options ', table_name, '=', create_options) \
               FROM information_schema.tables WHERE table_schema = ? \
               AND IFNULL(create_options, '') <> '' \
             UNION ALL SELECT CONCAT('default ', table_name, '.', column_name, '=', \
               IFNULL(column_default, 'none'), IF(IFNULL(generation_expression, '') = '', '', \
               CONCAT(' generated ', generation_expression))) \
               FROM information_schema.columns WHERE table_schema = ? \
               AND (column_default IS NOT NULL OR IFNULL(generation_expression, '') <> '') \
             UNION ALL SELECT CONCAT('constraint ', table_name, '.', constraint_name, '=', \
               check_clause) FROM information_schema.check_constraints \
               WHERE constraint_schema = ?\
             ) parts"
        ),
        (schema, schema, schema, schema),
    )?;
    let names: Vec<String> = MYSQL_RECORDED.iter().map(|n| format!("'{n}'")).collect();
    let variables: Vec<(String, String)> = conn.query(format!(
        "SHOW SESSION VARIABLES WHERE Variable_name IN ({})",
        names.join(", ")
    ))?;
    let mut parts: Vec<String> = variables
        .iter()
        .map(|(name, value)| format!("setting {}={value}", name.to_lowercase()))
        .collect();
    parts.extend(structure.flatten().filter(|s| !s.is_empty()));
    parts.sort();
    Ok(parts.join("; "))
}

/// The MariaDB-only session settings sqlgate's scoring sessions pin to fixed values, as an
/// assignment list for `SET SESSION`: the regular-expression flags (`default_regex_flags`, whose
/// global value, `EXTENDED` say, would otherwise change what `REGEXP` matches) to none. MySQL
/// has no such setting; the digest and start-up sessions evaluate no regular expression.
pub const MARIADB_PINS: &str = "default_regex_flags = ''";

/// The MariaDB / MySQL session settings that change a query's result, each with the value
/// (SQL) sqlgate sets in every session where the server has the variable, so that no global
/// setting, `init_connect` or client default reaches them: the time zone (UTC), decimal
/// division's precision, `WEEK()`'s default mode, the month and day names, how many bytes of a
/// value sort, `GROUP_CONCAT`'s cut (each flavour's default: 1 MB on MariaDB, 1024 on MySQL),
/// no limit on a `SELECT`'s rows or a join's size (a global `max_join_size` or
/// `sql_big_selects = 0` turns a query into an error), `PASSWORD()`'s 41-character hash
/// (`old_passwords = 0`: the global at 1 would make it the 16-character pre-4.1 one), MariaDB's
/// `standard_compliant_cte` on (off admits recursive CTEs the standard refuses),
/// `sql_auto_is_null` off, MariaDB's `max_recursive_iterations` at its maximum (a
/// lower value ends a recursive CTE silently: the statement timeout and `max_rows` bound a
/// runaway one), MySQL's `cte_max_recursion_depth` and `windowing_use_high_precision` at their
/// defaults, the query cache off for the session (`query_cache_type = 0`: a cached result is
/// served to a session whose settings differ from the one that stored it, when the key does not
/// hold them, such as `default_regex_flags`; red team round 14), and MariaDB's `old_mode`
/// cleared of every flag
/// (`ZERO_DATE_TIME_CAST` changes what a cast of a time returns) but `UTF8_IS_UTF8MB3`, the
/// meaning of `utf8`, which follows the server and is recorded. `sql_mode` is the server's
/// (`@@GLOBAL.sql_mode`), recorded with the data digests. A value read from a global is read
/// once, when the run starts, and set as that literal ([`mysql_pins`]): a `SET GLOBAL` mid-run
/// does not reach the scoring sessions' resets.
const MYSQL_PINNED: &[(&str, &str)] = &[
    ("time_zone", "'+00:00'"),
    ("sql_mode", "@@GLOBAL.sql_mode"),
    ("div_precision_increment", "4"),
    ("default_week_format", "0"),
    ("lc_time_names", "'en_US'"),
    ("max_sort_length", "1024"),
    (
        "group_concat_max_len",
        "IF(VERSION() LIKE '%MariaDB%', 1048576, 1024)",
    ),
    ("sql_select_limit", "18446744073709551615"),
    ("max_join_size", "18446744073709551615"),
    ("sql_big_selects", "1"),
    ("old_passwords", "0"),
    ("standard_compliant_cte", "1"),
    ("sql_auto_is_null", "0"),
    ("max_recursive_iterations", "4294967295"),
    ("cte_max_recursion_depth", "1000"),
    ("windowing_use_high_precision", "1"),
    ("query_cache_type", "0"),
    (
        "old_mode",
        "IF(FIND_IN_SET('UTF8_IS_UTF8MB3', @@GLOBAL.old_mode), 'UTF8_IS_UTF8MB3', '')",
    ),
];

/// How sqlgate pins a MariaDB / MySQL server's sessions: the `SET SESSION` statement over the
/// [`MYSQL_PINNED`] variables this server has, and their names, which the settings entry
/// records as they took effect. The same for every session of a run, found once at start.
#[derive(Debug, Clone, Default)]
pub struct MysqlPins {
    statement: String,
    names: Vec<String>,
}

/// The [`MysqlPins`] of the server `conn` is connected to.
pub fn mysql_pins(conn: &mut mysql::Conn) -> Result<MysqlPins, mysql::Error> {
    use mysql::prelude::Queryable;
    let listed: Vec<String> = MYSQL_PINNED.iter().map(|(n, _)| format!("'{n}'")).collect();
    let present: Vec<(String, String)> = conn.query(format!(
        "SHOW SESSION VARIABLES WHERE Variable_name IN ({})",
        listed.join(", ")
    ))?;
    let has = |name: &str| present.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
    let pinned: Vec<&(&str, &str)> = MYSQL_PINNED.iter().filter(|(n, _)| has(n)).collect();
    let mut assignments = Vec::new();
    for (name, value) in &pinned {
        assignments.push(format!("SESSION {name} = {}", literal(conn, value)?));
    }
    Ok(MysqlPins {
        statement: format!("SET {}", assignments.join(", ")),
        names: pinned.iter().map(|(name, _)| name.to_string()).collect(),
    })
}

/// `value` (SQL) as the run sets it: itself, or when it reads a global (`@@GLOBAL.`), the
/// quoted string it gives now.
fn literal(conn: &mut mysql::Conn, value: &str) -> Result<String, mysql::Error> {
    use mysql::prelude::Queryable;
    if !value.contains("@@GLOBAL.") {
        return Ok(value.to_string());
    }
    let now: Option<Option<String>> = conn.query_first(format!("SELECT CAST({value} AS CHAR)"))?;
    let now = now.flatten().unwrap_or_default();
    Ok(format!(
        "'{}'",
        now.replace('\\', "\\\\").replace('\'', "''")
    ))
}

/// Pins the MariaDB / MySQL session's settings that change a result ([`MysqlPins`]).
pub fn mysql_pin(conn: &mut mysql::Conn, pins: &MysqlPins) -> Result<(), mysql::Error> {
    use mysql::prelude::Queryable;
    conn.query_drop(&pins.statement)
}

/// The MariaDB / MySQL settings a run on `schema` is judged under, as one line (`name=value;
/// ...`): the session's pinned ones as they took effect, the connection's collation, the
/// server's name folding, the schema's collation and each column whose collation is not it.
pub fn mysql_settings(
    conn: &mut mysql::Conn,
    pins: &MysqlPins,
    schema: &str,
) -> Result<String, mysql::Error> {
    use mysql::prelude::Queryable;
    let names: Vec<&str> = pins
        .names
        .iter()
        .map(String::as_str)
        .chain(["collation_connection", "lower_case_table_names"])
        .collect();
    let fields: Vec<String> = names
        .iter()
        .map(|name| format!("'{name}=', IFNULL(CAST(@@{name} AS CHAR), '')"))
        .collect();
    let session: Option<String> = conn.query_first(format!(
        "SELECT CONCAT_WS('; ', {})",
        fields
            .iter()
            .map(|f| format!("CONCAT({f})"))
            .collect::<Vec<_>>()
            .join(", ")
    ))?;
    let (collation, columns): (Option<String>, Option<String>) = conn
        .exec_first(
            "SELECT s.default_collation_name, (SELECT GROUP_CONCAT(CONCAT(c.table_name, '.', \
             c.column_name, ' ', c.collation_name) ORDER BY c.table_name, c.column_name \
             SEPARATOR ',') FROM information_schema.columns c WHERE c.table_schema = ? \
             AND c.collation_name <> s.default_collation_name) \
             FROM information_schema.schemata s WHERE s.schema_name = ?",
            (schema, schema),
        )?
        .unwrap_or((None, None));
    Ok(format!(
        "{}; collation={}; collations={}",
        session.unwrap_or_default(),
        collation.unwrap_or_default(),
        columns.unwrap_or_default()
    ))
}

/// What in the session's MariaDB / MySQL database can change a query's result beyond the rows:
/// relations that are not base tables (views, sequences, system-versioned tables), stored
/// routines, the triggers the user can see, invisible columns (`SELECT *` leaves them out, so a
/// column made invisible changes a query's result while its rows, and so the table's digest,
/// stay the same) and virtual generated columns (computed at each read, on MariaDB from
/// session variables or `CONNECTION_ID()` too, so the digest's session and a scoring session
/// can read different values; stored ones are computed when written and digested as read).
pub fn mysql_levers(conn: &mut mysql::Conn) -> Result<Vec<String>, mysql::Error> {
    use mysql::prelude::Queryable;
    conn.query(format!(
        "SELECT lever FROM (\
         SELECT CONCAT('a ', LOWER(table_type), ' `', table_name, '`') lever \
           FROM information_schema.tables WHERE table_schema = DATABASE() \
           AND table_type <> 'BASE TABLE' \
         UNION ALL SELECT CONCAT('a stored ', LOWER(routine_type), ' `', routine_name, '`') \
           FROM information_schema.routines WHERE routine_schema = DATABASE() \
         UNION ALL SELECT CONCAT('a trigger `', trigger_name, '` on `', event_object_table, '`') \
           FROM information_schema.triggers WHERE event_object_schema = DATABASE() \
         UNION ALL SELECT CONCAT('an invisible column `', table_name, '`.`', column_name, '`') \
           FROM information_schema.columns WHERE table_schema = DATABASE() \
           AND UPPER(extra) LIKE '%INVISIBLE%' \
         UNION ALL SELECT CONCAT('a virtual generated column `', table_name, '`.`', column_name, \
           '`') FROM information_schema.columns WHERE table_schema = DATABASE() \
           AND UPPER(extra) LIKE '%VIRTUAL%' \
         UNION ALL SELECT CONCAT('a table `', table_name, '` on the ', engine, ' storage engine') \
           FROM information_schema.tables WHERE table_schema = DATABASE() \
           AND UPPER(engine) IN ('FEDERATED', 'FEDERATEDX', 'CONNECT', 'SPIDER', 'MERGE', \
           'MRG_MYISAM', 'BLACKHOLE')\
         ) levers ORDER BY 1 LIMIT {LISTED}"
    ))
}

/// Refuses a database that holds `levers` (none: nothing to refuse), naming them.
pub fn refuse(levers: &[String], database: &str) -> Result<(), StartError> {
    if levers.is_empty() {
        return Ok(());
    }
    let place = match database.is_empty() {
        true => "the database of `dataset.engine.url_env`".to_string(),
        false => format!("database `{database}`"),
    };
    Err(StartError::new(format!(
        "`dataset.engine`: {place} holds what can change a query's result beyond the rows the \
         data digests vouch for: {}. sqlgate judges a run only on plain tables read with \
         built-in functions, operators and types, under its own session settings; remove these \
         (or load the data into a fresh database with `sqlgate load`)",
        levers.join(", ")
    )))
}
