//! Counterexamples for test-suite verdicts: when a prediction matches the gold on the original
//! database but not on a suite database, the suite database is shrunk (rows deleted one at a
//! time, keeping foreign keys valid, while gold and prediction still differ and the gold's
//! answer stays determined) so a reader can see
//! the smallest data that separates them, and the difference is given a category.

use crate::engine::exec::Executor;
use crate::engine::profile::{PreparedGold, Profile};
use crate::engine::sqlite::Scratch;
use crate::engine::value::{Row, Value};
use crate::suites::ties;
use crate::util::scrub::scrub;
use crate::util::sqlite::quoted_identifier as quoted;
use serde_json::{json, Value as Json};
use std::path::Path;
use std::time::{Duration, Instant};

/// Gold and predicted rows when they differ on the scratch copy, `None` otherwise.
type Difference = Option<(Vec<Row>, Vec<Row>)>;

/// Wall-clock budget for shrinking one counterexample.
const BUDGET: Duration = Duration::from_secs(5);
/// Most deletions tried for one counterexample.
const MAX_ATTEMPTS: usize = 2000;

pub use crate::suites::explain::{Category, Context};

/// One table's remaining rows.
#[derive(Debug, Clone, PartialEq)]
pub struct TableRows {
    /// Table name.
    pub name: String,
    /// Column names.
    pub columns: Vec<String>,
    /// Remaining rows.
    pub rows: Vec<Row>,
}

/// A minimal distinguishing database with both results.
#[derive(Debug, Clone, PartialEq)]
pub struct Counterexample {
    /// The suite database it was shrunk from.
    pub database: String,
    /// Non-empty tables after shrinking.
    pub tables: Vec<TableRows>,
    /// Gold result on it.
    pub gold: Vec<Row>,
    /// Predicted result on it.
    pub prediction: Vec<Row>,
    /// Why they differ.
    pub category: Category,
    /// Whether the shrunk data respects what the original data says about the domain.
    pub natural: bool,
    /// Why it is (or is not) natural.
    pub natural_reason: String,
    /// The queries as written (DISTINCT kept) agree on it: the difference exists only because
    /// the profile strips DISTINCT.
    pub distinct_only: bool,
}

/// Shrinks `db` to a small database on which gold and prediction still differ, and explains
/// the difference ([`crate::suites::explain`]); `None` when they do not differ on it to begin
/// with or the copy cannot be made.
pub fn minimize(
    executor: &Executor,
    profile: &Profile,
    db: &Path,
    gold: &PreparedGold,
    prediction_sql: &str,
    context: &Context<'_>,
) -> Option<Counterexample> {
    let scratch = Scratch::copy_of(db).ok()?;
    let database = db
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    shrink(
        executor,
        profile,
        scratch,
        &database,
        gold,
        prediction_sql,
        context,
    )
}

/// Shrinks the private copy `scratch` (named `database` in the result) like [`minimize`];
/// `None` when gold and prediction do not differ on it.
pub fn shrink(
    executor: &Executor,
    profile: &Profile,
    mut scratch: Scratch,
    database: &str,
    gold: &PreparedGold,
    prediction_sql: &str,
    context: &Context<'_>,
) -> Option<Counterexample> {
    let differs = |scratch: &Scratch| -> Difference {
        let gold_rows = scratch.run(executor, &gold.sql).ok()?;
        let predicted = scratch.run(executor, prediction_sql).ok()?;
        (!profile.same_result(&gold_rows, &predicted, gold.order_matters))
            .then_some((gold_rows, predicted))
    };
    // A deletion that leaves the gold's answer to a tie would turn the counterexample into one
    // the verdict sets aside, hiding what separated the queries on the determined suite database.
    let gold_probes = ties::probes(&gold.sql);
    let determined_difference = |scratch: &Scratch| -> Difference {
        let difference = differs(scratch)?;
        let run = |probe: &str| scratch.run(executor, probe).ok();
        (!ties::undetermined_by(&gold_probes, &run)).then_some(difference)
    };
    differs(&scratch)?;
    let tables = table_names(&scratch);
    let started = Instant::now();
    let mut attempts = 0;
    let mut changed = true;
    while changed && attempts < MAX_ATTEMPTS && started.elapsed() < BUDGET {
        changed = false;
        for table in &tables {
            for rowid in rowids(&scratch, table) {
                if attempts >= MAX_ATTEMPTS || started.elapsed() >= BUDGET {
                    break;
                }
                attempts += 1;
                if try_delete(&mut scratch, table, rowid, &determined_difference) {
                    changed = true;
                }
            }
        }
    }
    let (gold_rows, predicted) = differs(&scratch)?;
    let remaining: Vec<TableRows> = tables
        .iter()
        .filter_map(|t| table_rows(&scratch, t))
        .collect();
    let shrunk: Vec<(String, Vec<String>, Vec<Row>)> = remaining
        .iter()
        .map(|t| (t.name.clone(), t.columns.clone(), t.rows.clone()))
        .collect();
    let explanation = crate::suites::explain::explain(
        &mut scratch,
        executor,
        profile,
        (&gold.sql, prediction_sql, gold.order_matters),
        (&gold_rows, &predicted),
        &shrunk,
        &tables,
        context,
    );
    Some(Counterexample {
        database: database.to_string(),
        tables: remaining,
        gold: gold_rows,
        prediction: predicted,
        category: explanation.category,
        natural: explanation.natural,
        natural_reason: explanation.natural_reason,
        distinct_only: explanation.distinct_only,
    })
}

fn table_names(scratch: &Scratch) -> Vec<String> {
    let rows = scratch
        .read_trusted("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        .unwrap_or_default();
    rows.into_iter()
        .filter_map(|r| match r.into_iter().next() {
            Some(Value::Text(name)) => Some(name),
            _ => None,
        })
        .collect()
}

fn rowids(scratch: &Scratch, table: &str) -> Vec<i64> {
    let rows = scratch
        .read_trusted(&format!("SELECT rowid FROM {}", quoted(table)))
        .unwrap_or_default();
    rows.into_iter()
        .filter_map(|r| match r.first() {
            Some(Value::Int(i)) => Some(*i),
            _ => None,
        })
        .collect()
}

/// Deletes one row inside a savepoint and keeps the deletion only if gold and prediction still
/// differ (a deletion a foreign key forbids fails and is undone).
fn try_delete(
    scratch: &mut Scratch,
    table: &str,
    rowid: i64,
    differs: &dyn Fn(&Scratch) -> Difference,
) -> bool {
    if scratch.execute_trusted("SAVEPOINT shrink", []).is_err() {
        return false;
    }
    let deleted = scratch
        .execute_trusted(
            &format!("DELETE FROM {} WHERE rowid = ?1", quoted(table)),
            [rowid],
        )
        .is_ok_and(|n| n == 1);
    let keep = deleted && differs(scratch).is_some();
    if !keep {
        let _ = scratch.execute_trusted("ROLLBACK TO shrink", []);
    }
    let _ = scratch.execute_trusted("RELEASE shrink", []);
    keep
}

fn table_rows(scratch: &Scratch, table: &str) -> Option<TableRows> {
    let query = format!("SELECT * FROM {}", quoted(table));
    let rows = scratch.read_trusted(&query).ok()?;
    if rows.is_empty() {
        return None;
    }
    let columns = scratch.column_names(&query).ok()?;
    Some(TableRows {
        name: table.to_string(),
        columns,
        rows,
    })
}

/// A value as JSON that reads back to the same value (integers and reals stay apart).
fn value_json(value: &Value) -> Json {
    match value {
        Value::Null => Json::Null,
        Value::Int(i) => json!(i),
        Value::Real(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
        Value::Text(s) => json!(scrub(s)),
        Value::Blob(b) => json!({ "blob": crate::util::digest::hex(b) }),
        Value::Py(value) => json!(scrub(&value.python_str())),
    }
}

fn value_from_json(json: &Json) -> Option<Value> {
    Some(match json {
        Json::Null => Value::Null,
        Json::Number(n) if n.is_i64() => Value::Int(n.as_i64()?),
        Json::Number(n) => Value::Real(n.as_f64()?),
        Json::String(s) => Value::Text(s.clone()),
        Json::Object(o) => {
            let hex = o.get("blob")?.as_str()?;
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
                .collect::<Option<Vec<u8>>>()?;
            Value::Blob(bytes)
        }
        _ => return None,
    })
}

fn rows_json(rows: &[Row]) -> Json {
    Json::Array(
        rows.iter()
            .map(|r| Json::Array(r.iter().map(value_json).collect()))
            .collect(),
    )
}

fn rows_from_json(json: &Json) -> Option<Vec<Row>> {
    json.as_array()?
        .iter()
        .map(|r| r.as_array()?.iter().map(value_from_json).collect())
        .collect()
}

impl Counterexample {
    /// The JSON written in `ts_components.counterexample`, its texts scrubbed of anything that
    /// looks like a credential.
    pub fn to_json(&self) -> Json {
        let tables: Vec<Json> = self
            .tables
            .iter()
            .map(|t| {
                let columns: Vec<String> = t.columns.iter().map(|c| scrub(c)).collect();
                json!({"name": scrub(&t.name), "columns": columns, "rows": rows_json(&t.rows)})
            })
            .collect();
        json!({
            "database": self.database,
            "category": self.category.as_str(),
            "natural": self.natural,
            "natural_reason": self.natural_reason,
            "distinct_only": self.distinct_only,
            "tables": tables,
            "gold": rows_json(&self.gold),
            "prediction": rows_json(&self.prediction),
        })
    }

    /// Reads what [`Counterexample::to_json`] wrote.
    pub fn from_json(json: &Json) -> Option<Counterexample> {
        let tables = json["tables"]
            .as_array()?
            .iter()
            .map(|t| {
                Some(TableRows {
                    name: t["name"].as_str()?.to_string(),
                    columns: t["columns"]
                        .as_array()?
                        .iter()
                        .map(|c| c.as_str().map(str::to_string))
                        .collect::<Option<_>>()?,
                    rows: rows_from_json(&t["rows"])?,
                })
            })
            .collect::<Option<_>>()?;
        Some(Counterexample {
            database: json["database"].as_str()?.to_string(),
            tables,
            gold: rows_from_json(&json["gold"])?,
            prediction: rows_from_json(&json["prediction"])?,
            category: Category::parse(json["category"].as_str()?)?,
            natural: json["natural"].as_bool().unwrap_or(true),
            natural_reason: json["natural_reason"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            distinct_only: json["distinct_only"].as_bool().unwrap_or(false),
        })
    }

    /// A plain-text rendering for the report (shown inside a code fence), scrubbed of anything
    /// that looks like a credential: the rows come from a database the pull request may bring.
    pub fn to_text(&self) -> String {
        let cell = |v: &Value| match v {
            Value::Null => "NULL".to_string(),
            other => crate::engine::denotation::python_str(other),
        };
        let line = |row: &Row| row.iter().map(cell).collect::<Vec<_>>().join(" | ");
        let mut text = format!(
            "-- counterexample ({}), shrunk from {}\n-- {}: {}\n",
            self.category.as_str(),
            self.database,
            if self.natural { "natural" } else { "unnatural" },
            self.natural_reason
        );
        if self.distinct_only {
            text.push_str(
                "-- the queries as written (DISTINCT kept) agree here: they differ only \
                 because the profile strips DISTINCT\n",
            );
        }
        for table in &self.tables {
            text.push_str(&format!(
                "-- table {} ({})\n",
                table.name,
                table.columns.join(" | ")
            ));
            for row in &table.rows {
                text.push_str(&format!("--   {}\n", line(row)));
            }
        }
        text.push_str("-- gold result:\n");
        for row in &self.gold {
            text.push_str(&format!("--   {}\n", line(row)));
        }
        text.push_str("-- predicted result:\n");
        for row in &self.prediction {
            text.push_str(&format!("--   {}\n", line(row)));
        }
        scrub(&text)
    }
}
