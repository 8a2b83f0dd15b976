//! `sqlgate load`: copies SQLite databases in the Spider / BIRD layout
//! (`<folder>/<db_id>/<db_id>.sqlite`) into a PostgreSQL or MySQL server, so that a benchmark
//! evaluated on SQLite can be evaluated on the server too. Each table is recreated with its
//! columns' types mapped ([`types`]), its rows copied in batches inside one transaction per
//! database, its row count checked against the SQLite file's, its keys and indexes declared
//! ([`keys`]), and its statistics analysed.
//!
//! Layouts: `shared` puts every db_id's tables into the one database the URL names (BIRD's own
//! set-up; table names must then be unique across db_ids), `per_db_id` one database per db_id,
//! named by it (created when absent).

#[cfg(feature = "duckdb")]
mod duckdb;
pub mod keys;
mod mysql;
mod postgres;
pub mod types;

use crate::engine::value::Value;
pub use crate::input::config::Layout;
use crate::util::workspace::Workspace;
use rusqlite::types::ValueRef;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use types::{ColumnType, Observed, Server};

/// Why a load failed.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The source folder or one of its SQLite files cannot be read.
    #[error("{path}: {message}")]
    Source {
        /// The folder or file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The server cannot be reached or refuses the credentials.
    #[error("cannot connect: {0}")]
    Connect(String),
    /// The server refused a statement of the copy.
    #[error("db_id `{db_id}`, table `{table}`: {message}")]
    Copy {
        /// The database being copied.
        db_id: String,
        /// The table being copied.
        table: String,
        /// The server's message.
        message: String,
    },
}

/// One table copied.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedTable {
    /// Its name on the server.
    pub name: String,
    /// Rows copied (equal on both sides).
    pub rows: u64,
    /// Each column's name on the server and its type there.
    pub columns: Vec<(String, ColumnType)>,
    /// The keys and indexes declared on it (`PRIMARY KEY (id)`, `INDEX (name)`, ...).
    pub keys: Vec<String>,
    /// The SQLite file's keys the server did not take as they are, each with what was done
    /// instead and the server's reason.
    pub skipped: Vec<String>,
}

/// One db_id copied.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedDatabase {
    /// The db_id.
    pub db_id: String,
    /// The server database that holds its tables.
    pub database: String,
    /// Its tables.
    pub tables: Vec<LoadedTable>,
}

/// A table read from a SQLite file, with the server types of its columns.
struct SourceTable {
    sqlite_name: String,
    name: String,
    sqlite_columns: Vec<String>,
    columns: Vec<(String, ColumnType)>,
    keys: keys::Keys,
}

/// What a server side of the copy does; one implementation per server kind.
trait Target {
    /// The database the URL names (where `shared` puts every table).
    fn url_database(&self) -> String;
    /// Creates database `name` when absent and makes it the one the next calls work in.
    fn use_database(&mut self, name: &str) -> Result<(), String>;
    /// Starts the transaction of one database's copy.
    fn begin(&mut self) -> Result<(), String>;
    /// Drops table `name` if present and creates it with `columns`.
    fn recreate(&mut self, name: &str, columns: &[(String, ColumnType)]) -> Result<(), String>;
    /// Inserts `rows` into table `name`.
    fn insert(
        &mut self,
        name: &str,
        columns: &[(String, ColumnType)],
        rows: &[Vec<Value>],
    ) -> Result<(), String>;
    /// Commits the copy.
    fn commit(&mut self) -> Result<(), String>;
    /// Rows of table `name`.
    fn count(&mut self, name: &str) -> Result<u64, String>;
    /// Refreshes the planner's statistics of table `name`.
    fn analyze(&mut self, name: &str) -> Result<(), String>;
    /// Runs one statement on its own (outside the copy's transaction).
    fn execute(&mut self, sql: &str) -> Result<(), String>;
}

/// Most parameters one INSERT statement binds (both servers allow 65,535).
const MAX_PARAMETERS: usize = 30_000;
/// Most text and blob bytes one INSERT statement carries (MariaDB's default packet limit is
/// 16 MiB).
const MAX_BATCH_BYTES: usize = 4 << 20;

/// Copies every database below `from` into the server at `url` in `layout`, returning what
/// was copied. `from` and every database file must resolve inside `workspace` (a committed
/// symlink must not load a file from elsewhere). The URL appears in no error.
pub fn load(
    server: Server,
    url: &str,
    layout: Layout,
    from: &Path,
    workspace: &Workspace,
) -> Result<Vec<LoadedDatabase>, LoadError> {
    let sources = list_sources(from, workspace)?;
    let mut plans = Vec::with_capacity(sources.len());
    for (db_id, path) in &sources {
        plans.push((db_id.clone(), path.clone(), read_tables(path, server)?));
    }
    if layout == Layout::Shared {
        check_unique_names(&plans)?;
    }
    let mut target: Box<dyn Target> = match server {
        Server::Postgres => {
            Box::new(postgres::PostgresTarget::connect(url).map_err(LoadError::Connect)?)
        }
        Server::Mysql => Box::new(mysql::MysqlTarget::connect(url).map_err(LoadError::Connect)?),
        #[cfg(feature = "duckdb")]
        Server::Duckdb => Box::new(duckdb::DuckdbTarget::new(PathBuf::from(url))),
        // Without the feature the duckdb factory refuses its config before a load starts.
        #[cfg(not(feature = "duckdb"))]
        Server::Duckdb => {
            return Err(LoadError::Connect(
                "this sqlgate was built without DuckDB (cargo feature `duckdb`)".into(),
            ))
        }
    };
    let mut loaded = Vec::with_capacity(plans.len());
    for (db_id, path, tables) in plans {
        let database = match layout {
            Layout::Shared => target.url_database(),
            Layout::PerDbId => db_id.clone(),
        };
        let fail = |table: &str| {
            let (db_id, table) = (db_id.clone(), table.to_string());
            move |message: String| LoadError::Copy {
                db_id,
                table,
                message,
            }
        };
        target.use_database(&database).map_err(fail(""))?;
        target.begin().map_err(fail(""))?;
        for table in &tables {
            copy_table(target.as_mut(), &path, table).map_err(|e| match e {
                CopyFailure::Server(message) => fail(&table.name)(message),
                CopyFailure::Source(error) => error,
            })?;
        }
        target.commit().map_err(fail(""))?;
        let declared = declare_keys(server, target.as_mut(), &tables);
        let mut copied = Vec::with_capacity(tables.len());
        for (table, (keys, skipped)) in tables.into_iter().zip(declared) {
            // Fresh statistics now, rather than from the server's background analysis at some
            // moment of a later evaluation, which could change plans (and the order of rows,
            // which the official Soft-F1 depends on) between two runs.
            target.analyze(&table.name).map_err(fail(&table.name))?;
            let rows = target.count(&table.name).map_err(fail(&table.name))?;
            let expected = sqlite_count(&path, &table.sqlite_name)?;
            if rows != expected {
                return Err(fail(&table.name)(format!(
                    "{rows} rows on the server, {expected} in {}",
                    path.display()
                )));
            }
            copied.push(LoadedTable {
                name: table.name,
                rows,
                columns: table.columns,
                keys,
                skipped,
            });
        }
        loaded.push(LoadedDatabase {
            db_id,
            database,
            tables: copied,
        });
    }
    Ok(loaded)
}

/// Declares each table's primary key and indexes, then every foreign key (the parents' keys
/// exist by then); returns per table what was declared and what was not, and why. MySQL's
/// foreign keys are declared with `foreign_key_checks = 0`, set for the whole copy session.
fn declare_keys(
    server: Server,
    target: &mut dyn Target,
    tables: &[SourceTable],
) -> Vec<(Vec<String>, Vec<String>)> {
    type Statements = fn(
        Server,
        &str,
        &[String],
        &[(String, ColumnType)],
        &keys::Keys,
    ) -> Vec<keys::KeyStatement>;
    let passes: [Statements; 2] = [keys::index_statements, keys::foreign_key_statements];
    let mut outcomes = vec![(Vec::new(), Vec::new()); tables.len()];
    for statements_of in passes {
        for (table, outcome) in tables.iter().zip(&mut outcomes) {
            let statements = statements_of(
                server,
                &table.name,
                &table.sqlite_columns,
                &table.columns,
                &table.keys,
            );
            for statement in statements {
                declare(target, statement, outcome);
            }
        }
    }
    outcomes
}

/// Runs one key statement, else its fallback, recording what was declared or skipped.
fn declare(
    target: &mut dyn Target,
    statement: keys::KeyStatement,
    (declared, skipped): &mut (Vec<String>, Vec<String>),
) {
    let Err(reason) = target.execute(&statement.sql) else {
        declared.push(statement.what);
        return;
    };
    let reason = reason.lines().next().unwrap_or_default().to_string();
    match statement.fallback {
        Some((what, sql)) if target.execute(&sql).is_ok() => {
            skipped.push(format!("{}: {reason}; {what} instead", statement.what));
            declared.push(what);
        }
        _ => skipped.push(format!("{}: {reason}", statement.what)),
    }
}

/// The `<db_id>/<db_id>.sqlite` files below `from`, by db_id: each a regular file inside the
/// workspace after following symlinks (any component), with no write-ahead log beside it.
fn list_sources(
    from: &Path,
    workspace: &Workspace,
) -> Result<BTreeMap<String, PathBuf>, LoadError> {
    let source_error = |message: String| LoadError::Source {
        path: from.to_path_buf(),
        message,
    };
    let entries = std::fs::read_dir(from)
        .map_err(|e| source_error(format!("cannot read the folder: {e}")))?;
    workspace.input_dir("--from", from).map_err(source_error)?;
    let mut sources = BTreeMap::new();
    for entry in entries {
        let entry = entry.map_err(|e| source_error(e.to_string()))?;
        let Some(db_id) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        let file = entry.path().join(format!("{db_id}.sqlite"));
        if std::fs::symlink_metadata(&file).is_err() {
            continue;
        }
        let file_error = |message: String| LoadError::Source {
            path: file.clone(),
            message,
        };
        workspace.input_file("--from", &file).map_err(file_error)?;
        crate::util::workspace::check_database(
            workspace.root(),
            &file,
            crate::util::workspace::SQLITE_SIDE_FILES,
        )
        .map_err(file_error)?;
        sources.insert(db_id, file);
    }
    if sources.is_empty() {
        return Err(source_error(
            "no SQLite database in the `<db_id>/<db_id>.sqlite` layout".into(),
        ));
    }
    Ok(sources)
}

fn open(path: &Path) -> Result<crate::util::sqlite::Guarded, LoadError> {
    crate::util::sqlite::open_read_only(path).map_err(|e| LoadError::Source {
        path: path.to_path_buf(),
        message: format!("cannot open: {e}"),
    })
}

/// The tables of one SQLite file, with server names and types decided from a pass over the rows.
fn read_tables(path: &Path, server: Server) -> Result<Vec<SourceTable>, LoadError> {
    let sqlite_error = |e: rusqlite::Error| LoadError::Source {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let guarded = open(path)?;
    let conn = &guarded.conn;
    let names: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .map_err(sqlite_error)?;
    let mut tables = Vec::with_capacity(names.len());
    for sqlite_name in names {
        let quoted = crate::util::sqlite::quoted_identifier(&sqlite_name);
        let declared: Vec<(String, String)> = conn
            .prepare(&format!("PRAGMA table_info({quoted})"))
            .and_then(|mut s| s.query_map([], |r| Ok((r.get(1)?, r.get(2)?)))?.collect())
            .map_err(sqlite_error)?;
        let mut observed = vec![Observed::default(); declared.len()];
        let mut statement = conn
            .prepare(&format!("SELECT * FROM {quoted}"))
            .map_err(sqlite_error)?;
        let mut rows = statement.query([]).map_err(sqlite_error)?;
        while let Some(row) = rows.next().map_err(sqlite_error)? {
            for (index, seen) in observed.iter_mut().enumerate() {
                seen.add(&read_value(row.get_ref(index).map_err(sqlite_error)?));
            }
        }
        let columns = declared
            .iter()
            .zip(observed)
            .map(|((name, declared), seen)| {
                (
                    types::server_name(name, server),
                    types::column_type(declared, seen),
                )
            })
            .collect();
        let keys = keys::read_keys(conn, &sqlite_name).map_err(sqlite_error)?;
        tables.push(SourceTable {
            name: types::server_name(&sqlite_name, server),
            keys,
            sqlite_name,
            sqlite_columns: declared.into_iter().map(|(name, _)| name).collect(),
            columns,
        });
    }
    Ok(tables)
}

/// In the shared layout two db_ids must not bring tables of the same server name.
fn check_unique_names(plans: &[(String, PathBuf, Vec<SourceTable>)]) -> Result<(), LoadError> {
    let mut owners: BTreeMap<String, &str> = BTreeMap::new();
    for (db_id, path, tables) in plans {
        for table in tables {
            let key = table.name.to_lowercase();
            if let Some(other) = owners.insert(key, db_id) {
                return Err(LoadError::Source {
                    path: path.clone(),
                    message: format!(
                        "table `{}` is in db_id `{other}` and in db_id `{db_id}`: the `shared` \
                         layout needs table names unique across db_ids (use `per_db_id`)",
                        table.name
                    ),
                });
            }
        }
    }
    Ok(())
}

enum CopyFailure {
    Server(String),
    Source(LoadError),
}

/// Recreates one table on the server and copies its rows in batches, each value read from
/// SQLite already converted to the column's server type (SQLite's own CAST, so an integer in a
/// TEXT column arrives as SQLite prints it).
fn copy_table(
    target: &mut dyn Target,
    path: &Path,
    table: &SourceTable,
) -> Result<(), CopyFailure> {
    target
        .recreate(&table.name, &table.columns)
        .map_err(CopyFailure::Server)?;
    let guarded = open(path).map_err(CopyFailure::Source)?;
    let sqlite_error = |e: rusqlite::Error| {
        CopyFailure::Source(LoadError::Source {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    };
    let selected: Vec<String> = table
        .sqlite_columns
        .iter()
        .zip(&table.columns)
        .map(|(name, (_, kind))| {
            let quoted = crate::util::sqlite::quoted_identifier(name);
            match kind {
                ColumnType::Text => format!("CAST({quoted} AS TEXT)"),
                ColumnType::Real => format!("CAST({quoted} AS REAL)"),
                ColumnType::Bytes => format!("CAST({quoted} AS BLOB)"),
                _ => quoted,
            }
        })
        .collect();
    let sql = format!(
        "SELECT {} FROM {}",
        selected.join(", "),
        crate::util::sqlite::quoted_identifier(&table.sqlite_name)
    );
    let mut statement = guarded.conn.prepare(&sql).map_err(sqlite_error)?;
    let mut rows = statement.query([]).map_err(sqlite_error)?;
    let batch_rows = (MAX_PARAMETERS / table.columns.len().max(1)).max(1);
    let mut batch: Vec<Vec<Value>> = Vec::with_capacity(batch_rows);
    let mut batch_bytes = 0;
    while let Some(row) = rows.next().map_err(sqlite_error)? {
        let values = (0..table.columns.len())
            .map(|index| row.get_ref(index).map(read_value))
            .collect::<Result<Vec<_>, _>>()
            .map_err(sqlite_error)?;
        batch_bytes += values.iter().map(value_bytes).sum::<usize>();
        batch.push(values);
        if batch.len() == batch_rows || batch_bytes >= MAX_BATCH_BYTES {
            target
                .insert(&table.name, &table.columns, &batch)
                .map_err(CopyFailure::Server)?;
            batch.clear();
            batch_bytes = 0;
        }
    }
    if !batch.is_empty() {
        target
            .insert(&table.name, &table.columns, &batch)
            .map_err(CopyFailure::Server)?;
    }
    Ok(())
}

fn sqlite_count(path: &Path, table: &str) -> Result<u64, LoadError> {
    let guarded = open(path)?;
    let sql = format!(
        "SELECT count(*) FROM {}",
        crate::util::sqlite::quoted_identifier(table)
    );
    guarded
        .conn
        .query_row(&sql, [], |r| r.get::<_, i64>(0))
        .map(|n| n as u64)
        .map_err(|e| LoadError::Source {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
}

/// About the bytes `value` adds to an INSERT.
fn value_bytes(value: &Value) -> usize {
    match value {
        Value::Text(text) => text.len() + 8,
        Value::Blob(bytes) => bytes.len() + 8,
        _ => 8,
    }
}

/// A SQLite value as sqlgate's value (text decoded leniently, as everywhere else).
fn read_value(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Real(f),
        ValueRef::Text(bytes) => Value::Text(String::from_utf8_lossy(bytes).into_owned()),
        ValueRef::Blob(bytes) => Value::Blob(bytes.to_vec()),
    }
}

/// The error for a value whose class its column's server type cannot take (the copy reads
/// every value already cast to that type, so this is a bug guard, not a conversion).
fn mismatch(value: &Value, kind: ColumnType) -> String {
    let class = match value {
        Value::Null => "NULL",
        Value::Int(_) => "integer",
        Value::Real(_) => "real",
        Value::Text(_) => "text",
        Value::Blob(_) => "blob",
        Value::Py(_) => "Python",
    };
    format!("a {class} value cannot be copied into a {kind:?} column")
}

/// The statement text of a multi-row INSERT of `rows` rows into `table` with `columns`, each
/// value written by `placeholder(row, column)`.
fn insert_statement(
    server: Server,
    table: &str,
    columns: &[(String, ColumnType)],
    rows: usize,
    placeholder: impl Fn(usize, usize) -> String,
) -> String {
    let names: Vec<String> = columns
        .iter()
        .map(|(name, _)| types::quote(name, server))
        .collect();
    let tuples: Vec<String> = (0..rows)
        .map(|row| {
            let values: Vec<String> = (0..columns.len())
                .map(|column| placeholder(row, column))
                .collect();
            format!("({})", values.join(", "))
        })
        .collect();
    format!(
        "INSERT INTO {} ({}) VALUES {}",
        types::quote(table, server),
        names.join(", "),
        tuples.join(", ")
    )
}

/// The `CREATE TABLE` statement of `table` with `columns` on `server`.
fn create_statement(server: Server, table: &str, columns: &[(String, ColumnType)]) -> String {
    let definitions: Vec<String> = columns
        .iter()
        .map(|(name, kind)| format!("{} {}", types::quote(name, server), kind.sql(server)))
        .collect();
    format!(
        "CREATE TABLE {} ({})",
        types::quote(table, server),
        definitions.join(", ")
    )
}
