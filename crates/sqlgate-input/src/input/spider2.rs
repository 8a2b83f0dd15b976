//! Spider 2.0-lite's layout (`dataset.kind: spider2`): the task file (`spider2-lite.jsonl`, one
//! `{"instance_id", "db", "question"}` per line, in item order), the evaluation settings
//! (`spider2lite_eval.jsonl`: `instance_id`, `condition_cols`, `ignore_order`) and each instance's
//! gold answers: the result files `<gold_results>/<instance_id>.csv`, `<instance_id>_a.csv`, ...
//! (the official pattern `^<id>(_[a-z])?\.csv$`), or, for an instance without one, the gold
//! queries `<gold_sql>/<instance_id>.sql`, `<instance_id>_a.sql`, ... A prediction matching any
//! answer is right. Which files count, and how `condition_cols` applies to them, follows the
//! `evaluate.py` version of `compare.version` (`engine::spider2_select`): the current one
//! compares against `<id>.csv` alone when it exists, else against every `<id>_x.csv` in
//! file-name order; version 2025-01 against every matching file. A gold result file pandas
//! cannot read scores the instance 0 (the official `try` around it), as in the current script;
//! the irregularities it reads its own way (short rows padded with NaN, bare CR line ends,
//! condition lists that do not match the answers) are named in [`Spider2Gold::notes`].

use crate::input::config::{DatasetConfig, Spider2Version};
use crate::input::csv::{read_csv, CsvTable};
use crate::util::error::{read_bytes, read_utf8, InputError};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One instance's gold answers and how they are compared.
#[derive(Debug, Clone)]
pub struct Spider2Gold {
    /// The instance id (`local001`, `bq011`, ...).
    pub instance_id: String,
    /// The alternative gold answers, in file-name order.
    pub answers: Vec<GoldAnswer>,
    /// Compare each column's values as sorted lists (`ignore_order`).
    pub ignore_order: bool,
    /// `condition_cols` as written (`null` when absent).
    pub condition: serde_json::Value,
    /// The settings keys its eval line lacks: the 2025-01 script indexes them (`KeyError`).
    pub absent_settings: Vec<&'static str>,
    /// Whether `compare_multi_pandas_table` compares (any gold other than a lone `<id>.csv`).
    pub multi: bool,
    /// What about this instance's gold the official script reads its own way.
    pub notes: Vec<String>,
}

/// One gold answer.
#[derive(Debug, Clone)]
pub struct GoldAnswer {
    /// The file it came from.
    pub file: PathBuf,
    /// Its result table or its query.
    pub source: AnswerSource,
}

/// Where a gold answer's result comes from.
#[derive(Debug, Clone)]
pub enum AnswerSource {
    /// A stored result (`exec_result/<id>.csv`).
    Table(CsvTable),
    /// A query run on the instance's database (`sql/<id>.sql`).
    Sql(String),
    /// A result file `pd.read_csv` refuses (the reason): the official `try` scores the
    /// instance 0.
    Unreadable(String),
}

/// One instance of the task file, with its gold.
#[derive(Debug, Clone)]
pub struct Instance {
    /// Its database (`db`).
    pub db_id: String,
    /// Its first gold query, when its answers include one; else an SQL comment naming its
    /// result files.
    pub sql: String,
    /// The question, when the task file carries it.
    pub question: Option<String>,
    /// Its gold answers and comparison settings.
    pub gold: Arc<Spider2Gold>,
}

/// The instances of a Spider 2.0 layout in task-file order, and a SHA-256 over every file
/// that defines them.
pub fn load_instances(
    config: &DatasetConfig,
    version: Spider2Version,
) -> Result<(Vec<Instance>, Vec<u8>), InputError> {
    let eval_path = config.eval.as_deref().ok_or_else(|| {
        InputError::malformed(&config.gold, "dataset.eval", "spider2 needs the eval file")
    })?;
    let mut hasher = Sha256::new();
    let tasks = read_jsonl(&config.gold, &mut hasher)?;
    let mut settings = read_settings(eval_path, &mut hasher)?;
    let ids: Vec<&str> = tasks.iter().map(|t| t.1.as_str()).collect();
    let results = answer_files(config.gold_results.as_deref(), "csv", &ids)?;
    let queries = answer_files(config.gold_sql.as_deref(), "sql", &ids)?;
    let mut items = Vec::with_capacity(tasks.len());
    for (line, instance_id, db, question) in &tasks {
        let location = format!("line {line} (`{instance_id}`)");
        let setting = settings.remove(instance_id).ok_or_else(|| {
            InputError::malformed(
                eval_path,
                &location,
                "the instance has no evaluation settings",
            )
        })?;
        let no_files = Vec::new();
        let files = match (results.get(instance_id.as_str()), queries.get(instance_id.as_str())) {
            (Some(files), _) | (None, Some(files)) => files,
            // The current evaluate.py scores such an instance 0 ("No matching gold file found").
            (None, None) if version == Spider2Version::Current => &no_files,
            (None, None) => {
                return Err(InputError::malformed(
                    &config.gold,
                    &location,
                    "no gold answer: no `<id>.csv` in `dataset.gold_results` and no `<id>.sql` in `dataset.gold_sql` (compare.version 2025-01 stops here, as that evaluate.py does)",
                ))
            }
        };
        let gold = load_gold(instance_id, files, setting, version, &mut hasher)?;
        let sql = gold
            .answers
            .iter()
            .find_map(|a| match &a.source {
                AnswerSource::Sql(sql) => Some(sql.clone()),
                _ => None,
            })
            .unwrap_or_else(|| results_comment(&gold.answers));
        items.push(Instance {
            db_id: db.clone(),
            sql,
            question: question.clone(),
            gold: Arc::new(gold),
        });
    }
    if let Some(unknown) = settings.keys().next() {
        return Err(InputError::malformed(
            eval_path,
            format!("`{unknown}`"),
            "an instance the task file does not list",
        ));
    }
    Ok((items, hasher.finalize().to_vec()))
}

/// What stands for the gold query of an instance answered by result files only (shown in
/// reports): an SQL comment naming the files.
fn results_comment(answers: &[GoldAnswer]) -> String {
    let names: Vec<String> = answers
        .iter()
        .filter_map(|a| Some(a.file.file_name()?.to_string_lossy().into_owned()))
        .collect();
    format!("-- gold result: {}", names.join(", "))
}

/// A task line: (line, instance_id, db, question).
type Task = (usize, String, String, Option<String>);

/// A JSON object of a JSONL file.
type JsonObject = serde_json::Map<String, serde_json::Value>;

/// JSON objects, one per non-blank line, with their line numbers.
fn json_lines(path: &Path, hasher: &mut Sha256) -> Result<Vec<(usize, JsonObject)>, InputError> {
    let text = read_utf8(path)?;
    hasher.update(Sha256::digest(text.as_bytes()));
    let mut records = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let record = serde_json::from_str(line).map_err(|e| {
            InputError::malformed(
                path,
                format!("line {}", number + 1),
                format!("not a JSON object: {e}"),
            )
        })?;
        records.push((number + 1, record));
    }
    Ok(records)
}

/// A plain name (no path separator) from field `key` of a record.
fn name_field(
    path: &Path,
    line: usize,
    record: &JsonObject,
    key: &str,
) -> Result<String, InputError> {
    record
        .get(key)
        .and_then(|v| v.as_str())
        .filter(|s| !s.is_empty() && !s.contains(['/', '\\']) && s.trim() == *s)
        .map(str::to_string)
        .ok_or_else(|| {
            InputError::malformed(
                path,
                format!("line {line}"),
                format!("missing or invalid `{key}`"),
            )
        })
}

fn read_jsonl(path: &Path, hasher: &mut Sha256) -> Result<Vec<Task>, InputError> {
    let mut seen = HashMap::new();
    let mut tasks = Vec::new();
    for (line, record) in json_lines(path, hasher)? {
        let id = name_field(path, line, &record, "instance_id")?;
        if let Some(first) = seen.insert(id.clone(), line) {
            return Err(InputError::malformed(
                path,
                format!("line {line}"),
                format!("instance `{id}` is already on line {first}"),
            ));
        }
        let db = name_field(path, line, &record, "db")?;
        let question = record
            .get("question")
            .and_then(|q| q.as_str())
            .map(str::to_string);
        tasks.push((line, id, db, question));
    }
    Ok(tasks)
}

/// One instance's evaluation settings.
struct Setting {
    condition: serde_json::Value,
    ignore_order: bool,
    /// The keys the line lacks (the current script reads them with defaults).
    absent: Vec<&'static str>,
}

fn read_settings(
    path: &Path,
    hasher: &mut Sha256,
) -> Result<BTreeMap<String, Setting>, InputError> {
    let mut settings = BTreeMap::new();
    for (line, record) in json_lines(path, hasher)? {
        let fail = |message: &str| InputError::malformed(path, format!("line {line}"), message);
        let id = name_field(path, line, &record, "instance_id")?;
        let absent: Vec<&'static str> = ["condition_cols", "ignore_order"]
            .into_iter()
            .filter(|key| !record.contains_key(*key))
            .collect();
        let ignore_order = match record.get("ignore_order") {
            None | Some(serde_json::Value::Null) => false,
            Some(value) => value
                .as_bool()
                .ok_or_else(|| fail("`ignore_order` must be true or false"))?,
        };
        let condition = record
            .get("condition_cols")
            .cloned()
            .unwrap_or(serde_json::Value::Null);
        if settings
            .insert(
                id.clone(),
                Setting {
                    condition,
                    ignore_order,
                    absent,
                },
            )
            .is_some()
        {
            return Err(fail(&format!("instance `{id}` appears twice")));
        }
    }
    Ok(settings)
}

/// The answer files in `dir` with extension `ext`, by instance, in file-name order.
fn answer_files(
    dir: Option<&Path>,
    ext: &str,
    ids: &[&str],
) -> Result<HashMap<String, Vec<PathBuf>>, InputError> {
    let mut files: HashMap<String, Vec<PathBuf>> = HashMap::new();
    let Some(dir) = dir else {
        return Ok(files);
    };
    let known: std::collections::HashSet<&str> = ids.iter().copied().collect();
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| InputError::read(dir, e))?
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .collect();
    names.sort();
    for name in names {
        let Some(stem) = name.strip_suffix(&format!(".{ext}")) else {
            continue;
        };
        let alternative = stem
            .rsplit_once('_')
            .filter(|(_, s)| s.len() == 1 && s.as_bytes()[0].is_ascii_lowercase())
            .map(|(id, _)| id);
        for id in [Some(stem), alternative].into_iter().flatten() {
            if known.contains(id) {
                let path = dir.join(&name);
                check_regular_inside(dir, &path)?;
                files.entry(id.to_string()).or_default().push(path);
            }
        }
    }
    Ok(files)
}

/// A gold file must be a regular file inside its folder, not a link out of it.
fn check_regular_inside(dir: &Path, path: &Path) -> Result<(), InputError> {
    let regular = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file());
    let inside = path
        .canonicalize()
        .ok()
        .zip(dir.canonicalize().ok())
        .is_some_and(|(file, dir)| file.starts_with(dir));
    if regular && inside {
        Ok(())
    } else {
        Err(InputError::malformed(
            path,
            "gold answer",
            "not a regular file inside its folder",
        ))
    }
}

/// The files the official script compares against, and whether through
/// `compare_multi_pandas_table`; files it passes over are named in `notes`.
fn official_files(
    instance_id: &str,
    files: &[PathBuf],
    version: Spider2Version,
    notes: &mut Vec<String>,
) -> Result<(Vec<PathBuf>, bool), InputError> {
    let is_plain = |f: &PathBuf| f.file_stem().is_some_and(|s| s == instance_id);
    let plain = files.iter().find(|f| is_plain(f));
    match (version, plain) {
        (Spider2Version::Current, Some(plain)) => {
            if files.len() > 1 {
                notes.push(format!(
                    "{} other gold file(s) beside `{}` are not read (evaluate.py reads only `<id>.csv` when it exists)",
                    files.len() - 1,
                    file_name(plain)
                ));
            }
            Ok((vec![plain.clone()], false))
        }
        (Spider2Version::Current, None) => {
            if files.is_empty() {
                notes.push("no gold file: the instance scores 0 (\"No matching gold file found\")".into());
            }
            Ok((files.to_vec(), true))
        }
        (Spider2Version::Jan2025, _) if files.len() > 1 => Ok((files.to_vec(), true)),
        (Spider2Version::Jan2025, Some(plain)) => Ok((vec![plain.clone()], false)),
        (Spider2Version::Jan2025, None) => Err(official_stop(
            &files[0],
            "a single gold file not named `<id>.csv`: evaluate.py at 0c85cc21 then opens `<id>.csv`, which does not exist",
        )),
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

/// A gold the official script of version 2025-01 stops the whole run on.
fn official_stop(path: &Path, why: &str) -> InputError {
    InputError::malformed(
        path,
        "gold answer",
        format!("{why} (compare.version 2025-01 stops here, as that evaluate.py does)"),
    )
}

fn load_gold(
    instance_id: &str,
    files: &[PathBuf],
    setting: Setting,
    version: Spider2Version,
    hasher: &mut Sha256,
) -> Result<Spider2Gold, InputError> {
    let mut notes = Vec::new();
    let (files, multi) = official_files(instance_id, files, version, &mut notes)?;
    let mut answers = Vec::with_capacity(files.len());
    for file in &files {
        hasher.update(file.file_name().unwrap_or_default().as_encoded_bytes());
        hasher.update(Sha256::digest(read_bytes(file)?));
        let source = if file.extension().is_some_and(|e| e == "csv") {
            match read_csv(file)? {
                Ok(table) => {
                    notes.extend(
                        table
                            .irregular
                            .iter()
                            .map(|n| format!("{}: {n}", file_name(file))),
                    );
                    AnswerSource::Table(table)
                }
                Err(reason) => {
                    notes.push(format!(
                        "{}: pandas cannot read it ({reason}): {}",
                        file_name(file),
                        match version {
                            Spider2Version::Current => "the instance scores 0",
                            Spider2Version::Jan2025 =>
                                "compare.version 2025-01 stops the run once the prediction ran",
                        }
                    ));
                    AnswerSource::Unreadable(reason)
                }
            }
        } else {
            AnswerSource::Sql(read_utf8(file)?)
        };
        answers.push(GoldAnswer {
            file: file.clone(),
            source,
        });
    }
    let gold = Spider2Gold {
        instance_id: instance_id.to_string(),
        answers,
        ignore_order: setting.ignore_order,
        condition: setting.condition,
        absent_settings: setting.absent,
        multi,
        notes,
    };
    Ok(check_conditions(gold, version))
}

/// Notes the condition lists the official script reads its own way: more or fewer lists than
/// answers, and a condition that does not fit an answer's columns (the official comparison of
/// that answer raises, `metrics::ex`).
fn check_conditions(mut gold: Spider2Gold, version: Spider2Version) -> Spider2Gold {
    use crate::input::spider2_select::{answer_conditions, select, Selection};
    let conditions = answer_conditions(&gold.condition, gold.answers.len(), gold.multi);
    for (answer, condition) in gold.answers.iter().zip(conditions) {
        let (AnswerSource::Table(table), Ok(condition)) = (&answer.source, condition) else {
            continue;
        };
        let reason = match select(&condition, table.columns.len(), version) {
            Ok(Selection::Series) if !table.rows.is_empty() => {
                "TypeError: a single condition column gives a Series".to_string()
            }
            Err(reason) => reason,
            Ok(_) => continue,
        };
        let outcome = match (version, gold.multi) {
            (Spider2Version::Jan2025, true) => "compare.version 2025-01 stops the run",
            _ => "the instance scores 0",
        };
        gold.notes.push(format!(
            "{}: condition_cols {condition} does not fit its {} column(s) ({reason}): comparing this answer raises, so {outcome} unless an earlier answer matched",
            file_name(&answer.file),
            table.columns.len()
        ));
    }
    if let serde_json::Value::Array(list) = &gold.condition {
        let lists = list.iter().all(serde_json::Value::is_array) && !list.is_empty();
        let answers = gold.answers.len();
        if gold.multi && lists && list.len() != answers && list != &[serde_json::json!([])] {
            gold.notes.push(format!(
                "condition_cols gives {} lists for {answers} gold answers: {}",
                list.len(),
                if list.len() > answers {
                    "the extra ones are not read"
                } else {
                    "the answers without one score 0 (IndexError in evaluate.py; compare.version 2025-01 stops the run when a comparison reaches one)"
                }
            ));
        }
    }
    gold
}
