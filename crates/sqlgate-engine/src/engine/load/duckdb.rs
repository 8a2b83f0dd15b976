//! The DuckDB side of `sqlgate load`: each db_id becomes a new file
//! `<dataset.databases>/<db_id>/<db_id>.duckdb` (an earlier copy is replaced), its rows appended
//! through DuckDB's appender, the copy of each database one transaction.

use super::types::{quote, ColumnType, Server};
use super::{create_statement, Target};
use crate::engine::duckdb::ffi::{self, Appender, Cell, Connection, Database};
use crate::engine::value::Value;
use std::path::PathBuf;
use std::sync::Arc;

/// The folder the `.duckdb` files go to, and the one being written.
pub struct DuckdbTarget {
    folder: PathBuf,
    connection: Option<Connection>,
}

impl DuckdbTarget {
    /// A target writing below `folder` (`dataset.databases`).
    pub fn new(folder: PathBuf) -> DuckdbTarget {
        DuckdbTarget {
            folder,
            connection: None,
        }
    }

    fn connection(&self) -> Result<&Connection, String> {
        self.connection
            .as_ref()
            .ok_or_else(|| "no DuckDB file is open".to_string())
    }

    fn run(&self, sql: &str) -> Result<(), String> {
        self.connection()?.execute(sql).map_err(|f| f.message)
    }
}

impl Target for DuckdbTarget {
    fn url_database(&self) -> String {
        String::new()
    }

    fn use_database(&mut self, name: &str) -> Result<(), String> {
        self.connection = None;
        let folder = self.folder.join(name);
        std::fs::create_dir_all(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
        let file = folder.join(format!("{name}.duckdb"));
        for stale in [file.clone(), folder.join(format!("{name}.duckdb.wal"))] {
            match std::fs::remove_file(&stale) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(format!("{}: {e}", stale.display()))
                }
                _ => {}
            }
        }
        let database = Database::open(&file, &ffi::writer_settings())
            .map_err(|f| format!("{}: {}", file.display(), f.message))?;
        self.connection = Some(Arc::new(database).connect().map_err(|f| f.message)?);
        Ok(())
    }

    fn begin(&mut self) -> Result<(), String> {
        self.run("BEGIN TRANSACTION")
    }

    fn recreate(&mut self, name: &str, columns: &[(String, ColumnType)]) -> Result<(), String> {
        self.run(&format!(
            "DROP TABLE IF EXISTS {}",
            quote(name, Server::Duckdb)
        ))?;
        self.run(&create_statement(Server::Duckdb, name, columns))
    }

    fn insert(
        &mut self,
        name: &str,
        _columns: &[(String, ColumnType)],
        rows: &[Vec<Value>],
    ) -> Result<(), String> {
        let connection = self.connection()?;
        let mut appender: Appender<'_> = connection.appender(name).map_err(|f| f.message)?;
        for row in rows {
            let cells: Vec<Cell<'_>> = row.iter().map(cell).collect::<Result<_, _>>()?;
            appender.row(&cells).map_err(|f| f.message)?;
        }
        appender.close().map_err(|f| f.message)
    }

    fn commit(&mut self) -> Result<(), String> {
        self.run("COMMIT")?;
        self.run("CHECKPOINT")
    }

    fn count(&mut self, name: &str) -> Result<u64, String> {
        let sql = format!("SELECT count(*) FROM {}", quote(name, Server::Duckdb));
        crate::engine::duckdb::count(self.connection()?, &sql)
    }

    fn analyze(&mut self, _name: &str) -> Result<(), String> {
        // DuckDB keeps its statistics as it writes; `ANALYZE` would change nothing.
        Ok(())
    }

    fn execute(&mut self, sql: &str) -> Result<(), String> {
        self.run(sql)
    }
}

/// One value read from SQLite (already cast to its column's type) as an appender cell.
fn cell(value: &Value) -> Result<Cell<'_>, String> {
    Ok(match value {
        Value::Null => Cell::Null,
        Value::Int(i) => Cell::Int(*i),
        Value::Real(f) => Cell::Real(*f),
        Value::Text(text) => Cell::Text(text),
        Value::Blob(bytes) => Cell::Blob(bytes),
        Value::Py(other) => {
            return Err(format!(
                "a {} value read from SQLite",
                other.python_type_name()
            ))
        }
    })
}
