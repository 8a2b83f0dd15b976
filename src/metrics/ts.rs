//! Test-suite accuracy (TS): the prediction is correct only if its result matches the gold's on
//! every database of the item's test suite, under the configured comparison profile. Gold results
//! are shared by all systems; scoring stops at the first database that decides. The original
//! database always decides; a generated one does not when the gold's own answer is undetermined
//! on it (a tie), when one side's answer is a row of NULLs and the other's no rows, or when the
//! difference exists only on data the original would not allow ([`crate::suites::domain`]) or
//! only because the profile removes DISTINCT (see [`decides`] and the README).

use super::{Detail, Details, Env, Metric, Outcome, Score};
use crate::engine::exec::ExecError;
use crate::engine::profile::PreparedGold;
use crate::engine::value::{Row, Value};
use crate::input::dataset::GoldItem;
use crate::suites::counterexample::{minimize, Context, Counterexample};
use crate::suites::ties;
use std::sync::Arc;

/// The `ts` metric.
pub struct TestSuiteAccuracy;

impl Metric for TestSuiteAccuracy {
    fn read_details(&self, json: &serde_json::Value) -> Option<Details> {
        read_details(json)
    }

    fn name(&self) -> &'static str {
        "ts"
    }

    fn needs_sqlite_files(&self) -> bool {
        true
    }

    fn needs_suite(&self) -> bool {
        true
    }

    fn score(&self, env: &Env<'_>, item: &GoldItem, prediction: Option<&str>) -> Score {
        let Some(suite) = env.suite else {
            return Score::unscored(Outcome::Skipped, "no test suite configured (`suite.kind`)");
        };
        let databases = suite.databases(&item.db_id);
        if databases.is_empty() {
            return Score::unscored(Outcome::Skipped, "the suite has no database for this item");
        }
        let Some(prediction) = prediction else {
            return Score::missing();
        };
        let variants = match env.profile.prediction_variants(&item.sql, prediction) {
            Ok(variants) => variants,
            Err(e) => return Score::wrong(Outcome::PredError, e),
        };
        let first = score_on_suite(env, item, &variants[0], databases, Some(prediction));
        if first.outcome == Outcome::Match
            || !variants[1..].iter().any(|sql| {
                score_on_suite(env, item, sql, databases, None).outcome == Outcome::Match
            })
        {
            first
        } else {
            Score::binary(true)
        }
    }
}

/// TS of one prepared prediction text: the first database on which it differs from the gold
/// decides, except a generated database whose difference is not a verdict on the prediction
/// (see [`decides`]). When `explain` gives the prediction as written, a deciding database's
/// shrunk counterexample is kept for the report.
fn score_on_suite(
    env: &Env<'_>,
    item: &GoldItem,
    sql: &str,
    databases: &[std::path::PathBuf],
    explain: Option<&str>,
) -> Score {
    let mut right_on_original_db = None;
    let mut set_aside = Vec::new();
    let original = env
        .dataset
        .database_path(item)
        .and_then(std::path::Path::file_name);
    let suite_texts = explain.and_then(|written| env.profile.suite_texts(&item.sql, written));
    for db in databases {
        let name = db
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let on_original = original == db.file_name();
        let (gold, run_sql) = match &suite_texts {
            Some((gold, prediction)) if !on_original => {
                (Arc::new(env.run_gold(gold, db)), prediction.as_str())
            }
            _ => (env.gold_result(item, db), sql),
        };
        let gold_rows = match &gold.rows {
            Ok(rows) => rows,
            Err(e) => {
                let failure = super::gold_failure(e);
                return Score::unscored(
                    failure.outcome,
                    format!("on {name}: {}", failure.error.unwrap_or_default()),
                );
            }
        };
        let rows = match env.executor.run(db, run_sql) {
            Ok(rows) => rows,
            Err(e @ ExecError::Timeout(_)) => {
                return Score::wrong(Outcome::PredTimeout, format!("{name}: {e}"))
            }
            Err(e) => return Score::wrong(Outcome::PredError, format!("{name}: {e}")),
        };
        if env
            .profile
            .same_result(gold_rows, &rows, gold.prepared.order_matters)
        {
            continue;
        }
        if on_original
            || !*right_on_original_db.get_or_insert_with(|| right_on_original(env, item, sql))
        {
            return distinguished(name, None);
        }
        let generated = GeneratedDifference {
            db,
            gold: &gold.prepared,
            gold_rows,
            rows: &rows,
        };
        match decides(env, item, run_sql, &generated, explain) {
            Decision::Decides(counterexample) => return distinguished(name, counterexample),
            Decision::SetAside(reason) => set_aside.push(format!("{name}: {reason}")),
            Decision::Undetermined => {}
        }
    }
    let mut score = Score::binary(true);
    if !set_aside.is_empty() {
        score.details = Some(Details::new(SetAside(set_aside)));
    }
    score
}

/// TS's detail of a wrong verdict: the first suite database on which gold and prediction
/// differ, and, when the prediction is right on the original database, a shrunk
/// counterexample.
#[derive(Debug, Clone, PartialEq)]
pub struct Distinguishing {
    /// File name of the suite database.
    pub database: String,
    /// The minimal distinguishing database with both results.
    pub counterexample: Option<Box<Counterexample>>,
}

impl Detail for Distinguishing {
    fn to_json(&self) -> serde_json::Value {
        let mut json = serde_json::json!({ "distinguishing_database": self.database });
        if let Some(counterexample) = &self.counterexample {
            json["counterexample"] = counterexample.to_json();
        }
        json
    }
}

/// TS's detail of a right verdict: the suite databases that differed but did not decide, each
/// as `file: why` (the difference needs data the original would not allow, see
/// [`crate::suites::domain`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SetAside(pub Vec<String>);

impl Detail for SetAside {
    fn to_json(&self) -> serde_json::Value {
        serde_json::json!({ "set_aside": self.0 })
    }
}

/// Reads what [`Distinguishing`] or [`SetAside`] wrote.
fn read_details(json: &serde_json::Value) -> Option<Details> {
    if let Some(database) = json.get("distinguishing_database") {
        let counterexample = match json.get("counterexample") {
            Some(c) => Some(Box::new(Counterexample::from_json(c)?)),
            None => None,
        };
        let database = database.as_str()?.to_string();
        return Some(Details::new(Distinguishing {
            database,
            counterexample,
        }));
    }
    let databases = (json.get("set_aside")?.as_array()?.iter())
        .map(|d| d.as_str().map(str::to_string))
        .collect::<Option<Vec<String>>>()?;
    Some(Details::new(SetAside(databases)))
}

/// A wrong verdict decided on database `name`, with its counterexample when one was shrunk.
fn distinguished(database: String, counterexample: Option<Box<Counterexample>>) -> Score {
    let mut score = Score::binary(false);
    score.details = Some(Details::new(Distinguishing {
        database,
        counterexample,
    }));
    score
}

/// A generated suite database on which gold and prediction differ while the prediction is
/// right on the original.
struct GeneratedDifference<'a> {
    db: &'a std::path::Path,
    gold: &'a PreparedGold,
    gold_rows: &'a [Row],
    rows: &'a [Row],
}

/// What a differing generated database says about the item.
enum Decision {
    /// The prediction is wrong; with a counterexample when one was shrunk.
    Decides(Option<Box<Counterexample>>),
    /// The gold's own answer is not determined on it (a tie).
    Undetermined,
    /// The difference is not a verdict on the prediction, for the reason given.
    SetAside(String),
}

/// Whether a generated database on which gold and prediction differ, the prediction being
/// right on the original, decides the item. (The original database always decides, and so does
/// any database when the prediction is already wrong on the original, so a TS-right prediction
/// stays EX-right and EX is untouched.) It does not decide when the gold's answer is
/// undetermined on it (a tie at its cut, [`crate::suites::ties`]), when one side answers one row
/// of only NULLs and the other no rows (both say there is no answer: an aggregate over nothing
/// against an empty selection), or when the shrunk counterexample's difference exists only on
/// data the original would not allow (a repeated name, a NULL where the original has none, a
/// code beside another row's name: [`crate::suites::domain`]) or only because the profile
/// removes DISTINCT. A counterexample that cannot be shrunk decides.
fn decides(
    env: &Env<'_>,
    item: &GoldItem,
    sql: &str,
    difference: &GeneratedDifference<'_>,
    explain: Option<&str>,
) -> Decision {
    if ties::undetermined(env.executor, difference.db, &difference.gold.sql) {
        return Decision::Undetermined;
    }
    if no_answer(difference.gold_rows) && difference.rows.is_empty()
        || no_answer(difference.rows) && difference.gold_rows.is_empty()
    {
        return Decision::SetAside(
            "one side answers a row of only NULLs, the other no rows: neither gives an answer"
                .into(),
        );
    }
    let context = Context {
        original: env.dataset.database_path(item),
        with_distinct: explain.and_then(|written| env.profile.keeping_distinct(&item.sql, written)),
    };
    match minimize(
        env.executor,
        env.profile,
        difference.db,
        difference.gold,
        sql,
        &context,
    ) {
        Some(counterexample) if counterexample.distinct_only => Decision::SetAside(
            "the queries as written agree on the shrunk data: only the profile's DISTINCT removal \
             separates them"
                .into(),
        ),
        Some(counterexample) if !counterexample.natural => {
            Decision::SetAside(counterexample.natural_reason)
        }
        counterexample => {
            Decision::Decides(counterexample.filter(|_| explain.is_some()).map(Box::new))
        }
    }
}

/// One row whose values are all NULL: what an aggregate over no rows answers.
fn no_answer(rows: &[Row]) -> bool {
    matches!(rows, [row] if row.iter().all(|v| matches!(v, Value::Null)))
}

/// Whether the prediction is right on the item's original database (EX-correct), the case in
/// which a difference on a generated database needs a counterexample to be believed.
fn right_on_original(env: &Env<'_>, item: &GoldItem, sql: &str) -> bool {
    let Some(original) = env.dataset.database_path(item) else {
        return false;
    };
    let gold = env.gold_result(item, original);
    match (&gold.rows, env.executor.run(original, sql)) {
        (Ok(gold_rows), Ok(rows)) => {
            env.profile
                .same_result(gold_rows, &rows, gold.prepared.order_matters)
        }
        _ => false,
    }
}
