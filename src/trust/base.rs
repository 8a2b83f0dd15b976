//! The base commit of a pull request and the questions the trust stage asks git about it. A pull
//! request can edit everything in its tree, so the files that decide the verdict (the config with
//! its provider settings, the report template and the baseline) are read as they are on the PR's
//! base commit (`git show <base>:<path>`); the PR contributes only the prediction files the base
//! config names. Dataset files the PR changes are refused, and the baseline must have been made
//! at an ancestor of the base.

use crate::util::error::InputError;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The base commit of a pull request, in the repository that holds the workspace.
#[derive(Debug, Clone)]
pub struct TrustedBase {
    /// The repository's top-level folder.
    pub root: PathBuf,
    /// The base commit (full SHA or any revision git resolves).
    pub commit: String,
    /// The repository's files that differ from the base, asked of git once (see
    /// [`TrustedBase::changed_files`]).
    changed: OnceLock<Result<Vec<String>, String>>,
}

impl TrustedBase {
    /// The base of the pull request GitHub Actions is running for (`pull_request` and
    /// `pull_request_target` events: `pull_request.base.sha` of the event payload); `None` for
    /// any other event or outside Actions.
    pub fn from_actions_env() -> Result<Option<TrustedBase>, InputError> {
        let event = std::env::var("GITHUB_EVENT_NAME").unwrap_or_default();
        if !matches!(event.as_str(), "pull_request" | "pull_request_target") {
            return Ok(None);
        }
        let path = PathBuf::from(std::env::var("GITHUB_EVENT_PATH").unwrap_or_default());
        let bytes = crate::util::error::read_bytes(&path)?;
        let payload: serde_json::Value = serde_json::from_slice(&bytes)
            .map_err(|e| InputError::malformed(&path, "event payload", e.to_string()))?;
        let sha = payload
            .pointer("/pull_request/base/sha")
            .and_then(serde_json::Value::as_str)
            .ok_or_else(|| {
                InputError::malformed(
                    &path,
                    "pull_request.base.sha",
                    "missing: cannot tell the base commit whose config and baseline are trusted",
                )
            })?;
        let workspace = std::env::var("GITHUB_WORKSPACE")
            .map(PathBuf::from)
            .unwrap_or_else(|_| PathBuf::from("."));
        TrustedBase::at(&workspace, sha).map(Some)
    }

    /// The revision `commit` of the repository holding `folder`.
    pub fn at(folder: &Path, commit: &str) -> Result<TrustedBase, InputError> {
        let root = git(folder, &["rev-parse", "--show-toplevel"])
            .map_err(|e| base_error(folder, format!("not inside a git repository: {e}")))?;
        let root = PathBuf::from(String::from_utf8_lossy(&root).trim());
        let full = git(&root, &["rev-parse", "--verify", &format!("{commit}^{{commit}}")])
            .map_err(|e| {
                base_error(
                    &root,
                    format!("base commit `{commit}` is not in the checkout (fetch it: `fetch-depth: 0`): {e}"),
                )
            })?;
        Ok(TrustedBase {
            root,
            commit: String::from_utf8_lossy(&full).trim().to_string(),
            changed: OnceLock::new(),
        })
    }

    /// `path` relative to the repository root, `/`-separated, as git names it; `None` when it
    /// lies outside the repository (then the pull request cannot have changed it).
    pub fn repo_path(&self, path: &Path) -> Result<Option<String>, InputError> {
        crate::input::trusted::repo_path(&self.root, path)
    }

    /// The file's content at the base commit; `None` when the base has no such file.
    pub fn read(&self, path: &Path) -> Result<Option<Vec<u8>>, InputError> {
        self.read_at(&self.commit, path)
    }

    /// The file's content at `commit` (a full SHA); `None` when that commit has no such file.
    pub fn read_at(&self, commit: &str, path: &Path) -> Result<Option<Vec<u8>>, InputError> {
        let name = self.repo_path(path)?.ok_or_else(|| {
            base_error(
                path,
                "lies outside the repository, so it has no trusted version".into(),
            )
        })?;
        self.read_named(commit, &name)
            .map_err(|e| base_error(path, e))
    }

    /// The content of the repository path `name` at `commit`; `None` when that commit has no
    /// such file. The working tree is not consulted (a folder the pull request replaced by a
    /// symlink does not change which file is read).
    pub fn read_named(&self, commit: &str, name: &str) -> Result<Option<Vec<u8>>, String> {
        super::git::verified_blob(&self.root, commit, name)
    }

    /// Whether the working tree's `path` differs from the base's (added, changed, removed, or
    /// replaced by a symlink). Git compares it: the file is never read into memory, so a
    /// symlink to `/dev/zero` is seen as a changed link, not read forever.
    pub fn changes(&self, path: &Path) -> Result<bool, InputError> {
        Ok(!self.changed_under(path)?.is_empty())
    }

    /// Files under `path` (a file or a folder) that differ from the base: changed, added,
    /// removed, or new and untracked; none when `path` lies outside the repository.
    pub fn changed_under(&self, path: &Path) -> Result<Vec<String>, InputError> {
        let Some(name) = self.repo_path(path)? else {
            return Ok(Vec::new());
        };
        let changed = self.changed_files()?;
        Ok(crate::input::trusted::files_under(&changed, &name))
    }

    /// Every file of the repository that differs from the base: changed, added, removed (or
    /// replaced by a symlink), or new and untracked, sorted. Git is asked once per base; later
    /// calls reuse the answer.
    pub fn changed_files(&self) -> Result<Vec<String>, InputError> {
        let listed = self.changed.get_or_init(|| self.list_changed());
        listed.clone().map_err(|e| base_error(&self.root, e))
    }

    /// What git lists as changed since the base, and untracked, in the whole repository.
    fn list_changed(&self) -> Result<Vec<String>, String> {
        // `-z`: names as they are (no quoting of a non-ASCII or odd name); `--no-renames`: a
        // file moved away is a deletion at its old path, not only an addition at its new one;
        // `--ignore-submodules=none`: a moved submodule is listed whatever the pull request's
        // `.gitmodules` says.
        let diff = git(
            &self.root,
            &[
                "diff",
                "--no-renames",
                "--ignore-submodules=none",
                "--name-only",
                "-z",
                &self.commit,
                "--",
            ],
        )?;
        let untracked = git(
            &self.root,
            &["ls-files", "--others", "--exclude-standard", "-z", "--"],
        )?;
        let mut files: Vec<String> = (nul_separated(&diff).into_iter())
            .chain(nul_separated(&untracked))
            .collect();
        files.sort();
        files.dedup();
        Ok(files)
    }

    /// The files below the repository path `folder` at `commit`, as repository paths.
    pub fn files_below(&self, commit: &str, folder: &str) -> Result<Vec<String>, InputError> {
        let listed = git(
            &self.root,
            &["ls-tree", "-r", "--name-only", "-z", commit, "--", folder],
        )
        .map_err(|e| base_error(&self.root, e))?;
        Ok(nul_separated(&listed))
    }

    /// The size in bytes of the repository path `name` at the base commit when it is a regular
    /// file there (a blob of mode 100644 or 100755); `None` for a link, a folder, a submodule or
    /// nothing.
    pub fn regular_file_size(&self, name: &str) -> Result<Option<u64>, InputError> {
        let listed = git(
            &self.root,
            &["ls-tree", "-l", "-z", &self.commit, "--", name],
        )
        .map_err(|e| base_error(&self.root, e))?;
        let entry = nul_separated(&listed).into_iter().find_map(|line| {
            let (meta, listed_name) = line.split_once('\t')?;
            (listed_name == name).then(|| {
                meta.split_whitespace()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
        });
        let size = match entry.as_deref() {
            Some([mode, kind, _, size])
                if kind == "blob" && matches!(mode.as_str(), "100644" | "100755") =>
            {
                size.parse().ok()
            }
            _ => None,
        };
        Ok(size)
    }

    /// Writes the base commit's file `name` (a repository path) into the new file `file`.
    pub fn write_blob(&self, name: &str, file: &Path) -> Result<(), InputError> {
        super::git::blob_to_file(&self.root, (&self.commit, name), file)
            .map_err(|e| base_error(file, e))
    }

    /// The committer time of `commit` (seconds since 1970), when it is a commit id git knows.
    pub fn commit_time(&self, commit: &str) -> Option<i64> {
        if commit.is_empty() || !commit.chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        let shown = git(
            &self.root,
            &[
                "show",
                "-s",
                "--format=%ct",
                &format!("{commit}^{{commit}}"),
            ],
        )
        .ok()?;
        String::from_utf8_lossy(&shown).trim().parse().ok()
    }

    /// Whether git tracks `path` in the working tree's index (a committed file, as opposed to
    /// one a job wrote during the run), or a submodule of the index holds it (its files are
    /// committed too, in the submodule, and `ls-files` lists none of them: red team round 21);
    /// false outside the repository.
    pub fn tracks(&self, path: &Path) -> Result<bool, InputError> {
        let Some(name) = self.repo_path(path)? else {
            return Ok(false);
        };
        let folders: Vec<&str> = (name.match_indices('/'))
            .map(|(end, _)| &name[..end])
            .collect();
        let mut args = vec!["ls-files", "--stage", "-z", "--", &name];
        args.extend(&folders);
        let listed = git(&self.root, &args).map_err(|e| base_error(path, e))?;
        Ok(nul_separated(&listed).iter().any(|entry| {
            let (mode, entry_name) = entry.split_once('\t').unwrap_or_default();
            entry_name == name || (mode.starts_with("160000 ") && folders.contains(&entry_name))
        }))
    }

    /// The newest `limit` commits of `reference` (a branch that `sqlgate baseline store
    /// --branch` appends to), newest first; an error naming the ref when it does not resolve.
    pub fn commits_on(&self, reference: &str, limit: usize) -> Result<Vec<String>, InputError> {
        let refuse = |message: String| base_error(&self.root, message);
        if reference.starts_with('-') {
            return Err(refuse(format!("`{reference}` is not a ref")));
        }
        let commits = git(
            &self.root,
            &[
                "rev-list",
                &format!("--max-count={limit}"),
                &format!("{reference}^{{commit}}"),
                "--",
            ],
        )
        .map_err(|e| {
            refuse(format!(
                "the baseline ref `{reference}` is not in the checkout (fetch it: \
                 `fetch-depth: 0` fetches every branch): {e}"
            ))
        })?;
        Ok(String::from_utf8_lossy(&commits)
            .lines()
            .map(str::to_string)
            .collect())
    }

    /// The files at `commit` (repository paths) whose bytes hold `needle`: every file is
    /// searched as bytes (no attribute or content makes one skipped as binary) after its blob
    /// is checked against its id; a file larger than any input sqlgate reads is not searched.
    pub fn files_holding(&self, commit: &str, needle: &str) -> Result<Vec<String>, InputError> {
        let most = crate::util::error::MAX_INPUT_BYTES;
        super::git::files_holding(&self.root, commit, needle.as_bytes(), most)
            .map_err(|e| base_error(&self.root, e))
    }

    /// Whether `commit` is the base commit or one of its ancestors.
    pub fn has_ancestor(&self, commit: &str) -> bool {
        self.descends(&self.commit, commit)
    }

    /// Whether `commit` is `ancestor` or one of its descendants.
    pub fn descends(&self, commit: &str, ancestor: &str) -> bool {
        git(
            &self.root,
            &["merge-base", "--is-ancestor", ancestor, commit],
        )
        .is_ok()
    }
}

/// Runs a read-only git query in `folder`.
fn git(folder: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    super::git::query(folder, args)
}

fn base_error(path: &Path, message: String) -> InputError {
    InputError::malformed(path, "trusted base", message)
}

/// The names of a git listing written with `-z`: NUL-separated, unquoted.
fn nul_separated(listed: &[u8]) -> Vec<String> {
    (listed.split(|&byte| byte == 0))
        .filter(|name| !name.is_empty())
        .map(|name| String::from_utf8_lossy(name).into_owned())
        .collect()
}
