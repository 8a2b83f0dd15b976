//! Everything after scoring, shared by `eval`, `merge` and `action`: outputs, baseline
//! comparison, report, gate verdict and publishing.

use super::{CommentMode, Outputs};
use crate::ci::github::{ActionsContext, CommentOutcome};
use crate::commands::gate_run::{self, GateRun};
use crate::input::config::Config;
use crate::report::summary::{self, Summary};
use crate::score::evaluation::Evaluation;
use anyhow::Context;
use std::path::Path;
use std::process::ExitCode;

/// Writes `content` to `path` atomically, naming the file on failure.
pub(super) fn write(path: &Path, content: &str) -> anyhow::Result<()> {
    crate::util::fs::write_atomically(path, content.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Outputs, baseline comparison, report, gate, GitHub; exit code 1 when the gate fails.
pub(super) fn finish(
    config: &Config,
    evaluation: Evaluation,
    outputs: Outputs,
) -> anyhow::Result<ExitCode> {
    let summary = Summary::of(&evaluation);
    let report_path = outputs.report.unwrap_or_else(|| config.report_path());
    let gate_run = gate_run::gate_run(config, &evaluation, &report_path.display().to_string())?;
    let written: Vec<(&str, String)> = [
        ("summary", &outputs.summary),
        ("jsonl", &outputs.jsonl),
        ("junit", &outputs.junit),
    ]
    .into_iter()
    .filter_map(|(key, path)| Some((key, path.as_ref()?.display().to_string())))
    .collect();
    if let Some(path) = outputs.jsonl {
        crate::util::fs::write_file_atomically(&path, |out| {
            crate::report::jsonl::write_jsonl(&evaluation, out)
        })
        .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = outputs.summary {
        let mut document = summary::summary_json(
            &evaluation,
            &summary,
            Some((&gate_run.analysis, &gate_run.gate)),
        );
        document["comparison_contract"] =
            serde_json::to_value(crate::analysis::baseline::Settings::of(config))?;
        write(&path, &(serde_json::to_string_pretty(&document)? + "\n"))?;
    }
    if let Some(path) = &outputs.junit {
        let xml =
            crate::report::junit::junit_xml(&gate_run.gate, &evaluation, &config.gate.must_pass);
        write(path, &xml)?;
    }
    if let Some(path) = &outputs.leaderboard {
        let board = summary::leaderboard_json(
            &gate_run.analysis,
            &evaluation,
            config,
            gate_run.baseline_commit.as_deref(),
        );
        write(path, &(serde_json::to_string_pretty(&board)? + "\n"))?;
    }
    if let Some(path) = &outputs.scatter {
        match crate::report::scatter::leaderboard_svg(&gate_run.analysis)
            .map_err(anyhow::Error::msg)?
        {
            Some(svg) => write(path, &svg)?,
            None => println!(
                "no scatter written to {}: no metric besides the reference has an accuracy",
                path.display()
            ),
        }
    }
    write(&report_path, &gate_run.report)?;
    print!("{}", summary::human(&evaluation, &summary));
    print_verdict(&gate_run);
    publish(
        &gate_run,
        &evaluation,
        &report_path,
        &written,
        outputs.comment,
    )?;
    let failed = !gate_run.gate.passed && !outputs.no_fail_on_regression;
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn print_verdict(run: &GateRun) {
    println!("\ngate {}", run.gate.headline());
    for line in run.gate.reasons.iter().chain(&run.gate.notes) {
        println!("  {line}");
    }
}

/// Step summary, step outputs and the PR comment in Actions; the comment on stdout elsewhere.
fn publish(
    run: &GateRun,
    evaluation: &Evaluation,
    report_path: &Path,
    written: &[(&str, String)],
    mode: CommentMode,
) -> anyhow::Result<()> {
    let Some(actions) = ActionsContext::from_env() else {
        return Ok(());
    };
    actions
        .write_step_summary(&run.comment)
        .context("cannot write $GITHUB_STEP_SUMMARY")?;
    let workspace = std::env::var_os("GITHUB_WORKSPACE")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::current_dir().ok());
    for command in
        crate::ci::annotations::workflow_commands(&run.gate, evaluation, workspace.as_deref())
    {
        println!("{command}");
    }
    let first = run.gate.comparisons.first().and_then(|c| c.cells.first());
    let mut step_outputs = vec![
        ("passed", run.gate.passed.to_string()),
        (
            "score",
            first.map_or(String::new(), |c| format!("{:.4}", c.candidate_accuracy)),
        ),
        (
            "delta",
            first.map_or(String::new(), |c| format!("{:.2}", c.delta_points)),
        ),
        ("report", report_path.display().to_string()),
    ];
    step_outputs.extend(written.iter().cloned());
    actions
        .write_outputs(&step_outputs)
        .context("cannot write $GITHUB_OUTPUT")?;
    if mode == CommentMode::Never {
        return Ok(());
    }
    report_comment(
        actions.upsert_comment(&run.marker, &run.comment),
        &run.comment,
        report_path,
    );
    Ok(())
}

/// Says where the comment went, or prints it when it could not be posted.
pub(super) fn report_comment(outcome: CommentOutcome, comment: &str, report_path: &Path) {
    match outcome {
        CommentOutcome::Created(id) => println!("sqlgate: created PR comment {id}"),
        CommentOutcome::Updated(id) => println!("sqlgate: updated PR comment {id}"),
        CommentOutcome::NotPosted(why) => {
            println!(
                "sqlgate: PR comment not posted ({why}); it is in {} and below:\n\n{comment}",
                report_path.display()
            );
        }
    }
}
