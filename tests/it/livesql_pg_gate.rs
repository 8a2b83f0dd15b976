//! Issue 46 on PostgreSQL in the gate: `dataset.kind: bird-critic` with `dataset.engine: { kind:
//! postgresql, url_env, admin_url_env, layout: per_db_id }` through `eval`, the baseline, the
//! pull-request comment and `summary.json`. The 210 items of the PostgreSQL corpus
//! (tests/data/livesql/postgres) judged through the config as the recorded official evaluator
//! judged them; a subset of it as a bundled-style dataset gated (a pull request breaking a
//! Management item exits 1 naming the item and its failing check, an equal one exits 0, one
//! naming another administrator variable changes nothing: the base's config names it); config
//! errors exiting 2 naming the key; hostile predictions through the gate failing alone, the base
//! data and the server's databases and roles unchanged; a session of another client on the
//! server or on an item's clone during the run failing it.

use crate::common::bird_critic_gate::{outcomes, predict, subset, GateCorpus};
use crate::common::servers::{self, Server};
use crate::common::{self, repo};
use crate::livesql_pg::{corpus_dir, load_databases, recorded, server_state};
use serde_json::{json, Value};
use sqlgate::engine::livesql::postgres::{PgRun, PgSettings};
use sqlgate::input::livesql::read_items;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;

/// PostgreSQL's form of the corpus.
pub(crate) const PG: GateCorpus = GateCorpus {
    engine: "postgresql",
    url_database: "postgres",
    folder: "postgres",
    suffix: "pg",
};

/// [`GateCorpus::write_dataset`] with the PostgreSQL config.
fn write_dataset(dir: &Path, ids: Option<&[String]>, gated: bool) {
    PG.write_dataset(dir, ids, gated, &PG.config());
}

/// [`GateCorpus::sqlgate_on`] on PostgreSQL.
pub(crate) fn sqlgate_on(server: &Server, dir: &Path, args: &[&str]) -> Output {
    PG.sqlgate_on(server, dir, args)
}

/// [`GateCorpus::gated_subset`] on PostgreSQL.
pub(crate) fn gated_subset(server: &Server) -> (tempfile::TempDir, String) {
    PG.gated_subset(server)
}

/// [`GateCorpus::judged_change`] on PostgreSQL, nothing run on the server meanwhile.
pub(crate) fn judged_change(
    server: &Server,
    change: impl FnOnce(&Path),
) -> (Option<i32>, String, Value) {
    PG.judged_change(server, change, || ())
}

/// [`GateCorpus::judged_query_change`] on PostgreSQL, nothing run on the server meanwhile.
pub(crate) fn judged_query_change(
    server: &Server,
    change: impl FnOnce(&Path),
) -> (Option<i32>, String, Value) {
    PG.judged_query_change(server, change, || ())
}

#[test]
fn bird_critic_on_postgresql_through_the_config_judges_every_item_as_the_official_evaluator() {
    let server = servers::postgres();
    load_databases(server);
    let before = server_state(server);
    let dir = tempfile::tempdir().unwrap();
    write_dataset(dir.path(), None, false);
    let lines = PG.eval_items(server, dir.path());
    assert_eq!(lines.len(), 210);
    let recorded = recorded();
    let differing: Vec<String> = (outcomes(dir.path(), &lines).into_iter())
        .filter(|(id, outcome)| (outcome == "match") != (recorded[id]["status"] == "success"))
        .map(|(id, outcome)| format!("{id}: {outcome}"))
        .collect();
    assert!(
        differing.is_empty(),
        "differ from the official evaluator: {differing:#?}"
    );
    assert_eq!(
        server_state(server),
        before,
        "the base data or the server changed"
    );
}

#[test]
fn a_pull_request_breaking_a_management_update_on_postgresql_fails_naming_it_and_an_equal_one_passes(
) {
    let server = servers::postgres();
    load_databases(server);
    let before = server_state(server);
    // lsq_033 (item 14 of the subset): `UPDATE products SET stock = 10 WHERE stock = 0`, right.
    let (code, said, summary) = judged_change(server, |root| {
        predict(
            root,
            "lsq_033",
            &["UPDATE products SET stock = 11 WHERE stock = 0"],
        )
    });
    assert_eq!(code, Some(1), "{said}");
    common::assert_contains(
        &said,
        &["item 14", "(shop, Management)", "lsq_033: Test case errors"],
    );
    let model = &summary["systems"]["model"];
    assert_eq!(
        model["counts"],
        json!({"Management": 12, "Query": 10, "all": 22})
    );
    let cells = summary["gate"]["cells"].as_array().unwrap();
    let named: Vec<&Value> = cells.iter().map(|c| &c["cell"]).collect();
    assert_eq!(named, ["all", "Management", "Query"]);
    for cell in &cells[..2] {
        assert_eq!(
            (&cell["regressed"], &cell["fixed"]),
            (&json!([14]), &json!([]))
        );
    }
    let (code, said, _) = judged_change(server, |root| {
        std::fs::write(root.join("NOTES.md"), "notes\n").unwrap()
    });
    assert_eq!(code, Some(0), "{said}");
    common::assert_contains(&said, &["0 regressed / 0 fixed"]);
    // The base commit's config names the administrator's variable: a pull request naming
    // another (unset here) changes nothing.
    let (code, said, _) = judged_change(server, |root| {
        let config = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
        let config = config.replace("TEST_DB_ADMIN_URL", "TEST_DB_PR_ADMIN_URL");
        std::fs::write(root.join("sqlgate.yml"), config).unwrap()
    });
    assert_eq!(code, Some(0), "{said}");
    common::assert_contains(&said, &["0 regressed / 0 fixed"]);
    assert!(!said.contains("TEST_DB_PR_ADMIN_URL"), "{said}");
    assert_eq!(
        server_state(server),
        before,
        "the base data or the server changed"
    );
}

#[test]
fn hostile_predictions_through_the_gate_fail_alone_and_leave_the_base_unchanged() {
    let server = servers::postgres();
    load_databases(server);
    let before = server_state(server);
    let dir = tempfile::tempdir().unwrap();
    write_dataset(dir.path(), Some(&subset()), false);
    let marker = std::env::temp_dir().join(format!("sqlgate-pg-gate-{}", std::process::id()));
    let program = format!("COPY (SELECT 1) TO PROGRAM 'touch {}'", marker.display());
    let hostile: [(&str, &[&str]); 5] = [
        ("lsq_001", &["DROP DATABASE school"]),
        ("lsq_003", &["ALTER DATABASE shop RENAME TO gone"]),
        ("lsq_029", &[&program]),
        ("lsq_033", &["CREATE ROLE evil SUPERUSER LOGIN"]),
        ("lsq_035", &["UPDATE pg_database SET datallowconn = true"]),
    ];
    for (id, statements) in hostile {
        predict(dir.path(), id, statements);
    }
    let lines = PG.eval_items(server, dir.path());
    let recorded = recorded();
    for (id, outcome) in outcomes(dir.path(), &lines) {
        let expected = match hostile.iter().any(|(h, _)| *h == id) {
            true => "pred_error",
            false if recorded[&id]["status"] == "success" => "match",
            false => continue,
        };
        assert_eq!(outcome, expected, "{id}");
    }
    assert!(!marker.exists(), "a prediction ran a program");
    assert_eq!(
        server_state(server),
        before,
        "the base data or the server changed"
    );
}

#[test]
fn a_config_missing_the_administrator_or_on_the_wrong_engine_exits_2_naming_the_key() {
    let server = servers::postgres();
    let dir = tempfile::tempdir().unwrap();
    write_dataset(dir.path(), Some(&subset()), false);
    let config = PG.config();
    let cases = [
        (config.replace(", admin_url_env: TEST_DB_ADMIN_URL", ""), "`dataset.engine.admin_url_env` is required"),
        (config.replace("TEST_DB_ADMIN_URL", "TEST_DB_UNSET_URL"), "`dataset.engine.admin_url_env`: the environment variable `TEST_DB_UNSET_URL` is not set"),
        (config.replace("bird-critic", "livesql").replace("[bird_critic, bird_critic_sound]", "[livesql]").replace("bird_critic_sound", "livesql"), "LiveSQLBench's own PostgreSQL evaluator is not reproduced"),
        (config.replace("layout: per_db_id", "layout: shared"), "`dataset.engine.layout`"),
        (config.replace("engine: { kind: postgresql, url_env: TEST_DB_URL, admin_url_env: TEST_DB_ADMIN_URL, layout: per_db_id }", "databases: dbs\n  engine: { kind: duckdb }"), "`dataset.kind: bird-critic` runs on SQLite, PostgreSQL or MariaDB / MySQL only, not with `dataset.engine.kind: duckdb`"),
        (config.replace("kind: bird-critic", "kind: evalbench"), "`dataset.kind: evalbench` runs on SQLite only"),
    ];
    for (config, words) in cases {
        std::fs::write(dir.path().join("sqlgate.yml"), &config).unwrap();
        let output = sqlgate_on(server, dir.path(), &repo::EVAL);
        let said = common::exited(&output, 2);
        assert!(said.contains(words), "{words:?} not in {said}");
        assert!(!said.contains(&server.admin_password), "{said}");
    }
    let spider = "dataset: { gold: gold.sql, engine: { kind: postgresql, url_env: TEST_DB_URL, admin_url_env: TEST_DB_ADMIN_URL } }\npredictions: [{ name: m, path: p.txt }]\n";
    std::fs::write(dir.path().join("sqlgate.yml"), spider).unwrap();
    let output = sqlgate_on(server, dir.path(), &repo::EVAL);
    let said = common::exited(&output, 2);
    assert!(
        said.contains(
            "`dataset.engine.admin_url_env` is read with `dataset.kind: bird-critic` only"
        ),
        "{said}"
    );
}

/// The name of an item's clone on `server`, once the run has made one (asked as the superuser:
/// a session of its own).
fn a_clone(server: &Server) -> String {
    let started = std::time::Instant::now();
    loop {
        let names = server.admin_sql(
            "postgres",
            "SELECT datname FROM pg_database WHERE datname LIKE 'sqlgate\\_live\\_%\\_c%'",
        );
        if let Some(name) = names.split_whitespace().next() {
            return name.to_string();
        }
        assert!(started.elapsed().as_secs() < 60, "no clone was made");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The databases in `server`'s data folder, read from its files (no session).
fn databases_on_disk(server: &Server) -> usize {
    std::fs::read_dir(server.folder().join("data/base"))
        .unwrap()
        .count()
}

#[test]
fn a_foreign_session_during_the_run_fails_it() {
    let server = servers::postgres();
    load_databases(server);
    let dir = tempfile::tempdir().unwrap();
    write_dataset(dir.path(), Some(&subset()[..1]), false);
    predict(dir.path(), "lsq_001", &["SELECT pg_sleep(4)"]);
    let before = databases_on_disk(server);
    let child = PG
        .command_on(server, dir.path(), &repo::EVAL)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The template, then the item's clone, made once the run has claimed the server.
    let started = std::time::Instant::now();
    while databases_on_disk(server) < before + 2 {
        assert!(started.elapsed().as_secs() < 60, "no clone was made");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    server.admin_sql("postgres", "SELECT 1");
    let said = common::exited(&child.wait_with_output().unwrap(), 2);
    let words = "another session connected to the server during the run";
    assert!(said.contains(words), "{words:?} not in {said}");
}

/// On the slow path the item's clone is accounted for when it is dropped after the item, so the
/// item is the fault; on the fast path the clone is kept, and accounted for when the run drops
/// its clones (`LiveJudge::finish`), which fails the run.
#[test]
fn a_foreign_session_on_an_items_clone_is_a_fault_of_the_run() {
    use sqlgate::engine::state::LiveJudge;
    let server = servers::postgres();
    load_databases(server);
    let items = read_items(&corpus_dir().join("items_pg.jsonl")).unwrap();
    let item = items.iter().find(|i| i.instance_id == "lsq_001").unwrap();
    let sleep = ["SELECT pg_sleep(4)".to_string()];
    let words = "another session connected to an item's clone";
    for fast_path in [false, true] {
        let settings = PgSettings {
            fast_path,
            ..PgSettings::new(server.admin_url("postgres"))
        };
        let run = PgRun::start(settings, &BTreeSet::from(["shop".to_string()])).unwrap();
        let fault = std::thread::scope(|scope| {
            let judged = scope.spawn(|| run.judge(item, Some(&sleep)));
            server.admin_sql(&a_clone(server), "SELECT 1");
            match judged.join().unwrap() {
                Err(fault) => fault,
                Ok(_) if fast_path => run.finish().unwrap_err(),
                Ok(verdict) => panic!("the slow path judged the item: {verdict:?}"),
            }
        });
        assert!(
            fault.contains(words),
            "fast path {fast_path}: {words:?} not in {fault}"
        );
    }
}
