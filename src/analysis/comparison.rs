//! The comparison the gate judges: each candidate system against its baseline system on the same
//! items, in cells (all items, each difficulty of `gate.per_difficulty`, each feature of
//! `gate.per_feature`), each with its accuracies, regressed / fixed counts and, when
//! `gate.significance` is set, its paired test's p-value and Holm's adjustment across the
//! comparison's cells. Regressions `gate.accept` lists are left out of every cell. Every cell,
//! list and test sees the vouched values ([`vouched`]): an unstable item's changed verdict on an
//! unchanged prediction is not counted, and a changed prediction's unstable right verdict is not
//! credited. Whether a cell
//! fails is the judge's to say ([`crate::judge`]): a measured cell is not failed.

use crate::analysis::agreement::SystemRecords;
use crate::analysis::baseline::Baseline;
use crate::analysis::features::ItemFeatures;
use crate::analysis::records::ItemRecord;
use crate::analysis::stats::{holm, mcnemar_exact, paired_bootstrap};
use crate::input::config::{GateConfig, SignificanceTest};
use crate::score::stability::{TieBreaker, Unstable};
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
    /// Whether this cell fails the gate: false as measured, set by the judge.
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
    /// Unstable items whose verdict changed while their prediction did not: neither regressed
    /// nor fixed (the baseline's verdict stands in every cell), with the reason.
    pub unstable_not_counted: Vec<(usize, Unstable)>,
    /// Changed predictions whose right verdict is unstable: nothing vouches for it, so they
    /// count as not right in every cell, with the reason.
    pub unstable_not_credited: Vec<(usize, Unstable)>,
    /// Items the baseline measured whose gold failed or timed out in this run, with this run's
    /// outcome: they count as not right in every cell (fail closed), so making an item
    /// unmeasurable hides no drop.
    pub unmeasured: Vec<(usize, String)>,
}

/// One item scored in both runs, as the gate compares it: the baseline's and the candidate's
/// vouched values (see [`vouched`]) and the item's difficulty.
type Pair<'a> = (usize, f64, f64, Option<&'a str>);

/// How an unstable item entered the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Vouching {
    /// Its prediction is unchanged and its verdict changed: the baseline's verdict stands.
    NotCounted(Unstable),
    /// Its prediction changed and is right only unstably: counted as not right.
    NotCredited(Unstable),
    /// The baseline measured it and this run could not: counted as not right.
    Unmeasured,
}

/// The baseline system `system` is compared with: `gate.against`, else its own name.
pub fn against<'a>(gate: &'a GateConfig, system: &'a SystemRecords) -> &'a str {
    gate.against.as_deref().unwrap_or(&system.name)
}

/// The comparison of every current system (not the baseline's own) whose baseline system the
/// baseline holds, on the gated `metric`, with the `gate.per_feature` cells over each gold item's
/// features (`features[index]`).
pub fn compare_all(
    gate: &GateConfig,
    (metric, tie_breaker): (&str, TieBreaker),
    current: &[SystemRecords],
    baseline: &Baseline,
    features: &ItemFeatures,
) -> Vec<Comparison> {
    current
        .iter()
        .filter(|system| !system.from_baseline)
        .filter_map(|system| {
            let against = against(gate, system);
            let base_items = baseline.systems.get(against)?;
            Some(compare(
                gate,
                (metric, tie_breaker, features),
                system,
                against,
                base_items,
            ))
        })
        .collect()
}

/// The items the baseline scored with their vouched values, how each unstable or unmeasured one
/// entered (a metric that only compares SQL texts, ESM, is not changed by an order or the clock),
/// and the candidate's record of it.
fn paired<'a>(
    (metric, tie_breaker): (&str, TieBreaker),
    base: &'a [ItemRecord],
    candidate: &'a [ItemRecord],
) -> Vec<(Pair<'a>, Option<Vouching>, &'a ItemRecord)> {
    let base_by_index: BTreeMap<usize, &ItemRecord> = base.iter().map(|r| (r.index, r)).collect();
    let reads_results = crate::metrics::reads_results(metric);
    candidate
        .iter()
        .filter_map(|c| {
            let b = base_by_index.get(&c.index)?;
            let bv = b.metrics.get(metric).copied().flatten()?;
            let Some(cv) = c.metrics.get(metric).copied().flatten() else {
                let vouching = unmeasured(b, c, metric)?;
                let cv = match vouching {
                    Vouching::NotCounted(_) => bv,
                    _ => 0.0,
                };
                return Some((
                    (c.index, bv, cv, c.difficulty.as_deref()),
                    Some(vouching),
                    c,
                ));
            };
            let (cv, vouching) = match reads_results {
                true => vouched((b, bv), (c, cv), tie_breaker),
                false => (cv, None),
            };
            Some(((c.index, bv, cv, c.difficulty.as_deref()), vouching, c))
        })
        .collect()
}

/// The candidate's value the gate compares (issues 44, 45). On an unstable item (either run's
/// verdict depends on an order or a value the plan picks, or on timing) whose prediction text is
/// the baseline's, a changed verdict is the plan's or the clock's doing, so the baseline's value
/// stands: an instability on its own is never a regression or a fix. On one whose prediction
/// changed, the value is as measured (the clock cannot make a wrong answer right, and slowness
/// hides no drop), except where a planner breaks ties ([`TieBreaker::Planner`]): there a right
/// (or partly right) value that the candidate run found unstable by the plan's choice (an order
/// or a value), whatever other reason it also has (timing never vouches), is not credited, since a pull request that prepares the server could have steered
/// the tie, so it counts as 0, failing closed (a wrong verdict is kept). Where the baseline did not record the prediction's text (an
/// older sqlgate wrote it), whether it changed is unknown: such a value is credited no higher
/// than the baseline's (no fix by a steered tie; a drop still counts).
fn vouched(
    (base, bv): (&ItemRecord, f64),
    (candidate, cv): (&ItemRecord, f64),
    tie_breaker: TieBreaker,
) -> (f64, Option<Vouching>) {
    let unstable = (base.unstable.first()).or(candidate.unstable.first());
    let steerable =
        (candidate.unstable.plans_choice()).filter(|_| tie_breaker == TieBreaker::Planner);
    match (&base.prediction, steerable) {
        (Some(text), _) if candidate.prediction.as_ref() == Some(text) => match unstable {
            Some(reason) if cv != bv => (bv, Some(Vouching::NotCounted(reason))),
            _ => (cv, None),
        },
        (None, Some(reason)) if cv > bv => (bv, Some(Vouching::NotCredited(reason))),
        (Some(_), Some(reason)) if cv > 0.0 => (0.0, Some(Vouching::NotCredited(reason))),
        _ => (cv, None),
    }
}

/// How an item the baseline measured and this run did not enters the comparison: a gold that
/// ran near the time limit in the baseline and timed out now is the clock's doing (the
/// baseline's value stands); an unavailable metric (its own rule fails the gate) and a skipped
/// item (the trusted benchmark excluded it) are left out (`None`); anything else, a gold that
/// fails or times out now, counts as not right (fail closed).
fn unmeasured(base: &ItemRecord, candidate: &ItemRecord, metric: &str) -> Option<Vouching> {
    let outcome = candidate.outcome.get(metric).map(String::as_str);
    match (base.unstable.contains(Unstable::GoldTiming), outcome) {
        // An unavailable metric fails the gate by its own rule, naming the service; a skipped
        // item was excluded by a reviewed gold override or its database is absent, both the
        // trusted benchmark's doing.
        (_, Some("unavailable" | "skipped")) => None,
        (true, Some("gold_timeout")) => Some(Vouching::NotCounted(Unstable::GoldTiming)),
        _ => Some(Vouching::Unmeasured),
    }
}

/// `system` against the baseline's records `base` of the system `against`.
fn compare(
    gate: &GateConfig,
    (metric, tie_breaker, features): (&str, TieBreaker, &ItemFeatures),
    system: &SystemRecords,
    against: &str,
    base: &[ItemRecord],
) -> Comparison {
    let accepting = |&(index, b, c, _): &Pair<'_>| {
        c < b && gate.accept.iter().any(|a| a.items.contains(&index))
    };
    let measured = paired((metric, tie_breaker), base, &system.items);
    let vouching = |pick: fn(Vouching) -> Option<Unstable>| {
        (measured.iter())
            .filter_map(|(pair, v, _)| Some((pair.0, pick((*v)?)?)))
            .collect::<Vec<_>>()
    };
    let unstable_not_counted = vouching(|v| match v {
        Vouching::NotCounted(reason) => Some(reason),
        _ => None,
    });
    let unstable_not_credited = vouching(|v| match v {
        Vouching::NotCredited(reason) => Some(reason),
        _ => None,
    });
    let unmeasured = (measured.iter())
        .filter(|(_, v, _)| *v == Some(Vouching::Unmeasured))
        .map(|(pair, _, record)| {
            (
                pair.0,
                record.outcome.get(metric).cloned().unwrap_or_default(),
            )
        })
        .collect();
    let (accepted, pairs): (Vec<_>, Vec<_>) = (measured.into_iter())
        .map(|(pair, _, _)| pair)
        .partition(accepting);
    let mut cell_specs = vec![("all".to_string(), gate.max_drop_points)];
    cell_specs.extend(gate.per_difficulty.iter().map(|(d, t)| (d.clone(), *t)));
    cell_specs.extend((gate.per_feature.iter()).map(|(f, t)| (format!("{FEATURE_CELL}{f}"), *t)));
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
            test_cell(gate, difficulty, threshold, &members)
        })
        .collect();
    let raw: Vec<f64> = cells.iter().filter_map(|c| c.p_value).collect();
    let mut adjusted = holm(&raw).into_iter();
    for cell in cells.iter_mut().filter(|c| c.p_value.is_some()) {
        cell.p_adjusted = adjusted.next();
    }
    let regressed: Vec<usize> = pairs.iter().filter(|p| p.2 < p.1).map(|p| p.0).collect();
    let fixed: Vec<usize> = pairs.iter().filter(|p| p.2 > p.1).map(|p| p.0).collect();
    let must_pass_regressions = regressed
        .iter()
        .copied()
        .filter(|i| gate.must_pass.contains(i))
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
        unstable_not_counted,
        unstable_not_credited,
        unmeasured,
    }
}

/// One cell of `members` (baseline value, candidate value): accuracies, counts and, when
/// `gate.significance` is set, the paired test's raw p-value.
fn test_cell(
    gate: &GateConfig,
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
    let significance = gate.significance.as_ref();
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
        max_net_regressed: (gate.max_regressed_items).or((threshold == 0.0 && binary).then_some(0)),
        failed: false,
    }
}

impl CellTest {
    /// The cell's change in points as its printed accuracies make it (see
    /// [`crate::analysis::stats::shown_delta`]); the gate decides on the unrounded one.
    pub fn shown_delta(&self) -> f64 {
        crate::analysis::stats::shown_delta(self.baseline_accuracy, self.candidate_accuracy)
    }
}
