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
use crate::engine::exec::{ExecError, Limits, SizeGuard};
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

/// Where a result goes as it is read: the worker writes each row to the parent at once and
/// keeps none (so its memory holds one chunk of a result, not the result).
pub trait Sink {
    /// The result's column names, before any row.
    fn names(&mut self, names: &[String]) -> Result<(), ExecError>;
    /// The declared types of a relation read whole, before its rows.
    fn kinds(&mut self, kinds: &[sys::duckdb_type]) -> Result<(), ExecError>;
    /// One row, already counted under the caps.
    fn row(&mut self, row: &[convert::Cell]) -> Result<(), ExecError>;
}

/// Runs `sql` on `db` under `limits` and hands the result to `sink`, as
/// [`crate::engine::exec::Engine::run`] describes it (at most `most_rows + 1` rows).
pub fn run(
    databases: &mut Databases,
    (owner, db): (u64, &Path),
    sql: &str,
    (limits, most_rows): (&Limits, usize),
    sink: &mut dyn Sink,
) -> Result<(), ExecError> {
    let database = databases.get(owner, db)?;
    let result = run_query(&database, sql, (limits, most_rows), sink);
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
    (limits, most_rows): (&Limits, usize),
    sink: &mut dyn Sink,
) -> Result<(), ExecError> {
    let connection = database.connect().map_err(fault)?;
    under_deadline(&connection, limits, |armed| {
        let prepared = prepare_query(&connection, sql, armed.expired(), limits)?;
        read_chunks(&prepared, armed, (limits, most_rows), false, sink)
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

/// Hands the column names and then the rows of the result as [`convert::Cell`]s (`whole`:
/// lists, arrays and UUIDs read too, else refused) to `sink`, every row counted under the caps
/// first; stops after `most_rows + 1`.
pub fn read_chunks(
    prepared: &ffi::Prepared<'_>,
    armed: &deadline::Armed,
    (limits, most_rows): (&Limits, usize),
    whole: bool,
    sink: &mut dyn Sink,
) -> Result<(), ExecError> {
    let classify = |failure: Failure| classify(failure, armed.expired(), limits);
    let mut stream = prepared.stream().map_err(classify)?;
    let columns = stream.column_names();
    sink.names(&columns)?;
    // Counts only: the rows are the parent's, which charges them to the run's budget.
    let mut size = SizeGuard::new(limits);
    let mut sent = 0;
    let reader = match whole {
        true => convert::ColumnReader::of_cells,
        false => convert::ColumnReader::of,
    };
    while let Some(chunk) = stream.next_chunk().map_err(classify)? {
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
            size.add_row()?;
            sink.row(&values)?;
            sent += 1;
            if sent > most_rows {
                return Ok(());
            }
        }
    }
    Ok(())
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
