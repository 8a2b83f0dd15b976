//! Spider 2.0-lite's layout (`dataset.kind: spider2`): the task file (`spider2-lite.jsonl`, one
//! `{"instance_id", "db", "question"}` per line, in item order), the evaluation settings
//! (`spider2lite_eval.jsonl`: `instance_id`, `condition_cols`, `ignore_order`) and each instance's
//! gold answers: the result files `<gold_results>/<instance_id>.csv`, `<instance_id>_a.csv`, ...
//! (the official pattern `^<id>(_[a-z])?\.csv$`), or, for an instance without one, the gold
//! queries `<gold_sql>/<instance_id>.sql`, `<instance_id>_a.sql`, ... A prediction matching any
//! answer is right. Answers are taken in file-name order, which is also the order a per-answer
//! `condition_cols` list (a list of lists) applies in.

use crate::input::config::DatasetConfig;
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
}

/// One gold answer.
#[derive(Debug, Clone)]
pub struct GoldAnswer {
    /// The file it came from.
    pub file: PathBuf,
    /// Its result table or its query.
    pub source: AnswerSource,
    /// The gold columns that must be found in the prediction (`condition_cols`; Python
    /// indexes, negative from the end); empty: every column.
    pub condition_cols: Vec<i64>,
}

/// Where a gold answer's result comes from.
#[derive(Debug, Clone)]
pub enum AnswerSource {
    /// A stored result (`exec_result/<id>.csv`).
    Table(CsvTable),
    /// A query run on the instance's database (`sql/<id>.sql`).
    Sql(String),
}

/// The gold column indexes `condition_cols` selects from `columns` columns (all when empty),
/// negative indexes counted from the end as `DataFrame.iloc` does; an error for an index out
/// of range.
pub fn resolve_condition_cols(condition: &[i64], columns: usize) -> Result<Vec<usize>, String> {
    if condition.is_empty() {
        return Ok((0..columns).collect());
    }
    condition
        .iter()
        .map(|&i| {
            let resolved = if i < 0 { columns as i64 + i } else { i };
            usize::try_from(resolved)
                .ok()
                .filter(|&r| r < columns)
                .ok_or_else(|| {
                    format!("condition column {i} is out of range for {columns} gold columns")
                })
        })
        .collect()
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
pub fn load_instances(config: &DatasetConfig) -> Result<(Vec<Instance>, Vec<u8>), InputError> {
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
        let (condition, ignore_order) = settings.remove(instance_id).ok_or_else(|| {
            InputError::malformed(
                eval_path,
                &location,
                "the instance has no evaluation settings",
            )
        })?;
        let files = match results.get(instance_id.as_str()) {
            Some(files) => files,
            None => queries.get(instance_id.as_str()).ok_or_else(|| {
                InputError::malformed(
                    &config.gold,
                    &location,
                    "no gold answer: no `<id>.csv` in `dataset.gold_results` and no `<id>.sql` in `dataset.gold_sql`",
                )
            })?,
        };
        let answers = load_answers(files, condition, eval_path, instance_id, &mut hasher)?;
        let sql = answers
            .iter()
            .find_map(|a| match &a.source {
                AnswerSource::Sql(sql) => Some(sql.clone()),
                AnswerSource::Table(_) => None,
            })
            .unwrap_or_else(|| results_comment(&answers));
        items.push(Instance {
            db_id: db.clone(),
            sql,
            question: question.clone(),
            gold: Arc::new(Spider2Gold {
                instance_id: instance_id.clone(),
                answers,
                ignore_order,
            }),
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

/// `condition_cols` as written: one list for every answer, or one list per answer.
#[derive(Debug)]
enum Condition {
    Shared(Vec<i64>),
    PerAnswer(Vec<Vec<i64>>),
}

fn read_settings(
    path: &Path,
    hasher: &mut Sha256,
) -> Result<BTreeMap<String, (Condition, bool)>, InputError> {
    let mut settings = BTreeMap::new();
    for (line, record) in json_lines(path, hasher)? {
        let fail = |message: &str| InputError::malformed(path, format!("line {line}"), message);
        let id = name_field(path, line, &record, "instance_id")?;
        let ignore_order = record
            .get("ignore_order")
            .and_then(|v| v.as_bool())
            .ok_or_else(|| fail("`ignore_order` must be true or false"))?;
        let condition = parse_condition(record.get("condition_cols")).ok_or_else(|| {
            fail("`condition_cols` must be null, a list of column indexes, or a list of such lists")
        })?;
        if settings
            .insert(id.clone(), (condition, ignore_order))
            .is_some()
        {
            return Err(fail(&format!("instance `{id}` appears twice")));
        }
    }
    Ok(settings)
}

fn parse_condition(value: Option<&serde_json::Value>) -> Option<Condition> {
    let ints = |list: &[serde_json::Value]| -> Option<Vec<i64>> {
        list.iter().map(serde_json::Value::as_i64).collect()
    };
    let list = match value? {
        serde_json::Value::Null => return Some(Condition::Shared(Vec::new())),
        serde_json::Value::Array(list) => list,
        _ => return None,
    };
    if list.len() == 1 && (list[0].is_null() || list[0].as_array().is_some_and(Vec::is_empty)) {
        return Some(Condition::Shared(Vec::new()));
    }
    if !list.is_empty() && list.iter().all(serde_json::Value::is_array) {
        let lists = list.iter().map(|l| ints(l.as_array()?));
        return lists.collect::<Option<_>>().map(Condition::PerAnswer);
    }
    ints(list).map(Condition::Shared)
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

fn load_answers(
    files: &[PathBuf],
    condition: Condition,
    eval_path: &Path,
    instance_id: &str,
    hasher: &mut Sha256,
) -> Result<Vec<GoldAnswer>, InputError> {
    let conditions = match condition {
        Condition::Shared(cols) => vec![cols; files.len()],
        Condition::PerAnswer(lists) if lists.len() == files.len() && files.len() > 1 => lists,
        Condition::PerAnswer(lists) => {
            return Err(InputError::malformed(
                eval_path,
                format!("`{instance_id}`"),
                format!(
                    "`condition_cols` gives {} lists for {} gold answers; a list of lists needs one list per answer and at least two answers",
                    lists.len(),
                    files.len()
                ),
            ))
        }
    };
    let mut answers = Vec::with_capacity(files.len());
    for (file, condition_cols) in files.iter().zip(conditions) {
        hasher.update(file.file_name().unwrap_or_default().as_encoded_bytes());
        hasher.update(Sha256::digest(read_bytes(file)?));
        let source = if file.extension().is_some_and(|e| e == "csv") {
            let table = read_csv(file)?;
            resolve_condition_cols(&condition_cols, table.columns.len()).map_err(|message| {
                InputError::malformed(
                    eval_path,
                    format!("`{instance_id}`"),
                    format!("{message} of {}", file.display()),
                )
            })?;
            AnswerSource::Table(table)
        } else {
            AnswerSource::Sql(read_utf8(file)?)
        };
        answers.push(GoldAnswer {
            file: file.clone(),
            source,
            condition_cols,
        });
    }
    Ok(answers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn condition_cols_forms() {
        let parse = |json: &str| parse_condition(Some(&serde_json::from_str(json).unwrap()));
        assert!(matches!(parse("null"), Some(Condition::Shared(c)) if c.is_empty()));
        assert!(matches!(parse("[[]]"), Some(Condition::Shared(c)) if c.is_empty()));
        assert!(matches!(parse("[0, -1]"), Some(Condition::Shared(c)) if c == [0, -1]));
        assert!(matches!(parse("[[0], [1, 2]]"), Some(Condition::PerAnswer(c)) if c.len() == 2));
        assert!(parse("[0, [1]]").is_none());
        assert!(parse("\"0\"").is_none());
        assert!(parse_condition(None).is_none());
    }

    #[test]
    fn condition_cols_resolve_like_iloc() {
        assert_eq!(resolve_condition_cols(&[], 2), Ok(vec![0, 1]));
        assert_eq!(resolve_condition_cols(&[-1, 0], 3), Ok(vec![2, 0]));
        assert!(resolve_condition_cols(&[3], 3).is_err());
        assert!(resolve_condition_cols(&[-4], 3).is_err());
    }
}
