//! LiveSQLBench-style items (`dataset.kind: livesql`, issue 46): SQL that changes the database,
//! judged by the item's test cases after the prediction ran on a copy of its database.
//!
//! An item is one JSON line: `instance_id`, `selected_database` (or `db_id`), `preprocess_sql`,
//! `sol_sql`, `clean_up_sql`, `test_cases` (Python sources defining `test_case`), `category`,
//! `conditions`, `efficiency`. A list field may be a string (one statement) or a list; any other
//! value, or none, is an empty list (the official `split_field`). Predictions are JSON lines
//! `{"instance_id", "pred_sqls"}` with the same rule for `pred_sqls`, or
//! `{"instance_id", "response"}` holding a model's raw reply: its SQL is extracted as
//! `extract: auto` extracts it, and every statement of it is kept ([`split_statements`]).

use crate::input::extract::ExtractMode;
use crate::util::error::{read_utf8, InputError};
use serde_json::Value as Json;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// One LiveSQLBench item.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveItem {
    /// `instance_id`.
    pub instance_id: String,
    /// `selected_database`, or BIRD-Critic's `db_id`.
    pub db_id: String,
    /// Statements run before the prediction (their errors ignored).
    pub preprocess_sql: Vec<String>,
    /// The gold statements.
    pub sol_sql: Vec<String>,
    /// Statements run after the tests (their errors ignored).
    pub clean_up_sql: Vec<String>,
    /// Python sources, each defining `test_case`; empty: the default ("Query") test.
    pub test_cases: Vec<String>,
    /// `Query`, `Management`, ... (a report cell; the official SQLite evaluator never reads it).
    pub category: String,
    /// `conditions` as written (the default test reads `order`).
    pub conditions: Json,
    /// `efficiency` (read, and ignored by the official SQLite evaluator).
    pub efficiency: bool,
    /// BIRD-Critic's `issue_sql`: the statements the item's question is about, which must not
    /// pass the item's tests (empty when the item has none).
    pub issue_sql: Vec<String>,
    /// `post_conditions` and `post_state`: declarative checks the sound profile runs after the
    /// prediction (`input::livesql_post`).
    pub post: crate::input::livesql_post::PostChecks,
}

/// Reads the items of a LiveSQLBench JSONL file; an error names the file and line.
pub fn read_items(path: &Path) -> Result<Vec<LiveItem>, InputError> {
    parse_items(path, &read_utf8(path)?)
}

/// The items of `text`, the contents of the JSONL file at `path` (for messages), as
/// [`read_items`] reads them: the dataset kind parses the bytes it digested.
pub fn parse_items(path: &Path, text: &str) -> Result<Vec<LiveItem>, InputError> {
    let mut items = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (number, line) in numbered_lines(text) {
        let at = format!("line {number}");
        let object = parse_object(path, &at, line)?;
        let item = item_of(path, &at, &object)?;
        if !seen.insert(item.instance_id.clone()) {
            let message = format!("`instance_id` {} appears twice", item.instance_id);
            return Err(InputError::malformed(path, at, message));
        }
        items.push(item);
    }
    Ok(items)
}

/// Reads predictions `{"instance_id", "pred_sqls"}` by instance id; an error names the file and
/// line.
pub fn read_predictions(path: &Path) -> Result<BTreeMap<String, Vec<String>>, InputError> {
    let text = read_utf8(path)?;
    let mut predictions = BTreeMap::new();
    for prediction in prediction_lines(path, &text)? {
        if predictions
            .insert(prediction.instance_id.clone(), prediction.statements)
            .is_some()
        {
            let message = format!(
                "`instance_id` {} has two predictions",
                prediction.instance_id
            );
            return Err(InputError::malformed(
                path,
                format!("line {}", prediction.line),
                message,
            ));
        }
    }
    Ok(predictions)
}

/// One line of a predictions file: whose item it answers and the statements it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct PredictionLine {
    /// The 1-based line in the file.
    pub line: usize,
    /// The item it answers.
    pub instance_id: String,
    /// Its statements, in order (`pred_sqls`, or every statement of the reply's SQL).
    pub statements: Vec<String>,
}

/// The predictions of `text` (read from `path`, which messages name), one per non-blank line, in
/// file order; duplicates are the caller's to refuse.
pub fn prediction_lines(path: &Path, text: &str) -> Result<Vec<PredictionLine>, InputError> {
    let mut predictions = Vec::new();
    for (number, line) in numbered_lines(text) {
        let at = format!("line {number}");
        let object = parse_object(path, &at, line)?;
        let instance_id = required_text(path, &at, &object, "instance_id")?;
        let statements = match (object.get("pred_sqls"), object.get("response")) {
            (None, Some(Json::String(reply))) => {
                let sql = crate::input::extract::extract(reply, ExtractMode::Auto)
                    .map_err(|why| InputError::malformed(path, &at, why))?;
                split_statements(&sql)
            }
            (pred_sqls, _) => split_field(pred_sqls),
        };
        predictions.push(PredictionLine {
            line: number,
            instance_id,
            statements,
        });
    }
    Ok(predictions)
}

/// The item's data for the metric that judges it (`GoldItem::task` of `dataset.kind: livesql`).
impl crate::input::dataset::ItemTask for LiveItem {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn instance_id(&self) -> Option<&str> {
        Some(&self.instance_id)
    }

    /// Its `sol_sql`, in order.
    fn gold_statements(&self) -> Option<Vec<String>> {
        Some(self.sol_sql.clone())
    }
}

/// The LiveSQLBench item of a gold item, when it is one (`GoldItem::task` of `dataset.kind:
/// livesql` or `bird-critic`).
pub fn live_item(item: &crate::input::dataset::GoldItem) -> Option<&LiveItem> {
    item.task.as_deref()?.as_any().downcast_ref::<LiveItem>()
}

/// Each item's gold index by `instance_id`, for the kinds whose items have one (LiveSQLBench,
/// EvalBench; empty for a dataset of another kind).
pub fn instance_ids(items: &[crate::input::dataset::GoldItem]) -> HashMap<String, usize> {
    (items.iter())
        .filter_map(|item| Some((item.task.as_deref()?.instance_id()?.to_string(), item.index)))
        .collect()
}

/// The non-blank lines with their 1-based numbers.
fn numbered_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    (text.lines().enumerate())
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| (i + 1, line))
}

fn parse_object(
    path: &Path,
    at: &str,
    line: &str,
) -> Result<serde_json::Map<String, Json>, InputError> {
    match serde_json::from_str(line) {
        Ok(Json::Object(object)) => Ok(object),
        Ok(_) => Err(InputError::malformed(path, at, "expected a JSON object")),
        Err(e) => Err(InputError::malformed(path, at, e.to_string())),
    }
}

fn item_of(
    path: &Path,
    at: &str,
    object: &serde_json::Map<String, Json>,
) -> Result<LiveItem, InputError> {
    let instance_id = required_text(path, at, object, "instance_id")?;
    let db_key = match (
        object.contains_key("selected_database"),
        object.contains_key("db_id"),
    ) {
        (true, _) => "selected_database",
        (false, true) => "db_id",
        (false, false) => {
            let message = "`selected_database` (or `db_id`) is missing";
            return Err(InputError::malformed(path, at, message));
        }
    };
    let db_id = required_text(path, at, object, db_key)?;
    if db_id.is_empty() || db_id.contains(['/', '\\']) || db_id.starts_with('.') {
        let message = format!("`{db_key}` {db_id:?} is not a database name");
        return Err(InputError::malformed(path, at, message));
    }
    let post = crate::input::livesql_post::read_post_checks(object)
        .map_err(|why| InputError::malformed(path, at, format!("item {instance_id}: {why}")))?;
    Ok(LiveItem {
        instance_id,
        db_id,
        preprocess_sql: split_field(object.get("preprocess_sql")),
        sol_sql: split_field(object.get("sol_sql")),
        clean_up_sql: split_field(object.get("clean_up_sql")),
        test_cases: split_field(object.get("test_cases")),
        category: object
            .get("category")
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string(),
        conditions: object.get("conditions").cloned().unwrap_or(Json::Null),
        efficiency: object.get("efficiency").and_then(Json::as_bool) == Some(true),
        issue_sql: split_field(object.get("issue_sql")),
        post,
    })
}

fn required_text(
    path: &Path,
    at: &str,
    object: &serde_json::Map<String, Json>,
    key: &str,
) -> Result<String, InputError> {
    match object.get(key) {
        Some(Json::String(text)) => Ok(text.clone()),
        Some(_) => Err(InputError::malformed(
            path,
            at,
            format!("`{key}` is not a string"),
        )),
        None => Err(InputError::malformed(
            path,
            at,
            format!("`{key}` is missing"),
        )),
    }
}

/// The official `split_field`: a string is one statement, a list of strings is taken as it is,
/// anything else (or nothing) is no statement. Nothing is split on `;`.
pub fn split_field(value: Option<&Json>) -> Vec<String> {
    match value {
        Some(Json::String(text)) if !text.is_empty() => vec![text.clone()],
        Some(Json::Array(list)) => list
            .iter()
            .map(|v| match v {
                Json::String(text) => text.clone(),
                other => other.to_string(),
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The statements of a SQL text, split at each `;` that is not inside a string literal, a quoted
/// name or a comment (a `;` in `'O''Hara; Jr'` does not split, unlike the official
/// post-processing's `split(';')`); each trimmed, the `;` left out, a piece that holds only
/// whitespace and comments dropped.
pub fn split_statements(sql: &str) -> Vec<String> {
    let mut statements = Vec::new();
    let (mut start, mut has_code) = (0, false);
    let mut chars = sql.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let next_is = |n: char, chars: &mut std::iter::Peekable<std::str::CharIndices>| {
            chars.peek().is_some_and(|(_, c)| *c == n)
        };
        let closing = match c {
            '\'' | '"' | '`' => c.to_string(),
            '[' => "]".to_string(),
            '-' if next_is('-', &mut chars) => "\n".to_string(),
            '/' if next_is('*', &mut chars) => {
                chars.next();
                "*/".to_string()
            }
            ';' => {
                if has_code {
                    statements.push(sql[start..at].trim().to_string());
                }
                (start, has_code) = (at + 1, false);
                continue;
            }
            _ => {
                has_code |= !c.is_whitespace();
                continue;
            }
        };
        has_code |= !matches!(c, '-' | '/');
        let from = at + c.len_utf8();
        let end = (sql[from..].find(&closing)).map_or(sql.len(), |i| from + i + closing.len());
        while chars.peek().is_some_and(|(i, _)| *i < end) {
            chars.next();
        }
    }
    if has_code {
        statements.push(sql[start..].trim().to_string());
    }
    statements
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn split_field_reads_as_the_official_loader() {
        let cases = [
            (json!("SELECT 1; SELECT 2"), vec!["SELECT 1; SELECT 2"]),
            (json!(["a", "b"]), vec!["a", "b"]),
            (json!(""), vec![]),
            (json!(7), vec![]),
            (json!(null), vec![]),
        ];
        for (value, expected) in cases {
            assert_eq!(split_field(Some(&value)), expected, "{value}");
        }
        assert!(split_field(None).is_empty());
    }

    #[test]
    fn a_reply_keeps_every_statement_of_its_fenced_block() {
        let reply = "First delete, then insert:\n```sql\nDELETE FROM p WHERE id = 12; -- old; row\nINSERT INTO p VALUES (12, 'O''Hara; Jr', \"a;b\"); /* x; */\n```\nDone.";
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("predictions.jsonl");
        let line = json!({"instance_id": "a", "response": reply}).to_string();
        std::fs::write(
            &path,
            line + "\n{\"instance_id\": \"b\", \"response\": \"no sql here\"}\n",
        )
        .unwrap();
        let error = read_predictions(&path).unwrap_err().to_string();
        assert!(
            error.contains("line 2: no SQL could be extracted"),
            "{error}"
        );
        std::fs::write(
            &path,
            json!({"instance_id": "a", "response": reply}).to_string(),
        )
        .unwrap();
        let expected = vec![
            "DELETE FROM p WHERE id = 12".to_string(),
            "-- old; row\nINSERT INTO p VALUES (12, 'O''Hara; Jr', \"a;b\")".to_string(),
        ];
        assert_eq!(read_predictions(&path).unwrap()["a"], expected);
        assert_eq!(
            split_statements("SELECT 1;;  ; SELECT [a;b]"),
            ["SELECT 1", "SELECT [a;b]"]
        );
    }

    #[test]
    fn a_bad_line_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            (
                "{\"instance_id\": \"a\"}\n",
                "line 1: `selected_database` (or `db_id`) is missing",
            ),
            ("\n[1]\n", "line 2: expected a JSON object"),
            (
                "{\"instance_id\": \"a\", \"db_id\": \"../x\"}",
                "line 1: `db_id` \"../x\" is not a database name",
            ),
        ];
        for (text, expected) in cases {
            let path = dir.path().join("items.jsonl");
            std::fs::write(&path, text).unwrap();
            let error = read_items(&path).unwrap_err().to_string();
            assert!(error.ends_with(expected), "{error}");
        }
    }
}
