//! The datasets one run scored, each gated on its own: a config with `dataset:` is a list of
//! one, a config with `datasets:` a list of its entries, judged once more over all of them
//! ([`crate::judge::judge_datasets`]: the macro-average gate). The run's outputs (report,
//! comment, per-item lines, `summary.json`, JUnit, leaderboard, step outputs) are built here
//! from that list, so both shapes go through one finish path ([`super::finish::finish`]).

use super::gate_run::{self, GateRun};
use crate::input::config::{in_entry, Config};
use crate::input::trusted::Snapshot;
use crate::judge::{DatasetContext, DatasetVerdict, Verdict};
use crate::report::datasets::Section;
use crate::report::summary::{self, Summary};
use crate::score::evaluation::Evaluation;
use crate::util::error::InputError;
use crate::util::log::{in_actions, log_block};

/// Scores one dataset's config against the trusted snapshot: a fresh evaluation, or one merged
/// from shards.
pub(super) type Score<'a> = &'a dyn Fn(&Config, &Snapshot) -> Result<Evaluation, InputError>;

/// One dataset of the run: its config, scores, summary and gated report.
pub(super) struct DatasetRun {
    config: Config,
    evaluation: Evaluation,
    summary: Summary,
    gate_run: GateRun,
}

impl DatasetRun {
    /// The dataset's name as the config's `datasets` entry gives it.
    fn name(&self) -> &str {
        self.config.dataset_name()
    }
}

/// Every dataset of the run, and the verdict over them when there are several.
pub(super) struct Runs {
    runs: Vec<DatasetRun>,
    /// The macro-average verdict of a `datasets:` run; `None` for a `dataset:` run, whose
    /// verdict is its one dataset's.
    over_datasets: Option<Verdict>,
}

impl Runs {
    /// Scores and gates every dataset of `config` (itself, for a `dataset:` config); errors name
    /// the `datasets` entry they come from.
    pub(super) fn score(
        (config, snapshot): (&Config, &Snapshot),
        report_file: &str,
        score: Score<'_>,
    ) -> Result<Runs, InputError> {
        let mut runs = Vec::new();
        for one in config.dataset_configs() {
            let evaluation = score(&one, snapshot).map_err(|e| in_entry(&one, e))?;
            let gate_run = gate_run::gate_run((&one, snapshot), &evaluation, report_file)
                .map_err(|e| in_entry(&one, e))?;
            let summary = Summary::of(&evaluation);
            runs.push(DatasetRun {
                config: one,
                evaluation,
                summary,
                gate_run,
            });
        }
        let over_datasets = config.is_multi().then(|| judge_datasets(config, &runs));
        Ok(Runs {
            runs,
            over_datasets,
        })
    }

    /// The run's one dataset, for a `dataset:` config.
    fn single(&self) -> Option<&DatasetRun> {
        match (&self.over_datasets, self.runs.as_slice()) {
            (None, [one]) => Some(one),
            _ => None,
        }
    }

    /// The run's verdict: the one dataset's, or the verdict over all datasets (a run has at
    /// least one dataset: `datasets:` is a `dataset:` config when empty).
    pub(super) fn verdict(&self) -> &Verdict {
        (self.over_datasets.as_ref()).unwrap_or(&self.runs[0].gate_run.verdict)
    }

    /// The hidden marker of the run's sticky comment (one per config file).
    pub(super) fn marker(&self) -> &str {
        &self.runs[0].gate_run.marker
    }

    /// The full report: the dataset's, or one section per dataset under the run's headline.
    pub(super) fn report(&self) -> String {
        match self.single() {
            Some(one) => one.gate_run.report.clone(),
            None => self.sectioned(|run| &run.gate_run.report),
        }
    }

    /// The pull-request comment, fitted to GitHub's size limit.
    pub(super) fn comment(&self) -> String {
        match self.single() {
            Some(one) => one.gate_run.comment.clone(),
            None => {
                let whole = self.sectioned(|run| &run.gate_run.comment);
                crate::report::markdown::fit_comment(&whole)
            }
        }
    }

    /// The datasets' texts (reports or comments) as sections of one document.
    fn sectioned(&self, text: impl Fn(&DatasetRun) -> &String) -> String {
        let sections: Vec<Section<'_>> = (self.runs.iter())
            .map(|run| Section {
                name: run.name(),
                text: text(run),
            })
            .collect();
        crate::report::datasets::render(self.marker(), self.verdict(), &sections)
    }

    /// The per-item lines; in a `datasets:` run each names its dataset.
    pub(super) fn jsonl(&self) -> anyhow::Result<Vec<u8>> {
        if let Some(one) = self.single() {
            let mut lines = Vec::new();
            crate::report::jsonl::write_jsonl(&one.evaluation, &mut lines)?;
            return Ok(lines);
        }
        let mut out = Vec::new();
        for run in &self.runs {
            let mut lines = Vec::new();
            crate::report::jsonl::write_jsonl(&run.evaluation, &mut lines)?;
            out.extend(crate::report::datasets::tag_lines(run.name(), &lines));
        }
        Ok(out)
    }

    /// `summary.json`: the dataset's document, or one section per dataset with the verdict over
    /// them, as pretty JSON.
    pub(super) fn summary_json(&self) -> anyhow::Result<Vec<u8>> {
        let document = match self.single() {
            Some(one) => summary_document(one)?,
            None => {
                let mut sections = Vec::new();
                for run in &self.runs {
                    sections.push((run.name().to_string(), summary_document(run)?));
                }
                crate::report::datasets::summary_json(sections, self.verdict())
            }
        };
        Ok((serde_json::to_string_pretty(&document)? + "\n").into_bytes())
    }

    /// JUnit XML: the dataset's cells, or a test suite per dataset and one for the
    /// macro-average.
    pub(super) fn junit(&self) -> String {
        if let Some(one) = self.single() {
            let must_pass = &one.config.gate.must_pass;
            return crate::report::junit::junit_xml(self.verdict(), &one.evaluation, must_pass);
        }
        let datasets: Vec<(&str, &Verdict, &Evaluation)> = (self.runs.iter())
            .map(|r| (r.name(), &r.gate_run.verdict, &r.evaluation))
            .collect();
        crate::report::junit::junit_xml_datasets(&datasets, self.verdict())
    }

    /// The leaderboard as pretty JSON: the dataset's, or each dataset's and the macro-average
    /// ranking.
    pub(super) fn leaderboard(&self, config: &Config) -> anyhow::Result<Vec<u8>> {
        let board = |run: &DatasetRun| {
            summary::leaderboard_json(
                &run.gate_run.analysis,
                &run.evaluation,
                &run.config,
                run.gate_run.baseline_commit.as_deref(),
            )
        };
        let document = match self.single() {
            Some(one) => board(one),
            None => {
                let datasets = (self.runs.iter())
                    .map(|run| crate::report::datasets::DatasetBoard {
                        name: run.name().to_string(),
                        board: board(run),
                        rows: run.gate_run.analysis.leaderboard(),
                    })
                    .collect();
                crate::report::datasets::leaderboard_json(config.reference_metric(), datasets)
            }
        };
        Ok((serde_json::to_string_pretty(&document)? + "\n").into_bytes())
    }

    /// The accuracy-against-cost scatter plot of a one-dataset run (`None`: no metric besides
    /// the reference has an accuracy); a `datasets:` run has none (refused before scoring).
    pub(super) fn scatter(&self) -> anyhow::Result<Option<String>> {
        let one = self.single().ok_or_else(|| {
            anyhow::anyhow!(
                "`--scatter` is written for one dataset only; run a config with `dataset:`"
            )
        })?;
        crate::report::scatter::leaderboard_svg(&one.gate_run.analysis).map_err(anyhow::Error::msg)
    }

    /// Prints each dataset's summary (under its name in a `datasets:` run).
    pub(super) fn print_summaries(&self) {
        for run in &self.runs {
            let human = summary::human(&run.evaluation, &run.summary);
            let text = match self.single() {
                Some(_) => human,
                None => format!("dataset `{}`:\n{human}", run.name()),
            };
            print!("{}", log_block(&text, in_actions()));
        }
    }

    /// Each dataset's verdict with its evaluation, for the workflow annotations.
    pub(super) fn gated(&self) -> Vec<(&Verdict, &Evaluation)> {
        (self.runs.iter())
            .map(|run| (&run.gate_run.verdict, &run.evaluation))
            .collect()
    }

    /// The step outputs' `score` and `delta`: the first gated cell's accuracy and its change as
    /// the comment shows it (in a `datasets:` run the first system's macro-average); `None`
    /// when nothing was compared.
    pub(super) fn score_and_delta(&self) -> Option<(f64, f64)> {
        let verdict = self.verdict();
        if self.single().is_some() {
            let cell = verdict.comparisons().first()?.cells.first()?;
            return Some((cell.candidate_accuracy, cell.shown_delta()));
        }
        let cell = verdict.macro_average().cells.first()?;
        Some((cell.candidate_accuracy, cell.shown_delta()))
    }
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

/// The `summary.json` document of one dataset's run.
fn summary_document(run: &DatasetRun) -> anyhow::Result<serde_json::Value> {
    let gate_run = &run.gate_run;
    let mut document = summary::summary_json(
        &run.evaluation,
        &run.summary,
        Some((&gate_run.analysis, &gate_run.verdict)),
    );
    document["comparison_contract"] =
        serde_json::to_value(crate::analysis::baseline::Settings::of(&run.config))?;
    document["features"] = crate::report::features::features_json(&gate_run.features);
    if let Some(change) = &gate_run.benchmark_change {
        document["proposed_benchmark"] = serde_json::to_value(change)?;
    }
    Ok(document)
}
