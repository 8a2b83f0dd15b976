//! `sqlgate audit`: the gold audit of the configured dataset on its databases, its test suite,
//! its other dialects' golds and its scored systems, printed, and written as a Markdown section
//! (`--report`) and JSON lines (`--jsonl`).

use crate::analysis::audit::{Context, Dialect};
use crate::engine::exec::{Executor, Limits};
use crate::engine::profile::Profile;
use crate::engine::registry::factory;
use crate::input::config::{Config, EngineConfig, SuiteKind};
use crate::input::dataset::{read_gold, Dataset};
use crate::input::trusted::Snapshot;
use crate::suites::suite::Suite;
use crate::util::error::InputError;
use anyhow::Context as _;
use std::path::Path;
use std::process::ExitCode;

/// The markers of a file `sqlgate audit` wrote (a finding line, or the Markdown section).
const AUDIT_MARKERS: &[&str] = &["{\"index\":", crate::report::audit::HEADING];

/// `sqlgate audit` of a loaded config (in a pull-request run, the trusted base's: see
/// [`super::load_config`]): prints what the pull request changed that the audit did not use,
/// every finding and a count per kind, writes `--jsonl` and `--report`; exit 0 whatever it
/// finds (findings are for review, not a verdict). With `datasets:` each dataset is audited on
/// its own (its overrides and dialects are its entry's): the console and the Markdown section
/// give one part per dataset, and each JSON line names its dataset.
pub fn audit(
    (config, snapshot): (&Config, &Snapshot),
    (jsonl, report): (Option<&Path>, Option<&Path>),
) -> anyhow::Result<ExitCode> {
    for (key, path) in [("--jsonl", jsonl), ("--report", report)] {
        if let Some(path) = path {
            super::finish::check_output(config, key, path, AUDIT_MARKERS)?;
        }
    }
    crate::util::memory::install_sqlite_allocator();
    crate::util::memory::PROCESS.set_limit(config.execution.max_memory);
    let audits = config
        .dataset_configs()
        .iter()
        .map(|one| audit_dataset(one, snapshot))
        .collect::<Result<Vec<_>, _>>()?;
    let mut notes: Vec<String> = Vec::new();
    for note in audits.iter().flat_map(|a| &a.notes) {
        if !notes.contains(note) {
            notes.push(note.clone());
        }
    }
    for note in &notes {
        println!("note: {}", crate::util::log::log_value(note));
    }
    let multi = config.is_multi();
    for one in &audits {
        if multi {
            println!("dataset `{}`:", crate::util::log::log_value(&one.name));
        }
        print!(
            "{}",
            crate::report::audit::console(&one.findings, one.items)
        );
    }
    if let Some(path) = jsonl {
        write(config, ("--jsonl", path), |out| {
            audits.iter().try_for_each(|one| {
                let dataset = multi.then_some(one.name.as_str());
                crate::report::audit::write_jsonl(&one.findings, dataset, out)
            })
        })?;
    }
    if let Some(path) = report {
        let section = match multi {
            false => crate::report::audit::markdown(&audits[0].findings, &audits[0].overrides),
            true => crate::report::audit::markdown_datasets(
                &audits
                    .iter()
                    .map(|a| (a.name.as_str(), a.findings.as_slice(), &a.overrides))
                    .collect::<Vec<_>>(),
            ),
        };
        write(config, ("--report", path), |out| {
            out.write_all(section.as_bytes())
        })?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The audit of one dataset.
struct DatasetAudit {
    /// The dataset's name (`default` with `dataset:`).
    name: String,
    /// Its items.
    items: usize,
    /// What it finds.
    findings: Vec<crate::analysis::audit::Finding>,
    /// The reviewed overrides it read.
    overrides: crate::input::overrides::GoldOverrides,
    /// What the pull request changed that it did not use.
    notes: Vec<String>,
}

/// Audits the dataset of a one-dataset config (one of [`Config::dataset_configs`]) on its
/// databases, its suite, its other dialects' golds and its systems.
fn audit_dataset(config: &Config, snapshot: &Snapshot) -> anyhow::Result<DatasetAudit> {
    let prepared = crate::score::evaluation::prepare(config, snapshot)?;
    let dataset = &prepared.dataset;
    let limits = Limits::of(&config.execution);
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let executor = crate::engine::registry::executor(config, dataset, limits, threads)?;
    let profile = Profile::new(&config.compare);
    let suite = open_suite((config, snapshot), dataset, &profile)?;
    let dialects = dialects((config, snapshot), dataset, limits, threads)?;
    let context = Context {
        dataset,
        executor: &executor,
        profile: &profile,
        suite: suite.as_ref(),
        systems: &prepared.systems,
        dialects: &dialects,
    };
    let mut findings = context.audit_all();
    findings.extend(gold_self_check(config, &prepared, &executor, &profile)?);
    findings.sort_by_key(|f| (f.index, f.kind));
    Ok(DatasetAudit {
        name: config.dataset_name().to_string(),
        items: dataset.items.len(),
        findings,
        notes: trust_notes(snapshot, &prepared.overrides),
        overrides: prepared.overrides,
    })
}

/// The gold self-check of a state-changing kind (`gold-self-check`): each gold judged as a
/// prediction by the configured metrics, under the run's budgets; a fault of the harness is an
/// error naming the item, never a finding.
fn gold_self_check(
    config: &Config,
    prepared: &crate::score::evaluation::Prepared,
    executor: &crate::engine::exec::Executor,
    profile: &Profile,
) -> anyhow::Result<Vec<crate::analysis::audit::Finding>> {
    let env = crate::metrics::Env::new(&prepared.dataset, executor, profile, None)
        .with_state_budget(&config.execution);
    crate::analysis::audit::self_check::findings(&env, &prepared.metrics)
        .map_err(|reason| anyhow::anyhow!("the gold self-check: {reason}"))
}

/// What a pull-request audit read from the base commit instead of the pull request's tree.
fn trust_notes(
    snapshot: &Snapshot,
    overrides: &crate::input::overrides::GoldOverrides,
) -> Vec<String> {
    let mut notes: Vec<String> = snapshot
        .ignored_changes
        .iter()
        .map(|what| {
            format!(
                "this pull request changes the {what}; the audit used the base commit's \
                 version (merge the change first to use it)"
            )
        })
        .collect();
    notes.extend(overrides.ignored_change_note());
    notes.extend(snapshot.notes.iter().cloned());
    if let crate::input::trusted::Settled::Proposed { note } = &snapshot.settled {
        notes.push(note.clone());
    }
    notes
}

fn write(
    config: &Config,
    (key, path): (&str, &Path),
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    super::finish::write_output(config, (key, path, AUDIT_MARKERS), fill)
        .with_context(|| format!("`{key}`"))
}

/// The configured test suite: a directory read as it is, a distilled one distilled or reused.
fn open_suite(
    (config, snapshot): (&Config, &Snapshot),
    dataset: &Dataset,
    profile: &Profile,
) -> Result<Option<Suite>, InputError> {
    match (config.suite.kind, &config.suite.path) {
        (SuiteKind::Directory, Some(path)) => Ok(Some(Suite::directory(
            path,
            dataset.databases.keys().map(String::as_str),
            config.dataset.skip_missing_databases,
        )?)),
        (SuiteKind::Distilled, Some(root)) => {
            // Every schema's databases, those of items without a database of their own too
            // (audited on their suite alone), which TS leaves out.
            let source = crate::suites::distill::source::GeneratedNeighbors;
            let (_, _, report) = crate::suites::distill::open_configured(
                (config, snapshot),
                dataset,
                profile,
                &source,
            )?;
            Ok(Some(crate::suites::distill::every_schema(&report, root)))
        }
        _ => Ok(None),
    }
}

/// The other dialects' golds of `audit.dialects`, each checked against the dataset (same
/// number of items, same db_ids) and given its engine.
fn dialects(
    (config, snapshot): (&Config, &Snapshot),
    dataset: &Dataset,
    limits: Limits,
    threads: usize,
) -> Result<Vec<Dialect>, InputError> {
    config
        .audit
        .dialects
        .iter()
        .map(|dialect| {
            refuse_changed_gold(snapshot, &dialect.gold)?;
            let items = read_gold(&dialect.gold)?;
            check_alignment(&dialect.gold, &items, dataset)?;
            let engine = dialect
                .engine
                .clone()
                .unwrap_or_else(|| config.dataset.engine.clone());
            // The files an engine reads (SQLite's, or its own by extension); none on a server.
            let files_of = |engine: &EngineConfig| {
                let factory = factory(&engine.kind);
                let own = factory.database_files().map(|files| files.extension);
                own.or(factory.reads_sqlite_files().then_some("sqlite"))
            };
            let by_db_id = files_of(&engine).is_none();
            if !by_db_id && files_of(&engine) != files_of(&config.dataset.engine) {
                return Err(InputError::Config {
                    path: config.path.clone(),
                    message: format!(
                        "`audit.dialects` `{}`: a dialect on `{}` files needs `dataset.engine` \
                         on those files, the data it runs on",
                        dialect.name, engine.kind
                    ),
                });
            }
            let mut own = config.clone();
            own.dataset.engine = engine;
            let executor: Executor =
                crate::engine::registry::executor(&own, dataset, limits, threads)?;
            Ok(Dialect {
                name: dialect.name.clone(),
                golds: items.into_iter().map(|item| item.sql).collect(),
                executor,
                by_db_id,
            })
        })
        .collect()
}

/// In a pull-request run a dialect's gold file is refused when the pull request changes it, as
/// the dataset's files are (`trust::dataset_changes`): it must be merged first.
fn refuse_changed_gold(snapshot: &Snapshot, gold: &Path) -> Result<(), InputError> {
    if !snapshot.changes(gold)? {
        return Ok(());
    }
    Err(InputError::malformed(
        gold,
        "file",
        "this pull request changes an `audit.dialects` gold file; a pull request is audited \
         with the base commit's golds, so merge the change on the base branch first",
    ))
}

/// A dialect's gold file must list the dataset's items in order: the same count and db_ids.
fn check_alignment(
    path: &Path,
    items: &[crate::input::dataset::GoldItem],
    dataset: &Dataset,
) -> Result<(), InputError> {
    if items.len() != dataset.items.len() {
        return Err(InputError::malformed(
            path,
            "file",
            format!(
                "{} gold items, the dataset has {}: a dialect's golds must list the same items",
                items.len(),
                dataset.items.len()
            ),
        ));
    }
    match items
        .iter()
        .zip(&dataset.items)
        .find(|(theirs, ours)| theirs.db_id != ours.db_id)
    {
        Some((theirs, ours)) => Err(InputError::malformed(
            path,
            format!("item {}", ours.index),
            format!(
                "is on `{}`, the dataset's item on `{}`",
                theirs.db_id, ours.db_id
            ),
        )),
        None => Ok(()),
    }
}
