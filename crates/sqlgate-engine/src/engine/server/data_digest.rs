//! Content digests of the rows on a server: what a run on a server engine is judged on, made a
//! trusted input. `sqlgate baseline update` records one digest per table the role can read; a
//! later run recomputes them at start-up and refuses to score (exit 2, naming the table) when
//! they differ from those of the trusted baseline (the base commit's in a pull-request run),
//! and recomputes them when scoring ends, failing closed when they differ from the start-up
//! ones (`score::data::unchanged`). The start-up digests are taken inside the engine's hold on
//! the data (`Engine::hold_data`): on PostgreSQL in the snapshot every scoring transaction then
//! imports ([`postgres_hold`]), on MariaDB / MySQL while a session locks every table for reading.
//!
//! Each table's digest is SHA-256 over its column names and types, its row count and the
//! server-side aggregate of its rows: every row is hashed on the server (SHA-256 of an
//! injective text of the row), the row hashes are sorted and concatenated, and the
//! concatenation is hashed again, so the digest is independent of the physical row order and
//! finding two tables with the same digest means finding a SHA-256 collision. A sum or XOR of
//! per-row hashes would be cheaper but is not collision-resistant: a pull request that controls
//! the rows can solve for a matching sum (Wagner's generalised birthday attack, linear algebra
//! for XOR). Only 32 bytes per row stay on the server for the sort and one short row per table
//! crosses the network.
//!
//! Each database also has a settings entry (key `<database>:settings`, its value the line
//! [`structure`] reads back: the database's collation and locale, the columns with another
//! collation, `sql_mode`, the time zone, ...), so a change of what decides how the rows compare
//! is a change of the data too. On PostgreSQL it also holds a digest per catalog of how the
//! server computes (`builtins`: the built-in functions, aggregates, operators, casts, text
//! search configurations, ... as `initdb` made them), so a built-in replaced in place is too.
//!
//! Each database also has an order entry (key `<database>:order`, its value `<table>=<digest>;
//! ...`, on MariaDB / MySQL `<table>=<storage engine> <digest>`): per table, SHA-256 over the
//! row hashes in the order a plain scan returns them (the PostgreSQL heap order, with
//! `synchronize_seqscans` off and no parallel scan; a MariaDB full scan). A query without
//! `ORDER BY` (`LIMIT 1`, `string_agg`, a column beside `GROUP BY`) reads rows in that order,
//! so a preparation that keeps the rows but moves them (a delete and re-insert, `CLUSTER`, a
//! table rebuilt on another storage engine) is a change of the data too, named as such. A
//!
//! Each database also has a structure entry (key `<database>:structure`, its value the line
//! [`structure`] reads back: every index by its definition, the tables' storage options, the
//! columns' statistics targets and options, extended statistics, the planner settings and
//! MariaDB's optimizer variables): what a preparation can set that changes the plans, and so
//! the order of rows a query does not fully order. A baseline without settings, order or
//! structure entries was made by an older sqlgate.

use crate::engine::server::row_hashes::{mysql_error, mysql_hashed, table_digest, MysqlFailure};
use crate::engine::server::{builtins, catalog_rows, structure, tls};
use crate::input::config::{Config, Layout};
use crate::input::dataset::Dataset;
use crate::util::error::InputError;
use std::collections::BTreeMap;
use std::time::Duration;

pub use crate::engine::exec::DataDigests;

/// How long the digest of one table may take on the server.
const TABLE_TIMEOUT: Duration = Duration::from_secs(600);

/// How long the digest session waits for a lock another session holds: the data are loaded
/// before the run and read by nobody else, so a lock held at start-up is a preparation's, which
/// must not stall the run table after table (each under [`TABLE_TIMEOUT`]); past it the run stops,
/// naming the error.
pub(crate) const LOCK_WAIT: Duration = Duration::from_secs(10);

/// How many differing tables an error lists before it only counts them.
const LISTED: usize = 8;

/// The end of a settings entry's key.
const SETTINGS: &str = ":settings";

/// The start of a settings-entry part holding a digest of built-in catalog rows.
const BUILTINS: &str = "builtins ";

/// The start of a structure-entry part holding a digest of a catalog's rows ([`catalog_rows`]).
const CATALOG: &str = "catalog ";

/// The end of an order entry's key.
const ORDER: &str = ":order";

/// The end of a structure entry's key.
const STRUCTURE: &str = ":structure";

/// Whether `digests` were made by this sqlgate: they hold a settings, an order and a structure
/// entry per database (an older sqlgate recorded table digests only, or not all three).
pub fn covers_settings(digests: &DataDigests) -> bool {
    [SETTINGS, ORDER, STRUCTURE]
        .iter()
        .all(|end| digests.keys().any(|key| key.ends_with(end)))
}

/// The digests of the configured server's data, computed by `digest` (the server's side,
/// [`postgres_digests`] or [`mysql_digests`]) from its URL and the databases the run uses (the
/// URL's in the shared layout, each db_id's with `per_db_id`). Errors name the key and carry no
/// secret.
pub fn of_server(
    config: &Config,
    dataset: &Dataset,
    digest: impl Fn(&str, &[String]) -> Result<DataDigests, String>,
) -> Result<DataDigests, InputError> {
    let engine = &config.dataset.engine;
    let name = engine.url_env.clone().unwrap_or_default();
    let url = crate::engine::server::read_url(&name)
        .map_err(|error| crate::engine::server::start_failure(config, error))?;
    let databases: Vec<String> = match engine.layout() {
        Layout::Shared => vec![String::new()],
        Layout::PerDbId => dataset.databases.keys().cloned().collect(),
    };
    digest(&url, &databases).map_err(|message| failure(config, &message))
}

/// The error of data digests that could not be computed (`message`), naming the key and
/// carrying no secret.
fn failure(config: &Config, message: &str) -> InputError {
    InputError::Config {
        path: config.path.clone(),
        message: crate::util::scrub::scrub_cut(
            &format!("`dataset.engine`: cannot compute the data digests: {message}"),
            1500,
        ),
    }
}

/// The tables whose digests differ between `recorded` (the trusted baseline's) and `now`, each
/// with how: changed, missing now, or new. Empty when the data are the same.
pub fn differences(recorded: &DataDigests, now: &DataDigests) -> Vec<String> {
    let mut found = Vec::new();
    for (table, digest) in recorded {
        match now.get(table) {
            None => found.push(format!("`{table}` is missing")),
            Some(current)
                if current != digest
                    && (table.ends_with(SETTINGS) || table.ends_with(STRUCTURE)) =>
            {
                found.push(settings_change(table, digest, current))
            }
            Some(current) if current != digest && table.ends_with(ORDER) => {
                found.extend(order_change(table, digest, current))
            }
            Some(current) if current != digest => {
                found.push(format!("`{table}` has other content"))
            }
            Some(_) => {}
        }
    }
    for table in now.keys().filter(|t| !recorded.contains_key(*t)) {
        found.push(format!("`{table}` is new"));
    }
    found
}

/// How a settings entry changed: each `name=value` that differs, with its recorded value.
fn settings_change(key: &str, recorded: &str, now: &str) -> String {
    let before: Vec<&str> = recorded.split("; ").collect();
    let changed: Vec<String> = now
        .split("; ")
        .filter(|part| !before.contains(part))
        .map(|part| {
            let name = part.split('=').next().unwrap_or_default();
            if let Some(catalog) = name.strip_prefix(CATALOG) {
                return format!(
                    "`{name}`: rows of `{catalog}` differ from the baseline's (an object, a \
                     comment, a grant or a setting the server's preparation made, changed or \
                     dropped), which a prediction on a clone can read"
                );
            }
            if let Some(catalog) = name.strip_prefix(BUILTINS) {
                return format!(
                    "`{name}`: the server's built-in rows of `{catalog}` were changed in place (a \
                     built-in replaced, altered or dropped), so the server computes differently"
                );
            }
            let was = before
                .iter()
                .find(|b| b.split('=').next() == Some(name))
                .map_or("unset", |b| b.split_once('=').map_or("", |(_, v)| v));
            format!("`{part}` (recorded: `{was}`)")
        })
        .collect();
    match changed.is_empty() {
        true => format!("`{key}` differ"),
        false => format!("`{key}` differ: {}", changed.join(", ")),
    }
}

/// How an order entry changed: each table (in both) whose storage engine or row order differs
/// from the recorded one. A table missing or new is named by its own entry.
fn order_change(key: &str, recorded: &str, now: &str) -> Vec<String> {
    let parse = |line: &str| -> BTreeMap<String, (String, String)> {
        line.split("; ")
            .filter_map(|part| part.rsplit_once('='))
            .map(|(table, value)| {
                let (engine, digest) = value.rsplit_once(' ').unwrap_or(("", value));
                (table.to_string(), (engine.to_string(), digest.to_string()))
            })
            .collect()
    };
    let before = parse(recorded);
    let mut found = Vec::new();
    for (table, (engine, digest)) in parse(now) {
        match before.get(&table) {
            Some((was, _)) if *was != engine => found.push(format!(
                "`{table}` is on the {engine} storage engine (recorded: {was}), and a plain scan's \
                 row order depends on it"
            )),
            Some((_, was)) if *was != digest => found.push(format!(
                "`{table}`: its row order differs from the baseline's (a query without `ORDER BY` \
                 would read its rows in another order)"
            )),
            _ => {}
        }
    }
    if found.is_empty() {
        found.push(format!("`{key}` differ"));
    }
    found
}

/// The entry of one table in an order entry's value.
fn order_part(key: &str, engine: Option<&str>, digest: &str) -> String {
    match engine {
        Some(engine) => format!("{key}={engine} {digest}"),
        None => format!("{key}={digest}"),
    }
}

/// The differences as one line: the first [`LISTED`] and how many more.
pub fn describe(differences: &[String]) -> String {
    let shown: Vec<&str> = differences
        .iter()
        .take(LISTED)
        .map(String::as_str)
        .collect();
    let more = differences.len() - shown.len();
    match more {
        0 => shown.join(", "),
        _ => format!("{} and {more} more", shown.join(", ")),
    }
}

/// What a digest of one PostgreSQL database reads besides its tables, their order, its
/// settings and its structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// A base database: the built-in catalogs too, and every catalog row when its items run on
    /// clones (`clones`).
    Base { clones: bool },
    /// An item's clone in the Query data check, compared with its twin: neither (no role a clone
    /// is judged as can change a built-in; the check reads the clone's catalog rows itself,
    /// written so that two clones holding the same compare equal:
    /// `catalog_rows::postgres_clone_rows`), so a digest costs a fraction of a base digest.
    Clone,
}

/// The digests of every readable table of each database (the URL's when the name is empty),
/// read as far as `reach` says.
pub(crate) fn postgres_digests(
    url: &str,
    databases: &[String],
    reach: Reach,
) -> Result<DataDigests, String> {
    let target = tls::postgres_target(url)?;
    let mut digests = DataDigests::new();
    for database in databases {
        let mut client = postgres_connect(&target, database)?;
        postgres_database(&mut client, &mut digests, reach).map_err(|e| postgres_error(&e))?;
    }
    if reach == (Reach::Base { clones: true }) {
        refuse_unreadable(&digests)?;
    }
    Ok(digests)
}

/// On a run on clones, the error naming a relation of a base database the reader cannot read:
/// every clone lets its prediction read it, while no digest could vouch for its rows.
fn refuse_unreadable(digests: &DataDigests) -> Result<(), String> {
    let unreadable = digests
        .iter()
        .filter(|(key, _)| key.ends_with(STRUCTURE))
        .flat_map(|(_, line)| line.split("; "))
        .find(|part| part.starts_with("unreadable "));
    match unreadable {
        Some(part) => Err(format!(
            "the reader role (`dataset.engine.url_env`) cannot read this ({part}), while every \
             item's clone lets its prediction read it: grant the reader SELECT on it"
        )),
        None => Ok(()),
    }
}

/// The key of the server-wide entry of a run whose items run on clones
/// ([`structure::postgres_server_state`]).
pub(crate) const SERVER_STATE: &str = "server:structure";

/// Adds the server-wide entry of a run on clones to `digests`, read in a session of its own on
/// the URL's database.
pub(crate) fn postgres_server_entry(url: &str, digests: &mut DataDigests) -> Result<(), String> {
    let target = tls::postgres_target(url)?;
    let mut client = postgres_connect(&target, "")?;
    let error = |e: postgres::Error| postgres_error(&e);
    client
        .batch_execute(structure::POSTGRES_PINS)
        .map_err(error)?;
    let mut parts = vec![structure::postgres_server_state(&mut client).map_err(error)?];
    parts.extend(catalog_rows::postgres_catalog_rows(&mut client, true).map_err(error)?);
    digests.insert(SERVER_STATE.to_string(), parts.join("; "));
    Ok(())
}

/// The key of the entry of the server's configuration files on a run on clones
/// ([`postgres_file_settings`]).
const FILE_SETTINGS: &str = "server:file_settings";

/// Adds the entry of every line of the server's configuration files (`pg_file_settings`, read
/// as the administrator `admin_url`: `name = value`, in file order, with whether it applies):
/// a custom setting set by `ALTER SYSTEM` (`rt19.flag`) is not in `pg_settings` for a session
/// that never defined it, while a clone's prediction reads it with `current_setting` (red team
/// round 19).
pub(crate) fn postgres_file_settings(
    admin_url: &str,
    digests: &mut DataDigests,
) -> Result<(), String> {
    let target = tls::postgres_target(admin_url)?;
    let mut client = postgres_connect(&target, "")?;
    let line: String = client
        .query_one(
            "SELECT coalesce(string_agg(concat_ws(' ', name, '=', setting, CASE WHEN applied \
             THEN '' ELSE '(not applied)' END, error), '; ' ORDER BY seqno), '') \
             FROM pg_catalog.pg_file_settings",
            &[],
        )
        .map_err(|e| {
            format!(
                "reading the server's configuration files: {}",
                postgres_error(&e)
            )
        })?
        .get(0);
    digests.insert(FILE_SETTINGS.to_string(), line);
    Ok(())
}

/// The digests of the base `databases` of a run on clones, with the server-wide entry.
pub(crate) fn postgres_digests_with_server(
    url: &str,
    databases: &[String],
) -> Result<DataDigests, String> {
    let mut digests = postgres_digests(url, databases, Reach::Base { clones: true })?;
    postgres_server_entry(url, &mut digests)?;
    Ok(digests)
}

/// A new session of the synchronous client on `database` (the URL's when empty).
fn postgres_connect(target: &tls::PgTarget, database: &str) -> Result<postgres::Client, String> {
    let mut config = target.config.clone();
    if !database.is_empty() {
        config.dbname(database);
    }
    config.connect_timeout(crate::engine::server::CONNECT_TIMEOUT);
    let client = config
        .connect(target.connector.clone())
        .map_err(|e| postgres_error(&e))?;
    super::exclusive::opened();
    Ok(client)
}

/// A PostgreSQL session whose open `REPEATABLE READ` transaction holds one database's data as
/// they were digested: its exported snapshot, which every scoring transaction imports, and the
/// `ACCESS SHARE` locks of every digested table, which keep them from being altered, dropped,
/// truncated or rewritten until the transaction ends.
pub(crate) struct PostgresHold {
    /// The session (its transaction open until the run releases it).
    pub client: postgres::Client,
    /// The id `pg_export_snapshot()` gave, for `SET TRANSACTION SNAPSHOT`.
    pub snapshot: String,
}

impl std::fmt::Debug for PostgresHold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresHold")
            .field("snapshot", &self.snapshot)
            .finish_non_exhaustive()
    }
}

/// Opens a session on `database` (the URL's when empty) that no idle or transaction timeout
/// ends, starts a `REPEATABLE READ READ ONLY` transaction, exports its snapshot and adds the
/// digests of the database, taken in that snapshot, to `digests` (with every catalog row when
/// its items run on clones, `clones`); the session is kept open with its transaction.
pub(crate) fn postgres_hold(
    url: &str,
    database: &str,
    digests: &mut DataDigests,
    clones: bool,
) -> Result<PostgresHold, String> {
    let target = tls::postgres_target(url)?;
    let mut client = postgres_connect(&target, database)?;
    let error = |e: postgres::Error| postgres_error(&e);
    client
        .batch_execute(
            "SELECT set_config(name, '0', false) FROM pg_catalog.pg_settings WHERE name IN \
             ('idle_in_transaction_session_timeout', 'idle_session_timeout', \
             'transaction_timeout')",
        )
        .map_err(error)?;
    // A statement of its own: after a query in the same simple-query message, the transaction
    // would already have begun.
    client
        .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        .map_err(error)?;
    let snapshot: String = client
        .query_one("SELECT pg_catalog.pg_export_snapshot()", &[])
        .map_err(error)?
        .get(0);
    postgres_database(&mut client, digests, Reach::Base { clones }).map_err(error)?;
    if clones {
        refuse_unreadable(digests)?;
    }
    Ok(PostgresHold { client, snapshot })
}

/// Adds the digest of every table of the session's database that the role can read, in any
/// schema but the system's, and the database's settings and structure entries (with the
/// built-in catalogs and the catalog rows as `reach` says: [`builtins`], [`catalog_rows`]),
/// under the settings every sqlgate session pins ([`structure::POSTGRES_PINS`]).
fn postgres_database(
    client: &mut postgres::Client,
    digests: &mut DataDigests,
    reach: Reach,
) -> Result<(), postgres::Error> {
    client.batch_execute(&format!(
        "SET default_transaction_read_only = on; SET statement_timeout = {}; {}; \
         SET client_min_messages = error; SET max_parallel_workers_per_gather = 0; \
         SET lock_timeout = {}",
        TABLE_TIMEOUT.as_millis(),
        structure::POSTGRES_PINS,
        LOCK_WAIT.as_millis()
    ))?;
    let database: String = client
        .query_one("SELECT current_database()::text", &[])?
        .get(0);
    let mut settings = vec![structure::postgres_settings(client)?];
    if reach != Reach::Clone {
        settings.extend(builtins::postgres_parts(client)?);
    }
    digests.insert(format!("{database}{SETTINGS}"), settings.join("; "));
    let mut plans = vec![structure::postgres_structure(client)?];
    if reach == (Reach::Base { clones: true }) {
        plans.extend(catalog_rows::postgres_catalog_rows(client, false)?);
    }
    digests.insert(format!("{database}{STRUCTURE}"), plans.join("; "));
    let tables = client.query(
        "SELECT current_database()::text || '.' || n.nspname::text || '.' || c.relname::text, \
         quote_ident(n.nspname) || '.' || quote_ident(c.relname), \
         (SELECT string_agg(quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod), ', ' \
          ORDER BY a.attnum) FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 \
          AND NOT a.attisdropped) \
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE c.relkind IN ('r','p','v','m','f','S') AND NOT c.relispartition \
         AND n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\\_%' \
         AND has_schema_privilege(n.oid, 'USAGE') AND has_any_column_privilege(c.oid, 'SELECT') \
         ORDER BY 1",
        &[],
    )?;
    let mut orders = Vec::new();
    for table in tables {
        let (key, quoted): (String, String) = (table.get(0), table.get(1));
        let columns: Option<String> = table.get(2);
        // `ROW(t.*)`, not `t`: a column named `t` would win over the table alias and be the only
        // thing hashed (red team round 7); for every other table the text is the same.
        let row = client.query_one(
            &format!(
                "SELECT count(*), encode(sha256(coalesce(string_agg(h, ''::bytea ORDER BY h), ''::bytea)), 'hex') \
                 FROM (SELECT sha256(convert_to(ROW(t.*)::text, 'UTF8')) h FROM {quoted} t) r"
            ),
            &[],
        )?;
        let digest = table_digest(&columns.unwrap_or_default(), row.get(0), row.get(1));
        // Hashed as the rows stream from a plain scan: no `ORDER BY`, no parallel workers,
        // `synchronize_seqscans` off (pinned), so in heap order, the order the scoring sessions
        // read them in.
        let order: String = client
            .query_one(
                &format!(
                    "SELECT encode(sha256(coalesce(string_agg(h, ''::bytea), ''::bytea)), 'hex') \
                     FROM (SELECT sha256(convert_to(ROW(t.*)::text, 'UTF8')) h FROM {quoted} t) r"
                ),
                &[],
            )?
            .get(0);
        orders.push(order_part(&key, None, &order));
        digests.insert(key, digest);
    }
    digests.insert(format!("{database}{ORDER}"), orders.join("; "));
    Ok(())
}

fn postgres_error(error: &postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => db.message().to_string(),
        None => tls::with_causes(error),
    }
}

/// The statement that makes a MariaDB / MySQL session wait for a lock at most [`LOCK_WAIT`] (a
/// lock held past it is an error, not a hang).
pub(crate) fn mysql_lock_waits() -> String {
    format!(
        "SET SESSION lock_wait_timeout = {0}, innodb_lock_wait_timeout = {0}",
        LOCK_WAIT.as_secs()
    )
}

/// Every table the user can read in each database (the URL's when the name is empty), on one
/// connection.
pub(crate) fn mysql_digests(url: &str, databases: &[String]) -> Result<DataDigests, String> {
    use mysql::prelude::Queryable;
    let target = tls::mysql_target(url)?;
    let url_database = target.opts.get_db_name().unwrap_or_default().to_string();
    let schemas: Vec<String> = databases
        .iter()
        .map(|d| match d.is_empty() {
            true => url_database.clone(),
            false => d.clone(),
        })
        .collect();
    if schemas.iter().any(String::is_empty) {
        return Err("the URL names no database, which the `shared` layout reads".into());
    }
    let opts = mysql::OptsBuilder::from_opts(target.opts).db_name(None::<String>);
    let mut conn = tls::mysql_connect(opts.into(), target.mode).map_err(|e| mysql_error(&e))?;
    for statement in [
        "SET NAMES utf8mb4",
        "SET SESSION TRANSACTION READ ONLY",
        &mysql_lock_waits(),
    ] {
        conn.query_drop(statement).map_err(|e| mysql_error(&e))?;
    }
    let pins = structure::mysql_pins(&mut conn).map_err(|e| mysql_error(&e))?;
    structure::mysql_pin(&mut conn, &pins).map_err(|e| mysql_error(&e))?;
    let mut settings = Vec::new();
    for schema in &schemas {
        let line =
            structure::mysql_settings(&mut conn, &pins, schema).map_err(|e| mysql_error(&e))?;
        settings.push((format!("{schema}{SETTINGS}"), line));
    }
    conn.query_drop("SET SESSION group_concat_max_len = 18446744073709551615")
        .map_err(|e| mysql_error(&e))?;
    let seconds = TABLE_TIMEOUT.as_secs();
    let timeout = conn
        .query_drop(format!("SET SESSION max_statement_time = {seconds}"))
        .or_else(|_| {
            conn.query_drop(format!(
                "SET SESSION max_execution_time = {}",
                seconds * 1000
            ))
        });
    timeout.map_err(|e| mysql_error(&e))?;
    for schema in &schemas {
        let line = structure::mysql_structure(&mut conn, schema).map_err(|e| mysql_error(&e))?;
        settings.push((format!("{schema}{STRUCTURE}"), line));
    }
    let mut digests = mysql_tables(&mut conn, &schemas).map_err(MysqlFailure::into_text)?;
    digests.extend(settings);
    Ok(digests)
}

/// The digests of every table the session can read in `schemas`. A row's text is injective:
/// each column is `n` (NULL) or `v` and the hex of its bytes, joined by commas.
fn mysql_tables(conn: &mut mysql::Conn, schemas: &[String]) -> Result<DataDigests, MysqlFailure> {
    use mysql::prelude::Queryable;
    let mut tables: Vec<(String, String, String)> = Vec::new();
    for schema in schemas {
        tables.extend(conn.exec::<(String, String, String), _, _>(
            "SELECT table_schema, table_name, IFNULL(engine, '-') FROM information_schema.tables \
             WHERE table_schema = ? ORDER BY table_name",
            (schema,),
        )?);
    }
    let mut digests = DataDigests::new();
    let mut orders: BTreeMap<String, Vec<String>> =
        schemas.iter().map(|s| (s.clone(), Vec::new())).collect();
    for (schema, table, engine) in tables {
        let key = format!("{schema}.{table}");
        let hashed = mysql_hashed(conn, &schema, &table)?;
        let scan = order_part(&key, Some(&engine), &hashed.scanned);
        orders.entry(schema.clone()).or_default().push(scan);
        digests.insert(key, hashed.digest());
    }
    for (schema, parts) in orders {
        digests.insert(format!("{schema}{ORDER}"), parts.join("; "));
    }
    Ok(digests)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_name_changed_missing_and_new_tables() {
        let recorded: DataDigests = [("a", "1"), ("b", "2"), ("c", "3")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut now = recorded.clone();
        assert!(differences(&recorded, &now).is_empty());
        now.insert("b".into(), "9".into());
        now.remove("c");
        now.insert("d".into(), "4".into());
        assert_eq!(
            differences(&recorded, &now),
            vec!["`b` has other content", "`c` is missing", "`d` is new"]
        );
        let many: Vec<String> = (0..10).map(|i| i.to_string()).collect();
        assert!(!covers_settings(&recorded));
        assert_eq!(describe(&many), "0, 1, 2, 3, 4, 5, 6, 7 and 2 more");
    }

    #[test]
    fn a_settings_entry_names_what_changed() {
        let key = "bird:settings".to_string();
        let mut recorded: DataDigests = [(key.clone(), "sql_mode=A; time_zone=+00:00".to_string())]
            .into_iter()
            .collect();
        assert!(
            !covers_settings(&recorded),
            "an older sqlgate's: no order entry"
        );
        recorded.insert("bird:order".into(), String::new());
        assert!(
            !covers_settings(&recorded),
            "an older sqlgate's: no structure entry"
        );
        recorded.insert("bird:structure".into(), "setting work_mem=4MB".into());
        assert!(covers_settings(&recorded));
        let mut now = recorded.clone();
        now.insert(key.clone(), "sql_mode=A,B; time_zone=+00:00".into());
        assert_eq!(
            differences(&recorded, &now),
            vec!["`bird:settings` differ: `sql_mode=A,B` (recorded: `A`)"]
        );
        now.insert(key, "sql_mode=A".into());
        assert_eq!(differences(&recorded, &now), vec!["`bird:settings` differ"]);
        let mut planned = recorded.clone();
        planned.insert(
            "bird:structure".into(),
            "index t.i=BTREE (id D); setting work_mem=4MB".into(),
        );
        assert_eq!(
            differences(&recorded, &planned),
            vec!["`bird:structure` differ: `index t.i=BTREE (id D)` (recorded: `unset`)"]
        );
    }

    #[test]
    fn an_order_entry_names_the_table_whose_order_or_engine_changed() {
        let recorded: DataDigests = [(
            "bird:order".to_string(),
            "bird.a=InnoDB 11; bird.b=InnoDB 22; bird.c=InnoDB 33".to_string(),
        )]
        .into_iter()
        .collect();
        let mut now = recorded.clone();
        now.insert(
            "bird:order".into(),
            "bird.a=InnoDB 11; bird.b=InnoDB 99; bird.c=MyISAM 33".into(),
        );
        let found = differences(&recorded, &now);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].starts_with("`bird.b`: its row order differs from the baseline's"));
        assert!(found[1].starts_with("`bird.c` is on the MyISAM storage engine (recorded: InnoDB)"));
        let postgres: DataDigests = [("db:order".to_string(), "db.public.t=11".to_string())]
            .into_iter()
            .collect();
        let mut moved = postgres.clone();
        moved.insert("db:order".into(), "db.public.t=12".into());
        assert!(differences(&postgres, &moved)[0].starts_with("`db.public.t`: its row order"));
    }
}
