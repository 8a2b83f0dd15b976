//! Issue 46 on MariaDB: the MariaDB / MySQL form of the LiveSQLBench-style corpus
//! (tests/data/livesql/mysql, 210 items over four databases) judged by sqlgate's BIRD-Critic
//! MySQL evaluation verdict for verdict with the recorded official evaluator (pred run and gold
//! self-check), each item on its own clone of a template, the base databases unchanged; and
//! hostile state-changing predictions contained, each reach a test.

use crate::common::servers::{self, Server};
use crate::livesql_pg::{
    assert_refused, flags, item_testing, judge_hostile_on, recorded_flags, sha256,
};
use serde_json::Value;
use sqlgate::engine::livesql::mysql::{MyRun, MySettings};
use sqlgate::engine::livesql::Verdict;
use sqlgate::input::livesql::{read_items, read_predictions, LiveItem};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub(crate) const DBS: [&str; 4] = ["shop", "school", "fleet", "clinic"];

pub(crate) fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/livesql/mysql")
}

/// Builds the four base databases from mysql/db/*.sql on `server`.
pub(crate) fn load_databases(server: &Server) {
    for db in DBS {
        let script = std::fs::read_to_string(corpus_dir().join(format!("db/{db}.sql"))).unwrap();
        server.recreate_database(db, &script);
    }
}

/// A digest of `db`: every table's definition and the checksum of its rows, its routines,
/// triggers, views and events, read as the superuser.
fn base_digest(server: &Server, db: &str) -> String {
    let tables = server.admin_sql(
        db,
        &format!("SELECT table_name FROM information_schema.tables WHERE table_schema = '{db}' ORDER BY 1"),
    );
    let mut digest = server.admin_sql(
        db,
        &format!(
            "SELECT COUNT(*) FROM information_schema.routines WHERE routine_schema = '{db}'; \
             SELECT COUNT(*) FROM information_schema.triggers WHERE trigger_schema = '{db}'; \
             SELECT COUNT(*) FROM information_schema.events WHERE event_schema = '{db}';"
        ),
    );
    for table in tables.split_whitespace() {
        digest.push_str(&server.admin_sql(
            db,
            &format!("SHOW CREATE TABLE `{table}`; CHECKSUM TABLE `{table}` EXTENDED;"),
        ));
    }
    digest
}

/// Every base database's digest, and the server's databases, users, grants and the global
/// settings a prediction could try to change.
pub(crate) fn server_state(server: &Server) -> (Vec<String>, String) {
    let digests = DBS.iter().map(|db| base_digest(server, db)).collect();
    let names = server.admin_sql(
        "mysql",
        "SELECT GROUP_CONCAT(schema_name ORDER BY schema_name) FROM information_schema.schemata; \
         SELECT GROUP_CONCAT(CONCAT(user, '@', host) ORDER BY user, host) FROM mysql.user; \
         SELECT COUNT(*) FROM mysql.db; SELECT COUNT(*) FROM mysql.tables_priv; \
         SELECT COUNT(*) FROM information_schema.events; \
         SELECT @@global.max_connections, @@global.event_scheduler, @@global.local_infile, @@global.sql_mode, @@global.max_statement_time;",
    );
    (digests, names)
}

pub(crate) fn settings(server: &Server) -> MySettings {
    let mut settings = MySettings::new(server.admin_url("mysql"));
    settings.deadline = Duration::from_secs(20);
    settings.disk_bytes = 64 << 20;
    settings
}

pub(crate) fn db_ids() -> BTreeSet<String> {
    DBS.iter().map(|d| d.to_string()).collect()
}

/// Judges `items` (with `predictions`) in parallel on a fresh run; the base databases, the
/// server's databases, users and settings are the same after the run (its clones, templates and
/// users dropped) as before.
fn judge_run(
    server: &Server,
    settings: MySettings,
    items: &[LiveItem],
    predictions: &BTreeMap<String, Vec<String>>,
) -> BTreeMap<String, Verdict> {
    use rayon::prelude::*;
    let before = server_state(server);
    let run = MyRun::start(settings, &db_ids()).unwrap();
    let verdicts: BTreeMap<String, Verdict> = items
        .par_iter()
        .map(|item| {
            let prediction = predictions.get(&item.instance_id).map(Vec::as_slice);
            let verdict = run.judge(item, prediction);
            (
                item.instance_id.clone(),
                verdict.unwrap_or_else(|f| panic!("{}: fault {f}", item.instance_id)),
            )
        })
        .collect();
    drop(run);
    assert_eq!(
        server_state(server),
        before,
        "the base data or the server's databases / users / settings changed"
    );
    verdicts
}

/// The recorded official verdicts, after checking that the inputs are the ones they were
/// recorded on.
pub(crate) fn recorded() -> BTreeMap<String, Value> {
    let lines = crate::common::read_jsonl(&corpus_dir().join("official_verdicts_my.jsonl"));
    let root = corpus_dir().parent().unwrap().to_path_buf();
    for (file, digest) in lines[0]["meta"]["inputs_sha256"].as_object().unwrap() {
        assert_eq!(
            &sha256(&root.join(file)),
            digest,
            "{file} changed since the recording"
        );
    }
    (lines[1..].iter())
        .map(|l| (l["instance_id"].as_str().unwrap().to_string(), l.clone()))
        .collect()
}

#[test]
fn bird_critic_mysql_verdicts_equal_the_official_evaluator_on_every_item() {
    let server = servers::mariadb();
    load_databases(server);
    let recorded = recorded();
    let items = read_items(&corpus_dir().join("items_my.jsonl")).unwrap();
    assert!(items.len() >= 100);
    let predictions = read_predictions(&corpus_dir().join("predictions_my.jsonl")).unwrap();
    let gold: BTreeMap<String, Vec<String>> = (items.iter())
        .map(|i| (i.instance_id.clone(), i.sol_sql.clone()))
        .collect();
    for (run, prefix) in [(&predictions, ""), (&gold, "gold_")] {
        let verdicts = judge_run(server, settings(server), &items, run);
        let differing: Vec<String> = (items.iter())
            .filter(|item| {
                flags(&verdicts[&item.instance_id])
                    != recorded_flags(&recorded[&item.instance_id], prefix)
            })
            .map(|item| format!("{} ({:?})", item.instance_id, verdicts[&item.instance_id]))
            .collect();
        assert!(
            differing.is_empty(),
            "{prefix}verdicts differ from the official evaluator's: {differing:#?}"
        );
    }
}

/// The hostile items' test on MariaDB: the products table still has its 10 rows.
const PRODUCTS_INTACT: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn):\n    res, err, to, msg = execute_queries(['SELECT COUNT(*) FROM products'], db_name, conn, None, '')\n    assert not err and res == ((10,),), f'got {res}'\n    return 1\n";

/// One Management item on `shop` whose test checks the base data are intact (the products
/// table has its 10 rows).
fn hostile_item(id: &str) -> LiveItem {
    item_testing(id, "shop", PRODUCTS_INTACT)
}

/// [`judge_hostile_on`] on a MariaDB run.
fn judge_hostile(server: &Server, settings: MySettings, hostile: &[&[&str]]) -> Vec<Verdict> {
    judge_hostile_on(
        || server_state(server),
        || MyRun::start(settings, &db_ids()).unwrap(),
        hostile_item,
        hostile,
    )
}

fn hostile_server() -> &'static Server {
    let server = servers::mariadb();
    load_databases(server);
    server
}

#[test]
fn a_base_database_with_anything_but_tables_is_refused_at_start() {
    let server = servers::mariadb();
    for (object, kind) in [
        ("CREATE VIEW v AS SELECT a FROM t", "view `v`"),
        (
            "CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.a = 1",
            "trigger `tr`",
        ),
        ("CREATE PROCEDURE p() SELECT 1", "routine `p`"),
        ("CREATE SEQUENCE s", "sequence `s`"),
        (
            "CREATE TABLE m (a INT) ENGINE = MEMORY",
            "table on the MEMORY storage engine `m`",
        ),
        (
            "CREATE TABLE h (a INT) WITH SYSTEM VERSIONING",
            "system versioned `h`",
        ),
    ] {
        server.recreate_database(
            "sqlgate_my_objects",
            &format!("CREATE TABLE t (a INT); {object};"),
        );
        let ids = BTreeSet::from(["sqlgate_my_objects".to_string()]);
        let error = MyRun::start(settings(server), &ids).unwrap_err();
        assert!(error.contains(kind) && error.contains("refused"), "{error}");
    }
    server.admin_sql("mysql", "DROP DATABASE sqlgate_my_objects");
    let none = BTreeSet::from(["sqlgate_my_absent".to_string()]);
    let error = MyRun::start(settings(server), &none).unwrap_err();
    assert!(error.contains("no database `sqlgate_my_absent`"), "{error}");
}

#[test]
fn a_prediction_cannot_write_to_another_database_the_template_or_the_base() {
    let server = hostile_server();
    // The run's template of `shop` is `sqlgate_live_<tag>_3_t` (db_ids in order), next to the
    // item's clone `sqlgate_live_<tag>_c<n>`.
    let template =
        "SET @s = CONCAT('DELETE FROM ', SUBSTRING_INDEX(DATABASE(), '_c', 1), '_3_t.products')";
    // A name the grant's pattern would match were its `_` not escaped.
    let neighbour = "SET @s = CONCAT('CREATE DATABASE ', REPLACE(DATABASE(), '_c', 'Xc'))";
    let verdicts = judge_hostile(
        server,
        settings(server),
        &[
            &["DROP DATABASE shop"],
            &["DELETE FROM shop.products"],
            &["CREATE TABLE shop.planted (a INT)"],
            &["RENAME TABLE products TO shop.stolen"],
            &["CREATE DATABASE mine"],
            &[template, "PREPARE s FROM @s", "EXECUTE s"],
            &[neighbour, "PREPARE s FROM @s", "EXECUTE s"],
            &["UPDATE mysql.user SET Super_priv = 'Y'"],
        ],
    );
    assert_refused(&verdicts, "denied");
}

#[test]
fn a_prediction_cannot_reach_server_or_client_files_or_plugins() {
    let server = hostile_server();
    let marker = std::env::temp_dir().join(format!("sqlgate-my-pwn-{}", std::process::id()));
    let outfile = format!("SELECT * FROM products INTO OUTFILE '{}'", marker.display());
    let dumpfile = format!("SELECT 'x' INTO DUMPFILE '{}'", marker.display());
    let verdicts = judge_hostile(
        server,
        settings(server),
        &[
            &[&outfile],
            &[&dumpfile],
            &["LOAD DATA INFILE '/etc/hostname' INTO TABLE products"],
            &["LOAD DATA LOCAL INFILE '/etc/hostname' INTO TABLE products"],
            &["LOAD XML LOCAL INFILE '/etc/hostname' INTO TABLE products"],
            &["INSTALL SONAME 'ha_connect'"],
        ],
    );
    assert_refused(&verdicts, "");
    assert!(!marker.exists(), "a prediction wrote a file");
    // `LOAD_FILE` without the FILE right reads nothing (NULL): the item's check sees no file.
    let read = judge_hostile(
        server,
        settings(server),
        &[&[
            "CREATE TABLE leak AS SELECT LOAD_FILE('/etc/hostname') AS f",
            "DELETE FROM leak WHERE f IS NULL",
            "INSERT INTO products SELECT 99, f, NULL, NULL, NULL FROM leak",
        ]],
    );
    assert!(read[0].success, "LOAD_FILE read a file: {:?}", read[0]);
}

#[test]
fn a_prediction_cannot_make_users_grant_change_globals_or_schedule_events() {
    let server = hostile_server();
    let verdicts = judge_hostile(
        server,
        settings(server),
        &[
            &["CREATE USER evil@'%' IDENTIFIED BY 'x'"],
            &["GRANT ALL ON *.* TO CURRENT_USER"],
            &["GRANT SELECT ON shop.* TO CURRENT_USER"],
            &["SET GLOBAL max_connections = 1"],
            &["SET GLOBAL event_scheduler = ON"],
            &["CREATE EVENT wipe ON SCHEDULE EVERY 1 SECOND DO DELETE FROM products"],
            &[
                "SET @s = CONCAT('KILL ', CONNECTION_ID() - 1)",
                "PREPARE s FROM @s",
                "EXECUTE s",
            ],
            &["SHUTDOWN"],
        ],
    );
    assert_refused(&verdicts, "");
    // Granting its own clone's tables onward needs GRANT OPTION, which it lacks.
    let granted = judge_hostile(
        server,
        settings(server),
        &[&["GRANT SELECT ON products TO CURRENT_USER"]],
    );
    assert!(granted[0].execution_error, "{:?}", granted[0]);
}

#[test]
fn endless_inserts_and_huge_results_stop_at_the_budgets_and_change_nothing_else() {
    let server = hostile_server();
    let mut settings = settings(server);
    (settings.disk_bytes, settings.max_rows) = (24 << 20, 100_000);
    // Far beyond the disk budget's reach even on a loaded machine, so the budget stops the
    // endless inserts, not the deadline.
    settings.deadline = Duration::from_secs(90);
    let started = Instant::now();
    let verdicts = judge_hostile(
        server,
        settings,
        &[
            &[
                "CREATE TABLE filler (pad TEXT)",
                "CREATE PROCEDURE fill() BEGIN LOOP INSERT INTO filler SELECT REPEAT(MD5(RAND()), 16) FROM products a, products b, products c; END LOOP; END",
                "CALL fill()",
            ],
            &["SELECT * FROM products a, products b, products c, products d, products e, products f"],
        ],
    );
    assert!(
        verdicts[0].stopped && verdicts[0].execution_error,
        "{:?}",
        verdicts[0]
    );
    assert!(
        verdicts[0].message.contains("disk budget"),
        "{:?}",
        verdicts[0]
    );
    assert!(
        verdicts[1].execution_error && verdicts[1].message.contains("row budget"),
        "{:?}",
        verdicts[1]
    );
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "the budgets stopped them late"
    );
}

#[test]
fn a_runaway_statement_stops_at_the_deadline_even_when_it_lifts_its_timeout() {
    let server = hostile_server();
    let mut settings = settings(server);
    settings.deadline = Duration::from_secs(3);
    let started = Instant::now();
    let verdicts = judge_hostile(
        server,
        settings,
        &[
            &["SET SESSION max_statement_time = 0", "SELECT SLEEP(1000)"],
            &["SELECT BENCHMARK(100000000000, MD5('x'))"],
        ],
    );
    for verdict in &verdicts {
        assert!(verdict.stopped && verdict.execution_error, "{verdict:?}");
        assert!(verdict.message.contains("deadline"), "{verdict:?}");
    }
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the deadline stopped them late"
    );
}
