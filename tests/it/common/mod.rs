//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The folder `relative` of the shared benchmark data beside the repository
/// (`../shared/data/RELATIVE`), asserting it holds the file `marker`.
pub fn shared_data(relative: &str, marker: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data")
        .join(relative);
    assert!(
        path.join(marker).is_file(),
        "the shared {relative} data must be at {}",
        path.display()
    );
    path
}

/// The shared benchmark data (real Spider dev files), beside the repository.
pub fn shared_spider() -> PathBuf {
    shared_data("spider", "dev_gold.sql")
}

/// The Action's definition, `action.yml`, as a JSON value.
pub fn action_yml() -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("action.yml");
    serde_norway::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The step of `action.yml` ([`action_yml`]) whose `id` is `id`.
pub fn action_step(action: &serde_json::Value, id: &str) -> serde_json::Value {
    let steps = action["runs"]["steps"].as_array().unwrap();
    let step = steps.iter().find(|step| step["id"] == id);
    step.unwrap_or_else(|| panic!("action.yml has no step `{id}`"))
        .clone()
}

/// A one-item dataset in `dir`: the shared `singer` database (`database/singer/`), `gold.sql`
/// counting its singers and `pred.txt` predicting the gold.
pub fn singer_item(dir: &Path) {
    std::fs::create_dir_all(dir.join("database/singer")).unwrap();
    std::fs::copy(
        shared_spider().join("database/singer/singer.sqlite"),
        dir.join("database/singer/singer.sqlite"),
    )
    .unwrap();
    std::fs::write(
        dir.join("gold.sql"),
        "SELECT count(*) FROM singer\tsinger\n",
    )
    .unwrap();
    std::fs::write(dir.join("pred.txt"), "SELECT count(*) FROM singer\n").unwrap();
}

/// BIRD's database layout in `target` (`DB/DB.sqlite`) built from the SQL scripts `DB.sql` of
/// the folder `scripts` (the constructed BIRD datasets of `tests/data/bird/`).
pub fn databases_from_scripts(scripts: &Path, target: &Path) {
    for entry in std::fs::read_dir(scripts).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "sql") {
            let db = path.file_stem().unwrap().to_str().unwrap().to_string();
            let folder = target.join(&db);
            std::fs::create_dir_all(&folder).unwrap();
            let conn = rusqlite::Connection::open(folder.join(format!("{db}.sqlite"))).unwrap();
            conn.execute_batch(&std::fs::read_to_string(&path).unwrap())
                .unwrap();
        }
    }
}

/// Copies the folder `from` with everything below it to `to` (a test's own copy of a fixture).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

/// GitHub variables a test run must not inherit from a real Actions job.
pub const GITHUB_VARIABLES: [&str; 11] = [
    "GITHUB_ACTIONS",
    "GITHUB_EVENT_NAME",
    "GITHUB_WORKSPACE",
    "GITHUB_EVENT_PATH",
    "GITHUB_TOKEN",
    "SQLGATE_GITHUB_TOKEN",
    "GITHUB_OUTPUT",
    "GITHUB_STEP_SUMMARY",
    "GITHUB_API_URL",
    "GITHUB_REPOSITORY",
    "GITHUB_RUN_ID",
];

/// Makes the DuckDB engines this test builds in-process start their worker process
/// (`sqlgate duckdb-worker`) from the built binary: the test's own executable is not sqlgate.
#[cfg(feature = "duckdb")]
pub fn duckdb_worker() {
    sqlgate::engine::duckdb::worker::use_program(Path::new(env!("CARGO_BIN_EXE_sqlgate")));
}

/// The `sqlgate` binary with `args`, isolated from any surrounding GitHub Actions job. Its
/// workspace is the whole file system (`SQLGATE_WORKSPACE=/`), since the tests read the shared
/// data from beside the repository; the workspace tests remove it.
pub fn sqlgate_command(args: &[&str]) -> Command {
    sqlgate_command_at(Path::new(env!("CARGO_BIN_EXE_sqlgate")), args)
}

/// [`sqlgate_command`] with another `sqlgate` binary (one an install path put elsewhere).
pub fn sqlgate_command_at(binary: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(binary);
    command
        .args(args)
        .env("GITHUB_SHA", "0123456789abcdef0123")
        .env("SQLGATE_WORKSPACE", "/")
        .env_remove("GITHUB_WORKSPACE");
    for variable in GITHUB_VARIABLES {
        command.env_remove(variable);
    }
    command
}

/// Runs the `sqlgate` binary with `args`.
pub fn sqlgate(args: &[&str]) -> Output {
    sqlgate_command(args)
        .output()
        .expect("the sqlgate binary runs")
}

/// A path as a command-line argument (the tests' paths are UTF-8).
pub fn arg(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// All a finished command said, for `contains` checks and assertion messages: its exit code,
/// its standard output, then its standard error.
pub fn text(output: &Output) -> String {
    format!(
        "exit {:?}\n{}\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Asserts that the command exited with `code`, showing all it said when it did not.
#[track_caller]
pub fn assert_exit(output: &Output, code: i32) {
    assert_eq!(output.status.code(), Some(code), "{}", text(output));
}

/// Asserts that the command exited with `code` and returns all it said ([`text`]).
#[track_caller]
pub fn exited(output: &Output, code: i32) -> String {
    let all = text(output);
    assert_eq!(output.status.code(), Some(code), "{all}");
    all
}

/// What a finished command wrote to its standard error.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Asserts that `text` contains every one of `needles`, showing `text` when it does not.
#[track_caller]
pub fn assert_contains(text: &str, needles: &[&str]) {
    for needle in needles {
        assert!(text.contains(needle), "no {needle:?} in:\n{text}");
    }
}

/// `sqlgate eval --config CONFIG EXTRA...`, isolated as [`sqlgate_command`], to run.
pub fn eval_command(config: &Path, extra: &[&str]) -> Command {
    let mut command = sqlgate_command(&["eval", "--config", arg(config)]);
    command.args(extra);
    command
}

/// Runs `sqlgate eval --config CONFIG EXTRA...` (see [`eval_command`]).
pub fn eval(config: &Path, extra: &[&str]) -> Output {
    eval_command(config, extra)
        .output()
        .expect("the sqlgate binary runs")
}

/// Runs `sqlgate eval --config CONFIG --jsonl <beside it> EXTRA...`, asserts it exits 0 and
/// returns the per-item lines.
pub fn eval_items(config: &Path, extra: &[&str]) -> Vec<serde_json::Value> {
    let jsonl = config.with_extension("items.jsonl");
    let output = eval(config, &[&["--jsonl", arg(&jsonl)], extra].concat());
    assert_exit(&output, 0);
    read_jsonl(&jsonl)
}

/// The item's JSONL record when `gold` and `prediction` on `db_id` are scored with ex and ts
/// over a suite folder of the original database (from `databases`, in the Spider layout) and
/// one variant of it made by `change`.
pub fn judged_on_variant(
    databases: &Path,
    db_id: &str,
    change: &str,
    gold: &str,
    prediction: &str,
) -> serde_json::Value {
    let work = tempfile::tempdir().unwrap();
    let suite = work.path().join("suite").join(db_id);
    std::fs::create_dir_all(&suite).unwrap();
    let original = databases.join(db_id).join(format!("{db_id}.sqlite"));
    std::fs::copy(&original, suite.join(format!("{db_id}.sqlite"))).unwrap();
    let variant = suite.join(format!("{db_id}_1.sqlite"));
    std::fs::copy(&original, &variant).unwrap();
    rusqlite::Connection::open(&variant)
        .unwrap()
        .execute_batch(change)
        .unwrap();
    write_suite_config(work.path(), databases, db_id, gold, prediction);
    eval_items(&work.path().join("sqlgate.yml"), &[]).remove(0)
}

/// Writes `sqlgate.yml` in `work` scoring one item (`gold` against `prediction` on `db_id`,
/// databases in `databases`) with ex and ts over the suite folder `work/suite`.
pub fn write_suite_config(
    work: &Path,
    databases: &Path,
    db_id: &str,
    gold: &str,
    prediction: &str,
) {
    std::fs::write(work.join("gold.sql"), format!("{gold}\t{db_id}\n")).unwrap();
    std::fs::write(work.join("preds.txt"), format!("{prediction}\n")).unwrap();
    std::fs::write(
        work.join("sqlgate.yml"),
        format!(
            "dataset: {{ gold: gold.sql, databases: {}, difficulty: none }}\n\
             suite: {{ kind: directory, path: suite }}\n\
             predictions: [{{ name: m, path: preds.txt }}]\nmetrics: [ex, ts]\n",
            databases.display()
        ),
    )
    .unwrap();
}

/// Runs `sqlgate eval --config CONFIG --jsonl <beside it>` with the environment variable `name`
/// set to `value` (a server engine's URL), asserts it scored (exit 0, or 1 for a failed gate) and
/// returns the per-item lines.
pub fn eval_items_with_env(config: &Path, name: &str, value: &str) -> Vec<serde_json::Value> {
    let jsonl = config.with_extension("items.jsonl");
    let output = eval_command(config, &["--jsonl", arg(&jsonl)])
        .env(name, value)
        .output()
        .expect("sqlgate runs");
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "{}",
        text(&output)
    );
    read_jsonl(&jsonl)
}

/// Reads a JSONL file into values.
pub fn read_jsonl(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .expect("jsonl exists")
        .lines()
        .map(|l| serde_json::from_str(l).expect("valid JSON line"))
        .collect()
}

/// Every file below `dir` with its content, for before/after comparisons.
pub fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).expect("readable folder") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).expect("readable file");
                files.push((path, bytes));
            }
        }
    }
    files.sort();
    files
}
/// `sh -c line` with a fixed git identity: a README line run as a newcomer's shell runs it.
pub fn shell(line: &str) -> Command {
    let mut command = Command::new("sh");
    command
        .args(["-c", line])
        .env("GIT_AUTHOR_NAME", "newcomer")
        .env("GIT_AUTHOR_EMAIL", "newcomer@example.com")
        .env("GIT_COMMITTER_NAME", "newcomer")
        .env("GIT_COMMITTER_EMAIL", "newcomer@example.com");
    command
}

/// Writes a one-system benchmark's files in `dir`: `gold.sql` with one `gold\tdb_id` line per
/// item and `pred.txt` with the predictions, one a line.
pub fn write_items(dir: &Path, gold: &[(String, String)], predictions: &[String]) {
    let gold: String = gold
        .iter()
        .map(|(sql, db)| format!("{sql}\t{db}\n"))
        .collect();
    std::fs::write(dir.join("gold.sql"), gold).unwrap();
    let predictions: String = predictions.iter().map(|sql| format!("{sql}\n")).collect();
    std::fs::write(dir.join("pred.txt"), predictions).unwrap();
}

/// Runs `git args` in `dir` with a fixed identity; asserts success and returns its trimmed stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// Set in the re-run of this test binary that [`in_own_process`] starts: the one test it runs.
const OWN_PROCESS: &str = "SQLGATE_TEST_OWN_PROCESS";

/// For a test that must be alone in its process (it reads or sets process-wide state: the peak
/// resident memory, the run's memory budget, environment variables): `true` in the process the
/// test is to run in, a re-run of this test binary that runs only `test` (its path in the binary,
/// `module::name`) with the variables `env` set. Called in any other process, it starts that
/// re-run, asserts it ran `test` and passed (printing its output), and returns `false`.
pub fn in_own_process(test: &str, env: &[(&str, &str)]) -> bool {
    if std::env::var_os(OWN_PROCESS).is_some_and(|running| running == test) {
        return true;
    }
    let output = Command::new(std::env::current_exe().expect("the test binary's path"))
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(OWN_PROCESS, test)
        .envs(env.iter().copied())
        .output()
        .expect("the test binary runs again");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    print!("{stdout}{stderr}");
    assert!(
        output.status.success() && stdout.contains("test result: ok. 1 passed"),
        "{test} in a process of its own: {:?}\n{stdout}\n{stderr}",
        output.status
    );
    false
}

pub mod bird_critic_gate;
pub mod bird_minidev;
pub mod comment_html;
pub mod config;
pub mod github;
pub mod markdown;
pub mod measure;
pub mod official;
pub mod openai;
pub mod repo;
pub mod servers;
pub mod ties;
pub mod trust_flow;

/// Rewrites the first `count` predictions of `system` as a query that is wrong everywhere.
pub fn break_predictions(dir: &Path, system: &str, count: usize) {
    rewrite_predictions(dir, system, |i| i < count, "SELECT 'wrong'");
}

/// Rewrites the prediction of item `index` of `system` as a query that is wrong everywhere.
pub fn break_prediction(dir: &Path, system: &str, index: usize) {
    rewrite_predictions(dir, system, |i| i == index, "SELECT 'wrong'");
}

/// Rewrites the predictions of `system` (`predictions/SYSTEM.txt` in `dir`) whose 0-based line
/// `chosen` selects as `sql`.
pub fn rewrite_predictions(dir: &Path, system: &str, chosen: impl Fn(usize) -> bool, sql: &str) {
    let path = dir.join(format!("predictions/{system}.txt"));
    let lines: Vec<String> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .enumerate()
        .map(|(i, l)| if chosen(i) { sql } else { l }.to_string())
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
}
