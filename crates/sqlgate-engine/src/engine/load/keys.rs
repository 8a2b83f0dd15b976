//! The keys and indexes of the SQLite tables, declared on the server after the rows are copied:
//! primary keys, UNIQUE constraints and indexes, plain indexes and foreign keys, as BIRD's own
//! PostgreSQL and MySQL dumps declare them, so that plans and timings (R-VES) are the server's
//! real ones. Rows stay exact: BIRD's SQLite files hold duplicate or NULL "primary keys" and
//! dangling foreign keys, so a primary key or unique index the rows break becomes a plain index,
//! foreign keys are declared unchecked (PostgreSQL `NOT VALID`, MySQL with
//! `foreign_key_checks = 0`), and a key the server cannot declare at all is skipped; each
//! fallback and skip is reported with the server's reason.

use super::types::{quote, server_name, ColumnType, Server};
use rusqlite::Connection;

/// Key prefix, in characters, of a MySQL text or blob column in an index (MySQL indexes only a
/// prefix of those; 255 utf8mb4 characters fit InnoDB's 3,072-byte key limit).
const MYSQL_PREFIX: usize = 255;

/// One table's keys, by SQLite column names.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Keys {
    /// The primary key's columns in key order (empty: none, or the rowid alone).
    primary: Vec<String>,
    /// Whether some primary-key column holds a NULL (no server key can then hold the rows).
    primary_has_null: bool,
    /// UNIQUE constraints and unique indexes.
    unique: Vec<Vec<String>>,
    /// Other indexes.
    plain: Vec<Vec<String>>,
    /// Foreign keys.
    foreign: Vec<ForeignKey>,
}

/// A foreign key, by SQLite names.
#[derive(Debug, Clone, PartialEq)]
struct ForeignKey {
    columns: Vec<String>,
    parent: String,
    parent_columns: Vec<String>,
}

/// One statement declaring a key, with the weaker one to try when the server refuses it.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyStatement {
    /// What it declares, for the report (`PRIMARY KEY (id)`).
    pub what: String,
    /// The statement.
    pub sql: String,
    /// A plain index instead, when the rows break a primary key or unique index.
    pub fallback: Option<(String, String)>,
}

/// Reads the keys of SQLite table `table` (its primary key, indexes without a WHERE clause or
/// an expression, and foreign keys, a parent's primary key standing for omitted columns).
pub fn read_keys(conn: &Connection, table: &str) -> rusqlite::Result<Keys> {
    let quoted = crate::util::sqlite::quoted_identifier(table);
    let primary = primary_key(conn, table)?;
    let primary_has_null = match primary.is_empty() {
        true => false,
        false => {
            let any_null: Vec<String> = primary
                .iter()
                .map(|c| format!("{} IS NULL", crate::util::sqlite::quoted_identifier(c)))
                .collect();
            let sql = format!(
                "SELECT EXISTS (SELECT 1 FROM {quoted} WHERE {})",
                any_null.join(" OR ")
            );
            conn.query_row(&sql, [], |r| r.get(0))?
        }
    };
    let mut keys = Keys {
        primary,
        primary_has_null,
        ..Keys::default()
    };
    let indexes: Vec<(String, bool, String, bool)> = conn
        .prepare(&format!("PRAGMA index_list({quoted})"))?
        .query_map([], |r| Ok((r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))?
        .collect::<Result<_, _>>()?;
    for (name, unique, origin, partial) in indexes {
        if origin == "pk" || partial {
            continue;
        }
        let index = crate::util::sqlite::quoted_identifier(&name);
        let columns: Vec<Option<String>> = conn
            .prepare(&format!("PRAGMA index_info({index})"))?
            .query_map([], |r| r.get(2))?
            .collect::<Result<_, _>>()?;
        let Some(columns) = columns.into_iter().collect::<Option<Vec<String>>>() else {
            continue;
        };
        match unique {
            true => keys.unique.push(columns),
            false => keys.plain.push(columns),
        }
    }
    let references: Vec<(i64, String, String, Option<String>)> = conn
        .prepare(&format!("PRAGMA foreign_key_list({quoted})"))?
        .query_map([], |r| Ok((r.get(0)?, r.get(2)?, r.get(3)?, r.get(4)?)))?
        .collect::<Result<_, _>>()?;
    for (id, parent, column, parent_column) in references {
        if keys.foreign.len() as i64 <= id {
            keys.foreign.push(ForeignKey {
                columns: Vec::new(),
                parent,
                parent_columns: Vec::new(),
            });
        }
        let key = keys.foreign.last_mut().expect("pushed above");
        key.columns.push(column);
        key.parent_columns.extend(parent_column);
    }
    for key in &mut keys.foreign {
        if key.parent_columns.len() != key.columns.len() {
            key.parent_columns = primary_key(conn, &key.parent)?;
        }
    }
    Ok(keys)
}

/// The primary key's columns of `table`, in key order.
fn primary_key(conn: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    let quoted = crate::util::sqlite::quoted_identifier(table);
    let mut columns: Vec<(i64, String)> = conn
        .prepare(&format!("PRAGMA table_info({quoted})"))?
        .query_map([], |r| Ok((r.get(5)?, r.get(1)?)))?
        .filter(|row| !matches!(row, Ok((0, _))))
        .collect::<Result<_, _>>()?;
    columns.sort();
    Ok(columns.into_iter().map(|(_, name)| name).collect())
}

/// The statements declaring `table`'s primary key, unique and plain indexes on `server`
/// (`columns`: the table's server columns and types, in SQLite order with `sqlite_columns`).
pub fn index_statements(
    server: Server,
    table: &str,
    sqlite_columns: &[String],
    columns: &[(String, ColumnType)],
    keys: &Keys,
) -> Vec<KeyStatement> {
    let list = |names: &[String]| key_list(server, sqlite_columns, columns, names);
    let quoted = quote(table, server);
    let plain = |names: &[String]| {
        let sql = match server {
            Server::Postgres => format!("CREATE INDEX ON {quoted} ({})", list(names)),
            Server::Mysql => format!("ALTER TABLE {quoted} ADD INDEX ({})", list(names)),
            Server::Duckdb => format!(
                "CREATE INDEX {} ON {quoted} ({})",
                quote(&index_name(table, names), server),
                list(names)
            ),
        };
        (format!("INDEX ({})", names.join(", ")), sql)
    };
    let mut statements = Vec::new();
    if !keys.primary.is_empty() {
        let (what, sql) = plain(&keys.primary);
        statements.push(match keys.primary_has_null {
            true => KeyStatement {
                what: format!("{what} (the primary key has NULLs)"),
                sql,
                fallback: None,
            },
            false => KeyStatement {
                what: format!("PRIMARY KEY ({})", keys.primary.join(", ")),
                sql: format!(
                    "ALTER TABLE {quoted} ADD PRIMARY KEY ({})",
                    list(&keys.primary)
                ),
                fallback: Some((what, sql)),
            },
        });
    }
    for names in &keys.unique {
        let sql = match server {
            Server::Postgres => format!("CREATE UNIQUE INDEX ON {quoted} ({})", list(names)),
            Server::Mysql => format!("ALTER TABLE {quoted} ADD UNIQUE ({})", list(names)),
            Server::Duckdb => format!(
                "CREATE UNIQUE INDEX {} ON {quoted} ({})",
                quote(&index_name(table, names), server),
                list(names)
            ),
        };
        statements.push(KeyStatement {
            what: format!("UNIQUE ({})", names.join(", ")),
            sql,
            fallback: Some(plain(names)),
        });
    }
    for names in &keys.plain {
        let (what, sql) = plain(names);
        statements.push(KeyStatement {
            what,
            sql,
            fallback: None,
        });
    }
    statements
}

/// A DuckDB index's name (DuckDB needs one; unique within the database for a table's columns).
fn index_name(table: &str, names: &[String]) -> String {
    format!("{table}_{}_index", names.join("_"))
}

/// The statements declaring `table`'s foreign keys, unchecked against the copied rows (a
/// parent missing from the database still gets one, which the server refuses and the report
/// shows).
pub fn foreign_key_statements(
    server: Server,
    table: &str,
    sqlite_columns: &[String],
    columns: &[(String, ColumnType)],
    keys: &Keys,
) -> Vec<KeyStatement> {
    keys.foreign
        .iter()
        .map(|key| {
            let names = |list: &[String]| -> String {
                list.iter()
                    .map(|c| quote(&server_name(c, server), server))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let unchecked = match server {
                Server::Postgres => " NOT VALID",
                Server::Mysql | Server::Duckdb => "",
            };
            KeyStatement {
                what: format!(
                    "FOREIGN KEY ({}) REFERENCES {} ({})",
                    key.columns.join(", "),
                    key.parent,
                    key.parent_columns.join(", ")
                ),
                sql: format!(
                    "ALTER TABLE {} ADD FOREIGN KEY ({}) REFERENCES {} ({}){unchecked}",
                    quote(table, server),
                    key_list(server, sqlite_columns, columns, &key.columns),
                    quote(&server_name(&key.parent, server), server),
                    names(&key.parent_columns),
                ),
                fallback: None,
            }
        })
        .collect()
}

/// The server's column list of an index on SQLite columns `names`, a MySQL text or blob column
/// with its prefix length.
fn key_list(
    server: Server,
    sqlite_columns: &[String],
    columns: &[(String, ColumnType)],
    names: &[String],
) -> String {
    names
        .iter()
        .map(|name| {
            let at = sqlite_columns
                .iter()
                .position(|c| c.eq_ignore_ascii_case(name));
            let (server_column, kind) = match at {
                Some(at) => (columns[at].0.clone(), Some(columns[at].1)),
                None => (server_name(name, server), None),
            };
            let quoted = quote(&server_column, server);
            match (server, kind) {
                (Server::Mysql, Some(ColumnType::Text | ColumnType::Bytes)) => {
                    format!("{quoted}({MYSQL_PREFIX})")
                }
                _ => quoted,
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}
