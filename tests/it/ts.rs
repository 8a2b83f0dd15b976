//! Test-suite accuracy on a suite folder in the official layout: an original `singer` database
//! plus a variant where two singers tie on net worth. Where the original has equal net worths
//! too, the tie is natural: `ORDER BY ... LIMIT 1` and `= (SELECT max(...))` agree on the
//! original (EX) but not on the variant (TS), while a true rewrite passes both, and the TS
//! failure carries a counterexample (the variant shrunk to the two tied singers, with both
//! results, shown in the report). Where the original's net worths are all distinct, the same
//! tie is data the domain never has, and the variant is set aside with that reason. With the
//! roles swapped (a `LIMIT 1` gold), the tie leaves the gold's own answer undetermined, so the
//! variant does not decide. Also: an aggregate over nothing against no rows does not decide,
//! and DISTINCT inside an aggregate counts on suite databases.

use crate::common;

use common::eval_items;
use std::path::Path;

/// The example's `singer` database copied under `work/database`, with a ninth singer whose net
/// worth equals the lowest one: in this domain two singers may be worth the same.
fn original_with_equal_net_worths(work: &Path) -> std::path::PathBuf {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/spider-mini");
    let folder = work.join("database/singer");
    std::fs::create_dir_all(&folder).unwrap();
    let original = folder.join("singer.sqlite");
    std::fs::copy(example.join("database/singer/singer.sqlite"), &original).unwrap();
    rusqlite::Connection::open(&original)
        .unwrap()
        .execute(
            "INSERT INTO singer (Singer_ID, Name, Birth_Year, Net_Worth_Millions, Citizenship) \
             VALUES (9, 'Extra Singer', 1950, 12.7, 'Chile')",
            [],
        )
        .unwrap();
    original
}

#[test]
fn a_natural_tie_separates_limit_1_from_max() {
    let work = tempfile::tempdir().unwrap();
    let suite = work.path().join("suite/singer");
    std::fs::create_dir_all(&suite).unwrap();
    let original = original_with_equal_net_worths(work.path());
    std::fs::copy(&original, suite.join("singer.sqlite")).unwrap();
    std::fs::copy(&original, suite.join("singer_1.sqlite")).unwrap();
    let variant = rusqlite::Connection::open(suite.join("singer_1.sqlite")).unwrap();
    variant
        .execute("UPDATE singer SET Net_Worth_Millions = (SELECT max(Net_Worth_Millions) FROM singer) WHERE Singer_ID = 2", [])
        .unwrap();
    drop(variant);
    let suite_before = common::snapshot(&work.path().join("suite"));

    let max = "SELECT Name FROM singer WHERE Net_Worth_Millions = (SELECT max(Net_Worth_Millions) FROM singer)";
    let limit = "SELECT Name FROM singer ORDER BY Net_Worth_Millions DESC LIMIT 1";
    let gold = format!("{max}\tsinger\n{max}\tsinger\n{limit}\tsinger\n");
    std::fs::write(work.path().join("gold.sql"), gold).unwrap();
    std::fs::write(
        work.path().join("preds.txt"),
        format!(
            "{limit}\n\
             SELECT T.name FROM singer AS T WHERE T.net_worth_millions = \
             (SELECT max(net_worth_millions) FROM singer)\n{max}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        work.path().join("sqlgate.yml"),
        format!(
            "dataset: {{ gold: gold.sql, databases: {}, difficulty: none }}\n\
             suite: {{ kind: directory, path: suite }}\n\
             predictions: [{{ name: m, path: preds.txt }}]\nmetrics: [ex, ts]\n",
            work.path().join("database").display()
        ),
    )
    .unwrap();
    let report = work.path().join("report.md");
    let results = eval_items(
        &work.path().join("sqlgate.yml"),
        &["--report", report.to_str().unwrap()],
    );
    assert_eq!(
        (
            results[0]["metrics"]["ex"].clone(),
            results[0]["metrics"]["ts"].clone()
        ),
        (1.into(), 0.into())
    );
    assert_eq!(
        results[0]["ts_components"]["distinguishing_database"],
        "singer_1.sqlite"
    );
    assert_eq!(
        (
            results[1]["metrics"]["ex"].clone(),
            results[1]["metrics"]["ts"].clone()
        ),
        (1.into(), 1.into())
    );
    assert_eq!(
        common::snapshot(&work.path().join("suite")),
        suite_before,
        "suite databases are read-only"
    );
    assert_shrunk_to_the_tie(&results[0]["ts_components"]["counterexample"]);
    assert!(results[1]["ts_components"].is_null());
    // With the roles swapped, the tie leaves the LIMIT 1 gold's own answer undetermined on the
    // variant, so the variant does not decide: judged on the original alone, `= max(...)` passes.
    assert_eq!(
        (
            results[2]["metrics"]["ex"].clone(),
            results[2]["metrics"]["ts"].clone()
        ),
        (1.into(), 1.into())
    );
    let report = std::fs::read_to_string(report).unwrap();
    common::assert_contains(&report, &["| m | 1 | 1 | 0 | 0 | 0 | 0 | 0 | 0 |"]);
    common::assert_contains(&report, &["#### m: item 0, line 1 (singer)\n"]);
    assert!(
        report.contains(
            "-- counterexample (tie at the cut), shrunk from singer_1.sqlite\n-- natural: "
        ),
        "{report}"
    );

    let config = std::fs::read_to_string(work.path().join("sqlgate.yml")).unwrap();
    std::fs::write(work.path().join("by-ts.yml"), config + "reference: ts\n").unwrap();
    let report = work.path().join("by-ts.md");
    eval_items(
        &work.path().join("by-ts.yml"),
        &["--report", report.to_str().unwrap()],
    );
    let report = std::fs::read_to_string(report).unwrap();
    common::assert_contains(
        &report,
        &[
            "False positives / negatives against ts",
            "| m | ex | FP | 33.3 |",
            "| m | ex | FN | 0.0 |",
        ],
    );
}

/// The counterexample keeps exactly the two singers tied at the top net worth: both names for
/// the `= max(...)` gold, one for the `LIMIT 1` prediction.
fn assert_shrunk_to_the_tie(counterexample: &serde_json::Value) {
    assert_eq!(counterexample["database"], "singer_1.sqlite");
    assert_eq!(counterexample["category"], "tie at the cut");
    // The tie repeats a net worth, as the original does.
    assert_eq!(counterexample["natural"], true, "{counterexample}");
    assert_eq!(counterexample["distinct_only"], false);
    let tables = counterexample["tables"].as_array().unwrap();
    assert_eq!(tables.len(), 1, "{counterexample}");
    assert_eq!(tables[0]["name"], "singer");
    let columns = tables[0]["columns"].as_array().unwrap();
    let worth = columns
        .iter()
        .position(|c| c == "Net_Worth_Millions")
        .unwrap();
    let rows = tables[0]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{counterexample}");
    assert_eq!(rows[0][worth], rows[1][worth]);
    assert_eq!(counterexample["gold"].as_array().unwrap().len(), 2);
    assert_eq!(counterexample["prediction"].as_array().unwrap().len(), 1);
}

#[test]
fn ts_without_a_suite_is_a_config_error() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/spider-mini");
    let work = tempfile::tempdir().unwrap();
    std::fs::write(
        work.path().join("sqlgate.yml"),
        format!(
            "dataset: {{ gold: {e}/dev_gold.sql, databases: {e}/database, difficulty: none }}\n\
             predictions: [{{ path: {e}/predictions/C3.txt }}]\nmetrics: [ex, ts]\n",
            e = example.display()
        ),
    )
    .unwrap();
    let output = common::eval(&work.path().join("sqlgate.yml"), &[]);
    common::assert_exit(&output, 2);
    common::assert_contains(
        &common::stderr(&output),
        &["metric `ts` needs a test suite"],
    );
}

#[test]
fn counterexample_rows_are_scrubbed_before_they_are_written() {
    let work = tempfile::tempdir().unwrap();
    let suite = work.path().join("suite/singer");
    std::fs::create_dir_all(&suite).unwrap();
    let original = original_with_equal_net_worths(work.path());
    std::fs::copy(&original, suite.join("singer.sqlite")).unwrap();
    std::fs::copy(&original, suite.join("singer_1.sqlite")).unwrap();
    let planted = "ghp_PlantedInARow0123456789abcdefABCDEF";
    let variant = rusqlite::Connection::open(suite.join("singer_1.sqlite")).unwrap();
    variant
        .execute(
            "UPDATE singer SET Net_Worth_Millions = (SELECT max(Net_Worth_Millions) FROM singer), \
             Name = ?1 WHERE Singer_ID = 2",
            [planted],
        )
        .unwrap();
    drop(variant);
    let max = "SELECT Name FROM singer WHERE Net_Worth_Millions = (SELECT max(Net_Worth_Millions) FROM singer)";
    let limit = "SELECT Name FROM singer ORDER BY Net_Worth_Millions DESC LIMIT 1";
    common::write_suite_config(
        work.path(),
        &work.path().join("database"),
        "singer",
        max,
        limit,
    );
    let report = work.path().join("report.md");
    let jsonl = work.path().join("items.jsonl");
    let output = common::eval(
        &work.path().join("sqlgate.yml"),
        &[
            "--report",
            common::arg(&report),
            "--jsonl",
            common::arg(&jsonl),
        ],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_ne!(output.status.code(), Some(2), "{stderr}");
    let report = std::fs::read_to_string(&report).unwrap();
    let jsonl = std::fs::read_to_string(&jsonl).unwrap();
    assert!(
        jsonl.contains("counterexample") && report.contains("counterexample"),
        "{jsonl}"
    );
    for (name, text) in [
        ("report", &report),
        ("jsonl", &jsonl),
        ("stdout", &stdout.to_string()),
        ("stderr", &stderr.to_string()),
    ] {
        assert!(
            !text.contains(planted),
            "the planted token is in the {name}"
        );
    }
    common::assert_contains(&jsonl, &["[redacted]"]);
}

/// The item's JSONL record for `gold` and `prediction` on the example's `singer` database and
/// one variant of it made by `change` ([`common::judged_on_variant`]).
fn judged_on_variant(change: &str, gold: &str, prediction: &str) -> serde_json::Value {
    let databases = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/spider-mini/database");
    common::judged_on_variant(&databases, "singer", change, gold, prediction)
}

#[test]
fn a_tie_the_original_never_has_is_set_aside() {
    let item = judged_on_variant(
        "UPDATE singer SET Net_Worth_Millions = (SELECT max(Net_Worth_Millions) FROM singer) \
         WHERE Singer_ID = 2",
        "SELECT Name FROM singer WHERE Net_Worth_Millions = (SELECT max(Net_Worth_Millions) FROM singer)",
        "SELECT Name FROM singer ORDER BY Net_Worth_Millions DESC LIMIT 1",
    );
    assert_eq!(item["metrics"]["ts"], 1, "{item}");
    let set_aside = item["ts_components"]["set_aside"].as_array().unwrap();
    assert_eq!(set_aside.len(), 1, "{item}");
    let reason = set_aside[0].as_str().unwrap();
    assert!(
        reason.starts_with("singer_1.sqlite: singer.Net_Worth_Millions repeats")
            && reason.contains("all distinct in the original data"),
        "{reason}"
    );
}

#[test]
fn a_difference_on_data_the_domain_allows_decides() {
    // A singer's citizenship changes: the original does not say citizenships are unique or
    // paired with names, so the difference is natural and decides.
    let item = judged_on_variant(
        "UPDATE singer SET Citizenship = 'Chile' WHERE Singer_ID = 1",
        "SELECT Name FROM singer WHERE Citizenship = 'France'",
        "SELECT Name FROM singer WHERE Singer_ID = 1",
    );
    assert_eq!(item["metrics"]["ex"], 1, "{item}");
    assert_eq!(item["metrics"]["ts"], 0, "{item}");
    let counterexample = &item["ts_components"]["counterexample"];
    assert_eq!(counterexample["natural"], true, "{item}");
}

#[test]
fn an_aggregate_over_nothing_against_no_rows_does_not_decide() {
    let item = judged_on_variant(
        "UPDATE singer SET Citizenship = 'Chilean' WHERE Citizenship = 'Chile'",
        "SELECT max(Net_Worth_Millions) FROM singer WHERE Citizenship = 'Chile'",
        "SELECT Net_Worth_Millions FROM singer WHERE Citizenship = 'Chile' \
         ORDER BY Net_Worth_Millions DESC LIMIT 1",
    );
    assert_eq!(item["metrics"]["ts"], 1, "{item}");
    let reason = item["ts_components"]["set_aside"][0].as_str();
    assert!(
        reason.is_some_and(|r| r.contains("neither gives an answer")),
        "{item}"
    );
}

#[test]
fn distinct_inside_an_aggregate_counts_on_suite_databases() {
    // The official DISTINCT removal makes both `count(x)`: equal on the original (EX), while
    // on the suite database, with the aggregate's DISTINCT kept, 5 citizenships are not 8
    // singers; a projection's DISTINCT is still forgiven.
    let item = judged_on_variant(
        "UPDATE singer SET Name = Name || ' Jr' WHERE Singer_ID = 1",
        "SELECT count(DISTINCT Citizenship) FROM singer",
        "SELECT count(DISTINCT Singer_ID) FROM singer",
    );
    assert_eq!(item["metrics"]["ex"], 1, "{item}");
    assert_eq!(item["metrics"]["ts"], 0, "{item}");
    let item = judged_on_variant(
        "UPDATE singer SET Name = Name || ' Jr' WHERE Singer_ID = 1",
        "SELECT DISTINCT Citizenship FROM singer",
        "SELECT Citizenship FROM singer",
    );
    assert_eq!(item["metrics"]["ts"], 1, "{item}");
}
