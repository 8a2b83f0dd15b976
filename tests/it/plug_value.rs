//! `compare.plug_value` (the official `--plug_value`): a prediction whose only fault is its
//! values is right once the gold's values are plugged into its value slots, a prediction that is
//! wrong whatever its values stays wrong, and one with too many ways to fill its slots is a
//! reported error, not an endless run. EX and TS agree.

use crate::common;

use common::eval_items;
use std::path::Path;

const GOLD: &str = "SELECT Name FROM singer WHERE Citizenship = 'France' AND Birth_Year > 1940";

/// (prediction, verdict without plug_value, verdict and outcome with it)
const CASES: [(&str, i64, i64, &str); 3] = [
    (
        "SELECT Name FROM singer WHERE Citizenship = 'france' AND Birth_Year > 1900",
        0,
        1,
        "match",
    ),
    (
        "SELECT Name FROM singer WHERE Citizenship != 'Germany' AND Birth_Year > 1900",
        0,
        0,
        "mismatch",
    ),
    (
        "SELECT Name FROM singer WHERE Singer_ID IN (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)",
        0,
        0,
        "pred_error",
    ),
];

fn run(plug_value: bool) -> Vec<serde_json::Value> {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/spider-mini");
    let work = tempfile::tempdir().unwrap();
    let suite = work.path().join("suite/singer");
    std::fs::create_dir_all(&suite).unwrap();
    std::fs::copy(
        example.join("database/singer/singer.sqlite"),
        suite.join("singer.sqlite"),
    )
    .unwrap();
    std::fs::write(
        work.path().join("gold.sql"),
        format!("{GOLD}\tsinger\n").repeat(CASES.len()),
    )
    .unwrap();
    let predictions: Vec<&str> = CASES.iter().map(|c| c.0).collect();
    std::fs::write(work.path().join("preds.txt"), predictions.join("\n")).unwrap();
    std::fs::write(
        work.path().join("sqlgate.yml"),
        format!(
            "dataset: {{ gold: gold.sql, databases: {}, difficulty: none }}\n\
             suite: {{ kind: directory, path: suite }}\n\
             compare: {{ plug_value: {plug_value} }}\n\
             predictions: [{{ name: m, path: preds.txt }}]\nmetrics: [ex, ts]\n",
            example.join("database").display()
        ),
    )
    .unwrap();
    eval_items(&work.path().join("sqlgate.yml"), &[])
}

#[test]
fn gold_values_are_plugged_into_the_prediction_only_when_asked() {
    let plain = run(false);
    let plugged = run(true);
    for (i, (prediction, without, with, outcome)) in CASES.iter().enumerate() {
        for metric in ["ex", "ts"] {
            assert_eq!(
                plain[i]["metrics"][metric], *without,
                "{metric}: {prediction}"
            );
            assert_eq!(
                plugged[i]["metrics"][metric], *with,
                "{metric}: {prediction}"
            );
            assert_eq!(
                plugged[i]["outcome"][metric], *outcome,
                "{metric}: {prediction}"
            );
        }
    }
    assert!(plugged[2]["error"]["ex"]
        .as_str()
        .unwrap()
        .contains("2048 ways to fill the prediction's value slots exceed the limit of 1024"));
}
