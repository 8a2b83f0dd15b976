//! Checks made before a prediction reaches a server: one statement, and on MySQL a query (not a
//! command hidden behind a comment); and the role report of the start-up check.

use crate::engine::exec::ExecError;

/// `sql` without trailing whitespace and semicolons (`SELECT 1;` is one statement); an error
/// for an empty text. Whether more than one statement remains is the server's to say when it
/// prepares the text, which a multi-statement string fails.
pub fn single_statement(sql: &str) -> Result<&str, ExecError> {
    let statement = sql.trim_end_matches(|c: char| c.is_whitespace() || c == ';');
    if statement.trim().is_empty() {
        return Err(ExecError::Sql("no statement".into()));
    }
    Ok(statement)
}

/// Refuses a MySQL text that is not a plain query: its first word (after comments and
/// parentheses) must be SELECT, WITH, VALUES or TABLE, and it may hold no executable comment
/// (`/*! ... */`, `/*M! ... */`), which MySQL runs as code.
pub fn mysql_query_only(sql: &str) -> Result<(), ExecError> {
    if sql.contains("/*!") || sql.contains("/*M!") || sql.contains("/*m!") {
        return Err(ExecError::Denied(
            "executable comments (`/*! ... */`) are not allowed".into(),
        ));
    }
    let word: String = skip_comments_and_parentheses(sql)
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect::<String>()
        .to_ascii_uppercase();
    match word.as_str() {
        "SELECT" | "WITH" | "VALUES" | "TABLE" => Ok(()),
        _ => Err(ExecError::Denied(format!(
            "only queries may run (SELECT, WITH, VALUES, TABLE), not `{}`",
            if word.is_empty() { "?" } else { &word }
        ))),
    }
}

/// The text after any leading whitespace, comments (`-- `, `#`, `/* */`) and `(`.
fn skip_comments_and_parentheses(sql: &str) -> &str {
    let mut rest = sql;
    loop {
        let trimmed = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '(');
        rest = if trimmed.starts_with("--") || trimmed.starts_with('#') {
            trimmed.split_once('\n').map_or("", |(_, after)| after)
        } else if let Some(body) = trimmed.strip_prefix("/*") {
            body.split_once("*/").map_or("", |(_, after)| after)
        } else {
            return trimmed;
        };
    }
}

/// PostgreSQL functions a read-only transaction does not stop: they signal or terminate other
/// sessions (sqlgate's own, whose gold queries would then fail and leave the score), write or
/// read the server's files, run dynamic SQL (whose text no list can read: `ts_stat('SELECT ' ||
/// ...)`), or change settings, statistics and locks. Defence in depth only: what holds without
/// it is the role check, the per-item session reset, the client deadline and the fault
/// classification (a session ended from outside is retried, never a verdict).
const POSTGRES_DENIED: &[&str] = &[
    "pg_terminate_backend",
    "pg_cancel_backend",
    "pg_signal_backend",
    "pg_reload_conf",
    "pg_rotate_logfile",
    "pg_promote",
    "pg_log_backend_memory_contexts",
    "pg_switch_wal",
    "pg_create_restore_point",
    "pg_backup_start",
    "pg_backup_stop",
    "pg_create_logical_replication_slot",
    "pg_create_physical_replication_slot",
    "pg_drop_replication_slot",
    "pg_replication_origin_create",
    "pg_stat_reset",
    "pg_stat_reset_shared",
    "pg_stat_reset_single_table_counters",
    "pg_stat_reset_single_function_counters",
    "pg_stat_reset_slru",
    "pg_stat_reset_replication_slot",
    "pg_stat_reset_subscription_stats",
    "pg_stat_clear_snapshot",
    "lo_export",
    "lo_import",
    "lo_from_bytea",
    "lo_create",
    "lo_creat",
    "lo_unlink",
    "lo_put",
    "lo_open",
    "lowrite",
    "lo_get",
    "loread",
    "pg_read_file",
    "pg_read_binary_file",
    "pg_ls_dir",
    "pg_stat_file",
    "pg_ls_logdir",
    "pg_ls_waldir",
    "pg_ls_tmpdir",
    "pg_ls_archive_statusdir",
    "pg_ls_logicalmapdir",
    "pg_ls_logicalsnapdir",
    "pg_ls_replslotdir",
    "pg_file_write",
    "pg_file_rename",
    "pg_file_unlink",
    "pg_file_sync",
    "pg_logdir_ls",
    "dblink",
    "dblink_exec",
    "dblink_connect",
    "dblink_connect_u",
    "dblink_send_query",
    "ts_stat",
    "ts_rewrite",
    "query_to_xml",
    "query_to_xmlschema",
    "query_to_xml_and_xmlschema",
    "cursor_to_xml",
    "cursor_to_xmlschema",
    "table_to_xml",
    "table_to_xmlschema",
    "table_to_xml_and_xmlschema",
    "schema_to_xml",
    "schema_to_xmlschema",
    "schema_to_xml_and_xmlschema",
    "database_to_xml",
    "database_to_xmlschema",
    "database_to_xml_and_xmlschema",
    "xpath",
    "xpath_exists",
    "dblink_open",
    "dblink_fetch",
    "dblink_get_result",
    "set_config",
    "pg_advisory_lock",
    "pg_advisory_lock_shared",
    "pg_advisory_xact_lock",
    "pg_advisory_xact_lock_shared",
    "pg_try_advisory_lock",
    "pg_try_advisory_lock_shared",
    "pg_try_advisory_xact_lock",
    "pg_try_advisory_xact_lock_shared",
    "pg_advisory_unlock",
    "pg_advisory_unlock_shared",
    "pg_advisory_unlock_all",
    "pg_notify",
    "pg_logical_emit_message",
    "pg_import_system_collations",
];

/// MySQL functions a read-only transaction does not stop: reading the server's files (whose
/// content would reach the report), and user-level locks, which any session takes, holds or
/// reads (`IS_FREE_LOCK`: a lock a background session of the preparation holds is server state
/// no digest covers).
const MYSQL_DENIED: &[&str] = &[
    "load_file",
    "get_lock",
    "release_lock",
    "release_all_locks",
    "is_free_lock",
    "is_used_lock",
    "master_pos_wait",
    "master_gtid_wait",
    "source_pos_wait",
    "sys_exec",
    "sys_eval",
];

/// Refuses a PostgreSQL text naming a function of [`POSTGRES_DENIED`] (quoted or not, in any
/// case, even inside a string literal), or a Unicode-escaped identifier (`U&"..."`) that could
/// spell one.
pub fn postgres_functions_allowed(sql: &str) -> Result<(), ExecError> {
    let lower = sql.to_lowercase();
    if lower.contains("u&\"") {
        return Err(ExecError::Denied(
            "Unicode-escaped identifiers (`U&\"...\"`) are not allowed".into(),
        ));
    }
    denied_word(&lower.replace('"', ""), POSTGRES_DENIED)
}

/// Refuses a MySQL text naming a function of [`MYSQL_DENIED`].
pub fn mysql_functions_allowed(sql: &str) -> Result<(), ExecError> {
    denied_word(&sql.to_lowercase().replace('`', ""), MYSQL_DENIED)
}

fn denied_word(lower: &str, denied: &[&str]) -> Result<(), ExecError> {
    let words = lower.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'));
    for word in words {
        if let Some(name) = denied.iter().find(|name| **name == word) {
            return Err(ExecError::Denied(format!(
                "`{name}` reaches beyond the query's read-only transaction (other sessions, server files or settings)"
            )));
        }
    }
    Ok(())
}

/// Why the server role is privileged (empty when it is not).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RoleReport {
    /// One reason per privilege found, without any secret.
    pub reasons: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailing_semicolons_go_and_empty_text_is_an_error() {
        assert_eq!(single_statement("SELECT 1 ;\n ;").unwrap(), "SELECT 1");
        assert!(single_statement(" ; ").is_err());
    }

    #[test]
    fn server_administration_functions_are_refused_however_spelled() {
        for sql in [
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity",
            "SELECT \"PG_Terminate_Backend\"(1)",
            "SELECT pg_catalog.lo_export(1, '/tmp/x')",
            "SELECT query_to_xml('SELECT 1', true, true, '')",
            "SELECT U&\"pg\\0074erminate_backend\"(1)",
            "SELECT * FROM ts_stat('SELECT to_tsvector(''x'') FROM pg_' || 'stat_activity')",
            "SELECT ts_rewrite('a'::tsquery, 'SELECT ''a''::tsquery, ''b''::tsquery')",
            "SELECT table_to_xml('t', true, false, '')",
            "SELECT pg_stat_clear_snapshot()",
            "SELECT pg_try_advisory_lock(1)",
        ] {
            assert!(postgres_functions_allowed(sql).is_err(), "{sql}");
        }
        assert!(postgres_functions_allowed("SELECT set_name, lo_price FROM t").is_ok());
        assert!(mysql_functions_allowed("SELECT `LOAD_FILE`('/etc/passwd')").is_err());
        assert!(mysql_functions_allowed("SELECT file_name FROM t").is_ok());
        for sql in [
            "SELECT IS_FREE_LOCK('a')",
            "SELECT is_used_lock ('a')",
            "SELECT RELEASE_ALL_LOCKS()",
        ] {
            assert!(mysql_functions_allowed(sql).is_err(), "{sql}");
        }
    }

    #[test]
    fn mysql_admits_only_queries() {
        for sql in [
            "SELECT 1",
            "  (select 1) union (select 2)",
            "-- c\nWITH a AS (SELECT 1) SELECT * FROM a",
            "/* c */ select 1",
            "# c\nselect 1",
        ] {
            assert!(mysql_query_only(sql).is_ok(), "{sql}");
        }
        for sql in [
            "DELETE FROM t",
            "/*!50000 DELETE */ FROM t",
            "SELECT /*M! 1 */ 1",
            "LOAD DATA INFILE '/etc/passwd' INTO TABLE t",
            "SET ROLE admin",
            "-- SELECT\nDROP TABLE t",
            "",
        ] {
            assert!(mysql_query_only(sql).is_err(), "{sql}");
        }
    }
}
