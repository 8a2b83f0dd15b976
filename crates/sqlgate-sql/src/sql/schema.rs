//! Database schemas as the official Spider tooling sees them: lower-cased table and column names
//! (from a SQLite file, or from tables.json when the file is absent), plus tables.json's keys.

use crate::util::error::InputError;
use serde::Deserialize;
use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

/// Tables and their columns, lower-cased, in the database's own order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Schema {
    tables: Vec<(String, Vec<String>)>,
}

/// Why a schema could not be read.
#[derive(Debug, thiserror::Error)]
#[error("cannot read the schema: {0}")]
pub struct SchemaError(#[from] rusqlite::Error);

impl Schema {
    /// A schema from `(table, columns)` pairs; names are lower-cased.
    pub fn new(tables: Vec<(String, Vec<String>)>) -> Schema {
        let tables = tables
            .into_iter()
            .map(|(t, cols)| {
                (
                    t.to_lowercase(),
                    cols.iter().map(|c| c.to_lowercase()).collect(),
                )
            })
            .collect();
        Schema { tables }
    }

    /// Reads tables (`sqlite_master`) and columns (`PRAGMA table_info`), as the official
    /// `get_schema`, through the guarded constructor within its time budget.
    pub fn from_sqlite(path: &Path) -> Result<Schema, SchemaError> {
        let guarded = crate::util::sqlite::open_read_only(path)?;
        guarded.arm(crate::util::sqlite::METADATA_BUDGET);
        let conn = &guarded.conn;
        let mut statement = conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?;
        let names: Vec<String> = statement
            .query_map([], |row| row.get(0))?
            .collect::<Result<_, _>>()?;
        let mut tables = Vec::with_capacity(names.len());
        for name in names {
            let mut info = conn.prepare("SELECT name FROM pragma_table_info(?1)")?;
            let columns: Vec<String> = info
                .query_map([&name], |row| row.get(0))?
                .collect::<Result<_, _>>()?;
            tables.push((name, columns));
        }
        Ok(Schema::new(tables))
    }

    /// The schema a tables.json entry describes (original names).
    pub fn from_tables_json(entry: &TableEntry) -> Schema {
        let mut tables: Vec<(String, Vec<String>)> = entry
            .table_names_original
            .iter()
            .map(|t| (t.clone(), Vec::new()))
            .collect();
        for (table, column) in &entry.column_names_original {
            if let Some(slot) = usize::try_from(*table).ok().and_then(|t| tables.get_mut(t)) {
                slot.1.push(column.clone());
            }
        }
        Schema::new(tables)
    }

    /// Tables in order, with their columns.
    pub fn tables(&self) -> &[(String, Vec<String>)] {
        &self.tables
    }

    /// The columns of a (lower-case) table.
    pub fn columns(&self, table: &str) -> Option<&[String]> {
        self.tables
            .iter()
            .find(|(t, _)| t == table)
            .map(|(_, c)| c.as_slice())
    }

    /// Whether a (lower-case) table exists.
    pub fn has_table(&self, table: &str) -> bool {
        self.columns(table).is_some()
    }
}

/// One database entry of a Spider-style tables.json.
#[derive(Debug, Clone, Deserialize)]
pub struct TableEntry {
    /// Database id.
    pub db_id: String,
    /// Table names as in the database.
    pub table_names_original: Vec<String>,
    /// `(table index, column name)`; index -1 is the `*` pseudo-column.
    pub column_names_original: Vec<(i64, String)>,
    /// Column index pairs `(foreign key, referenced column)`.
    #[serde(default)]
    pub foreign_keys: Vec<(usize, usize)>,
    /// Primary-key column indexes (an entry may be a list for composite keys).
    #[serde(default)]
    pub primary_keys: Vec<serde_json::Value>,
    /// Column types (`text`, `number`, `time`, ...), aligned with `column_names_original`.
    #[serde(default)]
    pub column_types: Vec<String>,
    /// [`TableEntry::foreign_key_map`], built on first use (ESM asks for it on every pair).
    #[serde(skip)]
    key_map: OnceLock<HashMap<String, String>>,
}

impl TableEntry {
    /// The official `build_foreign_key_map`: every column linked by foreign keys maps to the
    /// lowest-numbered column of its linked group, as `__table.column__` ids.
    pub fn foreign_key_map(&self) -> &HashMap<String, String> {
        self.key_map.get_or_init(|| self.build_foreign_key_map())
    }

    fn build_foreign_key_map(&self) -> HashMap<String, String> {
        let ids: Vec<String> = self
            .column_names_original
            .iter()
            .map(|(table, column)| {
                match usize::try_from(*table)
                    .ok()
                    .and_then(|t| self.table_names_original.get(t))
                {
                    Some(table) => {
                        format!("__{}.{}__", table.to_lowercase(), column.to_lowercase())
                    }
                    None => "__all__".to_string(),
                }
            })
            .collect();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for &(a, b) in &self.foreign_keys {
            match groups.iter_mut().find(|g| g.contains(&a) || g.contains(&b)) {
                Some(group) => group.extend([a, b]),
                None => groups.push(vec![a, b]),
            }
        }
        let mut map = HashMap::new();
        for mut group in groups {
            group.sort_unstable();
            group.dedup();
            let target = &ids[group[0]];
            for index in group {
                if let Some(id) = ids.get(index) {
                    map.insert(id.clone(), target.clone());
                }
            }
        }
        map
    }
}

/// A parsed tables.json, by database id.
#[derive(Debug, Clone, Default)]
pub struct TablesJson {
    entries: HashMap<String, TableEntry>,
}

impl TablesJson {
    /// Reads and validates a tables.json file.
    pub fn load(path: &Path) -> Result<TablesJson, InputError> {
        let bytes = crate::util::error::read_bytes(path)?;
        let list: Vec<TableEntry> = serde_json::from_slice(&bytes).map_err(|e| {
            InputError::malformed(path, format!("line {}", e.line()), e.to_string())
        })?;
        let entries = list.into_iter().map(|e| (e.db_id.clone(), e)).collect();
        Ok(TablesJson { entries })
    }

    /// The entry of a database.
    pub fn get(&self, db_id: &str) -> Option<&TableEntry> {
        self.entries.get(db_id)
    }
}
