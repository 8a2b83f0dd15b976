//! Property tests: no input makes the config loader, a prediction format, the SQL front end or
//! the executor panic, and result comparison is invariant where it must be.
//!
//! `SQLGATE_PROPTEST_CASES` raises the number of cases for long fuzzing runs (default 256).

use proptest::prelude::*;
use sqlgate::engine::denotation::{denotations_equal, CompareOptions, Profile};
use sqlgate::engine::value::{Row, Value};
use sqlgate::input::config::{
    CompareConfig, Config, PredictionFormat, PredictionSpec, ProfileName,
};
use sqlgate::input::dataset::{Dataset, GoldItem};
use sqlgate::input::extract::{extract, ExtractMode};
use sqlgate::sql::schema::Schema;
use std::collections::{HashMap, HashSet};
use std::path::Path;

fn cases() -> u32 {
    std::env::var("SQLGATE_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Text built from SQL and YAML fragments, so cases reach past the first token.
fn fragments() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "SELECT",
        "select",
        "DISTINCT",
        "count",
        "(",
        ")",
        "*",
        ",",
        ".",
        "T1",
        "T1.name",
        "name",
        "age",
        "singer",
        "concert",
        "AS",
        "FROM",
        "JOIN",
        "ON",
        "WHERE",
        "=",
        ">",
        "> =",
        "!",
        "<",
        "'x'",
        "\"y\"",
        "AND",
        "OR",
        "NOT",
        "IN",
        "BETWEEN",
        "LIKE",
        "'%a%'",
        "GROUP BY",
        "ORDER BY",
        "DESC",
        "LIMIT",
        "1",
        "1.5",
        "-2",
        "value",
        "HAVING",
        "UNION",
        "INTERSECT",
        "EXCEPT",
        ";",
        "--",
        "/*",
        "*/",
        "`",
        "[",
        "]",
        "YEAR(CURDATE())",
        "\n",
        " ",
        "\t",
        "dataset:",
        "gold:",
        "predictions:",
        "- {",
        "}",
        "[",
        ":",
        "#",
        "\u{0}",
        "é",
        "😀",
    ]);
    prop::collection::vec(pieces, 0..40).prop_map(|p| p.join(" "))
}

fn schema() -> Schema {
    Schema::new(vec![
        (
            "singer".into(),
            vec!["singer_id".into(), "name".into(), "age".into()],
        ),
        (
            "concert".into(),
            vec!["concert_id".into(), "singer_id".into(), "name".into()],
        ),
    ])
}

fn dataset(items: usize) -> Dataset {
    Dataset {
        items: (0..items)
            .map(|index| GoldItem {
                index,
                db_id: "singer".into(),
                sql: "SELECT 1".into(),
                question: None,
                evidence: None,
                difficulty: None,
                skipped: false,
                spider2: None,
                task: None,
            })
            .collect(),
        databases: Default::default(),
        sha256: String::new(),
        digests: Default::default(),
        copies: None,
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn config_loader_never_panics(text in prop_oneof![any::<String>(), fragments()]) {
        let _ = Config::parse(&text, Path::new("fuzz.yml"), &sqlgate::engine::registry::Engines);
    }

    #[test]
    fn prediction_formats_never_panic(bytes in prop_oneof![
        any::<Vec<u8>>(),
        fragments().prop_map(String::into_bytes),
        (0usize..8, fragments()).prop_map(|(i, s)| format!("{{\"id\": {i}, \"sql\": {s:?}}}\n{i}\t{s}\n").into_bytes()),
    ], allow_missing in any::<bool>()) {
        for format in [PredictionFormat::Lines, PredictionFormat::Tsv, PredictionFormat::Jsonl, PredictionFormat::BirdJson] {
            let spec = PredictionSpec { name: None, path: "p".into(), format, allow_missing, extract: Default::default() };
            if let Ok(predictions) = sqlgate::input::predictions::parse_predictions(Path::new("p"), &bytes, &spec, &dataset(8)) {
                prop_assert_eq!(predictions.len(), 8);
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        for mode in [ExtractMode::Auto, ExtractMode::Markdown, ExtractMode::None] {
            if let Ok(sql) = extract(&text, mode) {
                prop_assert!(!sql.is_empty() && sql.len() <= text.len());
            }
        }
    }

    #[test]
    fn sql_front_end_never_panics(sql in prop_oneof![any::<String>(), fragments()]) {
        let _ = sqlgate::sql::parse::parse_spider(&sql, &schema());
        let _ = sqlgate::sql::text::remove_distinct(&sql);
        let _ = sqlgate::sql::text::replace_cur_year(&sql);
        for profile in [ProfileName::SpiderTs, ProfileName::Bird, ProfileName::Strict] {
            let compare = CompareConfig { profile, ..CompareConfig::default() };
            let prepared = sqlgate::engine::profile::Profile::new(&compare);
            let _ = prepared.prepare_gold(&sql);
            let _ = prepared.prepare_prediction(&sql);
        }
    }
}

/// A small table of values drawn from a few of each kind, so equal values recur.
fn table() -> impl Strategy<Value = Vec<Row>> {
    let value = prop_oneof![
        Just(Value::Null),
        (0i64..3).prop_map(Value::Int),
        (0i64..3).prop_map(|i| Value::Real(i as f64)),
        Just(Value::Real(0.5)),
        prop::sample::select(vec!["a", "b"]).prop_map(|s| Value::Text(s.into())),
    ];
    (1usize..4).prop_flat_map(move |columns| {
        prop::collection::vec(prop::collection::vec(value.clone(), columns), 0..8)
    })
}

fn equal(profile: Profile, gold: &[Row], pred: &[Row], order: bool) -> bool {
    denotations_equal(
        gold,
        pred,
        order,
        &CompareOptions {
            profile,
            float_tolerance: 0.0,
        },
    )
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn row_order_never_matters_without_order_by(gold in table(), seed in any::<u64>()) {
        let mut pred = gold.clone();
        let mut rng = seed;
        for i in (1..pred.len()).rev() {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1);
            pred.swap(i, (rng >> 33) as usize % (i + 1));
        }
        for profile in [Profile::SpiderTs, Profile::Bird, Profile::Strict] {
            prop_assert!(equal(profile, &gold, &pred, false), "{:?}", profile);
        }
    }

    #[test]
    fn spider_ts_accepts_any_column_rotation(gold in table(), rotation in 1usize..3) {
        let pred: Vec<Row> = gold.iter().map(|r| { let mut r = r.clone(); let k = rotation % r.len(); r.rotate_left(k); r }).collect();
        prop_assert!(equal(Profile::SpiderTs, &gold, &pred, false));
    }

    #[test]
    fn strict_and_bird_agree_with_multiset_and_set_oracles(gold in table(), pred in table()) {
        prop_assert_eq!(equal(Profile::Strict, &gold, &pred, false), multiset(&gold) == multiset(&pred));
        let set = |t: &[Row]| t.iter().cloned().collect::<HashSet<Row>>();
        prop_assert_eq!(equal(Profile::Bird, &gold, &pred, false), set(&gold) == set(&pred));
    }

    #[test]
    fn duplicates_count_except_in_bird(gold in table().prop_filter("non-empty", |t| !t.is_empty())) {
        let mut doubled = gold.clone();
        doubled.push(gold[0].clone());
        prop_assert!(!equal(Profile::Strict, &gold, &doubled, false));
        prop_assert!(!equal(Profile::SpiderTs, &gold, &doubled, false));
        prop_assert!(equal(Profile::Bird, &gold, &doubled, false));
    }
}

/// Rows counted by Python equality (the oracle for bag semantics).
fn multiset(table: &[Row]) -> HashMap<Row, usize> {
    let mut counts = HashMap::new();
    for row in table {
        *counts.entry(row.clone()).or_insert(0) += 1;
    }
    counts
}

#[test]
fn hostile_sql_on_a_real_database_never_panics_or_writes() {
    let spider = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/spider-mini/database/singer/singer.sqlite");
    let work = tempfile::tempdir().unwrap();
    let db = work.path().join("singer.sqlite");
    std::fs::copy(&spider, &db).unwrap();
    let before = std::fs::read(&db).unwrap();
    let executor = sqlgate::engine::exec::Executor::new(sqlgate::engine::exec::Limits {
        timeout: std::time::Duration::from_millis(200),
        max_rows: 10_000,
        max_bytes: 1 << 20,
    });
    let mut runner = proptest::test_runner::TestRunner::new(config());
    runner
        .run(&fragments(), |sql| {
            let _ = executor.run(&db, &sql);
            Ok(())
        })
        .unwrap();
    assert_eq!(std::fs::read(&db).unwrap(), before);
    assert_eq!(
        std::fs::read_dir(work.path()).unwrap().count(),
        1,
        "no file appeared beside the database"
    );
}
