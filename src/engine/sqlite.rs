//! The SQLite engine: untrusted SQL on the benchmark's database files.
//!
//! Predictions come from pull requests and are treated as hostile. Each database is opened
//! through the guarded constructor of `util::sqlite` (read-only, immutable, defensive, limited);
//! on top of it an authorizer admits only reading (no ATTACH, writes, DDL, PRAGMA,
//! transactions or `load_extension`); only one read-only statement runs per query; a progress
//! handler enforces the wall-clock limit inside SQLite; value, SQL-text and result sizes are capped.
//! Connections are cached per worker thread, so a run opens each database once per thread.

use crate::engine::exec::{
    budget_exhausted, decode_lenient, Engine, ExecError, Executor, Limits, ResultTable, SizeGuard,
};
use crate::engine::value::{Row, Value};
use crate::util::sqlite::{now_nanos, Guarded};
use rusqlite::fallible_iterator::FallibleIterator;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::Connection;
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The time a database may take to be copied into memory.
const COPY_BUDGET: Duration = Duration::from_secs(60);

/// SQLite files, each opened once per worker thread through the guarded constructor.
#[derive(Debug, Clone, Copy, Default)]
pub struct SqliteEngine;

thread_local! {
    static CONNECTIONS: RefCell<HashMap<PathBuf, Guarded>> = RefCell::new(HashMap::new());
}

impl SqliteEngine {
    /// Runs `action` on this thread's connection to `db`, opening it on first use.
    fn with_connection<T>(
        db: &Path,
        action: impl FnOnce(&Guarded) -> Result<T, ExecError>,
    ) -> Result<T, ExecError> {
        CONNECTIONS.with(|cache| {
            let mut cache = cache.borrow_mut();
            if !cache.contains_key(db) {
                cache.insert(db.to_path_buf(), open_guarded(db)?);
            }
            action(&cache[db])
        })
    }
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
    let mut batch = rusqlite::Batch::new(conn, sql);
    let Some(mut stmt) = batch.next().map_err(classify)? else {
        return match wanted.columns {
            true => Err(ExecError::Sql("no statement".into())),
            false => Ok(ResultTable::default()),
        };
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
            let value = read_value(row.get_ref(i).map_err(classify)?);
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
