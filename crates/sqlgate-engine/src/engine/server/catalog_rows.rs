//! Every catalog row a state-changing prediction can read, recorded when items run on clones
//! (`dataset.engine.admin_url_env`). There a prediction is any SQL, so it reads every catalog
//! of its clone (a copy of the base database's) and every shared catalog, and each row a
//! preparation of the server sets is a way to hand it an answer: a comment
//! (`obj_description`), an empty schema, a sequence, a comment on the database
//! (`shobj_description`) (red team round 16), a row of `information_schema.sql_features`, an
//! object made again under a new id, a table rewritten under a new file number (round 17), and
//! every kind no list names. So no kind is chosen: every table of `pg_catalog` and
//! `information_schema` that `PUBLIC` may read (what a clone's role reads) is digested whole,
//! row by row and column by column, built-in rows too (a comment changed on a built-in
//! function is a lever as well), object ids and file numbers included (a prediction reads
//! them: `'t'::regclass::oid`).
//!
//! So the base data must be loaded the same way on a fresh server for every run (as the
//! workflow does, docs/ACTION.md): the same statements in the same order give the same ids;
//! a reload on a server that made other objects before, or a parallel restore, gives others,
//! and the run is refused as a changed benchmark. Left out is only what changes by itself
//! between two such loads: transaction ids, log positions and the planner's size estimates
//! (`relpages`, `reltuples`, `relallvisible`, which autovacuum rewrites). The statistics
//! `ANALYZE` gathers are not `PUBLIC`'s to read.
//!
//! The servers' Query data check (`livesql::query_check`) reads the same rows of an item's
//! clone, and on MariaDB / MySQL every `information_schema` row about it, written so that a
//! clone and its twin holding the same compare equal ([`postgres_clone_rows`],
//! [`mysql_clone_rows`]): every catalog row a prediction's role can change is compared, not the
//! kinds a list names (red team round 35).

/// The first object id PostgreSQL gives after `initdb`: an id below it names a built-in
/// object, never one of the run's.
const FIRST_USER_OID: u32 = 16384;

/// Columns that change between two loads of the same data without anyone changing them.
const VOLATILE: &[(&str, &str)] = &[
    ("pg_class", "relpages"),
    ("pg_class", "reltuples"),
    ("pg_class", "relallvisible"),
];

/// Types whose values are counters of the server, not state anyone sets.
const COUNTER_TYPES: &str = "'xid'::regtype, 'xid8'::regtype, 'cid'::regtype, 'pg_lsn'::regtype";

/// One column of a catalog, as the catalogs describe it.
struct Column {
    name: String,
    /// The catalog an id in this column names (a single id, not an array).
    target: Option<String>,
    /// The catalog each id of this array column names.
    targets: Option<String>,
    /// Whether it holds parse trees (`pg_node_tree`: object ids and text positions in text).
    tree: bool,
    /// Whether it holds access lists (`aclitem[]`: role names).
    acl: bool,
}

/// The digest of every `PUBLIC`-readable table of `pg_catalog` and `information_schema` in the
/// session's database (`shared` false), or of the server's shared catalogs (`shared` true),
/// one part per table (`catalog <schema>.<name>=<rows> rows <md5>`, sorted). Rows of the
/// shared catalogs that name the run's own databases and roles (`sqlgate_live_...`) are left
/// out; a base database holds none of them.
pub(crate) fn postgres_catalog_rows(
    client: &mut postgres::Client,
    shared: bool,
) -> Result<Vec<String>, postgres::Error> {
    let mut parts = Vec::new();
    for (catalog, columns) in catalog_columns(client, shared)? {
        let row = client.query_one(&catalog_digest_sql(&catalog, &columns, shared), &[])?;
        let (rows, digest): (i64, String) = (row.get(0), row.get(1));
        parts.push(format!("catalog {catalog}={rows} rows {digest}"));
    }
    Ok(parts)
}

/// Each `PUBLIC`-readable table of the system schemas (the shared ones or the database's, by
/// its quoted `schema.name`) with its readable columns, counters and estimates left out.
fn catalog_columns(
    client: &mut postgres::Client,
    shared: bool,
) -> Result<Vec<(String, Vec<Column>)>, postgres::Error> {
    let rows = client.query(
        &format!(
            "SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname), c.relname::text, \
             a.attname::text, k.pktable::text, v.pktable::text, \
             a.atttypid = 'pg_catalog.pg_node_tree'::pg_catalog.regtype, \
             a.atttypid = 'pg_catalog.aclitem[]'::pg_catalog.regtype \
             FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
             JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid \
             LEFT JOIN LATERAL (SELECT f.pktable FROM pg_catalog.pg_get_catalog_foreign_keys() f \
               WHERE f.fktable = c.oid AND NOT f.is_array \
               AND f.fkcols = ARRAY[a.attname::text] LIMIT 1) k ON true \
             LEFT JOIN LATERAL (SELECT f.pktable FROM pg_catalog.pg_get_catalog_foreign_keys() f \
               WHERE f.fktable = c.oid AND f.is_array \
               AND f.fkcols = ARRAY[a.attname::text] LIMIT 1) v ON true \
             WHERE n.nspname IN ('pg_catalog', 'information_schema') AND c.relkind = 'r' \
             AND c.relisshared = $1 AND a.attnum > 0 AND NOT a.attisdropped \
             AND pg_catalog.has_column_privilege('public', c.oid, a.attnum, 'SELECT') \
             AND a.atttypid NOT IN ({COUNTER_TYPES}) ORDER BY 1, a.attnum"
        ),
        &[&shared],
    )?;
    let mut catalogs: Vec<(String, Vec<Column>)> = Vec::new();
    for row in rows {
        let (catalog, table, name): (String, String, String) = (row.get(0), row.get(1), row.get(2));
        if VOLATILE.contains(&(table.as_str(), name.as_str())) {
            continue;
        }
        let column = Column {
            name,
            target: row.get(3),
            targets: row.get(4),
            tree: row.get(5),
            acl: row.get(6),
        };
        match catalogs.last_mut() {
            Some((last, columns)) if *last == catalog => columns.push(column),
            _ => catalogs.push((catalog, vec![column])),
        }
    }
    Ok(catalogs)
}

/// The query giving a table's row count and the MD5 of its rows (each column's text, `|`
/// between them), sorted; in a shared catalog (`shared`), rows naming the run's own objects
/// left out ([`run_own`]).
fn catalog_digest_sql(catalog: &str, columns: &[Column], shared: bool) -> String {
    let texts: Vec<String> = columns
        .iter()
        .map(|column| format!("{}::text", quote_ident(&column.name)))
        .collect();
    let ours = match shared {
        true => run_own(columns),
        false => "false".to_string(),
    };
    format!(
        "SELECT count(*), md5(coalesce(string_agg(r, E'\\n' ORDER BY r), '')) FROM (\
         SELECT concat_ws('|', {}) AS r FROM {catalog} WHERE NOT ({ours})) t",
        texts.join(", ")
    )
}

/// The condition of a row that names one of the run's own databases or roles
/// (`sqlgate_live_...`: a template, a clone, their roles), which the run makes and drops: by
/// a database's name, or by an id the catalog's foreign keys (or its `classid` / `objid`
/// pairs) say names a user-made object, written as that object.
fn run_own(columns: &[Column]) -> String {
    let has = |name: &str| columns.iter().any(|c| c.name == name);
    let named: Vec<String> = columns
        .iter()
        .filter_map(|column| {
            let id = quote_ident(&column.name);
            let class = match (&column.target, class_column(columns, &column.name)) {
                (Some(target), _) => format!("'{target}'::regclass"),
                (None, Some(class)) => class.to_string(),
                (None, None) => return None,
            };
            Some(format!(
                "({id}::oid >= {FIRST_USER_OID} AND coalesce(pg_catalog.pg_describe_object(\
                 {class}, {id}::oid, 0), '') ~ '^(role|database) sqlgate_live_')"
            ))
        })
        .chain(has("datname").then(|| "datname::text LIKE 'sqlgate\\_live\\_%'".to_string()))
        .collect();
    match named.is_empty() {
        true => "false".to_string(),
        false => named.join(" OR "),
    }
}

/// The column naming the catalog of the id in column `id` (`classoid` / `objoid` pairs and the
/// like), when `columns` pair it with one.
fn class_column(columns: &[Column], id: &str) -> Option<&'static str> {
    let has = |name: &str| columns.iter().any(|c| c.name == name);
    match id {
        "refobjid" if has("refclassid") => Some("refclassid"),
        "objoid" | "objid" if has("classoid") => Some("classoid"),
        "objoid" | "objid" if has("classid") => Some("classid"),
        _ => None,
    }
}

/// The digest of every catalog row of an item's clone that a read can see, for the Query data
/// check (`livesql::query_check`), which compares a prediction's clone with its twin: both are
/// copies of one template, so every row is the template's unless a statement changed it, and
/// any row a prediction's role changed (a column made nullable, a column grant, a comment on
/// the `public` schema, a storage or replica-identity flag, a cluster mark: red team round 35)
/// differs, every kind at once rather than each as a round finds it. Written so that two
/// clones holding the same read the same: an id of an object made after `initdb` as the
/// object it names (`pg_describe_object`: the item's preprocess makes its objects under other
/// ids on each clone), a file number as whether the relation was rewritten, the clone's own
/// `role` as `<role>` and the numbers in TOAST names as `<id>` only where the catalogs put
/// them (an object's description, an access list, a TOAST relation's name: a value a
/// prediction writes, a function's body, is read as written, red team round 37), a parse tree
/// as its deparser writes it ([`deparsed`]); left out are temporary schemas and what they hold
/// (a session's, gone with it). `query` is [`postgres_clone_rows_query`]'s; call it once no session of
/// `role` is left ([`await_sessions_end`]).
pub(crate) fn postgres_clone_rows(
    client: &mut postgres::Client,
    query: &CloneRowsQuery,
    role: &str,
) -> Result<CloneRows, postgres::Error> {
    let rows = client.query(&query.rows, &[&role])?;
    let own = client.query_one(&query.own, &[])?;
    Ok(CloneRows {
        parts: rows.iter().map(|row| row.get(0)).collect(),
        own: own.get(0),
    })
}

/// A clone's catalog rows as the Query data check reads them.
pub(crate) struct CloneRows {
    /// Each catalog's part (`catalog <name>=<rows> rows <digest>`), sorted, written so that a
    /// clone and its twin holding the same read the same.
    pub(crate) parts: Vec<String>,
    /// What only the same clone keeps from one read to the next, as a digest: on PostgreSQL the
    /// ids and file numbers of the objects made after `initdb` (an object dropped and made
    /// again, a table rewritten again: red team round 38) and the size of each relation's main
    /// file (rows written and rolled back grow it, and `pg_relation_size` reads it, while no
    /// row or catalog row changes; a prediction cannot `VACUUM`, which makes the other forks:
    /// its statements run in a transaction, and autovacuum may make them at any time), on
    /// MariaDB / MySQL the times the server stamps on them and a system-versioned table's
    /// history periods.
    pub(crate) own: String,
}

/// The queries [`postgres_clone_rows`] runs: each catalog's part, and the clone's own ids and
/// file numbers.
pub(crate) struct CloneRowsQuery {
    rows: String,
    own: String,
}

/// The queries of [`postgres_clone_rows`] on the session's server, made once per run: the
/// catalogs and their columns are the server's, the same in every clone.
pub(crate) fn postgres_clone_rows_query(
    client: &mut postgres::Client,
) -> Result<CloneRowsQuery, postgres::Error> {
    let catalogs = catalog_columns(client, false)?;
    let parts: Vec<String> = (catalogs.iter())
        .map(|(catalog, columns)| clone_digest_sql(catalog, columns))
        .collect();
    let ids: Vec<String> = (catalogs.iter())
        .filter(|(_, columns)| columns.iter().any(|column| column.name == "oid"))
        .map(|(catalog, columns)| {
            let name = catalog.replace('\'', "''");
            let file = match catalog == "pg_catalog.pg_class" {
                true => {
                    " || ' file ' || relfilenode::text \
                     || ' size ' || pg_catalog.pg_relation_size(oid)::text"
                }
                false => "",
            };
            format!(
                "SELECT '{name} ' || oid::text{file} AS id FROM {catalog} \
                 WHERE oid >= {FIRST_USER_OID} AND NOT ({})",
                temporary(catalog, columns)
            )
        })
        .collect();
    Ok(CloneRowsQuery {
        rows: format!(
            "SELECT part FROM ({}) p ORDER BY 1",
            parts.join(" UNION ALL ")
        ),
        own: format!(
            "SELECT md5(coalesce(string_agg(id, ',' ORDER BY id), '')) FROM ({}) i",
            ids.join(" UNION ALL ")
        ),
    })
}

/// How long [`await_sessions_end`] waits for a closed session's process to end.
const SESSION_END: std::time::Duration = std::time::Duration::from_secs(10);

/// Waits until no session of `role` is left on the server (a closed session's process drops its
/// temporary objects before it ends); an error after [`SESSION_END`].
pub(crate) fn await_sessions_end(client: &mut postgres::Client, role: &str) -> Result<(), String> {
    let started = std::time::Instant::now();
    loop {
        let left: i64 = client
            .query_one(
                "SELECT count(*) FROM pg_catalog.pg_stat_activity WHERE usename = $1::text",
                &[&role],
            )
            .map_err(|e| e.to_string())?
            .get(0);
        if left == 0 {
            return Ok(());
        }
        if started.elapsed() > SESSION_END {
            return Err(format!(
                "{left} session(s) of the clone's role were still open {SESSION_END:?} after \
                 they were closed"
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// The query giving a catalog's part of [`postgres_clone_rows`]: its row count and the MD5 of
/// its rows, each rendered as that function says (`$1`: the clone's role).
fn clone_digest_sql(catalog: &str, columns: &[Column]) -> String {
    let texts: Vec<String> = (columns.iter())
        .map(|column| {
            format!(
                "pg_catalog.quote_nullable({})",
                clone_text(catalog, columns, column)
            )
        })
        .collect();
    let name = catalog.replace('\'', "''");
    format!(
        "SELECT 'catalog {name}=' || count(*) || ' rows ' || \
         md5(coalesce(string_agg(r, E'\\n' ORDER BY r), '')) AS part FROM (\
         SELECT concat_ws('|', {}) AS r FROM {catalog} WHERE NOT ({})) t",
        texts.join(", "),
        temporary(catalog, columns)
    )
}

/// A column's value as [`postgres_clone_rows`] reads it.
fn clone_text(catalog: &str, columns: &[Column], column: &Column) -> String {
    let id = quote_ident(&column.name);
    if column.tree {
        return deparsed(catalog, &column.name);
    }
    if column.name == "oid" {
        return described(&regclass(catalog), &id);
    }
    if column.acl {
        return format!("replace({id}::text, $1::text, '<role>')");
    }
    if catalog == "pg_catalog.pg_class" && column.name == "relname" {
        return format!(
            "CASE WHEN relnamespace = {PG_TOAST} THEN {} ELSE relname::text END",
            toast("relname::text")
        );
    }
    if catalog == "pg_catalog.pg_class" && column.name == "relfilenode" {
        return "CASE WHEN relfilenode = 0 THEN '0' WHEN relfilenode = oid THEN 'its id' \
                ELSE 'rewritten' END"
            .to_string();
    }
    if let Some(class) = id_class(catalog, columns, column) {
        return described(&class, &id);
    }
    if let Some(target) = &column.targets {
        return format!(
            "(SELECT string_agg({}, ' ' ORDER BY n) FROM unnest({id}) WITH ORDINALITY u(e, n))",
            described(&regclass(target), "e")
        );
    }
    format!("{id}::text")
}

/// The catalog of the single id `column` holds, as an SQL expression: the catalog's own for its
/// `oid`, the one the catalogs' foreign keys name, or the class column paired with it; `None`
/// for a column that holds no id.
fn id_class(catalog: &str, columns: &[Column], column: &Column) -> Option<String> {
    match (&column.target, class_column(columns, &column.name)) {
        _ if column.name == "oid" => Some(regclass(catalog)),
        (Some(target), _) => Some(regclass(target)),
        (None, Some(class)) => Some(class.to_string()),
        (None, None) => None,
    }
}

/// The catalog `name` as a `regclass` literal.
fn regclass(name: &str) -> String {
    format!("'{}'::pg_catalog.regclass", name.replace('\'', "''"))
}

/// The catalogs whose objects `pg_describe_object` names (PostgreSQL's object classes); it
/// raises an error on an id of any other (an enum label, a large object's metadata row).
const DESCRIBABLE: [&str; 40] = [
    "pg_class",
    "pg_proc",
    "pg_type",
    "pg_cast",
    "pg_collation",
    "pg_constraint",
    "pg_conversion",
    "pg_attrdef",
    "pg_language",
    "pg_largeobject",
    "pg_operator",
    "pg_opclass",
    "pg_opfamily",
    "pg_am",
    "pg_amop",
    "pg_amproc",
    "pg_rewrite",
    "pg_trigger",
    "pg_namespace",
    "pg_statistic_ext",
    "pg_ts_parser",
    "pg_ts_dict",
    "pg_ts_template",
    "pg_ts_config",
    "pg_authid",
    "pg_database",
    "pg_tablespace",
    "pg_foreign_data_wrapper",
    "pg_foreign_server",
    "pg_user_mapping",
    "pg_default_acl",
    "pg_extension",
    "pg_event_trigger",
    "pg_parameter_acl",
    "pg_policy",
    "pg_publication",
    "pg_publication_namespace",
    "pg_publication_rel",
    "pg_subscription",
    "pg_transform",
];

/// The id `id` of an object of catalog `class` (an SQL expression of type `regclass` or
/// `oid`): the object it names when it was made after `initdb` and its catalog is
/// [`DESCRIBABLE`], only that it was made after `initdb` when not, else the number.
fn described(class: &str, id: &str) -> String {
    format!(
        "CASE WHEN {id}::oid < {FIRST_USER_OID} THEN {id}::text \
         WHEN {} THEN coalesce(replace({}, $1::text, '<role>'), 'a missing object') \
         ELSE 'an object made after initdb' END",
        describable(class),
        toast(&description(class, id))
    )
}

/// Whether `class` (an SQL expression) is a [`DESCRIBABLE`] catalog.
fn describable(class: &str) -> String {
    let names: Vec<String> = DESCRIBABLE.iter().map(|name| format!("'{name}'")).collect();
    format!(
        "{class}::pg_catalog.regclass::text IN ({})",
        names.join(", ")
    )
}

/// `pg_describe_object` of the id `id` of catalog `class`.
fn description(class: &str, id: &str) -> String {
    format!("pg_catalog.pg_describe_object({class}, {id}::oid, 0)")
}

/// `text` with the number in a TOAST relation's name (`pg_toast_<id of its table>`) as `<id>`.
fn toast(text: &str) -> String {
    format!("regexp_replace({text}, 'pg_toast\\.pg_toast_[0-9]+|^pg_toast_[0-9]+', 'pg_toast_<id>', 'g')")
}

/// The namespace of TOAST relations (`PG_TOAST_NAMESPACE`).
const PG_TOAST: u32 = 99;

/// A parse-tree column (`pg_node_tree`) of a row made after `initdb` as PostgreSQL's own
/// deparser writes what it holds (a function's SQL body, a domain's check, a partition's bound
/// or key, a default, an index's expressions, a rule, a trigger's condition, a policy: red team
/// round 36), without the ids and text positions of the tree; a built-in row's, or a column no
/// deparser here reads, as its tree (a difference of ids there fails an honest item, never
/// passes a changed one).
fn deparsed(catalog: &str, column: &str) -> String {
    let tree = format!("{}::text", quote_ident(column));
    let Some((row, text)) = deparser(catalog.trim_start_matches("pg_catalog."), column) else {
        return tree;
    };
    format!(
        "CASE WHEN {} IS NULL THEN NULL WHEN {row} < {FIRST_USER_OID} THEN {tree} ELSE {text} END",
        quote_ident(column)
    )
}

/// The id column of a catalog's row and the deparser of its parse-tree `column`.
fn deparser(catalog: &str, column: &str) -> Option<(&'static str, String)> {
    let tree = quote_ident(column);
    let found = match (catalog, column) {
        ("pg_proc", "prosqlbody") => ("oid", "pg_catalog.pg_get_functiondef(oid)".to_string()),
        ("pg_proc", "proargdefaults") | ("pg_type", "typdefaultbin") => {
            ("oid", format!("pg_catalog.pg_get_expr({tree}, 0)"))
        }
        ("pg_constraint", "conbin") => ("oid", "pg_catalog.pg_get_constraintdef(oid)".into()),
        ("pg_class", "relpartbound") => ("oid", format!("pg_catalog.pg_get_expr({tree}, oid)")),
        ("pg_partitioned_table", "partexprs") => (
            "partrelid",
            "pg_catalog.pg_get_partkeydef(partrelid)".into(),
        ),
        ("pg_attrdef", "adbin") => ("oid", format!("pg_catalog.pg_get_expr({tree}, adrelid)")),
        ("pg_index", "indexprs" | "indpred") => (
            "indexrelid",
            "pg_catalog.pg_get_indexdef(indexrelid)".into(),
        ),
        ("pg_rewrite", "ev_action" | "ev_qual") => ("oid", "pg_catalog.pg_get_ruledef(oid)".into()),
        ("pg_trigger", "tgqual") => ("oid", "pg_catalog.pg_get_triggerdef(oid)".into()),
        ("pg_policy", "polqual" | "polwithcheck") => {
            ("oid", format!("pg_catalog.pg_get_expr({tree}, polrelid)"))
        }
        ("pg_statistic_ext", "stxexprs") => (
            "oid",
            "pg_catalog.pg_get_statisticsobjdef_expressions(oid)::text".into(),
        ),
        ("pg_publication_rel", "prqual") => {
            ("oid", format!("pg_catalog.pg_get_expr({tree}, prrelid)"))
        }
        _ => return None,
    };
    Some(found)
}

/// The condition of a row of a temporary schema: the schema itself, a row in it, or one of an
/// object in it (a temporary table's columns, defaults, indexes, dependencies), which a
/// session makes and its end drops.
fn temporary(catalog: &str, columns: &[Column]) -> String {
    let pattern = "'^pg_(toast_)?temp_[0-9]+$'";
    let schemas =
        format!("(SELECT oid FROM pg_catalog.pg_namespace WHERE nspname::text ~ {pattern})");
    let ids = (columns.iter()).filter_map(|column| {
        let id = quote_ident(&column.name);
        let class = id_class(catalog, columns, column)?;
        // A `CASE`, so no object is identified before its catalog is known to be describable;
        // the schema `pg_identify_object` gives is the object's own, not text of its name
        // (red team round 38: a function named `"low pg_temp_1.stock"`).
        Some(format!(
            "CASE WHEN {id}::oid >= {FIRST_USER_OID} AND {} THEN coalesce(\
             (pg_catalog.pg_identify_object({class}, {id}::oid, 0)).schema ~ {pattern}, false) \
             ELSE false END",
            describable(&class),
        ))
    });
    (columns.iter())
        .filter(|column| column.target.as_deref() == Some("pg_namespace"))
        .map(|column| {
            format!(
                "coalesce({}::oid IN {schemas}, false)",
                quote_ident(&column.name)
            )
        })
        .chain(ids)
        .chain((catalog == "pg_catalog.pg_namespace").then(|| format!("nspname::text ~ {pattern}")))
        .chain(std::iter::once("false".to_string()))
        .collect::<Vec<_>>()
        .join(" OR ")
}

/// `name` as a quoted identifier.
fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The MariaDB / MySQL columns of `information_schema` that change by themselves (sizes, row
/// estimates), left out.
const MYSQL_ESTIMATES: [&str; 8] = [
    "TABLE_ROWS",
    "AVG_ROW_LENGTH",
    "DATA_LENGTH",
    "MAX_DATA_LENGTH",
    "INDEX_LENGTH",
    "DATA_FREE",
    "CHECKSUM",
    "CARDINALITY",
];

/// The MariaDB / MySQL columns of `information_schema` that hold a time the server stamps when
/// a statement makes, changes or checks an object: two clones read them apart, one clone the
/// same until a statement stamps them again (`CHECK TABLE`, `ALTER PROCEDURE`: red team round
/// 38), so they are the clone's own ([`CloneRows::own`]).
const MYSQL_TIMES: [&str; 6] = [
    "CREATE_TIME",
    "UPDATE_TIME",
    "CHECK_TIME",
    "CREATED",
    "LAST_ALTERED",
    "LAST_EXECUTED",
];

/// The columns by which an `information_schema` table names a row's database, the first one a
/// table has taken.
const MYSQL_SCHEMA_COLUMNS: [&str; 9] = [
    "TABLE_SCHEMA",
    "CONSTRAINT_SCHEMA",
    "ROUTINE_SCHEMA",
    "TRIGGER_SCHEMA",
    "EVENT_SCHEMA",
    "SPECIFIC_SCHEMA",
    "SEQUENCE_SCHEMA",
    "SCHEMA_NAME",
    "F_TABLE_SCHEMA",
];

/// The MariaDB / MySQL counterpart of [`postgres_clone_rows`]: every row of every
/// `information_schema` table about `schema` (its tables' collations and engines, columns'
/// nullability, keys, foreign keys, constraints, privileges, routines, views, triggers,
/// events, partitions: red team round 35), all columns but [`MYSQL_ESTIMATES`] and [`MYSQL_TIMES`] (the clone's own), with the
/// database's name as `<clone>` and the clone's `user` as `<role>`, one digest per table. Left
/// out are the per-session and statistics tables (`TEMP_TABLES_INFO`, `*_STATISTICS`, `FILES`,
/// the storage engines' own).
pub(crate) fn mysql_clone_rows(
    conn: &mut mysql::Conn,
    schema: &str,
    user: &str,
) -> Result<CloneRows, mysql::Error> {
    use mysql::prelude::Queryable;
    let mut parts = Vec::new();
    let mut own = Vec::new();
    for MysqlCatalog {
        table,
        key,
        columns,
        times,
        estimates,
    } in mysql_tables(conn)?
    {
        let quoted = |names: &[String]| -> Vec<String> {
            (names.iter())
                .map(|column| format!("QUOTE(`{}`)", column.replace('`', "``")))
                .collect()
        };
        let (texts, stamps) = (quoted(&columns), quoted(&times));
        let counted = exact_estimates(&key, &quoted(&estimates));
        let rows: Vec<(Option<String>, Option<String>)> = conn.exec(
            format!(
                "SELECT CONCAT_WS('|', {}), CONCAT_WS('|', '', {}) FROM information_schema.`{table}` x \
                 WHERE `{key}` = ?",
                texts.join(", "),
                [&texts[..], &stamps[..], &counted[..]].concat().join(", ")
            ),
            (schema,),
        )?;
        let (mut rows, stamped): (Vec<String>, Vec<String>) = (rows.into_iter())
            .map(|(row, stamped)| {
                // `<` doubled first, so a value holding `<role>` reads apart from the user's
                // name (red team round 37).
                let neutral = (row.unwrap_or_default())
                    .replace('<', "<<")
                    .replace(schema, "<clone>")
                    .replace(user, "<role>");
                (neutral, stamped.unwrap_or_default())
            })
            .unzip();
        rows.sort();
        let digest = crate::util::digest::content_hash(rows.iter().map(String::as_bytes));
        parts.push(format!("catalog {table}={} rows {digest}", rows.len()));
        if !times.is_empty() || !estimates.is_empty() {
            own.extend(stamped.into_iter().map(|row| format!("{table} {row}")));
        }
    }
    own.extend(mysql_history_periods(conn, schema)?);
    own.sort();
    Ok(CloneRows {
        parts,
        own: crate::util::digest::content_hash(own.iter().map(String::as_bytes)),
    })
}

/// The estimates of a row about a table not on InnoDB, as an SQL expression (none when the
/// catalog has no `estimates`): MyISAM and Aria keep exact counts that only a statement changes
/// (`ANALYZE TABLE` sets a key's `CARDINALITY`: red team round 39), so they are the clone's
/// own; InnoDB samples them and updates them in the background, like PostgreSQL's planner
/// statistics (SECURITY.md, "Plans and statistics").
fn exact_estimates(key: &str, estimates: &[String]) -> Vec<String> {
    if estimates.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "IF(IFNULL((SELECT e.ENGINE FROM information_schema.TABLES e WHERE e.TABLE_SCHEMA = \
         x.`{key}` AND e.TABLE_NAME = x.TABLE_NAME), 'InnoDB') <> 'InnoDB', CONCAT_WS('|', {}), '')",
        estimates.join(", ")
    )]
}

/// Each history period of the system-versioned tables of `schema` (`ROW_START`, `ROW_END`, read
/// `FOR SYSTEM_TIME ALL`), as `history <table> <start>|<end>`: the data digest reads the visible
/// columns of every version, not when each began and ended, which a gold can compare with a time
/// (red team round 38). A table whose period columns are declared under other names has them
/// among its visible columns, digested already.
fn mysql_history_periods(
    conn: &mut mysql::Conn,
    schema: &str,
) -> Result<Vec<String>, mysql::Error> {
    use mysql::prelude::Queryable;
    let versioned: Vec<String> = conn.exec(
        "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? \
         AND TABLE_TYPE = 'SYSTEM VERSIONED' ORDER BY 1",
        (schema,),
    )?;
    let quote = |name: &str| format!("`{}`", name.replace('`', "``"));
    let mut periods = Vec::new();
    for table in versioned {
        let read: Result<Vec<String>, mysql::Error> = conn.query(format!(
            "SELECT CONCAT_WS('|', ROW_START, ROW_END) FROM {}.{} FOR SYSTEM_TIME ALL",
            quote(schema),
            quote(&table)
        ));
        match read {
            Ok(rows) => {
                periods.extend(rows.into_iter().map(|row| format!("history {table} {row}")))
            }
            Err(mysql::Error::MySqlError(e)) if e.code == UNKNOWN_COLUMN => {}
            Err(other) => return Err(other),
        }
    }
    Ok(periods)
}

/// MariaDB / MySQL's error for a column a statement names that the table does not have.
const UNKNOWN_COLUMN: u16 = 1054;

/// An `information_schema` table [`mysql_clone_rows`] reads.
struct MysqlCatalog {
    table: String,
    /// The column naming a row's database.
    key: String,
    /// Its other columns but the estimates and the times.
    columns: Vec<String>,
    /// Its times ([`MYSQL_TIMES`]).
    times: Vec<String>,
    /// Its estimates ([`MYSQL_ESTIMATES`]), when its rows name their table (`TABLE_NAME`).
    estimates: Vec<String>,
}

/// Each `information_schema` table [`mysql_clone_rows`] reads.
fn mysql_tables(conn: &mut mysql::Conn) -> Result<Vec<MysqlCatalog>, mysql::Error> {
    use mysql::prelude::Queryable;
    let columns: Vec<(String, String)> = conn.query(
        "SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS \
         WHERE TABLE_SCHEMA = 'information_schema' AND TABLE_NAME NOT LIKE 'INNODB\\_%' \
         AND TABLE_NAME NOT LIKE '%\\_STATISTICS' \
         AND TABLE_NAME NOT IN ('TEMP_TABLES_INFO', 'FILES', 'PROCESSLIST') \
         ORDER BY TABLE_NAME, ORDINAL_POSITION",
    )?;
    let mut tables: Vec<(String, Vec<String>)> = Vec::new();
    for (table, column) in columns {
        match tables.last_mut() {
            Some((last, kept)) if *last == table => kept.push(column),
            _ => tables.push((table, vec![column])),
        }
    }
    Ok((tables.into_iter())
        .filter_map(|(table, columns)| {
            let key = MYSQL_SCHEMA_COLUMNS
                .iter()
                .find(|key| columns.iter().any(|c| c == *key))?;
            let by_table = columns.iter().any(|column| column == "TABLE_NAME");
            let (estimates, rest): (Vec<String>, Vec<String>) = (columns.into_iter())
                .partition(|column| MYSQL_ESTIMATES.contains(&column.as_str()));
            let (times, kept): (Vec<String>, Vec<String>) =
                (rest.into_iter()).partition(|column| MYSQL_TIMES.contains(&column.as_str()));
            Some(MysqlCatalog {
                table,
                key: key.to_string(),
                columns: kept,
                times,
                estimates: if by_table { estimates } else { Vec::new() },
            })
        })
        .collect())
}
