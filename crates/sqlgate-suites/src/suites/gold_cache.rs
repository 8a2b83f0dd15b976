//! Gold results of a distilled suite, cached on disk under content keys: the SHA-256 of the
//! database file (as its manifest records it, checked before use) and the gold SQL, so that a
//! pull request only executes its predictions and an entry can never answer for another file.
//! One JSON file per suite folder, read at start and written once at the end when something was
//! added. In a pull-request run the cache is the base commit's (the pull request's copy is
//! never read, whatever keys it holds), so a forged or emptied cache changes nothing.

use crate::engine::value::{Row, Value};
use crate::input::trusted::BaseFolder;
use crate::util::error::InputError;
use crate::util::state::StateDir;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// File name of the cache inside the suite folder.
pub const FILE: &str = "gold-results.json";

/// Largest cache file read.
const LIMIT: u64 = crate::util::error::MAX_INPUT_BYTES;

/// Cached gold rows of one suite.
#[derive(Debug)]
pub struct GoldCache {
    state: StateDir,
    digests: HashMap<PathBuf, String>,
    entries: Mutex<HashMap<String, serde_json::Value>>,
    changed: AtomicBool,
}

impl GoldCache {
    /// Opens (or starts) the cache of the suite in `root`, whose database files have the given
    /// SHA-256 digests. With a trusted `base`, the cache is read as the base commit has it
    /// (none when it has none). An unreadable cache is ignored, with a message: it is only a
    /// cache.
    pub fn open(
        root: &Path,
        digests: HashMap<PathBuf, String>,
        base: Option<&BaseFolder>,
    ) -> GoldCache {
        let state = StateDir::new(root);
        let bytes = match base {
            Some(base) => Ok(base.read(&state.path(Path::new(FILE)))),
            None => state.read(Path::new(FILE), LIMIT),
        };
        let entries = match bytes {
            Ok(bytes) => bytes.and_then(|b| serde_json::from_slice(&b).ok()),
            Err(e) => {
                crate::util::log::note(&format!("gold results are not taken from the cache: {e}"));
                None
            }
        };
        GoldCache {
            state,
            digests,
            entries: Mutex::new(entries.unwrap_or_default()),
            changed: AtomicBool::new(false),
        }
    }

    /// The key of a gold query on a database of the suite; `None` for a file the suite does
    /// not list (its rows are not cached).
    pub fn key(&self, database: &Path, sql: &str) -> Option<String> {
        let digest = self.digests.get(database)?;
        Some(crate::util::digest::content_hash([
            b"sqlgate-gold-2".as_slice(),
            digest.as_bytes(),
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
        self.state.write(Path::new(FILE), &text)
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
    fn rows_survive_the_disk_round_trip_under_content_keys() {
        let dir = tempfile::tempdir().unwrap();
        let digests = HashMap::from([
            (PathBuf::from("a/db_r1.sqlite"), "d1".to_string()),
            (PathBuf::from("a/db_r2.sqlite"), "d2".to_string()),
            (PathBuf::from("b/copy.sqlite"), "d1".to_string()),
        ]);
        let rows = vec![vec![
            Value::Null,
            Value::Int(3),
            Value::Real(0.1 + 0.2),
            Value::Text("x".into()),
            Value::Blob(vec![0, 255]),
        ]];
        let cache = GoldCache::open(dir.path(), digests.clone(), None);
        let key = cache.key(Path::new("a/db_r1.sqlite"), "SELECT 1").unwrap();
        assert!(cache.get(&key).is_none());
        cache.put(key.clone(), &rows);
        cache.save().unwrap();
        let reopened = GoldCache::open(dir.path(), digests, None);
        let back = reopened.get(&key).unwrap();
        assert!(matches!(back[0][2], Value::Real(f) if f == 0.1 + 0.2));
        assert!(matches!(back[0][1], Value::Int(3)));
        assert_eq!(back, rows);
        assert!(reopened.key(Path::new("x.sqlite"), "SELECT 1").is_none());
        assert_ne!(
            reopened.key(Path::new("a/db_r2.sqlite"), "SELECT 1"),
            Some(key.clone())
        );
        assert_eq!(
            reopened.key(Path::new("b/copy.sqlite"), "SELECT 1"),
            Some(key),
            "the same content has the same key, wherever the file lies"
        );
    }
}
