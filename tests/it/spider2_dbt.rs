//! Spider 2.0-DBT (`sqlgate spider2-dbt`): each official quirk against the sound profile with
//! exact verdicts, the side-by-side report with its denominator, disagreements and gold
//! findings, and hostile predicted `.duckdb` files contained.

use crate::common;
use crate::spider2_dbt_conformance::{limits, verdicts};

use common::{arg, exited, read_jsonl, sqlgate};
use serde_json::json;
use sqlgate::engine::duckdb::tables::write_script;
use sqlgate::engine::exec::{ExecError, Limits};
use sqlgate::engine::spider2_dbt::{judge_files, Tables, Verdict};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Each named case of the corpus: (what, official, sound).
const QUIRKS: [(&str, bool, bool); 32] = [
    ("rows scrambled across columns", true, false),
    (
        "one predicted column stands for two gold columns",
        true,
        false,
    ),
    ("big ints 9 apart (relative tolerance)", true, false),
    ("big ints 999999 apart", true, false),
    ("small ints 1 apart", false, false),
    ("string sort keeps tolerance pairs", true, true),
    ("9.999 sorts after 9.0, 10.0 before", false, true),
    ("int vs float sorted as text", true, true),
    ("text that looks numeric vs int", false, false),
    ("1 vs True", true, true),
    ("NULL vs 0", false, false),
    ("NULL vs NULL int", true, true),
    ("NaN vs NULL", true, false),
    ("hugeint as float", true, false),
    ("a name needing quotes", false, true),
    ("a name with a hyphen", false, true),
    ("condition column out of range", false, false),
    ("ties", true, true),
    ("the predicted table is missing", false, false),
    // Issue 47's column types.
    ("equal two-element lists never match", false, true),
    ("NULL list vs NULL list", true, true),
    ("empty list vs empty list (numpy 2 raises)", false, true),
    ("lists beside ints, cond on the int", true, true),
    ("blob vs text", false, false),
    ("blobs with quotes, order ignored", true, true),
    ("time vs text", false, false),
    ("1 month vs 30 days", true, true),
    ("same instant, other offsets", true, true),
    ("aware vs naive", false, false),
    ("uuid vs text", false, false),
    ("UHUGEINT gold: fetchdf raises", false, false),
    ("wide decimal vs double", true, false),
];

#[test]
fn each_official_quirk_and_what_the_sound_profile_says_instead() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/spider2_dbt");
    let cases = read_jsonl(&root.join("cases.jsonl"));
    let named: Vec<_> = (QUIRKS.iter())
        .map(|(what, ..)| {
            cases
                .iter()
                .find(|c| c["what"] == *what)
                .expect(what)
                .clone()
        })
        .collect();
    let official = verdicts(&named, false);
    let sound = verdicts(&named, true);
    for (((what, want_official, want_sound), (_, o)), (_, s)) in
        QUIRKS.iter().zip(&official).zip(&sound)
    {
        assert_eq!(
            (*o == Verdict::Match, *s == Verdict::Match),
            (*want_official, *want_sound),
            "{what}: {o:?} / {s:?}"
        );
    }
}

/// A gold folder with one instance `i1` (table `t`: `gold_sql`) and a submission whose file
/// `i1/out.duckdb` is built by `pred_sql` (or holds `pred_bytes`); returns (gold, results).
fn layout(
    dir: &Path,
    gold_sql: &str,
    pred: Result<&str, &[u8]>,
    ignore_order: bool,
) -> (PathBuf, PathBuf) {
    let (gold, results) = (dir.join("gold"), dir.join("results"));
    std::fs::create_dir_all(gold.join("i1")).unwrap();
    std::fs::create_dir_all(results.join("i1")).unwrap();
    write_script(&gold.join("i1/db.duckdb"), gold_sql).unwrap();
    let eval = json!({"instance_id": "i1", "evaluation": {"func": "duckdb_match", "parameters":
        {"gold": "db.duckdb", "condition_tabs": ["t"], "condition_cols": [[]], "ignore_orders": [ignore_order]}}});
    std::fs::write(gold.join("spider2_eval.jsonl"), format!("{eval}\n")).unwrap();
    let answer =
        json!({"instance_id": "i1", "answer_type": "file", "answer_or_path": "out.duckdb"});
    std::fs::write(
        results.join("results_metadata.jsonl"),
        format!("{answer}\n"),
    )
    .unwrap();
    match pred {
        Ok(sql) => write_script(&results.join("i1/out.duckdb"), sql).unwrap(),
        Err(bytes) => std::fs::write(results.join("i1/out.duckdb"), bytes).unwrap(),
    }
    (gold, results)
}

/// `sqlgate spider2-dbt` on `gold` and `results` (and `extra` arguments), which must exit 0:
/// what it said and its first `--jsonl` line.
fn scored(dir: &Path, gold: &Path, results: &Path, extra: &[&str]) -> (String, serde_json::Value) {
    let jsonl = dir.join("out.jsonl");
    let mut args = vec![
        "spider2-dbt",
        "--gold",
        arg(gold),
        "--results",
        arg(results),
        "--jsonl",
        arg(&jsonl),
    ];
    args.extend(extra);
    let said = exited(&sqlgate(&args), 0);
    (said, read_jsonl(&jsonl)[0].clone())
}

const GOLD: &str = "CREATE TABLE t (a INTEGER, b INTEGER); INSERT INTO t VALUES (1, 2), (3, 4);";

#[test]
fn the_report_shows_both_profiles_the_denominator_the_disagreements_and_an_unchanged_gold() {
    let dir = tempfile::tempdir().unwrap();
    let scrambled = "CREATE TABLE t (a INTEGER, b INTEGER); INSERT INTO t VALUES (1, 4), (3, 2);";
    let (gold, results) = layout(dir.path(), GOLD, Ok(scrambled), true);
    // The starting database of the task already holds the gold table.
    let examples = dir.path().join("examples");
    std::fs::create_dir_all(examples.join("i1")).unwrap();
    write_script(&examples.join("i1/db.duckdb"), GOLD).unwrap();
    let (said, line) = scored(dir.path(), &gold, &results, &["--examples", arg(&examples)]);
    assert!(
        said.contains("1 instances in spider2_eval.jsonl (the denominator of both scores)"),
        "{said}"
    );
    assert!(
        said.contains("e12c5f1e): 1/1 = 100.0% (0 unscored)"),
        "{said}"
    );
    assert!(
        said.contains("one by one): 0/1 = 0.0% (0 unscored)"),
        "{said}"
    );
    assert!(
        said.contains("disagreements: 1\n  i1: official 1 (match), sound 0 (table `t` differs)"),
        "{said}"
    );
    assert!(said.contains("finding gold-unchanged: i1:"), "{said}");
    assert_eq!(
        (line["official"].as_i64(), line["sound"].as_i64()),
        (Some(1), Some(0))
    );
    assert_eq!(line["gold_unchanged"], true);
    // A starting database without the gold's rows is no finding.
    std::fs::remove_file(examples.join("i1/db.duckdb")).unwrap();
    write_script(
        &examples.join("i1/db.duckdb"),
        "CREATE TABLE t (a INTEGER, b INTEGER);",
    )
    .unwrap();
    let (said, line) = scored(dir.path(), &gold, &results, &["--examples", arg(&examples)]);
    assert!(!said.contains("finding gold-unchanged"), "{said}");
    assert_eq!(line["gold_unchanged"], false);
}

#[test]
fn a_missing_gold_database_or_a_foreign_evaluation_stops_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let (gold, results) = layout(dir.path(), GOLD, Ok(GOLD), false);
    let refused = || {
        let args = [
            "spider2-dbt",
            "--gold",
            arg(&gold),
            "--results",
            arg(&results),
        ];
        exited(&sqlgate(&args), 2)
    };
    std::fs::remove_file(gold.join("i1/db.duckdb")).unwrap();
    let said = refused();
    assert!(
        said.contains("spider2_eval.jsonl")
            && said.contains("line 1")
            && said.contains("the gold database"),
        "{said}"
    );
    let other = json!({"instance_id": "i1", "evaluation": {"func": "table_match", "parameters": {"gold": "db.duckdb"}}});
    std::fs::write(gold.join("spider2_eval.jsonl"), format!("{other}\n")).unwrap();
    let said = refused();
    assert!(said.contains("not \"duckdb_match\""), "{said}");
}

/// A gold file with DuckDB's write-ahead log beside it (which DuckDB replays on open, even
/// read-only) is a gold failure, not read with the log's changes.
#[test]
fn a_gold_with_a_write_ahead_log_beside_it_is_a_gold_failure() {
    let dir = tempfile::tempdir().unwrap();
    let (gold, results) = layout(dir.path(), GOLD, Ok(GOLD), false);
    std::fs::write(gold.join("i1/db.duckdb.wal"), b"").unwrap();
    let tables = Tables {
        names: &["t".to_string()],
        conditions: &[vec![]],
        ignore_orders: &[false],
    };
    common::duckdb_worker();
    let verdict = judge_files(
        &gold.join("i1/db.duckdb"),
        &results.join("i1/out.duckdb"),
        tables,
        &limits(),
        true,
    );
    assert!(
        matches!(&verdict, Verdict::GoldFailure(why) if why.contains("has a .wal file beside it")),
        "{verdict:?}"
    );
}

/// Hostile predicted files: (what, the file, verdict of both profiles).
fn hostile() -> Vec<(&'static str, Result<&'static str, &'static [u8]>)> {
    vec![
        ("not a database", Err(b"hello, I am not DuckDB\n".as_slice())),
        ("an LFS pointer", Err(b"version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n".as_slice())),
        // The gold's rows, but only if the file can be read: under the locks it cannot.
        ("a view reading a file", Ok("CREATE VIEW t AS SELECT * FROM (VALUES (1, 2), (3, 4)) v(a, b) WHERE (SELECT count(*) FROM read_csv('/etc/passwd', header = false, sep = '\x01')) > 0;")),
        ("a view through a macro", Ok("CREATE MACRO m() AS TABLE SELECT * FROM (VALUES (1, 2), (3, 4)) v(a, b); CREATE VIEW t AS SELECT * FROM m();")),
    ]
}

#[test]
fn hostile_predicted_files_score_0_and_reach_nothing() {
    for (what, file) in hostile() {
        let dir = tempfile::tempdir().unwrap();
        let (gold, results) = layout(dir.path(), GOLD, file, true);
        let (said, line) = scored(dir.path(), &gold, &results, &[]);
        let expected_official = i64::from(what == "a view through a macro");
        assert_eq!(
            (line["official"].as_i64(), line["sound"].as_i64()),
            (Some(expected_official), Some(0)),
            "{what}: {said}"
        );
        if what.starts_with("a view") {
            assert!(
                line["sound_reason"]
                    .as_str()
                    .unwrap()
                    .contains("is a VIEW, not a table"),
                "{what}: {line}"
            );
        }
    }
}

#[test]
fn a_huge_or_runaway_predicted_table_stops_at_the_caps_and_the_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let huge = "CREATE TABLE t AS SELECT range AS a, range AS b FROM range(50000);";
    let runaway = "CREATE TABLE n AS SELECT range AS x FROM range(100000); CREATE VIEW t AS SELECT count(*) AS a, 1 AS b FROM n n1, n n2;";
    let names = ["t".to_string()];
    let tables = Tables {
        names: &names,
        conditions: &[vec![]],
        ignore_orders: &[true],
    };
    let small = Limits {
        timeout: Duration::from_millis(300),
        max_rows: 1_000,
        ..limits()
    };
    for (what, sql) in [("huge", huge), ("runaway", runaway)] {
        let (gold, results) = layout(&dir.path().join(what), GOLD, Ok(sql), true);
        let (gold, pred) = (gold.join("i1/db.duckdb"), results.join("i1/out.duckdb"));
        common::duckdb_worker();
        let verdict = judge_files(&gold, &pred, tables, &small, false);
        let stopped = match what {
            "huge" => matches!(verdict, Verdict::PredFailure(ExecError::TooLarge(_))),
            _ => matches!(verdict, Verdict::PredFailure(ExecError::Timeout(_))),
        };
        assert!(stopped, "{what}: {verdict:?}");
    }
}

#[test]
fn an_answer_path_out_of_its_folder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (gold, results) = layout(dir.path(), GOLD, Ok(GOLD), false);
    let escape = json!({"instance_id": "i1", "answer_type": "file", "answer_or_path": "../../gold/i1/db.duckdb"});
    std::fs::write(
        results.join("results_metadata.jsonl"),
        format!("{escape}\n"),
    )
    .unwrap();
    let (_, line) = scored(dir.path(), &gold, &results, &[]);
    assert_eq!(
        (line["official"].as_i64(), line["sound"].as_i64()),
        (Some(0), Some(0))
    );
    assert!(
        line["official_reason"]
            .as_str()
            .unwrap()
            .contains("is outside"),
        "{line}"
    );
}
