//! Loading a benchmark: gold items, their databases and schemas, and difficulty labels.

use crate::input::config::{DatabaseFiles, DatasetConfig, DifficultySource, EngineCatalog};
use crate::sql::schema::{Schema, TableEntry, TablesJson};
use crate::util::error::{read_bytes, utf8_or_line_error, InputError};
use crate::util::fs::RunFolder;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One benchmark question with its gold query.
#[derive(Debug, Clone)]
pub struct GoldItem {
    /// 0-based position in the gold file; the key every output uses.
    pub index: usize,
    /// The database the item runs on.
    pub db_id: String,
    /// The gold SQL text.
    pub sql: String,
    /// The natural-language question, when the gold file carries it.
    pub question: Option<String>,
    /// BIRD's external knowledge for the question (`evidence`), when the gold file carries it.
    pub evidence: Option<String>,
    /// Difficulty label, when configured.
    pub difficulty: Option<String>,
    /// True when the item's database is absent and `skip_missing_databases` is set.
    pub skipped: bool,
    /// Spider 2.0: the instance's gold answers and comparison settings (`dataset.kind: spider2`).
    pub spider2: Option<Arc<crate::input::spider2::Spider2Gold>>,
    /// The dataset kind's own data for the item, for the metric the kind pairs with (see [`ItemTask`]).
    pub task: Option<Arc<dyn ItemTask>>,
}

/// A kind's own data for one item, which the gold query text does not hold (answers to compare,
/// statements to run, files to match): read by the metric the kind pairs with, through
/// [`ItemTask::as_any`].
pub trait ItemTask: std::fmt::Debug + Send + Sync {
    /// The task as `Any`, for the metric to downcast to the kind's type.
    fn as_any(&self) -> &dyn std::any::Any;

    /// The id `format: livesql` predictions name the item by (`instance_id`), for kinds whose
    /// predictions are keyed so.
    fn instance_id(&self) -> Option<&str> {
        None
    }

    /// The item's gold as a statement list a metric of the kind takes as a prediction, for kinds
    /// whose golds are such lists: the gold audit runs it through the kind's metrics, and a gold
    /// that fails its own checks is a finding.
    fn gold_statements(&self) -> Option<Vec<String>> {
        None
    }
}

/// One database of the benchmark.
#[derive(Debug, Clone)]
pub struct Database {
    /// Its id.
    pub db_id: String,
    /// Where the engine finds it: the run's private copy of its file (see [`Dataset::copies`]),
    /// or on a server engine the db_id itself (the engine maps it onto its layout); `None` when
    /// the file is absent (its items are skipped).
    pub path: Option<PathBuf>,
    /// Its schema (from the file, or from tables.json when the file is absent).
    pub schema: Option<Arc<Schema>>,
    /// Its tables.json entry (keys and foreign keys), when `dataset.tables` describes it.
    pub tables_entry: Option<Arc<TableEntry>>,
}

/// A loaded benchmark.
#[derive(Debug, Clone)]
pub struct Dataset {
    /// Gold items in file order.
    pub items: Vec<GoldItem>,
    /// Databases by id.
    pub databases: BTreeMap<String, Database>,
    /// SHA-256 over the gold file, tables.json and every database file used.
    pub sha256: String,
    /// The SHA-256 of each of those files, so a difference can be named.
    pub digests: DatasetDigests,
    /// The run's own folder of copies of the database files, made when they were digested: the
    /// engines read the copies, so a file renamed over or rewritten in the working tree during
    /// the run changes nothing. Removed when the last clone of the dataset is dropped; `None` on
    /// a server engine.
    pub copies: Option<Arc<RunFolder>>,
}

/// The content digest of each file of a benchmark: which data a score was computed on, kept in
/// the baseline and `summary.json`, so a run on other data names the file that differs.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DatasetDigests {
    /// The gold file (a Spider 2.0 layout: its task and answer files together; Spider 2.0-DBT:
    /// its evaluation file and, when configured, its starting databases).
    pub gold: String,
    /// `dataset.tables`, when the config names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tables: Option<String>,
    /// Each db_id's SQLite file (none on a server engine, whose tables the data digests cover).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub databases: BTreeMap<String, String>,
}

impl DatasetDigests {
    /// What differs from `now`, each as a phrase naming the file (`the gold file`, `database
    /// `x``, `database `y` (only in the baseline)`); empty when nothing does.
    pub fn differences(&self, now: &DatasetDigests) -> Vec<String> {
        let mut differences = Vec::new();
        if self.gold != now.gold {
            differences.push("the gold file".to_string());
        }
        if self.tables != now.tables {
            differences.push("the tables file".to_string());
        }
        let db_ids: std::collections::BTreeSet<&String> =
            self.databases.keys().chain(now.databases.keys()).collect();
        for db_id in db_ids {
            match (self.databases.get(db_id), now.databases.get(db_id)) {
                (Some(before), Some(after)) if before != after => {
                    differences.push(format!("database `{db_id}`"));
                }
                (Some(_), None) => {
                    differences.push(format!("database `{db_id}` (only in the baseline)"))
                }
                (None, Some(_)) => {
                    differences.push(format!("database `{db_id}` (not in the baseline)"))
                }
                _ => {}
            }
        }
        differences
    }
}

/// Where a kind's file of a db_id lies under `dataset.databases`: its SQLite file
/// (`input::kinds::Kind::database_file`, no extension given) or its file of an engine on files
/// of its own (`input::kinds::Kind::engine_file`, that engine's extension given).
pub(crate) type SqliteFileOf<'a> = &'a dyn Fn(&Path, &str, Option<&str>) -> PathBuf;

impl Dataset {
    /// The dataset of `items` (read by the dataset kind, with `gold_bytes` the gold side its
    /// digest covers): their databases located (SQLite files where `sqlite_file` says, or the
    /// files `engines` describe for `dataset.engine.kind`), checked and digested, and their
    /// difficulties assigned. `Dataset::load` (in `input::read_dataset`) is its entry.
    pub(crate) fn assemble(
        config: &DatasetConfig,
        (mut items, gold_bytes): (Vec<GoldItem>, Vec<u8>),
        sqlite_file: SqliteFileOf,
        engines: &dyn EngineCatalog,
    ) -> Result<Dataset, InputError> {
        let tables = match &config.tables {
            Some(path) => Some((TablesJson::load(path)?, read_bytes(path)?)),
            None => None,
        };
        let own_files = engines.database_files(&config.engine.kind);
        let tables_json = tables.as_ref().map(|t| &t.0);
        let copies = (config.databases.is_some())
            .then(|| RunFolder::create("databases").map(Arc::new))
            .transpose()?;
        let files = (own_files, sqlite_file);
        let (databases, file_sha256) =
            locate_databases(config, files, &items, tables_json, copies.as_deref())?;
        for item in &mut items {
            item.skipped = databases[&item.db_id].path.is_none();
        }
        assign_difficulty(config, &mut items, &databases)?;
        let (digests, sha256) =
            file_digests(&gold_bytes, tables.as_ref().map(|t| &t.1[..]), &file_sha256);
        Ok(Dataset {
            items,
            databases,
            sha256,
            digests,
            copies,
        })
    }

    /// The Spider 2.0 instances whose gold the official script reads its own way (short rows,
    /// bare CR, unreadable files, condition lists that do not match the answers), with what.
    pub fn gold_notes(&self) -> Vec<(&str, &[String])> {
        (self.items.iter())
            .filter_map(|item| item.spider2.as_deref())
            .filter(|gold| !gold.notes.is_empty())
            .map(|gold| (gold.instance_id.as_str(), gold.notes.as_slice()))
            .collect()
    }

    /// Number of items that are scored (not skipped).
    pub fn scored_count(&self) -> usize {
        self.items.iter().filter(|i| !i.skipped).count()
    }

    /// Where the engine finds an item's database (see [`Database::path`]), `None` when the item
    /// is skipped.
    pub fn database_path(&self, item: &GoldItem) -> Option<&Path> {
        self.databases[&item.db_id].path.as_deref()
    }
}

/// The gold items of a gold file in the dataset's own format (Spider's `SQL<TAB>db_id` lines,
/// or a JSON list with `query` / `SQL` and `db_id`), without databases: another dialect's golds
/// of the same items.
pub fn read_gold(path: &Path) -> Result<Vec<GoldItem>, InputError> {
    parse_gold(path, &read_bytes(path)?)
}

/// The items of a gold file of SQL and `db_id`: Spider's `SQL<TAB>db_id` lines, or a JSON
/// list (a `.json` file).
pub(crate) fn parse_gold(path: &Path, bytes: &[u8]) -> Result<Vec<GoldItem>, InputError> {
    let is_json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    if is_json {
        parse_gold_json(path, bytes)
    } else {
        parse_gold_lines(path, bytes)
    }
}

/// Spider's `SQL<TAB>db_id` lines.
fn parse_gold_lines(path: &Path, bytes: &[u8]) -> Result<Vec<GoldItem>, InputError> {
    let text = utf8_or_line_error(path, bytes)?;
    let lines: Vec<&str> = text.lines().collect();
    let last_content = lines.iter().rposition(|l| !l.trim().is_empty());
    let mut items = Vec::new();
    for (number, line) in lines
        .iter()
        .enumerate()
        .take(last_content.map_or(0, |i| i + 1))
    {
        let location = format!("line {}", number + 1);
        let trimmed = line.trim();
        if trimmed.is_empty() {
            return Err(InputError::malformed(
                path,
                location,
                "blank line inside the gold file (multi-turn gold files are not supported)",
            ));
        }
        let Some((sql, db_id)) = trimmed.rsplit_once('\t') else {
            return Err(InputError::malformed(
                path,
                location,
                "expected `SQL<TAB>db_id`",
            ));
        };
        if sql.trim().is_empty() || db_id.trim().is_empty() || db_id.contains(['/', '\\']) {
            return Err(InputError::malformed(
                path,
                location,
                "expected a non-empty SQL and a plain db_id",
            ));
        }
        items.push(GoldItem {
            index: items.len(),
            db_id: db_id.trim().to_string(),
            sql: sql.to_string(),
            question: None,
            evidence: None,
            difficulty: None,
            skipped: false,
            spider2: None,
            task: None,
        });
    }
    Ok(items)
}

/// A Spider (`query`) or BIRD (`SQL`) JSON list; other fields are kept for `field:NAME`.
fn parse_gold_json(path: &Path, bytes: &[u8]) -> Result<Vec<GoldItem>, InputError> {
    let records: Vec<serde_json::Map<String, serde_json::Value>> = serde_json::from_slice(bytes)
        .map_err(|e| InputError::malformed(path, format!("line {}", e.line()), e.to_string()))?;
    records
        .into_iter()
        .enumerate()
        .map(|(index, record)| gold_item_from_json(path, index, record))
        .collect()
}

fn gold_item_from_json(
    path: &Path,
    index: usize,
    record: serde_json::Map<String, serde_json::Value>,
) -> Result<GoldItem, InputError> {
    let text_field = |key: &str| record.get(key).and_then(|v| v.as_str()).map(str::to_string);
    let location = format!("item {index}");
    let sql = text_field("query")
        .or_else(|| text_field("SQL"))
        .ok_or_else(|| InputError::malformed(path, &location, "has neither `query` nor `SQL`"))?;
    let db_id = text_field("db_id")
        .filter(|d| !d.is_empty() && !d.contains(['/', '\\']))
        .ok_or_else(|| InputError::malformed(path, &location, "missing or invalid `db_id`"))?;
    Ok(GoldItem {
        index,
        db_id,
        sql,
        question: text_field("question"),
        evidence: text_field("evidence").filter(|e| !e.trim().is_empty()),
        difficulty: None,
        skipped: false,
        spider2: None,
        task: None,
    })
}

/// How a kind finds a db_id's database file: an engine's own files, else SQLite's where the
/// kind puts them.
type FileRules<'a> = (Option<DatabaseFiles>, SqliteFileOf<'a>);

/// The SHA-256 of each database file's copy, by db_id.
type FileDigests = BTreeMap<String, [u8; 32]>;

/// A database file found under `dataset.databases`: where it lies in the working tree (named in
/// errors), the run's private copy the engines read, and the SHA-256 of the copy's bytes.
struct Located {
    original: PathBuf,
    copy: PathBuf,
    sha256: [u8; 32],
}

/// Each db_id's database: its file under `dataset.databases` (SQLite's, or one of an engine of
/// its own on files, whose schema comes from `dataset.tables`), copied into `copies` and
/// digested there, or on a server its db_id; and the SHA-256 of each copied file by db_id.
fn locate_databases(
    config: &DatasetConfig,
    files: FileRules,
    items: &[GoldItem],
    tables: Option<&TablesJson>,
    copies: Option<&RunFolder>,
) -> Result<(BTreeMap<String, Database>, FileDigests), InputError> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for item in items {
        *counts.entry(&item.db_id).or_default() += 1;
    }
    // `dataset.databases` is set exactly when the engine reads files (the config's check), and
    // then `copies` is the run's folder for them; a server names each database by its db_id.
    let mut databases = BTreeMap::new();
    let mut file_sha256 = BTreeMap::new();
    for (number, (db_id, count)) in counts.into_iter().enumerate() {
        let located = match config.databases.as_deref().zip(copies) {
            Some((folder, copies)) => {
                let into = copies.folder.join(number.to_string());
                let at = (folder, into.as_path());
                database_file_of(config, files, at, db_id, count)?
            }
            None => None,
        };
        let tables_entry = tables.and_then(|t| t.get(db_id)).cloned().map(Arc::new);
        let sqlite = located.as_ref().filter(|_| files.0.is_none());
        let schema = load_schema(db_id, sqlite, tables_entry.as_deref())?;
        let path = match (&located, copies) {
            (Some(located), _) => Some(located.copy.clone()),
            (None, Some(_)) => None,
            (None, None) => Some(PathBuf::from(db_id)),
        };
        if let Some(located) = located {
            file_sha256.insert(db_id.to_string(), located.sha256);
        }
        databases.insert(
            db_id.to_string(),
            Database {
                db_id: db_id.to_string(),
                path,
                schema,
                tables_entry,
            },
        );
    }
    Ok((databases, file_sha256))
}

/// The database file of `db_id` under `folder` (SQLite's, or the file of the engine's own
/// files), checked against the workspace rule (no side file its engine would read beside it),
/// copied into the new folder `into` and checked there against its format; `None` when it is
/// absent and `skip_missing_databases` allows that.
fn database_file_of(
    config: &DatasetConfig,
    (own_files, sqlite_file): FileRules,
    (folder, into): (&Path, &Path),
    db_id: &str,
    count: usize,
) -> Result<Option<Located>, InputError> {
    let (file, check_file, side_files) = match own_files {
        Some(files) => (
            sqlite_file(folder, db_id, Some(files.extension)),
            files.check,
            files.side_files,
        ),
        None => (
            sqlite_file(folder, db_id, None),
            crate::input::database_file::check as fn(&Path) -> Result<(), String>,
            crate::util::workspace::SQLITE_SIDE_FILES,
        ),
    };
    if std::fs::symlink_metadata(&file).is_ok() {
        let refuse = |message| InputError::malformed(&file, format!("database `{db_id}`"), message);
        crate::util::workspace::check_database(folder, &file, side_files).map_err(refuse)?;
        let located = private_copy(&file, into)?;
        check_file(&located.copy).map_err(refuse)?;
        return Ok(Some(located));
    }
    if config.skip_missing_databases {
        return Ok(None);
    }
    Err(InputError::malformed(
        &file,
        format!("database `{db_id}` ({count} items)"),
        "not found (set `dataset.skip_missing_databases: true` to report its items as skipped)",
    ))
}

/// `file` copied into the new folder `into` under its own name (a test suite's databases are
/// told from the original by name) and digested there.
fn private_copy(file: &Path, into: &Path) -> Result<Located, InputError> {
    std::fs::create_dir(into).map_err(|e| InputError::read(into, e))?;
    let copy = into.join(file.file_name().unwrap_or(std::ffi::OsStr::new("database")));
    let sha256 = crate::util::fs::copy_digested(file, &copy).map_err(|e| {
        InputError::malformed(file, "database", format!("cannot copy it for the run: {e}"))
    })?;
    Ok(Located {
        original: file.to_path_buf(),
        copy,
        sha256,
    })
}

/// The schema of `db_id`: read from its SQLite file's copy (the original named in errors), which
/// must open and hold every table its tables.json entry declares (else an input error naming the
/// file and the missing tables); from the tables.json entry when the file is absent (or the
/// engine is a server, or reads files of its own).
fn load_schema(
    db_id: &str,
    file: Option<&Located>,
    entry: Option<&TableEntry>,
) -> Result<Option<Arc<Schema>>, InputError> {
    let Some(file) = file else {
        return Ok(entry.map(|e| Arc::new(Schema::from_tables_json(e))));
    };
    let path = &file.original;
    let location = || format!("database `{db_id}`");
    let schema = Schema::from_sqlite(&file.copy).map_err(|error| {
        InputError::malformed(
            path,
            location(),
            format!(
                "does not open as a SQLite database: {}",
                crate::util::scrub::scrub_cut(&error.to_string(), 300)
            ),
        )
    })?;
    let missing = entry.map_or_else(Vec::new, |e| {
        crate::input::database_file::missing_tables(&schema, e)
    });
    if !missing.is_empty() {
        return Err(InputError::malformed(
            path,
            location(),
            format!(
                "lacks tables that `dataset.tables` declares for it: {}",
                missing
                    .iter()
                    .map(|t| format!("`{t}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    Ok(Some(Arc::new(schema)))
}

/// Labels every item as `dataset.difficulty` says (a gold Spider's parser cannot read is left
/// unlabelled, see
/// [`crate::score::gold_check::settle_difficulty`]).
fn assign_difficulty(
    config: &DatasetConfig,
    items: &mut [GoldItem],
    databases: &BTreeMap<String, Database>,
) -> Result<(), InputError> {
    match &config.difficulty {
        DifficultySource::None => Ok(()),
        DifficultySource::Field(name) => assign_field_difficulty(&config.gold, name, items),
        DifficultySource::SpiderHardness => {
            let labels: Vec<Result<Result<String, String>, InputError>> = items
                .par_iter()
                .map(|item| spider_hardness(&config.gold, item, databases))
                .collect();
            for (item, label) in items.iter_mut().zip(labels) {
                item.difficulty = label?.ok();
            }
            Ok(())
        }
    }
}

/// The item's Spider hardness (`difficulty: spider-hardness`), or why its gold does not parse; an input error when there is no
/// schema to parse it with.
pub fn spider_hardness(
    gold_path: &Path,
    item: &GoldItem,
    databases: &BTreeMap<String, Database>,
) -> Result<Result<String, String>, InputError> {
    let schema = databases[&item.db_id].schema.as_ref().ok_or_else(|| {
        InputError::malformed(
            gold_path,
            format!("item {} (db `{}`)", item.index, item.db_id),
            "spider-hardness needs the schema: the database is absent and `dataset.tables` does not describe it",
        )
    })?;
    Ok(crate::sql::parse::parse_spider(&item.sql, schema)
        .map(|parsed| crate::sql::hardness::hardness(&parsed).as_str().to_string())
        .map_err(|e| e.to_string()))
}

fn assign_field_difficulty(
    gold_path: &Path,
    field: &str,
    items: &mut [GoldItem],
) -> Result<(), InputError> {
    let bytes = crate::util::error::read_bytes(gold_path)?;
    let records = json_records(&bytes).ok_or_else(|| {
        InputError::malformed(
            gold_path,
            format!("difficulty `field:{field}`"),
            "needs a JSON (or JSON lines) gold file with that field on every item",
        )
    })?;
    for (item, record) in items.iter_mut().zip(&records) {
        let label = match record.get(field) {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(v @ serde_json::Value::Number(_)) => v.to_string(),
            _ => {
                return Err(InputError::malformed(
                    gold_path,
                    format!("item {}", item.index),
                    format!("no text field `{field}` for the difficulty"),
                ))
            }
        };
        item.difficulty = Some(label);
    }
    Ok(())
}

/// The objects of a gold file that is a JSON list, or JSON lines (LiveSQLBench: blank lines
/// skipped); `None` when it is neither.
fn json_records(bytes: &[u8]) -> Option<Vec<HashMap<String, serde_json::Value>>> {
    if let Ok(records) = serde_json::from_slice(bytes) {
        return Some(records);
    }
    let text = std::str::from_utf8(bytes).ok()?;
    (text.lines().filter(|line| !line.trim().is_empty()))
        .map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// The SHA-256 of the gold file, tables.json and each database file (`databases`: the copies'
/// digests by db_id; none on a server engine, whose contents sqlgate cannot hash), and the
/// dataset's fingerprint: one SHA-256 over them all (as baselines have stored it since before
/// the per-file digests).
fn file_digests(
    gold: &[u8],
    tables: Option<&[u8]>,
    databases: &FileDigests,
) -> (DatasetDigests, String) {
    let hex = crate::util::digest::hex;
    let mut fingerprint = Sha256::new();
    let gold = Sha256::digest(gold);
    fingerprint.update(b"gold\0");
    fingerprint.update(gold);
    let tables = tables.map(Sha256::digest);
    if let Some(tables) = &tables {
        fingerprint.update(b"tables\0");
        fingerprint.update(tables);
    }
    let mut digests = DatasetDigests {
        gold: hex(&gold),
        tables: tables.map(|t| hex(&t)),
        databases: BTreeMap::new(),
    };
    for (db_id, file) in databases {
        fingerprint.update(db_id.as_bytes());
        fingerprint.update(b"\0");
        fingerprint.update(file);
        digests.databases.insert(db_id.clone(), hex(file));
    }
    (digests, hex(&fingerprint.finalize()))
}
