//! A gate that cannot be fooled or skipped, through the binary: it fails closed when it measured
//! nothing, refuses ambiguous Action inputs, and in a pull-request run reads its config, template
//! and baseline from the base commit, so a PR that commits its own baseline still fails on its
//! regressions.

use crate::common;

use common::{break_predictions, git};

use std::path::{Path, PathBuf};
use std::process::Output;

/// A copy of the bundled example (four Spider databases, two systems) in a fresh folder.
fn example_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/spider-mini");
    common::copy_tree(&source, dir.path());
    dir
}

/// `sqlgate ARGS` in `dir`, with no GitHub variables but those given.
fn sqlgate_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = common::sqlgate_command(args);
    command.current_dir(dir).env_remove("GITHUB_SHA");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().unwrap()
}

/// `sqlgate eval` of the example in `root`, trusting the config, template and baseline of `base`.
fn eval_with_base(root: &Path, base: &str) -> Output {
    sqlgate_in(
        root,
        &[
            "eval",
            "--config",
            "sqlgate.yml",
            "--comment",
            "never",
            "--trusted-base",
            base,
        ],
        &[],
    )
}

fn text(output: &Output) -> String {
    format!(
        "exit {:?}\n{}\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A repository whose base commit holds a baseline made on it, and whose head commit (the pull
/// request) makes C3 worse and overwrites the baseline with one made on the PR branch.
fn repository_with_forged_baseline() -> (tempfile::TempDir, String) {
    let dir = example_copy();
    let root = dir.path();
    std::fs::remove_file(root.join("baseline.json")).unwrap();
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "example"]);
    let made = sqlgate_in(
        root,
        &["baseline", "update", "--config", "sqlgate.yml"],
        &[],
    );
    assert!(made.status.success(), "{}", text(&made));
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "baseline"]);
    let base = git(root, &["rev-parse", "HEAD"]);
    git(root, &["checkout", "-qb", "pr"]);
    break_predictions(root, "C3", 30);
    let forged = sqlgate_in(
        root,
        &["baseline", "update", "--config", "sqlgate.yml"],
        &[],
    );
    assert!(forged.status.success(), "{}", text(&forged));
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
    let untrusted = sqlgate_in(
        root,
        &["eval", "--config", "sqlgate.yml", "--comment", "never"],
        &[],
    );
    assert_eq!(
        untrusted.status.code(),
        Some(0),
        "without a trusted base the forged baseline hides the regression: {}",
        text(&untrusted)
    );
    let trusted = eval_with_base(root, &base);
    let out = text(&trusted);
    assert_eq!(trusted.status.code(), Some(1), "{out}");
    assert!(
        out.contains("gate failed: C3 ex 94.9 -> 77.7") && out.contains("C3: ex on all dropped"),
        "{out}"
    );
    assert!(
        out.contains("this pull request changes the baseline")
            && out.contains("baseline.json; the gate used the base commit's version"),
        "{out}"
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
    let out = text(&action);
    assert_eq!(action.status.code(), Some(1), "{out}");
    assert!(out.contains("read from the base commit"), "{out}");
}

#[test]
fn dataset_changes_in_a_pull_request_are_refused() {
    let (dir, base) = repository_with_forged_baseline();
    let root = dir.path();
    let gold = root.join("dev_gold.sql");
    let changed = std::fs::read_to_string(&gold)
        .unwrap()
        .replacen("SELECT", "select", 1);
    std::fs::write(&gold, changed).unwrap();
    let run = eval_with_base(root, &base);
    let out = text(&run);
    assert_eq!(run.status.code(), Some(2), "{out}");
    assert!(
        out.contains("changes dataset files (dev_gold.sql)"),
        "{out}"
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
    let elsewhere = git(root, &["rev-parse", "HEAD"]);
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
    let base = git(root, &["rev-parse", "HEAD"]);
    git(root, &["checkout", "-qb", "pr2"]);
    let run = eval_with_base(root, &base);
    let out = text(&run);
    assert_eq!(run.status.code(), Some(2), "{out}");
    assert!(
        out.contains("is not an ancestor of the base commit"),
        "{out}"
    );
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
    let dir = example_copy();
    edit_config(
        dir.path(),
        "baseline: { path: baseline.json }",
        "baseline: { path: basline.json }",
    );
    let typo = sqlgate_in(
        dir.path(),
        &["eval", "--config", "sqlgate.yml", "--comment", "never"],
        &[],
    );
    let out = text(&typo);
    assert_eq!(typo.status.code(), Some(2), "{out}");
    assert!(
        out.contains("`baseline.path`") && out.contains("basline.json does not exist"),
        "{out}"
    );
    edit_config(
        dir.path(),
        "baseline: { path: basline.json }",
        "baseline: { path: basline.json, required: false }",
    );
    let first = sqlgate_in(
        dir.path(),
        &["eval", "--config", "sqlgate.yml", "--comment", "never"],
        &[],
    );
    let out = text(&first);
    assert_eq!(first.status.code(), Some(0), "{out}");
    assert!(out.contains("first run: no baseline at"), "{out}");
}

#[test]
fn an_unavailable_gated_metric_fails_the_gate() {
    let dir = example_copy();
    std::fs::remove_file(dir.path().join("baseline.json")).unwrap();
    edit_config(dir.path(), "metrics: [ex, esm]", "metrics: [ex, esm, qas]");
    edit_config(dir.path(), "  metric: ex\n", "  metric: qas\n");
    let made = sqlgate_in(
        dir.path(),
        &["baseline", "update", "--config", "sqlgate.yml"],
        &[("GITHUB_SHA", "0123456789abcdef0123")],
    );
    assert!(made.status.success(), "{}", text(&made));
    let run = sqlgate_in(
        dir.path(),
        &["eval", "--config", "sqlgate.yml", "--comment", "never"],
        &[],
    );
    let out = text(&run);
    assert_eq!(run.status.code(), Some(1), "{out}");
    assert!(out.contains("qas is unavailable on 157 items"), "{out}");
}

#[test]
fn action_booleans_are_true_or_false_only() {
    let dir = example_copy();
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
        assert!(
            out.contains("`fail-on-regression` must be `true` or `false`"),
            "{out}"
        );
    }
    let run = sqlgate_in(
        dir.path(),
        &["action"],
        &[
            ("INPUT_FAIL-ON-REGRESSION", "False"),
            ("INPUT_COMMENT", "FALSE"),
        ],
    );
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
}

#[test]
fn a_gated_cell_without_scored_items_fails_the_gate() {
    let dir = example_copy();
    edit_config(
        dir.path(),
        "per_difficulty: { extra: 2.0 }",
        "per_difficulty: { hardest: 2.0 }",
    );
    let run = sqlgate_in(
        dir.path(),
        &["eval", "--config", "sqlgate.yml", "--comment", "never"],
        &[],
    );
    let out = text(&run);
    assert_eq!(run.status.code(), Some(1), "{out}");
    assert!(
        out.contains("no item of cell `hardest` was scored"),
        "{out}"
    );
}

#[test]
fn the_action_fails_closed_too() {
    let dir = example_copy();
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
    let out = text(&run);
    assert_eq!(run.status.code(), Some(2), "{out}");
    assert!(out.contains("basline.json does not exist"), "{out}");
}

/// A repository whose base commit reads every file of `predictions/` through a glob and holds a
/// baseline made on it, checked out on a fresh pull-request branch; returns it and the base.
fn repository_with_a_glob() -> (tempfile::TempDir, String) {
    let dir = example_copy();
    let root = dir.path();
    std::fs::remove_file(root.join("baseline.json")).unwrap();
    edit_config(
        root,
        "  - { name: C3, path: predictions/C3.txt }\n  - { name: RESDSQL, path: predictions/RESDSQL.txt }\n",
        "  - { path: \"predictions/*.txt\" }\n",
    );
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "example with a glob"]);
    let made = sqlgate_in(
        root,
        &["baseline", "update", "--config", "sqlgate.yml"],
        &[],
    );
    assert!(made.status.success(), "{}", text(&made));
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "its baseline"]);
    let base = git(root, &["rev-parse", "HEAD"]);
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
    let run = eval_with_base(root, &base);
    let out = text(&run);
    assert_eq!(run.status.code(), Some(1), "{out}");
    assert!(
        out.contains("RESDSQL-v2: the baseline has no system `RESDSQL-v2` to compare it with"),
        "{out}"
    );
    assert!(
        out.contains("RESDSQL: this baseline system was not measured"),
        "{out}"
    );
    assert!(!out.contains("not gated"), "{out}");
    edit_config(root, "  metric: ex\n", "  metric: ex\n  against: RESDSQL\n");
    git(
        root,
        &["commit", "-qam", "base: compare every system with RESDSQL"],
    );
    let against_base = git(root, &["rev-parse", "HEAD"]);
    let run = eval_with_base(root, &against_base);
    let out = text(&run);
    assert_eq!(run.status.code(), Some(1), "{out}");
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
    let run = eval_with_base(root, &base);
    let out = text(&run);
    assert_eq!(run.status.code(), Some(1), "{out}");
    assert!(
        out.contains("C3: this baseline system was not measured"),
        "{out}"
    );
    let untouched = git(root, &["checkout", "-q", &base]);
    assert!(untouched.is_empty());
    let honest = eval_with_base(root, &base);
    assert_eq!(honest.status.code(), Some(0), "{}", text(&honest));
}
