//! A gold query that times out or fails is not charged to the prediction: the item is
//! `gold_timeout` / `gold_error`, left out of every denominator and reported (summary.json,
//! stdout, the Markdown report), so the gold scored against itself is 100 %.

use crate::common;

use common::read_jsonl;
use std::path::{Path, PathBuf};

/// Counts to 10^9: far beyond the test's 300 ms limit.
const SLOW: &str = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000) SELECT count(*) FROM c";

/// A dataset of four items (item 1's gold is slow, item 3's fails) and a prediction file.
fn dataset(dir: &Path, predictions: &[&str]) -> PathBuf {
    let db = dir.join("db/shop");
    std::fs::create_dir_all(&db).unwrap();
    let conn = rusqlite::Connection::open(db.join("shop.sqlite")).unwrap();
    conn.execute_batch("CREATE TABLE t(a INTEGER); INSERT INTO t VALUES (1), (2), (3);")
        .unwrap();
    let gold = [
        "SELECT a FROM t",
        SLOW,
        "SELECT max(a) FROM t",
        "SELECT nope FROM t",
    ];
    let lines: Vec<String> = gold.iter().map(|g| format!("{g}\tshop")).collect();
    std::fs::write(dir.join("gold.sql"), lines.join("\n") + "\n").unwrap();
    std::fs::write(dir.join("pred.sql"), predictions.join("\n") + "\n").unwrap();
    let config = dir.join("sqlgate.yml");
    std::fs::write(
        &config,
        "dataset: { gold: gold.sql, databases: db, difficulty: none, allow_failing_golds: [3] }\n\
         predictions:\n  - { name: sys, path: pred.sql }\n\
         metrics: [ex, soft_f1, rves]\nreference: ex\n\
         execution: { timeout_ms: 300 }\nrves: { repetitions: 2 }\n",
    )
    .unwrap();
    config
}

struct Run {
    items: Vec<serde_json::Value>,
    summary: serde_json::Value,
    stdout: String,
    report: String,
}

fn eval(config: &Path) -> Run {
    let dir = config.parent().unwrap();
    let (jsonl, summary, report) = (
        dir.join("items.jsonl"),
        dir.join("summary.json"),
        dir.join("report.md"),
    );
    let output = common::eval(
        config,
        &[
            "--jsonl",
            common::arg(&jsonl),
            "--summary",
            common::arg(&summary),
            "--report",
            common::arg(&report),
        ],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    Run {
        items: read_jsonl(&jsonl),
        summary: serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        report: std::fs::read_to_string(&report).unwrap(),
    }
}

#[test]
fn gold_against_itself_is_100_percent_with_gold_failures_reported() {
    let dir = tempfile::tempdir().unwrap();
    let gold = [
        "SELECT a FROM t",
        SLOW,
        "SELECT max(a) FROM t",
        "SELECT nope FROM t",
    ];
    let run = eval(&dataset(dir.path(), &gold));
    for metric in ["ex", "soft_f1", "rves"] {
        let outcomes: Vec<&str> = run
            .items
            .iter()
            .map(|i| i["outcome"][metric].as_str().unwrap())
            .collect();
        assert_eq!(
            outcomes,
            ["match", "gold_timeout", "match", "gold_error"],
            "{metric}"
        );
        assert_eq!(run.items[1]["metrics"][metric], serde_json::Value::Null);
    }
    let accuracy = &run.summary["systems"]["sys"]["accuracy"]["ex"]["all"];
    assert_eq!(accuracy.as_f64(), Some(1.0), "{}", run.summary);
    let dataset = &run.summary["dataset"];
    assert_eq!(dataset["scored"], 2);
    assert_eq!(dataset["gold_timeouts"], serde_json::json!([1]));
    assert_eq!(dataset["gold_errors"], serde_json::json!([3]));
    assert!(
        run.stdout.contains("2 scored") && run.stdout.contains("1 gold timeouts"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("times out on items [1]"),
        "{}",
        run.stdout
    );
    let note = run
        .report
        .lines()
        .find(|l| l.contains("times out on items"));
    assert!(
        note.is_some_and(|l| l.contains('1') && l.contains("not charged")),
        "{}",
        run.report
    );
}

#[test]
fn a_slow_prediction_is_still_charged_to_the_prediction() {
    let dir = tempfile::tempdir().unwrap();
    let predictions = [SLOW, "SELECT 1", "SELECT max(a) FROM t", "SELECT 1"];
    let run = eval(&dataset(dir.path(), &predictions));
    let outcomes: Vec<&str> = run
        .items
        .iter()
        .map(|i| i["outcome"]["ex"].as_str().unwrap())
        .collect();
    assert_eq!(
        outcomes,
        ["pred_timeout", "gold_timeout", "match", "gold_error"]
    );
    let accuracy = &run.summary["systems"]["sys"]["accuracy"]["ex"]["all"];
    assert_eq!(accuracy.as_f64(), Some(0.5));
}
