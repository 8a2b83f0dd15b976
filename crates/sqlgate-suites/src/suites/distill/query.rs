//! Runs the trusted queries of distillation (gold queries and their neighbors) on in-memory
//! databases, each under a wall-clock limit: neighbors are generated from trusted gold queries
//! but can still be slow (a dropped join condition, a correlated sub-query).

use crate::engine::value::{Row, Value};
use crate::util::sqlite::Guarded;
use rusqlite::Connection;
use std::time::Duration;

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

/// A connection made by the guarded constructor (`util::sqlite`) whose queries each run under
/// a wall-clock limit.
pub struct Timed {
    guarded: Guarded,
}

impl Timed {
    /// Locks `conn` (a generated in-memory database) down.
    pub fn new(conn: Connection) -> rusqlite::Result<Timed> {
        Ok(Timed {
            guarded: crate::util::sqlite::guard(conn)?,
        })
    }

    /// Opens a database file through the guarded constructor.
    pub fn open(path: &std::path::Path) -> rusqlite::Result<Timed> {
        Ok(Timed {
            guarded: crate::util::sqlite::open_read_only(path)?,
        })
    }

    /// The connection.
    pub fn conn(&self) -> &Connection {
        &self.guarded.conn
    }

    /// The connection, for sqlgate's own operations that need it mutably (serializing).
    pub fn conn_mut(&mut self) -> &mut Connection {
        &mut self.guarded.conn
    }

    /// Runs `f` on the connection, interrupting its statements after `limit`.
    pub fn within<T>(&self, limit: Duration, f: impl FnOnce(&Connection) -> T) -> T {
        self.guarded.arm(limit);
        let result = f(&self.guarded.conn);
        self.guarded.disarm();
        result
    }

    /// Runs `sql`, giving up after `limit`; `None` when it fails, times out or returns more
    /// than [`MAX_ROWS`] rows.
    pub fn run(&self, sql: &str, limit: Duration) -> Option<Vec<Row>> {
        self.within(limit, |conn| collect(conn, sql)).ok().flatten()
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
