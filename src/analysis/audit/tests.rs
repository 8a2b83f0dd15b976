//! One constructed database per finding kind, with the exact findings expected.

use super::*;
use crate::engine::exec::Limits;
use crate::input::config::{CompareConfig, ProfileName};
use crate::input::csv::CsvTable;
use crate::input::dataset::Database;
use crate::input::spider2::{AnswerSource, GoldAnswer, Spider2Gold};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// `t(name, score, code)`: `b` and `c` tie on score 2, `d` has no score, codes are numbers
/// stored as text.
const DATA: &str = "CREATE TABLE t (name TEXT, score INT, code TEXT);
    INSERT INTO t VALUES ('a', 3, '9'), ('b', 2, '10'), ('c', 2, '100'), ('d', NULL, '8');";

fn database(folder: &Path, name: &str, sql: &str) -> PathBuf {
    let path = folder.join(name);
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(sql).unwrap();
    path
}

fn executor() -> Executor {
    Executor::new(Limits {
        timeout: Duration::from_secs(5),
        max_rows: 10_000,
        max_bytes: 1 << 20,
    })
}

fn item(index: usize, sql: &str) -> GoldItem {
    GoldItem {
        index,
        db_id: "db".into(),
        sql: sql.into(),
        question: None,
        evidence: None,
        difficulty: None,
        skipped: false,
        spider2: None,
        task: None,
    }
}

fn dataset(db: &Path, items: Vec<GoldItem>) -> Dataset {
    let mut databases = BTreeMap::new();
    databases.insert(
        "db".to_string(),
        Database {
            db_id: "db".into(),
            path: Some(db.to_path_buf()),
            schema: None,
            tables_entry: None,
        },
    );
    Dataset {
        items,
        databases,
        sha256: String::new(),
        digests: Default::default(),
        copies: None,
    }
}

fn profile(name: ProfileName) -> Profile {
    Profile::new(&CompareConfig {
        profile: name,
        ..CompareConfig::default()
    })
}

/// The findings of one gold on `DATA` under `profile`, as (kind, evidence).
fn audit_one(sql: &str, name: ProfileName) -> Vec<(&'static str, String)> {
    audit_one_with(sql, name, &executor())
}

/// Like [`audit_one`], the gold run by `executor`.
fn audit_one_with(
    sql: &str,
    name: ProfileName,
    executor: &Executor,
) -> Vec<(&'static str, String)> {
    let folder = tempfile::tempdir().unwrap();
    let db = database(folder.path(), "db.sqlite", DATA);
    let dataset = dataset(&db, vec![item(0, sql)]);
    let profile = profile(name);
    let context = Context {
        dataset: &dataset,
        executor,
        profile: &profile,
        suite: None,
        systems: &[],
        dialects: &[],
    };
    shown(context.audit_all())
}

fn shown(findings: Vec<Finding>) -> Vec<(&'static str, String)> {
    findings
        .into_iter()
        .map(|f| (f.kind.as_str(), f.evidence))
        .collect()
}

#[test]
fn a_failing_gold_is_a_gold_error() {
    assert_eq!(
        audit_one("SELECT nope FROM t", ProfileName::Bird),
        [(
            "gold-error",
            "on db.sqlite: no such column: nope in SELECT nope FROM t at offset 7".to_string()
        )]
    );
}

#[test]
fn a_gold_past_the_time_limit_is_a_gold_timeout() {
    let endless = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) \
                   SELECT count(*) FROM n";
    let executor = Executor::new(Limits {
        timeout: Duration::from_millis(200),
        ..executor().limits()
    });
    let findings = audit_one_with(endless, ProfileName::Bird, &executor);
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].0, "gold-timeout");
    assert!(
        findings[0].1.starts_with("on db.sqlite: ") && findings[0].1.contains("200 ms"),
        "{findings:?}"
    );
}

#[test]
fn a_limit_cut_on_tied_rows_is_a_limit_tie() {
    assert_eq!(
        audit_one(
            "SELECT name FROM t WHERE score IS NOT NULL ORDER BY score DESC LIMIT 2",
            ProfileName::Bird
        ),
        [(
            "limit-tie",
            "on db.sqlite: rows 2 and 3 tie on the sort key (2) at the LIMIT 2 cut".to_string()
        )]
    );
    // Cut above the tie: determined.
    assert!(audit_one(
        "SELECT name FROM t WHERE score IS NOT NULL ORDER BY score DESC LIMIT 1",
        ProfileName::Bird
    )
    .is_empty());
}

#[test]
fn tied_rows_in_an_ordered_comparison_are_an_order_tie() {
    // All rows, and tied inside a LIMIT that cuts off a row with another key (the set kept is
    // determined, its order is not).
    for sql in [
        "SELECT name FROM t WHERE score IS NOT NULL ORDER BY score",
        "SELECT name FROM t WHERE score IS NOT NULL ORDER BY score LIMIT 2",
    ] {
        assert_eq!(
            audit_one(sql, ProfileName::SpiderTs),
            [(
                "order-tie",
                "on db.sqlite: rows 1 and 2 tie on the sort key (2) but differ: ('b') and ('c')"
                    .to_string()
            )],
            "{sql}"
        );
        // BIRD compares sets: the order decides nothing.
        assert!(audit_one(sql, ProfileName::Bird).is_empty(), "{sql}");
    }
}

#[test]
fn a_grouped_column_holding_several_values_is_a_bare_column() {
    // Score 2 groups 'b' and 'c': the name answered for it is either.
    assert_eq!(
        audit_one(
            "SELECT name FROM t WHERE score IS NOT NULL GROUP BY score",
            ProfileName::Bird
        ),
        [(
            "bare-column",
            "on db.sqlite: `name` is neither grouped nor aggregated and holds 2 values in one \
             group of the answer, so the engine returns any of them: ('b')"
                .to_string()
        )]
    );
    // One name per group, or SQLite's one-MAX exception (the extreme row's name): determined.
    for sql in [
        "SELECT code, count(*) FROM t GROUP BY name",
        "SELECT name, max(score) FROM t",
    ] {
        assert!(audit_one(sql, ProfileName::Bird).is_empty(), "{sql}");
    }
}

#[test]
fn a_null_sort_key_is_a_null_order() {
    assert_eq!(
        audit_one(
            "SELECT name FROM t ORDER BY score LIMIT 1",
            ProfileName::Bird
        ),
        [(
            "null-order",
            "on db.sqlite: sort key `score` is NULL in 1 of 4 rows (SQLite and MySQL sort NULL \
             first ascending, PostgreSQL last)"
                .to_string()
        )]
    );
}

#[test]
fn numbers_stored_as_text_sorted_as_text_are_a_text_number_sort() {
    assert_eq!(
        audit_one(
            "SELECT name FROM t ORDER BY code DESC LIMIT 1",
            ProfileName::Bird
        ),
        [(
            "text-number-sort",
            "on db.sqlite: sort key `code` holds numbers stored as text: '100' sorts before '8' \
             as text, after it as a number"
                .to_string()
        )]
    );
    // Sorted as numbers: nothing to say.
    assert!(audit_one(
        "SELECT name FROM t ORDER BY CAST(code AS INT) DESC LIMIT 1",
        ProfileName::Bird
    )
    .is_empty());
}

/// The findings of `sql` on a database whose `t.code` holds `codes` (texts; `None` is NULL).
fn audit_codes(codes: &[Option<&str>], sql: &str) -> Vec<(&'static str, String)> {
    let folder = tempfile::tempdir().unwrap();
    let values: Vec<String> = (codes.iter().enumerate())
        .map(|(i, code)| match code {
            Some(code) => format!("({i}, '{code}')"),
            None => format!("({i}, NULL)"),
        })
        .collect();
    let db = database(
        folder.path(),
        "db.sqlite",
        &format!(
            "CREATE TABLE t (id INT, code TEXT); INSERT INTO t VALUES {};",
            values.join(", ")
        ),
    );
    let dataset = dataset(&db, vec![item(0, sql)]);
    let (executor, profile) = (executor(), profile(ProfileName::Bird));
    let context = Context {
        dataset: &dataset,
        executor: &executor,
        profile: &profile,
        suite: None,
        systems: &[],
        dialects: &[],
    };
    shown(context.audit_all())
}

#[test]
fn numbers_stored_as_text_beside_a_few_other_strings_are_still_a_text_number_sort() {
    let sql = "SELECT id FROM t ORDER BY code LIMIT 1";
    let mut codes = vec![Some("9"), Some("10"), Some("100"), Some("25"), Some("3")];
    codes.extend([Some("7"), Some("8"), Some("11"), Some("null")]);
    // 8 of the 9 non-NULL values are numbers: under 90 %, a column of mixed text.
    assert_eq!(audit_codes(&codes, sql), []);
    codes.push(Some("12"));
    // 9 of 10: numbers kept as text with a stray 'null'; the text minimum '10' is not 3.
    assert_eq!(
        audit_codes(&codes, sql),
        [(
            "text-number-sort",
            "on db.sqlite: sort key `code` holds numbers stored as text (9 of its 10 non-NULL \
             values are numbers): '100' sorts before '11' as text, after it as a number"
                .to_string()
        )]
    );
    assert_eq!(super::order::TEXT_NUMBER_SHARE, 0.9);
}

#[test]
fn dialects_writing_the_same_date_time_or_number_differently_agree() {
    let folder = tempfile::tempdir().unwrap();
    let db = database(folder.path(), "db.sqlite", DATA);
    let golds = [
        (
            "SELECT '2011-05-17 10:04:05.000'",
            "SELECT '2011-05-17T10:04:05'",
        ),
        ("SELECT '10:04:05.25'", "SELECT '10:04:05.250000'"),
        ("SELECT '2011-05-17'", "SELECT '2011-05-18'"),
    ];
    let items = (golds.iter().enumerate())
        .map(|(i, (own, _))| item(i, own))
        .collect();
    let dataset = dataset(&db, items);
    let (executor, profile) = (executor(), profile(ProfileName::Bird));
    let dialects = [Dialect {
        name: "other".into(),
        golds: golds.iter().map(|(_, other)| other.to_string()).collect(),
        executor: executor.clone(),
        by_db_id: false,
    }];
    let context = Context {
        dataset: &dataset,
        executor: &executor,
        profile: &profile,
        suite: None,
        systems: &[],
        dialects: &dialects,
    };
    assert_eq!(
        shown(context.audit_all()),
        [(
            "dialect-disagreement",
            "the other gold returns 1 row [('2011-05-18')] on the same data, this gold 1 row \
             [('2011-05-17')]"
                .to_string()
        )]
    );
}

/// The findings of a dataset's items under the BIRD profile with the suite `files`.
fn audit_on_suite(dataset: &Dataset, files: Vec<PathBuf>) -> Vec<(&'static str, String)> {
    let suite = Suite::listed([("db".to_string(), files)]);
    let (executor, profile) = (executor(), profile(ProfileName::Bird));
    let context = Context {
        dataset,
        executor: &executor,
        profile: &profile,
        suite: Some(&suite),
        systems: &[],
        dialects: &[],
    };
    shown(context.audit_all())
}

#[test]
fn a_gold_empty_on_the_database_and_every_suite_database_is_empty_everywhere() {
    let folder = tempfile::tempdir().unwrap();
    let db = database(folder.path(), "db.sqlite", DATA);
    let empty = database(
        folder.path(),
        "db_r1.sqlite",
        "CREATE TABLE t (name TEXT, score INT, code TEXT);",
    );
    let full = database(
        folder.path(),
        "db_r2.sqlite",
        "CREATE TABLE t (name TEXT, score INT, code TEXT); INSERT INTO t VALUES ('x', 500, '1');",
    );
    let sql = "SELECT name FROM t WHERE score > 100";
    let dataset = dataset(&db, vec![item(0, sql)]);
    let audit = |files: Vec<PathBuf>| audit_on_suite(&dataset, files);
    assert_eq!(
        audit(vec![empty.clone()]),
        [(
            "empty-everywhere",
            "no rows on db.sqlite and on its 1 suite databases".to_string()
        )]
    );
    assert!(audit(vec![empty, full]).is_empty());
}

#[test]
fn an_item_without_its_own_database_is_audited_on_its_suite() {
    let folder = tempfile::tempdir().unwrap();
    let generated = database(folder.path(), "db_r1.sqlite", DATA);
    let tie = "SELECT name FROM t WHERE score IS NOT NULL ORDER BY score DESC LIMIT 2";
    let mut dataset = dataset(
        &generated,
        vec![item(0, tie), item(1, "SELECT nope FROM t")],
    );
    dataset.databases.get_mut("db").unwrap().path = None;
    let audit = |files: Vec<PathBuf>| audit_on_suite(&dataset, files);
    assert_eq!(
        audit(vec![generated.clone()]),
        [
            (
                "limit-tie",
                "on db_r1.sqlite: rows 2 and 3 tie on the sort key (2) at the LIMIT 2 cut"
                    .to_string()
            ),
            (
                "gold-error",
                "on db_r1.sqlite: no such column: nope in SELECT nope FROM t at offset 7"
                    .to_string()
            )
        ]
    );
    // Neither a database of its own nor a suite: nothing to run on.
    assert!(audit(Vec::new()).is_empty());
}

fn system(name: &str, prediction: &str) -> System {
    System {
        name: name.into(),
        path: PathBuf::from(format!("{name}.txt")),
        predictions: vec![Some(prediction.into())],
        lines: vec![Some(1)],
        unextracted: Default::default(),
    }
}

#[test]
fn most_systems_agreeing_against_the_gold_make_it_suspect() {
    let folder = tempfile::tempdir().unwrap();
    let db = database(folder.path(), "db.sqlite", DATA);
    let dataset = dataset(&db, vec![item(0, "SELECT count(*) FROM t")]);
    let (executor, profile) = (executor(), profile(ProfileName::Bird));
    let audit = |systems: &[System]| {
        let context = Context {
            dataset: &dataset,
            executor: &executor,
            profile: &profile,
            suite: None,
            systems,
            dialects: &[],
        };
        shown(context.audit_all())
    };
    let counted = "SELECT count(score) FROM t";
    assert_eq!(
        audit(&[
            system("A", counted),
            system("B", counted),
            system("C", "SELECT 1")
        ]),
        [(
            "suspect-gold",
            "2 of 3 systems (A, B) return the same results on all 1 databases, unlike the gold: \
             on db.sqlite they return 1 row [(3)], the gold 1 row [(4)]"
                .to_string()
        )]
    );
    // Two of four is no majority; a majority that agrees with the gold is no finding.
    let gold = "SELECT count(*) FROM t";
    assert!(audit(&[
        system("A", counted),
        system("B", counted),
        system("C", "SELECT 1"),
        system("D", "SELECT 2")
    ])
    .is_empty());
    assert!(audit(&[system("A", gold), system("B", gold), system("C", counted)]).is_empty());
}

#[test]
fn another_dialects_gold_returning_another_result_is_a_dialect_disagreement() {
    let folder = tempfile::tempdir().unwrap();
    let db = database(folder.path(), "db.sqlite", DATA);
    let dataset = dataset(
        &db,
        vec![
            item(0, "SELECT name FROM t WHERE score = 2"),
            item(1, "SELECT count(*) FROM t"),
        ],
    );
    let (executor, profile) = (executor(), profile(ProfileName::Bird));
    let dialects = [Dialect {
        name: "other".into(),
        golds: vec![
            "SELECT name FROM t WHERE score >= 2".into(),
            "SELECT count(name) FROM t".into(),
        ],
        executor: executor.clone(),
        by_db_id: false,
    }];
    let context = Context {
        dataset: &dataset,
        executor: &executor,
        profile: &profile,
        suite: None,
        systems: &[],
        dialects: &dialects,
    };
    assert_eq!(
        shown(context.audit_all()),
        [(
            "dialect-disagreement",
            "the other gold returns 3 rows [('a'), ('b'), ('c')] on the same data, this gold \
             2 rows [('b'), ('c')]"
                .to_string()
        )]
    );
}

#[test]
fn a_spider2_gold_query_matching_none_of_its_result_files_is_a_mismatch() {
    let folder = tempfile::tempdir().unwrap();
    let db = database(folder.path(), "db.sqlite", DATA);
    let spider2 = |sql: &str| {
        let mut gold = item(0, sql);
        gold.spider2 = Some(Arc::new(Spider2Gold {
            instance_id: "local001".into(),
            answers: vec![
                GoldAnswer {
                    file: PathBuf::from("exec_result/local001.csv"),
                    source: AnswerSource::Table(CsvTable {
                        columns: vec!["n".into()],
                        rows: vec![vec!["4".into()]],
                        irregular: Vec::new(),
                    }),
                },
                GoldAnswer {
                    file: PathBuf::from("sql/local001.sql"),
                    source: AnswerSource::Sql(sql.into()),
                },
            ],
            ignore_order: true,
            condition: serde_json::Value::Null,
            absent_settings: Vec::new(),
            multi: true,
            notes: Vec::new(),
        }));
        gold
    };
    let (executor, profile) = (executor(), profile(ProfileName::Spider2));
    let audit = |sql: &str| {
        let dataset = dataset(&db, vec![spider2(sql)]);
        let context = Context {
            dataset: &dataset,
            executor: &executor,
            profile: &profile,
            suite: None,
            systems: &[],
            dialects: &[],
        };
        shown(context.audit_all())
    };
    assert_eq!(
        audit("SELECT count(score) FROM t"),
        [(
            "gold-result-mismatch",
            "on db.sqlite of db: local001.sql returns 1 row [(3)]; it matches none of local001.csv"
                .to_string()
        )]
    );
    assert!(audit("SELECT count(*) FROM t").is_empty());
}
