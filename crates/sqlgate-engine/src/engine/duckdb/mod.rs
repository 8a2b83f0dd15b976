//! The DuckDB engine: untrusted SQL on the benchmark's `.duckdb` files
//! (`<databases>/<db_id>/<db_id>.duckdb`), through DuckDB's C API (`ffi.rs`) in a worker process
//! (`worker.rs`: one per executing thread, capped in memory and killed past its deadline).
//!
//! Predictions come from pull requests and are treated as hostile. Each file is opened read-only
//! with external access off (no file, network or extension access: `read_csv`, `COPY`, `EXPORT`,
//! `ATTACH` of a file, `INSTALL` / `LOAD` all fail), extension autoloading off, no temporary
//! directory (nothing spills to disk), one thread and a memory limit, and then the configuration
//! locked (`SET memory_limit` and the like fail); on top of that a query must be exactly one
//! statement and a plain query (`SELECT`, `WITH`, `FROM`, `VALUES`, ...): `PRAGMA`, `CALL`,
//! `SET`, `ATTACH`, `USE`, DDL and writes are refused before they run (`local.rs`). A watchdog
//! interrupts a query at its deadline, the parent kills a worker that has not answered by the
//! deadline plus a grace, rows are counted under the row and byte caps and charged to the run's
//! memory budget as they arrive, and each query gets a fresh connection (no state carried from
//! one item to the next).

mod convert;
pub use convert::Cell;
mod deadline;
pub(crate) mod ffi;
mod local;
pub mod serve;
pub mod tables;
mod wire;
pub mod worker;

use crate::engine::exec::{Engine, ExecError, Limits, ResultTable, SizeGuard};
use crate::engine::value::Row;
use libduckdb_sys as sys;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use wire::{response, Writer};
use worker::Spec;

pub use local::OPEN_DATABASES;

/// The smallest share of the run's budget a worker gets beyond its baseline.
const MIN_SHARE: usize = 32 << 20;

/// DuckDB files, queried in this thread's worker process ([`worker`]), which keeps each open
/// with the locked settings.
#[derive(Debug)]
pub struct DuckdbEngine {
    /// The worker executable and its share of the run's budget.
    spec: Spec,
    /// Who this engine is to the workers (its databases are its own).
    owner: u64,
}

impl DuckdbEngine {
    /// The engine, its workers' executable that [`worker::program`] names and their share of
    /// the run's budget taken from `execution.max_memory` ([`memory_limit`]).
    pub fn new() -> DuckdbEngine {
        DuckdbEngine::with_worker(&worker::program())
    }

    /// The engine whose workers run `program` (sqlgate's executable) as `sqlgate duckdb-worker`.
    pub fn with_worker(program: &Path) -> DuckdbEngine {
        let mut spec = Spec::new(memory_limit(OPEN_DATABASES));
        spec.program = program.to_path_buf();
        DuckdbEngine {
            spec,
            owner: next_owner(),
        }
    }

    /// The engine of a run on `threads` worker threads, each with a worker process of its own:
    /// a worker's share shrinks as they grow past [`OPEN_DATABASES`], so the workers together
    /// stay within half of `execution.max_memory` (beyond each one's baseline).
    pub fn for_threads(threads: usize) -> DuckdbEngine {
        let mut engine = DuckdbEngine::new();
        engine.spec.share = memory_limit(threads);
        engine
    }

    /// A query request of `kind`: the owner, database, SQL and limits.
    fn request(&self, kind: u8, db: &Path, sql: &str, limits: &Limits) -> Writer {
        let mut request = Writer::frame(kind);
        (request.u64(self.owner).path(db)).text(sql).limits(limits);
        request
    }
}

/// A new owner of open databases in the workers: each engine and each [`tables::LockedFile`].
fn next_owner() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Refuses a database file with one of DuckDB's logs beside it, `FILE.wal` or any name it
/// starts (`FILE.wal.checkpoint`, `FILE.wal.recovery`): DuckDB replays the write-ahead log when
/// it opens the file, even read-only, and may replay the others with it, so what is read would
/// not be the file's content (which is what a digest covers).
pub fn refuse_log(path: &Path) -> Result<(), ExecError> {
    match crate::util::workspace::side_file(path, ".wal") {
        Some(log) => Err(ExecError::Open(format!(
            "{} has a .wal file beside it ({}: a DuckDB log, which it replays on open); \
             checkpoint it into the database (`CHECKPOINT`) and remove it",
            path.display(),
            log.display()
        ))),
        None => Ok(()),
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
        refuse_log(db)?;
        let mut request = self.request(wire::request::RUN, db, sql, limits);
        request.u64(most_rows as u64);
        // Declared before the rows: on an error they are freed before their charge is returned.
        let mut size = SizeGuard::new(limits);
        let mut table = ResultTable {
            columns: Vec::new(),
            rows: Vec::new(),
        };
        let mut on_frame = |kind: u8, reader: &mut wire::Reader<'_>| match kind {
            response::NAMES => {
                table.columns = reader.texts()?;
                Ok(false)
            }
            response::ROW => {
                let row: Row = reader.values()?;
                row.iter().for_each(|value| size.add_value(value));
                table.rows.push(row);
                size.add_row().map(|()| false)
            }
            response::END => Ok(true),
            other => Err(wire::unexpected(other)),
        };
        worker::call(&self.spec, &request.finish(), limits.timeout, &mut on_frame)?;
        size.finish();
        if !with_columns {
            table.columns = Vec::new();
        }
        Ok(table)
    }

    fn column_names(
        &self,
        db: &Path,
        sql: &str,
        limits: &Limits,
    ) -> Result<Vec<String>, ExecError> {
        refuse_log(db)?;
        let request = self.request(wire::request::COLUMNS, db, sql, limits);
        let mut names = Vec::new();
        worker::call(
            &self.spec,
            &request.finish(),
            limits.timeout,
            &mut |kind, reader| match kind {
                response::NAMES => {
                    names = reader.texts()?;
                    Ok(true)
                }
                other => Err(wire::unexpected(other)),
            },
        )?;
        Ok(names)
    }
}

/// A worker's share of the run's budget (`execution.max_memory`) beyond its baseline when
/// `workers` may run at once: half the budget over the workers (at least [`OPEN_DATABASES`] of
/// them), at least [`MIN_SHARE`]; DuckDB's `memory_limit` of each database it opens is half of
/// that.
fn memory_limit(workers: usize) -> usize {
    let budget = crate::util::memory::PROCESS.limit();
    (budget / 2 / workers.max(OPEN_DATABASES)).max(MIN_SHARE)
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
    fn links_the_pinned_library() {
        assert_eq!(super::library_version(), "v1.5.6");
    }
}
