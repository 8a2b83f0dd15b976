//! Pull requests that change the benchmark (issue 45): they are scored on the base commit's
//! benchmark and pass or fail on their predictions as usual, the comment shows what the proposed
//! benchmark would do to the base's own predictions, and a proposed benchmark that does not load
//! is an input error (once merged, no pull request could be gated).

use crate::common;
use common::repo::{self, judged};
use common::{git, rewrite_predictions};
use std::path::Path;

/// The bundled example on `main` with its baseline, checked out on a pull-request branch;
/// returns the folder and the base commit.
fn pull_request() -> (tempfile::TempDir, String) {
    let dir = repo::example(false);
    let base = repo::gated_main(dir.path());
    git(dir.path(), &["checkout", "-qb", "pr"]);
    (dir, base)
}

/// Rewrites the gold query of the 0-based items `items` of the example's gold file as `sql`.
fn rewrite_golds(root: &Path, items: impl Fn(usize) -> bool, sql: &str) {
    let path = root.join("dev_gold.sql");
    let lines: Vec<String> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .enumerate()
        .map(|(i, line)| match (items(i), line.split_once('\t')) {
            (true, Some((_, db_id))) => format!("{sql}\t{db_id}"),
            _ => line.to_string(),
        })
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
}

/// The `summary.json` the run wrote in `root`.
fn summary(root: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(root.join("summary.json")).unwrap()).unwrap()
}

/// The proposed-benchmark entry of `system` in `summary.json`'s `proposed_benchmark`.
fn system<'a>(change: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    (change["systems"].as_array().unwrap().iter())
        .find(|s| s["name"] == name)
        .unwrap()
}

/// The pull request that `change` makes to the example (committed), judged against its base,
/// asserting its exit `code` and that its output says each of `said`; the folder.
fn judged_change(change: impl FnOnce(&Path), code: i32, said: &[&str]) -> tempfile::TempDir {
    let (dir, base) = pull_request();
    change(dir.path());
    repo::commit_all(dir.path(), "the pull request");
    let out = common::exited(&judge(dir.path(), &base), code);
    common::assert_contains(&out, said);
    dir
}

/// The note of a run whose pull request changes the example's gold file.
const GOLD_NOTE: &str = "this pull request changes the benchmark (dev_gold.sql)";

/// Runs the pull request against `base`, writing `summary.json`.
fn judge(root: &Path, base: &str) -> std::process::Output {
    judged(root, base, &["--summary", "summary.json"])
}

/// Whether `system`'s item `index` is right (`ex`) in the example's stored baseline.
fn right_in_baseline(root: &Path, system: &str, index: usize) -> bool {
    let baseline: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("baseline.json")).unwrap()).unwrap();
    let items = baseline["systems"][system].as_array().unwrap();
    let item = items.iter().find(|i| i["index"] == index).unwrap();
    item["metrics"]["ex"] == 1.0
}

#[test]
fn a_gold_fix_is_scored_on_the_base_benchmark_and_shows_what_it_changes() {
    // Items 0 and 1 count singers; a gold that counts none of them makes every system wrong.
    let stricter = "SELECT count(*) FROM singer WHERE age > 1000";
    let stricter_golds = |root: &Path| rewrite_golds(root, |i| i < 2, stricter);
    let dir = judged_change(stricter_golds, 0, &[GOLD_NOTE, "Proposed benchmark"]);
    let root = dir.path();
    let change = &summary(root)["proposed_benchmark"];
    assert_eq!(change["changed"], serde_json::json!(["dev_gold.sql"]));
    assert_eq!(change["metric"], "ex");
    assert_eq!(change["paired_by"], "position");
    for system in change["systems"].as_array().unwrap() {
        let name = system["name"].as_str().unwrap();
        let was_right: Vec<usize> = (0..2)
            .filter(|&i| right_in_baseline(root, name, i))
            .collect();
        assert!(!was_right.is_empty(), "{name} gets item 0 or 1 right");
        assert_eq!(system["turn_wrong"], serde_json::json!(was_right), "{name}");
        assert_eq!(system["turn_right"], serde_json::json!([]), "{name}");
        let (before, after) = (&system["right_on_base"], &system["right_on_proposed"]);
        assert_eq!(
            before.as_u64().unwrap() - after.as_u64().unwrap(),
            was_right.len() as u64,
            "{name}"
        );
    }
    assert_eq!(change["systems"].as_array().unwrap().len(), 2);
}

#[test]
fn a_gold_rewritten_to_fit_worse_predictions_does_not_hide_the_regression() {
    // Items 0-29 ask about concert_singer. The pull request makes its wrong answers the gold's:
    // on its own benchmark C3 would lose nothing, so only a run on the base's benchmark sees
    // the drop.
    let wrong = "SELECT name FROM singer WHERE singer_id < 0";
    let agreeing = |root: &Path| {
        rewrite_predictions(root, "C3", |i| i < 30, wrong);
        rewrite_golds(root, |i| i < 30, wrong);
    };
    let dir = judged_change(agreeing, 1, &["gate failed: C3 ex 94.9 -> ", GOLD_NOTE]);
    let root = dir.path();
    let change = &summary(root)["proposed_benchmark"];
    let c3 = system(change, "C3");
    assert!(
        c3["turn_wrong"].as_array().unwrap().len() >= 25,
        "the base's C3 was right on most of those items: {c3}"
    );
}

#[test]
fn a_changed_database_is_scored_as_the_base_has_it() {
    let changed = |root: &Path| {
        let database = root.join("database/concert_singer/concert_singer.sqlite");
        let connection = rusqlite::Connection::open(database).unwrap();
        let update = "UPDATE singer SET name = 'someone', age = 1";
        connection.execute(update, []).unwrap();
    };
    let dir = judged_change(changed, 0, &[]);
    let root = dir.path();
    let change = &summary(root)["proposed_benchmark"];
    assert_eq!(
        change["changed"],
        serde_json::json!(["database/concert_singer/concert_singer.sqlite"])
    );
    let c3 = system(change, "C3");
    let right = |key: &str| c3[key].as_u64().unwrap();
    assert!(
        right("right_on_proposed") < right("right_on_base"),
        "the singers' names and ages changed under the golds: {c3}"
    );
}

#[test]
fn a_proposed_benchmark_that_does_not_score_is_an_input_error() {
    let broken = |root: &Path| {
        let path = root.join("dev_gold.sql");
        let gold = std::fs::read_to_string(&path).unwrap();
        let broken = gold.replacen("\tconcert_singer", "\tno_such_database", 1);
        std::fs::write(&path, broken).unwrap();
    };
    let said = [
        "the pull request changes dataset files (dev_gold.sql)",
        "the benchmark it proposes does not score",
        "no_such_database",
    ];
    judged_change(broken, 2, &said);
}

/// Red team round 8 (class 1, benchmark pull requests): the pull request breaks C3's first 20 predictions
/// (control: exit 1) and, with each lever, rewrites the benchmark through the working tree so
/// that its own gold agrees with the wrong predictions: the gold file replaced by a symlink to
/// its own copy, the gold file replaced by a folder, the tables file replaced by a folder, the
/// databases folder replaced by a symlink to a copy. None may pass.
/// The pull request's wrong prediction, and its own gold for those items (one that parses for
/// Spider's hardness classifier, so the proposed benchmark scores; items 0-19 ask `concert_singer`).
const PR_WRONG: &str = "SELECT name FROM singer WHERE singer_id = -1";

#[test]
fn benchmark_files_replaced_through_the_working_tree_do_not_pass() {
    type Lever = fn(&std::path::Path);
    let own_gold = |root: &std::path::Path| {
        let gold = std::fs::read_to_string(root.join("dev_gold.sql")).unwrap();
        let lines: Vec<String> = gold
            .lines()
            .enumerate()
            .map(|(i, line)| match (i < 20, line.split_once('\t')) {
                (true, Some((_, db))) => format!("{PR_WRONG}\t{db}"),
                _ => line.to_string(),
            })
            .collect();
        std::fs::write(root.join("own_gold.sql"), lines.join("\n") + "\n").unwrap();
    };
    // Each lever with the exit it gets: scored on the base's copies (1), or a proposed
    // benchmark that does not load (2).
    let levers: [(&str, i32, Lever); 5] = [
        ("none", 1, |_| {}),
        ("gold symlink", 1, |root| {
            std::fs::remove_file(root.join("dev_gold.sql")).unwrap();
            std::os::unix::fs::symlink("own_gold.sql", root.join("dev_gold.sql")).unwrap();
        }),
        ("gold folder", 2, |root| {
            std::fs::remove_file(root.join("dev_gold.sql")).unwrap();
            std::fs::create_dir(root.join("dev_gold.sql")).unwrap();
            std::fs::write(root.join("dev_gold.sql/x"), "x").unwrap();
        }),
        ("tables folder", 2, |root| {
            std::fs::remove_file(root.join("tables.json")).unwrap();
            std::fs::create_dir(root.join("tables.json")).unwrap();
            std::fs::write(root.join("tables.json/x"), "x").unwrap();
        }),
        ("databases symlink", 1, |root| {
            std::fs::rename(root.join("database"), root.join("own_database")).unwrap();
            std::os::unix::fs::symlink("own_database", root.join("database")).unwrap();
        }),
    ];
    for (name, code, lever) in levers {
        let dir = repo::example(true);
        let root = dir.path();
        let base = repo::gated_main(root);
        git(root, &["checkout", "-qb", "pr"]);
        rewrite_predictions(root, "C3", |i| i < 20, PR_WRONG);
        own_gold(root);
        lever(root);
        repo::commit_all(root, "the pull request");
        let judged = judged(root, &base, &[]);
        assert_eq!(
            judged.status.code(),
            Some(code),
            "{name}: {}",
            common::text(&judged)
        );
    }
}
