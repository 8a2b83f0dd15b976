//! The benchmark is checked when it loads (issue 45): a database file that is not a database (a
//! Git LFS pointer, empty, truncated, not SQLite) or lacks a table `tables.json` declares stops
//! the run with exit 2 naming the file and what it is; a gold that fails on its database stops
//! `eval` and `baseline update` with exit 2 naming the item, unless a reviewed override excludes
//! it or `dataset.allow_failing_golds` lists it (then it is a reported gold error, and the gate
//! does not fail on it); a gold Spider's parser cannot read offers the same ways out.

use crate::common;

use std::path::{Path, PathBuf};

/// A folder with `db/shop/shop.sqlite` (table `t`), `tables.json` declaring `t`, the gold lines
/// `golds` on `shop`, predictions equal to the golds and `sqlgate.yml` with `dataset_extra`
/// inside `dataset:` and `rest` after it.
fn benchmark(dir: &Path, golds: &[&str], dataset_extra: &str, rest: &str) -> PathBuf {
    let db = dir.join("db/shop");
    std::fs::create_dir_all(&db).unwrap();
    let conn = rusqlite::Connection::open(db.join("shop.sqlite")).unwrap();
    conn.execute_batch("CREATE TABLE t(a INTEGER); INSERT INTO t VALUES (1), (2), (3);")
        .unwrap();
    drop(conn);
    std::fs::write(dir.join("tables.json"), tables_json(&["t"])).unwrap();
    let lines: Vec<String> = golds.iter().map(|g| format!("{g}\tshop\n")).collect();
    std::fs::write(dir.join("gold.sql"), lines.concat()).unwrap();
    std::fs::write(dir.join("pred.sql"), golds.join("\n") + "\n").unwrap();
    write_config(dir, dataset_extra, rest)
}

fn write_config(dir: &Path, dataset_extra: &str, rest: &str) -> PathBuf {
    let config = dir.join("sqlgate.yml");
    std::fs::write(
        &config,
        format!(
            "dataset: {{ gold: gold.sql, tables: tables.json, databases: db{dataset_extra} }}\n\
             predictions:\n  - {{ name: sys, path: pred.sql }}\nmetrics: [ex]\n{rest}"
        ),
    )
    .unwrap();
    config
}

/// A tables.json entry for `shop` declaring `tables`, each with a column `a`.
fn tables_json(tables: &[&str]) -> String {
    let columns: Vec<serde_json::Value> = std::iter::once(serde_json::json!([-1, "*"]))
        .chain((0..tables.len()).map(|i| serde_json::json!([i, "a"])))
        .collect();
    serde_json::json!([{
        "db_id": "shop",
        "table_names_original": tables,
        "table_names": tables,
        "column_names_original": columns,
        "column_names": columns,
        "column_types": vec!["text"; columns.len()],
        "primary_keys": [],
        "foreign_keys": [],
    }])
    .to_string()
}

/// Runs `sqlgate ARGS --config CONFIG` and returns (exit code, stderr).
fn run(args: &[&str], config: &Path) -> (Option<i32>, String) {
    let mut all = args.to_vec();
    all.extend(["--config", common::arg(config)]);
    let output = common::sqlgate(&all);
    (output.status.code(), common::stderr(&output))
}

/// The error `eval` stops with on a database file with these bytes.
fn database_refusal(bytes: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let config = benchmark(dir.path(), &["SELECT a FROM t"], "", "");
    let file = dir.path().join("db/shop/shop.sqlite");
    std::fs::write(&file, bytes).unwrap();
    let (code, stderr) = run(&["eval"], &config);
    assert_eq!(code, Some(2), "{stderr}");
    let prefix = format!("sqlgate: error: {}: database `shop`: ", file.display());
    stderr
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{stderr}"))
        .trim_end()
        .to_string()
}

#[test]
fn a_database_file_that_is_not_a_database_is_named_with_what_it_is() {
    let pointer = b"version https://git-lfs.github.com/spec/v1\n\
        oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n";
    assert_eq!(
        database_refusal(pointer),
        "is a Git LFS pointer, not the database: run `git lfs pull` (on GitHub Actions, \
         `lfs: true` in `actions/checkout`)"
    );
    assert_eq!(
        database_refusal(b""),
        "is empty (0 bytes), not the database: restore the file"
    );
    assert_eq!(
        database_refusal(b"SQLite format 3\0\x10\0"),
        "is truncated: 18 bytes, shorter than SQLite's 100-byte header"
    );
    assert_eq!(
        database_refusal(b"<html>404 Not Found</html>"),
        "is not a SQLite database (it does not start with SQLite's header `SQLite format 3`)"
    );
}

#[test]
fn a_database_cut_short_is_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.sqlite");
    let conn = rusqlite::Connection::open(&whole).unwrap();
    conn.execute_batch("CREATE TABLE t(a); CREATE TABLE u(b); CREATE TABLE v(c);")
        .unwrap();
    drop(conn);
    let bytes = std::fs::read(&whole).unwrap();
    assert_eq!(bytes.len(), 4 * 4096, "four pages of 4096 bytes");
    assert_eq!(
        database_refusal(&bytes[..2 * 4096]),
        "is truncated: 8192 bytes, but its header declares 4 pages of 4096 bytes (16384 bytes)"
    );
    assert_eq!(
        database_refusal(&bytes[..5000]),
        "is truncated: 5000 bytes, but its header declares 4 pages of 4096 bytes (16384 bytes)"
    );
    // An old writer's file, whose page count SQLite does not trust, cut inside a page.
    let mut stale = bytes[..5000].to_vec();
    stale[92] ^= 1;
    assert_eq!(
        database_refusal(&stale),
        "is truncated: 5000 bytes, not a whole number of its 4096-byte pages"
    );
}

#[test]
fn a_database_lacking_a_declared_table_is_refused_naming_the_tables() {
    let dir = tempfile::tempdir().unwrap();
    let config = benchmark(dir.path(), &["SELECT a FROM t"], "", "");
    std::fs::write(
        dir.path().join("tables.json"),
        tables_json(&["T", "orders", "Items"]),
    )
    .unwrap();
    let (code, stderr) = run(&["eval"], &config);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "sqlgate: error: {}: database `shop`: lacks tables that `dataset.tables` declares \
             for it: `orders`, `Items`\n",
            dir.path().join("db/shop/shop.sqlite").display()
        )
    );
}

const FAILING: [&str; 3] = [
    "SELECT a FROM t",
    "SELECT max(a) FROM t",
    "SELECT nope FROM t",
];

/// The error of a run stopped by item 2's gold (`SELECT nope FROM t`).
fn failing_gold_error(dir: &Path) -> String {
    format!(
        "sqlgate: error: {}: item 2 (db `shop`): the gold query `SELECT nope FROM t` failed: no \
         such column: nope in SELECT nope FROM t at offset 7. Fix the gold, replace or exclude \
         it with a reviewed override (`audit.overrides`), or list the item in \
         `dataset.allow_failing_golds` to report it as a gold error and leave it unscored\n",
        dir.join("gold.sql").display()
    )
}

#[test]
fn a_gold_failing_at_run_time_stops_eval_and_baseline_update_naming_the_item() {
    let dir = tempfile::tempdir().unwrap();
    let config = benchmark(
        dir.path(),
        &FAILING,
        ", difficulty: none",
        "baseline: { path: baseline.json }\n",
    );
    let (code, stderr) = run(&["eval"], &config);
    assert_eq!((code, stderr), (Some(2), failing_gold_error(dir.path())));
    let (code, stderr) = run(&["baseline", "update"], &config);
    assert_eq!((code, stderr), (Some(2), failing_gold_error(dir.path())));
    assert!(
        !dir.path().join("baseline.json").exists(),
        "no baseline is stored over a failing gold"
    );
}

#[test]
fn an_allowed_failing_gold_is_a_reported_gold_error_and_the_gate_passes() {
    let dir = tempfile::tempdir().unwrap();
    let config = benchmark(
        dir.path(),
        &FAILING,
        ", allow_failing_golds: [2]",
        "baseline: { path: baseline.json }\n",
    );
    let (code, stderr) = run(&["baseline", "update"], &config);
    assert_eq!(code, Some(0), "{stderr}");
    let summary = dir.path().join("summary.json");
    let output = common::eval(&config, &["--summary", common::arg(&summary)]);
    common::assert_exit(&output, 0);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    assert_eq!(summary["dataset"]["gold_errors"], serde_json::json!([2]));
    assert_eq!(summary["gate"]["passed"], true, "{}", summary["gate"]);
    assert_eq!(summary["gate"]["reasons"], serde_json::json!([]));
}

#[test]
fn an_allowed_index_the_dataset_lacks_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let config = benchmark(dir.path(), &FAILING, ", allow_failing_golds: [2, 7]", "");
    let (code, stderr) = run(&["eval"], &config);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "sqlgate: error: config {}: `dataset.allow_failing_golds`: item 7 does not exist: the \
             dataset has 3 items, numbered 0 to 2 in gold order; remove it or fix the index\n",
            config.display()
        )
    );
}

#[test]
fn a_reviewed_override_excluding_the_failing_gold_lets_the_run_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let config = benchmark(
        dir.path(),
        &FAILING,
        "",
        "audit: { overrides: overrides.jsonl }\n",
    );
    let excluded = serde_json::json!({"index": 2, "exclude": true, "reason": "no column nope"});
    std::fs::write(dir.path().join("overrides.jsonl"), format!("{excluded}\n")).unwrap();
    let outcomes: Vec<serde_json::Value> = common::eval_items(&config, &[])
        .iter()
        .map(|line| line["outcome"]["ex"].clone())
        .collect();
    assert_eq!(outcomes, ["match", "match", "skipped"]);
    let replaced =
        serde_json::json!({"index": 2, "replace": "SELECT min(a) FROM t", "reason": "x"});
    std::fs::write(dir.path().join("overrides.jsonl"), format!("{replaced}\n")).unwrap();
    let outcomes: Vec<serde_json::Value> = common::eval_items(&config, &[])
        .iter()
        .map(|line| line["outcome"]["ex"].clone())
        .collect();
    assert_eq!(
        outcomes,
        ["match", "match", "pred_error"],
        "the prediction is charged now"
    );
}

#[test]
fn a_gold_spider_cannot_parse_names_the_item_and_the_ways_out() {
    let dir = tempfile::tempdir().unwrap();
    let unparsable = "WITH x AS (SELECT a FROM t) SELECT a FROM x";
    let config = benchmark(
        dir.path(),
        &["SELECT a FROM t", unparsable],
        ", difficulty: spider-hardness",
        "",
    );
    let (code, stderr) = run(&["eval"], &config);
    assert_eq!(code, Some(2), "{stderr}");
    let prefix = format!(
        "sqlgate: error: {}: item 1 (db `shop`): `difficulty: spider-hardness` cannot parse the \
         gold query (",
        dir.path().join("gold.sql").display()
    );
    assert!(stderr.starts_with(&prefix), "{stderr}");
    assert!(
        stderr.ends_with(
            "). Replace or exclude the gold with a reviewed override (`audit.overrides`), list \
             the item in `dataset.allow_failing_golds` (it is then left unlabelled), or label \
             items another way (`difficulty: field:NAME` or `none`)\n"
        ),
        "{stderr}"
    );
    write_config(
        dir.path(),
        ", difficulty: spider-hardness, allow_failing_golds: [1]",
        "",
    );
    let items = common::eval_items(&config, &[]);
    assert_eq!(items[0]["difficulty"], "easy");
    assert_eq!(items[1]["difficulty"], serde_json::Value::Null);
    assert_eq!(
        items[1]["outcome"]["ex"], "match",
        "the gold runs: it is scored"
    );
}
