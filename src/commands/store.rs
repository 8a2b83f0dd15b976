//! `sqlgate baseline store`: commits the baseline `sqlgate baseline update` wrote and pushes it,
//! or fails: a job that stored nothing never passes (`.github/workflows/sqlgate-baseline.yml`).
//!
//! Two places, for two kinds of repository (docs/ACTION.md, "The baseline under branch
//! protection"):
//! - the branch that was pushed (default): a commit on top of the merge, pushed with the job's
//!   token; a protected branch refuses it unless the token may bypass the protection;
//! - a branch of its own (`--branch sqlgate-baseline`): a history of commits holding only the
//!   baseline file, each made on the last (fast-forward pushes only), that the protection of the
//!   default branch does not cover; pull requests read it back with `--baseline-ref` (the
//!   Action's `baseline-ref`), taking the newest baseline made at an ancestor of their base.

use crate::input::config::Config;
use crate::trust::TrustedBase;
use anyhow::{bail, Context};
use std::path::Path;
use std::process::ExitCode;

/// The identity of the commits this command makes.
const BOT: [(&str, &str); 4] = [
    ("GIT_AUTHOR_NAME", "github-actions[bot]"),
    (
        "GIT_AUTHOR_EMAIL",
        "41898282+github-actions[bot]@users.noreply.github.com",
    ),
    ("GIT_COMMITTER_NAME", "github-actions[bot]"),
    (
        "GIT_COMMITTER_EMAIL",
        "41898282+github-actions[bot]@users.noreply.github.com",
    ),
];

/// Stores the config's baseline file: on `branch` when given, else on the branch that was pushed
/// (`GITHUB_REF_NAME`, or the checked-out branch). Every failure is an error.
pub fn store_baseline(config_path: &Path, branch: Option<&str>) -> anyhow::Result<ExitCode> {
    let config = Config::load(config_path, &crate::engine::registry::Engines)?;
    let section = config.baseline.as_ref().with_context(|| {
        format!(
            "config {}: `baseline.path` is not set",
            config_path.display()
        )
    })?;
    anyhow::ensure!(
        section.path.is_file(),
        "{} does not exist: run `sqlgate baseline update --config {}` first; nothing was stored",
        section.path.display(),
        config_path.display()
    );
    let repository = TrustedBase::at(&config.base_dir, "HEAD")?;
    let name = repository
        .repo_path(&section.path)?
        .with_context(|| format!("{} lies outside the repository", section.path.display()))?;
    let made_at = crate::trust::current_commit(&config.base_dir)
        .context("no commit to store the baseline for")?;
    let git = Git(&repository.root);
    match branch {
        Some(branch) => store_on_own_branch(&git, &name, &made_at, branch),
        None => store_on_pushed_branch(&git, &name, &made_at),
    }
}

/// Commits the baseline on top of the checkout and pushes it to the branch that was pushed. When
/// the push is refused, the job passes only if the branch has moved on to a descendant of the
/// commit measured (that newer push's job stores the baseline).
fn store_on_pushed_branch(git: &Git, name: &str, made_at: &str) -> anyhow::Result<ExitCode> {
    let target = match std::env::var("GITHUB_REF_NAME")
        .ok()
        .filter(|v| !v.is_empty())
    {
        Some(target) => target,
        None => git
            .run(&["symbolic-ref", "--short", "HEAD"])
            .map_err(anyhow::Error::msg)
            .context("no branch to push to (GITHUB_REF_NAME is not set, HEAD is detached)")?,
    };
    git.run(&["add", "--", name]).map_err(anyhow::Error::msg)?;
    if git
        .run(&["diff", "--cached", "--quiet", "--", name])
        .is_ok()
    {
        println!("sqlgate: the baseline {name} is unchanged; nothing to store");
        return Ok(ExitCode::SUCCESS);
    }
    let message = format!("sqlgate: refresh the baseline at {made_at}");
    git.run(&["commit", "--quiet", "-m", &message, "--", name])
        .map_err(anyhow::Error::msg)?;
    let destination = format!("HEAD:refs/heads/{target}");
    let Err(refused) = git.run(&["push", "--quiet", "origin", &destination]) else {
        println!("sqlgate: baseline {name} committed and pushed to {target}");
        return Ok(ExitCode::SUCCESS);
    };
    let remote = git
        .remote_tip(&target)
        .with_context(|| format!("the push to {target} was refused ({refused})"))?;
    let moved_on = match &remote {
        Some(tip) if tip != made_at => {
            git.run(&[
                "fetch",
                "--quiet",
                "origin",
                &format!("refs/heads/{target}"),
            ])
            .map_err(anyhow::Error::msg)?;
            git.run(&["merge-base", "--is-ancestor", made_at, tip])
                .is_ok()
        }
        _ => false,
    };
    if let (true, Some(tip)) = (moved_on, remote) {
        println!(
            "sqlgate: {target} moved on to {tip} while the baseline was made; the job of that \
             push stores the baseline"
        );
        return Ok(ExitCode::SUCCESS);
    }
    bail!(
        "the push of the baseline to {target} was refused ({refused}); nothing was stored. A \
         protected branch refuses the job's token: store the baseline on a branch of its own \
         (SQLGATE_BASELINE_BRANCH in the workflow, read back with the Action's `baseline-ref`) \
         or push with a token allowed to bypass the protection (docs/ACTION.md, \"The baseline \
         under branch protection\")"
    )
}

/// Appends a commit holding only the baseline file to `branch` (created when absent) and pushes
/// it; the push never rewrites the branch.
fn store_on_own_branch(
    git: &Git,
    name: &str,
    made_at: &str,
    branch: &str,
) -> anyhow::Result<ExitCode> {
    git.run(&["check-ref-format", "--branch", branch])
        .map_err(|e| anyhow::anyhow!("`{branch}` is not a branch name: {e}"))?;
    let reference = format!("refs/heads/{branch}");
    let parent = git
        .remote_tip(branch)
        .with_context(|| format!("cannot read the branch {branch} of origin"))?;
    if parent.is_some() {
        git.run(&["fetch", "--quiet", "origin", &reference])
            .map_err(anyhow::Error::msg)?;
    }
    let blob = git
        .run(&["hash-object", "-w", "--", name])
        .map_err(anyhow::Error::msg)?;
    let index = tempfile_path();
    let tree = git
        .with_index(
            &index,
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("100644,{blob},{name}"),
            ],
        )
        .and_then(|_| git.with_index(&index, &["write-tree"]));
    std::fs::remove_file(&index).ok();
    let tree = tree.map_err(anyhow::Error::msg)?;
    let message = format!("sqlgate: the baseline at {made_at}");
    let mut args = vec!["commit-tree", tree.as_str(), "-m", message.as_str()];
    if let Some(parent) = &parent {
        args.extend(["-p", parent.as_str()]);
    }
    let commit = git.run(&args).map_err(anyhow::Error::msg)?;
    git.run(&[
        "push",
        "--quiet",
        "origin",
        &format!("{commit}:{reference}"),
    ])
    .map_err(|refused| {
        anyhow::anyhow!(
            "the push of the baseline to {branch} was refused ({refused}); nothing was stored"
        )
    })?;
    println!("sqlgate: baseline {name} (made at {made_at}) pushed to {branch} as {commit}");
    Ok(ExitCode::SUCCESS)
}

/// A temporary index file for building the baseline branch's tree.
fn tempfile_path() -> std::path::PathBuf {
    std::env::temp_dir().join(format!(
        "sqlgate-baseline-index-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ))
}

/// git in one repository, as the bot.
struct Git<'a>(&'a Path);

impl Git<'_> {
    /// Runs git; its trimmed standard output, or its exit code and error message.
    fn run(&self, args: &[&str]) -> Result<String, String> {
        self.command(args, None)
    }

    /// Runs git with `GIT_INDEX_FILE` set to `index`.
    fn with_index(&self, index: &Path, args: &[&str]) -> Result<String, String> {
        self.command(args, Some(index))
    }

    fn command(&self, args: &[&str], index: Option<&Path>) -> Result<String, String> {
        let index = index.map(|i| i.to_string_lossy().into_owned());
        let mut env = BOT.to_vec();
        env.extend(index.as_deref().map(|i| ("GIT_INDEX_FILE", i)));
        let output = crate::trust::git::output(self.0, args, &env)?;
        let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).trim().to_string();
        if output.status.success() {
            Ok(text(&output.stdout))
        } else {
            Err(format!(
                "git {} exited with {}: {}",
                args.first().copied().unwrap_or_default(),
                output.status.code().unwrap_or(-1),
                text(&output.stderr)
            ))
        }
    }

    /// The commit `origin`'s branch points at, `None` when origin has no such branch; an error
    /// when origin cannot be read.
    fn remote_tip(&self, branch: &str) -> anyhow::Result<Option<String>> {
        let reference = format!("refs/heads/{branch}");
        let args = ["ls-remote", "--exit-code", "origin", &reference];
        let output = crate::trust::git::output(self.0, &args, &[]).map_err(anyhow::Error::msg)?;
        match output.status.code() {
            Some(0) => {}
            Some(2) => return Ok(None),
            code => bail!(
                "git ls-remote exited with {code:?}: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            ),
        }
        let listing = String::from_utf8_lossy(&output.stdout);
        let tip = listing
            .lines()
            .find_map(|line| line.split_once('\t').filter(|(_, r)| *r == reference))
            .map(|(sha, _)| sha.to_string())
            .filter(|sha| sha.len() >= 40 && sha.bytes().all(|b| b.is_ascii_hexdigit()));
        tip.map(Some)
            .with_context(|| format!("origin listed no commit for {reference}: {listing}"))
    }
}
