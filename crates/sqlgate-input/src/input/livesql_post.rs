//! Declarative post-conditions of a state-changing item (issue 46): what the database must look
//! like after the prediction ran, stated in the item's JSONL line instead of a Python test case.
//! Only the sound profile (`livesql_sound`) runs them; the official profiles ignore them as the
//! official evaluators ignore keys they do not know.
//!
//! `post_conditions` is a list of objects, each one check:
//! - `{"query": SQL, "rows": [[cell, ...], ...]}` (with `"order": true` in that order): the
//!   query's rows; a cell is a JSON number, string or null (a boolean is 1 / 0);
//! - `{"query": SQL, "row_count": N}` or `{"table": NAME, "row_count": N}`;
//! - `{"table": NAME, "columns": [[name, declared type], ...]}`: the table's columns in order;
//! - `{"exists": NAME}` or `{"absent": NAME}`, with an optional `"type"` (`table`, `view`,
//!   `index`, `trigger`): a schema object of the database (not a TEMP one).
//!
//! `post_state` compares the prediction's copy with a twin copy the gold ran on: `"all"` every
//! table, `"touched"` the tables the gold changed, or a list of table names.

use serde_json::{Map, Value as Json};

/// Where a row count is taken.
#[derive(Debug, Clone, PartialEq)]
pub enum CountOf {
    /// The rows a query returns.
    Query(String),
    /// The rows of a table.
    Table(String),
}

/// One declarative check, run after the prediction on its copy.
#[derive(Debug, Clone, PartialEq)]
pub enum PostCondition {
    /// A query's rows equal `rows` (a set, or a list with `order`).
    Rows {
        /// The query.
        query: String,
        /// The expected rows, as written.
        rows: Vec<Vec<Json>>,
        /// Compared in order.
        order: bool,
    },
    /// A row count.
    RowCount {
        /// What is counted.
        of: CountOf,
        /// The expected count.
        count: u64,
    },
    /// A table's columns and declared types, in order.
    Columns {
        /// The table.
        table: String,
        /// `(name, declared type)` pairs.
        columns: Vec<(String, String)>,
    },
    /// A schema object exists (or, with `exists: false`, does not).
    Object {
        /// Its name.
        name: String,
        /// Its type, when the check names one.
        kind: Option<String>,
        /// Whether it must exist.
        exists: bool,
    },
}

impl PostCondition {
    /// A short description for messages: `rows of query`, `row_count of table orders`, ...
    pub fn describe(&self) -> String {
        match self {
            PostCondition::Rows { .. } => "rows of a query".to_string(),
            PostCondition::RowCount {
                of: CountOf::Query(_),
                ..
            } => "row_count of a query".to_string(),
            PostCondition::RowCount {
                of: CountOf::Table(table),
                ..
            } => format!("row_count of table `{table}`"),
            PostCondition::Columns { table, .. } => format!("columns of table `{table}`"),
            PostCondition::Object { name, exists, .. } => {
                format!("`{name}` {}", if *exists { "exists" } else { "absent" })
            }
        }
    }
}

/// Which tables a post-state comparison compares.
#[derive(Debug, Clone, PartialEq)]
pub enum PostState {
    /// Every table of either copy.
    All,
    /// The tables whose rows or columns the gold changed (or created, or dropped).
    Touched,
    /// These tables.
    Tables(Vec<String>),
}

/// An item's declarative checks (none by default).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PostChecks {
    /// `post_conditions`, in order.
    pub conditions: Vec<PostCondition>,
    /// `post_state`.
    pub state: Option<PostState>,
}

impl PostChecks {
    /// Whether the item states any check.
    pub fn is_empty(&self) -> bool {
        self.conditions.is_empty() && self.state.is_none()
    }
}

/// The keys each form of check may have.
const ROWS_KEYS: [&str; 3] = ["query", "rows", "order"];
const ROW_COUNT_KEYS: [&str; 3] = ["query", "table", "row_count"];
const COLUMNS_KEYS: [&str; 2] = ["table", "columns"];
const OBJECT_KEYS: [&str; 3] = ["exists", "absent", "type"];

/// The schema object types `exists` / `absent` may name.
const OBJECT_TYPES: [&str; 4] = ["table", "view", "index", "trigger"];

/// Reads `post_conditions` and `post_state` of one item's JSON object; an error names the key
/// (`post_conditions[2].rows`) and says what is wrong.
pub fn read_post_checks(object: &Map<String, Json>) -> Result<PostChecks, String> {
    let conditions = match object.get("post_conditions") {
        None | Some(Json::Null) => Vec::new(),
        Some(Json::Array(list)) => (list.iter().enumerate())
            .map(|(i, value)| condition(&format!("post_conditions[{i}]"), value))
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("`post_conditions` is not a list of checks".to_string()),
    };
    let state = match object.get("post_state") {
        None | Some(Json::Null) => None,
        Some(value) => Some(post_state(value)?),
    };
    Ok(PostChecks { conditions, state })
}

/// The post-state comparison `value` states (an item's `post_state`, or `dataset.post_state`);
/// an error says what it must be.
pub fn post_state(value: &Json) -> Result<PostState, String> {
    match value {
        Json::String(s) if s == "all" => Ok(PostState::All),
        Json::String(s) if s == "touched" => Ok(PostState::Touched),
        Json::Array(list) if !list.is_empty() => (list.iter())
            .map(|t| {
                name(t).ok_or_else(|| "`post_state` lists a table that is not a name".to_string())
            })
            .collect::<Result<_, _>>()
            .map(PostState::Tables),
        _ => Err(
            "`post_state` must be \"all\", \"touched\" or a non-empty list of table names"
                .to_string(),
        ),
    }
}

/// A non-empty string.
fn name(value: &Json) -> Option<String> {
    value
        .as_str()
        .filter(|s| !s.trim().is_empty())
        .map(str::to_string)
}

fn condition(at: &str, value: &Json) -> Result<PostCondition, String> {
    let Json::Object(check) = value else {
        return Err(format!("`{at}` is not an object"));
    };
    let has = |key: &str| check.contains_key(key);
    let (parsed, keys) = if has("rows") {
        (rows(at, check)?, &ROWS_KEYS[..])
    } else if has("row_count") {
        (row_count(at, check)?, &ROW_COUNT_KEYS[..])
    } else if has("columns") {
        (columns(at, check)?, &COLUMNS_KEYS[..])
    } else if has("exists") || has("absent") {
        (object_check(at, check)?, &OBJECT_KEYS[..])
    } else {
        return Err(format!(
            "`{at}` states no check: give `rows`, `row_count`, `columns`, `exists` or `absent`"
        ));
    };
    match check.keys().find(|k| !keys.contains(&k.as_str())) {
        Some(other) => Err(format!(
            "`{at}.{other}` does not go with this check (keys: {})",
            keys.join(", ")
        )),
        None => Ok(parsed),
    }
}

fn text(at: &str, check: &Map<String, Json>, key: &str) -> Result<String, String> {
    check
        .get(key)
        .and_then(name)
        .ok_or_else(|| format!("`{at}.{key}` must be a non-empty string"))
}

fn rows(at: &str, check: &Map<String, Json>) -> Result<PostCondition, String> {
    let query = text(at, check, "query")?;
    let bad =
        || format!("`{at}.rows` must be a list of rows, each a list of numbers, strings or nulls");
    let Some(Json::Array(list)) = check.get("rows") else {
        return Err(bad());
    };
    let mut rows = Vec::new();
    for row in list {
        let Json::Array(cells) = row else {
            return Err(bad());
        };
        if cells
            .iter()
            .any(|c| matches!(c, Json::Array(_) | Json::Object(_)))
        {
            return Err(bad());
        }
        rows.push(cells.clone());
    }
    let order = match check.get("order") {
        None => false,
        Some(Json::Bool(order)) => *order,
        Some(_) => return Err(format!("`{at}.order` must be true or false")),
    };
    Ok(PostCondition::Rows { query, rows, order })
}

fn row_count(at: &str, check: &Map<String, Json>) -> Result<PostCondition, String> {
    let count = check
        .get("row_count")
        .and_then(Json::as_u64)
        .ok_or_else(|| format!("`{at}.row_count` must be a whole number >= 0"))?;
    let of = match (check.contains_key("query"), check.contains_key("table")) {
        (true, false) => CountOf::Query(text(at, check, "query")?),
        (false, true) => CountOf::Table(text(at, check, "table")?),
        _ => return Err(format!("`{at}` needs exactly one of `query` and `table`")),
    };
    Ok(PostCondition::RowCount { of, count })
}

fn columns(at: &str, check: &Map<String, Json>) -> Result<PostCondition, String> {
    let table = text(at, check, "table")?;
    let bad = || format!("`{at}.columns` must be a non-empty list of [name, declared type] pairs");
    let Some(Json::Array(list)) = check.get("columns") else {
        return Err(bad());
    };
    let columns = (list.iter())
        .map(|pair| match pair.as_array().map(Vec::as_slice) {
            Some([Json::String(name), Json::String(kind)]) => Ok((name.clone(), kind.clone())),
            _ => Err(bad()),
        })
        .collect::<Result<Vec<_>, _>>()?;
    if columns.is_empty() {
        return Err(bad());
    }
    Ok(PostCondition::Columns { table, columns })
}

fn object_check(at: &str, check: &Map<String, Json>) -> Result<PostCondition, String> {
    let (key, exists) = match (check.contains_key("exists"), check.contains_key("absent")) {
        (true, false) => ("exists", true),
        (false, true) => ("absent", false),
        _ => {
            return Err(format!(
                "`{at}` needs one of `exists` and `absent`, not both"
            ))
        }
    };
    let name = text(at, check, key)?;
    let kind = match check.get("type") {
        None => None,
        Some(Json::String(kind)) if OBJECT_TYPES.contains(&kind.as_str()) => Some(kind.clone()),
        Some(_) => {
            return Err(format!(
                "`{at}.type` must be one of {}",
                OBJECT_TYPES.join(", ")
            ))
        }
    };
    Ok(PostCondition::Object { name, kind, exists })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(value: Json) -> Result<PostChecks, String> {
        read_post_checks(value.as_object().unwrap())
    }

    #[test]
    fn every_check_form_is_read() {
        let checks = read(json!({
            "post_conditions": [
                {"query": "SELECT a FROM t", "rows": [[1, "x", null]], "order": true},
                {"table": "t", "row_count": 3},
                {"query": "SELECT 1", "row_count": 1},
                {"table": "t", "columns": [["a", "INTEGER"]]},
                {"exists": "idx", "type": "index"},
                {"absent": "old"}
            ],
            "post_state": ["t", "u"]
        }))
        .unwrap();
        assert_eq!(checks.conditions.len(), 6);
        assert_eq!(
            checks.conditions[1],
            PostCondition::RowCount {
                of: CountOf::Table("t".into()),
                count: 3
            }
        );
        assert_eq!(
            checks.conditions[5],
            PostCondition::Object {
                name: "old".into(),
                kind: None,
                exists: false
            }
        );
        assert_eq!(
            checks.state,
            Some(PostState::Tables(vec!["t".into(), "u".into()]))
        );
        assert!(read(json!({})).unwrap().is_empty());
        assert_eq!(
            read(json!({"post_state": "touched"})).unwrap().state,
            Some(PostState::Touched)
        );
    }

    #[test]
    fn a_malformed_check_is_named_by_its_key() {
        let cases = [
            (
                json!({"post_conditions": {}}),
                "`post_conditions` is not a list of checks",
            ),
            (
                json!({"post_conditions": [7]}),
                "`post_conditions[0]` is not an object",
            ),
            (
                json!({"post_conditions": [{"query": "x"}]}),
                "`post_conditions[0]` states no check",
            ),
            (
                json!({"post_conditions": [{"query": "x", "rows": [1]}]}),
                "`post_conditions[0].rows` must be a list of rows",
            ),
            (
                json!({"post_conditions": [{"rows": []}]}),
                "`post_conditions[0].query` must be a non-empty string",
            ),
            (
                json!({"post_conditions": [{}, {"table": "t", "row_count": -1}]}),
                "`post_conditions[0]` states no check",
            ),
            (
                json!({"post_conditions": [{"table": "t", "row_count": 1.5}]}),
                "`post_conditions[0].row_count` must be a whole number",
            ),
            (
                json!({"post_conditions": [{"query": "q", "table": "t", "row_count": 1}]}),
                "needs exactly one of `query` and `table`",
            ),
            (
                json!({"post_conditions": [{"table": "t", "columns": [["a"]]}]}),
                "`post_conditions[0].columns` must be a non-empty list",
            ),
            (
                json!({"post_conditions": [{"exists": "v", "type": "function"}]}),
                "`post_conditions[0].type` must be one of",
            ),
            (
                json!({"post_conditions": [{"exists": "v", "absent": "v"}]}),
                "not both",
            ),
            (
                json!({"post_conditions": [{"table": "t", "row_count": 1, "rowz": 2}]}),
                "`post_conditions[0].rowz` does not go with this check",
            ),
            (
                json!({"post_conditions": [{"query": "q", "rows": [], "order": "yes"}]}),
                "`post_conditions[0].order` must be true or false",
            ),
            (
                json!({"post_state": "some"}),
                "`post_state` must be \"all\"",
            ),
            (json!({"post_state": []}), "`post_state` must be \"all\""),
        ];
        for (value, expected) in cases {
            let error = read(value.clone()).unwrap_err();
            assert!(error.contains(expected), "{value}: {error}");
        }
    }
}
