//! The MySQL / MariaDB side of `sqlgate load` (the `mysql` client crate, TLS as the engine's).

use super::types::{quote, ColumnType, Server};
use super::{create_statement, insert_statement, Target};
use crate::engine::server::tls::{mysql_connect, mysql_target};
use crate::engine::value::Value;
use mysql::prelude::Queryable;
use mysql::{Conn, Params};

/// A connection to the server; `USE` switches between databases.
pub struct MysqlTarget {
    url_database: Option<String>,
    conn: Conn,
}

impl MysqlTarget {
    /// Connects to the server the URL names.
    pub fn connect(url: &str) -> Result<MysqlTarget, String> {
        let target = mysql_target(url).map_err(|e| format!("the URL: {e}"))?;
        let url_database = target.opts.get_db_name().map(str::to_string);
        let mut conn = mysql_connect(target.opts, target.mode)
            .map_err(|e| format!("(`ssl-mode={}`) {e}", target.mode.as_str()))?;
        // Foreign keys are declared after the rows, unchecked (BIRD's rows break some), and a
        // previous copy's may reference a table being recreated.
        conn.query_drop("SET SESSION foreign_key_checks = 0")
            .map_err(|e| e.to_string())?;
        Ok(MysqlTarget { url_database, conn })
    }

    fn run(&mut self, sql: &str) -> Result<(), String> {
        self.conn.query_drop(sql).map_err(|e| e.to_string())
    }
}

impl Target for MysqlTarget {
    fn url_database(&self) -> String {
        self.url_database.clone().unwrap_or_default()
    }

    fn use_database(&mut self, name: &str) -> Result<(), String> {
        if name.is_empty() {
            return Err(
                "the URL names no database (mysql://user:password@host:port/DATABASE), \
                        which the `shared` layout needs"
                    .into(),
            );
        }
        let quoted = quote(name, Server::Mysql);
        self.run(&format!(
            "CREATE DATABASE IF NOT EXISTS {quoted} CHARACTER SET utf8mb4"
        ))?;
        self.run(&format!("USE {quoted}"))
    }

    fn begin(&mut self) -> Result<(), String> {
        self.run("START TRANSACTION")
    }

    fn recreate(&mut self, name: &str, columns: &[(String, ColumnType)]) -> Result<(), String> {
        self.run(&format!(
            "DROP TABLE IF EXISTS {}",
            quote(name, Server::Mysql)
        ))?;
        self.run(&create_statement(Server::Mysql, name, columns))?;
        // DDL commits implicitly: the rows that follow get a transaction of their own.
        self.run("START TRANSACTION")
    }

    fn insert(
        &mut self,
        name: &str,
        columns: &[(String, ColumnType)],
        rows: &[Vec<Value>],
    ) -> Result<(), String> {
        let sql = insert_statement(Server::Mysql, name, columns, rows.len(), |_, _| "?".into());
        let parameters = rows
            .iter()
            .flat_map(|row| {
                row.iter()
                    .zip(columns)
                    .map(|(value, (_, kind))| parameter(value, *kind))
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.conn
            .exec_drop(sql, Params::Positional(parameters))
            .map_err(|e| e.to_string())
    }

    fn commit(&mut self) -> Result<(), String> {
        self.run("COMMIT")
    }

    fn count(&mut self, name: &str) -> Result<u64, String> {
        let sql = format!("SELECT count(*) FROM {}", quote(name, Server::Mysql));
        let count: Option<u64> = self.conn.query_first(sql).map_err(|e| e.to_string())?;
        Ok(count.unwrap_or(0))
    }

    fn analyze(&mut self, name: &str) -> Result<(), String> {
        // ANALYZE TABLE answers with a result set: read it, or the connection stays busy.
        let sql = format!("ANALYZE TABLE {}", quote(name, Server::Mysql));
        let _: Vec<mysql::Row> = self.conn.query(sql).map_err(|e| e.to_string())?;
        Ok(())
    }

    fn execute(&mut self, sql: &str) -> Result<(), String> {
        self.run(sql)
    }
}

/// `value` (already in its column's SQLite class, see `copy_table`) as a parameter of a column
/// of type `kind`; a value of another class is an error, never a silent NULL.
fn parameter(value: &Value, kind: ColumnType) -> Result<mysql::Value, String> {
    Ok(match (kind, value) {
        (_, Value::Null) => mysql::Value::NULL,
        (ColumnType::Integer, Value::Int(i)) => mysql::Value::Int(*i),
        (ColumnType::Real, Value::Real(f)) => mysql::Value::Double(*f),
        (ColumnType::Bytes, Value::Blob(b)) => mysql::Value::Bytes(b.clone()),
        (ColumnType::Text | ColumnType::Date | ColumnType::Timestamp, Value::Text(t)) => {
            mysql::Value::Bytes(t.clone().into_bytes())
        }
        (kind, value) => return Err(super::mismatch(value, kind)),
    })
}
