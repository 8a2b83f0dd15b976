//! What a clone's session inherits from the MariaDB / MySQL server, beyond its database, made
//! part of what a bird-critic run is judged on (red team round 18). An item's session is the
//! evaluator's, not pinned (the official evaluator pins nothing), so it starts with the global
//! value of every variable that has a session scope (`div_precision_increment`, `time_zone`,
//! `sql_mode`, ...) and runs `init_connect` at login, and `CONVERT_TZ` reads the named time
//! zones of the `mysql.time_zone*` tables: a preparation that sets any of them after the
//! baseline hands a prediction another answer. So they are recorded with the data digests:
//! `server:clone` (read as the reader: `init_connect` and the global value of each variable a
//! session inherits) and `server:time_zones` (read as the administrator: `CHECKSUM TABLE` of
//! the time zone tables).
//!
//! A zone a session already loaded stays in the server's memory until it restarts, even when
//! its rows are deleted: a preparation that used a zone and removed it is not seen (a limit,
//! docs/SECURITY.md).

use super::my_text;
use crate::engine::server::data_digest::DataDigests;
use crate::engine::server::tls;
use mysql::prelude::Queryable;
use mysql::Conn;

/// The key of the entry of what every session inherits.
const INHERITED: &str = "server:clone";

/// The key of the entry of the named time zones.
const TIME_ZONES: &str = "server:time_zones";

/// The tables `CONVERT_TZ` and `SET time_zone` read a named zone from.
const TIME_ZONE_TABLES: &str = "mysql.time_zone, mysql.time_zone_name, \
     mysql.time_zone_transition, mysql.time_zone_transition_type, mysql.time_zone_leap_second";

/// Adds the `server:clone` entry, read on `conn` (the reader's session): `init_connect` and
/// the global value of every variable with a session scope (MariaDB's `SYSTEM_VARIABLES`;
/// MySQL's `performance_schema`), `name=value; ...` sorted.
pub fn add_inherited(conn: &mut Conn, digests: &mut DataDigests) -> Result<(), String> {
    let reading = |e: mysql::Error| format!("reading the server's variables: {}", my_text(&e));
    let mariadb: Option<String> = conn
        .query_first(
            "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = \
             'information_schema' AND TABLE_NAME = 'SYSTEM_VARIABLES'",
        )
        .map_err(reading)?;
    let sql = match mariadb {
        Some(_) => {
            "SELECT VARIABLE_NAME, IFNULL(GLOBAL_VALUE, '') FROM information_schema.SYSTEM_VARIABLES \
             WHERE VARIABLE_SCOPE = 'SESSION' OR VARIABLE_NAME = 'INIT_CONNECT'"
        }
        None => {
            "SELECT g.VARIABLE_NAME, IFNULL(g.VARIABLE_VALUE, '') FROM \
             performance_schema.global_variables g WHERE g.VARIABLE_NAME = 'init_connect' \
             OR g.VARIABLE_NAME IN (SELECT s.VARIABLE_NAME FROM performance_schema.session_variables s)"
        }
    };
    let mut variables: Vec<(String, String)> = conn.query(sql).map_err(reading)?;
    if variables.is_empty() {
        return Err("the server lists no variables a session inherits".to_string());
    }
    variables.sort();
    let line: Vec<String> = variables
        .iter()
        .map(|(name, value)| format!("{}={value}", name.to_lowercase()))
        .collect();
    digests.insert(INHERITED.to_string(), line.join("; "));
    Ok(())
}

/// Adds the `server:time_zones` entry, read as the administrator (`admin_url`): the checksum
/// of each time zone table.
pub fn add_time_zones(admin_url: &str, digests: &mut DataDigests) -> Result<(), String> {
    let tls::MysqlTarget { opts, mode } = tls::mysql_target(admin_url)?;
    let mut conn = tls::mysql_connect(opts, mode).map_err(|e| my_text(&e))?;
    let sums: Vec<(String, Option<u64>)> = conn
        .query(format!("CHECKSUM TABLE {TIME_ZONE_TABLES}"))
        .map_err(|e| format!("reading the time zone tables: {}", my_text(&e)))?;
    let line: Vec<String> = sums
        .iter()
        .map(|(table, sum)| match sum {
            Some(sum) => format!("{table}={sum}"),
            None => format!("{table}=missing"),
        })
        .collect();
    digests.insert(TIME_ZONES.to_string(), line.join("; "));
    Ok(())
}
