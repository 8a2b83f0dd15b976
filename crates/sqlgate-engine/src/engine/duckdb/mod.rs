//! The DuckDB engine: untrusted SQL on the benchmark's `.duckdb` files
//! (`<databases>/<db_id>/<db_id>.duckdb`), in-process through DuckDB's C API (`ffi.rs`).
//!
//! Predictions come from pull requests and are treated as hostile. Each file is opened read-only
//! with external access off (no file, network or extension access: `read_csv`, `COPY`, `EXPORT`,
//! `ATTACH` of a file, `INSTALL` / `LOAD` all fail), extension autoloading off, no temporary
//! directory (nothing spills to disk), one thread and a memory limit, and then the configuration
//! locked (`SET memory_limit` and the like fail); on top of that a query must be exactly one
//! statement and a plain query (`SELECT`, `WITH`, `FROM`, `VALUES`, ...): `PRAGMA`, `CALL`,
//! `SET`, `ATTACH`, `USE`, DDL and writes are refused before they run. A watchdog interrupts a
//! query at its deadline, rows are counted under the row and byte caps and charged to the run's
//! memory budget as they arrive, and each query gets a fresh connection (no state carried from
//! one item to the next).

mod convert;
pub use convert::Cell;
mod deadline;
pub(crate) mod ffi;
pub mod tables;

use crate::engine::exec::{Engine, ExecError, Limits, ResultTable, SizeGuard};
use crate::engine::value::Value;
use ffi::{Database, Failure};
use libduckdb_sys as sys;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Databases kept open at once; the least recently used is closed past that (queries running
/// on it finish first: each holds its own reference).
pub const OPEN_DATABASES: usize = 4;

/// The smallest memory limit a database is opened with.
const MIN_MEMORY_LIMIT: usize = 16 << 20;

/// DuckDB files, each opened once (shared by the worker threads) with the locked settings.
#[derive(Debug)]
pub struct DuckdbEngine {
    /// `memory_limit` of each open database: half the run's budget over [`OPEN_DATABASES`].
    memory_limit: usize,
    /// Open databases, the most recently used last.
    open: Mutex<Vec<(PathBuf, Arc<Database>)>>,
}

impl DuckdbEngine {
    /// The engine, its databases' memory limit taken from the run's budget (`execution.max_memory`):
    /// DuckDB's own memory, outside Rust's allocator, is then at most half of it while no more
    /// than [`OPEN_DATABASES`] are open.
    pub fn new() -> DuckdbEngine {
        DuckdbEngine {
            memory_limit: memory_limit(),
            open: Mutex::new(Vec::new()),
        }
    }

    /// The open database `db`, opened on first use.
    fn database(&self, db: &Path) -> Result<Arc<Database>, ExecError> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(index) = open.iter().position(|(path, _)| path == db) {
            let entry = open.remove(index);
            open.push(entry);
        } else {
            if open.len() >= OPEN_DATABASES {
                open.remove(0);
            }
            refuse_log(db)?;
            let settings = ffi::locked_settings(self.memory_limit);
            let database = Database::open(db, &settings).map_err(|failure| {
                ExecError::Open(format!("{}: {}", db.display(), failure.message))
            })?;
            open.push((db.to_path_buf(), Arc::new(database)));
        }
        Ok(Arc::clone(&open.last().expect("just put last").1))
    }

    /// Drops an open database after a fatal error, so the next query opens it afresh.
    fn forget(&self, db: &Path) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        open.retain(|(path, _)| path != db);
    }
}

/// Refuses a database file with DuckDB's write-ahead log `FILE.wal` beside it: DuckDB replays
/// the log when it opens the file, even read-only, so what is read would not be the file's
/// content (which is what a digest covers).
pub fn refuse_log(path: &Path) -> Result<(), ExecError> {
    let mut log = path.as_os_str().to_os_string();
    log.push(".wal");
    match std::fs::symlink_metadata(&log) {
        Ok(_) => Err(ExecError::Open(format!(
            "{} has a .wal file beside it (DuckDB's write-ahead log, which it replays on open); \
             checkpoint it into the database (`CHECKPOINT`) and remove it",
            path.display()
        ))),
        Err(_) => Ok(()),
    }
}

impl Default for DuckdbEngine {
    fn default() -> Self {
        Self::new()
    }
}

impl Engine for DuckdbEngine {
    fn run(
        &self,
        db: &Path,
        sql: &str,
        limits: &Limits,
        with_columns: bool,
        most_rows: usize,
    ) -> Result<ResultTable, ExecError> {
        let database = self.database(db)?;
        let result = run_query(&database, sql, limits, with_columns, most_rows);
        if matches!(result, Err(ExecError::Fault(_))) {
            self.forget(db);
        }
        result
    }

    fn column_names(
        &self,
        db: &Path,
        sql: &str,
        limits: &Limits,
    ) -> Result<Vec<String>, ExecError> {
        let database = self.database(db)?;
        let connection = database.connect().map_err(fault)?;
        let prepared = prepare_query(&connection, sql, false, limits)?;
        Ok(prepared.column_names())
    }
}

/// DuckDB's `memory_limit` for one open database: half the run's budget
/// (`execution.max_memory`) over [`OPEN_DATABASES`], at least [`MIN_MEMORY_LIMIT`].
fn memory_limit() -> usize {
    let budget = crate::util::memory::PROCESS.limit();
    (budget / 2 / OPEN_DATABASES).max(MIN_MEMORY_LIMIT)
}

/// Runs one untrusted query on a fresh connection to `database` under `limits`.
fn run_query(
    database: &Arc<Database>,
    sql: &str,
    limits: &Limits,
    with_columns: bool,
    most_rows: usize,
) -> Result<ResultTable, ExecError> {
    let connection = database.connect().map_err(fault)?;
    under_deadline(&connection, limits, |armed| {
        prepare_query(&connection, sql, armed.expired(), limits)
            .and_then(|prepared| read_rows(&prepared, armed, limits, with_columns, most_rows))
    })
}

/// `work` on `connection` with the deadline of `limits` armed; an error met after the deadline
/// is the timeout.
fn under_deadline<T>(
    connection: &ffi::Connection,
    limits: &Limits,
    work: impl FnOnce(&deadline::Armed) -> Result<T, ExecError>,
) -> Result<T, ExecError> {
    let armed = deadline::Armed::arm(connection.interrupt(), limits.timeout);
    let result = work(&armed);
    armed.disarm();
    match result {
        Err(ExecError::Sql(_) | ExecError::Fault(_)) if armed.expired() => {
            Err(ExecError::Timeout(limits.timeout.as_millis()))
        }
        other => other,
    }
}

/// `sql` prepared, if it is one plain query.
fn prepare_query<'c>(
    connection: &'c ffi::Connection,
    sql: &str,
    timed_out: bool,
    limits: &Limits,
) -> Result<ffi::Prepared<'c>, ExecError> {
    if sql.contains('\0') {
        return Err(ExecError::Sql("the query contains a null character".into()));
    }
    if let Some(keyword) = leading_keyword(sql).filter(|k| REFUSED_KEYWORDS.contains(&k.as_str())) {
        return Err(ExecError::Denied(format!(
            "`{keyword}` is refused on DuckDB: a prediction is one plain query"
        )));
    }
    let prepared = match connection.prepare_one(sql) {
        Ok(Ok(prepared)) => prepared,
        Ok(Err(_)) => {
            return Err(ExecError::Sql(
                "You can only execute one statement at a time.".into(),
            ))
        }
        Err(failure) => return Err(classify(failure, timed_out, limits)),
    };
    if !prepared.is_select() {
        return Err(ExecError::Denied(
            "only a query runs on DuckDB (no PRAGMA, CALL, SET, ATTACH, USE, COPY, EXPORT, INSTALL, LOAD, DDL or writes)".into(),
        ));
    }
    Ok(prepared)
}

/// Statements DuckDB turns into a query (`PRAGMA database_list`, `CALL pragma_version()`), so
/// that the statement-type check alone would let them run: refused by their first word, the
/// same for every PRAGMA and CALL whatever DuckDB makes of it.
const REFUSED_KEYWORDS: [&str; 2] = ["PRAGMA", "CALL"];

/// The first word of `sql`, upper-cased, after whitespace, comments and opening parentheses.
fn leading_keyword(sql: &str) -> Option<String> {
    let mut rest = sql;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '(');
        if let Some(after) = rest.strip_prefix("--") {
            rest = after.split_once('\n').map_or("", |(_, tail)| tail);
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.split_once("*/").map_or("", |(_, tail)| tail);
        } else {
            break;
        }
    }
    let word: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect();
    (!word.is_empty()).then(|| word.to_ascii_uppercase())
}

/// Reads the result chunk by chunk, every row counted and charged; stops after `most_rows + 1`.
fn read_rows(
    prepared: &ffi::Prepared<'_>,
    armed: &deadline::Armed,
    limits: &Limits,
    with_columns: bool,
    most_rows: usize,
) -> Result<ResultTable, ExecError> {
    let (columns, rows) = read_chunks(prepared, armed, limits, most_rows, false)?;
    let rows = (rows.into_iter())
        .map(|row| {
            (row.into_iter())
                .map(|cell| match cell {
                    convert::Cell::Value(value) => value,
                    // `ColumnReader::of` refuses LIST, ARRAY and UUID before any row.
                    _ => Value::Null,
                })
                .collect()
        })
        .collect();
    Ok(ResultTable {
        columns: if with_columns { columns } else { Vec::new() },
        rows,
    })
}

/// The column names and the rows of the result as [`convert::Cell`]s (`whole`: lists, arrays
/// and UUIDs read too, else refused), every row counted and charged; stops after
/// `most_rows + 1`.
fn read_chunks(
    prepared: &ffi::Prepared<'_>,
    armed: &deadline::Armed,
    limits: &Limits,
    most_rows: usize,
    whole: bool,
) -> Result<(Vec<String>, Vec<Vec<convert::Cell>>), ExecError> {
    let classify = |failure: Failure| classify(failure, armed.expired(), limits);
    let mut stream = prepared.stream().map_err(classify)?;
    let columns = stream.column_names();
    // Declared before the rows so that, on an error, the rows are freed before their charge is
    // given back to the budget.
    let mut size = SizeGuard::new(limits);
    let mut rows: Vec<Vec<convert::Cell>> = Vec::new();
    let reader = match whole {
        true => convert::ColumnReader::of_cells,
        false => convert::ColumnReader::of,
    };
    'chunks: while let Some(chunk) = stream.next_chunk().map_err(classify)? {
        if armed.expired() {
            return Err(ExecError::Timeout(limits.timeout.as_millis()));
        }
        let vectors: Vec<sys::duckdb_vector> =
            (0..columns.len()).map(|i| chunk.column(i)).collect();
        let readers = (vectors.iter())
            .map(|&vector| reader(vector))
            .collect::<Result<Vec<_>, _>>()?;
        for row in 0..chunk.rows() {
            let mut values = Vec::with_capacity(columns.len());
            for (reader, &vector) in readers.iter().zip(&vectors) {
                let cell = reader.read_cell(vector, row)?;
                cell.for_each_value(&mut |value| size.add_value(value));
                values.push(cell);
            }
            rows.push(values);
            size.add_row()?;
            if rows.len() > most_rows {
                break 'chunks;
            }
        }
    }
    size.finish();
    Ok((columns, rows))
}

/// A DuckDB error as sqlgate counts it.
fn classify(failure: Failure, timed_out: bool, limits: &Limits) -> ExecError {
    let message = failure.message;
    let kind = failure.kind;
    let is = |wanted: sys::duckdb_error_type, prefix: &str| {
        kind == Some(wanted) || (kind.is_none() && message.starts_with(prefix))
    };
    if timed_out
        || is(
            sys::duckdb_error_type_DUCKDB_ERROR_INTERRUPT,
            "INTERRUPT Error",
        )
    {
        return ExecError::Timeout(limits.timeout.as_millis());
    }
    if is(
        sys::duckdb_error_type_DUCKDB_ERROR_OUT_OF_MEMORY,
        "Out of Memory Error",
    ) {
        return ExecError::TooLarge(format!("DuckDB's memory limit: {message}"));
    }
    if is(
        sys::duckdb_error_type_DUCKDB_ERROR_PERMISSION,
        "Permission Error",
    ) {
        return ExecError::Denied(message);
    }
    if is(sys::duckdb_error_type_DUCKDB_ERROR_FATAL, "FATAL Error")
        || is(
            sys::duckdb_error_type_DUCKDB_ERROR_INTERNAL,
            "INTERNAL Error",
        )
    {
        return ExecError::Fault(message);
    }
    ExecError::Sql(message)
}

fn fault(failure: Failure) -> ExecError {
    ExecError::Fault(failure.message)
}

/// The single integer `sql` returns (trusted SQL of `sqlgate load`: a row count).
pub(crate) fn count(connection: &ffi::Connection, sql: &str) -> Result<u64, String> {
    let prepared = match connection.prepare_one(sql).map_err(|f| f.message)? {
        Ok(prepared) => prepared,
        Err(count) => return Err(format!("{count} statements")),
    };
    let mut stream = prepared.stream().map_err(|f| f.message)?;
    let chunk =
        (stream.next_chunk().map_err(|f| f.message)?).ok_or_else(|| "no row".to_string())?;
    let reader = convert::ColumnReader::of(chunk.column(0)).map_err(|e| e.to_string())?;
    match reader.read(chunk.column(0), 0).map_err(|e| e.to_string())? {
        crate::engine::value::Value::Int(count) => u64::try_from(count).map_err(|e| e.to_string()),
        other => Err(format!("not a count: {other:?}")),
    }
}

/// The linked library's version (`v1.5.6`).
pub fn library_version() -> String {
    // SAFETY: returns a static NUL-terminated string.
    let text = unsafe { std::ffi::CStr::from_ptr(sys::duckdb_library_version()) };
    text.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_leading_keyword_skips_comments_and_parentheses() {
        assert_eq!(
            super::leading_keyword("  -- c\n/* d */ (pragma x"),
            Some("PRAGMA".into())
        );
        assert_eq!(super::leading_keyword("call f()"), Some("CALL".into()));
        assert_eq!(super::leading_keyword("SELECT 1"), Some("SELECT".into()));
        assert_eq!(super::leading_keyword("-- only"), None);
    }

    #[test]
    fn links_the_pinned_library() {
        assert_eq!(super::library_version(), "v1.5.6");
    }
}
