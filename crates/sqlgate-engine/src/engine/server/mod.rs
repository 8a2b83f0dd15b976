//! Server engines: PostgreSQL and MySQL / MariaDB on a live server the user may not fully
//! control, behind the same [`Engine`] interface as SQLite.
//!
//! What every server engine shares lives here: the URL read from the variable
//! `dataset.engine.url_env` names (registered with the scrubber, never printed), the pool of
//! connections keyed by database, the watchdog that cancels a query at its client deadline, the
//! one-statement check, and the start-up checks (reachable, every db_id's tables present, the
//! role not privileged), and TLS by the URL's standard options (`tls.rs`). The dialects live in
//! `postgres.rs` and `mysql.rs`.
//!
//! Every query runs in a READ ONLY transaction that is always rolled back, with the server's own
//! statement timeout set, under a client deadline that cancels it, and its rows are fetched in
//! batches (a cursor on PostgreSQL, the streamed text protocol on MySQL) under `max_rows` and
//! `max_result_bytes`.

mod builtins;
mod catalog;
pub(crate) mod catalog_rows;
mod check;
mod convert;
pub mod data_digest;
pub(crate) mod exclusive;
pub mod mysql;
mod pg_session;
mod pool;
pub mod postgres;
pub(crate) mod role;
pub(crate) mod row_hashes;
pub(crate) mod structure;
pub mod tls;
mod watchdog;
mod writers;

pub use check::{single_statement, RoleReport};
pub use pool::Pool;
pub use watchdog::Watchdog;

use crate::engine::exec::{ExecError, Limits};
use crate::input::config::Config;
use crate::input::dataset::Dataset;
use crate::util::error::InputError;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// How long connecting to the server may take before the run gives up.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Tries of one query while it ends in an engine fault ([`ExecError::Fault`]): the first on the
/// pooled session, the others each on a fresh one.
pub const FAULT_ATTEMPTS: u32 = 3;

/// The pause before the n-th retry after a fault is n times this.
const FAULT_PAUSE: Duration = Duration::from_millis(200);

/// Runs `attempt` (given whether it must open a fresh session) again while it ends in an engine
/// fault, up to [`FAULT_ATTEMPTS`] tries; the last result is returned, so a fault that persists
/// reaches the executor, which fails the run closed.
pub fn retrying<T>(attempt: impl FnMut(bool) -> Result<T, ExecError>) -> Result<T, ExecError> {
    retry_while(|e| matches!(e, ExecError::Fault(_)), attempt)
}

/// Runs a start-up check of one database again while its session ends or is cancelled from
/// outside ([`StartError::fault`]), up to [`FAULT_ATTEMPTS`] tries, each on a new session: a
/// strike on the start-up session is a fault, as it is on an item's, not a finding. Every try
/// checks everything again, so a retry finds what the first would have.
pub fn retrying_start<T>(
    mut attempt: impl FnMut() -> Result<T, StartError>,
) -> Result<T, StartError> {
    retry_while(|e: &StartError| e.fault, |_| attempt())
}

/// `attempt` (given whether this is a retry) again while `is_fault` holds of its error, up to
/// [`FAULT_ATTEMPTS`] tries with a growing pause; the last result is returned.
fn retry_while<T, E>(
    is_fault: impl Fn(&E) -> bool,
    mut attempt: impl FnMut(bool) -> Result<T, E>,
) -> Result<T, E> {
    let mut tries = 1;
    loop {
        match attempt(tries > 1) {
            Err(e) if is_fault(&e) && tries < FAULT_ATTEMPTS => {
                std::thread::sleep(FAULT_PAUSE * tries);
                tries += 1;
            }
            other => return other,
        }
    }
}

/// What a server engine needs to know about the run at start: where its URL is, the layout,
/// each db_id with the tables `dataset.tables` gives it, and the role policy.
#[derive(Debug, Clone)]
pub struct ServerSettings {
    /// The server's URL (a secret: registered with the scrubber, never printed).
    pub url: String,
    /// The variable that held it, for messages.
    pub url_env: String,
    /// One database for every db_id, or one per db_id.
    pub layout: crate::input::config::Layout,
    /// db_id -> its table names, from `dataset.tables` (empty when it has no entry).
    pub tables: BTreeMap<String, Vec<String>>,
    /// db_id -> its table and column names from `dataset.tables`, lower-cased: the words a
    /// prediction may use that would otherwise name the server's catalogs or state
    /// (`catalog.rs`).
    pub schema_words: BTreeMap<String, BTreeSet<String>>,
    /// Run even when the role is privileged.
    pub allow_privileged_role: bool,
    /// Connections the pool keeps at most (`execution.threads`).
    pub connections: usize,
    /// Whether the items run on clones of the databases (`dataset.engine.admin_url_env`), not
    /// on the databases themselves: the start-up check of what decides a read does not apply.
    pub clones: bool,
}

impl ServerSettings {
    /// The lower-cased table and column names of the item's database `db` (a db_id).
    pub fn schema_words_of(&self, db: &std::path::Path) -> &BTreeSet<String> {
        static NONE: BTreeSet<String> = BTreeSet::new();
        self.schema_words
            .get(db.to_string_lossy().as_ref())
            .unwrap_or(&NONE)
    }
}

/// What a failed start-up check query of a server engine reports, before the server's error.
pub(crate) const START_UP_CHECK: &str = "`dataset.engine`: the start-up check failed";

/// A start-up failure of a server engine: a message naming the key, with no secret in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartError {
    /// What failed, scrubbed.
    pub message: String,
    /// Whether the session ended or its query was cancelled from outside (or the server went
    /// away): an engine fault, which [`retrying_start`] tries again, not a finding.
    pub fault: bool,
}

impl StartError {
    /// The message, scrubbed of the URL and its password whatever the client library put in it.
    pub fn new(message: impl AsRef<str>) -> Self {
        StartError {
            message: crate::util::scrub::scrub_cut(message.as_ref(), 1500),
            fault: false,
        }
    }

    /// The same error, marked as a fault of the session when `fault` holds.
    pub fn fault_when(self, fault: bool) -> Self {
        StartError { fault, ..self }
    }
}

/// What the configured server engine needs to start: its URL from the variable
/// `dataset.engine.url_env` names, its layout, the tables and schema words of every db_id.
/// Errors name the key (`dataset.engine.*`) and carry no secret.
pub fn settings(
    config: &Config,
    dataset: &Dataset,
    threads: usize,
) -> Result<ServerSettings, InputError> {
    let engine_config = &config.dataset.engine;
    let name = engine_config.url_env.clone().unwrap_or_default();
    let url = read_url(&name).map_err(|error| start_failure(config, error))?;
    Ok(ServerSettings {
        url,
        url_env: name,
        layout: engine_config.layout(),
        tables: dataset_tables(dataset),
        schema_words: dataset_schema_words(dataset),
        allow_privileged_role: engine_config.allows_privileged_role(),
        connections: threads.max(1),
        clones: engine_config.admin_url_env.is_some(),
    })
}

/// A server engine's start-up failure as the config's error (it names the key).
pub fn start_failure(config: &Config, error: StartError) -> InputError {
    InputError::Config {
        path: config.path.clone(),
        message: error.message,
    }
}

/// The keys a server engine reads: `url_env` (required), `layout` and `allow_privileged_role`;
/// it takes no `options`.
pub fn check_keys(section: &crate::input::config::EngineConfig) -> Result<(), String> {
    section.require_url_env()?;
    section.refuse_options()
}

/// A query sqlgate cancelled is a timeout whatever error the server then gave (a cursor gone,
/// a transaction aborted by the cancel).
pub fn stopped_by_deadline<T>(
    result: Result<T, ExecError>,
    fired: bool,
    limits: &Limits,
) -> Result<T, ExecError> {
    match result {
        Err(ExecError::Sql(_)) if fired => Err(ExecError::Timeout(limits.timeout.as_millis())),
        other => other,
    }
}

/// The URL held by the variable `name`, registered with the scrubber (whole, and its password).
pub fn read_url(name: &str) -> Result<String, StartError> {
    read_env_url("url_env", name)
}

/// The URL held by the variable `name` that `dataset.engine.<key>` names, registered with the
/// scrubber (whole, and its password).
pub fn read_env_url(key: &str, name: &str) -> Result<String, StartError> {
    let url = match std::env::var(name) {
        Ok(url) if !url.trim().is_empty() => url.trim().to_string(),
        Ok(_) => {
            return Err(StartError::new(format!(
                "`dataset.engine.{key}`: the environment variable `{name}` is empty; it must hold the server's URL"
            )))
        }
        Err(_) => {
            return Err(StartError::new(format!(
                "`dataset.engine.{key}`: the environment variable `{name}` is not set; it must hold the server's URL"
            )))
        }
    };
    crate::util::scrub::register_secret(&url);
    if let Some(password) = url_password(&url) {
        crate::util::scrub::register_secret(&password);
    }
    Ok(url)
}

/// The password part of `scheme://user:password@host...`, percent-decoded as well as raw.
fn url_password(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?']).next()?;
    let credentials = authority.rsplit_once('@')?.0;
    let password = credentials.split_once(':')?.1;
    let decoded = percent_decode(password);
    if decoded != password {
        crate::util::scrub::register_secret(password);
    }
    Some(decoded)
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Each db_id of the dataset with the table names `dataset.tables` gives it.
fn dataset_tables(dataset: &Dataset) -> BTreeMap<String, Vec<String>> {
    dataset
        .databases
        .iter()
        .map(|(db_id, database)| {
            let tables = database
                .tables_entry
                .as_ref()
                .map(|entry| entry.table_names_original.clone())
                .unwrap_or_default();
            (db_id.clone(), tables)
        })
        .collect()
}

/// Each db_id of the dataset with its table and column names in `dataset.tables`, lower-cased.
fn dataset_schema_words(dataset: &Dataset) -> BTreeMap<String, BTreeSet<String>> {
    dataset
        .databases
        .iter()
        .map(|(db_id, database)| {
            let words = database
                .tables_entry
                .iter()
                .flat_map(|entry| {
                    let columns = entry.column_names_original.iter().map(|(_, c)| c);
                    entry.table_names_original.iter().chain(columns)
                })
                .map(|name| name.to_lowercase())
                .collect();
            (db_id.clone(), words)
        })
        .collect()
}

/// Checks that every db_id the connection serves (all of them in the shared layout, `database`
/// alone per db_id) has its tables in `present`, the table names the server lists.
pub fn check_tables(
    settings: &ServerSettings,
    database: &str,
    present: &[String],
) -> Result<(), StartError> {
    let served = settings
        .tables
        .iter()
        .filter(|(db_id, _)| match settings.layout {
            crate::input::config::Layout::Shared => true,
            crate::input::config::Layout::PerDbId => *db_id == database,
        });
    for (db_id, expected) in served {
        let missing = missing_tables(expected, present);
        if !missing.is_empty() {
            return Err(tables_missing_error(db_id, &missing, settings));
        }
    }
    Ok(())
}

/// The names in `expected` missing from `present` (compared case-insensitively: PostgreSQL folds
/// unquoted names to lower case, MySQL's folding depends on the server's settings).
fn missing_tables(expected: &[String], present: &[String]) -> Vec<String> {
    let present: std::collections::HashSet<String> =
        present.iter().map(|t| t.to_lowercase()).collect();
    expected
        .iter()
        .filter(|t| !present.contains(&t.to_lowercase()))
        .cloned()
        .collect()
}

/// The error for a db_id whose tables are missing on the server.
fn tables_missing_error(db_id: &str, missing: &[String], settings: &ServerSettings) -> StartError {
    let place = match settings.layout {
        crate::input::config::Layout::Shared => {
            "the database of `dataset.engine.url_env`".to_string()
        }
        crate::input::config::Layout::PerDbId => format!("database `{db_id}`"),
    };
    let shown: Vec<&str> = missing.iter().take(8).map(String::as_str).collect();
    StartError::new(format!(
        "`dataset.engine`: db_id `{db_id}`: {} of its tables (from `dataset.tables`) are missing in {place} (layout `{}`): {}{}; load them with `sqlgate load`",
        missing.len(),
        settings.layout.as_str(),
        shown.join(", "),
        if missing.len() > shown.len() { ", ..." } else { "" }
    ))
}

/// Refuses a privileged role unless the config allows it, with the read-only set-up to use.
pub fn enforce_role(
    report: &RoleReport,
    settings: &ServerSettings,
    how_to: &str,
) -> Result<(), StartError> {
    if report.reasons.is_empty() || settings.allow_privileged_role {
        if !report.reasons.is_empty() {
            eprintln!(
                "sqlgate: warning: the server role is privileged ({}); running anyway because `dataset.engine.allow_privileged_role: true`",
                report.reasons.join("; ")
            );
        }
        return Ok(());
    }
    Err(StartError::new(format!(
        "`dataset.engine`: the role in `{}` is privileged: {}. Predictions come from pull requests and run on this server, so sqlgate refuses a role that could signal other sessions, read credentials, write or create anything, or reach the server's files. Create a read-only role (docs/SECURITY.md), e.g.\n{how_to}\nor set `dataset.engine.allow_privileged_role: true` to run anyway",
        settings.url_env,
        report.reasons.join("; ")
    )))
}

/// A server error message for a query's [`crate::engine::exec::ExecError`]: cut to a readable
/// length and scrubbed.
pub fn query_message(message: &str) -> String {
    crate::util::scrub::scrub_cut(message, 300)
}
