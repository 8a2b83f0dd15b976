//! Continuous scores on failures (seed 003): for each continuous per-item score (QAS, Soft-F1,
//! SQLMorph's EXP / EXR / F1), its distribution over the items the reference metric marks wrong.
//! Two systems with the same accuracy differ when one's wrong answers are nearly right and the
//! other's are far off; the mean alone hides that, so the quartiles and a histogram come with it.

use crate::analysis::records::ItemRecord;
use crate::analysis::stats::five_numbers;
use crate::metrics::{continuous_scores, value_range};
use serde::Serialize;
use std::collections::BTreeMap;

/// Equal-width bins of a histogram, over the score's whole value range.
pub const HISTOGRAM_BINS: usize = 10;

/// Block characters of a text histogram, from the lowest non-empty bar to the tallest.
const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
/// The character of an empty bin (distinct from the lowest bar, which means "a few items").
const EMPTY_BAR: char = '·';

/// The distribution of one continuous score over the items the reference marks wrong.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailureScores {
    /// Items the reference scored wrong (value below 1) on which this score has a value.
    pub n: usize,
    /// Mean over those items.
    pub mean: f64,
    /// Smallest value.
    pub min: f64,
    /// First quartile (Hyndman-Fan type 8, see [`crate::analysis::stats::five_numbers`]).
    pub q1: f64,
    /// Median.
    pub median: f64,
    /// Third quartile.
    pub q3: f64,
    /// Largest value.
    pub max: f64,
    /// Item counts in equal-width bins.
    pub histogram: Histogram,
}

/// Item counts in [`HISTOGRAM_BINS`] equal-width bins from `lower` to `upper`: bin `i` holds
/// values in `[lower + i w, lower + (i + 1) w)`, the last bin also holds `upper`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Histogram {
    /// Lower edge of the first bin.
    pub lower: f64,
    /// Upper edge of the last bin.
    pub upper: f64,
    /// Items per bin.
    pub counts: Vec<usize>,
}

impl Histogram {
    /// Counts `values` (each inside `[lower, upper]`) into the bins.
    fn of(values: &[f64], lower: f64, upper: f64) -> Histogram {
        let mut counts = vec![0; HISTOGRAM_BINS];
        let bins = HISTOGRAM_BINS as f64;
        for value in values {
            // Multiplying by the bin count, not dividing by the width, keeps 0.3 in bin 3.
            let bin = ((value - lower) * bins / (upper - lower)).floor().max(0.0) as usize;
            counts[bin.min(HISTOGRAM_BINS - 1)] += 1;
        }
        Histogram {
            lower,
            upper,
            counts,
        }
    }

    /// One character per bin: a block whose height is the bin's count relative to the fullest
    /// bin (any non-empty bin gets at least the lowest block), `·` for an empty bin.
    pub fn sparkline(&self) -> String {
        let tallest = self.counts.iter().copied().max().unwrap_or(0);
        self.counts
            .iter()
            .map(|&count| {
                if count == 0 {
                    return EMPTY_BAR;
                }
                let level = (count * BARS.len()).div_ceil(tallest);
                BARS[level.clamp(1, BARS.len()) - 1]
            })
            .collect()
    }
}

impl FailureScores {
    /// The distribution of `values` over the score's value range; `None` without values.
    pub fn of(values: &[f64], range: (f64, f64)) -> Option<FailureScores> {
        let [min, q1, median, q3, max] = five_numbers(values)?;
        let clamped: Vec<f64> = values.iter().map(|v| v.clamp(range.0, range.1)).collect();
        Some(FailureScores {
            n: values.len(),
            mean: values.iter().sum::<f64>() / values.len() as f64,
            min,
            q1,
            median,
            q3,
            max,
            histogram: Histogram::of(&clamped, range.0, range.1),
        })
    }
}

/// Per continuous score of `metrics` (record key, see [`continuous_scores`]): its distribution
/// over the items whose `reference` value is below 1. Scores with no such item are left out.
pub fn failure_scores(
    items: &[ItemRecord],
    metrics: &[String],
    reference: &str,
) -> BTreeMap<String, FailureScores> {
    let wrong: Vec<&ItemRecord> = items
        .iter()
        .filter(|item| {
            item.metrics
                .get(reference)
                .copied()
                .flatten()
                .is_some_and(|v| v < 1.0)
        })
        .collect();
    let mut out = BTreeMap::new();
    for metric in metrics {
        let Some(range) = value_range(metric) else {
            continue;
        };
        for key in continuous_scores(metric) {
            let values: Vec<f64> = wrong
                .iter()
                .filter_map(|item| item.metrics.get(&key).copied().flatten())
                .collect();
            if let Some(scores) = FailureScores::of(&values, (*range.start(), *range.end())) {
                out.insert(key, scores);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(index: usize, values: &[(&str, Option<f64>)]) -> ItemRecord {
        ItemRecord {
            index,
            difficulty: None,
            metrics: values.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            outcome: BTreeMap::new(),
            prediction: None,
            unstable: crate::score::stability::Reasons::NONE,
        }
    }

    #[test]
    fn only_items_the_reference_marks_wrong_count() {
        let items = [
            item(0, &[("ex", Some(1.0)), ("soft_f1", Some(1.0))]),
            item(1, &[("ex", Some(0.0)), ("soft_f1", Some(0.5))]),
            item(2, &[("ex", Some(0.0)), ("soft_f1", Some(0.0))]),
            item(3, &[("ex", None), ("soft_f1", Some(0.9))]),
            item(4, &[("ex", Some(0.0)), ("soft_f1", None)]),
            item(5, &[("ex", Some(0.0)), ("soft_f1", Some(0.95))]),
        ];
        let metrics = ["ex".to_string(), "soft_f1".to_string()];
        let scores = failure_scores(&items, &metrics, "ex");
        assert_eq!(scores.keys().collect::<Vec<_>>(), ["soft_f1"]);
        let soft = &scores["soft_f1"];
        assert_eq!(soft.n, 3);
        assert!((soft.mean - 1.45 / 3.0).abs() < 1e-12);
        assert_eq!((soft.min, soft.median, soft.max), (0.0, 0.5, 0.95));
        assert_eq!(soft.histogram.counts, [1, 0, 0, 0, 0, 1, 0, 0, 0, 1]);
        assert_eq!(soft.histogram.sparkline(), "█····█···█");
    }

    #[test]
    fn sqlmorph_cell_scores_and_qas_range_are_used() {
        let items = [item(
            0,
            &[
                ("ts", Some(0.0)),
                ("qas", Some(-0.5)),
                ("exact_column_and_partial_cell.ex", Some(0.0)),
                ("exact_column_and_partial_cell.f1", Some(0.4)),
                ("exact_column_and_partial_cell.exp", Some(0.25)),
                ("exact_column_and_partial_cell.exr", Some(1.0)),
                ("execution_accuracy.ex", Some(0.0)),
            ],
        )];
        let metrics: Vec<String> = ["ts", "qas", "exact_column_and_partial_cell"]
            .map(String::from)
            .into();
        let scores = failure_scores(&items, &metrics, "ts");
        let keys: Vec<&str> = scores.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "exact_column_and_partial_cell.exp",
                "exact_column_and_partial_cell.exr",
                "exact_column_and_partial_cell.f1",
                "qas"
            ]
        );
        let qas = &scores["qas"].histogram;
        assert_eq!((qas.lower, qas.upper), (-1.0, 1.0));
        assert_eq!(qas.counts[2], 1, "-0.5 is in [-0.6, -0.4)");
        assert_eq!(
            scores["exact_column_and_partial_cell.exr"].histogram.counts[9], 1,
            "the upper edge is in the last bin"
        );
        assert!(continuous_scores("execution_accuracy").is_empty());
        assert!(continuous_scores("rves").is_empty() && continuous_scores("ex").is_empty());
    }

    #[test]
    fn sparkline_scales_to_the_fullest_bin() {
        let histogram = Histogram {
            lower: 0.0,
            upper: 1.0,
            counts: vec![0, 1, 2, 4, 8, 16, 100, 0, 50, 99],
        };
        assert_eq!(histogram.sparkline(), "·▁▁▁▁▂█·▄█");
        let edges = Histogram::of(&[0.0, 0.1, 0.3, 0.7, 0.9, 1.0], 0.0, 1.0);
        assert_eq!(edges.counts, [1, 1, 0, 1, 0, 0, 0, 1, 0, 2]);
    }
}
