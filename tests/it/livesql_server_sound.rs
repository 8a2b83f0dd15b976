//! `bird_critic_sound` on PostgreSQL 15 and MariaDB 10.11 (issue 44, red team round 26 win C):
//! the server corpora judged under both profiles on one run, their verdicts equal item for item
//! but where listed (a lever, and an official quirk the new session ends); round 26's levers (a TEMP view / temporary table named after the gold's
//! table, the rows the gold reads rewritten) in items whose test cases run the gold through
//! `ex_base(pred_sqls, sol_sqls, ...)` or `execute_queries(sol_sqls, ...)`: they pass under
//! `bird_critic` (the hole) and fail under `bird_critic_sound`, with the gold passing and the
//! plain wrong prediction failing under both; round 28's levers (the gold rebuilt by
//! `" ".join(sql.split())` while the prediction repeats it, the gold wrapped in a plain template, a
//! test's own query after the prediction's TEMP object), closed by a new session per request; the
//! Query data check's lever (the rows the wrong count reads rewritten); and the twin clones
//! dropped at the end of the run.

use crate::common::servers::{self, Server};
use rayon::prelude::*;
use sqlgate::engine::livesql::mysql::MyRun;
use sqlgate::engine::livesql::postgres::PgRun;
use sqlgate::engine::livesql::{LiveJudge, Profile, Verdict};
use sqlgate::input::livesql::{parse_items, read_items, read_predictions, LiveItem};
use std::collections::BTreeMap;
use std::path::Path;

/// The items of the PostgreSQL corpus whose verdicts differ between `bird_critic` and
/// `bird_critic_sound` with the corpus' predictions (with the gold: none), measured:
/// - `lsq_017` (a lever: the prediction deletes the cancelled orders, then counts them): under
///   `bird_critic` the test's gold counts on the clone the prediction changed, 0 = 0, and the
///   wrong prediction passes; under `bird_critic_sound` the gold counts on the twin and it fails.
/// - `lsq_018` (an official quirk): the prediction makes a TEMP table and counts it, right; under
///   `bird_critic` the test runs it again on the same session, where the TEMP table still exists,
///   so `CREATE` fails and `ex_base` returns 0; on the new session the test runs it cleanly and it
///   passes.
///
/// Every other test case reads what the prediction left through statements of its own (run on
/// the prediction's clone under both profiles) or compares the prediction with a gold that reads
/// the template after the item's preprocess, which the twin holds too.
const DIFFERING_PG: [&str; 2] = ["lsq_017", "lsq_018"];

/// The same on MariaDB: `lsq_017` only (MySQL's `ex_base` does not look at errors, so `lsq_018`'s
/// second `CREATE TEMPORARY TABLE` failing changes nothing there).
const DIFFERING_MY: [&str; 1] = ["lsq_017"];

/// Each item of `items` judged under both profiles on `run`; the items whose flags differ, with
/// both verdicts.
fn differing<J: LiveJudge>(
    run: &J,
    items: &[LiveItem],
    predictions: &BTreeMap<String, Vec<String>>,
) -> Vec<String> {
    let judged: Vec<Option<String>> = (items.par_iter())
        .map(|item| {
            let prediction = predictions.get(&item.instance_id).map(Vec::as_slice);
            let [official, sound] = [Profile::BirdCritic, Profile::BirdCriticSound]
                .map(|profile| run.judge(item, prediction, profile).unwrap());
            (flags(&official) != flags(&sound))
                .then(|| format!("{}: {official:?} / {sound:?}", item.instance_id))
        })
        .collect();
    judged.into_iter().flatten().collect()
}

fn flags(verdict: &Verdict) -> (bool, bool, bool, bool) {
    crate::livesql_pg::flags(verdict)
}

/// The corpus' items and predictions in `dir` (`items_<suffix>`, `predictions_<suffix>`), and the
/// gold as predictions.
fn corpus(dir: &Path, suffix: &str) -> (Vec<LiveItem>, [BTreeMap<String, Vec<String>>; 2]) {
    let items = read_items(&dir.join(format!("items_{suffix}.jsonl"))).unwrap();
    let predictions = read_predictions(&dir.join(format!("predictions_{suffix}.jsonl"))).unwrap();
    let gold = (items.iter())
        .map(|i| (i.instance_id.clone(), i.sol_sql.clone()))
        .collect();
    (items, [predictions, gold])
}

/// Asserts the items of the corpus in `dir` whose verdicts differ between the profiles are
/// `expected` with its predictions, and none with the gold.
fn assert_same_verdicts<J: LiveJudge>(run: &J, dir: &Path, suffix: &str, expected: &[&str]) {
    let (items, runs) = corpus(dir, suffix);
    for (run_of, (name, expected)) in runs.iter().zip([("predictions", expected), ("gold", &[])]) {
        let found = differing(run, &items, run_of);
        let ids: Vec<&str> = found.iter().map(|f| f.split(':').next().unwrap()).collect();
        assert_eq!(ids, expected, "{name}: {found:#?}");
    }
}

#[test]
fn postgresql_sound_verdicts_equal_bird_critics_on_the_corpus() {
    let server = servers::postgres();
    crate::livesql_pg::load_databases(server);
    let settings = crate::livesql_pg::settings(server);
    let run = PgRun::start(settings, &crate::livesql_pg::db_ids()).unwrap();
    assert_same_verdicts(&run, &crate::livesql_pg::corpus_dir(), "pg", &DIFFERING_PG);
    assert_dropped(server, &run, pg_names);
}

#[test]
fn mariadb_sound_verdicts_equal_bird_critics_on_the_corpus() {
    let server = servers::mariadb();
    crate::livesql_my::load_databases(server);
    let settings = crate::livesql_my::settings(server);
    let run = MyRun::start(settings, &crate::livesql_my::db_ids()).unwrap();
    assert_same_verdicts(&run, &crate::livesql_my::corpus_dir(), "my", &DIFFERING_MY);
    assert_dropped(server, &run, my_names);
}

/// A test case comparing the prediction with the gold through `ex_base`.
const EX_BASE: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn):\n    result = ex_base(pred_sqls, sol_sqls, db_name, conn)\n    assert result == 1, f'ex_base returned {result} but expected 1.'\n    return result\n";

/// A test case running the gold itself and comparing its rows with the prediction's.
const SOL_RUN: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn):\n    res = execute_queries(sol_sqls, db_name, conn, None, '')\n    assert not res[1] and sorted(pred_query_result) == sorted(res[0]), f'the gold gave {res[0]}'\n    return 1\n";

/// The gold: the products out of stock (two).
const GOLD: &str = "SELECT name FROM products WHERE stock = 0";
/// The wrong prediction: the products with fewer than five in stock (four).
const WRONG: &str = "SELECT name FROM products WHERE stock < 5";
/// The rows the gold reads rewritten, so the wrong prediction's four are the gold's answer.
const REWRITE: &str = "UPDATE products SET stock = 0 WHERE stock < 5";

/// PostgreSQL's TEMP lever: a view named after the gold's table, one row out of stock.
const PG_TEMP: &str =
    "CREATE OR REPLACE TEMP VIEW products AS SELECT 'x'::text AS name, 0 AS stock";
/// MariaDB's: a temporary table that shadows it.
const MY_TEMP: &str =
    "CREATE TEMPORARY TABLE IF NOT EXISTS products SELECT 'x' AS name, 0 AS stock";

/// A Query item on `shop` with the one test case `test` and the gold [`GOLD`].
fn lever_item(test: &str) -> LiveItem {
    let line = serde_json::json!({
        "instance_id": "lever", "db_id": "shop", "category": "Query", "sol_sql": [GOLD],
        "preprocess_sql": [], "clean_up_sql": [], "test_cases": [test], "issue_sql": [],
        "conditions": {}, "efficiency": false, "query": "which products are out of stock?",
    });
    parse_items(Path::new("lever.jsonl"), &format!("{line}\n"))
        .unwrap()
        .remove(0)
}

/// Whether each of the gold, the wrong prediction, the TEMP lever (`temp`, then the wrong
/// prediction) and the rewrite lever passes under `profile`, for each test case.
fn lever_verdicts<J: LiveJudge>(run: &J, temp: &str, profile: Profile) -> Vec<[bool; 4]> {
    let predictions: [Vec<String>; 4] = [
        vec![GOLD.into()],
        vec![WRONG.into()],
        vec![temp.into(), WRONG.into()],
        vec![REWRITE.into(), WRONG.into()],
    ];
    [EX_BASE, SOL_RUN]
        .iter()
        .map(|test| {
            let item = lever_item(test);
            predictions
                .each_ref()
                .map(|p| run.judge(&item, Some(p), profile).unwrap().success)
        })
        .collect()
}

/// The levers pass under `bird_critic` and fail under `bird_critic_sound`; the gold passes and
/// the wrong prediction fails under both.
fn assert_levers<J: LiveJudge>(run: &J, temp: &str) {
    let official = lever_verdicts(run, temp, Profile::BirdCritic);
    assert_eq!(
        official,
        vec![[true, false, true, true]; 2],
        "the hole under bird_critic"
    );
    let sound = lever_verdicts(run, temp, Profile::BirdCriticSound);
    assert_eq!(
        sound,
        vec![[true, false, false, false]; 2],
        "bird_critic_sound"
    );
}

#[test]
fn postgresql_levers_on_the_golds_table_fail_under_the_sound_profile() {
    let server = servers::postgres();
    let run = pg_run(server);
    assert_levers(&run, PG_TEMP);
    assert_dropped(server, &run, pg_names);
}

#[test]
fn mariadb_levers_on_the_golds_table_fail_under_the_sound_profile() {
    let server = servers::mariadb();
    let run = my_run(server);
    assert_levers(&run, MY_TEMP);
    assert_dropped(server, &run, my_names);
}

/// Red team round 28's test shapes: the prediction run, then the gold rebuilt with
/// `" ".join(sql.split())` (a plain `str` of the gold's words), compared.
const JOINED: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn):\n    pred = execute_queries(pred_sqls, db_name, conn, None, '')\n    sol = [' '.join(s.split()) for s in sol_sqls]\n    gold = execute_queries(sol, db_name, conn, None, '')\n    assert gold[0] and sorted(pred[0] or []) == sorted(gold[0]), f'{pred[0]} / {gold[0]}'\n    return 1\n";

/// The same with the gold wrapped in a plain template (`str.format`: not the gold's words).
const WRAPPED: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn):\n    pred = execute_queries(pred_sqls, db_name, conn, None, '')\n    sol = ['SELECT * FROM ({}) AS g'.format(s) for s in sol_sqls]\n    gold = execute_queries(sol, db_name, conn, None, '')\n    assert gold[0] and sorted(pred[0] or []) == sorted(gold[0]), f'{pred[0]} / {gold[0]}'\n    return 1\n";

/// The prediction run again, then a check query of the test's own (the answer's rows, read on
/// the prediction's clone), compared.
const OWN: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn):\n    pred = execute_queries(pred_sqls, db_name, conn, None, '')\n    own = execute_queries(['SELECT name FROM products WHERE stock <= 0'], db_name, conn, None, '')\n    assert own[0] and sorted(pred[0] or []) == sorted(own[0]), f'{pred[0]} / {own[0]}'\n    return 1\n";

/// Whether the gold, the wrong prediction and round 28's lever pass under `profile`, for
/// [`JOINED`] (the lever repeats the gold: `[temp, GOLD, WRONG]`), [`WRAPPED`] and [`OWN`]
/// (`[temp, WRONG]`).
fn round28_verdicts<J: LiveJudge>(run: &J, temp: &str, profile: Profile) -> Vec<[bool; 3]> {
    let repeat: Vec<String> = vec![temp.into(), GOLD.into(), WRONG.into()];
    let plain: Vec<String> = vec![temp.into(), WRONG.into()];
    [(JOINED, &repeat), (WRAPPED, &plain), (OWN, &plain)]
        .iter()
        .map(|(test, lever)| {
            let item = lever_item(test);
            [
                vec![GOLD.to_string()],
                vec![WRONG.to_string()],
                lever.to_vec(),
            ]
            .map(|p| run.judge(&item, Some(&p), profile).unwrap().success)
        })
        .collect()
}

/// Round 28's levers pass under `bird_critic` and fail under `bird_critic_sound` (each request
/// on a new session: the prediction's TEMP object is gone when the unmarked gold or the test's
/// own query reads its clone); the gold passes and the wrong prediction fails under both.
fn assert_round28<J: LiveJudge>(run: &J, temp: &str) {
    let official = round28_verdicts(run, temp, Profile::BirdCritic);
    assert_eq!(
        official,
        vec![[true, false, true]; 3],
        "the hole under bird_critic"
    );
    let sound = round28_verdicts(run, temp, Profile::BirdCriticSound);
    assert_eq!(sound, vec![[true, false, false]; 3], "bird_critic_sound");
}

/// The Query data check's item: the gold counts the orders (40); its test case compares with
/// `ex_base`.
fn count_item() -> LiveItem {
    let mut item = lever_item(EX_BASE);
    item.sol_sql = vec!["SELECT COUNT(*) FROM orders".into()];
    item
}

/// Whether the gold, the wrong count (distinct quantities), the data lever (every quantity made
/// distinct first), and a write that changes no row before the gold (the check's control) pass
/// under `profile`.
fn data_verdicts<J: LiveJudge>(run: &J, profile: Profile) -> [bool; 4] {
    let item = count_item();
    let wrong = "SELECT COUNT(DISTINCT qty) FROM orders";
    [
        vec![item.sol_sql[0].clone()],
        vec![wrong.to_string()],
        vec!["UPDATE orders SET qty = id".into(), wrong.into()],
        vec![
            "UPDATE orders SET qty = qty".into(),
            item.sol_sql[0].clone(),
        ],
    ]
    .map(|p| run.judge(&item, Some(&p), profile).unwrap().success)
}

/// The data lever passes under `bird_critic` and fails under `bird_critic_sound` (the Query
/// data check); the gold passes and the wrong count fails under both; the write that changes no
/// row passes under `bird_critic`, and under `bird_critic_sound` as `unchanged_write` says: on
/// PostgreSQL it fails, since the new row versions grow the table's file, whose size is in the
/// clone's own entry (a gold reading `pg_relation_size` reads it: red team round 40).
fn assert_data_check<J: LiveJudge>(run: &J, unchanged_write: bool) {
    let official = data_verdicts(run, Profile::BirdCritic);
    assert_eq!(
        official,
        [true, false, true, true],
        "the hole under bird_critic"
    );
    let sound = data_verdicts(run, Profile::BirdCriticSound);
    assert_eq!(
        sound,
        [true, false, false, unchanged_write],
        "bird_critic_sound"
    );
}

/// A started PostgreSQL run on the corpus' databases.
fn pg_run(server: &Server) -> PgRun {
    crate::livesql_pg::load_databases(server);
    PgRun::start(
        crate::livesql_pg::settings(server),
        &crate::livesql_pg::db_ids(),
    )
    .unwrap()
}

/// A started MariaDB run on the corpus' databases.
fn my_run(server: &Server) -> MyRun {
    crate::livesql_my::load_databases(server);
    MyRun::start(
        crate::livesql_my::settings(server),
        &crate::livesql_my::db_ids(),
    )
    .unwrap()
}

#[test]
fn postgresql_round_28_levers_and_the_query_data_check() {
    let server = servers::postgres();
    let run = pg_run(server);
    assert_round28(&run, PG_TEMP);
    assert_data_check(&run, false);
    assert_dropped(server, &run, pg_names);
}

#[test]
fn mariadb_round_28_levers_and_the_query_data_check() {
    let server = servers::mariadb();
    let run = my_run(server);
    assert_round28(&run, MY_TEMP);
    assert_data_check(&run, true);
    assert_dropped(server, &run, my_names);
}

/// The run's tag (its names are `sqlgate_live_<tag>_...`), from its debug form.
fn tag<J: std::fmt::Debug>(run: &J) -> String {
    let debug = format!("{run:?}");
    debug.split('"').nth(1).unwrap().to_string()
}

/// The PostgreSQL databases and roles whose names start with `prefix`.
fn pg_names(server: &Server, prefix: &str) -> String {
    server.admin_sql(
        "postgres",
        &format!(
            "SELECT string_agg(datname, ',' ORDER BY datname) FROM pg_database WHERE datname LIKE '{prefix}%'; \
             SELECT string_agg(rolname, ',' ORDER BY rolname) FROM pg_roles WHERE rolname LIKE '{prefix}%'"
        ),
    )
}

/// The MariaDB databases and users whose names start with `prefix`.
fn my_names(server: &Server, prefix: &str) -> String {
    server.admin_sql(
        "mysql",
        &format!(
            "SELECT GROUP_CONCAT(schema_name ORDER BY schema_name) FROM information_schema.schemata WHERE schema_name LIKE '{prefix}%'; \
             SELECT GROUP_CONCAT(user ORDER BY user) FROM mysql.user WHERE user LIKE '{prefix}%'"
        ),
    )
}

/// The run made twin clones (more clones than the one a worker judging alone needs), and once it
/// finished and closed, nothing named `sqlgate_live_<tag>_...` is left.
fn assert_dropped<J: LiveJudge + std::fmt::Debug>(
    server: &Server,
    run: &J,
    names: fn(&Server, &str) -> String,
) {
    let prefix = format!("sqlgate_live_{}_", tag(run));
    let made = names(server, &format!("{prefix}c"));
    assert!(
        made.contains(&format!("{prefix}c1")),
        "no twin was made: {made}"
    );
    run.finish().unwrap();
    run.close();
    let left = names(server, &prefix);
    assert!(
        left.split_whitespace().all(|l| l == "NULL" || l.is_empty()),
        "left after the run: {left}"
    );
}
