//! One item's connection to its own copy, and LiveSQLBench's `execute_queries` on it.
//!
//! The connection goes through the guarded constructor (`util::sqlite::guard`: no ATTACH,
//! defensive mode, untrusted schema, bounded functions, temporary data in memory) and adds, for
//! SQL that may write: an authorizer refusing ATTACH / DETACH, `load_extension`, virtual tables
//! and every PRAGMA but a read-only allowlist; `max_page_count` as the disk budget; one budget of
//! virtual-machine steps and one wall-clock deadline over all the item's statements (its
//! preprocess, prediction, tests and clean-up). Reaching either stops the item ([`Stopped`]).

use super::{Budget, Profile};
use crate::util::sqlite::{guard, now_nanos, Guarded};
use rusqlite::fallible_iterator::FallibleIterator;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags};
use std::cell::Cell;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Rows as the item's statements return them.
pub type Rows = Vec<Vec<Value>>;

/// Most rows a `SELECT` / `WITH` statement keeps (the official `MAX_ROWS`).
pub const MAX_ROWS: usize = 10_000;
/// Most rows any other statement may return before the item is stopped (a row budget).
const MAX_OTHER_ROWS: usize = 1_000_000;
/// Virtual-machine steps between two budget checks.
const STEP_INTERVAL: i32 = 1000;

/// PRAGMAs a statement may use (as a statement or a table-valued function): read-only schema
/// questions. Every other PRAGMA is refused.
const ALLOWED_PRAGMAS: [&str; 7] = [
    "table_info",
    "table_xinfo",
    "index_list",
    "index_info",
    "index_xinfo",
    "foreign_key_list",
    "collation_list",
];

/// The item ran out of its deadline or step budget: the official evaluator's kill of the task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stopped(pub String);

/// What `execute_queries` returns: the rows of the last statement that ran, and the flags.
#[derive(Debug, Clone, Default)]
pub struct Ran {
    /// Rows of the last statement that ran without error (`None`: none did).
    pub rows: Option<Rows>,
    /// A statement failed (not a timeout).
    pub exec_error: bool,
    /// A statement failed with an error the profile counts as a timeout.
    pub timeout: bool,
    /// The error's text, as the official report words it.
    pub message: String,
}

impl Ran {
    /// The error's text when a statement failed or timed out, `None` when every one ran.
    pub fn failure(&self) -> Option<&str> {
        (self.exec_error || self.timeout).then_some(self.message.as_str())
    }
}

/// A statement's error: the class Python's `sqlite3` would raise and its text.
#[derive(Debug, Clone)]
pub struct StatementError {
    /// `OperationalError`, `IntegrityError`, `ProgrammingError`, ...
    pub class: &'static str,
    /// The text.
    pub message: String,
}

/// The budget shared by the progress handler and the session.
struct Meter {
    steps_left: AtomicU64,
    deadline: u64,
}

impl Meter {
    fn exhausted(&self) -> bool {
        let left = self.steps_left.load(Ordering::Relaxed);
        if left < STEP_INTERVAL as u64 {
            return true;
        }
        self.steps_left
            .store(left - STEP_INTERVAL as u64, Ordering::Relaxed);
        now_nanos() >= self.deadline
    }
}

/// One item's read-write connection to its copy.
pub struct Session {
    guarded: Guarded,
    meter: Arc<Meter>,
    profile: Profile,
    disk_bytes: u64,
    /// How many statements SQLite does not call read-only have run (or started) so far.
    writes: Cell<u64>,
    /// Set while [`Session::cost`] runs the statements it costs: the authorizer then refuses
    /// transaction control, so none can end or outlive the savepoint that is rolled back.
    costing: Arc<AtomicBool>,
}

impl Session {
    /// Opens the copy at `path` (which must exist) with the guards and `budget`.
    pub fn open(path: &Path, budget: &Budget, profile: Profile) -> rusqlite::Result<Session> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut guarded = guard(Connection::open_with_flags(path, flags)?)?;
        // Python's `sqlite3` opens with SQLite's default, foreign keys off; the bundled SQLite
        // turns them on.
        guarded.conn.pragma_update(None, "foreign_keys", false)?;
        let page_size: i64 = (guarded.conn).pragma_query_value(None, "page_size", |r| r.get(0))?;
        let pages = (budget.disk_bytes / page_size.max(512) as u64).max(16);
        guarded
            .conn
            .pragma_update(None, "max_page_count", pages as i64)?;
        let deadline = guarded.arm(budget.deadline);
        let meter = Arc::new(Meter {
            steps_left: AtomicU64::new(budget.max_steps),
            deadline,
        });
        let watched = Arc::clone(&meter);
        (guarded.conn).progress_handler(STEP_INTERVAL, Some(move || watched.exhausted()))?;
        let costing = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&costing);
        (guarded.conn).authorizer(Some(move |context: AuthContext<'_>| {
            match (flag.load(Ordering::Relaxed), context.action) {
                (true, AuthAction::Transaction { .. } | AuthAction::Savepoint { .. }) => {
                    Authorization::Deny
                }
                _ => authorize(context),
            }
        }))?;
        Ok(Session {
            guarded,
            meter,
            profile,
            disk_bytes: budget.disk_bytes,
            writes: Cell::new(0),
            costing,
        })
    }

    /// The connection, for sqlgate's own checks.
    pub fn connection(&self) -> &Connection {
        &self.guarded.conn
    }

    /// The item's deadline, nanoseconds on `now_nanos`' clock.
    pub fn deadline(&self) -> u64 {
        self.meter.deadline
    }

    /// What is left of the item's budget, for a second connection to the same copy.
    pub fn remaining(&self) -> Budget {
        let left = self.meter.deadline.saturating_sub(now_nanos());
        Budget {
            deadline: std::time::Duration::from_nanos(left),
            max_steps: self.meter.steps_left.load(Ordering::Relaxed),
            disk_bytes: self.disk_bytes,
        }
    }

    /// How many statements that SQLite does not call read-only (`sqlite3_stmt_readonly`: any
    /// change, TEMP objects and failed attempts included) this session has run so far.
    pub fn writes(&self) -> u64 {
        self.writes.get()
    }

    /// Whether every statement of `sqls` is read-only as SQLite judges it, prepared in order on
    /// the current schema (nothing runs); a statement that does not prepare is not.
    pub fn reads_only(&self, sqls: &[String]) -> bool {
        let conn = &self.guarded.conn;
        sqls.iter().all(|sql| {
            conn.prepare(sql)
                .is_ok_and(|statement| statement.readonly())
        })
    }

    /// An error when the item's deadline or step budget is spent.
    pub fn check_budget(&self) -> Result<(), Stopped> {
        self.stopped().map_or(Ok(()), Err)
    }

    /// The sound profile's plan cost of `sqls`: the virtual-machine steps they take, run inside a
    /// savepoint that is rolled back (deterministic for a given file; an error costs nothing
    /// more). A statement of transaction control does not prepare while they run (so none ends
    /// the savepoint, or nests one of the same name that outlives it: red team round 27, win C),
    /// and a transaction still open afterwards is rolled back. Sound profile only: the official
    /// SQLite evaluator has no such helper in its tests.
    pub fn cost(&self, sqls: &[String]) -> Result<u64, Stopped> {
        let conn = &self.guarded.conn;
        let _ = conn.execute_batch("SAVEPOINT sqlgate_cost");
        self.costing.store(true, Ordering::Relaxed);
        let steps = sqls.iter().map(|sql| steps_of(conn, sql)).sum();
        self.costing.store(false, Ordering::Relaxed);
        let _ = conn.execute_batch("ROLLBACK TO sqlgate_cost; RELEASE sqlgate_cost");
        if !conn.is_autocommit() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        self.check_budget().map(|()| steps)
    }

    /// Whether the item's deadline or step budget is spent.
    fn stopped(&self) -> Option<Stopped> {
        if now_nanos() >= self.meter.deadline {
            return Some(Stopped("the item's deadline passed".into()));
        }
        if self.meter.steps_left.load(Ordering::Relaxed) < STEP_INTERVAL as u64 {
            return Some(Stopped("the item's step budget is spent".into()));
        }
        None
    }

    /// The statements in order, stopping at the first error (the official `execute_queries`).
    pub fn execute_queries(&self, sqls: &[String]) -> Result<Ran, Stopped> {
        self.execute_noting(sqls, None)
    }

    /// [`Session::execute_queries`], each statement's rows or error noted in `notes` when given
    /// (the gold-effect comparison reads every statement a test case may run alone).
    pub fn execute_noting(
        &self,
        sqls: &[String],
        mut notes: Option<&mut Vec<String>>,
    ) -> Result<Ran, Stopped> {
        let mut ran = Ran::default();
        for (i, sql) in sqls.iter().enumerate() {
            let result = self.perform(sql);
            if let Some(notes) = notes.as_deref_mut() {
                notes.push(match &result {
                    Ok(rows) => format!("{rows:?}"),
                    Err(error) => format!("{} error", error.class),
                });
            }
            match result {
                Ok(rows) => ran.rows = Some(rows),
                Err(error) => {
                    if let Some(stop) = self.stopped() {
                        return Err(stop);
                    }
                    let timeout = self.profile.python_semantics() && counts_as_timeout(&error);
                    ran.timeout = timeout;
                    ran.exec_error = !timeout;
                    ran.message = format!(
                        "{} executing query {}: {}",
                        error.class,
                        i + 1,
                        error.message
                    );
                    break;
                }
            }
        }
        Ok(ran)
    }

    /// One statement as the official `perform_query_on_sqlite_databases` runs it: `SELECT` /
    /// `WITH` fetched without a commit; anything else committed, then fetched. Under the
    /// official profile a data-changing statement that returns rows fails as Python's `sqlite3`
    /// makes it fail (its commit comes while the statement is still in progress).
    pub fn perform(&self, sql: &str) -> Result<Rows, StatementError> {
        let conn = &self.guarded.conn;
        let lower = sql.trim().to_lowercase();
        let reads = lower.starts_with("select") || lower.starts_with("with");
        let result = if reads {
            run_statement(conn, sql, (MAX_ROWS, false), &self.writes)
        } else {
            self.perform_change(sql)
        };
        if result.is_err() && !conn.is_autocommit() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        result
    }

    fn perform_change(&self, sql: &str) -> Result<Rows, StatementError> {
        let conn = &self.guarded.conn;
        // Python's `sqlite3` opens a transaction before a statement whose text, after leading
        // whitespace, starts with one of these words.
        let start = sql
            .trim_start_matches([' ', '\t', '\n', '\r'])
            .to_lowercase();
        let python_dml = ["insert", "update", "delete", "replace"]
            .iter()
            .any(|word| start.starts_with(word));
        let official = self.profile.python_semantics();
        if official && python_dml && conn.is_autocommit() {
            conn.execute_batch("BEGIN").map_err(statement_error)?;
        }
        let limits = (MAX_OTHER_ROWS, official && python_dml);
        let rows = run_statement(conn, sql, limits, &self.writes)?;
        if !conn.is_autocommit() {
            conn.execute_batch("COMMIT").map_err(statement_error)?;
        }
        Ok(rows)
    }
}

/// Runs one statement (Python's one-statement rule first), keeping at most `most` rows (a
/// `SELECT` is cut there; any other statement past it is stopped). With `fail_on_row`, a first
/// row is the official commit-while-in-progress error. A statement SQLite does not call
/// read-only adds one to `writes` before it runs.
fn run_statement(
    conn: &Connection,
    sql: &str,
    (most, fail_on_row): (usize, bool),
    writes: &Cell<u64>,
) -> Result<Rows, StatementError> {
    if sql.contains('\0') {
        return Err(programming("the query contains a null character"));
    }
    let mut batch = rusqlite::Batch::new(conn, sql);
    let Some(mut statement) = batch.next().map_err(statement_error)? else {
        return Ok(Vec::new());
    };
    if crate::engine::sqlite::more_than_one_statement(conn, sql) {
        return Err(programming("You can only execute one statement at a time."));
    }
    if !statement.readonly() {
        writes.set(writes.get() + 1);
    }
    let width = statement.column_count();
    let mut rows = statement.raw_query();
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(statement_error)? {
        if fail_on_row {
            return Err(StatementError {
                class: "OperationalError",
                message: "cannot commit transaction - SQL statements in progress".into(),
            });
        }
        if out.len() == most {
            if most == MAX_ROWS {
                break;
            }
            return Err(programming(
                "the statement returned more rows than the row budget",
            ));
        }
        let values = (0..width)
            .map(|i| row.get::<_, Value>(i))
            .collect::<rusqlite::Result<Vec<Value>>>()
            .map_err(statement_error)?;
        out.push(values);
    }
    Ok(out)
}

fn programming(message: &str) -> StatementError {
    StatementError {
        class: "ProgrammingError",
        message: message.into(),
    }
}

/// The class Python's `sqlite3` gives an SQLite error code, with SQLite's text.
fn statement_error(error: rusqlite::Error) -> StatementError {
    use rusqlite::ffi::ErrorCode as Code;
    let message = match &error {
        rusqlite::Error::SqliteFailure(_, Some(text)) => text.clone(),
        rusqlite::Error::SqlInputError { msg, .. } => msg.clone(),
        other => other.to_string(),
    };
    let class = match error.sqlite_error_code() {
        Some(Code::InternalMalfunction | Code::NotFound) => "InternalError",
        Some(Code::OutOfMemory) => "MemoryError",
        Some(Code::DatabaseCorrupt | Code::AuthorizationForStatementDenied) => "DatabaseError",
        Some(Code::TooBig) => "DataError",
        Some(Code::ConstraintViolation | Code::TypeMismatch) => "IntegrityError",
        Some(Code::ApiMisuse | Code::ParameterOutOfRange) => "InterfaceError",
        Some(_) => "OperationalError",
        None => "ProgrammingError",
    };
    StatementError { class, message }
}

/// The official classification: an `OperationalError` whose text names a lock, a timeout or a
/// skipped query is a timeout (`no such table: timeout_orders` included).
fn counts_as_timeout(error: &StatementError) -> bool {
    let text = error.message.to_lowercase();
    error.class == "OperationalError"
        && ["database is locked", "timeout", "complex query skipped"]
            .iter()
            .any(|word| text.contains(word))
}

/// The virtual-machine steps `sql` takes on `conn`, its rows read and dropped; none when it does
/// not prepare.
fn steps_of(conn: &Connection, sql: &str) -> u64 {
    let Ok(mut statement) = conn.prepare(sql) else {
        return 0;
    };
    let mut rows = statement.raw_query();
    while let Ok(Some(_)) = rows.next() {}
    drop(rows);
    statement.get_status(rusqlite::StatementStatus::VmStep) as u64
}

/// What a statement on an item's copy may do: anything inside the copy, nothing that reaches
/// another file (ATTACH, and VACUUM INTO, which attaches its target), loads code, or changes a
/// setting through a PRAGMA outside the read-only allowlist.
fn authorize(context: AuthContext<'_>) -> Authorization {
    match context.action {
        AuthAction::Attach { .. }
        | AuthAction::Detach { .. }
        | AuthAction::CreateVtable { .. }
        | AuthAction::DropVtable { .. } => Authorization::Deny,
        AuthAction::Function { function_name } => {
            match function_name.eq_ignore_ascii_case("load_extension") {
                true => Authorization::Deny,
                false => Authorization::Allow,
            }
        }
        AuthAction::Pragma { pragma_name, .. } => {
            match ALLOWED_PRAGMAS
                .iter()
                .any(|allowed| pragma_name.eq_ignore_ascii_case(allowed))
            {
                true => Authorization::Allow,
                false => Authorization::Deny,
            }
        }
        _ => Authorization::Allow,
    }
}

/// A value as the test-case runner reads it: JSON numbers and strings, `{"$f": ...}` for a
/// float JSON cannot hold, `{"$b": hex}` for a blob.
pub fn value_json(value: &Value) -> serde_json::Value {
    use serde_json::json;
    match value {
        Value::Null => serde_json::Value::Null,
        Value::Integer(i) => json!(i),
        Value::Real(f) if f.is_finite() => json!(f),
        Value::Real(f) => json!({ "$f": f.to_string() }),
        Value::Text(text) => json!(text),
        Value::Blob(bytes) => {
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            json!({ "$b": hex })
        }
    }
}

/// Rows as JSON (see [`value_json`]).
pub fn rows_json(rows: &Option<Rows>) -> serde_json::Value {
    match rows {
        None => serde_json::Value::Null,
        Some(rows) => rows
            .iter()
            .map(|row| row.iter().map(value_json).collect::<serde_json::Value>())
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(dir: &Path, profile: Profile) -> Session {
        let path = dir.join("item.sqlite");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE t(a INTEGER PRIMARY KEY)")
            .unwrap();
        drop(conn);
        Session::open(&path, &Budget::default(), profile).unwrap()
    }

    #[test]
    fn schema_pragmas_run_and_every_reach_outside_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let session = session(dir.path(), Profile::Official);
        for allowed in [
            "PRAGMA table_info(t)",
            "SELECT name FROM pragma_table_info('t')",
        ] {
            assert!(session.perform(allowed).is_ok(), "{allowed}");
        }
        let outside = dir.path().join("out.sqlite").display().to_string();
        let refused = [
            ("VACUUM".to_string(), "authorization denied"),
            (format!("VACUUM INTO '{outside}'"), "authorization denied"),
            (format!("ATTACH '{outside}' AS o"), "not authorized"),
            ("PRAGMA journal_mode = OFF".into(), "not authorized"),
            ("SELECT load_extension('x')".into(), "not authorized"),
        ];
        for (sql, says) in refused {
            let error = session.perform(&sql).unwrap_err();
            assert!(error.message.contains(says), "{sql}: {error:?}");
        }
        assert!(!dir.path().join("out.sqlite").exists());
    }

    /// Red team round 27, win C: what the costed statements make is rolled back whatever
    /// transaction control they hold (a nested savepoint of sqlgate's name, a COMMIT, a
    /// RELEASE), and the connection is back in autocommit; the statements still cost steps.
    #[test]
    fn a_cost_leaves_nothing_behind_whatever_transaction_control_it_runs() {
        let dir = tempfile::tempdir().unwrap();
        let session = session(dir.path(), Profile::Sound);
        let levers = [
            "SAVEPOINT sqlgate_cost",
            "COMMIT",
            "RELEASE sqlgate_cost",
            "BEGIN",
            "END",
        ];
        for lever in levers {
            let sqls = [
                "CREATE TEMP VIEW v AS SELECT 1 AS x".to_string(),
                "INSERT INTO t VALUES (7)".to_string(),
                lever.to_string(),
                "INSERT INTO t VALUES (8)".to_string(),
            ];
            let steps = session.cost(&sqls).unwrap();
            assert!(steps > 0, "{lever}");
            let conn = session.connection();
            assert!(conn.is_autocommit(), "{lever}");
            let rows = session.perform("SELECT COUNT(*) FROM t").unwrap();
            assert_eq!(rows, vec![vec![Value::Integer(0)]], "{lever}");
            let views = "SELECT COUNT(*) FROM temp.sqlite_schema WHERE name = 'v'";
            let rows = session.perform(views).unwrap();
            assert_eq!(rows, vec![vec![Value::Integer(0)]], "{lever}");
        }
        let outside = session.perform("SAVEPOINT s");
        assert!(
            outside.is_ok(),
            "outside a cost a savepoint runs: {outside:?}"
        );
    }

    #[test]
    fn returning_fails_as_python_makes_it_fail_only_under_the_official_profile() {
        let dir = tempfile::tempdir().unwrap();
        for (profile, fails) in [(Profile::Official, true), (Profile::Sound, false)] {
            let session = session(dir.path(), profile);
            let ran = session
                .execute_queries(&["INSERT INTO t VALUES (1) RETURNING a".into()])
                .unwrap();
            assert_eq!(ran.exec_error, fails, "{ran:?}");
            let count = session.perform("SELECT COUNT(*) FROM t").unwrap();
            assert_eq!(count, vec![vec![Value::Integer(i64::from(!fails))]]);
            std::fs::remove_file(dir.path().join("item.sqlite")).unwrap();
        }
    }

    #[test]
    fn an_error_naming_a_timeout_is_a_timeout_only_officially() {
        let dir = tempfile::tempdir().unwrap();
        for (profile, timeout) in [(Profile::Official, true), (Profile::Sound, false)] {
            let session = session(dir.path(), profile);
            let ran = (session.execute_queries(&["SELECT * FROM timeout_orders".into()])).unwrap();
            assert_eq!(
                (ran.timeout, ran.exec_error),
                (timeout, !timeout),
                "{ran:?}"
            );
            std::fs::remove_file(dir.path().join("item.sqlite")).unwrap();
        }
    }
}
