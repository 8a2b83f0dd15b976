//! The engine interface: what execution, comparison profiles and metrics call to run one
//! untrusted query under [`Limits`], whatever the database engine.
//!
//! An [`Executor`] pairs the limits with one [`Engine`]: SQLite files (`SqliteEngine` of
//! `engine::sqlite`, the default, with `Executor::new`), or a PostgreSQL / MySQL server
//! ([`crate::engine::server`]). Every engine returns the same denotation ([`Row`]s of
//! [`crate::engine::value::Value`]s) or the same [`ExecError`], so profiles and metrics never
//! know which engine ran the query.

use crate::engine::pyvalue::{Number, PyValue};
use crate::engine::value::{Row, Value};
use crate::util::memory::Charge;
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Each table's digest by its qualified name (`database.schema.table` on PostgreSQL,
/// `schema.table` on MySQL): what an engine's hold on the data digested (`Engine::hold_data`).
pub type DataDigests = std::collections::BTreeMap<String, String>;

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

impl Limits {
    /// The limits of the config's `execution` section.
    pub fn of(execution: &crate::input::config::ExecutionConfig) -> Limits {
        Limits {
            timeout: Duration::from_millis(execution.timeout_ms),
            max_rows: execution.max_rows,
            max_bytes: execution.max_result_bytes,
        }
    }
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
    /// The result exceeded the row or byte cap, or the run's memory budget.
    #[error("result too large: {0}")]
    TooLarge(String),
    /// The engine rejected the query.
    #[error("{0}")]
    Sql(String),
    /// The database could not be opened (or the server reached).
    #[error("cannot open database {0}")]
    Open(String),
    /// The engine failed, not the query: a server session ended from outside, a lost
    /// connection, a cancel that was not sqlgate's deadline. Never a verdict: the server engines
    /// retry the query on a fresh session first, and a run that still meets one fails closed
    /// ([`Executor::faults`]).
    #[error("the server failed (not the query): {0}")]
    Fault(String),
}

/// A database engine that runs one untrusted query at a time, read-only, under [`Limits`].
///
/// `db` names the item's database as [`crate::input::dataset::Database::path`] holds it: the
/// SQLite file, or on a server the db_id.
pub trait Engine: Send + Sync + std::fmt::Debug {
    /// Runs one query and returns its rows; with `with_columns`, also the result column names.
    /// Every result is counted by a [`SizeGuard`], which charges it to the run's memory budget.
    /// The engine may stop reading once the result has more than `most_rows` rows (the caller
    /// only needs to know that it is longer) and return those it read.
    fn run(
        &self,
        db: &Path,
        sql: &str,
        limits: &Limits,
        with_columns: bool,
        most_rows: usize,
    ) -> Result<ResultTable, ExecError>;

    /// The result column names of one query, checked under the same rules as [`Engine::run`]
    /// but, where the engine can, not run.
    fn column_names(&self, db: &Path, sql: &str, limits: &Limits)
        -> Result<Vec<String>, ExecError>;

    /// Holds the data every later query of this engine reads until [`Engine::release_data`]
    /// (a server's other sessions, whatever they write meanwhile, cannot change what scoring
    /// reads) and returns their digests, taken inside the hold; `None` (the default) for an
    /// engine on files, whose data the dataset's fingerprint covers. The error says why the
    /// data could not be held or digested.
    fn hold_data(&self) -> Result<Option<DataDigests>, String> {
        Ok(None)
    }

    /// Ends the hold of [`Engine::hold_data`]; an error when it did not last until now (its
    /// session ended from outside), so that what the run read is not vouched for.
    fn release_data(&self) -> Result<(), String> {
        Ok(())
    }

    /// Claims the server for the run once its data are held: an error naming the other
    /// sessions connected to it (`server::exclusive`); nothing to claim (the default) for an
    /// engine on files.
    fn claim_server(&self) -> Result<(), String> {
        Ok(())
    }

    /// Checks, before the hold ends, that no session but the run's own connected to the server
    /// since [`Engine::claim_server`]; an error saying what the server showed.
    fn check_claim(&self) -> Result<(), String> {
        Ok(())
    }

    /// The engine's judge of state-changing items, each on an isolated copy of its database,
    /// when the config asks for one (`dataset.kind: bird-critic` on PostgreSQL or MariaDB / MySQL); `None` (the
    /// default) where the metrics judge them on copies of SQLite files.
    fn live_judge(&self) -> Option<&dyn crate::engine::state::LiveJudge> {
        None
    }
}

/// Runs queries under [`Limits`] on one [`Engine`].
#[derive(Debug, Clone)]
pub struct Executor {
    limits: Limits,
    engine: Arc<dyn Engine>,
    timeouts: Arc<TimeoutLog>,
    faults: Arc<FaultLog>,
}

/// The engine faults met by an executor and its clones: how many, and the first messages.
#[derive(Debug, Default)]
struct FaultLog {
    count: AtomicUsize,
    messages: std::sync::Mutex<Vec<String>>,
}

/// Fault messages an executor keeps (the count goes on).
const KEPT_FAULTS: usize = 5;

thread_local! {
    /// Engine faults met on this thread, so that the scoring loop can name the items they hit.
    static THREAD_FAULTS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// The longest query run on this thread since the scoring loop last took it.
    static THREAD_SLOWEST: std::cell::Cell<Duration> = const { std::cell::Cell::new(Duration::ZERO) };
    /// The time limit of the item being scored on this thread, when its slow gold earned it one
    /// above the run's ([`with_item_budget`]).
    static THREAD_BUDGET: std::cell::Cell<Option<Duration>> = const { std::cell::Cell::new(None) };
}

/// Runs `scoring` (one item's scoring, on this thread) with every query it runs under the time
/// limit `budget` when that is above the executor's own (a slow gold's budget, derived from its
/// time the trusted baseline recorded: `score::budget`); the thread's previous budget is
/// restored after, so a job the pool runs inside keeps its own.
pub fn with_item_budget<T>(budget: Option<Duration>, scoring: impl FnOnce() -> T) -> T {
    let before = THREAD_BUDGET.replace(budget);
    let result = scoring();
    THREAD_BUDGET.set(before);
    result
}

/// The longest query run on the calling thread since the last call (which it resets): the
/// scoring loop takes it before and after an item, to know whether one of the item's queries
/// came near the time limit (its verdict then depends on timing).
pub fn take_slowest_on_this_thread() -> Duration {
    THREAD_SLOWEST.replace(Duration::ZERO)
}

/// Engine faults met on the calling thread so far ([`ExecError::Fault`]): the scoring loop reads
/// it before and after an item to know whether the item met one.
pub fn faults_on_this_thread() -> usize {
    THREAD_FAULTS.get()
}

/// The engine faults a run met: how many queries, and the first messages (scrubbed).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultTotals {
    /// Queries that ended in an engine fault after their retries.
    pub queries: usize,
    /// The first few messages.
    pub messages: Vec<String>,
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

impl Executor {
    /// An executor on `engine` enforcing `limits` on every query.
    pub fn on(engine: Arc<dyn Engine>, limits: Limits) -> Self {
        Executor {
            limits,
            engine,
            timeouts: Arc::default(),
            faults: Arc::default(),
        }
    }

    /// Holds the engine's data for the run and returns their digests ([`Engine::hold_data`]).
    pub fn hold_data(&self) -> Result<Option<DataDigests>, String> {
        self.engine.hold_data()
    }

    /// Ends the engine's hold on its data, failing when it was lost ([`Engine::release_data`]).
    pub fn release_data(&self) -> Result<(), String> {
        self.engine.release_data()
    }

    /// Claims the engine's server for the run ([`Engine::claim_server`]).
    pub fn claim_server(&self) -> Result<(), String> {
        self.engine.claim_server()
    }

    /// Checks the run was alone on its server ([`Engine::check_claim`]).
    pub fn check_claim(&self) -> Result<(), String> {
        self.engine.check_claim()
    }

    /// The engine's judge of state-changing items ([`Engine::live_judge`]).
    pub fn live_judge(&self) -> Option<&dyn crate::engine::state::LiveJudge> {
        self.engine.live_judge()
    }

    /// The limits in force on this thread: the executor's, with the time limit of the item
    /// being scored when its budget is above it ([`with_item_budget`]).
    pub fn limits(&self) -> Limits {
        match THREAD_BUDGET.get() {
            Some(budget) if budget > self.limits.timeout => Limits {
                timeout: budget,
                ..self.limits
            },
            _ => self.limits,
        }
    }

    /// The queries of this executor (and its clones) that timed out so far, and their time.
    pub fn timeouts(&self) -> TimeoutTotals {
        TimeoutTotals {
            queries: self.timeouts.queries.load(Ordering::Relaxed),
            seconds: self.timeouts.nanos.load(Ordering::Relaxed) as f64 / 1e9,
        }
    }

    /// The engine faults this executor (and its clones) met so far: a run with any could not
    /// evaluate what they hit.
    pub fn faults(&self) -> FaultTotals {
        FaultTotals {
            queries: self.faults.count.load(Ordering::Relaxed),
            messages: self
                .faults
                .messages
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        }
    }

    /// Runs `query` (one query of this executor's, on any connection) and, when it times out,
    /// logs the time it took; an engine fault is recorded ([`Executor::faults`]); the thread's
    /// slowest query is kept ([`take_slowest_on_this_thread`]).
    pub fn logging_timeouts<T>(
        &self,
        query: impl FnOnce() -> Result<T, ExecError>,
    ) -> Result<T, ExecError> {
        let started = Instant::now();
        let result = query();
        THREAD_SLOWEST.set(THREAD_SLOWEST.get().max(started.elapsed()));
        match &result {
            Err(ExecError::Timeout(_)) => {
                let nanos = started.elapsed().as_nanos().min(u64::MAX as u128) as u64;
                self.timeouts.queries.fetch_add(1, Ordering::Relaxed);
                self.timeouts.nanos.fetch_add(nanos, Ordering::Relaxed);
            }
            Err(ExecError::Fault(message)) => self.record_fault(message),
            _ => {}
        }
        result
    }

    fn record_fault(&self, message: &str) {
        self.faults.count.fetch_add(1, Ordering::Relaxed);
        THREAD_FAULTS.set(THREAD_FAULTS.get() + 1);
        let mut messages = self
            .faults
            .messages
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if messages.len() < KEPT_FAULTS {
            messages.push(message.to_string());
        }
    }

    /// Runs one query on the database `db` and returns all its rows.
    pub fn run(&self, db: &Path, sql: &str) -> Result<Vec<Row>, ExecError> {
        self.logging_timeouts(|| self.engine.run(db, sql, &self.limits(), false, usize::MAX))
            .map(|table| table.rows)
    }

    /// Runs one query like [`Executor::run`] but `Ok(None)` when it returns more than `rows`
    /// rows: for comparisons where a longer result cannot match the gold (EX under `spider-ts`
    /// and `strict` compares row counts first), so that the SQLite engine neither reads a large
    /// wrong result to its end nor holds it in memory.
    pub fn run_at_most(
        &self,
        db: &Path,
        sql: &str,
        rows: usize,
    ) -> Result<Option<Vec<Row>>, ExecError> {
        let table =
            self.logging_timeouts(|| self.engine.run(db, sql, &self.limits(), false, rows))?;
        Ok((table.rows.len() <= rows).then_some(table.rows))
    }

    /// Runs one query and returns its rows with their column names, for the metrics that align
    /// columns by name (SQLMorph).
    pub fn run_table(&self, db: &Path, sql: &str) -> Result<ResultTable, ExecError> {
        self.logging_timeouts(|| self.engine.run(db, sql, &self.limits(), true, usize::MAX))
    }

    /// The result column names of one query, prepared under the same rules as [`Executor::run`]
    /// (for showing results with their headers).
    pub fn column_names(&self, db: &Path, sql: &str) -> Result<Vec<String>, ExecError> {
        let result = self.engine.column_names(db, sql, &self.limits());
        if let Err(ExecError::Fault(message)) = &result {
            self.record_fault(message);
        }
        result
    }
}

/// A query's result with its column names (as the engine reports them: the alias or the
/// expression).
#[derive(Debug, Clone, Default)]
pub struct ResultTable {
    /// Column names, in result order.
    pub columns: Vec<String>,
    /// The rows.
    pub rows: Vec<Row>,
}

/// Counts a result's rows and bytes as they are read, stops it at the caps of [`Limits`], and
/// charges it to the run's memory budget (`util::memory`): a result the budget cannot take stops
/// with [`ExecError::TooLarge`], whichever engine reads it. Declare it before the rows it counts:
/// a guard dropped on an error gives its charge back, and the rows must be freed by then.
#[derive(Debug)]
pub struct SizeGuard {
    rows: usize,
    bytes: usize,
    max_rows: usize,
    max_bytes: usize,
    charge: Charge,
}

impl SizeGuard {
    /// A guard for one result under `limits`.
    pub fn new(limits: &Limits) -> Self {
        SizeGuard {
            rows: 0,
            bytes: 0,
            max_rows: limits.max_rows,
            max_bytes: limits.max_bytes,
            charge: Charge::default(),
        }
    }

    /// Counts one value of the current row.
    pub fn add_value(&mut self, value: &Value) {
        self.bytes += value_size(value);
    }

    /// The result was read whole: its bytes stay charged to the item being scored (released
    /// when the item is done). A guard dropped without this gives its charge back at once.
    pub fn finish(self) {
        self.charge.keep(self.bytes);
    }

    /// Counts a finished row; an error once either cap is passed or the run's memory budget
    /// cannot take the result.
    pub fn add_row(&mut self) -> Result<(), ExecError> {
        self.rows += 1;
        self.bytes += ROW_OVERHEAD;
        if self.rows > self.max_rows {
            return Err(ExecError::TooLarge(format!(
                "more than {} rows",
                self.max_rows
            )));
        }
        if self.bytes > self.max_bytes {
            return Err(ExecError::TooLarge(format!(
                "more than {} bytes",
                self.max_bytes
            )));
        }
        if !self.charge.cover(self.bytes) {
            return Err(budget_exhausted());
        }
        Ok(())
    }
}

/// The error of a query stopped because the run's memory budget is used up (by it, by SQLite, or
/// by the results other workers hold at that moment).
pub fn budget_exhausted() -> ExecError {
    ExecError::TooLarge(format!(
        "the run's memory budget (`execution.max_memory`, {} bytes) is used up",
        crate::util::memory::PROCESS.limit()
    ))
}

/// Heap bytes an allocator spends on each allocation beyond what was asked for.
const ALLOCATION: usize = 16;

/// Bytes a row costs beyond its values: its slot in the result (counted twice, for the result's
/// growth) and its own allocation.
const ROW_OVERHEAD: usize = 2 * std::mem::size_of::<Row>() + ALLOCATION;

/// Decodes UTF-8 dropping invalid bytes, like Python's `bytes.decode(errors="ignore")`.
pub fn decode_lenient(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        text.push_str(chunk.valid());
    }
    text
}

/// Bytes one value occupies: its cell in the row, and its text, blob or boxed Python value with
/// the allocation's overhead.
fn value_size(value: &Value) -> usize {
    std::mem::size_of::<Value>()
        + match value {
            Value::Text(s) => s.capacity() + ALLOCATION,
            Value::Blob(b) => b.capacity() + ALLOCATION,
            Value::Py(py) => std::mem::size_of_val(&**py) + ALLOCATION + py_heap(py),
            _ => 0,
        }
}

/// Heap bytes a Python value holds beyond its box (a `Decimal`'s text and digits).
fn py_heap(value: &PyValue) -> usize {
    let PyValue::Decimal(decimal) = value else {
        return 0;
    };
    let digits = match &decimal.identity {
        Number::Exact(digits, _) => digits.capacity() + ALLOCATION,
        Number::Int(_) | Number::Real(_) => 0,
    };
    decimal.text.capacity() + ALLOCATION + digits
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
