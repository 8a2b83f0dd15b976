//! What a clone's session inherits from the MariaDB / MySQL server, beyond its database, made
//! part of what a bird-critic run is judged on (red team round 18). An item's session is the
//! evaluator's, not pinned (the official evaluator pins nothing), so it starts with the global
//! value of every variable that has a session scope (`div_precision_increment`, `time_zone`,
//! `sql_mode`, ...) and runs `init_connect` at login, and `CONVERT_TZ` reads the named time
//! zones of the `mysql.time_zone*` tables: a preparation that sets any of them after the
//! baseline hands a prediction another answer; so do the global-only variables it reads back,
//! those that shape a clone (`innodb_default_row_format`), key caches and plugins (round 19).
//! So they are recorded with the data digests: `server:clone` (read as the reader: every
//! global variable but the positions that move by themselves, key caches, plugins),
//! `server:time_zones` (read as the administrator: the digest of the time zone tables' rows)
//! and `server:stopword_tables` (the same of every table InnoDB would take FULLTEXT stopwords
//! from, which a session names and InnoDB reads without a privilege check: round 23).
//!
//! A zone a session already loaded stays in the server's memory until it restarts, even when
//! its rows are deleted: a preparation that used a zone and removed it is not seen (a limit,
//! docs/SECURITY.md).

use super::my_text;
use crate::engine::server::data_digest::DataDigests;
use crate::engine::server::row_hashes::{mysql_error, mysql_hashed, MysqlFailure};
use crate::engine::server::{exclusive, tls};
use mysql::prelude::Queryable;
use mysql::Conn;

/// The key of the entry of the server state a clone reads: global variables, key caches,
/// text status values, plugins.
const SERVER_STATE: &str = "server:clone";

/// The key of the entry of the named time zones.
const TIME_ZONES: &str = "server:time_zones";

/// The key of the entry of the tables InnoDB may take stopwords from ([`stopword_tables`]).
const STOPWORD_TABLES: &str = "server:stopword_tables";

/// The tables (in `mysql`) `CONVERT_TZ` and `SET time_zone` read a named zone from.
const TIME_ZONE_TABLES: [&str; 5] = [
    "time_zone",
    "time_zone_name",
    "time_zone_transition",
    "time_zone_transition_type",
    "time_zone_leap_second",
];

/// The binary log's positions (MariaDB's names): they change by themselves while the binary
/// log is on (every write the run makes moves them).
const BINLOG_POSITIONS: &str = "'GTID_BINLOG_POS', 'GTID_BINLOG_STATE', 'GTID_CURRENT_POS'";

/// A replica's positions: they change by themselves while a replica thread runs.
const REPLICA_POSITIONS: &str = "'GTID_SLAVE_POS', 'GTID_CURRENT_POS'";

/// The global variables left out of the `server:clone` entry, as a SQL list: the positions that
/// change by themselves on this server. On a server with the binary log off that replicates
/// from nothing only the administrator sets them (`SET GLOBAL gtid_slave_pos`, red team round
/// 21), so they are recorded.
fn moving(conn: &mut Conn) -> Result<String, String> {
    let log_bin: Option<String> = conn
        .query_first("SELECT CAST(@@GLOBAL.log_bin AS CHAR)")
        .map_err(|e| my_text(&e))?;
    let on = log_bin.is_some_and(|v| !matches!(v.as_str(), "0" | "OFF"));
    let mut names = vec!["''"];
    if on {
        names.push(BINLOG_POSITIONS);
    }
    if exclusive::mysql_replication(conn)?.is_some() {
        names.push(REPLICA_POSITIONS);
    }
    Ok(names.join(", "))
}

/// Adds the `server:clone` entry, read on `conn` (the reader's session), `kind name=value; ...`
/// sorted: the global value of every variable (`init_connect`, those a session inherits, and
/// the global-only ones a prediction reads back or that shape what a clone is, such as
/// `innodb_default_row_format`: red team round 19) but the positions that move by themselves
/// ([`moving`]), with where it came from (MariaDB's `GLOBAL_VALUE_ORIGIN`: a `SET GLOBAL` to
/// the value it had turns `COMPILE-TIME` into `SQL`, which every user reads; red team round
/// 21), each named key cache's size, and each
/// plugin with its status and library, and every status value that is a text (its digits
/// masked: `Innodb_buffer_pool_dump_status`, which `SET GLOBAL innodb_buffer_pool_dump_now`
/// rewrites while the variable reads back `OFF`; red team round 20; the counters change by
/// themselves and are left out). MariaDB's `SYSTEM_VARIABLES` and `GLOBAL_STATUS`; MySQL's
/// `performance_schema`.
pub fn add_server_state(conn: &mut Conn, digests: &mut DataDigests) -> Result<(), String> {
    let reading = |e: mysql::Error| format!("reading the server's variables: {}", my_text(&e));
    let mariadb: Option<String> = conn
        .query_first(
            "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = \
             'information_schema' AND TABLE_NAME = 'SYSTEM_VARIABLES'",
        )
        .map_err(reading)?;
    let status = match mariadb {
        Some(_) => "information_schema.GLOBAL_STATUS",
        None => "performance_schema.global_status",
    };
    let moving = moving(conn)?;
    let variables = match mariadb {
        Some(_) => format!(
            "SELECT CONCAT('variable ', LOWER(VARIABLE_NAME)), CONCAT_WS(' ', \
             IFNULL(GLOBAL_VALUE, ''), 'from', GLOBAL_VALUE_ORIGIN, GLOBAL_VALUE_PATH) \
             FROM information_schema.SYSTEM_VARIABLES WHERE VARIABLE_SCOPE <> 'SESSION ONLY' \
             AND VARIABLE_NAME NOT IN ({moving})"
        ),
        None => format!(
            "SELECT CONCAT('variable ', LOWER(VARIABLE_NAME)), IFNULL(VARIABLE_VALUE, '') \
             FROM performance_schema.global_variables WHERE UPPER(VARIABLE_NAME) NOT IN ({moving})"
        ),
    };
    let mut parts: Vec<(String, String)> = conn.query(variables).map_err(reading)?;
    if parts.is_empty() {
        return Err("the server lists no global variables".to_string());
    }
    if mariadb.is_some() {
        let caches: Vec<(String, String)> = conn
            .query(
                "SELECT CONCAT('key cache ', KEY_CACHE_NAME), CONCAT_WS(' ', SEGMENTS, \
                 FULL_SIZE, BLOCK_SIZE) FROM information_schema.KEY_CACHES",
            )
            .map_err(reading)?;
        parts.extend(caches);
    }
    let statuses: Vec<(String, String)> = conn
        .query(format!(
            "SELECT CONCAT('status ', LOWER(VARIABLE_NAME)), \
             REGEXP_REPLACE(VARIABLE_VALUE, '[0-9]+', 'N') FROM {status} \
             WHERE VARIABLE_VALUE NOT REGEXP '^-?[0-9.]*$'"
        ))
        .map_err(reading)?;
    parts.extend(statuses);
    let plugins: Vec<(String, String)> = conn
        .query(
            "SELECT CONCAT('plugin ', PLUGIN_NAME), CONCAT_WS(' ', PLUGIN_STATUS, PLUGIN_TYPE, \
             IFNULL(PLUGIN_LIBRARY, 'built-in')) FROM information_schema.PLUGINS",
        )
        .map_err(reading)?;
    parts.extend(plugins);
    parts.sort();
    let line: Vec<String> = parts
        .iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect();
    digests.insert(SERVER_STATE.to_string(), line.join("; "));
    Ok(())
}

/// Adds the entries read as the administrator (`admin_url`): `server:time_zones` (the digest
/// of each time zone table's rows) and `server:stopword_tables` ([`stopword_tables`]), each as
/// the benchmark's own tables are digested ([`mysql_rows_line`]; not `CHECKSUM
/// TABLE`, whose sum of row CRCs one chosen row cancels: red team round 24).
pub fn add_admin_entries(admin_url: &str, digests: &mut DataDigests) -> Result<(), String> {
    let tls::MysqlTarget { opts, mode } = tls::mysql_target(admin_url)?;
    let mut conn = tls::mysql_connect(opts, mode).map_err(|e| my_text(&e))?;
    let zones: Vec<(String, String)> = (TIME_ZONE_TABLES.iter())
        .map(|table| ("mysql".to_string(), table.to_string()))
        .collect();
    let zones = mysql_rows_line(&mut conn, &zones)
        .map_err(|e| format!("reading the time zone tables: {e}"))?;
    digests.insert(TIME_ZONES.to_string(), zones);
    let stopwords = stopword_tables(&mut conn)
        .map_err(|e| format!("reading the tables InnoDB may take stopwords from: {e}"))?;
    digests.insert(STOPWORD_TABLES.to_string(), stopwords);
    Ok(())
}

/// The digest of every table InnoDB would take stopwords from, whoever may read it: an InnoDB
/// table whose first column is `value` (`innodb_ft_server_stopword_table`, and the session's
/// `innodb_ft_user_stopword_table`, which any user may set and which InnoDB opens without a
/// privilege check when it builds a FULLTEXT index: a prediction reads such a table in a
/// database it cannot see, word by word through `MATCH ... AGAINST`; red team round 23). The
/// run's own databases (`sqlgate_live_...`: templates and clones exist when the end-of-run
/// digests are read) are left out, so a run on clones refuses any other of that name at
/// start-up.
fn stopword_tables(conn: &mut Conn) -> Result<String, String> {
    let tables: Vec<(String, String)> = conn
        .query(
            "SELECT c.TABLE_SCHEMA, c.TABLE_NAME FROM information_schema.COLUMNS c \
             JOIN information_schema.TABLES t ON t.TABLE_SCHEMA = c.TABLE_SCHEMA \
             AND t.TABLE_NAME = c.TABLE_NAME WHERE c.ORDINAL_POSITION = 1 \
             AND LOWER(c.COLUMN_NAME) = 'value' AND t.ENGINE = 'InnoDB' \
             AND c.TABLE_SCHEMA NOT LIKE 'sqlgate\\_live\\_%' ORDER BY 1, 2",
        )
        .map_err(|e| my_text(&e))?;
    match tables.is_empty() {
        true => Ok("none".to_string()),
        false => mysql_rows_line(conn, &tables),
    }
}

/// The digests of the tables `names` (schema, table), read on `conn` as the benchmark's own
/// tables are (columns, row count, the rows' SHA-256 hashes), as one line
/// `schema.table=digest; ...` (`missing` for one that does not exist): for the server's own
/// tables a run on clones records, where `CHECKSUM TABLE`, a sum of one CRC-32 a row, is
/// cancelled by one chosen row (red team round 24).
fn mysql_rows_line(conn: &mut Conn, names: &[(String, String)]) -> Result<String, String> {
    conn.query_drop("SET SESSION group_concat_max_len = 18446744073709551615")
        .map_err(|e| mysql_error(&e))?;
    let mut parts = Vec::new();
    for (schema, table) in names {
        let hashed = mysql_hashed(conn, schema, table).map_err(MysqlFailure::into_text)?;
        let digest = match hashed.columns.is_empty() {
            true => "missing".to_string(),
            false => hashed.digest(),
        };
        parts.push(format!("{schema}.{table}={digest}"));
    }
    Ok(parts.join("; "))
}
