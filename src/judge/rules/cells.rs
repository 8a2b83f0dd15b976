//! Cells against the baseline: each candidate system against its baseline system, cell by cell
//! (all items, each difficulty of `gate.per_difficulty`, each feature of `gate.per_feature`). A
//! cell fails when its drop exceeds the allowed points and, with `gate.significance`, the drop is
//! significant after Holm's correction across the comparison's cells; or when more items
//! regressed, net, than `gate.max_regressed_items` allows. A regressed `must_pass` item fails the
//! gate; regressions `gate.accept` lists are left out of every cell, with a note. A comparison
//! that could not measure (the gated metric unavailable, a gold query failed, a cell without
//! items) fails closed. The cells of one comparison are judged together, so its failures are
//! listed system by system, in cell order. The comparison holds vouched verdicts (an unstable
//! item's flip on an unchanged prediction is not counted, a changed prediction's unstable right
//! verdict not credited): notes name those items with their reasons.

use crate::analysis::agreement::SystemRecords;
use crate::analysis::comparison::{against, CellTest, Comparison};
use crate::analysis::records::ItemRecord;
use crate::input::config::GateConfig;
use crate::judge::{Compared, Context, Findings, GateRule, Note, NoteSection};

/// The cells of every comparison with the baseline.
pub struct Cells;

impl GateRule for Cells {
    fn judge(&self, context: &Context<'_>) -> Findings {
        let Some(baseline) = context.stored_baseline() else {
            let note = Note::new(NoteSection::Comparison, not_compared(&context.baseline));
            return Findings {
                notes: vec![note],
                ..Findings::default()
            };
        };
        let mut findings = Findings::default();
        let mut measured = context.comparisons.iter();
        for system in context.candidates() {
            let compared = baseline.systems.contains_key(against(context.gate, system));
            match compared.then(|| measured.next()).flatten() {
                Some(comparison) => {
                    let judged = (context.gate, context.allowed_gold_errors);
                    judge_comparison(judged, comparison, system, &mut findings);
                    let base = baseline.systems.get(against(context.gate, system));
                    let untold = base.and_then(|base| untold_predictions(comparison, base));
                    findings.notes.extend(untold);
                }
                None => findings
                    .failures
                    .push(no_baseline_system(context.gate, system)),
            }
        }
        findings
    }
}

/// Why nothing was compared: no baseline configured, a first run, or a dataset the baseline
/// does not hold.
fn not_compared(baseline: &Compared<'_>) -> String {
    match baseline {
        Compared::FirstRun(path) => format!(
            "first run: no baseline at {} yet (`baseline.required: false`), nothing compared",
            path.display()
        ),
        Compared::NotInBaseline(note) => note.to_string(),
        Compared::NotConfigured | Compared::Baseline(_) => {
            "not gated: no baseline configured (`baseline.path`), nothing compared".into()
        }
    }
}

/// The failure of a candidate the baseline holds no system to compare with.
fn no_baseline_system(gate: &GateConfig, system: &SystemRecords) -> String {
    format!(
        "{}: the baseline has no system `{}` to compare it with, so it cannot be gated; name a \
         baseline system in `gate.against`, or add this system to the baseline on the base \
         branch first",
        system.name,
        against(gate, system)
    )
}

/// Judges one measured comparison: what it could not measure, its failed cells, its accepted
/// regressions and its must-pass items; the judged comparison goes to the report.
fn judge_comparison(
    (gate, allowed_gold_errors): (&GateConfig, &[usize]),
    measured: &Comparison,
    system: &SystemRecords,
    findings: &mut Findings,
) {
    let mut comparison = measured.clone();
    for cell in &mut comparison.cells {
        cell.failed = fails(gate, cell);
    }
    findings
        .failures
        .extend(unmeasured(&comparison, system, allowed_gold_errors));
    for cell in comparison.cells.iter().filter(|c| c.failed) {
        findings.failures.push(describe_failure(&comparison, cell));
    }
    if let Some(note) = accepted_note(gate, &comparison) {
        findings
            .notes
            .push(Note::new(NoteSection::Comparison, note));
    }
    for note in unstable_notes(&comparison) {
        findings
            .notes
            .push(Note::new(NoteSection::Comparison, note));
    }
    if !comparison.must_pass_regressions.is_empty() {
        findings.failures.push(format!(
            "{}: must-pass items regressed: {:?}",
            comparison.candidate, comparison.must_pass_regressions
        ));
    }
    findings.comparisons.push(comparison);
}

/// Whether a cell fails: a drop past the allowed points that is significant (or untested), or
/// more net regressed items than allowed, whatever the test says.
fn fails(gate: &GateConfig, cell: &CellTest) -> bool {
    let dropped_too_far = -cell.delta_points > cell.threshold + 1e-9;
    let significant = match (&gate.significance, cell.p_adjusted) {
        (None, _) => true,
        (Some(s), Some(p)) => p < s.alpha,
        (Some(_), None) => false,
    };
    let net_regressed = cell.regressed.saturating_sub(cell.fixed);
    let too_many = cell
        .max_net_regressed
        .is_some_and(|most| net_regressed > most);
    (dropped_too_far && significant) || too_many
}

/// Why a comparison measured nothing, or less than it must: the gated metric unavailable, a
/// gated cell without any item scored in both runs, gated items whose gold query failed (but for
/// those `dataset.allow_failing_golds` lists, `allowed_gold_errors`). Each is a failure: a check
/// that could not measure never passes.
fn unmeasured(
    comparison: &Comparison,
    system: &SystemRecords,
    allowed_gold_errors: &[usize],
) -> Vec<String> {
    let name = &comparison.candidate;
    let metric = &comparison.metric;
    let base_metric = metric.split('.').next().unwrap_or(metric);
    let outcome_count = |outcome: &str| {
        (system.items.iter())
            .filter(|r| outcome != "gold_error" || !allowed_gold_errors.contains(&r.index))
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
fn accepted_note(gate: &GateConfig, comparison: &Comparison) -> Option<String> {
    if comparison.accepted.is_empty() {
        return None;
    }
    let reasons: Vec<&str> = (gate.accept.iter())
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

/// The note of a comparison with unstable items against a baseline that does not record its
/// predictions' texts: which predictions changed is unknown there, so the gate credits no
/// unstable verdict above the baseline's and says how to let it tell them apart.
fn untold_predictions(comparison: &Comparison, base: &[ItemRecord]) -> Option<Note> {
    let unstable =
        !comparison.unstable_not_counted.is_empty() || !comparison.unstable_not_credited.is_empty();
    let untold = base.iter().any(|record| record.prediction.is_none());
    (unstable && untold).then(|| {
        Note::new(
            NoteSection::Comparison,
            format!(
                "{}: the baseline does not record the predictions' texts (an older sqlgate wrote \
                 it), so the gate cannot tell which changed: an unstable verdict is credited no \
                 higher than the baseline's; `sqlgate baseline update` on the base branch \
                 records them",
                comparison.candidate
            ),
        )
    })
}

/// Unstable items listed in a note, at most.
const UNSTABLE_LISTED: usize = 20;

/// What the comparison did with unstable verdicts (issues 44, 45): the unchanged predictions'
/// changed verdicts it did not count, the changed predictions' right verdicts it did not
/// credit, each item with its reason.
fn unstable_notes(comparison: &Comparison) -> Vec<String> {
    let listed = |items: &[(usize, crate::score::stability::Unstable)]| {
        let mut shown: Vec<String> = (items.iter().take(UNSTABLE_LISTED))
            .map(|(index, reason)| format!("item {index} ({})", reason.as_str()))
            .collect();
        if items.len() > UNSTABLE_LISTED {
            shown.push(format!("{} more", items.len() - UNSTABLE_LISTED));
        }
        shown.join(", ")
    };
    let mut notes = Vec::new();
    if !comparison.unstable_not_counted.is_empty() {
        notes.push(format!(
            "{}: unstable, not counted: {}: the prediction is unchanged and its verdict changed, \
             as an undetermined order or the time limit allows, so the baseline's verdict stands",
            comparison.candidate,
            listed(&comparison.unstable_not_counted)
        ));
    }
    if !comparison.unstable_not_credited.is_empty() {
        notes.push(format!(
            "{}: unstable, not credited: {}: the changed prediction is right only as the \
             server's plan breaks a tie, which the server's preparation can steer, so it counts \
             as wrong",
            comparison.candidate,
            listed(&comparison.unstable_not_credited)
        ));
    }
    if !comparison.unmeasured.is_empty() {
        let items: Vec<String> = (comparison.unmeasured.iter().take(UNSTABLE_LISTED))
            .map(|(index, outcome)| format!("item {index} ({outcome})"))
            .chain(
                (comparison.unmeasured.len() > UNSTABLE_LISTED)
                    .then(|| format!("{} more", comparison.unmeasured.len() - UNSTABLE_LISTED)),
            )
            .collect();
        notes.push(format!(
            "{}: not measured in this run: {}: the baseline measured them, so each counts as \
             not right (fail closed)",
            comparison.candidate,
            items.join(", ")
        ));
    }
    notes
}

/// The failure of one cell: its drop, accuracies, counts, allowed drop, test and net cap.
pub(crate) fn describe_failure(comparison: &Comparison, cell: &CellTest) -> String {
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
        Some(most) => {
            let items = if net == 1 { "item" } else { "items" };
            format!("; {net} net regressed {items} > {most} allowed (max_regressed_items)")
        }
        None => String::new(),
    };
    format!(
        "{}: {} on {} dropped {:.1} points ({} -> {} on {} items; {} regressed, {} fixed; allowed {:.1}{significance}{capped})",
        comparison.candidate,
        comparison.metric,
        cell.difficulty,
        -cell.shown_delta(),
        crate::analysis::stats::format_points(cell.baseline_accuracy),
        crate::analysis::stats::format_points(cell.candidate_accuracy),
        cell.items,
        cell.regressed,
        cell.fixed,
        cell.threshold
    )
}
