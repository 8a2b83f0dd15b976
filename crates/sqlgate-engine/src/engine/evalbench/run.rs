//! Statements as EvalBench's SQLite driver runs them (`SQLiteDB._execute`): one SQLAlchemy
//! connection, `with connection.begin()`, each statement through Python's `sqlite3` in its
//! legacy transaction mode, then a rollback (`rollback=True`) or a commit. That mode opens a
//! transaction only before a statement whose first word (after whitespace and comments) is
//! INSERT, UPDATE, DELETE or REPLACE: a CREATE, ALTER or DROP run before one is committed at
//! once and survives the rollback; one run after it is rolled back with it. An error stops the
//! statements and rolls back the open transaction.

use crate::engine::livesql::session::{Session, Stopped};
use rusqlite::types::Value;
use rusqlite::Connection;
use std::collections::BTreeMap;

/// A row as the driver returns it (`Row._asdict()`): column name to value; a later column of
/// the same name replaces an earlier one.
pub type Row = BTreeMap<String, Value>;

/// Most rows one item's statements may return, all together; past it the item is stopped.
const MAX_ROWS: usize = 1_000_000;

/// What one run returned: the rows of every statement that returns rows, in order, then those of
/// the `eval_query`, or the error that stopped it.
#[derive(Debug, Default, Clone)]
pub struct Ran {
    /// The statements' rows.
    pub rows: Vec<Row>,
    /// The `eval_query`'s rows.
    pub eval_rows: Vec<Row>,
    /// The error, when a statement failed.
    pub error: Option<String>,
}

/// Runs `statements`, then `eval`, in one driver transaction, rolled back when `rollback`, else
/// committed. The budget running out is [`Stopped`]; a statement's error is in [`Ran::error`].
pub fn execute(
    session: &Session,
    statements: &[String],
    eval: &[String],
    rollback: bool,
) -> Result<Ran, Stopped> {
    let conn = session.connection();
    let mut ran = Ran::default();
    let mut count = 0;
    let mut outcome = Ok(());
    for sql in statements {
        outcome = run_one(conn, sql, &mut ran.rows, &mut count);
        if outcome.is_err() {
            break;
        }
    }
    if outcome.is_ok() {
        for sql in eval {
            outcome = run_one(conn, sql, &mut ran.eval_rows, &mut count);
            if outcome.is_err() {
                break;
            }
        }
    }
    if count > MAX_ROWS {
        return Err(Stopped(
            "the item's statements returned more rows than its row budget".into(),
        ));
    }
    if let Err(error) = outcome {
        session.check_budget()?;
        end(conn, "ROLLBACK");
        ran.error = Some(error);
        return Ok(ran);
    }
    let finish = if rollback { "ROLLBACK" } else { "COMMIT" };
    if !conn.is_autocommit() {
        if let Err(error) = conn.execute_batch(finish) {
            session.check_budget()?;
            end(conn, "ROLLBACK");
            ran.error = Some(error.to_string());
        }
    }
    Ok(ran)
}

/// Ends the open transaction, if any (its error is moot: the connection is closed next).
fn end(conn: &Connection, how: &str) {
    if !conn.is_autocommit() {
        let _ = conn.execute_batch(how);
    }
}

/// One statement: a transaction opened first when Python's `sqlite3` opens one, then its rows
/// (when it has columns) appended to `rows`.
fn run_one(
    conn: &Connection,
    sql: &str,
    rows: &mut Vec<Row>,
    count: &mut usize,
) -> Result<(), String> {
    if sql.contains('\0') {
        return Err("the query contains a null character".into());
    }
    if opens_transaction(sql) && conn.is_autocommit() {
        conn.execute_batch("BEGIN").map_err(|e| e.to_string())?;
    }
    if crate::engine::sqlite::more_than_one_statement(conn, sql) {
        return Err("You can only execute one statement at a time.".into());
    }
    let mut statement = conn.prepare(sql).map_err(|e| e.to_string())?;
    let names: Vec<String> = statement.column_names().map(|n| n.to_string()).collect();
    let mut results = statement.raw_query();
    while let Some(row) = results.next().map_err(|e| e.to_string())? {
        if names.is_empty() {
            continue;
        }
        *count += 1;
        if *count > MAX_ROWS {
            return Err("row budget".into());
        }
        let mut dict = Row::new();
        for (i, name) in names.iter().enumerate() {
            dict.insert(
                name.clone(),
                row.get::<_, Value>(i).map_err(|e| e.to_string())?,
            );
        }
        rows.push(dict);
    }
    Ok(())
}

/// Python's `sqlite3` (legacy transaction control): the first word after whitespace and
/// comments is INSERT, UPDATE, DELETE or REPLACE.
fn opens_transaction(sql: &str) -> bool {
    let mut rest = sql;
    loop {
        rest = rest.trim_start_matches([' ', '\t', '\n', '\r', '\x0c']);
        if let Some(comment) = rest.strip_prefix("--") {
            rest = comment.split_once('\n').map_or("", |(_, after)| after);
        } else if let Some(comment) = rest.strip_prefix("/*") {
            rest = comment.split_once("*/").map_or("", |(_, after)| after);
        } else {
            break;
        }
    }
    let word: String = rest.chars().take(7).collect::<String>().to_lowercase();
    ["insert", "update", "delete", "replace"]
        .iter()
        .any(|w| word.starts_with(w))
}

/// Python's `==` between two values of a row: numbers by value (an integer equals the float of
/// the same value), text with text, bytes with bytes, `None` with `None`.
pub fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Integer(x), Value::Integer(y)) => x == y,
        (Value::Real(x), Value::Real(y)) => x == y,
        (Value::Integer(i), Value::Real(f)) | (Value::Real(f), Value::Integer(i)) => {
            f.fract() == 0.0 && *f >= i64::MIN as f64 && *f < -(i64::MIN as f64) && *f as i64 == *i
        }
        (Value::Text(x), Value::Text(y)) => x == y,
        (Value::Blob(x), Value::Blob(y)) => x == y,
        _ => false,
    }
}

/// Python's `==` between two lists of rows (dicts): same length, and each pair has the same
/// keys with equal values.
pub fn same_rows(a: &[Row], b: &[Row]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((kx, vx), (ky, vy))| kx == ky && same_value(vx, vy))
        })
}
