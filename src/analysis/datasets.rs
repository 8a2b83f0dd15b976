//! Several datasets in one run (`datasets:`): the baseline file holding one baseline per
//! dataset, and the macro-average gate over the datasets' gated accuracies.
//!
//! The baseline of a config with `datasets:` is `{"sqlgate_version", "commit", "created_unix",
//! "datasets": {"<name>": <a one-dataset baseline>, ...}}`: each section is checked exactly as a
//! one-dataset baseline file (records digest, records, compatibility, ancestry).
//!
//! The macro-average of a system is the mean of its gated accuracy (the `all` cell) over the
//! datasets; it fails when it drops by more than `gate.max_macro_drop_points` (default:
//! `gate.max_drop_points`) against the baseline's
//! macro-average and, with `gate.significance`, the drop is significant: some dataset whose
//! accuracy dropped has its paired test (the `all` cell's McNemar or bootstrap p-value)
//! significant after Holm's correction over the datasets.

use crate::analysis::baseline::Baseline;
use crate::analysis::gate::GateResult;
use crate::analysis::stats::holm;
use crate::input::config::{Config, BASELINE_SECTIONS as SECTIONS};
use crate::util::error::InputError;
use serde_json::{json, Value as Json};
use std::path::Path;

/// The baseline a file holds for what a repairing pull request reads of it (its commit and
/// recorded gate): a one-dataset file, or the first section of a file with several.
pub fn recorded(path: &Path, bytes: &[u8]) -> Result<Baseline, InputError> {
    let value = parse_json(path, bytes)?;
    match value.get(SECTIONS).and_then(Json::as_object) {
        Some(sections) => {
            let first = sections.values().next().ok_or_else(|| {
                InputError::malformed(path, SECTIONS, "the baseline holds no dataset")
            })?;
            Baseline::parse(
                path,
                &serde_json::to_vec(first).expect("JSON values serialize"),
            )
        }
        None => Baseline::parse(path, bytes),
    }
}

/// Every baseline a file holds with its dataset's name: one unnamed baseline in a one-dataset
/// file, else one per section in file order.
pub fn sections(path: &Path, bytes: &[u8]) -> Result<Vec<(Option<String>, Baseline)>, InputError> {
    let value = parse_json(path, bytes)?;
    let Some(sections) = value.get(SECTIONS).and_then(Json::as_object) else {
        return Ok(vec![(None, Baseline::parse(path, bytes)?)]);
    };
    (sections.iter())
        .map(|(name, section)| {
            let bytes = serde_json::to_vec(section).expect("JSON values serialize");
            Ok((Some(name.clone()), Baseline::parse(path, &bytes)?))
        })
        .collect()
}

/// The baseline file of a config with `datasets:`, from one baseline per dataset (config order).
pub fn sectioned_baseline(sections: &[(String, Baseline)]) -> Json {
    let first = sections.first().map(|(_, b)| b);
    let mut map = serde_json::Map::new();
    for (name, baseline) in sections {
        map.insert(
            name.clone(),
            serde_json::to_value(baseline).expect("baselines serialize"),
        );
    }
    json!({
        "sqlgate_version": env!("CARGO_PKG_VERSION"),
        "commit": first.and_then(|b| b.commit.clone()),
        "created_unix": first.and_then(|b| b.created_unix),
        SECTIONS: map,
    })
}

fn parse_json(path: &Path, bytes: &[u8]) -> Result<Json, InputError> {
    serde_json::from_slice(bytes)
        .map_err(|e| InputError::malformed(path, format!("line {}", e.line()), e.to_string()))
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

/// The macro-average gate of a run over several datasets.
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

/// The macro-average gate over the per-dataset verdicts `gates` (config order, each with its
/// dataset's name); `missing` names the datasets the baseline does not hold.
pub fn macro_gate(
    config: &Config,
    gates: &[(String, &GateResult)],
    missing: &[String],
) -> MacroGate {
    let mut result = MacroGate {
        metric: config.gate_metric().to_string(),
        ..MacroGate::default()
    };
    if !missing.is_empty() {
        result.notes.push(format!(
            "macro-average not compared: the baseline holds no results for {} (new datasets \
             are compared once the baseline holds them)",
            quoted(missing)
        ));
        return result;
    }
    let Some((_, first)) = gates.first() else {
        return result;
    };
    for comparison in &first.comparisons {
        let system = &comparison.candidate;
        let mut rows = Vec::new();
        let mut absent = Vec::new();
        for (name, gate) in gates {
            let cell = (gate.comparisons.iter())
                .find(|c| &c.candidate == system)
                .and_then(|c| c.cells.first());
            match cell {
                Some(c) => rows.push((
                    name.clone(),
                    c.baseline_accuracy,
                    c.candidate_accuracy,
                    c.p_value,
                )),
                None => absent.push(name.clone()),
            }
        }
        if absent.is_empty() {
            result.cells.push(macro_cell(config, system, rows));
        } else {
            result.notes.push(format!(
                "{system}: no macro-average (not compared on {})",
                quoted(&absent)
            ));
        }
    }
    for cell in result.cells.iter().filter(|c| c.failed) {
        result.reasons.push(format!(
            "{}: macro-average {} dropped {:.1} points ({:.1}% -> {:.1}% over {} datasets), \
             more than the allowed {:.1}",
            cell.candidate,
            result.metric,
            -cell.delta_points,
            100.0 * cell.baseline_accuracy,
            100.0 * cell.candidate_accuracy,
            cell.datasets.len(),
            cell.threshold
        ));
    }
    result
}

/// One system's macro-average cell from its per-dataset rows.
fn macro_cell(
    config: &Config,
    system: &str,
    rows: Vec<(String, f64, f64, Option<f64>)>,
) -> MacroCell {
    let n = rows.len() as f64;
    let baseline_accuracy = rows.iter().map(|r| r.1).sum::<f64>() / n;
    let candidate_accuracy = rows.iter().map(|r| r.2).sum::<f64>() / n;
    let delta_points = 100.0 * (candidate_accuracy - baseline_accuracy);
    let threshold = (config.gate.max_macro_drop_points).unwrap_or(config.gate.max_drop_points);
    let tested: Option<Vec<f64>> = rows.iter().map(|r| r.3).collect();
    let p_adjusted = tested.and_then(|raw| {
        let adjusted = holm(&raw);
        (rows.iter().zip(adjusted))
            .filter(|(row, _)| row.2 < row.1)
            .map(|(_, p)| p)
            .min_by(f64::total_cmp)
    });
    let significant = match &config.gate.significance {
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

fn quoted(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    quoted.join(", ")
}
