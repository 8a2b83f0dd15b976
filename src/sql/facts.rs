//! Facts about a database that ESM+'s equivalence rules need before they may fire: which columns
//! are UNIQUE, which can hold no NULL, which tables hold rows, which columns have a type
//! affinity, which foreign keys are total (every child row has exactly one parent).
//!
//! Read once per database from its SQLite file (schema declarations and the data), or from
//! tables.json when the file is absent; then the facts that need the data are simply unknown and
//! the rules that depend on them do not fire.

use crate::sql::schema::TableEntry;
use rusqlite::Connection;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// A `(table, column)` pair, lower-cased.
pub type ColumnId = (String, String);

/// What is verified about one database.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DbFacts {
    /// Tables and their columns in declaration order, lower-cased.
    pub columns: Vec<(String, Vec<String>)>,
    /// Single-column PRIMARY KEY or UNIQUE index columns.
    pub unique: HashSet<ColumnId>,
    /// Columns that hold no NULL (declared NOT NULL, INTEGER PRIMARY KEY, or verified in the
    /// data: a key column, or the column of a total foreign key).
    pub not_null: HashSet<ColumnId>,
    /// Tables holding at least one row (data only).
    pub non_empty: HashSet<String>,
    /// Columns with a declared type, hence a type affinity that converts `'5'` and `5` alike.
    pub typed: HashSet<ColumnId>,
    /// Each column's type affinity from its declared type (SQLite file only): a column can stand
    /// for one it is joined with only when both store values alike (`1` vs `'1'`).
    pub affinity: HashMap<ColumnId, Affinity>,
    /// `(child, parent)` foreign keys whose child column holds no NULL and only values present in
    /// the UNIQUE parent column (data only): a join on them keeps each child row exactly once.
    pub total_keys: HashSet<(ColumnId, ColumnId)>,
}

/// SQLite's type affinity of a declared column type (the rules of "Datatypes In SQLite" 3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Affinity {
    /// `INT` anywhere in the type.
    Integer,
    /// `CHAR`, `CLOB` or `TEXT`.
    Text,
    /// `BLOB`, or no declared type.
    Blob,
    /// `REAL`, `FLOA` or `DOUB`.
    Real,
    /// Anything else (`NUMERIC`, `DECIMAL`, `DATE`, `BOOLEAN` ...).
    Numeric,
}

impl Affinity {
    /// The affinity SQLite gives a column declared with `declared`.
    pub fn of(declared: &str) -> Affinity {
        let upper = declared.to_uppercase();
        let has = |part: &str| upper.contains(part);
        if has("INT") {
            Affinity::Integer
        } else if has("CHAR") || has("CLOB") || has("TEXT") {
            Affinity::Text
        } else if has("BLOB") || upper.trim().is_empty() {
            Affinity::Blob
        } else if has("REAL") || has("FLOA") || has("DOUB") {
            Affinity::Real
        } else {
            Affinity::Numeric
        }
    }
}

impl DbFacts {
    /// True when both columns' affinities are known and equal.
    pub fn same_affinity(&self, a: &ColumnId, b: &ColumnId) -> bool {
        match (self.affinity.get(a), self.affinity.get(b)) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        }
    }

    /// True when the column is UNIQUE and never NULL.
    pub fn is_key(&self, column: &ColumnId) -> bool {
        self.unique.contains(column) && self.not_null.contains(column)
    }

    /// The columns of `table`, when known.
    pub fn table_columns(&self, table: &str) -> Option<&[String]> {
        self.columns
            .iter()
            .find(|(t, _)| t == table)
            .map(|(_, c)| c.as_slice())
    }

    /// Reads the facts from a SQLite file, through the guarded constructor within its time
    /// budget.
    pub fn from_sqlite(path: &Path) -> rusqlite::Result<DbFacts> {
        let guarded = crate::util::sqlite::open_read_only(path)?;
        guarded.arm(crate::util::sqlite::METADATA_BUDGET);
        let conn = &guarded.conn;
        let mut facts = DbFacts::default();
        let tables: Vec<String> = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?
            .query_map([], |row| row.get(0))?
            .collect::<Result<_, _>>()?;
        let mut foreign_keys = Vec::new();
        for table in &tables {
            let lower = table.to_lowercase();
            read_table(conn, table, &lower, &mut facts)?;
            read_unique_indexes(conn, table, &lower, &mut facts)?;
            let has_rows: bool = conn.query_row(
                &format!("SELECT EXISTS (SELECT 1 FROM \"{}\")", quote(table)),
                [],
                |row| row.get(0),
            )?;
            if has_rows {
                facts.non_empty.insert(lower.clone());
            }
            let mut statement = conn
                .prepare("SELECT \"table\", \"from\", \"to\" FROM pragma_foreign_key_list(?1)")?;
            let keys = statement.query_map([table], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, Option<String>>(2)?,
                ))
            })?;
            for key in keys {
                let (parent, from, to) = key?;
                foreign_keys.push((table.clone(), from, parent, to));
            }
        }
        for (child, from, parent, to) in foreign_keys {
            let parent_lower = parent.to_lowercase();
            let to = match to {
                Some(to) => to,
                None => match single_primary_key(&facts, &parent_lower) {
                    Some(pk) => pk,
                    None => continue,
                },
            };
            let child_id = (child.to_lowercase(), from.to_lowercase());
            let parent_id = (parent_lower, to.to_lowercase());
            if !facts.is_key(&parent_id) {
                continue;
            }
            let dangling: bool = conn
                .query_row(
                    &format!(
                        "SELECT EXISTS (SELECT 1 FROM \"{c}\" WHERE \"{f}\" IS NULL OR \"{f}\" NOT IN (SELECT \"{t}\" FROM \"{p}\"))",
                        c = quote(&child),
                        f = quote(&from),
                        t = quote(&to),
                        p = quote(&parent)
                    ),
                    [],
                    |row| row.get(0),
                )
                .unwrap_or(true);
            if !dangling {
                facts.not_null.insert(child_id.clone());
                facts.total_keys.insert((child_id, parent_id));
            }
        }
        Ok(facts)
    }

    /// The facts a tables.json entry declares: columns and primary keys (assumed NOT NULL, as
    /// Spider's schema says); nothing that needs the data.
    pub fn from_tables_json(entry: &TableEntry) -> DbFacts {
        let mut facts = DbFacts::default();
        let mut columns: Vec<(String, Vec<String>)> = entry
            .table_names_original
            .iter()
            .map(|t| (t.to_lowercase(), Vec::new()))
            .collect();
        let mut ids = Vec::new();
        for (table, column) in &entry.column_names_original {
            let slot = usize::try_from(*table)
                .ok()
                .and_then(|t| columns.get_mut(t));
            match slot {
                Some((name, list)) => {
                    list.push(column.to_lowercase());
                    ids.push(Some((name.clone(), column.to_lowercase())));
                }
                None => ids.push(None),
            }
        }
        for key in &entry.primary_keys {
            if let Some(index) = key.as_u64() {
                if let Some(Some(id)) = ids.get(index as usize) {
                    facts.unique.insert(id.clone());
                    facts.not_null.insert(id.clone());
                }
            }
        }
        facts.columns = columns;
        facts
    }
}

/// Columns, declared types, NOT NULL and the primary key of one table.
fn read_table(
    conn: &Connection,
    table: &str,
    lower: &str,
    facts: &mut DbFacts,
) -> rusqlite::Result<()> {
    let mut statement =
        conn.prepare("SELECT name, type, \"notnull\", pk FROM pragma_table_info(?1)")?;
    let rows: Vec<(String, String, bool, i64)> = statement
        .query_map([table], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
        })?
        .collect::<Result<_, _>>()?;
    let key_columns: Vec<&(String, String, bool, i64)> =
        rows.iter().filter(|(_, _, _, pk)| *pk > 0).collect();
    for (name, declared, not_null, _) in &rows {
        let id = (lower.to_string(), name.to_lowercase());
        facts.affinity.insert(id.clone(), Affinity::of(declared));
        if !declared.trim().is_empty() {
            facts.typed.insert(id.clone());
        }
        if *not_null {
            facts.not_null.insert(id);
        }
    }
    if let [(name, declared, _, _)] = key_columns.as_slice() {
        let id = (lower.to_string(), name.to_lowercase());
        facts.unique.insert(id.clone());
        let rowid_alias = declared.eq_ignore_ascii_case("integer");
        if rowid_alias || !has_null(conn, table, name)? {
            facts.not_null.insert(id);
        }
    }
    facts.columns.push((
        lower.to_string(),
        rows.iter().map(|(n, _, _, _)| n.to_lowercase()).collect(),
    ));
    Ok(())
}

/// Single-column UNIQUE indexes (explicit or from UNIQUE constraints).
fn read_unique_indexes(
    conn: &Connection,
    table: &str,
    lower: &str,
    facts: &mut DbFacts,
) -> rusqlite::Result<()> {
    let mut statement = conn.prepare("SELECT name FROM pragma_index_list(?1) WHERE \"unique\"")?;
    let indexes: Vec<String> = statement
        .query_map([table], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    for index in indexes {
        let mut info = conn.prepare("SELECT name FROM pragma_index_info(?1)")?;
        let columns: Vec<Option<String>> = info
            .query_map([&index], |row| row.get(0))?
            .collect::<Result<_, _>>()?;
        if let [Some(column)] = columns.as_slice() {
            let id = (lower.to_string(), column.to_lowercase());
            if !has_null(conn, table, column)? {
                facts.not_null.insert(id.clone());
            }
            facts.unique.insert(id);
        }
    }
    Ok(())
}

/// True when the column holds a NULL in the data.
fn has_null(conn: &Connection, table: &str, column: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        &format!(
            "SELECT EXISTS (SELECT 1 FROM \"{}\" WHERE \"{}\" IS NULL)",
            quote(table),
            quote(column)
        ),
        [],
        |row| row.get(0),
    )
}

/// The single primary-key column of a table, when it has exactly one unique key column.
fn single_primary_key(facts: &DbFacts, table: &str) -> Option<String> {
    let mut keys = facts.unique.iter().filter(|(t, _)| t == table);
    let first = keys.next()?;
    keys.next().is_none().then(|| first.1.clone())
}

/// Escapes a name for a double-quoted identifier.
fn quote(name: &str) -> String {
    name.replace('"', "\"\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts_of(rows: &str) -> DbFacts {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pets.sqlite");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(&format!(
            "PRAGMA foreign_keys = OFF;
             CREATE TABLE owners (owner_id INTEGER PRIMARY KEY, city TEXT);
             CREATE TABLE dogs (dog_id INTEGER PRIMARY KEY, owner_id INT REFERENCES owners(owner_id));
             INSERT INTO owners VALUES (1, 'a'), (2, 'b');
             INSERT INTO dogs VALUES {rows};"
        ))
        .unwrap();
        DbFacts::from_sqlite(&path).unwrap()
    }

    #[test]
    fn a_total_foreign_key_column_holds_no_null() {
        let child = ("dogs".to_string(), "owner_id".to_string());
        let total = facts_of("(1, 1), (2, 2), (3, 1)");
        assert!(total.not_null.contains(&child));
        assert!(total
            .total_keys
            .contains(&(child.clone(), ("owners".into(), "owner_id".into()))));
        assert_eq!(total.affinity[&child], Affinity::Integer);
        for rows in ["(1, 1), (2, NULL)", "(1, 1), (2, 7)"] {
            let partial = facts_of(rows);
            assert!(!partial.not_null.contains(&child), "{rows}");
            assert!(partial.total_keys.is_empty(), "{rows}");
        }
    }

    #[test]
    fn declared_types_get_sqlites_affinities() {
        for (declared, affinity) in [
            ("INT", Affinity::Integer),
            ("bigint(20)", Affinity::Integer),
            ("VARCHAR(255)", Affinity::Text),
            ("char(3)", Affinity::Text),
            ("", Affinity::Blob),
            ("float(10,2)", Affinity::Real),
            ("DOUBLE", Affinity::Real),
            ("DATE", Affinity::Numeric),
            ("decimal(19,4)", Affinity::Numeric),
        ] {
            assert_eq!(Affinity::of(declared), affinity, "{declared}");
        }
    }
}
