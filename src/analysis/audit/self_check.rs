//! The gold self-check of the state-changing kinds (issue 46, `gold-self-check`): each item's
//! gold, given as a prediction to every configured metric of its kind (normalisations, copies
//! and test cases included), must pass its own checks. One that does not is a finding (a gold the
//! evaluator's own DISTINCT removal breaks, a test case the gold fails, an EvalBench gold that
//! fails against itself); a fault of the harness stops the audit, as it stops a scored run.

use super::{Finding, Kind};
use crate::input::dataset::GoldItem;
use crate::metrics::{Env, Metric, Outcome};
use rayon::prelude::*;

/// The findings of every item whose kind gives its gold as a statement list
/// (`ItemTask::gold_statements`), in item order then metric order; `Err` with the reason when a
/// metric could not judge a gold (a copy that could not be made, a runner that did not start).
pub fn findings(env: &Env<'_>, metrics: &[Box<dyn Metric>]) -> Result<Vec<Finding>, String> {
    let found: Vec<Vec<Finding>> = (env.dataset.items.par_iter())
        .map(|item| item_findings(env, metrics, item))
        .collect::<Result<_, String>>()?;
    Ok(found.into_iter().flatten().collect())
}

/// The metrics' findings about one item's gold: none when its kind gives no statement list or
/// its database is absent.
fn item_findings(
    env: &Env<'_>,
    metrics: &[Box<dyn Metric>],
    item: &GoldItem,
) -> Result<Vec<Finding>, String> {
    let Some(gold) = item.task.as_ref().and_then(|task| task.gold_statements()) else {
        return Ok(Vec::new());
    };
    let as_prediction = serde_json::to_string(&gold).map_err(|e| e.to_string())?;
    let mut found = Vec::new();
    for metric in metrics {
        let score = metric.score(env, item, Some(&as_prediction));
        match score.outcome {
            Outcome::Match | Outcome::Skipped => {}
            Outcome::Unavailable => {
                return Err(score.error.unwrap_or_else(|| {
                    format!("`{}` could not judge item {}", metric.name(), item.index)
                }))
            }
            outcome => found.push(Finding {
                index: item.index,
                db_id: item.db_id.clone(),
                kind: Kind::GoldSelfCheck,
                evidence: format!(
                    "as a prediction, `{}` scores it {}: {}",
                    metric.name(),
                    outcome.as_str(),
                    score.error.as_deref().unwrap_or("no detail")
                ),
            }),
        }
    }
    Ok(found)
}
