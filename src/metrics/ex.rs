//! Execution accuracy (EX): run gold and prediction on the item's database and compare the
//! results under the configured profile.

use super::{Env, Metric, Outcome, Score};
use crate::dataset::GoldItem;
use crate::exec::ExecError;

/// The `ex` metric.
pub struct ExecutionAccuracy;

impl Metric for ExecutionAccuracy {
    fn name(&self) -> &'static str {
        "ex"
    }

    fn score(&self, env: &Env<'_>, item: &GoldItem, prediction: Option<&str>) -> Score {
        let Some(db) = env.dataset.database_path(item) else {
            return Score::unscored(Outcome::Skipped, "database absent");
        };
        let gold = env.gold_result(item, db);
        let gold_rows = match &gold.rows {
            Ok(rows) => rows,
            Err(e) => {
                return Score::unscored(Outcome::GoldError, format!("gold query failed: {e}"))
            }
        };
        let Some(prediction) = prediction else {
            return Score::missing();
        };
        let variants = match env.profile.prediction_variants(&item.sql, prediction) {
            Ok(variants) => variants,
            Err(e) => return Score::wrong(Outcome::PredError, e),
        };
        let run = |sql: &str| match env.executor.run(db, sql) {
            Ok(rows) => Score::binary(env.profile.same_result(
                gold_rows,
                &rows,
                gold.prepared.order_matters,
            )),
            Err(e @ ExecError::Timeout(_)) => Score::wrong(Outcome::PredTimeout, e.to_string()),
            Err(e) => Score::wrong(Outcome::PredError, e.to_string()),
        };
        let first = run(&variants[0]);
        if first.outcome == Outcome::Match
            || !variants[1..]
                .iter()
                .any(|sql| run(sql).outcome == Outcome::Match)
        {
            first
        } else {
            Score::binary(true)
        }
    }
}
