//! The MySQL / MariaDB engine (the `mysql` crate, TLS by the URL's `ssl-mode`: `tls.rs`).
//!
//! One item: the text must be a query (first word SELECT, WITH, VALUES or TABLE, no executable
//! comment); it is prepared (the server refuses a multi-statement string, and a SELECT ... INTO
//! OUTFILE / DUMPFILE / @variable has no result columns and is refused), then run in
//! `START TRANSACTION READ ONLY` on a session that is itself read-only, with the server's
//! statement timeout (MariaDB `max_statement_time`, MySQL `max_execution_time`), and streamed in
//! the text protocol PyMySQL reads, converted per column type as PyMySQL converts them; the
//! transaction is always rolled back. At the client deadline, or when the result passes its
//! caps, a second connection (with the same TLS) sends `KILL QUERY`.

use crate::engine::exec::{Engine, ExecError, Limits, ResultTable, SizeGuard};
use crate::engine::server::catalog::mysql_reads_rows_only;
use crate::engine::server::check::{mysql_functions_allowed, mysql_query_only};
use crate::engine::server::convert::{convert, Kind};
use crate::engine::server::data_digest::{self, DataDigests};
use crate::engine::server::structure;
use crate::engine::server::{
    check_tables, enforce_role, retrying, single_statement, stopped_by_deadline, tls, Pool,
    ServerSettings, StartError, Watchdog,
};
use crate::engine::value::{Row, Value};
use crate::input::config::Layout;
use mysql::consts::ColumnType;
use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder};
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tls::MysqlMode;

/// Time added to the query's timeout before the client kills it.
const CLIENT_GRACE: Duration = Duration::from_millis(250);
/// The character set number of binary strings (PyMySQL returns them as `bytes`).
const BINARY_CHARSET: u16 = 63;
/// Server errors that mean the query was stopped by a timeout or `KILL QUERY`.
const STOPPED: [u16; 3] = [1317, 1969, 3024];
/// A write in a read-only transaction.
const READ_ONLY_TRANSACTION: u16 = 1792;
/// `KILL` of a session that no longer exists.
const UNKNOWN_THREAD: u16 = 1094;
/// `ER_QUERY_INTERRUPTED`: a `KILL QUERY`, sqlgate's or someone else's.
const QUERY_INTERRUPTED: u16 = 1317;
/// Server errors of the server or the session, not the query: the connection killed (1927),
/// a shutdown (1053, 1077-1080), aborted or broken connections (1152-1161), too many
/// connections (1040, 1203), a lock wait timeout or deadlock (1205, 1213), the client's lost
/// connection (2006, 2013).
const ENGINE_FAULTS: &[u16] = &[
    1040, 1053, 1077, 1078, 1079, 1080, 1152, 1153, 1154, 1155, 1156, 1157, 1158, 1159, 1160, 1161,
    1203, 1205, 1213, 1927, 2006, 2013,
];
/// Time between two `KILL QUERY`s of a query past its deadline.
const KILL_EVERY: Duration = Duration::from_millis(200);
/// Time after the first `KILL QUERY` at which the client stops waiting, ends the session with
/// `KILL CONNECTION` and abandons it: a query ends, from sqlgate's side, within `timeout_ms` +
/// this + [`CLIENT_GRACE`].
const ABANDON_AFTER: Duration = Duration::from_millis(500);

/// How to create the read-only user the start-up check asks for.
pub const READ_ONLY_ROLE: &str = "  CREATE USER 'sqlgate_reader'@'%' IDENTIFIED BY '<password>';\n  GRANT SELECT, LOCK TABLES ON <database>.* TO 'sqlgate_reader'@'%';";

/// A MySQL or MariaDB server holding the benchmark's databases.
#[derive(Debug)]
pub struct MysqlEngine {
    opts: Opts,
    mode: MysqlMode,
    settings: ServerSettings,
    mariadb: bool,
    pins: structure::MysqlPins,
    pool: Pool<Conn>,
    watchdog: Watchdog,
    killer: Killer,
    /// The session locking every benchmark table for reading while the run reads them
    /// ([`Engine::hold_data`]), with its id.
    held: Mutex<Option<(Conn, u32)>>,
    /// What the server showed when the run claimed it ([`Engine::claim_server`]).
    claim: Mutex<Option<super::exclusive::Claim>>,
}

/// The second connection that sends `KILL QUERY`, opened on first use.
#[derive(Debug, Clone)]
struct Killer {
    opts: Opts,
    mode: MysqlMode,
    conn: Arc<Mutex<Option<Conn>>>,
}

impl Killer {
    /// Stops whatever the session `connection_id` is running.
    fn kill(&self, connection_id: u32) {
        self.send(&format!("KILL QUERY {connection_id}"));
    }

    /// Ends the session `connection_id` (one of this run's own, so the same user may): the
    /// server closes its connection even while its thread computes on.
    fn kill_connection(&self, connection_id: u32) -> bool {
        self.send(&format!("KILL CONNECTION {connection_id}"))
    }

    /// Sends one `KILL` statement on the killer's connection, opened (on no database, so that
    /// a database the user cannot open does not lose the kill) or reopened as needed.
    fn send(&self, statement: &str) -> bool {
        let mut conn = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        for _ in 0..2 {
            if conn.is_none() {
                let opts = OptsBuilder::from_opts(self.opts.clone()).db_name(None::<String>);
                *conn = tls::mysql_connect(opts.into(), self.mode).ok();
            }
            match conn.as_mut().map(|c| c.query_drop(statement)) {
                Some(Ok(())) => return true,
                // The session was already gone: nothing to stop.
                Some(Err(mysql::Error::MySqlError(e))) if e.code == UNKNOWN_THREAD => return true,
                _ => *conn = None,
            }
        }
        false
    }
}

impl MysqlEngine {
    /// Connects, checks every db_id's tables and the role, and keeps the connection for reuse.
    pub fn start(settings: ServerSettings, limits: &Limits) -> Result<Self, StartError> {
        let tls::MysqlTarget { opts, mode } = tls::mysql_target(&settings.url).map_err(|e| {
            StartError::new(format!(
                "`dataset.engine.url_env`: the environment variable `{}`: {e}",
                settings.url_env
            ))
        })?;
        // A backstop for a connection whose query was abandoned: no read or write on it waits
        // for ever, whatever the server does.
        let opts: Opts = OptsBuilder::from_opts(opts)
            .read_timeout(Some(
                limits.timeout + crate::engine::server::CONNECT_TIMEOUT,
            ))
            .write_timeout(Some(crate::engine::server::CONNECT_TIMEOUT))
            .into();
        let mut engine = MysqlEngine {
            killer: Killer {
                opts: opts.clone(),
                mode,
                conn: Arc::new(Mutex::new(None)),
            },
            opts,
            mode,
            pool: Pool::new(settings.connections),
            settings,
            mariadb: false,
            pins: structure::MysqlPins::default(),
            watchdog: Watchdog::start(),
            held: Mutex::new(None),
            claim: Mutex::default(),
        };
        for database in engine.pool_keys() {
            let conn = super::retrying_start(|| engine.checked_session(&database, limits))?;
            engine.pool.give_back(&database, conn);
        }
        Ok(engine)
    }

    /// A new session on `database`, set up and with the database checked: the server's kind
    /// and pins read on it first.
    fn checked_session(&mut self, database: &str, limits: &Limits) -> Result<Conn, StartError> {
        let mut conn = self.open(database)?;
        let version: String = conn
            .query_first("SELECT VERSION()")
            .map_err(|e| start_error("`dataset.engine`: cannot read the server's version", &e))?
            .unwrap_or_default();
        self.mariadb = version.to_ascii_lowercase().contains("mariadb");
        self.pins = structure::mysql_pins(&mut conn).map_err(|e| {
            start_error(
                "`dataset.engine`: cannot read the server's session variables",
                &e,
            )
        })?;
        self.set_up(&mut conn, limits)?;
        self.check_database(&mut conn, database)?;
        Ok(conn)
    }

    /// A new connection to `database` (the URL's when empty).
    fn open(&self, database: &str) -> Result<Conn, StartError> {
        let mut builder = OptsBuilder::from_opts(self.opts.clone());
        if !database.is_empty() {
            builder = builder.db_name(Some(database));
        }
        tls::mysql_connect(builder.into(), self.mode).map_err(|e| {
            let context = format!(
                "`dataset.engine.url_env`: cannot connect to the MySQL server in `{}`{} (`ssl-mode={}`)",
                self.settings.url_env,
                if database.is_empty() {
                    String::new()
                } else {
                    format!(" (database `{database}`)")
                },
                self.mode.as_str(),
            );
            start_error(&context, &e)
        })
    }

    /// The session's read-only mode, timeout and character set.
    fn set_up(&self, conn: &mut Conn, limits: &Limits) -> Result<(), StartError> {
        set_up(conn, (self.mariadb, &self.pins), limits)
            .map_err(|e| start_error("`dataset.engine`: cannot set up the session", &e))
    }

    /// The tables of every db_id this database holds are there, the user is not privileged,
    /// nothing but the rows decides a query's result ([`structure::mysql_levers`]), and no
    /// event of the server's scheduler can write meanwhile ([`super::writers`]).
    fn check_database(&self, conn: &mut Conn, database: &str) -> Result<(), StartError> {
        let query_error = |e: mysql::Error| start_error(super::START_UP_CHECK, &e);
        let present: Vec<String> = conn
            .query(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()",
            )
            .map_err(query_error)?;
        check_tables(&self.settings, database, &present)?;
        let report = super::role::mysql(conn, &self.run_databases()).map_err(query_error)?;
        enforce_role(&report, &self.settings, READ_ONLY_ROLE)?;
        let levers = structure::mysql_levers(conn).map_err(query_error)?;
        structure::refuse(&levers, database)?;
        let scheduler_on = super::writers::mysql_scheduler_on(conn).map_err(|e| {
            let context = format!(
                "{}: cannot read the event scheduler's state",
                super::START_UP_CHECK
            );
            start_error(&context, &e)
        })?;
        super::writers::refuse_mysql_scheduler(scheduler_on)
    }

    /// A pooled or (`fresh`, or none idle) new, set-up connection to the item's database; a
    /// connection that cannot be opened is an engine fault.
    fn session(&self, database: &str, limits: &Limits, fresh: bool) -> Result<Conn, ExecError> {
        if !fresh {
            if let Some(conn) = self.pool.take(database) {
                return Ok(conn);
            }
        }
        let fault = |e: StartError| ExecError::Fault(e.message);
        let mut conn = self.open(database).map_err(fault)?;
        // The server's `init_connect` ran at login, before any pin: what it left (a user
        // variable) is cleared as a pooled session's is, before the first query.
        conn.reset().map_err(|e| {
            ExecError::Fault(format!("cannot reset a new session: {}", error_text(&e)))
        })?;
        self.set_up(&mut conn, limits).map_err(fault)?;
        Ok(conn)
    }

    fn database_of(&self, db: &Path) -> String {
        match self.settings.layout {
            Layout::Shared => String::new(),
            Layout::PerDbId => db.to_string_lossy().into_owned(),
        }
    }

    /// The databases the run uses: the URL's, or each db_id's.
    fn run_databases(&self) -> BTreeSet<String> {
        match self.settings.layout {
            Layout::Shared => self
                .opts
                .get_db_name()
                .into_iter()
                .map(String::from)
                .collect(),
            Layout::PerDbId => self.settings.tables.keys().cloned().collect(),
        }
    }

    /// Refuses a text that reads beyond the item's rows ([`mysql_reads_rows_only`]): the item
    /// runs in its db_id's database, or the URL's, and the run's other databases are not its.
    fn reads_rows_only(&self, db: &Path, statement: &str) -> Result<(), ExecError> {
        let item = db.to_string_lossy();
        let (database, others) = match self.settings.layout {
            Layout::Shared => (
                self.opts.get_db_name().unwrap_or_default().to_string(),
                BTreeSet::new(),
            ),
            Layout::PerDbId => {
                let others = self.settings.tables.keys();
                let others = others.filter(|d| **d != *item).map(|d| d.to_lowercase());
                (item.to_string(), others.collect())
            }
        };
        let schema = self.settings.schema_words_of(db);
        mysql_reads_rows_only(statement, schema, &database, &others)
    }
}

impl Engine for MysqlEngine {
    fn run(
        &self,
        db: &Path,
        sql: &str,
        limits: &Limits,
        with_columns: bool,
        _most_rows: usize,
    ) -> Result<ResultTable, ExecError> {
        let statement = single_statement(sql)?;
        mysql_query_only(statement)?;
        mysql_functions_allowed(statement)?;
        self.reads_rows_only(db, statement)?;
        let database = self.database_of(db);
        retrying(|fresh| self.attempt(&database, statement, limits, with_columns, fresh))
    }

    fn column_names(
        &self,
        db: &Path,
        sql: &str,
        limits: &Limits,
    ) -> Result<Vec<String>, ExecError> {
        let statement = single_statement(sql)?;
        mysql_query_only(statement)?;
        mysql_functions_allowed(statement)?;
        self.reads_rows_only(db, statement)?;
        let database = self.database_of(db);
        retrying(|fresh| {
            let mut conn = self.session(&database, limits, fresh)?;
            let fired = AtomicBool::new(false);
            let result = prepared_columns(&mut conn, statement, limits, &fired)
                .map(|columns| columns.iter().map(|(name, _)| name.clone()).collect());
            if !matches!(result, Err(ExecError::Fault(_))) {
                self.pool.give_back(&database, conn);
            }
            result
        })
    }

    fn hold_data(&self) -> Result<Option<DataDigests>, String> {
        // On no database: the URL's may be one the user cannot open (`per_db_id`), and the
        // tables are named with their schema.
        let opts = OptsBuilder::from_opts(self.opts.clone()).db_name(None::<String>);
        let mut conn = tls::mysql_connect(opts.into(), self.mode).map_err(|e| {
            format!(
                "cannot open the session that locks the benchmark's tables: {}",
                error_text(&e)
            )
        })?;
        let lock_wait = data_digest::LOCK_WAIT.as_secs();
        let id = super::writers::mysql_lock_tables(&mut conn, &self.run_databases(), lock_wait)
            .map_err(|e| {
                format!(
                    "cannot lock the benchmark's tables for reading (the read-only user needs \
                     `LOCK TABLES` on the run's databases, docs/SECURITY.md): {}",
                    error_text(&e)
                )
            })?;
        *self.held.lock().unwrap_or_else(|e| e.into_inner()) = Some((conn, id));
        data_digest::mysql_digests(&self.settings.url, &self.pool_keys()).map(Some)
    }

    fn claim_server(&self) -> Result<(), String> {
        // The start-up check's idle sessions close: the hold's is then the run's only one.
        self.close_idle();
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let Some((conn, _)) = held.as_mut() else {
            return Ok(());
        };
        let claim = super::exclusive::mysql_claim(conn)?;
        *self.claim.lock().unwrap_or_else(|e| e.into_inner()) = Some(claim);
        Ok(())
    }

    fn check_claim(&self) -> Result<(), String> {
        let Some(claim) = self.claim.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            return Ok(());
        };
        // Scoring is over: no session of the run but the hold's stays open after it (a later
        // run on the same server claims it in turn).
        self.close_idle();
        match self.held.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
            Some((conn, _)) => super::exclusive::mysql_check(conn, &claim),
            None => {
                Err("the session locking the benchmark's tables ended before scoring did".into())
            }
        }
    }

    fn release_data(&self) -> Result<(), String> {
        match self.held.lock().unwrap_or_else(|e| e.into_inner()).take() {
            Some((mut conn, id)) => super::writers::mysql_unlock(&mut conn, id),
            None => Ok(()),
        }
    }
}

impl MysqlEngine {
    /// The databases the run's sessions connect to, as the pool keys them: the URL's (empty)
    /// or each db_id's.
    fn pool_keys(&self) -> Vec<String> {
        match self.settings.layout {
            Layout::Shared => vec![String::new()],
            Layout::PerDbId => self.settings.tables.keys().cloned().collect(),
        }
    }

    /// Closes the run's idle sessions and the killer's connection.
    fn close_idle(&self) {
        for database in self.pool_keys() {
            while self.pool.take(&database).is_some() {}
        }
        *self.killer.conn.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Runs one query on a session of `database` on a thread of its own, which the worker waits
    /// for until the hard deadline: `KILL QUERY` from the deadline on, re-sent every
    /// [`KILL_EVERY`]; at the hard deadline `KILL CONNECTION`, and the session is abandoned.
    /// The thread then resets the session (rollback, `COM_RESET_CONNECTION`, the settings) and
    /// gives it back when the query ended cleanly.
    fn attempt(
        &self,
        database: &str,
        statement: &str,
        limits: &Limits,
        with_columns: bool,
        fresh: bool,
    ) -> Result<ResultTable, ExecError> {
        let conn = self.session(database, limits, fresh)?;
        let id = conn.connection_id();
        let deadline = Instant::now() + limits.timeout + CLIENT_GRACE;
        // Set when a `KILL QUERY` was sent (deadline or size cap): it may land after the query
        // ended, so the connection is not reused.
        let fired = Arc::new(AtomicBool::new(false));
        let _armed: Vec<_> = (0..=(ABANDON_AFTER.as_millis() / KILL_EVERY.as_millis()) as u32)
            .map(|n| {
                let (killer, flag) = (self.killer.clone(), Arc::clone(&fired));
                self.watchdog.arm(deadline + KILL_EVERY * n, move || {
                    flag.store(true, Ordering::SeqCst);
                    killer.kill(id);
                })
            })
            .collect();
        let (results, result) = std::sync::mpsc::sync_channel(1);
        let (sessions, session) = std::sync::mpsc::sync_channel(1);
        let job = Job {
            statement: statement.to_string(),
            limits: *limits,
            with_columns,
            mariadb: self.mariadb,
            pins: self.pins.clone(),
            fired: Arc::clone(&fired),
            killer: self.killer.clone(),
        };
        let spawned = std::thread::Builder::new()
            .name("sqlgate-mysql-query".into())
            .spawn(move || job.run(conn, &results, &sessions));
        if let Err(e) = spawned {
            return Err(ExecError::Fault(format!(
                "cannot start the query's thread: {e}"
            )));
        }
        let hard = deadline + ABANDON_AFTER;
        let left = || hard.saturating_duration_since(Instant::now());
        let outcome = match result.recv_timeout(left()) {
            Ok(Ok((table, size))) => {
                size.finish();
                Ok(table)
            }
            Ok(Err(error)) => Err(error),
            Err(_) => {
                fired.store(true, Ordering::SeqCst);
                self.abandon(id, limits);
                return Err(ExecError::Timeout(limits.timeout.as_millis()));
            }
        };
        // The session comes back once reset, if it ended cleanly and in time.
        if let Ok(conn) = session.recv_timeout(left()) {
            self.pool.give_back(database, conn);
        }
        stopped_by_deadline(outcome, fired.load(Ordering::SeqCst), limits)
    }

    /// Ends, from the killer's connection and on a thread of its own (the worker does not wait),
    /// a session whose query did not stop at its hard deadline, and reports it.
    fn abandon(&self, id: u32, limits: &Limits) {
        let killer = self.killer.clone();
        let timeout_ms = limits.timeout.as_millis();
        let _ = std::thread::Builder::new()
            .name("sqlgate-kill".into())
            .spawn(move || {
                let killed = killer.kill_connection(id);
                crate::util::log::note(&format!(
                    "warning: a MariaDB/MySQL session (id {id}) did not stop at its {timeout_ms} ms deadline despite KILL QUERY; sqlgate abandoned it and {}",
                    match killed {
                        true => "ended it with KILL CONNECTION (its thread may compute on until it next checks for a kill)",
                        false => "could not end it: it may still be running",
                    }
                ));
            });
    }
}

/// One query sent to its own thread, with what that thread needs to reset the session after.
struct Job {
    statement: String,
    limits: Limits,
    with_columns: bool,
    mariadb: bool,
    pins: structure::MysqlPins,
    fired: Arc<AtomicBool>,
    killer: Killer,
}

/// A finished result and its charge, finished ([`SizeGuard::finish`]) on the worker's thread,
/// whose item keeps it.
type Finished = (ResultTable, SizeGuard);

impl Job {
    /// Runs the query and sends its result; then, when it ended cleanly (no kill sent, no
    /// fault, not cut short), resets the session and sends it back for the pool.
    fn run(
        self,
        mut conn: Conn,
        results: &std::sync::mpsc::SyncSender<Result<Finished, ExecError>>,
        sessions: &std::sync::mpsc::SyncSender<Conn>,
    ) {
        let timed = conn.query_drop(timeout_statement(self.mariadb, &self.limits));
        let result = timed.map_err(|e| classify(&e, &self.limits, &self.fired));
        let result = result.and_then(|()| {
            run_in_transaction(
                &mut conn,
                &self.statement,
                &self.limits,
                self.with_columns,
                &self.fired,
                &self.killer,
            )
        });
        let clean = !self.fired.load(Ordering::SeqCst)
            && !matches!(result, Err(ExecError::Fault(_) | ExecError::TooLarge(_)));
        // A worker that gave up waiting drops the result here, rows before their charge.
        if results.send(result).is_err() || !clean {
            return;
        }
        if reset(&mut conn, (self.mariadb, &self.pins), &self.limits) {
            let _ = sessions.send(conn);
        }
    }
}

/// Ends the item's transaction and resets the session to a new one's state
/// (`COM_RESET_CONNECTION`: user variables, session settings, `GET_LOCK` locks, temporary
/// tables, prepared statements) with its settings again; `false` when it is unusable.
fn reset(conn: &mut Conn, server: Flavour<'_>, limits: &Limits) -> bool {
    conn.query_drop("ROLLBACK").is_ok()
        && conn.reset().is_ok()
        && set_up(conn, server, limits).is_ok()
}

/// The session's read-only mode, timeout and character set, and the settings that change a
/// result, pinned as the data digests' session pins them ([`structure::mysql_pin`]), and on
/// MariaDB [`structure::MARIADB_PINS`].
fn set_up(
    conn: &mut Conn,
    (mariadb, pins): Flavour<'_>,
    limits: &Limits,
) -> Result<(), mysql::Error> {
    let timeout = match mariadb {
        true => format!(
            "{}, {}",
            timeout_statement(mariadb, limits),
            structure::MARIADB_PINS
        ),
        false => timeout_statement(mariadb, limits),
    };
    for statement in [
        "SET NAMES utf8mb4",
        "SET SESSION TRANSACTION READ ONLY",
        &timeout,
    ] {
        conn.query_drop(statement)?;
    }
    structure::mysql_pin(conn, pins)
}

/// The statement that sets the session's server-side time limit to `limits`' (MariaDB
/// `max_statement_time`, MySQL `max_execution_time`): run at set-up and again before each query,
/// whose limit may be an item's budget above the run's (`exec::with_item_budget`).
fn timeout_statement(mariadb: bool, limits: &Limits) -> String {
    match mariadb {
        true => format!(
            "SET SESSION max_statement_time = {}",
            limits.timeout.as_secs_f64().max(0.001)
        ),
        false => format!(
            "SET SESSION max_execution_time = {}",
            limits.timeout.as_millis().max(1)
        ),
    }
}

/// Whether the server is MariaDB, and how its sessions are pinned.
type Flavour<'a> = (bool, &'a structure::MysqlPins);

/// Prepares and runs one query in a read-only transaction and streams its rows; the result
/// comes with its charge, to be finished by the caller.
fn run_in_transaction(
    conn: &mut Conn,
    statement: &str,
    limits: &Limits,
    with_columns: bool,
    killed: &AtomicBool,
    killer: &Killer,
) -> Result<Finished, ExecError> {
    let classify = |e: mysql::Error| classify(&e, limits, killed);
    let prepared = prepared_columns(conn, statement, limits, killed)?;
    conn.query_drop("START TRANSACTION READ ONLY")
        .map_err(classify)?;
    let id = conn.connection_id();
    let started = Instant::now();
    let mut result = conn.query_iter(statement).map_err(classify)?;
    let kinds: Vec<Kind> = result.columns().as_ref().iter().map(kind_of).collect();
    if kinds.len() != prepared.len() {
        return Err(ExecError::Denied(
            "the statement's result changed between checks".into(),
        ));
    }
    // Declared before the rows so that, on an error, the rows are freed before their charge
    // is given back to the budget.
    let mut size = SizeGuard::new(limits);
    let mut rows = Vec::new();
    for row in result.by_ref() {
        let row = row.map_err(classify)?;
        let read = read_row(&row, &kinds, &mut size).and_then(|values| {
            rows.push(values);
            size.add_row()
        });
        if let Err(error) = read {
            killed.store(true, Ordering::SeqCst);
            killer.kill(id);
            return Err(error);
        }
    }
    // MariaDB's BENCHMARK() stopped by `max_statement_time` (or by `KILL QUERY`) returns its
    // row with no error: a query that ran for the whole timeout is a timeout, whatever it
    // returned (the official loop's `func_timeout` gives such a query no result either).
    if started.elapsed() >= limits.timeout || killed.load(Ordering::SeqCst) {
        return Err(ExecError::Timeout(limits.timeout.as_millis()));
    }
    let columns = match with_columns {
        true => prepared.into_iter().map(|(name, _)| name).collect(),
        false => Vec::new(),
    };
    Ok((ResultTable { columns, rows }, size))
}

/// The result columns (name, kind) of a prepared query; a statement without result columns
/// (`SELECT ... INTO OUTFILE`, `INTO @variable`) is refused.
fn prepared_columns(
    conn: &mut Conn,
    statement: &str,
    limits: &Limits,
    fired: &AtomicBool,
) -> Result<Vec<(String, Kind)>, ExecError> {
    let prepared = conn
        .prep(statement)
        .map_err(|e| classify(&e, limits, fired))?;
    let columns: Vec<(String, Kind)> = prepared
        .columns()
        .iter()
        .map(|c| (c.name_str().into_owned(), kind_of(c)))
        .collect();
    let _ = conn.close(prepared);
    if columns.is_empty() {
        return Err(ExecError::Denied(
            "the statement returns no result (only queries may run)".into(),
        ));
    }
    Ok(columns)
}

fn read_row(row: &mysql::Row, kinds: &[Kind], size: &mut SizeGuard) -> Result<Row, ExecError> {
    let mut values = Vec::with_capacity(kinds.len());
    for (i, kind) in kinds.iter().enumerate() {
        let value = match row.as_ref(i) {
            None | Some(mysql::Value::NULL) => Value::Null,
            Some(mysql::Value::Bytes(bytes)) => convert(*kind, bytes)?,
            Some(other) => convert(*kind, other.as_sql(true).trim_matches('\'').as_bytes())?,
        };
        size.add_value(&value);
        values.push(value);
    }
    Ok(values)
}

/// PyMySQL's conversion of a column type (`decoders` in `pymysql/converters.py`; text types
/// with the binary character set stay `bytes`).
fn kind_of(column: &mysql::Column) -> Kind {
    use ColumnType::*;
    match column.column_type() {
        MYSQL_TYPE_TINY | MYSQL_TYPE_SHORT | MYSQL_TYPE_LONG | MYSQL_TYPE_LONGLONG
        | MYSQL_TYPE_INT24 | MYSQL_TYPE_YEAR => Kind::Int,
        MYSQL_TYPE_FLOAT | MYSQL_TYPE_DOUBLE => Kind::Float,
        MYSQL_TYPE_DECIMAL | MYSQL_TYPE_NEWDECIMAL => Kind::Decimal,
        MYSQL_TYPE_DATE | MYSQL_TYPE_NEWDATE => Kind::MysqlDate,
        MYSQL_TYPE_DATETIME
        | MYSQL_TYPE_TIMESTAMP
        | MYSQL_TYPE_DATETIME2
        | MYSQL_TYPE_TIMESTAMP2 => Kind::MysqlDateTime,
        MYSQL_TYPE_TIME | MYSQL_TYPE_TIME2 => Kind::MysqlTime,
        MYSQL_TYPE_JSON => Kind::Text,
        MYSQL_TYPE_BIT => Kind::Bytes,
        _ if column.character_set() == BINARY_CHARSET => Kind::Bytes,
        _ => Kind::Text,
    }
}

/// A query stopped by sqlgate (its `KILL QUERY`, the server's statement timeout) is a timeout;
/// a `KILL QUERY` that was not sqlgate's, a killed or lost connection, a shutdown, a lock
/// conflict or any client-side failure is an engine fault ([`ExecError::Fault`], retried on a
/// fresh session, never a verdict); a write in the read-only transaction a refusal; anything
/// else the server's message.
fn classify(error: &mysql::Error, limits: &Limits, fired: &AtomicBool) -> ExecError {
    let ours = fired.load(Ordering::SeqCst);
    let message = || crate::engine::server::query_message(&error_text(error));
    let timeout = ExecError::Timeout(limits.timeout.as_millis());
    match error {
        mysql::Error::MySqlError(e) if e.code == QUERY_INTERRUPTED && !ours => {
            ExecError::Fault(message())
        }
        mysql::Error::MySqlError(e) if STOPPED.contains(&e.code) => timeout,
        mysql::Error::MySqlError(e) if e.code == READ_ONLY_TRANSACTION => {
            ExecError::Denied(message())
        }
        mysql::Error::MySqlError(e) if ENGINE_FAULTS.contains(&e.code) => match ours {
            true => timeout,
            false => ExecError::Fault(message()),
        },
        mysql::Error::MySqlError(_) => ExecError::Sql(message()),
        _ if ours => timeout,
        _ => ExecError::Fault(message()),
    }
}

/// A failure of a start-up session, after `context`: a fault to try again when the session was
/// killed, interrupted from outside or lost its connection (the server's error, or the socket's).
pub(super) fn start_error(context: &str, error: &mysql::Error) -> StartError {
    let fault = match error {
        mysql::Error::MySqlError(e) => {
            e.code == QUERY_INTERRUPTED || ENGINE_FAULTS.contains(&e.code)
        }
        mysql::Error::IoError(_) => true,
        _ => false,
    };
    StartError::new(format!("{context}: {}", error_text(error))).fault_when(fault)
}

fn error_text(error: &mysql::Error) -> String {
    match error {
        mysql::Error::MySqlError(e) => e.message.clone(),
        other => other.to_string(),
    }
}
