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

use crate::common::servers::{self, Server};
use crate::common::{self, repo};
use crate::livesql_pg::{corpus_dir, load_databases, recorded, server_state, DBS};
use serde_json::{json, Value};
use sqlgate::engine::livesql::postgres::{PgRun, PgSettings};
use sqlgate::input::livesql::read_items;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

/// The gated subset: shop's first ten Query items and twelve Management ones.
fn subset() -> Vec<String> {
    let query = (1..=10).map(|n| format!("lsq_{n:03}"));
    let management = (29..=40).map(|n| format!("lsq_{n:03}"));
    query.chain(management).collect()
}

/// Writes a bundled-style dataset into `dir`: the corpus items in `ids` (all when `None`), the
/// recorded model's predictions for them, and a `sqlgate.yml` on the PostgreSQL server whose
/// URLs `TEST_DB_URL` (the reader) and `TEST_DB_ADMIN_URL` (the administrator) hold; a first
/// run (no baseline required) unless `gated`.
fn write_dataset(dir: &Path, ids: Option<&[String]>, gated: bool) {
    let keep = |line: &&str| {
        let id: Value = serde_json::from_str(line).unwrap();
        ids.is_none_or(|ids| ids.iter().any(|i| id["instance_id"] == i.as_str()))
    };
    for (from, to) in [
        ("items_pg.jsonl", "items.jsonl"),
        ("predictions_pg.jsonl", "predictions/model.jsonl"),
    ] {
        let text = std::fs::read_to_string(corpus_dir().join(from)).unwrap();
        let kept: Vec<&str> = text.lines().filter(keep).collect();
        std::fs::create_dir_all(dir.join(to).parent().unwrap()).unwrap();
        std::fs::write(dir.join(to), kept.join("\n") + "\n").unwrap();
    }
    let config = match gated {
        true => CONFIG.to_string(),
        false => CONFIG.replace(
            "path: baseline.json",
            "path: baseline.json, required: false",
        ),
    };
    std::fs::write(dir.join("sqlgate.yml"), config).unwrap();
}

/// The dataset's config.
const CONFIG: &str = "dataset:
  kind: bird-critic
  gold: items.jsonl
  difficulty: field:category
  engine: { kind: postgresql, url_env: TEST_DB_URL, admin_url_env: TEST_DB_ADMIN_URL, layout: per_db_id }
predictions:
  - { name: model, path: predictions/model.jsonl, format: livesql }
metrics: [bird_critic]
execution: { timeout_ms: 30000, threads: 4 }
baseline: { path: baseline.json }
gate:
  metric: bird_critic
  max_drop_points: 0.0
  per_difficulty: { Management: 0.0, Query: 0.0 }
report: { output: sqlgate-report.md }
";

/// `sqlgate ARGS` in `dir` with the server's URLs in the config's variables, to run.
fn command_on(server: &Server, dir: &Path, args: &[&str]) -> Command {
    let mut command: Command = common::sqlgate_command(args);
    command
        .current_dir(dir)
        .env_remove("GITHUB_SHA")
        .env("TEST_DB_URL", server.reader_url_for("postgres", &DBS))
        .env("TEST_DB_ADMIN_URL", server.admin_url("postgres"));
    command
}

/// Runs [`command_on`].
pub(crate) fn sqlgate_on(server: &Server, dir: &Path, args: &[&str]) -> Output {
    command_on(server, dir, args).output().unwrap()
}

/// `sqlgate eval` of `dir`'s config writing the per-item lines: exit 0 asserted, the lines.
fn eval_items(server: &Server, dir: &Path) -> Vec<Value> {
    let args = [&repo::EVAL[..], &["--jsonl", "items.out.jsonl"]].concat();
    let output = sqlgate_on(server, dir, &args);
    common::assert_exit(&output, 0);
    common::read_jsonl(&dir.join("items.out.jsonl"))
}

/// The instance ids of the dataset in `dir`, in item order.
fn instance_ids(dir: &Path) -> Vec<String> {
    (common::read_jsonl(&dir.join("items.jsonl")).iter())
        .map(|item| item["instance_id"].as_str().unwrap().to_string())
        .collect()
}

/// The `bird_critic` outcome of each per-item line, by instance id.
fn outcomes(dir: &Path, lines: &[Value]) -> Vec<(String, String)> {
    instance_ids(dir)
        .into_iter()
        .zip(lines)
        .map(|(id, line)| (id, line["outcome"]["bird_critic"].as_str().unwrap().into()))
        .collect()
}

#[test]
fn bird_critic_on_postgresql_through_the_config_judges_every_item_as_the_official_evaluator() {
    let _db_ids = servers::db_id_databases();
    let server = servers::postgres();
    load_databases(server);
    let before = server_state(server);
    let dir = tempfile::tempdir().unwrap();
    write_dataset(dir.path(), None, false);
    let lines = eval_items(server, dir.path());
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

/// The subset on `main` with a baseline made there, and a pull-request branch `pr` from that
/// commit; the folder and the base commit.
pub(crate) fn gated_subset(server: &Server) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    write_dataset(dir.path(), Some(&subset()), true);
    repo::init_main(dir.path(), "dataset");
    let made = sqlgate_on(
        server,
        dir.path(),
        &["baseline", "update", "--config", "sqlgate.yml"],
    );
    common::assert_exit(&made, 0);
    repo::commit_all(dir.path(), "baseline");
    let base = repo::head(dir.path());
    common::git(dir.path(), &["checkout", "-qb", "pr"]);
    (dir, base)
}

/// Gives `instance_id` the predicted `statements` in the dataset in `root`.
pub(crate) fn predict(root: &Path, instance_id: &str, statements: &[&str]) {
    let path = root.join("predictions/model.jsonl");
    let lines: Vec<String> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|line| match line.contains(&format!("\"{instance_id}\"")) {
            true => json!({"instance_id": instance_id, "pred_sqls": statements}).to_string(),
            false => line.to_string(),
        })
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
}

/// The pull request `change` makes on the gated subset, judged against its base: exit code,
/// all it said with the comment, and `summary.json`.
pub(crate) fn judged_change(
    server: &Server,
    change: impl FnOnce(&Path),
) -> (Option<i32>, String, Value) {
    let (dir, base) = gated_subset(server);
    change(dir.path());
    repo::commit_all(dir.path(), "the pull request");
    let args = [
        &repo::EVAL[..],
        &["--trusted-base", &base, "--summary", "summary.json"],
    ]
    .concat();
    let run = sqlgate_on(server, dir.path(), &args);
    let comment = std::fs::read_to_string(dir.path().join("sqlgate-report.md")).unwrap_or_default();
    let summary = std::fs::read(dir.path().join("summary.json")).unwrap_or_default();
    let said = format!("{}\n{comment}", common::text(&run));
    let summary = serde_json::from_slice(&summary).unwrap_or(Value::Null);
    (run.status.code(), said, summary)
}

#[test]
fn a_pull_request_breaking_a_management_update_on_postgresql_fails_naming_it_and_an_equal_one_passes(
) {
    let _db_ids = servers::db_id_databases();
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
    let _db_ids = servers::db_id_databases();
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
    let lines = eval_items(server, dir.path());
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
    let cases = [
        (CONFIG.replace(", admin_url_env: TEST_DB_ADMIN_URL", ""), "`dataset.engine.admin_url_env` is required"),
        (CONFIG.replace("TEST_DB_ADMIN_URL", "TEST_DB_UNSET_URL"), "`dataset.engine.admin_url_env`: the environment variable `TEST_DB_UNSET_URL` is not set"),
        (CONFIG.replace("bird-critic", "livesql").replace("[bird_critic]", "[livesql]").replace("metric: bird_critic", "metric: livesql"), "LiveSQLBench's own PostgreSQL evaluator is not reproduced"),
        (CONFIG.replace("layout: per_db_id", "layout: shared"), "`dataset.engine.layout`"),
        (CONFIG.replace("engine: { kind: postgresql, url_env: TEST_DB_URL, admin_url_env: TEST_DB_ADMIN_URL, layout: per_db_id }", "databases: dbs\n  engine: { kind: duckdb }"), "`dataset.kind: bird-critic` runs on SQLite, PostgreSQL or MariaDB / MySQL only, not with `dataset.engine.kind: duckdb`"),
        (CONFIG.replace("kind: bird-critic", "kind: evalbench"), "`dataset.kind: evalbench` runs on SQLite only"),
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
    let _db_ids = servers::db_id_databases();
    let server = servers::postgres();
    load_databases(server);
    let dir = tempfile::tempdir().unwrap();
    write_dataset(dir.path(), Some(&subset()[..1]), false);
    predict(dir.path(), "lsq_001", &["SELECT pg_sleep(4)"]);
    let before = databases_on_disk(server);
    let child = command_on(server, dir.path(), &repo::EVAL)
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
    let _db_ids = servers::db_id_databases();
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
