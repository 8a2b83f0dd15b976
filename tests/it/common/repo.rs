//! Model repositories in real git histories, for the tests of pull-request runs: a copy of the
//! bundled example, a base commit on `main` with a baseline made on it, a pull-request branch,
//! `sqlgate` run in the checkout as a job runs it, and the event payload of a pull-request job.

use super::{arg, assert_exit, copy_tree, git};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The bundled example (four Spider databases, two systems, a config and its baseline).
pub fn example_folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/spider-mini")
}

/// A copy of the bundled example in a fresh temporary folder, with its baseline when `baseline`.
pub fn example(baseline: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&example_folder(), dir.path());
    if !baseline {
        std::fs::remove_file(dir.path().join("baseline.json")).unwrap();
    }
    dir
}

/// `sqlgate ARGS` run in `dir` outside Actions (no `GITHUB_SHA` either), with `env` set.
pub fn sqlgate_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = super::sqlgate_command(args);
    command.current_dir(dir).env_remove("GITHUB_SHA");
    command.envs(env.iter().copied());
    command.output().unwrap()
}

/// Commits everything in the checkout `root` (`git add -A`) as `message`.
pub fn commit_all(root: &Path, message: &str) {
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", message]);
}

/// Makes `root` a repository whose branch `main` holds everything in it as one commit `message`.
pub fn init_main(root: &Path, message: &str) {
    git(root, &["init", "-q", "-b", "main"]);
    commit_all(root, message);
}

/// The commit `HEAD` names in `root`.
pub fn head(root: &Path) -> String {
    git(root, &["rev-parse", "HEAD"])
}

/// Runs `sqlgate baseline update` of `root`'s `sqlgate.yml`, asserting it succeeds.
pub fn update_baseline(root: &Path) {
    let made = sqlgate_in(
        root,
        &["baseline", "update", "--config", "sqlgate.yml"],
        &[],
    );
    assert_exit(&made, 0);
}

/// Runs `sqlgate baseline update` of `root`'s `sqlgate.yml` (asserting it succeeds), commits what
/// it wrote as `message` and returns that commit: the base of the pull requests that follow.
pub fn commit_baseline(root: &Path, message: &str) -> String {
    update_baseline(root);
    commit_all(root, message);
    head(root)
}

/// `main` holding the example (or what `root` holds), its config and a baseline made on it;
/// returns the base commit.
pub fn gated_main(root: &Path) -> String {
    init_main(root, "example");
    commit_baseline(root, "baseline")
}

/// Commits the changes to tracked files in `root` as `message` (a push to the base branch),
/// then checks out a new branch `branch` from that commit (the pull request); returns the commit.
pub fn commit_base(root: &Path, message: &str, branch: &str) -> String {
    git(root, &["commit", "-qam", message]);
    let base = head(root);
    git(root, &["checkout", "-qb", branch]);
    base
}

/// `sqlgate eval` of the checkout's `sqlgate.yml`, posting no comment: with nothing more, it
/// trusts the checkout's own files (a run outside a pull request).
pub const EVAL: [&str; 5] = ["eval", "--config", "sqlgate.yml", "--comment", "never"];

/// The pull request checked out in `root` judged as its job judges it: [`EVAL`] trusting the
/// config, template and baseline of the commit `base`, with `extra`, the workspace being the
/// checkout (not the tests' default `/`), so every path lever meets the workspace rule a job has
/// (red team round 31).
pub fn judged(root: &Path, base: &str, extra: &[&str]) -> Output {
    let args = [&EVAL[..], &["--trusted-base", base], extra].concat();
    let workspace = root.to_str().expect("a temporary folder's path is UTF-8");
    sqlgate_in(root, &args, &[("SQLGATE_WORKSPACE", workspace)])
}

/// Writes the payload of a `pull_request` event (`payload`) to `path` and returns the path.
pub fn event(path: PathBuf, payload: serde_json::Value) -> PathBuf {
    std::fs::write(&path, payload.to_string()).unwrap();
    path
}

/// Sets what an Actions job on a pull request of `acme/model` has: `GITHUB_ACTIONS`, the event
/// payload at `event` (see [`event`]) and the repository's name.
pub fn in_pull_request_job<'a>(command: &'a mut Command, event: &Path) -> &'a mut Command {
    command
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_EVENT_PATH", arg(event))
        .env("GITHUB_REPOSITORY", "acme/model")
}
