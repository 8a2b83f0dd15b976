//! The verdict's headline: one short line the report's heading carries (at most
//! [`HEADLINE_CHARS`] characters, so the heading fits one line), the detail right below it, and
//! one full line for stdout, the step output `reason`, annotations and JUnit. Its signal: the
//! deciding cell (its delta, regressed / fixed counts; the test and the allowed drop below), a
//! gain flagged for review, over several datasets the dataset and cell that changed most; a
//! reason or note too long for the line is cut at a clause and continues below.

use crate::analysis::comparison::{CellTest, Comparison};

/// The most characters of a headline's line: with the report's `❌ sqlgate ` (or the
/// could-not-evaluate `⚠️ sqlgate `) before it, the heading stays within 100.
pub const HEADLINE_CHARS: usize = 88;

/// A verdict's headline.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Headline {
    /// The line, at most [`HEADLINE_CHARS`] characters: `passed: ...`, `failed: ...`.
    pub line: String,
    /// What the line leaves out, shown right below it.
    pub detail: Vec<String>,
    /// The line and its detail as one line.
    pub full: String,
    /// The verdict's reasons and notes the line and detail say in full, which the report does
    /// not list again.
    pub stated: Vec<String>,
}

/// What the headline reads of a verdict.
pub(super) struct Gate<'a> {
    /// Why the gate failed, one line each.
    pub failures: &'a [String],
    /// The notes, in the report's order.
    pub notes: &'a [String],
    /// The judged comparisons.
    pub comparisons: &'a [Comparison],
    /// The gains flagged for review.
    pub flagged_gains: &'a [String],
}

/// The headline over one dataset: the first failed cell (with how many more failures there
/// are), else the first failure (a failed-closed run: nothing measured, a must-pass item), else
/// a gain flagged for review (the cell that gained most), else the first cell; a run that
/// compared nothing says it was not gated and why (its first note).
pub(super) fn of_cells(gate: &Gate<'_>) -> Headline {
    let several = gate.comparisons.len() > 1;
    let more = more_failures(gate.failures.len());
    let failed_cell = (gate.comparisons.iter())
        .flat_map(|c| {
            c.cells
                .iter()
                .filter(|cell| cell.failed)
                .map(move |cell| (c, cell))
        })
        .next();
    if let Some((comparison, cell)) = failed_cell {
        let stated = super::rules::cells::describe_failure(comparison, cell);
        let mut headline = of_cell("failed: ", comparison, cell, several, &more);
        headline.stated = (gate.failures.iter())
            .filter(|f| **f == stated)
            .cloned()
            .collect();
        return headline;
    }
    if let Some(failure) = gate.failures.first() {
        return fitted("failed: ", failure, &more);
    }
    let system = |c: &Comparison| match several {
        true => c.candidate.clone(),
        false => String::new(),
    };
    if let Some(headline) = review(gate, &system) {
        return headline;
    }
    match (gate.comparisons.iter()).find_map(|c| Some((c, c.cells.first()?))) {
        Some((comparison, cell)) => of_cell("passed: ", comparison, cell, several, ""),
        None => {
            let why = gate
                .notes
                .first()
                .map_or("nothing compared", String::as_str);
            let mut headline = fitted(
                "passed, not gated: ",
                why.strip_prefix("not gated: ").unwrap_or(why),
                "",
            );
            headline.stated = gate.notes.first().cloned().into_iter().collect();
            headline
        }
    }
}

/// The headline over several datasets (`names[i]` is the dataset of comparison `i`): the
/// first failure, else a gain flagged for review, else how many datasets passed and the dataset
/// and cell whose accuracy changed most.
pub(super) fn over_datasets(gate: &Gate<'_>, names: &[String], datasets: usize) -> Headline {
    if let Some(first) = gate.failures.first() {
        return fitted("failed: ", first, &more_failures(gate.failures.len()));
    }
    let dataset_of = |comparison: &Comparison| {
        let at = gate
            .comparisons
            .iter()
            .position(|c| std::ptr::eq(c, comparison));
        let name = at.and_then(|at| names.get(at)).map_or("", String::as_str);
        format!("{name} {}", comparison.candidate)
    };
    if let Some(headline) = review(gate, &dataset_of) {
        return headline;
    }
    let largest = (gate.comparisons.iter())
        .flat_map(|c| c.cells.iter().map(move |cell| (c, cell)))
        .filter(|(_, cell)| cell.shown_delta() != 0.0)
        .max_by(|a, b| a.1.shown_delta().abs().total_cmp(&b.1.shown_delta().abs()));
    let Some((comparison, cell)) = largest else {
        let unchanged = if gate.comparisons.is_empty() {
            "nothing compared"
        } else {
            "no gated cell changed"
        };
        let line = format!("passed: {datasets} datasets, {unchanged}");
        return Headline {
            full: line.clone(),
            line,
            ..Headline::default()
        };
    };
    let largest = format!(
        "largest change {}",
        moved(&dataset_of(comparison), comparison, cell)
    );
    let (line, rest) = fit_line(&format!("passed: {datasets} datasets, "), &largest, "");
    let why = format!("{}, {}", counts(cell), why(cell));
    let detail: Vec<String> = rest.into_iter().chain([why]).collect();
    Headline {
        full: format!(
            "passed: {datasets} datasets, {largest}, {}",
            detail.join(", ")
        ),
        line,
        detail,
        stated: Vec::new(),
    }
}

/// A pass with a gain flagged for review: the cell that gained most (every flagged gain passed
/// the same limit, so it is one of them), the flagged gains below (said there, not again among
/// the notes). `None` when no gain is flagged.
fn review(gate: &Gate<'_>, system: &dyn Fn(&Comparison) -> String) -> Option<Headline> {
    gate.flagged_gains.first()?;
    let (comparison, cell) = (gate.comparisons.iter())
        .flat_map(|c| c.cells.iter().map(move |cell| (c, cell)))
        .max_by(|a, b| a.1.delta_points.total_cmp(&b.1.delta_points))?;
    let gained = format!(
        "{}, {}",
        moved(&system(comparison), comparison, cell),
        counts(cell)
    );
    let (line, _) = fit_line("passed, review the gain: ", &gained, "");
    Some(Headline {
        full: format!("{line}; {}", gate.flagged_gains.join("; ")),
        line,
        detail: gate.flagged_gains.to_vec(),
        stated: gate.flagged_gains.to_vec(),
    })
}

/// The headline of one cell: `<status>ex 82.7 -> 81.9 (-0.8), 23 regressed / 15 fixed` on the
/// line, over how many items and why it passed or failed below.
fn of_cell(
    status: &str,
    comparison: &Comparison,
    cell: &CellTest,
    name_system: bool,
    more: &str,
) -> Headline {
    let system = if name_system {
        comparison.candidate.as_str()
    } else {
        ""
    };
    let moved = format!("{}, {}", moved(system, comparison, cell), counts(cell));
    let (line, rest) = fit_line(status, &moved, more);
    let why = why(cell);
    let over = format!("over {} items: {why}", cell.items);
    Headline {
        full: format!("{status}{moved}, {why}{more}"),
        line,
        detail: rest.into_iter().chain([over]).collect(),
        stated: Vec::new(),
    }
}

/// A reason or note under `status` (with `more` after it): whole when it fits the line, else
/// cut at its last clause that fits and continued below.
fn fitted(status: &str, text: &str, more: &str) -> Headline {
    let (line, rest) = fit_line(status, text, more);
    Headline {
        full: format!("{status}{text}{more}"),
        line,
        detail: rest.into_iter().collect(),
        stated: vec![text.to_string()],
    }
}

/// ` (and 2 more below)` after the first of `count` failures, empty for one.
fn more_failures(count: usize) -> String {
    match count.saturating_sub(1) {
        0 => String::new(),
        n => format!(" (and {n} more below)"),
    }
}

/// `prefix text suffix` in at most [`HEADLINE_CHARS`] characters, and what did not fit: the
/// whole of `text` when it fits; else `text` up to its last clause boundary (`: `, `; `, `, `,
/// before ` (`) that fits with its parentheses and backticks closed and fills a quarter of the
/// line, and the rest after it; else `text` cut at a word with `…`, and `…` with the rest. Long reasons of a could-not-evaluate run are cut the
/// same way.
pub fn fit_line(prefix: &str, text: &str, suffix: &str) -> (String, Option<String>) {
    let room = HEADLINE_CHARS.saturating_sub(chars(prefix) + chars(suffix));
    if chars(text) <= room {
        return (format!("{prefix}{text}{suffix}"), None);
    }
    // Each boundary with the length of what is dropped there (a parenthesis is kept below).
    let clause = [(": ", 2), ("; ", 2), (", ", 2), (" (", 1)]
        .iter()
        .flat_map(|(separator, dropped)| {
            text.match_indices(separator).map(|(at, _)| (at, *dropped))
        })
        .filter(|(at, _)| *at > 0 && chars(&text[..*at]) <= room && closed(&text[..*at]))
        .max_by_key(|(at, _)| *at)
        .filter(|(at, _)| 4 * chars(&text[..*at]) >= room);
    if let Some((at, dropped)) = clause {
        let rest = &text[at + dropped..];
        return (
            format!("{prefix}{}{suffix}", &text[..at]),
            Some(rest.to_string()),
        );
    }
    let limit = room.saturating_sub(1);
    let word = (text.match_indices(' '))
        .map(|(at, _)| at)
        .rfind(|at| *at > 0 && chars(&text[..*at]) <= limit && closed(&text[..*at]));
    let end =
        word.unwrap_or_else(|| (text.char_indices().nth(limit)).map_or(text.len(), |(at, _)| at));
    let rest = text[end..].trim_start();
    (
        format!("{prefix}{}…{suffix}", &text[..end]),
        Some(format!("…{rest}")),
    )
}

/// Characters of `text`.
fn chars(text: &str) -> usize {
    text.chars().count()
}

/// Whether `text` closes every parenthesis and backtick quote it opens.
fn closed(text: &str) -> bool {
    text.matches('(').count() == text.matches(')').count() && text.matches('`').count() % 2 == 0
}

/// `<system> ex on hard 82.7 -> 81.9 (-0.8)`.
fn moved(system: &str, comparison: &Comparison, cell: &CellTest) -> String {
    let system = if system.is_empty() {
        String::new()
    } else {
        format!("{system} ")
    };
    let on = if cell.difficulty == "all" {
        String::new()
    } else {
        format!(" on {}", cell.difficulty)
    };
    format!(
        "{system}{}{on} {} -> {} ({})",
        comparison.metric,
        crate::analysis::stats::format_points(cell.baseline_accuracy),
        crate::analysis::stats::format_points(cell.candidate_accuracy),
        crate::analysis::stats::format_delta(cell.shown_delta()),
    )
}

/// `23 regressed / 15 fixed`.
fn counts(cell: &CellTest) -> String {
    format!("{} regressed / {} fixed", cell.regressed, cell.fixed)
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
    struct Owned {
        failures: Vec<String>,
        notes: Vec<String>,
        comparisons: Vec<Comparison>,
        flagged_gains: Vec<String>,
    }

    impl Owned {
        fn gate(&self) -> Gate<'_> {
            Gate {
                failures: &self.failures,
                notes: &self.notes,
                comparisons: &self.comparisons,
                flagged_gains: &self.flagged_gains,
            }
        }

        fn headline(&self) -> Headline {
            of_cells(&self.gate())
        }
    }

    fn comparison(candidate: &str, cells: Vec<CellTest>) -> Comparison {
        Comparison {
            candidate: candidate.into(),
            baseline: candidate.into(),
            metric: "ex".into(),
            cells,
            regressed: Vec::new(),
            fixed: Vec::new(),
            must_pass_regressions: Vec::new(),
            accepted: Vec::new(),
            unstable_not_counted: Vec::new(),
            unstable_not_credited: Vec::new(),
            unmeasured: Vec::new(),
        }
    }

    fn result(cells: Vec<CellTest>, failures: Vec<String>, notes: Vec<String>) -> Owned {
        Owned {
            failures,
            notes,
            comparisons: vec![comparison("m", cells)],
            flagged_gains: Vec::new(),
        }
    }

    #[test]
    fn a_pass_says_the_cell_on_the_line_and_the_test_below() {
        let headline = result(vec![cell(-0.8, 0.0, Some(0.51), false)], vec![], vec![]).headline();
        assert_eq!(
            headline.line,
            "passed: ex 82.7 -> 81.9 (-0.8), 23 regressed / 15 fixed"
        );
        assert_eq!(
            headline.detail,
            ["over 972 items: McNemar p = 0.51 >= 0.05: not significant (allowed drop 0.0)"]
        );
        assert_eq!(
            headline.full,
            "passed: ex 82.7 -> 81.9 (-0.8), 23 regressed / 15 fixed, McNemar p = 0.51 >= \
             0.05: not significant (allowed drop 0.0)"
        );
    }

    #[test]
    fn a_pass_within_the_allowed_drop_says_so() {
        let headline = result(vec![cell(-0.8, 1.0, None, false)], vec![], vec![]).headline();
        assert_eq!(headline.detail, ["over 972 items: drop 0.8 <= allowed 1.0"]);
    }

    #[test]
    fn the_printed_delta_is_the_difference_of_the_printed_accuracies() {
        let mut moved = cell(-1.298, 2.0, None, false);
        (moved.baseline_accuracy, moved.candidate_accuracy) = (0.84249, 0.82951);
        let headline = result(vec![moved], vec![], vec![]).headline();
        assert_eq!(
            headline.line,
            "passed: ex 84.2 -> 83.0 (-1.2), 23 regressed / 15 fixed"
        );
        assert_eq!(headline.detail, ["over 972 items: drop 1.2 <= allowed 2.0"]);
    }

    #[test]
    fn more_net_regressed_items_than_allowed_fail_whatever_the_test_says() {
        let mut five = cell(-3.2, 0.0, Some(0.0625), true);
        (five.regressed, five.fixed, five.max_net_regressed) = (5, 0, Some(0));
        let gate = result(vec![five], vec!["m: ex on all".into()], vec![]);
        assert_eq!(
            gate.headline().full,
            "failed: ex 82.7 -> 79.5 (-3.2), 5 regressed / 0 fixed, 5 net regressed > allowed 0 \
             (max_regressed_items), whatever the test says; McNemar p = 0.062 >= 0.05: not \
             significant"
        );
    }

    #[test]
    fn a_failure_says_the_cell_and_the_test_and_is_not_listed_again() {
        let failed = cell(-11.7, 1.0, Some(1.6e-13), true);
        let reason = crate::judge::rules::cells::describe_failure(
            &comparison("m", vec![failed.clone()]),
            &failed,
        );
        let gate = result(vec![failed], vec![reason.clone(), "other".into()], vec![]);
        let headline = gate.headline();
        assert_eq!(
            headline.line,
            "failed: ex 82.7 -> 71.0 (-11.7), 23 regressed / 15 fixed (and 1 more below)"
        );
        assert_eq!(
            headline.detail,
            ["over 972 items: McNemar p = 1.6e-13 < 0.05: significant, drop 11.7 > allowed 1.0"]
        );
        assert_eq!(headline.stated, [reason]);
    }

    #[test]
    fn failing_closed_and_not_gated_keep_their_reasons() {
        let closed = result(
            vec![],
            vec!["no system was compared: the gate measured nothing".into()],
            vec![],
        );
        assert_eq!(
            closed.headline().line,
            "failed: no system was compared: the gate measured nothing"
        );
        let first_run = Owned {
            failures: vec![],
            notes: vec!["first run: no baseline at b.json yet".into()],
            comparisons: vec![],
            flagged_gains: vec![],
        };
        let headline = first_run.headline();
        assert_eq!(
            headline.line,
            "passed, not gated: first run: no baseline at b.json yet"
        );
        assert_eq!(headline.stated, ["first run: no baseline at b.json yet"]);
    }

    #[test]
    fn a_flagged_gain_is_the_headline_of_a_pass() {
        let mut gate = result(vec![cell(14.9, 0.0, None, false)], vec![], vec![]);
        gate.flagged_gains = vec!["review: m: ex on all gained 14.9 points".into()];
        let headline = gate.headline();
        assert_eq!(
            headline.line,
            "passed, review the gain: ex 82.7 -> 97.6 (+14.9), 23 regressed / 15 fixed"
        );
        assert_eq!(headline.detail, gate.flagged_gains);
        assert_eq!(headline.stated, gate.flagged_gains);
    }

    #[test]
    fn a_long_reason_is_cut_at_a_clause_and_continues_below() {
        let reason = "the baseline is 40.0 days old (commit 0123456789ab, made 2026-10-20), older \
                      than `gate.max_baseline_age_days` (30): refresh it with the baseline workflow";
        let (line, rest) = fit_line("failed: ", reason, " (and 2 more below)");
        assert_eq!(
            line,
            "failed: the baseline is 40.0 days old (and 2 more below)"
        );
        assert_eq!(
            rest.as_deref(),
            Some(
                "(commit 0123456789ab, made 2026-10-20), older than \
                 `gate.max_baseline_age_days` (30): refresh it with the baseline workflow"
            )
        );
        let word = "x".repeat(40) + " " + &"y".repeat(80);
        let (line, rest) = fit_line("failed: ", &word, "");
        assert_eq!(line, format!("failed: {}…", "x".repeat(40)));
        assert_eq!(rest, Some(format!("…{}", "y".repeat(80))));
        let (line, rest) = fit_line("failed: ", &format!("a: {}", "b ".repeat(60)), "");
        assert_eq!(
            line.chars().count(),
            HEADLINE_CHARS - 1,
            "a clause too short to head: {line}"
        );
        assert!(rest.unwrap().starts_with("…b"));
        let (line, _) = fit_line("failed: ", &"z".repeat(200), "");
        assert_eq!(line.chars().count(), HEADLINE_CHARS);
    }

    #[test]
    fn over_datasets_the_first_failure_or_the_largest_change() {
        let mut small = cell(-0.6, 1.0, None, false);
        small.difficulty = "hard".into();
        let owned = Owned {
            failures: vec![],
            notes: vec![],
            comparisons: vec![
                comparison("m", vec![cell(0.0, 1.0, None, false)]),
                comparison("m", vec![cell(0.0, 1.0, None, false), small]),
            ],
            flagged_gains: vec![],
        };
        let names = ["spider".to_string(), "bird".to_string()];
        let headline = over_datasets(&owned.gate(), &names, 2);
        assert_eq!(
            headline.line,
            "passed: 2 datasets, largest change bird m ex on hard 82.7 -> 82.1 (-0.6)"
        );
        assert_eq!(
            headline.detail,
            ["23 regressed / 15 fixed, drop 0.6 <= allowed 1.0"]
        );
        let failures = ["dataset `a`: x".to_string(), "y".to_string()];
        let failing = Owned {
            failures: failures.to_vec(),
            ..owned
        };
        assert_eq!(
            over_datasets(&failing.gate(), &names, 2).line,
            "failed: dataset `a`: x (and 1 more below)"
        );
    }
}
