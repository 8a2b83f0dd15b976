//! Issue 46 on PostgreSQL: the PostgreSQL form of the LiveSQLBench-style corpus
//! (tests/data/livesql/postgres, 210 items over four databases) judged by sqlgate's BIRD-Critic
//! PostgreSQL evaluation verdict for verdict with the recorded official evaluator (pred run and
//! gold self-check), each item on its own clone of a template, the base databases unchanged; and
//! hostile state-changing predictions contained, each reach a test.

use crate::common::servers::{self, Server};
use serde_json::Value;
use sqlgate::engine::livesql::postgres::{Paths, PgRun, PgSettings};
use sqlgate::engine::livesql::{LiveJudge, Profile::BirdCritic, Verdict};
use sqlgate::input::livesql::{parse_items, read_items, read_predictions, LiveItem};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub(crate) const DBS: [&str; 4] = ["shop", "school", "fleet", "clinic"];

pub(crate) fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/livesql/postgres")
}

pub(crate) fn sha256(path: &Path) -> String {
    use sha2::Digest;
    sqlgate::util::digest::hex(&sha2::Sha256::digest(std::fs::read(path).unwrap()))
}

/// Builds the four base databases from postgres/db/*.sql on `server`.
pub(crate) fn load_databases(server: &Server) {
    for db in DBS {
        let script = std::fs::read_to_string(corpus_dir().join(format!("db/{db}.sql"))).unwrap();
        server.recreate_database(db, &script);
    }
}

/// A digest of `db`'s catalog (relations, owners, columns, functions, privileges) and of every
/// table's rows, read as the superuser.
fn base_digest(server: &Server, db: &str) -> String {
    let catalog = server.admin_sql(
        db,
        "SELECT string_agg(c.relname || ':' || c.relkind::text || ':' || c.relowner::regrole::text || ':' || coalesce(c.relacl::text, ''), ',' ORDER BY c.relname) \
         FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace; \
         SELECT string_agg(table_name || '.' || column_name || ':' || data_type, ',' ORDER BY table_name, ordinal_position) FROM information_schema.columns WHERE table_schema = 'public'; \
         SELECT string_agg(proname, ',' ORDER BY proname) FROM pg_proc WHERE pronamespace = 'public'::regnamespace; \
         SELECT string_agg(extname, ',' ORDER BY extname) FROM pg_extension;",
    );
    let tables = server.admin_sql(
        db,
        "SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r' ORDER BY 1",
    );
    let rows: String = tables
        .split_whitespace()
        .map(|t| server.admin_sql(db, &format!("SELECT md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM \"{t}\" x")))
        .collect();
    format!("{catalog}{rows}")
}

/// Every base database's digest, and the server's list of databases and roles.
pub(crate) fn server_state(server: &Server) -> (Vec<String>, String) {
    let digests = DBS.iter().map(|db| base_digest(server, db)).collect();
    let names = server.admin_sql(
        "postgres",
        "SELECT string_agg(datname, ',' ORDER BY datname) FROM pg_database; SELECT string_agg(rolname, ',' ORDER BY rolname) FROM pg_roles",
    );
    (digests, names)
}

pub(crate) fn settings(server: &Server) -> PgSettings {
    let mut settings = PgSettings::new(server.admin_url("postgres"));
    settings.deadline = Duration::from_secs(120);
    settings.disk_bytes = 64 << 20;
    settings
}

pub(crate) fn db_ids() -> BTreeSet<String> {
    DBS.iter().map(|d| d.to_string()).collect()
}

/// Judges `items` (with `predictions`) in parallel on a fresh run; the base databases, the
/// server's databases and roles are the same after the run (its clones, templates and roles
/// dropped) as before. Also how many items took each path.
pub(crate) fn judge_run(
    server: &Server,
    settings: PgSettings,
    items: &[LiveItem],
    predictions: &BTreeMap<String, Vec<String>>,
) -> (BTreeMap<String, Verdict>, Paths) {
    use rayon::prelude::*;
    let before = server_state(server);
    let run = PgRun::start(settings, &db_ids()).unwrap();
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
    let paths = run.paths();
    drop(run);
    assert_eq!(
        server_state(server),
        before,
        "the base data or the server's databases / roles changed"
    );
    (verdicts, paths)
}

/// The recorded official verdicts, after checking that the inputs are the ones they were
/// recorded on.
pub(crate) fn recorded() -> BTreeMap<String, Value> {
    let lines = crate::common::read_jsonl(&corpus_dir().join("official_verdicts_pg.jsonl"));
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

/// The flags of a verdict as the official report prints them.
pub(crate) fn flags(verdict: &Verdict) -> (bool, bool, bool, bool) {
    (
        verdict.success,
        verdict.execution_error,
        verdict.timeout_error,
        verdict.assertion_error,
    )
}

pub(crate) fn recorded_flags(line: &Value, prefix: &str) -> (bool, bool, bool, bool) {
    let flag = |name: &str| line[format!("{prefix}{name}")].as_bool().unwrap();
    (
        line[format!("{prefix}status")] == "success",
        flag("execution_error"),
        flag("timeout_error"),
        flag("assertion_error"),
    )
}

#[test]
fn bird_critic_postgresql_verdicts_equal_the_official_evaluator_on_every_item() {
    let server = servers::postgres();
    load_databases(server);
    let recorded = recorded();
    let items = read_items(&corpus_dir().join("items_pg.jsonl")).unwrap();
    assert!(items.len() >= 100);
    let predictions = read_predictions(&corpus_dir().join("predictions_pg.jsonl")).unwrap();
    let gold: BTreeMap<String, Vec<String>> = (items.iter())
        .map(|i| (i.instance_id.clone(), i.sol_sql.clone()))
        .collect();
    for (run, prefix) in [(&predictions, ""), (&gold, "gold_")] {
        let (verdicts, paths) = judge_run(server, settings(server), &items, run);
        // The rollback fast path (on by default) judged the read-only items.
        assert!(paths.fast >= 50, "{prefix}: {paths:?}");
        assert_eq!(paths.fast + paths.refused + paths.slow, items.len());
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

/// The hostile items' test on PostgreSQL: the products table still has its 10 rows.
const PRODUCTS_INTACT: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn):\n    res, err, to = execute_queries(['SELECT COUNT(*) FROM products'], db_name, conn, None, '')\n    assert not err and not to and res == [(10,)], f'got {res}'\n    return 1\n";

/// One Management item on `shop` whose test checks the base data are intact (the products
/// table has its 10 rows).
pub(crate) fn hostile_item(id: &str) -> LiveItem {
    item_testing(id, "shop", PRODUCTS_INTACT)
}

/// One Management item `id` on `db` with the one test case `test`.
pub(crate) fn item_testing(id: &str, db: &str, test: &str) -> LiveItem {
    let line = serde_json::json!({
        "instance_id": id, "db_id": db, "category": "Management", "sol_sql": ["SELECT 1"],
        "preprocess_sql": [], "clean_up_sql": [], "test_cases": [test], "issue_sql": [],
        "conditions": {}, "efficiency": false, "query": "a test item",
    });
    parse_items(Path::new("hostile.jsonl"), &format!("{line}\n"))
        .unwrap()
        .remove(0)
}

/// [`judge_hostile_on`] on a PostgreSQL run.
fn judge_hostile(server: &Server, settings: PgSettings, hostile: &[&[&str]]) -> Vec<Verdict> {
    judge_hostile_on(
        || server_state(server),
        || PgRun::start(settings, &db_ids()).unwrap(),
        hostile_item,
        hostile,
    )
}

/// Judges each hostile prediction (on the items `item` makes), then a canary after them (the
/// same item with a harmless prediction), on the one run `start` makes; returns their verdicts.
/// What `state` reads of the server (the base data, its databases and roles or users) is the
/// same after the run as before, and the canary passes (no hostile prediction's change reached
/// it).
pub(crate) fn judge_hostile_on<J: LiveJudge>(
    state: impl Fn() -> (Vec<String>, String),
    start: impl FnOnce() -> J,
    item: fn(&str) -> LiveItem,
    hostile: &[&[&str]],
) -> Vec<Verdict> {
    let before = state();
    let run = start();
    let verdicts: Vec<Verdict> = hostile
        .iter()
        .enumerate()
        .map(|(i, statements)| {
            let prediction: Vec<String> = statements.iter().map(|s| s.to_string()).collect();
            run.judge(&item(&format!("h{i}")), Some(&prediction), BirdCritic)
                .unwrap()
        })
        .collect();
    let canary = run
        .judge(&item("canary"), Some(&["SELECT 1".to_string()]), BirdCritic)
        .unwrap();
    assert!(
        canary.success,
        "the canary after the hostile items failed: {canary:?}"
    );
    drop(run);
    assert_eq!(
        state(),
        before,
        "the base data or the server's databases, roles or settings changed"
    );
    verdicts
}

/// Every prediction failed by an execution error whose message says `words`.
pub(crate) fn assert_refused(verdicts: &[Verdict], words: &str) {
    for (i, verdict) in verdicts.iter().enumerate() {
        assert!(
            verdict.execution_error && !verdict.success,
            "prediction {i} not refused: {verdict:?}"
        );
        assert!(
            verdict.message.contains(words),
            "prediction {i}: {words:?} not in {verdict:?}"
        );
    }
}

fn hostile_server() -> &'static Server {
    let server = servers::postgres();
    load_databases(server);
    server
}

#[test]
fn a_prediction_cannot_write_to_another_database_the_template_or_the_base() {
    let server = hostile_server();
    let verdicts = judge_hostile(server, settings(server), &[
        &["DROP DATABASE shop"],
        &["ALTER DATABASE shop RENAME TO gone"],
        &["UPDATE pg_database SET datallowconn = true"],
        &["DO $$ BEGIN EXECUTE (SELECT 'DROP DATABASE ' || quote_ident(datname) FROM pg_database WHERE datname LIKE 'sqlgate\\_live\\_%\\_t' LIMIT 1); END $$"],
        &["CREATE DATABASE mine"],
    ]);
    assert_refused(&verdicts, "");
}

#[test]
fn a_prediction_cannot_reach_files_programs_or_extensions() {
    let server = hostile_server();
    let marker = std::env::temp_dir().join(format!("sqlgate-pg-pwn-{}", std::process::id()));
    let program = format!("COPY (SELECT 1) TO PROGRAM 'touch {}'", marker.display());
    let file = format!("COPY products TO '{}'", marker.display());
    let verdicts = judge_hostile(
        server,
        settings(server),
        &[
            &[&program],
            &[&file],
            &["COPY products FROM '/etc/hostname'"],
            &["SELECT pg_read_file('/etc/hostname')"],
            &["SELECT lo_import('/etc/hostname')"],
        ],
    );
    assert_refused(&verdicts, "");
    assert!(!marker.exists(), "a prediction wrote a file");
    let extensions = judge_hostile(
        server,
        settings(server),
        &[
            &["CREATE EXTENSION dblink"],
            &["CREATE EXTENSION pgcrypto"],
            &["CREATE SCHEMA elsewhere"],
        ],
    );
    assert_refused(&extensions, "permission denied");
}

#[test]
fn a_prediction_cannot_make_roles_grant_them_or_end_other_sessions() {
    let server = hostile_server();
    let verdicts = judge_hostile(server, settings(server), &[
        &["CREATE ROLE evil SUPERUSER LOGIN"],
        &["ALTER ROLE CURRENT_USER SUPERUSER"],
        &["GRANT pg_write_server_files TO CURRENT_USER"],
        &["SET ROLE sqlgate_admin"],
        // The administrator's watchdog session is connected during the item.
        &["SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename <> current_user"],
    ]);
    assert_refused(&verdicts, "");
    // Granting its own clone's tables to everyone succeeds and reaches nothing else: the canary
    // after it still passes, and the base's privileges are unchanged (judge_hostile).
    let granted = judge_hostile(
        server,
        settings(server),
        &[&["GRANT ALL ON products TO PUBLIC"]],
    );
    assert!(granted[0].success, "{:?}", granted[0]);
}

#[test]
fn endless_inserts_stop_at_the_disk_budgets_and_change_nothing_else() {
    let server = hostile_server();
    let mut settings = settings(server);
    (settings.disk_bytes, settings.temp_bytes) = (24 << 20, 24 << 20);
    let started = Instant::now();
    let verdicts = judge_hostile(server, settings, &[
        // Row by row: the clone grows until the watchdog ends the session.
        &[
            "CREATE TABLE filler (pad text)",
            "DO $$ BEGIN LOOP INSERT INTO filler SELECT repeat(md5(random()::text), 16) FROM generate_series(1, 1000); END LOOP; END $$",
        ],
        // A set-returning function spills to a temporary file first: `temp_file_limit`.
        &["CREATE TABLE filler AS SELECT repeat('x', 500) AS pad FROM generate_series(1, 100000000)"],
    ]);
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
        verdicts[1].execution_error && verdicts[1].message.contains("temp_file_limit"),
        "{:?}",
        verdicts[1]
    );
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "the disk budgets stopped them late"
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
            &["SET statement_timeout = 0; SELECT pg_sleep(1000)"],
            &["DO $$ BEGIN LOOP PERFORM 1; END LOOP; END $$"],
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
