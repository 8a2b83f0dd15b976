//! Issue 46 on MariaDB in the gate: `dataset.kind: bird-critic` with `dataset.engine: { kind:
//! mysql, url_env, admin_url_env, layout: per_db_id }` through `eval`, the baseline, the
//! pull-request comment and `summary.json`. The 210 items of the MariaDB / MySQL corpus
//! (tests/data/livesql/mysql) judged through the config as the recorded official evaluator
//! judged them; a subset of it as a bundled-style dataset gated (a pull request breaking a Query
//! item exits 1 naming the item and its failing check, an equal one exits 0, one naming another
//! administrator variable changes nothing: the base's config names it; a base table's comment
//! changed after the baseline is a change of the data); config errors exiting 2 naming the key;
//! hostile predictions through the gate (another database, a server file, a user, a `GET_LOCK`
//! held past the item) failing alone, the base data and the server unchanged; a session of
//! another client during the run failing it.

use crate::common::bird_critic_gate::{outcomes, predict, subset, GateCorpus};
use crate::common::servers::{self, Server};
use crate::common::{self, repo};
use crate::livesql_my::{corpus_dir, load_databases, recorded, server_state, DBS};
use serde_json::{json, Value};
use std::path::Path;

/// MariaDB's form of the corpus.
const MY: GateCorpus = GateCorpus {
    engine: "mysql",
    url_database: "mysql",
    folder: "mysql",
    suffix: "my",
};

/// A loaded MariaDB server with the corpus' databases and the readers [`GateCorpus::command_on`] uses, and
/// their state.
pub(crate) fn loaded() -> (&'static Server, (Vec<String>, String)) {
    let server = servers::mariadb();
    load_databases(server);
    server.grant_reader(&["shop"]);
    server.grant_reader(&DBS);
    (server, server_state(server))
}

#[test]
fn bird_critic_on_mariadb_through_the_config_judges_every_item_as_the_official_evaluator() {
    let (server, before) = loaded();
    let dir = tempfile::tempdir().unwrap();
    MY.write_dataset(dir.path(), None, false, &MY.config());
    let lines = MY.eval_items(server, dir.path());
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

/// [`GateCorpus::judged_change`] on MariaDB.
pub(crate) fn judged_change(
    server: &Server,
    change: impl FnOnce(&Path),
    meanwhile: impl FnOnce(),
) -> (Option<i32>, String, Value) {
    MY.judged_change(server, change, meanwhile)
}

/// [`GateCorpus::judged_query_change`] on MariaDB.
pub(crate) fn judged_query_change(
    server: &Server,
    change: impl FnOnce(&Path),
    meanwhile: impl FnOnce(),
) -> (Option<i32>, String, Value) {
    MY.judged_query_change(server, change, meanwhile)
}

#[test]
fn a_pull_request_breaking_a_query_on_mariadb_fails_naming_it_and_an_equal_one_passes() {
    let (server, before) = loaded();
    // lsq_003 (item 2 of the subset, counted from 0): the recorded prediction passes; this one orders upwards.
    let (code, said, summary) = judged_change(
        server,
        |root| {
            predict(
                root,
                "lsq_003",
                &["SELECT name, price FROM products ORDER BY price ASC"],
            )
        },
        || (),
    );
    assert_eq!(code, Some(1), "{said}");
    common::assert_contains(
        &said,
        &["item 2", "(shop, Query)", "lsq_003: Test case errors"],
    );
    let model = &summary["systems"]["model"];
    assert_eq!(
        model["counts"],
        json!({"Management": 12, "Query": 10, "all": 22})
    );
    let cells = summary["gate"]["cells"].as_array().unwrap();
    let named: Vec<&Value> = cells.iter().map(|c| &c["cell"]).collect();
    assert_eq!(named, ["all", "Management", "Query"]);
    for cell in [&cells[0], &cells[2]] {
        assert_eq!(
            (&cell["regressed"], &cell["fixed"]),
            (&json!([2]), &json!([]))
        );
    }
    let notes = |root: &Path| std::fs::write(root.join("NOTES.md"), "notes\n").unwrap();
    let (code, said, _) = judged_change(server, notes, || ());
    assert_eq!(code, Some(0), "{said}");
    common::assert_contains(&said, &["0 regressed / 0 fixed"]);
    // The base commit's config names the administrator's variable: a pull request naming
    // another (unset here) changes nothing.
    let (code, said, _) = judged_change(
        server,
        |root| {
            let config = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
            let config = config.replace("TEST_DB_ADMIN_URL", "TEST_DB_PR_ADMIN_URL");
            std::fs::write(root.join("sqlgate.yml"), config).unwrap()
        },
        || (),
    );
    assert_eq!(code, Some(0), "{said}");
    common::assert_contains(&said, &["0 regressed / 0 fixed"]);
    assert!(!said.contains("TEST_DB_PR_ADMIN_URL"), "{said}");
    assert!(!said.contains(&server.admin_password), "{said}");
    assert_eq!(
        server_state(server),
        before,
        "the base data or the server changed"
    );
}

#[test]
fn what_a_clone_copies_besides_the_rows_is_part_of_the_data() {
    let (server, _) = loaded();
    // A table's comment: a prediction can read it on its clone (`SHOW CREATE TABLE`), and no
    // row or index changes.
    let notes = |root: &Path| std::fs::write(root.join("NOTES.md"), "notes\n").unwrap();
    let comment = || {
        server.admin_sql("shop", "ALTER TABLE products COMMENT = 'planted'");
    };
    let (code, said, _) = judged_change(server, notes, comment);
    assert_eq!(code, Some(2), "{said}");
    common::assert_contains(&said, &["`shop:clone`"]);
    load_databases(server);
}

#[test]
fn hostile_predictions_through_the_gate_fail_alone_and_leave_the_base_unchanged() {
    let (server, before) = loaded();
    let dir = tempfile::tempdir().unwrap();
    // One worker: the items run one after the other, so a lock an item left would meet the next.
    let config = MY.config().replace("threads: 4", "threads: 1");
    MY.write_dataset(dir.path(), Some(&subset()), false, &config);
    let marker = std::env::temp_dir().join(format!("sqlgate-my-gate-{}", std::process::id()));
    let outfile = format!("SELECT * FROM orders INTO OUTFILE '{}'", marker.display());
    let hostile: [(&str, &[&str]); 5] = [
        (
            "lsq_002",
            &[
                "SELECT GET_LOCK('sqlgate_held', 0)",
                "SELECT 1 FROM nowhere",
            ],
        ),
        ("lsq_004", &["DELETE FROM school.students"]),
        ("lsq_006", &["DROP DATABASE shop"]),
        ("lsq_008", &[&outfile]),
        ("lsq_010", &["CREATE USER evil@'%' IDENTIFIED BY 'x'"]),
    ];
    for (id, statements) in hostile {
        predict(dir.path(), id, statements);
    }
    // Each later item that passes takes the same lock first and fails when it cannot
    // ([`needs_the_lock`]): a lock left held by lsq_002 would fail them.
    let recorded = recorded();
    let predictions = common::read_jsonl(&dir.path().join("predictions/model.jsonl"));
    for line in &predictions {
        let id = line["instance_id"].as_str().unwrap();
        if id > "lsq_002" && recorded[id]["status"] == "success" {
            let statements = needs_the_lock(&line["pred_sqls"]);
            let statements: Vec<&str> = statements.iter().map(String::as_str).collect();
            predict(dir.path(), id, &statements);
        }
    }
    let lines = MY.eval_items(server, dir.path());
    for (id, outcome) in outcomes(dir.path(), &lines) {
        let expected = match hostile.iter().any(|(h, _)| *h == id) {
            true => "pred_error",
            false if recorded[&id]["status"] == "success" => "match",
            false => continue,
        };
        assert_eq!(outcome, expected, "{id}");
    }
    assert!(!marker.exists(), "a prediction wrote a server file");
    assert_eq!(
        server_state(server),
        before,
        "the base data or the server changed"
    );
}

/// `sqlgate audit` (which holds no data: the run starts at its first item) flags exactly the
/// golds the recorded official evaluator fails in gold mode.
#[test]
fn the_audit_flags_exactly_the_golds_the_official_evaluator_fails() {
    let (server, before) = loaded();
    let dir = tempfile::tempdir().unwrap();
    MY.write_dataset(dir.path(), Some(&subset()), false, &MY.config());
    let args = ["audit", "--config", "sqlgate.yml", "--jsonl", "audit.jsonl"];
    common::assert_exit(&MY.sqlgate_on(server, dir.path(), &args), 0);
    let items = common::read_jsonl(&dir.path().join("items.jsonl"));
    let findings = common::read_jsonl(&dir.path().join("audit.jsonl"));
    let flagged_by = |metric: &str| -> Vec<String> {
        (findings.iter())
            .filter(|f| {
                f["evidence"]
                    .as_str()
                    .unwrap()
                    .contains(&format!("`{metric}` scores"))
            })
            .map(|f| {
                assert_eq!(f["kind"], "gold-self-check", "{f}");
                let index = f["index"].as_u64().unwrap() as usize;
                items[index]["instance_id"].as_str().unwrap().to_string()
            })
            .collect()
    };
    let flagged = flagged_by("bird_critic");
    // Both listed metrics judge every gold, the same way on this subset.
    assert_eq!(flagged_by("bird_critic_sound"), flagged);
    assert_eq!(findings.len(), 2 * flagged.len());
    let recorded = recorded();
    let failing: Vec<String> = (subset().into_iter())
        .filter(|id| recorded[id]["gold_status"] != "success")
        .collect();
    assert_eq!(failing.len(), 12);
    assert_eq!(flagged, failing);
    assert_eq!(
        server_state(server),
        before,
        "the base data or the server changed"
    );
}

/// `statements` (a JSON list) after taking the lock `sqlgate_held`: a statement that fails when
/// another session holds it.
fn needs_the_lock(statements: &Value) -> Vec<String> {
    let mut taken = vec![
        "SELECT GET_LOCK('sqlgate_held', 0) INTO @got".to_string(),
        "SET @s = IF(@got = 1, 'DO 0', 'DO sqlgate_lock_held_elsewhere()')".to_string(),
        "PREPARE s FROM @s".to_string(),
        "EXECUTE s".to_string(),
    ];
    taken.extend(serde_json::from_value::<Vec<String>>(statements.clone()).unwrap());
    taken
}

/// The check of [`needs_the_lock`] can fail: with the lock held by another session, the item
/// (lsq_003, which passes as recorded) fails; once it is released, it passes.
#[test]
fn an_item_that_needs_the_lock_fails_while_another_session_holds_it() {
    use sqlgate::engine::livesql::mysql::{MyRun, MySettings};
    let (server, _) = loaded();
    let items = sqlgate::input::livesql::read_items(&corpus_dir().join("items_my.jsonl")).unwrap();
    let item = items.iter().find(|i| i.instance_id == "lsq_003").unwrap();
    let predictions = common::read_jsonl(&corpus_dir().join("predictions_my.jsonl"));
    let line = predictions
        .iter()
        .find(|l| l["instance_id"] == "lsq_003")
        .unwrap();
    let statements = needs_the_lock(&line["pred_sqls"]);
    let settings = MySettings::new(server.admin_url("mysql"));
    let run = MyRun::start(settings, &["shop".to_string()].into()).unwrap();
    let holder = std::thread::spawn(|| {
        server.admin_sql("mysql", "SELECT GET_LOCK('sqlgate_held', 0), SLEEP(6)")
    });
    std::thread::sleep(std::time::Duration::from_secs(2));
    let held = run.judge(item, Some(&statements)).unwrap();
    holder.join().unwrap();
    let free = run.judge(item, Some(&statements)).unwrap();
    assert!(!held.success && held.execution_error, "{held:?}");
    assert!(free.success, "{free:?}");
}

#[test]
fn a_config_missing_the_administrator_or_on_the_wrong_layout_exits_2_naming_the_key() {
    let server = servers::mariadb();
    let dir = tempfile::tempdir().unwrap();
    MY.write_dataset(dir.path(), Some(&subset()), false, &MY.config());
    let config = MY.config();
    let cases = [
        (config.replace(", admin_url_env: TEST_DB_ADMIN_URL", ""), "`dataset.engine.admin_url_env` is required with `dataset.kind: bird-critic` on `dataset.engine.kind: mysql`"),
        (config.replace("TEST_DB_ADMIN_URL", "TEST_DB_UNSET_URL"), "`dataset.engine.admin_url_env`: the environment variable `TEST_DB_UNSET_URL` is not set"),
        (config.replace("bird-critic", "livesql").replace("[bird_critic, bird_critic_sound]", "[livesql]").replace("bird_critic_sound", "livesql"), "`dataset.kind: livesql` runs on SQLite only, not with `dataset.engine.kind: mysql`"),
        (config.replace("layout: per_db_id", "layout: shared"), "`dataset.engine.layout`"),
        (config.replace("engine: { kind: mysql, url_env: TEST_DB_URL, admin_url_env: TEST_DB_ADMIN_URL, layout: per_db_id }", "databases: dbs\n  engine: { kind: duckdb }"), "`dataset.kind: bird-critic` runs on SQLite, PostgreSQL or MariaDB / MySQL only"),
    ];
    for (config, words) in cases {
        std::fs::write(dir.path().join("sqlgate.yml"), &config).unwrap();
        let output = MY.sqlgate_on(server, dir.path(), &repo::EVAL);
        let said = common::exited(&output, 2);
        assert!(said.contains(words), "{words:?} not in {said}");
        assert!(!said.contains(&server.admin_password), "{said}");
    }
}

#[test]
fn a_base_table_outside_the_allow_list_is_refused_at_start_up() {
    let (server, _) = loaded();
    // MEMORY is an engine the read-only run accepts, but not one a clone copies.
    server.admin_sql("shop", "CREATE TABLE scratch (a INT) ENGINE = MEMORY");
    let dir = tempfile::tempdir().unwrap();
    MY.write_dataset(dir.path(), Some(&subset()), false, &MY.config());
    let output = MY.sqlgate_on(server, dir.path(), &repo::EVAL);
    let said = common::exited(&output, 2);
    common::assert_contains(
        &said,
        &[
            "`dataset.engine.admin_url_env`",
            "table on the MEMORY storage engine `scratch`",
        ],
    );
    load_databases(server);
}

#[test]
fn a_foreign_session_during_the_run_fails_it() {
    let (server, _) = loaded();
    let dir = tempfile::tempdir().unwrap();
    MY.write_dataset(dir.path(), Some(&subset()[..1]), false, &MY.config());
    predict(dir.path(), "lsq_001", &["SELECT SLEEP(4)"]);
    let child = MY
        .command_on(server, dir.path(), &repo::EVAL)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The item's clone, made once the run has claimed the server.
    let started = std::time::Instant::now();
    while !a_clone_on_disk(server) {
        assert!(started.elapsed().as_secs() < 60, "no clone was made");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    server.admin_sql("mysql", "SELECT 1");
    let said = common::exited(&child.wait_with_output().unwrap(), 2);
    let words = "another session connected to the server during the run";
    assert!(said.contains(words), "{words:?} not in {said}");
}

/// Whether an item's clone (`sqlgate_live_<tag>_c<n>`) is in `server`'s data folder, read from
/// its files (no session).
fn a_clone_on_disk(server: &Server) -> bool {
    let entries = std::fs::read_dir(server.folder().join("data")).unwrap();
    entries.flatten().any(|entry| {
        let name = entry.file_name().to_string_lossy().into_owned();
        let number = name.rsplit_once("_c").map(|(_, n)| n.to_string());
        name.starts_with("sqlgate_live_")
            && number.is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    })
}
