//! The feature cells in the report and `summary.json`: per system and SQL feature of the gold,
//! every metric's accuracy, FP / FN against the reference, and the gated metric's paired
//! comparison with the baseline system. The report shows the cells the gate judges or that
//! changed; `summary.json` has every cell.

use crate::analysis::comparison::{Comparison, FEATURE_CELL};
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
    value.map_or_else(|| "–".into(), crate::analysis::stats::format_points)
}

/// The report's rows: one per system and feature some gold item has, among them only the cells
/// a reader needs (a feature the gate judges, `gate.per_feature`, or one whose change against
/// the baseline shows at the report's rounding); and how many cells are left out (every cell is
/// in `summary.json`).
pub fn feature_rows(table: &FeatureTable, comparisons: &[Comparison]) -> (Vec<FeatureRow>, usize) {
    let gated = |system: &str, cell: &FeatureCell| {
        let name = format!("{FEATURE_CELL}{}", cell.feature.as_str());
        (comparisons.iter())
            .filter(|c| c.candidate == system)
            .any(|c| c.cells.iter().any(|judged| judged.difficulty == name))
    };
    let changed =
        |cell: &FeatureCell| (cell.paired.as_ref()).is_some_and(|p| p.shown_delta() != 0.0);
    let mut left_out = 0;
    let rows = (table.systems.iter())
        .flat_map(|(system, cells)| cells.iter().map(move |cell| (system, cell)))
        .filter(|(system, cell)| {
            let shown = gated(system, cell) || changed(cell);
            left_out += usize::from(!shown);
            shown
        })
        .map(|(system, cell)| row(system, cell))
        .collect();
    (rows, left_out)
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
        delta: shown(&|p| crate::analysis::stats::format_delta(p.shown_delta())),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::features::PairedCell;
    use crate::sql::features::Feature;

    /// A `join` cell whose paired means go from `before` to `after`.
    fn cell(before: f64, after: f64) -> FeatureCell {
        FeatureCell {
            feature: Feature::Join,
            items: 1000,
            accuracy: [("ex".to_string(), (Some(after), 1000))].into(),
            false_rates: Default::default(),
            paired: Some(PairedCell {
                baseline: "m".into(),
                items: 1000,
                delta_points: 100.0 * (after - before),
                baseline_mean: before,
                candidate_mean: after,
                regressed: 0,
                fixed: 0,
                p_value: None,
                p_adjusted: None,
            }),
        }
    }

    #[test]
    fn the_delta_is_the_printed_means_difference_as_in_every_other_cell() {
        // 84.249 % -> 82.951 % prints 84.2 -> 83.0: -1.2, where the unrounded -1.298 prints -1.3;
        // 50.04 % -> 49.96 % prints 50.0 -> 50.0: no change shown, so the cell is left out.
        let table = FeatureTable {
            systems: vec![(
                "m".into(),
                vec![cell(0.84249, 0.82951), cell(0.5004, 0.4996)],
            )],
        };
        let (rows, left_out) = feature_rows(&table, &[]);
        let deltas: Vec<&str> = rows.iter().map(|r| r.delta.as_str()).collect();
        assert_eq!(deltas, ["-1.2"]);
        assert_eq!(left_out, 1);
    }
}
