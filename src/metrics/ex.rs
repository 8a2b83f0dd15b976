//! Execution accuracy (EX): run gold and prediction on the item's database and compare the
//! results under the configured profile.

use super::{gold_and_prediction, prediction_failure, Env, Metric, Outcome, Score};
use crate::input::dataset::GoldItem;

/// The `ex` metric.
pub struct ExecutionAccuracy;

impl Metric for ExecutionAccuracy {
    fn name(&self) -> &'static str {
        "ex"
    }

    fn score(&self, env: &Env<'_>, item: &GoldItem, prediction: Option<&str>) -> Score {
        let (run, prediction) = match gold_and_prediction(env, item, prediction) {
            Ok(pair) => pair,
            Err(unscored) => return unscored,
        };
        let variants = match env.profile.prediction_variants(&item.sql, prediction) {
            Ok(variants) => variants,
            Err(e) => return Score::wrong(Outcome::PredError, e),
        };
        let score = |sql: &str| match env.executor.run(run.db, sql) {
            Ok(rows) => Score::binary(env.profile.same_result(
                run.rows(),
                &rows,
                run.gold.prepared.order_matters,
            )),
            Err(e) => prediction_failure(e),
        };
        let first = score(&variants[0]);
        if first.outcome == Outcome::Match
            || !variants[1..]
                .iter()
                .any(|sql| score(sql).outcome == Outcome::Match)
        {
            first
        } else {
            Score::binary(true)
        }
    }
}
