//! Red team round 27 (issue 44): round 26's fixes (the gate rule `judge::rules::sound_gate`,
//! `livesql_sound`'s gold twin), the DuckDB worker process, and classes 1, 2 and 4 again.
//! Every test asserts the SECURE outcome and runs its control (the same regressing pull request
//! without the lever, which must exit 1, or the same query without the lever, which must run):
//! a failing test is a win. Report: `/work/notes/redteam27.md`.

/// The state-changing SQLite kind, `livesql_sound`'s gold twin (round 26's fix of win B): every
/// gold statement a test case runs reads the twin, but only when the runner sees it marked
/// (`helpers.py`: `_GoldText`, kept by `remove_*` and re-made by the sound `ex_base`). A test
/// case that runs its gold through `execute_queries` as the corpus's `lsq_155`-`lsq_157` do,
/// after a plain string method (`[s.strip() for s in sol_sqls]`: any `str` method returns a plain
/// `str`), sends it to the prediction's copy. The post-state check of a Query item whose
/// prediction wrote (`post::query_state`) runs BEFORE the test cases, on the state the
/// prediction's first run left; the test case then runs the prediction a second time on the same
/// copy. The set-up: `examples/livesql-mini`, `lsq_061` (`ORDER BY gpa DESC, name`, order counts)
/// given such a test case, gated on `livesql_sound`. The lever, three statements before the
/// wrong `SELECT name, gpa FROM students ORDER BY name`:
/// `UPDATE students SET gpa = 0 WHERE (SELECT min(rowid) FROM enrolments) > 1` (a no-op on the
/// first run) and `REPLACE INTO enrolments SELECT * FROM enrolments WHERE rowid = (SELECT
/// min(rowid) FROM enrolments)` (the same row under a new hidden rowid, which `query_state`'s
/// `SELECT *` does not see), so the second run levels every gpa and the unmarked gold agrees.
mod livesql_sound_unmarked_gold_on_the_second_run {
    use crate::common;
    use crate::livesql_post::example_with;
    use serde_json::json;

    /// `lsq_155`'s test case with the gold's text stripped first.
    pub(super) const STRIPPED: &str = "def test_case(pred_sqls, sol_sqls, db_path, conn):\n    sol_sqls = [sql.strip() for sql in sol_sqls]\n    pred_res, err, to = execute_queries(pred_sqls, db_path, conn, None, '')\n    sol_res, err2, to2 = execute_queries(sol_sqls, db_path, conn, None, '')\n    assert not (err or to or err2 or to2)\n    assert preprocess_results(pred_res) == preprocess_results(sol_res)\n    return 1\n";

    /// The wrong answer: the name's order.
    pub(super) const WRONG: &str = "SELECT name, gpa FROM students ORDER BY name";

    /// The lever before [`WRONG`].
    pub(super) const LEVER: [&str; 2] = [
        "UPDATE students SET gpa = 0 WHERE (SELECT min(rowid) FROM enrolments) > 1",
        "REPLACE INTO enrolments SELECT * FROM enrolments WHERE rowid = (SELECT min(rowid) FROM enrolments)",
    ];

    /// `sqlgate eval` of the example gated on `livesql_sound` against a baseline made with
    /// `lsq_061` given `test`, `lsq_061` predicted as `prediction`.
    pub(super) fn gate(test: &str, prediction: &[&str]) -> (Option<i32>, String) {
        let dir = example_with("lsq_061", json!({ "test_cases": [test] }));
        let root = dir.path();
        let config = root.join("sqlgate.yml");
        std::fs::remove_file(root.join("baseline.json")).unwrap();
        let update = common::sqlgate(&["baseline", "update", "--config", common::arg(&config)]);
        common::assert_exit(&update, 0);
        let path = root.join("predictions/model.jsonl");
        let line = json!({"instance_id": "lsq_061", "pred_sqls": prediction}).to_string();
        let lines: Vec<String> = (std::fs::read_to_string(&path).unwrap().lines())
            .map(|l| match l.contains("\"lsq_061\"") {
                true => line.clone(),
                false => l.to_string(),
            })
            .collect();
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let output = common::eval(&config, &["--comment", "never"]);
        (output.status.code(), common::text(&output))
    }

    #[test]
    fn control_a_wrong_order_fails_the_gate() {
        let (code, said) = gate(STRIPPED, &[WRONG]);
        assert_eq!(code, Some(1), "{said}");
    }

    #[test]
    fn a_second_run_that_levels_the_unmarked_golds_column_does_not_pass() {
        let (code, said) = gate(STRIPPED, &[LEVER[0], LEVER[1], WRONG]);
        assert_ne!(
            code,
            Some(0),
            "a wrong prediction passed by changing what its unmarked gold reads on its second run: {said}"
        );
    }
}

/// The same lever as [`livesql_sound_unmarked_gold_on_the_second_run`] under the corpus's own
/// `lsq_155` test case (the gold passed to `execute_queries` as given, so marked): the twin must
/// answer it whatever the prediction's second run did.
mod livesql_sound_marked_gold_on_the_second_run {
    use super::livesql_sound_unmarked_gold_on_the_second_run::{gate, LEVER, WRONG};

    const MARKED: &str = "def test_case(pred_sqls, sol_sqls, db_path, conn):\n    pred_res, err, to = execute_queries(pred_sqls, db_path, conn, None, '')\n    sol_res, err2, to2 = execute_queries(sol_sqls, db_path, conn, None, '')\n    assert not (err or to or err2 or to2)\n    assert preprocess_results(pred_res) == preprocess_results(sol_res)\n    return 1\n";

    #[test]
    fn control_a_wrong_order_fails_the_gate() {
        let (code, said) = gate(MARKED, &[WRONG]);
        assert_eq!(code, Some(1), "{said}");
    }

    #[test]
    fn a_second_run_that_levels_the_golds_column_does_not_pass() {
        let (code, said) = gate(MARKED, &[LEVER[0], LEVER[1], WRONG]);
        assert_ne!(code, Some(0), "a wrong prediction passed: {said}");
    }
}

/// The DuckDB worker (`sqlgate duckdb-worker`, `engine::duckdb::{worker, serve, local}`) reads
/// secrets: the worker is started with the parent's whole environment (`Worker::start` adds
/// `MALLOC_ARENA_MAX` and clears nothing), so a Spider 2.0 prediction on DuckDB that is one
/// plain `SELECT` could return an environment variable (a CI token) as a result cell, or a
/// file's text, into the report. The levers (each one plain query, so `prepare_query` lets it
/// through to DuckDB): `getenv`, `read_text` / `read_blob`, the `query` table function running
/// a `PRAGMA`-like text, `duckdb_settings()`'s `home_directory` / `secret_directory` paths,
/// `duckdb_secrets()`. The secure outcome: no query returns the value (an error, or no row
/// holding it). The control: the same executor answers a plain query on the table.
mod duckdb_worker_environment_and_files {
    use sqlgate::engine::duckdb::DuckdbEngine;
    use sqlgate::engine::exec::{Executor, Limits};
    use sqlgate::engine::value::Value;
    use std::sync::Arc;
    use std::time::Duration;

    fn executor() -> Executor {
        crate::common::duckdb_worker();
        let limits = Limits {
            timeout: Duration::from_millis(2000),
            max_rows: 10_000,
            max_bytes: 64 << 20,
        };
        Executor::on(Arc::new(DuckdbEngine::new()), limits)
    }

    /// Every text cell of `sql`'s result, or `None` when it fails.
    fn texts(executor: &Executor, db: &std::path::Path, sql: &str) -> Option<Vec<String>> {
        let rows = executor.run(db, sql).ok()?;
        Some(
            rows.iter()
                .flatten()
                .map(|value| match value {
                    Value::Text(text) => text.clone(),
                    other => format!("{other:?}"),
                })
                .collect(),
        )
    }

    #[test]
    fn control_a_plain_query_runs_in_the_worker() {
        let dir = tempfile::tempdir().unwrap();
        let db = crate::duckdb::loaded_shop(dir.path());
        let got = texts(&executor(), &db, "SELECT name FROM item WHERE id = 1");
        assert_eq!(got, Some(vec!["pen".to_string()]));
    }

    #[test]
    fn no_query_returns_an_environment_variable() {
        let dir = tempfile::tempdir().unwrap();
        let db = crate::duckdb::loaded_shop(dir.path());
        let executor = executor();
        let path = std::env::var("PATH").unwrap();
        for sql in [
            "SELECT getenv('PATH')",
            "SELECT * FROM query('SELECT getenv(''PATH'')')",
            "SELECT value FROM duckdb_settings() WHERE name = 'PATH'",
        ] {
            let got = texts(&executor, &db, sql);
            assert!(
                !got.iter().flatten().any(|cell| cell.contains(&path)),
                "`{sql}` returned the worker's PATH: {got:?}"
            );
        }
    }

    #[test]
    fn no_query_returns_a_files_text() {
        let dir = tempfile::tempdir().unwrap();
        let db = crate::duckdb::loaded_shop(dir.path());
        let secret = dir.path().join("secret.txt");
        std::fs::write(&secret, "rt27-secret-text").unwrap();
        let executor = executor();
        let file = secret.display();
        for sql in [
            format!("SELECT content FROM read_text('{file}')"),
            format!("SELECT CAST(content AS VARCHAR) FROM read_blob('{file}')"),
            format!("SELECT * FROM query('SELECT * FROM read_text(''{file}'')')"),
            format!("SELECT * FROM query_table('{file}')"),
            format!("SELECT * FROM sniff_csv('{file}')"),
            format!("SELECT * FROM read_json_objects('{file}')"),
            format!("SELECT * FROM '{file}'"),
        ] {
            let got = texts(&executor, &db, &sql);
            assert!(
                !got.iter()
                    .flatten()
                    .any(|cell| cell.contains("rt27-secret-text")),
                "`{sql}` returned the file's text: {got:?}"
            );
        }
    }

    #[test]
    fn the_settings_show_no_secret_path() {
        let dir = tempfile::tempdir().unwrap();
        let db = crate::duckdb::loaded_shop(dir.path());
        let executor = executor();
        let got = texts(
            &executor,
            &db,
            "SELECT name || '=' || value FROM duckdb_settings() WHERE value LIKE '%/%'",
        );
        let secrets = texts(&executor, &db, "SELECT name FROM duckdb_secrets()");
        assert!(
            secrets.as_ref().is_none_or(|rows| rows.is_empty()),
            "{secrets:?}"
        );
        // Paths are not secrets, but name what the worker can see: shown for the report.
        eprintln!("settings with paths: {got:?}");
    }
}

/// Class 1 (what the pull request's tree decides under the base's config) on Spider 2.0-DBT,
/// through the DuckDB worker. The base config reads the agent's `results_metadata.jsonl` with
/// `format: spider2-dbt` (`input::spider2_dbt::answer_file`: each answer a regular file inside
/// its instance folder, no link), and that reading becomes the prediction text
/// `sha256:<hex> <file>` (`answer_text`), which `duckdb_match` reads back as the file to open
/// (`answer_of_text`, no check where it lies). A pull request may change a prediction entry's
/// `format` (`trust::lifecycle::take_prediction_formats`: "any format can hold any
/// predictions"), taken from its own config when that config loads. The lever: the pull
/// request's config is a `dataset.kind: spider` config (which loads, with files of its own)
/// reading the same entry with `format: jsonl`, and the entry's file holds
/// `{"id": i, "sql": "sha256:<64 zeros> <the instance's gold .duckdb>"}`: the gold compared
/// with itself. The control: the same regression (instance `i1` answered wrong) without it.
mod spider2_dbt_prediction_text_names_the_gold {
    use crate::common::{self, repo};
    use crate::spider2_dbt_gate::{gated, write_answer, INSTANCES, WRONG};
    use serde_json::json;
    use std::path::Path;

    /// The pull request (`i1` answered wrong, then `lever`) judged against the base.
    fn judged(lever: impl FnOnce(&Path)) -> (Option<i32>, String) {
        let (_dir, root, base) = gated();
        common::git(&root, &["checkout", "-qb", "pr"]);
        write_answer(&root, "i1", WRONG);
        lever(&root);
        repo::commit_all(&root, "pull request");
        let output = repo::judged(&root, &base, &[]);
        (output.status.code(), common::text(&output))
    }

    /// The lever: a loading `spider` config reading the entry as `jsonl`, whose lines name the
    /// gold files.
    fn gold_as_the_answer(root: &Path) {
        spider_config_reading_jsonl(root);
        let zeros = "0".repeat(64);
        let lines: String = (INSTANCES.iter().enumerate())
            .map(|(index, instance)| {
                let gold = root.join(format!("gold/{instance}/db.duckdb"));
                let sql = format!("sha256:{zeros} {}", gold.display());
                format!("{}\n", json!({"id": index, "sql": sql}))
            })
            .collect();
        std::fs::write(root.join("sub/results_metadata.jsonl"), lines).unwrap();
    }

    /// The config half of the lever: a loading `spider` config reading the entry as `jsonl`.
    fn spider_config_reading_jsonl(root: &Path) {
        std::fs::create_dir_all(root.join("pr/db/one")).unwrap();
        let conn = rusqlite::Connection::open(root.join("pr/db/one/one.sqlite")).unwrap();
        conn.execute_batch("CREATE TABLE x (a INTEGER); INSERT INTO x VALUES (1);")
            .unwrap();
        drop(conn);
        std::fs::write(root.join("pr/gold.sql"), "SELECT a FROM x\tone\n").unwrap();
        std::fs::write(
            root.join("sqlgate.yml"),
            "dataset: { kind: spider, gold: pr/gold.sql, databases: pr/db, difficulty: none }\n\
             predictions: [{ name: agent, path: sub/results_metadata.jsonl, format: jsonl }]\n\
             metrics: [ex]\nbaseline: { path: baseline.json }\ngate: { max_drop_points: 0.0 }\n\
             report: { output: report.md }\n",
        )
        .unwrap();
    }

    #[test]
    fn control_a_wrong_answer_fails_the_gate() {
        let (code, said) = judged(|_| {});
        assert_eq!(code, Some(1), "{said}");
    }

    #[test]
    fn a_prediction_text_naming_the_gold_file_does_not_pass() {
        let (code, said) = judged(gold_as_the_answer);
        assert_ne!(
            code,
            Some(0),
            "the gold .duckdb named as the answer passed the gate: {said}"
        );
    }

    /// The fix: the base's kind reads `format: spider2-dbt` only, so the proposed `jsonl` is
    /// not taken (the base's format stays, with a note) and the honest submission is scored as
    /// the base reads it: `i1` answered wrong fails the gate.
    #[test]
    fn a_format_the_bases_kind_refuses_is_not_taken_and_said() {
        let (code, said) = judged(spider_config_reading_jsonl);
        assert_eq!(code, Some(1), "{said}");
        common::assert_contains(
            &said,
            &["sub/results_metadata.jsonl is read as the base commit's config says, not as `format: jsonl`"],
        );
    }
}

/// `livesql_sound`'s gold twin, reached by the prediction's own statements: the sound runner's
/// `performance_compare_by_qep(old_sqls, sol_sqls, ...)` sends both lists to the twin when either
/// is the gold's (`helpers.py::_side(old_sqls, sol_sqls)`), so a test case comparing the
/// prediction's plan with the gold's (`performance_compare_by_qep(pred_sqls, sol_sqls, ...)`, the
/// official efficiency check's shape) runs the prediction's statements on the twin's connection,
/// "inside a savepoint that is rolled back" (`Session::cost`: `SAVEPOINT sqlgate_cost`, the
/// statements, `ROLLBACK TO sqlgate_cost; RELEASE sqlgate_cost`). A prediction statement
/// `SAVEPOINT sqlgate_cost` (the same name) opens an inner savepoint: the rollback and release
/// then end the inner one only, and what the prediction made before it stays in the still open
/// outer transaction of the twin's connection, which the item's later gold requests reuse
/// (`twin::Sides::gold`). On the prediction's own copy the statement is harmless (its
/// transaction is committed at once, as every non-`SELECT` is). The set-up: `lsq_061` (order
/// counts) with one test case that takes the plan comparison, then `ex_base`. The lever before
/// the wrong `SELECT name, gpa FROM students ORDER BY name`: `CREATE TEMP VIEW IF NOT EXISTS
/// students AS SELECT name, 0 AS gpa FROM main.students` and `SAVEPOINT sqlgate_cost` (a TEMP
/// object: the Query item's post-state check compares `main` only). The controls: the wrong
/// order without the lever, and the lever under `ex_base` alone (no plan comparison).
mod livesql_sound_plan_comparison_leaves_a_view_on_the_twin {
    use super::livesql_sound_unmarked_gold_on_the_second_run::{gate, WRONG};

    const PLAN_THEN_RESULT: &str = "def test_case(pred_sqls, sol_sqls, db_path, conn):\n    cheaper = performance_compare_by_qep(pred_sqls, sol_sqls, db_path, conn)\n    print(f'gold cheaper than the prediction: {cheaper}')\n    assert ex_base(pred_sqls, sol_sqls, db_path, conn, {'order': True}) == 1\n    return 1\n";

    const RESULT_ONLY: &str = "def test_case(pred_sqls, sol_sqls, db_path, conn):\n    assert ex_base(pred_sqls, sol_sqls, db_path, conn, {'order': True}) == 1\n    return 1\n";

    const LEVER: [&str; 2] = [
        "CREATE TEMP VIEW IF NOT EXISTS students AS SELECT name, 0 AS gpa FROM main.students",
        "SAVEPOINT sqlgate_cost",
    ];

    #[test]
    fn control_a_wrong_order_fails_the_gate() {
        let (code, said) = gate(PLAN_THEN_RESULT, &[WRONG]);
        assert_eq!(code, Some(1), "{said}");
    }

    #[test]
    fn control_the_lever_without_the_plan_comparison_fails_the_gate() {
        let (code, said) = gate(RESULT_ONLY, &[LEVER[0], LEVER[1], WRONG]);
        assert_eq!(code, Some(1), "{said}");
    }

    #[test]
    fn a_prediction_cannot_leave_a_view_on_the_golds_twin() {
        let (code, said) = gate(PLAN_THEN_RESULT, &[LEVER[0], LEVER[1], WRONG]);
        assert_ne!(
            code,
            Some(0),
            "a wrong prediction passed by committing a view on its gold's twin: {said}"
        );
    }
}

/// The DuckDB worker outliving its run: `sqlgate eval` on DuckDB (the Spider fixture of
/// `tests/it/duckdb.rs`) with a prediction stuck in one scalar call (`levenshtein` of two
/// 300,000-character strings, minutes of work) under a long `timeout_ms`, so the worker is busy
/// when its parent dies; the parent is then killed (`SIGKILL`: no destructor, no kill of the
/// worker by `Drop`). The secure outcome: the worker dies with it (`PR_SET_PDEATHSIG` in
/// `worker::confine`), so no process holds the fixture's files a moment later. The control: while
/// the parent runs, the worker holding the database is seen.
mod duckdb_worker_after_its_parent_is_killed {
    use std::time::{Duration, Instant};

    /// Processes other than `parent` holding open a file of `parent`'s copy of the databases
    /// (`<tmp>/sqlgate-databases-<pid>-...`, where the run reads them).
    fn workers_of(parent: u32) -> Vec<u32> {
        let prefix = format!(
            "{}/sqlgate-databases-{parent}-",
            std::env::temp_dir().display()
        );
        (std::fs::read_dir("/proc").unwrap().flatten())
            .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| *pid != parent)
            .filter(|pid| {
                let fds = std::fs::read_dir(format!("/proc/{pid}/fd"));
                fds.into_iter().flatten().flatten().any(|fd| {
                    std::fs::read_link(fd.path())
                        .is_ok_and(|target| target.to_string_lossy().starts_with(&prefix))
                })
            })
            .collect()
    }

    /// Polls `done` every 50 ms for up to `within`.
    fn eventually(within: Duration, mut done: impl FnMut() -> bool) -> bool {
        let start = Instant::now();
        while start.elapsed() < within {
            if done() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        done()
    }

    #[test]
    fn a_killed_run_leaves_no_worker() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().canonicalize().unwrap();
        crate::duckdb::loaded_shop(&folder);
        let config = folder.join("sqlgate.yml");
        let text = std::fs::read_to_string(&config).unwrap();
        std::fs::write(&config, text + "execution: { timeout_ms: 600000 }\n").unwrap();
        std::fs::write(
            folder.join("pred.txt"),
            "SELECT levenshtein(repeat('a', 300000), repeat('b', 300000))\n",
        )
        .unwrap();
        let mut run = crate::common::sqlgate_command(&[
            "eval",
            "--config",
            crate::common::arg(&config),
            "--comment",
            "never",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
        let parent = run.id();
        let seen = eventually(Duration::from_secs(20), || !workers_of(parent).is_empty());
        // Past the gold's query: the worker is inside the prediction's call.
        std::thread::sleep(Duration::from_millis(1500));
        let workers = workers_of(parent);
        run.kill().unwrap();
        run.wait().unwrap();
        assert!(
            seen,
            "control: no worker held the database while the run ran"
        );
        let gone = eventually(Duration::from_secs(3), || workers_of(parent).is_empty());
        assert!(
            gone,
            "workers {workers:?} outlived their killed run: {:?}",
            workers_of(parent)
        );
        // The killed run could not remove its copy of the databases (no destructor ran).
        let prefix = format!("sqlgate-databases-{parent}-");
        for entry in std::fs::read_dir(std::env::temp_dir()).unwrap().flatten() {
            if entry.file_name().to_string_lossy().starts_with(&prefix) {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
}

/// Class 2 (the repair path) against the gate rule `judge::rules::sound_gate` on SQLite
/// `livesql`: a base whose config no longer loads (a direct push left an unknown key) and whose
/// baseline records `gate.metric: livesql` (as a sqlgate before the rule let a config gate, the
/// official profile first in `metrics`); the pull request repairs the config, gating on
/// `livesql_sound`, and is judged with the recorded gate. The lever: round 26's one-row
/// `CREATE TEMP VIEW IF NOT EXISTS students ...` on `lsq_061`, which the official `livesql` passes
/// (no test case: the default test runs the gold on the prediction's connection). The secure
/// outcome: the rule fails the recorded gate on `livesql`. The control: the same regression
/// without the lever also fails.
mod livesql_repair_under_a_recorded_official_gate {
    use crate::common::{self, repo};
    use crate::livesql_post::example_with;
    use crate::repair::judge_pr;
    use serde_json::json;

    fn repaired(prediction: &[&str]) -> (Option<i32>, String) {
        let dir = example_with("lsq_061", json!({}));
        let root = dir.path();
        let config = root.join("sqlgate.yml");
        let good = std::fs::read_to_string(&config).unwrap();
        std::fs::remove_file(root.join("baseline.json")).unwrap();
        repo::init_main(root, "livesql-mini");
        repo::update_baseline(root);
        let baseline = root.join("baseline.json");
        let stored = std::fs::read_to_string(&baseline).unwrap();
        let recorded = [
            "\"metric\": \"livesql_sound\"",
            "\"metric\":\"livesql_sound\"",
        ]
        .into_iter()
        .find(|needle| stored.matches(needle).count() == 1)
        .expect("the baseline records its gate's metric once");
        let older = recorded.replace("livesql_sound", "livesql");
        std::fs::write(&baseline, stored.replace(recorded, &older)).unwrap();
        std::fs::write(&config, format!("{good}bogus_key: 1\n")).unwrap();
        repo::commit_all(root, "baseline gated on livesql; a config broken by a push");
        let base = repo::head(root);
        common::git(root, &["checkout", "-qb", "pr"]);
        std::fs::write(&config, &good).unwrap();
        let path = root.join("predictions/model.jsonl");
        let line = json!({"instance_id": "lsq_061", "pred_sqls": prediction}).to_string();
        let lines: Vec<String> = (std::fs::read_to_string(&path).unwrap().lines())
            .map(|l| match l.contains("\"lsq_061\"") {
                true => line.clone(),
                false => l.to_string(),
            })
            .collect();
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        repo::commit_all(root, "repair the config; the new model");
        judge_pr(root, &base)
    }

    #[test]
    fn control_the_regression_fails_the_repair() {
        let (code, out) = repaired(&["SELECT name, gpa FROM students ORDER BY name"]);
        assert_eq!(code, Some(1), "{out}");
    }

    #[test]
    fn a_repair_is_not_gated_on_livesql() {
        let (code, out) = repaired(&[
            "CREATE TEMP VIEW IF NOT EXISTS students AS SELECT 'x' AS name, 0 AS gpa",
            "SELECT name, gpa FROM students ORDER BY name",
        ]);
        assert_ne!(code, Some(0), "the repair passed under `livesql`: {out}");
        common::assert_contains(&out, &["`gate.metric`: `livesql` runs the prediction"]);
    }
}
