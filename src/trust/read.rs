//! Reads every trusted input of a settled run into its [`Snapshot`]: from the base commit in a
//! pull-request run, else from the working tree (the baseline from its ref when one is given),
//! with the facts of the history the later stages check (which recorded commits are ancestors of
//! the base, when each was made).

use super::base::TrustedBase;
use super::lifecycle::stored_bytes;
use super::Settlement;
use crate::input::config::{Config, SuiteKind};
use crate::input::trusted::{absolute, read_tree, Settled, Snapshot, TrustedFile};
use crate::util::error::InputError;
use std::path::{Path, PathBuf};

/// The snapshot of `settlement`'s run: `base` in a pull-request run, `reference` the ref holding
/// the baseline's history when given.
pub fn snapshot(
    settlement: &Settlement,
    base: Option<&TrustedBase>,
    reference: Option<&str>,
) -> Result<Snapshot, InputError> {
    let config = &settlement.config;
    let mut snapshot = Snapshot {
        settled: settlement.settled.clone(),
        base_commit: base.map(|b| b.commit.clone()),
        repository: base.map(|b| b.root.clone()),
        notes: settlement.notes.clone(),
        ignored_changes: settlement.ignored_changes.clone(),
        proposed_benchmarks: settlement.base_benchmark.proposed.clone(),
        base_copies: settlement.base_benchmark.copies.clone(),
        ..Snapshot::default()
    };
    if let Some(base) = base {
        snapshot.changed = base.changed_files()?;
    }
    let history = match (base, reference) {
        (Some(base), _) => Some(base.clone()),
        // A baseline read from a ref needs the repository: its error stops the run.
        (None, Some(_)) if config.baseline.is_some() => {
            Some(TrustedBase::at(&config.base_dir, "HEAD")?)
        }
        (None, _) => TrustedBase::at(&config.base_dir, "HEAD").ok(),
    };
    let stored_on = reference.zip(history.as_ref());
    read_baseline(config, (base, stored_on), &mut snapshot)?;
    for path in trusted_paths(config) {
        let file = trusted(base, &snapshot, &path)?;
        snapshot.files.insert(absolute(&path), file);
    }
    if let Some(base) = base {
        for folder in suite_folders(config) {
            read_suite_state(base, &folder, &mut snapshot)?;
        }
        if settlement.settled == Settled::Base {
            snapshot.proposed_template = proposed_template(config, &snapshot)?;
        }
    }
    if let Some(history) = &history {
        record_history(history, (base.is_some(), config), &mut snapshot);
    }
    Ok(snapshot)
}

/// The baseline file and its anchor; the baseline from the ref in the repository of
/// `stored_on` when the baseline is stored on one.
fn read_baseline(
    config: &Config,
    (base, stored_on): (Option<&TrustedBase>, Option<(&str, &TrustedBase)>),
    snapshot: &mut Snapshot,
) -> Result<(), InputError> {
    let Some(section) = &config.baseline else {
        return Ok(());
    };
    let file = match stored_on {
        Some((reference, history)) => TrustedFile {
            bytes: stored_bytes(history, Some(reference), &section.path)?,
            changed: false,
        },
        None => trusted(base, snapshot, &section.path)?,
    };
    snapshot.files.insert(absolute(&section.path), file);
    if let Some(anchor) = &section.anchor {
        let file = trusted(base, snapshot, anchor)?;
        snapshot.files.insert(absolute(anchor), file);
    }
    Ok(())
}

/// The template and every dataset's reviewed gold overrides.
fn trusted_paths(config: &Config) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = config.report.template.iter().cloned().collect();
    for one in config.dataset_configs() {
        paths.extend(one.audit.overrides.clone());
    }
    paths
}

/// The folders of the distilled suites (sqlgate's own state, kept by `actions/cache` or
/// committed), whose manifests and gold cache a pull-request run reads from the base.
fn suite_folders(config: &Config) -> Vec<PathBuf> {
    (config.dataset_configs().into_iter())
        .filter(|one| one.suite.kind != SuiteKind::Directory)
        .filter_map(|one| one.suite.path)
        .collect()
}

/// One trusted input: the base's version and whether the pull request changed it, or the
/// working tree's file outside a pull request.
fn trusted(
    base: Option<&TrustedBase>,
    snapshot: &Snapshot,
    path: &Path,
) -> Result<TrustedFile, InputError> {
    match base {
        Some(base) => Ok(TrustedFile {
            bytes: base.read(path)?,
            changed: snapshot.changes(path)?,
        }),
        None => read_tree(path),
    }
}

/// The manifests and the gold cache of the suite in `folder` as the base commit has them.
fn read_suite_state(
    base: &TrustedBase,
    folder: &Path,
    snapshot: &mut Snapshot,
) -> Result<(), InputError> {
    let root = absolute(folder);
    snapshot.folders.insert(root.clone());
    let Some(name) = base.repo_path(folder)? else {
        return Ok(());
    };
    let state_files = [
        crate::suites::distill::store::MANIFEST,
        crate::suites::gold_cache::FILE,
    ];
    for file in base.files_below(&base.commit, &name)? {
        let Some(relative) = file.strip_prefix(&format!("{name}/")) else {
            continue;
        };
        let is_state = Path::new(relative)
            .file_name()
            .is_some_and(|n| state_files.iter().any(|s| n == *s));
        if is_state && readable_state(base, &file)? {
            let bytes = (base.read_named(&base.commit, &file))
                .map_err(|e| InputError::malformed(folder, "trusted base", e))?;
            let path = root.join(relative);
            snapshot.files.insert(
                path,
                TrustedFile {
                    bytes,
                    changed: false,
                },
            );
        }
    }
    Ok(())
}

/// Whether the base commit's state file `file` is read: the gold cache only when it is a regular
/// file there, since a link's blob is its target's name, never the cache (it is then as if
/// absent: every gold is executed, with a note). Manifests are read as they are.
fn readable_state(base: &TrustedBase, file: &str) -> Result<bool, InputError> {
    let cache = Path::new(file)
        .file_name()
        .is_some_and(|n| n == crate::suites::gold_cache::FILE);
    if !cache || base.regular_file_size(file)?.is_some() {
        return Ok(true);
    }
    crate::util::log::note(&format!(
        "gold results are not taken from the cache: the base commit's {file} is not a regular \
         file (a symbolic link?), so it is not read"
    ));
    Ok(false)
}

/// The template the pull request proposes when its tree changes it (or the config naming it):
/// its path and text, for the check that it renders this run's report.
fn proposed_template(
    config: &Config,
    snapshot: &Snapshot,
) -> Result<Option<(PathBuf, String)>, InputError> {
    let proposed = match snapshot.changes(&config.path)? {
        true => {
            Config::load(&config.path, &crate::engine::registry::Engines)?
                .report
                .template
        }
        false => config.report.template.clone(),
    };
    let Some(path) = proposed.filter(|p| snapshot.changes(p).unwrap_or(true)) else {
        return Ok(None);
    };
    let text = crate::util::error::read_utf8(&path)?;
    Ok(Some((path, text)))
}

/// Which commits the trusted baseline and anchor record are the base or its ancestors, and when
/// each was made, as `history` (the base, or the working tree's `HEAD`) knows them.
fn record_history(
    history: &TrustedBase,
    (pull_request, config): (bool, &Config),
    snapshot: &mut Snapshot,
) {
    let Some(section) = &config.baseline else {
        return;
    };
    let files = std::iter::once(&section.path).chain(section.anchor.as_ref());
    let commits: Vec<String> = files
        .filter_map(|path| snapshot.files.get(&absolute(path))?.bytes.as_deref())
        .flat_map(recorded_commits)
        .collect();
    for commit in commits {
        if pull_request && history.has_ancestor(&commit) {
            snapshot.ancestors.insert(commit.clone());
        }
        if let Some(time) = history.commit_time(&commit) {
            snapshot.commit_times.insert(commit, time);
        }
    }
}

/// The commits a baseline file records (its own and each dataset section's); none for a file
/// that is not a baseline.
fn recorded_commits(bytes: &[u8]) -> Vec<String> {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(bytes) else {
        return Vec::new();
    };
    let sections = value
        .get(crate::input::config::BASELINE_SECTIONS)
        .and_then(serde_json::Value::as_object);
    std::iter::once(&value)
        .chain(sections.into_iter().flat_map(|s| s.values()))
        .filter_map(|v| v.get("commit")?.as_str().map(str::to_string))
        .collect()
}
