//! The PostgreSQL side of `sqlgate load` (the `postgres` client crate, TLS as the engine's).

use super::types::{quote, ColumnType, Server};
use super::{create_statement, insert_statement, Target};
use crate::engine::server::tls::{postgres_target, PgTarget};
use crate::engine::value::Value;
use postgres::types::ToSql;
use postgres::Client;

/// A connection to the server, to the URL's database or to a db_id's.
pub struct PostgresTarget {
    target: PgTarget,
    url_database: String,
    client: Client,
}

impl PostgresTarget {
    /// Connects to the URL's database.
    pub fn connect(url: &str) -> Result<PostgresTarget, String> {
        let target = postgres_target(url).map_err(|e| format!("the URL: {e}"))?;
        let url_database = target
            .config
            .get_dbname()
            .or(target.config.get_user())
            .unwrap_or("postgres")
            .to_string();
        let client = target
            .config
            .connect(target.connector.clone())
            .map_err(|e| connect_message(&e, &target))?;
        Ok(PostgresTarget {
            target,
            url_database,
            client,
        })
    }
}

/// A connection failure as text, with the URL's `sslmode` (a TLS failure's usual cause).
fn connect_message(error: &postgres::Error, target: &PgTarget) -> String {
    format!("(`sslmode={}`) {}", target.mode.as_str(), message(error))
}

/// A server error as text: the server's own message when there is one (the client crate's
/// `Display` says only "db error").
fn message(error: &postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => crate::engine::server::tls::with_causes(error),
    }
}

impl Target for PostgresTarget {
    fn url_database(&self) -> String {
        self.url_database.clone()
    }

    fn use_database(&mut self, name: &str) -> Result<(), String> {
        if name == self.url_database {
            return Ok(());
        }
        let exists = self
            .client
            .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&name])
            .map_err(|e| message(&e))?
            .is_some();
        if !exists {
            let sql = format!("CREATE DATABASE {}", quote(name, Server::Postgres));
            self.client.batch_execute(&sql).map_err(|e| message(&e))?;
        }
        let mut config = self.target.config.clone();
        config.dbname(name);
        self.client = config
            .connect(self.target.connector.clone())
            .map_err(|e| connect_message(&e, &self.target))?;
        self.url_database = name.to_string();
        Ok(())
    }

    fn begin(&mut self) -> Result<(), String> {
        self.client.batch_execute("BEGIN").map_err(|e| message(&e))
    }

    fn recreate(&mut self, name: &str, columns: &[(String, ColumnType)]) -> Result<(), String> {
        // CASCADE drops the foreign keys of a previous copy that reference it, not their tables.
        let drop = format!(
            "DROP TABLE IF EXISTS {} CASCADE",
            quote(name, Server::Postgres)
        );
        self.client.batch_execute(&drop).map_err(|e| message(&e))?;
        let create = create_statement(Server::Postgres, name, columns);
        self.client.batch_execute(&create).map_err(|e| message(&e))
    }

    fn insert(
        &mut self,
        name: &str,
        columns: &[(String, ColumnType)],
        rows: &[Vec<Value>],
    ) -> Result<(), String> {
        let sql = insert_statement(
            Server::Postgres,
            name,
            columns,
            rows.len(),
            |row, column| {
                let number = row * columns.len() + column + 1;
                match columns[column].1 {
                    ColumnType::Integer => format!("${number}::int8"),
                    ColumnType::Real => format!("${number}::float8"),
                    ColumnType::Date => format!("${number}::text::date"),
                    ColumnType::Timestamp => format!("${number}::text::timestamp"),
                    ColumnType::Text => format!("${number}::text"),
                    ColumnType::Bytes => format!("${number}::bytea"),
                }
            },
        );
        let parameters: Vec<Parameter> = rows
            .iter()
            .flat_map(|row| {
                row.iter()
                    .zip(columns)
                    .map(|(value, (_, kind))| parameter(value, *kind))
            })
            .collect::<Result<_, _>>()?;
        let references: Vec<&(dyn ToSql + Sync)> =
            parameters.iter().map(Parameter::as_sql).collect();
        self.client
            .execute(&sql, &references)
            .map(|_| ())
            .map_err(|e| message(&e))
    }

    fn commit(&mut self) -> Result<(), String> {
        self.client.batch_execute("COMMIT").map_err(|e| message(&e))
    }

    fn count(&mut self, name: &str) -> Result<u64, String> {
        let sql = format!("SELECT count(*) FROM {}", quote(name, Server::Postgres));
        let row = self.client.query_one(&sql, &[]).map_err(|e| message(&e))?;
        Ok(row.get::<_, i64>(0) as u64)
    }

    fn analyze(&mut self, name: &str) -> Result<(), String> {
        let sql = format!("ANALYZE {}", quote(name, Server::Postgres));
        self.client.batch_execute(&sql).map_err(|e| message(&e))
    }

    fn execute(&mut self, sql: &str) -> Result<(), String> {
        self.client.batch_execute(sql).map_err(|e| message(&e))
    }
}

/// One bound value, typed as its column's placeholder expects.
enum Parameter {
    Integer(Option<i64>),
    Real(Option<f64>),
    Text(Option<String>),
    Bytes(Option<Vec<u8>>),
}

impl Parameter {
    fn as_sql(&self) -> &(dyn ToSql + Sync) {
        match self {
            Parameter::Integer(v) => v,
            Parameter::Real(v) => v,
            Parameter::Text(v) => v,
            Parameter::Bytes(v) => v,
        }
    }
}

/// `value` (already in its column's SQLite class, see `copy_table`) as the parameter of a
/// column of type `kind`; a value of another class is an error, never a silent NULL.
fn parameter(value: &Value, kind: ColumnType) -> Result<Parameter, String> {
    Ok(match (kind, value) {
        (ColumnType::Integer, Value::Int(i)) => Parameter::Integer(Some(*i)),
        (ColumnType::Integer, Value::Null) => Parameter::Integer(None),
        (ColumnType::Real, Value::Real(f)) => Parameter::Real(Some(*f)),
        (ColumnType::Real, Value::Null) => Parameter::Real(None),
        (ColumnType::Bytes, Value::Blob(b)) => Parameter::Bytes(Some(b.clone())),
        (ColumnType::Bytes, Value::Null) => Parameter::Bytes(None),
        (ColumnType::Text | ColumnType::Date | ColumnType::Timestamp, Value::Text(t)) => {
            Parameter::Text(Some(t.clone()))
        }
        (ColumnType::Text | ColumnType::Date | ColumnType::Timestamp, Value::Null) => {
            Parameter::Text(None)
        }
        (kind, value) => return Err(super::mismatch(value, kind)),
    })
}
