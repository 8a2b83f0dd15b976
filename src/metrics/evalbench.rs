//! The metrics of `dataset.kind: evalbench` (issue 46): each item judged as Google's EvalBench
//! executes it (`dql` / `dml` / `ddl`) and its `exact_match` scorer scores it, on private copies
//! of the item's SQLite database ([`crate::engine::evalbench`]):
//! - `evalbench`: EvalBench's order, verdict for verdict: the prediction, then the gold, on one
//!   copy (so what the prediction leaves can decide the gold's answer);
//! - `evalbench_sound`: each side on a copy of its own, the profile a gate can trust (red team
//!   round 25).
//!
//! A fault of the harness (a copy that could not be made) stops the run: it is never a verdict.

use super::{Env, Metric, Outcome, Score};
use crate::engine::evalbench::{judge, Sides, Verdict};
use crate::input::dataset::GoldItem;

/// EvalBench's exact match, with the two sides where `Sides` puts them.
pub struct EvalBench(pub Sides);

impl Metric for EvalBench {
    fn name(&self) -> &'static str {
        match self.0 {
            Sides::Shared => "evalbench",
            Sides::Apart => "evalbench_sound",
        }
    }

    fn sound_profile_of(&self) -> Option<&'static str> {
        (self.0 == Sides::Apart).then_some("evalbench")
    }

    fn score(&self, env: &Env<'_>, item: &GoldItem, prediction: Option<&str>) -> Score {
        let Some(eval) = crate::input::evalbench::eval_item(item) else {
            return Score::unscored(Outcome::Skipped, "not an EvalBench item");
        };
        let (template, statements) = match super::livesql::statements_on(env, item, prediction) {
            Ok(job) => job,
            Err(score) => return score,
        };
        match judge(eval, &statements, template, &env.state_budget, self.0) {
            Ok(verdict) => score_of(&eval.instance_id, verdict, self.0),
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

/// The gate's score of a verdict; every one but a pass scores 0, as EvalBench's does. A gold
/// that fails after the prediction ran on the same database (`Sides::Shared`) counts against
/// the prediction, which may have caused it; one that fails on its own copy (`Sides::Apart`) is
/// the dataset's defect, a gold error as in every other metric.
fn score_of(id: &str, verdict: Verdict, sides: Sides) -> Score {
    let (outcome, message) = match verdict {
        Verdict::Pass => return Score::binary(true),
        Verdict::Differs(what) => (Outcome::Mismatch, what),
        Verdict::PredError(error) => (Outcome::PredError, error),
        Verdict::GoldError(error) if sides == Sides::Apart => {
            let reason = format!("{id}: the gold failed on its own copy: {error}");
            return Score::unscored(Outcome::GoldError, reason);
        }
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
