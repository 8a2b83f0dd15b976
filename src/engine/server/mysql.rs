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
use crate::engine::server::check::{mysql_functions_allowed, mysql_query_only};
use crate::engine::server::convert::{convert, Kind};
use crate::engine::server::{
    check_tables, enforce_role, single_statement, tls, Pool, ServerSettings, StartError, Watchdog,
};
use crate::engine::value::{Row, Value};
use crate::input::config::Layout;
use mysql::consts::ColumnType;
use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder};
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

/// How to create the read-only user the start-up check asks for.
pub const READ_ONLY_ROLE: &str = "  CREATE USER 'sqlgate_reader'@'%' IDENTIFIED BY '<password>';\n  GRANT SELECT ON <database>.* TO 'sqlgate_reader'@'%';";

/// A MySQL or MariaDB server holding the benchmark's databases.
#[derive(Debug)]
pub struct MysqlEngine {
    opts: Opts,
    mode: MysqlMode,
    settings: ServerSettings,
    mariadb: bool,
    pool: Pool<Conn>,
    watchdog: Watchdog,
    killer: Killer,
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
        let mut conn = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        if conn.is_none() {
            *conn = tls::mysql_connect(self.opts.clone(), self.mode).ok();
        }
        let sent = conn
            .as_mut()
            .map(|c| c.query_drop(format!("KILL QUERY {connection_id}")).is_ok());
        if sent != Some(true) {
            *conn = None;
        }
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
            watchdog: Watchdog::start(),
        };
        let databases: Vec<String> = match engine.settings.layout {
            Layout::Shared => vec![String::new()],
            Layout::PerDbId => engine.settings.tables.keys().cloned().collect(),
        };
        for database in databases {
            let mut conn = engine.open(&database)?;
            let version: String = conn
                .query_first("SELECT VERSION()")
                .ok()
                .flatten()
                .unwrap_or_default();
            engine.mariadb = version.to_ascii_lowercase().contains("mariadb");
            engine.set_up(&mut conn, limits)?;
            engine.check_database(&mut conn, &database)?;
            engine.pool.give_back(&database, conn);
        }
        Ok(engine)
    }

    /// A new connection to `database` (the URL's when empty).
    fn open(&self, database: &str) -> Result<Conn, StartError> {
        let mut builder = OptsBuilder::from_opts(self.opts.clone());
        if !database.is_empty() {
            builder = builder.db_name(Some(database));
        }
        tls::mysql_connect(builder.into(), self.mode).map_err(|e| {
            StartError::new(format!(
                "`dataset.engine.url_env`: cannot connect to the MySQL server in `{}`{} (`ssl-mode={}`): {}",
                self.settings.url_env,
                if database.is_empty() {
                    String::new()
                } else {
                    format!(" (database `{database}`)")
                },
                self.mode.as_str(),
                error_text(&e)
            ))
        })
    }

    /// The session's read-only mode, timeout and character set.
    fn set_up(&self, conn: &mut Conn, limits: &Limits) -> Result<(), StartError> {
        let timeout = match self.mariadb {
            true => format!(
                "SET SESSION max_statement_time = {}",
                limits.timeout.as_secs_f64().max(0.001)
            ),
            false => format!(
                "SET SESSION max_execution_time = {}",
                limits.timeout.as_millis().max(1)
            ),
        };
        for statement in [
            "SET NAMES utf8mb4",
            "SET SESSION TRANSACTION READ ONLY",
            &timeout,
        ] {
            conn.query_drop(statement).map_err(|e| {
                StartError::new(format!(
                    "`dataset.engine`: cannot set up the session: {}",
                    error_text(&e)
                ))
            })?;
        }
        Ok(())
    }

    /// The tables of every db_id this database holds are there, and the user is not privileged.
    fn check_database(&self, conn: &mut Conn, database: &str) -> Result<(), StartError> {
        let query_error = |e: mysql::Error| {
            StartError::new(format!(
                "`dataset.engine`: the start-up check failed: {}",
                error_text(&e)
            ))
        };
        let present: Vec<String> = conn
            .query(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()",
            )
            .map_err(query_error)?;
        check_tables(&self.settings, database, &present)?;
        let report = super::role::mysql(conn).map_err(query_error)?;
        enforce_role(&report, &self.settings, READ_ONLY_ROLE)
    }

    /// A pooled or new, set-up connection to the item's database.
    fn session(&self, database: &str, limits: &Limits) -> Result<Conn, ExecError> {
        if let Some(conn) = self.pool.take(database) {
            return Ok(conn);
        }
        let mut conn = self.open(database).map_err(|e| ExecError::Open(e.0))?;
        self.set_up(&mut conn, limits)
            .map_err(|e| ExecError::Open(e.0))?;
        Ok(conn)
    }

    fn database_of(&self, db: &Path) -> String {
        match self.settings.layout {
            Layout::Shared => String::new(),
            Layout::PerDbId => db.to_string_lossy().into_owned(),
        }
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
        let database = self.database_of(db);
        let mut conn = self.session(&database, limits)?;
        let id = conn.connection_id();
        // Set when a `KILL QUERY` was sent (deadline or size cap): it may land after the query
        // ended, so the connection is not reused.
        let fired = Arc::new(AtomicBool::new(false));
        let (killer, flag) = (self.killer.clone(), Arc::clone(&fired));
        let armed = self
            .watchdog
            .arm(Instant::now() + limits.timeout + CLIENT_GRACE, move || {
                flag.store(true, Ordering::SeqCst);
                killer.kill(id);
            });
        let result = self.run_in_transaction(&mut conn, statement, limits, with_columns, &fired);
        drop(armed);
        let rolled_back = conn.query_drop("ROLLBACK").is_ok();
        if rolled_back && !fired.load(Ordering::SeqCst) {
            self.pool.give_back(&database, conn);
        }
        match result {
            Err(ExecError::Sql(_)) if fired.load(Ordering::SeqCst) => {
                Err(ExecError::Timeout(limits.timeout.as_millis()))
            }
            other => other,
        }
    }

    fn column_names(
        &self,
        db: &Path,
        sql: &str,
        limits: &Limits,
    ) -> Result<Vec<String>, ExecError> {
        let statement = single_statement(sql)?;
        mysql_query_only(statement)?;
        let database = self.database_of(db);
        let mut conn = self.session(&database, limits)?;
        let result = prepared_columns(&mut conn, statement, limits)
            .map(|columns| columns.iter().map(|(name, _)| name.clone()).collect());
        self.pool.give_back(&database, conn);
        result
    }
}

impl MysqlEngine {
    fn run_in_transaction(
        &self,
        conn: &mut Conn,
        statement: &str,
        limits: &Limits,
        with_columns: bool,
        killed: &AtomicBool,
    ) -> Result<ResultTable, ExecError> {
        let prepared = prepared_columns(conn, statement, limits)?;
        conn.query_drop("START TRANSACTION READ ONLY")
            .map_err(|e| classify(&e, limits))?;
        let id = conn.connection_id();
        let started = Instant::now();
        let mut result = conn
            .query_iter(statement)
            .map_err(|e| classify(&e, limits))?;
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
            let row = row.map_err(|e| classify(&e, limits))?;
            let read = read_row(&row, &kinds, &mut size).and_then(|values| {
                rows.push(values);
                size.add_row()
            });
            if let Err(error) = read {
                killed.store(true, Ordering::SeqCst);
                self.killer.kill(id);
                return Err(error);
            }
        }
        // MariaDB's BENCHMARK() stopped by `max_statement_time` (or by `KILL QUERY`) returns its
        // row with no error: a query that ran for the whole timeout is a timeout, whatever it
        // returned (the official loop's `func_timeout` gives such a query no result either).
        if started.elapsed() >= limits.timeout || killed.load(Ordering::SeqCst) {
            return Err(ExecError::Timeout(limits.timeout.as_millis()));
        }
        size.finish();
        let columns = match with_columns {
            true => prepared.into_iter().map(|(name, _)| name).collect(),
            false => Vec::new(),
        };
        Ok(ResultTable { columns, rows })
    }
}

/// The result columns (name, kind) of a prepared query; a statement without result columns
/// (`SELECT ... INTO OUTFILE`, `INTO @variable`) is refused.
fn prepared_columns(
    conn: &mut Conn,
    statement: &str,
    limits: &Limits,
) -> Result<Vec<(String, Kind)>, ExecError> {
    let prepared = conn.prep(statement).map_err(|e| classify(&e, limits))?;
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

/// A stopped query is a timeout, a write in the read-only transaction a refusal, anything else
/// the server's message.
fn classify(error: &mysql::Error, limits: &Limits) -> ExecError {
    match error {
        mysql::Error::MySqlError(e) if STOPPED.contains(&e.code) => {
            ExecError::Timeout(limits.timeout.as_millis())
        }
        mysql::Error::MySqlError(e) if e.code == READ_ONLY_TRANSACTION => {
            ExecError::Denied(crate::engine::server::query_message(&e.message))
        }
        _ => ExecError::Sql(crate::engine::server::query_message(&error_text(error))),
    }
}

fn error_text(error: &mysql::Error) -> String {
    match error {
        mysql::Error::MySqlError(e) => e.message.clone(),
        other => other.to_string(),
    }
}
