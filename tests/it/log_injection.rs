//! Nothing a pull request writes becomes a workflow command in the Actions log: the binary runs
//! with `GITHUB_ACTIONS=true` on predictions whose result rows, file names (through a glob) and
//! error messages carry `::error`, `::add-mask::`, `::notice` and `##[warning]`, and the log is
//! read the way the runner reads it (lines end at `\r` or `\n`; `::stop-commands::<token>`
//! stops processing until `::<token>::`). Only sqlgate's own annotations are commands.

use crate::common;

use common::sqlgate_command;
use serde_json::json;
use sqlgate::util::log::is_workflow_command;
use std::path::Path;

/// The workflow commands the runner would act on in `log`.
fn commands_run(log: &str) -> Vec<String> {
    let mut stopped: Option<String> = None;
    let mut run = Vec::new();
    for line in log.split(['\r', '\n']) {
        let trimmed = line.trim_start();
        if let Some(token) = &stopped {
            let resume = trimmed
                .strip_prefix("::")
                .and_then(|rest| rest.strip_suffix("::"));
            if resume.is_some_and(|r| r.eq_ignore_ascii_case(token)) {
                stopped = None;
            }
            continue;
        }
        if let Some(token) = trimmed.strip_prefix("::stop-commands::") {
            stopped = Some(token.trim().to_string());
            continue;
        }
        if is_workflow_command(line) {
            run.push(line.to_string());
        }
    }
    assert!(stopped.is_none(), "a stop-commands block was left open");
    run
}

/// A prediction whose result rows hold three injections, one per line ending.
const HOSTILE_SQL: &str = "SELECT 'x' || char(10) || '::error title=sqlgate::all green' || \
     char(13) || '::add-mask::hunter2' || char(13) || char(10) || 'row ##[warning]fake warning' \
     FROM singer";

/// A prediction file name (one system, through a glob) with a newline and both command forms.
const HOSTILE_NAME: &str = "m ##[error]glob\n::notice title=sqlgate::injected";

fn write_config(dir: &Path) -> std::path::PathBuf {
    std::fs::write(
        dir.join("gold.sql"),
        "SELECT name FROM singer\tconcert_singer\nSELECT count(*) FROM singer\tconcert_singer\n",
    )
    .unwrap();
    let predictions = format!("{{ path: \"{}/preds/*.txt\" }}", dir.display());
    common::config::example_gate(dir, "sqlgate", &dir.join("gold.sql"), &predictions, "ex")
}

fn in_actions(args: &[&str], dir: &Path) -> std::process::Output {
    let event = common::repo::event(
        dir.join("event.json"),
        json!({"pull_request": {"number": 7}}),
    );
    common::repo::in_pull_request_job(&mut sqlgate_command(args), &event)
        .env("GITHUB_STEP_SUMMARY", dir.join("step-summary.md"))
        .output()
        .unwrap()
}

/// Panics unless every command the runner would act on is one of sqlgate's annotations and
/// carries none of the injected text (a system's name it may carry, escaped on one line).
fn assert_only_sqlgate_commands(log: &str) -> Vec<String> {
    let commands = commands_run(log);
    for command in &commands {
        let own = [
            "::warning file=",
            "::error title=sqlgate::",
            "::notice title=sqlgate::",
        ];
        assert!(
            own.iter().any(|p| command.starts_with(p)),
            "{command:?} in\n{log}"
        );
        for injected in ["all green", "add-mask", "hunter2", "fake warning", "##["] {
            assert!(!command.contains(injected), "{command:?} in\n{log}");
        }
    }
    commands
}

#[test]
fn result_rows_and_glob_names_print_inside_stopped_blocks() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let config = write_config(dir);
    std::fs::create_dir(dir.join("preds")).unwrap();
    let file = dir.join("preds").join(format!("{HOSTILE_NAME}.txt"));
    std::fs::write(
        &file,
        "SELECT name FROM singer\nSELECT count(*) FROM singer\n",
    )
    .unwrap();
    let update = sqlgate_command(&["baseline", "update", "--config", config.to_str().unwrap()])
        .output()
        .unwrap();
    common::assert_exit(&update, 0);
    std::fs::write(
        &file,
        format!("{HOSTILE_SQL}\nSELECT count(*) FROM singer\n"),
    )
    .unwrap();

    let output = in_actions(&["eval", "--config", config.to_str().unwrap()], dir);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    common::assert_contains(&stdout, &["PR comment not posted (no token"]);
    assert!(
        stdout.contains("::error title=sqlgate::all green"),
        "the rows are printed: {stdout}"
    );
    let commands = assert_only_sqlgate_commands(&stdout);
    assert_only_sqlgate_commands(&stderr);
    let warnings: Vec<&String> = commands
        .iter()
        .filter(|c| c.starts_with("::warning"))
        .collect();
    assert_eq!(warnings.len(), 1, "{commands:?}");
    assert!(
        warnings[0].contains("m ## [error]glob%0A::notice title=sqlgate::injected: item 0"),
        "the annotation escapes the name: {}",
        warnings[0]
    );
    assert!(
        commands
            .iter()
            .any(|c| c.starts_with("::error title=sqlgate::failed: ")),
        "{commands:?}"
    );
    assert!(
        stdout.contains(
            "m ##\\[error]glob\\n::notice title=sqlgate::injected (0 missing predictions)"
        ),
        "the summary names the system on one line: {stdout}"
    );
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        report.contains("--   x\\n::error title=sqlgate::all green\\n::add-mask::hunter2\\nrow ##\\[warning]fake warning\n"),
        "one result row per line in the report: {report}"
    );
}

#[test]
fn an_error_quoting_a_file_name_prints_inside_a_stopped_block() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let config = write_config(dir);
    std::fs::create_dir(dir.join("preds")).unwrap();
    let name = "bad\n::error title=sqlgate::all green\r##[warning]fake warning.txt";
    std::fs::write(dir.join("preds").join(name), b"SELECT \xff\n").unwrap();
    let output = in_actions(&["eval", "--config", config.to_str().unwrap()], dir);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("all green"),
        "the error names the file: {stderr}"
    );
    assert_eq!(assert_only_sqlgate_commands(&stderr), Vec::<String>::new());
    assert_eq!(
        assert_only_sqlgate_commands(&String::from_utf8_lossy(&output.stdout)),
        Vec::<String>::new()
    );
}

/// Copies the folder `from` (one level of sub-folders of files) to `to`.
fn copy_databases(from: &Path, to: &Path) {
    for schema in std::fs::read_dir(from).unwrap() {
        let schema = schema.unwrap().path();
        let target = to.join(schema.file_name().unwrap());
        std::fs::create_dir_all(&target).unwrap();
        for file in std::fs::read_dir(&schema).unwrap() {
            let file = file.unwrap().path();
            std::fs::copy(&file, target.join(file.file_name().unwrap())).unwrap();
        }
    }
}

#[test]
fn an_error_quoting_a_path_prints_inside_a_stopped_block() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/spider-mini");
    let databases = dir.join("db\n::error title=sqlgate::all green\r##[warning]fake warning");
    copy_databases(&example.join("database"), &databases);
    let broken = databases.join("concert_singer/concert_singer.sqlite");
    std::fs::write(&broken, "not a database").unwrap();
    std::fs::write(dir.join("gold.sql"), "SELECT 1\tconcert_singer\n").unwrap();
    std::fs::write(dir.join("m.txt"), "SELECT 1\n").unwrap();
    let config = dir.join("sqlgate.yml");
    std::fs::write(
        &config,
        format!(
            "dataset: {{ gold: {dir}/gold.sql, tables: {ex}/tables.json, databases: {db} }}\n\
             predictions: [{{ path: {dir}/m.txt }}]\n\
             metrics: [ex]\n\
             report: {{ output: {dir}/report.md }}\n",
            ex = example.display(),
            dir = dir.display(),
            db = serde_json::to_string(databases.to_str().unwrap()).unwrap(),
        ),
    )
    .unwrap();
    let output = in_actions(&["eval", "--config", config.to_str().unwrap()], dir);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("sqlgate: error: ")
            && stderr.contains("db\\n::error title=sqlgate::all green\\n##\\[warning]fake warning")
            && stderr.contains(": database `concert_singer`: is not a SQLite database"),
        "the error names the database on one line: {stderr}"
    );
    assert_eq!(assert_only_sqlgate_commands(&stderr), Vec::<String>::new());
    assert_only_sqlgate_commands(&String::from_utf8_lossy(&output.stdout));
}
