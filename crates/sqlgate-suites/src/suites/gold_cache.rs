//! Gold results of a distilled suite, cached on disk under content keys: the SHA-256 of the
//! database file (as its manifest records it, checked before use) and the gold SQL, so that a
//! pull request only executes its predictions and an entry can never answer for another file.
//! One JSON file per suite folder, read at start and written once at the end when something was
//! added. In a pull-request run the cache is the base commit's (the pull request's copy is
//! never read, whatever keys it holds).
//!
//! A key binds the database and the SQL, never the rows, and anyone can compute it: so an entry
//! is used only when a baseline vouches for it ([`GoldCache::with_trust`]). Each entry has a
//! digest of its key and its rows as they decode ([`entry_digest`]); a baseline records the
//! digests of the entries its run used or wrote, and a later run uses only those. Any other
//! entry (forged, under a new key, decoding to other rows) is computed again and counted
//! ([`GoldCache::untrusted`]).

use crate::engine::value::{Row, Value};
use crate::input::trusted::BaseFolder;
use crate::util::error::InputError;
use crate::util::state::StateDir;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
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
    trusted: HashSet<String>,
    used: Mutex<BTreeSet<String>>,
    untrusted: Mutex<BTreeSet<String>>,
    changed: AtomicBool,
}

/// The digest that vouches for one entry: SHA-256 of its key and of its rows as stored by
/// sqlgate (the canonical encoding of the rows a run would use), so another row under the same
/// key, or a text decoding to other rows, has another digest.
pub fn entry_digest(key: &str, rows: &[Row]) -> String {
    let text = serde_json::to_vec(&encode_rows(rows)).expect("cached rows serialise");
    crate::util::digest::content_hash([b"sqlgate-gold-entry-1".as_slice(), key.as_bytes(), &text])
}

impl GoldCache {
    /// Opens (or starts) the cache of the suite in `root`, whose database files have the given
    /// SHA-256 digests. With a trusted `base`, the cache is read as the base commit has it
    /// (none when it has none). A cache that cannot be read (a symlink, not a regular file,
    /// over the bound) is not used, with a message; one that is not a JSON object stops the run
    /// naming the file. No entry is trusted until [`GoldCache::with_trust`] says which.
    pub fn open(
        root: &Path,
        digests: HashMap<PathBuf, String>,
        base: Option<&BaseFolder>,
    ) -> Result<GoldCache, InputError> {
        let state = StateDir::new(root);
        let path = state.path(Path::new(FILE));
        let bytes = match base {
            Some(base) => base.read(&path),
            None => state.read(Path::new(FILE), LIMIT).unwrap_or_else(|e| {
                crate::util::log::note(&format!("gold results are not taken from the cache: {e}"));
                None
            }),
        };
        let entries = match bytes {
            Some(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                InputError::malformed(
                    &path,
                    "the entries",
                    format!("not an object of keys to rows: {e}"),
                )
            })?,
            None => HashMap::new(),
        };
        Ok(GoldCache {
            state,
            digests,
            entries: Mutex::new(entries),
            trusted: HashSet::new(),
            used: Mutex::default(),
            untrusted: Mutex::default(),
            changed: AtomicBool::new(false),
        })
    }

    /// Uses only the entries whose digests ([`entry_digest`]) are in `recorded`: those the
    /// run's baseline records (none without one), and the entries this run writes.
    pub fn with_trust(mut self, recorded: HashSet<String>) -> GoldCache {
        self.trusted = recorded;
        self
    }

    /// The cache file.
    pub fn path(&self) -> PathBuf {
        self.state.path(Path::new(FILE))
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

    /// The cached rows under `key`, when the entry is trusted; an entry that is not (or does
    /// not decode) is counted in [`GoldCache::untrusted`] and its gold is to be computed again.
    pub fn get(&self, key: &str) -> Option<Vec<Row>> {
        let stored = lock(&self.entries).get(key).cloned()?;
        let rows = decode_rows(&stored);
        let digest = rows.as_deref().map(|rows| entry_digest(key, rows));
        match digest.filter(|digest| self.admits(digest)) {
            Some(digest) => {
                lock(&self.used).insert(digest);
                rows
            }
            None => {
                lock(&self.untrusted).insert(key.to_string());
                None
            }
        }
    }

    /// Stores rows under `key`.
    pub fn put(&self, key: String, rows: &[Row]) {
        lock(&self.used).insert(entry_digest(&key, rows));
        lock(&self.entries).insert(key, encode_rows(rows));
        self.changed.store(true, Ordering::Relaxed);
    }

    /// Digests of the entries used or written so far, sorted: what a baseline records.
    pub fn recorded(&self) -> Vec<String> {
        lock(&self.used).iter().cloned().collect()
    }

    /// Keys of the entries found but not used (no baseline records their digest, or their rows
    /// do not decode), sorted.
    pub fn untrusted(&self) -> Vec<String> {
        lock(&self.untrusted).iter().cloned().collect()
    }

    /// Writes the cache when entries were added.
    pub fn save(&self) -> Result<(), InputError> {
        if !self.changed.load(Ordering::Relaxed) {
            return Ok(());
        }
        let entries = lock(&self.entries);
        let sorted: BTreeMap<&String, &serde_json::Value> = entries.iter().collect();
        let text = serde_json::to_vec(&sorted).expect("cached rows serialise");
        self.state.write(Path::new(FILE), &text)
    }

    /// Whether the entry with `digest` may be used: a baseline recorded it, or this run wrote
    /// (or already used) it.
    fn admits(&self, digest: &str) -> bool {
        self.trusted.contains(digest) || lock(&self.used).contains(digest)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
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

    fn digests() -> HashMap<PathBuf, String> {
        HashMap::from([
            (PathBuf::from("a/db_r1.sqlite"), "d1".to_string()),
            (PathBuf::from("a/db_r2.sqlite"), "d2".to_string()),
            (PathBuf::from("b/copy.sqlite"), "d1".to_string()),
        ])
    }

    fn open(dir: &Path) -> GoldCache {
        GoldCache::open(dir, digests(), None).unwrap()
    }

    /// A cache of `rows` under the key of `SELECT 1` on `a/db_r1.sqlite`, saved in `dir`; its
    /// key and the digests the run recorded.
    fn written(dir: &Path, rows: &[Row]) -> (String, HashSet<String>) {
        let cache = open(dir);
        let key = cache.key(Path::new("a/db_r1.sqlite"), "SELECT 1").unwrap();
        cache.put(key.clone(), rows);
        cache.save().unwrap();
        (key, cache.recorded().into_iter().collect())
    }

    /// The cache file in `dir` with the entry under `key` replaced by `entry`.
    fn forge(dir: &Path, key: &str, entry: serde_json::Value) {
        let path = dir.join(FILE);
        let mut entries: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        entries.insert(key.to_string(), entry);
        std::fs::write(&path, serde_json::to_vec(&entries).unwrap()).unwrap();
    }

    fn one(value: Value) -> Vec<Row> {
        vec![vec![value]]
    }

    #[test]
    fn rows_survive_the_disk_round_trip_under_content_keys() {
        let dir = tempfile::tempdir().unwrap();
        let rows = vec![vec![
            Value::Null,
            Value::Int(3),
            Value::Real(0.1 + 0.2),
            Value::Text("x".into()),
            Value::Blob(vec![0, 255]),
        ]];
        let (key, recorded) = written(dir.path(), &rows);
        assert_eq!(recorded, HashSet::from([entry_digest(&key, &rows)]));
        let reopened = open(dir.path()).with_trust(recorded);
        let back = reopened.get(&key).unwrap();
        assert!(matches!(back[0][2], Value::Real(f) if f == 0.1 + 0.2));
        assert!(matches!(back[0][1], Value::Int(3)));
        assert_eq!(back, rows);
        assert!(reopened.untrusted().is_empty());
        assert_eq!(reopened.recorded(), vec![entry_digest(&key, &rows)]);
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

    #[test]
    fn without_a_recorded_digest_no_entry_is_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let (key, _) = written(dir.path(), &one(Value::Int(1)));
        let cache = open(dir.path());
        assert!(cache.get(&key).is_none(), "a first run trusts no entry");
        assert_eq!(cache.untrusted(), vec![key.clone()]);
        assert!(cache.recorded().is_empty());
        let other = open(dir.path()).with_trust(HashSet::from(["0".repeat(64)]));
        assert!(other.get(&key).is_none());
    }

    #[test]
    fn forged_rows_under_a_recorded_key_are_computed_again() {
        let dir = tempfile::tempdir().unwrap();
        let (key, recorded) = written(dir.path(), &one(Value::Int(1)));
        // Other rows, the same rows in another storage class, and a value that decodes to the
        // same type but another number: none is what the baseline recorded.
        for entry in [
            serde_json::json!([[{"t": "wrong"}]]),
            serde_json::json!([[{"r": 1.0_f64.to_bits().to_string()}]]),
            serde_json::json!([[{"i": 2}]]),
            serde_json::json!([]),
            serde_json::json!([[{"i": 1}], [{"i": 1}]]),
            serde_json::json!([[{"py": "1"}]]),
            serde_json::json!({"i": 1}),
        ] {
            forge(dir.path(), &key, entry.clone());
            let cache = open(dir.path()).with_trust(recorded.clone());
            assert!(cache.get(&key).is_none(), "{entry} was trusted");
            assert_eq!(cache.untrusted(), vec![key.clone()], "{entry}");
            // Computed again and written back, the entry is this run's own.
            cache.put(key.clone(), &one(Value::Int(1)));
            assert_eq!(cache.get(&key), Some(one(Value::Int(1))));
            assert_eq!(cache.recorded(), Vec::from_iter(recorded.clone()));
        }
    }

    #[test]
    fn an_entry_under_a_key_no_baseline_used_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let (_, recorded) = written(dir.path(), &one(Value::Int(1)));
        let cache = open(dir.path());
        let new_key = cache.key(Path::new("a/db_r2.sqlite"), "SELECT 1").unwrap();
        forge(dir.path(), &new_key, serde_json::json!([[{"i": 1}]]));
        let cache = open(dir.path()).with_trust(recorded);
        assert!(cache.get(&new_key).is_none());
        assert_eq!(cache.untrusted(), vec![new_key]);
    }

    #[test]
    fn a_text_decoding_to_the_recorded_rows_is_those_rows() {
        // The digest covers the rows as they decode, so a longer spelling of the same rows (an
        // extra tag the decoder ignores) answers exactly what the baseline vouched for.
        let dir = tempfile::tempdir().unwrap();
        let (key, recorded) = written(dir.path(), &one(Value::Int(1)));
        forge(dir.path(), &key, serde_json::json!([[{"i": 1, "t": "x"}]]));
        let cache = open(dir.path()).with_trust(recorded);
        assert_eq!(cache.get(&key), Some(one(Value::Int(1))));
    }

    #[test]
    fn a_cache_through_a_symlink_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let (key, recorded) = written(dir.path(), &one(Value::Int(1)));
        let elsewhere = dir.path().join("elsewhere.json");
        std::fs::rename(dir.path().join(FILE), &elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir.path().join(FILE)).unwrap();
        let cache = open(dir.path()).with_trust(recorded);
        assert!(cache.get(&key).is_none());
        cache.put(key.clone(), &one(Value::Int(1)));
        cache.save().unwrap();
        let meta = std::fs::symlink_metadata(dir.path().join(FILE)).unwrap();
        assert!(meta.is_file(), "the link is replaced by a regular file");
    }

    #[test]
    fn a_cache_that_is_not_an_object_of_entries_is_named() {
        let dir = tempfile::tempdir().unwrap();
        for text in ["[]", "{\"k\": ", "null"] {
            std::fs::write(dir.path().join(FILE), text).unwrap();
            let error = GoldCache::open(dir.path(), digests(), None).unwrap_err();
            assert!(error.to_string().contains(FILE), "{error}");
        }
    }
}
