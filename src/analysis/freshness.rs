//! The baseline's age: when it was made (its `created_unix`, else its commit's date as the trust
//! stage read it from git). The judge says it in the comment with its commit and holds it against
//! `gate.max_baseline_age_days` (`crate::judge::rules::baseline_age`).

use crate::analysis::baseline::Baseline;
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

/// When the baseline was made and how old it is: read once per run for the comment's note,
/// `gate.max_baseline_age_days` and the step outputs.
pub struct Age {
    /// When it was made (Unix seconds), when known.
    pub made: Option<i64>,
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
