//! The command layer: one function per `sqlgate` command, each running the pipeline's stages in
//! order. `main.rs` only parses arguments and calls one of these.
//!
//! Enters: parsed command-line arguments and `INPUT_*` variables. Leaves: files, console
//! output, an exit code (0 pass, 1 gate failed, 2 input error). May import every module.

mod audit;
mod comment_policy;
mod datasets;
mod failure;
mod finish;
pub mod gate_run;
mod runs;
#[cfg(feature = "duckdb")]
mod spider2_dbt;
pub mod store;

use crate::analysis::baseline::Baseline;
use crate::ci::github::ActionsContext;
use crate::input::config::{Config, SuiteKind, BASELINE_MARKER};
use crate::input::trusted::Snapshot;
use crate::report::summary::{self, Summary};
use crate::trust::TrustedBase;
use anyhow::Context;
use finish::{check_output, check_outputs, finish, report_comment, write_output};
#[cfg(feature = "duckdb")]
pub use spider2_dbt::spider2_dbt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Where a finished run writes its results.
#[derive(clap::Args)]
pub struct Outputs {
    /// Write per-item results as JSON lines here.
    #[arg(long)]
    pub jsonl: Option<PathBuf>,
    /// Write the aggregates as JSON here.
    #[arg(long)]
    pub summary: Option<PathBuf>,
    /// Write the Markdown report here (default: `report.output`, else sqlgate-report.md
    /// beside the config).
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Post the report as a sticky PR comment when running in GitHub Actions.
    #[arg(long, value_enum, default_value_t = CommentMode::Auto)]
    pub comment: CommentMode,
    /// Exit 0 even when the gate fails.
    #[arg(long)]
    pub no_fail_on_regression: bool,
    /// Write the leaderboard (current and baseline systems, ranked by the reference) as JSON.
    #[arg(long)]
    pub leaderboard: Option<PathBuf>,
    /// Write JUnit XML here: one test case per gated cell and per `must_pass` item.
    #[arg(long)]
    pub junit: Option<PathBuf>,
    /// Write an SVG scatter of every metric against the reference across the leaderboard's
    /// systems (one panel per metric).
    #[arg(long)]
    pub scatter: Option<PathBuf>,
}

/// Where a gated run reads its trusted inputs from.
#[derive(clap::Args, Default)]
pub struct Trust {
    /// Read the config, template and baseline as this commit has them (a pull request's
    /// base); default in a `pull_request` run of GitHub Actions: the event's base commit.
    #[arg(long)]
    pub trusted_base: Option<String>,
    /// Read the baseline from this ref instead (`sqlgate baseline store --branch`, e.g.
    /// `origin/sqlgate-baseline`): its newest version made at an ancestor of the base commit.
    #[arg(long)]
    pub baseline_ref: Option<String>,
}

/// Whether a run posts its report as the sticky PR comment.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CommentMode {
    /// In GitHub Actions with a token: post as the config's `comment` policy says; otherwise
    /// print the comment and say why.
    Auto,
    /// Never post.
    Never,
    /// Post on every run (overrides the config's `comment`).
    Always,
    /// Post when something changed against the baseline (overrides the config's `comment`).
    OnChange,
    /// Post when the gate fails (overrides the config's `comment`).
    OnFailure,
}

/// `sqlgate eval`: score, compare with the baseline, report and gate; with `shard`, score one
/// shard only and write it for `sqlgate merge`.
pub fn eval(
    config: &Path,
    outputs: Outputs,
    shard: Option<&str>,
    trust: &Trust,
) -> anyhow::Result<ExitCode> {
    let Loaded {
        config, snapshot, ..
    } = load_config(config, trust, GATED_INPUTS)?;
    check_outputs(&config, &outputs)?;
    datasets::check_outputs(&config, &outputs)?;
    let trusted = (&config, &snapshot);
    match shard {
        Some(shard) => eval_shard(trusted, shard, outputs.jsonl.as_deref()),
        None => finish(trusted, outputs, &crate::score::evaluation::evaluate),
    }
}

/// `sqlgate audit`: the gold audit of the configured dataset, its config and overrides read as
/// the trusted base has them, like a gated run's (see [`audit::audit`]); `outputs` are
/// `--jsonl` and `--report`.
pub fn audit(
    config: &Path,
    outputs: (Option<&Path>, Option<&Path>),
    trusted_base: Option<String>,
) -> anyhow::Result<ExitCode> {
    let trust = Trust {
        trusted_base,
        baseline_ref: None,
    };
    let loaded = load_config(config, &trust, "config, gold overrides")?;
    audit::audit((&loaded.config, &loaded.snapshot), outputs)
}

/// `sqlgate merge`: join shard files, then report and gate as an unsharded run.
pub fn merge(
    config: &Path,
    shards: &[PathBuf],
    outputs: Outputs,
    trust: &Trust,
) -> anyhow::Result<ExitCode> {
    let Loaded {
        config,
        snapshot,
        base,
    } = load_config(config, trust, GATED_INPUTS)?;
    check_outputs(&config, &outputs)?;
    datasets::check_outputs(&config, &outputs)?;
    crate::trust::refuse_committed_shards(base.as_ref(), shards)?;
    let trusted = (&config, &snapshot);
    if config.is_multi() {
        datasets::check_shards(&config, shards)?;
    }
    let score = |one: &Config, snapshot: &Snapshot| match config.is_multi() {
        true => datasets::merged((one, snapshot), shards),
        false => crate::ci::shard::merge((one, snapshot), shards),
    };
    finish(trusted, outputs, &score)
}

/// `sqlgate action`: the GitHub Action's entry point, configured by `INPUT_*` variables. A run
/// that stops before its verdict (an error or a panic) publishes the reason (see
/// [`failure::publish_failure`]) and exits 2 with it.
pub fn action() -> anyhow::Result<ExitCode> {
    let config_path = PathBuf::from(action_input("CONFIG").unwrap_or_else(|| "sqlgate.yml".into()));
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_action(&config_path)));
    let error = match run {
        Ok(Ok(code)) => return Ok(code),
        Ok(Err(error)) => error,
        Err(payload) => anyhow::anyhow!(failure::panic_message(payload.as_ref())),
    };
    let mode = match comment_policy::action_input_mode() {
        Ok(CommentMode::Never) => CommentMode::Never,
        _ => CommentMode::Auto,
    };
    let report = action_input("REPORT").map(PathBuf::from);
    failure::publish_failure(&config_path, &format!("{error:#}"), mode, report.as_deref());
    Err(error)
}

/// The Action's run once its config path is known: load, check outputs, score, finish.
fn run_action(config_path: &Path) -> anyhow::Result<ExitCode> {
    let trust = Trust {
        trusted_base: None,
        baseline_ref: action_input("BASELINE-REF"),
    };
    let Loaded {
        config, snapshot, ..
    } = load_config(config_path, &trust, GATED_INPUTS)?;
    let outputs = Outputs {
        jsonl: action_input("JSONL").map(PathBuf::from),
        summary: action_input("SUMMARY").map(PathBuf::from),
        junit: action_input("JUNIT").map(PathBuf::from),
        report: action_input("REPORT").map(PathBuf::from),
        comment: comment_policy::action_input_mode()?,
        no_fail_on_regression: !action_flag("FAIL-ON-REGRESSION")?,
        leaderboard: None,
        scatter: None,
    };
    check_outputs(&config, &outputs)?;
    datasets::check_outputs(&config, &outputs)?;
    let trusted = (&config, &snapshot);
    finish(trusted, outputs, &crate::score::evaluation::evaluate)
}

/// The trusted inputs a gated run reads from the base commit, as its log names them.
const GATED_INPUTS: &str = "config, template, baseline, gold overrides";

/// What the trust stage settled for a gated run.
struct Loaded {
    /// The config the run is judged with.
    config: Config,
    /// Every trusted input of the run.
    snapshot: Snapshot,
    /// The base commit of a pull-request run.
    base: Option<TrustedBase>,
}

/// The config of a gated run and its trusted inputs ([`crate::trust`]): as the trusted base
/// commit has them when there is one (`--trusted-base`, or the base of the pull request GitHub
/// Actions runs for; see [`crate::trust::lifecycle`] for a base without a config that loads),
/// else from the working tree. `inputs` names, for the log, the trusted inputs the command reads
/// from the base.
fn load_config(path: &Path, trust: &Trust, inputs: &str) -> anyhow::Result<Loaded> {
    let base = crate::trust::base_of(path, trust.trusted_base.as_deref())?;
    if let Some(base) = &base {
        println!(
            "sqlgate: trusted inputs ({inputs}) read from the base commit {}",
            crate::input::config::short_commit(&base.commit)
        );
    }
    let reference = trust.baseline_ref.as_deref();
    let (config, snapshot) = crate::trust::settle(path, base.as_ref(), reference)?;
    Ok(Loaded {
        config,
        snapshot,
        base,
    })
}

/// The Action input `name` (`INPUT_<NAME>`), `None` when unset or blank.
fn action_input(name: &str) -> Option<String> {
    std::env::var(format!("INPUT_{name}"))
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// A boolean Action input: `true` when unset, else exactly `true` or `false` (any case). Anything
/// else (`yes`, `1`, a typo) is an input error rather than a silently disabled gate.
fn action_flag(name: &str) -> anyhow::Result<bool> {
    match action_input(name)
        .map(|v| v.to_ascii_lowercase())
        .as_deref()
    {
        None | Some("true") => Ok(true),
        Some("false") => Ok(false),
        Some(other) => anyhow::bail!(
            "Action input `{}` must be `true` or `false`, not `{other}`",
            name.to_ascii_lowercase()
        ),
    }
}

/// `sqlgate distill`: distill the configured test suite (or reuse the cached one) and print its
/// report, also written as `report.json` in `suite.path`.
pub fn distill(config: &Path) -> anyhow::Result<ExitCode> {
    let config = Config::load(config, &crate::engine::registry::Engines)?;
    config.single("sqlgate distill")?;
    let path = match (config.suite.kind, &config.suite.path) {
        (SuiteKind::Distilled, Some(path)) => path,
        _ => anyhow::bail!(
            "config {}: `sqlgate distill` needs `suite.kind: distilled` and `suite.path`",
            config.path.display()
        ),
    };
    let dataset = crate::input::dataset::Dataset::load_with(
        &config.dataset,
        config.compare.version.unwrap_or_default(),
        &crate::engine::registry::Engines,
    )?;
    let profile = crate::engine::profile::Profile::new(&config.compare);
    let snapshot = crate::trust::tree(&config, None)?;
    let (_, _, report) = crate::suites::distill::open_configured(
        (&config, &snapshot),
        &dataset,
        &profile,
        &crate::suites::distill::source::GeneratedNeighbors,
    )?;
    print!("{}", report.to_text());
    let json = serde_json::to_string_pretty(&report.to_json())?;
    crate::util::state::StateDir::new(path).write(Path::new("report.json"), json.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// `sqlgate load`: copies the SQLite databases below `from` (`<db_id>/<db_id>.sqlite`) into the
/// server `dataset.engine` names, in its layout, and prints what was copied. Every error names
/// the key or file at fault and carries no part of the URL.
pub fn load(config: &Path, from: &Path) -> anyhow::Result<ExitCode> {
    use crate::engine::load::LoadError;
    use crate::input::config::Layout;
    let config = Config::load(config, &crate::engine::registry::Engines)?;
    config.single("sqlgate load")?;
    let engine = &config.dataset.engine;
    let factory = crate::engine::registry::factory(&engine.kind);
    let Some(server) = factory.load_target() else {
        let servers: Vec<String> = (crate::engine::registry::ENGINES.iter())
            .filter(|factory| factory.load_target().is_some())
            .map(|factory| format!("`{}`", factory.name()))
            .collect();
        anyhow::bail!(
            "config {}: `sqlgate load` copies into a server or an engine's files: set `dataset.engine.kind` to {} (and `dataset.engine.url_env`, or `dataset.databases` for files)",
            config.path.display(),
            servers.join(" or ")
        )
    };
    let name = engine.url_env.clone().unwrap_or_default();
    let (url, layout) = match (factory.database_files(), &config.dataset.databases) {
        // An engine on files writes `<dataset.databases>/<db_id>/<db_id>.<extension>`.
        (Some(_), Some(folder)) => (folder.display().to_string(), Layout::PerDbId),
        _ => (
            crate::engine::server::read_url(&name)
                .map_err(|e| anyhow::anyhow!("config {}: {}", config.path.display(), e.message))?,
            engine.layout(),
        ),
    };
    let scrub = crate::util::scrub::scrub;
    let loaded = crate::engine::load::load(server, &url, layout, from, &config.workspace).map_err(
        |error| match error {
            LoadError::Connect(message) => anyhow::anyhow!(
                "config {}: `dataset.engine.url_env` (`{name}`): cannot connect to the server: {}",
                config.path.display(),
                scrub(&message)
            ),
            other => anyhow::anyhow!("{}", scrub(&other.to_string())),
        },
    )?;
    for database in &loaded {
        let rows: u64 = database.tables.iter().map(|t| t.rows).sum();
        println!(
            "{} -> database `{}`: {} tables, {rows} rows",
            database.db_id,
            database.database,
            database.tables.len()
        );
        for table in &database.tables {
            let columns: Vec<String> = table
                .columns
                .iter()
                .map(|(name, kind)| format!("{name} {}", kind.sql(server)))
                .collect();
            println!(
                "  {}: {} rows ({})",
                table.name,
                table.rows,
                columns.join(", ")
            );
            if !table.keys.is_empty() {
                println!("    keys: {}", table.keys.join(", "));
            }
            for skipped in &table.skipped {
                println!("    not declared as in SQLite: {skipped}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Scores one shard of every dataset into `--jsonl` (one dataset), or with `datasets:` into one
/// file per dataset beside it, named `<stem>.<dataset>.<extension>`.
fn eval_shard(
    (config, snapshot): (&Config, &Snapshot),
    shard: &str,
    jsonl: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let shard = crate::score::evaluation::Shard::parse(shard).map_err(anyhow::Error::msg)?;
    let path = jsonl.context("--shard needs --jsonl")?;
    for one in config.dataset_configs() {
        let path = match &one.dataset_name {
            Some(name) => dataset_shard_path(path, name),
            None => path.to_path_buf(),
        };
        let evaluation = crate::score::evaluation::evaluate_part(&one, snapshot, Some(shard))
            .map_err(|e| crate::input::config::in_entry(&one, e))?;
        let header = crate::ci::shard::shard_header((&one, snapshot), &evaluation, shard)?;
        write_output(config, ("--jsonl", &path, finish::JSONL_MARKERS), |out| {
            crate::ci::shard::write_shard(&header, &evaluation, out)
        })?;
        println!(
            "shard {}/{}: {} (system, item) pairs written to {}",
            shard.index + 1,
            shard.count,
            evaluation.results.len(),
            path.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The shard file of dataset `name` beside `path`: `shard1.jsonl` -> `shard1.spider.jsonl`.
fn dataset_shard_path(path: &Path, name: &str) -> PathBuf {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let file = match path.extension() {
        Some(extension) => format!("{stem}.{name}.{}", extension.to_string_lossy()),
        None => format!("{stem}.{name}"),
    };
    path.with_file_name(file)
}

/// `sqlgate baseline update`: score every configured system and store the results as the
/// baseline, holding a lock file beside it so a concurrent update fails instead of racing. It
/// refuses, before writing anything, when there is no commit to record (pull requests are
/// compared with a baseline only when its commit is an ancestor of their base); a failed update
/// leaves no folder it created behind.
pub fn update_baseline(config_path: &Path) -> anyhow::Result<ExitCode> {
    let config = Config::load(config_path, &crate::engine::registry::Engines)?;
    let Some(section) = &config.baseline else {
        anyhow::bail!(
            "config {}: `baseline.path` is not set",
            config_path.display()
        );
    };
    let commit = crate::trust::current_commit(&config.base_dir).with_context(|| {
        format!(
            "config {}: no commit to record in the baseline {}: {} is not in a git repository \
             with a commit (and GITHUB_SHA is not set). Pull requests are compared with a \
             baseline only when the commit it records is an ancestor of their base, so commit \
             first (`git add -A && git commit`), then run `sqlgate baseline update` again; \
             nothing was written",
            config_path.display(),
            section.path.display(),
            config.base_dir.display()
        )
    })?;
    check_output(&config, "baseline.path", &section.path, &[BASELINE_MARKER])?;
    warn_uncommitted(&config, &commit);
    let created = crate::util::fs::create_parents(&section.path)?;
    let written = write_baseline(&config, &section.path, commit);
    if written.is_err() {
        crate::util::fs::remove_empty(&created);
    }
    written
}

/// Warns (on stderr) when the config or a prediction file differs from the commit the baseline
/// records: pull requests are compared with the baseline as if it were made at that commit. A
/// warning, not a refusal, so a local trial before the first commit of a change still works.
fn warn_uncommitted(config: &Config, commit: &str) {
    let mut files = vec![config.path.clone()];
    for one in config.dataset_configs() {
        for spec in &one.predictions {
            files.extend(glob::glob(&spec.path).into_iter().flatten().flatten());
        }
    }
    let changed = crate::trust::uncommitted(&config.base_dir, commit, &files);
    if !changed.is_empty() {
        eprintln!(
            "sqlgate: warning: the baseline records commit {}, but {} differ from it in the \
             working tree; pull requests will be compared with it as if made at that commit. \
             Commit first, then run `sqlgate baseline update` again",
            crate::input::config::short_commit(commit),
            crate::util::log::log_value(&changed.join(", "))
        );
    }
}

/// Scores, then writes the baseline at `path` under its lock file, and says what it wrote.
fn write_baseline(config: &Config, path: &Path, commit: String) -> anyhow::Result<ExitCode> {
    let lock = crate::util::fs::LockFile::acquire(path)?;
    let snapshot = crate::trust::tree(config, None)?;
    if config.is_multi() {
        let systems = datasets::write_sectioned_baseline((config, &snapshot), path, &commit)?;
        drop(lock);
        println!(
            "\nbaseline written to {} ({systems}, commit {})",
            path.display(),
            crate::input::config::short_commit(&commit)
        );
        return Ok(ExitCode::SUCCESS);
    }
    let evaluation = crate::score::evaluation::evaluate_for_baseline(config, &snapshot)?;
    let baseline = Baseline::from_evaluation(config, &evaluation, commit)?;
    check_output(config, "baseline.path", path, &[BASELINE_MARKER])?;
    baseline
        .save(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    drop(lock);
    let summary = Summary::of(&evaluation);
    let human = summary::human(&evaluation, &summary);
    print!(
        "{}",
        crate::util::log::log_block(&human, crate::util::log::in_actions())
    );
    let systems = match baseline.systems.len() {
        1 => "1 system".to_string(),
        n => format!("{n} systems"),
    };
    println!(
        "\nbaseline written to {} ({systems}, commit {})",
        path.display(),
        crate::input::config::short_commit(baseline.commit.as_deref().unwrap_or_default())
    );
    Ok(ExitCode::SUCCESS)
}

/// `sqlgate comment`: post an existing report as the sticky PR comment (the `workflow_run` half
/// of the fork-safe pair). The report is read as a regular file of at most
/// [`crate::ci::fork::MAX_REPORT_BYTES`]: anything else stops with exit 2 naming it.
pub fn comment(report_path: &Path, pr: Option<u64>) -> anyhow::Result<ExitCode> {
    let bytes = crate::util::error::read_bounded(report_path, crate::ci::fork::MAX_REPORT_BYTES)?;
    let body = String::from_utf8(bytes)
        .with_context(|| format!("{}: the report is not UTF-8", report_path.display()))?;
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
    let comment = crate::report::markdown::fit_comment(&body);
    report_comment(
        actions.upsert_comment(&marker, &comment),
        &comment,
        report_path,
    );
    Ok(ExitCode::SUCCESS)
}

/// `sqlgate comment --from-workflow-run`: posts a fork run's report on the pull request that
/// run tested, found through the API from the event (never from the artifact), under a header
/// stating the run's conclusion.
pub fn comment_from_workflow_run(report_path: &Path) -> anyhow::Result<ExitCode> {
    use crate::ci::fork::{find_pull_request, WorkflowRun};
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let event_path =
        PathBuf::from(var("GITHUB_EVENT_PATH").context("GITHUB_EVENT_PATH is not set")?);
    let payload: serde_json::Value =
        serde_json::from_slice(&crate::util::error::read_bytes(&event_path)?)
            .with_context(|| format!("{}: not JSON", event_path.display()))?;
    let repository = var("GITHUB_REPOSITORY").context("GITHUB_REPOSITORY is not set")?;
    let run = WorkflowRun::from_event(
        &var("GITHUB_EVENT_NAME").unwrap_or_default(),
        &payload,
        &repository,
    )
    .map_err(anyhow::Error::msg)?;
    let report = read_artifact_report(report_path)?;
    let mut actions =
        ActionsContext::from_env().context("`sqlgate comment` runs inside GitHub Actions")?;
    let token = actions
        .token
        .clone()
        .context("no token to find the pull request with")?;
    let Some(number) =
        find_pull_request(&actions.api_url, &token, &run).map_err(anyhow::Error::msg)?
    else {
        println!(
            "sqlgate: no open pull request has head {} of {}: nothing posted",
            run.head_sha,
            crate::util::log::log_value(&run.head_repository)
        );
        return Ok(ExitCode::SUCCESS);
    };
    actions.pull_request = Some(number);
    let body = run.body(report.as_deref());
    report_comment(
        actions.upsert_comment(&run.marker(), &body),
        &body,
        report_path,
    );
    Ok(ExitCode::SUCCESS)
}

/// The report of a fork's run, read as untrusted bytes: at most [`MAX_REPORT_BYTES`] of a
/// regular file (no symlink); `None` when the run uploaded none (the file does not exist).
///
/// [`MAX_REPORT_BYTES`]: crate::ci::fork::MAX_REPORT_BYTES
fn read_artifact_report(report_path: &Path) -> anyhow::Result<Option<String>> {
    use std::io::Read as _;
    let metadata = match std::fs::symlink_metadata(report_path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        other => other.with_context(|| format!("cannot read {}", report_path.display()))?,
    };
    anyhow::ensure!(
        metadata.is_file(),
        "{}: the report must be a regular file",
        report_path.display()
    );
    let mut bytes = Vec::new();
    std::fs::File::open(report_path)?
        .take(crate::ci::fork::MAX_REPORT_BYTES)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", report_path.display()))?;
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}
