//! The gate's ergonomic settings (issue 38): when the PR comment is posted (`comment`), how old
//! the baseline may be (`gate.max_baseline_age_days`) and which gains are flagged for review
//! (`gate.review_gain_points`). Each value is checked here, naming its key.

use serde::{Deserialize, Serialize};

/// When the sticky PR comment is posted. The step summary, the step outputs and the check are
/// written on every run whatever the policy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[serde(expecting = "`comment`: `always`, `on-change` or `on-failure`")]
pub enum CommentPolicy {
    /// Every run.
    #[default]
    Always,
    /// When the gate fails, an item regressed or was fixed, a gain is flagged, or nothing was
    /// compared; an earlier comment is kept up to date on the other runs.
    OnChange,
    /// When the gate fails; an earlier comment is kept up to date on the other runs.
    OnFailure,
}

impl CommentPolicy {
    /// The name as written in the config and the Action input.
    pub fn as_str(self) -> &'static str {
        match self {
            CommentPolicy::Always => "always",
            CommentPolicy::OnChange => "on-change",
            CommentPolicy::OnFailure => "on-failure",
        }
    }

    /// The policy a name stands for.
    pub fn parse(name: &str) -> Option<CommentPolicy> {
        [Self::Always, Self::OnChange, Self::OnFailure]
            .into_iter()
            .find(|p| p.as_str() == name)
    }
}

/// What a baseline older than the limit does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
#[serde(expecting = "`gate.max_baseline_age_days.action`: `warn` or `fail`")]
pub enum AgeAction {
    /// A note in the comment and a warning in the log; the gate still passes.
    #[default]
    Warn,
    /// The gate fails (and so does a baseline whose age is unknown).
    Fail,
}

/// `gate.max_baseline_age_days`: a number of days (warn), or `{ days: 30, action: fail }`.
/// A baseline records it in the full form (with the rest of the gate section).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BaselineAge {
    /// The oldest tolerated baseline, in days.
    pub days: f64,
    /// What an older one does.
    pub action: AgeAction,
}

impl<'de> Deserialize<'de> for BaselineAge {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        #[serde(
            expecting = "`gate.max_baseline_age_days`: a number of days, or a map such as `{ days: 30, action: fail }`"
        )]
        struct Full {
            days: f64,
            #[serde(default)]
            action: AgeAction,
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        #[serde(
            expecting = "`gate.max_baseline_age_days`: a number of days, or a map such as `{ days: 30, action: fail }` (action `warn` or `fail`)"
        )]
        enum Form {
            Days(f64),
            Full(Full),
        }
        Ok(match Form::deserialize(d)? {
            Form::Days(days) => BaselineAge {
                days,
                action: AgeAction::Warn,
            },
            Form::Full(full) => BaselineAge {
                days: full.days,
                action: full.action,
            },
        })
    }
}

/// Checks the gate's ergonomic settings; the error names the key.
pub fn check(age: Option<&BaselineAge>, review_gain_points: Option<f64>) -> Result<(), String> {
    if let Some(age) = age.filter(|a| !(a.days.is_finite() && a.days > 0.0)) {
        return Err(format!(
            "`gate.max_baseline_age_days` must be a positive number of days, not {}",
            age.days
        ));
    }
    if let Some(points) = review_gain_points.filter(|p| !(p.is_finite() && *p >= 0.0)) {
        return Err(format!(
            "`gate.review_gain_points` must be a non-negative number of points, not {points}"
        ));
    }
    Ok(())
}
