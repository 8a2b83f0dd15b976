//! The workspace rule, enforced in one place: every path a config names resolves inside the
//! workspace after following symlinks; only regular files are read; outputs never land in
//! `.git`, outside the workspace, or over an existing file sqlgate did not write.
//!
//! The workspace is `SQLGATE_WORKSPACE` when set (a local run over data kept elsewhere),
//! else `GITHUB_WORKSPACE` (the repository root in Actions), else the config file's folder.
//! Each check returns a message naming the config key and the path; the config turns it into an
//! input error (exit 2).

use std::path::{Component, Path, PathBuf};

/// Pseudo file systems whose "regular files" are views of the running system.
const SYSTEM_TREES: [&str; 3] = ["/proc", "/sys", "/dev"];

/// Where a file sqlgate writes may lie.
#[derive(Clone, Copy)]
enum Placement {
    /// Inside the workspace (a path from the config, which a pull request may propose).
    Workspace,
    /// Anywhere but `.git` and the system trees (a path the person running sqlgate gave).
    Anywhere,
}

/// Refuses a resolved path in a system tree or inside any `.git` folder.
fn check_not_system_or_git(key: &str, shown: &Path, resolved: &Path) -> Result<(), String> {
    if SYSTEM_TREES.iter().any(|tree| resolved.starts_with(tree)) {
        return Err(format!(
            "`{key}`: {} is a system file ({}), not an output file",
            shown.display(),
            resolved.display()
        ));
    }
    if resolved.components().any(|c| c.as_os_str() == ".git") {
        return Err(format!(
            "`{key}`: {} is inside `.git`, which sqlgate never reads or writes",
            shown.display()
        ));
    }
    Ok(())
}

/// How many leading bytes of an existing output are read to recognise sqlgate's own file.
const MARKER_WINDOW: u64 = 256;

/// The folder every configured path must stay inside (canonical, symlinks resolved).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Workspace {
    root: PathBuf,
    /// Where the root came from (`SQLGATE_WORKSPACE`, `GITHUB_WORKSPACE` or the config's
    /// folder), so a refusal can say how to widen it.
    source: String,
}

impl Workspace {
    /// The workspace of a config kept in `config_dir`: `SQLGATE_WORKSPACE`, `GITHUB_WORKSPACE`
    /// or `config_dir`, in that order.
    pub fn detect(config_dir: &Path) -> Result<Workspace, String> {
        let from_env = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(|v| (name.to_string(), PathBuf::from(v)))
        };
        let (source, root) = from_env("SQLGATE_WORKSPACE")
            .or_else(|| from_env("GITHUB_WORKSPACE"))
            .unwrap_or_else(|| ("the config's folder".into(), config_dir.to_path_buf()));
        let root = root
            .canonicalize()
            .map_err(|e| format!("workspace {} ({source}): {e}", root.display()))?;
        Ok(Workspace { root, source })
    }

    /// How to widen the workspace, for a path refused as outside it.
    fn widen_hint(&self) -> String {
        match self.source.as_str() {
            "SQLGATE_WORKSPACE" => "(set by SQLGATE_WORKSPACE; widen it there)".into(),
            "GITHUB_WORKSPACE" => "(the checkout, GITHUB_WORKSPACE): keep the file in the \
                repository"
                .into(),
            _ => "(the config's folder): keep the file under it, or set SQLGATE_WORKSPACE to \
                a folder holding both, e.g. `SQLGATE_WORKSPACE=$PWD`"
                .into(),
        }
    }

    /// The workspace folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `path` resolved (symlinks followed) and checked to lie inside the workspace, outside
    /// `.git` and outside the system's pseudo file systems.
    fn resolve_existing(&self, key: &str, path: &Path) -> Result<PathBuf, String> {
        let resolved = path
            .canonicalize()
            .map_err(|e| format!("`{key}`: {}: {e}", path.display()))?;
        self.check_inside(key, path, &resolved)?;
        Ok(resolved)
    }

    fn check_inside(&self, key: &str, shown: &Path, resolved: &Path) -> Result<(), String> {
        let outside = || {
            format!(
                "`{key}`: {} resolves to {}, outside the workspace {} {}",
                shown.display(),
                resolved.display(),
                self.root.display(),
                self.widen_hint()
            )
        };
        let relative = resolved.strip_prefix(&self.root).map_err(|_| outside())?;
        if SYSTEM_TREES.iter().any(|tree| resolved.starts_with(tree)) {
            return Err(format!(
                "`{key}`: {} is a system file ({}), not a workspace file",
                shown.display(),
                resolved.display()
            ));
        }
        if relative.components().any(|c| c.as_os_str() == ".git") {
            return Err(format!(
                "`{key}`: {} is inside `.git`, which sqlgate never reads or writes",
                shown.display()
            ));
        }
        Ok(())
    }

    /// An input file: inside the workspace and a regular file (no device, FIFO, socket).
    pub fn input_file(&self, key: &str, path: &Path) -> Result<PathBuf, String> {
        let resolved = self.resolve_existing(key, path)?;
        if !std::fs::metadata(&resolved).is_ok_and(|m| m.is_file()) {
            return Err(format!("`{key}`: {} is not a regular file", path.display()));
        }
        Ok(resolved)
    }

    /// An input folder inside the workspace.
    pub fn input_dir(&self, key: &str, path: &Path) -> Result<PathBuf, String> {
        let resolved = self.resolve_existing(key, path)?;
        if !resolved.is_dir() {
            return Err(format!("`{key}`: {} is not a folder", path.display()));
        }
        Ok(resolved)
    }

    /// A folder sqlgate writes into (a cache or a suite), which may not exist yet.
    pub fn output_dir(&self, key: &str, path: &Path) -> Result<(), String> {
        let resolved = self.resolve_new(key, path, Placement::Workspace)?;
        if resolved.exists() && !resolved.is_dir() {
            return Err(format!("`{key}`: {} is not a folder", path.display()));
        }
        Ok(())
    }

    /// A file sqlgate writes where the config names it: inside the workspace and outside
    /// `.git`; an existing file there must be a regular file (not a symlink) whose first bytes
    /// hold one of `markers`, i.e. a file sqlgate wrote. Checked when the config is loaded and
    /// again just before writing.
    pub fn output_file(&self, key: &str, path: &Path, markers: &[&str]) -> Result<(), String> {
        self.output_file_at(key, path, markers, Placement::Workspace)
    }

    /// A file sqlgate writes where the command line (or the Action's inputs) names it: the
    /// person running sqlgate chose the path, so it may lie outside the workspace (`--jsonl
    /// /tmp/items.jsonl`), but never in `.git` or a system tree, and an existing file must be
    /// one sqlgate wrote, as for [`Workspace::output_file`].
    pub fn user_output_file(&self, key: &str, path: &Path, markers: &[&str]) -> Result<(), String> {
        self.output_file_at(key, path, markers, Placement::Anywhere)
    }

    /// [`Workspace::output_file`] and [`Workspace::user_output_file`], by where the file may be.
    fn output_file_at(
        &self,
        key: &str,
        path: &Path,
        markers: &[&str],
        placement: Placement,
    ) -> Result<(), String> {
        let resolved = self.resolve_new(key, path, placement)?;
        let Ok(metadata) = std::fs::symlink_metadata(path) else {
            return Ok(());
        };
        if !metadata.is_file() {
            return Err(format!(
                "`{key}`: {} exists and is not a regular file (symlink, folder or device)",
                path.display()
            ));
        }
        let mut head = Vec::new();
        let readable = std::fs::File::open(&resolved).and_then(|file| {
            use std::io::Read;
            file.take(MARKER_WINDOW).read_to_end(&mut head)
        });
        let head = String::from_utf8_lossy(&head);
        if readable.is_err() || !markers.iter().any(|marker| head.contains(marker)) {
            return Err(format!(
                "`{key}`: {} exists and was not written by sqlgate; refusing to replace it",
                path.display()
            ));
        }
        Ok(())
    }

    /// Resolves a path that may not exist yet: its deepest existing ancestor is resolved and
    /// checked, and the rest may not climb (`..`) or enter `.git`.
    fn resolve_new(&self, key: &str, path: &Path, placement: Placement) -> Result<PathBuf, String> {
        let mut existing = path;
        let mut rest = Vec::new();
        while std::fs::symlink_metadata(existing).is_err() {
            let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) else {
                break;
            };
            rest.push(name.to_os_string());
            existing = if parent.as_os_str().is_empty() {
                Path::new(".")
            } else {
                parent
            };
        }
        let climbs = path.components().any(|c| c == Component::ParentDir);
        if climbs && std::fs::symlink_metadata(existing).is_err() {
            return Err(format!(
                "`{key}`: {} uses `..` below a folder that does not exist",
                path.display()
            ));
        }
        let mut resolved = existing
            .canonicalize()
            .map_err(|e| format!("`{key}`: {}: {e}", path.display()))?;
        for name in rest.into_iter().rev() {
            resolved.push(name);
        }
        match placement {
            Placement::Workspace => self.check_inside(key, path, &resolved)?,
            Placement::Anywhere => check_not_system_or_git(key, path, &resolved)?,
        }
        Ok(resolved)
    }

    /// Checks a (resolved) glob pattern before it is walked: the folder before its first
    /// wildcard lies inside the workspace (after symlinks), and no `..` follows a wildcard, so
    /// `/**/*.txt` never walks the file system.
    pub fn check_pattern(&self, key: &str, pattern: &str) -> Result<(), String> {
        let is_wild = |c: &Component| c.as_os_str().to_string_lossy().contains(['*', '?', '[']);
        let components: Vec<Component> = Path::new(pattern).components().collect();
        let Some(first_wild) = components.iter().position(is_wild) else {
            return Ok(());
        };
        if components[first_wild..].contains(&Component::ParentDir) {
            return Err(format!(
                "`{key}`: the glob `{pattern}` may not use `..` after a wildcard"
            ));
        }
        let literal: PathBuf = components[..first_wild].iter().collect();
        let start = literal.canonicalize().unwrap_or(literal);
        if !start.starts_with(&self.root) {
            return Err(format!(
                "`{key}`: the glob `{pattern}` starts outside the workspace {}; \
                 write it relative to the config's folder",
                self.root.display()
            ));
        }
        Ok(())
    }
}

/// The side files SQLite reads beside a database `FILE`: `FILE-wal` (a write-ahead log, which
/// opening it would replay, creating `FILE-shm`) and `FILE-journal` (a rollback journal).
pub const SQLITE_SIDE_FILES: &[&str] = &["-wal", "-journal"];

/// Refuses a database that is not a regular file inside `folder` (after symlinks) or that has
/// one of `side_files` (suffixes of its name: a log or journal its engine would read, which no
/// digest of the database covers) beside it.
pub fn check_database(folder: &Path, path: &Path, side_files: &[&str]) -> Result<(), String> {
    let resolved = path
        .canonicalize()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let folder = folder
        .canonicalize()
        .map_err(|e| format!("{}: {e}", folder.display()))?;
    if !resolved.starts_with(&folder) {
        return Err(format!(
            "{} resolves to {}, outside the databases folder {}",
            path.display(),
            resolved.display(),
            folder.display()
        ));
    }
    if !std::fs::metadata(&resolved).is_ok_and(|m| m.is_file()) {
        return Err(format!("{} is not a regular file", path.display()));
    }
    for suffix in side_files {
        if side_file(path, suffix).is_some() {
            return Err(format!(
                "{} has a {suffix} file beside it, which the engine would read and the dataset \
                 fingerprint does not cover; checkpoint it into the database (SQLite: \
                 `sqlite3 FILE 'PRAGMA wal_checkpoint(TRUNCATE)'`, DuckDB: `CHECKPOINT`) and \
                 remove it",
                path.display()
            ));
        }
    }
    Ok(())
}

/// A file beside `path` whose name is `path`'s name followed by `suffix` and anything after it
/// (`FILE.wal`, `FILE.wal.checkpoint`, `FILE.wal.recovery` for `.wal`): an engine may read any
/// of its logs under a name its next version picks, so every name with the prefix counts.
pub fn side_file(path: &Path, suffix: &str) -> Option<PathBuf> {
    let mut prefix = path.file_name()?.to_os_string();
    prefix.push(suffix);
    let prefix = prefix.as_encoded_bytes();
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let entries = std::fs::read_dir(folder).ok()?;
    (entries.flatten())
        .find(|entry| entry.file_name().as_encoded_bytes().starts_with(prefix))
        .map(|entry| entry.path())
}

/// `path` with `.` dropped and each `..` taking off the name before it, without asking the file
/// system: how git names a path, so a run reads the file the trust stage checked (a `..` after a
/// folder a pull request replaced by a symlink would otherwise leave the repository's tree). A
/// leading `..` of a relative path stays; an absolute path stays absolute.
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(".."),
            },
            other => out.push(other),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// A path the config names, resolved against the config's folder `base`: joined as written,
/// and when it climbs with `..`, resolved by name ([`lexical`]), so a `..` never passes through a
/// folder the file system would follow somewhere else.
pub fn resolve(base: &Path, path: impl AsRef<Path>) -> PathBuf {
    let path = path.as_ref();
    let joined = base.join(path);
    match path.components().any(|c| c == Component::ParentDir) {
        true => lexical(&joined),
        false => joined,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dots_are_resolved_by_name_alone() {
        let cases = [
            ("./../x", "../x"),
            ("a/../../b", "../b"),
            ("/a/../..", "/"),
            ("eval/../suites/ts", "suites/ts"),
            ("a/./b/", "a/b"),
            ("a/..", "."),
        ];
        for (path, expected) in cases {
            assert_eq!(lexical(Path::new(path)), Path::new(expected), "{path}");
        }
    }

    fn workspace(dir: &Path) -> Workspace {
        Workspace {
            root: dir.canonicalize().unwrap(),
            source: "the config's folder".into(),
        }
    }

    #[test]
    fn outputs_stay_inside_and_out_of_git() {
        let dir = tempfile::tempdir().unwrap();
        let ws = workspace(dir.path());
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        assert!(ws
            .output_file("k", &dir.path().join("a/b/report.md"), &["m"])
            .is_ok());
        assert!(ws
            .output_file("k", &dir.path().join(".git/config"), &["m"])
            .is_err());
        assert!(ws
            .output_file("k", &dir.path().join("../../outside/x"), &["m"])
            .is_err());
        std::fs::write(dir.path().join("mine.md"), "<!-- m -->").unwrap();
        std::fs::write(dir.path().join("theirs.md"), "x").unwrap();
        assert!(ws
            .output_file("k", &dir.path().join("mine.md"), &["m"])
            .is_ok());
        assert!(ws
            .output_file("k", &dir.path().join("theirs.md"), &["m"])
            .is_err());
    }

    #[test]
    fn system_files_and_absolute_globs_are_refused() {
        let everything = Workspace {
            root: PathBuf::from("/"),
            source: "SQLGATE_WORKSPACE".into(),
        };
        assert!(everything
            .input_file("k", Path::new("/proc/self/environ"))
            .is_err());
        let dir = tempfile::tempdir().unwrap();
        let ws = workspace(dir.path());
        assert!(ws.check_pattern("k", "/**/*.txt").is_err());
        let inside = format!("{}/preds/*.txt", ws.root.display());
        assert!(ws.check_pattern("k", &inside).is_ok());
        assert!(ws
            .check_pattern("k", &format!("{inside}/../../x/*"))
            .is_err());
    }
}
