//! sqlgate on a terminal (a pseudo-terminal from util-linux's `script`, as act gives its steps):
//! the progress bar is drawn only outside CI (`CI`, `GITHUB_ACTIONS` and `ACT` each turn it off),
//! and every workflow command starts a line of the byte stream even after a bar was drawn (act
//! reads its steps' output line by line: a command continuing the bar's line is not read, and once
//! a `::stop-commands::` was lost that way and the block it guarded went out unguarded).

use crate::common;

use common::sqlgate_command;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The variables that say a run is in CI.
const CI_MARKERS: [&str; 3] = ["CI", "GITHUB_ACTIONS", "ACT"];
/// What the bar's template draws after its counts (`{pos}/{len} pairs  {rate}`).
const BAR: &str = " pairs  ";

/// A config in `dir` scoring the example's `system` against the baseline in `dir`.
fn write_config(dir: &Path, system: &str) -> PathBuf {
    let ex = common::repo::example_folder();
    let predictions = format!(
        "{{ name: model, path: {}/predictions/{system}.txt }}",
        ex.display()
    );
    common::config::example_gate(dir, system, &ex.join("dev_gold.sql"), &predictions, "ex")
}

/// A directory whose baseline is C3's scores, and a config scoring RESDSQL against it (which
/// regresses items: one `::warning` each, and an `::error` for the failed gate).
fn regressing_run(dir: &Path) -> PathBuf {
    let base = write_config(dir, "C3");
    let update = sqlgate_command(&["baseline", "update", "--config", base.to_str().unwrap()])
        .output()
        .unwrap();
    common::assert_exit(&update, 0);
    write_config(dir, "RESDSQL")
}

/// The eval of [`regressing_run`] in `dir` for pull request 7 (its event payload and step
/// summary in `dir`), outside Actions until a test says otherwise.
fn regressing_eval(dir: &Path) -> Command {
    let config = regressing_run(dir);
    let event = common::repo::event(
        dir.join("event.json"),
        json!({"pull_request": {"number": 7}}),
    );
    let mut eval = common::eval_command(&config, &[]);
    eval.env("GITHUB_EVENT_PATH", event)
        .env("GITHUB_STEP_SUMMARY", dir.join("summary.md"));
    eval
}

/// `command` run on a pseudo-terminal (stdin, stdout and stderr) of type `xterm`, with the CI
/// markers removed and `env` set; returns everything written to the terminal.
fn on_a_terminal(command: &Command, env: &[(&str, &str)]) -> String {
    let line: Vec<String> = std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|part| format!("'{}'", part.to_str().unwrap().replace('\'', "'\\''")))
        .collect();
    let mut script = Command::new("script");
    script
        .args(["--quiet", "--return", "--command"])
        .arg(format!("exec {}", line.join(" ")))
        .arg("/dev/null")
        .stdin(Stdio::null());
    for (name, value) in command.get_envs() {
        match value {
            Some(value) => script.env(name, value),
            None => script.env_remove(name),
        };
    }
    // A terminal type, as a user's shell has (without `TERM` the terminal counts as a dumb one,
    // on which no bar is drawn whatever sqlgate decides).
    script.env("TERM", "xterm");
    for marker in CI_MARKERS {
        script.env_remove(marker);
    }
    for (name, value) in env {
        script.env(name, value);
    }
    let output = script.output().expect("util-linux's script runs");
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Every workflow command in `output` starts a line (lines as act reads them: up to `\n`, the
/// terminal's `\r` before it dropped); returns how many there are.
fn assert_commands_start_lines(output: &str) -> usize {
    let mut commands = 0;
    for line in output.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        for command in ["::stop-commands::", "::warning ", "::error ", "::notice "] {
            if let Some(at) = line.find(command) {
                assert_eq!(
                    at, 0,
                    "{command} does not start its line {line:?} in\n{output}"
                );
                commands += 1;
            }
        }
    }
    commands
}

/// Nothing but the bar is written on a line the bar was drawn on: each of its draws (the terminal's
/// line clearing `ESC [2K` between them) holds the bar, and the line ends after the last one.
fn assert_bar_lines_hold_only_the_bar(output: &str) {
    for line in output.split('\n').filter(|line| line.contains(BAR)) {
        for draw in line.split("\x1b[2K") {
            let draw = draw.trim_matches(['\r', ' ']);
            assert!(
                draw.is_empty() || draw.contains(BAR),
                "{draw:?} continues a bar's line in\n{output}"
            );
        }
    }
}

#[test]
fn a_bar_is_drawn_on_a_terminal_outside_ci_only() {
    let work = tempfile::tempdir().unwrap();
    let config = regressing_run(work.path());
    let eval = common::eval_command(&config, &[]);
    let outside_ci = on_a_terminal(&eval, &[]);
    assert!(outside_ci.contains(BAR), "no bar outside CI:\n{outside_ci}");
    assert_bar_lines_hold_only_the_bar(&outside_ci);
    for marker in CI_MARKERS {
        let in_ci = on_a_terminal(&eval, &[(marker, "true")]);
        assert!(!in_ci.contains(BAR), "a bar with {marker}=true:\n{in_ci}");
        common::assert_contains(&in_ci, &["gate "]);
    }
    let told_not_ci = on_a_terminal(&eval, &[("CI", "false")]);
    assert!(
        told_not_ci.contains(BAR),
        "CI=false is not CI:\n{told_not_ci}"
    );
}

#[test]
fn workflow_commands_start_a_line_after_a_bar() {
    let work = tempfile::tempdir().unwrap();
    let eval = regressing_eval(work.path());
    let output = on_a_terminal(&eval, &[]);
    assert!(output.contains(BAR), "no bar was drawn:\n{output}");
    assert_bar_lines_hold_only_the_bar(&output);
    assert!(
        assert_commands_start_lines(&output) >= 2,
        "no ::warning / ::error:\n{output}"
    );
}

#[test]
fn in_actions_on_a_terminal_no_bar_and_every_command_starts_a_line() {
    let work = tempfile::tempdir().unwrap();
    let eval = regressing_eval(work.path());
    let output = on_a_terminal(&eval, &[("GITHUB_ACTIONS", "true"), ("CI", "true")]);
    assert!(!output.contains(BAR), "a bar in Actions:\n{output}");
    common::assert_contains(&output, &["::stop-commands::"]);
    assert!(
        assert_commands_start_lines(&output) >= 3,
        "no stop-commands, ::warning, ::error:\n{output}"
    );
}
