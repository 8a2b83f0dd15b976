//! The drift guard. A rolling baseline, refreshed after every merge, lets small regressions
//! ratchet accuracy down without any one pull request failing. `baseline.anchor` pins a second
//! baseline at a reviewed point (a release); `gate.max_drift_points` fails the gate when a
//! candidate's gated accuracy on all items has dropped, cumulatively, more than that many points
//! below the anchor's on the same items.

use crate::analysis::agreement::SystemRecords;
use crate::analysis::baseline::Baseline;
use crate::analysis::gate::GateResult;
use crate::analysis::records::ItemRecord;
use crate::input::config::Config;
use std::collections::BTreeMap;

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

/// Applies the drift guard to `gate`: a reason per candidate that drifted past
/// `gate.max_drift_points` below the anchored baseline `anchor` (kept at `path`), a note for
/// the others. Without `gate.max_drift_points` it does nothing.
pub fn guard(
    config: &Config,
    current: &[SystemRecords],
    (anchor, path): (&Baseline, &std::path::Path),
    gate: &mut GateResult,
) {
    let Some(allowed) = config.gate.max_drift_points else {
        return;
    };
    let metric = config.gate_metric();
    for system in current.iter().filter(|s| !s.from_baseline) {
        let against = config.gate.against.as_deref().unwrap_or(&system.name);
        let Some(anchored) = anchor.systems.get(against) else {
            gate.reasons.push(format!(
                "{}: the anchored baseline {} has no system `{against}`, so the drift guard \
                 (`gate.max_drift_points`) measured nothing",
                system.name,
                path.display()
            ));
            continue;
        };
        let (before, after, items) = paired_means(metric, anchored, &system.items);
        let shown = crate::analysis::stats::shown_delta(before, after);
        let described = format!(
            "{}: {metric} {:.1} -> {:.1} ({shown:+.1}) on {items} items against the anchored \
             baseline {}",
            system.name,
            crate::analysis::stats::shown_points(before),
            crate::analysis::stats::shown_points(after),
            path.display()
        );
        if items == 0 {
            gate.reasons.push(format!(
                "{described}: no item scored in both, nothing measured"
            ));
        } else if 100.0 * (before - after) > allowed + 1e-9 {
            gate.reasons.push(format!(
                "{described}: a cumulative drop past the {allowed:.1} points \
                 `gate.max_drift_points` allows (small drops merged one at a time add up; move \
                 the anchor only by a reviewed change)"
            ));
        } else {
            gate.notes.push(format!(
                "{described}: within the {allowed:.1} points of cumulative drop allowed"
            ));
        }
    }
    gate.passed = gate.reasons.is_empty();
}
