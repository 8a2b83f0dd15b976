//! Attacks on execution against real PostgreSQL 15 and MariaDB 10.11 servers (issue 34, the
//! execution half): a prediction whose backend ignores cancel and statement timeout (PostgreSQL
//! `strpos`, MariaDB `LOCATE` on long strings) or idles between `FETCH`es ends at sqlgate's own
//! deadline and counts as a timeout; sessions ended or cancelled from outside are retried on a
//! fresh session and change no verdict, and when it never stops the run fails closed (exit 2,
//! "could not evaluate", naming items); PostgreSQL rows are charged as they arrive, so the
//! process stays within `max_memory` + 64 MiB; a session's state does not outlive its item.
//!
//! The runs connect as the read-only role (`allow_privileged_role: true` only because the role
//! check is not what these tests are about: the role reads every table).

use crate::common;

use common::servers::{self, Kind, Server};
use common::{read_jsonl, GITHUB_VARIABLES};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The per-query timeout of the deadline runs.
const TIMEOUT_MS: u64 = 1000;

/// What one sqlgate run gave: its output, the per-item lines, its wall time and peak RSS (KiB).
struct Run {
    output: Output,
    lines: Vec<serde_json::Value>,
    elapsed: Duration,
    peak_kib: u64,
}

/// A one-table database `name` (t: 1, 2, 3) on `server`, one per test (they run in parallel).
fn create_database(server: &Server, name: &str) {
    server.recreate_database(
        name,
        "CREATE TABLE t (v integer); INSERT INTO t VALUES (1), (2), (3);",
    );
}

const TABLES: &str = r#"[{"db_id": "attacks", "table_names_original": ["t"], "table_names": ["t"],
  "column_names_original": [[-1, "*"], [0, "v"]], "column_names": [[-1, "*"], [0, "v"]],
  "column_types": ["text", "number"], "primary_keys": [], "foreign_keys": []}]"#;

/// Runs `sqlgate eval` on `gold` with `systems` (name, one prediction per gold line) under the
/// `execution` settings, as the read-only role on database `database` (db_id `attacks`),
/// measuring its wall time and peak RSS.
fn run(
    server: &Server,
    database: &str,
    gold: &[&str],
    systems: &[(&str, Vec<&str>)],
    execution: &str,
) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let gold_text: String = gold.iter().map(|sql| format!("{sql}\tattacks\n")).collect();
    std::fs::write(dir.path().join("gold.sql"), gold_text).unwrap();
    std::fs::write(dir.path().join("tables.json"), TABLES).unwrap();
    let mut predictions = String::new();
    for (name, sqls) in systems {
        assert_eq!(sqls.len(), gold.len());
        std::fs::write(
            dir.path().join(format!("{name}.txt")),
            sqls.join("\n") + "\n",
        )
        .unwrap();
        predictions.push_str(&format!("{{ name: {name}, path: {name}.txt }}, "));
    }
    let kind = match server.kind {
        Kind::Postgres => "postgresql",
        Kind::Mariadb => "mysql",
    };
    let config = dir.path().join("sqlgate.yml");
    std::fs::write(
        &config,
        format!(
            "dataset: {{ gold: gold.sql, tables: tables.json, difficulty: none, \
             engine: {{ kind: {kind}, url_env: ATTACK_URL, allow_privileged_role: true }} }}\n\
             predictions: [{predictions}]\n\
             metrics: [ex]\ncompare: {{ profile: bird }}\n\
             execution: {{ {execution} }}\n"
        ),
    )
    .unwrap();
    let jsonl = dir.path().join("items.jsonl");
    let peak_file = dir.path().join("peak");
    let mut command = Command::new("/usr/bin/time");
    command
        .args(["-f", "%M", "-o"])
        .arg(&peak_file)
        .arg(env!("CARGO_BIN_EXE_sqlgate"))
        .args(["eval", "--config"])
        .arg(&config)
        .arg("--jsonl")
        .arg(&jsonl)
        .env("SQLGATE_WORKSPACE", "/")
        .env("ATTACK_URL", server.reader_url(database));
    for variable in GITHUB_VARIABLES {
        command.env_remove(variable);
    }
    let started = Instant::now();
    let output = command.output().unwrap();
    let elapsed = started.elapsed();
    let peak_kib = std::fs::read_to_string(&peak_file)
        .unwrap()
        .lines()
        .last()
        .and_then(|line| line.trim().parse().ok())
        .expect("GNU time printed the peak RSS");
    let lines = match jsonl.exists() {
        true => read_jsonl(&jsonl),
        false => Vec::new(),
    };
    Run {
        output,
        lines,
        elapsed,
        peak_kib,
    }
}

/// The `ex` outcome of `system` on item `index`.
fn outcome<'a>(run: &'a Run, system: &str, index: usize) -> &'a str {
    run.lines
        .iter()
        .find(|line| line["system"] == system && line["index"] == index)
        .and_then(|line| line["outcome"]["ex"].as_str())
        .unwrap_or_else(|| panic!("no line for {system} item {index}: {:?}", run.lines))
}

fn stderr(run: &Run) -> String {
    String::from_utf8_lossy(&run.output.stderr).into_owned()
}

fn assert_exit(run: &Run, code: i32) {
    assert_eq!(run.output.status.code(), Some(code), "{}", stderr(run));
}

/// Asserts a clean exit, every honest item right and the attacker's three outcomes `attacker`.
fn assert_outcomes(run: &Run, attacker: [&str; 3]) {
    assert_exit(run, 0);
    for index in 0..3 {
        assert_eq!(outcome(run, "honest", index), "match", "{}", stderr(run));
    }
    for (index, expected) in attacker.into_iter().enumerate() {
        assert_eq!(outcome(run, "attacker", index), expected, "{}", stderr(run));
    }
}

/// The deadline scenario on either server: `stuck` ignores cancel and the server's statement
/// timeout, `idle` (when given) keeps every `FETCH` under the timeout; both end as timeouts
/// within `timeout_ms` + 1 s each, and the honest system's verdicts are untouched. The bound is
/// set against the same run with the attacker answering honestly (start-up, digests and quick
/// queries cost what they cost on a loaded machine), so only the two stuck queries are timed.
fn deadline_holds(server: &Server, stuck: &str, idle: Option<&str>) {
    create_database(server, "deadline");
    let gold = [
        "SELECT COUNT(*) FROM t",
        "SELECT COUNT(*) FROM t",
        "SELECT SUM(v) FROM t",
    ];
    let attacker = vec![stuck, idle.unwrap_or(stuck), "SELECT SUM(v) FROM t"];
    let execution = format!(
        "timeout_ms: {TIMEOUT_MS}, threads: 1, max_rows: 1000000, max_result_bytes: 67108864"
    );
    let honest = ("honest", gold.to_vec());
    let control = run(
        server,
        "deadline",
        &gold,
        &[honest.clone(), ("attacker", gold.to_vec())],
        &execution,
    );
    assert_exit(&control, 0);
    let run = run(
        server,
        "deadline",
        &gold,
        &[honest, ("attacker", attacker)],
        &execution,
    );
    assert_outcomes(&run, ["pred_timeout", "pred_timeout", "match"]);
    // Two queries past their deadline, run one after the other: each may take timeout + 1 s,
    // beyond what the honest run took, with 3 s of slack for a loaded box.
    let bound = control.elapsed + Duration::from_millis(2 * (TIMEOUT_MS + 1000) + 3000);
    assert!(
        run.elapsed < bound,
        "the run took {:?} (bound {bound:?}, the honest run {:?}): {}",
        run.elapsed,
        control.elapsed,
        stderr(&run)
    );
}

#[test]
fn postgres_deadline_holds_when_the_backend_ignores_cancel_or_idles_between_fetches() {
    deadline_holds(
        servers::postgres(),
        // Boyer-Moore-Horspool's worst case: about 6 s of a backend that checks no interrupt.
        "SELECT strpos(repeat('a', 1000000), 'b' || repeat('a', 5000))",
        // Each FETCH of 1,000 rows stays under the statement timeout; the whole takes minutes.
        Some("SELECT g FROM generate_series(1, 200000) g WHERE pg_sleep(0.0005) IS NOT NULL"),
    );
}

#[test]
fn mariadb_deadline_holds_when_the_query_ignores_kill_query() {
    deadline_holds(
        servers::mariadb(),
        "SELECT LOCATE(CONCAT(REPEAT('a', 5000), 'b'), REPEAT('a', 2000000))",
        None,
    );
}

/// The sessions of sqlgate's runs on `server` in database `faults` (the other tests, running
/// in parallel, use other databases; on MariaDB the reader of `faults` is a user of its own,
/// `Server::grant_reader`): their backend pids / connection ids.
fn sqlgate_sessions(server: &Server, active_only: bool) -> Vec<String> {
    let sql = match (server.kind, active_only) {
        (Kind::Postgres, true) => "SELECT pid FROM pg_stat_activity WHERE application_name = 'sqlgate' AND datname = 'faults' AND state = 'active'",
        (Kind::Postgres, false) => "SELECT pid FROM pg_stat_activity WHERE application_name = 'sqlgate' AND datname = 'faults'",
        (Kind::Mariadb, true) => "SELECT id FROM information_schema.processlist WHERE user = 'sqlgate_reader_faults' AND db = 'faults' AND command = 'Query' AND info LIKE '%SLEEP%'",
        (Kind::Mariadb, false) => "SELECT id FROM information_schema.processlist WHERE user = 'sqlgate_reader_faults' AND db = 'faults'",
    };
    let database = match server.kind {
        Kind::Postgres => "postgres",
        Kind::Mariadb => "mysql",
    };
    server
        .admin_sql(database, sql)
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// Ends (or cancels the queries of) every session of sqlgate's on `server` from outside.
fn strike(server: &Server, cancel: bool) {
    let sessions = sqlgate_sessions(server, false);
    if sessions.is_empty() {
        return;
    }
    let statements: String = sessions
        .iter()
        .map(|id| match (server.kind, cancel) {
            (Kind::Postgres, false) => format!("SELECT pg_terminate_backend({id});"),
            (Kind::Postgres, true) => format!("SELECT pg_cancel_backend({id});"),
            (Kind::Mariadb, false) => format!("KILL CONNECTION {id};"),
            (Kind::Mariadb, true) => format!("KILL QUERY {id};"),
        })
        .collect();
    let database = match server.kind {
        Kind::Postgres => "postgres",
        Kind::Mariadb => "mysql",
    };
    // A session may end between the listing and the kill: the error is expected then.
    let _ = server.tcp_sql(
        servers::ADMIN,
        &server.admin_password,
        database,
        &statements.replace(";", ";\n"),
    );
}

/// `sqlgate eval` of the honest system (its predictions the gold) on database `faults`.
fn honest_faults_run(server: &Server, gold: &[&str]) -> Run {
    let honest = [("honest", gold.to_vec())];
    run(
        server,
        "faults",
        gold,
        &honest,
        "timeout_ms: 10000, threads: 2",
    )
}

/// Runs 12 slow honest items while a striker ends or cancels sqlgate's sessions from outside:
/// once (`persistent: false`: every item is retried and matches, exit 0) or every 30 ms
/// (`persistent: true`: the run fails closed with exit 2, naming items, and no verdict).
fn outside_faults(server: &Server, slow: &str, cancel: bool, persistent: bool) -> Run {
    create_database(server, "faults");
    let gold = vec![slow; 12];
    let stop = Arc::new(AtomicBool::new(false));
    let striker = {
        let stop = Arc::clone(&stop);
        let server: &'static Server = match server.kind {
            Kind::Postgres => servers::postgres(),
            Kind::Mariadb => servers::mariadb(),
        };
        std::thread::spawn(move || {
            let started = Instant::now();
            while sqlgate_sessions(server, true).is_empty() {
                if stop.load(Ordering::SeqCst) || started.elapsed() > Duration::from_secs(60) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            loop {
                strike(server, cancel);
                if !persistent || stop.load(Ordering::SeqCst) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(30));
            }
        })
    };
    let run = honest_faults_run(server, &gold);
    stop.store(true, Ordering::SeqCst);
    striker.join().unwrap();
    run
}

/// A striker that cancels or ends sqlgate's sessions, once or persistently, never makes a
/// verdict: a strike that landed before the run claimed the server (on the start-up check's
/// session) is retried and every honest item is right (exit 0); a striker connected once the
/// data are held fails the run closed (exit 2, naming the other session) with no verdict
/// written (red team round 9: the run needs the server to itself), which a persistent one
/// always is.
fn assert_outside_faults_are_never_a_verdict(server: &'static Server, slow: &str) {
    for (cancel, persistent) in [(false, false), (true, false), (false, true), (true, true)] {
        let run = outside_faults(server, slow, cancel, persistent);
        let message = stderr(&run);
        if run.output.status.code() == Some(0) && !persistent {
            for index in 0..12 {
                assert_eq!(outcome(&run, "honest", index), "match", "{message}");
            }
            continue;
        }
        assert_exit(&run, 2);
        common::assert_contains(
            &message,
            &["another session connected to the server during the run"],
        );
        assert!(
            run.lines.is_empty(),
            "a verdict was written: {:?}",
            run.lines
        );
    }
}

/// A strike on the start-up check's session, the first sqlgate opens, is a fault like a strike
/// on an item's: the check runs again on a new session and every honest item matches (exit 0).
/// The striker is a loop on the server (`strike_first`) that polls every millisecond and ends
/// the first session of sqlgate's it sees, then stops, so it lands on the start-up check and
/// is gone before the run claims the server (it fails when it saw none).
fn assert_start_up_strike_is_retried(
    server: &'static Server,
    slow: &str,
    strike_first: &'static str,
) {
    create_database(server, "faults");
    let gold = vec![slow; 4];
    let database = match server.kind {
        Kind::Postgres => "postgres",
        Kind::Mariadb => "mysql",
    };
    let striker = std::thread::spawn(move || {
        server.admin_sql(database, strike_first);
    });
    std::thread::sleep(Duration::from_millis(500));
    let run = honest_faults_run(server, &gold);
    striker
        .join()
        .expect("the striker ended a session of sqlgate's");
    assert_exit(&run, 0);
    for index in 0..4 {
        assert_eq!(outcome(&run, "honest", index), "match", "{}", stderr(&run));
    }
}

#[test]
fn postgres_a_strike_on_the_start_up_check_is_retried() {
    assert_start_up_strike_is_retried(
        servers::postgres(),
        PG_SLOW,
        "DO $$ BEGIN FOR i IN 1..30000 LOOP PERFORM pg_stat_clear_snapshot(); \
         PERFORM pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE application_name = 'sqlgate' AND datname = 'faults'; \
         IF FOUND THEN RETURN; END IF; PERFORM pg_sleep(0.001); END LOOP; \
         RAISE EXCEPTION 'no session of sqlgate''s seen'; END $$",
    );
}

#[test]
fn mariadb_a_kill_of_the_start_up_check_is_retried() {
    assert_start_up_strike_is_retried(
        servers::mariadb(),
        MARIADB_SLOW,
        "DELIMITER //\nBEGIN NOT ATOMIC DECLARE i INT DEFAULT 0; DECLARE victim BIGINT; \
         WHILE i < 30000 AND victim IS NULL DO SELECT MIN(id) INTO victim \
         FROM information_schema.processlist WHERE user = 'sqlgate_reader_faults'; \
         IF victim IS NULL THEN DO SLEEP(0.001); ELSE KILL CONNECTION victim; END IF; \
         SET i = i + 1; END WHILE; IF victim IS NULL THEN \
         SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'no session of sqlgate''s seen'; END IF; END //\n",
    );
}

const PG_SLOW: &str = "SELECT COUNT(*) FROM t, pg_sleep(0.3)";
const MARIADB_SLOW: &str = "SELECT COUNT(*) FROM t, (SELECT SLEEP(0.3)) AS s";

#[test]
fn postgres_sessions_ended_from_outside_are_never_a_verdict() {
    assert_outside_faults_are_never_a_verdict(servers::postgres(), PG_SLOW);
}

#[test]
fn mariadb_sessions_killed_from_outside_are_never_a_verdict() {
    assert_outside_faults_are_never_a_verdict(servers::mariadb(), MARIADB_SLOW);
}

/// `max_memory` 64 MiB, `max_result_bytes` 1 MiB: results of 4 MB rows (which a batch of 1,000
/// rows held whole would make 1.2 GB), and of small rows followed by huge ones, stop as too
/// large and the process's peak RSS stays under `max_memory` + 64 MiB.
fn memory_holds(server: &Server, huge: &str, mixed: &str) {
    create_database(server, "memory");
    let gold = [
        "SELECT COUNT(*) FROM t",
        "SELECT COUNT(*) FROM t",
        "SELECT SUM(v) FROM t",
    ];
    let attacker = vec![huge, mixed, "SELECT SUM(v) FROM t"];
    let run = run(
        server,
        "memory",
        &gold,
        &[("honest", gold.to_vec()), ("attacker", attacker)],
        "timeout_ms: 20000, threads: 2, max_rows: 100000, max_result_bytes: 1048576, max_memory: 67108864",
    );
    assert_outcomes(&run, ["pred_error", "pred_error", "match"]);
    let bound_kib = (64 + 64) * 1024;
    assert!(
        run.peak_kib < bound_kib,
        "peak RSS {} KiB (bound {bound_kib} KiB)",
        run.peak_kib
    );
}

#[test]
fn postgres_rows_are_charged_as_they_arrive() {
    memory_holds(
        servers::postgres(),
        "SELECT repeat('x', 4000000) FROM generate_series(1, 300)",
        "SELECT CASE WHEN g <= 900 THEN 'x' ELSE repeat('x', 4000000) END FROM generate_series(1, 1000) g",
    );
}

#[test]
fn mariadb_rows_are_charged_as_they_arrive() {
    memory_holds(
        servers::mariadb(),
        "SELECT REPEAT('x', 4000000) FROM seq_1_to_300",
        "SELECT CASE WHEN seq <= 900 THEN 'x' ELSE REPEAT('x', 4000000) END FROM seq_1_to_1000",
    );
}

/// A MariaDB user variable set by one item is gone for the next (the session is reset):
/// one worker, so both items run on the same pooled connection.
#[test]
fn mariadb_session_state_does_not_outlive_its_item() {
    let server = servers::mariadb();
    create_database(server, "reset");
    let gold = ["SELECT 42", "SELECT NULL"];
    let attacker = vec!["SELECT @leak := 42", "SELECT @leak"];
    let run = run(
        server,
        "reset",
        &gold,
        &[("attacker", attacker)],
        "timeout_ms: 5000, threads: 1",
    );
    assert_exit(&run, 0);
    assert_eq!(outcome(&run, "attacker", 0), "match");
    assert_eq!(outcome(&run, "attacker", 1), "match", "{}", stderr(&run));
}
