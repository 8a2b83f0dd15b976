//! The baseline's age: its commit and when it was made, said in the comment, and held against
//! `gate.max_baseline_age_days`, which warns or fails the gate.

use crate::analysis::baseline::Baseline;
use crate::analysis::freshness::Age;
use crate::input::config::short_commit;
use crate::input::policy::{AgeAction, BaselineAge as AgeLimit};
use crate::judge::{Context, Findings, GateRule, Note, NoteSection};

/// The baseline's commit and age, and `gate.max_baseline_age_days`.
pub struct BaselineAge;

impl GateRule for BaselineAge {
    fn judge(&self, context: &Context<'_>) -> Findings {
        let (Some(baseline), Some(age)) = (context.stored_baseline(), context.age) else {
            return Findings::default();
        };
        let mut findings = Findings::default();
        let note = |text: String| Note::new(NoteSection::Review, text);
        findings.notes.push(note(made_note(baseline, age)));
        let Some(limit) = &context.gate.max_baseline_age_days else {
            return findings;
        };
        let Some(problem) = too_old(age, limit) else {
            return findings;
        };
        match limit.action {
            AgeAction::Warn => findings.notes.push(note(format!("warning: {problem}"))),
            AgeAction::Fail => findings.failures.push(problem),
        }
        findings
    }
}

/// `baseline: commit abc1234, made 2026-11-23 (3.1 days ago)`, or of unknown age.
fn made_note(baseline: &Baseline, age: &Age) -> String {
    let commit = baseline
        .commit
        .as_deref()
        .map_or("an unknown commit".to_string(), |c| {
            format!("commit {}", short_commit(c))
        });
    match (age.made, age.days) {
        (Some(made), Some(days)) => format!(
            "baseline: {commit}, made {} ({days:.1} days ago)",
            date_of(made)
        ),
        _ => format!(
            "baseline: {commit}, of unknown age (written by an older sqlgate, and git does not \
             know the commit's date)"
        ),
    }
}

/// What is wrong with the baseline's age under `limit`: older than allowed, or unknown.
fn too_old(age: &Age, limit: &AgeLimit) -> Option<String> {
    match age.days {
        Some(days) if days > limit.days => Some(format!(
            "the baseline is {days:.1} days old, older than `gate.max_baseline_age_days` ({}): \
             refresh it with `sqlgate baseline update` on the default branch",
            limit.days
        )),
        Some(_) => None,
        None => Some(format!(
            "the baseline's age is unknown, so `gate.max_baseline_age_days` ({}) cannot be \
             checked: refresh it with `sqlgate baseline update` on the default branch",
            limit.days
        )),
    }
}

/// The UTC date of a timestamp, as `2026-11-23`.
fn date_of(unix: i64) -> String {
    chrono::DateTime::from_timestamp(unix, 0)
        .map_or_else(|| unix.to_string(), |t| t.date_naive().to_string())
}
