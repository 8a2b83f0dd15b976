//! SQLMorph's seven techniques and QAS end to end on the shared `concert_singer` database,
//! against an embedding server on 127.0.0.1 whose vectors are scripted so that every expected
//! value below can be derived by hand (the derivations are in the comments).

use crate::common;

use common::openai::{Recorded, Reply, Server};
use common::{read_jsonl, shared_spider, sqlgate};
use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};

/// (gold, prediction of system A; `None`: missing).
const ITEMS: [(&str, Option<&str>); 5] = [
    (
        "SELECT Name, Age FROM singer WHERE Country = 'France'",
        Some("SELECT Name AS full_name, Age AS years FROM singer WHERE Country = 'France'"),
    ),
    (
        "SELECT Name, Age FROM singer WHERE Age > 40",
        Some("SELECT Name, Age FROM singer WHERE Age > 30"),
    ),
    (
        "SELECT Name FROM stadium ORDER BY Capacity DESC LIMIT 3",
        Some("SELECT Name, Capacity FROM stadium ORDER BY Capacity DESC LIMIT 3"),
    ),
    ("SELECT count(*) FROM singer", None),
    (
        "SELECT Country FROM singer",
        Some("SELECT nope FROM singer"),
    ),
];

const TECHNIQUES: [&str; 7] = [
    "execution_accuracy",
    "exact_column_and_exact_cell",
    "exact_column_and_partial_cell",
    "semantic_column_and_exact_cell",
    "semantic_column_and_partial_cell",
    "no_column_and_partial_cell",
    "unified_column_and_semantic_row",
];

/// Names that identify a row of the results above.
const ROW_NAMES: [&str; 9] = [
    "Joe Sharp",
    "Timbaland",
    "Justin Brown",
    "Rose White",
    "John Nizinik",
    "Tribal King",
    "Hampden Park",
    "Somerset Park",
    "Stark's Park",
];

/// Dimensions: 0-8 one per row name, 9 per `N/A` cell, 10-13 column classes (name, age,
/// capacity, other), 14-15 SQL texts.
const DIMENSIONS: usize = 16;

fn unit(dimension: usize) -> Vec<f32> {
    let mut vector = vec![0.0; DIMENSIONS];
    vector[dimension] = 1.0;
    vector
}

/// The scripted embedding of one text:
/// - a column profile `column: NAME; ...` is its column's class: `Name` and `full_name` are one
///   class, `Age` and `years` another, so semantic alignment pairs them (cosine 1 > 0.7);
/// - a SQL text has a fixed vector: every gold query (1, 0); the predictions of items 0, 1, 2
///   (1, 1), (0.6, 0.8), (1, 0): cosines with the gold 0.7071, 0.6, 1;
/// - a unified row is its row name's unit vector (other rows: one shared vector, only ever
///   compared with themselves) plus one unit per `N/A` cell.
fn embedding(text: &str) -> Vec<f32> {
    if let Some(profile) = text.strip_prefix("column: ") {
        let name = profile.split(';').next().unwrap();
        let class = match name {
            "Name" | "full_name" => 10,
            "Age" | "years" => 11,
            "Capacity" => 12,
            _ => 13,
        };
        return unit(class);
    }
    if text.starts_with("SELECT") {
        let sql = |x: f32, y: f32| {
            let mut vector = vec![0.0; DIMENSIONS];
            vector[14] = x;
            vector[15] = y;
            vector
        };
        return match ITEMS.iter().position(|(_, p)| *p == Some(text)) {
            Some(0) => sql(1.0, 1.0),
            Some(1) => sql(0.6, 0.8),
            _ => sql(1.0, 0.0),
        };
    }
    let name = ROW_NAMES.iter().position(|n| text.contains(n));
    let mut vector = unit(name.unwrap_or(13));
    vector[9] = text.matches("N/A").count() as f32;
    vector
}

fn embeddings(request: &Recorded) -> Reply {
    assert_eq!(request.path, "/v1/embeddings");
    let inputs = request.body["input"].as_array().unwrap();
    let data: Vec<Json> = inputs
        .iter()
        .enumerate()
        .map(|(i, text)| json!({"index": i, "embedding": embedding(text.as_str().unwrap())}))
        .collect();
    Reply::ok(json!({"object": "list", "data": data}))
}

/// Writes gold, predictions (A as above, B = the gold) and a config scoring every technique and
/// QAS; `extra` is appended to the config.
fn write_inputs(dir: &Path, extra: &str) -> PathBuf {
    let gold: Vec<Json> = ITEMS
        .iter()
        .map(|(sql, _)| json!({"db_id": "concert_singer", "question": "?", "query": sql}))
        .collect();
    std::fs::write(dir.join("gold.json"), Json::Array(gold).to_string()).unwrap();
    let a: String = ITEMS
        .iter()
        .enumerate()
        .filter_map(|(id, (_, p))| Some(json!({"id": id, "sql": (*p)?}).to_string() + "\n"))
        .collect();
    let b: String = ITEMS
        .iter()
        .enumerate()
        .map(|(id, (g, _))| json!({"id": id, "sql": g}).to_string() + "\n")
        .collect();
    std::fs::write(dir.join("a.jsonl"), a).unwrap();
    std::fs::write(dir.join("b.jsonl"), b).unwrap();
    let config = format!(
        "dataset: {{ gold: gold.json, databases: '{}', difficulty: none }}\n\
         predictions:\n  - {{ name: A, path: a.jsonl, format: jsonl, allow_missing: true }}\n  - {{ name: B, path: b.jsonl, format: jsonl }}\n\
         metrics: [ex, {}, qas]\n{extra}\n",
        shared_spider().join("database").display(),
        TECHNIQUES.join(", ")
    );
    let path = dir.join("sqlgate.yml");
    std::fs::write(&path, config).unwrap();
    path
}

/// Runs `eval`; returns (stdout, JSONL lines, summary, report).
fn eval(config: &Path) -> (String, Vec<Json>, Json, String) {
    let dir = config.parent().unwrap();
    let out = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let output = common::eval_command(
        config,
        &[
            "--jsonl",
            &out("items.jsonl"),
            "--summary",
            &out("summary.json"),
            "--report",
            &out("report.md"),
            "--leaderboard",
            &out("board.json"),
            "--comment",
            "never",
            "--no-fail-on-regression",
        ],
    )
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    let summary = serde_json::from_str(&read("summary.json")).unwrap();
    (
        stdout,
        read_jsonl(&dir.join("items.jsonl")),
        summary,
        read("report.md"),
    )
}

fn line<'a>(lines: &'a [Json], system: &str, index: usize) -> &'a Json {
    lines
        .iter()
        .find(|l| l["system"] == system && l["index"] == index)
        .unwrap()
}

/// Asserts a value object `{"ex", "exp", "exr", "f1"}` to 1e-6.
fn assert_scores(value: &Json, expected: [f64; 4], context: &str) {
    for (key, want) in ["ex", "exp", "exr", "f1"].iter().zip(expected) {
        let got = value[key].as_f64().unwrap_or(f64::NAN);
        assert!(
            (got - want).abs() < 1e-6,
            "{context}: {key} = {got}, expected {want} in {value}"
        );
    }
}

const F1_3_4: f64 = 2.0 * 0.75 / 1.75;
const F1_1_2: f64 = 2.0 * 0.5 / 1.5;
const COS_45: f64 = std::f64::consts::FRAC_1_SQRT_2;

#[test]
fn every_technique_and_qas_match_hand_computed_values() {
    let server = Server::start(|request, _| embeddings(request));
    let work = tempfile::tempdir().unwrap();
    let config = write_inputs(
        work.path(),
        &format!(
            "embeddings: {{ base_url: '{}', model: toy }}",
            server.base_url
        ),
    );
    let (stdout, lines, summary, report) = eval(&config);

    // Item 0: the prediction renames both columns; the four rows are the same.
    // Exact names align nothing (0 of 8 cells); semantic alignment pairs Name/full_name and
    // Age/years (cosine 1) and matches all 8; cell sets ignore names; unified rows pad the four
    // names with N/A and share no column name with the gold, so coverage 0 zeroes every match.
    let a0 = &line(&lines, "A", 0)["metrics"];
    assert_eq!(a0["execution_accuracy"], json!({"ex": 1}));
    for (technique, scores) in [
        ("exact_column_and_exact_cell", [1.0, 0.0, 0.0, 0.0]),
        ("exact_column_and_partial_cell", [1.0, 0.0, 0.0, 0.0]),
        ("semantic_column_and_exact_cell", [1.0, 1.0, 1.0, 1.0]),
        ("semantic_column_and_partial_cell", [1.0, 1.0, 1.0, 1.0]),
        ("no_column_and_partial_cell", [1.0, 1.0, 1.0, 1.0]),
        ("unified_column_and_semantic_row", [1.0, 0.0, 0.0, 0.0]),
    ] {
        assert_scores(&a0[technique], scores, technique);
    }
    // Item 1: Age > 30 adds Timbaland (32) to the gold's three rows: 6 of 8 predicted cells and
    // all 6 gold cells match (EXP 3/4, EXR 1); unified rows match 3 of 4 at cosine 1.
    let a1 = &line(&lines, "A", 1)["metrics"];
    assert_eq!(a1["execution_accuracy"], json!({"ex": 0}));
    for technique in &TECHNIQUES[1..] {
        assert_scores(&a1[technique], [0.0, 0.75, 1.0, F1_3_4], technique);
    }
    // Item 2: an extra Capacity column. Aligned on Name, 3 rows match: 3 of 6 predicted cells,
    // 3 of 3 gold cells. Cell sets {name, capacity} vs {name}: Jaccard 1/2, 1 shared value each.
    // Unified rows over [Capacity, Name]: the gold's rows carry one N/A, so each pair has cosine
    // 1/sqrt(2), coverage 1: EXP = EXR = 0.7071.
    let a2 = &line(&lines, "A", 2)["metrics"];
    for technique in &TECHNIQUES[1..6] {
        assert_scores(&a2[technique], [0.0, 0.5, 1.0, F1_1_2], technique);
    }
    assert_scores(
        &a2["unified_column_and_semantic_row"],
        [0.0, COS_45, COS_45, COS_45],
        "unified",
    );
    // Item 3 missing, item 4 failing: every technique scores zero, with the outcome.
    for (index, outcome) in [(3, "missing"), (4, "pred_error")] {
        let record = line(&lines, "A", index);
        assert_eq!(record["outcome"]["no_column_and_partial_cell"], outcome);
        assert_scores(
            &record["metrics"]["semantic_column_and_partial_cell"],
            [0.0; 4],
            outcome,
        );
        assert_eq!(record["metrics"]["qas"], 0);
    }

    // QAS = (S_T + S_C) / 2. Item 0: same rows (S_T 1), S_C 0.7071. Item 1: cells in sorted row
    // order Joe 52 John 43 Rose 41 vs the same plus Timbaland 32: 2 insertions over 8 cells, S_T
    // 0.75, S_C 0.6. Item 2 (ORDER BY, order kept): 3 insertions over 6 cells, S_T 0.5, S_C 1.
    let qas = |index: usize| line(&lines, "A", index)["metrics"]["qas"].as_f64().unwrap();
    let components = |index: usize| line(&lines, "A", index)["qas_components"].clone();
    assert!((qas(0) - (1.0 + COS_45) / 2.0).abs() < 1e-6, "{}", qas(0));
    assert!((qas(1) - 0.675).abs() < 1e-6, "{}", qas(1));
    assert!((qas(2) - 0.75).abs() < 1e-6, "{}", qas(2));
    assert!((components(1)["s_t"].as_f64().unwrap() - 0.75).abs() < 1e-9);
    assert!((components(1)["s_c"].as_f64().unwrap() - 0.6).abs() < 1e-6);
    assert_eq!(components(1)["w"], 0.5);

    // The gold scores 1 everywhere.
    for index in 0..ITEMS.len() {
        let b = &line(&lines, "B", index)["metrics"];
        for technique in &TECHNIQUES[1..] {
            assert_scores(&b[technique], [1.0; 4], technique);
        }
        assert!((b["qas"].as_f64().unwrap() - 1.0).abs() < 1e-6);
    }

    // Summary: means of the sub-scores; the headline accuracy of a technique is its EX.
    let credit = &summary["systems"]["A"]["partial_credit"]["exact_column_and_partial_cell"];
    let mean_exp = (0.0 + 0.75 + 0.5) / 5.0;
    assert!((credit["exp"]["all"].as_f64().unwrap() - mean_exp).abs() < 1e-9);
    assert_eq!(
        summary["systems"]["A"]["accuracy"]["exact_column_and_partial_cell"]["all"],
        0.2
    );
    common::assert_contains(&stdout, &[".f1"]);
    common::assert_contains(
        &report,
        &[
            "Partial credit (SQLMorph)",
            "| A | semantic_column_and_partial_cell | F1 |",
        ],
    );

    assert_failure_scores(&summary, &report, &work.path().join("board.json"));

    // A re-run embeds nothing new: every text comes from the cache.
    let requests = server.count();
    eval(&config);
    assert_eq!(server.count(), requests);
}

#[test]
fn without_an_embedding_provider_the_semantic_metrics_are_unavailable() {
    let work = tempfile::tempdir().unwrap();
    let config = write_inputs(work.path(), "");
    let (stdout, lines, _, _) = eval(&config);
    let a1 = line(&lines, "A", 1);
    for metric in [
        "semantic_column_and_exact_cell",
        "semantic_column_and_partial_cell",
        "unified_column_and_semantic_row",
        "qas",
    ] {
        assert_eq!(a1["outcome"][metric], "unavailable", "{metric}");
        assert_eq!(a1["metrics"][metric], Json::Null, "{metric}");
        assert!(
            a1["error"][metric]
                .as_str()
                .unwrap()
                .contains("no `embeddings:` provider"),
            "{metric}"
        );
    }
    assert_scores(
        &a1["metrics"]["no_column_and_partial_cell"],
        [0.0, 0.75, 1.0, F1_3_4],
        "column-free technique without a provider",
    );
    common::assert_contains(&stdout, &["qas unavailable"]);
}

#[test]
fn a_sub_score_gates_against_the_baseline_and_bad_settings_are_refused() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    write_inputs(dir, "");
    let config = |name: &str, predictions: &str| {
        let text = format!(
            "dataset: {{ gold: gold.json, databases: '{}', difficulty: none }}\n\
             predictions:\n  - {{ name: A, path: {predictions}, format: jsonl, allow_missing: true }}\n\
             metrics: [ex, exact_column_and_partial_cell]\nreference: ex\n\
             baseline: {{ path: baseline.json }}\n\
             gate: {{ metric: exact_column_and_partial_cell.f1, max_drop_points: 10 }}\n",
            shared_spider().join("database").display()
        );
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    // The baseline's A is the gold (F1 1 on every item); the candidate's A is the weaker
    // system: mean F1 (0 + 6/7 + 2/3 + 0 + 0) / 5 = 30.5 %, a drop of 69.5 points.
    let base = config("base.yml", "b.jsonl");
    let update = sqlgate(&["baseline", "update", "--config", base.to_str().unwrap()]);
    common::assert_exit(&update, 0);
    let stored = std::fs::read_to_string(dir.join("baseline.json")).unwrap();
    assert!(
        stored.contains("exact_column_and_partial_cell.f1"),
        "the baseline keeps the sub-scores the gate needs"
    );
    let candidate = config("cand.yml", "a.jsonl");
    let report = dir.join("report.md");
    let output = common::eval(
        &candidate,
        &["--report", common::arg(&report), "--comment", "never"],
    );
    common::assert_exit(&output, 1);
    let report = std::fs::read_to_string(report).unwrap();
    common::assert_contains(&report, &["sqlgate failed", "-69.5"]);
    for (setting, complaint) in [
        ("gate: { metric: execution_accuracy.f1 }", "gate.metric"),
        ("gate: { metric: ex.f1 }", "gate.metric"),
        ("qas: { weight: 1.5 }", "qas.weight"),
    ] {
        let bad = write_inputs(dir, setting);
        let output = common::eval(&bad, &[]);
        assert_eq!(output.status.code(), Some(2), "{setting}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(complaint), "{setting}: {stderr}");
    }
}

/// The continuous scores on the items EX marks wrong (A's items 1-4; B has none): qas 0.675,
/// 0.75 and 0 twice (missing, failing), exact_column_and_partial_cell's F1 6/7, 2/3, 0, 0.
fn assert_failure_scores(summary: &Json, report: &str, board: &Path) {
    let a = &summary["systems"]["A"]["failure_scores"];
    assert!(summary["systems"]["B"].get("failure_scores").is_none());
    let qas = &a["qas"];
    // Sorted 0, 0, 0.675, 0.75. Type 8, h = (4 + 1/3) p + 1/3: Q1 at h = 17/12 lies between
    // the two zeros; the median at h = 5/2 is 0.675 / 2; Q3 at h = 43/12 is
    // 0.675 + 7/12 * 0.075 = 0.71875.
    let expected = [
        ("n", 4.0),
        ("mean", 1.425 / 4.0),
        ("min", 0.0),
        ("q1", 0.0),
        ("median", 0.3375),
        ("q3", 0.71875),
        ("max", 0.75),
    ];
    for (field, want) in expected {
        let got = qas[field].as_f64().unwrap();
        assert!((got - want).abs() < 1e-6, "qas {field}: {got} vs {want}");
    }
    // QAS lies in [-1, 1]: bins of 0.2, zero in bin 5, 0.675 and 0.75 in bin 8.
    assert_eq!(
        qas["histogram"],
        json!({"lower": -1.0, "upper": 1.0, "counts": [0, 0, 0, 0, 0, 2, 0, 0, 2, 0]})
    );
    let f1 = &a["exact_column_and_partial_cell.f1"];
    assert!((f1["mean"].as_f64().unwrap() - (6.0 / 7.0 + 2.0 / 3.0) / 4.0).abs() < 1e-6);
    assert_eq!(
        f1["histogram"]["counts"],
        json!([2, 0, 0, 0, 0, 0, 1, 0, 1, 0])
    );
    for binary in [
        "ex",
        "execution_accuracy.ex",
        "exact_column_and_partial_cell.ex",
    ] {
        assert!(a.get(binary).is_none(), "{binary} is not continuous");
    }
    let board: Json = serde_json::from_str(&std::fs::read_to_string(board).unwrap()).unwrap();
    let row = board["systems"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["system"] == "A")
        .unwrap();
    assert_eq!(row["failure_scores"], *a);
    let start = report.find("<details><summary>Continuous scores").unwrap();
    let section = &report[start..start + report[start..].find("</details>").unwrap()];
    insta::assert_snapshot!("failure_scores_section", section);
}
