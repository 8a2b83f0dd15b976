//! JUnit XML for CI tools: one test case per gated cell and per `must_pass` item of each
//! compared system, a failure carrying the reason; a run that measured nothing fails one
//! `gate` case, and a run without a baseline skips it. With several datasets, one test suite
//! per dataset and one for the macro-average.

use crate::judge::rules::macro_average::MacroGate;
use crate::judge::Verdict;
use crate::report::escape::xml_text as xml;
use crate::score::evaluation::Evaluation;
use std::fmt::Write as _;

/// One test case: its name, and its failure or skip message.
struct Case {
    name: String,
    failure: Option<String>,
    skipped: Option<String>,
}

/// One `<testsuite>`: its name, the classname of its cases, its properties and its cases.
struct Suite {
    name: String,
    classname: String,
    properties: Vec<(&'static str, String)>,
    cases: Vec<Case>,
}

/// The JUnit XML document of a gate verdict; `must_pass` lists the configured item indexes.
pub fn junit_xml(verdict: &Verdict, evaluation: &Evaluation, must_pass: &[usize]) -> String {
    document(&[Suite {
        name: "sqlgate gate".into(),
        classname: "sqlgate.gate".into(),
        properties: properties(verdict, evaluation),
        cases: gate_cases(verdict, evaluation, must_pass),
    }])
}

/// The JUnit XML document of a run over several datasets (`datasets:`): one test suite per
/// dataset (name, its gate, its scores) with its cells, as [`junit_xml`] gives one dataset's,
/// then one for the macro-average gate, one case per system compared on every dataset;
/// `overall` is the verdict over all of them.
pub fn junit_xml_datasets(datasets: &[(&str, &Verdict, &Evaluation)], overall: &Verdict) -> String {
    let mut suites: Vec<Suite> = datasets
        .iter()
        .map(|(name, verdict, evaluation)| Suite {
            name: format!("sqlgate gate: {name}"),
            classname: format!("sqlgate.gate.{name}"),
            properties: properties(verdict, evaluation),
            cases: gate_cases(verdict, evaluation, &[]),
        })
        .collect();
    suites.push(Suite {
        name: "sqlgate macro-average".into(),
        classname: "sqlgate.macro-average".into(),
        properties: vec![("verdict", overall.cells_headline())],
        cases: macro_cases(overall.macro_average()),
    });
    document(&suites)
}

/// A suite's properties: the verdict and the dataset's digest.
fn properties(verdict: &Verdict, evaluation: &Evaluation) -> Vec<(&'static str, String)> {
    vec![
        ("verdict", verdict.statement()),
        ("dataset_sha256", evaluation.dataset.sha256.clone()),
    ]
}

/// The cases of one gate: one per gated cell and per `must_pass` item of each compared system;
/// a gate that failed with no case to blame fails a `gate` case, one that compared nothing
/// skips it.
fn gate_cases(verdict: &Verdict, evaluation: &Evaluation, must_pass: &[usize]) -> Vec<Case> {
    let mut cases = Vec::new();
    for comparison in verdict.comparisons() {
        let line = |index: usize| {
            evaluation
                .systems
                .iter()
                .find(|s| s.name == comparison.candidate)
                .and_then(|s| s.lines.get(index).copied().flatten())
        };
        for cell in &comparison.cells {
            cases.push(Case {
                name: format!(
                    "{} vs {}: {} on {}",
                    comparison.candidate, comparison.baseline, comparison.metric, cell.difficulty
                ),
                failure: cell.failed.then(|| {
                    format!(
                        "{} -> {} ({} points) on {} items, {} regressed / {} fixed, p \
                         {}, allowed drop {:.1}",
                        crate::analysis::stats::format_points(cell.baseline_accuracy),
                        crate::analysis::stats::format_points(cell.candidate_accuracy),
                        crate::analysis::stats::format_delta(cell.shown_delta()),
                        cell.items,
                        cell.regressed,
                        cell.fixed,
                        cell.p_adjusted
                            .map_or("not tested".into(), crate::analysis::stats::format_p),
                        cell.threshold
                    )
                }),
                skipped: None,
            });
        }
        for &index in must_pass {
            cases.push(Case {
                name: format!(
                    "{}: must-pass item {index}{}",
                    comparison.candidate,
                    line(index).map_or(String::new(), |l| format!(" (line {l})"))
                ),
                failure: comparison
                    .must_pass_regressions
                    .contains(&index)
                    .then(|| format!("item {index} regressed on {}", comparison.metric)),
                skipped: None,
            });
        }
    }
    let attributed = cases.iter().any(|c| c.failure.is_some());
    if !verdict.passed() && !attributed {
        cases.push(Case {
            name: "gate".into(),
            failure: Some(verdict.reasons().join("\n")),
            skipped: None,
        });
    } else if verdict.comparisons().is_empty() {
        cases.push(Case {
            name: "gate".into(),
            failure: None,
            skipped: Some(verdict.statement()),
        });
    }
    cases
}

/// The macro-average's cases: one per system compared on every dataset; a failure no cell
/// explains fails a `macro-average` case, and a macro-average not compared skips it.
fn macro_cases(macro_average: &MacroGate) -> Vec<Case> {
    let mut cases: Vec<Case> = macro_average
        .cells
        .iter()
        .map(|cell| Case {
            name: format!("{}: macro-average {}", cell.candidate, macro_average.metric),
            failure: cell.failed.then(|| {
                format!(
                    "{} -> {} ({} points) over {} datasets, p {}, allowed drop {:.1}",
                    crate::analysis::stats::format_points(cell.baseline_accuracy),
                    crate::analysis::stats::format_points(cell.candidate_accuracy),
                    crate::analysis::stats::format_delta(cell.shown_delta()),
                    cell.datasets.len(),
                    cell.p_adjusted
                        .map_or("not tested".into(), crate::analysis::stats::format_p),
                    cell.threshold
                )
            }),
            skipped: None,
        })
        .collect();
    let attributed = cases.iter().any(|c| c.failure.is_some());
    if !macro_average.reasons.is_empty() && !attributed {
        cases.push(Case {
            name: "macro-average".into(),
            failure: Some(macro_average.reasons.join("\n")),
            skipped: None,
        });
    } else if cases.is_empty() {
        let why = match macro_average.notes.is_empty() {
            true => "macro-average not compared".to_string(),
            false => macro_average.notes.join("; "),
        };
        cases.push(Case {
            name: "macro-average".into(),
            failure: None,
            skipped: Some(why),
        });
    }
    cases
}

/// The document of the given suites.
fn document(suites: &[Suite]) -> String {
    let failed = |suite: &Suite| suite.cases.iter().filter(|c| c.failure.is_some()).count();
    let skipped = |suite: &Suite| suite.cases.iter().filter(|c| c.skipped.is_some()).count();
    let tests: usize = suites.iter().map(|s| s.cases.len()).sum();
    let failures: usize = suites.iter().map(failed).sum();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"sqlgate\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" \
         time=\"0\">"
    );
    for suite in suites {
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" \
             skipped=\"{}\" time=\"0\">",
            xml(&suite.name),
            suite.cases.len(),
            failed(suite),
            skipped(suite)
        );
        let _ = writeln!(out, "    <properties>");
        for (name, value) in &suite.properties {
            let _ = writeln!(
                out,
                "      <property name=\"{name}\" value=\"{}\"/>",
                xml(value)
            );
        }
        let _ = writeln!(out, "    </properties>");
        for case in &suite.cases {
            write_case(&mut out, case, &suite.classname);
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

fn write_case(out: &mut String, case: &Case, classname: &str) {
    let _ = write!(
        out,
        "    <testcase name=\"{}\" classname=\"{}\" time=\"0\"",
        xml(&case.name),
        xml(classname)
    );
    match (&case.failure, &case.skipped) {
        (Some(message), _) => {
            let first = message.lines().next().unwrap_or_default();
            let _ = writeln!(
                out,
                ">\n      <failure message=\"{}\" type=\"regression\">{}</failure>\n    </testcase>",
                xml(first),
                xml(message)
            );
        }
        (None, Some(message)) => {
            let _ = writeln!(
                out,
                ">\n      <skipped message=\"{}\"/>\n    </testcase>",
                xml(message)
            );
        }
        (None, None) => {
            let _ = writeln!(out, "/>");
        }
    }
}
