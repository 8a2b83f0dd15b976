//! Unstable verdicts in the report: how many of each system's verdicts could change in another
//! run of the same prediction, by reason ([`crate::score::stability`]), and the items whose
//! verdict the gate did not count or did not credit for that reason
//! ([`crate::analysis::comparison`]).

use crate::analysis::comparison::Comparison;
use crate::score::evaluation::Evaluation;
use crate::score::stability::Unstable;
use serde::Serialize;
use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;

/// One item the gate compared otherwise because its verdict is unstable.
#[derive(Debug, Serialize)]
pub struct UnstableRow {
    /// Candidate system.
    pub system: String,
    /// Baseline system it was compared with.
    pub baseline: String,
    /// 0-based item index.
    pub item: usize,
    /// The reason's name (`gold-order`, `prediction-order`, `gold-value`, `prediction-value`,
    /// `gold-timing`, `prediction-timing`).
    pub reason: &'static str,
    /// The reason in words.
    pub why: &'static str,
    /// How the gate counted it.
    pub counted: &'static str,
}

/// What the gate does with an unchanged prediction's changed unstable verdict.
pub const NOT_COUNTED: &str =
    "not counted: the prediction is unchanged, the verdict changed (the baseline's stands)";
/// What the gate does with a changed prediction's unstable right verdict.
pub const NOT_CREDITED: &str =
    "not credited: a changed prediction right only by a tie the server's plan broke counts as wrong";

/// The first `limit` items of every comparison the gate did not count or credit, comparison by
/// comparison, not-counted first; and how many there are in all.
pub fn unstable_rows(comparisons: &[Comparison], limit: usize) -> (Vec<UnstableRow>, usize) {
    let rows: Vec<UnstableRow> = comparisons
        .iter()
        .flat_map(|c| {
            let not_counted = c.unstable_not_counted.iter().map(|i| (i, NOT_COUNTED));
            let not_credited = c.unstable_not_credited.iter().map(|i| (i, NOT_CREDITED));
            not_counted
                .chain(not_credited)
                .map(|(&(item, reason), counted)| UnstableRow {
                    system: c.candidate.clone(),
                    baseline: c.baseline.clone(),
                    item,
                    reason: reason.as_str(),
                    why: reason.describe(),
                    counted,
                })
        })
        .collect();
    let total = rows.len();
    (rows.into_iter().take(limit).collect(), total)
}

/// Per system with any, how many of its verdicts are unstable and, for each reason, how many
/// it holds (a verdict counted under each of its reasons), e.g. `m: 3 unstable verdicts (2
/// gold-order, 1 prediction-timing, 1 prediction-order)`.
pub fn unstable_counts(evaluation: &Evaluation) -> Vec<String> {
    (evaluation.systems.iter().enumerate())
        .filter_map(|(s, system)| {
            let mut by_reason: BTreeMap<Unstable, usize> = BTreeMap::new();
            for result in evaluation.system_results(s) {
                for reason in result.unstable.iter() {
                    *by_reason.entry(reason).or_default() += 1;
                }
            }
            let total = (evaluation.system_results(s).iter())
                .filter(|result| !result.unstable.is_empty())
                .count();
            let parts: Vec<String> = (by_reason.iter())
                .map(|(reason, n)| format!("{n} {}", reason.as_str()))
                .collect();
            (total > 0).then(|| {
                format!(
                    "{}: {total} unstable verdicts ({})",
                    system.name,
                    parts.join(", ")
                )
            })
        })
        .collect()
}

/// summary.json's `unstable`: per system with any, its unstable items and why; `None` when
/// every verdict of the run is stable.
pub fn unstable_json(evaluation: &Evaluation) -> Option<Json> {
    let systems: Map<String, Json> = (evaluation.systems.iter().enumerate())
        .filter_map(|(s, system)| {
            let items: Vec<Json> = (evaluation.system_results(s).iter())
                .filter(|r| !r.unstable.is_empty())
                .map(|r| json!({"index": r.index, "reason": r.unstable.names()}))
                .collect();
            (!items.is_empty()).then(|| (system.name.clone(), Json::Array(items)))
        })
        .collect();
    (!systems.is_empty()).then_some(Json::Object(systems))
}

/// The gate's unstable items in summary.json: each item a comparison did not count or did not
/// credit, with the reason.
pub fn gate_unstable_json(comparisons: &[Comparison]) -> Vec<Json> {
    comparisons
        .iter()
        .flat_map(|c| {
            let not_counted = c.unstable_not_counted.iter().map(|i| (i, "not_counted"));
            let not_credited = c.unstable_not_credited.iter().map(|i| (i, "not_credited"));
            not_counted
                .chain(not_credited)
                .map(|(&(index, reason), counted)| {
                    json!({
                        "system": c.candidate,
                        "baseline_system": c.baseline,
                        "index": index,
                        "reason": reason.as_str(),
                        "counted": counted,
                    })
                })
        })
        .collect()
}
