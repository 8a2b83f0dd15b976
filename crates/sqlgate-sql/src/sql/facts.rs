//! Facts about a database that ESM+'s equivalence rules need before they may fire: which columns
//! are UNIQUE, which can hold no NULL, which columns have a type affinity, which foreign keys are
//! declared, and which tables hold rows.
//!
//! Everything but the last comes from the DECLARED schema only, so that an equivalence holds on
//! every database the schema allows, not only on the one that ships with the benchmark:
//! declared PRIMARY KEY (its columns taken as NOT NULL, as standard SQL and Spider's schemas
//! intend, although SQLite lets a non-INTEGER key hold NULL; UNIQUE when single), UNIQUE, NOT NULL, declared types
//! and single-column foreign keys, taken as enforced (every value NULL or present in the parent
//! key, whatever SQLite's `foreign_keys` pragma did when the rows were written). The one fact
//! read from the rows is which tables are non-empty, the assumption rule 9 states in the paper.
//!
//! Read once per database from its SQLite file, or from tables.json when the file is absent
//! (columns and primary keys only: the rules that need anything else do not fire).

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
    /// Columns declared NOT NULL, and PRIMARY KEY columns (taken as NOT NULL).
    pub not_null: HashSet<ColumnId>,
    /// Tables holding at least one row (data only).
    pub non_empty: HashSet<String>,
    /// Each column's type affinity from its declared type (SQLite file only): a column can stand
    /// for one it is joined with only when both store values alike (`1` vs `'1'`).
    pub affinity: HashMap<ColumnId, Affinity>,
    /// Declared single-column `(child, parent)` foreign keys onto a key of the parent: a child
    /// value is NULL or names exactly one parent row; with the child declared NOT NULL, a join
    /// on them keeps each child row exactly once.
    pub foreign_keys: HashSet<(ColumnId, ColumnId)>,
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
            // Data: rule 9's non-empty table, the one assumption the paper itself reads there.
            let has_rows: bool = conn.query_row(
                &format!("SELECT EXISTS (SELECT 1 FROM \"{}\")", quote(table)),
                [],
                |row| row.get(0),
            )?;
            if has_rows {
                facts.non_empty.insert(lower.clone());
            }
            let mut statement = conn.prepare(
                "SELECT \"table\", \"from\", \"to\", \"id\" FROM pragma_foreign_key_list(?1)",
            )?;
            let rows: Vec<(String, String, Option<String>, i64)> = statement
                .query_map([table], |row| {
                    Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
                })?
                .collect::<Result<_, _>>()?;
            for (parent, from, to, id) in &rows {
                // A composite key's columns are not foreign keys one by one (MATCH SIMPLE: a
                // NULL in one column leaves the others unchecked).
                if rows.iter().filter(|r| r.3 == *id).count() == 1 {
                    foreign_keys.push((lower.clone(), from.clone(), parent.clone(), to.clone()));
                }
            }
        }
        for (child, from, parent, to) in foreign_keys {
            let parent = parent.to_lowercase();
            let to = match to {
                Some(to) => to.to_lowercase(),
                None => match single_primary_key(&facts, &parent) {
                    Some(pk) => pk,
                    None => continue,
                },
            };
            let parent_id = (parent, to);
            if facts.is_key(&parent_id) {
                facts
                    .foreign_keys
                    .insert(((child, from.to_lowercase()), parent_id));
            }
        }
        Ok(facts)
    }

    /// The facts a tables.json entry declares: columns and primary keys (taken as NOT NULL, as
    /// for a SQLite file); nothing that needs the data or the types.
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
        // A key is a number, or a list of numbers for a composite key; a table listed with
        // several key columns has a composite key too. All are NOT NULL, only a lone one UNIQUE.
        let keys: Vec<&ColumnId> = entry
            .primary_keys
            .iter()
            .flat_map(|key| match key.as_array() {
                Some(list) => list.iter().collect(),
                None => vec![key],
            })
            .filter_map(|key| ids.get(usize::try_from(key.as_u64()?).ok()?)?.as_ref())
            .collect();
        for id in &keys {
            facts.not_null.insert((*id).clone());
            let lone = keys.iter().filter(|other| other.0 == id.0).count() == 1;
            if lone {
                facts.unique.insert((*id).clone());
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
    for (name, declared, not_null, pk) in &rows {
        let id = (lower.to_string(), name.to_lowercase());
        facts.affinity.insert(id.clone(), Affinity::of(declared));
        // A PRIMARY KEY column (of a composite key too) is taken as NOT NULL, as standard SQL
        // and Spider's schemas say, although SQLite lets a non-INTEGER key hold NULL.
        if *not_null || *pk > 0 {
            facts.not_null.insert(id);
        }
    }
    if let [(name, _, _, _)] = key_columns.as_slice() {
        facts
            .unique
            .insert((lower.to_string(), name.to_lowercase()));
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
            facts
                .unique
                .insert((lower.to_string(), column.to_lowercase()));
        }
    }
    Ok(())
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

    fn facts_of(schema: &str, rows: &str) -> DbFacts {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pets.sqlite");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(&format!(
            "PRAGMA foreign_keys = OFF;
             CREATE TABLE owners (owner_id INTEGER PRIMARY KEY, city TEXT);
             {schema};
             INSERT INTO owners VALUES (1, 'a'), (2, 'b');
             INSERT INTO dogs VALUES {rows};"
        ))
        .unwrap();
        DbFacts::from_sqlite(&path).unwrap()
    }

    #[test]
    fn only_declared_constraints_count_whatever_the_rows_hold() {
        let child = ("dogs".to_string(), "owner_id".to_string());
        let tag = ("dogs".to_string(), "tag".to_string());
        let parent = ("owners".to_string(), "owner_id".to_string());
        // No NULL and no dangling value in the rows: still neither NOT NULL nor a key.
        let nullable = facts_of(
            "CREATE TABLE dogs (dog_id INTEGER PRIMARY KEY, owner_id INT REFERENCES owners(owner_id), tag TEXT UNIQUE)",
            "(1, 1, 'a'), (2, 2, 'b'), (3, 1, 'c')",
        );
        assert!(!nullable.not_null.contains(&child));
        assert!(nullable.unique.contains(&tag) && !nullable.is_key(&tag));
        assert!(nullable.is_key(&("dogs".into(), "dog_id".into())));
        assert!(nullable
            .foreign_keys
            .contains(&(child.clone(), parent.clone())));
        assert_eq!(nullable.affinity[&child], Affinity::Integer);
        // Declared NOT NULL: so, whatever the rows (a dangling value included).
        let declared = facts_of(
            "CREATE TABLE dogs (dog_id INTEGER PRIMARY KEY, owner_id INT NOT NULL REFERENCES owners, tag TEXT UNIQUE NOT NULL)",
            "(1, 1, 'a'), (2, 7, 'b')",
        );
        assert!(declared.not_null.contains(&child) && declared.is_key(&tag));
        assert!(declared.foreign_keys.contains(&(child, parent)));
    }

    #[test]
    fn a_declared_primary_key_is_taken_as_not_null() {
        let facts = facts_of(
            "CREATE TABLE dogs (name TEXT PRIMARY KEY, owner_id INT, FOREIGN KEY (owner_id, name) REFERENCES owners(owner_id, city))",
            "(NULL, 1)",
        );
        assert!(facts.is_key(&("dogs".into(), "name".into())));
        assert!(facts.foreign_keys.is_empty(), "a composite foreign key");
    }

    #[test]
    fn tables_json_keys_are_not_null_and_only_lone_ones_unique() {
        let entry: TableEntry = serde_json::from_value(serde_json::json!({
            "db_id": "pets",
            "table_names_original": ["owners", "visits", "dogs"],
            "column_names_original": [[-1, "*"], [0, "owner_id"], [1, "dog_id"], [1, "day"],
                                      [2, "dog_id"], [2, "vet"]],
            "primary_keys": [1, 2, 3, [4, 5]],
        }))
        .unwrap();
        let facts = DbFacts::from_tables_json(&entry);
        assert!(facts.is_key(&("owners".into(), "owner_id".into())));
        for (table, column) in [("visits", "dog_id"), ("visits", "day"), ("dogs", "vet")] {
            let id = (table.to_string(), column.to_string());
            assert!(facts.not_null.contains(&id) && !facts.unique.contains(&id));
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
