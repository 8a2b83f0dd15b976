//! EvalBench items (`dataset.kind: evalbench`, issue 46): Google's EvalBench standard format, a
//! JSON list of objects each with `id`, `query_type` (`dql`, `dml` or `ddl`), `database`,
//! `dialects`, `golden_sql` and `eval_query` (each a map from dialect to a list whose first
//! entry EvalBench runs), `setup_sql` / `cleanup_sql` (which EvalBench's execution never runs),
//! `tags` and `other`. sqlgate runs them on SQLite: every item must list the `sqlite` dialect.
//! Predictions are `format: livesql` lines (`{"instance_id": "<id>", "pred_sqls": [...]}`).

use crate::util::error::InputError;
use serde_json::Value as Json;
use std::path::Path;

/// How EvalBench executes and scores an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryType {
    /// A query: the first statement's rows are compared.
    Dql,
    /// Data changes: run with the `eval_query` in one transaction that is rolled back.
    Dml,
    /// Schema changes: run on a reset database, its tables and columns compared.
    Ddl,
}

impl QueryType {
    /// The name EvalBench writes.
    pub fn as_str(self) -> &'static str {
        match self {
            QueryType::Dql => "dql",
            QueryType::Dml => "dml",
            QueryType::Ddl => "ddl",
        }
    }
}

/// One EvalBench item, its SQLite dialect's entries.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalItem {
    /// `id` as text (predictions name it as `instance_id`).
    pub instance_id: String,
    /// `database`.
    pub db_id: String,
    /// `query_type`, lower-cased as EvalBench reads it (`dql` when absent).
    pub query_type: QueryType,
    /// `golden_sql.sqlite[0]` (a string, maybe several statements).
    pub golden_sql: String,
    /// `eval_query.sqlite[0]`, when it is a string.
    pub eval_query: Option<String>,
}

impl crate::input::dataset::ItemTask for EvalItem {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn instance_id(&self) -> Option<&str> {
        Some(&self.instance_id)
    }

    /// Its `golden_sql`, split into statements as a prediction's text is.
    fn gold_statements(&self) -> Option<Vec<String>> {
        Some(vec![self.golden_sql.clone()])
    }
}

/// The EvalBench item of a gold item, when it is one.
pub fn eval_item(item: &crate::input::dataset::GoldItem) -> Option<&EvalItem> {
    item.task.as_deref()?.as_any().downcast_ref::<EvalItem>()
}

/// The items of `text`, the contents of the JSON file at `path` (for messages), in file order;
/// an error names the item (`item N`, 1-based, and its `id`) and the key.
pub fn parse_items(path: &Path, text: &str) -> Result<Vec<EvalItem>, InputError> {
    let list: Vec<Json> = serde_json::from_str(text)
        .map_err(|e| InputError::malformed(path, format!("line {}", e.line()), e.to_string()))?;
    let mut seen = std::collections::BTreeSet::new();
    let mut items = Vec::with_capacity(list.len());
    for (number, value) in list.iter().enumerate() {
        let at = format!("item {}", number + 1);
        let Json::Object(object) = value else {
            return Err(InputError::malformed(path, &at, "expected a JSON object"));
        };
        let item = item_of(path, &at, object)?;
        if !seen.insert(item.instance_id.clone()) {
            let message = format!("`id` {} appears twice", item.instance_id);
            return Err(InputError::malformed(path, &at, message));
        }
        items.push(item);
    }
    Ok(items)
}

fn item_of(
    path: &Path,
    at: &str,
    object: &serde_json::Map<String, Json>,
) -> Result<EvalItem, InputError> {
    let bad = |message: String| InputError::malformed(path, at, message);
    let instance_id = match object.get("id") {
        Some(Json::String(text)) if !text.is_empty() => text.clone(),
        Some(Json::Number(number)) => number.to_string(),
        _ => return Err(bad("`id` is missing (a number or a string)".into())),
    };
    let at = format!("{at} (`id` {instance_id})");
    let bad = |message: String| InputError::malformed(path, &at, message);
    let query_type = match object.get("query_type") {
        None => QueryType::Dql,
        Some(Json::String(text)) => match text.to_lowercase().as_str() {
            "dql" => QueryType::Dql,
            "dml" => QueryType::Dml,
            "ddl" => QueryType::Ddl,
            other => {
                return Err(bad(format!(
                    "`query_type` {other:?} is not dql, dml or ddl"
                )))
            }
        },
        Some(_) => return Err(bad("`query_type` is not a string".into())),
    };
    let db_id = match object.get("database") {
        Some(Json::String(db)) if is_database_name(db) => db.clone(),
        Some(other) => return Err(bad(format!("`database` {other} is not a database name"))),
        None => return Err(bad("`database` is missing".into())),
    };
    let has_sqlite = (object.get("dialects").and_then(Json::as_array))
        .is_some_and(|list| list.iter().any(|d| d.as_str() == Some("sqlite")));
    if !has_sqlite {
        return Err(bad(
            "`dialects` does not list `sqlite` (sqlgate runs EvalBench items on SQLite)".into(),
        ));
    }
    let golden_sql =
        match first_sqlite(object.get("golden_sql")) {
            Some(Json::String(sql)) if !sql.trim().is_empty() => sql.clone(),
            _ => return Err(bad(
                "`golden_sql.sqlite` has no statement (a list whose first entry is the gold SQL)"
                    .into(),
            )),
        };
    let eval_query = match first_sqlite(object.get("eval_query")) {
        Some(Json::String(sql)) if !sql.is_empty() => Some(sql.clone()),
        None | Some(Json::Null) | Some(Json::String(_)) => None,
        Some(_) => return Err(bad("`eval_query.sqlite[0]` is not a string or null".into())),
    };
    Ok(EvalItem {
        instance_id,
        db_id,
        query_type,
        golden_sql,
        eval_query,
    })
}

/// `field.sqlite[0]` (EvalBench's `copy_for_dialect`, then `[0]`), or `field.sqlite` when it is a
/// string.
fn first_sqlite(field: Option<&Json>) -> Option<&Json> {
    match field?.get("sqlite")? {
        Json::Array(list) => list.first(),
        other => Some(other),
    }
}

fn is_database_name(db: &str) -> bool {
    !db.is_empty() && !db.contains(['/', '\\']) && !db.starts_with('.')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<EvalItem>, String> {
        parse_items(Path::new("items.json"), text).map_err(|e| e.to_string())
    }

    #[test]
    fn reads_the_sqlite_entries_of_an_item() {
        let items = parse(r#"[{"id": 7, "query_type": "DML", "database": "shop", "dialects": ["postgres", "sqlite"],
            "golden_sql": {"sqlite": ["DELETE FROM t", "ignored"]}, "eval_query": {"sqlite": ["SELECT * FROM t"]}}]"#)
        .unwrap();
        assert_eq!(
            items,
            vec![EvalItem {
                instance_id: "7".into(),
                db_id: "shop".into(),
                query_type: QueryType::Dml,
                golden_sql: "DELETE FROM t".into(),
                eval_query: Some("SELECT * FROM t".into()),
            }]
        );
    }

    #[test]
    fn refuses_what_it_cannot_run_naming_the_item_and_key() {
        let base = r#""database": "shop", "golden_sql": {"sqlite": ["SELECT 1"]}"#;
        let cases = [
            (format!(r#"[{{"id": 1, "dialects": ["postgres"], {base}}}]"#), "`dialects`"),
            (format!(r#"[{{"id": 1, "query_type": "dcl", "dialects": ["sqlite"], {base}}}]"#), "`query_type`"),
            (r#"[{"id": 1, "dialects": ["sqlite"], "database": "../x", "golden_sql": {"sqlite": ["SELECT 1"]}}]"#.to_string(), "`database`"),
            (r#"[{"id": 1, "dialects": ["sqlite"], "database": "shop", "golden_sql": {"sqlite": []}}]"#.to_string(), "`golden_sql.sqlite`"),
            (format!(r#"[{{"id": 1, "dialects": ["sqlite"], {base}}}, {{"id": 1, "dialects": ["sqlite"], {base}}}]"#), "appears twice"),
        ];
        for (text, key) in cases {
            let error = parse(&text).unwrap_err();
            assert!(error.contains(key) && error.contains("item "), "{error}");
        }
    }
}
