//! DuckDB queries in this process, through the C API: what the worker process
//! (`sqlgate duckdb-worker`, [`super::serve`]) runs for the parent.
//!
//! Each file is opened read-only with the locked settings ([`ffi::locked_settings`]); a query must
//! be exactly one plain query; the deadline's watchdog interrupts it between operator steps, and
//! rows are counted under the row and byte caps as they are read. Each query gets a fresh
//! connection (no state carried from one item to the next).

use super::convert;
use super::deadline;
use super::ffi::{self, Database, Failure};
use crate::engine::exec::{ExecError, Limits, ResultTable, SizeGuard};
use crate::engine::value::Value;
use libduckdb_sys as sys;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Databases a worker keeps open at once; the least recently used is closed past that.
pub const OPEN_DATABASES: usize = 4;

/// The open databases of one worker, each opened once with the locked settings.
pub struct Databases {
    /// `memory_limit` of each open database.
    memory_limit: usize,
    /// Open databases by owner (the engine or file handle in the parent that asked) and path,
    /// the most recently used last.
    open: Vec<((u64, PathBuf), Arc<Database>)>,
}

impl Databases {
    /// No database open yet; each will be opened with DuckDB's `memory_limit` at `memory_limit`.
    pub fn new(memory_limit: usize) -> Databases {
        Databases {
            memory_limit,
            open: Vec::new(),
        }
    }

    /// The open database `db` of `owner`, opened on first use (each owner opens its own, so a
    /// file rewritten between two engines' uses is read afresh).
    pub fn get(&mut self, owner: u64, db: &Path) -> Result<Arc<Database>, ExecError> {
        let key = (owner, db.to_path_buf());
        if let Some(index) = self.open.iter().position(|(open, _)| *open == key) {
            let entry = self.open.remove(index);
            self.open.push(entry);
        } else {
            if self.open.len() >= OPEN_DATABASES {
                self.open.remove(0);
            }
            let settings = ffi::locked_settings(self.memory_limit);
            let database = Database::open(db, &settings).map_err(|failure| {
                ExecError::Open(format!("{}: {}", db.display(), failure.message))
            })?;
            self.open.push((key, Arc::new(database)));
        }
        Ok(Arc::clone(&self.open.last().expect("just put last").1))
    }

    /// Drops an open database after a fatal error, so the next query opens it afresh.
    pub fn forget(&mut self, owner: u64, db: &Path) {
        self.open
            .retain(|((who, path), _)| (*who, path.as_path()) != (owner, db));
    }
}

/// The result of `sql` on `db`, as [`crate::engine::exec::Engine::run`] describes it.
pub fn run(
    databases: &mut Databases,
    (owner, db): (u64, &Path),
    sql: &str,
    limits: &Limits,
    with_columns: bool,
    most_rows: usize,
) -> Result<ResultTable, ExecError> {
    let database = databases.get(owner, db)?;
    let result = run_query(&database, sql, limits, with_columns, most_rows);
    if matches!(result, Err(ExecError::Fault(_))) {
        databases.forget(owner, db);
    }
    result
}

/// The column names of `sql` on `db`, without running it.
pub fn column_names(
    databases: &mut Databases,
    (owner, db): (u64, &Path),
    sql: &str,
    limits: &Limits,
) -> Result<Vec<String>, ExecError> {
    let database = databases.get(owner, db)?;
    let connection = database.connect().map_err(fault)?;
    let prepared = prepare_query(&connection, sql, false, limits)?;
    Ok(prepared.column_names())
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
pub fn under_deadline<T>(
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
pub fn prepare_query<'c>(
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
pub fn read_chunks(
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
    ) || message.contains("bad_alloc")
    {
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

/// A failure of the engine itself (a connection DuckDB would not make), not of the query.
pub fn fault(failure: Failure) -> ExecError {
    ExecError::Fault(failure.message)
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
}
