//! Unstable verdicts end to end on SQLite (issues 44, 45): a pull request's prediction whose
//! rows at its LIMIT are a tie the scan order breaks is shown as unstable and counts as measured
//! (SQLite breaks the tie the same way every run), and an unchanged prediction of that kind
//! whose verdict flips is not counted; the report, the JSONL and the verdict's notes name the
//! items.

use crate::common;

use common::repo::{commit_all, head, init_main, judged, update_baseline};
use common::{exited, git, read_jsonl};
use sha2::{Digest, Sha256};
use std::path::Path;

/// Gold questions on `t` (`a` and `b` at x = 5, inserted in that order, `c` at 1).
const GOLD: [&str; 4] = [
    "SELECT name FROM t WHERE x = 5 ORDER BY name LIMIT 1",
    "SELECT count(*) FROM t",
    "SELECT max(x) FROM t",
    "SELECT name FROM t WHERE name = 'b'",
];

/// A prediction that reads the first row of a scan among the two at x = 5: `a` on this file,
/// though nothing in the query says which.
const SCAN_ORDER: &str = "SELECT name FROM t WHERE x = 5 LIMIT 1";

/// A repository on `main` with the benchmark, a gated config and the predictions `predictions`.
fn repository(predictions: &[&str]) -> tempfile::TempDir {
    repository_asking(&GOLD, predictions)
}

/// [`repository`] asking the questions `gold` instead of [`GOLD`].
fn repository_asking(gold: &[&str], predictions: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("db/shop")).unwrap();
    let db = rusqlite::Connection::open(root.join("db/shop/shop.sqlite")).unwrap();
    db.execute_batch(
        "CREATE TABLE t(name TEXT, x INTEGER); \
         INSERT INTO t VALUES ('a', 5), ('b', 5), ('c', 1);",
    )
    .unwrap();
    let gold: String = gold.iter().map(|g| format!("{g}\tshop\n")).collect();
    std::fs::write(root.join("gold.sql"), gold).unwrap();
    write_predictions(root, predictions);
    std::fs::write(
        root.join("sqlgate.yml"),
        "dataset: { gold: gold.sql, databases: db, difficulty: none }\n\
         predictions: [{ name: model, path: preds.sql }]\n\
         metrics: [ex]\n\
         baseline: { path: baseline.json }\n\
         gate: { max_drop_points: 0 }\n\
         report: { output: report.md }\n",
    )
    .unwrap();
    init_main(root, "benchmark");
    dir
}

fn write_predictions(root: &Path, predictions: &[&str]) {
    std::fs::write(root.join("preds.sql"), predictions.join("\n") + "\n").unwrap();
}

/// The pull request checked out in `root`, judged against `base`, with its JSONL.
fn gate(root: &Path, base: &str) -> (std::process::Output, Vec<serde_json::Value>) {
    let output = judged(root, base, &["--jsonl", "items.jsonl"]);
    (output, read_jsonl(&root.join("items.jsonl")))
}

/// The `unstable` reason of item `index` in a run's JSONL, if any.
fn reason(items: &[serde_json::Value], index: u64) -> Option<&str> {
    let item = items.iter().find(|i| i["index"] == index).unwrap();
    item["unstable"].as_str()
}

#[test]
fn on_sqlite_a_changed_prediction_right_by_the_scan_order_is_shown_and_counts() {
    let dir = repository(&GOLD);
    let root = dir.path();
    update_baseline(root);
    commit_all(root, "baseline");
    let base = head(root);
    git(root, &["checkout", "-qb", "scan-order"]);
    let mut predictions = GOLD.to_vec();
    predictions[0] = SCAN_ORDER;
    write_predictions(root, &predictions);
    commit_all(root, "an unordered LIMIT");
    let (output, items) = gate(root, &base);
    // EX itself is unchanged: the prediction returns `a`, as the gold does.
    let first = items.iter().find(|i| i["index"] == 0).unwrap();
    assert_eq!(first["metrics"]["ex"], 1);
    assert_eq!(reason(&items, 0), Some("prediction-order"));
    assert_eq!(reason(&items, 1), None);
    // SQLite reads the benchmark's own file with the engine built into sqlgate: the tie breaks
    // the same way on every run and no pull request steers it, so the verdict counts as measured
    // (on a server it is not credited: server_levers.rs); the report still shows it.
    let all = exited(&output, 0);
    assert!(all.contains("0 regressed / 0 fixed"), "{all}");
    assert!(!all.contains("not credited"), "{all}");
    let report = std::fs::read_to_string(root.join("report.md")).unwrap();
    assert!(
        report.contains("- model: 1 unstable verdicts (1 prediction-order)"),
        "{report}"
    );
    // The footer names each file's digest (one database: on its line, not folded).
    let short = |file: &str| {
        let digest = Sha256::digest(std::fs::read(root.join(file)).unwrap());
        digest
            .iter()
            .take(6)
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let files = format!(
        "<sub>data files: gold `{}` · `shop` `{}`</sub>",
        short("gold.sql"),
        short("db/shop/shop.sqlite")
    );
    assert!(report.contains(&files), "{files} in {report}");
}

/// Gold questions whose results read a row order no LIMIT cuts: compared in order (the default
/// `spider-ts` profile orders a gold that says `order by`), or strung together by an aggregate.
const ORDERED_GOLD: [&str; 4] = [
    "SELECT name FROM t ORDER BY x DESC, name",
    "SELECT name FROM t WHERE x = 5 ORDER BY x",
    "SELECT group_concat(name, ',' ORDER BY name) FROM t",
    "SELECT count(*) FROM t",
];

#[test]
fn orders_no_limit_cuts_are_unstable_by_order_and_count_on_sqlite() {
    let dir = repository_asking(&ORDERED_GOLD, &ORDERED_GOLD);
    let root = dir.path();
    update_baseline(root);
    commit_all(root, "baseline");
    let base = head(root);
    git(root, &["checkout", "-qb", "unordered"]);
    let predictions = [
        // The scan's order happens to be the gold's: `a`, `b`, then `c`.
        "SELECT name FROM t WHERE x = 5 UNION ALL SELECT name FROM t WHERE x = 1",
        ORDERED_GOLD[1],
        // The derived table's ORDER BY orders nothing outside it.
        "SELECT group_concat(name) FROM (SELECT name FROM t ORDER BY name)",
        "SELECT count(name) FROM t",
    ];
    write_predictions(root, &predictions);
    commit_all(root, "orders no LIMIT cuts");
    let (output, items) = gate(root, &base);
    for index in 0..4 {
        let item = items.iter().find(|i| i["index"] == index).unwrap();
        assert_eq!(item["metrics"]["ex"], 1, "{item}");
    }
    assert_eq!(reason(&items, 0), Some("prediction-order"));
    // `a` and `b` tie on the gold's only key, and the comparison reads their order (the
    // prediction is the gold's text: both reasons are said).
    assert_eq!(reason(&items, 1), Some("gold-order+prediction-order"));
    assert_eq!(reason(&items, 2), Some("prediction-order"));
    assert_eq!(reason(&items, 3), None);
    // SQLite breaks the order the same way on every run: the verdicts count as measured.
    let all = exited(&output, 0);
    assert!(all.contains("0 regressed / 0 fixed"), "{all}");
    assert!(!all.contains("not credited"), "{all}");
}

/// Rewrites item `index` of system `system` in `root`'s baseline as a run that judged it right
/// wrote it (another SQLite build, whose plan returned the other tied row), digest included.
fn record_as_right(root: &Path, system: &str, index: usize) {
    let path = root.join("baseline.json");
    let mut baseline: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let record = &mut baseline["systems"][system][index];
    record["metrics"]["ex"] = serde_json::json!(1.0);
    record["outcome"]["ex"] = serde_json::json!("match");
    let digest = Sha256::digest(serde_json::to_vec(&baseline["systems"]).unwrap());
    baseline["records_sha256"] = serde_json::json!(digest
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>());
    std::fs::write(&path, serde_json::to_string_pretty(&baseline).unwrap()).unwrap();
}

#[test]
fn an_unchanged_prediction_whose_tie_broke_the_other_way_is_not_counted() {
    let mut predictions = GOLD.to_vec();
    predictions[3] = SCAN_ORDER;
    let dir = repository(&predictions);
    let root = dir.path();
    update_baseline(root);
    let baseline = std::fs::read_to_string(root.join("baseline.json")).unwrap();
    assert!(
        baseline.contains("\"unstable\": \"prediction-order\""),
        "{baseline}"
    );
    record_as_right(root, "model", 3);
    commit_all(root, "baseline");
    let base = head(root);
    git(root, &["checkout", "-qb", "unchanged"]);
    let (output, items) = gate(root, &base);
    let third = items.iter().find(|i| i["index"] == 3).unwrap();
    assert_eq!(third["metrics"]["ex"], 0);
    assert_eq!(reason(&items, 3), Some("prediction-order"));
    let all = exited(&output, 0);
    assert!(
        all.contains(
            "model: unstable, not counted: item 3 (prediction-order): the prediction is \
             unchanged and its verdict changed, as an undetermined order or the time limit \
             allows, so the baseline's verdict stands"
        ),
        "{all}"
    );
    assert!(all.contains("0 regressed / 0 fixed"), "{all}");
}

#[test]
fn a_prediction_that_reaches_the_time_limit_is_unstable_by_timing() {
    let slow = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c \
                WHERE x < 1000000000) SELECT count(*) FROM c";
    let mut predictions = GOLD.to_vec();
    predictions[1] = slow;
    let dir = repository(&predictions);
    let root = dir.path();
    let config = common::config::write(
        root.join("timed.yml"),
        "dataset: { gold: gold.sql, databases: db, difficulty: none }\n\
         predictions: [{ name: model, path: preds.sql }]\n\
         metrics: [ex]\nexecution: { timeout_ms: 300 }\n",
    );
    let items = common::eval_items(&config, &[]);
    let second = items.iter().find(|i| i["index"] == 1).unwrap();
    assert_eq!(second["outcome"]["ex"], "pred_timeout");
    let reasons: Vec<Option<&str>> = (0..4).map(|i| reason(&items, i)).collect();
    assert_eq!(reasons, [None, Some("prediction-timing"), None, None]);
}

/// A gold that counts to `to` with a recursive CTE: slow in proportion to `to`.
fn counting(to: u64) -> String {
    format!(
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {to}) \
         SELECT count(*) FROM c"
    )
}

/// `root`'s gated config with `execution.timeout_ms: timeout_ms`, committed as `message`.
fn commit_timeout(root: &Path, timeout_ms: u64, message: &str) {
    let config = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
    let kept: String = config
        .lines()
        .filter(|line| !line.starts_with("execution:"))
        .map(|line| format!("{line}\n"))
        .collect();
    let timed = format!("{kept}execution: {{ timeout_ms: {timeout_ms} }}\n");
    std::fs::write(root.join("sqlgate.yml"), timed).unwrap();
    commit_all(root, message);
}

#[test]
fn a_slow_golds_budget_comes_from_the_trusted_baselines_time_not_the_pull_requests() {
    let slow = counting(3_000_000);
    let gold = [GOLD[0], slow.as_str(), GOLD[2], GOLD[3]];
    let dir = repository_asking(&gold, &gold);
    let root = dir.path();
    commit_timeout(root, 60_000, "a generous limit");
    update_baseline(root);
    let path = root.join("baseline.json");
    let mut baseline: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let times = baseline["gold_ms"].as_object().unwrap().clone();
    assert_eq!(times.len(), 4, "every gold's time is recorded: {times:?}");
    let gold_ms = times["1"].as_u64().unwrap();
    assert!(gold_ms >= 150, "the slow gold took {gold_ms} ms");
    // The configured limit is now a third of the gold's time: the gold alone would time out.
    commit_timeout(root, gold_ms / 3, "baseline and a tight limit");
    let base = head(root);
    git(root, &["checkout", "-qb", "slow-prediction"]);
    let mut predictions = gold.to_vec();
    predictions[3] = slow.as_str();
    write_predictions(root, &predictions);
    // The pull request's copy of the baseline claims item 3's gold is slow too.
    baseline["gold_ms"]["3"] = serde_json::json!(gold_ms * 10);
    std::fs::write(&path, serde_json::to_string_pretty(&baseline).unwrap()).unwrap();
    commit_all(root, "a slow prediction and a slower gold time");
    let (output, items) = gate(root, &base);
    let second = items.iter().find(|i| i["index"] == 1).unwrap();
    assert_eq!(second["metrics"]["ex"], 1, "{second}");
    assert_eq!(
        reason(&items, 1),
        None,
        "the gold is at a quarter of its budget"
    );
    let fourth = items.iter().find(|i| i["index"] == 3).unwrap();
    assert_eq!(fourth["outcome"]["ex"], "pred_timeout", "{fourth}");
    assert_eq!(reason(&items, 3), Some("prediction-timing"));
    // The prediction that timed out is a regression: the pull request's gold time gave it no
    // budget.
    let all = exited(&output, 1);
    assert!(all.contains("1 regressed / 0 fixed"), "{all}");
}
