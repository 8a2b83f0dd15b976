//! The report, `summary.json` and per-item lines of a run over several datasets (`datasets:`):
//! the verdict, the macro-average table, then each dataset's own report under its name.

use crate::analysis::agreement::LeaderboardRow;
use crate::judge::rules::macro_average::MacroGate;
use crate::judge::Verdict;
use crate::report::escape::{markdown_cell, markdown_message};
use serde_json::{json, Value as Json};

/// One dataset's part of the report: its name and its own report (or comment) text.
pub struct Section<'a> {
    /// The `datasets` entry's name.
    pub name: &'a str,
    /// Its report as a one-dataset run renders it (marker line included).
    pub text: &'a str,
}

/// The report of a run over several datasets: the marker, the verdict over all of them, the
/// macro-average table and each dataset's report under a `Dataset` heading.
pub fn render(marker: &str, verdict: &Verdict, sections: &[Section<'_>]) -> String {
    let icon = match (verdict.passed(), verdict.passed_with_review()) {
        (false, _) => "❌",
        (true, true) => "🔎",
        (true, false) => "✅",
    };
    let mut out = format!(
        "{marker}\n## {icon} sqlgate {}\n\n",
        markdown_message(&verdict.headline())
    );
    for line in verdict.headline_detail() {
        out.push_str(&format!("{}\n\n", markdown_message(&line)));
    }
    for line in verdict.reasons_below().iter().chain(&verdict.notes_below()) {
        out.push_str(&format!("- {}\n", markdown_message(line)));
    }
    out.push_str(&macro_table(verdict.macro_average(), sections));
    for section in sections {
        let body = section
            .text
            .split_once('\n')
            .map_or("", |(_, rest)| rest)
            .trim_start_matches('\n');
        let body = body
            .strip_prefix("## ")
            .map_or_else(|| body.to_string(), |b| format!("#### {b}"));
        out.push_str(&format!(
            "\n---\n\n### Dataset `{}`\n\n{body}",
            section.name
        ));
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// The macro-average table: per system its gated accuracy per dataset, the macro-average, the
/// baseline's, the change and the paired tests' Holm-adjusted p-value.
fn macro_table(macro_gate: &MacroGate, sections: &[Section<'_>]) -> String {
    if macro_gate.cells.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\n### Macro-average ({})\n\n| system |",
        markdown_message(&macro_gate.metric)
    );
    for section in sections {
        out.push_str(&format!(" {} |", section.name));
    }
    out.push_str(" macro-average | baseline | Δ points | p (Holm) | |\n|---|");
    out.push_str(&"---:|".repeat(sections.len() + 4));
    out.push_str("---|\n");
    for cell in &macro_gate.cells {
        out.push_str(&format!("| {} |", markdown_cell(&cell.candidate)));
        for (_, _, candidate, _) in &cell.datasets {
            out.push_str(&format!(" {:.1} |", 100.0 * candidate));
        }
        out.push_str(&format!(
            " {:.1} | {:.1} | {:+.1} | {} | {} |\n",
            100.0 * cell.candidate_accuracy,
            100.0 * cell.baseline_accuracy,
            cell.shown_delta(),
            cell.p_adjusted
                .map_or_else(|| "–".to_string(), crate::analysis::stats::format_p),
            if cell.failed { "❌" } else { "✅" }
        ));
    }
    out
}

/// `summary.json` of a run over several datasets: each dataset's one-dataset summary under its
/// name, the macro-average and the verdict over all of them.
pub fn summary_json(sections: Vec<(String, Json)>, verdict: &Verdict) -> Json {
    let macro_gate = verdict.macro_average();
    let names: Vec<&String> = sections.iter().map(|(name, _)| name).collect();
    let cells: Vec<Json> = macro_gate
        .cells
        .iter()
        .map(|cell| {
            let per_dataset: serde_json::Map<String, Json> = cell
                .datasets
                .iter()
                .map(|(name, baseline, candidate, p)| {
                    let row = json!({"baseline": baseline, "candidate": candidate, "p_value": p});
                    (name.clone(), row)
                })
                .collect();
            json!({
                "system": cell.candidate,
                "candidate": cell.candidate_accuracy,
                "baseline": cell.baseline_accuracy,
                "delta_points": cell.delta_points,
                "threshold": cell.threshold,
                "p_adjusted": cell.p_adjusted,
                "failed": cell.failed,
                "datasets": per_dataset,
            })
        })
        .collect();
    let document = json!({
        "sqlgate_version": env!("CARGO_PKG_VERSION"),
        "dataset_names": names,
        "gate": {
            "passed": verdict.passed(),
            "reasons": verdict.reasons(),
            "notes": verdict.notes(),
        },
        "macro_average": {
            "metric": macro_gate.metric,
            "systems": cells,
            "reasons": macro_gate.reasons,
            "notes": macro_gate.notes,
        },
    });
    let mut document = document;
    document["datasets"] = Json::Object(sections.into_iter().collect());
    document
}

/// Per-item JSON lines of one dataset with its name added to each line (`"dataset"`, last).
pub fn tag_lines(name: &str, lines: &[u8]) -> Vec<u8> {
    let tag = format!(",\"dataset\":{}}}", Json::from(name));
    let mut out = Vec::with_capacity(lines.len());
    for line in lines.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        match line.strip_suffix(b"}") {
            Some(head) => {
                out.extend_from_slice(head);
                out.extend_from_slice(tag.as_bytes());
            }
            None => out.extend_from_slice(line),
        }
        out.push(b'\n');
    }
    out
}

/// One system's standing across the datasets of a run: the reference metric's accuracy on each.
struct MacroStanding {
    system: String,
    from_baseline: bool,
    accuracies: Vec<f64>,
}

impl MacroStanding {
    fn mean(&self) -> f64 {
        self.accuracies.iter().sum::<f64>() / self.accuracies.len() as f64
    }
}

/// One dataset's part of the leaderboard: its name, its leaderboard as a one-dataset run writes
/// it, and the rows it was written from.
pub struct DatasetBoard {
    /// The `datasets` entry's name.
    pub name: String,
    /// Its leaderboard JSON.
    pub board: Json,
    /// Its rows.
    pub rows: Vec<LeaderboardRow>,
}

/// The leaderboard of a run over several datasets (config order): each dataset's own under its
/// name, and a `macro_average` ranking of the systems that have the reference metric on every
/// dataset, by the mean of those accuracies (tied means share a rank).
pub fn leaderboard_json(reference: &str, datasets: Vec<DatasetBoard>) -> Json {
    let names: Vec<String> = datasets.iter().map(|d| d.name.clone()).collect();
    let accuracy = |rows: &[LeaderboardRow], row: &LeaderboardRow| {
        rows.iter()
            .find(|r| r.system == row.system && r.from_baseline == row.from_baseline)
            .and_then(|r| r.metrics.get(reference)?.accuracy)
    };
    let standings: Vec<MacroStanding> = (datasets.first().map_or(&[][..], |d| &d.rows))
        .iter()
        .filter_map(|row| {
            let accuracies = (datasets.iter())
                .map(|d| accuracy(&d.rows, row))
                .collect::<Option<Vec<f64>>>()?;
            Some(MacroStanding {
                system: row.system.clone(),
                from_baseline: row.from_baseline,
                accuracies,
            })
        })
        .collect();
    let rank = |s: &MacroStanding| 1 + standings.iter().filter(|o| o.mean() > s.mean()).count();
    let mut ranked: Vec<(usize, &MacroStanding)> = standings.iter().map(|s| (rank(s), s)).collect();
    ranked.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.system.cmp(&b.1.system)));
    let macro_rows: Vec<Json> = ranked
        .into_iter()
        .map(|(rank, standing)| {
            let per_dataset: serde_json::Map<String, Json> = (names.iter())
                .zip(&standing.accuracies)
                .map(|(name, accuracy)| (name.clone(), json!(accuracy)))
                .collect();
            json!({
                "rank": rank,
                "system": standing.system,
                "from_baseline": standing.from_baseline,
                "accuracy": standing.mean(),
                "datasets": per_dataset,
            })
        })
        .collect();
    let sections: serde_json::Map<String, Json> =
        (datasets.into_iter()).map(|d| (d.name, d.board)).collect();
    json!({
        "sqlgate_version": env!("CARGO_PKG_VERSION"),
        "dataset_names": names,
        "reference": reference,
        "macro_average": macro_rows,
        "datasets": sections,
    })
}
