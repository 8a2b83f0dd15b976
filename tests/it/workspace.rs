//! The workspace rule through the binary: a config cannot make sqlgate read a system file, write
//! into `.git` or outside the workspace, replace a file it did not write, walk the file system
//! with a glob, or read a database through a symlink out of its folder or beside a `-wal`.

use crate::common;

use common::sqlgate_command;
use std::path::Path;
use std::process::Output;

/// A workspace with one database, a gold file and a prediction file, inside `root/repo`.
fn workspace(root: &Path) -> std::path::PathBuf {
    let repo = root.join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    common::singer_item(&repo);
    repo
}

/// Runs `eval` on a config made of the base dataset plus `rest`, with the config's folder as
/// the workspace (no `SQLGATE_WORKSPACE`).
fn eval(repo: &Path, rest: &str) -> Output {
    let config = repo.join("sqlgate.yml");
    std::fs::write(
        &config,
        format!("dataset: {{ gold: gold.sql, databases: database, difficulty: none }}\n{rest}"),
    )
    .unwrap();
    common::eval_command(&config, &[])
        .env_remove("SQLGATE_WORKSPACE")
        .env("SECRET_PLANTED", "s3cr3t-value")
        .output()
        .unwrap()
}

fn assert_refused(output: &Output, needles: &[&str]) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "stderr: {stderr}");
    for needle in needles {
        assert!(stderr.contains(needle), "`{needle}` not in: {stderr}");
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(!stdout.contains("s3cr3t") && !stderr.contains("s3cr3t"));
}

/// Each `(config, needles)`: eval with `config` appended is refused (exit 2) naming `needles`.
fn assert_each_refused(repo: &Path, cases: &[(&str, &[&str])]) {
    for (config, needles) in cases {
        assert_refused(&eval(repo, config), needles);
    }
}

#[test]
fn system_files_are_never_read_as_predictions() {
    let dir = tempfile::tempdir().unwrap();
    let repo = workspace(dir.path());
    std::os::unix::fs::symlink("/proc/self/environ", repo.join("env.txt")).unwrap();
    assert_each_refused(
        &repo,
        &[
            (
                "predictions: [{ path: /proc/self/environ, allow_missing: true }]\n",
                &["predictions[0].path", "/proc/self/environ"],
            ),
            (
                "predictions: [{ path: '/**/environ', allow_missing: true }]\n",
                &["predictions[0].path", "outside the workspace"],
            ),
            (
                "predictions: [{ path: env.txt, allow_missing: true }]\n",
                &["predictions[0].path", "env.txt"],
            ),
        ],
    );
}

#[test]
fn outputs_stay_out_of_git_and_inside_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let repo = workspace(dir.path());
    std::fs::write(repo.join(".git/config"), "[core]\n").unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("x"), "keep").unwrap();
    const PRED: &str = "predictions: [{ path: pred.txt }]\n";
    assert_each_refused(
        &repo,
        &[
            (
                &format!("{PRED}report: {{ output: .git/config }}\n"),
                &["report.output", ".git/config", "`.git`"],
            ),
            (
                &format!("{PRED}report: {{ output: ../../outside/x }}\n"),
                &["report.output", "outside/x", "outside the workspace"],
            ),
            (
                &format!("{PRED}report: {{ output: ../outside/x }}\n"),
                &["report.output", "outside the workspace"],
            ),
            (
                &format!("{PRED}baseline: {{ path: ../outside/x }}\n"),
                &["baseline.path", "outside the workspace"],
            ),
        ],
    );
    assert_eq!(
        std::fs::read_to_string(repo.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert_eq!(std::fs::read_to_string(outside.join("x")).unwrap(), "keep");

    std::fs::write(repo.join("README.md"), "mine").unwrap();
    let output = eval(
        &repo,
        "predictions: [{ path: pred.txt }]\nreport: { output: README.md }\n",
    );
    assert_refused(&output, &["report.output", "not written by sqlgate"]);
    assert_eq!(
        std::fs::read_to_string(repo.join("README.md")).unwrap(),
        "mine"
    );

    let output = eval(
        &repo,
        "predictions: [{ path: pred.txt }]\nreport: { output: report.md }\n",
    );
    common::assert_exit(&output, 0);
    let again = eval(
        &repo,
        "predictions: [{ path: pred.txt }]\nreport: { output: report.md }\n",
    );
    assert_eq!(again.status.code(), Some(0), "its own report is replaced");
}

#[test]
fn databases_must_be_regular_files_of_their_folder_without_a_wal() {
    let dir = tempfile::tempdir().unwrap();
    let repo = workspace(dir.path());
    let secret = dir.path().join("creds.sqlite");
    std::fs::copy(repo.join("database/singer/singer.sqlite"), &secret).unwrap();
    std::fs::remove_file(repo.join("database/singer/singer.sqlite")).unwrap();
    std::os::unix::fs::symlink(&secret, repo.join("database/singer/singer.sqlite")).unwrap();
    let output = eval(&repo, "predictions: [{ path: pred.txt }]\n");
    assert_refused(
        &output,
        &["database `singer`", "outside the databases folder"],
    );

    std::fs::remove_file(repo.join("database/singer/singer.sqlite")).unwrap();
    std::fs::copy(&secret, repo.join("database/singer/singer.sqlite")).unwrap();
    std::fs::write(repo.join("database/singer/singer.sqlite-wal"), b"").unwrap();
    let output = eval(&repo, "predictions: [{ path: pred.txt }]\n");
    assert_refused(&output, &["database `singer`", "-wal"]);
    assert!(!repo.join("database/singer/singer.sqlite-shm").exists());
}

/// Runs `eval` with the config's folder as the workspace and `args` after `--config`.
fn eval_with(repo: &Path, args: &[&str]) -> Output {
    let config = repo.join("sqlgate.yml");
    std::fs::write(
        &config,
        "dataset: { gold: gold.sql, databases: database, difficulty: none }\n\
         predictions: [{ path: pred.txt }]\n",
    )
    .unwrap();
    let mut all = vec![
        "eval",
        "--config",
        config.to_str().unwrap(),
        "--comment",
        "never",
    ];
    all.extend_from_slice(args);
    sqlgate_command(&all)
        .current_dir(repo)
        .env_remove("SQLGATE_WORKSPACE")
        .output()
        .unwrap()
}

#[test]
fn an_output_named_on_the_command_line_is_written_where_the_user_said() {
    let dir = tempfile::tempdir().unwrap();
    let repo = workspace(dir.path());
    let elsewhere = tempfile::tempdir().unwrap();
    let items = elsewhere.path().join("items.jsonl");
    let output = eval_with(&repo, &["--jsonl", items.to_str().unwrap()]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let written = std::fs::read_to_string(&items).unwrap();
    assert!(written.starts_with("{\"system\":"), "{written}");
    let output = eval_with(&repo, &["--jsonl", "../items.jsonl"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(dir.path().join("items.jsonl").exists());
}

#[test]
fn outputs_named_on_the_command_line_never_replace_a_file_sqlgate_did_not_write() {
    let dir = tempfile::tempdir().unwrap();
    let repo = workspace(dir.path());
    std::fs::write(repo.join("README.md"), "mine").unwrap();
    std::fs::write(repo.join(".git/config"), "[core]\n").unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("x"), "keep").unwrap();
    for option in [
        "--report",
        "--jsonl",
        "--summary",
        "--leaderboard",
        "--scatter",
    ] {
        for (path, reason) in [
            ("README.md", "not written by sqlgate"),
            (".git/config", "`.git`"),
            ("../outside/x", "not written by sqlgate"),
        ] {
            let output = eval_with(&repo, &[option, path]);
            assert_refused(&output, &[option, path, reason]);
        }
    }
    assert_eq!(
        std::fs::read_to_string(repo.join("README.md")).unwrap(),
        "mine"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert_eq!(std::fs::read_to_string(outside.join("x")).unwrap(), "keep");
    std::fs::create_dir_all(repo.join("out")).unwrap();
    let all = [
        "--report",
        "out/report.md",
        "--jsonl",
        "out/items.jsonl",
        "--summary",
        "out/summary.json",
        "--leaderboard",
        "out/board.json",
        "--scatter",
        "out/scatter.svg",
    ];
    for round in 0..2 {
        let output = eval_with(&repo, &all);
        assert_eq!(
            output.status.code(),
            Some(0),
            "round {round}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    assert!(repo.join("out/report.md").is_file() && repo.join("out/items.jsonl").is_file());
}

#[test]
fn suite_databases_must_be_regular_files_of_their_folder_without_a_wal() {
    let dir = tempfile::tempdir().unwrap();
    let repo = workspace(dir.path());
    let suite = repo.join("suite/singer");
    std::fs::create_dir_all(&suite).unwrap();
    let original = repo.join("database/singer/singer.sqlite");
    std::fs::copy(&original, suite.join("singer.sqlite")).unwrap();
    let secret = dir.path().join("creds.sqlite");
    std::fs::copy(&original, &secret).unwrap();
    std::os::unix::fs::symlink(&secret, suite.join("singer_1.sqlite")).unwrap();
    let config = "predictions: [{ path: pred.txt }]\nmetrics: [ex, ts]\n\
                  suite: { kind: directory, path: suite }\n";
    let output = eval(&repo, config);
    assert_refused(
        &output,
        &[
            "suite database of `singer`",
            "singer_1.sqlite",
            "outside the databases folder",
        ],
    );
    std::fs::remove_file(suite.join("singer_1.sqlite")).unwrap();
    std::fs::copy(&original, suite.join("singer_1.sqlite")).unwrap();
    std::fs::write(suite.join("singer_1.sqlite-wal"), b"").unwrap();
    let output = eval(&repo, config);
    assert_refused(&output, &["suite database of `singer`", "-wal"]);
    assert!(!suite.join("singer_1.sqlite-shm").exists());
    std::fs::remove_file(suite.join("singer_1.sqlite-wal")).unwrap();
    let output = eval(&repo, config);
    common::assert_exit(&output, 0);
}
