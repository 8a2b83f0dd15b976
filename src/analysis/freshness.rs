//! The baseline's age: when it was made (its `created_unix`, else its commit's date as git
//! knows it). The judge says it in the comment with its commit and holds it against
//! `gate.max_baseline_age_days` (`crate::judge::rules::baseline_age`).

use crate::analysis::baseline::Baseline;
use crate::input::config::Config;
use std::path::Path;

/// Seconds in a day.
const DAY: f64 = 86_400.0;

/// When the baseline was made: its own timestamp, else the committer date of its commit in the
/// repository holding `folder` (a shallow clone may not have it).
fn made_unix(baseline: &Baseline, folder: &Path) -> Option<i64> {
    baseline
        .created_unix
        .or_else(|| commit_time(baseline.commit.as_deref()?, folder))
}

/// The committer date of `commit`, when it is a commit id git knows.
fn commit_time(commit: &str, folder: &Path) -> Option<i64> {
    if commit.is_empty() || !commit.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let output = std::process::Command::new("git")
        .arg("-C")
        .arg(folder)
        .args([
            "show",
            "-s",
            "--format=%ct",
            &format!("{commit}^{{commit}}"),
        ])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    output.status.success().then(|| text.trim().parse().ok())?
}

/// When the baseline was made and how old it is: read once per run (its commit's date may take
/// a git call) for the comment's note, `gate.max_baseline_age_days` and the step outputs.
pub struct Age {
    /// When it was made (Unix seconds), when known.
    pub made: Option<i64>,
    /// Its age in days at the time of the run, when known.
    pub days: Option<f64>,
}

impl Age {
    /// The age of `baseline` now.
    pub fn of(config: &Config, baseline: &Baseline) -> Age {
        let made = made_unix(baseline, &config.base_dir);
        let days = made
            .zip(crate::analysis::baseline::now_unix())
            .map(|(made, now)| (now - made).max(0) as f64 / DAY);
        Age { made, days }
    }
}
