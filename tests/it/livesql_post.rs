//! Issue 46's declarative post-conditions and post-state comparison (`post_conditions`,
//! `post_state` in a LiveSQLBench item) on real items of the conformance corpus
//! (tests/data/livesql): right / wrong prediction pairs on the same question, judged by the
//! sound profile with the Python test cases taken away, so the declarative checks decide alone;
//! the official profile ignoring them; a malformed check stopping the run naming the item and
//! key; and the comment of a gated pull request showing the check that failed with the
//! differing rows.

use crate::common::{self, databases_from_scripts, repo};
use serde_json::{json, Value};
use sqlgate::engine::livesql::{judge, Budget, Profile, Settings, Verdict};
use sqlgate::input::livesql::{read_items, read_predictions, LiveItem};
use sqlgate::input::livesql_post::read_post_checks;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/livesql")
}

/// The corpus's items and predictions with its databases built in a temporary folder.
struct Corpus {
    items: BTreeMap<String, LiveItem>,
    predictions: BTreeMap<String, Vec<String>>,
    folder: tempfile::TempDir,
}

fn load() -> Corpus {
    let folder = tempfile::tempdir().unwrap();
    databases_from_scripts(&corpus_dir().join("db"), folder.path());
    let items = read_items(&corpus_dir().join("items.jsonl")).unwrap();
    Corpus {
        items: items
            .into_iter()
            .map(|i| (i.instance_id.clone(), i))
            .collect(),
        predictions: read_predictions(&corpus_dir().join("predictions.jsonl")).unwrap(),
        folder,
    }
}

impl Corpus {
    /// `id`'s prediction judged under `profile` with `checks` (an item's `post_conditions` /
    /// `post_state` keys) in place of its test cases.
    fn judge(&self, id: &str, checks: &Value, profile: Profile) -> Verdict {
        let mut item = self.items[id].clone();
        item.test_cases.clear();
        item.post = read_post_checks(checks.as_object().unwrap()).unwrap();
        let template = (self.folder.path()).join(format!("{0}/{0}.sqlite", item.db_id));
        let settings = Settings {
            profile,
            budget: Budget {
                deadline: Duration::from_secs(60),
                max_steps: 1_000_000_000,
                disk_bytes: 64 << 20,
            },
            python: PathBuf::from("python3"),
        };
        judge(&item, Some(&self.predictions[id]), &template, &settings).unwrap()
    }

    /// A count on the base file of `db`.
    fn count(&self, db: &str, sql: &str) -> i64 {
        let path = self.folder.path().join(format!("{db}/{db}.sqlite"));
        let conn = rusqlite::Connection::open(path).unwrap();
        conn.query_row(sql, [], |r| r.get(0)).unwrap()
    }
}

/// The right prediction of each pair passes `checks`; the wrong one fails with a message holding
/// every one of `said`.
fn pair_decided(corpus: &Corpus, (right, wrong): (&str, &str), checks: Value, said: &[&str]) {
    let passed = corpus.judge(right, &checks, Profile::Sound);
    assert!(passed.success, "{right}: {passed:?}");
    let failed = corpus.judge(wrong, &checks, Profile::Sound);
    assert!(
        !failed.success && failed.assertion_error,
        "{wrong}: {failed:?}"
    );
    common::assert_contains(&failed.message, said);
}

#[test]
fn post_conditions_decide_real_items_and_name_the_check_that_failed() {
    let corpus = load();
    // lsq_029 / 030: an INSERT, the wrong one with price 22.0 instead of 22.5.
    let checks = json!({"post_conditions": [
        {"table": "products", "row_count": corpus.count("shop", "SELECT count(*) + 1 FROM products")},
        {"query": "SELECT name, price, stock FROM products WHERE id = 11", "rows": [["Thermos", 22.5, 12]]}
    ]});
    let said = [
        "post_conditions[1] (rows of a query) failed: expected 1 row(s) (\"Thermos\", 22.5, 12), got 1 row(s) ('Thermos', 22, 12)",
    ];
    pair_decided(&corpus, ("lsq_029", "lsq_030"), checks, &said);
    // lsq_037 / 038: CREATE TABLE suppliers, the wrong one without `country`.
    let checks = json!({"post_conditions": [
        {"exists": "suppliers", "type": "table"},
        {"table": "suppliers", "columns": [["id", "INTEGER"], ["name", "TEXT"], ["country", "TEXT"]]},
        {"absent": "suppliers", "type": "view"}
    ]});
    let said = ["post_conditions[1] (columns of table `suppliers`) failed: expected (id INTEGER, name TEXT, country TEXT), got (id INTEGER, name TEXT)"];
    pair_decided(&corpus, ("lsq_037", "lsq_038"), checks, &said);
    // A check of an object that is not there, and one whose query fails.
    let checks = json!({"post_conditions": [
        {"exists": "order_totals", "type": "view"},
        {"query": "SELECT nope FROM products", "row_count": 1}
    ]});
    let verdict = corpus.judge("lsq_037", &checks, Profile::Sound);
    common::assert_contains(
        &verdict.message,
        &[
            "post_conditions[0] (`order_totals` exists) failed: no view `order_totals` in the database",
            "post_conditions[1] (row_count of a query) failed: the query failed:",
            "no such column: nope",
        ],
    );
}

#[test]
fn post_state_reports_rows_added_removed_and_changed_against_the_gold() {
    let corpus = load();
    // lsq_035 / 036: DELETE the cancelled orders; the wrong one deletes every order not shipped.
    let removed = corpus.count(
        "shop",
        "SELECT count(*) FROM orders WHERE status NOT IN ('shipped', 'cancelled')",
    );
    assert!(removed > 3, "enough rows to see the bound");
    let said = format!(
        "post_state: table `orders`: 0 row(s) added, {removed} removed, 0 changed against the gold's; removed ("
    );
    for state in [json!("touched"), json!("all"), json!(["orders"])] {
        let checks = json!({ "post_state": state });
        let more = format!("... {} more", removed - 3);
        pair_decided(
            &corpus,
            ("lsq_035", "lsq_036"),
            checks,
            &[said.as_str(), more.as_str()],
        );
    }
    // lsq_031 / 032: a 10 % rise for one category; the wrong one raises every price. The rows
    // keep their key, so they are changed rows, shown beside the gold's.
    let changed = corpus.count(
        "shop",
        "SELECT count(*) FROM products WHERE category <> 'kitchen'",
    );
    let said = format!("post_state: table `products`: 0 row(s) added, 0 removed, {changed} changed against the gold's; changed (");
    let checks = json!({"post_state": "all"});
    pair_decided(
        &corpus,
        ("lsq_031", "lsq_032"),
        checks,
        &[said.as_str(), "where the gold has ("],
    );
    // lsq_038: a table of other columns than the gold's.
    let verdict = corpus.judge("lsq_038", &json!({"post_state": "touched"}), Profile::Sound);
    common::assert_contains(
        &verdict.message,
        &["post_state: table `suppliers`: columns (id, name), the gold's (id, name, country)"],
    );
}

#[test]
fn the_official_profiles_ignore_post_conditions() {
    let corpus = load();
    let failing =
        json!({"post_conditions": [{"table": "products", "row_count": 0}], "post_state": "all"});
    for id in ["lsq_029", "lsq_032"] {
        let with = corpus.judge(id, &failing, Profile::Official);
        let without = corpus.judge(id, &json!({}), Profile::Official);
        assert_eq!(with, without, "{id}");
        assert!(!corpus.judge(id, &failing, Profile::Sound).success, "{id}");
    }
}

/// The bundled example in a temporary folder, with `checks` added to the item `instance_id`.
pub(crate) fn example_with(instance_id: &str, checks: Value) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/livesql-mini");
    common::copy_tree(&example, dir.path());
    let path = dir.path().join("items.jsonl");
    let lines: Vec<String> = (std::fs::read_to_string(&path).unwrap().lines())
        .map(|line| {
            let mut item: Value = serde_json::from_str(line).unwrap();
            if item["instance_id"] == instance_id {
                for (key, value) in checks.as_object().unwrap() {
                    item[key] = value.clone();
                }
            }
            item.to_string()
        })
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    dir
}

#[test]
fn a_malformed_check_stops_the_run_naming_the_item_and_key() {
    let checks = json!({"post_conditions": [{"table": "students", "row_count": "many"}]});
    let dir = example_with("lsq_081", checks);
    std::fs::remove_file(dir.path().join("baseline.json")).unwrap();
    let output = common::eval(&dir.path().join("sqlgate.yml"), &["--comment", "never"]);
    common::assert_exit(&output, 2);
    let said = common::text(&output);
    common::assert_contains(
        &said,
        &[
            "items.jsonl",
            "item lsq_081: `post_conditions[0].row_count` must be a whole number >= 0",
        ],
    );
}

#[test]
fn a_pull_request_failing_a_post_state_comparison_shows_the_differing_rows_in_the_comment() {
    let dir = example_with("lsq_081", json!({"post_state": "touched"}));
    pull_request_failing_a_post_state_comparison(&dir);
}

/// `dataset.post_state` in the config gives every item without its own the comparison.
#[test]
fn a_post_state_comparison_set_for_every_item_in_the_config_fails_the_same_pull_request() {
    let dir = example_with("lsq_081", json!({}));
    let config = dir.path().join("sqlgate.yml");
    let text = std::fs::read_to_string(&config).unwrap();
    let with_default = text.replace("  difficulty:", "  post_state: touched\n  difficulty:");
    std::fs::write(&config, with_default).unwrap();
    pull_request_failing_a_post_state_comparison(&dir);
}

#[test]
fn a_post_state_default_is_refused_where_no_metric_reads_it_or_malformed() {
    let official_only = [
        ("  difficulty:", "  post_state: all\n  difficulty:"),
        ("metrics: [livesql, livesql_sound]", "metrics: [livesql]"),
        ("reference: livesql_sound", "reference: livesql"),
        ("  metric: livesql_sound", "  metric: livesql"),
    ];
    let malformed = [("  difficulty:", "  post_state: some\n  difficulty:")];
    for (edits, said) in [
        (&official_only[..], "which `metrics` does not list"),
        (&malformed[..], "`dataset.post_state`: `post_state` must be"),
    ] {
        let dir = example_with("lsq_081", json!({}));
        let config = dir.path().join("sqlgate.yml");
        let mut text = std::fs::read_to_string(&config).unwrap();
        for (from, to) in edits {
            text = text.replace(from, to);
        }
        std::fs::write(&config, text).unwrap();
        let output = common::eval(&config, &["--comment", "never"]);
        common::assert_exit(&output, 2);
        common::assert_contains(&common::text(&output), &[said]);
    }
}

/// The pull request of `dir` (the example with checks on lsq_081) raising every student's grade
/// where the gold raises those of grade 12 fails, its comment showing the differing rows.
fn pull_request_failing_a_post_state_comparison(dir: &tempfile::TempDir) {
    // lsq_081 (item 22): `UPDATE students SET grade = grade + 1 WHERE grade = 12`, right in the
    // baseline; the pull request raises every student's grade.
    std::fs::remove_file(dir.path().join("baseline.json")).unwrap();
    let base = repo::gated_main(dir.path());
    common::git(dir.path(), &["checkout", "-qb", "pr"]);
    let path = dir.path().join("predictions/model.jsonl");
    let every_row =
        json!({"instance_id": "lsq_081", "pred_sqls": ["UPDATE students SET grade = grade + 1"]});
    let lines: Vec<String> = (std::fs::read_to_string(&path).unwrap().lines())
        .map(|line| match line.contains("\"lsq_081\"") {
            true => every_row.to_string(),
            false => line.to_string(),
        })
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    repo::commit_all(dir.path(), "the pull request");
    let run = repo::judged(dir.path(), &base, &[]);
    let comment = std::fs::read_to_string(dir.path().join("sqlgate-report.md")).unwrap();
    assert_eq!(run.status.code(), Some(1), "{}", common::text(&run));
    common::assert_contains(
        &comment,
        &[
            "item 22",
            "lsq_081: Test case errors",
            "post_state: table `students`: 0 row(s) added, 0 removed,",
            "changed (",
            "where the gold has (",
        ],
    );
}
