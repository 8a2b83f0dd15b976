//! Issue 46 on SQLite, containment: hostile state-changing predictions are refused or stopped
//! on their own copy, scored wrong, and leave the template (the base data) byte for byte as it
//! was; other items' verdicts do not move; a fault of the harness is never a verdict.

use serde_json::json;
use sqlgate::engine::livesql::{judge, judge_all, Budget, Profile, Settings, Verdict};
use sqlgate::input::livesql::LiveItem;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The template: `t(a)` holding 1 and 2; the gold deletes 2.
struct Base {
    folder: tempfile::TempDir,
    template: PathBuf,
}

fn base() -> Base {
    let folder = tempfile::tempdir().unwrap();
    let template = folder.path().join("base.sqlite");
    let conn = rusqlite::Connection::open(&template).unwrap();
    conn.execute_batch("CREATE TABLE t(a INTEGER); INSERT INTO t VALUES (1), (2);")
        .unwrap();
    Base { folder, template }
}

impl Base {
    /// Every file of the template's folder with its bytes.
    fn files(&self) -> Vec<(PathBuf, Vec<u8>)> {
        crate::common::snapshot(self.folder.path())
    }
}

/// A Management item whose test expects `t` to hold only 1.
fn item(id: &str) -> LiveItem {
    let check = "def test_case(pred_sqls, sol_sqls, db_path, conn):\n    res, err, to = execute_queries(['SELECT a FROM t ORDER BY a'], db_path, conn, None, '')\n    assert not err and not to, 'check query failed'\n    assert res == [(1,)], f'got {res}'\n    return 1\n";
    LiveItem {
        instance_id: id.into(),
        db_id: "base".into(),
        preprocess_sql: vec![],
        sol_sql: vec!["DELETE FROM t WHERE a = 2".into()],
        clean_up_sql: vec![],
        test_cases: vec![check.into()],
        category: "Management".into(),
        conditions: json!({"order": false}),
        efficiency: false,
        issue_sql: vec![],
        post: Default::default(),
    }
}

fn settings(profile: Profile, budget: Budget) -> Settings {
    Settings {
        profile,
        budget,
        python: PathBuf::from("python3"),
    }
}

fn small_budget() -> Budget {
    Budget {
        deadline: Duration::from_secs(20),
        max_steps: 200_000_000,
        disk_bytes: 1 << 20,
    }
}

/// One prediction judged on a copy of `base` under `profile`.
fn run(base: &Base, profile: Profile, budget: Budget, prediction: &[&str]) -> Verdict {
    let prediction: Vec<String> = prediction.iter().map(|s| s.to_string()).collect();
    let settings = settings(profile, budget);
    judge(&item("x"), Some(&prediction), &base.template, &settings).unwrap()
}

#[test]
fn reaches_outside_the_copy_are_refused_and_scored_wrong() {
    let base = base();
    let template = base.template.display().to_string();
    let outside = base
        .folder
        .path()
        .join("written.sqlite")
        .display()
        .to_string();
    let cases: [(&str, Vec<String>, &str); 7] = [
        (
            "ATTACH the template",
            vec![
                format!("ATTACH DATABASE '{template}' AS b"),
                "DELETE FROM b.t".into(),
            ],
            "not authorized",
        ),
        (
            "VACUUM INTO a file",
            vec![
                "DELETE FROM t WHERE a = 2".into(),
                format!("VACUUM INTO '{outside}'"),
            ],
            "",
        ),
        (
            "VACUUM INTO the template",
            vec![
                "DELETE FROM t WHERE a = 2".into(),
                format!("VACUUM INTO '{template}'"),
            ],
            "",
        ),
        (
            "load_extension",
            vec![
                "DELETE FROM t WHERE a = 2".into(),
                "SELECT load_extension('/tmp/x.so')".into(),
            ],
            "not authorized",
        ),
        (
            "PRAGMA lifting the disk budget",
            vec![
                "PRAGMA max_page_count = 1000000000".into(),
                "DELETE FROM t WHERE a = 2".into(),
            ],
            "not authorized",
        ),
        (
            "PRAGMA writable_schema",
            vec![
                "PRAGMA writable_schema = ON".into(),
                "DELETE FROM t WHERE a = 2".into(),
            ],
            "not authorized",
        ),
        (
            "PRAGMA temp_store_directory",
            vec![
                format!(
                    "PRAGMA temp_store_directory = '{}'",
                    base.folder.path().display()
                ),
                "DELETE FROM t WHERE a = 2".into(),
            ],
            "not authorized",
        ),
    ];
    let before = base.files();
    for profile in [Profile::Official, Profile::Sound] {
        for (name, prediction, says) in &cases {
            let prediction: Vec<&str> = prediction.iter().map(String::as_str).collect();
            let verdict = run(&base, profile, small_budget(), &prediction);
            assert!(
                !verdict.success && verdict.execution_error,
                "{name}: {verdict:?}"
            );
            assert!(verdict.message.contains(says), "{name}: {verdict:?}");
        }
    }
    assert_eq!(base.files(), before, "the template's folder changed");
}

#[test]
fn a_temp_object_shadowing_a_table_answers_only_the_official_checks() {
    let base = base();
    let shadow = ["CREATE TEMP VIEW t AS SELECT 1 AS a"];
    let official = run(&base, Profile::Official, small_budget(), &shadow);
    let sound = run(&base, Profile::Sound, small_budget(), &shadow);
    assert!(official.success, "{official:?}");
    assert!(!sound.success && sound.assertion_error, "{sound:?}");
    let right = ["DELETE FROM t WHERE a = 2"];
    for profile in [Profile::Official, Profile::Sound] {
        assert!(run(&base, profile, small_budget(), &right).success);
    }
}

#[test]
fn endless_writes_and_statements_are_stopped_within_the_budget() {
    let base = base();
    let endless_insert = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) INSERT INTO t SELECT x FROM c";
    let endless_select =
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) FROM c";
    let unlimited_steps = Budget {
        max_steps: u64::MAX,
        deadline: Duration::from_secs(2),
        ..small_budget()
    };
    // (prediction, budget, what stops it, stopped by the budget rather than an error)
    let cases = [
        (
            endless_insert,
            small_budget(),
            "database or disk is full",
            false,
        ),
        (endless_select, small_budget(), "step budget", true),
        (endless_select, unlimited_steps.clone(), "deadline", true),
    ];
    let before = base.files();
    for (sql, budget, says, stopped) in cases {
        for profile in [Profile::Official, Profile::Sound] {
            let started = Instant::now();
            let verdict = run(
                &base,
                profile,
                budget.clone(),
                &["DELETE FROM t WHERE a = 2", sql],
            );
            assert!(
                started.elapsed() < Duration::from_secs(15),
                "{sql}: {:?}",
                started.elapsed()
            );
            assert!(
                !verdict.success && verdict.stopped == stopped,
                "{sql}: {verdict:?}"
            );
            assert!(verdict.message.contains(says), "{sql}: {verdict:?}");
            let official_kill = stopped && profile == Profile::Official;
            assert_eq!(
                verdict.execution_error,
                !stopped || official_kill,
                "{verdict:?}"
            );
        }
    }
    assert_eq!(base.files(), before);
}

#[test]
fn items_on_one_database_in_parallel_never_see_each_other() {
    let base = base();
    let items: Vec<LiveItem> = (0..24).map(|i| item(&format!("i{i:02}"))).collect();
    let predictions: BTreeMap<String, Vec<String>> = (items.iter().enumerate())
        .map(|(i, item)| {
            let sql = match i % 2 {
                0 => "DELETE FROM t",
                _ => "DELETE FROM t WHERE a = 2",
            };
            (item.instance_id.clone(), vec![sql.to_string()])
        })
        .collect();
    let templates = BTreeMap::from([("base".to_string(), base.template.clone())]);
    let before = base.files();
    let settings = settings(Profile::Official, small_budget());
    for _ in 0..2 {
        let verdicts = judge_all(&items, &predictions, &templates, &settings);
        let success: Vec<bool> = verdicts.into_iter().map(|v| v.unwrap().success).collect();
        let expected: Vec<bool> = (0..24).map(|i| i % 2 == 1).collect();
        assert_eq!(success, expected);
    }
    assert_eq!(base.files(), before);
}

#[test]
fn a_harness_fault_is_never_a_verdict() {
    let base = base();
    let prediction = vec!["DELETE FROM t WHERE a = 2".to_string()];
    let missing = base.folder.path().join("missing.sqlite");
    let official = settings(Profile::Official, small_budget());
    let fault = judge(&item("x"), Some(&prediction), &missing, &official).unwrap_err();
    assert!(fault.contains("is not a regular file"), "{fault}");
    let no_python = Settings {
        python: PathBuf::from("/nonexistent/python3"),
        ..official
    };
    let fault = judge(&item("x"), Some(&prediction), &base.template, &no_python).unwrap_err();
    assert!(fault.contains("/nonexistent/python3"), "{fault}");
}

#[test]
fn test_cases_run_without_secrets_in_an_empty_folder() {
    if !crate::common::in_own_process(
        "livesql_hostile::test_cases_run_without_secrets_in_an_empty_folder",
        &[("GITHUB_TOKEN", "ghp_secret"), ("SQLGATE_SECRET", "x")],
    ) {
        return;
    }
    assert_eq!(std::env::var("GITHUB_TOKEN").as_deref(), Ok("ghp_secret"));
    let base = base();
    let mut probe = item("x");
    probe.test_cases = vec![concat!(
        "def test_case(pred_sqls, sol_sqls, db_path, conn):\n",
        "    import os\n",
        "    assert sorted(os.environ) == ['LC_ALL', 'PATH'], sorted(os.environ)\n",
        "    assert os.listdir('.') == [], os.listdir('.')\n",
        "    return 1\n"
    )
    .into()];
    let prediction = vec!["SELECT 1".to_string()];
    let settings = settings(Profile::Official, small_budget());
    let verdict = judge(&probe, Some(&prediction), &base.template, &settings).unwrap();
    assert!(verdict.success, "{verdict:?}");
}
