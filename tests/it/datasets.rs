//! Several datasets in one config (`datasets:`): the bundled Spider slice (examples/spider-mini,
//! 157 items) and the BIRD mini-dev slice (tests/data/bird/minidev, 122 items) scored in one run,
//! with per-dataset gates, the macro-average gate, a baseline keyed by dataset, a dataset the
//! baseline lacks, and the config errors of `datasets`.

use crate::common;
use crate::junit_schema;

use common::sqlgate;
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

/// EX matches of the one system on each dataset: C3 on the Spider slice (spider-ts profile), the
/// GPT-4-turbo predictions on the BIRD slice (bird profile: 103 as the official mini-dev script
/// counts them, tests/data/bird/minidev/reference.jsonl, which tests/it/bird.rs checks per item).
const SPIDER_MATCHES: f64 = 149.0;
const SPIDER_ITEMS: f64 = 157.0;
const BIRD_MATCHES: f64 = 103.0;
const BIRD_ITEMS: f64 = 122.0;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Copies the Spider example to `dir/spider` and lays the BIRD mini-dev slice out as BIRD ships
/// it in `dir/bird`.
fn lay_out(dir: &Path) {
    let example = root().join("examples/spider-mini");
    common::copy_tree(&example.join("database"), &dir.join("spider/database"));
    for file in ["dev_gold.sql", "tables.json", "predictions/C3.txt"] {
        let target = dir.join("spider").join(file);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(example.join(file), target).unwrap();
    }
    let bird = root().join("tests/data/bird/minidev");
    common::databases_from_scripts(&bird, &dir.join("bird/dev_databases"));
    for file in ["dev.json", "predictions.json"] {
        std::fs::copy(bird.join(file), dir.join("bird").join(file)).unwrap();
    }
}

const SPIDER_ENTRY: &str = "  - name: spider\n    dataset: { gold: spider/dev_gold.sql, tables: spider/tables.json, databases: spider/database }\n    predictions: [{ name: model, path: spider/predictions/C3.txt }]\n";
const BIRD_ENTRY: &str = "  - name: bird\n    dataset: { kind: bird, gold: bird/dev.json, databases: bird/dev_databases, difficulty: 'field:difficulty' }\n    compare: { profile: bird }\n    predictions: [{ name: model, path: bird/predictions.json, format: bird-json, allow_missing: true }]\n";

/// `baseline update` of `config` over the two datasets: it succeeds and counts one system in
/// each of two datasets as such, not as two systems.
fn update_two_datasets(config: &str) {
    let update = sqlgate(&["baseline", "update", "--config", config]);
    common::assert_exit(&update, 0);
    common::assert_contains(
        &String::from_utf8_lossy(&update.stdout),
        &["(1 system × 2 datasets, commit "],
    );
}

/// A fresh folder with the two datasets laid out ([`lay_out`]).
fn laid_out() -> tempfile::TempDir {
    let work = tempfile::tempdir().unwrap();
    lay_out(work.path());
    work
}

/// Writes `sqlgate.yml` with the given `datasets` entries and `gate` section.
fn write_config(dir: &Path, entries: &str, gate: &str) -> String {
    let path = dir.join("sqlgate.yml");
    std::fs::write(
        &path,
        format!(
            "datasets:\n{entries}metrics: [ex]\ncompare: {{ profile: spider-ts }}\n\
             baseline: {{ path: baseline.json }}\ngate: {gate}\nreport: {{ output: report.md }}\n"
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

/// Runs `sqlgate` and asserts its exit code.
fn run(args: &[&str], code: i32) -> String {
    let output = sqlgate(args);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(code), "{args:?}: {stderr}");
    stderr
}

/// `eval` with `--summary` and `--jsonl`; returns the summary and the per-item lines.
fn eval(dir: &Path, config: &str, code: i32) -> (Json, Vec<Json>) {
    let summary = dir.join("summary.json");
    let jsonl = dir.join("items.jsonl");
    run(
        &[
            "eval",
            "--config",
            config,
            "--summary",
            summary.to_str().unwrap(),
            "--jsonl",
            jsonl.to_str().unwrap(),
        ],
        code,
    );
    let summary = serde_json::from_str(&std::fs::read_to_string(summary).unwrap()).unwrap();
    (summary, common::read_jsonl(&jsonl))
}

/// Rewrites the first `count` Spider predictions as a query that is wrong everywhere.
fn break_spider(dir: &Path, count: usize) {
    let path = dir.join("spider/predictions/C3.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = (text.lines().enumerate())
        .map(|(i, line)| if i < count { "SELECT 'wrong'" } else { line })
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn two_datasets_one_run_per_dataset_gates_and_the_macro_average() {
    let work = laid_out();
    let dir = work.path();
    let entries = format!("{SPIDER_ENTRY}{BIRD_ENTRY}");
    let gate = "{ metric: ex, max_drop_points: 5.0, max_macro_drop_points: 1.0 }";
    let config = write_config(dir, &entries, gate);
    update_two_datasets(&config);
    let baseline: Json =
        serde_json::from_slice(&std::fs::read(dir.join("baseline.json")).unwrap()).unwrap();
    let sections = baseline["datasets"].as_object().unwrap();
    assert_eq!(sections.keys().collect::<Vec<_>>(), ["spider", "bird"]);
    assert_eq!(
        sections["spider"]["systems"]["model"]
            .as_array()
            .unwrap()
            .len(),
        157
    );
    assert_eq!(
        sections["bird"]["systems"]["model"]
            .as_array()
            .unwrap()
            .len(),
        122
    );

    // Unchanged predictions: every gate passes, the macro-average is the mean of the two EX.
    let (summary, lines) = eval(dir, &config, 0);
    assert_eq!(
        summary["dataset_names"],
        serde_json::json!(["spider", "bird"])
    );
    assert_eq!(summary["gate"]["passed"], true);
    let spider_ex = SPIDER_MATCHES / SPIDER_ITEMS;
    let bird_ex = BIRD_MATCHES / BIRD_ITEMS;
    let cell = &summary["macro_average"]["systems"][0];
    assert_eq!(cell["system"], "model");
    assert!(close(
        cell["candidate"].as_f64().unwrap(),
        (spider_ex + bird_ex) / 2.0
    ));
    assert!(close(
        cell["baseline"].as_f64().unwrap(),
        (spider_ex + bird_ex) / 2.0
    ));
    assert_eq!(cell["delta_points"], 0.0);
    assert_eq!(cell["threshold"], 1.0);
    assert!(close(
        cell["datasets"]["bird"]["candidate"].as_f64().unwrap(),
        bird_ex
    ));
    let spider = &summary["datasets"]["spider"];
    assert_eq!(spider["gate"]["passed"], true, "{spider}");
    assert_eq!(summary["datasets"]["bird"]["gate"]["passed"], true);
    let per_dataset = |name: &str| lines.iter().filter(|l| l["dataset"] == name).count();
    assert_eq!((per_dataset("spider"), per_dataset("bird")), (157, 122));
    assert!(lines
        .iter()
        .all(|l| l.as_object().unwrap().keys().next().unwrap() == "system"));
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.starts_with("<!-- sqlgate:"), "{report}");
    common::assert_contains(
        &report,
        &["## ✅ sqlgate passed: 2 datasets, no gated cell changed\n"],
    );
    common::assert_contains(
        &report,
        &["| model | 94.9 | 84.4 | 89.7 | 89.7 | +0.0 | – | ✅ |"],
    );
    assert!(report.contains("### Dataset `spider`") && report.contains("### Dataset `bird`"));
    assert_eq!(report.matches("<!-- sqlgate:").count(), 1, "one marker");

    // The leaderboard: each dataset's, and the systems ranked by their macro-average.
    let board = dir.join("board.json");
    run(
        &[
            "eval",
            "--config",
            &config,
            "--leaderboard",
            board.to_str().unwrap(),
        ],
        0,
    );
    let board: Json = serde_json::from_slice(&std::fs::read(&board).unwrap()).unwrap();
    assert_eq!(
        board["dataset_names"],
        serde_json::json!(["spider", "bird"])
    );
    assert_eq!(board["reference"], "ex");
    let spider_board = &board["datasets"]["spider"]["systems"];
    assert_eq!(spider_board[0]["system"], "model", "{board}");
    let current: Vec<&Json> = (board["macro_average"].as_array().unwrap().iter())
        .filter(|row| row["from_baseline"] == false)
        .collect();
    assert_eq!(current.len(), 1, "{board}");
    assert_eq!(
        (&current[0]["system"], &current[0]["rank"]),
        (&"model".into(), &1.into())
    );
    assert!(close(
        current[0]["accuracy"].as_f64().unwrap(),
        (spider_ex + bird_ex) / 2.0
    ));
    assert!(close(
        current[0]["datasets"]["bird"].as_f64().unwrap(),
        bird_ex
    ));

    // One Spider item that matched now fails: a pass whose heading names the dataset and the
    // cell that changed, with the counts and why it passed below.
    break_spider(dir, 1);
    eval(dir, &config, 0);
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(
        lines[1..4],
        [
            "## ✅ sqlgate passed: 2 datasets, largest change spider model ex 94.9 -&gt; 94.3 (-0.6)",
            "",
            "1 regressed / 0 fixed, drop 0.6 &lt;= allowed 5.0",
        ],
        "{report}"
    );

    // Four Spider items that matched now fail: Spider drops 4/157 = 2.5 points, within its 5.0,
    // but the macro-average drops 1.3 points, more than its 1.0.
    break_spider(dir, 4);
    let (summary, _) = eval(dir, &config, 1);
    let spider_now = (SPIDER_MATCHES - 4.0) / SPIDER_ITEMS;
    assert_eq!(summary["datasets"]["spider"]["gate"]["passed"], true);
    assert_eq!(summary["datasets"]["bird"]["gate"]["passed"], true);
    let cell = &summary["macro_average"]["systems"][0];
    assert!(close(
        cell["candidate"].as_f64().unwrap(),
        (spider_now + bird_ex) / 2.0
    ));
    let drop = 100.0 * (spider_ex - spider_now) / 2.0;
    assert!(
        close(-cell["delta_points"].as_f64().unwrap(), drop),
        "{cell}"
    );
    assert_eq!(cell["failed"], true);
    assert_eq!(
        summary["gate"]["reasons"],
        serde_json::json!([
            "model: macro-average ex dropped 1.3 points (89.7 -> 88.4 over 2 datasets), more than the allowed 1.0"
        ])
    );
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.contains("## ❌ sqlgate failed: model: macro-average ex dropped 1.3 points"));
    common::assert_contains(
        &report,
        &["| model | 92.4 | 84.4 | 88.4 | 89.7 | -1.3 | – | ❌ |"],
    );

    // JUnit: a suite per dataset (its cells pass) and the macro-average's, which fails.
    let junit = dir.join("junit.xml");
    run(
        &[
            "eval",
            "--config",
            &config,
            "--junit",
            junit.to_str().unwrap(),
        ],
        1,
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    let cases = junit_schema::validate(&xml);
    common::assert_contains(
        &xml,
        &[
            "<testsuite name=\"sqlgate gate: spider\"",
            "<testsuite name=\"sqlgate gate: bird\"",
            "classname=\"sqlgate.gate.bird\"",
        ],
    );
    let failed: Vec<&str> = (cases.iter())
        .filter(|(_, failed)| *failed)
        .map(|(name, _)| name.as_str())
        .collect();
    assert_eq!(failed, ["model: macro-average ex"], "{xml}");
    assert!(
        cases
            .iter()
            .any(|(name, _)| name == "model vs model: ex on all"),
        "{xml}"
    );
}

#[test]
fn significance_per_dataset_and_holm_over_the_datasets() {
    let work = laid_out();
    let dir = work.path();
    let entries = format!("{SPIDER_ENTRY}{BIRD_ENTRY}");
    let gate =
        "{ metric: ex, max_drop_points: 0.0, significance: { test: mcnemar-exact, alpha: 0.05 } }";
    let config = write_config(dir, &entries, gate);
    update_two_datasets(&config);
    // The first ten Spider predictions turn wrong; C3 had items 6 and 7 wrong already, so eight
    // regress and none is fixed: McNemar p = 2 * 0.5^8 on Spider; the BIRD predictions are
    // unchanged (p = 1). Holm over the two datasets doubles the smaller.
    break_spider(dir, 10);
    let (summary, _) = eval(dir, &config, 1);
    let spider = &summary["datasets"]["spider"]["gate"];
    assert_eq!(spider["passed"], false, "{spider}");
    assert_eq!(summary["datasets"]["bird"]["gate"]["passed"], true);
    let cell = &summary["macro_average"]["systems"][0];
    let p_spider = 2.0 * 0.5f64.powi(8);
    assert!(close(
        cell["datasets"]["spider"]["p_value"].as_f64().unwrap(),
        p_spider
    ));
    assert_eq!(cell["datasets"]["bird"]["p_value"], 1.0);
    assert!(
        close(cell["p_adjusted"].as_f64().unwrap(), 2.0 * p_spider),
        "{cell}"
    );
    assert_eq!(cell["failed"], true);
    let reasons: Vec<&str> = (summary["gate"]["reasons"].as_array().unwrap().iter())
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert!(
        reasons[0].starts_with("dataset `spider`: model: "),
        "{reasons:?}"
    );
    assert!(
        reasons[0].contains("(94.9 -> 89.8 on 157 items; 8 regressed, 0 fixed;"),
        "{reasons:?}"
    );
    assert_eq!(
        reasons[1],
        "model: macro-average ex dropped 2.6 points (89.7 -> 87.1 over 2 datasets), more than the allowed 0.0"
    );
}

#[test]
fn a_dataset_the_baseline_lacks_is_reported_as_not_compared() {
    let work = laid_out();
    let dir = work.path();
    let gate = "{ metric: ex, max_drop_points: 0.0 }";
    let config = write_config(dir, SPIDER_ENTRY, gate);
    run(&["baseline", "update", "--config", &config], 0);
    let config = write_config(dir, &format!("{SPIDER_ENTRY}{BIRD_ENTRY}"), gate);
    let (summary, _) = eval(dir, &config, 0);
    let note = format!(
        "dataset `bird` is not in the baseline {}: nothing compared for it (a new dataset is \
         compared once `sqlgate baseline update` has stored it)",
        dir.join("baseline.json").display()
    );
    let notes = summary["gate"]["notes"].as_array().unwrap();
    assert_eq!(notes[0], note.as_str());
    assert_eq!(
        notes[1],
        "macro-average not compared: the baseline holds no results for `bird` (new datasets are compared once the baseline holds them)"
    );
    assert_eq!(summary["macro_average"]["systems"], serde_json::json!([]));
    assert_eq!(summary["datasets"]["spider"]["gate"]["passed"], true);
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    common::assert_contains(&report, &["- dataset `bird` is not in the baseline"]);
}

#[test]
fn a_one_dataset_baseline_is_refused_by_a_config_with_datasets() {
    let work = laid_out();
    let dir = work.path();
    std::fs::copy(
        root().join("examples/spider-mini/baseline.json"),
        dir.join("baseline.json"),
    )
    .unwrap();
    let config = write_config(dir, SPIDER_ENTRY, "{ metric: ex }");
    let stderr = run(&["eval", "--config", &config], 2);
    common::assert_contains(&stderr, &["this baseline holds one dataset (made by a config with `dataset:`), but the config names several (`datasets:`)"]);
}

#[test]
fn bad_datasets_input_names_the_key_and_exits_2() {
    let work = laid_out();
    let dir = work.path();
    let cases = [
        (
            format!("datasets:\n{SPIDER_ENTRY}{}", SPIDER_ENTRY),
            "`datasets[1].name`: `spider` is already the name of `datasets[0]`; each dataset needs its own name",
        ),
        (
            format!("dataset: {{ gold: spider/dev_gold.sql, databases: spider/database }}\ndatasets:\n{SPIDER_ENTRY}"),
            "`dataset` and `datasets` together",
        ),
        (
            "datasets: []\n".to_string(),
            "`datasets` is empty: name at least one dataset, or use `dataset:`",
        ),
        (
            format!("datasets:\n{}    colour: red\n", SPIDER_ENTRY),
            "datasets[0]: unknown field `colour`, expected one of `name`, `dataset`, `predictions`, `suite`, `compare`",
        ),
        (
            format!("datasets:\n{SPIDER_ENTRY}predictions: [{{ path: p.txt }}]\n"),
            "`predictions` beside `datasets`: each `datasets` entry names its own `predictions`",
        ),
        (
            format!("datasets:\n{SPIDER_ENTRY}gate: {{ must_pass: [3] }}\n"),
            "`gate.must_pass` and `gate.accept` name item indexes of one dataset",
        ),
        (
            format!("datasets:\n{SPIDER_ENTRY}audit: {{ overrides: overrides.jsonl }}\n"),
            "`audit.overrides` and `audit.dialects` name items of one dataset: with `datasets`, \
             give them in that dataset's entry (`datasets[i].audit`)",
        ),
        (
            format!("datasets:\n{}", SPIDER_ENTRY.replace("spider/database", "nowhere")),
            "`datasets` entry `spider`: `dataset.databases`",
        ),
        (
            "dataset: { gold: spider/dev_gold.sql, databases: spider/database }\npredictions: [{ path: spider/predictions/C3.txt }]\ngate: { max_macro_drop_points: 1.0 }\n".to_string(),
            "`gate.max_macro_drop_points` gates the macro-average over `datasets`",
        ),
    ];
    for (text, expected) in cases {
        let path = dir.join("bad.yml");
        std::fs::write(&path, &text).unwrap();
        let stderr = run(&["eval", "--config", path.to_str().unwrap()], 2);
        assert!(stderr.contains(expected), "{text}\n---\n{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    let config = write_config(dir, SPIDER_ENTRY, "{ metric: ex }");
    let scatter = dir.join("scatter.svg");
    let stderr = run(
        &[
            "eval",
            "--config",
            &config,
            "--scatter",
            scatter.to_str().unwrap(),
        ],
        2,
    );
    common::assert_contains(&stderr, &["`--scatter` is written for one dataset only"]);
}

/// The outcome of item `index` of `dataset` in the per-item lines of an `eval`.
fn ex_outcome<'a>(items: &'a [Json], dataset: &str, index: u64) -> &'a str {
    let item = items
        .iter()
        .find(|i| i["dataset"] == dataset && i["index"] == index)
        .unwrap_or_else(|| panic!("no item {index} of {dataset}"));
    item["outcome"]["ex"].as_str().unwrap()
}

#[test]
fn each_dataset_has_its_own_overrides_and_audit() {
    let work = laid_out();
    let dir = work.path();
    let excluded = serde_json::json!({"index": 0, "exclude": true, "reason": "spider's own"});
    std::fs::write(dir.join("spider/overrides.jsonl"), format!("{excluded}\n")).unwrap();
    let spider = format!("{SPIDER_ENTRY}    audit: {{ overrides: spider/overrides.jsonl }}\n");
    let config = write_config(dir, &format!("{spider}{BIRD_ENTRY}"), "{ metric: ex }");
    run(&["baseline", "update", "--config", &config], 0);
    let (_, items) = eval(dir, &config, 0);
    // The override names item 0 of Spider only: BIRD's item 0 is scored.
    assert_eq!(ex_outcome(&items, "spider", 0), "skipped");
    assert_ne!(ex_outcome(&items, "bird", 0), "skipped");

    let (jsonl, report) = (dir.join("audit.jsonl"), dir.join("audit.md"));
    let output = sqlgate(&[
        "audit",
        "--config",
        &config,
        "--jsonl",
        jsonl.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    let spider_at = stdout.find("dataset `spider`:\n").expect("spider's part");
    let bird_at = stdout.find("dataset `bird`:\n").expect("bird's part");
    assert!(spider_at < bird_at, "{stdout}");
    assert!(
        stdout.contains("gold audit: ") && stdout.matches("gold audit: ").count() == 2,
        "{stdout}"
    );
    let findings = common::read_jsonl(&jsonl);
    for name in ["spider", "bird"] {
        assert!(
            findings.iter().any(|f| f["dataset"] == name),
            "no finding names {name}"
        );
    }
    assert!(findings
        .iter()
        .all(|f| f["index"].is_u64() && f["kind"].is_string()));
    let section = std::fs::read_to_string(&report).unwrap();
    assert!(
        section.starts_with("## Gold audit\n\n### Dataset `spider`\n")
            && section.contains("\n### Dataset `bird`\n")
            && section.contains("#### Reviewed gold overrides")
            && section.contains("| 0 | excluded | spider's own |"),
        "{section}"
    );
}

#[test]
fn shards_are_keyed_by_dataset_and_merge_to_the_unsharded_run() {
    let work = laid_out();
    let dir = work.path();
    let config = write_config(
        dir,
        &format!("{SPIDER_ENTRY}{BIRD_ENTRY}"),
        "{ metric: ex, max_drop_points: 0.0 }",
    );
    run(&["baseline", "update", "--config", &config], 0);
    break_spider(dir, 3);
    let (single, single_lines) = eval(dir, &config, 1);
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    for shard in ["1/2", "2/2"] {
        let file = path(&format!("shard-{}.jsonl", &shard[..1]));
        run(
            &[
                "eval", "--config", &config, "--shard", shard, "--jsonl", &file,
            ],
            0,
        );
    }
    let shards: Vec<String> = ["1.spider", "1.bird", "2.spider", "2.bird"]
        .iter()
        .map(|s| path(&format!("shard-{s}.jsonl")))
        .collect();
    let header: Json = serde_json::from_str(
        std::fs::read_to_string(&shards[1])
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(header["sqlgate_shard"]["dataset"], "bird");
    let (summary, jsonl) = (path("merged.json"), path("merged.jsonl"));
    let mut args = vec![
        "merge",
        "--config",
        &config,
        "--summary",
        &summary,
        "--jsonl",
        &jsonl,
    ];
    args.extend(shards.iter().map(String::as_str));
    run(&args, 1);
    let merged: Json = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    assert_eq!(merged["macro_average"], single["macro_average"]);
    assert_eq!(merged["gate"], single["gate"]);
    assert_eq!(common::read_jsonl(Path::new(&jsonl)), single_lines);
    // Without one dataset's second shard the merge stops, naming what is missing.
    let mut args = vec!["merge", "--config", &config, "--summary", &summary];
    args.extend(shards[..3].iter().map(String::as_str));
    let stderr = run(&args, 2);
    common::assert_contains(&stderr, &["merge: shards [2] of 2 are missing"]);
    // A one-dataset shard is not a shard of this config.
    let one = dir.join("one.yml");
    std::fs::write(
        &one,
        "dataset: { gold: spider/dev_gold.sql, tables: spider/tables.json, databases: spider/database }\npredictions: [{ name: model, path: spider/predictions/C3.txt }]\nmetrics: [ex]\n",
    )
    .unwrap();
    let lone = path("lone.jsonl");
    run(
        &[
            "eval",
            "--config",
            one.to_str().unwrap(),
            "--shard",
            "1/1",
            "--jsonl",
            &lone,
        ],
        0,
    );
    let stderr = run(&["merge", "--config", &config, &lone], 2);
    common::assert_contains(
        &stderr,
        &["not a shard of a dataset of this config (a one-dataset shard)"],
    );
}

#[test]
fn a_pull_request_is_judged_with_the_base_commits_datasets_config_and_baseline() {
    let work = laid_out();
    let dir = work.path();
    let entries = format!("{SPIDER_ENTRY}{BIRD_ENTRY}");
    let config = write_config(dir, &entries, "{ metric: ex, max_drop_points: 0.0 }");
    common::git(dir, &["init", "-q", "-b", "main"]);
    common::git(dir, &["add", "-A"]);
    common::git(dir, &["commit", "-qm", "base"]);
    let output = common::sqlgate_command(&["baseline", "update", "--config", &config])
        .env_remove("GITHUB_SHA")
        .output()
        .unwrap();
    common::assert_exit(&output, 0);
    common::git(dir, &["add", "-A"]);
    common::git(dir, &["commit", "-qm", "baseline"]);
    let base = common::git(dir, &["rev-parse", "HEAD"]);
    // The pull request regresses Spider, loosens the gate and rewrites the baseline's Spider
    // section: the base's config and baseline judge it all the same.
    break_spider(dir, 3);
    write_config(dir, &entries, "{ metric: ex, max_drop_points: 100.0 }");
    let baseline = dir.join("baseline.json");
    let mut stored: Json = serde_json::from_slice(&std::fs::read(&baseline).unwrap()).unwrap();
    stored["datasets"].as_object_mut().unwrap().remove("spider");
    std::fs::write(&baseline, serde_json::to_vec_pretty(&stored).unwrap()).unwrap();
    common::git(dir, &["commit", "-qam", "pull request"]);
    let summary = dir.join("summary.json");
    let args = [
        "eval",
        "--config",
        &config,
        "--trusted-base",
        &base,
        "--summary",
        summary.to_str().unwrap(),
    ];
    run(&args, 1);
    let summary: Json = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    let reasons = summary["gate"]["reasons"].as_array().unwrap();
    assert!(
        reasons[0]
            .as_str()
            .unwrap()
            .starts_with("dataset `spider`: model: "),
        "{reasons:?}"
    );
    let notes = summary["datasets"]["spider"]["gate"]["notes"].to_string();
    common::assert_contains(&notes, &["changes the config"]);
    common::assert_contains(&notes, &["changes the baseline"]);
}

#[test]
fn spider_on_sqlite_and_bird_on_postgresql_in_one_run() {
    use sqlgate::engine::load::{types::Server, Layout};
    let server = common::servers::postgres();
    let generated = tempfile::tempdir().unwrap();
    common::bird_minidev::generate(generated.path());
    server.admin_sql("postgres", "CREATE DATABASE bird_datasets");
    let workspace = sqlgate::util::workspace::Workspace::detect(generated.path()).unwrap();
    sqlgate::engine::load::load(
        Server::Postgres,
        &server.admin_url("bird_datasets"),
        Layout::Shared,
        generated.path(),
        &workspace,
    )
    .unwrap();
    let url = server.reader_url("bird_datasets");
    let work = laid_out();
    let dir = work.path();
    let data = common::bird_minidev::folder();
    // Nine PostgreSQL golds fail on the generated data (dates such as `x2010-02-22`).
    let failing = "[132, 135, 144, 149, 228, 244, 245, 412, 449]";
    let bird_with = |allowed: &str| {
        format!(
            "{{ kind: bird, gold: {}, tables: {}, difficulty: 'field:difficulty', \
             allow_failing_golds: {allowed}, \
             engine: {{ kind: postgresql, url_env: BIRD_DATASETS_URL, layout: shared }} }}",
            data.join("mini_dev_postgresql.json").display(),
            data.join("dev_tables.json").display()
        )
    };
    let bird = bird_with(failing);
    let predictions = format!(
        "[{{ name: model, path: {}, format: bird-json }}]",
        data.join("predictions/predict_mini_dev_gpt-4-turbo_postgresql.json")
            .display()
    );
    let entry = |bird: &str| {
        format!(
            "  - name: bird-pg\n    dataset: {bird}\n    compare: {{ profile: bird }}\n    predictions: {predictions}\n"
        )
    };
    let unlisted = entry(&bird_with("[]"));
    let config = write_config(dir, &format!("{SPIDER_ENTRY}{unlisted}"), "{ metric: ex }");
    let with_url = |args: &[&str], code: i32| {
        let output = common::sqlgate_command(args)
            .env("BIRD_DATASETS_URL", &url)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert_eq!(
            output.status.code(),
            Some(code),
            "{args:?}: {stderr}\n{stdout}"
        );
    };
    // Unlisted, the failing golds stop `baseline update`, which stores nothing.
    with_url(&["baseline", "update", "--config", &config], 2);
    assert!(!dir.join("baseline.json").exists());
    let config = write_config(
        dir,
        &format!("{SPIDER_ENTRY}{}", entry(&bird)),
        "{ metric: ex }",
    );
    with_url(&["baseline", "update", "--config", &config], 0);
    let summary = dir.join("summary.json");
    // Listed, they are reported gold errors, and the gate does not fail on them.
    let args = [
        "eval",
        "--config",
        &config,
        "--summary",
        summary.to_str().unwrap(),
    ];
    with_url(&args, 0);
    let multi: Json = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    // The same BIRD dataset alone, in a one-dataset config on the same server.
    let single_config = dir.join("bird-pg.yml");
    std::fs::write(
        &single_config,
        format!(
            "dataset: {bird}\npredictions: {predictions}\nmetrics: [ex]\ncompare: {{ profile: bird }}\n"
        ),
    )
    .unwrap();
    let single_summary = dir.join("single.json");
    with_url(
        &[
            "eval",
            "--config",
            single_config.to_str().unwrap(),
            "--summary",
            single_summary.to_str().unwrap(),
        ],
        0,
    );
    let single: Json =
        serde_json::from_str(&std::fs::read_to_string(&single_summary).unwrap()).unwrap();
    let section = &multi["datasets"]["bird-pg"];
    assert_eq!(section["systems"], single["systems"]);
    assert_eq!(section["dataset"], single["dataset"]);
    let bird_ex = single["systems"]["model"]["accuracy"]["ex"]["all"]
        .as_f64()
        .unwrap();
    assert_eq!(single["dataset"]["items"], 500, "{}", single["dataset"]);
    let spider_ex = multi["datasets"]["spider"]["systems"]["model"]["accuracy"]["ex"]["all"]
        .as_f64()
        .unwrap();
    assert!(close(spider_ex, SPIDER_MATCHES / SPIDER_ITEMS));
    let cell = &multi["macro_average"]["systems"][0];
    assert!(close(
        cell["candidate"].as_f64().unwrap(),
        (spider_ex + bird_ex) / 2.0
    ));
    assert_eq!(cell["delta_points"], 0.0);
    assert_eq!(cell["failed"], false);
    assert_eq!(
        single["dataset"]["gold_errors"].as_array().unwrap().len(),
        9
    );
    assert_eq!(
        single["dataset"]["gold_errors"]
            .to_string()
            .replace(',', ", "),
        failing
    );
    assert_eq!(multi["gate"]["reasons"], serde_json::json!([]));
}
