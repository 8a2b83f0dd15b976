//! Test-suite accuracy (TS): the prediction is correct only if its result matches the gold's on
//! every database of the item's test suite, under the configured comparison profile. Gold results
//! are shared by all systems; scoring stops at the first distinguishing database. A suite
//! database on which the gold's own answer is not determined (tied sort keys at its LIMIT cut or
//! MIN / MAX arg-row) does not decide; the original database always does.

use super::{Details, Env, Metric, Outcome, Score};
use crate::engine::exec::ExecError;
use crate::input::dataset::GoldItem;
use crate::suites::counterexample::{minimize, Context};
use crate::suites::ties;

/// The `ts` metric.
pub struct TestSuiteAccuracy;

impl Metric for TestSuiteAccuracy {
    fn name(&self) -> &'static str {
        "ts"
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
/// decides; when `explain` gives the prediction as written, with a counterexample if it is
/// right on the original database.
fn score_on_suite(
    env: &Env<'_>,
    item: &GoldItem,
    sql: &str,
    databases: &[std::path::PathBuf],
    explain: Option<&str>,
) -> Score {
    for db in databases {
        let name = db
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let gold = env.gold_result(item, db);
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
        match env.executor.run(db, sql) {
            Ok(rows)
                if env
                    .profile
                    .same_result(gold_rows, &rows, gold.prepared.order_matters) =>
            {
                continue
            }
            Ok(_) if undecided(env, item, db, &gold.prepared.sql) => continue,
            Ok(_) => {
                let counterexample = match explain {
                    Some(written) if right_on_original(env, item, sql, db) => {
                        let context = Context {
                            original: env.dataset.database_path(item),
                            with_distinct: env.profile.keeping_distinct(&item.sql, written),
                        };
                        minimize(env.executor, env.profile, db, &gold.prepared, sql, &context)
                            .map(Box::new)
                    }
                    _ => None,
                };
                let mut score = Score::binary(false);
                score.details = Some(Details::Distinguishing {
                    database: name,
                    counterexample,
                });
                return score;
            }
            Err(e @ ExecError::Timeout(_)) => {
                return Score::wrong(Outcome::PredTimeout, format!("{name}: {e}"))
            }
            Err(e) => return Score::wrong(Outcome::PredError, format!("{name}: {e}")),
        }
    }
    Score::binary(true)
}

/// Whether a differing suite database leaves the gold's own answer undetermined (a tie at its
/// `ORDER BY ... LIMIT` cut or MIN / MAX arg-row, [`crate::suites::ties`]): such a database does
/// not decide the item. The original database always decides, so a TS-correct prediction stays
/// EX-correct and EX itself is untouched (the
/// suite's copy of the original has the original's file name).
fn undecided(env: &Env<'_>, item: &GoldItem, db: &std::path::Path, gold: &str) -> bool {
    let original = env
        .dataset
        .database_path(item)
        .and_then(std::path::Path::file_name);
    original != db.file_name() && ties::undetermined(env.executor, db, gold)
}

/// Whether the prediction is right on the item's original database (EX-correct), the case in
/// which a TS failure needs a counterexample to be believed.
fn right_on_original(
    env: &Env<'_>,
    item: &GoldItem,
    sql: &str,
    distinguishing: &std::path::Path,
) -> bool {
    let Some(original) = env.dataset.database_path(item) else {
        return false;
    };
    if original == distinguishing {
        return false;
    }
    let gold = env.gold_result(item, original);
    match (&gold.rows, env.executor.run(original, sql)) {
        (Ok(gold_rows), Ok(rows)) => {
            env.profile
                .same_result(gold_rows, &rows, gold.prepared.order_matters)
        }
        _ => false,
    }
}
