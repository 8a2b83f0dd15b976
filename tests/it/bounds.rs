//! Bounds on what a config sets, through the binary: never a panic, never an exhausted runner.

use crate::common;

use std::path::Path;
use std::process::Output;

fn run(dir: &Path, rest: &str) -> Output {
    common::singer_item(dir);
    let config = dir.join("sqlgate.yml");
    std::fs::write(
        &config,
        format!(
            "dataset: {{ gold: gold.sql, databases: database, difficulty: none }}\n\
             predictions: [{{ path: pred.txt }}]\n{rest}"
        ),
    )
    .unwrap();
    common::eval(&config, &[])
}

#[test]
fn threads_are_clamped_to_the_fixed_maximum_and_honoured_below_it() {
    let dir = tempfile::tempdir().unwrap();
    let output = run(dir.path(), "execution: { threads: 1000000 }\n");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    common::assert_contains(
        &stderr,
        &["`execution.threads: 1000000` clamped to 256 worker threads"],
    );
    let output = run(dir.path(), "execution: { threads: 16 }\n");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("clamped"), "{stderr}");
}

#[test]
fn timeouts_outside_one_ms_to_one_hour_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for value in ["0", "3600001", "18446744073710"] {
        let output = run(
            dir.path(),
            &format!("execution: {{ timeout_ms: {value} }}\n"),
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{value}: {stderr}");
        common::assert_contains(&stderr, &["`execution.timeout_ms`"]);
    }
}

#[test]
fn a_runaway_template_runs_out_of_fuel() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("t.md.j2"),
        "<!-- sqlgate:x -->\n{% for a in range(100000) %}{% for b in range(100000) %}{{ a }}{% endfor %}{% endfor %}\n",
    )
    .unwrap();
    let started = std::time::Instant::now();
    let output = run(dir.path(), "report: { template: t.md.j2 }\n");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("fuel") || stderr.contains("larger than"),
        "{stderr}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

#[test]
fn degenerate_execution_and_distill_limits_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (rest, key) in [
        ("execution: { max_rows: 0 }", "`execution.max_rows`"),
        ("execution: { max_rows: 100000001 }", "`execution.max_rows`"),
        (
            "execution: { max_result_bytes: 0 }",
            "`execution.max_result_bytes`",
        ),
        (
            "execution: { max_result_bytes: 18446744073709551615 }",
            "`execution.max_result_bytes`",
        ),
        ("execution: { max_memory: 1024 }", "`execution.max_memory`"),
        (
            "execution: { max_memory: 18446744073709551615 }",
            "`execution.max_memory`",
        ),
        (
            "suite: { distill: { max_random_dbs: 0 } }",
            "`suite.distill.max_random_dbs`",
        ),
        (
            "suite: { distill: { max_random_dbs: 18446744073709551615 } }",
            "`suite.distill.max_random_dbs`",
        ),
        (
            "suite: { distill: { rows: [5, 2] } }",
            "`suite.distill.rows`",
        ),
        (
            "suite: { distill: { rows: [0, 1000000000] } }",
            "`suite.distill.rows`",
        ),
    ] {
        let output = run(dir.path(), &format!("{rest}\n"));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{rest}: {stderr}");
        assert!(stderr.contains(key), "{rest}: {stderr}");
        assert!(!stderr.contains("panicked"), "{rest}: {stderr}");
    }
    let output = run(dir.path(), "execution: { max_rows: 1 }\n");
    common::assert_exit(&output, 0);
}
