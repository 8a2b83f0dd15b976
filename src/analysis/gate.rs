//! The gate: each candidate system against its baseline system on the same items. A cell (all
//! items, or one difficulty) fails when its drop exceeds the configured points and, when a
//! significance test is configured, the drop is significant after Holm's correction across the
//! cells; any `must_pass` item that regresses fails the gate too.

use crate::analysis::agreement::SystemRecords;
use crate::analysis::baseline::Baseline;
use crate::analysis::features::ItemFeatures;
use crate::analysis::records::ItemRecord;
use crate::analysis::stats::{holm, mcnemar_exact, paired_bootstrap};
use crate::input::config::{Config, SignificanceTest};
use crate::input::predictions::could_name;
use std::collections::BTreeMap;

/// The prefix of a `gate.per_feature` cell's name (`feature:window`).
pub const FEATURE_CELL: &str = "feature:";

/// Bootstrap resamples for continuous metrics.
const BOOTSTRAP_RESAMPLES: usize = 2000;
/// Fixed seed, so the gate's verdict is reproducible.
const BOOTSTRAP_SEED: u64 = 0x5eed;

/// One gated cell.
#[derive(Debug, Clone, PartialEq)]
pub struct CellTest {
    /// `all` or a difficulty label.
    pub difficulty: String,
    /// Largest tolerated drop in points.
    pub threshold: f64,
    /// Items scored in both runs.
    pub items: usize,
    /// Baseline accuracy on those items.
    pub baseline_accuracy: f64,
    /// Candidate accuracy on those items.
    pub candidate_accuracy: f64,
    /// Candidate minus baseline, in points.
    pub delta_points: f64,
    /// Items better in the candidate.
    pub fixed: usize,
    /// Items worse in the candidate.
    pub regressed: usize,
    /// Raw p-value of the paired test, when one is configured.
    pub p_value: Option<f64>,
    /// Holm-adjusted p-value.
    pub p_adjusted: Option<f64>,
    /// The paired test that gave the p-value (`McNemar` or `bootstrap`), when one ran.
    pub test: Option<&'static str>,
    /// The significance level the adjusted p-value is held against, when one is configured.
    pub alpha: Option<f64>,
    /// Most net regressed items (regressed minus fixed) tolerated whatever the test says
    /// (`gate.max_regressed_items`; 0 by default in a cell whose allowed drop is 0).
    pub max_net_regressed: Option<usize>,
    /// Whether this cell fails the gate.
    pub failed: bool,
}

/// A candidate system compared with its baseline system.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Candidate system.
    pub candidate: String,
    /// Baseline system it is compared with.
    pub baseline: String,
    /// Gated metric.
    pub metric: String,
    /// Gated cells, `all` first.
    pub cells: Vec<CellTest>,
    /// Items that got worse.
    pub regressed: Vec<usize>,
    /// Items that got better.
    pub fixed: Vec<usize>,
    /// `must_pass` items that got worse.
    pub must_pass_regressions: Vec<usize>,
    /// Items that got worse but are accepted by `gate.accept`: left out of every cell.
    pub accepted: Vec<usize>,
}

/// The gate's verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct GateResult {
    /// True when nothing failed.
    pub passed: bool,
    /// Why it failed, one line each.
    pub reasons: Vec<String>,
    /// What the reader should know (e.g. no baseline for a system).
    pub notes: Vec<String>,
    /// Per candidate system.
    pub comparisons: Vec<Comparison>,
}

/// Applies the configured gate to the current systems against the baseline, without feature
/// cells.
pub fn evaluate(
    config: &Config,
    current: &[SystemRecords],
    baseline: Option<&Baseline>,
) -> GateResult {
    evaluate_with_features(config, current, baseline, &Vec::new())
}

/// Applies the configured gate, with the `gate.per_feature` cells over each gold item's
/// features (`features[index]`).
pub fn evaluate_with_features(
    config: &Config,
    current: &[SystemRecords],
    baseline: Option<&Baseline>,
    features: &ItemFeatures,
) -> GateResult {
    let metric = config.gate_metric().to_string();
    let mut result = GateResult {
        passed: true,
        reasons: Vec::new(),
        notes: Vec::new(),
        comparisons: Vec::new(),
    };
    let Some(baseline) = baseline else {
        result.notes.push(match &config.baseline {
            Some(section) => format!(
                "first run: no baseline at {} yet (`baseline.required: false`), nothing compared",
                section.path.display()
            ),
            None => "not gated: no baseline configured (`baseline.path`), nothing compared".into(),
        });
        return result;
    };
    for system in current.iter().filter(|s| !s.from_baseline) {
        let against = config
            .gate
            .against
            .clone()
            .unwrap_or_else(|| system.name.clone());
        let Some(base_items) = baseline.systems.get(&against) else {
            result.reasons.push(format!(
                "{}: the baseline has no system `{against}` to compare it with, so it cannot be \
                 gated; name a baseline system in `gate.against`, or add this system to the \
                 baseline on the base branch first",
                system.name
            ));
            continue;
        };
        let comparison = compare(config, (&metric, features), system, &against, base_items);
        result.reasons.extend(unmeasured(&comparison, system));
        for cell in comparison.cells.iter().filter(|c| c.failed) {
            result.reasons.push(describe_failure(&comparison, cell));
        }
        result.notes.extend(accepted_note(config, &comparison));
        if !comparison.must_pass_regressions.is_empty() {
            result.reasons.push(format!(
                "{}: must-pass items regressed: {:?}",
                comparison.candidate, comparison.must_pass_regressions
            ));
        }
        result.comparisons.push(comparison);
    }
    result
        .reasons
        .extend(unmeasured_systems(config, current, baseline));
    if result.comparisons.is_empty() && result.reasons.is_empty() {
        result.reasons.push(format!(
            "no system was compared with the baseline (systems in the baseline: {}): the gate \
             measured nothing",
            baseline
                .systems
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    result.passed = result.reasons.is_empty();
    result
}

/// The baseline systems this config's predictions could produce but this run did not measure
/// (a renamed or deleted file under a glob): each fails the gate, naming it.
fn unmeasured_systems(
    config: &Config,
    current: &[SystemRecords],
    baseline: &Baseline,
) -> Vec<String> {
    let measured = |name: &str| current.iter().any(|s| !s.from_baseline && s.name == name);
    baseline
        .systems
        .keys()
        .filter(|name| !measured(name))
        .filter(|name| config.predictions.iter().any(|spec| could_name(spec, name)))
        .map(|name| {
            format!(
                "{name}: this baseline system was not measured (no predictions of that name in \
                 this run); every system of the baseline must be measured, so remove it from \
                 the baseline on the base branch first"
            )
        })
        .collect()
}

/// Why a comparison measured nothing, or less than it must: the gated metric unavailable, a
/// gated cell without any item scored in both runs, gated items whose gold query failed. Each is
/// a failure: a check that could not measure never passes.
fn unmeasured(comparison: &Comparison, system: &SystemRecords) -> Vec<String> {
    let name = &comparison.candidate;
    let metric = &comparison.metric;
    let base_metric = metric.split('.').next().unwrap_or(metric);
    let outcome_count = |outcome: &str| {
        system
            .items
            .iter()
            .filter(|r| r.outcome.get(base_metric).is_some_and(|o| o == outcome))
            .count()
    };
    let mut reasons = Vec::new();
    let unavailable = outcome_count("unavailable");
    if unavailable > 0 {
        reasons.push(format!(
            "{name}: {metric} is unavailable on {unavailable} items, so the gate cannot measure it"
        ));
    }
    let gold_errors = outcome_count("gold_error");
    if gold_errors > 0 {
        reasons.push(format!(
            "{name}: the gold query of {gold_errors} gated items failed, so {metric} was not \
             measured on them"
        ));
    }
    let gold_timeouts = outcome_count("gold_timeout");
    if gold_timeouts > 0 {
        reasons.push(format!(
            "{name}: the gold query of {gold_timeouts} gated items timed out, so {metric} was \
             not measured on them"
        ));
    }
    for cell in comparison.cells.iter().filter(|c| c.items == 0) {
        reasons.push(format!(
            "{name}: no item of cell `{}` was scored on {metric} in both the baseline and this \
             run: the gate measured nothing there",
            cell.difficulty
        ));
    }
    reasons
}

/// The note naming the regressions `gate.accept` let through, with their reasons.
fn accepted_note(config: &Config, comparison: &Comparison) -> Option<String> {
    if comparison.accepted.is_empty() {
        return None;
    }
    let reasons: Vec<&str> = (config.gate.accept.iter())
        .filter(|a| a.items.iter().any(|i| comparison.accepted.contains(i)))
        .map(|a| a.reason.as_str())
        .collect();
    Some(format!(
        "{}: regressed items {:?} are accepted by `gate.accept` in the base config ({}) and left \
         out of every cell",
        comparison.candidate,
        comparison.accepted,
        reasons.join("; ")
    ))
}

fn describe_failure(comparison: &Comparison, cell: &CellTest) -> String {
    let significance = match (cell.p_value, cell.p_adjusted) {
        (Some(p), Some(adjusted)) => format!(
            ", p = {} (Holm {})",
            crate::analysis::stats::format_p(p),
            crate::analysis::stats::format_p(adjusted)
        ),
        _ => String::new(),
    };
    let net = cell.regressed.saturating_sub(cell.fixed);
    let capped = match cell.max_net_regressed.filter(|&most| net > most) {
        Some(most) => format!("; {net} net regressed items > {most} allowed (max_regressed_items)"),
        None => String::new(),
    };
    format!(
        "{}: {} on {} dropped {:.1} points ({:.1} -> {:.1} on {} items; {} regressed, {} fixed; allowed {:.1}{significance}{capped})",
        comparison.candidate,
        comparison.metric,
        cell.difficulty,
        -cell.shown_delta(),
        100.0 * cell.baseline_accuracy,
        100.0 * cell.candidate_accuracy,
        cell.items,
        cell.regressed,
        cell.fixed,
        cell.threshold
    )
}

/// (baseline value, candidate value, difficulty) for items scored in both runs.
fn paired<'a>(
    metric: &str,
    base: &'a [ItemRecord],
    candidate: &'a [ItemRecord],
) -> Vec<(usize, f64, f64, Option<&'a str>)> {
    let base_by_index: BTreeMap<usize, &ItemRecord> = base.iter().map(|r| (r.index, r)).collect();
    candidate
        .iter()
        .filter_map(|c| {
            let b = base_by_index.get(&c.index)?;
            let bv = b.metrics.get(metric).copied().flatten()?;
            let cv = c.metrics.get(metric).copied().flatten()?;
            Some((c.index, bv, cv, c.difficulty.as_deref()))
        })
        .collect()
}

fn compare(
    config: &Config,
    (metric, features): (&str, &ItemFeatures),
    system: &SystemRecords,
    against: &str,
    base: &[ItemRecord],
) -> Comparison {
    let accepting = |&(index, b, c, _): &(usize, f64, f64, Option<&str>)| {
        c < b && config.gate.accept.iter().any(|a| a.items.contains(&index))
    };
    let (accepted, pairs): (Vec<_>, Vec<_>) = paired(metric, base, &system.items)
        .into_iter()
        .partition(accepting);
    let mut cell_specs = vec![("all".to_string(), config.gate.max_drop_points)];
    cell_specs.extend(
        config
            .gate
            .per_difficulty
            .iter()
            .map(|(d, t)| (d.clone(), *t)),
    );
    cell_specs
        .extend((config.gate.per_feature.iter()).map(|(f, t)| (format!("{FEATURE_CELL}{f}"), *t)));
    let has_feature = |index: usize, name: &str| {
        features
            .get(index)
            .is_some_and(|set| set.iter().any(|f| f.as_str() == name))
    };
    let mut cells: Vec<CellTest> = cell_specs
        .into_iter()
        .map(|(difficulty, threshold)| {
            let members: Vec<(f64, f64)> = pairs
                .iter()
                .filter(
                    |(index, _, _, d)| match difficulty.strip_prefix(FEATURE_CELL) {
                        Some(feature) => has_feature(*index, feature),
                        None => difficulty == "all" || *d == Some(difficulty.as_str()),
                    },
                )
                .map(|&(_, b, c, _)| (b, c))
                .collect();
            test_cell(config, difficulty, threshold, &members)
        })
        .collect();
    let raw: Vec<f64> = cells.iter().filter_map(|c| c.p_value).collect();
    let mut adjusted = holm(&raw).into_iter();
    for cell in cells.iter_mut().filter(|c| c.p_value.is_some()) {
        cell.p_adjusted = adjusted.next();
    }
    for cell in &mut cells {
        let dropped_too_far = -cell.delta_points > cell.threshold + 1e-9;
        let significant = match (&config.gate.significance, cell.p_adjusted) {
            (None, _) => true,
            (Some(s), Some(p)) => p < s.alpha,
            (Some(_), None) => false,
        };
        let net_regressed = cell.regressed.saturating_sub(cell.fixed);
        let too_many = cell
            .max_net_regressed
            .is_some_and(|most| net_regressed > most);
        cell.failed = (dropped_too_far && significant) || too_many;
    }
    let regressed: Vec<usize> = pairs.iter().filter(|p| p.2 < p.1).map(|p| p.0).collect();
    let fixed: Vec<usize> = pairs.iter().filter(|p| p.2 > p.1).map(|p| p.0).collect();
    let must_pass_regressions = regressed
        .iter()
        .copied()
        .filter(|i| config.gate.must_pass.contains(i))
        .collect();
    Comparison {
        candidate: system.name.clone(),
        baseline: against.to_string(),
        metric: metric.to_string(),
        cells,
        regressed,
        fixed,
        must_pass_regressions,
        accepted: accepted.iter().map(|p| p.0).collect(),
    }
}

fn test_cell(
    config: &Config,
    difficulty: String,
    threshold: f64,
    members: &[(f64, f64)],
) -> CellTest {
    let n = members.len();
    let mean = |pick: fn(&(f64, f64)) -> f64| {
        if n == 0 {
            0.0
        } else {
            members.iter().map(pick).sum::<f64>() / n as f64
        }
    };
    let (baseline_accuracy, candidate_accuracy) = (mean(|p| p.0), mean(|p| p.1));
    let fixed = members.iter().filter(|(b, c)| c > b).count();
    let regressed = members.iter().filter(|(b, c)| c < b).count();
    let binary = members
        .iter()
        .all(|(b, c)| [0.0, 1.0].contains(b) && [0.0, 1.0].contains(c));
    let significance = config.gate.significance.as_ref();
    let tested = significance.and_then(|s| match s.test {
        SignificanceTest::McnemarExact if binary => {
            Some(("McNemar", mcnemar_exact(fixed as u64, regressed as u64)))
        }
        _ => {
            let (base, cand): (Vec<f64>, Vec<f64>) = members.iter().copied().unzip();
            paired_bootstrap(&base, &cand, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED)
                .map(|b| ("bootstrap", b.p_worse))
        }
    });
    CellTest {
        difficulty,
        threshold,
        items: n,
        baseline_accuracy,
        candidate_accuracy,
        delta_points: 100.0 * (candidate_accuracy - baseline_accuracy),
        fixed,
        regressed,
        p_value: tested.map(|(_, p)| p),
        p_adjusted: None,
        test: tested.map(|(test, _)| test),
        alpha: significance.map(|s| s.alpha),
        max_net_regressed: (config.gate.max_regressed_items)
            .or((threshold == 0.0 && binary).then_some(0)),
        failed: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::config::{GateConfig, SignificanceConfig};

    fn records(values: &[f64]) -> Vec<ItemRecord> {
        values
            .iter()
            .enumerate()
            .map(|(index, &v)| ItemRecord {
                index,
                difficulty: Some(if index % 2 == 0 { "easy" } else { "hard" }.into()),
                metrics: [("ex".to_string(), Some(v))].into(),
                outcome: BTreeMap::new(),
                prediction: None,
            })
            .collect()
    }

    fn config(gate: GateConfig) -> Config {
        let dir = std::env::temp_dir();
        let mut config = Config::parse(
            "dataset: { gold: g.sql, databases: . }\npredictions: [{ path: p.txt }]\n",
            &dir.join("sqlgate.yml"),
        )
        .unwrap();
        config.gate = gate;
        config
    }

    fn run(gate: GateConfig, base: &[f64], candidate: &[f64]) -> GateResult {
        run_records(gate, ("m", records(base)), records(candidate))
    }

    /// The gate on system `m` against the baseline system `base.0`.
    fn run_records(
        gate: GateConfig,
        base: (&str, Vec<ItemRecord>),
        candidate: Vec<ItemRecord>,
    ) -> GateResult {
        let baseline = baseline_of(&[base]);
        let current = [SystemRecords {
            name: "m".into(),
            from_baseline: false,
            items: candidate,
        }];
        evaluate(&config(gate), &current, Some(&baseline))
    }

    /// Records whose `ex` is not measured, with `outcome`.
    fn unmeasured_records(count: usize, outcome: &str) -> Vec<ItemRecord> {
        records(&vec![0.0; count])
            .into_iter()
            .map(|mut r| {
                r.metrics.insert("ex".into(), None);
                r.outcome.insert("ex".into(), outcome.into());
                r
            })
            .collect()
    }

    #[test]
    fn a_drop_beyond_the_threshold_fails_and_within_passes() {
        let base = [1.0; 20];
        let mut candidate = [1.0; 20];
        candidate[0] = 0.0;
        let strict = run(GateConfig::default(), &base, &candidate);
        assert!(
            !strict.passed && strict.reasons[0].contains("dropped 5.0 points"),
            "{strict:?}"
        );
        let lenient = run(
            GateConfig {
                max_drop_points: 5.0,
                ..GateConfig::default()
            },
            &base,
            &candidate,
        );
        assert!(lenient.passed, "{lenient:?}");
        assert_eq!(lenient.comparisons[0].regressed, vec![0]);
    }

    #[test]
    fn significance_spares_drops_that_could_be_noise() {
        let base = [1.0; 20];
        let mut candidate = [1.0; 20];
        candidate[0] = 0.0;
        let significance = Some(SignificanceConfig {
            test: SignificanceTest::McnemarExact,
            alpha: 0.05,
        });
        let strict = run(
            GateConfig {
                significance: significance.clone(),
                ..GateConfig::default()
            },
            &base,
            &candidate,
        );
        assert!(
            !strict.passed,
            "max_drop_points 0 allows no net regressed item unless max_regressed_items says so"
        );
        let noisy = run(
            GateConfig {
                significance: significance.clone(),
                max_regressed_items: Some(3),
                ..GateConfig::default()
            },
            &base,
            &candidate,
        );
        assert!(noisy.passed, "one regression is not significant: {noisy:?}");
        let cell = &noisy.comparisons[0].cells[0];
        assert_eq!(cell.regressed, 1);
        assert!((cell.p_value.unwrap() - 1.0).abs() < 1e-9, "{cell:?}");
        let bad = [0.0; 20];
        let clear = run(
            GateConfig {
                significance,
                max_regressed_items: Some(3),
                ..GateConfig::default()
            },
            &base,
            &bad,
        );
        assert!(!clear.passed, "{clear:?}");
    }

    #[test]
    fn an_accepted_regression_counts_in_no_cell_and_is_noted() {
        let base = [1.0; 20];
        let mut candidate = [1.0; 20];
        (candidate[3], candidate[4]) = (0.0, 0.0);
        let accept = |items: Vec<usize>| crate::input::config::AcceptedRegression {
            items,
            reason: "gold is ambiguous".into(),
        };
        let gate = |accepted: Vec<usize>| GateConfig {
            accept: vec![accept(accepted)],
            ..GateConfig::default()
        };
        let both = run(gate(vec![3, 4]), &base, &candidate);
        assert!(both.passed, "{both:?}");
        assert_eq!(both.comparisons[0].accepted, [3, 4]);
        assert_eq!(both.comparisons[0].cells[0].items, 18);
        assert_eq!(
            both.notes,
            ["m: regressed items [3, 4] are accepted by `gate.accept` in the base config (gold is \
              ambiguous) and left out of every cell"]
        );
        let one = run(gate(vec![3]), &base, &candidate);
        assert!(!one.passed, "item 4 is not accepted: {one:?}");
        assert_eq!(one.comparisons[0].regressed, [4]);
    }

    #[test]
    fn per_difficulty_cells_and_must_pass_items() {
        let base = [1.0; 10];
        let mut candidate = [1.0; 10];
        candidate[1] = 0.0;
        let per_difficulty = [("hard".to_string(), 0.0)].into();
        let gate = GateConfig {
            max_drop_points: 50.0,
            per_difficulty,
            ..GateConfig::default()
        };
        let result = run(gate, &base, &candidate);
        assert!(
            !result.passed && result.reasons[0].contains("on hard dropped 20.0 points"),
            "{result:?}"
        );
        let must_pass = GateConfig {
            max_drop_points: 50.0,
            must_pass: vec![1],
            ..GateConfig::default()
        };
        let result = run(must_pass, &base, &candidate);
        assert!(
            !result.passed && result.reasons[0].contains("must-pass items regressed: [1]"),
            "{result:?}"
        );
    }

    #[test]
    fn no_baseline_passes_with_a_note() {
        let result = evaluate(&config(GateConfig::default()), &[], None);
        assert!(result.passed && result.notes[0].contains("no baseline"));
    }

    #[test]
    fn an_unavailable_gated_metric_fails_closed() {
        let result = run_records(
            GateConfig::default(),
            ("m", records(&[1.0; 4])),
            unmeasured_records(4, "unavailable"),
        );
        assert!(!result.passed, "{result:?}");
        assert!(
            result
                .reasons
                .iter()
                .any(|r| r.contains("unavailable on 4 items")),
            "{result:?}"
        );
        assert!(result
            .reasons
            .iter()
            .any(|r| r.contains("measured nothing")));
    }

    #[test]
    fn gated_items_whose_gold_fails_fail_closed() {
        let mut candidate = records(&[1.0; 4]);
        candidate.extend(
            unmeasured_records(6, "gold_error")
                .into_iter()
                .map(|mut r| {
                    r.index += 4;
                    r
                }),
        );
        let result = run_records(GateConfig::default(), ("m", records(&[1.0; 10])), candidate);
        assert!(!result.passed);
        assert!(
            result.reasons[0].contains("gold query of 6 gated items failed"),
            "{result:?}"
        );
    }

    #[test]
    fn a_gated_cell_without_items_fails_closed() {
        let gate = GateConfig {
            per_difficulty: [("extra".to_string(), 2.0)].into(),
            ..GateConfig::default()
        };
        let result = run(gate, &[1.0; 6], &[1.0; 6]);
        assert!(!result.passed);
        assert_eq!(result.reasons.len(), 1, "{result:?}");
        assert!(result.reasons[0].contains("cell `extra`"), "{result:?}");
    }

    #[test]
    fn no_system_compared_fails_closed() {
        let result = run_records(
            GateConfig::default(),
            ("another", records(&[1.0; 4])),
            records(&[1.0; 4]),
        );
        assert!(!result.passed);
        assert_eq!(result.reasons.len(), 1, "{result:?}");
        assert!(
            result.reasons[0].starts_with("m: the baseline has no system `m` to compare it with"),
            "{result:?}"
        );
        let nothing = evaluate(
            &config(GateConfig::default()),
            &[],
            Some(&baseline_of(&[("another", records(&[1.0; 4]))])),
        );
        assert!(
            nothing.reasons[0].contains("no system was compared"),
            "{nothing:?}"
        );
    }

    /// A baseline holding `systems`.
    fn baseline_of(systems: &[(&str, Vec<ItemRecord>)]) -> Baseline {
        Baseline {
            sqlgate_version: "test".into(),
            commit: None,
            created_unix: None,
            dataset_sha256: String::new(),
            records_sha256: None,
            metrics: vec!["ex".into()],
            settings: crate::analysis::baseline::Settings::of(&config(GateConfig::default())),
            gate: None,
            systems: systems
                .iter()
                .map(|(name, items)| (name.to_string(), items.clone()))
                .collect(),
            provider_cache: Vec::new(),
            suite_manifests: Vec::new(),
            data_digests: None,
            inputs: None,
        }
    }

    #[test]
    fn a_baseline_system_a_glob_could_name_must_be_measured() {
        let mut glob_config = config(GateConfig::default());
        glob_config.predictions[0].path = "/work/preds/*.txt".into();
        let baseline = baseline_of(&[("m", records(&[1.0; 4])), ("gone", records(&[1.0; 4]))]);
        let current = [SystemRecords {
            name: "m".into(),
            from_baseline: false,
            items: records(&[1.0; 4]),
        }];
        let result = evaluate(&glob_config, &current, Some(&baseline));
        assert!(!result.passed);
        assert_eq!(result.reasons.len(), 1, "{result:?}");
        assert!(
            result.reasons[0].starts_with("gone: this baseline system was not measured"),
            "{result:?}"
        );
        let explicit = evaluate(&config(GateConfig::default()), &current, Some(&baseline));
        assert!(
            explicit.passed,
            "a leaderboard entry the config cannot name is not required: {explicit:?}"
        );
    }
}
