//! The shipped PR workflow (`.github/workflows/sqlgate-pr.yml`) and the Action (`action.yml`, a
//! composite) run end to end under act (nektos/act, pinned; `.ci/install-act` installs it when
//! missing, so a machine without it fails here, never skips), as docs/ACTION.md tells a user to:
//! host mode (`-P ubuntu-latest=-self-hosted`), the Action through `--local-repository`, a model
//! repository with its `.git` (act copies the work tree, `.git` included, and skips the pinned
//! `actions/checkout` of the repository it runs in), and a local fake of the GitHub API for the
//! comment.
//!
//! No network: the other `uses:` are stand-ins under `tests/act/` (the `actions/cache` one is a
//! cache hit holding the binary `cargo test` built, so `install: source` compiles nothing), and
//! act runs behind a proxy that refuses every connection, so any fetch from GitHub fails the run.
//!
//! Three pull requests on the bundled example: one that fixes an item (passes), one that breaks
//! five (fails, exit 1), one with a prediction file sqlgate cannot evaluate (exit 2). Each checks
//! act's exit code, the Action's outputs, the uploaded report, the sticky comment, and that the log
//! holds no workflow command act could not read (a progress bar drawn into act's terminal once
//! swallowed the start of a `::stop-commands::` block).

use crate::common;

use common::github::{FakeGitHub, TOKEN};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The shipped workflow the tests run.
const WORKFLOW: &str = ".github/workflows/sqlgate-pr.yml";
/// The config that workflow names: the bundled example.
const CONFIG: &str = "examples/spider-mini/sqlgate.yml";
/// What act marks a workflow command it cannot read with.
const UNKNOWN_COMMAND: &str = "\u{2753}";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// act's binary: `.ci/install-act` installs it (pinned, from PyPI) when missing; a test that
/// cannot get it fails.
fn act() -> &'static Path {
    static ACT: OnceLock<PathBuf> = OnceLock::new();
    ACT.get_or_init(|| {
        let script = root().join(".ci/install-act");
        let output = Command::new("bash")
            .arg(&script)
            .stdin(Stdio::null())
            .output()
            .expect("bash runs");
        assert!(
            output.status.success(),
            "FAILURE: act is needed and {} could not install it:\n{}",
            script.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        let stdout = String::from_utf8(output.stdout).unwrap();
        PathBuf::from(
            stdout
                .lines()
                .last()
                .expect("install-act prints act's path"),
        )
    })
}

/// The Action as a repository holds it, for `--local-repository`: `action.yml`, `.ci/` and what
/// `install: source` keys its build on (`Cargo.toml`, `Cargo.lock`, `.cargo/`, `src/`,
/// `crates/`, `templates/`), copied from this checkout (so act never archives its build output).
fn action_checkout(dir: &Path) -> PathBuf {
    let action = dir.join("action");
    std::fs::create_dir_all(&action).unwrap();
    for entry in [
        "action.yml",
        ".ci",
        "Cargo.toml",
        "Cargo.lock",
        ".cargo",
        "src",
        "crates",
        "templates",
    ] {
        copy(&root().join(entry), &action);
    }
    action
}

fn copy(from: &Path, into: &Path) {
    let status = Command::new("cp")
        .arg("-R")
        .arg(from)
        .arg(into)
        .status()
        .unwrap();
    assert!(
        status.success(),
        "cp -R {} {}",
        from.display(),
        into.display()
    );
}

/// `--local-repository` for every `uses:` of the workflow and the Action: the Action itself from
/// `action`, `actions/cache` and `actions/upload-artifact` from their stand-ins in `tests/act/`.
/// `actions/checkout` is left out: act skips a checkout of the repository it runs in (a fetch of
/// it would fail the run, see [`run_pull_request`]).
fn local_repositories(action: &Path) -> Vec<String> {
    let mut references = Vec::new();
    for file in [WORKFLOW, "action.yml"] {
        let text = std::fs::read_to_string(root().join(file)).unwrap();
        for line in text.lines() {
            let line = line.trim_start().trim_start_matches("- ");
            if let Some(used) = line.strip_prefix("uses:") {
                references.push(used.split('#').next().unwrap().trim().to_string());
            }
        }
    }
    references
        .into_iter()
        .filter_map(|reference| {
            let (name, _) = reference.split_once('@').expect("every uses: is pinned");
            let folder = match name {
                "actions/checkout" => return None,
                "actions/cache" => root().join("tests/act/cache"),
                "actions/upload-artifact" => root().join("tests/act/upload-artifact"),
                name if name.ends_with("/sqlgate") => action.to_path_buf(),
                other => panic!("{WORKFLOW} or action.yml uses {other}: give it a stand-in"),
            };
            Some(format!("{reference}={}", folder.display()))
        })
        .collect()
}

/// A model repository in `dir`: the bundled example at `examples/spider-mini/` (the workflow's
/// config) and the shipped workflow, committed on `main` with GitHub's `acme/model` as origin,
/// then the example's baseline made there and committed (as the README's first steps do).
fn model_repository(dir: &Path) -> PathBuf {
    let model = dir.join("model");
    std::fs::create_dir_all(model.join("examples")).unwrap();
    std::fs::create_dir_all(model.join(".github/workflows")).unwrap();
    copy(
        &root().join("examples/spider-mini"),
        &model.join("examples"),
    );
    let _ = std::fs::remove_file(model.join("examples/spider-mini/sqlgate-report.md"));
    std::fs::copy(root().join(WORKFLOW), model.join(WORKFLOW)).unwrap();
    common::git(&model, &["init", "--quiet", "--initial-branch=main"]);
    common::git(
        &model,
        &[
            "remote",
            "add",
            "origin",
            "https://github.com/acme/model.git",
        ],
    );
    common::git(&model, &["add", "-A"]);
    common::git(&model, &["commit", "--quiet", "-m", "model with sqlgate"]);
    let update = common::sqlgate_command(&["baseline", "update", "--config", CONFIG])
        .current_dir(&model)
        .env_remove("GITHUB_SHA")
        .output()
        .unwrap();
    common::assert_exit(&update, 0);
    common::git(&model, &["commit", "--quiet", "-am", "sqlgate baseline"]);
    model
}

/// What one act run of the PR workflow left.
struct Run {
    /// act's exit code.
    code: Option<i32>,
    /// act's output (stdout and stderr).
    log: String,
    /// The files the upload step handed to the `actions/upload-artifact` stand-in.
    artifact: PathBuf,
    /// The bodies of the pull request's comments on the fake GitHub.
    comments: Vec<String>,
    _dir: tempfile::TempDir,
}

impl Run {
    /// The values of the Action's output `name`, as act reports them.
    fn output(&self, name: &str) -> Vec<&str> {
        let marker = format!("::set-output:: {name}=");
        self.log
            .lines()
            .filter_map(|line| line.split_once(&marker).map(|(_, value)| value.trim_end()))
            .collect()
    }

    /// The outputs `passed`, `score` and `delta` as the workflow's "Show the outputs" step
    /// prints them.
    fn shown_outputs(&self) -> (&str, &str, &str) {
        let line = self
            .log
            .lines()
            .find_map(|line| {
                line.split_once("| passed=")
                    .map(|(_, rest)| rest.trim_end())
            })
            .unwrap_or_else(|| panic!("no outputs shown:\n{}", self.log));
        let (passed, rest) = line.split_once(" score=").unwrap();
        let (score, delta) = rest.split_once(" delta=").unwrap();
        (passed, score, delta)
    }

    /// The one comment on the pull request.
    fn comment(&self) -> &str {
        assert_eq!(self.comments.len(), 1, "{}", self.log);
        &self.comments[0]
    }
}

/// Runs the shipped PR workflow under act on pull request `number` of a model repository, whose
/// head commit is the base with `change` applied to the example's folder.
fn run_pull_request(number: u64, change: impl FnOnce(&Path)) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let model = model_repository(dir.path());
    let base = common::repo::head(&model);
    common::git(&model, &["checkout", "--quiet", "-b", "change"]);
    change(&model.join("examples/spider-mini"));
    common::git(&model, &["commit", "--quiet", "-am", "the change"]);
    let head = common::repo::head(&model);
    let event = dir.path().join("event.json");
    let payload = serde_json::json!({
        "number": number,
        "pull_request": {
            "number": number,
            "base": { "sha": base, "ref": "main" },
            "head": { "sha": head, "ref": "change" },
        },
        "repository": { "full_name": "acme/model" },
    });
    std::fs::write(&event, payload.to_string()).unwrap();
    let action = action_checkout(dir.path());
    let artifacts = dir.path().join("artifacts");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let github = FakeGitHub::start();
    let mut command = Command::new(act());
    command
        .current_dir(&model)
        .args(["pull_request", "--workflows", WORKFLOW, "--eventpath"])
        .arg(&event)
        .args([
            "-P",
            "ubuntu-latest=-self-hosted",
            "--container-daemon-socket",
            "-",
        ]);
    for local in local_repositories(&action) {
        command.args(["--local-repository", &local]);
    }
    let binary = env!("CARGO_BIN_EXE_sqlgate");
    command
        .args(["--env", &format!("SQLGATE_ACT_BINARY={binary}")])
        .args([
            "--env",
            &format!("SQLGATE_ACT_ARTIFACTS={}", artifacts.display()),
        ])
        .args(["--env", &format!("GITHUB_API_URL={}", github.url)])
        .args(["--secret", &format!("GITHUB_TOKEN={TOKEN}")])
        // A clean environment: act's caches and settings in the test's folder, and every
        // connection but the loopback one to the fake refused.
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("LANG", "C.UTF-8")
        // A terminal type, as a user's shell has: act gives the steps a terminal, on which a
        // progress bar would be drawn (without `TERM` it would count as a dumb one).
        .env("TERM", "xterm");
    for proxy in [
        "HTTPS_PROXY",
        "HTTP_PROXY",
        "ALL_PROXY",
        "https_proxy",
        "http_proxy",
    ] {
        command.env(proxy, "http://127.0.0.1:9");
    }
    let output = command
        .env("NO_PROXY", "127.0.0.1,localhost")
        .stdin(Stdio::null())
        .output()
        .expect("act runs");
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        !log.contains("GoGitActionCache") && !log.contains("failed to fetch"),
        "act tried to fetch an action:\n{log}"
    );
    Run {
        code: output.status.code(),
        log,
        artifact: artifacts.join("sqlgate-report"),
        comments: github.comments(number),
        _dir: dir,
    }
}

/// Each of `artifacts` was uploaded, and the log has no workflow command act could not read and
/// no progress bar.
fn assert_clean_log(run: &Run, artifacts: &[&str]) {
    for artifact in artifacts {
        let uploaded = run.artifact.join(artifact);
        assert!(uploaded.is_file(), "{artifact} not uploaded:\n{}", run.log);
    }
    assert!(
        !run.log.contains(UNKNOWN_COMMAND),
        "act met a workflow command it could not read:\n{}",
        run.log
    );
    assert!(
        !run.log.contains(" pairs  "),
        "a progress bar in act's log:\n{}",
        run.log
    );
}

/// The baseline's first item the example's `system` gets wrong on `ex`.
fn first_wrong_item(example: &Path, system: &str) -> usize {
    let baseline: serde_json::Value =
        serde_json::from_slice(&std::fs::read(example.join("baseline.json")).unwrap()).unwrap();
    baseline["systems"][system]
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item["metrics"]["ex"] == 0.0)
        .and_then(|item| item["index"].as_u64())
        .expect("a wrong item") as usize
}

/// Replaces line `index` of `system`'s predictions with `sql`.
fn set_prediction(example: &Path, system: &str, index: usize, sql: &str) {
    let path = example.join(format!("predictions/{system}.txt"));
    let mut lines: Vec<String> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    lines[index] = sql.to_string();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
}

#[test]
fn a_pull_request_that_fixes_an_item_passes_under_act() {
    let run = run_pull_request(1, |example| {
        let index = first_wrong_item(example, "C3");
        let gold = std::fs::read_to_string(example.join("dev_gold.sql")).unwrap();
        let (sql, _db) = gold.lines().nth(index).unwrap().split_once('\t').unwrap();
        set_prediction(example, "C3", index, sql);
    });
    assert_eq!(run.code, Some(0), "{}", run.log);
    assert_eq!(run.output("exit-code").last(), Some(&"0"), "{}", run.log);
    let (passed, score, delta) = run.shown_outputs();
    assert_eq!(passed, "true", "{}", run.log);
    assert!(score.parse::<f64>().unwrap() > 90.0, "{}", run.log);
    assert!(delta.parse::<f64>().unwrap() > 0.0, "{}", run.log);
    assert!(
        run.comment().contains("sqlgate passed") && run.comment().contains("0 regressed / 1 fixed"),
        "{}",
        run.comment()
    );
    assert_clean_log(&run, &["sqlgate-report.md", "sqlgate-summary.json"]);
}

#[test]
fn a_pull_request_that_breaks_five_items_fails_under_act() {
    let run = run_pull_request(2, |example| common::break_predictions(example, "C3", 5));
    assert_eq!(run.code, Some(1), "{}", run.log);
    assert_eq!(run.output("exit-code").last(), Some(&"1"), "{}", run.log);
    let (passed, _score, delta) = run.shown_outputs();
    assert_eq!(passed, "false", "{}", run.log);
    assert!(delta.parse::<f64>().unwrap() < 0.0, "{}", run.log);
    let annotations = run
        .log
        .matches("::warning file=examples/spider-mini/predictions/C3.txt,line=")
        .count();
    assert_eq!(
        annotations, 5,
        "one annotation per regressed item:\n{}",
        run.log
    );
    assert!(
        run.comment().contains("sqlgate failed") && run.comment().contains("5 regressed / 0 fixed"),
        "{}",
        run.comment()
    );
    assert_clean_log(&run, &["sqlgate-report.md"]);
}

#[test]
fn a_pull_request_sqlgate_cannot_evaluate_stops_with_exit_2_under_act() {
    let run = run_pull_request(3, |example| {
        std::fs::write(example.join("predictions/C3.txt"), "SELECT 1\n").unwrap();
    });
    assert_eq!(run.code, Some(1), "the job fails:\n{}", run.log);
    assert_eq!(run.output("exit-code").last(), Some(&"2"), "{}", run.log);
    assert_eq!(run.shown_outputs(), ("false", "", ""), "{}", run.log);
    let reason = run.output("reason");
    assert!(
        reason
            .last()
            .is_some_and(|r| r.contains("predictions/C3.txt")),
        "{}",
        run.log
    );
    assert!(
        run.comment().contains("sqlgate could not evaluate")
            && run.comment().contains("predictions/C3.txt"),
        "{}",
        run.comment()
    );
    assert_clean_log(&run, &[]);
}
