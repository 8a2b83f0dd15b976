//! The drift guard. A rolling baseline, refreshed after every merge, lets small regressions
//! ratchet accuracy down without any one pull request failing. `baseline.anchor` pins a second
//! baseline at a reviewed point (a release); `gate.max_drift_points` fails the gate when a
//! candidate's gated accuracy on all items has dropped, cumulatively, more than that many points
//! below the anchor's on the same items.

use crate::analysis::agreement::SystemRecords;
use crate::analysis::records::ItemRecord;
use crate::analysis::stats::{shown_delta, shown_points};
use crate::judge::{Context, Findings, GateRule, Note, NoteSection};
use std::collections::BTreeMap;
use std::path::Path;

/// The drift guard against the anchored baseline.
pub struct Drift;

impl GateRule for Drift {
    fn judge(&self, context: &Context<'_>) -> Findings {
        let (Some(allowed), Some((anchor, path))) = (context.gate.max_drift_points, context.anchor)
        else {
            return Findings::default();
        };
        let mut findings = Findings::default();
        for system in context.candidates() {
            let against = crate::analysis::comparison::against(context.gate, system);
            match anchor.systems.get(against) {
                Some(anchored) => {
                    let guarded = Guarded {
                        allowed,
                        path,
                        anchored,
                    };
                    guarded.judge(context.metric, system, &mut findings);
                }
                None => findings.failures.push(format!(
                    "{}: the anchored baseline {} has no system `{against}`, so the drift guard \
                     (`gate.max_drift_points`) measured nothing",
                    system.name,
                    path.display()
                )),
            }
        }
        findings
    }
}

/// One candidate's anchored records, with the anchor's path and the drift allowed.
struct Guarded<'a> {
    /// `gate.max_drift_points`.
    allowed: f64,
    /// Where the anchor is kept.
    path: &'a Path,
    /// The anchor's records of the candidate's baseline system.
    anchored: &'a [ItemRecord],
}

impl Guarded<'_> {
    /// A failure when `system` drifted past the allowed points below the anchor (or shares no
    /// item with it), else a note.
    fn judge(&self, metric: &str, system: &SystemRecords, findings: &mut Findings) {
        let allowed = self.allowed;
        let (before, after, items) = paired_means(metric, self.anchored, &system.items);
        let described = format!(
            "{}: {metric} {:.1} -> {:.1} ({:+.1}) on {items} items against the anchored \
             baseline {}",
            system.name,
            shown_points(before),
            shown_points(after),
            shown_delta(before, after),
            self.path.display()
        );
        if items == 0 {
            findings.failures.push(format!(
                "{described}: no item scored in both, nothing measured"
            ));
        } else if 100.0 * (before - after) > allowed + 1e-9 {
            findings.failures.push(format!(
                "{described}: a cumulative drop past the {allowed:.1} points \
                 `gate.max_drift_points` allows (small drops merged one at a time add up; move \
                 the anchor only by a reviewed change)"
            ));
        } else {
            findings.notes.push(Note::new(
                NoteSection::Comparison,
                format!("{described}: within the {allowed:.1} points of cumulative drop allowed"),
            ));
        }
    }
}

/// Mean gated value of the anchor's and the candidate's records on the items both scored, and
/// how many those are.
fn paired_means(
    metric: &str,
    anchor: &[ItemRecord],
    candidate: &[ItemRecord],
) -> (f64, f64, usize) {
    let by_index: BTreeMap<usize, &ItemRecord> = anchor.iter().map(|r| (r.index, r)).collect();
    let value = |record: &ItemRecord| record.metrics.get(metric).copied().flatten();
    let pairs: Vec<(f64, f64)> = candidate
        .iter()
        .filter_map(|c| Some((value(by_index.get(&c.index)?)?, value(c)?)))
        .collect();
    let n = pairs.len();
    let mean = |pick: fn(&(f64, f64)) -> f64| pairs.iter().map(pick).sum::<f64>() / n.max(1) as f64;
    (mean(|p| p.0), mean(|p| p.1), n)
}
