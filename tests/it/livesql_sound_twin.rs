//! `livesql_sound` and the gold's twin copy (red team round 26, win B): every gold statement a
//! test case runs (`ex_base`'s `sol_sqls`, `execute_queries(sol_sqls, ...)`) reads the twin the
//! gold ran on, never the prediction's copy; and an item whose gold writes nothing (a Query)
//! fails when its prediction left the database changed. The official profiles keep running the
//! gold on the prediction's connection (their recorded verdicts, `tests/it/livesql.rs`).

use crate::common::{self, databases_from_scripts};
use sqlgate::engine::livesql::{judge, Budget, Profile, Settings, Verdict};
use sqlgate::input::livesql::{read_items, LiveItem};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The corpus's databases, built in a temporary folder, and its items.
struct Corpus {
    items: Vec<LiveItem>,
    folder: tempfile::TempDir,
}

fn load() -> Corpus {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/livesql");
    let folder = tempfile::tempdir().unwrap();
    databases_from_scripts(&corpus.join("db"), folder.path());
    let items = read_items(&corpus.join("items.jsonl")).unwrap();
    Corpus { items, folder }
}

impl Corpus {
    fn item(&self, id: &str) -> LiveItem {
        (self.items.iter().find(|i| i.instance_id == id).cloned()).unwrap()
    }

    /// `prediction` for `item` under `profile`.
    fn judge(&self, item: &LiveItem, prediction: &[&str], profile: Profile) -> Verdict {
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
        let prediction: Vec<String> = prediction.iter().map(|s| s.to_string()).collect();
        judge(item, Some(&prediction), &template, &settings).unwrap()
    }
}

/// `id` with a first gold statement that writes (a TEMP table), so that the item is no Query and
/// only the gold's twin decides, not the Query item's post-state.
fn writing_gold(corpus: &Corpus, id: &str) -> LiveItem {
    let mut item = corpus.item(id);
    let note = "CREATE TEMP TABLE sqlgate_note AS SELECT 1 AS x".to_string();
    item.sol_sql.insert(0, note);
    item
}

#[test]
fn ex_base_runs_the_gold_on_its_twin_not_on_the_copy_the_prediction_changed() {
    let corpus = load();
    // lsq_158's test: `ex_base(pred_sqls, sol_sqls, ..., {'order': True})`, the gold the five
    // costliest visits. The lever levels every cost, so the gold's order on the prediction's
    // copy is the id order the prediction gives.
    let item = writing_gold(&corpus, "lsq_158");
    let lever = [
        "UPDATE visits SET cost = 0",
        "SELECT id, cost FROM visits ORDER BY id LIMIT 5",
    ];
    let official = corpus.judge(&item, &lever, Profile::Official);
    assert!(official.success, "the official quirk is kept: {official:?}");
    let sound = corpus.judge(&item, &lever, Profile::Sound);
    assert!(!sound.success && sound.assertion_error, "{sound:?}");
    common::assert_contains(&sound.message, &["Test case errors:"]);
    let right = corpus.judge(&item, &[&corpus.item("lsq_158").sol_sql[0]], Profile::Sound);
    assert!(right.success, "{right:?}");
}

#[test]
fn execute_queries_of_the_gold_reads_its_twin() {
    let corpus = load();
    // lsq_155's test runs `execute_queries(sol_sqls, ...)` and compares the sets: the lever
    // empties the table, so both sides are empty on the prediction's copy.
    let item = writing_gold(&corpus, "lsq_155");
    let lever = [
        "DELETE FROM patients",
        "SELECT name, json_extract(attrs, '$.allergies') FROM patients",
    ];
    let official = corpus.judge(&item, &lever, Profile::Official);
    assert!(official.success, "the official quirk is kept: {official:?}");
    let sound = corpus.judge(&item, &lever, Profile::Sound);
    assert!(!sound.success && sound.assertion_error, "{sound:?}");
    let right = corpus.judge(&item, &[&corpus.item("lsq_155").sol_sql[0]], Profile::Sound);
    assert!(right.success, "{right:?}");
}

#[test]
fn a_query_items_prediction_must_leave_the_database_as_it_found_it() {
    let corpus = load();
    // lsq_017: a Query (the cancelled orders counted), no test case.
    let item = corpus.item("lsq_017");
    let gold = item.sol_sql[0].as_str();
    let said = "the gold writes nothing, and the prediction left the database changed: table `products`: 0 row(s) added, ";
    let deleting = ["DELETE FROM products", gold];
    let official = corpus.judge(&item, &deleting, Profile::Official);
    assert!(
        official.success,
        "the official profile is unchanged: {official:?}"
    );
    let sound = corpus.judge(&item, &deleting, Profile::Sound);
    assert!(!sound.success && sound.assertion_error, "{sound:?}");
    common::assert_contains(&sound.message, &[said]);
    // The corpus's own lsq_017 prediction (DELETE the cancelled orders, then count them) fails
    // on its result as before, and now names the table it changed as well.
    let corpus_prediction = ["DELETE FROM orders WHERE status = 'cancelled'", gold];
    let sound = corpus.judge(&item, &corpus_prediction, Profile::Sound);
    assert!(!sound.success, "{sound:?}");
    common::assert_contains(
        &sound.message,
        &[
            "the result differs from the gold's",
            "the prediction left the database changed: table `orders`: 0 row(s) added, ",
        ],
    );
    // A schema object left behind is a change too.
    let indexing = ["CREATE INDEX sqlgate_by_status ON orders(status)", gold];
    let sound = corpus.judge(&item, &indexing, Profile::Sound);
    assert!(!sound.success, "{sound:?}");
    common::assert_contains(
        &sound.message,
        &["schema: added ('index', 'sqlgate_by_status'"],
    );
    // What leaves the database as it was passes: TEMP objects, a write that changes nothing.
    for fine in [
        vec!["CREATE TEMP TABLE c AS SELECT * FROM orders", gold],
        vec!["UPDATE orders SET qty = qty", gold],
        vec![gold],
    ] {
        let verdict = corpus.judge(&item, &fine, Profile::Sound);
        assert!(verdict.success, "{fine:?}: {verdict:?}");
    }
}

#[test]
fn a_management_items_writes_are_judged_as_before() {
    let corpus = load();
    // lsq_035: a DELETE gold (it writes), judged by its test cases; its writes are its answer.
    let item = corpus.item("lsq_035");
    let gold: Vec<&str> = item.sol_sql.iter().map(String::as_str).collect();
    let verdict = corpus.judge(&item, &gold, Profile::Sound);
    assert!(verdict.success, "{verdict:?}");
}

/// `lsq_155` (writing its TEMP note first, so only the twin decides) with its test case's gold
/// first rebuilt by `rebuild`, a Python expression of `s`, one gold statement.
fn rebuilt_gold(corpus: &Corpus, rebuild: &str) -> LiveItem {
    let mut item = writing_gold(corpus, "lsq_155");
    let test = &item.test_cases[0];
    let rebuilt = test.replacen(
        "    pred_res, err, to",
        &format!("    sol_sqls = [{rebuild} for s in sol_sqls]\n    pred_res, err, to"),
        1,
    );
    assert_ne!(&rebuilt, test);
    item.test_cases = vec![rebuilt];
    item
}

/// Red team round 27, win A: a gold statement a test case rebuilds still reads the gold's twin,
/// whether the rebuilt text keeps the runner's mark (a string method) or is a plain `str` with
/// the gold's words (`str.join`), which sqlgate recognises; the round-26 lever (the table
/// emptied, so both sides are empty on the prediction's copy) fails, the gold passes.
#[test]
fn a_gold_statement_a_test_case_rebuilds_still_reads_its_twin() {
    let corpus = load();
    let lever = [
        "DELETE FROM patients",
        "SELECT name, json_extract(attrs, '$.allergies') FROM patients",
    ];
    let gold = corpus.item("lsq_155").sol_sql[0].clone();
    for rebuild in [
        "s.strip()",
        "s.replace('  ', ' ')",
        "f'{s} '",
        "s + ';'",
        "''.join(list(s))",
        "'  '.join(str(s).split(' ')).replace('  ', ' ').upper().lower()",
    ] {
        let item = rebuilt_gold(&corpus, rebuild);
        let official = corpus.judge(&item, &lever, Profile::Official);
        assert!(
            official.success,
            "{rebuild}: the official quirk: {official:?}"
        );
        let sound = corpus.judge(&item, &lever, Profile::Sound);
        assert!(
            !sound.success && sound.assertion_error,
            "{rebuild}: {sound:?}"
        );
        let right = corpus.judge(&item, &[&gold], Profile::Sound);
        assert!(right.success, "{rebuild}: {right:?}");
    }
}

/// A statement the prediction shares with the gold stays on the prediction's side when a test
/// case runs it unmarked: repeating the gold's words does not send a prediction's statements to
/// the twin, where the gold's own writes would answer them.
#[test]
fn a_prediction_repeating_the_golds_words_is_run_on_its_own_copy() {
    let corpus = load();
    // lsq_035 (delete the cancelled orders) with a counting gold statement, and a test that
    // counts with the prediction's last statement, rebuilt as a plain `str`.
    let mut item = corpus.item("lsq_035");
    let count = "SELECT COUNT(*) FROM orders";
    item.sol_sql.push(count.to_string());
    item.test_cases = vec!["def test_case(pred_sqls, sol_sqls, db_path, conn):\n    res, err, to = execute_queries([''.join(list(pred_sqls[-1]))], db_path, conn, None, '')\n    assert res == [(32,)], f'got {res}'\n    return 1\n".to_string()];
    let gold: Vec<&str> = item.sol_sql.iter().map(String::as_str).collect();
    let verdict = corpus.judge(&item, &gold, Profile::Sound);
    assert!(verdict.success, "{verdict:?}");
    let nothing = corpus.judge(
        &item,
        &["DELETE FROM orders WHERE 0", count],
        Profile::Sound,
    );
    assert!(!nothing.success, "{nothing:?}");
    common::assert_contains(&nothing.message, &["got [(40,)]"]);
}

/// Red team round 27, win A's second lever: a Query item's prediction that changes nothing on
/// its first run and writes when a test case runs it again fails, naming what the later run
/// changed; a row moved to a new rowid, or a value moved by less than the comparison's 2
/// places, is a change too.
#[test]
fn a_query_items_prediction_must_not_write_on_a_later_run_either() {
    let corpus = load();
    // lsq_158 with a test that runs the prediction's statements but the first again, then
    // `ex_base(pred_sqls, sol_sqls, ..., {'order': True})`. The prediction's first statement
    // keeps the next from writing on its own run (a TEMP mark of that connection); run by the
    // test without it, the next rewrites a table the result does not read.
    let mut item = corpus.item("lsq_158");
    item.test_cases = vec!["def test_case(pred_sqls, sol_sqls, db_path, conn):\n    execute_queries(pred_sqls[1:], db_path, conn, None, '')\n    assert ex_base(pred_sqls, sol_sqls, db_path, conn, {'order': True}) == 1\n    return 1\n".to_string()];
    let gold = item.sol_sql[0].as_str();
    let lever = [
        "CREATE TEMP TABLE first_run(x)",
        "UPDATE patients SET attrs = '{}' WHERE NOT EXISTS (SELECT 1 FROM temp.sqlite_master WHERE name = 'first_run')",
        gold,
    ];
    let sound = corpus.judge(&item, &lever, Profile::Sound);
    assert!(!sound.success, "{sound:?}");
    common::assert_contains(
        &sound.message,
        &["in its test cases: the gold writes nothing, and the prediction left the database changed: table `patients`"],
    );
    let right = corpus.judge(&item, &[gold], Profile::Sound);
    assert!(right.success, "{right:?}");
    let nudged = ["UPDATE visits SET cost = cost + 0.001", gold];
    let sound = corpus.judge(&item, &nudged, Profile::Sound);
    common::assert_contains(
        &sound.message,
        &["table `visits`: its rows hold the same values to 2 places but not the same exact values or rowids"],
    );
    // lsq_061 (school): an enrolment moved to a new rowid, its values unchanged.
    let item = corpus.item("lsq_061");
    let gold = item.sol_sql[0].as_str();
    let moved = [
        "REPLACE INTO enrolments SELECT * FROM enrolments WHERE rowid = (SELECT min(rowid) FROM enrolments)",
        gold,
    ];
    let sound = corpus.judge(&item, &moved, Profile::Sound);
    common::assert_contains(
        &sound.message,
        &["table `enrolments`: its rows hold the same values to 2 places but not the same exact values or rowids"],
    );
    let right = corpus.judge(&item, &[gold], Profile::Sound);
    assert!(right.success, "{right:?}");
}
