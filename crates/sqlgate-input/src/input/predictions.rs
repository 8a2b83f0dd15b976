//! Loading the systems' predictions in every supported format, aligned with the gold items.
//!
//! A missing or empty prediction stays in the list as `None` (scored wrong and counted); a file
//! that does not line up with the gold is an error unless `allow_missing` says otherwise.

use crate::input::config::{PredictionFormat, PredictionSpec};
use crate::input::dataset::Dataset;
use crate::input::extract::{extract, ExtractMode};
use crate::util::error::{read_bounded, InputError, MAX_INPUT_BYTES};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One system's predictions, indexed like the gold items.
#[derive(Debug, Clone)]
pub struct System {
    /// Unique system name.
    pub name: String,
    /// The file it came from.
    pub path: PathBuf,
    /// `predictions[i]` answers gold item `i`; `None` is missing or empty.
    pub predictions: Vec<Option<String>>,
    /// `lines[i]`: the 1-based line of the file that answers gold item `i`, when the file has
    /// one (`bird-json` files and absent predictions have none).
    pub lines: Vec<Option<usize>>,
    /// Items whose raw output held no SQL `extract` could find, with why: their prediction is
    /// `None` and they are scored `extraction_failed`, apart from SQL errors.
    pub unextracted: BTreeMap<usize, String>,
}

impl System {
    /// How many items the file gives no answer (or an empty one): not those whose answer held
    /// no SQL `extract` could find ([`System::unextracted`]).
    pub fn missing_count(&self) -> usize {
        (self.predictions.iter().enumerate())
            .filter(|(index, p)| p.is_none() && !self.unextracted.contains_key(index))
            .count()
    }
}

/// Loads every configured system, expanding globs; names must be unique.
pub fn load_systems(
    specs: &[PredictionSpec],
    dataset: &Dataset,
) -> Result<Vec<System>, InputError> {
    let mut systems = Vec::new();
    for spec in specs {
        for (name, path) in expand(spec)? {
            let (raw, lines) = parse_predictions_with_lines(
                &path,
                &read_bounded(&path, MAX_INPUT_BYTES)?,
                spec,
                dataset,
            )?;
            let (predictions, unextracted) = extract_all(raw, spec.extract);
            systems.push(System {
                name,
                path,
                predictions,
                lines,
                unextracted,
            });
        }
    }
    let mut seen = BTreeSet::new();
    for system in &systems {
        if !seen.insert(system.name.as_str()) {
            return Err(InputError::malformed(
                &system.path,
                format!("system `{}`", system.name),
                "two prediction entries have this name; give each a unique `name`",
            ));
        }
    }
    Ok(systems)
}

/// Each raw answer's SQL under `mode`, and the items where none was found with why.
fn extract_all(
    raw: Vec<Option<String>>,
    mode: ExtractMode,
) -> (Vec<Option<String>>, BTreeMap<usize, String>) {
    let mut failures = BTreeMap::new();
    let predictions = raw
        .into_iter()
        .enumerate()
        .map(|(index, text)| match extract(text.as_deref()?, mode) {
            Ok(sql) => Some(sql),
            Err(why) => {
                failures.insert(index, why);
                None
            }
        })
        .collect();
    (predictions, failures)
}

/// Resolves a spec's path or glob to (system name, file) pairs.
fn expand(spec: &PredictionSpec) -> Result<Vec<(String, PathBuf)>, InputError> {
    let pattern_error =
        |message: String| InputError::malformed(Path::new(&spec.path), "predictions", message);
    let mut paths: Vec<PathBuf> = glob::glob(&spec.path)
        .map_err(|e| pattern_error(format!("invalid glob: {e}")))?
        .filter_map(Result::ok)
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    match (paths.len(), &spec.name) {
        (0, _) if !is_glob(&spec.path) => Err(pattern_error(
            "this prediction file does not exist: fix `path` of this `predictions` entry \
             (relative to the config's folder), or commit the file"
                .into(),
        )),
        (0, _) => Err(pattern_error(
            "no prediction file matches this glob: fix `path` of this `predictions` entry \
             (relative to the config's folder)"
                .into(),
        )),
        (1, Some(name)) => Ok(vec![(name.clone(), paths.remove(0))]),
        (_, Some(_)) => Err(pattern_error(format!(
            "`name` names one system but the glob matches {} files; drop `name` to use file stems",
            paths.len()
        ))),
        (_, None) => Ok(paths.into_iter().map(|p| (file_stem(&p), p)).collect()),
    }
}

/// Whether a `predictions` path (or part of one) is a glob: it holds `*`, `?` or `[`.
fn is_glob(path: &str) -> bool {
    path.contains(['*', '?', '['])
}

/// Whether `spec` could produce a system called `name`: its `name`, the stem of its one file, or
/// the stem of a file its glob matches. The gate uses it to tell the baseline systems a run must
/// measure (a pull request can rename or delete files a glob matches) from leaderboard entries
/// another config measured. A glob whose extension is itself a pattern claims every name.
pub fn could_name(spec: &PredictionSpec, name: &str) -> bool {
    if let Some(own) = &spec.name {
        return own == name;
    }
    let file_pattern = Path::new(&spec.path)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let Ok(pattern) = glob::Pattern::new(&file_pattern) else {
        return true;
    };
    match file_pattern.rsplit_once('.') {
        Some((stem, extension)) if !stem.is_empty() && !is_glob(extension) => {
            pattern.matches(&format!("{name}.{extension}"))
        }
        None if !is_glob(&file_pattern) => file_pattern == name,
        _ => true,
    }
}

fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// Parses a prediction file's bytes (`path` names it in messages) into predictions aligned with
/// the gold items.
pub fn parse_predictions(
    path: &Path,
    bytes: &[u8],
    spec: &PredictionSpec,
    dataset: &Dataset,
) -> Result<Vec<Option<String>>, InputError> {
    parse_predictions_with_lines(path, bytes, spec, dataset).map(|(predictions, _)| predictions)
}

/// Like [`parse_predictions`], with the 1-based line each item's prediction is on.
pub fn parse_predictions_with_lines(
    path: &Path,
    bytes: &[u8],
    spec: &PredictionSpec,
    dataset: &Dataset,
) -> Result<Aligned, InputError> {
    let gold_count = dataset.items.len();
    let ((mut aligned, mut lines), provided) = match spec.format {
        PredictionFormat::Lines => {
            let parsed = parse_lines(path, bytes, dataset)?;
            let provided = parsed.len();
            let lines = (1..=provided).map(Some).collect();
            ((parsed, lines), provided)
        }
        PredictionFormat::Tsv => keyed(path, gold_count, parse_tsv(path, bytes)?)?,
        PredictionFormat::Jsonl => keyed(path, gold_count, parse_jsonl(path, bytes, dataset)?)?,
        PredictionFormat::BirdJson => keyed(path, gold_count, parse_bird_json(path, bytes)?)?,
        PredictionFormat::Spider2Dbt => keyed(path, gold_count, parse_dbt(path, bytes, dataset)?)?,
        PredictionFormat::Livesql => keyed(path, gold_count, parse_livesql(path, bytes, dataset)?)?,
    };
    let shifted = || match spec.format {
        PredictionFormat::Lines => first_misfit(&aligned, dataset),
        _ => None,
    };
    if provided > gold_count {
        let (line, why) = shifted().unwrap_or((gold_count + 1, String::new()));
        return Err(InputError::malformed(
            path,
            format!("line {line}"),
            format!("{provided} predictions for {gold_count} gold items{why}"),
        ));
    }
    if provided < gold_count && !spec.allow_missing {
        let (location, why) = shifted()
            .map_or(("predictions".to_string(), String::new()), |(line, why)| {
                (format!("line {line}"), why)
            });
        return Err(InputError::malformed(
            path,
            location,
            format!(
                "{provided} predictions for {gold_count} gold items{why} (set `allow_missing: true` to score the absent ones as wrong)"
            ),
        ));
    }
    aligned.resize(gold_count, None);
    lines.resize(gold_count, None);
    Ok((aligned, lines))
}

/// In a `lines` file whose count differs from the gold's, the first line whose query reads a
/// table its gold item's database does not have (a line added or removed above it shifts every
/// later one onto another item; the shift shows where the database changes): its 1-based number
/// and the reason, for the message. `None` when every query fits its item's database.
fn first_misfit(aligned: &[Option<String>], dataset: &Dataset) -> Option<(usize, String)> {
    for (index, (sql, item)) in aligned.iter().zip(&dataset.items).enumerate() {
        let (Some(sql), Some(schema)) = (
            sql,
            dataset
                .databases
                .get(&item.db_id)
                .and_then(|d| d.schema.as_ref()),
        ) else {
            continue;
        };
        let known = |name: &str| {
            schema
                .tables()
                .iter()
                .any(|(t, _)| t.eq_ignore_ascii_case(name))
        };
        if let Some(table) = read_tables(sql).into_iter().find(|t| !known(t)) {
            return Some((
                index + 1,
                format!(
                    "; line {} is the first whose query reads a table (`{table}`) that its gold \
                     item's database `{}` does not have: a line was likely added or removed above it",
                    index + 1,
                    item.db_id
                ),
            ));
        }
    }
    None
}

/// The names that follow `FROM` or `JOIN` in `sql` (not subqueries), lower-cased.
fn read_tables(sql: &str) -> Vec<String> {
    let words: Vec<String> = sql
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '('))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    words
        .windows(2)
        .filter(|pair| pair[0] == "from" || pair[0] == "join")
        .map(|pair| pair[1].clone())
        .filter(|name| !name.starts_with('(') && name != "select")
        .collect()
}

/// Splits a file into lines (LF or CRLF), naming the line of any invalid UTF-8.
fn text_lines<'a>(path: &Path, bytes: &'a [u8]) -> Result<Vec<&'a str>, InputError> {
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    if body.is_empty() {
        return Ok(Vec::new());
    }
    body.split(|&b| b == b'\n')
        .enumerate()
        .map(|(number, line)| {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            std::str::from_utf8(line).map_err(|_| {
                InputError::malformed(path, format!("line {}", number + 1), "invalid UTF-8")
            })
        })
        .collect()
}

/// Spider's convention: one SQL per line, optionally followed by a tab and the db_id.
fn parse_lines(
    path: &Path,
    bytes: &[u8],
    dataset: &Dataset,
) -> Result<Vec<Option<String>>, InputError> {
    let lines = text_lines(path, bytes)?;
    lines
        .iter()
        .enumerate()
        .map(|(index, line)| {
            let trimmed = line.trim();
            refuse_json(path, index, trimmed)?;
            let (sql, db_id) = match trimmed.split_once('\t') {
                Some((sql, rest)) => (sql, rest.split('\t').next().map(str::trim)),
                None => (trimmed, None),
            };
            if let (Some(db_id), Some(item)) = (db_id, dataset.items.get(index)) {
                if !db_id.is_empty() && db_id != item.db_id {
                    return Err(InputError::malformed(
                        path,
                        format!("line {}", index + 1),
                        format!("db_id `{db_id}` but gold item {index} is on `{}`: the file is misaligned", item.db_id),
                    ));
                }
            }
            Ok(non_empty(sql))
        })
        .collect()
}

/// A `lines` file whose line is JSON (no SQL statement starts with `{` or `[`) is a JSON Lines
/// or BIRD JSON file read without its `format:`; scored as SQL it would read as every item
/// regressed, so it is an input error naming the format to set.
fn refuse_json(path: &Path, index: usize, line: &str) -> Result<(), InputError> {
    if !line.starts_with(['{', '[']) {
        return Ok(());
    }
    let object = serde_json::from_str::<serde_json::Value>(line).is_ok_and(|v| v.is_object());
    let format = if object {
        "it looks like JSON Lines: set `format: jsonl` on this entry of `predictions`"
    } else {
        "it looks like JSON: set `format: bird-json` (BIRD's map of item to SQL) or \
         `format: jsonl` (one object per line) on this entry of `predictions`"
    };
    Err(InputError::malformed(
        path,
        format!("line {}", index + 1),
        format!("JSON, not SQL, in a file read as `format: lines` (the default); {format}"),
    ))
}

fn non_empty(sql: &str) -> Option<String> {
    let sql = sql.trim();
    (!sql.is_empty()).then(|| sql.to_string())
}

/// A prediction keyed by gold index, with the place it came from for messages and its 1-based
/// line when the format has lines.
struct Keyed {
    index: usize,
    sql: Option<String>,
    location: String,
    line: Option<usize>,
}

/// Predictions and their 1-based lines in the file, aligned with the gold items.
pub type Aligned = (Vec<Option<String>>, Vec<Option<usize>>);

/// Places keyed predictions at their gold index; returns the aligned lists and how many were
/// given. Duplicates and out-of-range ids are errors.
fn keyed(
    path: &Path,
    gold_count: usize,
    entries: Vec<Keyed>,
) -> Result<(Aligned, usize), InputError> {
    let mut aligned = vec![None; gold_count];
    let mut lines = vec![None; gold_count];
    let mut given = vec![false; gold_count];
    let provided = entries.len();
    for entry in entries {
        if entry.index >= gold_count {
            return Err(InputError::malformed(
                path,
                &entry.location,
                format!("id {} is outside the {gold_count} gold items", entry.index),
            ));
        }
        if std::mem::replace(&mut given[entry.index], true) {
            return Err(InputError::malformed(
                path,
                &entry.location,
                format!("id {} appears twice", entry.index),
            ));
        }
        aligned[entry.index] = entry.sql;
        lines[entry.index] = entry.line;
    }
    Ok(((aligned, lines), provided))
}

fn parse_index(text: &str) -> Option<usize> {
    text.trim().parse().ok()
}

/// `index<TAB>SQL` lines; a first line whose index is not a number is a header.
fn parse_tsv(path: &Path, bytes: &[u8]) -> Result<Vec<Keyed>, InputError> {
    let lines = text_lines(path, bytes)?;
    let mut entries = Vec::new();
    for (number, line) in lines.iter().enumerate() {
        let location = format!("line {}", number + 1);
        if line.trim().is_empty() {
            continue;
        }
        let (id, sql) = line.split_once('\t').unwrap_or((line, ""));
        match parse_index(id) {
            Some(index) => entries.push(Keyed {
                index,
                sql: non_empty(sql),
                location,
                line: Some(number + 1),
            }),
            None if number == 0 => continue,
            None => {
                return Err(InputError::malformed(
                    path,
                    location,
                    "expected `index<TAB>SQL`",
                ))
            }
        }
    }
    Ok(entries)
}

/// `{"id": .., "sql": ..}` per line; on a Spider 2.0 dataset the id is the `instance_id`.
fn parse_jsonl(path: &Path, bytes: &[u8], dataset: &Dataset) -> Result<Vec<Keyed>, InputError> {
    let instances: std::collections::HashMap<&str, usize> = dataset
        .items
        .iter()
        .filter_map(|item| Some((item.spider2.as_ref()?.instance_id.as_str(), item.index)))
        .collect();
    let lines = text_lines(path, bytes)?;
    let mut entries = Vec::new();
    for (number, line) in lines.iter().enumerate() {
        let location = format!("line {}", number + 1);
        if line.trim().is_empty() {
            continue;
        }
        let record: serde_json::Map<String, serde_json::Value> = serde_json::from_str(line)
            .map_err(|e| {
                InputError::malformed(path, &location, format!("not a JSON object: {e}"))
            })?;
        let index = match record.get("id") {
            Some(serde_json::Value::String(s)) if !instances.is_empty() => {
                instances.get(s.as_str()).copied()
            }
            Some(serde_json::Value::Number(n)) => n.as_u64().map(|n| n as usize),
            Some(serde_json::Value::String(s)) => parse_index(s),
            _ => None,
        }
        .ok_or_else(|| {
            let expected = if instances.is_empty() {
                "a 0-based gold index"
            } else {
                "an `instance_id` of the task file"
            };
            InputError::malformed(path, &location, format!("`id` must be {expected}"))
        })?;
        let sql = match record.get("sql") {
            Some(serde_json::Value::String(s)) => non_empty(s),
            Some(serde_json::Value::Null) | None => None,
            Some(_) => {
                return Err(InputError::malformed(
                    path,
                    &location,
                    "`sql` must be a string",
                ))
            }
        };
        entries.push(Keyed {
            index,
            sql,
            location,
            line: Some(number + 1),
        });
    }
    Ok(entries)
}

/// Spider 2.0-DBT's `results_metadata.jsonl`: each line's answer file as its prediction text
/// (`input::spider2_dbt::answers_by_item`).
fn parse_dbt(path: &Path, bytes: &[u8], dataset: &Dataset) -> Result<Vec<Keyed>, InputError> {
    let answers = crate::input::spider2_dbt::answers_by_item(path, bytes, dataset)?;
    Ok((answers.into_iter())
        .map(|(index, text, line)| Keyed {
            index,
            sql: Some(text),
            location: format!("line {line}"),
            line: Some(line),
        })
        .collect())
}

/// LiveSQLBench lines keyed by `instance_id`; each item's statements kept as a JSON list, the
/// text the `livesql` metrics read back (several statements survive, a `;` inside one too).
fn parse_livesql(path: &Path, bytes: &[u8], dataset: &Dataset) -> Result<Vec<Keyed>, InputError> {
    let text = text_lines(path, bytes)?.join("\n");
    let ids: std::collections::HashMap<String, usize> =
        crate::input::livesql::instance_ids(&dataset.items);
    let lines = crate::input::livesql::prediction_lines(path, &text)?;
    let keyed = lines.into_iter().map(|prediction| {
        let location = format!("line {}", prediction.line);
        let index = *ids.get(&prediction.instance_id).ok_or_else(|| {
            let message = format!(
                "`instance_id` {} is not an item of the dataset",
                prediction.instance_id
            );
            InputError::malformed(path, &location, message)
        })?;
        Ok(Keyed {
            index,
            sql: Some(serde_json::Value::from(prediction.statements).to_string()),
            location,
            line: Some(prediction.line),
        })
    });
    keyed.collect()
}

/// The SQL of one BIRD prediction, as the official `package_sqls` takes it: the text before the
/// separator when it occurs exactly once (`sql, db_name = text.split(SEPARATOR)`), otherwise the
/// whole text (its `except ValueError: sql = sql_str.strip()`; stripped by [`non_empty`]).
fn bird_sql(text: &str) -> &str {
    const SEPARATOR: &str = "\t----- bird -----\t";
    match text.split_once(SEPARATOR) {
        Some((sql, rest)) if !rest.contains(SEPARATOR) => sql,
        _ => text,
    }
}

/// BIRD's `{"0": "SQL\t----- bird -----\tdb_id"}` map.
fn parse_bird_json(path: &Path, bytes: &[u8]) -> Result<Vec<Keyed>, InputError> {
    let map: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(bytes)
        .map_err(|e| InputError::malformed(path, format!("line {}", e.line()), e.to_string()))?;
    map.into_iter()
        .map(|(key, value)| {
            let location = format!("key `{key}`");
            let index = parse_index(&key).ok_or_else(|| {
                InputError::malformed(path, &location, "keys must be 0-based gold indexes")
            })?;
            let text = value
                .as_str()
                .ok_or_else(|| InputError::malformed(path, &location, "value must be a string"))?;
            let sql = bird_sql(text);
            Ok(Keyed {
                index,
                sql: non_empty(sql),
                location,
                line: None,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(path: &str, name: Option<&str>) -> PredictionSpec {
        PredictionSpec {
            name: name.map(str::to_string),
            path: path.into(),
            format: PredictionFormat::Lines,
            allow_missing: false,
            extract: ExtractMode::None,
        }
    }

    #[test]
    fn a_bird_prediction_is_cut_only_at_a_single_separator() {
        assert_eq!(bird_sql("SELECT 1\t----- bird -----\tdb"), "SELECT 1");
        assert_eq!(bird_sql("SELECT 1\t----- bird -----\t"), "SELECT 1");
        // No separator: the official script keeps the whole string, TABs included.
        assert_eq!(bird_sql("SELECT a\tFROM t\tdb"), "SELECT a\tFROM t\tdb");
        // Two separators: `split` gives three parts, the unpacking fails, the whole string.
        let twice = "SELECT 1\t----- bird -----\tx\t----- bird -----\tdb";
        assert_eq!(bird_sql(twice), twice);
    }

    #[test]
    fn a_spec_names_what_its_file_or_glob_can_produce() {
        assert!(could_name(&spec("/p/RESDSQL.txt", None), "RESDSQL"));
        assert!(!could_name(&spec("/p/RESDSQL.txt", None), "C3"));
        assert!(could_name(&spec("/p/x.txt", Some("mine")), "mine"));
        assert!(!could_name(&spec("/p/*.txt", Some("mine")), "C3"));
        let glob = spec("/p/*.txt", None);
        assert!(could_name(&glob, "C3") && could_name(&glob, "RESDSQL-v2"));
        let dev = spec("/p/*-dev.sql", None);
        assert!(could_name(&dev, "C3-dev") && !could_name(&dev, "C3"));
        assert!(could_name(&spec("/p/*.*", None), "anything"));
        assert!(could_name(&spec("/p/preds", None), "preds"));
    }
}
