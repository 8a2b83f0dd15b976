//! The feature cells in the report and `summary.json`: per system and SQL feature of the gold,
//! every metric's accuracy, FP / FN against the reference, and the gated metric's paired
//! comparison with the baseline system.

use crate::analysis::features::{FeatureCell, FeatureTable};
use serde::Serialize;
use serde_json::{json, Map, Value};

/// One row of the report's feature table.
#[derive(Serialize)]
pub struct FeatureRow {
    system: String,
    feature: &'static str,
    items: usize,
    accuracy: String,
    delta: String,
    regressed: String,
    fixed: String,
    p: String,
    false_rates: String,
}

fn percent(value: Option<f64>) -> String {
    value.map_or_else(|| "–".into(), |v| format!("{:.1}", 100.0 * v))
}

/// The report's rows: one per system and feature some gold item has.
pub fn feature_rows(table: &FeatureTable) -> Vec<FeatureRow> {
    table
        .systems
        .iter()
        .flat_map(|(system, cells)| cells.iter().map(move |cell| row(system, cell)))
        .collect()
}

fn row(system: &str, cell: &FeatureCell) -> FeatureRow {
    let accuracy = cell
        .accuracy
        .iter()
        .map(|(metric, (value, n))| format!("{metric} {} n={n}", percent(*value)))
        .collect::<Vec<_>>()
        .join(", ");
    let false_rates = cell
        .false_rates
        .iter()
        .map(|(metric, (fp, fn_))| format!("{metric} {} / {}", percent(*fp), percent(*fn_)))
        .collect::<Vec<_>>()
        .join(", ");
    let paired = cell.paired.as_ref();
    let shown = |f: &dyn Fn(&crate::analysis::features::PairedCell) -> String| {
        paired.map_or_else(|| "–".to_string(), f)
    };
    FeatureRow {
        system: system.to_string(),
        feature: cell.feature.as_str(),
        items: cell.items,
        accuracy,
        delta: shown(&|p| format!("{:+.1}", p.delta_points)),
        regressed: shown(&|p| p.regressed.to_string()),
        fixed: shown(&|p| p.fixed.to_string()),
        p: shown(&|p| match (p.p_value, p.p_adjusted) {
            (Some(raw), Some(adjusted)) => format!("{raw:.4} ({adjusted:.4})"),
            _ => "–".into(),
        }),
        false_rates: if false_rates.is_empty() {
            "–".into()
        } else {
            false_rates
        },
    }
}

/// `summary.json`'s `features`: system -> feature -> items, accuracy, FP / FN and the paired
/// comparison with the baseline (null without one).
pub fn features_json(table: &FeatureTable) -> Value {
    let systems: Map<String, Value> = table
        .systems
        .iter()
        .map(|(system, cells)| {
            let by_feature: Map<String, Value> = cells
                .iter()
                .map(|cell| (cell.feature.as_str().to_string(), cell_json(cell)))
                .collect();
            (system.clone(), Value::Object(by_feature))
        })
        .collect();
    Value::Object(systems)
}

fn cell_json(cell: &FeatureCell) -> Value {
    let accuracy: Map<String, Value> = cell
        .accuracy
        .iter()
        .map(|(m, (value, n))| (m.clone(), json!({"accuracy": value, "n": n})))
        .collect();
    let rates: Map<String, Value> = cell
        .false_rates
        .iter()
        .map(|(m, (fp, fn_))| (m.clone(), json!({"fp": fp, "fn": fn_})))
        .collect();
    json!({
        "items": cell.items,
        "accuracy": accuracy,
        "false_positives_negatives": rates,
        "against_baseline": cell.paired.as_ref().map(|p| json!({
            "baseline": p.baseline,
            "items": p.items,
            "delta_points": p.delta_points,
            "regressed": p.regressed,
            "fixed": p.fixed,
            "p_value": p.p_value,
            "p_holm": p.p_adjusted,
        })),
    })
}
