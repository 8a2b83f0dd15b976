//! The `sqlgate` command line.

use anyhow::Context;
use clap::{Parser, Subcommand};
use sqlgate::config::Config;
use sqlgate::output::{self, Summary};
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
    /// Score the configured systems and print a summary.
    Eval {
        /// The config file.
        #[arg(long, default_value = "sqlgate.yml")]
        config: PathBuf,
        /// Write per-item results as JSON lines here.
        #[arg(long)]
        jsonl: Option<PathBuf>,
        /// Write the aggregates as JSON here.
        #[arg(long)]
        summary: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
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
            jsonl,
            summary,
        } => eval(&config, jsonl, summary),
    }
}

fn eval(
    config: &std::path::Path,
    jsonl: Option<PathBuf>,
    summary_path: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    let config = Config::load(config)?;
    let evaluation = sqlgate::run::evaluate(&config)?;
    let summary = Summary::of(&evaluation);
    if let Some(path) = jsonl {
        output::write_atomically(&path, output::jsonl(&evaluation).as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = summary_path {
        let document = output::summary_json(&evaluation, &summary);
        let text = serde_json::to_string_pretty(&document)? + "\n";
        output::write_atomically(&path, text.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    print!("{}", output::human(&evaluation, &summary));
    Ok(ExitCode::SUCCESS)
}
