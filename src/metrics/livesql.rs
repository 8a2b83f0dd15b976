//! The state-changing SQL metrics of `dataset.kind: livesql` and `bird-critic` (issue 46): an
//! item's predicted statements run on a private copy of its SQLite database, then its test cases
//! decide ([`crate::engine::livesql`]). One metric per evaluator profile, so a config that lists
//! two sees both verdicts side by side, each with its cells, and the items where they differ as
//! the one's FP / FN against the other (`reference`):
//! - `livesql`: the mini_dev `live_sql_bench_sqlite` evaluator, verdict for verdict, each item on
//!   a fresh copy;
//! - `livesql_sound`: the same checks without its semantic quirks;
//! - `bird_critic`: BIRD-Critic's SQLite evaluator;
//! - `bird_critic_sound`: the sound profile with BIRD-Critic's two rules (`conditions=` for every
//!   test, a passing `issue_sql` fails the item).
//!
//! They run on SQLite files (their kinds say so: `Kind::sqlite_only`, and refuse them in any
//! other kind); `bird_critic` and `bird_critic_sound` also on PostgreSQL and MariaDB / MySQL,
//! through the engine's judge (`Engine::live_judge`: one run per dataset run, each item on a clone
//! of its database, as BIRD-Critic's PostgreSQL or MySQL evaluator judges; under
//! `bird_critic_sound` the test cases on a new session and the gold they run on a twin clone).
//! Items are judged as the gate's workers take them, in parallel. A fault of the harness (a copy or clone that could not be made, a test
//! runner that could not start or be isolated) stops the run: it is never a verdict.

use super::{Env, Metric, Outcome, Score};
use crate::engine::livesql::{judge, Profile, Settings, Verdict};
use crate::input::config::Config;
use crate::input::dataset::GoldItem;
use std::path::{Path, PathBuf};

/// One profile's metric.
pub struct LiveSql(pub Profile);

impl Metric for LiveSql {
    fn name(&self) -> &'static str {
        match self.0 {
            Profile::Official => "livesql",
            Profile::Sound => "livesql_sound",
            Profile::BirdCritic => "bird_critic",
            Profile::BirdCriticSound => "bird_critic_sound",
        }
    }

    fn sound_profile_of(&self) -> Option<&'static str> {
        match self.0 {
            Profile::Sound => Some("livesql"),
            Profile::BirdCriticSound => Some("bird_critic"),
            Profile::Official | Profile::BirdCritic => None,
        }
    }

    /// The sound profile's `dataset.post_state`, which decides its verdicts as an item's
    /// `post_state` does.
    fn settings(&self, config: &Config) -> Vec<(&'static str, serde_json::Value)> {
        match (self.0, &config.dataset.post_state) {
            (Profile::Sound, Some(value)) => vec![("post_state", value.clone())],
            _ => Vec::new(),
        }
    }

    fn score(&self, env: &Env<'_>, item: &GoldItem, prediction: Option<&str>) -> Score {
        let Some(live) = crate::input::livesql::live_item(item) else {
            return Score::unscored(Outcome::Skipped, "not a LiveSQLBench item");
        };
        let (template, statements) = match statements_on(env, item, prediction) {
            Ok(job) => job,
            Err(score) => return score,
        };
        let settings = Settings {
            profile: self.0,
            budget: env.state_budget.clone(),
            python: PathBuf::from("python3"),
        };
        let judged = match env.executor.live_judge() {
            Some(server) => server.judge(live, Some(&statements), self.0),
            None => judge(live, Some(&statements), template, &settings),
        };
        match judged {
            Ok(verdict) => score_of(&live.instance_id, &verdict),
            Err(fault) => {
                let reason = format!(
                    "`{}` could not judge item {} (`{}`): {fault}",
                    self.name(),
                    item.index,
                    live.instance_id
                );
                env.stop_run(reason.clone());
                Score::unscored(Outcome::Unavailable, reason)
            }
        }
    }
}

/// What a metric of statement lists judges an item on: its database file (the template of the
/// item's copy) and the predicted statements (`format: livesql`); or the score of an item it
/// cannot judge: its database absent (skipped), no prediction (missing), or a prediction that is
/// not a statement list (wrong).
pub(crate) fn statements_on<'a>(
    env: &'a Env<'_>,
    item: &GoldItem,
    prediction: Option<&str>,
) -> Result<(&'a Path, Vec<String>), Score> {
    let Some(template) = env.dataset.database_path(item) else {
        return Err(Score::unscored(Outcome::Skipped, "database absent"));
    };
    let Some(prediction) = prediction else {
        return Err(Score::missing());
    };
    serde_json::from_str::<Vec<String>>(prediction)
        .map(|statements| (template, statements))
        .map_err(|_| {
            Score::wrong(
                Outcome::PredError,
                "not a statement list (`format: livesql`)",
            )
        })
}

/// The gate's verdict of the library's: a pass matches; a stopped item is a timeout; a statement
/// that failed is an error; a failed test case (or BIRD-Critic's passing `issue_sql`) is wrong,
/// with the message naming the item (`instance_id`) and saying which check failed.
fn score_of(instance_id: &str, verdict: &Verdict) -> Score {
    if verdict.success {
        return Score::binary(true);
    }
    let outcome = match verdict {
        Verdict { stopped: true, .. }
        | Verdict {
            timeout_error: true,
            ..
        } => Outcome::PredTimeout,
        Verdict {
            execution_error: true,
            ..
        } => Outcome::PredError,
        _ => Outcome::Mismatch,
    };
    let message = match verdict.issue_sql_passed {
        true => "the item's issue_sql passes its tests",
        false => &verdict.message,
    };
    Score::wrong(outcome, format!("{instance_id}: {message}"))
}
