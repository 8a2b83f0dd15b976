//! Spider 2.0-DBT's `duckdb_match`: the official profile equals the verdicts of the official
//! `eval_utils.py` (xlang-ai/Spider2 at e12c5f1e, run with DuckDB's Python client 1.5.6 and
//! pandas 2.2.3; recorded in tests/data/spider2_dbt/official_verdicts.jsonl, how in its README)
//! on every constructed case of tests/data/spider2_dbt/cases.jsonl; each case's digest and the
//! file's are checked first, so a changed case fails until recorded again.

use crate::common;

use common::read_jsonl;
use serde_json::Value;
use sha2::{Digest, Sha256};
use sqlgate::engine::duckdb::tables::{write_script, LockedFile};
use sqlgate::engine::exec::Limits;
use sqlgate::engine::spider2_dbt::{judge, Tables, Verdict};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/spider2_dbt")
}

/// The generous limits of these tests.
pub fn limits() -> Limits {
    Limits {
        timeout: Duration::from_secs(20),
        max_rows: 100_000,
        max_bytes: 64 << 20,
    }
}

/// One case's `condition_tabs`, `condition_cols` and `ignore_orders`.
pub fn settings(case: &Value) -> (Vec<String>, Vec<Vec<i64>>, Vec<bool>) {
    let list = |key: &str| case[key].as_array().unwrap().clone();
    let names = list("condition_tabs")
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .collect();
    let conditions = (list("condition_cols").iter())
        .map(|c| {
            c.as_array()
                .unwrap()
                .iter()
                .map(|i| i.as_i64().unwrap())
                .collect()
        })
        .collect();
    let orders = list("ignore_orders")
        .iter()
        .map(|o| o.as_bool().unwrap())
        .collect();
    (names, conditions, orders)
}

/// The verdicts of profile `sound` on every case, by id, on the files built from the cases.
pub fn verdicts(cases: &[Value], sound: bool) -> Vec<(String, Verdict)> {
    let dir = tempfile::tempdir().unwrap();
    let (gold, pred) = (
        dir.path().join("gold.duckdb"),
        dir.path().join("pred.duckdb"),
    );
    for (path, key) in [(&gold, "gold_sql"), (&pred, "pred_sql")] {
        let script: Vec<&str> = cases.iter().map(|c| c[key].as_str().unwrap()).collect();
        write_script(path, &script.join("\n")).unwrap();
    }
    let limits = limits();
    crate::common::duckdb_worker();
    let (gold, pred) = (
        LockedFile::open(&gold).unwrap(),
        LockedFile::open(&pred).unwrap(),
    );
    (cases.iter())
        .map(|case| {
            let (names, conditions, ignore_orders) = settings(case);
            let tables = Tables {
                names: &names,
                conditions: &conditions,
                ignore_orders: &ignore_orders,
            };
            let id = case["id"].as_str().unwrap().to_string();
            (id, judge(&gold, &pred, tables, &limits, sound))
        })
        .collect()
}

#[test]
fn the_official_profile_equals_eval_utils_duckdb_match_on_every_recorded_case() {
    let text = std::fs::read_to_string(data().join("cases.jsonl")).unwrap();
    let recorded = read_jsonl(&data().join("official_verdicts.jsonl"));
    let (header, expected) = recorded.split_first().unwrap();
    assert_eq!(
        header["cases_sha256"].as_str().unwrap(),
        format!("{:x}", Sha256::digest(text.as_bytes())),
        "cases.jsonl changed since the recording: record again (tests/data/spider2_dbt/README.md)"
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), expected.len());
    for (line, verdict) in lines.iter().zip(expected) {
        assert_eq!(
            verdict["case_sha256"].as_str().unwrap(),
            format!("{:x}", Sha256::digest(line.as_bytes()))
        );
    }
    let cases = read_jsonl(&data().join("cases.jsonl"));
    assert!(cases.len() >= 500);
    let mut wrong = Vec::new();
    let mut unscored = Vec::new();
    for (((id, verdict), official), case) in
        verdicts(&cases, false).iter().zip(expected).zip(&cases)
    {
        assert_eq!(id, official["id"].as_str().unwrap());
        if let Verdict::Unavailable(why) = verdict {
            // Named and left unscored: allowed only where the case says it may be (one-element
            // lists, STRUCT, MAP), and never silently.
            match case["unscored_ok"].as_bool() == Some(true) {
                true => unscored.push(format!("{id}: {why}")),
                false => wrong.push(format!(
                    "{id}: {verdict:?}, official {}",
                    official["official"]
                )),
            }
            continue;
        }
        let score = i64::from(*verdict == Verdict::Match);
        if score != official["official"].as_i64().unwrap()
            || matches!(verdict, Verdict::GoldFailure(_))
        {
            wrong.push(format!(
                "{id}: {verdict:?}, official {}",
                official["official"]
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {}:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
    eprintln!(
        "{} of {} cases unscored (named)",
        unscored.len(),
        cases.len()
    );
    // Most cases are decided, the list ones included: the unscored are the exception.
    assert!(unscored.len() * 10 < cases.len(), "{}", unscored.join("\n"));
}
