//! Per-item records: what the baseline stores and what analyses and the gate compare, one per
//! (system, item), with every metric's value (and sub-scores) and outcome.

use crate::metrics::{Score, PARTIAL_CREDIT_KEYS};
use crate::score::evaluation::Evaluation;
use crate::score::stability::Reasons;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One item's results for one system, as stored and as compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemRecord {
    /// Gold item index.
    pub index: usize,
    /// Difficulty label.
    pub difficulty: Option<String>,
    /// Metric values (`None`: not scored).
    pub metrics: BTreeMap<String, Option<f64>>,
    /// Outcome names per metric.
    pub outcome: BTreeMap<String, String>,
    /// The prediction's text, so a later run can show what changed; absent in baselines
    /// written before sqlgate stored it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prediction: Option<String>,
    /// Every reason the verdict could change in another run of the same prediction (an
    /// undetermined order at a LIMIT, a query near the time limit); absent when it could not,
    /// and in baselines written before sqlgate checked.
    #[serde(default, skip_serializing_if = "Reasons::is_empty")]
    pub unstable: Reasons,
}

/// Per-item records of every system of an evaluation, in item order.
pub fn records(evaluation: &Evaluation) -> Vec<(String, Vec<ItemRecord>)> {
    (0..evaluation.systems.len())
        .map(|s| {
            let items = evaluation
                .system_results(s)
                .iter()
                .map(|result| ItemRecord {
                    index: result.index,
                    difficulty: evaluation.dataset.items[result.index].difficulty.clone(),
                    metrics: evaluation
                        .metrics
                        .iter()
                        .zip(&result.scores)
                        .flat_map(|(m, score)| metric_values(m, score))
                        .collect(),
                    outcome: evaluation
                        .metrics
                        .iter()
                        .zip(&result.scores)
                        .map(|(m, score)| (m.clone(), score.outcome.as_str().to_string()))
                        .collect(),
                    prediction: evaluation.systems[s].predictions[result.index].clone(),
                    unstable: result.unstable,
                })
                .collect();
            (evaluation.systems[s].name.clone(), items)
        })
        .collect()
}

/// A metric's stored values: its headline value under its name, plus its continuous sub-scores
/// (SQLMorph's `ex`, `exp`, `exr`, `f1`) as `<metric>.<sub-score>`, so the gate can use them.
fn metric_values(metric: &str, score: &Score) -> Vec<(String, Option<f64>)> {
    let subs = PARTIAL_CREDIT_KEYS
        .iter()
        .filter_map(|sub| Some((format!("{metric}.{sub}"), Some(score.sub_score(sub)?))));
    std::iter::once((metric.to_string(), score.value))
        .chain(subs)
        .collect()
}
