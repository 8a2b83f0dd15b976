//! The rollback fast path of a PostgreSQL item (issue 46): the whole item in one transaction on
//! its clone, each statement's own transaction of the evaluator a savepoint (released when it
//! runs, rolled back to on an error), the item ended by `ROLLBACK` instead of dropping the clone.
//!
//! Only an item that provably changes nothing takes it, since a write is not verdict-exact under
//! an outer transaction even when every statement is transactional: a row version a committed
//! `UPDATE` / `DELETE` leaves dead is pruned by the next statement and its space reused, while the
//! same version under the outer transaction cannot be pruned, so a later `UPDATE` / `INSERT` puts
//! its row elsewhere and a scan without `ORDER BY` returns another order; a deferred constraint
//! is checked at each statement's `COMMIT` but never under the outer `ROLLBACK`; `ON COMMIT`
//! temporary tables, `SET LOCAL`, cursors, `LISTEN` / `NOTIFY`, transaction-level advisory locks
//! and `PREPARE TRANSACTION` end at each statement's `COMMIT`; `VACUUM`, `CREATE DATABASE`,
//! `CREATE INDEX CONCURRENTLY`, `ALTER SYSTEM` are refused inside a transaction block; the rolled
//! back rows stay in the clone's files and change the next item's plan costs. So the decision:
//!
//! - before the item ([`item_refusal`]): the fast path is asked for, the clone's database has no
//!   view, function or policy whose text names a transaction-bound value ([`db_refusal`]), the
//!   item is not an `efficiency` one (its test sends `BEGIN` / `ROLLBACK` of its own), and every
//!   text it brings (preprocess, prediction, gold, clean-up) passes [`text_refusal`];
//! - during the item: every text that reaches the session, the test cases' too, passes
//!   [`text_refusal`] before it runs, and an error of the transaction's state, of a resource or
//!   of serialization (SQLSTATE classes 25, 40, 53, 0B), which the outer transaction could cause,
//!   refuses the item;
//! - after the item: no transaction id was assigned (`pg_current_xact_id_if_assigned()` is null,
//!   so nothing was written, locked or created), else the item is refused.
//!
//! A refused item's clone is dropped and made again, and the item runs on the slow path from the
//! start: its verdict is the slow path's. After an item that took the fast path the clone's
//! relation sizes, planner statistics and sequences ([`FINGERPRINT`]) are compared with those of
//! a fresh clone; when they differ (a sequence a function advanced) the clone is made again
//! before the next item.
//!
//! [`text_refusal`] accepts a text only when sqlparser reads it as plain queries (`SELECT`,
//! `WITH`, `VALUES`, `TABLE`) and no word of it names a write, a lock, a sequence, a
//! transaction-bound time or id, a setting, a notification or the server's statistics, and no
//! string literal of it is `now`, `today`, `tomorrow` or `yesterday` (read at the transaction's
//! start).

use crate::engine::livesql::stateless::first_words;
use crate::input::livesql::LiveItem;
use sqlparser::ast::Statement;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, Tokenizer};

/// Savepoint standing for one statement's own transaction.
pub(super) const SAVEPOINT: &str = "sqlgate_statement";

/// What a clone is compared on after a fast item: every relation's size and planner statistics
/// and every sequence's state, in the clone's own schemas.
pub(super) const FINGERPRINT: &str = "SELECT coalesce(string_agg(c.oid::text || ':' || c.relkind::text || ':' \
     || pg_catalog.pg_relation_size(c.oid)::text || ':' || c.relpages::text || ':' || c.reltuples::text || ':' \
     || c.relallvisible::text || ':' || CASE WHEN c.relkind = 'S' THEN coalesce(pg_catalog.pg_sequence_last_value(c.oid)::text, '-') ELSE '' END, \
     ',' ORDER BY c.oid), '') FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
     WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_temp%' \
     AND n.nspname NOT LIKE 'pg\\_toast\\_temp%'";

/// Words that end a text's fast path wherever they stand (a statement other than a query is
/// refused by its kind): a write, a row lock or `SELECT INTO` inside a query. A definition of the
/// database may hold them (`SELECT ... INTO` a variable of a function): a write it makes assigns
/// a transaction id, and the item is refused at its end.
const WRITES: &[&str] = &["insert", "update", "delete", "merge", "into"];

/// Words that end a text's or a database's fast path wherever they stand: a transaction-bound
/// time, a sequence, a setting, the server's locks, cursors, prepared transactions and
/// notifications, and a query run from a string.
const WORDS: &[&str] = &[
    "now",
    "current_timestamp",
    "current_date",
    "current_time",
    "localtime",
    "localtimestamp",
    "transaction_timestamp",
    "statement_timestamp",
    "nextval",
    "setval",
    "currval",
    "lastval",
    "set_config",
    "pg_locks",
    "pg_notify",
    "pg_cursors",
    "pg_prepared_xacts",
    "pg_prepared_statements",
    "pg_backend_memory_contexts",
    "pg_blocking_pids",
    "pg_export_snapshot",
    "pg_listening_channels",
    // Functions that run a query given as a string, whose words no check here reads
    // (`query_to_xml('SELECT pg_advisory_lock(1)', ...)`; red team round 16).
    "query_to_xml",
    "query_to_xmlschema",
    "query_to_xml_and_xmlschema",
    "cursor_to_xml",
    "cursor_to_xmlschema",
];

/// Prefixes of names that end a text's fast path: advisory locks, transaction ids and
/// snapshots, the server's statistics.
const PREFIXES: &[&str] = &[
    "pg_advisory",
    "pg_try_advisory",
    "txid_",
    "pg_current_",
    "pg_xact",
    "pg_snapshot",
    "pg_stat",
    "pg_visible",
];

/// Functions that end a text's fast path when called (`age(timestamp)` is measured from the
/// transaction's start date; the word alone is a common column name).
const CALLS: &[&str] = &["age"];

/// Literal texts PostgreSQL reads as the transaction's start time or date.
const TIME_LITERALS: &[&str] = &["now", "today", "tomorrow", "yesterday"];

/// Why the fast path may not run `sql`, `None` when it may (a blank text is the client's error
/// on either path).
pub(super) fn text_refusal(sql: &str) -> Option<String> {
    if is_blank(sql) {
        return None;
    }
    let dialect = PostgreSqlDialect {};
    let tokens = match Tokenizer::new(&dialect, sql).tokenize() {
        Ok(tokens) => tokens,
        Err(e) => return Some(format!("sqlparser cannot read a text ({e})")),
    };
    let mut words = tokens.iter().filter(|t| !matches!(t, Token::Whitespace(_)));
    while let Some(token) = words.next() {
        if let Some(why) = token_refusal(token, words.clone().next()) {
            return Some(why);
        }
        if let Token::Word(word) = token {
            let name = word.value.to_lowercase();
            if WRITES.contains(&name.as_str()) {
                return Some(format!("the word `{}`", word.value));
            }
        }
    }
    match Parser::parse_sql(&dialect, sql) {
        Err(e) => Some(format!("sqlparser cannot parse a text ({e})")),
        Ok(statements) => statements
            .iter()
            .find(|s| !matches!(s, Statement::Query(q) if q.locks.is_empty()))
            .map(|s| format!("a statement other than a plain query: `{}`", first_words(s))),
    }
}

/// Why one token (followed by `next`) ends the fast path.
fn token_refusal(token: &Token, next: Option<&Token>) -> Option<String> {
    match token {
        Token::Word(word) => {
            let name = word.value.to_lowercase();
            let called = matches!(next, Some(Token::LParen));
            let refused = WORDS.contains(&name.as_str())
                || PREFIXES.iter().any(|p| name.starts_with(p))
                || (called && CALLS.contains(&name.as_str()));
            refused.then(|| format!("the word `{}`", word.value))
        }
        // Literals of every quoting (punctuation and numbers hold no letters).
        _ => {
            let text = token.to_string().to_lowercase();
            TIME_LITERALS
                .iter()
                .find(|t| text.contains(*t))
                .map(|t| format!("a literal holding `{t}`"))
        }
    }
}

/// Why `item` (with `prediction`) may not take the fast path, `None` when it may start on it.
pub(super) fn item_refusal(item: &LiveItem, prediction: &[String]) -> Option<String> {
    if item.efficiency {
        return Some("an efficiency item (its test sends BEGIN and ROLLBACK)".into());
    }
    let texts = [
        &item.preprocess_sql,
        prediction,
        &item.sol_sql,
        &item.clean_up_sql,
    ];
    texts
        .iter()
        .flat_map(|t| t.iter())
        .find_map(|sql| text_refusal(sql))
}

/// Why no item of a database whose views, functions and policies have the texts `definitions`
/// may take the fast path (one of them names a transaction-bound value, a write or a lock).
pub(super) fn db_refusal(definitions: &[String]) -> Option<String> {
    definitions.iter().find_map(|text| {
        let tokens = Tokenizer::new(&PostgreSqlDialect {}, text)
            .tokenize()
            .map_err(|e| format!("sqlparser cannot read a definition ({e})"));
        let tokens = match tokens {
            Ok(tokens) => tokens,
            Err(why) => return Some(why),
        };
        let mut words = tokens.iter().filter(|t| !matches!(t, Token::Whitespace(_)));
        while let Some(token) = words.next() {
            if let Some(why) = token_refusal(token, words.clone().next()) {
                return Some(format!("a view, function or policy of the database: {why}"));
            }
        }
        None
    })
}

/// The views', functions' and policies' texts of a database, read by [`db_refusal`].
pub(super) const DEFINITIONS: &str = "SELECT pg_catalog.pg_get_viewdef(c.oid) FROM pg_catalog.pg_class c \
     JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('v', 'm') \
     AND n.nspname NOT IN ('pg_catalog', 'information_schema') \
     UNION ALL SELECT p.prosrc FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace \
     WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') \
     UNION ALL SELECT coalesce(qual, '') || ' ' || coalesce(with_check, '') FROM pg_catalog.pg_policies";

/// Whether an error's SQLSTATE may come of the outer transaction (its state, a resource it
/// holds, serialization), so the item must not keep the fast path's verdict.
pub(super) fn outer_may_cause(sqlstate: &str) -> bool {
    ["25", "40", "53", "0B"]
        .iter()
        .any(|c| sqlstate.starts_with(c))
}

/// Whether `sql` holds no statement: only white space, `;`s and comments (`--` to the line's end,
/// `/* */`, nested), which the server answers with an empty-query response.
pub(super) fn is_blank(sql: &str) -> bool {
    let mut rest = sql;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == ';');
        if let Some(after) = rest.strip_prefix("--") {
            rest = after.split_once('\n').map_or("", |(_, next)| next);
        } else if rest.starts_with("/*") {
            let mut depth = 0usize;
            let mut end = None;
            let bytes = rest.as_bytes();
            let mut i = 0;
            while i + 1 < bytes.len() {
                match &bytes[i..i + 2] {
                    b"/*" => (depth, i) = (depth + 1, i + 2),
                    b"*/" => {
                        (depth, i) = (depth - 1, i + 2);
                        if depth == 0 {
                            end = Some(i);
                            break;
                        }
                    }
                    _ => i += 1,
                }
            }
            // An unclosed comment is the server's syntax error, not an empty query.
            let Some(end) = end else { return false };
            rest = &rest[end..];
        } else {
            return rest.is_empty();
        }
    }
}

/// How an item's session runs its statements.
#[derive(Debug, Default)]
pub(super) struct FastState {
    /// Whether the item runs on the fast path.
    pub on: bool,
    /// Why the fast path was abandoned part-way, if it was.
    pub refused: std::sync::Mutex<Option<String>>,
}

#[cfg(test)]
mod tests {
    use super::{db_refusal, is_blank, outer_may_cause, text_refusal};

    #[test]
    fn plain_queries_take_the_fast_path() {
        for sql in [
            "SELECT 1",
            "SELECT name, age FROM students WHERE age > 3 ORDER BY 1",
            "WITH t AS (SELECT * FROM products) SELECT count(*) FROM t",
            "SELECT a FROM x UNION SELECT b FROM y; SELECT 2",
            "VALUES (1), (2)",
            "SELECT 'today''s special' IS NULL",
            "SELECT round(price::numeric, 2) FROM products",
            "",
            " ; -- nothing",
        ] {
            if sql.contains("today") {
                assert!(text_refusal(sql).is_some(), "{sql}");
            } else {
                assert_eq!(text_refusal(sql), None, "{sql}");
            }
        }
    }

    #[test]
    fn writes_and_everything_that_escapes_a_transaction_take_the_slow_path() {
        for sql in [
            "INSERT INTO t VALUES (1)",
            "UPDATE t SET a = 1",
            "DELETE FROM t",
            "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d",
            "SELECT * INTO t2 FROM t",
            "SELECT * FROM t FOR UPDATE",
            "SELECT * FROM t FOR SHARE",
            "SELECT * FROM t FOR KEY SHARE",
            "CREATE TABLE t (a int)",
            "CREATE TEMP TABLE t (a int) ON COMMIT DROP",
            "SELECT query_to_xml('SELECT pg_advisory_lock(1)', true, true, '')",
            "SELECT pg_catalog.QUERY_TO_XMLSCHEMA('SELECT 1', true, true, '')",
            "CREATE INDEX CONCURRENTLY i ON t (a)",
            "VACUUM t",
            "VACUUM",
            "ANALYZE t",
            "CREATE DATABASE d",
            "ALTER SYSTEM SET work_mem = '1MB'",
            "BEGIN",
            "COMMIT",
            "ROLLBACK",
            "SAVEPOINT s",
            "START TRANSACTION",
            "PREPARE TRANSACTION 'x'",
            "SET LOCAL statement_timeout = 0",
            "SET search_path = other",
            "SET CONSTRAINTS ALL DEFERRED",
            "SELECT nextval('s')",
            "SELECT setval('s', 1)",
            "SELECT now()",
            "SELECT CURRENT_TIMESTAMP",
            "SELECT current_date - 1",
            "SELECT transaction_timestamp()",
            "SELECT 'now'::timestamp",
            "SELECT DATE 'today'",
            "SELECT age(born) FROM people",
            "SELECT pg_advisory_lock(1)",
            "SELECT pg_advisory_xact_lock(1)",
            "SELECT pg_notify('c', 'x')",
            "LISTEN c",
            "NOTIFY c",
            "SELECT set_config('a.b', 'c', true)",
            "SELECT txid_current()",
            "SELECT * FROM pg_stat_user_tables",
            "SELECT * FROM pg_locks",
            "DECLARE c CURSOR FOR SELECT 1",
            "DO $$ BEGIN PERFORM 1; END $$",
            "EXPLAIN ANALYZE SELECT 1",
            "SELECT FROM WHERE )",
            "SELECT 'unclosed",
        ] {
            assert!(text_refusal(sql).is_some(), "{sql} took the fast path");
        }
    }

    #[test]
    fn a_column_named_like_a_function_is_no_call() {
        assert_eq!(text_refusal("SELECT age FROM students"), None);
        assert!(text_refusal("SELECT AGE (born) FROM students").is_some());
    }

    #[test]
    fn a_database_whose_view_reads_the_time_has_no_fast_path() {
        let clean = vec![" SELECT products.name FROM products;".to_string()];
        assert_eq!(db_refusal(&clean), None);
        let timed = vec![" SELECT now() AS at;".to_string()];
        assert!(db_refusal(&timed).is_some());
        let locking = vec!["BEGIN PERFORM pg_advisory_lock(1); END".to_string()];
        assert!(db_refusal(&locking).is_some());
        // A function's `SELECT ... INTO` a variable is no refusal of the database.
        let into = vec!["BEGIN SELECT count(*) INTO n FROM t; RETURN n; END".to_string()];
        assert_eq!(db_refusal(&into), None);
    }

    #[test]
    fn errors_the_outer_transaction_may_cause_are_known() {
        for code in ["25P02", "40001", "40P01", "53200", "0B000"] {
            assert!(outer_may_cause(code), "{code}");
        }
        for code in ["42P01", "22012", "57014", "23505"] {
            assert!(!outer_may_cause(code), "{code}");
        }
    }

    #[test]
    fn a_text_of_white_space_semicolons_and_comments_is_blank() {
        for blank in [
            "",
            "  ",
            " ;; ",
            "-- only a comment",
            "/* a /* nested */ one */ ;",
            "--x\n/*y*/\n",
        ] {
            assert!(is_blank(blank), "{blank:?}");
        }
        for statement in [
            "SELECT 1",
            "-- c\nSELECT 1",
            "/* c */ SELECT 1",
            "; x",
            "/* open",
        ] {
            assert!(!is_blank(statement), "{statement:?}");
        }
    }
}
