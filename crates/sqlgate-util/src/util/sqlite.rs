//! The one guarded constructor every SQLite connection of sqlgate goes through, whatever it is
//! for (running predictions, reading schemas and ESM+ facts, suites): read-only and immutable
//! (no journal, no WAL, no `-shm` is ever created), `SQLITE_DBCONFIG_DEFENSIVE`,
//! `trusted_schema = OFF` (generated columns, views and triggers may not call functions with
//! side effects), no ATTACH, capped value and SQL lengths, temporary data in memory charged to the
//! run's memory budget (`util::memory`, installed before the first connection), a wall-clock deadline enforced by a progress handler and by the
//! watchdog (`util::watchdog`), and SQLite's quadratic built-ins replaced by bounded ports
//! (`util::sqlite_functions`).
//!
//! The executor adds its authorizer and result caps on top (`engine::exec`).

use crate::util::watchdog::Deadline;
use rusqlite::limits::Limit;
use rusqlite::{Connection, OpenFlags};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

pub use crate::util::watchdog::now_nanos;

/// Largest string or blob a statement may build (defeats `randomblob(900000000)` and
/// `zeroblob` in generated columns).
pub const MAX_VALUE_BYTES: i32 = 32 << 20;
/// Longest SQL text accepted.
pub const MAX_SQL_BYTES: i32 = 1 << 20;
/// Page-cache size per connection, in KiB.
const CACHE_KIB: i64 = 8 << 10;
/// The time reading one database's schema or ESM+ facts may take; past it the database's
/// items lose what needed them (the item fails, not the run).
pub const METADATA_BUDGET: Duration = Duration::from_secs(10);
/// Virtual-machine steps between two deadline checks.
const PROGRESS_INTERVAL: i32 = 1000;

/// A locked-down connection and the deadline its progress handler watches.
pub struct Guarded {
    /// The connection.
    pub conn: Connection,
    deadline: Arc<Deadline>,
}

impl Guarded {
    /// Arms the deadline `budget` from now and returns it (nanoseconds on [`now_nanos`]'s clock).
    pub fn arm(&self, budget: Duration) -> u64 {
        self.deadline.arm(budget)
    }

    /// Disarms the deadline.
    pub fn disarm(&self) {
        self.deadline.disarm();
    }
}

/// Opens the database file at `path` read-only and immutable, locked down. A path that is not a
/// regular file is refused before SQLite sees it.
pub fn open_read_only(path: &Path) -> rusqlite::Result<Guarded> {
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return Err(rusqlite::Error::InvalidPath(path.to_path_buf()));
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    crate::util::memory::install_sqlite_allocator();
    guard(Connection::open_with_flags(immutable_uri(path), flags)?)
}

/// A new, empty in-memory database (to be locked down with [`guard`] once filled), opened after
/// SQLite's allocator is in place.
pub fn open_in_memory() -> rusqlite::Result<Connection> {
    crate::util::memory::install_sqlite_allocator();
    Connection::open_in_memory()
}

/// Locks down an already open connection (an in-memory copy) the same way.
pub fn guard(mut conn: Connection) -> rusqlite::Result<Guarded> {
    crate::util::memory::install_sqlite_allocator();
    use rusqlite::config::DbConfig;
    conn.set_limit(Limit::SQLITE_LIMIT_ATTACHED, 0)?;
    conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)?;
    conn.set_limit(Limit::SQLITE_LIMIT_SQL_LENGTH, MAX_SQL_BYTES)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    conn.pragma_update(None, "cache_size", -CACHE_KIB)?;
    crate::util::sqlite_functions::install(&conn)?;
    drop_virtual_table_modules(&conn)?;
    let deadline = Deadline::watch(&conn);
    let watched = Arc::clone(&deadline);
    conn.progress_handler(PROGRESS_INTERVAL, Some(move || watched.expired()))?;
    Ok(Guarded { conn, deadline })
}

/// Virtual-table modules an untrusted query or database may still reach: the JSON table-valued
/// functions, which a query can use like any built-in.
const KEPT_MODULES: [&std::ffi::CStr; 2] = [c"json_each", c"json_tree"];

/// Removes every other virtual-table module from `conn`: `dbstat` (whose aggregate scan of a huge
/// file runs long between interrupt checks) and FTS3/FTS5/R*Tree (whose shadow-table parsers a
/// crafted database file would otherwise reach). Spider's and BIRD's databases use none of them;
/// a query naming one gets "no such table" or "no such module".
fn drop_virtual_table_modules(conn: &Connection) -> rusqlite::Result<()> {
    let mut keep: Vec<*const std::ffi::c_char> = KEPT_MODULES.iter().map(|m| m.as_ptr()).collect();
    keep.push(std::ptr::null());
    // SAFETY: `keep` is a NULL-terminated array of NUL-terminated strings that outlives the call;
    // the handle belongs to `conn`, which no other thread uses during it.
    let code = unsafe { rusqlite::ffi::sqlite3_drop_modules(conn.handle(), keep.as_mut_ptr()) };
    match code {
        rusqlite::ffi::SQLITE_OK => Ok(()),
        other => Err(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(other),
            None,
        )),
    }
}

/// A name as a double-quoted SQL identifier (embedded quotes doubled), for the statements
/// sqlgate writes itself over table and column names a database brings.
pub fn quoted_identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A `file:` URI opening `path` immutable, with the path percent-encoded.
pub fn immutable_uri(path: &Path) -> String {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut uri = String::from("file:");
    for byte in absolute.to_string_lossy().bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                uri.push(byte as char)
            }
            _ => uri.push_str(&format!("%{byte:02X}")),
        }
    }
    uri.push_str("?immutable=1");
    uri
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn only_the_json_table_functions_remain_as_virtual_tables() {
        let guarded = guard(Connection::open_in_memory().unwrap()).unwrap();
        let sum: i64 = guarded
            .conn
            .query_row("SELECT sum(value) FROM json_each('[1,2,3]')", [], |row| {
                row.get(0)
            })
            .unwrap();
        assert_eq!(sum, 6);
        for sql in [
            "SELECT count(*) FROM dbstat",
            "CREATE VIRTUAL TABLE docs USING fts5(body)",
            "CREATE VIRTUAL TABLE boxes USING rtree(id, x0, x1)",
        ] {
            let error = guarded.conn.execute_batch(sql).unwrap_err().to_string();
            assert!(error.contains("no such"), "{sql}: {error}");
        }
    }

    #[test]
    fn uri_escapes_query_characters() {
        let uri = immutable_uri(Path::new("/tmp/a b?c#d.sqlite"));
        assert_eq!(uri, "file:/tmp/a%20b%3Fc%23d.sqlite?immutable=1");
    }

    #[test]
    fn a_deadline_interrupts_a_runaway_statement() {
        let guarded = guard(Connection::open_in_memory().unwrap()).unwrap();
        guarded.arm(Duration::from_millis(50));
        let started = Instant::now();
        let result: rusqlite::Result<i64> = guarded.conn.query_row(
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
            [],
            |row| row.get(0),
        );
        assert!(result.is_err());
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
