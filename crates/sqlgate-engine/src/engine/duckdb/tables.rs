//! Whole tables of `.duckdb` files that are not benchmark databases but answers (Spider
//! 2.0-DBT: the file an agent's dbt project left), read with their declared column types.
//!
//! A predicted file is hostile: it is opened as the engine opens a benchmark database (read-only,
//! external access and extensions off, one thread, the memory limit, the configuration locked),
//! each read is one plain query under the run's deadline and row / byte caps, and nothing stored
//! in the file runs but what reading the named relation runs (a view's query, under the same
//! locks: `engine::spider2_dbt` decides which profile reads views).

use super::{ffi, memory_limit, prepare_query, read_rows, under_deadline};
use crate::engine::exec::{ExecError, Limits};
use crate::engine::value::Row;
use ffi::Database;
use libduckdb_sys as sys;
use std::path::Path;
use std::sync::Arc;

/// A column's declared DuckDB type, as far as the Spider 2.0-DBT comparison tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    /// A signed integer of `bits` bits (`TINYINT` ... `BIGINT`).
    Signed(u8),
    /// An unsigned integer of `bits` bits (`UTINYINT` ... `UBIGINT`).
    Unsigned(u8),
    /// `FLOAT`.
    Float,
    /// `DOUBLE`, and `DECIMAL` (float64 in DuckDB's client).
    Double,
    /// `HUGEINT` or `UHUGEINT` (float64 in DuckDB's client).
    HugeInt,
    /// `BOOLEAN`.
    Boolean,
    /// `VARCHAR` or `ENUM`.
    Text,
    /// `DATE` or `TIMESTAMP` (microseconds; both become datetime64[us] in pandas).
    Timestamp,
    /// Anything else, by its DuckDB type id.
    Other(u32),
}

impl ColumnType {
    fn of(kind: sys::duckdb_type) -> ColumnType {
        match kind {
            sys::DUCKDB_TYPE_DUCKDB_TYPE_TINYINT => ColumnType::Signed(8),
            sys::DUCKDB_TYPE_DUCKDB_TYPE_SMALLINT => ColumnType::Signed(16),
            sys::DUCKDB_TYPE_DUCKDB_TYPE_INTEGER => ColumnType::Signed(32),
            sys::DUCKDB_TYPE_DUCKDB_TYPE_BIGINT => ColumnType::Signed(64),
            sys::DUCKDB_TYPE_DUCKDB_TYPE_UTINYINT => ColumnType::Unsigned(8),
            sys::DUCKDB_TYPE_DUCKDB_TYPE_USMALLINT => ColumnType::Unsigned(16),
            sys::DUCKDB_TYPE_DUCKDB_TYPE_UINTEGER => ColumnType::Unsigned(32),
            sys::DUCKDB_TYPE_DUCKDB_TYPE_UBIGINT => ColumnType::Unsigned(64),
            sys::DUCKDB_TYPE_DUCKDB_TYPE_FLOAT => ColumnType::Float,
            sys::DUCKDB_TYPE_DUCKDB_TYPE_DOUBLE | sys::DUCKDB_TYPE_DUCKDB_TYPE_DECIMAL => {
                ColumnType::Double
            }
            sys::DUCKDB_TYPE_DUCKDB_TYPE_HUGEINT | sys::DUCKDB_TYPE_DUCKDB_TYPE_UHUGEINT => {
                ColumnType::HugeInt
            }
            sys::DUCKDB_TYPE_DUCKDB_TYPE_BOOLEAN => ColumnType::Boolean,
            sys::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR | sys::DUCKDB_TYPE_DUCKDB_TYPE_ENUM => {
                ColumnType::Text
            }
            sys::DUCKDB_TYPE_DUCKDB_TYPE_DATE | sys::DUCKDB_TYPE_DUCKDB_TYPE_TIMESTAMP => {
                ColumnType::Timestamp
            }
            other => ColumnType::Other(other),
        }
    }
}

/// A relation read whole: column names, declared types and rows.
#[derive(Debug, Clone)]
pub struct TypedTable {
    /// Column names, in order.
    pub names: Vec<String>,
    /// Declared types, one per column.
    pub types: Vec<ColumnType>,
    /// The rows (values as `engine::duckdb` reads them).
    pub rows: Vec<Row>,
}

/// One `.duckdb` file opened under the engine's locks.
pub struct LockedFile {
    database: Arc<Database>,
}

impl LockedFile {
    /// Opens `path` read-only with the engine's locked settings; a file DuckDB cannot open
    /// (not a database, an LFS pointer, a newer format) is an [`ExecError::Open`].
    pub fn open(path: &Path) -> Result<LockedFile, ExecError> {
        let settings = ffi::locked_settings(memory_limit());
        let database = Database::open(path, &settings)
            .map_err(|f| ExecError::Open(format!("{}: {}", path.display(), f.message)))?;
        Ok(LockedFile {
            database: Arc::new(database),
        })
    }

    /// The rows of `query` (one plain query) with its columns' declared types, under
    /// `limits`; a column of a type [`ColumnType`] does not tell apart is
    /// [`ReadError::Unsupported`], before any row is read.
    pub fn read(&self, query: &str, limits: &Limits) -> Result<TypedTable, ReadError> {
        let connection = (self.database.connect()).map_err(|f| ExecError::Fault(f.message))?;
        let mut unsupported = None;
        let table = under_deadline(&connection, limits, |armed| {
            let prepared = prepare_query(&connection, query, armed.expired(), limits)?;
            let types: Vec<ColumnType> = prepared
                .column_types()
                .into_iter()
                .map(ColumnType::of)
                .collect();
            let names = prepared.column_names();
            if let Some(at) = types.iter().position(|t| matches!(t, ColumnType::Other(_))) {
                unsupported = Some(format!(
                    "column `{}` is of DuckDB type #{:?}",
                    names[at], types[at]
                ));
                return Ok(None);
            }
            let table = read_rows(&prepared, armed, limits, true, usize::MAX)?;
            Ok(Some(TypedTable {
                names: table.columns,
                types,
                rows: table.rows,
            }))
        })?;
        table.ok_or_else(|| ReadError::Unsupported(unsupported.unwrap_or_default()))
    }
}

/// Why a relation was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// The query failed (no such relation, a deadline, a cap, a file DuckDB cannot open).
    Exec(ExecError),
    /// A column of a type the comparison does not read (which column, which type).
    Unsupported(String),
}

impl From<ExecError> for ReadError {
    fn from(error: ExecError) -> ReadError {
        ReadError::Exec(error)
    }
}

/// Writes a new `.duckdb` file at `path` from trusted SQL statements (fixtures of the Spider
/// 2.0-DBT tests: gold and predicted files built from committed scripts, hostile ones included,
/// whose views may name local files: so file access stays on, extensions off).
pub fn write_script(path: &Path, script: &str) -> Result<(), String> {
    let settings = [
        ("access_mode", "READ_WRITE".to_string()),
        ("autoinstall_known_extensions", "false".into()),
        ("autoload_known_extensions", "false".into()),
        // Small blocks: hundreds of tiny tables take 12 MB, not 126 MB.
        ("default_block_size", "16384".into()),
    ];
    let database = Arc::new(Database::open(path, &settings).map_err(|f| f.message)?);
    let connection = database.connect().map_err(|f| f.message)?;
    connection.execute(script).map_err(|f| f.message)
}
