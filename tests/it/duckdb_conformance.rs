//! EX on DuckDB agrees, item for item, with the official Spider evaluator's decision run with
//! DuckDB's official Python client (recorded by tests/duckdb_official/record in
//! tests/data/duckdb/spider_dev_ex.jsonl): Spider dev loaded into DuckDB with `sqlgate load`, the
//! four published systems, every item (gold errors on DuckDB and the items of the missing
//! database included). The recording's digest of its inputs is checked first, so a change to
//! the data or the reference script fails until recorded again.

use crate::common;

use common::{arg, assert_exit, read_jsonl, shared_spider, sqlgate};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

const SYSTEMS: [&str; 4] = ["C3", "Claude", "GPT4Turbo", "RESDSQL"];

fn recording() -> Vec<Value> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    read_jsonl(&root.join("tests/data/duckdb/spider_dev_ex.jsonl"))
}

/// The digest tests/duckdb_official/inputs_digest.py writes: one `<path>\t<sha256>` line per
/// input (the reference script, the gold, the predictions, every SQLite database by db_id).
fn inputs_digest() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let spider = shared_spider();
    let mut inputs = vec![
        "tests/duckdb_official/ex_duckdb.py".to_string(),
        "dev_gold.sql".into(),
    ];
    inputs.extend(SYSTEMS.iter().map(|s| format!("predictions/{s}.txt")));
    let mut db_ids: Vec<String> = std::fs::read_dir(spider.join("database"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    db_ids.sort();
    inputs.extend(db_ids.iter().map(|d| format!("database/{d}/{d}.sqlite")));
    let mut lines = String::new();
    for name in inputs {
        let path = match name.starts_with("tests/") {
            true => root.join(&name),
            false => spider.join(&name),
        };
        let digest = Sha256::digest(std::fs::read(&path).unwrap());
        lines.push_str(&format!("{name}\t{digest:x}\n"));
    }
    format!("{:x}", Sha256::digest(lines.as_bytes()))
}

#[test]
fn ex_on_duckdb_matches_the_official_evaluator_with_duckdbs_python_client() {
    let recorded = recording();
    let (header, verdicts) = recorded.split_first().unwrap();
    assert_eq!(
        header["inputs_sha256"].as_str().unwrap(),
        inputs_digest(),
        "the inputs changed since the recording: run tests/duckdb_official/record"
    );
    assert_eq!(verdicts.len(), 4 * 1034);
    let work = tempfile::tempdir().unwrap();
    let spider = shared_spider();
    std::fs::create_dir(work.path().join("ddb")).unwrap();
    let gold_errors: Vec<String> = (verdicts.iter())
        .filter(|v| v["system"] == "C3" && v["exec"] == "gold_error")
        .map(|v| v["i"].to_string())
        .collect();
    let predictions: Vec<String> = (SYSTEMS.iter())
        .map(|s| {
            format!(
                "{{ name: {s}, path: {} }}",
                spider.join(format!("predictions/{s}.txt")).display()
            )
        })
        .collect();
    let config = common::config::write(
        work.path().join("sqlgate.yml"),
        &format!(
            "dataset: {{ kind: spider, gold: {}, databases: ddb, difficulty: none, skip_missing_databases: true, \
             allow_failing_golds: [{}], engine: {{ kind: duckdb }} }}\npredictions: [{}]\nmetrics: [ex]\n",
            spider.join("dev_gold.sql").display(),
            gold_errors.join(", "),
            predictions.join(", ")
        ),
    );
    let loaded = sqlgate(&[
        "load",
        "--config",
        arg(&config),
        "--from",
        arg(&spider.join("database")),
    ]);
    assert_exit(&loaded, 0);
    let ours: BTreeMap<(String, u64), String> = common::eval_items(&config, &[])
        .into_iter()
        .map(|r| {
            let key = (
                r["system"].as_str().unwrap().to_string(),
                r["index"].as_u64().unwrap(),
            );
            (key, r["outcome"]["ex"].as_str().unwrap().to_string())
        })
        .collect();
    let mut disagreements = Vec::new();
    for official in verdicts {
        let key = (
            official["system"].as_str().unwrap().to_string(),
            official["i"].as_u64().unwrap(),
        );
        let expected = match &official["exec"] {
            Value::String(outcome) => outcome.clone(),
            verdict if verdict == 1 => "match".into(),
            _ => "mismatch or pred_error".into(),
        };
        let mine = &ours[&key];
        let agrees = match expected.as_str() {
            "mismatch or pred_error" => {
                ["mismatch", "pred_error", "pred_timeout"].contains(&mine.as_str())
            }
            other => mine == other,
        };
        if !agrees {
            disagreements.push(format!("{key:?}: official {expected}, sqlgate {mine}"));
        }
    }
    assert_eq!(ours.len(), verdicts.len());
    assert!(
        disagreements.is_empty(),
        "{} disagreements:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
    let matches = verdicts.iter().filter(|v| v["exec"] == 1).count();
    assert_eq!(
        matches, 1960,
        "the recording's EX matches (C3 519, Claude 515, GPT4Turbo 470, RESDSQL 456)"
    );
}
