//! The `evalbench` metric of `dataset.kind: evalbench` (issue 46): each item judged as Google's
//! EvalBench executes it (`dql` / `dml` / `ddl`) and its `exact_match` scorer scores it, on a
//! private copy of the item's SQLite database ([`crate::engine::evalbench`]). A fault of the
//! harness (a copy that could not be made) stops the run: it is never a verdict.

use super::{Env, Metric, Outcome, Score};
use crate::engine::evalbench::{judge, Verdict};
use crate::input::dataset::GoldItem;

/// EvalBench's exact match.
pub struct EvalBench;

impl Metric for EvalBench {
    fn name(&self) -> &'static str {
        "evalbench"
    }

    fn score(&self, env: &Env<'_>, item: &GoldItem, prediction: Option<&str>) -> Score {
        let Some(eval) = crate::input::evalbench::eval_item(item) else {
            return Score::unscored(Outcome::Skipped, "not an EvalBench item");
        };
        let (template, statements) = match super::livesql::statements_on(env, item, prediction) {
            Ok(job) => job,
            Err(score) => return score,
        };
        match judge(eval, &statements, template, &env.state_budget) {
            Ok(verdict) => score_of(&eval.instance_id, verdict),
            Err(fault) => {
                let reason = format!(
                    "`evalbench` could not judge item {} (`id` {}): {fault}",
                    item.index, eval.instance_id
                );
                env.stop_run(reason.clone());
                Score::unscored(Outcome::Unavailable, reason)
            }
        }
    }
}

/// The gate's score of a verdict; every one but a pass scores 0, as EvalBench's does (a gold
/// that fails after the prediction ran on the same database included: it counts against the
/// prediction, which may have caused it).
fn score_of(id: &str, verdict: Verdict) -> Score {
    let (outcome, message) = match verdict {
        Verdict::Pass => return Score::binary(true),
        Verdict::Differs(what) => (Outcome::Mismatch, what),
        Verdict::PredError(error) => (Outcome::PredError, error),
        Verdict::GoldError(error) => (
            Outcome::Mismatch,
            format!("the gold failed after the prediction ran on the same database: {error}"),
        ),
        Verdict::Stopped(why) => (Outcome::PredTimeout, why),
        Verdict::Empty => (
            Outcome::PredError,
            "the prediction holds no statement".into(),
        ),
    };
    Score::wrong(outcome, format!("{id}: {message}"))
}
