//! The PostgreSQL engine (the `postgres` crate, TLS by the URL's `sslmode`: `tls.rs`).
//!
//! One item: the text is prepared (the server refuses a multi-statement string and tells the
//! column types), then `BEGIN READ ONLY` (in the snapshot of the run's hold on the data, when
//! they are held: [`Engine::hold_data`]), `SET LOCAL statement_timeout`, and a `DECLARE ...
//! CURSOR FOR` the text, which PostgreSQL admits only for a SELECT or VALUES query without
//! data-modifying WITH; rows come by `FETCH` in batches in the text format psycopg2 reads,
//! converted per column type as psycopg2 converts them; the transaction is always rolled back.
//! The watchdog sends a cancel request at the client deadline, over the sessions' TLS.

use crate::engine::exec::{Engine, ExecError, Limits, ResultTable, SizeGuard};
use crate::engine::server::catalog::postgres_reads_rows_only;
use crate::engine::server::check::postgres_functions_allowed;
use crate::engine::server::convert::{convert, Kind};
use crate::engine::server::data_digest::{self, DataDigests, PostgresHold};
use crate::engine::server::pg_session::{self, ConnectError, Session};
use crate::engine::server::structure;
use crate::engine::server::{
    check_tables, enforce_role, retrying, single_statement, stopped_by_deadline, tls, Pool,
    ServerSettings, StartError, CONNECT_TIMEOUT,
};
use crate::engine::value::{Row, Value};
use crate::input::config::Layout;
use futures_util::StreamExt;
use postgres::types::Type;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_postgres::{Client, SimpleQueryMessage};

/// Rows fetched per `FETCH` (each streamed row by row).
const FETCH_ROWS: usize = 1000;
/// Time added to the query's timeout before the client cancels it (the server's own
/// `statement_timeout` fires first when the server is healthy).
const CLIENT_GRACE: Duration = Duration::from_millis(250);
/// Time after the first cancel request at which the client stops waiting and abandons the
/// session: a query ends, from sqlgate's side, within `timeout_ms` + this + [`CLIENT_GRACE`].
const ABANDON_AFTER: Duration = Duration::from_millis(500);

/// How to create the read-only role the start-up check asks for.
pub const READ_ONLY_ROLE: &str = "  CREATE ROLE sqlgate_reader LOGIN PASSWORD '<password>';\n  GRANT CONNECT ON DATABASE <database> TO sqlgate_reader;\n  GRANT USAGE ON SCHEMA public TO sqlgate_reader;\n  GRANT SELECT ON ALL TABLES IN SCHEMA public TO sqlgate_reader;";

/// A PostgreSQL server holding the benchmark's databases.
#[derive(Debug)]
pub struct PostgresEngine {
    target: tls::PgTarget,
    settings: ServerSettings,
    pool: Pool<Session>,
    /// Each database's hold on its data ([`Engine::hold_data`]), by pool key: while it is held,
    /// every scoring transaction imports its snapshot.
    held: Mutex<BTreeMap<String, PostgresHold>>,
    /// The server's `default_text_search_config` at start-up, which every scoring session
    /// sets (`SET ...`): a reload mid-run does not reach the scoring sessions.
    text_search: String,
    /// What the server showed when the run claimed it ([`Engine::claim_server`]).
    claim: Mutex<Option<super::exclusive::Claim>>,
}

impl PostgresEngine {
    /// Connects, checks every db_id's tables and the role, and keeps the connection for reuse.
    pub fn start(settings: ServerSettings, limits: &Limits) -> Result<Self, StartError> {
        let mut target = tls::postgres_target(&settings.url).map_err(|e| {
            StartError::new(format!(
                "`dataset.engine.url_env`: the environment variable `{}`: {e}",
                settings.url_env
            ))
        })?;
        target.config.application_name("sqlgate");
        target.session_config.application_name("sqlgate");
        let mut engine = PostgresEngine {
            pool: Pool::new(settings.connections),
            held: Mutex::default(),
            target,
            settings,
            text_search: String::new(),
            claim: Mutex::default(),
        };
        for database in engine.databases_to_check() {
            engine.text_search = super::retrying_start(|| {
                let mut client = engine.connect(&database, limits)?;
                engine.check_database(&mut client, &database)?;
                text_search_pin(&mut client)
            })?;
        }
        Ok(engine)
    }

    /// The databases the start-up check visits: the URL's, or each db_id's.
    fn databases_to_check(&self) -> Vec<String> {
        match self.settings.layout {
            Layout::Shared => vec![String::new()],
            Layout::PerDbId => self.settings.tables.keys().cloned().collect(),
        }
    }

    /// The pool key of an item's database: the URL's database (empty) or the db_id.
    fn database_of(&self, db: &Path) -> String {
        match self.settings.layout {
            Layout::Shared => String::new(),
            Layout::PerDbId => db.to_string_lossy().into_owned(),
        }
    }

    /// A new session of the synchronous client on `database` (the URL's when empty), for the
    /// start-up checks.
    fn connect(&self, database: &str, limits: &Limits) -> Result<postgres::Client, StartError> {
        let mut config = self.target.config.clone();
        if !database.is_empty() {
            config.dbname(database);
        }
        let connector = self.target.connector.clone();
        let mut client = config.connect(connector).map_err(|e| {
            let context = format!(
                "`dataset.engine.url_env`: cannot connect to the PostgreSQL server in `{}`{} (`sslmode={}`)",
                self.settings.url_env,
                if database.is_empty() {
                    String::new()
                } else {
                    format!(" (database `{database}`)")
                },
                self.target.mode.as_str(),
            );
            start_error(&context, &e)
        })?;
        super::exclusive::opened();
        let setup = session_setup(limits, "");
        client
            .batch_execute(&setup)
            .map_err(|e| start_error("`dataset.engine`: cannot set up the session", &e))?;
        Ok(client)
    }

    /// The tables of every db_id this database holds are there, the role is not privileged,
    /// nothing but the rows decides a query's result ([`structure::postgres_levers`]), and no
    /// other session is connected to it ([`super::writers`]).
    fn check_database(
        &self,
        client: &mut postgres::Client,
        database: &str,
    ) -> Result<(), StartError> {
        let query_error = |e: postgres::Error| start_error(super::START_UP_CHECK, &e);
        let present: Vec<String> = client
            .query(
                "SELECT c.relname::text FROM pg_class c WHERE c.relkind IN ('r','p','v','m','f') AND pg_table_is_visible(c.oid)",
                &[],
            )
            .map_err(query_error)?
            .iter()
            .map(|row| row.get(0))
            .collect();
        check_tables(&self.settings, database, &present)?;
        let report = super::role::postgres(client).map_err(query_error)?;
        enforce_role(&report, &self.settings, READ_ONLY_ROLE)?;
        // Items that run on clones run with everything the database holds (its functions,
        // triggers and views), as the benchmark's evaluator runs them: the levers concern reads
        // of this database.
        if !self.settings.clones {
            let levers =
                structure::postgres_levers(client, structure::LISTED).map_err(query_error)?;
            structure::refuse(&levers, database)?;
        }
        let sessions = super::writers::postgres_other_sessions(client).map_err(query_error)?;
        super::writers::refuse_postgres(&sessions, database)
    }
}

impl PostgresEngine {
    /// The snapshot the database's hold exported, when its data are held.
    fn snapshot_of(&self, database: &str) -> Option<String> {
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        held.get(database).map(|hold| hold.snapshot.clone())
    }

    /// A session for one item on `database`: a pooled one, or (`fresh`, or none idle) a new one.
    fn session(&self, database: &str, limits: &Limits, fresh: bool) -> Result<Session, ExecError> {
        if !fresh {
            while let Some(session) = self.pool.take(database) {
                if !session.is_closed() {
                    return Ok(session);
                }
            }
        }
        let mut config = self.target.session_config.clone();
        if !database.is_empty() {
            config.dbname(database);
        }
        let setup = session_setup(limits, &self.text_search);
        Session::connect(&config, &self.target.connector, &setup).map_err(|e| {
            let reason = match e {
                ConnectError::Client(e) => error_text(&e),
                ConnectError::TimedOut => "the server did not answer in time".into(),
                ConnectError::Runtime(e) => e.to_string(),
            };
            ExecError::Fault(crate::engine::server::query_message(&format!(
                "cannot open a session on the PostgreSQL server: {reason}"
            )))
        })
    }

    /// Runs `work` on a session of the item's database under the query's deadline, then
    /// resets the session for the next item and gives it back, or drops it when it is not
    /// clean (the deadline fired, the result was cut short, the server failed).
    fn attempt<T, W, F>(
        &self,
        database: &str,
        limits: &Limits,
        fresh: bool,
        work: W,
    ) -> Result<T, ExecError>
    where
        W: FnOnce(Arc<Client>, Instant, Arc<AtomicBool>) -> F,
        F: std::future::Future<Output = Result<T, ExecError>>,
    {
        let session = self.session(database, limits, fresh)?;
        let deadline = Instant::now() + limits.timeout + CLIENT_GRACE;
        let hard = deadline + ABANDON_AFTER;
        let fired = Arc::new(AtomicBool::new(false));
        let future = work(Arc::clone(&session.client), deadline, Arc::clone(&fired));
        let Some(result) = session.within(deadline, hard, &self.target.connector, &fired, future)
        else {
            let mut config = self.target.session_config.clone();
            if !database.is_empty() {
                config.dbname(database);
            }
            pg_session::abandon(
                session,
                &config,
                &self.target.connector,
                limits.timeout.as_millis(),
            );
            return Err(ExecError::Timeout(limits.timeout.as_millis()));
        };
        let fired = fired.load(Ordering::SeqCst);
        let clean = !fired && !matches!(result, Err(ExecError::Fault(_) | ExecError::TooLarge(_)));
        if clean && reset(&session, &session_setup(limits, &self.text_search), hard) {
            self.pool.give_back(database, session);
        }
        stopped_by_deadline(result, fired, limits)
    }
}

/// Ends the item's transaction and resets the session to a new one's state for the next item:
/// `DISCARD ALL` (settings, session advisory locks, prepared statements, temporary tables,
/// cursors, listeners) and the session settings again, by the query's hard deadline; `false`
/// when the session is unusable (or the server too slow to reset it by then).
fn reset(session: &Session, setup: &str, hard: Instant) -> bool {
    let client = &session.client;
    let done = session
        .housekeep(hard, async {
            client.batch_execute("ROLLBACK").await?;
            client.batch_execute("DISCARD ALL").await?;
            client.batch_execute(setup).await
        })
        .is_some();
    client.clear_type_cache();
    done && !session.is_closed()
}

/// The statement that sets the session's `default_text_search_config` to what the server's
/// is now (read in the start-up session, where no role or database setting applies: refused).
fn text_search_pin(client: &mut postgres::Client) -> Result<String, StartError> {
    let value: String = client
        .query_one(
            "SELECT pg_catalog.current_setting('default_text_search_config')",
            &[],
        )
        .map_err(|e| start_error(super::START_UP_CHECK, &e))?
        .get(0);
    Ok(format!(
        "; SET default_text_search_config = '{}'",
        value.replace('\'', "''")
    ))
}

/// The settings every session runs under (set again after each item's reset): the limits and
/// the settings that change a result, pinned as the data digests' session pins them, and the
/// scoring sessions' `text_search` pin ([`text_search_pin`]).
fn session_setup(limits: &Limits, text_search: &str) -> String {
    format!(
        "SET default_transaction_read_only = on; SET statement_timeout = {}; \
         SET idle_in_transaction_session_timeout = {}; {}{text_search}; \
         SET client_min_messages = error; SET lock_timeout = {}",
        limits.timeout.as_millis().max(1),
        (limits.timeout + CONNECT_TIMEOUT).as_millis(),
        structure::POSTGRES_PINS,
        limits.timeout.as_millis().max(1)
    )
}

impl Engine for PostgresEngine {
    fn run(
        &self,
        db: &Path,
        sql: &str,
        limits: &Limits,
        with_columns: bool,
        _most_rows: usize,
    ) -> Result<ResultTable, ExecError> {
        let statement = single_statement(sql)?;
        postgres_functions_allowed(statement)?;
        postgres_reads_rows_only(statement, self.settings.schema_words_of(db))?;
        let database = self.database_of(db);
        let snapshot = self.snapshot_of(&database);
        let snapshot = snapshot.as_deref();
        retrying(|fresh| {
            self.attempt(
                &database,
                limits,
                fresh,
                |client, deadline, fired| async move {
                    let query = (statement, snapshot);
                    run_in_transaction(&client, query, limits, with_columns, deadline, &fired).await
                },
            )
        })
    }

    fn hold_data(&self) -> Result<Option<DataDigests>, String> {
        let mut digests = DataDigests::new();
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        for database in self.databases_to_check() {
            let hold = data_digest::postgres_hold(
                &self.settings.url,
                &database,
                &mut digests,
                self.settings.clones,
            )?;
            held.insert(database, hold);
        }
        if self.settings.clones {
            data_digest::postgres_server_entry(&self.settings.url, &mut digests)?;
        }
        Ok(Some(digests))
    }

    fn claim_server(&self) -> Result<(), String> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let ours = hold_pids(&mut held)?;
        let Some(hold) = held.values_mut().next() else {
            return Ok(());
        };
        let claim = super::exclusive::postgres_claim(&mut hold.client, &ours)?;
        *self.claim.lock().unwrap_or_else(|e| e.into_inner()) = Some(claim);
        Ok(())
    }

    fn check_claim(&self) -> Result<(), String> {
        let Some(claim) = self.claim.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            return Ok(());
        };
        // The run's idle sessions close, so that only the hold's remain connected.
        for database in self.databases_to_check() {
            while self.pool.take(&database).is_some() {}
        }
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let ours = hold_pids(&mut held)?;
        match held.values_mut().next() {
            Some(hold) => super::exclusive::postgres_check(&mut hold.client, &claim, &ours),
            None => Err("the sessions holding the server's data ended before scoring did".into()),
        }
    }

    fn release_data(&self) -> Result<(), String> {
        let held = std::mem::take(&mut *self.held.lock().unwrap_or_else(|e| e.into_inner()));
        for (database, mut hold) in held {
            // The transaction is still the one that exported the snapshot: a session ended
            // from outside has none (and a new one would not be in a transaction).
            let alive = hold
                .client
                .query_one("SELECT pg_catalog.pg_current_snapshot()::text", &[])
                .and_then(|_| hold.client.batch_execute("ROLLBACK"));
            if let Err(e) = alive {
                return Err(format!(
                    "the session holding the snapshot of {} ended before scoring did ({})",
                    place(&database),
                    error_text(&e)
                ));
            }
        }
        Ok(())
    }

    fn column_names(
        &self,
        db: &Path,
        sql: &str,
        limits: &Limits,
    ) -> Result<Vec<String>, ExecError> {
        let statement = single_statement(sql)?;
        postgres_functions_allowed(statement)?;
        postgres_reads_rows_only(statement, self.settings.schema_words_of(db))?;
        let database = self.database_of(db);
        retrying(|fresh| {
            self.attempt(&database, limits, fresh, |client, _, fired| async move {
                let prepared = client
                    .prepare(statement)
                    .await
                    .map_err(|e| classify(&e, limits, &fired))?;
                Ok(prepared
                    .columns()
                    .iter()
                    .map(|c| c.name().to_string())
                    .collect())
            })
        })
    }
}

/// Prepare, open the read-only transaction and the cursor, fetch every batch, each streamed
/// row by row (so a batch is never held whole: every row is charged as it arrives), and stop
/// at the client deadline even when the backend is idle between two `FETCH`es.
async fn run_in_transaction(
    client: &Client,
    (statement, snapshot): (&str, Option<&str>),
    limits: &Limits,
    with_columns: bool,
    deadline: Instant,
    fired: &AtomicBool,
) -> Result<ResultTable, ExecError> {
    let classify = |e: tokio_postgres::Error| classify(&e, limits, fired);
    let prepared = client.prepare(statement).await.map_err(classify)?;
    let kinds: Vec<Kind> = prepared
        .columns()
        .iter()
        .map(|c| kind_of(c.type_()))
        .collect();
    let columns = match with_columns {
        true => prepared
            .columns()
            .iter()
            .map(|c| c.name().to_string())
            .collect(),
        false => Vec::new(),
    };
    drop(prepared);
    begin(client, snapshot, classify).await?;
    // A cursor is planned for its first tenth by default (`cursor_tuple_fraction`), which can
    // change the plan and so the row order psycopg2's plain query gets; the official Soft-F1
    // depends on that order (through `list(set(rows))`), so plan as for the whole result.
    client
        .batch_execute(&format!(
            "SET LOCAL statement_timeout = {}; SET LOCAL cursor_tuple_fraction = 1.0; DECLARE sqlgate_cursor NO SCROLL CURSOR FOR {statement}",
            limits.timeout.as_millis().max(1)
        ))
        .await
        .map_err(classify)?;
    // Declared before the rows so that, on an error, the rows are freed before their charge is
    // given back to the budget.
    let mut size = SizeGuard::new(limits);
    let mut rows = Vec::new();
    loop {
        if Instant::now() >= deadline {
            return Err(ExecError::Timeout(limits.timeout.as_millis()));
        }
        let batch = FETCH_ROWS.min(limits.max_rows.saturating_sub(rows.len()) + 1);
        let stream = client
            .simple_query_raw(&format!("FETCH FORWARD {batch} FROM sqlgate_cursor"))
            .await
            .map_err(classify)?;
        let mut stream = std::pin::pin!(stream);
        let mut fetched = 0;
        while let Some(message) = stream.next().await {
            if let SimpleQueryMessage::Row(row) = message.map_err(classify)? {
                fetched += 1;
                rows.push(read_row(&row, &kinds, &mut size)?);
                size.add_row()?;
            }
        }
        if fetched < batch {
            size.finish();
            return Ok(ResultTable { columns, rows });
        }
    }
}

/// Opens the item's read-only transaction: in the snapshot of the database's hold when its data
/// are held (so the item reads exactly the data digested at start-up), which must import: a
/// snapshot that cannot (its holding session ended) is an engine fault, never a verdict.
async fn begin(
    client: &Client,
    snapshot: Option<&str>,
    classify: impl Fn(tokio_postgres::Error) -> ExecError,
) -> Result<(), ExecError> {
    let Some(snapshot) = snapshot else {
        return client
            .batch_execute("BEGIN READ ONLY")
            .await
            .map_err(classify);
    };
    let import = format!(
        "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET TRANSACTION SNAPSHOT '{}'",
        snapshot.replace('\'', "''")
    );
    client
        .batch_execute(&import)
        .await
        .map_err(|e| match classify(e) {
            ExecError::Sql(message) | ExecError::Denied(message) => ExecError::Fault(format!(
                "cannot read in the snapshot the run's data were digested in (its holding \
                 session ended?): {message}"
            )),
            other => other,
        })
}

/// The process ids of the sessions holding the data.
fn hold_pids(held: &mut BTreeMap<String, PostgresHold>) -> Result<Vec<i32>, String> {
    let pid = |hold: &mut PostgresHold| {
        let row = hold
            .client
            .query_one("SELECT pg_catalog.pg_backend_pid()", &[]);
        row.map(|row| row.get(0)).map_err(|e| {
            format!(
                "the session holding the server's data does not answer: {}",
                error_text(&e)
            )
        })
    };
    held.values_mut().map(pid).collect()
}

/// The database named in a message.
fn place(database: &str) -> String {
    match database.is_empty() {
        true => "the database of `dataset.engine.url_env`".to_string(),
        false => format!("database `{database}`"),
    }
}

fn read_row(
    row: &tokio_postgres::SimpleQueryRow,
    kinds: &[Kind],
    size: &mut SizeGuard,
) -> Result<Row, ExecError> {
    let mut values = Vec::with_capacity(kinds.len());
    for (i, kind) in kinds.iter().enumerate() {
        let value = match row.try_get(i).map_err(|e| ExecError::Sql(e.to_string()))? {
            None => Value::Null,
            Some(text) => convert(*kind, text.as_bytes())?,
        };
        size.add_value(&value);
        values.push(value);
    }
    Ok(values)
}

/// psycopg2's conversion of a column type; types it has no caster for arrive as `str`.
fn kind_of(column_type: &Type) -> Kind {
    if matches!(column_type.kind(), postgres::types::Kind::Array(_)) {
        return Kind::Unhashable;
    }
    match *column_type {
        Type::INT2 | Type::INT4 | Type::INT8 | Type::OID => Kind::Int,
        Type::FLOAT4 | Type::FLOAT8 => Kind::Float,
        Type::NUMERIC => Kind::Decimal,
        Type::BOOL => Kind::Bool,
        Type::BYTEA => Kind::HexBytes,
        Type::DATE => Kind::Date,
        Type::TIMESTAMP => Kind::DateTime,
        Type::TIMESTAMPTZ => Kind::DateTimeTz,
        Type::TIME => Kind::Time,
        Type::TIMETZ => Kind::TimeTz,
        Type::JSON | Type::JSONB => Kind::Json,
        Type::INTERVAL => Kind::Interval,
        _ => Kind::Text,
    }
}

/// A query error. A cancel is a timeout when it was sqlgate's (its deadline fired, or the
/// server's `statement_timeout`); any other cancel, a session ended by the server or from
/// outside, a lost connection, a connection or transaction-conflict failure is an engine fault
/// ([`ExecError::Fault`], retried on a fresh session, never a verdict); a write in the read-only
/// transaction a refusal; anything else the server's message.
fn classify(error: &tokio_postgres::Error, limits: &Limits, fired: &AtomicBool) -> ExecError {
    use tokio_postgres::error::SqlState;
    let ours = fired.load(Ordering::SeqCst);
    let message = || crate::engine::server::query_message(&error_text(error));
    let Some(code) = error.code() else {
        return match ours {
            true => ExecError::Timeout(limits.timeout.as_millis()),
            false => ExecError::Fault(message()),
        };
    };
    let server_timeout = error
        .as_db_error()
        .is_some_and(|db| db.message().contains("statement timeout"));
    match code.code() {
        _ if *code == SqlState::QUERY_CANCELED && (ours || server_timeout) => {
            ExecError::Timeout(limits.timeout.as_millis())
        }
        _ if *code == SqlState::READ_ONLY_SQL_TRANSACTION => ExecError::Denied(message()),
        c if is_engine_fault(c) => ExecError::Fault(message()),
        _ => ExecError::Sql(message()),
    }
}

/// SQLSTATEs of a failure of the server or the session, not of the query: connection errors
/// (08), an outside cancel (57014 when not sqlgate's), operator intervention (57P01 admin
/// shutdown, 57P02 crash shutdown, 57P03 cannot connect now, 57P04 database dropped, 57P05 idle
/// session timeout), too many connections (53300), a serialization failure or deadlock
/// (40001, 40P01), a lock wait past `lock_timeout` (55P03), the idle-in-transaction timeout
/// (25P03) and system errors (58).
fn is_engine_fault(code: &str) -> bool {
    code.starts_with("08")
        || code.starts_with("57")
        || code.starts_with("58")
        || matches!(code, "53300" | "40001" | "40P01" | "55P03" | "25P03")
}

/// A failure of a start-up session, after `context`: a fault to try again when the session
/// ended, was cancelled from outside or lost its connection ([`is_engine_fault`]).
fn start_error(context: &str, error: &postgres::Error) -> StartError {
    let fault = error.is_closed() || error.code().is_some_and(|c| is_engine_fault(c.code()));
    StartError::new(format!("{context}: {}", error_text(error))).fault_when(fault)
}

/// The server's own message when there is one, else the client's with its causes (a TLS
/// failure's reason is in the cause).
fn error_text(error: &postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => db.message().to_string(),
        None => crate::engine::server::tls::with_causes(error),
    }
}
