//! `eval`, `action` and `baseline update` of a config with `datasets:`: each dataset is scored,
//! compared and gated exactly as a one-dataset config, then one report, one `summary.json`, one
//! set of per-item lines and one comment cover them all, judged once more over the datasets
//! ([`crate::judge::judge_datasets`]: the macro-average gate).

use super::comment_policy::Posting;
use super::finish::{self, named_outputs, write_output};
use super::gate_run::{self, GateRun};
use super::Outputs;
use crate::analysis::baseline::Baseline;
use crate::analysis::datasets::sectioned_baseline;
use crate::ci::github::ActionsContext;
use crate::input::config::{in_entry, Config};
use crate::input::trusted::Snapshot;
use crate::judge::{DatasetContext, DatasetVerdict, Verdict};
use crate::report::datasets::Section;
use crate::report::summary::{self, Summary};
use crate::score::evaluation::Evaluation;
use crate::util::error::InputError;
use crate::util::log::{in_actions, log_block};
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// One dataset of the run: its config, scores, summary and gated report.
struct DatasetRun {
    config: Config,
    evaluation: Evaluation,
    summary: Summary,
    gate_run: GateRun,
}

impl DatasetRun {
    fn name(&self) -> &str {
        self.config.dataset_name()
    }
}

/// Refuses, before any scoring, the outputs a run over several datasets does not write.
pub(super) fn check_outputs(config: &Config, outputs: &Outputs) -> anyhow::Result<()> {
    if !config.is_multi() {
        return Ok(());
    }
    anyhow::ensure!(
        outputs.scatter.is_none(),
        "config {}: `datasets`: `--scatter` is written for one dataset only; drop it, or run a \
         config with `dataset:`",
        config.path.display()
    );
    Ok(())
}

/// Scores and gates every dataset, then writes, prints and publishes the run over all of them;
/// exit code 1 when a dataset's gate or the macro-average gate fails.
pub(super) fn finish_datasets(
    (config, snapshot): (&Config, &Snapshot),
    outputs: Outputs,
    score: &dyn Fn(&Config, &Snapshot) -> Result<Evaluation, InputError>,
) -> anyhow::Result<ExitCode> {
    let named = named_outputs(config, &outputs);
    let report_path = named[0].path.clone();
    let report_file = report_path.display().to_string();
    let mut runs = Vec::new();
    for one in config.dataset_configs() {
        let evaluation = score(&one, snapshot).map_err(|e| in_entry(&one, e))?;
        let gate_run = gate_run::gate_run((&one, snapshot), &evaluation, &report_file)
            .map_err(|e| in_entry(&one, e))?;
        let summary = Summary::of(&evaluation);
        runs.push(DatasetRun {
            config: one,
            evaluation,
            summary,
            gate_run,
        });
    }
    let verdict = judge_datasets(config, &runs);
    let render = |comment: bool| {
        let sections: Vec<Section<'_>> = (runs.iter())
            .map(|r| Section {
                name: r.name(),
                text: if comment {
                    &r.gate_run.comment
                } else {
                    &r.gate_run.report
                },
            })
            .collect();
        crate::report::datasets::render(&runs[0].gate_run.marker, &verdict, &sections)
    };
    let report = render(false);
    let comment = crate::report::markdown::fit_comment(&render(true));
    for output in &named {
        let target = (output.key, output.path.as_path(), output.markers);
        let bytes = match output.key {
            "--jsonl" => jsonl(&runs)?,
            "--summary" => summary_json(&runs, &verdict)?,
            "--junit" => junit(&runs, &verdict).into_bytes(),
            "--leaderboard" => leaderboard(config, &runs)?,
            _ => report.clone().into_bytes(),
        };
        write_output(config, target, |out| out.write_all(&bytes))?;
    }
    for run in &runs {
        let human = summary::human(&run.evaluation, &run.summary);
        let text = format!("dataset `{}`:\n{human}", run.name());
        print!("{}", log_block(&text, in_actions()));
    }
    finish::print_verdict(&verdict);
    finish::print_written(&named);
    let posting = super::comment_policy::posting(outputs.comment, config, &verdict);
    let written: Vec<(&str, String)> = [
        ("summary", &outputs.summary),
        ("jsonl", &outputs.jsonl),
        ("junit", &outputs.junit),
    ]
    .into_iter()
    .filter_map(|(key, path)| Some((key, path.as_ref()?.display().to_string())))
    .chain(finish::review_outputs(verdict.flagged_gains()))
    .collect();
    let publication = Publication {
        verdict: &verdict,
        marker: &runs[0].gate_run.marker,
        comment: &comment,
    };
    publish(&publication, &runs, &report_path, &written, posting)?;
    Ok(verdict.exit_code(!outputs.no_fail_on_regression))
}

/// The verdict over all datasets: each dataset's own, judged once more by the dataset rules
/// (the macro-average) with the config's gate.
fn judge_datasets(config: &Config, runs: &[DatasetRun]) -> Verdict {
    let datasets: Vec<DatasetVerdict<'_>> = (runs.iter())
        .map(|run| DatasetVerdict {
            name: run.name(),
            verdict: &run.gate_run.verdict,
            in_baseline: !run.gate_run.not_in_baseline,
        })
        .collect();
    crate::judge::judge_datasets(&DatasetContext {
        gate: &config.gate,
        metric: config.gate_metric(),
        datasets: &datasets,
    })
}

/// Every dataset's per-item lines, each with its dataset's name.
fn jsonl(runs: &[DatasetRun]) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    for run in runs {
        let mut lines = Vec::new();
        crate::report::jsonl::write_jsonl(&run.evaluation, &mut lines)?;
        out.extend(crate::report::datasets::tag_lines(run.name(), &lines));
    }
    Ok(out)
}

/// JUnit XML over all datasets: a test suite per dataset, one for the macro-average.
fn junit(runs: &[DatasetRun], verdict: &Verdict) -> String {
    let datasets: Vec<(&str, &Verdict, &Evaluation)> = (runs.iter())
        .map(|r| (r.name(), &r.gate_run.verdict, &r.evaluation))
        .collect();
    crate::report::junit::junit_xml_datasets(&datasets, verdict)
}

/// The leaderboard over all datasets, as pretty JSON: each dataset's, and the macro-average
/// ranking.
fn leaderboard(config: &Config, runs: &[DatasetRun]) -> anyhow::Result<Vec<u8>> {
    let datasets = (runs.iter())
        .map(|run| {
            let analysis = &run.gate_run.analysis;
            let board = summary::leaderboard_json(
                analysis,
                &run.evaluation,
                &run.config,
                run.gate_run.baseline_commit.as_deref(),
            );
            crate::report::datasets::DatasetBoard {
                name: run.name().to_string(),
                board,
                rows: analysis.leaderboard(),
            }
        })
        .collect();
    let document = crate::report::datasets::leaderboard_json(config.reference_metric(), datasets);
    Ok((serde_json::to_string_pretty(&document)? + "\n").into_bytes())
}

/// `summary.json` over all datasets, as pretty JSON.
fn summary_json(runs: &[DatasetRun], verdict: &Verdict) -> anyhow::Result<Vec<u8>> {
    let mut sections = Vec::new();
    for run in runs {
        let document =
            finish::summary_document(&run.config, &run.evaluation, &run.summary, &run.gate_run)?;
        sections.push((run.name().to_string(), document));
    }
    let document = crate::report::datasets::summary_json(sections, verdict);
    Ok((serde_json::to_string_pretty(&document)? + "\n").into_bytes())
}

/// What a run over several datasets publishes in Actions.
struct Publication<'a> {
    verdict: &'a Verdict,
    marker: &'a str,
    comment: &'a str,
}

/// Step summary, annotations, step outputs and the PR comment in Actions. `score` and `delta`
/// are the first system's macro-average and its change (empty when not compared).
fn publish(
    publication: &Publication<'_>,
    runs: &[DatasetRun],
    report_path: &Path,
    written: &[(&str, String)],
    posting: Posting,
) -> anyhow::Result<()> {
    let Some(actions) = ActionsContext::from_env() else {
        return Ok(());
    };
    let gated: Vec<_> = (runs.iter())
        .map(|run| (&run.gate_run.verdict, &run.evaluation))
        .collect();
    finish::summarise_and_annotate(&actions, publication.comment, &gated)?;
    let verdict = publication.verdict;
    let first = verdict.macro_average().cells.first();
    let shown = crate::analysis::stats::shown_delta;
    let step_outputs = finish::gate_outputs(
        verdict,
        first.map(|c| {
            let delta = shown(c.baseline_accuracy, c.candidate_accuracy);
            (c.candidate_accuracy, delta)
        }),
        report_path,
        written,
    );
    actions
        .write_outputs(&step_outputs)
        .context("cannot write $GITHUB_OUTPUT")?;
    finish::post(
        &actions,
        posting,
        (publication.marker, publication.comment),
        report_path,
    );
    Ok(())
}

/// The shards of `shards` that scored this config's dataset, merged (see
/// [`crate::ci::shard::merge`]).
pub(super) fn merged(
    (one, snapshot): (&Config, &Snapshot),
    shards: &[PathBuf],
) -> Result<Evaluation, InputError> {
    let mut own = Vec::new();
    for path in shards {
        if crate::ci::shard::shard_dataset(path)?.as_deref() == Some(one.dataset_name()) {
            own.push(path.clone());
        }
    }
    crate::ci::shard::merge((one, snapshot), &own)
}

/// Refuses a shard file that scored none of the config's datasets (a one-dataset shard, or one
/// of a dataset the config does not name), naming the file.
pub(super) fn check_shards(config: &Config, shards: &[PathBuf]) -> Result<(), InputError> {
    for path in shards {
        let dataset = crate::ci::shard::shard_dataset(path)?;
        if !(config.datasets.iter()).any(|e| Some(&e.name) == dataset.as_ref()) {
            return Err(InputError::malformed(
                path,
                "line 1",
                format!(
                    "not a shard of a dataset of this config ({}): score it with \
                     `sqlgate eval --shard` on this config",
                    dataset.map_or("a one-dataset shard".into(), |n| format!("dataset `{n}`"))
                ),
            ));
        }
    }
    Ok(())
}

/// Scores every dataset and writes their baselines as one file at `path` (one section per
/// dataset, see [`crate::analysis::datasets`]); prints each dataset's summary.
pub(super) fn write_sectioned_baseline(
    (config, snapshot): (&Config, &Snapshot),
    path: &Path,
    commit: &str,
) -> anyhow::Result<usize> {
    let mut sections = Vec::new();
    for one in config.dataset_configs() {
        let evaluation = crate::score::evaluation::evaluate_for_baseline(&one, snapshot)
            .map_err(|e| in_entry(&one, e))?;
        let baseline = Baseline::from_evaluation(&one, &evaluation, commit.to_string());
        let summary = Summary::of(&evaluation);
        let human = summary::human(&evaluation, &summary);
        let text = format!("dataset `{}`:\n{human}", one.dataset_name());
        print!("{}", log_block(&text, in_actions()));
        sections.push((one.dataset_name().to_string(), baseline));
    }
    let systems = sections.iter().map(|(_, b)| b.systems.len()).sum();
    let text = serde_json::to_string_pretty(&sectioned_baseline(&sections))? + "\n";
    let markers = [crate::input::config::BASELINE_MARKER];
    finish::check_output(config, "baseline.path", path, &markers)?;
    crate::util::fs::write_atomically(path, text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(systems)
}
