//! The items a metric did not score (skipped, gold error or timeout, unavailable), counted and
//! named per system, metric and outcome with the first reason given, so a reader sees which
//! items every accuracy leaves out of its denominator and why.

use crate::metrics::Outcome;
use crate::score::evaluation::Evaluation;
use serde::Serialize;
use std::collections::BTreeMap;

/// One (system, metric, outcome) group of unscored items.
#[derive(Debug, Serialize)]
pub struct UnscoredRow {
    /// System name.
    pub system: String,
    /// Metric name.
    pub metric: String,
    /// The outcome's JSONL name.
    pub outcome: &'static str,
    /// How many items.
    pub count: usize,
    /// Their 0-based indexes, the first `limit` of them, then how many more.
    pub items: String,
    /// The reason the first of them carries.
    pub reason: String,
}

/// Every group of unscored items, systems and metrics in evaluation order; at most `limit`
/// indexes are named per group.
pub fn unscored_rows(evaluation: &Evaluation, limit: usize) -> Vec<UnscoredRow> {
    let mut rows = Vec::new();
    for (s, system) in evaluation.systems.iter().enumerate() {
        for (m, metric) in evaluation.metrics.iter().enumerate() {
            let mut groups: BTreeMap<Outcome, (Vec<usize>, String)> = BTreeMap::new();
            for result in evaluation.system_results(s) {
                let score = &result.scores[m];
                if score.outcome.is_scored() {
                    continue;
                }
                let (items, reason) = groups.entry(score.outcome).or_default();
                if items.is_empty() {
                    reason.clone_from(&score.error.clone().unwrap_or_default());
                }
                items.push(result.index);
            }
            rows.extend(
                groups
                    .into_iter()
                    .map(|(outcome, (items, reason))| UnscoredRow {
                        system: system.name.clone(),
                        metric: metric.clone(),
                        outcome: outcome.as_str(),
                        count: items.len(),
                        items: named(&items, limit),
                        reason,
                    }),
            );
        }
    }
    rows
}

/// `items` joined, the first `limit` of them, then "… and N more".
fn named(items: &[usize], limit: usize) -> String {
    let shown: Vec<String> = items.iter().take(limit).map(usize::to_string).collect();
    match items.len().saturating_sub(limit) {
        0 => shown.join(", "),
        more => format!("{} … and {more} more", shown.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_are_named_up_to_the_limit() {
        assert_eq!(named(&[3, 7, 9], 5), "3, 7, 9");
        assert_eq!(named(&[3, 7, 9], 2), "3, 7 … and 1 more");
    }
}
