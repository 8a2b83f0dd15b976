//! Safe execution of untrusted SQL against SQLite databases.
//!
//! Predictions come from pull requests and are treated as hostile. Each database is opened
//! through the guarded constructor of `util::sqlite` (read-only, immutable, defensive, limited);
//! on top of it an authorizer admits only reading (no ATTACH, writes, DDL, PRAGMA,
//! transactions or `load_extension`); only one read-only statement runs per query; a progress
//! handler enforces the wall-clock limit inside SQLite; value, SQL-text and result sizes are capped.
//! Connections are cached per worker thread, so a run opens each database once per thread.

use crate::engine::value::{Row, Value};
use crate::util::memory::Charge;
use crate::util::sqlite::{now_nanos, Guarded};
use rusqlite::fallible_iterator::FallibleIterator;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::Connection;
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The time a database may take to be copied into memory.
const COPY_BUDGET: Duration = Duration::from_secs(60);

/// Per-query limits (the run's memory budget, shared by all queries, is `util::memory`'s).
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
    timeouts: Arc<TimeoutLog>,
}

/// The queries that timed out and the worker time they took, counted across clones.
#[derive(Debug, Default)]
struct TimeoutLog {
    queries: AtomicUsize,
    nanos: AtomicU64,
}

/// What timed-out queries cost a run: how many, and the worker time spent in them (each from
/// its start to the moment it gave the worker back).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TimeoutTotals {
    /// Queries that hit the time limit.
    pub queries: usize,
    /// Worker time they took, in seconds.
    pub seconds: f64,
}

thread_local! {
    static CONNECTIONS: RefCell<HashMap<PathBuf, Guarded>> = RefCell::new(HashMap::new());
}

impl Executor {
    /// An executor enforcing `limits` on every query.
    pub fn new(limits: Limits) -> Self {
        Executor {
            limits,
            timeouts: Arc::default(),
        }
    }

    /// The queries of this executor (and its clones) that timed out so far, and their time.
    pub fn timeouts(&self) -> TimeoutTotals {
        TimeoutTotals {
            queries: self.timeouts.queries.load(Ordering::Relaxed),
            seconds: self.timeouts.nanos.load(Ordering::Relaxed) as f64 / 1e9,
        }
    }

    /// Runs `query` and, when it times out, logs the time it took.
    fn logging_timeouts<T>(
        &self,
        query: impl FnOnce() -> Result<T, ExecError>,
    ) -> Result<T, ExecError> {
        let started = Instant::now();
        let result = query();
        if let Err(ExecError::Timeout(_)) = &result {
            let nanos = started.elapsed().as_nanos().min(u64::MAX as u128) as u64;
            self.timeouts.queries.fetch_add(1, Ordering::Relaxed);
            self.timeouts.nanos.fetch_add(nanos, Ordering::Relaxed);
        }
        result
    }

    /// The limits in force.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Runs one query on the database at `db` and returns all its rows.
    pub fn run(&self, db: &Path, sql: &str) -> Result<Vec<Row>, ExecError> {
        self.run_at_most(db, sql, usize::MAX)
            .map(|rows| rows.expect("no result has more than usize::MAX rows"))
    }

    /// Runs one query like [`Executor::run`] but stops as soon as it returns more than `rows`
    /// rows (`Ok(None)`): for comparisons where a longer result cannot match the gold (EX under
    /// `spider-ts` and `strict` compares row counts first), so a large wrong result is neither
    /// read to its end nor held in memory.
    pub fn run_at_most(
        &self,
        db: &Path,
        sql: &str,
        rows: usize,
    ) -> Result<Option<Vec<Row>>, ExecError> {
        CONNECTIONS.with(|cache| {
            let mut cache = cache.borrow_mut();
            if !cache.contains_key(db) {
                cache.insert(db.to_path_buf(), open_guarded(db)?);
            }
            let guarded = &cache[db];
            self.logging_timeouts(|| {
                let deadline = guarded.arm(self.limits.timeout);
                let result = self.query_at_most(&guarded.conn, sql, deadline, rows);
                guarded.disarm();
                result
            })
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
        self.query_at_most(conn, sql, deadline, usize::MAX)
            .map(|rows| rows.expect("no result has more than usize::MAX rows"))
    }

    /// Runs one untrusted statement; `Ok(None)` once it returns more than `at_most` rows.
    fn query_at_most(
        &self,
        conn: &Connection,
        sql: &str,
        deadline: u64,
        at_most: usize,
    ) -> Result<Option<Vec<Row>>, ExecError> {
        let timed_out = || now_nanos() >= deadline;
        let classify = |e: rusqlite::Error| classify_error(e, timed_out(), self.limits.timeout);
        let mut batch = rusqlite::Batch::new(conn, sql);
        let Some(mut stmt) = batch.next().map_err(classify)? else {
            return Ok(Some(Vec::new()));
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
        let mut charge = Charge::default();
        let mut rows = stmt.raw_query();
        let mut result = Vec::new();
        let mut bytes = 0usize;
        while let Some(row) = rows.next().map_err(classify)? {
            if result.len() == at_most {
                return Ok(None);
            }
            let mut values = Vec::with_capacity(columns);
            for i in 0..columns {
                values.push(read_value(row.get_ref(i).map_err(classify)?));
            }
            bytes += row_size(&values);
            result.push(values);
            self.check_size(result.len(), bytes)?;
            if !charge.cover(bytes) {
                return Err(budget_exhausted());
            }
        }
        charge.keep(bytes);
        Ok(Some(result))
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

/// One SQLite value as a [`Value`], decoded as query results are (text leniently).
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

/// The error of a query stopped because the run's memory budget is used up (by it, by SQLite, or
/// by the results other workers hold at that moment).
fn budget_exhausted() -> ExecError {
    ExecError::TooLarge(format!(
        "the run's memory budget (`execution.max_memory`, {} bytes) is used up",
        crate::util::memory::PROCESS.limit()
    ))
}

/// Bytes one result row occupies: its slot in the result (counted twice, for the result's
/// growth), its values and their text or blob allocations, each allocation with 16 bytes of
/// allocator overhead.
fn row_size(values: &[Value]) -> usize {
    const ALLOCATION: usize = 16;
    let slot = 2 * std::mem::size_of::<Row>() + ALLOCATION;
    let cells = std::mem::size_of_val(values);
    let heap: usize = values
        .iter()
        .map(|value| match value {
            Value::Text(s) => s.capacity() + ALLOCATION,
            Value::Blob(b) => b.capacity() + ALLOCATION,
            _ => 0,
        })
        .sum();
    slot + cells + heap
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
        executor.logging_timeouts(|| {
            let deadline = self.guarded.arm(executor.limits.timeout);
            let result = executor.query(&self.guarded.conn, sql, deadline);
            self.guarded.disarm();
            result
        })
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

    #[test]
    fn lenient_decoding_drops_invalid_bytes() {
        assert_eq!(decode_lenient(b"ab\xffc\xe2\x82"), "abc");
        assert_eq!(decode_lenient("héllo".as_bytes()), "héllo");
    }
}
