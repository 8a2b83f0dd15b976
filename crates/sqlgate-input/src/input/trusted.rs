//! What the trust stage (`sqlgate::trust`) read for a run, as plain data: whose config governs,
//! the bytes of every trusted input (config, template, baseline, anchor, gold overrides, the
//! distilled suites' manifests and gold cache), what the pull request changed and the facts of
//! the base's history the later stages need. It is read once, at the start; no later stage asks
//! git or reads a trusted input from the working tree of a pull request.

use crate::util::error::InputError;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Whose config a run is judged with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Settled {
    /// The working tree's: no pull request (a push, a local run).
    #[default]
    Tree,
    /// The base commit's: a pull request, whose own config changes are ignored.
    Base,
    /// The pull request's own, because the base commit has no config at that path or one that
    /// does not load: the stored baseline and the gate settings it recorded still decide, or
    /// nothing is compared when the base has no baseline either. `note` tells the reader which.
    Proposed {
        /// What the report says about it.
        note: String,
    },
}

/// One trusted input as the run reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedFile {
    /// Its bytes (the base commit's in a pull-request run); `None` when it does not exist there.
    pub bytes: Option<Vec<u8>>,
    /// Whether the pull request changed it (its own version is then ignored).
    pub changed: bool,
}

/// Everything the trust stage read, handed to every later stage that needs a trusted input.
/// The default is a run outside a pull request that read nothing ahead (its trusted inputs are
/// the working tree's files, read when asked).
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Whose config governs the run.
    pub settled: Settled,
    /// The base commit of a pull-request run (full SHA); `None` outside one.
    pub base_commit: Option<String>,
    /// The repository holding the workspace (canonical), when there is one: what the changed
    /// paths are relative to.
    pub repository: Option<PathBuf>,
    /// The trusted inputs read, by absolute path.
    pub files: BTreeMap<PathBuf, TrustedFile>,
    /// Folders whose trusted files were all read (a distilled suite's manifests and gold
    /// cache, by absolute path): a file below one that [`Snapshot::files`] lacks is absent.
    pub folders: BTreeSet<PathBuf>,
    /// Files of the repository the pull request changes (added, changed, removed, replaced or
    /// new and untracked), `/`-separated and sorted.
    pub changed: Vec<String>,
    /// The commits recorded by the trusted baselines that are the base commit or its ancestors.
    pub ancestors: BTreeSet<String>,
    /// The committer time (seconds since 1970) of each commit a trusted baseline records, where
    /// git knows it.
    pub commit_times: BTreeMap<String, i64>,
    /// What the report says about how the run read its inputs (a prediction format taken from
    /// the pull request's config, what a repair was scored with).
    pub notes: Vec<String>,
    /// Trusted inputs the pull request changes whose base versions the run used instead, named
    /// for the report (`config sqlgate.yml`).
    pub ignored_changes: Vec<String>,
    /// The report template the pull request proposes (its config's, where its tree changes it),
    /// which must render once merged: its path and text.
    pub proposed_template: Option<(PathBuf, String)>,
    /// The benchmarks this pull request changes, one per dataset: the run scores its
    /// predictions on the base commit's copies, and shows what the proposed files would change.
    pub proposed_benchmarks: Vec<ProposedBenchmark>,
    /// The folder of the base commit's benchmark copies (and predictions) the run reads in place
    /// of the files the pull request changes; removed when the last holder is dropped.
    pub base_copies: Option<std::sync::Arc<crate::util::fs::RunFolder>>,
}

/// A dataset whose benchmark files or reviewed gold overrides a pull request changes: the
/// governing config reads the base commit's versions, and this keeps what the pull request
/// proposes, so the report can show what merging it would change for the base's own predictions.
#[derive(Debug, Clone)]
pub struct ProposedBenchmark {
    /// The `datasets` entry's name; `None` in a one-dataset config.
    pub dataset: Option<String>,
    /// The repository files the pull request changes, `/`-separated.
    pub changed: Vec<String>,
    /// The dataset section with the pull request's files (the working tree's paths), when it
    /// changes benchmark files.
    pub proposed: Option<crate::input::config::DatasetConfig>,
    /// The pull request's version of the reviewed gold overrides (`audit.overrides`, by
    /// absolute path; `bytes: None` when it deletes them), when it changes them.
    pub overrides: Option<(PathBuf, TrustedFile)>,
    /// The base commit's prediction files of the dataset's systems (copies), re-scored on both
    /// benchmarks.
    pub base_predictions: Vec<crate::input::config::PredictionSpec>,
    /// Systems not re-scored, each with why (`x (a glob)`, `y (not on the base commit)`).
    pub skipped: Vec<String>,
}

impl Snapshot {
    /// Whether this is a pull-request run (trusted inputs come from its base commit).
    pub fn is_pull_request(&self) -> bool {
        self.base_commit.is_some()
    }

    /// The trusted input at `path`: as the trust stage read it, or (outside a pull request, for
    /// a path it did not read ahead) the working tree's file. In a pull-request run a path the
    /// trust stage did not read is an error: nothing falls back to the pull request's tree.
    pub fn read(&self, path: &Path) -> Result<TrustedFile, InputError> {
        let key = absolute(path);
        if let Some(file) = self.files.get(&key) {
            return Ok(file.clone());
        }
        if self.folders.iter().any(|folder| key.starts_with(folder)) {
            return Ok(TrustedFile::default());
        }
        if self.is_pull_request() {
            return Err(InputError::malformed(
                path,
                "trusted base",
                "was not read from the base commit at the start of the run",
            ));
        }
        read_tree(path)
    }

    /// Files under `path` (a file or a folder) that the pull request changes; none outside a
    /// pull request or outside the repository.
    pub fn changed_under(&self, path: &Path) -> Result<Vec<String>, InputError> {
        let Some(root) = &self.repository else {
            return Ok(Vec::new());
        };
        let Some(name) = repo_path(root, path)? else {
            return Ok(Vec::new());
        };
        Ok(files_under(&self.changed, &name))
    }

    /// Whether the pull request changes anything at or under `path`.
    pub fn changes(&self, path: &Path) -> Result<bool, InputError> {
        Ok(!self.changed_under(path)?.is_empty())
    }

    /// Whether `commit` is the base commit or one of its ancestors (only the commits a trusted
    /// baseline records are known: any other is not).
    pub fn is_ancestor(&self, commit: &str) -> bool {
        self.ancestors.contains(commit)
    }

    /// The trusted files below `folder` as the base commit has them (a distilled suite's
    /// manifests and gold cache); `None` outside a pull request.
    pub fn base_folder(&self, folder: &Path) -> Option<BaseFolder> {
        let commit = self.base_commit.clone()?;
        let root = absolute(folder);
        let files = (self.files.iter())
            .filter(|(path, _)| path.starts_with(&root))
            .filter_map(|(path, file)| Some((path.clone(), file.bytes.clone()?)))
            .collect();
        Some(BaseFolder { commit, files })
    }
}

/// The trusted files of one folder as the base commit has them, for the stage that owns the
/// folder (a distilled suite reads its manifests and gold cache from it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BaseFolder {
    /// The base commit, for messages.
    pub commit: String,
    /// The base's files below the folder, by absolute path.
    pub files: BTreeMap<PathBuf, Vec<u8>>,
}

impl BaseFolder {
    /// The base's version of `path`; `None` when the base has no such file.
    pub fn read(&self, path: &Path) -> Option<Vec<u8>> {
        self.files.get(&absolute(path)).cloned()
    }
}

/// The repository paths among `files` that are `folder` or lie below it, as a pathspec of
/// `folder` would match them.
pub fn files_under(files: &[String], folder: &str) -> Vec<String> {
    (files.iter())
        .filter(|file| under(file, folder))
        .cloned()
        .collect()
}

/// Whether the repository path `file` is `folder` or lies below it (`""` is the root).
fn under(file: &str, folder: &str) -> bool {
    folder.is_empty()
        || file == folder
        || file
            .strip_prefix(folder)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// `path` made absolute against the working directory, without touching the file system: the
/// key of [`Snapshot::files`].
pub fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// A trusted input of a run outside a pull request: the working tree's file, bounded; absent
/// when nothing is there.
pub fn read_tree(path: &Path) -> Result<TrustedFile, InputError> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(TrustedFile::default());
    }
    let bytes = crate::util::error::read_bounded(path, crate::util::error::MAX_INPUT_BYTES)?;
    Ok(TrustedFile {
        bytes: Some(bytes),
        changed: false,
    })
}

/// `path` relative to the repository `root`, `/`-separated, as git names it; `None` when it lies
/// outside (then a pull request cannot have changed it). The path is named as written: the
/// repository's own folders are the pull request's to replace by symlinks, so none inside it is
/// followed (a folder replaced by a link to another folder must not make the base's file of
/// that other folder stand in). Only the folders above the repository may be links: the
/// outermost ancestor of `path` that resolves to `root` is the repository. A name that is not
/// UTF-8 is an error: written lossily it would name another file to git (red team round 49: a
/// committed shard under a folder `f\xff` read as untracked).
pub fn repo_path(root: &Path, path: &Path) -> Result<Option<String>, InputError> {
    let absolute = crate::util::workspace::lexical(
        &std::path::absolute(path).map_err(|e| InputError::read(path, e))?,
    );
    let root = root.canonicalize().map_err(|e| InputError::read(root, e))?;
    let ancestors: Vec<&Path> = absolute.ancestors().collect();
    let Some(top) = (ancestors.into_iter().rev())
        .find(|ancestor| ancestor.canonicalize().is_ok_and(|real| real == root))
    else {
        return Ok(None);
    };
    let relative = absolute.strip_prefix(top).unwrap_or(&absolute);
    let names: Option<Vec<&str>> = (relative.components())
        .map(|c| c.as_os_str().to_str())
        .collect();
    let names = names.ok_or_else(|| {
        InputError::malformed(
            path,
            "path",
            "is not UTF-8, so git's name of it is not known",
        )
    })?;
    Ok(Some(names.join("/")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_inside_the_repository_replaced_by_a_link_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join("reviews/b")).unwrap();
        std::os::unix::fs::symlink("b", root.join("reviews/a")).unwrap();
        std::os::unix::fs::symlink(&root, dir.path().join("outer-link")).unwrap();
        let name = |path: &Path| repo_path(&root, path).unwrap();
        let through_inner = root.join("reviews/a/overrides.jsonl");
        assert_eq!(
            name(&through_inner).as_deref(),
            Some("reviews/a/overrides.jsonl")
        );
        let through_outer = dir.path().join("outer-link/reviews/./b/../a/x.json");
        assert_eq!(name(&through_outer).as_deref(), Some("reviews/a/x.json"));
        assert_eq!(name(&dir.path().join("elsewhere.json")), None);
    }

    #[test]
    fn a_folder_holds_its_files_and_not_its_namesakes() {
        assert!(under("data/db/x.sqlite", "data/db"));
        assert!(under("data/db", "data/db"));
        assert!(!under("data/dbx/x.sqlite", "data/db"));
        assert!(under("anything", ""));
    }

    #[test]
    fn a_pull_request_never_reads_an_input_the_trust_stage_did_not() {
        let snapshot = Snapshot {
            base_commit: Some("abc".into()),
            ..Snapshot::default()
        };
        let error = snapshot.read(Path::new("/nowhere/x.json")).unwrap_err();
        assert!(error
            .to_string()
            .contains("was not read from the base commit"));
        let tree = Snapshot::default();
        assert_eq!(
            tree.read(Path::new("/nowhere/x.json")).unwrap(),
            TrustedFile::default()
        );
    }
}
