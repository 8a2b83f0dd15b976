//! The trust stage: one call at the start of a run decides whose config governs and reads, once,
//! every trusted input the run will use, into an immutable [`Snapshot`]. A pull request can edit
//! everything in its tree, so the config, template, baseline, anchor, gold overrides and
//! sqlgate's own suite state are read as its base commit has them, and what it changed is
//! listed for the notes; nothing after this stage asks git or reads a trusted input from the
//! pull request's tree.
//!
//! `base.rs` asks git about the base commit, `base_text.rs` what the base's config text names,
//! `git.rs` is the one place git runs,
//! `lifecycle.rs` settles whose config governs, `repair.rs` what the base's baseline still
//! decides when the pull request's config runs, `dataset_changes.rs` refuses changed dataset
//! files (a repair) and suites, `base_benchmark.rs` copies the base's benchmark a pull request
//! changes, `read.rs` reads the trusted inputs into the snapshot.

pub mod base;
pub mod base_benchmark;
mod base_text;
mod dataset_changes;
pub mod git;
pub mod lifecycle;
mod read;
mod repair;

use crate::input::config::Config;
pub use crate::input::trusted::{Settled, Snapshot, TrustedFile};
use crate::util::error::InputError;
pub use base::TrustedBase;
use std::path::{Path, PathBuf};

/// The config that governs a run and what settling it found, before the trusted inputs are
/// read.
pub struct Settlement {
    /// The config the run is judged with.
    pub config: Config,
    /// Whose config it is.
    pub settled: Settled,
    /// Notes for the report on how the run read its inputs.
    pub notes: Vec<String>,
    /// Trusted inputs the pull request changes whose base versions are used (`config x.yml`).
    pub ignored_changes: Vec<String>,
    /// The base commit's copies of the benchmark files the pull request changes.
    pub base_benchmark: base_benchmark::BaseBenchmark,
}

impl Settlement {
    /// A settlement with no notes yet.
    fn new(config: Config, settled: Settled) -> Settlement {
        Settlement {
            config,
            settled,
            notes: Vec::new(),
            ignored_changes: Vec::new(),
            base_benchmark: base_benchmark::BaseBenchmark::default(),
        }
    }
}

/// The base commit whose inputs a run trusts: `revision` when given (`--trusted-base`), else the
/// base of the pull request GitHub Actions runs for, else none (the working tree is trusted).
/// `config` names the repository.
pub fn base_of(config: &Path, revision: Option<&str>) -> Result<Option<TrustedBase>, InputError> {
    match revision {
        Some(revision) => {
            TrustedBase::at(crate::input::config::folder_of(config), revision).map(Some)
        }
        None => TrustedBase::from_actions_env(),
    }
}

/// Settles the config at `path` against `base` (see [`lifecycle`]) and reads every trusted
/// input of the run; `reference` is the ref holding the baseline's history, when given.
pub fn settle(
    path: &Path,
    base: Option<&TrustedBase>,
    reference: Option<&str>,
) -> Result<(Config, Snapshot), InputError> {
    let settlement = match base {
        Some(base) => lifecycle::settle(path, base, reference)?,
        None => Settlement::new(
            Config::load(path, &crate::engine::registry::Engines)?,
            Settled::Tree,
        ),
    };
    let snapshot = read::snapshot(&settlement, base, reference)?;
    Ok((settlement.config, snapshot))
}

/// The snapshot of a run outside a pull request over `config`: its trusted inputs read from
/// the working tree (and the baseline from `reference` when given).
pub fn tree(config: &Config, reference: Option<&str>) -> Result<Snapshot, InputError> {
    let settlement = Settlement::new(config.clone(), Settled::Tree);
    read::snapshot(&settlement, None, reference)
}

/// The commit a baseline made now records: `GITHUB_SHA`, or `HEAD` of the repository holding
/// `folder`; `None` outside a repository or before its first commit.
pub fn current_commit(folder: &Path) -> Option<String> {
    if let Some(sha) = std::env::var("GITHUB_SHA").ok().filter(|s| !s.is_empty()) {
        return Some(sha);
    }
    TrustedBase::at(folder, "HEAD").ok().map(|head| head.commit)
}

/// The files among `files` that differ in the working tree from `commit` of the repository
/// holding `folder` (none outside a repository).
pub fn uncommitted(folder: &Path, commit: &str, files: &[PathBuf]) -> Vec<String> {
    let Ok(repository) = TrustedBase::at(folder, commit) else {
        return Vec::new();
    };
    files
        .iter()
        .flat_map(|file| repository.changed_under(file).unwrap_or_default())
        .collect()
}

/// In a pull-request run a shard must come from the run's own jobs: the first of `paths` that
/// git tracks (the pull request committed it) is refused, whatever its digest says.
pub fn refuse_committed_shards(
    base: Option<&TrustedBase>,
    paths: &[PathBuf],
) -> Result<(), InputError> {
    let Some(base) = base else {
        return Ok(());
    };
    for path in paths {
        // As written and as the file system resolves it: a committed shard reached through a
        // committed symlink is still committed.
        let resolved = path.canonicalize().ok();
        let tracked =
            base.tracks(path)? || resolved.is_some_and(|real| base.tracks(&real).unwrap_or(true));
        if tracked {
            return Err(InputError::malformed(
                path,
                "shard",
                "is a file of the pull request's tree; in a pull-request run shards must be \
                 written by the run's own `eval --shard` jobs (as artifacts), never committed",
            ));
        }
    }
    Ok(())
}
