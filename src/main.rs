//! The `sqlgate` command line.

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};
use sqlgate::baseline::Baseline;
use sqlgate::config::Config;
use sqlgate::github::{ActionsContext, CommentOutcome};
use sqlgate::output::{self, Summary};
use sqlgate::pipeline::{self, GateRun};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Gate Text-to-SQL model changes in CI.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Score the configured systems, compare with the baseline, report and gate.
    Eval {
        /// The config file.
        #[arg(long, default_value = "sqlgate.yml")]
        config: PathBuf,
        #[command(flatten)]
        outputs: Outputs,
        /// Score only shard I of N (1-based) and write it to `--jsonl` for `sqlgate merge`.
        #[arg(long, requires = "jsonl")]
        shard: Option<String>,
    },
    /// Distill the configured test suite (`suite.kind: distilled`), or reuse the cached one, and
    /// print its report (also written as `report.json` in `suite.path`).
    Distill {
        /// The config file.
        #[arg(long, default_value = "sqlgate.yml")]
        config: PathBuf,
    },
    /// Join shard files written by `eval --shard`, then report and gate as an unsharded run.
    Merge {
        /// The shard files.
        #[arg(required = true)]
        shards: Vec<PathBuf>,
        /// The config the shards were scored with.
        #[arg(long, default_value = "sqlgate.yml")]
        config: PathBuf,
        #[command(flatten)]
        outputs: Outputs,
    },
    /// Manage the stored baseline.
    Baseline {
        #[command(subcommand)]
        action: BaselineAction,
    },
    /// Run as the GitHub Action: reads the inputs `config`, `comment` and `fail-on-regression`
    /// from `INPUT_*` variables (the token comes as `SQLGATE_GITHUB_TOKEN`).
    Action,
    /// Post an existing report as the sticky PR comment (the `workflow_run` half of the
    /// fork-safe pair).
    Comment {
        /// The report written by `sqlgate eval`.
        #[arg(long)]
        report: PathBuf,
        /// Pull request number (default: from the event payload).
        #[arg(long)]
        pr: Option<u64>,
    },
}

/// Where a finished run writes its results.
#[derive(clap::Args)]
struct Outputs {
    /// Write per-item results as JSON lines here.
    #[arg(long)]
    jsonl: Option<PathBuf>,
    /// Write the aggregates as JSON here.
    #[arg(long)]
    summary: Option<PathBuf>,
    /// Write the Markdown report here (default: `report.output`, else sqlgate-report.md
    /// beside the config).
    #[arg(long)]
    report: Option<PathBuf>,
    /// Post the report as a sticky PR comment when running in GitHub Actions.
    #[arg(long, value_enum, default_value_t = CommentMode::Auto)]
    comment: CommentMode,
    /// Exit 0 even when the gate fails.
    #[arg(long)]
    no_fail_on_regression: bool,
    /// Write the leaderboard (current and baseline systems, ranked by the reference) as JSON.
    #[arg(long)]
    leaderboard: Option<PathBuf>,
    /// Write an SVG scatter of every metric against the reference across the leaderboard's
    /// systems (one panel per metric).
    #[arg(long)]
    scatter: Option<PathBuf>,
}

#[derive(Subcommand)]
enum BaselineAction {
    /// Score every configured system and store the results as the baseline.
    Update {
        /// The config file.
        #[arg(long, default_value = "sqlgate.yml")]
        config: PathBuf,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CommentMode {
    /// In GitHub Actions with a token: post; otherwise print the comment and say why.
    Auto,
    /// Never post.
    Never,
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("sqlgate: error: {error:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Eval {
            config,
            outputs,
            shard,
        } => {
            let config = Config::load(&config)?;
            match shard {
                Some(shard) => eval_shard(&config, &shard, outputs.jsonl.as_deref()),
                None => finish(&config, sqlgate::run::evaluate(&config)?, outputs),
            }
        }
        Command::Distill { config } => distill(&Config::load(&config)?),
        Command::Merge {
            shards,
            config,
            outputs,
        } => {
            let config = Config::load(&config)?;
            let evaluation = sqlgate::shard::merge(&config, &shards)?;
            finish(&config, evaluation, outputs)
        }
        Command::Baseline {
            action: BaselineAction::Update { config },
        } => update_baseline(&config),
        Command::Comment { report, pr } => post_existing(&report, pr),
        Command::Action => {
            let input = |name: &str| {
                std::env::var(format!("INPUT_{name}"))
                    .ok()
                    .filter(|v| !v.trim().is_empty())
            };
            let enabled =
                |name: &str| input(name).is_none_or(|v| v.trim().eq_ignore_ascii_case("true"));
            let config = Config::load(Path::new(
                &input("CONFIG").unwrap_or_else(|| "sqlgate.yml".into()),
            ))?;
            let outputs = Outputs {
                jsonl: None,
                summary: None,
                report: None,
                comment: if enabled("COMMENT") {
                    CommentMode::Auto
                } else {
                    CommentMode::Never
                },
                no_fail_on_regression: !enabled("FAIL-ON-REGRESSION"),
                leaderboard: None,
                scatter: None,
            };
            finish(&config, sqlgate::run::evaluate(&config)?, outputs)
        }
    }
}

fn distill(config: &Config) -> anyhow::Result<ExitCode> {
    let path = match (config.suite.kind, &config.suite.path) {
        (sqlgate::config::SuiteKind::Distilled, Some(path)) => path,
        _ => anyhow::bail!(
            "config {}: `sqlgate distill` needs `suite.kind: distilled` and `suite.path`",
            config.path.display()
        ),
    };
    let dataset = sqlgate::dataset::Dataset::load(&config.dataset)?;
    let profile = sqlgate::profile::Profile::new(&config.compare);
    let (_, _, report) = sqlgate::distill::open_configured(
        config,
        &dataset,
        &profile,
        &sqlgate::distill::source::GeneratedNeighbors,
    )?;
    print!("{}", report.to_text());
    let json = serde_json::to_string_pretty(&report.to_json())?;
    write(&path.join("report.json"), &json)?;
    Ok(ExitCode::SUCCESS)
}

fn eval_shard(config: &Config, shard: &str, jsonl: Option<&Path>) -> anyhow::Result<ExitCode> {
    let shard = sqlgate::run::Shard::parse(shard).map_err(anyhow::Error::msg)?;
    let path = jsonl.context("--shard needs --jsonl")?;
    let evaluation = sqlgate::run::evaluate_part(config, Some(shard))?;
    let header = sqlgate::shard::shard_header(config, &evaluation, shard)?;
    output::write_file_atomically(path, |out| {
        out.write_all(header.as_bytes())?;
        output::write_jsonl(&evaluation, out)
    })
    .with_context(|| format!("cannot write {}", path.display()))?;
    println!(
        "shard {}/{}: {} (system, item) pairs written to {}",
        shard.index + 1,
        shard.count,
        evaluation.results.len(),
        path.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn write(path: &Path, content: &str) -> anyhow::Result<()> {
    output::write_atomically(path, content.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Everything after scoring: outputs, baseline comparison, report, gate, GitHub.
fn finish(
    config: &Config,
    evaluation: sqlgate::run::Evaluation,
    outputs: Outputs,
) -> anyhow::Result<ExitCode> {
    let summary = Summary::of(&evaluation);
    let report_path = outputs
        .report
        .or_else(|| config.report.output.clone())
        .unwrap_or_else(|| config.base_dir.join("sqlgate-report.md"));
    let gate_run = pipeline::gate_run(config, &evaluation, &report_path.display().to_string())?;
    if let Some(path) = outputs.jsonl {
        output::write_file_atomically(&path, |out| output::write_jsonl(&evaluation, out))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = outputs.summary {
        let document = output::summary_json(&evaluation, &summary, Some(&gate_run));
        write(&path, &(serde_json::to_string_pretty(&document)? + "\n"))?;
    }
    if let Some(path) = &outputs.leaderboard {
        let board = gate_run.analysis.leaderboard();
        write(path, &(serde_json::to_string_pretty(&board)? + "\n"))?;
    }
    if let Some(path) = &outputs.scatter {
        match sqlgate::scatter::leaderboard_svg(&gate_run.analysis).map_err(anyhow::Error::msg)? {
            Some(svg) => write(path, &svg)?,
            None => println!(
                "no scatter written to {}: no metric besides the reference has an accuracy",
                path.display()
            ),
        }
    }
    write(&report_path, &gate_run.report)?;
    print!("{}", output::human(&evaluation, &summary));
    print_verdict(&gate_run);
    publish(&gate_run, &report_path, outputs.comment)?;
    let failed = !gate_run.gate.passed && !outputs.no_fail_on_regression;
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn print_verdict(run: &GateRun) {
    let verdict = if run.gate.passed { "passed" } else { "FAILED" };
    println!("\ngate {verdict}");
    for line in run.gate.reasons.iter().chain(&run.gate.notes) {
        println!("  {line}");
    }
}

/// Step summary, step outputs and the PR comment in Actions; the comment on stdout elsewhere.
fn publish(run: &GateRun, report_path: &Path, mode: CommentMode) -> anyhow::Result<()> {
    let Some(actions) = ActionsContext::from_env() else {
        return Ok(());
    };
    actions
        .write_step_summary(&run.comment)
        .context("cannot write $GITHUB_STEP_SUMMARY")?;
    let first = run.gate.comparisons.first().and_then(|c| c.cells.first());
    actions
        .write_outputs(&[
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
        ])
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

fn report_comment(outcome: CommentOutcome, comment: &str, report_path: &Path) {
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

fn update_baseline(config_path: &Path) -> anyhow::Result<ExitCode> {
    let config = Config::load(config_path)?;
    let Some(section) = &config.baseline else {
        anyhow::bail!(
            "config {}: `baseline.path` is not set",
            config_path.display()
        );
    };
    let evaluation = sqlgate::run::evaluate(&config)?;
    let baseline = Baseline::from_evaluation(&config, &evaluation);
    baseline
        .save(&section.path)
        .with_context(|| format!("cannot write {}", section.path.display()))?;
    let summary = Summary::of(&evaluation);
    print!("{}", output::human(&evaluation, &summary));
    println!(
        "\nbaseline written to {} ({} systems)",
        section.path.display(),
        baseline.systems.len()
    );
    Ok(ExitCode::SUCCESS)
}

fn post_existing(report_path: &Path, pr: Option<u64>) -> anyhow::Result<ExitCode> {
    let body = std::fs::read_to_string(report_path)
        .with_context(|| format!("cannot read {}", report_path.display()))?;
    let marker = body
        .lines()
        .next()
        .filter(|l| l.starts_with("<!-- sqlgate:") && l.ends_with("-->"))
        .with_context(|| format!("{}: line 1 is not a sqlgate marker", report_path.display()))?
        .to_string();
    let mut actions =
        ActionsContext::from_env().context("`sqlgate comment` runs inside GitHub Actions")?;
    if pr.is_some() {
        actions.pull_request = pr;
    }
    let comment = sqlgate::report::fit_comment(&body);
    report_comment(
        actions.upsert_comment(&marker, &comment),
        &comment,
        report_path,
    );
    Ok(ExitCode::SUCCESS)
}
