//! The start-up role check: what the server's role can do beyond reading the benchmark's tables,
//! asked of the server's own privilege system (transitively, through every role it is a member
//! of), never guessed from names. Any of these makes the role privileged, which a run refuses
//! unless the trusted config sets `dataset.engine.allow_privileged_role` (SECURITY.md):
//!
//! - ending or signalling other sessions (superuser, `pg_signal_backend`, membership of another
//!   login role; MariaDB `SUPER`, `CONNECTION ADMIN`, `PROCESS`, `SHUTDOWN`, `RELOAD`);
//! - reading credentials (`pg_authid`, `pg_user_mapping`, `pg_read_all_data`; MariaDB `mysql.*`
//!   through a global or pattern `SELECT`);
//! - writing anything (a table of any schema, by grant, column grant or ownership; `CREATE` on
//!   the database or a schema; any MariaDB privilege beyond `SELECT` / `SHOW VIEW` / `LOCK
//!   TABLES`, anywhere);
//! - creating roles or databases (`CREATEROLE`, `CREATEDB`; MariaDB `CREATE USER`, `GRANT
//!   OPTION`);
//! - reading or using a sequence (`SELECT`, `USAGE`, `UPDATE` on it, in any schema: its value
//!   is state the server's preparation sets, which no digest records); on MariaDB, any
//!   privilege on a database the run does not use (answers stored there would be read as
//!   `otherdb.t`), by grant, pattern or role;
//! - reaching the server's files or programs (`pg_read_server_files`,
//!   `pg_execute_server_program`, `EXECUTE` granted on `pg_read_file` and its kin; MariaDB
//!   `FILE`);
//! - any other predefined PostgreSQL role (`pg_monitor`, `pg_read_all_stats`, ...).

use crate::engine::server::RoleReport;
use postgres::types::Type;
use std::collections::BTreeSet;

/// Server functions PostgreSQL revokes from `PUBLIC` at `initdb`: a role that may execute one was
/// granted it (they read or list server files, or act on the whole server).
const POSTGRES_RESTRICTED_FUNCTIONS: &[&str] = &[
    "pg_read_file",
    "pg_read_binary_file",
    "pg_ls_dir",
    "pg_stat_file",
    "pg_ls_logdir",
    "pg_ls_waldir",
    "pg_ls_tmpdir",
    "pg_ls_archive_statusdir",
    "pg_ls_logicalsnapdir",
    "pg_ls_logicalmapdir",
    "pg_ls_replslotdir",
    "pg_current_logfile",
    "lo_import",
    "lo_export",
    "pg_reload_conf",
    "pg_rotate_logfile",
    "pg_promote",
    "pg_switch_wal",
    "pg_create_restore_point",
    "pg_backup_start",
    "pg_backup_stop",
    "pg_stat_reset",
    "pg_stat_reset_shared",
    "pg_stat_reset_slru",
    "pg_stat_reset_single_table_counters",
    "pg_stat_reset_single_function_counters",
    "pg_stat_reset_replication_slot",
    "pg_log_backend_memory_contexts",
    "pg_file_write",
    "pg_file_rename",
    "pg_file_unlink",
    "pg_file_sync",
    "pg_logdir_ls",
    "dblink_connect_u",
];

/// Catalogs that hold credentials or other roles' data (password verifiers, user mappings'
/// options, column statistics of tables the role cannot read).
const POSTGRES_CREDENTIAL_CATALOGS: &[&str] = &[
    "pg_catalog.pg_authid",
    "pg_catalog.pg_shadow",
    "pg_catalog.pg_user_mapping",
    "pg_catalog.pg_statistic",
];

/// How many names a reason lists before it only counts them.
const LISTED: i64 = 6;

/// What the PostgreSQL role of `client` can do beyond reading (empty when nothing). Every query
/// takes the same two parameters: the names of [`POSTGRES_CREDENTIAL_CATALOGS`] and
/// [`POSTGRES_RESTRICTED_FUNCTIONS`] (each query picks its own), and how many names to list.
pub fn postgres(client: &mut postgres::Client) -> Result<RoleReport, postgres::Error> {
    let user: String = client.query_one("SELECT current_user::text", &[])?.get(0);
    let mut reasons = postgres_role_reasons(client, &user)?;
    let checks: [(&str, &str); 6] = [
        (
            "can read credential catalogs",
            "SELECT c FROM unnest($1::text[]) c \
             WHERE c LIKE 'pg\\_catalog.%' AND to_regclass(c) IS NOT NULL \
             AND has_any_column_privilege(c::regclass, 'SELECT') ORDER BY 1 LIMIT $2",
        ),
        // `pg_settings` is updatable by everyone: an UPDATE of it is a session-level SET.
        (
            "owns or can write to (INSERT, UPDATE, DELETE, TRUNCATE, TRIGGER) these relations",
            "SELECT n.nspname::text || '.' || c.relname::text FROM pg_class c \
             JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE c.relkind IN ('r','p','v','m','f','S') \
             AND c.oid <> 'pg_catalog.pg_settings'::regclass AND (pg_has_role(c.relowner, 'MEMBER') \
             OR (c.relkind <> 'S' AND (has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE, TRIGGER') \
                 OR has_any_column_privilege(c.oid, 'INSERT, UPDATE'))) \
             OR (c.relkind = 'S' AND has_sequence_privilege(c.oid, 'UPDATE'))) \
             ORDER BY 1 LIMIT $2",
        ),
        // A sequence the role may read (`SELECT last_value FROM s`) is digested as a table is
        // (its one row: `last_value`, `log_cnt`, `is_called`); one it may use would move.
        (
            "may use these sequences (USAGE, UPDATE: `nextval` or `setval` move them)",
            "SELECT n.nspname::text || '.' || c.relname::text FROM pg_class c \
             JOIN pg_namespace n ON n.oid = c.relnamespace WHERE CASE WHEN c.relkind = 'S' \
             THEN has_sequence_privilege(c.oid, 'USAGE, UPDATE') ELSE false END \
             ORDER BY 1 LIMIT $2",
        ),
        (
            "owns or can CREATE in these schemas",
            "SELECT nspname::text FROM pg_namespace \
             WHERE nspname NOT LIKE 'pg\\_temp\\_%' AND nspname NOT LIKE 'pg\\_toast\\_temp\\_%' \
             AND (pg_has_role(nspowner, 'MEMBER') OR has_schema_privilege(oid, 'CREATE')) \
             ORDER BY 1 LIMIT $2",
        ),
        (
            "owns or can CREATE in these databases",
            "SELECT datname::text FROM pg_database \
             WHERE pg_has_role(datdba, 'MEMBER') OR has_database_privilege(oid, 'CREATE') \
             ORDER BY 1 LIMIT $2",
        ),
        (
            "may EXECUTE server functions PostgreSQL reserves to superusers",
            "SELECT DISTINCT p.proname::text FROM pg_proc p WHERE p.proname = ANY($1::text[]) \
             AND has_function_privilege(p.oid, 'EXECUTE') ORDER BY 1 LIMIT $2",
        ),
    ];
    let names: Vec<String> = POSTGRES_CREDENTIAL_CATALOGS
        .iter()
        .chain(POSTGRES_RESTRICTED_FUNCTIONS)
        .map(|n| n.to_string())
        .collect();
    let types = [Type::TEXT_ARRAY, Type::INT8];
    for (what, sql) in checks {
        let statement = client.prepare_typed(sql, &types)?;
        let found: Vec<String> = client
            .query(&statement, &[&names, &LISTED])?
            .iter()
            .map(|row| row.get(0))
            .collect();
        if !found.is_empty() {
            reasons.push(format!("`{user}` {what}: {}", found.join(", ")));
        }
    }
    Ok(RoleReport { reasons })
}

/// The attributes and memberships of `user` and of every role it is a member of (directly or
/// through others): superuser, CREATEROLE, CREATEDB, REPLICATION, BYPASSRLS, predefined roles,
/// other login roles (whose sessions it may signal).
fn postgres_role_reasons(
    client: &mut postgres::Client,
    user: &str,
) -> Result<Vec<String>, postgres::Error> {
    let rows = client.query(
        "SELECT rolname::text, rolsuper, rolcreaterole, rolcreatedb, rolreplication, \
         rolbypassrls, rolcanlogin FROM pg_roles \
         WHERE pg_has_role(current_user, oid, 'MEMBER') ORDER BY rolname",
        &[],
    )?;
    let mut reasons = Vec::new();
    for row in rows {
        let role: String = row.get(0);
        let holder = match role == user {
            true => format!("`{user}`"),
            false => format!("`{role}` (a role `{user}` is a member of)"),
        };
        if row.get::<_, bool>(1) {
            reasons.push(format!("{holder} is a superuser"));
        }
        let attributes: Vec<&str> = [
            (2, "CREATEROLE"),
            (3, "CREATEDB"),
            (4, "REPLICATION"),
            (5, "BYPASSRLS"),
        ]
        .into_iter()
        .filter(|(column, _)| row.get::<_, bool>(*column))
        .map(|(_, name)| name)
        .collect();
        if !attributes.is_empty() {
            reasons.push(format!("{holder} has {}", attributes.join(", ")));
        }
        if role == user {
            continue;
        }
        if role.starts_with("pg_") {
            reasons.push(format!(
                "`{user}` is a member of the predefined role `{role}` ({})",
                predefined_role_power(&role)
            ));
        } else if row.get::<_, bool>(6) {
            reasons.push(format!(
                "`{user}` is a member of the login role `{role}`, so it can signal and end that role's sessions"
            ));
        }
    }
    Ok(reasons)
}

/// What a predefined PostgreSQL role allows, for the refusal message.
fn predefined_role_power(role: &str) -> &'static str {
    match role {
        "pg_signal_backend" => "it can cancel and end other sessions",
        "pg_read_all_data" => "it reads every table, credential catalogs' neighbours included",
        "pg_write_all_data" => "it writes every table",
        "pg_read_server_files" | "pg_write_server_files" => "it reaches the server's files",
        "pg_execute_server_program" => "it runs programs on the server",
        "pg_database_owner" => "it owns the database",
        "pg_monitor" | "pg_read_all_stats" | "pg_stat_scan_tables" => {
            "it sees other sessions' queries and server statistics"
        }
        "pg_read_all_settings" => "it reads every server setting",
        _ => "predefined roles act on the whole server",
    }
}

/// MariaDB / MySQL privileges a read-only user may hold (`LOCK TABLES`: the run holds the
/// benchmark's tables for reading while it reads them, `writers::mysql_lock_tables`).
const MYSQL_READ_ONLY: [&str; 4] = ["USAGE", "SELECT", "SHOW VIEW", "LOCK TABLES"];

/// Schemas whose tables hold credentials or other sessions' statements.
const MYSQL_PRIVATE_SCHEMAS: [&str; 2] = ["mysql", "performance_schema"];

/// What the MySQL / MariaDB user of `conn` can do beyond reading, from `SHOW GRANTS` (its own
/// grants and those to `PUBLIC`) and, for each role granted to it, the role's grants with those
/// of the roles it holds in turn (`SET ROLE` it, `SHOW GRANTS FOR CURRENT_ROLE`: a user may not
/// list a role's grants otherwise). The session's role is restored afterwards. Any database
/// outside `run` (the databases the run uses) that the user, or a role of it, holds a privilege
/// on is a reason too.
pub fn mysql(conn: &mut mysql::Conn, run: &BTreeSet<String>) -> Result<RoleReport, mysql::Error> {
    use mysql::prelude::Queryable;
    let grants: Vec<String> = conn.query("SHOW GRANTS")?;
    let mut reasons = Vec::new();
    let mut roles = BTreeSet::new();
    for grant in &grants {
        roles.extend(mysql_grant_reasons(grant, &mut reasons));
    }
    mysql_other_databases(conn, run, "the user", &mut reasons)?;
    if roles.is_empty() {
        return Ok(RoleReport { reasons });
    }
    let current: Option<String> = conn.query_first("SELECT CURRENT_ROLE()")?.flatten();
    for role in roles {
        let listed = conn
            .query_drop(format!("SET ROLE {role}"))
            .and_then(|()| conn.query::<String, _>("SHOW GRANTS FOR CURRENT_ROLE"));
        match listed {
            Ok(role_grants) => {
                for grant in role_grants {
                    mysql_grant_reasons(&grant, &mut reasons);
                }
                let holder = format!("the user's role {role}");
                mysql_other_databases(conn, run, &holder, &mut reasons)?;
            }
            Err(_) => reasons.push(format!(
                "the user is granted the role {role}, whose grants it cannot list"
            )),
        }
    }
    let restore = match current {
        Some(role) => format!("SET ROLE `{}`", role.replace('`', "``")),
        None => "SET ROLE NONE".to_string(),
    };
    conn.query_drop(restore)?;
    Ok(RoleReport { reasons })
}

/// Databases the server lists to every user: `information_schema` (each user sees its own
/// privileges' part) and, on MySQL 8, `performance_schema` (a few world-readable tables). A
/// grant reaching `performance_schema`'s other tables is refused by the grant check above, and
/// a prediction naming either is refused as it runs (`catalog.rs`).
pub(crate) const MYSQL_LISTED_TO_ALL: [&str; 2] = ["information_schema", "performance_schema"];

/// Adds to `reasons` each database outside `run` that the session's privileges reach (the
/// server lists a database in `information_schema.SCHEMATA` to a user holding any privilege in
/// it: database, table or column level, by name or wildcard pattern, its own or its active
/// role's). Answers stored in such a database would be read as `otherdb.t`, which no digest of
/// the run covers.
fn mysql_other_databases(
    conn: &mut mysql::Conn,
    run: &BTreeSet<String>,
    holder: &str,
    reasons: &mut Vec<String>,
) -> Result<(), mysql::Error> {
    use mysql::prelude::Queryable;
    let visible: Vec<String> =
        conn.query("SELECT schema_name FROM information_schema.schemata ORDER BY 1")?;
    let others: Vec<String> = visible
        .into_iter()
        .filter(|name| !run.contains(name) && !MYSQL_LISTED_TO_ALL.contains(&name.as_str()))
        .map(|name| format!("`{name}`"))
        .collect();
    if !others.is_empty() {
        reasons.push(format!(
            "{holder} holds privileges on databases the run does not use: {} (a prediction \
             could read answers stored there; grant SELECT on the run's databases only)",
            others.join(", ")
        ));
    }
    Ok(())
}

/// Adds to `reasons` what one `SHOW GRANTS` line allows beyond reading; returns the roles it
/// grants (quoted as written), whose own grants the caller inspects in turn.
fn mysql_grant_reasons(grant: &str, reasons: &mut Vec<String>) -> Vec<String> {
    let Some(body) = grant.strip_prefix("GRANT ") else {
        return Vec::new();
    };
    let Some((privileges, rest)) = body.split_once(" ON ") else {
        let roles = body.split(" TO ").next().unwrap_or_default();
        return roles.split(',').map(|r| r.trim().to_string()).collect();
    };
    let target = rest.split(" TO ").next().unwrap_or_default().trim();
    let names: Vec<String> = privileges
        .split(',')
        .map(|p| {
            p.split('(')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_uppercase()
        })
        .collect();
    let extra: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|p| !MYSQL_READ_ONLY.contains(p))
        .collect();
    if !extra.is_empty() {
        reasons.push(format!("the user holds {} ON {target}", extra.join(", ")));
    }
    if rest.contains(" WITH GRANT OPTION") {
        reasons.push(format!(
            "the user may grant its privileges on {target} (GRANT OPTION)"
        ));
    }
    let reads = names.iter().any(|p| p == "SELECT" || p == "ALL PRIVILEGES");
    if reads && mysql_target_reaches_private(target) {
        reasons.push(format!(
            "the user holds SELECT ON {target}, which reads `mysql.user` (password hashes) or other sessions' statements"
        ));
    }
    Vec::new()
}

/// Whether a grant's target (`*.*`, `` `db`.* ``, `` `db`.`table` ``, with `%` / `_` wildcards in
/// the database name) covers a schema of [`MYSQL_PRIVATE_SCHEMAS`].
fn mysql_target_reaches_private(target: &str) -> bool {
    let database = match target.split_once('.') {
        Some((database, _)) => database.trim(),
        None => target.trim(),
    };
    if database == "*" {
        return true;
    }
    let pattern: Vec<char> = database.trim_matches('`').chars().collect();
    MYSQL_PRIVATE_SCHEMAS
        .iter()
        .any(|schema| pattern_matches(&pattern, &schema.chars().collect::<Vec<_>>()))
}

/// MySQL's grant pattern match: `%` any run, `_` one character, `\` escapes.
fn pattern_matches(pattern: &[char], name: &[char]) -> bool {
    match pattern.split_first() {
        None => name.is_empty(),
        Some(('%', rest)) => (0..=name.len()).any(|skip| pattern_matches(rest, &name[skip..])),
        Some(('\\', rest)) if !rest.is_empty() => {
            name.first() == Some(&rest[0]) && pattern_matches(&rest[1..], &name[1..])
        }
        Some(('_', rest)) => !name.is_empty() && pattern_matches(rest, &name[1..]),
        Some((c, rest)) => {
            name.first().is_some_and(|n| n.eq_ignore_ascii_case(c))
                && pattern_matches(rest, &name[1..])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reasons(grants: &[&str]) -> Vec<String> {
        let mut reasons = Vec::new();
        for grant in grants {
            mysql_grant_reasons(grant, &mut reasons);
        }
        reasons
    }

    #[test]
    fn reading_one_database_is_not_privileged() {
        let grants = [
            "GRANT USAGE ON *.* TO `reader`@`%` IDENTIFIED BY PASSWORD '*ABC'",
            "GRANT SELECT, SHOW VIEW, LOCK TABLES ON `bird`.* TO `reader`@`%`",
            "GRANT SELECT ON `my\\_sql`.* TO `reader`@`%`",
        ];
        assert_eq!(reasons(&grants), Vec::<String>::new());
    }

    #[test]
    fn grants_beyond_reading_are_reported_without_passwords() {
        let found = reasons(&[
            "GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` IDENTIFIED BY PASSWORD '*ABC' WITH GRANT OPTION",
            "GRANT FILE ON *.* TO `u`@`%`",
            "GRANT SELECT, INSERT (`a`) ON `bird`.`t` TO `u`@`%`",
            "GRANT SELECT ON *.* TO `u`@`%`",
            "GRANT SELECT ON `my%`.* TO `u`@`%`",
            "GRANT SELECT ON `mysql`.`user` TO `u`@`%`",
        ]);
        assert_eq!(found.len(), 8, "{found:?}");
        assert!(found[0].contains("ALL PRIVILEGES ON *.*"));
        assert!(found[1].contains("GRANT OPTION"));
        assert!(found[4].contains("INSERT ON `bird`.`t`"));
        assert!(found.iter().all(|r| !r.contains("*ABC")));
        assert!(
            found[5..].iter().all(|r| r.contains("mysql.user")),
            "{found:?}"
        );
    }

    #[test]
    fn granted_roles_are_returned_for_inspection() {
        let mut found = Vec::new();
        let roles = mysql_grant_reasons("GRANT `a`,`b` TO `u`@`%`", &mut found);
        assert_eq!(roles, vec!["`a`", "`b`"]);
        assert!(found.is_empty());
    }

    #[test]
    fn grant_patterns_match_as_mysql_does() {
        let p = |s: &str| s.chars().collect::<Vec<_>>();
        assert!(pattern_matches(&p("m_sql"), &p("mysql")));
        assert!(pattern_matches(&p("%"), &p("mysql")));
        assert!(!pattern_matches(&p("m\\_sql"), &p("mysql")));
        assert!(!pattern_matches(&p("bird%"), &p("mysql")));
    }
}
