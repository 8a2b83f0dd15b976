//! The few calls of DuckDB's C API the engine makes (`libduckdb-sys`, linked against the prebuilt
//! library `build.rs` fetches), each behind a type that frees what it holds: a locked-down
//! database, a connection, a prepared statement, a streaming result and its chunks.

use libduckdb_sys as sys;
use std::ffi::{c_char, CStr, CString};
use std::path::Path;
use std::sync::Arc;

/// A DuckDB error: its type (`duckdb_error_type`, `None` where the API gives only a message) and
/// message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// `DUCKDB_ERROR_*`, when known.
    pub kind: Option<sys::duckdb_error_type>,
    /// DuckDB's message (`Permission Error: ...`, `Catalog Error: ...`).
    pub message: String,
}

impl Failure {
    fn message(message: impl Into<String>) -> Failure {
        Failure {
            kind: None,
            message: message.into(),
        }
    }
}

/// The settings every database is opened with, in this order; `lock_configuration` comes last,
/// after the memory limit and the thread count, so no query can change any of them.
pub fn locked_settings(memory_limit_bytes: usize) -> Vec<(&'static str, String)> {
    vec![
        ("access_mode", "READ_ONLY".into()),
        ("threads", "1".into()),
        ("memory_limit", format!("{memory_limit_bytes}B")),
        ("temp_directory", String::new()),
        ("enable_external_access", "false".into()),
        ("autoinstall_known_extensions", "false".into()),
        ("autoload_known_extensions", "false".into()),
        ("allow_community_extensions", "false".into()),
        ("allow_unsigned_extensions", "false".into()),
        ("lock_configuration", "true".into()),
    ]
}

/// The settings `sqlgate load` writes a new database with: no file, network or extension access
/// beyond the file itself.
pub fn writer_settings() -> Vec<(&'static str, String)> {
    vec![
        ("access_mode", "READ_WRITE".into()),
        ("enable_external_access", "false".into()),
        ("autoinstall_known_extensions", "false".into()),
        ("autoload_known_extensions", "false".into()),
    ]
}

/// An open database file (`duckdb_database`); DuckDB allows connections to it from any thread.
#[derive(Debug)]
pub struct Database {
    raw: sys::duckdb_database,
}

// SAFETY: a `duckdb_database` is thread-safe (connections are made to it from many threads).
unsafe impl Send for Database {}
// SAFETY: as above; the only call made through `&Database` is `duckdb_connect`.
unsafe impl Sync for Database {}

impl Database {
    /// Opens `path` with `settings` (see [`locked_settings`]).
    pub fn open(path: &Path, settings: &[(&str, String)]) -> Result<Database, Failure> {
        let text = path
            .to_str()
            .ok_or_else(|| Failure::message("the database path is not UTF-8"))?;
        let c_path = c_string(text)?;
        let config = Config::new(settings)?;
        let mut raw: sys::duckdb_database = std::ptr::null_mut();
        let mut error: *mut c_char = std::ptr::null_mut();
        // SAFETY: valid C strings, a live config, out-pointers to locals.
        let state =
            unsafe { sys::duckdb_open_ext(c_path.as_ptr(), &mut raw, config.raw, &mut error) };
        if state == sys::duckdb_state_DuckDBSuccess {
            return Ok(Database { raw });
        }
        let message = take_error(error).unwrap_or_else(|| "cannot open the database".into());
        Err(Failure::message(message))
    }

    /// A new connection (no state shared with other connections but the database), which
    /// keeps the database open.
    pub fn connect(self: &Arc<Self>) -> Result<Connection, Failure> {
        let mut raw: sys::duckdb_connection = std::ptr::null_mut();
        // SAFETY: the database is open; `raw` is an out-pointer.
        let state = unsafe { sys::duckdb_connect(self.raw, &mut raw) };
        if state != sys::duckdb_state_DuckDBSuccess {
            return Err(Failure::message("cannot connect to the database"));
        }
        Ok(Connection {
            raw,
            _database: Arc::clone(self),
        })
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        // SAFETY: every connection holds the database, so none is left.
        unsafe { sys::duckdb_close(&mut self.raw) };
    }
}

/// A `duckdb_config` filled with settings, freed on drop.
struct Config {
    raw: sys::duckdb_config,
}

impl Config {
    fn new(settings: &[(&str, String)]) -> Result<Config, Failure> {
        let mut raw: sys::duckdb_config = std::ptr::null_mut();
        // SAFETY: out-pointer to a local.
        if unsafe { sys::duckdb_create_config(&mut raw) } != sys::duckdb_state_DuckDBSuccess {
            return Err(Failure::message("cannot create a DuckDB configuration"));
        }
        let config = Config { raw };
        for (name, value) in settings {
            let (c_name, c_value) = (c_string(name)?, c_string(value)?);
            // SAFETY: live config, valid C strings.
            let state =
                unsafe { sys::duckdb_set_config(config.raw, c_name.as_ptr(), c_value.as_ptr()) };
            if state != sys::duckdb_state_DuckDBSuccess {
                return Err(Failure::message(format!(
                    "DuckDB refused the setting {name}"
                )));
            }
        }
        Ok(config)
    }
}

impl Drop for Config {
    fn drop(&mut self) {
        // SAFETY: created by duckdb_create_config.
        unsafe { sys::duckdb_destroy_config(&mut self.raw) };
    }
}

/// A connection to a [`Database`], used by one thread at a time.
#[derive(Debug)]
pub struct Connection {
    raw: sys::duckdb_connection,
    /// Closed after the connection (fields drop after `drop`).
    _database: Arc<Database>,
}

// SAFETY: a connection may move between threads; it is used by one at a time (`&mut` / owner).
unsafe impl Send for Connection {}

/// What the watchdog needs to interrupt a connection's running query from another thread.
#[derive(Debug, Clone, Copy)]
pub struct Interrupt(sys::duckdb_connection);

// SAFETY: `duckdb_interrupt` is made to be called from another thread than the one running the
// query; the watchdog calls it only while the connection is registered (alive).
unsafe impl Send for Interrupt {}

impl Interrupt {
    /// Interrupts the query running on the connection (if any).
    ///
    /// # Safety
    /// The connection must still be open.
    pub unsafe fn fire(self) {
        // SAFETY: the caller guarantees the connection is open.
        unsafe { sys::duckdb_interrupt(self.0) };
    }
}

impl Connection {
    /// The handle the watchdog interrupts this connection with.
    pub fn interrupt(&self) -> Interrupt {
        Interrupt(self.raw)
    }

    /// Prepares `sql`, which must hold exactly one statement (`Ok(Err(count))` otherwise).
    pub fn prepare_one(&self, sql: &str) -> Result<Result<Prepared<'_>, usize>, Failure> {
        let c_sql = c_string(sql)?;
        let mut extracted: sys::duckdb_extracted_statements = std::ptr::null_mut();
        // SAFETY: open connection, valid C string, out-pointer to a local.
        let count =
            unsafe { sys::duckdb_extract_statements(self.raw, c_sql.as_ptr(), &mut extracted) };
        let extracted = Extracted { raw: extracted };
        if count == 0 {
            // SAFETY: the extracted statements are live; the message is owned by them.
            let message = unsafe { borrowed(sys::duckdb_extract_statements_error(extracted.raw)) };
            return Err(Failure::message(
                message.unwrap_or_else(|| "no statement".into()),
            ));
        }
        if count != 1 {
            return Ok(Err(count as usize));
        }
        let mut raw: sys::duckdb_prepared_statement = std::ptr::null_mut();
        // SAFETY: open connection, live extracted statements, index 0 < count.
        let state = unsafe {
            sys::duckdb_prepare_extracted_statement(self.raw, extracted.raw, 0, &mut raw)
        };
        let prepared = Prepared {
            raw,
            _connection: std::marker::PhantomData,
        };
        if state != sys::duckdb_state_DuckDBSuccess {
            // SAFETY: the statement is live; the message is owned by it.
            let message = unsafe { borrowed(sys::duckdb_prepare_error(prepared.raw)) };
            return Err(Failure::message(
                message.unwrap_or_else(|| "cannot prepare".into()),
            ));
        }
        Ok(Ok(prepared))
    }
}

impl Connection {
    /// Runs trusted SQL (the statements `sqlgate load` writes), discarding any result.
    pub fn execute(&self, sql: &str) -> Result<(), Failure> {
        let c_sql = c_string(sql)?;
        // SAFETY: zeroed is the documented initial state of a duckdb_result out-parameter.
        let mut raw: sys::duckdb_result = unsafe { std::mem::zeroed() };
        // SAFETY: open connection, valid C string, out-pointer to a local.
        let state = unsafe { sys::duckdb_query(self.raw, c_sql.as_ptr(), &mut raw) };
        let result = Streaming {
            raw,
            _statement: std::marker::PhantomData,
        };
        match state == sys::duckdb_state_DuckDBSuccess {
            true => Ok(()),
            false => Err(result.failure()),
        }
    }

    /// An appender of rows to `table` (trusted: `sqlgate load`).
    pub fn appender(&self, table: &str) -> Result<Appender<'_>, Failure> {
        let c_table = c_string(table)?;
        let mut raw: sys::duckdb_appender = std::ptr::null_mut();
        // SAFETY: open connection, valid C string, out-pointer to a local.
        let state = unsafe {
            sys::duckdb_appender_create(self.raw, std::ptr::null(), c_table.as_ptr(), &mut raw)
        };
        let appender = Appender {
            raw,
            _connection: std::marker::PhantomData,
        };
        match state == sys::duckdb_state_DuckDBSuccess {
            true => Ok(appender),
            false => Err(appender.failure()),
        }
    }
}

/// Rows appended to one table, written by [`Appender::close`].
pub struct Appender<'conn> {
    raw: sys::duckdb_appender,
    _connection: std::marker::PhantomData<&'conn ()>,
}

/// One cell given to an [`Appender`].
pub enum Cell<'a> {
    /// NULL.
    Null,
    /// A 64-bit integer.
    Int(i64),
    /// A double.
    Real(f64),
    /// Text (cast by DuckDB to the column's type: a date, a timestamp).
    Text(&'a str),
    /// Bytes.
    Blob(&'a [u8]),
}

impl Appender<'_> {
    fn failure(&self) -> Failure {
        // SAFETY: a live (or null) appender; the message belongs to it.
        let message = unsafe { borrowed(sys::duckdb_appender_error(self.raw)) };
        Failure::message(message.unwrap_or_else(|| "the appender failed".into()))
    }

    fn check(&self, state: sys::duckdb_state) -> Result<(), Failure> {
        match state == sys::duckdb_state_DuckDBSuccess {
            true => Ok(()),
            false => Err(self.failure()),
        }
    }

    /// Appends one row.
    pub fn row(&mut self, cells: &[Cell<'_>]) -> Result<(), Failure> {
        for cell in cells {
            // SAFETY: a live appender; the text and bytes outlive the call (DuckDB copies them).
            let state = unsafe {
                match cell {
                    Cell::Null => sys::duckdb_append_null(self.raw),
                    Cell::Int(value) => sys::duckdb_append_int64(self.raw, *value),
                    Cell::Real(value) => sys::duckdb_append_double(self.raw, *value),
                    Cell::Text(text) => sys::duckdb_append_varchar_length(
                        self.raw,
                        text.as_ptr().cast(),
                        text.len() as u64,
                    ),
                    Cell::Blob(bytes) => {
                        sys::duckdb_append_blob(self.raw, bytes.as_ptr().cast(), bytes.len() as u64)
                    }
                }
            };
            self.check(state)?;
        }
        // SAFETY: a live appender.
        self.check(unsafe { sys::duckdb_appender_end_row(self.raw) })
    }

    /// Writes the appended rows to the table.
    pub fn close(self) -> Result<(), Failure> {
        // SAFETY: a live appender (destroyed by drop).
        self.check(unsafe { sys::duckdb_appender_close(self.raw) })
    }
}

impl Drop for Appender<'_> {
    fn drop(&mut self) {
        // SAFETY: made by duckdb_appender_create (a null one is allowed).
        unsafe { sys::duckdb_appender_destroy(&mut self.raw) };
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // SAFETY: opened by duckdb_connect; its statements and results borrow it and are gone.
        unsafe { sys::duckdb_disconnect(&mut self.raw) };
    }
}

struct Extracted {
    raw: sys::duckdb_extracted_statements,
}

impl Drop for Extracted {
    fn drop(&mut self) {
        // SAFETY: made by duckdb_extract_statements (destroying a null handle is allowed).
        unsafe { sys::duckdb_destroy_extracted(&mut self.raw) };
    }
}

/// One prepared statement.
pub struct Prepared<'conn> {
    raw: sys::duckdb_prepared_statement,
    _connection: std::marker::PhantomData<&'conn ()>,
}

impl Prepared<'_> {
    /// Whether the statement is a plain query (`DUCKDB_STATEMENT_TYPE_SELECT`).
    pub fn is_select(&self) -> bool {
        // SAFETY: a successfully prepared statement.
        let kind = unsafe { sys::duckdb_prepared_statement_type(self.raw) };
        kind == sys::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_SELECT
    }

    /// The result's column names, without running the statement.
    pub fn column_names(&self) -> Vec<String> {
        // SAFETY: a successfully prepared statement; each name is freed with duckdb_free.
        let count = unsafe { sys::duckdb_prepared_statement_column_count(self.raw) };
        (0..count)
            .map(|column| unsafe {
                owned(sys::duckdb_prepared_statement_column_name(self.raw, column))
            })
            .collect()
    }

    /// The result's column types (DuckDB type ids), without running the statement.
    pub fn column_types(&self) -> Vec<sys::duckdb_type> {
        // SAFETY: a successfully prepared statement.
        let count = unsafe { sys::duckdb_prepared_statement_column_count(self.raw) };
        (0..count)
            // SAFETY: column < count.
            .map(|column| unsafe { sys::duckdb_prepared_statement_column_type(self.raw, column) })
            .collect()
    }

    /// Runs the statement; its rows come chunk by chunk from the returned result.
    pub fn stream(&self) -> Result<Streaming<'_>, Failure> {
        // SAFETY: zeroed is the documented initial state of a duckdb_result out-parameter.
        let mut raw: sys::duckdb_result = unsafe { std::mem::zeroed() };
        // SAFETY: a successfully prepared statement, out-pointer to a local.
        let state = unsafe { sys::duckdb_execute_prepared_streaming(self.raw, &mut raw) };
        let result = Streaming {
            raw,
            _statement: std::marker::PhantomData,
        };
        if state != sys::duckdb_state_DuckDBSuccess {
            return Err(result.failure());
        }
        Ok(result)
    }
}

impl Drop for Prepared<'_> {
    fn drop(&mut self) {
        // SAFETY: made by duckdb_prepare_extracted_statement (a null one is allowed).
        unsafe { sys::duckdb_destroy_prepare(&mut self.raw) };
    }
}

/// A running query's result, read chunk by chunk.
pub struct Streaming<'stmt> {
    raw: sys::duckdb_result,
    _statement: std::marker::PhantomData<&'stmt ()>,
}

impl Streaming<'_> {
    /// The error the result holds.
    fn failure(&self) -> Failure {
        let mut raw = self.raw;
        // SAFETY: a result filled by DuckDB; the message belongs to it.
        let message = unsafe { borrowed(sys::duckdb_result_error(&mut raw)) };
        // SAFETY: as above.
        let kind = unsafe { sys::duckdb_result_error_type(&mut raw) };
        Failure {
            kind: Some(kind),
            message: message.unwrap_or_else(|| "the query failed".into()),
        }
    }

    /// The result's column names.
    pub fn column_names(&self) -> Vec<String> {
        let mut raw = self.raw;
        // SAFETY: a successful result; the names belong to it.
        let count = unsafe { sys::duckdb_column_count(&mut raw) };
        (0..count)
            .map(|column| {
                unsafe { borrowed(sys::duckdb_column_name(&mut raw, column)) }.unwrap_or_default()
            })
            .collect()
    }

    /// The next chunk of rows; `None` at the end. An error met while running is returned here.
    pub fn next_chunk(&mut self) -> Result<Option<Chunk>, Failure> {
        // SAFETY: a successful streaming result.
        let raw = unsafe { sys::duckdb_fetch_chunk(self.raw) };
        if !raw.is_null() {
            return Ok(Some(Chunk { raw }));
        }
        let mut result = self.raw;
        // SAFETY: as above.
        let failed = unsafe { !sys::duckdb_result_error(&mut result).is_null() };
        if failed {
            return Err(self.failure());
        }
        Ok(None)
    }
}

impl Drop for Streaming<'_> {
    fn drop(&mut self) {
        // SAFETY: filled by duckdb_execute_prepared_streaming (also after an error).
        unsafe { sys::duckdb_destroy_result(&mut self.raw) };
    }
}

/// Up to 2048 rows of a result.
pub struct Chunk {
    raw: sys::duckdb_data_chunk,
}

impl Chunk {
    /// Its rows.
    pub fn rows(&self) -> usize {
        // SAFETY: a live chunk.
        unsafe { sys::duckdb_data_chunk_get_size(self.raw) as usize }
    }

    /// Its column `index` (< the result's column count).
    pub fn column(&self, index: usize) -> sys::duckdb_vector {
        // SAFETY: a live chunk; the vector lives as long as the chunk.
        unsafe { sys::duckdb_data_chunk_get_vector(self.raw, index as u64) }
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        // SAFETY: returned by duckdb_fetch_chunk.
        unsafe { sys::duckdb_destroy_data_chunk(&mut self.raw) };
    }
}

fn c_string(text: &str) -> Result<CString, Failure> {
    CString::new(text).map_err(|_| Failure::message("the text holds a NUL byte"))
}

/// A C string DuckDB keeps, copied.
///
/// # Safety
/// `text` is null or a valid NUL-terminated string.
unsafe fn borrowed(text: *const c_char) -> Option<String> {
    // SAFETY: per the contract.
    (!text.is_null()).then(|| {
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned()
    })
}

/// A C string DuckDB hands over, copied and freed.
///
/// # Safety
/// `text` is null or a NUL-terminated string allocated by DuckDB.
unsafe fn owned(text: *const c_char) -> String {
    // SAFETY: per the contract.
    let copy = unsafe { borrowed(text) }.unwrap_or_default();
    if !text.is_null() {
        // SAFETY: allocated by DuckDB, freed once.
        unsafe { sys::duckdb_free(text as *mut std::ffi::c_void) };
    }
    copy
}

/// An error string from `duckdb_open_ext`, copied and freed.
fn take_error(error: *mut c_char) -> Option<String> {
    // SAFETY: null or allocated by DuckDB, freed with duckdb_free.
    (!error.is_null()).then(|| unsafe { owned(error) })
}
