//! Spider 2.0-DBT's layout, as its `evaluate.py` reads it (xlang-ai/Spider2
//! `spider2-dbt/evaluation_suite/`): the gold folder holds `spider2_eval.jsonl` (one
//! `{"instance_id", "evaluation": {"func": "duckdb_match", "parameters": {"gold",
//! "condition_tabs", "condition_cols", "ignore_orders"}}}` per line) and each instance's gold file
//! `<gold folder>/<instance_id>/<gold>`; the submission folder holds `results_metadata.jsonl`
//! (`{"instance_id", "answer_type", "answer_or_path"}` per line) and each answer file
//! `<submission>/<instance_id>/<answer_or_path>` (the `.duckdb` file the agent's project left).
//!
//! Where the official script would score an instance 0 for a gold problem (a missing gold file,
//! lists of different lengths: its `assert`s) the load stops instead, naming the line (exit 2): a
//! gold that cannot be scored is a finding, not a 0 charged to every system.

use crate::util::error::{read_utf8, InputError};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One instance of `spider2_eval.jsonl`.
#[derive(Debug, Clone)]
pub struct DbtInstance {
    /// Its id (`playbook001`).
    pub instance_id: String,
    /// The gold `.duckdb` file, `<gold folder>/<instance_id>/<gold>`.
    pub gold: PathBuf,
    /// `condition_tabs`.
    pub tables: Vec<String>,
    /// `condition_cols`, one list per table (`[]`: every column).
    pub conditions: Vec<Vec<i64>>,
    /// `ignore_orders`, one per table.
    pub ignore_orders: Vec<bool>,
}

/// The instances of `<gold_dir>/spider2_eval.jsonl`, in file order; a missing gold file, an
/// evaluation other than `duckdb_match` or settings `duckdb_match` asserts against are input
/// errors naming the line.
pub fn load_eval(gold_dir: &Path) -> Result<Vec<DbtInstance>, InputError> {
    let path = gold_dir.join("spider2_eval.jsonl");
    let mut instances: Vec<DbtInstance> = Vec::new();
    for (line, record) in json_lines(&path)? {
        let fail = |message: String| InputError::malformed(&path, format!("line {line}"), message);
        let instance_id = plain_name(&record, "instance_id").map_err(fail)?;
        if instances.iter().any(|i| i.instance_id == instance_id) {
            return Err(fail(format!("instance `{instance_id}` appears twice")));
        }
        let evaluation = &record["evaluation"];
        if evaluation["func"] != "duckdb_match" {
            return Err(fail(format!(
                "`evaluation.func` is {}, not \"duckdb_match\" (the only Spider 2.0-DBT comparison)",
                evaluation["func"]
            )));
        }
        let parameters = &evaluation["parameters"];
        let gold_name = plain_name(parameters, "gold").map_err(fail)?;
        let gold = gold_dir.join(&instance_id).join(&gold_name);
        if !std::fs::symlink_metadata(&gold).is_ok_and(|m| m.file_type().is_file()) {
            return Err(fail(format!(
                "`{instance_id}`: the gold database {} is missing (or not a regular file)",
                gold.display()
            )));
        }
        let (tables, conditions, ignore_orders) = settings(parameters).map_err(fail)?;
        instances.push(DbtInstance {
            instance_id,
            gold,
            tables,
            conditions,
            ignore_orders,
        });
    }
    Ok(instances)
}

/// `condition_tabs`, `condition_cols` (absent: `[]` per table) and `ignore_orders` (absent: false
/// per table), checked to be of one length.
#[allow(clippy::type_complexity)]
fn settings(parameters: &Value) -> Result<(Vec<String>, Vec<Vec<i64>>, Vec<bool>), String> {
    let tables: Vec<String> = match parameters["condition_tabs"].as_array() {
        Some(list) if !list.is_empty() => (list.iter())
            .map(|t| t.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or("`condition_tabs` must be a list of table names")?,
        _ => return Err("`condition_tabs` must be a non-empty list of table names (every real instance sets it)".into()),
    };
    let conditions: Vec<Vec<i64>> = match &parameters["condition_cols"] {
        Value::Null => vec![Vec::new(); tables.len()],
        Value::Array(lists) => (lists.iter())
            .map(|l| {
                l.as_array()?
                    .iter()
                    .map(Value::as_i64)
                    .collect::<Option<Vec<_>>>()
            })
            .collect::<Option<_>>()
            .ok_or("`condition_cols` must be a list of lists of column numbers")?,
        _ => return Err("`condition_cols` must be a list of lists of column numbers".into()),
    };
    let ignore_orders: Vec<bool> = match &parameters["ignore_orders"] {
        Value::Null => vec![false; tables.len()],
        Value::Array(flags) => (flags.iter())
            .map(Value::as_bool)
            .collect::<Option<_>>()
            .ok_or("`ignore_orders` must be a list of true / false")?,
        _ => return Err("`ignore_orders` must be a list of true / false".into()),
    };
    if conditions.len() != tables.len() || ignore_orders.len() != tables.len() {
        return Err(format!(
            "{} tables, {} condition lists and {} ignore_orders: duckdb_match asserts they are as many",
            tables.len(),
            conditions.len(),
            ignore_orders.len()
        ));
    }
    Ok((tables, conditions, ignore_orders))
}

/// One line of `results_metadata.jsonl`: the answer file, or why there is none.
pub type Answer = Result<PathBuf, String>;

/// The answers of `<submission>/results_metadata.jsonl` by instance: the file
/// `<submission>/<instance_id>/<answer_or_path>` when `answer_type` is `file` and the path stays
/// inside the instance's folder, else the reason it scores 0. A later line for the same instance
/// replaces an earlier one (the official `dict` does the same).
pub fn load_results(submission: &Path) -> Result<BTreeMap<String, Answer>, InputError> {
    let path = submission.join("results_metadata.jsonl");
    let mut answers = BTreeMap::new();
    for (line, record) in json_lines(&path)? {
        let fail = |message: String| InputError::malformed(&path, format!("line {line}"), message);
        let instance_id = plain_name(&record, "instance_id").map_err(fail)?;
        let answer = match (
            record["answer_type"].as_str(),
            record["answer_or_path"].as_str(),
        ) {
            (Some("file"), Some(relative)) => answer_file(submission, &instance_id, relative),
            (kind, _) => Err(format!(
                "answer_type {} is not a file: duckdb_match needs the result .duckdb file",
                kind.unwrap_or("(absent)")
            )),
        };
        answers.insert(instance_id, answer);
    }
    Ok(answers)
}

/// `<submission>/<instance_id>/<relative>`, a regular file inside that folder (a path out of it,
/// a link or a folder is refused: the submission is hostile).
fn answer_file(submission: &Path, instance_id: &str, relative: &str) -> Answer {
    let folder = submission.join(instance_id);
    let file = folder.join(relative);
    let regular = std::fs::symlink_metadata(&file).is_ok_and(|m| m.file_type().is_file());
    let inside = (file.canonicalize().ok())
        .zip(folder.canonicalize().ok())
        .is_some_and(|(file, folder)| file.starts_with(folder));
    match (regular, inside) {
        (true, true) => Ok(file),
        (false, _) => Err(format!("no regular file {}", file.display())),
        (true, false) => Err(format!(
            "{} is outside {}",
            file.display(),
            folder.display()
        )),
    }
}

/// JSON objects, one per non-blank line, with their line numbers.
fn json_lines(path: &Path) -> Result<Vec<(usize, Value)>, InputError> {
    let text = read_utf8(path)?;
    let mut records = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let record: Value = serde_json::from_str(line).map_err(|e| {
            InputError::malformed(
                path,
                format!("line {}", number + 1),
                format!("not JSON: {e}"),
            )
        })?;
        if !record.is_object() {
            return Err(InputError::malformed(
                path,
                format!("line {}", number + 1),
                "not a JSON object",
            ));
        }
        records.push((number + 1, record));
    }
    Ok(records)
}

/// Field `key`: a file or folder name (no separator, not `.` or `..`).
fn plain_name(record: &Value, key: &str) -> Result<String, String> {
    record[key]
        .as_str()
        .filter(|s| !s.is_empty() && !s.contains(['/', '\\', '\0']) && *s != "." && *s != "..")
        .map(str::to_string)
        .ok_or_else(|| format!("missing or invalid `{key}` (a plain name)"))
}
