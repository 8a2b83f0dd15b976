//! Suspicious gains (`gate.review_gain_points`): a gated cell that gained more points than this
//! passes, but is flagged for a reviewer to check (a leaked gold, a changed dataset split, a
//! prediction file of another model), in the comment and the step output `review`.

use crate::analysis::gate::GateResult;
use crate::input::config::Config;

/// One line per gated cell whose gain exceeds `gate.review_gain_points`; empty when unset.
pub fn flagged_gains(config: &Config, gate: &GateResult) -> Vec<String> {
    let Some(limit) = config.gate.review_gain_points else {
        return Vec::new();
    };
    gate.comparisons
        .iter()
        .flat_map(|c| c.cells.iter().map(move |cell| (c, cell)))
        .filter(|(_, cell)| cell.delta_points > limit + 1e-9)
        .map(|(c, cell)| {
            format!(
                "review: {}: {} on {} gained {:.1} points ({:.1} -> {:.1} on {} items; {} fixed, \
                 {} regressed), more than `gate.review_gain_points` ({limit:.1}): the gate \
                 passes it, but check that the predictions are not tuned on the gold before merging",
                c.candidate,
                c.metric,
                cell.difficulty,
                cell.shown_delta(),
                100.0 * cell.baseline_accuracy,
                100.0 * cell.candidate_accuracy,
                cell.items,
                cell.fixed,
                cell.regressed
            )
        })
        .collect()
}
