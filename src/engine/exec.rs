//! Safe execution of untrusted SQL against SQLite databases.
//!
//! Predictions come from pull requests and are treated as hostile. Each database is opened
//! read-only and immutable; an authorizer admits only reading (no ATTACH, writes, DDL, PRAGMA,
//! transactions or `load_extension`); only one read-only statement runs per query; a progress
//! handler enforces the wall-clock limit inside SQLite; value, SQL-text and result sizes are capped.
//! Connections are cached per worker thread, so a run opens each database once per thread.

use crate::engine::value::{Row, Value};
use rusqlite::fallible_iterator::FallibleIterator;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::limits::Limit;
use rusqlite::{Connection, OpenFlags};
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Largest string or blob a query may build (defeats `randomblob(900000000)` and friends).
const MAX_VALUE_BYTES: i32 = 32 << 20;
/// Longest SQL text accepted.
const MAX_SQL_BYTES: i32 = 1 << 20;
/// Virtual-machine steps between two deadline checks.
const PROGRESS_INTERVAL: i32 = 1000;

/// Per-query limits.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Wall-clock limit.
    pub timeout: Duration,
    /// Most rows a result may have.
    pub max_rows: usize,
    /// Most bytes a result may occupy (approximate, counted as rows are read).
    pub max_bytes: usize,
}

/// Why a query produced no result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    /// The wall-clock limit was reached.
    #[error("timed out after {0} ms")]
    Timeout(u128),
    /// The statement tried something other than reading.
    #[error("refused: {0}")]
    Denied(String),
    /// The result exceeded the row or byte cap.
    #[error("result too large: {0}")]
    TooLarge(String),
    /// SQLite rejected the query.
    #[error("{0}")]
    Sql(String),
    /// The database could not be opened.
    #[error("cannot open database {0}")]
    Open(String),
}

/// Runs queries under [`Limits`].
#[derive(Debug, Clone)]
pub struct Executor {
    limits: Limits,
}

/// A cached connection and the deadline its progress handler watches.
struct Guarded {
    conn: Connection,
    deadline: Arc<AtomicU64>,
}

thread_local! {
    static CONNECTIONS: RefCell<HashMap<PathBuf, Guarded>> = RefCell::new(HashMap::new());
}

/// Nanoseconds since the first call, the clock the progress handlers compare against.
fn now_nanos() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

impl Executor {
    /// An executor enforcing `limits` on every query.
    pub fn new(limits: Limits) -> Self {
        Executor { limits }
    }

    /// The limits in force.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Runs one query on the database at `db` and returns all its rows.
    pub fn run(&self, db: &Path, sql: &str) -> Result<Vec<Row>, ExecError> {
        CONNECTIONS.with(|cache| {
            let mut cache = cache.borrow_mut();
            if !cache.contains_key(db) {
                cache.insert(db.to_path_buf(), open_guarded(db)?);
            }
            let guarded = &cache[db];
            let started = now_nanos();
            let deadline = started.saturating_add(self.limits.timeout.as_nanos() as u64);
            guarded.deadline.store(deadline, Ordering::Relaxed);
            let result = self.query(&guarded.conn, sql, deadline);
            guarded.deadline.store(u64::MAX, Ordering::Relaxed);
            result
        })
    }

    /// Runs one query and returns its rows with their column names, for the metrics that align
    /// columns by name (SQLMorph).
    pub fn run_table(&self, db: &Path, sql: &str) -> Result<ResultTable, ExecError> {
        let rows = self.run(db, sql)?;
        let columns = self.column_names(db, sql)?;
        Ok(ResultTable { columns, rows })
    }

    /// The result column names of one query, prepared under the same rules as [`Executor::run`]
    /// but not run (for showing results with their headers).
    pub fn column_names(&self, db: &Path, sql: &str) -> Result<Vec<String>, ExecError> {
        CONNECTIONS.with(|cache| {
            let mut cache = cache.borrow_mut();
            if !cache.contains_key(db) {
                cache.insert(db.to_path_buf(), open_guarded(db)?);
            }
            let classify = |e: rusqlite::Error| classify_error(e, false, self.limits.timeout);
            let mut batch = rusqlite::Batch::new(&cache[db].conn, sql);
            let statement = batch
                .next()
                .map_err(classify)?
                .ok_or_else(|| ExecError::Sql("no statement".into()))?;
            Ok(statement.column_names().map(str::to_string).collect())
        })
    }

    fn query(&self, conn: &Connection, sql: &str, deadline: u64) -> Result<Vec<Row>, ExecError> {
        let timed_out = || now_nanos() >= deadline;
        let classify = |e: rusqlite::Error| classify_error(e, timed_out(), self.limits.timeout);
        let mut batch = rusqlite::Batch::new(conn, sql);
        let Some(mut stmt) = batch.next().map_err(classify)? else {
            return Ok(Vec::new());
        };
        if batch.next().map_err(classify)?.is_some() {
            return Err(ExecError::Sql(
                "You can only execute one statement at a time.".into(),
            ));
        }
        if !stmt.readonly() {
            return Err(ExecError::Denied(
                "the statement would change the database".into(),
            ));
        }
        let columns = stmt.column_count();
        let mut rows = stmt.raw_query();
        let mut result = Vec::new();
        let mut bytes = 0usize;
        while let Some(row) = rows.next().map_err(classify)? {
            let mut values = Vec::with_capacity(columns);
            for i in 0..columns {
                let value = read_value(row.get_ref(i).map_err(classify)?);
                bytes += value_size(&value);
                values.push(value);
            }
            result.push(values);
            self.check_size(result.len(), bytes)?;
        }
        Ok(result)
    }

    fn check_size(&self, rows: usize, bytes: usize) -> Result<(), ExecError> {
        if rows > self.limits.max_rows {
            return Err(ExecError::TooLarge(format!(
                "more than {} rows",
                self.limits.max_rows
            )));
        }
        if bytes > self.limits.max_bytes {
            return Err(ExecError::TooLarge(format!(
                "more than {} bytes",
                self.limits.max_bytes
            )));
        }
        Ok(())
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

fn read_value(value: rusqlite::types::ValueRef<'_>) -> Value {
    use rusqlite::types::ValueRef;
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Real(f),
        ValueRef::Text(bytes) => Value::Text(decode_lenient(bytes)),
        ValueRef::Blob(bytes) => Value::Blob(bytes.to_vec()),
    }
}

/// A query's result with its column names (as SQLite reports them: the alias or the expression).
#[derive(Debug, Clone, Default)]
pub struct ResultTable {
    /// Column names, in result order.
    pub columns: Vec<String>,
    /// The rows.
    pub rows: Vec<Row>,
}

/// Decodes UTF-8 dropping invalid bytes, like Python's `bytes.decode(errors="ignore")`.
pub fn decode_lenient(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        text.push_str(chunk.valid());
    }
    text
}

fn value_size(value: &Value) -> usize {
    std::mem::size_of::<Value>()
        + match value {
            Value::Text(s) => s.len(),
            Value::Blob(b) => b.len(),
            _ => 0,
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
        let mut conn = Connection::open_in_memory().map_err(open_error)?;
        let source = Connection::open_with_flags(
            immutable_uri(db),
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI,
        )
        .map_err(open_error)?;
        rusqlite::backup::Backup::new(&source, &mut conn)
            .and_then(|backup| backup.run_to_completion(256, Duration::ZERO, None))
            .map_err(open_error)?;
        conn.pragma_update(None, "foreign_keys", true)
            .map_err(open_error)?;
        Ok(Scratch {
            guarded: guard(conn).map_err(open_error)?,
        })
    }

    /// Runs an untrusted query on the copy, under `executor`'s limits.
    pub fn run(&self, executor: &Executor, sql: &str) -> Result<Vec<Row>, ExecError> {
        let deadline = now_nanos().saturating_add(executor.limits.timeout.as_nanos() as u64);
        self.guarded.deadline.store(deadline, Ordering::Relaxed);
        let result = executor.query(&self.guarded.conn, sql, deadline);
        self.guarded.deadline.store(u64::MAX, Ordering::Relaxed);
        result
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

/// Opens `db` read-only and immutable, locked down for untrusted queries.
fn open_guarded(db: &Path) -> Result<Guarded, ExecError> {
    let open_error = |e: rusqlite::Error| ExecError::Open(format!("{}: {e}", db.display()));
    if !db.is_file() {
        return Err(ExecError::Open(format!("{}: no such file", db.display())));
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(immutable_uri(db), flags).map_err(open_error)?;
    guard(conn).map_err(open_error)
}

/// Locks a connection down and attaches the deadline its progress handler watches.
fn guard(mut conn: Connection) -> rusqlite::Result<Guarded> {
    lock_down(&mut conn)?;
    let deadline = Arc::new(AtomicU64::new(u64::MAX));
    let watched = Arc::clone(&deadline);
    conn.progress_handler(
        PROGRESS_INTERVAL,
        Some(move || now_nanos() >= watched.load(Ordering::Relaxed)),
    )?;
    Ok(Guarded { conn, deadline })
}

fn lock_down(conn: &mut Connection) -> rusqlite::Result<()> {
    use rusqlite::config::DbConfig;
    conn.set_limit(Limit::SQLITE_LIMIT_ATTACHED, 0)?;
    conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)?;
    conn.set_limit(Limit::SQLITE_LIMIT_SQL_LENGTH, MAX_SQL_BYTES)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
    conn.authorizer(Some(authorize))?;
    Ok(())
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

/// A `file:` URI opening `path` immutable, with the path percent-encoded.
fn immutable_uri(path: &Path) -> String {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut uri = String::from("file:");
    for byte in absolute.to_string_lossy().bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                uri.push(byte as char)
            }
            _ => uri.push_str(&format!("%{byte:02X}")),
        }
    }
    uri.push_str("?immutable=1");
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenient_decoding_drops_invalid_bytes() {
        assert_eq!(decode_lenient(b"ab\xffc\xe2\x82"), "abc");
        assert_eq!(decode_lenient("héllo".as_bytes()), "héllo");
    }

    #[test]
    fn uri_escapes_query_characters() {
        let uri = immutable_uri(Path::new("/tmp/a b?c#d.sqlite"));
        assert_eq!(uri, "file:/tmp/a%20b%3Fc%23d.sqlite?immutable=1");
    }
}
