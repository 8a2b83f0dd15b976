//! The gold audit's outputs: the console listing, JSON lines (one finding per line), the
//! Markdown section of `sqlgate audit --report`, and the comment's view of the reviewed gold
//! overrides and of the findings on regressed items.

use crate::analysis::audit::{Finding, Kind};
use crate::input::overrides::GoldOverrides;
use crate::report::escape::{markdown_cell, markdown_message};
use serde::Serialize;
use std::collections::BTreeMap;

/// The heading of the Markdown section (also how a file the audit wrote is recognised).
pub const HEADING: &str = "## Gold audit";

/// Every finding on one line each, then the count per kind.
pub fn console(findings: &[Finding], items: usize) -> String {
    let mut text = String::new();
    for finding in findings {
        text.push_str(&format!(
            "#{} {} {}: {}\n",
            finding.index,
            crate::util::log::log_value(&finding.db_id),
            finding.kind.as_str(),
            crate::util::log::log_value(&finding.evidence)
        ));
    }
    let flagged: std::collections::BTreeSet<usize> = findings.iter().map(|f| f.index).collect();
    text.push_str(&format!(
        "gold audit: {} findings on {} of {items} items\n",
        findings.len(),
        flagged.len()
    ));
    for (kind, count) in counts(findings) {
        text.push_str(&format!("  {:<22} {count}\n", kind.as_str()));
    }
    text
}

fn counts(findings: &[Finding]) -> BTreeMap<Kind, usize> {
    let mut counts = BTreeMap::new();
    for finding in findings {
        *counts.entry(finding.kind).or_insert(0) += 1;
    }
    counts
}

/// One JSON object per finding: `{"index", "db_id", "kind", "evidence"}`, and `"dataset"` (its
/// name) last when the config names several datasets.
pub fn write_jsonl(
    findings: &[Finding],
    dataset: Option<&str>,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    #[derive(Serialize)]
    struct Line<'a> {
        #[serde(flatten)]
        finding: &'a Finding,
        #[serde(skip_serializing_if = "Option::is_none")]
        dataset: Option<&'a str>,
    }
    for finding in findings {
        serde_json::to_writer(&mut *out, &Line { finding, dataset })?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// The Markdown section: counts per kind, the findings by item, and the reviewed overrides.
pub fn markdown(findings: &[Finding], overrides: &GoldOverrides) -> String {
    format!("{HEADING}\n\n{}", body(findings, overrides, "###"))
}

/// The Markdown section of a config with several datasets: one part per dataset (name,
/// findings, overrides), each as [`markdown`] gives one dataset's.
pub fn markdown_datasets(datasets: &[(&str, &[Finding], &GoldOverrides)]) -> String {
    let mut text = format!("{HEADING}\n");
    for (name, findings, overrides) in datasets {
        text.push_str(&format!(
            "\n### Dataset {}\n\n{}",
            markdown_message(&format!("`{name}`")),
            body(findings, overrides, "####")
        ));
    }
    text
}

/// One dataset's part of the section; `heading` is the level of its overrides' heading.
fn body(findings: &[Finding], overrides: &GoldOverrides, heading: &str) -> String {
    let mut text = String::new();
    if findings.is_empty() {
        text.push_str("No findings.\n");
    } else {
        text.push_str("| kind | findings |\n|---|---:|\n");
        for (kind, count) in counts(findings) {
            text.push_str(&format!("| `{}` | {count} |\n", kind.as_str()));
        }
        text.push_str("\n| item | db_id | kind | evidence |\n|---:|---|---|---|\n");
        for finding in findings {
            text.push_str(&format!(
                "| {} | {} | `{}` | {} |\n",
                finding.index,
                markdown_cell(&finding.db_id),
                finding.kind.as_str(),
                markdown_cell(&finding.evidence)
            ));
        }
    }
    let reviewed = override_views(overrides);
    if !reviewed.is_empty() {
        text.push_str(&format!(
            "\n{heading} Reviewed gold overrides\n\n| item | action | reason |\n|---:|---|---|\n"
        ));
        for view in reviewed {
            text.push_str(&format!(
                "| {} | {} | {} |\n",
                view.index,
                view.action,
                markdown_cell(&view.reason)
            ));
        }
    }
    text
}

/// One reviewed override as the comment shows it (the template escapes the reason).
#[derive(Debug, Clone, Serialize)]
pub struct OverrideView {
    /// The item.
    pub index: usize,
    /// The item's database.
    pub db_id: String,
    /// `alternatives`, `replaced` or `excluded`.
    pub action: &'static str,
    /// The reviewer's reason.
    pub reason: String,
}

/// The reviewed overrides of a run, by item (also `summary.json`'s `gold_overrides`).
pub fn override_views(overrides: &GoldOverrides) -> Vec<OverrideView> {
    overrides
        .items
        .values()
        .map(|o| OverrideView {
            index: o.index,
            db_id: o.db_id.clone(),
            action: o.action.as_str(),
            reason: o.reason.clone(),
        })
        .collect()
}

/// A regressed item whose gold the audit flags, as the comment shows it.
#[derive(Debug, Clone, Serialize)]
pub struct FlaggedView {
    /// The item.
    pub index: usize,
    /// The kinds of its findings, comma-separated (`limit-tie, null-order`).
    pub kinds: String,
    /// Their evidence, `;`-separated (the template escapes it).
    pub evidence: String,
}

/// The findings on regressed items, one view per item, items that a reviewed override already
/// covers left out (their findings are closed).
pub fn flagged_views(findings: &[Finding], overrides: &GoldOverrides) -> Vec<FlaggedView> {
    let mut by_item: BTreeMap<usize, Vec<&Finding>> = BTreeMap::new();
    for finding in findings {
        if !overrides.items.contains_key(&finding.index) {
            by_item.entry(finding.index).or_default().push(finding);
        }
    }
    by_item
        .into_iter()
        .map(|(index, found)| FlaggedView {
            index,
            kinds: found
                .iter()
                .map(|f| f.kind.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            evidence: found
                .iter()
                .map(|f| f.evidence.as_str())
                .collect::<Vec<_>>()
                .join("; "),
        })
        .collect()
}

/// One system's EX-right / TS-wrong flips (items whose test-suite verdict carries a
/// counterexample), split by whether the audit flags the item's gold.
#[derive(Debug, Clone, Serialize)]
pub struct FlipSplit {
    /// The system.
    pub system: String,
    /// Its flips.
    pub flips: usize,
    /// Those on golds the audit flags.
    pub on_flagged: usize,
}

/// Each system's flips split by flagged golds (systems without flips left out).
pub fn flip_splits(
    evaluation: &crate::score::evaluation::Evaluation,
    findings: &[Finding],
) -> Vec<FlipSplit> {
    evaluation
        .flipped_items()
        .into_iter()
        .enumerate()
        .filter(|(_, items)| !items.is_empty())
        .map(|(system, items)| FlipSplit {
            system: evaluation.systems[system].name.clone(),
            flips: items.len(),
            on_flagged: items
                .iter()
                .filter(|i| findings.iter().any(|f| f.index == **i))
                .count(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(index: usize, kind: Kind, evidence: &str) -> Finding {
        Finding {
            index,
            db_id: "db".into(),
            kind,
            evidence: evidence.into(),
        }
    }

    #[test]
    fn each_output_lists_every_finding() {
        let findings = [
            finding(3, Kind::LimitTie, "on db.sqlite: rows 1 and 2 tie | x"),
            finding(3, Kind::NullOrder, "n"),
            finding(9, Kind::GoldError, "e"),
        ];
        let mut jsonl = Vec::new();
        write_jsonl(&findings, None, &mut jsonl).unwrap();
        assert_eq!(
            String::from_utf8(jsonl).unwrap().lines().next().unwrap(),
            "{\"index\":3,\"db_id\":\"db\",\"kind\":\"limit-tie\",\"evidence\":\"on db.sqlite: rows 1 and 2 tie | x\"}"
        );
        let mut jsonl = Vec::new();
        write_jsonl(&findings, Some("bird"), &mut jsonl).unwrap();
        assert_eq!(
            String::from_utf8(jsonl).unwrap().lines().nth(2).unwrap(),
            "{\"index\":9,\"db_id\":\"db\",\"kind\":\"gold-error\",\"evidence\":\"e\",\"dataset\":\"bird\"}"
        );
        let text = console(&findings, 10);
        assert!(text.contains("#9 db gold-error: e\n"), "{text}");
        assert!(
            text.contains("gold audit: 3 findings on 2 of 10 items"),
            "{text}"
        );
        let section = markdown(&findings, &GoldOverrides::default());
        assert!(section.starts_with(HEADING));
        assert!(
            section.contains("| 3 | db | `limit-tie` | on db.sqlite: rows 1 and 2 tie &#124; x |"),
            "{section}"
        );
        let none = GoldOverrides::default();
        let both = markdown_datasets(&[("spider", &findings, &none), ("bird", &[], &none)]);
        assert!(
            both.starts_with(&format!("{HEADING}\n\n### Dataset `spider`\n\n| kind |"))
                && both.ends_with("### Dataset `bird`\n\nNo findings.\n"),
            "{both}"
        );
        let flagged = flagged_views(&findings, &GoldOverrides::default());
        assert_eq!(flagged.len(), 2);
        assert_eq!(flagged[0].kinds, "limit-tie, null-order");
    }
}
