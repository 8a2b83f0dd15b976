//! Hostile predictions from a pull request are contained under every comparison profile:
//! nothing is written, attached or loaded, runaway queries stop at their limits, and each such
//! item is a wrong verdict.
//!
//! One case differs by design: with DISTINCT removal on (the `spider-ts` default), the official
//! scorer tokenizes with sqlparse and keeps only the first statement, so `A; B` is judged as `A`
//! and `B` never runs. sqlgate reproduces that verdict; everywhere else two statements are an error.

use crate::common;

use common::{read_jsonl, shared_spider, snapshot};
use std::fs;

const GOLD: &str = "SELECT count(*) FROM singer";

/// Outcome expected for two statements in one line under a profile.
const TWO_STATEMENTS: &str = "two statements";

fn hostile_predictions(outside: &std::path::Path) -> Vec<(String, &'static str)> {
    let outside = outside.display();
    let cross_join = (0..12)
        .map(|i| format!("singer AS s{i}"))
        .collect::<Vec<_>>()
        .join(", ");
    let garbage: String = (0..1_000_000)
        .map(|i| (b'!' + (i % 90) as u8) as char)
        .collect();
    vec![
        (format!("ATTACH DATABASE '{outside}/evil.sqlite' AS evil"), "pred_error"),
        ("INSERT INTO singer (Singer_ID, Name) VALUES (99, 'x')".into(), "pred_error"),
        ("UPDATE singer SET Name = 'x'".into(), "pred_error"),
        ("DELETE FROM singer".into(), "pred_error"),
        ("DROP TABLE singer".into(), "pred_error"),
        ("CREATE TABLE copy AS SELECT * FROM singer".into(), "pred_error"),
        ("PRAGMA writable_schema = ON".into(), "pred_error"),
        ("PRAGMA journal_mode = WAL".into(), "pred_error"),
        (format!("SELECT load_extension('{outside}/evil')"), "pred_error"),
        (format!("VACUUM INTO '{outside}/copy.sqlite'"), "pred_error"),
        (
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r".into(),
            "pred_timeout",
        ),
        (format!("SELECT count(*) FROM {cross_join}"), "pred_timeout"),
        ("SELECT randomblob(900000000)".into(), "pred_error"),
        ("SELECT count(*) FROM singer; DROP TABLE singer".into(), TWO_STATEMENTS),
        ("SELECT count(*) FROM singer; SELECT 1".into(), TWO_STATEMENTS),
        (garbage, "pred_error"),
    ]
}

/// (compare section, outcome of `count(*); other statement`)
const PROFILES: [(&str, &str); 4] = [
    ("{ profile: spider-ts }", "match"),
    ("{ profile: spider-ts, keep_distinct: true }", "pred_error"),
    ("{ profile: strict }", "pred_error"),
    ("{ profile: bird }", "pred_error"),
];

#[test]
fn hostile_predictions_are_contained() {
    for (compare, two_statements) in PROFILES {
        run_hostile(compare, two_statements);
    }
}

fn run_hostile(compare: &str, two_statements: &str) {
    let work = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let databases = work.path().join("database");
    fs::create_dir_all(databases.join("singer")).unwrap();
    fs::copy(
        shared_spider().join("database/singer/singer.sqlite"),
        databases.join("singer/singer.sqlite"),
    )
    .unwrap();
    let predictions = hostile_predictions(outside.path());
    let gold: String = predictions
        .iter()
        .map(|_| format!("{GOLD}\tsinger\n"))
        .collect();
    fs::write(work.path().join("gold.sql"), gold).unwrap();
    let lines: String = predictions
        .iter()
        .map(|(sql, _)| format!("{sql}\n"))
        .collect();
    fs::write(work.path().join("hostile.txt"), lines).unwrap();
    fs::write(
        work.path().join("sqlgate.yml"),
        format!(
            "dataset: {{ gold: gold.sql, databases: database, difficulty: none }}\n\
             predictions: [{{ name: hostile, path: hostile.txt }}]\n\
             metrics: [ex, esm, no_column_and_partial_cell]\n\
             compare: {compare}\n\
             execution: {{ timeout_ms: 1500, threads: 2 }}\n"
        ),
    )
    .unwrap();
    let databases_before = snapshot(&databases);

    let jsonl = work.path().join("out.jsonl");
    let output = common::eval(
        &work.path().join("sqlgate.yml"),
        &["--jsonl", common::arg(&jsonl)],
    );
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "run failed under {compare}: {}",
        String::from_utf8_lossy(&output.stderr)
    );

    let results = read_jsonl(&jsonl);
    assert_eq!(results.len(), predictions.len());
    for (result, (sql, expected)) in results.iter().zip(&predictions) {
        let shown: String = sql.chars().take(60).collect();
        let expected = if *expected == TWO_STATEMENTS {
            two_statements
        } else {
            expected
        };
        assert_eq!(
            result["outcome"]["ex"], expected,
            "`{shown}` under {compare}: {result}"
        );
        if expected.starts_with("pred_") {
            assert_eq!(
                result["outcome"]["no_column_and_partial_cell"], expected,
                "`{shown}` under {compare}, partial credit: {result}"
            );
        }
        let verdict = if expected == "match" { 1 } else { 0 };
        assert_eq!(
            result["metrics"]["ex"], verdict,
            "verdict of `{shown}` under {compare}"
        );
    }
    assert_eq!(
        snapshot(&databases),
        databases_before,
        "a database file changed or appeared under {compare}"
    );
    assert!(
        snapshot(outside.path()).is_empty(),
        "a file was created outside under {compare}"
    );
}
