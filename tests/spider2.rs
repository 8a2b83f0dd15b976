//! Spider 2.0 conformance: `compare.profile: spider2` equals the official `compare_pandas_table`
//! / `compare_multi_pandas_table` item by item, run end to end by `sqlgate eval` on Spider
//! 2.0-lite's layout (task file, `spider2lite_eval.jsonl`, `gold/exec_result/*.csv`,
//! `gold/sql/*.sql`, local SQLite databases); `spider2-sound` differs exactly where rows are
//! scrambled (or where the official string sort misses a tolerance match). Reference values and
//! how they were made: tests/data/spider2/README.md.

mod common;

use common::{eval_items, read_jsonl, sqlgate};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

fn cases() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/spider2/cases")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

/// The cases laid out as Spider 2.0-lite ships them, with `profile`; returns the config path.
fn layout(dir: &Path, profile: &str) -> PathBuf {
    copy_dir(&cases(), dir);
    std::fs::create_dir_all(dir.join("localdb")).unwrap();
    for db in ["shop", "geo"] {
        let conn = rusqlite::Connection::open(dir.join(format!("localdb/{db}.sqlite"))).unwrap();
        let dump = std::fs::read_to_string(dir.join(format!("{db}.sql"))).unwrap();
        conn.execute_batch(&dump).unwrap();
    }
    let config = format!(
        "dataset:\n  kind: spider2\n  gold: spider2-lite.jsonl\n  databases: localdb\n  \
         gold_results: gold/exec_result\n  gold_sql: gold/sql\n  eval: gold/spider2lite_eval.jsonl\n  \
         difficulty: none\n\
         predictions:\n  - {{ name: cases, path: predictions.jsonl, format: jsonl }}\n\
         metrics: [ex]\ncompare: {{ profile: {profile} }}\n"
    );
    let path = dir.join("sqlgate.yml");
    std::fs::write(&path, config).unwrap();
    path
}

/// `sqlgate eval` under `profile`: (instance, ex, outcome) per item, and the reference lines.
fn run(profile: &str) -> (Vec<(String, f64, String)>, Vec<Json>) {
    let dir = tempfile::tempdir().unwrap();
    let lines = eval_items(&layout(dir.path(), profile), &[]);
    let reference = read_jsonl(&cases().join("reference.jsonl"));
    assert_eq!(lines.len(), reference.len());
    let verdicts = lines
        .iter()
        .zip(&reference)
        .map(|(line, official)| {
            let ex = line["metrics"]["ex"]
                .as_f64()
                .expect("every item is scored");
            let outcome = line["outcome"]["ex"].as_str().unwrap().to_string();
            (
                official["instance_id"].as_str().unwrap().to_string(),
                ex,
                outcome,
            )
        })
        .collect();
    (verdicts, reference)
}

#[test]
fn spider2_equals_the_official_compare_functions_item_by_item() {
    let (verdicts, reference) = run("spider2");
    assert!(verdicts.len() >= 45);
    for ((id, ex, outcome), official) in verdicts.iter().zip(&reference) {
        let expected = official["official"].as_f64().unwrap();
        assert_eq!(*ex, expected, "{id} ({}): {outcome}", official["what"]);
        if official.get("pred_error").is_some() {
            assert_eq!(outcome, "pred_error", "{id}");
        }
    }
    let matches = verdicts.iter().filter(|v| v.1 == 1.0).count();
    assert!((20..verdicts.len() - 10).contains(&matches), "{matches}");
}

#[test]
fn spider2_sound_differs_exactly_on_scrambled_rows_and_sort_misses() {
    let (official, _) = run("spider2");
    let (sound, reference) = run("spider2-sound");
    for ((id, ex, _), expected) in sound.iter().zip(&reference) {
        assert_eq!(
            *ex,
            expected["sound"].as_f64().unwrap(),
            "{id} ({})",
            expected["what"]
        );
    }
    let differ = |from: f64| -> Vec<&str> {
        official
            .iter()
            .zip(&sound)
            .filter(|(o, s)| o.1 == from && s.1 != from)
            .map(|(o, _)| o.0.as_str())
            .collect()
    };
    // Accepted officially, refused soundly: the values were scrambled across rows.
    assert_eq!(
        differ(1.0),
        ["local008", "local012", "local043", "local049"]
    );
    for (id, _, _) in &official {
        let what = reference
            .iter()
            .find(|r| r["instance_id"] == id.as_str())
            .unwrap();
        let scrambled = what["what"].as_str().unwrap().contains("scrambled");
        let ignore_order = !what["what"].as_str().unwrap().contains("order kept");
        assert_eq!(
            differ(1.0).contains(&id.as_str()),
            scrambled && ignore_order,
            "{id}"
        );
    }
    // Refused officially, accepted soundly: the string sort separated values within 1e-2.
    assert_eq!(differ(0.0), ["local019", "local032"]);
}

#[test]
fn the_contract_names_the_spider2_profile_in_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let config = layout(dir.path(), "spider2-sound");
    let summary = dir.path().join("summary.json");
    eval_items(&config, &["--summary", summary.to_str().unwrap()]);
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(text.contains("spider2-sound: every gold column"), "{text}");
}

/// Runs `sqlgate eval` on the layout after `edit`, expecting exit 2 with every `needles` in
/// the message.
fn refused(edit: impl FnOnce(&Path), needles: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let config = layout(dir.path(), "spider2");
    edit(dir.path());
    let output = sqlgate(&["eval", "--config", config.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    for needle in needles {
        assert!(stderr.contains(needle), "`{needle}` not in: {stderr}");
    }
}

fn rewrite(path: PathBuf, from: &str, to: &str) {
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{from}");
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

#[test]
fn bad_spider2_inputs_are_named() {
    refused(
        |d| rewrite(d.join("gold/exec_result/local004.csv"), "\n", "\nx,y,z\n"),
        &["local004.csv", "line 2", "fields"],
    );
    refused(
        |d| rewrite(d.join("gold/exec_result/local010.csv"), "name", "\"name"),
        &["local010.csv", "never closed"],
    );
    refused(
        |d| {
            let path = d.join("gold/spider2lite_eval.jsonl");
            rewrite(path, "\"condition_cols\": [0]", "\"condition_cols\": [7]")
        },
        &["spider2lite_eval.jsonl", "local010", "out of range"],
    );
    refused(
        |d| {
            let path = d.join("gold/spider2lite_eval.jsonl");
            rewrite(path, "\"ignore_order\": false", "\"ignore_order\": \"no\"")
        },
        &["spider2lite_eval.jsonl", "line 1", "ignore_order"],
    );
    refused(
        |d| std::fs::remove_file(d.join("gold/exec_result/local001.csv")).unwrap(),
        &["spider2-lite.jsonl", "local001", "no gold answer"],
    );
    refused(
        |d| rewrite(d.join("predictions.jsonl"), "local002", "local999"),
        &["predictions.jsonl", "line 2", "instance_id"],
    );
    refused(
        |d| {
            rewrite(
                d.join("sqlgate.yml"),
                "profile: spider2",
                "profile: spider-ts",
            )
        },
        &["compare.profile: spider2"],
    );
    refused(
        |d| {
            rewrite(
                d.join("sqlgate.yml"),
                "metrics: [ex]",
                "metrics: [ex, soft_f1]",
            )
        },
        &["soft_f1", "only `ex`"],
    );
    refused(
        |d| {
            rewrite(
                d.join("sqlgate.yml"),
                "  difficulty: none\n",
                "  difficulty: none\n  gold_csv: x\n",
            )
        },
        &["gold_csv"],
    );
}

#[test]
fn a_regressed_item_shows_the_stored_gold_rows() {
    let dir = tempfile::tempdir().unwrap();
    let config = layout(dir.path(), "spider2");
    let text = std::fs::read_to_string(&config).unwrap() + "baseline: { path: base.json }\n";
    std::fs::write(&config, text).unwrap();
    let update = sqlgate(&["baseline", "update", "--config", config.to_str().unwrap()]);
    assert_eq!(
        update.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&update.stderr)
    );
    let good = r#""id": "local001", "sql": "SELECT name, price FROM item ORDER BY id""#;
    rewrite(
        dir.path().join("predictions.jsonl"),
        good,
        r#""id": "local001", "sql": "SELECT 1""#,
    );
    let report = dir.path().join("report.md");
    let output = sqlgate(&[
        "eval",
        "--config",
        config.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "the regression fails the gate"
    );
    let report = std::fs::read_to_string(&report).unwrap();
    assert!(report.contains("-- gold result: local001.csv"), "{report}");
    assert!(
        report.contains("-- gold (local001.csv): 5 row(s)\n--   apple | 1.5\n"),
        "{report}"
    );
}
