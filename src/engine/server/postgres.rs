//! The PostgreSQL engine (the `postgres` crate, TLS by the URL's `sslmode`: `tls.rs`).
//!
//! One item: the text is prepared (the server refuses a multi-statement string and tells the
//! column types), then `BEGIN READ ONLY`, `SET LOCAL statement_timeout`, and a `DECLARE ...
//! CURSOR FOR` the text, which PostgreSQL admits only for a SELECT or VALUES query without
//! data-modifying WITH; rows come by `FETCH` in batches in the text format psycopg2 reads,
//! converted per column type as psycopg2 converts them; the transaction is always rolled back.
//! The watchdog sends a cancel request at the client deadline, over the sessions' TLS.

use crate::engine::exec::{Engine, ExecError, Limits, ResultTable, SizeGuard};
use crate::engine::server::check::postgres_functions_allowed;
use crate::engine::server::convert::{convert, Kind};
use crate::engine::server::{
    check_tables, enforce_role, single_statement, tls, Pool, ServerSettings, StartError, Watchdog,
    CONNECT_TIMEOUT,
};
use crate::engine::value::{Row, Value};
use crate::input::config::Layout;
use postgres::types::Type;
use postgres::{Client, SimpleQueryMessage};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Rows fetched per `FETCH`.
const FETCH_ROWS: usize = 1000;
/// Time added to the query's timeout before the client cancels it (the server's own
/// `statement_timeout` fires first when the server is healthy).
const CLIENT_GRACE: Duration = Duration::from_millis(250);

/// How to create the read-only role the start-up check asks for.
pub const READ_ONLY_ROLE: &str = "  CREATE ROLE sqlgate_reader LOGIN PASSWORD '<password>';\n  GRANT CONNECT ON DATABASE <database> TO sqlgate_reader;\n  GRANT USAGE ON SCHEMA public TO sqlgate_reader;\n  GRANT SELECT ON ALL TABLES IN SCHEMA public TO sqlgate_reader;";

/// A PostgreSQL server holding the benchmark's databases.
#[derive(Debug)]
pub struct PostgresEngine {
    target: tls::PgTarget,
    settings: ServerSettings,
    pool: Pool<Client>,
    watchdog: Watchdog,
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
        let engine = PostgresEngine {
            pool: Pool::new(settings.connections),
            target,
            settings,
            watchdog: Watchdog::start(),
        };
        for database in engine.databases_to_check() {
            let mut client = engine.connect(&database, limits)?;
            engine.check_database(&mut client, &database)?;
            engine.pool.give_back(&database, client);
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

    /// A new session on `database` (the URL's when empty), set up for untrusted queries.
    fn connect(&self, database: &str, limits: &Limits) -> Result<Client, StartError> {
        let mut config = self.target.config.clone();
        if !database.is_empty() {
            config.dbname(database);
        }
        let connector = self.target.connector.clone();
        let mut client = config.connect(connector).map_err(|e| {
            StartError::new(format!(
                "`dataset.engine.url_env`: cannot connect to the PostgreSQL server in `{}`{} (`sslmode={}`): {}",
                self.settings.url_env,
                if database.is_empty() {
                    String::new()
                } else {
                    format!(" (database `{database}`)")
                },
                self.target.mode.as_str(),
                error_text(&e)
            ))
        })?;
        let setup = format!(
            "SET default_transaction_read_only = on; SET statement_timeout = {}; \
             SET idle_in_transaction_session_timeout = {}; SET DateStyle = 'ISO, MDY'; \
             SET IntervalStyle = 'postgres'; SET extra_float_digits = 1; \
             SET client_min_messages = error",
            limits.timeout.as_millis().max(1),
            (limits.timeout + CONNECT_TIMEOUT).as_millis()
        );
        client.batch_execute(&setup).map_err(|e| {
            StartError::new(format!(
                "`dataset.engine`: cannot set up the session: {}",
                error_text(&e)
            ))
        })?;
        Ok(client)
    }

    /// The tables of every db_id this database holds are there, and the role is not privileged.
    fn check_database(&self, client: &mut Client, database: &str) -> Result<(), StartError> {
        let query_error = |e: postgres::Error| {
            StartError::new(format!(
                "`dataset.engine`: the start-up check failed: {}",
                error_text(&e)
            ))
        };
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
        enforce_role(&report, &self.settings, READ_ONLY_ROLE)
    }

    /// A pooled or new connection to the item's database.
    fn session(&self, database: &str, limits: &Limits) -> Result<Client, ExecError> {
        match self.pool.take(database) {
            Some(client) if !client.is_closed() => Ok(client),
            _ => self
                .connect(database, limits)
                .map_err(|e| ExecError::Open(e.0)),
        }
    }

    /// Runs `action` on a session of the item's database, giving the session back afterwards
    /// unless the action left it unusable.
    fn with_session<T>(
        &self,
        db: &Path,
        limits: &Limits,
        action: impl FnOnce(&mut Client) -> (Result<T, ExecError>, bool),
    ) -> Result<T, ExecError> {
        let database = self.database_of(db);
        let mut client = self.session(&database, limits)?;
        let (result, healthy) = action(&mut client);
        if healthy && !client.is_closed() {
            self.pool.give_back(&database, client);
        }
        result
    }
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
        self.with_session(db, limits, |client| {
            let deadline = Instant::now() + limits.timeout + CLIENT_GRACE;
            let cancel = client.cancel_token();
            let connector = self.target.connector.clone();
            let fired = Arc::new(AtomicBool::new(false));
            let flag = Arc::clone(&fired);
            let armed = self.watchdog.arm(deadline, move || {
                flag.store(true, Ordering::SeqCst);
                let _ = cancel.cancel_query(connector);
            });
            let result = run_in_transaction(client, statement, limits, with_columns);
            drop(armed);
            let rolled_back = client.batch_execute("ROLLBACK").is_ok();
            (result, rolled_back && !fired.load(Ordering::SeqCst))
        })
    }

    fn column_names(
        &self,
        db: &Path,
        sql: &str,
        limits: &Limits,
    ) -> Result<Vec<String>, ExecError> {
        let statement = single_statement(sql)?;
        self.with_session(db, limits, |client| {
            let result = client
                .prepare(statement)
                .map(|prepared| {
                    prepared
                        .columns()
                        .iter()
                        .map(|c| c.name().to_string())
                        .collect()
                })
                .map_err(|e| classify(&e, limits));
            (result, true)
        })
    }
}

/// Prepare, open the read-only transaction and the cursor, fetch every batch.
fn run_in_transaction(
    client: &mut Client,
    statement: &str,
    limits: &Limits,
    with_columns: bool,
) -> Result<ResultTable, ExecError> {
    let classify = |e: postgres::Error| classify(&e, limits);
    let prepared = client.prepare(statement).map_err(classify)?;
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
    // A cursor is planned for its first tenth by default (`cursor_tuple_fraction`), which can
    // change the plan and so the row order psycopg2's plain query gets; the official Soft-F1
    // depends on that order (through `list(set(rows))`), so plan as for the whole result.
    client
        .batch_execute(&format!(
            "BEGIN READ ONLY; SET LOCAL statement_timeout = {}; SET LOCAL cursor_tuple_fraction = 1.0; DECLARE sqlgate_cursor NO SCROLL CURSOR FOR {statement}",
            limits.timeout.as_millis().max(1)
        ))
        .map_err(classify)?;
    // Declared before the rows so that, on an error, the rows are freed before their charge is
    // given back to the budget.
    let mut size = SizeGuard::new(limits);
    let mut rows = Vec::new();
    loop {
        let batch = FETCH_ROWS.min(limits.max_rows.saturating_sub(rows.len()) + 1);
        let messages = client
            .simple_query(&format!("FETCH FORWARD {batch} FROM sqlgate_cursor"))
            .map_err(classify)?;
        let mut fetched = 0;
        for message in &messages {
            if let SimpleQueryMessage::Row(row) = message {
                fetched += 1;
                rows.push(read_row(row, &kinds, &mut size)?);
                size.add_row()?;
            }
        }
        if fetched < batch {
            size.finish();
            return Ok(ResultTable { columns, rows });
        }
    }
}

fn read_row(
    row: &postgres::SimpleQueryRow,
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

/// A query error: the cancel (server timeout or client deadline) is a timeout, a read-only
/// violation a refusal, anything else the server's message.
fn classify(error: &postgres::Error, limits: &Limits) -> ExecError {
    use postgres::error::SqlState;
    match error.code() {
        Some(code) if *code == SqlState::QUERY_CANCELED => {
            ExecError::Timeout(limits.timeout.as_millis())
        }
        Some(code) if *code == SqlState::READ_ONLY_SQL_TRANSACTION => {
            ExecError::Denied(crate::engine::server::query_message(&error_text(error)))
        }
        _ => ExecError::Sql(crate::engine::server::query_message(&error_text(error))),
    }
}

/// The server's own message when there is one, else the client's with its causes (a TLS
/// failure's reason is in the cause).
fn error_text(error: &postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => db.message().to_string(),
        None => crate::engine::server::tls::with_causes(error),
    }
}
