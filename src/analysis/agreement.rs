//! Analyses over per-item records (current run and baseline alike): accuracy per metric and
//! difficulty, false positives / negatives against the reference metric, their mean / std / max
//! across systems, and Kendall tau-b of each metric against the reference across systems
//! (seed 000, Tables 1-3).

use crate::analysis::failures::{failure_scores, FailureScores};
use crate::analysis::records::ItemRecord;
use crate::analysis::stats::{kendall_tau_b, mean_std_max};
use crate::metrics::PARTIAL_CREDIT_KEYS;
use std::collections::BTreeMap;

/// One system's records and where they come from.
#[derive(Debug, Clone)]
pub struct SystemRecords {
    /// System name.
    pub name: String,
    /// True for leaderboard entries that only exist in the baseline.
    pub from_baseline: bool,
    /// Per-item records.
    pub items: Vec<ItemRecord>,
}

/// A count over a denominator.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Ratio {
    /// Sum of values (or count of events).
    pub total: f64,
    /// Denominator.
    pub count: usize,
}

impl Ratio {
    /// `total / count`, `None` when nothing was counted.
    pub fn value(&self) -> Option<f64> {
        (self.count > 0).then(|| self.total / self.count as f64)
    }

    fn add(&mut self, value: f64) {
        self.total += value;
        self.count += 1;
    }
}

/// Metric -> difficulty (and `all`) -> ratio.
pub type Table = BTreeMap<String, BTreeMap<String, Ratio>>;

/// The analyses of one system.
#[derive(Debug, Clone)]
pub struct SystemAnalysis {
    /// System name.
    pub name: String,
    /// Leaderboard entry from the baseline only.
    pub from_baseline: bool,
    /// Accuracy (mean value over scored items).
    pub accuracy: Table,
    /// False-positive rate against the reference.
    pub false_positives: Table,
    /// False-negative rate against the reference.
    pub false_negatives: Table,
    /// Means of continuous sub-scores (SQLMorph's EX, EXP, EXR, F1), keyed `<metric>.<sub>`.
    pub sub_scores: Table,
    /// Per metric other than the reference: its accuracy on the items it and the reference
    /// both scored (the count is those items, the denominator of FP / FN too).
    pub common_accuracy: Table,
    /// Per metric other than the reference: the reference's accuracy on those same items.
    pub common_reference: Table,
    /// Per continuous score: its distribution over the items the reference marks wrong.
    pub failure_scores: BTreeMap<String, FailureScores>,
}

/// Mean, population std and max of a rate across systems.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// Mean.
    pub mean: f64,
    /// Population standard deviation.
    pub std: f64,
    /// Maximum.
    pub max: f64,
}

/// A metric's overall accuracy and rank in the leaderboard. The reference's is over the items
/// it scored; any other metric's over the items it and the reference both scored, so ranks
/// compare like with like.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct MetricStanding {
    /// Overall accuracy.
    pub accuracy: Option<f64>,
    /// Items the accuracy is computed on.
    pub items: usize,
    /// 1-based rank among the systems (ties share a rank).
    pub rank: Option<usize>,
}

/// One leaderboard row.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LeaderboardRow {
    /// Rank by the reference metric.
    pub rank: Option<usize>,
    /// System name.
    pub system: String,
    /// Only in the baseline (not scored in this run).
    pub from_baseline: bool,
    /// Every metric's standing, in report order.
    pub metrics: BTreeMap<String, MetricStanding>,
    /// Per continuous score: its distribution over the items the reference marks wrong.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub failure_scores: BTreeMap<String, FailureScores>,
}

/// All analyses of a run.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// The reference metric.
    pub reference: String,
    /// Metrics in report order.
    pub metrics: Vec<String>,
    /// Difficulty labels in report order, then `all`.
    pub difficulties: Vec<String>,
    /// Per system: current systems first, then baseline-only ones.
    pub systems: Vec<SystemAnalysis>,
    /// Metric -> difficulty -> spread of FP rates across systems.
    pub false_positive_spread: BTreeMap<String, BTreeMap<String, Spread>>,
    /// Metric -> difficulty -> spread of FN rates across systems.
    pub false_negative_spread: BTreeMap<String, BTreeMap<String, Spread>>,
    /// Metric -> difficulty -> Kendall tau-b against the reference across systems.
    pub kendall_tau: BTreeMap<String, BTreeMap<String, Option<f64>>>,
}

impl Analysis {
    /// Analyses `systems` for `metrics` against `reference`; `difficulties` gives the label order.
    pub fn new(
        systems: &[SystemRecords],
        metrics: &[String],
        reference: &str,
        difficulties: &[String],
    ) -> Analysis {
        let analyses: Vec<SystemAnalysis> = systems
            .iter()
            .map(|s| analyse_system(s, metrics, reference))
            .collect();
        let compared: Vec<&String> = metrics.iter().filter(|m| *m != reference).collect();
        let spread = |pick: fn(&SystemAnalysis) -> &Table| {
            let mut out: BTreeMap<String, BTreeMap<String, Spread>> = BTreeMap::new();
            for metric in &compared {
                for difficulty in difficulties {
                    let rates: Vec<f64> = analyses
                        .iter()
                        .filter_map(|a| pick(a).get(*metric)?.get(difficulty)?.value())
                        .collect();
                    if let Some((mean, std, max)) = mean_std_max(&rates) {
                        out.entry(metric.to_string())
                            .or_default()
                            .insert(difficulty.clone(), Spread { mean, std, max });
                    }
                }
            }
            out
        };
        let false_positive_spread = spread(|a| &a.false_positives);
        let false_negative_spread = spread(|a| &a.false_negatives);
        let mut kendall_tau: BTreeMap<String, BTreeMap<String, Option<f64>>> = BTreeMap::new();
        for metric in &compared {
            for difficulty in difficulties {
                let pairs: Vec<(f64, f64)> = analyses
                    .iter()
                    .filter_map(|a| {
                        let m = a.common_accuracy.get(*metric)?.get(difficulty)?.value()?;
                        let r = a.common_reference.get(*metric)?.get(difficulty)?.value()?;
                        Some((m, r))
                    })
                    .collect();
                let (x, y): (Vec<f64>, Vec<f64>) = pairs.into_iter().unzip();
                kendall_tau
                    .entry(metric.to_string())
                    .or_default()
                    .insert(difficulty.clone(), kendall_tau_b(&x, &y));
            }
        }
        Analysis {
            reference: reference.to_string(),
            metrics: metrics.to_vec(),
            difficulties: difficulties.to_vec(),
            systems: analyses,
            false_positive_spread,
            false_negative_spread,
            kendall_tau,
        }
    }

    /// Systems ranked by the reference metric's overall accuracy (ties by name), with every
    /// metric's accuracy and rank (tied accuracies share a rank: 1, 2, 2, 4); a metric other
    /// than the reference is ranked on the items it and the reference both scored.
    pub fn leaderboard(&self) -> Vec<LeaderboardRow> {
        let overall = |system: &SystemAnalysis, metric: &str| {
            system.overall(metric, &self.reference)?.value()
        };
        let rank_of = |metric: &str, value: Option<f64>| {
            value.map(|v| {
                1 + self
                    .systems
                    .iter()
                    .filter(|s| overall(s, metric).is_some_and(|o| o > v))
                    .count()
            })
        };
        let mut rows: Vec<LeaderboardRow> = self
            .systems
            .iter()
            .map(|system| LeaderboardRow {
                rank: rank_of(&self.reference, overall(system, &self.reference)),
                system: system.name.clone(),
                from_baseline: system.from_baseline,
                metrics: self
                    .metrics
                    .iter()
                    .map(|m| {
                        let accuracy = overall(system, m);
                        (
                            m.clone(),
                            MetricStanding {
                                accuracy,
                                items: system.overall(m, &self.reference).map_or(0, |r| r.count),
                                rank: rank_of(m, accuracy),
                            },
                        )
                    })
                    .collect(),
                failure_scores: system.failure_scores.clone(),
            })
            .collect();
        rows.sort_by(|a, b| {
            a.rank
                .unwrap_or(usize::MAX)
                .cmp(&b.rank.unwrap_or(usize::MAX))
                .then(a.system.cmp(&b.system))
        });
        rows
    }

    /// The analysis of a system by name.
    pub fn system(&self, name: &str) -> Option<&SystemAnalysis> {
        self.systems.iter().find(|s| s.name == name)
    }
}

impl SystemAnalysis {
    /// A metric's overall ratio as cross-metric analyses use it: the reference's own, any other
    /// metric's on the items it and the reference both scored.
    pub fn overall(&self, metric: &str, reference: &str) -> Option<&Ratio> {
        let table = if metric == reference {
            &self.accuracy
        } else {
            &self.common_accuracy
        };
        table.get(metric)?.get("all")
    }
}

fn analyse_system(system: &SystemRecords, metrics: &[String], reference: &str) -> SystemAnalysis {
    let mut accuracy = Table::new();
    let mut false_positives = Table::new();
    let mut false_negatives = Table::new();
    let mut sub_scores = Table::new();
    let mut common_accuracy = Table::new();
    let mut common_reference = Table::new();
    for item in &system.items {
        let keys: Vec<&str> = item
            .difficulty
            .as_deref()
            .into_iter()
            .chain(["all"])
            .collect();
        let reference_value = item.metrics.get(reference).copied().flatten();
        for metric in metrics {
            add_sub_scores(&mut sub_scores, item, metric, &keys);
            let Some(value) = item.metrics.get(metric).copied().flatten() else {
                continue;
            };
            for key in &keys {
                accuracy
                    .entry(metric.clone())
                    .or_default()
                    .entry(key.to_string())
                    .or_default()
                    .add(value);
            }
            let Some(truth) = reference_value.filter(|_| metric != reference) else {
                continue;
            };
            let (says, truly) = (value >= 1.0, truth >= 1.0);
            for key in &keys {
                for (table, v) in [
                    (&mut common_accuracy, value),
                    (&mut common_reference, truth),
                ] {
                    table
                        .entry(metric.clone())
                        .or_default()
                        .entry(key.to_string())
                        .or_default()
                        .add(v);
                }
                let fp = false_positives
                    .entry(metric.clone())
                    .or_default()
                    .entry(key.to_string())
                    .or_default();
                fp.add(if says && !truly { 1.0 } else { 0.0 });
                let fn_ = false_negatives
                    .entry(metric.clone())
                    .or_default()
                    .entry(key.to_string())
                    .or_default();
                fn_.add(if !says && truly { 1.0 } else { 0.0 });
            }
        }
    }
    SystemAnalysis {
        name: system.name.clone(),
        from_baseline: system.from_baseline,
        accuracy,
        false_positives,
        false_negatives,
        sub_scores,
        common_accuracy,
        common_reference,
        failure_scores: failure_scores(&system.items, metrics, reference),
    }
}

/// Adds the item's `<metric>.<sub>` values to their difficulty cells.
fn add_sub_scores(table: &mut Table, item: &ItemRecord, metric: &str, difficulties: &[&str]) {
    for sub in PARTIAL_CREDIT_KEYS {
        let key = format!("{metric}.{sub}");
        let Some(value) = item.metrics.get(&key).copied().flatten() else {
            continue;
        };
        let cells = table.entry(key).or_default();
        for difficulty in difficulties {
            cells.entry(difficulty.to_string()).or_default().add(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(index: usize, difficulty: &str, ex: f64, esm: f64) -> ItemRecord {
        ItemRecord {
            index,
            difficulty: Some(difficulty.into()),
            metrics: [("ex".to_string(), Some(ex)), ("esm".to_string(), Some(esm))].into(),
            outcome: BTreeMap::new(),
            prediction: None,
            unstable: crate::score::stability::Reasons::NONE,
        }
    }

    #[test]
    fn false_positives_and_negatives_against_the_reference() {
        let items = vec![
            record(0, "easy", 1.0, 1.0),
            record(1, "easy", 1.0, 0.0),
            record(2, "hard", 0.0, 1.0),
            record(3, "hard", 0.0, 0.0),
        ];
        let systems = [SystemRecords {
            name: "a".into(),
            from_baseline: false,
            items,
        }];
        let metrics = ["ex".to_string(), "esm".to_string()];
        let difficulties = ["easy".to_string(), "hard".to_string(), "all".to_string()];
        let analysis = Analysis::new(&systems, &metrics, "ex", &difficulties);
        let a = analysis.system("a").unwrap();
        assert_eq!(a.false_positives["esm"]["hard"].value(), Some(0.5));
        assert_eq!(a.false_negatives["esm"]["easy"].value(), Some(0.5));
        assert_eq!(a.false_positives["esm"]["all"].value(), Some(0.25));
        assert_eq!(a.accuracy["ex"]["all"].value(), Some(0.5));
        assert!(!a.false_positives.contains_key("ex"));
    }

    #[test]
    fn kendall_tau_across_systems() {
        let make = |name: &str, ex: [f64; 2], esm: [f64; 2]| SystemRecords {
            name: name.into(),
            from_baseline: false,
            items: vec![
                record(0, "easy", ex[0], esm[0]),
                record(1, "easy", ex[1], esm[1]),
            ],
        };
        let systems = [
            make("a", [1.0, 1.0], [1.0, 0.0]),
            make("b", [1.0, 0.0], [0.0, 0.0]),
            make("c", [0.0, 0.0], [1.0, 1.0]),
        ];
        let metrics = ["ex".to_string(), "esm".to_string()];
        let analysis = Analysis::new(&systems, &metrics, "ex", &["all".to_string()]);
        // ex: a 1.0, b 0.5, c 0.0; esm: a 0.5, b 0.0, c 1.0 -> pairs (a,b) +, (a,c) -, (b,c) -.
        let tau = analysis.kendall_tau["esm"]["all"].unwrap();
        assert!((tau + 1.0 / 3.0).abs() < 1e-12, "{tau}");
        let board = analysis.leaderboard();
        let order: Vec<(&str, Option<usize>)> = board
            .iter()
            .map(|r| (r.system.as_str(), r.metrics["esm"].rank))
            .collect();
        assert_eq!(order, [("a", Some(2)), ("b", Some(3)), ("c", Some(1))]);
        assert_eq!(board[0].rank, Some(1));
        let spread = analysis.false_negative_spread["esm"]["all"];
        // FN (esm 0, ex 1): a 1/2, b 1/2, c 0.
        assert!(
            (spread.mean - 1.0 / 3.0).abs() < 1e-12 && spread.max == 0.5,
            "{spread:?}"
        );
    }
}
