//! The `sqlgate` command line.

use clap::{Parser, Subcommand};
use sqlgate::commands::{self, Outputs};
use std::path::PathBuf;
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
        #[command(flatten)]
        trust: commands::Trust,
    },
    /// Distill the configured test suite (`suite.kind: distilled`), or reuse the cached one, and
    /// print its report (also written as `report.json` in `suite.path`).
    Distill {
        /// The config file.
        #[arg(long, default_value = "sqlgate.yml")]
        config: PathBuf,
    },
    /// Audit the gold queries: per item, mechanical findings with their evidence (ties at a
    /// LIMIT, grouped columns whose value is any row's, NULL or text-number sorts, empty
    /// everywhere, dialects or result files that disagree, most systems agreeing against the
    /// gold). Exit 0 whatever it finds.
    Audit {
        /// The config file.
        #[arg(long, default_value = "sqlgate.yml")]
        config: PathBuf,
        /// Write one JSON object per finding here.
        #[arg(long)]
        jsonl: Option<PathBuf>,
        /// Write the findings as a Markdown section here.
        #[arg(long)]
        report: Option<PathBuf>,
        /// Read the config and the gold overrides as this commit has them (a pull request's
        /// base), as `eval` does; default in a `pull_request` run of GitHub Actions: the
        /// event's base commit.
        #[arg(long)]
        trusted_base: Option<String>,
    },
    /// Copy SQLite databases (`<folder>/<db_id>/<db_id>.sqlite`, the Spider / BIRD layout) into
    /// the PostgreSQL or MySQL server `dataset.engine` names, in its layout.
    Load {
        /// The config file (its `dataset.engine` names the server).
        #[arg(long, default_value = "sqlgate.yml")]
        config: PathBuf,
        /// The folder holding the SQLite databases.
        #[arg(long)]
        from: PathBuf,
    },
    /// Spider 2.0-DBT: score a submission folder (`results_metadata.jsonl`, `<instance_id>/<file>`)
    /// against the gold folder (`spider2_eval.jsonl`, `<instance_id>/<gold>.duckdb`) with
    /// `duckdb_match`, official and sound side by side (docs/METRICS.md).
    #[cfg(feature = "duckdb")]
    Spider2Dbt {
        /// The gold folder (`evaluation_suite/gold`).
        #[arg(long)]
        gold: PathBuf,
        /// The submission folder.
        #[arg(long)]
        results: PathBuf,
        /// The task folder (`spider2-dbt/examples`): each gold is checked against the starting
        /// database `<examples>/<instance_id>/<gold file name>`.
        #[arg(long)]
        examples: Option<PathBuf>,
        /// Write one JSON object per instance here.
        #[arg(long)]
        jsonl: Option<PathBuf>,
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
        #[command(flatten)]
        trust: commands::Trust,
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
        #[arg(long, conflicts_with = "from_workflow_run")]
        pr: Option<u64>,
        /// The `workflow_run` half of the fork-safe pair: find the pull request through the API
        /// from the run's head commit (never from the artifact) and post the report verbatim in a code block under a verdict from the event.
        #[arg(long)]
        from_workflow_run: bool,
    },
    /// The DuckDB worker process sqlgate starts itself (one per executing thread): serves
    /// queries on stdin / stdout until stdin ends. Not for users.
    #[cfg(feature = "duckdb")]
    #[command(name = "duckdb-worker", hide = true)]
    DuckdbWorker {
        /// DuckDB's `memory_limit` of each database it opens, in bytes.
        #[arg(long)]
        memory_limit: usize,
    },
}

#[derive(Subcommand)]
enum BaselineAction {
    /// Score every configured system and store the results as the baseline.
    Update {
        /// The config file.
        #[arg(long, default_value = "sqlgate.yml")]
        config: PathBuf,
    },
    /// Commit the baseline `update` wrote and push it, or fail: to the branch that was pushed
    /// (`GITHUB_REF_NAME`), or with `--branch` to a branch of its own that pull requests read
    /// back with `--baseline-ref`.
    Store {
        /// The config file.
        #[arg(long, default_value = "sqlgate.yml")]
        config: PathBuf,
        /// Append the baseline to this branch of `origin` (e.g. `sqlgate-baseline`) instead.
        #[arg(long)]
        branch: Option<String>,
    },
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(error) => {
            eprint!("{}", error_text(&format!("{error:#}")));
            ExitCode::from(2)
        }
    }
}

/// The error line; in GitHub Actions the message (which may quote a prediction file) is one
/// escaped line inside a stop-commands block, so it cannot issue a workflow command.
fn error_text(message: &str) -> String {
    use sqlgate::util::log::{in_actions, log_block, log_value};
    if !in_actions() {
        return format!("sqlgate: error: {message}\n");
    }
    log_block(&format!("sqlgate: error: {}\n", log_value(message)), true)
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Eval {
            config,
            outputs,
            shard,
            trust,
        } => commands::eval(&config, outputs, shard.as_deref(), &trust),
        Command::Distill { config } => commands::distill(&config),
        Command::Audit {
            config,
            jsonl,
            report,
            trusted_base,
        } => commands::audit(&config, (jsonl.as_deref(), report.as_deref()), trusted_base),
        Command::Load { config, from } => commands::load(&config, &from),
        Command::Merge {
            shards,
            config,
            outputs,
            trust,
        } => commands::merge(&config, &shards, outputs, &trust),
        Command::Baseline {
            action: BaselineAction::Update { config },
        } => commands::update_baseline(&config),
        Command::Baseline {
            action: BaselineAction::Store { config, branch },
        } => commands::store::store_baseline(&config, branch.as_deref()),
        Command::Comment {
            report,
            from_workflow_run: true,
            ..
        } => commands::comment_from_workflow_run(&report),
        Command::Comment { report, pr, .. } => commands::comment(&report, pr),
        Command::Action => commands::action(),
        #[cfg(feature = "duckdb")]
        Command::Spider2Dbt {
            gold,
            results,
            examples,
            jsonl,
        } => commands::spider2_dbt(&gold, &results, examples.as_deref(), jsonl.as_deref()),
        #[cfg(feature = "duckdb")]
        Command::DuckdbWorker { memory_limit } => {
            sqlgate::engine::duckdb::serve::serve(memory_limit)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
