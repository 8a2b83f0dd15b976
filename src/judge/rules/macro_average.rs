//! The macro-average over several datasets (`datasets:`): the mean of each system's gated
//! accuracy (the `all` cell) over the datasets fails when it drops by more than
//! `gate.max_macro_drop_points` (default: `gate.max_drop_points`) against the baseline's
//! macro-average and, with `gate.significance`, the drop is significant: some dataset whose
//! accuracy dropped has its paired test (the `all` cell's McNemar or bootstrap p-value)
//! significant after Holm's correction over the datasets.

use crate::analysis::stats::holm;
use crate::input::config::GateConfig;
use crate::judge::{DatasetContext, DatasetRule, DatasetVerdict, Findings, Note, NoteSection};

/// The macro-average of each system over the datasets.
pub struct MacroAverage;

impl DatasetRule for MacroAverage {
    fn judge(&self, context: &DatasetContext<'_>) -> Findings {
        let macro_average = macro_gate(context);
        let notes = (macro_average.notes.iter())
            .map(|note| Note::new(NoteSection::Comparison, note.clone()))
            .collect();
        Findings {
            failures: macro_average.reasons.clone(),
            notes,
            macro_average: Some(macro_average),
            ..Findings::default()
        }
    }
}

/// One system's macro-average against the baseline's.
#[derive(Debug, Clone, PartialEq)]
pub struct MacroCell {
    /// The candidate system.
    pub candidate: String,
    /// Per dataset (config order): its name, baseline and candidate accuracy, raw p-value.
    pub datasets: Vec<(String, f64, f64, Option<f64>)>,
    /// Mean of the baseline accuracies.
    pub baseline_accuracy: f64,
    /// Mean of the candidate accuracies.
    pub candidate_accuracy: f64,
    /// Candidate minus baseline macro-average, in points.
    pub delta_points: f64,
    /// Largest tolerated drop (`gate.max_macro_drop_points`, else `gate.max_drop_points`).
    pub threshold: f64,
    /// The smallest Holm-adjusted p-value of a dataset whose accuracy dropped, when tested.
    pub p_adjusted: Option<f64>,
    /// Whether the macro-average fails the gate.
    pub failed: bool,
}

impl MacroCell {
    /// The change in points as the printed macro-averages make it (see
    /// [`crate::analysis::stats::shown_delta`]); the gate decides on the unrounded one.
    pub fn shown_delta(&self) -> f64 {
        crate::analysis::stats::shown_delta(self.baseline_accuracy, self.candidate_accuracy)
    }
}

/// The macro-average gate of a run over several datasets: its cells, failures and notes, which
/// the report shows in its own table and `summary.json` section.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MacroGate {
    /// The gated metric.
    pub metric: String,
    /// One cell per system compared on every dataset.
    pub cells: Vec<MacroCell>,
    /// Why it failed.
    pub reasons: Vec<String>,
    /// What was not compared, and why.
    pub notes: Vec<String>,
}

/// The macro-average gate over the datasets' verdicts (config order); nothing is compared
/// while the baseline does not hold every dataset.
fn macro_gate(context: &DatasetContext<'_>) -> MacroGate {
    let mut result = MacroGate {
        metric: context.metric.to_string(),
        ..MacroGate::default()
    };
    let missing: Vec<String> = (context.datasets.iter())
        .filter(|d| !d.in_baseline)
        .map(|d| d.name.to_string())
        .collect();
    if !missing.is_empty() {
        result.notes.push(format!(
            "macro-average not compared: the baseline holds no results for {} (new datasets \
             are compared once the baseline holds them)",
            quoted(&missing)
        ));
        return result;
    }
    let Some(first) = context.datasets.first() else {
        return result;
    };
    for comparison in first.verdict.comparisons() {
        let system = &comparison.candidate;
        let mut rows = Vec::new();
        let mut absent = Vec::new();
        for DatasetVerdict { name, verdict, .. } in context.datasets {
            let cell = (verdict.comparisons().iter())
                .find(|c| &c.candidate == system)
                .and_then(|c| c.cells.first());
            match cell {
                Some(c) => rows.push((
                    name.to_string(),
                    c.baseline_accuracy,
                    c.candidate_accuracy,
                    c.p_value,
                )),
                None => absent.push(name.to_string()),
            }
        }
        if absent.is_empty() {
            result.cells.push(macro_cell(context.gate, system, rows));
        } else {
            result.notes.push(format!(
                "{system}: no macro-average (not compared on {})",
                quoted(&absent)
            ));
        }
    }
    for cell in result.cells.iter().filter(|c| c.failed) {
        result.reasons.push(format!(
            "{}: macro-average {} dropped {:.1} points ({} -> {} over {} datasets), \
             more than the allowed {:.1}",
            cell.candidate,
            result.metric,
            -cell.shown_delta(),
            crate::analysis::stats::format_points(cell.baseline_accuracy),
            crate::analysis::stats::format_points(cell.candidate_accuracy),
            cell.datasets.len(),
            cell.threshold
        ));
    }
    result
}

/// One system's macro-average cell from its per-dataset rows.
fn macro_cell(
    gate: &GateConfig,
    system: &str,
    rows: Vec<(String, f64, f64, Option<f64>)>,
) -> MacroCell {
    let n = rows.len() as f64;
    let baseline_accuracy = rows.iter().map(|r| r.1).sum::<f64>() / n;
    let candidate_accuracy = rows.iter().map(|r| r.2).sum::<f64>() / n;
    let delta_points = 100.0 * (candidate_accuracy - baseline_accuracy);
    let threshold = (gate.max_macro_drop_points).unwrap_or(gate.max_drop_points);
    let tested: Option<Vec<f64>> = rows.iter().map(|r| r.3).collect();
    let p_adjusted = tested.and_then(|raw| {
        let adjusted = holm(&raw);
        (rows.iter().zip(adjusted))
            .filter(|(row, _)| row.2 < row.1)
            .map(|(_, p)| p)
            .min_by(f64::total_cmp)
    });
    let significant = match &gate.significance {
        None => true,
        Some(s) => p_adjusted.is_some_and(|p| p < s.alpha),
    };
    MacroCell {
        candidate: system.to_string(),
        datasets: rows,
        baseline_accuracy,
        candidate_accuracy,
        delta_points,
        threshold,
        p_adjusted,
        failed: -delta_points > threshold + 1e-9 && significant,
    }
}

/// The names, each in backquotes, joined by commas.
fn quoted(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    quoted.join(", ")
}
