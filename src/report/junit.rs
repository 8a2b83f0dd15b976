//! JUnit XML for CI tools: one test case per gated cell and per `must_pass` item of each
//! compared system, a failure carrying the reason; a run that measured nothing fails one
//! `gate` case, and a run without a baseline skips it.

use crate::analysis::gate::GateResult;
use crate::score::evaluation::Evaluation;
use std::fmt::Write as _;

/// Escapes text for an XML attribute or element; drops characters XML 1.0 cannot carry.
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' | '\t' => out.push(c),
            c if c.is_control() || c == '\u{fffe}' || c == '\u{ffff}' => {}
            c => out.push(c),
        }
    }
    out
}

/// One test case: its name, and its failure or skip message.
struct Case {
    name: String,
    failure: Option<String>,
    skipped: Option<String>,
}

/// The JUnit XML document of a gate verdict; `must_pass` lists the configured item indexes.
pub fn junit_xml(gate: &GateResult, evaluation: &Evaluation, must_pass: &[usize]) -> String {
    let mut cases = Vec::new();
    for comparison in &gate.comparisons {
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
                        "{:.1} -> {:.1} ({:+.1} points) on {} items, {} regressed / {} fixed, p \
                         {}, allowed drop {:.1}",
                        100.0 * cell.baseline_accuracy,
                        100.0 * cell.candidate_accuracy,
                        cell.delta_points,
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
    if !gate.passed && !attributed {
        cases.push(Case {
            name: "gate".into(),
            failure: Some(gate.reasons.join("\n")),
            skipped: None,
        });
    } else if gate.comparisons.is_empty() {
        cases.push(Case {
            name: "gate".into(),
            failure: None,
            skipped: Some(gate.headline()),
        });
    }
    let failures = cases.iter().filter(|c| c.failure.is_some()).count();
    let skipped = cases.iter().filter(|c| c.skipped.is_some()).count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"sqlgate\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" \
         time=\"0\">",
        cases.len()
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"sqlgate gate\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" \
         skipped=\"{skipped}\" time=\"0\">",
        cases.len()
    );
    let _ = writeln!(out, "    <properties>");
    let _ = writeln!(
        out,
        "      <property name=\"verdict\" value=\"{}\"/>",
        xml(&gate.headline())
    );
    let _ = writeln!(
        out,
        "      <property name=\"dataset_sha256\" value=\"{}\"/>",
        xml(&evaluation.dataset.sha256)
    );
    let _ = writeln!(out, "    </properties>");
    for case in &cases {
        let _ = write!(
            out,
            "    <testcase name=\"{}\" classname=\"sqlgate.gate\" time=\"0\"",
            xml(&case.name)
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
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}
