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
    /// The instance's starting database (`<starting folder>/<instance_id>/<gold file name>`),
    /// when one is configured and there: a gold it already matches is a finding.
    pub start: Option<StartingDatabase>,
}

/// An instance's starting database, as the dataset read it.
#[derive(Debug, Clone)]
pub struct StartingDatabase {
    /// Where the config names it (for messages).
    pub file: PathBuf,
    /// The run's own copy, digested when copied: what is compared with the gold, whatever
    /// happens to `file` afterwards.
    pub copy: PathBuf,
    /// The folder of the copies, removed when the last instance holding it is dropped.
    pub copies: std::sync::Arc<crate::util::fs::RunFolder>,
}

/// The instances of `<gold_dir>/spider2_eval.jsonl`, in file order; a missing gold file, an
/// evaluation other than `duckdb_match` or settings `duckdb_match` asserts against are input
/// errors naming the line.
pub fn load_eval(gold_dir: &Path) -> Result<Vec<DbtInstance>, InputError> {
    let path = gold_dir.join("spider2_eval.jsonl");
    load_eval_file(&path, &read_utf8(&path)?, gold_dir)
}

/// The instances of the evaluation file at `path` (its text `text`), their gold files under
/// `gold_dir`, as [`load_eval`] reads them: the dataset kind `spider2-dbt` reads its
/// `dataset.gold` this way, with `dataset.databases` as `gold_dir`.
pub fn load_eval_file(
    path: &Path,
    text: &str,
    gold_dir: &Path,
) -> Result<Vec<DbtInstance>, InputError> {
    let path = path.to_path_buf();
    let mut instances: Vec<DbtInstance> = Vec::new();
    for (line, record) in json_lines(&path, text)? {
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
            start: None,
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
    let lines = parse_results(&path, &read_utf8(&path)?)?;
    Ok(lines
        .into_iter()
        .map(|(_, instance_id, answer)| (instance_id, answer))
        .collect())
}

/// The lines of a `results_metadata.jsonl` at `path` (its text `text`), in file order: each
/// line's number, instance and answer file (see [`load_results`]; answer files are looked up
/// beside `path`).
pub fn parse_results(path: &Path, text: &str) -> Result<Vec<(usize, String, Answer)>, InputError> {
    let submission = path.parent().unwrap_or(Path::new("."));
    let linked = linked_folder(submission);
    let mut answers = Vec::new();
    for (line, instance_id, named) in result_lines(path, text)? {
        let answer = match &linked {
            Some(why) => Err(why.clone()),
            None => named.and_then(|relative| answer_file(submission, &instance_id, &relative)),
        };
        answers.push((line, instance_id, answer));
    }
    Ok(answers)
}

/// The lines of a `results_metadata.jsonl` (`path`, its text `text`): each line's number,
/// instance and the `answer_or_path` it names, or why it names no file.
#[allow(clippy::type_complexity)]
fn result_lines(
    path: &Path,
    text: &str,
) -> Result<Vec<(usize, String, Result<String, String>)>, InputError> {
    let mut lines = Vec::new();
    for (line, record) in json_lines(path, text)? {
        let fail = |message: String| InputError::malformed(path, format!("line {line}"), message);
        let instance_id = plain_name(&record, "instance_id").map_err(fail)?;
        let named = match (
            record["answer_type"].as_str(),
            record["answer_or_path"].as_str(),
        ) {
            (Some("file"), Some(relative)) => Ok(relative.to_string()),
            (kind, _) => Err(format!(
                "answer_type {} is not a file: duckdb_match needs the result .duckdb file",
                kind.unwrap_or("(absent)")
            )),
        };
        lines.push((line, instance_id, named));
    }
    Ok(lines)
}

/// The answer files a `results_metadata.jsonl` (`path`, its text `text`) names, each as its
/// path below the file's folder, `/`-separated (`<instance_id>/<answer_or_path>`, `.` steps
/// dropped): what a copy of the submission must hold for the answers to read the same. A path
/// that is absolute or has a `..` step names none (such an answer is refused, or read only
/// through a folder the copy would have to hold too: it scores 0 in the copy).
pub fn named_answer_files(path: &Path, text: &str) -> Result<Vec<String>, InputError> {
    let plain = |relative: &str| -> Option<Vec<String>> {
        (Path::new(relative).components())
            .filter(|c| *c != std::path::Component::CurDir)
            .map(|c| match c {
                std::path::Component::Normal(step) => step.to_str().map(str::to_string),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .filter(|steps| !steps.is_empty())
    };
    Ok(result_lines(path, text)?
        .into_iter()
        .filter_map(|(_, instance_id, named)| {
            let steps = plain(&named.ok()?)?;
            Some(format!("{instance_id}/{}", steps.join("/")))
        })
        .collect())
}

/// The largest answer file scored: far above a real agent's `.duckdb` output, and a bound on
/// what a pull request's file costs to digest and open. A larger one is a wrong answer.
pub const MAX_ANSWER_BYTES: u64 = 1 << 30;

/// What starts the prediction text of an answer file (see [`answer_text`]).
const DIGEST_PREFIX: &str = "sha256:";

/// The prediction text of one answer for the gate (`format: spider2-dbt`): `sha256:<hex> <file>`
/// for an answer file (its content digest, so a changed file is a changed prediction in the
/// baseline and the fingerprint), else `no answer file: <why>` (outside its folder, a link, not
/// a regular file, over [`MAX_ANSWER_BYTES`]), which the metric scores wrong with the reason.
pub fn answer_text(answer: &Answer) -> String {
    match answer
        .as_ref()
        .map_err(String::clone)
        .and_then(|file| digest_file(file).map(|hex| (file, hex)))
    {
        Ok((file, hex)) => format!("{DIGEST_PREFIX}{hex} {}", file.display()),
        Err(why) => format!("no answer file: {why}"),
    }
}

/// The digest and the file a prediction text of [`answer_text`] names, or why it names none.
fn named_in_text(text: &str) -> Result<(&str, &Path), String> {
    let rest = text
        .strip_prefix(DIGEST_PREFIX)
        .ok_or_else(|| text.to_string())?;
    match rest.split_once(' ') {
        Some((hex, file)) if hex.len() == 64 => Ok((hex, Path::new(file))),
        _ => Err(format!("not an answer file: {text}")),
    }
}

/// The answer files [`answers_by_item`] checked in this process: each prediction text it made
/// for an answer file, with the instance it answers. Only a text found here names a file the
/// metric may open (a text from anywhere else, a `jsonl` file say, names a path nobody checked).
static CHECKED: std::sync::Mutex<BTreeMap<String, String>> = std::sync::Mutex::new(BTreeMap::new());

/// The prediction text of `instance_id`'s `answer` (an [`Answer`] of [`parse_results`]: inside
/// its instance folder of the submission, a regular file), recorded as checked when it names a
/// file.
fn checked_text(instance_id: &str, answer: &Answer) -> String {
    let text = answer_text(answer);
    if named_in_text(&text).is_ok() {
        let mut checked = CHECKED.lock().unwrap_or_else(|e| e.into_inner());
        checked.insert(text.clone(), instance_id.to_string());
    }
    text
}

/// The answer file `instance_id`'s prediction text `text` names, for the metric to open: only
/// when [`answers_by_item`] read `text` from a `results_metadata.jsonl` for this very instance
/// (so the file is `<submission>/<instance_id>/...` of the prediction entry, checked there),
/// and the file is still a regular file, no link, within [`MAX_ANSWER_BYTES`], whose SHA-256 is
/// the one the text names. Else why not, naming the instance: a wrong prediction. A text that
/// was not checked is refused without touching the path it names.
pub fn checked_answer(text: &str, instance_id: &str) -> Result<PathBuf, String> {
    let (hex, file) = named_in_text(text)?;
    let shown = crate::util::log::log_value(instance_id);
    let recorded = CHECKED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(text)
        .cloned();
    if recorded.as_deref() != Some(instance_id) {
        return Err(format!(
            "instance `{shown}`: the prediction names a file that is not this instance's answer \
             file in the prediction entry's submission folder (only `format: spider2-dbt` \
             answers `<submission>/{shown}/...` are opened)"
        ));
    }
    let link = std::fs::symlink_metadata(file).map(|m| !m.file_type().is_file());
    if !matches!(link, Ok(false)) {
        return Err(format!(
            "instance `{shown}`: the answer file {} is no longer a regular file",
            file.display()
        ));
    }
    match digest_file(file) {
        Ok(found) if found == hex => Ok(file.to_path_buf()),
        Ok(found) => Err(format!(
            "instance `{shown}`: the answer file {} changed after it was read (SHA-256 {found}, \
             not {hex})",
            file.display()
        )),
        Err(why) => Err(format!("instance `{shown}`: {why}")),
    }
}

/// The hex SHA-256 of the regular file `file` of at most [`MAX_ANSWER_BYTES`].
fn digest_file(file: &Path) -> Result<String, String> {
    use sha2::{Digest, Sha256};
    let shown = || file.display().to_string();
    let mut opened = std::fs::File::open(file).map_err(|e| format!("{}: {e}", shown()))?;
    let size = opened
        .metadata()
        .map_err(|e| format!("{}: {e}", shown()))?
        .len();
    if size > MAX_ANSWER_BYTES {
        return Err(format!(
            "{} holds {size} bytes, over the {MAX_ANSWER_BYTES}-byte limit of an answer file",
            shown()
        ));
    }
    let mut hasher = Sha256::new();
    let mut bounded = std::io::Read::take(&mut opened, MAX_ANSWER_BYTES + 1);
    let read = std::io::copy(&mut bounded, &mut hasher).map_err(|e| format!("{}: {e}", shown()))?;
    if read > MAX_ANSWER_BYTES {
        return Err(format!(
            "{} grew past the answer file limit while read",
            shown()
        ));
    }
    Ok(crate::util::digest::hex(&hasher.finalize()))
}

/// Why the submission folder cannot hold answers: it is a link (to the gold's folder, say: its
/// files would all be "inside" it, red team round 31), or it is not a folder; `None` when it is
/// a real folder.
fn linked_folder(submission: &Path) -> Option<String> {
    let folder = if submission.as_os_str().is_empty() {
        Path::new(".")
    } else {
        submission
    };
    match std::fs::symlink_metadata(folder) {
        Ok(m) if m.file_type().is_dir() => None,
        Ok(m) if m.file_type().is_symlink() => Some(format!(
            "the submission folder {} is a link: answer files are read only from a real folder",
            folder.display()
        )),
        _ => Some(format!(
            "the submission folder {} is not a folder",
            folder.display()
        )),
    }
}

/// `<submission>/<instance_id>/<relative>`, a regular file inside that folder, the folder
/// itself inside the submission (a path out of it, a link to a file or a linked instance
/// folder is refused: the submission is hostile).
fn answer_file(submission: &Path, instance_id: &str, relative: &str) -> Answer {
    let folder = submission.join(instance_id);
    let file = folder.join(relative);
    let regular = std::fs::symlink_metadata(&file).is_ok_and(|m| m.file_type().is_file());
    let inside = (file.canonicalize().ok())
        .zip(submission.canonicalize().ok())
        .is_some_and(|(file, submission)| file.starts_with(submission.join(instance_id)));
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

/// JSON objects, one per non-blank line of `text` (read from `path`), with their line numbers.
fn json_lines(path: &Path, text: &str) -> Result<Vec<(usize, Value)>, InputError> {
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

/// An instance is the item's task of `dataset.kind: spider2-dbt`, which the metric
/// `duckdb_match` reads.
impl crate::input::dataset::ItemTask for DbtInstance {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The answers of a `results_metadata.jsonl` (`path`, its bytes `bytes`; `format: spider2-dbt`)
/// for the items of `dataset`: per line, the gold index of its instance, its prediction text
/// ([`answer_text`]) and its line. An instance the dataset does not hold, or one given twice, is
/// an error naming the line (the official `dict` would keep the last one silently).
pub fn answers_by_item(
    path: &Path,
    bytes: &[u8],
    dataset: &crate::input::dataset::Dataset,
) -> Result<Vec<(usize, String, usize)>, InputError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| InputError::malformed(path, "the file", format!("invalid UTF-8: {e}")))?;
    let index_of: BTreeMap<&str, usize> = (dataset.items.iter())
        .filter_map(|item| {
            let task = item
                .task
                .as_deref()?
                .as_any()
                .downcast_ref::<DbtInstance>()?;
            Some((task.instance_id.as_str(), item.index))
        })
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    let mut answers = Vec::new();
    for (line, instance_id, answer) in parse_results(path, text)? {
        let fail = |message: String| InputError::malformed(path, format!("line {line}"), message);
        let Some(&index) = index_of.get(instance_id.as_str()) else {
            return Err(fail(format!(
                "instance `{}` is not in the dataset's evaluation file",
                crate::util::log::log_value(&instance_id)
            )));
        };
        if !seen.insert(index) {
            return Err(fail(format!(
                "instance `{}` is answered twice",
                crate::util::log::log_value(&instance_id)
            )));
        }
        answers.push((index, checked_text(&instance_id, &answer), line));
    }
    Ok(answers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_files_a_metadata_file_names_stay_in_their_instance_folders() {
        let lines = [
            r#"{"instance_id": "a", "answer_type": "file", "answer_or_path": "out.duckdb"}"#,
            r#"{"instance_id": "b", "answer_type": "file", "answer_or_path": "./x/out.duckdb"}"#,
            r#"{"instance_id": "c", "answer_type": "file", "answer_or_path": "../a/out.duckdb"}"#,
            r#"{"instance_id": "d", "answer_type": "file", "answer_or_path": "/etc/passwd"}"#,
            r#"{"instance_id": "e", "answer_type": "file", "answer_or_path": "x/../out.duckdb"}"#,
            r#"{"instance_id": "f", "answer_type": "text", "answer_or_path": "out.duckdb"}"#,
            r#"{"instance_id": "g", "answer_type": "file", "answer_or_path": "."}"#,
        ];
        let path = Path::new("results_metadata.jsonl");
        let named = named_answer_files(path, &lines.join("\n")).unwrap();
        assert_eq!(named, ["a/out.duckdb", "b/x/out.duckdb"]);
        let bad = r#"{"instance_id": "../a", "answer_type": "file", "answer_or_path": "o"}"#;
        let refused = named_answer_files(path, bad).unwrap_err().to_string();
        assert!(
            refused.contains("line 1") && refused.contains("instance_id"),
            "{refused}"
        );
    }

    #[test]
    fn an_answer_file_over_the_limit_or_absent_is_named_never_read() {
        let dir = tempfile::tempdir().unwrap();
        let huge = dir.path().join("huge.duckdb");
        let file = std::fs::File::create(&huge).unwrap();
        file.set_len(MAX_ANSWER_BYTES + 1).unwrap();
        let text = answer_text(&Ok(huge));
        assert!(text.starts_with("no answer file: "), "{text}");
        assert!(text.contains("over the 1073741824-byte limit"), "{text}");
        assert!(named_in_text(&text).is_err(), "{text}");
        let small = dir.path().join("small.duckdb");
        std::fs::write(&small, b"abc").unwrap();
        let text = answer_text(&Ok(small.clone()));
        assert_eq!(
            text,
            format!(
                "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad {}",
                small.display()
            )
        );
        assert_eq!(named_in_text(&text).map(|(_, f)| f), Ok(small.as_path()));
        let absent = answer_text(&Err("no regular file x".into()));
        assert_eq!(absent, "no answer file: no regular file x");
    }

    /// A submission folder whose `results_metadata.jsonl` answers `instance` with `out.duckdb`
    /// (holding `content`), read as the gate reads it: the prediction text and the file.
    fn submitted(root: &Path, instance: &str, content: &[u8]) -> (String, PathBuf) {
        let folder = root.join("sub");
        std::fs::create_dir_all(folder.join(instance)).unwrap();
        let file = folder.join(instance).join("out.duckdb");
        std::fs::write(&file, content).unwrap();
        let line = format!(
            r#"{{"instance_id": "{instance}", "answer_type": "file", "answer_or_path": "out.duckdb"}}"#
        );
        let path = folder.join("results_metadata.jsonl");
        let (_, id, answer) = parse_results(&path, &line).unwrap().remove(0);
        (checked_text(&id, &answer), file)
    }

    /// The text a forged prediction would carry for `file`: its true digest and its path.
    fn forged(file: &Path) -> String {
        let hex = digest_file(file).unwrap();
        format!("{DIGEST_PREFIX}{hex} {}", file.display())
    }

    #[test]
    fn control_the_checked_answer_of_its_own_instance_is_opened() {
        let dir = tempfile::tempdir().unwrap();
        let (text, file) = submitted(dir.path(), "own1", b"answer");
        assert_eq!(checked_answer(&text, "own1"), Ok(file));
    }

    #[test]
    fn a_file_outside_the_instance_folder_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let (_, file) = submitted(dir.path(), "out1", b"answer");
        let elsewhere = dir.path().join("elsewhere.duckdb");
        std::fs::copy(&file, &elsewhere).unwrap();
        let refused = checked_answer(&forged(&elsewhere), "out1").unwrap_err();
        assert!(refused.contains("instance `out1`"), "{refused}");
        assert!(
            refused.contains("not this instance's answer file"),
            "{refused}"
        );
        let absent = format!("{DIGEST_PREFIX}{} /nonexistent/x.duckdb", "0".repeat(64));
        let refused = checked_answer(&absent, "out1").unwrap_err();
        assert!(
            refused.contains("not this instance's answer file"),
            "{refused}"
        );
    }

    #[test]
    fn another_instances_answer_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (text, _) = submitted(dir.path(), "other1", b"answer");
        let refused = checked_answer(&text, "other2").unwrap_err();
        assert!(refused.contains("instance `other2`"), "{refused}");
    }

    #[test]
    fn the_gold_file_named_with_its_true_digest_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let _ = submitted(dir.path(), "gold1", b"answer");
        let gold = dir.path().join("gold/gold1/db.duckdb");
        std::fs::create_dir_all(gold.parent().unwrap()).unwrap();
        std::fs::write(&gold, b"the gold").unwrap();
        let refused = checked_answer(&forged(&gold), "gold1").unwrap_err();
        assert!(
            refused.contains("not this instance's answer file"),
            "{refused}"
        );
    }

    #[test]
    fn a_digest_that_does_not_match_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (text, file) = submitted(dir.path(), "digest1", b"answer");
        std::fs::write(&file, b"another answer").unwrap();
        let refused = checked_answer(&text, "digest1").unwrap_err();
        assert!(refused.contains("changed after it was read"), "{refused}");
        let (_, hex_and_path) = text.split_at(DIGEST_PREFIX.len());
        let zeros = format!("{DIGEST_PREFIX}{}{}", "0".repeat(64), &hex_and_path[64..]);
        let refused = checked_answer(&zeros, "digest1").unwrap_err();
        assert!(
            refused.contains("not this instance's answer file"),
            "{refused}"
        );
    }

    #[test]
    fn a_link_is_refused_when_read_and_when_swapped_in_after() {
        let dir = tempfile::tempdir().unwrap();
        let gold = dir.path().join("gold.duckdb");
        std::fs::write(&gold, b"the gold").unwrap();
        let (text, file) = submitted(dir.path(), "link1", b"the gold");
        std::fs::remove_file(&file).unwrap();
        std::os::unix::fs::symlink(&gold, &file).unwrap();
        let refused = checked_answer(&text, "link1").unwrap_err();
        assert!(refused.contains("no longer a regular file"), "{refused}");
        let line =
            r#"{"instance_id": "link1", "answer_type": "file", "answer_or_path": "out.duckdb"}"#;
        let path = dir.path().join("sub/results_metadata.jsonl");
        let (_, id, answer) = parse_results(&path, line).unwrap().remove(0);
        let text = checked_text(&id, &answer);
        assert!(text.starts_with("no answer file: "), "{text}");
        assert!(checked_answer(&text, "link1").is_err());
    }
}
