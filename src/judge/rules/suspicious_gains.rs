//! Suspicious gains (`gate.review_gain_points`): a gated cell that gained more points than this
//! passes, but is flagged for a reviewer to check (a leaked gold, a changed dataset split, a
//! prediction file of another model), in the comment and the step output `review`.

use crate::analysis::comparison::Comparison;
use crate::judge::{Context, Findings, GateRule, Note, NoteSection};

/// Gains too large to trust without a look.
pub struct SuspiciousGains;

impl GateRule for SuspiciousGains {
    fn judge(&self, context: &Context<'_>) -> Findings {
        let Some(limit) = context.gate.review_gain_points else {
            return Findings::default();
        };
        let flagged_gains = flagged(context.comparisons, limit);
        let notes = (flagged_gains.iter())
            .map(|line| Note::new(NoteSection::Review, line.clone()))
            .collect();
        Findings {
            notes,
            flagged_gains,
            ..Findings::default()
        }
    }
}

/// One line per cell of `comparisons` whose gain exceeds `limit` points.
fn flagged(comparisons: &[Comparison], limit: f64) -> Vec<String> {
    comparisons
        .iter()
        .flat_map(|c| c.cells.iter().map(move |cell| (c, cell)))
        .filter(|(_, cell)| cell.delta_points > limit + 1e-9)
        .map(|(c, cell)| {
            format!(
                "review: {}: {} on {} gained {:.1} points ({} -> {} on {} items; {} fixed, \
                 {} regressed), more than `gate.review_gain_points` ({limit:.1}): the gate \
                 passes it, but check that the predictions are not tuned on the gold before merging",
                c.candidate,
                c.metric,
                cell.difficulty,
                cell.shown_delta(),
                crate::analysis::stats::format_points(cell.baseline_accuracy),
                crate::analysis::stats::format_points(cell.candidate_accuracy),
                cell.items,
                cell.fixed,
                cell.regressed
            )
        })
        .collect()
}
