//! The verdict in one line, the same on the report's first screen and on stdout: the gated
//! cell, its delta, regressed / fixed counts, the test and its p-value against alpha, and the
//! allowed drop, so a reader sees why the gate passed or failed without opening a table.

use crate::analysis::comparison::{CellTest, Comparison};

/// The headline the cells tell: the first failed cell (with how many more failures there are),
/// else the first failure (a failed-closed run: nothing measured, a must-pass item), else the
/// first cell that passed; a run that compared nothing says it was not gated and why (its first
/// note).
pub(super) fn of_cells(
    failures: &[String],
    notes: &[String],
    comparisons: &[Comparison],
) -> String {
    let several = comparisons.len() > 1;
    let failing: Vec<(&Comparison, &CellTest)> = comparisons
        .iter()
        .flat_map(|c| {
            c.cells
                .iter()
                .filter(|cell| cell.failed)
                .map(move |cell| (c, cell))
        })
        .collect();
    let more = match failures.len().saturating_sub(1) {
        0 => String::new(),
        n => format!(" (and {n} more, listed below)"),
    };
    if let Some((comparison, cell)) = failing.first() {
        return format!("failed: {}{more}", describe_cell(comparison, cell, several));
    }
    if let Some(failure) = failures.first() {
        return format!("failed: {failure}{more}");
    }
    match comparisons.iter().find_map(|c| Some((c, c.cells.first()?))) {
        Some((comparison, cell)) => format!("passed: {}", describe_cell(comparison, cell, several)),
        None => {
            let why = notes.first().map_or("nothing compared", String::as_str);
            format!(
                "passed, not gated: {}",
                why.strip_prefix("not gated: ").unwrap_or(why)
            )
        }
    }
}

/// The headline over several datasets: passed over N datasets, or the first failure.
pub(super) fn over_datasets(failures: &[String], datasets: usize) -> String {
    match failures.first() {
        None => format!("passed: {datasets} datasets"),
        Some(first) => match failures.len() - 1 {
            0 => format!("failed: {first}"),
            more => format!("failed: {first} (and {more} more, listed below)"),
        },
    }
}

/// `ex 82.7 -> 81.9 (-0.8), 23 regressed / 15 fixed, <why it passed or failed>`.
fn describe_cell(comparison: &Comparison, cell: &CellTest, name_system: bool) -> String {
    let system = if name_system {
        format!("{} ", comparison.candidate)
    } else {
        String::new()
    };
    let on = if cell.difficulty == "all" {
        String::new()
    } else {
        format!(" on {}", cell.difficulty)
    };
    format!(
        "{system}{}{on} {:.1} -> {:.1} ({:+.1}), {} regressed / {} fixed, {}",
        comparison.metric,
        100.0 * cell.baseline_accuracy,
        100.0 * cell.candidate_accuracy,
        cell.shown_delta(),
        cell.regressed,
        cell.fixed,
        why(cell)
    )
}

/// Why a cell passed or failed: the drop against the allowed one, and the test against alpha.
fn why(cell: &CellTest) -> String {
    let drop = -cell.delta_points;
    let within = drop <= cell.threshold + 1e-9;
    let shown = -cell.shown_delta();
    let allowed = if drop <= 0.0 {
        format!("no drop (allowed {:.1})", cell.threshold)
    } else if within {
        format!("drop {shown:.1} <= allowed {:.1}", cell.threshold)
    } else {
        format!("drop {shown:.1} > allowed {:.1}", cell.threshold)
    };
    let test = match (cell.test, cell.p_adjusted, cell.alpha) {
        (Some(test), Some(p), Some(alpha)) => {
            let (sign, meaning) = if p < alpha {
                ("<", "significant")
            } else {
                (">=", "not significant")
            };
            let holm = match cell.p_value {
                Some(raw) if (raw - p).abs() > 1e-12 => " (Holm-adjusted)",
                _ => "",
            };
            Some(format!(
                "{test} p = {}{holm} {sign} {alpha}: {meaning}",
                short_p(p)
            ))
        }
        _ => None,
    };
    let significant = match (cell.p_adjusted, cell.alpha) {
        (Some(p), Some(alpha)) => p < alpha,
        _ => cell.alpha.is_none(),
    };
    let net = cell.regressed.saturating_sub(cell.fixed);
    let capped = cell.max_net_regressed.filter(|&most| net > most);
    // The net-regressed cap is the reason only when the drop and its test alone would pass.
    if let Some(most) = capped.filter(|_| within || !significant) {
        let test = test.map_or(String::new(), |test| format!("; {test}"));
        return format!(
            "{net} net regressed > allowed {most} (max_regressed_items), whatever the test \
             says{test}"
        );
    }
    match test {
        // Within the allowed drop the test does not matter; say so first.
        Some(test) if within => format!("{allowed}; {test}"),
        Some(test) if cell.failed => format!("{test}, {allowed}"),
        Some(test) => format!("{test} (allowed drop {:.1})", cell.threshold),
        None => allowed,
    }
}

/// A p-value with two significant digits, or in scientific notation below 0.001.
fn short_p(p: f64) -> String {
    if p >= 0.1 {
        format!("{p:.2}")
    } else if p >= 0.01 {
        format!("{p:.3}")
    } else if p >= 0.001 {
        format!("{p:.4}")
    } else {
        format!("{p:.1e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(delta: f64, threshold: f64, p: Option<f64>, failed: bool) -> CellTest {
        CellTest {
            difficulty: "all".into(),
            threshold,
            items: 972,
            baseline_accuracy: 0.827,
            candidate_accuracy: 0.827 + delta / 100.0,
            delta_points: delta,
            fixed: 15,
            regressed: 23,
            p_value: p,
            p_adjusted: p,
            test: p.map(|_| "McNemar"),
            alpha: p.map(|_| 0.05),
            max_net_regressed: None,
            failed,
        }
    }

    /// What the headline reads of a verdict.
    struct Gate {
        failures: Vec<String>,
        notes: Vec<String>,
        comparisons: Vec<Comparison>,
    }

    impl Gate {
        fn headline(&self) -> String {
            of_cells(&self.failures, &self.notes, &self.comparisons)
        }
    }

    fn result(cells: Vec<CellTest>, failures: Vec<String>, notes: Vec<String>) -> Gate {
        Gate {
            failures,
            notes,
            comparisons: vec![Comparison {
                candidate: "m".into(),
                baseline: "m".into(),
                metric: "ex".into(),
                cells,
                regressed: Vec::new(),
                fixed: Vec::new(),
                must_pass_regressions: Vec::new(),
                accepted: Vec::new(),
                unstable_not_counted: Vec::new(),
                unstable_not_credited: Vec::new(),
                unmeasured: Vec::new(),
            }],
        }
    }

    #[test]
    fn a_pass_says_the_test_was_not_significant() {
        let gate = result(vec![cell(-0.8, 0.0, Some(0.51), false)], vec![], vec![]);
        assert_eq!(
            gate.headline(),
            "passed: ex 82.7 -> 81.9 (-0.8), 23 regressed / 15 fixed, McNemar p = 0.51 >= \
             0.05: not significant (allowed drop 0.0)"
        );
    }

    #[test]
    fn a_pass_within_the_allowed_drop_says_so() {
        let gate = result(vec![cell(-0.8, 1.0, None, false)], vec![], vec![]);
        assert!(
            gate.headline().ends_with("drop 0.8 <= allowed 1.0"),
            "{}",
            gate.headline()
        );
    }

    #[test]
    fn the_printed_delta_is_the_difference_of_the_printed_accuracies() {
        let mut moved = cell(-1.298, 2.0, None, false);
        (moved.baseline_accuracy, moved.candidate_accuracy) = (0.84249, 0.82951);
        let headline = result(vec![moved], vec![], vec![]).headline();
        assert!(
            headline.starts_with("passed: ex 84.2 -> 83.0 (-1.2), ")
                && headline.ends_with("drop 1.2 <= allowed 2.0"),
            "{headline}"
        );
    }

    #[test]
    fn more_net_regressed_items_than_allowed_fail_whatever_the_test_says() {
        let mut five = cell(-3.2, 0.0, Some(0.0625), true);
        (five.regressed, five.fixed, five.max_net_regressed) = (5, 0, Some(0));
        let gate = result(vec![five], vec!["m: ex on all".into()], vec![]);
        assert_eq!(
            gate.headline(),
            "failed: ex 82.7 -> 79.5 (-3.2), 5 regressed / 0 fixed, 5 net regressed > allowed 0 \
             (max_regressed_items), whatever the test says; McNemar p = 0.062 >= 0.05: not \
             significant"
        );
    }

    #[test]
    fn a_failure_says_the_cell_and_the_test() {
        let gate = result(
            vec![cell(-11.7, 1.0, Some(1.6e-13), true)],
            vec!["m: ex on all dropped".into()],
            vec![],
        );
        assert_eq!(
            gate.headline(),
            "failed: ex 82.7 -> 71.0 (-11.7), 23 regressed / 15 fixed, McNemar p = 1.6e-13 < \
             0.05: significant, drop 11.7 > allowed 1.0"
        );
    }

    #[test]
    fn failing_closed_and_not_gated_keep_their_reasons() {
        let closed = result(
            vec![],
            vec!["no system was compared: the gate measured nothing".into()],
            vec![],
        );
        assert_eq!(
            closed.headline(),
            "failed: no system was compared: the gate measured nothing"
        );
        let first_run = Gate {
            failures: vec![],
            notes: vec!["first run: no baseline at b.json yet".into()],
            comparisons: vec![],
        };
        assert_eq!(
            first_run.headline(),
            "passed, not gated: first run: no baseline at b.json yet"
        );
    }

    #[test]
    fn over_datasets_the_first_failure_or_the_count() {
        assert_eq!(over_datasets(&[], 2), "passed: 2 datasets");
        let failures = ["dataset `a`: x".to_string(), "y".to_string()];
        assert_eq!(
            over_datasets(&failures, 2),
            "failed: dataset `a`: x (and 1 more, listed below)"
        );
    }
}
