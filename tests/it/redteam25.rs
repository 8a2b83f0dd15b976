//! Red team round 25 (issue 44): what a pull request supplies that decides a verdict, reads
//! outside the workspace, hangs or exhausts memory. Every test asserts the SECURE outcome, so a
//! failing test is a win for the attacker, and each runs its control (the same set-up without
//! the lever, which must show the documented containment). The threat model is SECURITY.md's
//! "What the workflow must do": the pull request controls its tree and its predictions, not
//! programs in the gate's job. This round aims at the read-only engines (DuckDB, Spider 2.0-DBT's
//! answer files), which no round attacked recently.

/// DuckDB as `dataset.engine.kind: duckdb` runs it (read-only engine, class "hangs"): the
/// `shop` fixture of `tests/it/duckdb.rs` loaded into a `.duckdb` file, predictions run through
/// the engine's executor under a 1 s `timeout_ms`. SECURITY.md ("Untrusted SQL on DuckDB",
/// *Time*) says a query ends within the watchdog's poll plus one operator step of its deadline.
/// The lever: one scalar call whose single step is quadratic (`levenshtein` of two long
/// strings the query builds with `repeat`), so the one operator step is as long as the
/// prediction wants (1 MiB of SQL, strings of any length).
mod duckdb_one_long_call {
    use sqlgate::engine::duckdb::DuckdbEngine;
    use sqlgate::engine::exec::{ExecError, Executor, Limits};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    const TIMEOUT: Duration = Duration::from_millis(1000);
    /// `tests/it/duckdb.rs`'s margin (the watchdog's poll, a loaded machine).
    const MARGIN: Duration = Duration::from_millis(1500);

    pub(crate) fn limits() -> Limits {
        Limits {
            timeout: TIMEOUT,
            max_rows: 10_000,
            max_bytes: 64 << 20,
        }
    }

    /// `sql` on the loaded `shop` file: its result and how long it took.
    fn timed(
        sql: &str,
    ) -> (
        Result<Vec<sqlgate::engine::value::Row>, ExecError>,
        Duration,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let file = crate::duckdb::loaded_shop(dir.path());
        let executor = Executor::on(Arc::new(DuckdbEngine::new()), limits());
        let started = Instant::now();
        let result = executor.run(&file, sql);
        (result, started.elapsed())
    }

    /// Control: a runaway made of many cheap steps (the documented case) ends at the deadline.
    #[test]
    fn control_many_cheap_steps_end_at_the_deadline() {
        let (result, took) = timed("SELECT count(*) FROM range(1000000000000)");
        assert!(
            matches!(result, Err(ExecError::Timeout(1000))),
            "{result:?}"
        );
        assert!(took < TIMEOUT + MARGIN, "took {took:?}");
    }

    /// One `levenshtein` call on two strings of 60,000 characters (3.6 * 10^9 cells in one
    /// step, about 6 s here; 10^6 characters would take hours).
    #[test]
    fn one_quadratic_scalar_call_ends_at_the_deadline() {
        let (result, took) =
            timed("SELECT levenshtein(repeat('a', 60000), repeat('b', 60000)) AS d");
        eprintln!("levenshtein: {result:?} after {took:?}");
        assert!(
            took < TIMEOUT + MARGIN,
            "one scalar call ran {took:?} past a {TIMEOUT:?} deadline: {result:?}"
        );
    }

    /// One `list_sort` of a list of 3 * 10^7 numbers `range` builds in one call.
    #[test]
    fn one_list_sort_ends_at_the_deadline() {
        let (result, took) = timed("SELECT len(list_sort(range(30000000))) AS n");
        eprintln!("list_sort: {result:?} after {took:?}");
        assert!(
            took < TIMEOUT + MARGIN,
            "one scalar call ran {took:?} past a {TIMEOUT:?} deadline: {result:?}"
        );
    }
}

/// DuckDB as `dataset.engine.kind: duckdb` runs it (read-only engine, class "exhausts memory"):
/// SECURITY.md ("Untrusted SQL on DuckDB", *Memory*) says DuckDB's own memory, outside Rust's
/// allocator, is bounded by each open database's `memory_limit` (half the run's budget over four
/// databases: 128 MiB with the default 1 GiB), a query beyond it failing as `result too large`.
/// The lever: values built by one scalar call (`range(n)` as a list, `repeat` of a long string)
/// are allocated outside DuckDB's buffer manager, so the limit never sees them; the query
/// returns one small number, so the row and byte caps never see them either. (Measured while
/// preparing this round: `len(range(200000000))` under a 60 s timeout reached a peak resident
/// size of 19 GB before the deadline stopped it.)
mod duckdb_memory_outside_its_limit {
    use sqlgate::engine::duckdb::DuckdbEngine;
    use sqlgate::engine::exec::{ExecError, Executor, Limits};
    use std::sync::Arc;
    use std::time::Duration;

    /// `sql` on the loaded `shop` file under a generous deadline (so that memory, not the clock,
    /// stops it, as in `duckdb::huge_results_stop_at_the_caps_and_duckdbs_memory_limit`), and
    /// the process's peak resident size after it.
    fn patient(sql: &str) -> (Result<Vec<sqlgate::engine::value::Row>, ExecError>, String) {
        let dir = tempfile::tempdir().unwrap();
        let file = crate::duckdb::loaded_shop(dir.path());
        let executor = Executor::on(
            Arc::new(DuckdbEngine::new()),
            Limits {
                timeout: Duration::from_secs(60),
                ..super::duckdb_one_long_call::limits()
            },
        );
        let result = executor.run(&file, sql);
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let peak = (status.lines())
            .find(|line| line.starts_with("VmHWM"))
            .unwrap_or_default()
            .to_string();
        (result, peak)
    }

    fn is_memory_limit(result: &Result<Vec<sqlgate::engine::value::Row>, ExecError>) -> bool {
        matches!(result, Err(ExecError::TooLarge(m)) if m.contains("memory limit"))
    }

    /// Control: the same 2 * 10^7 numbers gathered by the `list` aggregate stop at the limit.
    #[test]
    fn control_an_aggregated_list_stops_at_the_memory_limit() {
        let (result, peak) = patient("SELECT length(list(i)) FROM range(20000000) r(i)");
        eprintln!("list aggregate: {result:?}; {peak}");
        assert!(is_memory_limit(&result), "{result:?}");
    }

    /// `range(20000000)` as one list value (160 MB of numbers, more than the 128 MiB limit).
    #[test]
    fn a_list_built_by_one_call_stops_at_the_memory_limit() {
        let (result, peak) = patient("SELECT len(range(20000000)) AS n");
        eprintln!("range list: {result:?}; {peak}");
        assert!(
            is_memory_limit(&result),
            "a 160 MB list passed DuckDB's 128 MiB memory limit: {result:?}; {peak}"
        );
    }

    /// One string of 300 MB (`repeat` of a 100 MB string), more than twice the limit.
    #[test]
    fn a_string_built_by_one_call_stops_at_the_memory_limit() {
        let (result, peak) = patient("SELECT length(repeat(repeat('x', 100000000), 3)) AS n");
        eprintln!("repeat: {result:?}; {peak}");
        assert!(
            is_memory_limit(&result),
            "a 300 MB string passed DuckDB's 128 MiB memory limit: {result:?}; {peak}"
        );
    }
}

/// Spider 2.0-DBT's answer files (`dataset.kind: spider2-dbt`, read-only engine, class
/// "hangs"): the pull request's answer `.duckdb` chooses every view in it, and under the
/// official profile a view's query runs (SECURITY.md, "Hostile `.duckdb` answers") "inside those
/// locks", the deadline among them (`spider2_dbt::a_huge_or_runaway_predicted_table_stops_at_
/// the_caps_and_the_deadline` uses a 300 ms deadline). The lever: the answer's table `t` is a
/// view whose one row holds a single quadratic call (round 25's `duckdb_one_long_call`).
mod spider2_dbt_answer_view_one_long_call {
    use sqlgate::engine::duckdb::tables::write_script;
    use sqlgate::engine::exec::{ExecError, Limits};
    use sqlgate::engine::spider2_dbt::{judge_files, Tables, Verdict};
    use std::path::Path;
    use std::time::{Duration, Instant};

    const GOLD: &str =
        "CREATE TABLE t (a INTEGER, b INTEGER); INSERT INTO t VALUES (1, 2), (3, 4);";
    const DEADLINE: Duration = Duration::from_millis(300);
    const MARGIN: Duration = Duration::from_millis(1500);

    /// The official judge of an answer built from `answer` against the gold file: the verdict
    /// and how long it took.
    fn judged(dir: &Path, answer: &str) -> (Verdict, Duration) {
        let (gold, pred) = (
            dir.join("gold/i1/db.duckdb"),
            dir.join("results/i1/out.duckdb"),
        );
        std::fs::create_dir_all(gold.parent().unwrap()).unwrap();
        std::fs::create_dir_all(pred.parent().unwrap()).unwrap();
        write_script(&gold, GOLD).unwrap();
        write_script(&pred, answer).unwrap();
        let names = ["t".to_string()];
        let tables = Tables {
            names: &names,
            conditions: &[vec![]],
            ignore_orders: &[true],
        };
        let limits = Limits {
            timeout: DEADLINE,
            max_rows: 1_000,
            max_bytes: 64 << 20,
        };
        crate::common::duckdb_worker();
        let started = Instant::now();
        let verdict = judge_files(&gold, &pred, tables, &limits, false);
        (verdict, started.elapsed())
    }

    /// Control: a view of many cheap steps (a 10^10-row cross join) stops at the deadline.
    #[test]
    fn control_a_runaway_view_stops_at_the_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let (verdict, took) = judged(
            dir.path(),
            "CREATE TABLE n AS SELECT range AS x FROM range(100000); CREATE VIEW t AS SELECT \
             count(*) AS a, 1 AS b FROM n n1, n n2;",
        );
        assert!(
            matches!(verdict, Verdict::PredFailure(ExecError::Timeout(_))),
            "{verdict:?}"
        );
        assert!(took < DEADLINE + MARGIN, "took {took:?}");
    }

    /// The answer's `t` a view of one `levenshtein` call on two 60,000-character strings.
    #[test]
    fn a_view_of_one_quadratic_call_stops_at_the_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let (verdict, took) = judged(
            dir.path(),
            "CREATE VIEW t AS SELECT levenshtein(repeat('a', 60000), repeat('b', 60000)) AS a, \
             1 AS b;",
        );
        eprintln!("{verdict:?} after {took:?}");
        assert!(
            took < DEADLINE + MARGIN,
            "one answer view ran {took:?} past a {DEADLINE:?} deadline: {verdict:?}"
        );
    }
}

/// DuckDB's other log files beside a database (class 1: files beside what the base config
/// names). DuckDB 1.5 knows `FILE.wal.checkpoint` and `FILE.wal.recovery` besides `FILE.wal`;
/// `engine::duckdb::refuse_log` (and the dataset's load check) looks for `FILE.wal` only. The
/// lever: a pull request adds the log of an extra row under one of the other names beside a
/// database; the engine opens the file itself (no private copy here, as `sqlgate spider2-dbt`'s
/// gold and answer files are opened). Contained if DuckDB does not replay it.
mod duckdb_renamed_logs_beside_a_database {
    use sqlgate::engine::duckdb::tables::write_script;
    use sqlgate::engine::duckdb::DuckdbEngine;
    use sqlgate::engine::exec::{ExecError, Executor, Limits};
    use std::path::{Path, PathBuf};
    use std::sync::Arc;
    use std::time::Duration;

    /// A database of one checkpointed row whose second row is only in `FILE.wal`, that log then
    /// renamed to `FILE.<suffix>`; returns the database.
    fn with_log(dir: &Path, suffix: &str) -> PathBuf {
        let db = dir.join("g.duckdb");
        write_script(
            &db,
            "CREATE TABLE t (a INTEGER, b INTEGER); INSERT INTO t VALUES (1, 2); CHECKPOINT; \
             PRAGMA disable_checkpoint_on_shutdown; INSERT INTO t VALUES (3, 4);",
        )
        .unwrap();
        let log = dir.join("g.duckdb.wal");
        assert!(log.is_file(), "the fixture left no log");
        if suffix != "wal" {
            std::fs::rename(&log, dir.join(format!("g.duckdb.{suffix}"))).unwrap();
        }
        db
    }

    fn count(db: &Path) -> Result<Vec<sqlgate::engine::value::Row>, ExecError> {
        crate::common::duckdb_worker();
        let executor = Executor::on(
            Arc::new(DuckdbEngine::new()),
            Limits {
                timeout: Duration::from_secs(10),
                max_rows: 100,
                max_bytes: 1 << 20,
            },
        );
        executor.run(db, "SELECT count(*) FROM t")
    }

    /// Control: `FILE.wal` is refused before the file is opened.
    #[test]
    fn control_the_write_ahead_log_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let db = with_log(dir.path(), "wal");
        assert!(matches!(count(&db), Err(ExecError::Open(_))));
    }

    /// `FILE.wal.checkpoint` and `FILE.wal.recovery`: the log's row is never read. Since the fix
    /// of issue 44 the file is refused as with `FILE.wal` (any `FILE.wal*` sibling), which is
    /// stronger than the file's own single row being read (`Ok([[Int(1)]])` before it).
    #[test]
    fn a_log_under_another_name_is_not_replayed() {
        for suffix in ["wal.checkpoint", "wal.recovery"] {
            let dir = tempfile::tempdir().unwrap();
            let db = with_log(dir.path(), suffix);
            let rows = count(&db);
            assert!(
                matches!(&rows, Err(ExecError::Open(m)) if m.contains(&format!("g.duckdb.{suffix}"))),
                "{suffix}: the file with a log beside it was read: {rows:?}"
            );
        }
    }
}

/// The same lever through the binary (read-only engine, class "exhausts memory"): `sqlgate eval`
/// on the `shop` fixture with `dataset.engine.kind: duckdb` and `execution.max_memory: 256 MiB`,
/// which CONFIG.md calls the budget of "the whole run" and from which DuckDB's own limit is
/// derived (32 MiB a database here). The pull request's one prediction builds one list of 4 *
/// 10^7 numbers; the process's peak resident size is read by `/usr/bin/time`.
mod duckdb_run_budget_through_the_binary {
    use crate::common;
    use std::path::Path;
    use std::process::Command;

    /// `sqlgate eval` of `prediction` on a loaded `shop`: the item's outcome and the peak resident
    /// size of the process in KiB.
    fn peak_of(dir: &Path, prediction: &str) -> (String, u64) {
        crate::duckdb::loaded_shop(dir);
        let config = common::config::write(
            dir.join("sqlgate.yml"),
            "dataset: { kind: spider, gold: gold.sql, databases: ddb, difficulty: none, engine: \
             { kind: duckdb } }\npredictions: [{ name: m, path: pred.txt }]\nmetrics: [ex]\n\
             execution: { timeout_ms: 20000, threads: 1, max_memory: 268435456 }\n",
        );
        std::fs::write(dir.join("pred.txt"), format!("{prediction}\n")).unwrap();
        let jsonl = dir.join("items.jsonl");
        let inner = common::eval_command(&config, &["--jsonl", common::arg(&jsonl)]);
        let mut command = Command::new("/usr/bin/time");
        command.args(["-f", "peak-kib %M"]).arg(inner.get_program());
        command.args(inner.get_args());
        for (name, value) in inner.get_envs() {
            match value {
                Some(value) => command.env(name, value),
                None => command.env_remove(name),
            };
        }
        let output = command.output().unwrap();
        let said = common::text(&output);
        let peak = (said.lines())
            .rev()
            .find_map(|line| line.strip_prefix("peak-kib "))
            .and_then(|kib| kib.trim().parse().ok())
            .unwrap_or_else(|| panic!("no peak: {said}"));
        let items = common::read_jsonl(&jsonl);
        let outcome = items[0]["outcome"]["ex"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let error = items[0]["error"]["ex"].as_str().unwrap_or_default();
        eprintln!("{prediction}: {outcome} {error:.80}; peak {peak} KiB");
        (outcome, peak)
    }

    /// At most twice the run's budget (the binary, DuckDB's limit and the run's rows together).
    const BOUND_KIB: u64 = 2 * 262_144;

    /// Control: the numbers gathered by the `list` aggregate stop at DuckDB's limit.
    #[test]
    fn control_an_aggregated_list_stays_within_the_runs_budget() {
        let dir = tempfile::tempdir().unwrap();
        let (outcome, peak) = peak_of(
            dir.path(),
            "SELECT length(list(i)) FROM range(40000000) r(i)",
        );
        assert_eq!(outcome, "pred_error");
        assert!(peak < BOUND_KIB, "peak {peak} KiB");
    }

    /// One list value built by `range(40000000)`.
    #[test]
    fn a_list_built_by_one_call_stays_within_the_runs_budget() {
        let dir = tempfile::tempdir().unwrap();
        let (outcome, peak) = peak_of(dir.path(), "SELECT len(range(40000000))");
        assert!(
            peak < BOUND_KIB,
            "a run with `execution.max_memory: 256 MiB` peaked at {peak} KiB ({outcome})"
        );
    }
}

/// EvalBench (`dataset.kind: evalbench`, SQLite; the read-only engines' neighbour this round
/// aims at): the prediction runs first, then the gold, on the same copy of the item's database
/// (SECURITY.md: "a prediction's COMMIT or leftover table reaches that item's gold and nothing
/// else", `evalbench::hostile_predictions_are_contained`). The lever: that item's gold is the
/// one that matters. A wrong DML prediction that ends with `COMMIT` leaves its rows for the gold,
/// and a gold that is idempotent on them (a `DELETE ... WHERE`, an `UPDATE ... WHERE` whose rows
/// the prediction already moved past) then returns the prediction's `eval_query` rows: the wrong
/// prediction passes. The corpus of `tests/it/evalbench.rs` through `sqlgate eval`.
mod evalbench_commit_before_the_gold {
    use crate::evalbench::project;
    use std::collections::BTreeMap;

    /// Each item's outcome under `evalbench_sound` (the gated profile, each side on its own
    /// copy) with `change` applied to the corpus's predictions; `evalbench`'s (EvalBench's own
    /// order, a reported figure) beside it.
    pub(crate) fn judged(change: &[(&str, Vec<&str>)]) -> BTreeMap<String, (String, String)> {
        let dir = project(change);
        let lines =
            crate::common::eval_items(&dir.path().join("sqlgate.yml"), &["--comment", "never"]);
        let sound = crate::evalbench::outcomes_of(&lines, "evalbench_sound");
        let official = crate::evalbench::outcomes(&lines);
        (sound.into_iter())
            .map(|(id, outcome)| {
                let official = official[&id].clone();
                (id, (outcome, official))
            })
            .collect()
    }

    /// Item 33: gold `DELETE FROM orders WHERE status = 'cancelled'`, compared on `SELECT *
    /// FROM orders`; item 30: gold `UPDATE products SET stock = stock + 10 WHERE stock < 5`,
    /// compared on every product's stock. The wrong predictions delete every order and set
    /// every stock to 20.
    #[test]
    fn a_wrong_dml_prediction_that_commits_does_not_pass() {
        let wrong_33 = "DELETE FROM orders";
        let wrong_30 = "UPDATE products SET stock = 20";
        let control = judged(&[("33", vec![wrong_33]), ("30", vec![wrong_30])]);
        assert_eq!(
            (control["33"].0.as_str(), control["30"].0.as_str()),
            ("mismatch", "mismatch"),
            "control"
        );
        let judged = judged(&[
            ("33", vec![wrong_33, "COMMIT"]),
            ("30", vec![wrong_30, "COMMIT"]),
        ]);
        assert_eq!(
            (judged["33"].0.as_str(), judged["30"].0.as_str()),
            ("mismatch", "mismatch"),
            "a wrong prediction ending in COMMIT passed"
        );
        // EvalBench's own order lets it through, as upstream does: a figure, never the gate's.
        assert_eq!(
            (judged["33"].1.as_str(), judged["30"].1.as_str()),
            ("match", "match")
        );
    }
}

/// EvalBench again (class: a prediction that decides its gold), on `dql` items, which run only
/// the prediction's first statement in a transaction rolled back. Python's legacy transaction
/// mode (reproduced by `engine::evalbench::run`) opens a transaction only before INSERT,
/// UPDATE, DELETE or REPLACE, so a first statement that is DDL is committed at once and survives
/// the rollback. The lever: that statement is `CREATE TEMP VIEW <the gold's table> AS SELECT *
/// FROM main.<table> WHERE 0`: it returns no rows, and the gold, which runs next on the same
/// connection, reads the unqualified name from the `temp` schema first, so it returns no rows
/// either. Any `dql` item whose gold reads a table passes this way.
mod evalbench_temp_view_shadowing_the_gold {
    /// The (`evalbench_sound`, `evalbench`) outcomes of `items` with their predictions replaced
    /// by `statement` (built from the table name).
    fn judged(items: &[(&str, &str)], statement: impl Fn(&str) -> String) -> Vec<(String, String)> {
        let owned: Vec<(&str, String)> = (items.iter())
            .map(|(id, table)| (*id, statement(table)))
            .collect();
        let change: Vec<(&str, Vec<&str>)> = (owned.iter())
            .map(|(id, sql)| (*id, vec![sql.as_str()]))
            .collect();
        let all = super::evalbench_commit_before_the_gold::judged(&change);
        items.iter().map(|(id, _)| all[*id].clone()).collect()
    }

    /// Items 1, 7 and 13 (one per database): golds read `customers`, `students`, `books`.
    #[test]
    fn a_temporary_view_named_as_the_golds_table_does_not_pass() {
        let items = [("1", "customers"), ("7", "students"), ("13", "books")];
        let sound = |judged: Vec<(String, String)>| judged.into_iter().map(|(s, _)| s);
        let control = judged(&items, |table| format!("SELECT * FROM {table} WHERE 0"));
        assert!(sound(control).all(|s| s == "mismatch"), "control");
        let lever = judged(&items, |table| {
            format!("CREATE TEMP VIEW {table} AS SELECT * FROM main.{table} WHERE 0")
        });
        assert!(
            lever.iter().all(|(sound, _)| sound == "mismatch"),
            "items 1, 7, 13 with a temporary view shadowing the gold's table: {lever:?}"
        );
        // EvalBench's own order lets them through, as upstream does: a figure, never the gate's.
        assert!(
            lever.iter().all(|(_, official)| official == "match"),
            "{lever:?}"
        );
    }
}

/// Round 25's EvalBench temporary-view lever through the gate (`sqlgate eval` against a stored
/// baseline, the corpus's own predictions recorded by `baseline update`): the pull request
/// regresses nine `dql` items that match on the base (its model now answers each with a query
/// that returns nothing), which must exit 1, and then answers them with the temporary view
/// instead, which must not exit 0.
pub(crate) mod evalbench_gate_temp_view {
    use crate::common;
    use crate::evalbench::project;

    /// The nine `dql` items that match on the base, with the table each gold reads.
    pub(crate) const ITEMS: [(&str, &str); 9] = [
        ("1", "customers"),
        ("2", "customers"),
        ("5", "customers"),
        ("7", "students"),
        ("8", "students"),
        ("11", "students"),
        ("13", "books"),
        ("14", "books"),
        ("17", "books"),
    ];

    /// `sqlgate eval` of the base's baseline against predictions for ITEMS built by `statement`.
    fn gate(statement: impl Fn(&str) -> String) -> (Option<i32>, String) {
        gate_with(|text| text.to_string(), statement)
    }

    /// The same, the base's config first edited by `edit` (the baseline made under it).
    pub(crate) fn gate_with(
        edit: impl Fn(&str) -> String,
        statement: impl Fn(&str) -> String,
    ) -> (Option<i32>, String) {
        let base = project(&[]);
        let config = base.path().join("sqlgate.yml");
        let text = edit(&std::fs::read_to_string(&config).unwrap());
        std::fs::write(
            &config,
            format!("{text}baseline: {{ path: baseline.json }}\n"),
        )
        .unwrap();
        let update = common::sqlgate(&["baseline", "update", "--config", common::arg(&config)]);
        common::assert_exit(&update, 0);
        let owned: Vec<(&str, String)> = ITEMS.iter().map(|(id, t)| (*id, statement(t))).collect();
        let change: Vec<(&str, Vec<&str>)> = (owned.iter())
            .map(|(id, sql)| (*id, vec![sql.as_str()]))
            .collect();
        let pull_request = project(&change);
        std::fs::copy(
            pull_request.path().join("model.jsonl"),
            base.path().join("model.jsonl"),
        )
        .unwrap();
        let output = common::eval(&config, &["--comment", "never"]);
        (output.status.code(), common::text(&output))
    }

    #[test]
    fn control_the_regression_fails_the_gate() {
        let (code, said) = gate(|table| format!("SELECT * FROM {table} WHERE 0"));
        assert_eq!(code, Some(1), "{said}");
    }

    #[test]
    fn the_regression_with_temporary_views_does_not_pass_the_gate() {
        let (code, said) =
            gate(|table| format!("CREATE TEMP VIEW {table} AS SELECT * FROM main.{table} WHERE 0"));
        assert_eq!(
            code,
            Some(1),
            "the regressing pull request was not caught: {said}"
        );
    }
}

/// EvalBench once more (class: a prediction that decides its gold), without a `COMMIT`: a `dml`
/// prediction whose first statement is `CREATE TEMP TRIGGER` (DDL, so Python's legacy mode
/// commits it at once, before the transaction the rollback undoes). The trigger stays on the
/// connection and fires on the gold's own DELETE, emptying the table the `eval_query` reads, as
/// the prediction's wrong `DELETE FROM orders` did on its side. Refusing `COMMIT` alone would
/// not close round 25's `evalbench_commit_before_the_gold`.
mod evalbench_temp_trigger_on_the_golds_table {
    use super::evalbench_commit_before_the_gold::judged;

    /// Item 33: gold `DELETE FROM orders WHERE status = 'cancelled'`, compared on `SELECT *
    /// FROM orders`; the wrong prediction deletes every order.
    #[test]
    fn a_temporary_trigger_firing_on_the_golds_delete_does_not_pass() {
        let control = judged(&[("33", vec!["DELETE FROM orders"])]);
        assert_eq!(control["33"].0, "mismatch", "control");
        let judged = judged(&[(
            "33",
            vec![
                "CREATE TEMP TRIGGER rt25 AFTER DELETE ON orders BEGIN DELETE FROM orders; END",
                "DELETE FROM orders",
            ],
        )]);
        assert_eq!(
            judged["33"].0, "mismatch",
            "a wrong prediction with a temporary trigger on the gold's table passed"
        );
        // EvalBench's own order lets it through, as upstream does: a figure, never the gate's.
        assert_eq!(judged["33"].1, "match");
    }
}
