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
