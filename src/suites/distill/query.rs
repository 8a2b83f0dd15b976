//! Runs the trusted queries of distillation (gold queries and their neighbors) on in-memory
//! databases, each under a wall-clock limit: neighbors are generated from trusted gold queries
//! but can still be slow (a dropped join condition, a correlated sub-query).

use crate::engine::value::{Row, Value};
use rusqlite::Connection;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Rows above which a result is treated as a failure (a neighbor that explodes into a product).
const MAX_ROWS: usize = 100_000;

/// Converts one SQLite value.
pub fn read_value(value: rusqlite::types::ValueRef<'_>) -> Value {
    use rusqlite::types::ValueRef;
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Real(f),
        ValueRef::Text(bytes) => Value::Text(crate::engine::exec::decode_lenient(bytes)),
        ValueRef::Blob(bytes) => Value::Blob(bytes.to_vec()),
    }
}

/// A connection whose queries each run under a wall-clock limit (a progress handler installed
/// once checks the current query's deadline).
pub struct Timed {
    /// The connection.
    pub conn: Connection,
    deadline: Arc<AtomicU64>,
}

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn now_nanos() -> u64 {
    epoch().elapsed().as_nanos() as u64
}

impl Timed {
    /// Wraps `conn` and installs the deadline check.
    pub fn new(mut conn: Connection) -> rusqlite::Result<Timed> {
        let deadline = Arc::new(AtomicU64::new(u64::MAX));
        let watched = Arc::clone(&deadline);
        conn.progress_handler(
            2_000,
            Some(move || now_nanos() > watched.load(Ordering::Relaxed)),
        )?;
        Ok(Timed { conn, deadline })
    }

    /// Runs `sql`, giving up after `limit`; `None` when it fails, times out or returns more
    /// than [`MAX_ROWS`] rows.
    pub fn run(&self, sql: &str, limit: Duration) -> Option<Vec<Row>> {
        let deadline = now_nanos().saturating_add(limit.as_nanos() as u64);
        self.deadline.store(deadline, Ordering::Relaxed);
        let result = collect(&self.conn, sql);
        self.deadline.store(u64::MAX, Ordering::Relaxed);
        result.ok().flatten()
    }
}

fn collect(conn: &Connection, sql: &str) -> rusqlite::Result<Option<Vec<Row>>> {
    let mut statement = conn.prepare(sql)?;
    if !statement.readonly() {
        return Ok(None);
    }
    let columns = statement.column_count();
    let mut rows = statement.raw_query();
    let mut result = Vec::new();
    while let Some(row) = rows.next()? {
        if result.len() == MAX_ROWS {
            return Ok(None);
        }
        result.push(
            (0..columns)
                .map(|i| row.get_ref(i).map(read_value))
                .collect::<rusqlite::Result<Row>>()?,
        );
    }
    Ok(Some(result))
}
