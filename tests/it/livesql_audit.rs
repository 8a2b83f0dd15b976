//! The gold self-check of the state-changing kinds in `sqlgate audit` (issue 46, point 5): each
//! gold, judged as a prediction by the configured metrics, must pass its own checks; those that
//! do not are `gold-self-check` findings.

use crate::common;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/livesql")
}

/// The LiveSQLBench corpus as a project listing `metrics`: its 210 items, its four databases
/// built from their scripts, its predictions.
fn livesql_project(metrics: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    common::databases_from_scripts(&corpus_dir().join("db"), &dir.path().join("databases"));
    for file in ["items.jsonl", "predictions.jsonl"] {
        std::fs::copy(corpus_dir().join(file), dir.path().join(file)).unwrap();
    }
    let config = format!(
        "dataset:\n  kind: livesql\n  gold: items.jsonl\n  databases: databases\n  difficulty: field:category\n\
         predictions:\n  - {{ name: model, path: predictions.jsonl, format: livesql }}\n\
         metrics: [{metrics}]\nexecution: {{ timeout_ms: 30000, threads: 2 }}\n"
    );
    std::fs::write(dir.path().join("sqlgate.yml"), config).unwrap();
    dir
}

/// `sqlgate audit`'s findings in `root`, as JSON lines.
fn audit(root: &Path) -> Vec<Value> {
    let output =
        common::sqlgate_command(&["audit", "--config", "sqlgate.yml", "--jsonl", "audit.jsonl"])
            .current_dir(root)
            .output()
            .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    common::read_jsonl(&root.join("audit.jsonl"))
}

/// The instance ids of the items at the findings' indexes.
fn flagged(root: &Path, findings: &[Value]) -> BTreeSet<String> {
    let items = common::read_jsonl(&root.join("items.jsonl"));
    (findings.iter())
        .map(|f| {
            assert_eq!(f["kind"], "gold-self-check", "{f}");
            let index = f["index"].as_u64().unwrap() as usize;
            items[index]["instance_id"].as_str().unwrap().to_string()
        })
        .collect()
}

#[test]
fn the_audit_flags_exactly_the_golds_the_official_evaluator_fails_in_gold_mode() {
    let project = livesql_project("livesql");
    let findings = audit(project.path());
    let recorded = common::read_jsonl(&corpus_dir().join("official_verdicts.jsonl"));
    let failing: BTreeSet<String> = (recorded[1..].iter())
        .filter(|line| line["gold_status"] != "success")
        .map(|line| line["instance_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(failing.len(), 5);
    assert_eq!(flagged(project.path(), &findings), failing);
    for finding in &findings {
        common::assert_contains(
            finding["evidence"].as_str().unwrap(),
            &["as a prediction, `livesql` scores it "],
        );
    }
}

#[test]
fn a_gold_broken_in_the_items_file_is_flagged_by_each_profile_and_nothing_else_moves() {
    let project = livesql_project("livesql, livesql_sound");
    let before = flagged(project.path(), &audit(project.path()));
    let path = project.path().join("items.jsonl");
    let mut items = common::read_jsonl(&path);
    let broken = (items.iter())
        .position(|i| !before.contains(i["instance_id"].as_str().unwrap()))
        .unwrap();
    items[broken]["sol_sql"] = serde_json::json!(["SELECT * FROM no_such_table"]);
    let text: String = items.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    let findings = audit(project.path());
    let id = items[broken]["instance_id"].as_str().unwrap().to_string();
    let mut expected = before.clone();
    expected.insert(id);
    assert_eq!(flagged(project.path(), &findings), expected);
    let of_broken: Vec<&str> = (findings.iter())
        .filter(|f| f["index"] == broken)
        .map(|f| f["evidence"].as_str().unwrap())
        .collect();
    assert_eq!(of_broken.len(), 2, "{of_broken:?}");
    common::assert_contains(of_broken[0], &["`livesql` scores it pred_error"]);
    common::assert_contains(of_broken[1], &["`livesql_sound` scores it pred_error"]);
}

/// The EvalBench corpus as a project (`tests/data/evalbench`).
fn evalbench_project() -> tempfile::TempDir {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/evalbench");
    let dir = tempfile::tempdir().unwrap();
    common::databases_from_scripts(&corpus.join("db"), &dir.path().join("databases"));
    std::fs::copy(corpus.join("items.json"), dir.path().join("items.json")).unwrap();
    std::fs::copy(
        corpus.join("predictions.jsonl"),
        dir.path().join("model.jsonl"),
    )
    .unwrap();
    let config = "dataset:\n  kind: evalbench\n  gold: items.json\n  databases: databases\n  difficulty: field:query_type\npredictions:\n  - { name: model, path: model.jsonl, format: livesql }\nmetrics: [evalbench_sound, evalbench]\nexecution: { timeout_ms: 5000, threads: 2 }\n";
    std::fs::write(dir.path().join("sqlgate.yml"), config).unwrap();
    dir
}

#[test]
fn an_evalbench_gold_that_fails_against_itself_is_flagged() {
    // EvalBench runs the prediction, then the gold, on one database: a gold whose first run
    // leaves an object behind (a `dml` gold's CREATE before its first INSERT / UPDATE / DELETE
    // is committed at once; a view survives a `ddl` item's reset) fails `evalbench` when it
    // runs again as the gold, and nothing else does (`evalbench_sound`, each side on its own
    // copy, passes every gold).
    let project = evalbench_project();
    let findings = audit(project.path());
    let items: Vec<Value> =
        serde_json::from_slice(&std::fs::read(project.path().join("items.json")).unwrap()).unwrap();
    let leaves_an_object = |item: &Value| {
        let gold = item["golden_sql"]["sqlite"][0]
            .as_str()
            .unwrap()
            .to_uppercase();
        let first_word = gold.split_whitespace().next().unwrap_or("");
        match item["query_type"].as_str().unwrap() {
            "dml" => ["CREATE", "ALTER", "DROP"].contains(&first_word),
            "ddl" => gold.contains("CREATE VIEW"),
            _ => false,
        }
    };
    let expected: BTreeSet<u64> = (items.iter().enumerate())
        .filter(|(_, item)| leaves_an_object(item))
        .map(|(index, _)| index as u64)
        .collect();
    assert_eq!(expected.len(), 3);
    let found: BTreeSet<u64> = (findings.iter())
        .map(|f| {
            assert_eq!(f["kind"], "gold-self-check", "{f}");
            common::assert_contains(f["evidence"].as_str().unwrap(), &["already exists"]);
            f["index"].as_u64().unwrap()
        })
        .collect();
    assert_eq!(found, expected);
}
