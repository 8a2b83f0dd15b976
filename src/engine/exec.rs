//! The engine interface: what execution, comparison profiles and metrics call to run one
//! untrusted query under [`Limits`], whatever the database engine.
//!
//! An [`Executor`] pairs the limits with one [`Engine`]: SQLite files (`SqliteEngine` of
//! `engine::sqlite`, the default, with `Executor::new`), or a PostgreSQL / MySQL server
//! ([`crate::engine::server`]). Every engine returns the same denotation ([`Row`]s of
//! [`crate::engine::value::Value`]s) or the same [`ExecError`], so profiles and metrics never
//! know which engine ran the query.

use crate::engine::value::{Row, Value};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

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
    /// The result exceeded the row or byte cap.
    #[error("result too large: {0}")]
    TooLarge(String),
    /// The engine rejected the query.
    #[error("{0}")]
    Sql(String),
    /// The database could not be opened (or the server reached).
    #[error("cannot open database {0}")]
    Open(String),
}

/// A database engine that runs one untrusted query at a time, read-only, under [`Limits`].
///
/// `db` names the item's database as [`crate::input::dataset::Database::path`] holds it: the
/// SQLite file, or on a server the db_id.
pub trait Engine: Send + Sync + std::fmt::Debug {
    /// Runs one query and returns its rows; with `with_columns`, also the result column names.
    fn run(
        &self,
        db: &Path,
        sql: &str,
        limits: &Limits,
        with_columns: bool,
    ) -> Result<ResultTable, ExecError>;

    /// The result column names of one query, checked under the same rules as [`Engine::run`]
    /// but, where the engine can, not run.
    fn column_names(&self, db: &Path, sql: &str, limits: &Limits)
        -> Result<Vec<String>, ExecError>;
}

/// Runs queries under [`Limits`] on one [`Engine`].
#[derive(Debug, Clone)]
pub struct Executor {
    limits: Limits,
    engine: Arc<dyn Engine>,
}

impl Executor {
    /// An executor on `engine` enforcing `limits` on every query.
    pub fn on(engine: Arc<dyn Engine>, limits: Limits) -> Self {
        Executor { limits, engine }
    }

    /// The limits in force.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Runs one query on the database `db` and returns all its rows.
    pub fn run(&self, db: &Path, sql: &str) -> Result<Vec<Row>, ExecError> {
        self.engine
            .run(db, sql, &self.limits, false)
            .map(|table| table.rows)
    }

    /// Runs one query and returns its rows with their column names, for the metrics that align
    /// columns by name (SQLMorph).
    pub fn run_table(&self, db: &Path, sql: &str) -> Result<ResultTable, ExecError> {
        self.engine.run(db, sql, &self.limits, true)
    }

    /// The result column names of one query, prepared under the same rules as [`Executor::run`]
    /// (for showing results with their headers).
    pub fn column_names(&self, db: &Path, sql: &str) -> Result<Vec<String>, ExecError> {
        self.engine.column_names(db, sql, &self.limits)
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

/// Counts a result's rows and bytes as they are read and stops it at the caps of [`Limits`].
#[derive(Debug)]
pub struct SizeGuard {
    rows: usize,
    bytes: usize,
    max_rows: usize,
    max_bytes: usize,
}

impl SizeGuard {
    /// A guard for one result under `limits`.
    pub fn new(limits: &Limits) -> Self {
        SizeGuard {
            rows: 0,
            bytes: 0,
            max_rows: limits.max_rows,
            max_bytes: limits.max_bytes,
        }
    }

    /// Counts one value of the current row.
    pub fn add_value(&mut self, value: &Value) {
        self.bytes += value_size(value);
    }

    /// Counts a finished row; an error once either cap is passed.
    pub fn add_row(&mut self) -> Result<(), ExecError> {
        self.rows += 1;
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
        Ok(())
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenient_decoding_drops_invalid_bytes() {
        assert_eq!(decode_lenient(b"ab\xffc\xe2\x82"), "abc");
        assert_eq!(decode_lenient("héllo".as_bytes()), "héllo");
    }
}
