//! GitHub workflow commands that put the verdict where a reviewer looks: each regressed item
//! becomes a `::warning` on its line of the prediction file (capped), a failed gate an `::error`.

use crate::judge::Verdict;
use crate::score::evaluation::Evaluation;
use crate::util::log::{workflow_message as message, workflow_property as property};
use std::path::Path;

/// Most regressed items annotated in one run; GitHub shows only the first few anyway.
pub const MAX_ANNOTATIONS: usize = 50;

/// The `::error` workflow command of a run that stopped before its verdict, with `reason`.
pub fn error_command(reason: &str) -> String {
    format!(
        "::error title=sqlgate could not evaluate::{}",
        message(reason)
    )
}

/// The workflow commands of a verdict: one `::warning` per regressed item (at most
/// [`MAX_ANNOTATIONS`], then a `::notice` saying how many were left out) on the prediction file,
/// relative to `workspace` when it lies inside, and an `::error` when the gate failed.
pub fn workflow_commands(
    verdict: &Verdict,
    evaluation: &Evaluation,
    workspace: Option<&Path>,
) -> Vec<String> {
    let mut commands = Vec::new();
    let mut left_out = 0;
    for comparison in verdict.comparisons() {
        let Some(system) = evaluation
            .systems
            .iter()
            .find(|s| s.name == comparison.candidate)
        else {
            continue;
        };
        let absolute = std::path::absolute(&system.path).unwrap_or_else(|_| system.path.clone());
        let file = workspace
            .and_then(|w| absolute.strip_prefix(w).ok())
            .unwrap_or(&system.path);
        for &index in &comparison.regressed {
            if commands.len() == MAX_ANNOTATIONS {
                left_out += 1;
                continue;
            }
            let item = &evaluation.dataset.items[index];
            let line = system.lines[index].map_or(String::new(), |l| format!(",line={l}"));
            commands.push(format!(
                "::warning file={}{line},title={}::{}",
                property(&file.display().to_string()),
                property(&format!("sqlgate: {} regressed", comparison.metric)),
                message(&format!(
                    "{}: item {index} ({}) was right in the baseline ({}) and is wrong now; gold: {}",
                    comparison.candidate, item.db_id, comparison.baseline, item.sql
                ))
            ));
        }
    }
    if left_out > 0 {
        commands.push(format!(
            "::notice title=sqlgate::{left_out} more regressed items are not annotated (see the report)"
        ));
    }
    if !verdict.passed() {
        commands.push(format!(
            "::error title=sqlgate::{}",
            message(&verdict.statement())
        ));
    }
    commands
}
