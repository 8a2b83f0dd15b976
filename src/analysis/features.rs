//! Per-feature cells: each gold item's SQL features ([`crate::sql::features`], read in the
//! dialect of the dataset's engine), and per system and feature the accuracy of every metric,
//! FP / FN against the reference, and the paired test against the baseline system (Holm-adjusted
//! across the system's features). One item counts in every cell of its features.

use crate::analysis::agreement::{Analysis, SystemRecords};
use crate::analysis::baseline::Baseline;
use crate::analysis::records::ItemRecord;
use crate::analysis::stats::{holm, mcnemar_exact, paired_bootstrap};
use crate::input::config::Config;
use crate::input::dataset::Dataset;
use crate::sql::features::{features, Feature};
use std::collections::{BTreeMap, BTreeSet};

/// Each gold item's features, by gold index (an item whose SQL cannot be read has none).
pub type ItemFeatures = Vec<BTreeSet<Feature>>;

/// The features of every gold item of `dataset`, read in the configured engine's dialect.
pub fn item_features(config: &Config, dataset: &Dataset) -> ItemFeatures {
    let dialect = crate::engine::registry::factory(&config.dataset.engine.kind).dialect();
    dataset
        .items
        .iter()
        .map(|item| features(&item.sql, dialect).unwrap_or_default())
        .collect()
}

/// The paired comparison of one feature cell with the baseline system.
#[derive(Debug, Clone, PartialEq)]
pub struct PairedCell {
    /// The baseline system compared with.
    pub baseline: String,
    /// Items scored in both runs.
    pub items: usize,
    /// Candidate minus baseline mean, in points.
    pub delta_points: f64,
    /// The baseline's mean over the paired items (a fraction).
    pub baseline_mean: f64,
    /// The candidate's mean over the paired items (a fraction).
    pub candidate_mean: f64,
    /// Items worse in the candidate.
    pub regressed: usize,
    /// Items better in the candidate.
    pub fixed: usize,
    /// The test's p-value (exact McNemar for 0/1 values, else the paired bootstrap).
    pub p_value: Option<f64>,
    /// Holm-adjusted across the system's feature cells.
    pub p_adjusted: Option<f64>,
}

impl PairedCell {
    /// The change in points as the printed means make it, the rule of every cell a person
    /// reads ([`crate::analysis::stats::shown_delta`]).
    pub fn shown_delta(&self) -> f64 {
        crate::analysis::stats::shown_delta(self.baseline_mean, self.candidate_mean)
    }
}

/// One system's cell of one feature.
#[derive(Debug, Clone, PartialEq)]
pub struct FeatureCell {
    /// The feature.
    pub feature: Feature,
    /// Gold items with the feature.
    pub items: usize,
    /// Per metric: mean over the items it scored, and that count.
    pub accuracy: BTreeMap<String, (Option<f64>, usize)>,
    /// Per metric other than the reference: the FP and FN rates against it.
    pub false_rates: BTreeMap<String, (Option<f64>, Option<f64>)>,
    /// The gated metric against the baseline system, when there is one.
    pub paired: Option<PairedCell>,
}

/// Per current system, its feature cells (only features some item has).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FeatureTable {
    /// System name and cells, in [`Feature::ALL`] order.
    pub systems: Vec<(String, Vec<FeatureCell>)>,
}

/// Bootstrap resamples and seed, as the gate's.
const BOOTSTRAP: (usize, u64) = (2000, 0x5eed);

/// The feature table of the current systems of `current`.
pub fn analyse(
    config: &Config,
    current: &[SystemRecords],
    baseline: Option<&Baseline>,
    features: &ItemFeatures,
    metrics: &[String],
) -> FeatureTable {
    let present: Vec<Feature> = Feature::ALL
        .into_iter()
        .filter(|f| features.iter().any(|set| set.contains(f)))
        .collect();
    let names: Vec<String> = present.iter().map(|f| f.as_str().to_string()).collect();
    let reference = config.reference_metric();
    let systems = current
        .iter()
        .filter(|s| !s.from_baseline)
        .map(|system| {
            let expanded = by_feature(system, features);
            let analysis = Analysis::new(&[expanded], metrics, reference, &names);
            let against = config.gate.against.as_deref().unwrap_or(&system.name);
            let base = baseline.and_then(|b| Some((against, b.systems.get(against)?)));
            let mut cells: Vec<FeatureCell> = present
                .iter()
                .map(|&feature| {
                    let paired = base.map(|(name, records)| {
                        paired_cell(config, name, records, system, feature, features)
                    });
                    cell(&analysis, feature, metrics, reference, features, paired)
                })
                .collect();
            adjust(&mut cells);
            (system.name.clone(), cells)
        })
        .collect();
    FeatureTable { systems }
}

/// The system's records, one per (item, feature of the item), labelled with the feature in
/// place of the difficulty, so the accuracy analysis counts them per feature.
fn by_feature(system: &SystemRecords, features: &ItemFeatures) -> SystemRecords {
    let items = system
        .items
        .iter()
        .flat_map(|record| {
            let set = features.get(record.index).cloned().unwrap_or_default();
            set.into_iter().map(move |feature| ItemRecord {
                difficulty: Some(feature.as_str().to_string()),
                ..record.clone()
            })
        })
        .collect();
    SystemRecords {
        name: system.name.clone(),
        from_baseline: false,
        items,
    }
}

fn cell(
    analysis: &Analysis,
    feature: Feature,
    metrics: &[String],
    reference: &str,
    features: &ItemFeatures,
    paired: Option<PairedCell>,
) -> FeatureCell {
    let name = feature.as_str();
    let system = &analysis.systems[0];
    let ratio = |table: &crate::analysis::agreement::Table, metric: &str| {
        table.get(metric).and_then(|t| t.get(name)).copied()
    };
    let accuracy = metrics
        .iter()
        .map(|m| {
            let r = ratio(&system.accuracy, m);
            (
                m.clone(),
                (r.and_then(|r| r.value()), r.map_or(0, |r| r.count)),
            )
        })
        .collect();
    let false_rates = metrics
        .iter()
        .filter(|m| *m != reference)
        .map(|m| {
            let fp = ratio(&system.false_positives, m).and_then(|r| r.value());
            let fn_ = ratio(&system.false_negatives, m).and_then(|r| r.value());
            (m.clone(), (fp, fn_))
        })
        .collect();
    FeatureCell {
        feature,
        items: features.iter().filter(|s| s.contains(&feature)).count(),
        accuracy,
        false_rates,
        paired,
    }
}

/// The gated metric on the items of `feature` scored in both the baseline and this run.
fn paired_cell(
    config: &Config,
    baseline_name: &str,
    base: &[ItemRecord],
    system: &SystemRecords,
    feature: Feature,
    features: &ItemFeatures,
) -> PairedCell {
    let metric = config.gate_metric();
    let base_by_index: BTreeMap<usize, &ItemRecord> = base.iter().map(|r| (r.index, r)).collect();
    let pairs: Vec<(f64, f64)> = system
        .items
        .iter()
        .filter(|r| features.get(r.index).is_some_and(|s| s.contains(&feature)))
        .filter_map(|r| {
            let b = base_by_index
                .get(&r.index)?
                .metrics
                .get(metric)
                .copied()
                .flatten()?;
            Some((b, r.metrics.get(metric).copied().flatten()?))
        })
        .collect();
    let n = pairs.len();
    let fixed = pairs.iter().filter(|(b, c)| c > b).count();
    let regressed = pairs.iter().filter(|(b, c)| c < b).count();
    let mean = |values: &mut dyn Iterator<Item = f64>| values.sum::<f64>() / n.max(1) as f64;
    let baseline_mean = mean(&mut pairs.iter().map(|(b, _)| *b));
    let candidate_mean = mean(&mut pairs.iter().map(|(_, c)| *c));
    let delta = mean(&mut pairs.iter().map(|(b, c)| c - b));
    let binary = pairs
        .iter()
        .all(|(b, c)| [0.0, 1.0].contains(b) && [0.0, 1.0].contains(c));
    let p_value = match (n, binary) {
        (0, _) => None,
        (_, true) => Some(mcnemar_exact(fixed as u64, regressed as u64)),
        (_, false) => {
            let (b, c): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
            paired_bootstrap(&b, &c, BOOTSTRAP.0, BOOTSTRAP.1).map(|r| r.p_worse)
        }
    };
    PairedCell {
        baseline: baseline_name.to_string(),
        items: n,
        delta_points: 100.0 * delta,
        baseline_mean,
        candidate_mean,
        regressed,
        fixed,
        p_value,
        p_adjusted: None,
    }
}

/// Holm's correction across one system's feature cells.
fn adjust(cells: &mut [FeatureCell]) {
    let raw: Vec<f64> = cells
        .iter()
        .filter_map(|c| c.paired.as_ref()?.p_value)
        .collect();
    let mut adjusted = holm(&raw).into_iter();
    for paired in cells.iter_mut().filter_map(|c| c.paired.as_mut()) {
        if paired.p_value.is_some() {
            paired.p_adjusted = adjusted.next();
        }
    }
}
