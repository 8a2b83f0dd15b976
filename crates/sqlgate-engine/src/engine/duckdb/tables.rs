//! Whole tables of `.duckdb` files that are not benchmark databases but answers (Spider
//! 2.0-DBT: the file an agent's dbt project left), read with their declared column types.
//!
//! A predicted file is hostile: it is opened as the engine opens a benchmark database (read-only,
//! external access and extensions off, one thread, the memory limit, the configuration locked),
//! each read is one plain query under the run's deadline and row / byte caps, and nothing stored
//! in the file runs but what reading the named relation runs (a view's query, under the same
//! locks: `engine::spider2_dbt` decides which profile reads views).

use super::local::{prepare_query, read_chunks, under_deadline, Sink};
use super::wire::{self, response, Writer};
use super::worker::{self, Spec};
use super::{ffi, memory_limit, next_owner, Cell, OPEN_DATABASES};
use crate::engine::exec::{ExecError, Limits, SizeGuard};
use ffi::Database;
use libduckdb_sys as sys;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

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
    /// `ENUM` (a pandas categorical: its NULL is NaN).
    Enum,
    /// `BLOB` (`bytearray`).
    Blob,
    /// `TIME` (`datetime.time`).
    Time,
    /// `INTERVAL` (timedelta64[us]).
    Interval,
    /// `TIMESTAMP WITH TIME ZONE` (datetime64[us, tz]).
    TimestampTz,
    /// `UUID` (`uuid.UUID`).
    Uuid,
    /// `LIST` or `ARRAY` (numpy arrays).
    List,
    /// `TIME WITH TIME ZONE`: `fetchdf()` raises on it once a row is read (an empty table
    /// converts, to an object column).
    TimeTz,
    /// A type DuckDB's client cannot hand pandas (`fetchdf()` raises, rows or none): its name.
    Unconvertible(&'static str),
    /// Anything else, by its DuckDB type id.
    Other(u32),
}

impl ColumnType {
    /// The type of a DuckDB type id.
    pub fn of(kind: sys::duckdb_type) -> ColumnType {
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
            sys::DUCKDB_TYPE_DUCKDB_TYPE_HUGEINT => ColumnType::HugeInt,
            sys::DUCKDB_TYPE_DUCKDB_TYPE_UHUGEINT => ColumnType::Unconvertible("UHUGEINT"),
            sys::DUCKDB_TYPE_DUCKDB_TYPE_TIME_TZ => ColumnType::TimeTz,
            sys::DUCKDB_TYPE_DUCKDB_TYPE_BIGNUM => ColumnType::Unconvertible("BIGNUM"),
            sys::DUCKDB_TYPE_DUCKDB_TYPE_BOOLEAN => ColumnType::Boolean,
            sys::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR => ColumnType::Text,
            sys::DUCKDB_TYPE_DUCKDB_TYPE_ENUM => ColumnType::Enum,
            sys::DUCKDB_TYPE_DUCKDB_TYPE_BLOB => ColumnType::Blob,
            sys::DUCKDB_TYPE_DUCKDB_TYPE_TIME => ColumnType::Time,
            sys::DUCKDB_TYPE_DUCKDB_TYPE_INTERVAL => ColumnType::Interval,
            sys::DUCKDB_TYPE_DUCKDB_TYPE_TIMESTAMP_TZ => ColumnType::TimestampTz,
            sys::DUCKDB_TYPE_DUCKDB_TYPE_UUID => ColumnType::Uuid,
            sys::DUCKDB_TYPE_DUCKDB_TYPE_LIST | sys::DUCKDB_TYPE_DUCKDB_TYPE_ARRAY => {
                ColumnType::List
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
    /// The rows (values as `engine::duckdb` reads them; lists and UUIDs too).
    pub rows: Vec<Vec<Cell>>,
}

/// One `.duckdb` file opened under the engine's locks, in this thread's DuckDB worker
/// ([`super::worker`]): a read past its deadline is killed with the worker.
pub struct LockedFile {
    path: PathBuf,
    /// Who opened it, to the worker (its open databases are kept by owner).
    owner: u64,
    spec: Spec,
}

/// How long opening a file may take (DuckDB reads its header and catalog).
const OPEN_TIMEOUT: Duration = Duration::from_secs(60);

impl LockedFile {
    /// Opens `path` read-only with the engine's locked settings; a file DuckDB cannot open
    /// (not a database, an LFS pointer, a newer format) is an [`ExecError::Open`].
    pub fn open(path: &Path) -> Result<LockedFile, ExecError> {
        let file = LockedFile {
            path: path.to_path_buf(),
            owner: next_owner(),
            spec: Spec::new(memory_limit(OPEN_DATABASES)),
        };
        let mut request = Writer::frame(wire::request::OPEN);
        request.u64(file.owner).path(path);
        worker::call(
            &file.spec,
            &request.finish(),
            OPEN_TIMEOUT,
            &mut |kind, _| match kind {
                response::END => Ok(true),
                other => Err(wire::unexpected(other)),
            },
        )?;
        Ok(file)
    }

    /// The rows of `query` (one plain query) with its columns' declared types, under
    /// `limits`, every row counted and charged as it arrives; a column of a type
    /// [`ColumnType`] does not tell apart is [`ReadError::Unsupported`], before any row is read.
    pub fn read(&self, query: &str, limits: &Limits) -> Result<TypedTable, ReadError> {
        let mut request = Writer::frame(wire::request::READ);
        (request.u64(self.owner).path(&self.path))
            .text(query)
            .limits(limits);
        let mut refused = None;
        // Declared before the rows: on an error they are freed before their charge is returned.
        let mut size = SizeGuard::new(limits);
        let mut table = TypedTable {
            names: Vec::new(),
            types: Vec::new(),
            rows: Vec::new(),
        };
        let mut on_frame = |kind: u8, reader: &mut wire::Reader<'_>| match kind {
            response::NAMES => {
                table.names = reader.texts()?;
                Ok(false)
            }
            response::TYPES => {
                let kinds = std::iter::from_fn(|| (!reader.is_empty()).then(|| reader.u32()));
                table.types = kinds
                    .map(|k| k.map(ColumnType::of))
                    .collect::<Result<_, _>>()?;
                Ok(false)
            }
            response::ROW => {
                let row = reader.cells()?;
                row.iter()
                    .for_each(|cell| cell.for_each_value(&mut |v| size.add_value(v)));
                table.rows.push(row);
                size.add_row().map(|()| false)
            }
            response::UNSUPPORTED => {
                refused = Some(ReadError::Unsupported(reader.text()?));
                Ok(true)
            }
            response::UNCONVERTIBLE => {
                refused = Some(ReadError::Unconvertible(reader.text()?));
                Ok(true)
            }
            response::END => Ok(true),
            other => Err(wire::unexpected(other)),
        };
        worker::call(&self.spec, &request.finish(), limits.timeout, &mut on_frame)?;
        size.finish();
        match refused {
            Some(refused) => Err(refused),
            None => Ok(table),
        }
    }
}

/// In the worker: hands the declared types, the column names and the rows of `query` on
/// `database` to `sink` as they are read, under `limits` (the checks of [`LockedFile::read`]: a
/// column type refused before any row, a `TIME WITH TIME ZONE` column at the first row).
pub fn read_local(
    database: &Arc<Database>,
    query: &str,
    limits: &Limits,
    sink: &mut dyn Sink,
) -> Result<(), ReadError> {
    let connection = (database.connect()).map_err(|f| ExecError::Fault(f.message))?;
    let mut checked = TimeTzCheck {
        column: None,
        names: Vec::new(),
        refused: None,
        sink,
    };
    let read = under_deadline(&connection, limits, |armed| {
        let prepared = prepare_query(&connection, query, armed.expired(), limits)?;
        let kinds = prepared.column_types();
        let types: Vec<ColumnType> = kinds.iter().map(|&kind| ColumnType::of(kind)).collect();
        if let Some(refused) = refused_column(&prepared.column_names(), &types) {
            checked.refused = Some(refused);
            return Ok(());
        }
        checked.column = types.iter().position(|t| *t == ColumnType::TimeTz);
        checked.sink.kinds(&kinds)?;
        read_chunks(&prepared, armed, (limits, usize::MAX), true, &mut checked)
    });
    match checked.refused {
        Some(refused) => Err(refused),
        None => read.map_err(ReadError::Exec),
    }
}

/// A sink that refuses a `TIME WITH TIME ZONE` column once a row comes (`fetchdf()` converts an
/// empty one), passing the rest on.
struct TimeTzCheck<'a> {
    column: Option<usize>,
    names: Vec<String>,
    refused: Option<ReadError>,
    sink: &'a mut dyn Sink,
}

impl Sink for TimeTzCheck<'_> {
    fn names(&mut self, names: &[String]) -> Result<(), ExecError> {
        self.names = names.to_vec();
        self.sink.names(names)
    }

    fn kinds(&mut self, kinds: &[sys::duckdb_type]) -> Result<(), ExecError> {
        self.sink.kinds(kinds)
    }

    fn row(&mut self, row: &[Cell]) -> Result<(), ExecError> {
        if let Some(at) = self.column {
            let name = self.names.get(at).cloned().unwrap_or_default();
            self.refused = Some(ReadError::Unconvertible(format!(
                "column `{name}` is a TIME WITH TIME ZONE, which DuckDB's Python client cannot convert for pandas"
            )));
            return Err(ExecError::Sql("refused".into()));
        }
        self.sink.row(row)
    }
}

/// The first column `fetchdf()` cannot convert, else the first sqlgate does not read.
fn refused_column(names: &[String], types: &[ColumnType]) -> Option<ReadError> {
    let unconvertible = |t: &ColumnType| matches!(t, ColumnType::Unconvertible(_));
    let at = (types.iter().position(unconvertible))
        .or_else(|| (types.iter()).position(|t| matches!(t, ColumnType::Other(_))))?;
    Some(match types[at] {
        ColumnType::Unconvertible(name) => ReadError::Unconvertible(format!(
            "column `{}` is a {name}, which DuckDB's Python client cannot convert for pandas",
            names[at]
        )),
        other => ReadError::Unsupported(format!(
            "column `{}` is of DuckDB type {other:?}",
            names[at]
        )),
    })
}

/// Why a relation was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// The query failed (no such relation, a deadline, a cap, a file DuckDB cannot open).
    Exec(ExecError),
    /// A column of a type the comparison does not read (which column, which type).
    Unsupported(String),
    /// A column of a type DuckDB's Python client cannot hand pandas (`fetchdf()` raises).
    Unconvertible(String),
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
