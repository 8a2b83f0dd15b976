//! The baseline's age: when it was made (its `created_unix`, else its commit's date as the trust
//! stage read it from git), said in the comment with its commit, and held against
//! `gate.max_baseline_age_days`, which warns or fails the gate.

use crate::analysis::baseline::Baseline;
use crate::analysis::gate::GateResult;
use crate::input::config::{short_commit, Config};
use crate::input::policy::AgeAction;
use crate::input::trusted::Snapshot;

/// Seconds in a day.
const DAY: f64 = 86_400.0;

/// When the baseline was made: its own timestamp, else the committer date of its commit as the
/// trust stage found it (a shallow clone may not have it).
fn made_unix(baseline: &Baseline, snapshot: &Snapshot) -> Option<i64> {
    (baseline.created_unix).or_else(|| {
        snapshot
            .commit_times
            .get(baseline.commit.as_deref()?)
            .copied()
    })
}

/// When the baseline was made and how old it is: read once per run (its commit's date may take
/// a git call) for the comment's note, `gate.max_baseline_age_days` and the step outputs.
pub struct Age {
    /// When it was made, when known.
    made: Option<i64>,
    /// Its age in days at the time of the run, when known.
    pub days: Option<f64>,
}

impl Age {
    /// The age of `baseline` now.
    pub fn of(snapshot: &Snapshot, baseline: &Baseline) -> Age {
        let made = made_unix(baseline, snapshot);
        let days = made
            .zip(crate::analysis::baseline::now_unix())
            .map(|(made, now)| (now - made).max(0) as f64 / DAY);
        Age { made, days }
    }
}

/// Adds the baseline's commit and age to the notes, and the verdict of
/// `gate.max_baseline_age_days` (a note when it warns, a reason when it fails).
pub fn apply(config: &Config, baseline: Option<(&Baseline, &Age)>, gate: &mut GateResult) {
    let Some((baseline, age)) = baseline else {
        return;
    };
    let (made, age_days) = (age.made, age.days);
    let commit = baseline
        .commit
        .as_deref()
        .map_or("an unknown commit".to_string(), |c| {
            format!("commit {}", short_commit(c))
        });
    gate.notes.push(match (made, age_days) {
        (Some(made), Some(days)) => format!(
            "baseline: {commit}, made {} ({days:.1} days ago)",
            date_of(made)
        ),
        _ => format!(
            "baseline: {commit}, of unknown age (written by an older sqlgate, and git does not \
             know the commit's date)"
        ),
    });
    let Some(limit) = config.gate.max_baseline_age_days else {
        return;
    };
    let problem = match age_days {
        Some(days) if days > limit.days => format!(
            "the baseline is {days:.1} days old, older than `gate.max_baseline_age_days` ({}): \
             refresh it with `sqlgate baseline update` on the default branch",
            limit.days
        ),
        Some(_) => return,
        None => format!(
            "the baseline's age is unknown, so `gate.max_baseline_age_days` ({}) cannot be \
             checked: refresh it with `sqlgate baseline update` on the default branch",
            limit.days
        ),
    };
    match limit.action {
        AgeAction::Warn => gate.notes.push(format!("warning: {problem}")),
        AgeAction::Fail => {
            gate.reasons.push(problem);
            gate.passed = false;
        }
    }
}

/// The UTC date of a timestamp, as `2026-11-23`.
fn date_of(unix: i64) -> String {
    chrono::DateTime::from_timestamp(unix, 0)
        .map_or_else(|| unix.to_string(), |t| t.date_naive().to_string())
}
