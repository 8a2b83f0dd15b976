//! The baseline is stored or the job fails: the storing step of the shipped
//! `.github/workflows/sqlgate-baseline.yml`, run as the runner runs it (bash, the step's `run:`
//! and `env:`) against a local bare repository standing for GitHub, whose `main` is protected
//! (a pre-receive hook refuses pushes to it, as branch protection refuses the job's token).
//! Committing to the protected branch fails the job; the baseline branch mode stores the
//! baseline, keeps its history, and pull requests read it back with `--baseline-ref`.

use crate::common;
use common::repo;
use common::text;

use common::{break_predictions, git};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `run:` of the workflow's storing step.
fn storing_step() -> String {
    let text =
        std::fs::read_to_string(root().join(".github/workflows/sqlgate-baseline.yml")).unwrap();
    let workflow: serde_norway::Value = serde_norway::from_str(&text).unwrap();
    let steps = workflow["jobs"]["refresh"]["steps"].as_sequence().unwrap();
    let step = steps
        .iter()
        .find(|s| {
            s["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("Store the baseline"))
        })
        .expect("the workflow has a step storing the baseline");
    step["run"].as_str().unwrap().to_string()
}

/// A model repository (the bundled example, no baseline) cloned from a bare `origin`, whose
/// `main` refuses pushes when `protected`.
fn repository(protected: bool) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let origin = dir.path().join("origin.git");
    let work = dir.path().join("work");
    common::copy_tree(&root().join("examples/spider-mini"), &work);
    std::fs::remove_file(work.join("baseline.json")).unwrap();
    git(
        dir.path(),
        &["init", "-q", "--bare", "-b", "main", "origin.git"],
    );
    repo::init_main(&work, "example");
    git(
        &work,
        &["remote", "add", "origin", origin.to_str().unwrap()],
    );
    git(&work, &["push", "-q", "origin", "main"]);
    if protected {
        let hook = origin.join("hooks/pre-receive");
        std::fs::write(
            &hook,
            "#!/bin/sh\nwhile read old new ref; do\n  if [ \"$ref\" = refs/heads/main ]; then\n    \
             echo 'main is protected: changes must be made through a pull request' >&2\n    \
             exit 1\n  fi\ndone\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    (dir, origin, work)
}

/// The baseline job after a push to `main` of `work`'s HEAD: `sqlgate baseline update`, then the
/// storing step with the workflow's variables (`SQLGATE_BASELINE_BRANCH` as given).
fn baseline_job(work: &Path, branch: &str) -> Output {
    let sha = repo::head(work);
    let update = common::sqlgate_command(&["baseline", "update", "--config", "sqlgate.yml"])
        .current_dir(work)
        .env("GITHUB_SHA", &sha)
        .output()
        .unwrap();
    assert!(update.status.success(), "{update:?}");
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_sqlgate"));
    let path = format!(
        "{}:{}",
        binary.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("bash")
        .args(["-e", "-c", &storing_step()])
        .current_dir(work)
        .env("PATH", path)
        .env("SQLGATE_CONFIG", "sqlgate.yml")
        .env("SQLGATE_BASELINE_BRANCH", branch)
        .env("GITHUB_REF_NAME", "main")
        .env("GITHUB_SHA", &sha)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap()
}

#[test]
fn committing_the_baseline_to_a_protected_branch_fails_the_job() {
    let (_dir, origin, work) = repository(true);
    let before = git(&origin, &["rev-parse", "main"]);
    let job = baseline_job(&work, "");
    let out = text(&job);
    assert_ne!(job.status.code(), Some(0), "{out}");
    common::assert_contains(
        &out,
        &[
            "the push of the baseline to main was refused",
            "main is protected",
            "nothing was stored",
        ],
    );
    assert_eq!(git(&origin, &["rev-parse", "main"]), before);
}

#[test]
fn an_unreachable_origin_fails_the_job_in_both_modes() {
    let (_dir, origin, work) = repository(false);
    std::fs::remove_dir_all(&origin).unwrap();
    let start = repo::head(&work);
    for branch in ["", "sqlgate-baseline"] {
        let job = baseline_job(&work, branch);
        let out = text(&job);
        assert_ne!(job.status.code(), Some(0), "{branch}: {out}");
        assert!(out.contains("sqlgate: error:"), "{branch}: {out}");
        git(&work, &["reset", "-q", "--hard", &start]);
    }
}

#[test]
fn an_unprotected_branch_gets_the_baseline_commit() {
    let (_dir, origin, work) = repository(false);
    let job = baseline_job(&work, "");
    common::assert_exit(&job, 0);
    let stored = git(&origin, &["show", "main:baseline.json"]);
    common::assert_contains(&stored, &["\"sqlgate_version\""]);
}

#[test]
fn the_baseline_branch_stores_under_protection_and_pull_requests_read_it_back() {
    let (_dir, origin, work) = repository(true);
    let original = repo::head(&work);
    let job = baseline_job(&work, "sqlgate-baseline");
    common::assert_exit(&job, 0);
    let first = git(&origin, &["rev-parse", "sqlgate-baseline"]);
    let files = git(
        &origin,
        &["ls-tree", "-r", "--name-only", "sqlgate-baseline"],
    );
    assert_eq!(files, "baseline.json");
    // A second merge appends to the branch's history, never rewrites it.
    std::fs::remove_file(work.join("baseline.json")).unwrap();
    git(
        &work,
        &["commit", "-q", "--allow-empty", "-m", "merged a PR"],
    );
    let merged = repo::head(&work);
    let job = baseline_job(&work, "sqlgate-baseline");
    common::assert_exit(&job, 0);
    assert_eq!(
        git(&origin, &["rev-parse", "sqlgate-baseline~1"]),
        first,
        "the branch keeps its history"
    );
    let newest = git(&origin, &["show", "sqlgate-baseline:baseline.json"]);
    common::assert_contains(&newest, &[&merged]);
    // A pull request (its base: the merge) is compared with that baseline.
    std::fs::remove_file(work.join("baseline.json")).unwrap();
    git(&work, &["fetch", "-q", "origin"]);
    git(&work, &["checkout", "-qb", "pr"]);
    let judge_on = |base: &str| {
        common::sqlgate_command(
            &[
                &repo::EVAL[..],
                &[
                    "--trusted-base",
                    base,
                    "--baseline-ref",
                    "origin/sqlgate-baseline",
                ],
            ]
            .concat(),
        )
        .current_dir(&work)
        .env_remove("GITHUB_SHA")
        .output()
        .unwrap()
    };
    let unchanged = judge_on(&merged);
    common::assert_exit(&unchanged, 0);
    // A pull request on the older base gets the baseline made there, not the newest.
    let stale = judge_on(&original);
    common::assert_exit(&stale, 0);
    git(&work, &["branch", "-q", "-f", "elsewhere", "HEAD"]);
    git(&work, &["checkout", "-q", "--orphan", "unrelated"]);
    git(
        &work,
        &[
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "no baseline was made here",
        ],
    );
    let unrelated = repo::head(&work);
    git(&work, &["checkout", "-q", "-f", "elsewhere"]);
    let none = judge_on(&unrelated);
    common::assert_exit(&none, 2);
    assert!(
        text(&none).contains("none of the 2 newest baselines on `origin/sqlgate-baseline`"),
        "{}",
        text(&none)
    );
    break_predictions(&work, "C3", 30);
    let worse = judge_on(&merged);
    let out = common::exited(&worse, 1);
    common::assert_contains(&out, &["gate failed: C3 ex 94.9 -> 77.7"]);
}

/// The branch moved on while the baseline was made: that newer push's run stores it, so this
/// one passes without storing; rewritten away from the measured commit, it fails.
#[test]
fn a_branch_that_moved_on_passes_only_when_it_descends_from_the_measured_commit() {
    let (dir, origin, work) = repository(false);
    let other = dir.path().join("other");
    git(
        dir.path(),
        &[
            "clone",
            "-q",
            origin.to_str().unwrap(),
            other.to_str().unwrap(),
        ],
    );
    git(
        &other,
        &["commit", "-q", "--allow-empty", "-m", "the next merge"],
    );
    git(&other, &["push", "-q", "origin", "main"]);
    let job = baseline_job(&work, "");
    let out = common::exited(&job, 0);
    common::assert_contains(&out, &["moved on to"]);
    git(&other, &["checkout", "-q", "--orphan", "rewritten"]);
    git(
        &other,
        &["commit", "-q", "--allow-empty", "-m", "history rewritten"],
    );
    git(
        &other,
        &["push", "-q", "--force", "origin", "rewritten:main"],
    );
    let job = baseline_job(&work, "");
    let out = text(&job);
    assert_ne!(job.status.code(), Some(0), "{out}");
    common::assert_contains(&out, &["nothing was stored"]);
}
