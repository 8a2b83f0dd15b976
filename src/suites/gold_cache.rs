//! Gold results of a distilled suite, cached on disk by (suite hash, database file, gold SQL),
//! so that a pull request only executes its predictions. One JSON file per suite folder, read
//! at start and written once at the end when something was added; an entry whose key does not
//! match (another suite, another gold) is simply never found.

use crate::engine::value::{Row, Value};
use crate::util::error::InputError;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// File name of the cache inside the suite folder.
const FILE: &str = "gold-results.json";

/// Cached gold rows of one suite.
#[derive(Debug)]
pub struct GoldCache {
    path: PathBuf,
    suite_keys: BTreeMap<String, String>,
    entries: Mutex<HashMap<String, serde_json::Value>>,
    changed: AtomicBool,
}

impl GoldCache {
    /// Opens (or starts) the cache of the suite in `root`, whose schemas have the given content
    /// hashes. An unreadable cache file is ignored: it is only a cache.
    pub fn open(root: &Path, suite_keys: BTreeMap<String, String>) -> GoldCache {
        let path = root.join(FILE);
        let entries = std::fs::read(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default();
        GoldCache {
            path,
            suite_keys,
            entries: Mutex::new(entries),
            changed: AtomicBool::new(false),
        }
    }

    /// The key of a gold query on a database of `db_id`'s suite; `None` outside the suite.
    pub fn key(&self, db_id: &str, database: &Path, sql: &str) -> Option<String> {
        let suite = self.suite_keys.get(db_id)?;
        let file = database.file_name()?.to_string_lossy();
        Some(crate::util::digest::content_hash([
            suite.as_bytes(),
            file.as_bytes(),
            sql.as_bytes(),
        ]))
    }

    /// The cached rows under `key`.
    pub fn get(&self, key: &str) -> Option<Vec<Row>> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        decode_rows(entries.get(key)?)
    }

    /// Stores rows under `key`.
    pub fn put(&self, key: String, rows: &[Row]) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.insert(key, encode_rows(rows));
        self.changed.store(true, Ordering::Relaxed);
    }

    /// Writes the cache when entries were added.
    pub fn save(&self) -> Result<(), InputError> {
        if !self.changed.load(Ordering::Relaxed) {
            return Ok(());
        }
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let sorted: BTreeMap<&String, &serde_json::Value> = entries.iter().collect();
        let text = serde_json::to_vec(&sorted).expect("cached rows serialise");
        crate::util::fs::write_creating_dirs(&self.path, &text)
    }
}

/// Values keep their storage class: `{"i": 1}`, `{"r": 1.5}`, `{"t": "x"}`, `{"b": [1, 2]}`,
/// `null`; a server's Python value (`{"py": "..."}`, never met on the SQLite files suites run
/// on) does not read back, so its entry is computed again.
fn encode_rows(rows: &[Row]) -> serde_json::Value {
    serde_json::Value::Array(
        rows.iter()
            .map(|row| serde_json::Value::Array(row.iter().map(encode_value).collect()))
            .collect(),
    )
}

fn encode_value(value: &Value) -> serde_json::Value {
    match value {
        Value::Null => serde_json::Value::Null,
        Value::Int(i) => serde_json::json!({ "i": i }),
        Value::Real(f) => serde_json::json!({ "r": f.to_bits().to_string() }),
        Value::Text(s) => serde_json::json!({ "t": s }),
        Value::Blob(b) => serde_json::json!({ "b": b }),
        Value::Py(value) => serde_json::json!({ "py": value.python_str() }),
    }
}

fn decode_rows(json: &serde_json::Value) -> Option<Vec<Row>> {
    json.as_array()?
        .iter()
        .map(|row| row.as_array()?.iter().map(decode_value).collect())
        .collect()
}

fn decode_value(json: &serde_json::Value) -> Option<Value> {
    if json.is_null() {
        return Some(Value::Null);
    }
    let object = json.as_object()?;
    let (tag, value) = object.iter().next()?;
    match tag.as_str() {
        "i" => value.as_i64().map(Value::Int),
        "r" => value
            .as_str()?
            .parse::<u64>()
            .ok()
            .map(|bits| Value::Real(f64::from_bits(bits))),
        "t" => value.as_str().map(|s| Value::Text(s.to_string())),
        "b" => serde_json::from_value(value.clone()).ok().map(Value::Blob),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_survive_the_disk_round_trip_with_their_storage_class() {
        let dir = tempfile::tempdir().unwrap();
        let keys = BTreeMap::from([("db".to_string(), "k1".to_string())]);
        let rows = vec![vec![
            Value::Null,
            Value::Int(3),
            Value::Real(0.1 + 0.2),
            Value::Text("x".into()),
            Value::Blob(vec![0, 255]),
        ]];
        let cache = GoldCache::open(dir.path(), keys.clone());
        let key = cache
            .key("db", Path::new("a/db_r1.sqlite"), "SELECT 1")
            .unwrap();
        assert!(cache.get(&key).is_none());
        cache.put(key.clone(), &rows);
        cache.save().unwrap();
        let reopened = GoldCache::open(dir.path(), keys);
        let back = reopened.get(&key).unwrap();
        assert!(matches!(back[0][2], Value::Real(f) if f == 0.1 + 0.2));
        assert!(matches!(back[0][1], Value::Int(3)));
        assert_eq!(back, rows);
        assert!(reopened
            .key("other", Path::new("x.sqlite"), "SELECT 1")
            .is_none());
        assert_ne!(
            reopened.key("db", Path::new("db_r2.sqlite"), "SELECT 1"),
            Some(key)
        );
    }
}
