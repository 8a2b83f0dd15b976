//! The one place sqlgate runs git (`tests/it/layout.rs` refuses a `git` subprocess anywhere else):
//! the trust stage reads the base commit, the baseline's history and what a pull request
//! changed through it, and `sqlgate baseline store` commits and pushes through it.

use std::path::Path;
use std::process::{Command, Output};

/// git in `folder`, reading the objects as they are: a workflow step can rewrite what git shows
/// for an object without touching the commit (red team round 11: `git replace` of the base's
/// `sqlgate.yml` or `baseline.json` blob, which `git status` does not show), so replace refs are
/// ignored (`GIT_NO_REPLACE_OBJECTS`), and so are grafts (`GIT_GRAFT_FILE`: an empty file), which
/// could give a commit other parents.
fn git_in(folder: &Path) -> Command {
    let mut git = Command::new("git");
    git.arg("-C")
        .arg(folder)
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .env("GIT_GRAFT_FILE", "/dev/null");
    git
}

/// Runs git in `folder` with `args` and the extra environment `env`; the whole output, or why
/// git could not be started.
pub fn output(folder: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<Output, String> {
    git_in(folder)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .map_err(|e| format!("cannot run git: {e}"))
}

/// git's empty tree: attributes read from it are none.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// Runs a read-only git query in `folder`, pathspecs taken literally (a file named `*` is that
/// file), no file-system monitor command of the repository's config run, with no attributes
/// from the working tree (`GIT_ATTR_SOURCE`, git 2.40 and later: a
/// pull request's `.gitattributes` could otherwise mark files binary, or change how they are
/// converted, in what the trust stage reads of the base); its standard output, or its error
/// message.
pub fn query(folder: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    let output = git_in(folder)
        .args(["-c", "core.fsmonitor=false"])
        .args(args)
        .env("GIT_LITERAL_PATHSPECS", "1")
        .env("GIT_ATTR_SOURCE", EMPTY_TREE)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if output.status.success() {
        Ok(output.stdout)
    } else {
        Err(String::from_utf8_lossy(&output.stderr).trim().to_string())
    }
}

/// Writes the blob `object` (`<commit>:<path>`) of the repository at `folder` into the new file
/// `file`, streamed (a database of the base commit can be larger than memory should hold); the
/// error message when git fails.
pub fn blob_to_file(folder: &Path, object: &str, file: &Path) -> Result<(), String> {
    let out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(file)
        .map_err(|e| format!("{}: {e}", file.display()))?;
    let output = git_in(folder)
        .args(["cat-file", "blob", object])
        .env("GIT_ATTR_SOURCE", EMPTY_TREE)
        .stdout(out)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).trim().to_string())
    }
}
