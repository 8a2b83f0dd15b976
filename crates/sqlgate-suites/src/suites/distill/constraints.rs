//! The declared constraints of a schema, which every generated database must satisfy: column
//! types, PRIMARY KEY, UNIQUE, NOT NULL and foreign keys. Read from the SQLite file (with the DDL
//! to recreate it), or from tables.json when the file is absent.

use crate::sql::schema::TableEntry;
use crate::suites::neighbors::{ColumnFact, ColumnFacts};
pub use crate::suites::storage_class::{affinity_of, Affinity};
use crate::util::sqlite::quoted_identifier as quote;
use rusqlite::Connection;

/// One column.
#[derive(Debug, Clone)]
pub struct Column {
    /// Its name as declared.
    pub name: String,
    /// Its declared type, verbatim (may be empty).
    pub declared_type: String,
    /// The storage class generated values take.
    pub affinity: Affinity,
    /// NOT NULL (primary-key columns included).
    pub not_null: bool,
}

/// A foreign key: `columns` of the child reference `parent_columns` of `parent`.
#[derive(Debug, Clone)]
pub struct ForeignKey {
    /// Child column indexes.
    pub columns: Vec<usize>,
    /// Parent table index.
    pub parent: usize,
    /// Parent column indexes, aligned with `columns`.
    pub parent_columns: Vec<usize>,
}

/// One table and its constraints.
#[derive(Debug, Clone)]
pub struct Table {
    /// Its name as declared.
    pub name: String,
    /// Columns in declaration order.
    pub columns: Vec<Column>,
    /// Column sets whose value tuples must be distinct (PRIMARY KEY and UNIQUE).
    pub unique: Vec<Vec<usize>>,
    /// Foreign keys whose parent exists.
    pub foreign_keys: Vec<ForeignKey>,
}

/// A schema with constraints and the DDL that creates it.
#[derive(Debug, Clone)]
pub struct Constraints {
    /// Tables in declaration order.
    pub tables: Vec<Table>,
    /// CREATE statements (tables first, then indexes), in `sqlite_master` order.
    pub ddl: Vec<String>,
}

impl Constraints {
    /// Reads the constraints and DDL of an open database.
    pub fn from_connection(conn: &Connection) -> rusqlite::Result<Constraints> {
        let mut statement = conn.prepare(
            "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL \
             AND name NOT LIKE 'sqlite_%' AND type IN ('table', 'index') ORDER BY rowid",
        )?;
        let entries: Vec<(String, String, String)> = statement
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
            .collect::<Result<_, _>>()?;
        let mut ddl: Vec<String> = entries
            .iter()
            .filter(|(kind, _, _)| kind == "table")
            .map(|(_, _, sql)| sql.clone())
            .collect();
        ddl.extend(
            entries
                .iter()
                .filter(|(kind, _, _)| kind == "index")
                .map(|(_, _, sql)| sql.clone()),
        );
        let names: Vec<String> = entries
            .iter()
            .filter(|(kind, _, _)| kind == "table")
            .map(|(_, name, _)| name.clone())
            .collect();
        let mut tables = Vec::with_capacity(names.len());
        for name in &names {
            tables.push(read_table(conn, name)?);
        }
        let foreign_keys = names
            .iter()
            .enumerate()
            .map(|(index, name)| read_foreign_keys(conn, name, &names, &tables, index))
            .collect::<rusqlite::Result<Vec<_>>>()?;
        for (table, keys) in tables.iter_mut().zip(foreign_keys) {
            table.foreign_keys = keys;
        }
        Ok(Constraints { tables, ddl })
    }

    /// The constraints a tables.json entry declares (types, primary keys, foreign keys), with
    /// DDL synthesised from them.
    pub fn from_tables_json(entry: &TableEntry) -> Constraints {
        let mut tables: Vec<Table> = entry
            .table_names_original
            .iter()
            .map(|name| Table {
                name: name.clone(),
                columns: Vec::new(),
                unique: Vec::new(),
                foreign_keys: Vec::new(),
            })
            .collect();
        let mut locations = Vec::with_capacity(entry.column_names_original.len());
        for (index, (table, name)) in entry.column_names_original.iter().enumerate() {
            let Some(t) = usize::try_from(*table).ok().filter(|t| *t < tables.len()) else {
                locations.push(None);
                continue;
            };
            let kind = entry.column_types.get(index).map_or("text", String::as_str);
            let declared_type = declared_type_of(kind);
            locations.push(Some((t, tables[t].columns.len())));
            tables[t].columns.push(Column {
                name: name.clone(),
                declared_type: declared_type.to_string(),
                affinity: affinity_of(declared_type),
                not_null: false,
            });
        }
        for key in &entry.primary_keys {
            let members: Vec<usize> = match key {
                serde_json::Value::Array(list) => list
                    .iter()
                    .filter_map(|v| v.as_u64().map(|v| v as usize))
                    .collect(),
                other => other.as_u64().map(|v| v as usize).into_iter().collect(),
            };
            let located: Vec<(usize, usize)> = members
                .iter()
                .filter_map(|m| locations.get(*m).copied().flatten())
                .collect();
            if let Some(&(table, _)) = located.first() {
                if located.iter().all(|(t, _)| *t == table) {
                    let columns: Vec<usize> = located.iter().map(|(_, c)| *c).collect();
                    for c in &columns {
                        tables[table].columns[*c].not_null = true;
                    }
                    tables[table].unique.push(columns);
                }
            }
        }
        for &(child, parent) in &entry.foreign_keys {
            let (Some(Some((ct, cc))), Some(Some((pt, pc)))) = (
                locations.get(child).copied(),
                locations.get(parent).copied(),
            ) else {
                continue;
            };
            tables[ct].foreign_keys.push(ForeignKey {
                columns: vec![cc],
                parent: pt,
                parent_columns: vec![pc],
            });
        }
        let ddl = tables.iter().map(create_statement).collect();
        Constraints { tables, ddl }
    }

    /// What the neighbor normal form needs to know of every column (affinity, NOT NULL, and a
    /// collation, assumed for every column of a table whose DDL mentions one).
    pub fn column_facts(&self) -> ColumnFacts {
        let mut facts = ColumnFacts::default();
        for table in &self.tables {
            let name = table.name.to_lowercase();
            let collated = self.ddl.iter().any(|statement| {
                let statement = statement.to_lowercase();
                statement.contains("collate") && statement.contains(&name)
            });
            for column in &table.columns {
                let fact = ColumnFact {
                    affinity: column.affinity,
                    not_null: column.not_null,
                    collated,
                };
                facts.insert(&table.name, &column.name, fact);
            }
        }
        facts
    }

    /// Table indexes with every table after the parents it references (self references and
    /// cycles are broken in declaration order).
    pub fn topological_order(&self) -> Vec<usize> {
        let mut order = Vec::with_capacity(self.tables.len());
        let mut placed = vec![false; self.tables.len()];
        while order.len() < self.tables.len() {
            let ready = (0..self.tables.len()).find(|&t| {
                !placed[t]
                    && self.tables[t]
                        .foreign_keys
                        .iter()
                        .all(|fk| fk.parent == t || placed[fk.parent])
            });
            let next =
                ready.unwrap_or_else(|| (0..self.tables.len()).find(|&t| !placed[t]).unwrap_or(0));
            placed[next] = true;
            order.push(next);
        }
        order
    }
}

fn read_table(conn: &Connection, name: &str) -> rusqlite::Result<Table> {
    let mut info = conn.prepare("SELECT name, type, \"notnull\", pk FROM pragma_table_info(?1)")?;
    let rows: Vec<(String, String, bool, i64)> = info
        .query_map([name], |row| {
            Ok((
                row.get(0)?,
                row.get::<_, Option<String>>(1)?.unwrap_or_default(),
                row.get(2)?,
                row.get(3)?,
            ))
        })?
        .collect::<Result<_, _>>()?;
    let mut primary: Vec<(i64, usize)> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.3 > 0)
        .map(|(i, r)| (r.3, i))
        .collect();
    primary.sort_unstable();
    let columns: Vec<Column> = rows
        .iter()
        .map(|(column, declared, not_null, pk)| Column {
            name: column.clone(),
            declared_type: declared.clone(),
            affinity: affinity_of(declared),
            not_null: *not_null || *pk > 0,
        })
        .collect();
    let mut unique = Vec::new();
    if !primary.is_empty() {
        unique.push(primary.iter().map(|(_, i)| *i).collect());
    }
    let mut indexes =
        conn.prepare("SELECT name, \"unique\", partial FROM pragma_index_list(?1)")?;
    let index_names: Vec<String> = indexes
        .query_map([name], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, bool>(1)?,
                row.get::<_, bool>(2)?,
            ))
        })?
        .filter_map(|r| {
            r.ok()
                .filter(|(_, unique, partial)| *unique && !partial)
                .map(|r| r.0)
        })
        .collect();
    for index in index_names {
        let mut members = conn.prepare("SELECT name FROM pragma_index_info(?1) ORDER BY seqno")?;
        let names: Vec<Option<String>> = members
            .query_map([&index], |row| row.get(0))?
            .collect::<Result<_, _>>()?;
        let located: Option<Vec<usize>> = names
            .iter()
            .map(|n| {
                n.as_ref()
                    .and_then(|n| columns.iter().position(|c| c.name.eq_ignore_ascii_case(n)))
            })
            .collect();
        if let Some(set) = located.filter(|s| !s.is_empty() && !unique.contains(s)) {
            unique.push(set);
        }
    }
    Ok(Table {
        name: name.to_string(),
        columns,
        unique,
        foreign_keys: Vec::new(),
    })
}

/// Foreign keys of `tables[index]` whose parent table and columns exist; a key that names no
/// parent columns references the parent's primary key.
fn read_foreign_keys(
    conn: &Connection,
    name: &str,
    names: &[String],
    tables: &[Table],
    index: usize,
) -> rusqlite::Result<Vec<ForeignKey>> {
    let mut statement = conn.prepare(
        "SELECT id, \"table\", \"from\", \"to\" FROM pragma_foreign_key_list(?1) ORDER BY id, seq",
    )?;
    let rows: Vec<(i64, String, String, Option<String>)> = statement
        .query_map([name], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
        })?
        .collect::<Result<_, _>>()?;
    let mut keys: Vec<(i64, Option<ForeignKey>)> = Vec::new();
    for (id, parent_name, from, to) in rows {
        let parent = names
            .iter()
            .position(|n| n.eq_ignore_ascii_case(&parent_name));
        let child = tables[index]
            .columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(&from));
        let key = match keys.last_mut() {
            Some((last, key)) if *last == id => key,
            _ => {
                keys.push((
                    id,
                    parent.map(|parent| ForeignKey {
                        columns: Vec::new(),
                        parent,
                        parent_columns: Vec::new(),
                    }),
                ));
                &mut keys.last_mut().expect("just pushed").1
            }
        };
        let Some(fk) = key.as_mut() else { continue };
        let parent_table = &tables[fk.parent];
        let parent_column = match &to {
            Some(to) => parent_table
                .columns
                .iter()
                .position(|c| c.name.eq_ignore_ascii_case(to)),
            None => parent_table
                .unique
                .first()
                .and_then(|pk| pk.get(fk.columns.len()).copied()),
        };
        match (child, parent_column) {
            (Some(c), Some(p)) => {
                fk.columns.push(c);
                fk.parent_columns.push(p);
            }
            _ => *key = None,
        }
    }
    Ok(keys.into_iter().filter_map(|(_, k)| k).collect())
}

/// A CREATE TABLE statement for a table known only from tables.json.
/// The SQLite type a tables.json column type declares: Spider's `number`, BIRD's `integer`,
/// `real`, `date` and `datetime` (kept, so that a copy to a server types them as BIRD's
/// PostgreSQL and MySQL versions do); anything else is text.
fn declared_type_of(kind: &str) -> &'static str {
    match kind {
        "number" => "NUMERIC",
        "integer" => "INTEGER",
        "real" => "REAL",
        "date" => "DATE",
        "datetime" => "DATETIME",
        _ => "TEXT",
    }
}

fn create_statement(table: &Table) -> String {
    let mut parts: Vec<String> = table
        .columns
        .iter()
        .map(|c| {
            let not_null = if c.not_null { " NOT NULL" } else { "" };
            format!("{} {}{not_null}", quote(&c.name), c.declared_type)
        })
        .collect();
    if let Some(pk) = table.unique.first() {
        let names: Vec<String> = pk.iter().map(|c| quote(&table.columns[*c].name)).collect();
        parts.push(format!("PRIMARY KEY ({})", names.join(", ")));
    }
    format!("CREATE TABLE {} ({})", quote(&table.name), parts.join(", "))
}
