//! Red team round 13 (issue 44): pull requests run as GitHub Actions runs `sqlgate action` on a
//! `pull_request` event, each turning a regressing change green if it can. Every test asserts
//! the SECURE outcome, so a failing test is a win for the attacker, and each runs its control
//! (the same regressing pull request without the lever), which must exit 1.

use super::redteam9::{control_fails, not_passed};

/// `git ARGS` in `root` with `input` on its standard input; its standard output, trimmed.
fn git_with_input(root: &std::path::Path, args: &[&str], input: &[u8]) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "git {args:?} failed");
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

/// The baseline read back from a baseline ref (class 2). With the Action's `baseline-ref`
/// (`origin/sqlgate-baseline`, the branch `sqlgate baseline store --branch` appends to), the
/// baseline is the newest version on that ref "made at an ancestor of the base": the ref is
/// resolved in the checkout, and "made at" is the `commit` the baseline file itself records. A
/// step of the pull request's workflow that runs before the gate owns the checkout's `.git`, so
/// it can point the remote-tracking ref at a commit of its own (no object forged: every blob
/// hashes to its id) holding a baseline that `sqlgate baseline update` recorded on the base
/// commit with the pull request's wrong predictions.
mod baseline_ref {
    use super::super::redteam11::replaced_base::{regressed_baseline, WRONG};
    use super::git_with_input;
    use crate::common;
    use common::repo::{self, commit_all, sqlgate_in, EVAL};
    use common::{git, rewrite_predictions, text};
    use std::path::Path;

    /// The remote-tracking ref the base's workflow reads the baseline from.
    const REF: &str = "refs/remotes/origin/sqlgate-baseline";

    /// A commit holding only `baseline.json` with `content` (as `sqlgate baseline store
    /// --branch` makes one), on top of `parent` when given; its id.
    fn baseline_commit(root: &Path, content: &str, parent: Option<&str>) -> String {
        let blob = git_with_input(root, &["hash-object", "-w", "--stdin"], content.as_bytes());
        let tree = git_with_input(
            root,
            &["mktree"],
            format!("100644 blob {blob}\tbaseline.json\n").as_bytes(),
        );
        let mut args = vec!["commit-tree", tree.as_str(), "-m", "sqlgate baseline"];
        if let Some(parent) = parent {
            args.extend(["-p", parent]);
        }
        git(root, &args)
    }

    /// The pull request judged as its job judges it, the baseline read back from [`REF`].
    fn judged(root: &Path, base: &str) -> std::process::Output {
        let args = [
            &EVAL[..],
            &[
                "--trusted-base",
                base,
                "--baseline-ref",
                "origin/sqlgate-baseline",
            ],
        ]
        .concat();
        sqlgate_in(root, &args, &[])
    }

    /// The lever: a second commit on the baseline branch, holding the regressed baseline (made
    /// on the base commit, so "made at an ancestor of the base"), and the checkout's
    /// remote-tracking ref moved to it (a fast-forward: the branch keeps its history).
    #[test]
    #[ignore = "a documented limit: code from the pull request running in the gate's job before \
                sqlgate chooses what it trusts (SECURITY.md, \"What the workflow must do\")"]
    fn a_baseline_ref_moved_by_a_step_does_not_hide_the_regression() {
        let dir = repo::example(true);
        let root = dir.path();
        let base = repo::gated_main(root);
        let genuine = std::fs::read_to_string(root.join("baseline.json")).unwrap();
        let stored = baseline_commit(root, &genuine, None);
        git(root, &["update-ref", REF, &stored]);
        let regressed = regressed_baseline(root);
        git(root, &["checkout", "-qb", "pr"]);
        rewrite_predictions(root, "C3", |i| i < 20, WRONG);
        commit_all(root, "wrong predictions");
        let control = judged(root, &base);
        eprintln!("control: {}", text(&control));
        super::control_fails(&control);
        let forged = baseline_commit(root, &regressed, Some(&stored));
        git(root, &["update-ref", REF, &forged]);
        let judged = judged(root, &base);
        eprintln!("{}", text(&judged));
        super::not_passed(&judged);
    }
}

/// git's own environment inherited from the job (class 1): a step can add variables to every
/// later step of the job through `$GITHUB_ENV`, and sqlgate runs git with the environment it got.
/// `GIT_DIR` and `GIT_WORK_TREE` name the checkout's repository but a pristine copy of the base's
/// working tree, so `git diff <base>` and `git ls-files --others` list no change while sqlgate
/// reads the real working tree, whose gold the pull request rewrote for the items it regresses.
mod git_environment {
    use super::super::redteam11::replaced_base::WRONG;
    use crate::common;
    use common::repo::{self, commit_all, judged, sqlgate_in, EVAL};
    use common::{copy_tree, git, rewrite_predictions, text};

    /// The rewritten gold of the regressed items: no row, as the wrong prediction.
    const EMPTY: &str = "SELECT name FROM singer WHERE singer_id = -1";

    #[test]
    fn a_work_tree_named_in_the_job_environment_hides_no_gold_change() {
        let dir = repo::example(true);
        let root = dir.path();
        let base = repo::gated_main(root);
        git(root, &["checkout", "-qb", "pr"]);
        rewrite_predictions(root, "C3", |i| i < 20, WRONG);
        commit_all(root, "wrong predictions");
        super::control_fails(&judged(root, &base, &[]));
        let pristine = tempfile::tempdir().unwrap();
        for entry in std::fs::read_dir(root).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap();
            if name == ".git" {
                continue;
            }
            let target = pristine.path().join(name);
            if path.is_dir() {
                copy_tree(&path, &target);
            } else {
                std::fs::copy(&path, &target).unwrap();
            }
        }
        let gold = root.join("dev_gold.sql");
        let rewritten: String = (std::fs::read_to_string(&gold).unwrap().lines())
            .enumerate()
            .map(|(i, line)| match (i < 20, line.split_once('\t')) {
                (true, Some((_, db_id))) => format!("{EMPTY}\t{db_id}\n"),
                _ => format!("{line}\n"),
            })
            .collect();
        std::fs::write(&gold, rewritten).unwrap();
        let git_dir = root.join(".git");
        let env = [
            ("GIT_DIR", git_dir.to_str().unwrap()),
            ("GIT_WORK_TREE", pristine.path().to_str().unwrap()),
        ];
        let args = [&EVAL[..], &["--trusted-base", &base]].concat();
        let judged = sqlgate_in(root, &args, &env);
        eprintln!("{}", text(&judged));
        super::not_passed(&judged);
    }
}

/// The `git` sqlgate runs, found on the job's `PATH` (classes 1 and 2): a step can put a folder
/// first on `PATH` for every later step of the job through `$GITHUB_PATH`, and sqlgate starts
/// `git` by name. The step's `git` here only drops the environment sqlgate sets
/// (`GIT_NO_REPLACE_OBJECTS`, `GIT_GRAFT_FILE`) before running the real one, and the step
/// replaces the base commit by a genuine commit object whose tree holds the loosened gate: every
/// object read hashes to its id, so the blob checks of round 12 pass.
mod git_on_path {
    use super::super::redteam11::replaced_base::{loosened, WRONG};
    use super::git_with_input;
    use crate::common;
    use common::repo::{self, commit_all, judged, sqlgate_in, EVAL};
    use common::{git, rewrite_predictions, text};
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    /// A tree like `tree` but with its entry `name` naming the blob `blob`; its id.
    fn tree_with(root: &Path, tree: &str, name: &str, blob: &str) -> String {
        let listed = git(root, &["ls-tree", tree]);
        let edited: String = (listed.lines())
            .map(|line| match line.split_once('\t') {
                Some((meta, entry)) if entry == name => {
                    let mode = meta.split_whitespace().next().unwrap();
                    format!("{mode} blob {blob}\t{entry}\n")
                }
                _ => format!("{line}\n"),
            })
            .collect();
        git_with_input(root, &["mktree"], edited.as_bytes())
    }

    /// The base commit replaced (`git replace`) by one whose tree holds the loosened config.
    fn replace_base(root: &Path, base: &str) {
        let config = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
        let blob = git_with_input(
            root,
            &["hash-object", "-w", "--stdin"],
            loosened(&config).as_bytes(),
        );
        let tree = git(root, &["rev-parse", &format!("{base}^{{tree}}")]);
        let new_tree = tree_with(root, &tree, "sqlgate.yml", &blob);
        let commit = git(root, &["cat-file", "commit", base]);
        let edited = commit.replacen(&format!("tree {tree}"), &format!("tree {new_tree}"), 1);
        let args = ["hash-object", "-t", "commit", "-w", "--stdin"];
        let forged = git_with_input(root, &args, edited.as_bytes());
        git(root, &["replace", base, &forged]);
    }

    /// A folder holding a `git` that runs the real one without sqlgate's pins.
    fn step_git(folder: &Path) {
        let real = String::from_utf8(
            std::process::Command::new("sh")
                .args(["-c", "command -v git"])
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap();
        let script = format!(
            "#!/bin/sh\nunset GIT_NO_REPLACE_OBJECTS GIT_GRAFT_FILE\nexec {} \"$@\"\n",
            real.trim()
        );
        let path = folder.join("git");
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn a_git_first_on_the_path_does_not_loosen_the_gate() {
        let dir = repo::example(true);
        let root = dir.path();
        let base = repo::gated_main(root);
        git(root, &["checkout", "-qb", "pr"]);
        rewrite_predictions(root, "C3", |i| i < 20, WRONG);
        commit_all(root, "wrong predictions");
        super::control_fails(&judged(root, &base, &[]));
        replace_base(root, &base);
        // Without the step's `git`, sqlgate ignores the replace ref: still exit 1.
        super::control_fails(&judged(root, &base, &[]));
        let folder = tempfile::tempdir().unwrap();
        step_git(folder.path());
        let path = format!(
            "{}:{}",
            folder.path().display(),
            std::env::var("PATH").unwrap()
        );
        let args = [&EVAL[..], &["--trusted-base", &base]].concat();
        let judged = sqlgate_in(root, &args, &[("PATH", &path)]);
        eprintln!("{}", text(&judged));
        super::not_passed(&judged);
    }
}

/// The `unshare` the test cases of a state-changing dataset run under, found on the job's `PATH`
/// (class 1, the benchmark's test cases): a step can put a folder first on `PATH` through
/// `$GITHUB_PATH`, and sqlgate looks `unshare` up there (`livesql::python::network_isolation`).
/// The step's `unshare` answers the isolation probe and, in place of the benchmark's test
/// cases, reports every test as passed over sqlgate's runner protocol.
mod runner_on_path {
    use crate::common;
    use common::repo::{self, commit_all, judged, sqlgate_in, EVAL};
    use common::{git, text};
    use serde_json::json;
    use std::os::unix::fs::PermissionsExt;
    use std::path::{Path, PathBuf};

    /// The livesql example of the repository.
    fn example_folder() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/livesql-mini")
    }

    /// A folder holding the step's `unshare`.
    fn step_unshare(folder: &Path) {
        let script = "#!/bin/sh\nwhile [ \"$1\" != \"--\" ]; do shift; done; shift\n\
                      [ \"$1\" = true ] && exit 0\n\
                      exec /usr/bin/python3 -c 'import sys, json\n\
for line in sys.stdin:\n    job = json.loads(line)\n    n = len(job[\"tests\"]) or 1\n    \
print(json.dumps({\"op\": \"done\", \"results\": [{\"passed\": True, \"message\": \"\"}] * n}), flush=True)'\n";
        let path = folder.join("unshare");
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// Gives `instance_id` the predicted `statements` in the example's prediction file in `root`.
    fn predict(root: &Path, instance_id: &str, statements: &[&str]) {
        let path = root.join("predictions/model.jsonl");
        let lines: Vec<String> = (std::fs::read_to_string(&path).unwrap().lines())
            .map(|line| match line.contains(&format!("\"{instance_id}\"")) {
                true => json!({"instance_id": instance_id, "pred_sqls": statements}).to_string(),
                false => line.to_string(),
            })
            .collect();
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    }

    #[test]
    fn an_unshare_first_on_the_path_does_not_pass_a_broken_management_update() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        common::copy_tree(&example_folder(), root);
        std::fs::remove_file(root.join("baseline.json")).unwrap();
        let base = repo::gated_main(root);
        git(root, &["checkout", "-qb", "pr"]);
        predict(root, "lsq_081", &["UPDATE students SET grade = grade + 1"]);
        commit_all(root, "the pull request");
        super::control_fails(&judged(root, &base, &[]));
        let folder = tempfile::tempdir().unwrap();
        step_unshare(folder.path());
        let path = format!(
            "{}:{}",
            folder.path().display(),
            std::env::var("PATH").unwrap()
        );
        let args = [&EVAL[..], &["--trusted-base", &base]].concat();
        let judged = sqlgate_in(root, &args, &[("PATH", &path)]);
        eprintln!("{}", text(&judged));
        super::not_passed(&judged);
    }
}

/// A row's physical position read through `currtid2` (class 3): the catalog check refuses the
/// system column `ctid`, `TABLESAMPLE` and the `tid` type where it is named, since where a row
/// lies is not what the digests record (an `UPDATE t SET c = c` moves every row, keeping the
/// rows and their scan order). PostgreSQL's `currtid2(text, tid)` names the table in a string
/// and takes the position as an untyped literal: it follows a row's update chain from a given
/// position to its newest version. The preparation runs `UPDATE customers SET name = name`
/// (a HOT update: the rows move from `(0,1)`, `(0,2)` to `(0,3)`, `(0,4)` of the same page, in
/// the same order); the wrong prediction for item 5 (`SELECT count(*) FROM customers`: 2)
/// counts the customers only when the first row has moved (0 otherwise).
mod row_position {
    use crate::common;
    use common::servers;
    use common::trust_flow::*;

    /// The pull request's wrong prediction for item 5.
    const WRONG: &str = "SELECT count(*) FROM customers \
                         WHERE currtid2('customers', '(0,1)') = '(0,3)'";

    /// The gate's output on the pull request predicting item 5 as [`WRONG`], the rows moved just
    /// before the gate when `lever`.
    fn judge(database: &str, lever: bool) -> std::process::Output {
        let server = servers::postgres();
        let dir = recorded_repository(server, database, &GOLD);
        let root = dir.path();
        let mut predictions = GOLD.to_vec();
        predictions[5] = WRONG;
        let base = hostile_predictions(root, &predictions);
        let run = Run::pull_request(server, database, base);
        run.workflow_with(root, || {
            if lever {
                server.admin_sql(database, "UPDATE customers SET name = name");
            }
        })
    }

    #[test]
    fn rows_moved_by_the_preparation_and_probed_by_currtid2_do_not_pass() {
        super::control_fails(&judge("rt13_tid_c", false));
        let judged = judge("rt13_tid_l", true);
        eprintln!("{}", text(&judged));
        super::not_passed(&judged);
    }
}
