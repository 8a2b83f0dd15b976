//! The hostile corpus on real PostgreSQL and MariaDB servers, run as the SUPERUSER with
//! `allow_privileged_role: true`, so that only sqlgate's own guards stand between a prediction
//! and the data: writable CTEs, DELETE / UPDATE / DDL, COPY TO PROGRAM, SELECT ... INTO OUTFILE,
//! LOAD DATA, sleeps and BENCHMARK, generate_series and recursive-CTE bombs, SET ROLE,
//! multi-statement strings. Afterwards no row has changed, no table and no file was created,
//! every sleep and BENCHMARK ended as a timeout (MariaDB's BENCHMARK, stopped by the statement
//! timeout, returns a row, which sqlgate does not take), the whole run stayed within its time, and the process ran
//! under a 1.5 GB address-space limit (`prlimit`), which an unbounded result would break.

use crate::common;

use common::servers::{self, Server};
use common::{read_jsonl, GITHUB_VARIABLES};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// The per-query timeout of the corpus runs.
const TIMEOUT_MS: u64 = 2000;
/// The address-space limit of the sqlgate process.
const ADDRESS_SPACE: u64 = 1_500_000_000;

const POSTGRES_CORPUS: &[&str] = &[
    "WITH d AS (DELETE FROM victims RETURNING v) SELECT count(*) FROM d",
    "DELETE FROM victims",
    "UPDATE victims SET v = 0",
    "DROP TABLE victims",
    "CREATE TABLE pwned (x int)",
    "INSERT INTO victims VALUES (99)",
    "TRUNCATE victims",
    "COPY victims TO PROGRAM 'touch {dir}/pwned_program'",
    "COPY (SELECT 1) TO '{dir}/pwned_copy'",
    "SELECT lo_export(lo_from_bytea(0, 'x'), '{dir}/pwned_lo')",
    "SELECT lo_export(4242, '{dir}/pwned_lo')",
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()",
    "SELECT \"pg_cancel_backend\"(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()",
    "SELECT query_to_xml('SELECT pg_' || 'terminate_backend(' || pid || ')', true, true, '') FROM pg_stat_activity",
    "SELECT pg_read_file('/etc/hostname')",
    "SELECT pg_sleep(60)",
    "SELECT count(*) FROM generate_series(1, 10000000000)",
    "SELECT * FROM generate_series(1, 1000000000)",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
    "SELECT repeat('x', 100000000)",
    "SET ROLE sqlgate_reader",
    "SET SESSION AUTHORIZATION sqlgate_reader",
    "SELECT set_config('default_transaction_read_only', 'off', false)",
    "SELECT 1; DELETE FROM victims",
    "SELECT 1; COPY victims TO PROGRAM 'touch {dir}/pwned_multi'",
    "DO $$ BEGIN DELETE FROM victims; END $$",
    "SELECT nextval('victims_seq')",
    "PREPARE p AS DELETE FROM victims",
    "DELETE FROM victims",
];

const MARIADB_CORPUS: &[&str] = &[
    "DELETE FROM victims",
    "UPDATE victims SET v = 0",
    "DROP TABLE victims",
    "CREATE TABLE pwned (x int)",
    "INSERT INTO victims VALUES (99)",
    "TRUNCATE victims",
    "SELECT * FROM victims INTO OUTFILE '{dir}/pwned_outfile'",
    "SELECT v FROM victims LIMIT 1 INTO DUMPFILE '{dir}/pwned_dumpfile'",
    "LOAD DATA INFILE '/etc/hostname' INTO TABLE victims",
    "LOAD DATA LOCAL INFILE '/etc/hostname' INTO TABLE victims",
    "SELECT SLEEP(60)",
    "SELECT BENCHMARK(10000000000, MD5('x'))",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r",
    "SELECT COUNT(*) FROM information_schema.columns a, information_schema.columns b, information_schema.columns c",
    "SELECT REPEAT('x', 10000000)",
    "SET ROLE sqlgate_reader",
    "SET SESSION TRANSACTION READ WRITE",
    "SELECT 1; DELETE FROM victims",
    "/*!50000 DELETE FROM victims */",
    "SELECT 1 /*!, (SELECT 1 FROM victims) */",
    "SELECT 1 INTO @x",
    "SELECT LOAD_FILE('/etc/hostname')",
    "SELECT GET_LOCK('sqlgate', 60)",
    "WITH d AS (SELECT 1) DELETE FROM victims",
    "SELECT * FROM victims FOR UPDATE",
    "HANDLER victims OPEN",
    "DELETE FROM victims",
];

/// Files the corpus tries to create in the server's own folder.
const PLANTED_FILES: [&str; 6] = [
    "pwned_program",
    "pwned_copy",
    "pwned_lo",
    "pwned_multi",
    "pwned_outfile",
    "pwned_dumpfile",
];

const TABLES: &str = r#"[{"db_id": "hostile", "table_names_original": ["victims"], "table_names": ["victims"],
  "column_names_original": [[-1, "*"], [0, "v"]], "column_names": [[-1, "*"], [0, "v"]],
  "column_types": ["text", "number"], "primary_keys": [], "foreign_keys": []}]"#;

/// Runs the corpus as the superuser; returns the per-item lines and the run's duration.
fn run_corpus(server: &Server, kind: &str, corpus: &[&str]) -> (Vec<serde_json::Value>, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let folder = server.folder().display().to_string();
    let predictions: Vec<String> = corpus
        .iter()
        .map(|sql| sql.replace("{dir}", &folder))
        .collect();
    let gold = "SELECT COUNT(*) FROM victims\thostile\n".repeat(corpus.len());
    std::fs::write(dir.path().join("gold.sql"), gold).unwrap();
    std::fs::write(dir.path().join("preds.txt"), predictions.join("\n") + "\n").unwrap();
    std::fs::write(dir.path().join("tables.json"), TABLES).unwrap();
    let config = dir.path().join("sqlgate.yml");
    std::fs::write(
        &config,
        format!(
            "dataset: {{ gold: gold.sql, tables: tables.json, difficulty: none, \
             engine: {{ kind: {kind}, url_env: HOSTILE_URL, allow_privileged_role: true }} }}\n\
             predictions: [{{ name: attacker, path: preds.txt }}]\n\
             metrics: [ex]\ncompare: {{ profile: bird }}\n\
             execution: {{ timeout_ms: {TIMEOUT_MS}, threads: 2, max_rows: 1000, max_result_bytes: 1048576 }}\n"
        ),
    )
    .unwrap();
    let jsonl = dir.path().join("items.jsonl");
    let mut command = Command::new("prlimit");
    command
        .arg(format!("--as={ADDRESS_SPACE}"))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_sqlgate"))
        .args([
            "eval",
            "--config",
            config.to_str().unwrap(),
            "--jsonl",
            jsonl.to_str().unwrap(),
        ])
        .env("SQLGATE_WORKSPACE", "/")
        .env("HOSTILE_URL", server.admin_url("hostile"));
    for variable in GITHUB_VARIABLES {
        command.env_remove(variable);
    }
    let started = Instant::now();
    let output = command.output().unwrap();
    let elapsed = started.elapsed();
    common::assert_exit(&output, 0);
    (read_jsonl(&jsonl), elapsed)
}

fn check_corpus(server: &Server, kind: &str, corpus: &[&str], create: &str) {
    server.recreate_database("hostile", create);
    let (lines, elapsed) = run_corpus(server, kind, corpus);
    assert_eq!(lines.len(), corpus.len());
    for (line, sql) in lines.iter().zip(corpus) {
        let outcome = line["outcome"]["ex"].as_str().unwrap();
        assert_ne!(outcome, "match", "{sql}: {line}");
        if ["sleep", "SLEEP", "BENCHMARK"]
            .iter()
            .any(|word| sql.contains(word))
        {
            assert_eq!(outcome, "pred_timeout", "{sql}: {line}");
        }
    }
    let rows = server.admin_sql("hostile", "SELECT COUNT(*), SUM(v) FROM victims");
    assert_eq!(
        rows.split_whitespace().collect::<Vec<_>>(),
        ["3", "6"],
        "victims changed"
    );
    let tables = server.admin_sql(
        "hostile",
        "SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'pwned'",
    );
    assert_eq!(tables.trim(), "0", "a table was created");
    for file in PLANTED_FILES {
        assert!(!server.folder().join(file).exists(), "{file} was created");
        assert!(
            !Path::new("/tmp").join(file).exists(),
            "{file} was created in /tmp"
        );
    }
    let budget = Duration::from_millis(TIMEOUT_MS * corpus.len() as u64 / 2 + 20_000);
    assert!(
        elapsed < budget,
        "the corpus took {elapsed:?} (budget {budget:?})"
    );
}

#[test]
fn postgres_superuser_changes_nothing_and_every_query_ends() {
    check_corpus(
        servers::postgres(),
        "postgresql",
        POSTGRES_CORPUS,
        "CREATE TABLE victims (v integer); INSERT INTO victims VALUES (1), (2), (3); CREATE SEQUENCE victims_seq; SELECT lo_from_bytea(4242, 'x');",
    );
}

#[test]
fn mariadb_superuser_changes_nothing_and_every_query_ends() {
    check_corpus(
        servers::mariadb(),
        "mysql",
        MARIADB_CORPUS,
        "CREATE TABLE victims (v integer); INSERT INTO victims VALUES (1), (2), (3);",
    );
}
