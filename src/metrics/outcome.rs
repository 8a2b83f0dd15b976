//! How an item ended for one metric: the outcomes JSONL, baselines and reports name.

use serde::Serialize;

/// How an item ended for one metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The prediction is correct.
    Match,
    /// The prediction ran (or parsed) and is wrong.
    Mismatch,
    /// The prediction failed (SQL error, refused, result too large).
    PredError,
    /// The prediction hit the time limit.
    PredTimeout,
    /// The gold query failed: a dataset defect, excluded from denominators.
    GoldError,
    /// The gold query hit the time limit: not charged to the prediction, excluded from
    /// denominators.
    GoldTimeout,
    /// No prediction was given (scored wrong).
    Missing,
    /// The raw model output held no SQL `extract` could find (scored wrong, counted apart from
    /// SQL errors).
    ExtractionFailed,
    /// The item's database is absent (excluded from denominators).
    Skipped,
    /// The metric cannot be computed here: the service it needs (an embedding or judge endpoint)
    /// is not configured or did not answer. Excluded from denominators and reported with the
    /// reason, never approximated.
    Unavailable,
}

impl Outcome {
    /// All outcomes, in report order.
    pub const ALL: [Outcome; 10] = [
        Outcome::Match,
        Outcome::Mismatch,
        Outcome::PredError,
        Outcome::PredTimeout,
        Outcome::GoldError,
        Outcome::GoldTimeout,
        Outcome::Missing,
        Outcome::ExtractionFailed,
        Outcome::Skipped,
        Outcome::Unavailable,
    ];

    /// The outcome's name as written in JSONL.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Match => "match",
            Outcome::Mismatch => "mismatch",
            Outcome::PredError => "pred_error",
            Outcome::PredTimeout => "pred_timeout",
            Outcome::GoldError => "gold_error",
            Outcome::GoldTimeout => "gold_timeout",
            Outcome::Missing => "missing",
            Outcome::ExtractionFailed => "extraction_failed",
            Outcome::Skipped => "skipped",
            Outcome::Unavailable => "unavailable",
        }
    }

    /// The outcome a JSONL name stands for.
    pub fn parse(name: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.as_str() == name)
    }

    /// Whether the item counts in this metric's denominator.
    pub fn is_scored(self) -> bool {
        !matches!(
            self,
            Outcome::GoldError | Outcome::GoldTimeout | Outcome::Skipped | Outcome::Unavailable
        )
    }

    /// Whether the gold query failed or timed out.
    pub fn is_gold_failure(self) -> bool {
        matches!(self, Outcome::GoldError | Outcome::GoldTimeout)
    }
}
