//! Everything after scoring, shared by `eval`, `merge` and `action`: outputs, baseline
//! comparison, report, gate verdict and publishing.

use super::comment_policy::Posting;
use super::runs::{Runs, Score};
use super::Outputs;
use crate::ci::github::{ActionsContext, CommentOutcome};
use crate::input::config::{Config, BASELINE_MARKER, REPORT_MARKER};
use crate::input::trusted::Snapshot;
use crate::judge::Verdict;
use crate::score::evaluation::Evaluation;
use crate::util::log::{in_actions, log_block, log_value};
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// A file a run writes: the option or key naming it, its path, and the markers one of which a
/// file sqlgate wrote there holds near its start (any other existing file is never replaced).
pub(super) struct NamedOutput {
    pub(super) key: &'static str,
    pub(super) path: PathBuf,
    pub(super) markers: &'static [&'static str],
}

/// The files `outputs` names (the report always), each under the workspace rule.
pub(super) fn named_outputs(config: &Config, outputs: &Outputs) -> Vec<NamedOutput> {
    let report = match &outputs.report {
        Some(path) => ("--report", path.clone()),
        None => ("report.output", config.report_path()),
    };
    let optional: [(&'static str, &Option<PathBuf>, &'static [&'static str]); 5] = [
        ("--jsonl", &outputs.jsonl, JSONL_MARKERS),
        ("--summary", &outputs.summary, &[BASELINE_MARKER]),
        ("--junit", &outputs.junit, &["<testsuites name=\"sqlgate\""]),
        (
            "--leaderboard",
            &outputs.leaderboard,
            &[BASELINE_MARKER, "\"rank\""],
        ),
        ("--scatter", &outputs.scatter, &["<svg"]),
    ];
    std::iter::once(NamedOutput {
        key: report.0,
        path: report.1,
        markers: &[REPORT_MARKER],
    })
    .chain(optional.into_iter().filter_map(|(key, path, markers)| {
        Some(NamedOutput {
            key,
            path: path.clone()?,
            markers,
        })
    }))
    .collect()
}

/// The markers of a JSONL file sqlgate wrote: per-item lines, or a shard's header.
pub(super) const JSONL_MARKERS: &[&str] = &["{\"system\":", "{\"sqlgate_shard\":"];

/// Refuses, before any scoring, an output that enters `.git` or would replace a file sqlgate
/// did not write, or, when the config names it, leaves the workspace.
pub(super) fn check_outputs(config: &Config, outputs: &Outputs) -> anyhow::Result<()> {
    for output in named_outputs(config, outputs) {
        check_output(config, output.key, &output.path, output.markers)?;
    }
    Ok(())
}

/// The workspace rule for one output file, as an error naming the key and the path. A path
/// given as an option (`--jsonl`, `--report`, ...; the Action's inputs arrive as the same
/// options) is the user's and may lie outside the workspace; one the config names may not.
pub(super) fn check_output(
    config: &Config,
    key: &str,
    path: &Path,
    markers: &[&str],
) -> anyhow::Result<()> {
    let workspace = &config.workspace;
    let checked = match key.starts_with("--") {
        true => workspace.user_output_file(key, path, markers),
        false => workspace.output_file(key, path, markers),
    };
    checked.map_err(|message| anyhow::anyhow!("config {}: {message}", config.path.display()))
}

/// Writes the output named `key` at `path` atomically from what `fill` writes, after checking
/// the workspace rule again (the file may have changed since the config was loaded).
pub(super) fn write_output(
    config: &Config,
    (key, path, markers): (&str, &Path, &[&str]),
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    check_output(config, key, path, markers)?;
    crate::util::fs::write_file_atomically(path, fill)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Scores and gates every dataset of the run (one for a `dataset:` config), then writes,
/// prints and publishes its outputs; exit code 1 when a dataset's gate or the macro-average
/// gate fails.
pub(super) fn finish(
    (config, snapshot): (&Config, &Snapshot),
    outputs: Outputs,
    score: Score<'_>,
) -> anyhow::Result<ExitCode> {
    let named = named_outputs(config, &outputs);
    let report_path = named[0].path.clone();
    let report_file = report_path.display().to_string();
    let runs = Runs::score((config, snapshot), &report_file, score)?;
    for output in &named {
        let target = (output.key, output.path.as_path(), output.markers);
        let bytes = match output.key {
            "--jsonl" => runs.jsonl()?,
            "--summary" => runs.summary_json()?,
            "--junit" => runs.junit().into_bytes(),
            "--leaderboard" => runs.leaderboard(config)?,
            "--scatter" => match runs.scatter()? {
                Some(svg) => svg.into_bytes(),
                None => {
                    println!(
                        "no scatter written to {}: no metric besides the reference has an \
                         accuracy",
                        output.path.display()
                    );
                    continue;
                }
            },
            _ => runs.report().into_bytes(),
        };
        write_output(config, target, |out| out.write_all(&bytes))?;
    }
    runs.print_summaries();
    let verdict = runs.verdict();
    print_verdict(verdict);
    print_written(&named);
    let written: Vec<(&str, String)> = [
        ("summary", &outputs.summary),
        ("jsonl", &outputs.jsonl),
        ("junit", &outputs.junit),
    ]
    .into_iter()
    .filter_map(|(key, path)| Some((key, path.as_ref()?.display().to_string())))
    .chain(review_outputs(verdict.flagged_gains()))
    .collect();
    let posting = super::comment_policy::posting(outputs.comment, config, verdict);
    publish(&runs, &report_path, &written, posting)?;
    Ok(verdict.exit_code(!outputs.no_fail_on_regression))
}

/// The verdict line and its reasons, which name systems (file names a pull request chose).
pub(super) fn print_verdict(verdict: &Verdict) {
    let mut text = format!("\ngate {}\n", log_value(&verdict.statement()));
    for line in verdict.reasons().iter().chain(verdict.notes()) {
        text.push_str(&format!("  {}\n", log_value(line)));
    }
    print!("{}", log_block(&text, in_actions()));
}

/// Says which files the run wrote, the report first: run outputs, to keep out of git.
pub(super) fn print_written(named: &[NamedOutput]) {
    let files: Vec<String> = named
        .iter()
        .map(|output| log_value(&output.path.display().to_string()))
        .collect();
    println!(
        "sqlgate: wrote {} (run outputs: list them in .gitignore)",
        files.join(", ")
    );
}

/// Step summary, annotations, step outputs and the PR comment in Actions; the comment on
/// stdout elsewhere.
fn publish(
    runs: &Runs,
    report_path: &Path,
    written: &[(&str, String)],
    posting: Posting,
) -> anyhow::Result<()> {
    let Some(actions) = ActionsContext::from_env() else {
        return Ok(());
    };
    let comment = runs.comment();
    summarise_and_annotate(&actions, &comment, &runs.gated())?;
    let step_outputs = gate_outputs(runs.verdict(), runs.score_and_delta(), report_path, written);
    actions
        .write_outputs(&step_outputs)
        .context("cannot write $GITHUB_OUTPUT")?;
    post(&actions, posting, (runs.marker(), &comment), report_path);
    Ok(())
}

/// Writes the step summary (the comment) and one workflow annotation per regressed item of
/// each gated evaluation, located in the workspace's files.
pub(super) fn summarise_and_annotate(
    actions: &ActionsContext,
    comment: &str,
    gated: &[(&Verdict, &Evaluation)],
) -> anyhow::Result<()> {
    actions
        .write_step_summary(comment)
        .context("cannot write $GITHUB_STEP_SUMMARY")?;
    let workspace = std::env::var_os("GITHUB_WORKSPACE")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::current_dir().ok());
    for (verdict, evaluation) in gated {
        for command in
            crate::ci::annotations::workflow_commands(verdict, evaluation, workspace.as_deref())
        {
            println!("{command}");
        }
    }
    Ok(())
}

/// The step outputs of the gains flagged for review: `review` (whether any) and
/// `review_reason` (the first, empty when none).
pub(super) fn review_outputs(flagged: &[String]) -> [(&'static str, String); 2] {
    [
        ("review", (!flagged.is_empty()).to_string()),
        (
            "review_reason",
            flagged.first().cloned().unwrap_or_default(),
        ),
    ]
}

/// The gate's step outputs: `passed`, `score` and `delta` (the first gated cell's accuracy and
/// its change as the comment shows it: the difference of the two accuracies as printed; empty
/// when nothing was compared), `report`, `reason` (the verdict's, see [`Verdict::reason`]),
/// then the files written.
pub(super) fn gate_outputs<'a>(
    verdict: &Verdict,
    score_and_delta: Option<(f64, f64)>,
    report_path: &Path,
    written: &[(&'a str, String)],
) -> Vec<(&'a str, String)> {
    let mut step_outputs = vec![
        ("passed", verdict.passed().to_string()),
        (
            "score",
            score_and_delta.map_or(String::new(), |(score, _)| {
                crate::analysis::stats::format_points(score)
            }),
        ),
        (
            "delta",
            score_and_delta.map_or(String::new(), |(_, delta)| {
                crate::analysis::stats::format_delta(delta)
            }),
        ),
        ("report", report_path.display().to_string()),
        ("reason", verdict.reason()),
    ];
    step_outputs.extend(written.iter().cloned());
    step_outputs
}

/// Posts (or only updates) the sticky comment as `posting` says, and says what happened.
pub(super) fn post(
    actions: &ActionsContext,
    posting: Posting,
    (marker, comment): (&str, &str),
    report_path: &Path,
) {
    let outcome = match posting {
        Posting::Skip => return,
        Posting::Post => actions.upsert_comment(marker, comment),
        Posting::UpdateOnly => actions.update_comment(marker, comment),
    };
    match outcome {
        CommentOutcome::NotPosted(why) if posting == Posting::UpdateOnly => {
            println!("sqlgate: PR comment not posted ({})", log_value(&why));
        }
        outcome => report_comment(outcome, comment, report_path),
    }
}

/// Says where the comment went, or prints it when it could not be posted (in Actions inside a
/// stop-commands block: its result rows and predictions came from the pull request).
pub(super) fn report_comment(outcome: CommentOutcome, comment: &str, report_path: &Path) {
    match outcome {
        CommentOutcome::Created(id) => println!("sqlgate: created PR comment {id}"),
        CommentOutcome::Updated(id) => println!("sqlgate: updated PR comment {id}"),
        CommentOutcome::NotPosted(why) => {
            println!(
                "sqlgate: PR comment not posted ({}); it is in {} and below:",
                log_value(&why),
                report_path.display()
            );
            print!("{}", log_block(&format!("\n{comment}\n"), in_actions()));
        }
    }
}
