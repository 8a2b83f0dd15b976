//! A gate that cannot be fooled or skipped, through the binary: it fails closed when it measured
//! nothing, refuses ambiguous Action inputs, and in a pull-request run reads its config, template
//! and baseline from the base commit, so a PR that commits its own baseline still fails on its
//! regressions.

use crate::common;
use common::text;

use common::repo::{self, judged, sqlgate_in, EVAL};
use common::{break_predictions, git};

use std::path::{Path, PathBuf};

/// A repository whose base commit holds a baseline made on it, and whose head commit (the pull
/// request) makes C3 worse and overwrites the baseline with one made on the PR branch.
fn repository_with_forged_baseline() -> (tempfile::TempDir, String) {
    let dir = repo::example(false);
    let root = dir.path();
    let base = repo::gated_main(root);
    git(root, &["checkout", "-qb", "pr"]);
    break_predictions(root, "C3", 30);
    repo::update_baseline(root);
    git(
        root,
        &[
            "commit",
            "-qam",
            "worse predictions, and a baseline that agrees",
        ],
    );
    (dir, base)
}

#[test]
fn a_pull_request_cannot_bring_its_own_baseline() {
    let (dir, base) = repository_with_forged_baseline();
    let root = dir.path();
    let untrusted = sqlgate_in(root, &EVAL, &[]);
    assert_eq!(
        untrusted.status.code(),
        Some(0),
        "without a trusted base the forged baseline hides the regression: {}",
        text(&untrusted)
    );
    let trusted = judged(root, &base, &[]);
    let out = common::exited(&trusted, 1);
    common::assert_contains(
        &out,
        &["gate failed: C3 ex 94.9 -> 77.7", "C3: ex on all dropped"],
    );
    common::assert_contains(
        &out,
        &[
            "this pull request changes the baseline",
            "baseline.json; the gate used the base commit's version",
        ],
    );
}

#[test]
fn the_base_of_a_pull_request_event_is_trusted_in_actions() {
    let (dir, base) = repository_with_forged_baseline();
    let root = dir.path();
    let event = root.join("event.json");
    std::fs::write(
        &event,
        format!(r#"{{"pull_request": {{"number": 7, "base": {{"sha": "{base}"}}}}}}"#),
    )
    .unwrap();
    let action = sqlgate_in(
        root,
        &["action"],
        &[
            ("GITHUB_EVENT_NAME", "pull_request"),
            ("GITHUB_EVENT_PATH", event.to_str().unwrap()),
            ("GITHUB_WORKSPACE", root.to_str().unwrap()),
            ("INPUT_COMMENT", "false"),
        ],
    );
    let out = common::exited(&action, 1);
    common::assert_contains(&out, &["read from the base commit"]);
}

#[test]
fn dataset_changes_in_a_pull_request_are_scored_on_the_base_dataset() {
    let (dir, base) = repository_with_forged_baseline();
    let root = dir.path();
    let gold = root.join("dev_gold.sql");
    let changed = std::fs::read_to_string(&gold)
        .unwrap()
        .replacen("SELECT", "select", 1);
    std::fs::write(&gold, changed).unwrap();
    let run = judged(root, &base, &[]);
    let out = common::exited(&run, 1);
    common::assert_contains(
        &out,
        &[
            "gate failed: C3 ex 94.9 -> 77.7",
            "this pull request changes the benchmark (dev_gold.sql)",
        ],
    );
}

#[test]
fn a_baseline_made_off_the_base_branch_is_refused() {
    let (dir, _) = repository_with_forged_baseline();
    let root = dir.path();
    git(root, &["checkout", "-qb", "side", "main"]);
    git(
        root,
        &["commit", "-q", "--allow-empty", "-m", "never merged"],
    );
    let elsewhere = repo::head(root);
    git(root, &["checkout", "-q", "main"]);
    let baseline = root.join("baseline.json");
    let mut document: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&baseline).unwrap()).unwrap();
    document["commit"] = serde_json::json!(elsewhere);
    std::fs::write(&baseline, document.to_string()).unwrap();
    git(
        root,
        &[
            "commit",
            "-qam",
            "a baseline made on a branch main never merged",
        ],
    );
    let base = repo::head(root);
    git(root, &["checkout", "-qb", "pr2"]);
    let run = judged(root, &base, &[]);
    let out = common::exited(&run, 2);
    common::assert_contains(&out, &["is not an ancestor of the base commit"]);
}

/// The example's config with `replace` swapped for `with`.
fn edit_config(dir: &Path, replace: &str, with: &str) -> PathBuf {
    let path = dir.join("sqlgate.yml");
    let config = std::fs::read_to_string(&path).unwrap();
    assert!(config.contains(replace), "{replace}");
    std::fs::write(&path, config.replace(replace, with)).unwrap();
    path
}

#[test]
fn a_missing_baseline_fails_unless_a_first_run_is_declared() {
    let dir = repo::example(true);
    edit_config(
        dir.path(),
        "baseline: { path: baseline.json }",
        "baseline: { path: basline.json }",
    );
    let typo = sqlgate_in(dir.path(), &EVAL, &[]);
    let out = common::exited(&typo, 2);
    common::assert_contains(&out, &["`baseline.path`", "basline.json does not exist"]);
    edit_config(
        dir.path(),
        "baseline: { path: basline.json }",
        "baseline: { path: basline.json, required: false }",
    );
    let first = sqlgate_in(dir.path(), &EVAL, &[]);
    let out = common::exited(&first, 0);
    common::assert_contains(&out, &["first run: no baseline at"]);
}

#[test]
fn an_unavailable_gated_metric_fails_the_gate() {
    let dir = repo::example(false);
    edit_config(dir.path(), "metrics: [ex, esm]", "metrics: [ex, esm, qas]");
    edit_config(dir.path(), "  metric: ex\n", "  metric: qas\n");
    let made = sqlgate_in(
        dir.path(),
        &["baseline", "update", "--config", "sqlgate.yml"],
        &[("GITHUB_SHA", "0123456789abcdef0123")],
    );
    common::assert_exit(&made, 0);
    let run = sqlgate_in(dir.path(), &EVAL, &[]);
    let out = common::exited(&run, 1);
    common::assert_contains(&out, &["qas is unavailable on 157 items"]);
}

#[test]
fn action_booleans_are_true_or_false_only() {
    let dir = repo::example(true);
    for value in ["yes", "1", "ture"] {
        let run = sqlgate_in(
            dir.path(),
            &["action"],
            &[
                ("INPUT_FAIL-ON-REGRESSION", value),
                ("INPUT_COMMENT", "false"),
            ],
        );
        let out = text(&run);
        assert_eq!(run.status.code(), Some(2), "{value}: {out}");
        common::assert_contains(&out, &["`fail-on-regression` must be `true` or `false`"]);
    }
    let run = sqlgate_in(
        dir.path(),
        &["action"],
        &[
            ("INPUT_FAIL-ON-REGRESSION", "False"),
            ("INPUT_COMMENT", "FALSE"),
        ],
    );
    common::assert_exit(&run, 0);
}

#[test]
fn a_gated_cell_without_scored_items_fails_the_gate() {
    let dir = repo::example(true);
    edit_config(
        dir.path(),
        "per_difficulty: { extra: 2.0 }",
        "per_difficulty: { hardest: 2.0 }",
    );
    let run = sqlgate_in(dir.path(), &EVAL, &[]);
    let out = common::exited(&run, 1);
    common::assert_contains(&out, &["no item of cell `hardest` was scored"]);
}

#[test]
fn the_action_fails_closed_too() {
    let dir = repo::example(true);
    edit_config(
        dir.path(),
        "baseline: { path: baseline.json }",
        "baseline: { path: basline.json }",
    );
    let run = sqlgate_in(
        dir.path(),
        &["action"],
        &[("INPUT_CONFIG", "sqlgate.yml"), ("INPUT_COMMENT", "false")],
    );
    let out = common::exited(&run, 2);
    common::assert_contains(&out, &["basline.json does not exist"]);
}

/// A repository whose base commit reads every file of `predictions/` through a glob and holds a
/// baseline made on it, checked out on a fresh pull-request branch; returns it and the base.
fn repository_with_a_glob() -> (tempfile::TempDir, String) {
    let dir = repo::example(false);
    let root = dir.path();
    edit_config(
        root,
        "  - { name: C3, path: predictions/C3.txt }\n  - { name: RESDSQL, path: predictions/RESDSQL.txt }\n",
        "  - { path: \"predictions/*.txt\" }\n",
    );
    repo::init_main(root, "example with a glob");
    let base = repo::commit_baseline(root, "its baseline");
    git(root, &["checkout", "-qb", "pr"]);
    (dir, base)
}

#[test]
fn renaming_a_regressed_system_under_a_glob_fails_the_gate() {
    let (dir, base) = repository_with_a_glob();
    let root = dir.path();
    break_predictions(root, "RESDSQL", 30);
    git(
        root,
        &[
            "mv",
            "predictions/RESDSQL.txt",
            "predictions/RESDSQL-v2.txt",
        ],
    );
    git(
        root,
        &["commit", "-qam", "worse predictions under a new name"],
    );
    let run = judged(root, &base, &[]);
    let out = common::exited(&run, 1);
    common::assert_contains(
        &out,
        &["RESDSQL-v2: the baseline has no system `RESDSQL-v2` to compare it with"],
    );
    common::assert_contains(&out, &["RESDSQL: this baseline system was not measured"]);
    assert!(!out.contains("not gated"), "{out}");
    edit_config(root, "  metric: ex\n", "  metric: ex\n  against: RESDSQL\n");
    git(
        root,
        &["commit", "-qam", "base: compare every system with RESDSQL"],
    );
    let against_base = repo::head(root);
    let run = judged(root, &against_base, &[]);
    let out = common::exited(&run, 1);
    assert!(
        out.contains("RESDSQL-v2: ex on all dropped 18.5 points (94.9 -> 76.4"),
        "the new name is compared with `gate.against`: {out}"
    );
}

#[test]
fn deleting_a_gated_system_under_a_glob_fails_the_gate() {
    let (dir, base) = repository_with_a_glob();
    let root = dir.path();
    git(root, &["rm", "-q", "predictions/C3.txt"]);
    git(root, &["commit", "-qm", "drop C3"]);
    let run = judged(root, &base, &[]);
    let out = common::exited(&run, 1);
    common::assert_contains(&out, &["C3: this baseline system was not measured"]);
    let untouched = git(root, &["checkout", "-q", &base]);
    assert!(untouched.is_empty());
    let honest = judged(root, &base, &[]);
    common::assert_exit(&honest, 0);
}

/// A pull request whose `sqlgate.yml` is a committed symlink to `target`, on the gated example;
/// returns the checkout and the base commit.
fn config_linked_to(target: &Path) -> (tempfile::TempDir, String) {
    let dir = repo::example(false);
    let root = dir.path();
    let base = repo::gated_main(root);
    git(root, &["checkout", "-qb", "hostile"]);
    std::fs::remove_file(root.join("sqlgate.yml")).unwrap();
    std::os::unix::fs::symlink(target, root.join("sqlgate.yml")).unwrap();
    repo::commit_all(root, "the config is a link");
    (dir, base)
}

/// `sqlgate action` in `root` as a pull-request job of `base` runs it, the Action's `report`
/// input empty, capped at 2 GiB of address space and killed after 60 s.
fn action_in_pull_request(root: &Path, base: &str) -> std::process::Output {
    let event = repo::event(
        root.join(".git/event.json"),
        serde_json::json!({"pull_request": {"number": 1, "base": {"sha": base}}}),
    );
    let mut command = std::process::Command::new("prlimit");
    command.args([
        "--as=2147483648",
        "--",
        "/usr/bin/time",
        "-f",
        "max_rss_kib=%M",
    ]);
    command.args(["timeout", "-s", "KILL", "60"]);
    command.arg(env!("CARGO_BIN_EXE_sqlgate")).arg("action");
    repo::in_pull_request_job(&mut command, &event)
        .current_dir(root)
        .env("GITHUB_EVENT_NAME", "pull_request")
        .env("GITHUB_WORKSPACE", root)
        .env("INPUT_CONFIG", "sqlgate.yml")
        .env("INPUT_COMMENT", "false")
        .env("GITHUB_STEP_SUMMARY", root.join(".git/summary.md"))
        .env("GITHUB_OUTPUT", root.join(".git/outputs"))
        .env_remove("SQLGATE_WORKSPACE")
        .env_remove("GITHUB_TOKEN")
        .env_remove("SQLGATE_GITHUB_TOKEN")
        .output()
        .unwrap()
}

#[test]
fn a_config_linked_out_of_the_workspace_is_refused_unread() {
    let outside = tempfile::tempdir().unwrap();
    let secret = "s3cr3t-runner-password-4417";
    std::fs::write(outside.path().join("vault-token"), format!("{secret}\n")).unwrap();
    let (dir, base) = config_linked_to(&outside.path().join("vault-token"));
    let root = dir.path();
    let output = action_in_pull_request(root, &base);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(2), "{all}");
    let summary = std::fs::read_to_string(root.join(".git/summary.md")).unwrap_or_default();
    assert!(
        !all.contains(secret) && !summary.contains(secret),
        "{all}\n{summary}"
    );
    assert!(all.contains("sqlgate.yml") && all.contains("link"), "{all}");
    // The same through `eval`.
    let judged = judged(root, &base, &[]);
    let all = text(&judged);
    assert_eq!(judged.status.code(), Some(2), "{all}");
    assert!(!all.contains(secret), "{all}");
}

#[test]
fn a_config_linked_to_an_endless_file_stops_the_run_without_reading_it() {
    let (dir, base) = config_linked_to(Path::new("/dev/zero"));
    let started = std::time::Instant::now();
    let output = action_in_pull_request(dir.path(), &base);
    let all = text(&output);
    assert_eq!(
        output.status.code(),
        Some(2),
        "after {:?}: {all}",
        started.elapsed()
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{all}"
    );
    let peak_kib: u64 = (all.split("max_rss_kib=").nth(1))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .expect("/usr/bin/time prints the peak");
    assert!(
        peak_kib < 256 * 1024,
        "the run held {peak_kib} KiB: it read the device"
    );
}

/// Red team round 8: a base config that names its systems by a glob (`predictions/*.txt`, one
/// system per file, CONFIG.md). The pull request breaks RESDSQL (control: exit 1); with the
/// lever it also deletes RESDSQL's file, so the regressed system is simply not in the run. The
/// baseline gates RESDSQL: a system it holds that the run lacks must not pass.
#[test]
fn a_globbed_system_the_pull_request_deletes_does_not_pass() {
    for delete in [false, true] {
        let dir = repo::example(false);
        let root = dir.path();
        let config = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
        let globbed = config.replace(
            "  - { name: C3, path: predictions/C3.txt }\n  - { name: RESDSQL, path: predictions/RESDSQL.txt }",
            "  - { path: \"predictions/*.txt\" }",
        );
        assert_ne!(globbed, config);
        std::fs::write(root.join("sqlgate.yml"), globbed).unwrap();
        let base = repo::gated_main(root);
        git(root, &["checkout", "-qb", "pr"]);
        break_predictions(root, "RESDSQL", 157);
        if delete {
            std::fs::remove_file(root.join("predictions/RESDSQL.txt")).unwrap();
        }
        repo::commit_all(root, "the pull request");
        let judged = judged(root, &base, &[]);
        match delete {
            false => assert_eq!(judged.status.code(), Some(1), "control: {}", text(&judged)),
            true => common::assert_contains(
                &common::exited(&judged, 1),
                &["RESDSQL: this baseline system was not measured"],
            ),
        }
    }
}
