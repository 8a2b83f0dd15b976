//! The SQLite engine: untrusted SQL on the benchmark's database files.
//!
//! Predictions come from pull requests and are treated as hostile. Each database is opened
//! through the guarded constructor of `util::sqlite` (read-only, immutable, defensive, limited);
//! on top of it an authorizer admits only reading (no ATTACH, writes, DDL, PRAGMA,
//! transactions or `load_extension`); only one read-only statement runs per query; a progress
//! handler enforces the wall-clock limit inside SQLite; value, SQL-text and result sizes are capped.
//! Connections are cached per worker thread, at most [`CACHED_CONNECTIONS`] each (the least
//! recently used one is closed past that, and all but the one in use once SQLite's heap holds a
//! quarter of the budget), so a run opens a database once per thread while it works on it, and a
//! run over thousands of databases does not keep every one open.

use crate::engine::exec::{
    budget_exhausted, decode_lenient, Engine, ExecError, Executor, Limits, ResultTable, SizeGuard,
};
use crate::engine::value::{Row, Value};
use crate::util::sqlite::{now_nanos, Guarded};
use rusqlite::fallible_iterator::FallibleIterator;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::Connection;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The time a database may take to be copied into memory.
const COPY_BUDGET: Duration = Duration::from_secs(60);

/// SQLite files, each opened once per worker thread through the guarded constructor.
#[derive(Debug, Clone, Copy, Default)]
pub struct SqliteEngine;

/// Connections one worker thread keeps open. Each holds SQLite heap (schema, page cache,
/// lookaside: a few hundred KiB for a small database) charged to the run's budget until closed.
/// An item's test suite is read database after database, for each system in turn, so a cache
/// smaller than one schema's suite (51 databases for world_1 in the default distilled suite)
/// reopens every database for every query: at 16, opening connections was half of a warm
/// test-suite run of the four shared systems (6.0 s against 3.6 s at 64, 14 MiB more RSS).
pub const CACHED_CONNECTIONS: usize = 64;

thread_local! {
    /// This thread's open connections, the most recently used last.
    static CONNECTIONS: RefCell<Vec<(PathBuf, Guarded)>> = const { RefCell::new(Vec::new()) };
}

impl SqliteEngine {
    /// Runs `action` on this thread's connection to `db`, opening it on first use.
    fn with_connection<T>(
        db: &Path,
        action: impl FnOnce(&Guarded) -> Result<T, ExecError>,
    ) -> Result<T, ExecError> {
        CONNECTIONS.with(|cache| {
            let mut cache = cache.borrow_mut();
            match cache.iter().position(|(path, _)| path == db) {
                Some(index) => {
                    let entry = cache.remove(index);
                    cache.push(entry);
                }
                None => {
                    make_room(&mut cache);
                    cache.push((db.to_path_buf(), open_guarded(db)?));
                }
            }
            let (_, guarded) = cache.last().expect("the connection was just put last");
            action(guarded)
        })
    }
}

/// Closes cached connections before another is opened: the least recently used one when the
/// cache is full, every one when SQLite's heap is high (their page caches go back to the budget).
fn make_room(cache: &mut Vec<(PathBuf, Guarded)>) {
    if crate::util::memory::sqlite_heap_is_high() {
        cache.clear();
    } else if cache.len() >= CACHED_CONNECTIONS {
        cache.remove(0);
    }
}

/// How many connections this thread has open (for tests).
pub fn cached_connections() -> usize {
    CONNECTIONS.with(|cache| cache.borrow().len())
}

impl Executor {
    /// An executor on SQLite files enforcing `limits` on every query.
    pub fn new(limits: Limits) -> Self {
        Self::on(std::sync::Arc::new(SqliteEngine), limits)
    }
}

impl Engine for SqliteEngine {
    fn run(
        &self,
        db: &Path,
        sql: &str,
        limits: &Limits,
        with_columns: bool,
        most_rows: usize,
    ) -> Result<ResultTable, ExecError> {
        Self::with_connection(db, |guarded| {
            let deadline = guarded.arm(limits.timeout);
            let wanted = Wanted {
                columns: with_columns,
                most_rows,
            };
            let result = query(&guarded.conn, sql, deadline, limits, wanted);
            guarded.disarm();
            result
        })
    }

    fn column_names(
        &self,
        db: &Path,
        sql: &str,
        limits: &Limits,
    ) -> Result<Vec<String>, ExecError> {
        Self::with_connection(db, |guarded| {
            let classify = |e: rusqlite::Error| classify_error(e, false, limits.timeout);
            let mut batch = rusqlite::Batch::new(&guarded.conn, sql);
            let statement = batch
                .next()
                .map_err(classify)?
                .ok_or_else(|| ExecError::Sql("no statement".into()))?;
            Ok(statement.column_names().map(str::to_string).collect())
        })
    }
}

/// What a caller wants of one query: the column names or not, and whether reading may stop
/// after `most_rows + 1` rows.
#[derive(Debug, Clone, Copy)]
struct Wanted {
    columns: bool,
    most_rows: usize,
}

/// Runs one untrusted statement on `conn` until `deadline` (the progress handler is armed by the
/// caller), under the row and byte caps of `limits`; stops once it has more rows than wanted.
fn query(
    conn: &Connection,
    sql: &str,
    deadline: u64,
    limits: &Limits,
    wanted: Wanted,
) -> Result<ResultTable, ExecError> {
    let timed_out = || now_nanos() >= deadline;
    let classify = |e: rusqlite::Error| classify_error(e, timed_out(), limits.timeout);
    if sql.contains('\0') {
        return Err(ExecError::Sql("the query contains a null character".into()));
    }
    let mut batch = rusqlite::Batch::new(conn, sql);
    let Some(mut stmt) = batch.next().map_err(classify)? else {
        return match wanted.columns {
            true => Err(ExecError::Sql("no statement".into())),
            false => Ok(ResultTable::default()),
        };
    };
    if more_than_one_statement(conn, sql) {
        return Err(ExecError::Sql(
            "You can only execute one statement at a time.".into(),
        ));
    }
    if !stmt.readonly() {
        return Err(ExecError::Denied(
            "the statement would change the database".into(),
        ));
    }
    let columns = if wanted.columns {
        stmt.column_names().map(str::to_string).collect()
    } else {
        Vec::new()
    };
    let width = stmt.column_count();
    // Declared before the rows so that, on an error, the rows are freed before their charge is
    // given back to the budget.
    let mut size = SizeGuard::new(limits);
    let mut rows = stmt.raw_query();
    let mut result = Vec::new();
    while let Some(row) = rows.next().map_err(classify)? {
        let mut values = Vec::with_capacity(width);
        for i in 0..width {
            let value = read_value_strict(row.get_ref(i).map_err(classify)?, || {
                let statement: &rusqlite::Statement<'_> = row.as_ref();
                statement.column_name(i).unwrap_or("?").to_string()
            })?;
            size.add_value(&value);
            values.push(value);
        }
        result.push(values);
        size.add_row()?;
        if result.len() > wanted.most_rows {
            break;
        }
    }
    size.finish();
    Ok(ResultTable {
        columns,
        rows: result,
    })
}

/// Whether `sql` holds more than its first statement, as Python's `sqlite3` decides it: after
/// the end SQLite gives the first statement (empty statements before it skipped, its `;`
/// included), only whitespace and comments may follow; a second `;` is a second statement. A
/// first statement SQLite cannot prepare is not judged (Python raises its error first, and
/// SQLite's end is then where the parser stopped, not where the statement ends).
pub(crate) fn more_than_one_statement(conn: &Connection, sql: &str) -> bool {
    let Ok(length) = std::ffi::c_int::try_from(sql.len()) else {
        return false;
    };
    let mut statement = std::ptr::null_mut();
    let mut tail: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: the text outlives the call and its length is passed (no terminator needed); the
    // handle belongs to `conn`, which this thread holds; the statement prepared is finalized at
    // once, and `tail` points into `sql` (or is null when preparing failed).
    let end = unsafe {
        let prepared = rusqlite::ffi::sqlite3_prepare_v2(
            conn.handle(),
            sql.as_ptr().cast(),
            length,
            &mut statement,
            &mut tail,
        );
        rusqlite::ffi::sqlite3_finalize(statement);
        if prepared != rusqlite::ffi::SQLITE_OK || tail.is_null() {
            return false;
        }
        tail.cast::<u8>().offset_from(sql.as_ptr()) as usize
    };
    sql.get(end..).is_some_and(|rest| !only_comments(rest))
}

/// Python's `lstrip_sql` (Modules/_sqlite/statement.c) finding nothing: `text` is whitespace
/// (space, tab, form feed, newline, carriage return), `--` comments and `/* */` comments, an
/// unterminated comment running to the end.
fn only_comments(text: &str) -> bool {
    let mut rest = text.as_bytes();
    loop {
        match rest {
            [] => return true,
            [b' ' | b'\t' | b'\x0c' | b'\n' | b'\r', after @ ..] => rest = after,
            [b'-', b'-', after @ ..] => match after.iter().position(|&b| b == b'\n') {
                Some(newline) => rest = &after[newline + 1..],
                None => return true,
            },
            [b'/', b'*', after @ ..] => match after.windows(2).position(|w| w == b"*/") {
                Some(close) => rest = &after[close + 2..],
                None => return true,
            },
            _ => return false,
        }
    }
}

fn classify_error(error: rusqlite::Error, timed_out: bool, timeout: Duration) -> ExecError {
    use rusqlite::ErrorCode;
    match error.sqlite_error_code() {
        Some(ErrorCode::OperationInterrupted) if timed_out => {
            ExecError::Timeout(timeout.as_millis())
        }
        Some(ErrorCode::AuthorizationForStatementDenied) => {
            ExecError::Denied(sqlite_message(&error))
        }
        Some(ErrorCode::OutOfMemory) if crate::util::memory::sqlite_is_counted() => {
            budget_exhausted()
        }
        _ => ExecError::Sql(sqlite_message(&error)),
    }
}

/// SQLite's own message, without rusqlite's wrapping, cut to a readable length (SQLite quotes
/// the offending token, which may be megabytes of garbage) and scrubbed of credentials.
fn sqlite_message(error: &rusqlite::Error) -> String {
    const MAX_CHARS: usize = 300;
    let message = match error {
        rusqlite::Error::SqliteFailure(_, Some(message)) => message.clone(),
        other => other.to_string(),
    };
    crate::util::scrub::scrub_cut(&message, MAX_CHARS)
}

/// One value of an untrusted query's result, as Python's `sqlite3` reads it: text that is not
/// UTF-8 fails the query, with Python's message (`column` names its column).
fn read_value_strict(
    value: rusqlite::types::ValueRef<'_>,
    column: impl FnOnce() -> String,
) -> Result<Value, ExecError> {
    match value {
        rusqlite::types::ValueRef::Text(bytes) => match std::str::from_utf8(bytes) {
            Ok(text) => Ok(Value::Text(text.to_string())),
            Err(_) => Err(ExecError::Sql(format!(
                "Could not decode to UTF-8 column '{}' with text '{}'",
                column(),
                crate::util::scrub::scrub_cut(&String::from_utf8_lossy(bytes), 100)
            ))),
        },
        other => Ok(read_value(other)),
    }
}

/// One SQLite value as a [`Value`], text decoded leniently (invalid UTF-8 dropped): for
/// sqlgate's own reads; untrusted query results are read strictly, as Python reads them.
pub fn read_value(value: rusqlite::types::ValueRef<'_>) -> Value {
    use rusqlite::types::ValueRef;
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Real(f),
        ValueRef::Text(bytes) => Value::Text(decode_lenient(bytes)),
        ValueRef::Blob(bytes) => Value::Blob(bytes.to_vec()),
    }
}

/// A private, writable in-memory copy of a database, used to search for counterexamples. Only
/// sqlgate's own statements may change it; untrusted queries run on it under the same guards as
/// everywhere else.
pub struct Scratch {
    guarded: Guarded,
}

impl Scratch {
    /// Copies `db` into memory and locks the copy down.
    pub fn copy_of(db: &Path) -> Result<Scratch, ExecError> {
        let open_error = |e: rusqlite::Error| ExecError::Open(format!("{}: {e}", db.display()));
        let mut conn = crate::util::sqlite::open_in_memory().map_err(open_error)?;
        let source = crate::util::sqlite::open_read_only(db).map_err(open_error)?;
        source.arm(COPY_BUDGET);
        rusqlite::backup::Backup::new(&source.conn, &mut conn)
            .and_then(|backup| backup.run_to_completion(256, Duration::ZERO, None))
            .map_err(open_error)?;
        conn.pragma_update(None, "foreign_keys", true)
            .map_err(open_error)?;
        Ok(Scratch {
            guarded: guard(conn).map_err(open_error)?,
        })
    }

    /// Loads a serialized database image (`sqlite3_serialize`, e.g. a generated database) into
    /// memory and locks it down like [`Scratch::copy_of`].
    pub fn from_image(image: &[u8]) -> Result<Scratch, ExecError> {
        let open_error = |e: rusqlite::Error| ExecError::Open(format!("database image: {e}"));
        let mut conn = crate::util::sqlite::open_in_memory().map_err(open_error)?;
        conn.deserialize_read_exact(rusqlite::MAIN_DB, image, image.len(), false)
            .map_err(open_error)?;
        conn.pragma_update(None, "foreign_keys", true)
            .map_err(open_error)?;
        Ok(Scratch {
            guarded: guard(conn).map_err(open_error)?,
        })
    }

    /// Runs an untrusted query on the copy, under `executor`'s limits.
    pub fn run(&self, executor: &Executor, sql: &str) -> Result<Vec<Row>, ExecError> {
        let limits = executor.limits();
        let wanted = Wanted {
            columns: false,
            most_rows: usize::MAX,
        };
        executor
            .logging_timeouts(|| {
                let deadline = self.guarded.arm(limits.timeout);
                let result = query(&self.guarded.conn, sql, deadline, &limits, wanted);
                self.guarded.disarm();
                result
            })
            .map(|table| table.rows)
    }

    /// Runs one of sqlgate's own statements (never user input) with the authorizer lifted.
    pub fn execute_trusted(
        &mut self,
        sql: &str,
        params: impl rusqlite::Params,
    ) -> rusqlite::Result<usize> {
        self.guarded
            .conn
            .authorizer(None::<fn(AuthContext<'_>) -> Authorization>)?;
        let result = self.guarded.conn.execute(sql, params);
        self.guarded.conn.authorizer(Some(authorize))?;
        result
    }

    /// Rows of one of sqlgate's own read queries.
    pub fn read_trusted(&self, sql: &str) -> rusqlite::Result<Vec<Row>> {
        let mut statement = self.guarded.conn.prepare(sql)?;
        let columns = statement.column_count();
        let mut rows = statement.raw_query();
        let mut result = Vec::new();
        while let Some(row) = rows.next()? {
            result.push(
                (0..columns)
                    .map(|i| row.get_ref(i).map(read_value))
                    .collect::<rusqlite::Result<Row>>()?,
            );
        }
        Ok(result)
    }

    /// Column names of a query, for display.
    pub fn column_names(&self, sql: &str) -> rusqlite::Result<Vec<String>> {
        let statement = self.guarded.conn.prepare(sql)?;
        Ok(statement.column_names().map(str::to_string).collect())
    }
}

/// Opens `db` through the guarded constructor, with the authorizer for untrusted queries.
fn open_guarded(db: &Path) -> Result<Guarded, ExecError> {
    let open_error = |e: rusqlite::Error| ExecError::Open(format!("{}: {e}", db.display()));
    if !db.is_file() {
        return Err(ExecError::Open(format!("{}: no such file", db.display())));
    }
    let mut guarded = crate::util::sqlite::open_read_only(db).map_err(open_error)?;
    guarded
        .conn
        .authorizer(Some(authorize))
        .map_err(open_error)?;
    Ok(guarded)
}

/// Locks an in-memory copy down like a file, with the authorizer.
fn guard(conn: Connection) -> rusqlite::Result<Guarded> {
    let mut guarded = crate::util::sqlite::guard(conn)?;
    guarded.conn.authorizer(Some(authorize))?;
    Ok(guarded)
}

/// Admits reading and pure functions; denies everything else.
fn authorize(context: AuthContext<'_>) -> Authorization {
    match context.action {
        AuthAction::Select | AuthAction::Read { .. } | AuthAction::Recursive => {
            Authorization::Allow
        }
        AuthAction::Function { function_name }
            if !function_name.eq_ignore_ascii_case("load_extension") =>
        {
            Authorization::Allow
        }
        _ => Authorization::Deny,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn executor() -> Executor {
        Executor::new(Limits::of(&crate::input::config::ExecutionConfig::default()))
    }

    fn database(dir: &Path, name: &str, setup: &str) -> PathBuf {
        let path = dir.join(name);
        Connection::open(&path)
            .unwrap()
            .execute_batch(setup)
            .unwrap();
        path
    }

    #[test]
    fn a_statement_sqlite_cannot_prepare_is_left_to_its_own_error() {
        // SQLite stops parsing `CREATE TABLE t` at the name when `t` exists: what follows the
        // name is not a second statement, and Python raises "table t already exists".
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t(a)").unwrap();
        let create = "CREATE TABLE t AS SELECT 1 AS a";
        assert!(!super::more_than_one_statement(&conn, create));
        let error = conn.prepare(create).unwrap_err().to_string();
        assert!(error.contains("table t already exists"), "{error}");
        assert!(super::more_than_one_statement(
            &conn,
            "SELECT a FROM t; SELECT 2"
        ));
    }

    #[test]
    fn one_statement_is_decided_as_python_decides_it() {
        let dir = tempfile::tempdir().unwrap();
        let db = database(
            dir.path(),
            "one.sqlite",
            "CREATE TABLE t(a); INSERT INTO t VALUES (1);",
        );
        let run = |sql: &str| executor().run(&db, sql);
        // Python 3.11 / 3.12 `sqlite3`: accepted (1 row or none) or "only one statement".
        for sql in [
            "SELECT a FROM t",
            "SELECT a FROM t;",
            "SELECT a FROM t; ",
            ";SELECT a FROM t",
            "SELECT a FROM t; -- done",
            "SELECT a FROM t;\n/* done */\n",
            "SELECT a FROM t; /* unterminated",
        ] {
            assert_eq!(run(sql).unwrap(), vec![vec![Value::Int(1)]], "{sql:?}");
        }
        for sql in ["", ";", "-- nothing"] {
            assert_eq!(run(sql).unwrap(), Vec::<Row>::new(), "{sql:?}");
        }
        for sql in [
            "SELECT a FROM t;;",
            "SELECT a FROM t; ;",
            "SELECT a FROM t; /* c */ ;",
            "SELECT a FROM t; SELECT 2",
            "SELECT a FROM t; -",
        ] {
            let error = run(sql).unwrap_err().to_string();
            assert!(
                error.contains("one statement at a time"),
                "{sql:?}: {error}"
            );
        }
        // A first statement SQLite cannot prepare fails with its own error, as in Python.
        for (sql, own) in [
            ("SELECT b FROM t; SELECT 2", "no such column: b"),
            (
                "SELECT a FROM missing WHERE a = 1; SELECT 2",
                "no such table: missing",
            ),
            ("SELECT a FROM t WHERE ; SELECT 2", "syntax error"),
        ] {
            let error = run(sql).unwrap_err().to_string();
            assert!(error.contains(own), "{sql:?}: {error}");
        }
        let error = run("SELECT a FROM t\0; DROP TABLE t")
            .unwrap_err()
            .to_string();
        assert!(error.contains("null character"), "{error}");
    }

    #[test]
    fn text_that_is_not_utf8_fails_the_query_as_in_python() {
        let dir = tempfile::tempdir().unwrap();
        let db = database(
            dir.path(),
            "bytes.sqlite",
            "CREATE TABLE t(b); INSERT INTO t VALUES (CAST(x'61ff62' AS TEXT)), ('ok');",
        );
        let error = executor()
            .run(&db, "SELECT b FROM t")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("Could not decode to UTF-8 column 'b' with text 'a\u{fffd}b'"),
            "{error}"
        );
        let fine = executor()
            .run(&db, "SELECT b FROM t WHERE b = 'ok'")
            .unwrap();
        assert_eq!(fine, vec![vec![Value::Text("ok".into())]]);
        // A blob of the same bytes is bytes, as in Python.
        let blob = executor()
            .run(&db, "SELECT CAST(b AS BLOB) FROM t LIMIT 1")
            .unwrap();
        assert_eq!(blob, vec![vec![Value::Blob(b"a\xffb".to_vec())]]);
    }

    #[test]
    fn the_math_functions_of_a_default_sqlite_build_exist() {
        let dir = tempfile::tempdir().unwrap();
        let db = database(dir.path(), "math.sqlite", "CREATE TABLE t(a);");
        let rows = executor()
            .run(
                &db,
                "SELECT sqrt(4), floor(2.5), power(2, 3), log(100), ln(1), ceil(1.2), pi() > 3",
            )
            .unwrap();
        let reals = [2.0, 2.0, 8.0, 2.0, 0.0, 2.0].map(Value::Real);
        assert_eq!(rows[0][..6], reals);
        assert_eq!(rows[0][6], Value::Int(1));
    }

    #[test]
    fn a_thread_keeps_a_bounded_number_of_connections_open() {
        let dir = tempfile::tempdir().unwrap();
        let executor = executor();
        for i in 0..CACHED_CONNECTIONS + 10 {
            let db = database(dir.path(), &format!("d{i}.sqlite"), "CREATE TABLE t(a);");
            executor.run(&db, "SELECT a FROM t").unwrap();
            assert!(cached_connections() <= CACHED_CONNECTIONS);
        }
        assert_eq!(cached_connections(), CACHED_CONNECTIONS);
    }
}
