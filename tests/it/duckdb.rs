//! The DuckDB engine (`dataset.engine.kind: duckdb`) on `.duckdb` files that `sqlgate load`
//! writes from SQLite files: values come back as DuckDB's Python client builds them, the loader
//! copies every row, and hostile predictions are contained: no file read or written (`read_csv`,
//! `read_parquet`, `glob`, `COPY`, `EXPORT`), no extension installed or loaded, no `ATTACH`, no
//! setting changed (`SET memory_limit`, `SET threads`), no `PRAGMA` or `CALL`, huge results and
//! runaway queries stopped at the caps and the deadline, and the database file unchanged.

use crate::common;

use common::{arg, assert_exit, sqlgate, text};
use rusqlite::Connection;
use sqlgate::engine::duckdb::DuckdbEngine;
use sqlgate::engine::exec::{ExecError, Executor, Limits};
use sqlgate::engine::pyvalue::PyValue;
use sqlgate::engine::value::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The wall-clock limit of the hostile queries.
const TIMEOUT: Duration = Duration::from_millis(1000);
/// What a query may take beyond its timeout (the watchdog's poll, a loaded machine).
const MARGIN: Duration = Duration::from_millis(1500);

/// A SQLite `shop` database in the Spider layout below `folder`, and a config beside it whose
/// `dataset.databases` (`ddb/`) receives the DuckDB copy; returns the config's path.
fn shop(folder: &Path) -> PathBuf {
    std::fs::create_dir_all(folder.join("sqlite/shop")).unwrap();
    std::fs::create_dir_all(folder.join("ddb")).unwrap();
    let conn = Connection::open(folder.join("sqlite/shop/shop.sqlite")).unwrap();
    conn.execute_batch(
        "CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT, price REAL, added DATE, note);
         INSERT INTO item VALUES (1, 'pen', 1.5, '2020-01-02', NULL), (2, 'ink', 2.25, '2021-12-31', x'00ff'),
                                 (3, 'pad', NULL, NULL, 'x');",
    )
    .unwrap();
    std::fs::write(
        folder.join("gold.sql"),
        "SELECT name FROM item WHERE id = 1\tshop\n",
    )
    .unwrap();
    common::config::write(
        folder.join("sqlgate.yml"),
        "dataset: { kind: spider, gold: gold.sql, databases: ddb, difficulty: none, engine: { kind: duckdb } }\n\
         predictions: [{ name: m, path: pred.txt }]\nmetrics: [ex]\n",
    )
}

/// `sqlgate load` of the `shop` fixture into DuckDB; returns the `.duckdb` file.
pub(crate) fn loaded_shop(folder: &Path) -> PathBuf {
    crate::common::duckdb_worker();
    let config = shop(folder);
    let output = sqlgate(&[
        "load",
        "--config",
        arg(&config),
        "--from",
        arg(&folder.join("sqlite")),
    ]);
    assert_exit(&output, 0);
    folder.join("ddb/shop/shop.duckdb")
}

fn executor(limits: Limits) -> Executor {
    crate::common::duckdb_worker();
    Executor::on(Arc::new(DuckdbEngine::new()), limits)
}

fn limits() -> Limits {
    Limits {
        timeout: TIMEOUT,
        max_rows: 10_000,
        max_bytes: 64 << 20,
    }
}

#[test]
fn load_copies_sqlite_into_a_duckdb_file_with_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let config = shop(dir.path());
    let output = sqlgate(&[
        "load",
        "--config",
        arg(&config),
        "--from",
        arg(&dir.path().join("sqlite")),
    ]);
    let all = text(&output);
    assert_exit(&output, 0);
    common::assert_contains(
        &all,
        &[
            "shop -> database `shop`: 1 tables, 3 rows",
            "item: 3 rows (id BIGINT, name VARCHAR, price DOUBLE, added DATE, note BLOB)",
            "keys: PRIMARY KEY (id)",
        ],
    );
    let file = dir.path().join("ddb/shop/shop.duckdb");
    let rows = executor(limits())
        .run(&file, "SELECT * FROM item ORDER BY id")
        .unwrap();
    let date = |y, m, d| {
        Value::Py(Box::new(PyValue::Date(
            sqlgate::engine::pyvalue::Date::new(y, m, d).unwrap(),
        )))
    };
    let expected = vec![
        vec![
            Value::Int(1),
            Value::Text("pen".into()),
            Value::Real(1.5),
            date(2020, 1, 2),
            Value::Null,
        ],
        vec![
            Value::Int(2),
            Value::Text("ink".into()),
            Value::Real(2.25),
            date(2021, 12, 31),
            Value::Blob(vec![0, 255]),
        ],
        vec![
            Value::Int(3),
            Value::Text("pad".into()),
            Value::Null,
            Value::Null,
            Value::Blob(b"x".to_vec()),
        ],
    ];
    assert_eq!(format!("{rows:?}"), format!("{expected:?}"));
    // A second load replaces the first copy.
    let again = sqlgate(&[
        "load",
        "--config",
        arg(&config),
        "--from",
        arg(&dir.path().join("sqlite")),
    ]);
    assert_exit(&again, 0);
    let count = executor(limits())
        .run(&file, "SELECT count(*) FROM item")
        .unwrap();
    assert_eq!(format!("{count:?}"), "[[Int(3)]]");
}

#[test]
fn values_are_what_the_python_client_builds() {
    let dir = tempfile::tempdir().unwrap();
    let file = loaded_shop(dir.path());
    let sql = "SELECT 1.50::DECIMAL(10,2), 0.1::FLOAT, true, DATE '2020-02-29', TIMESTAMP '2020-01-02 03:04:05.5', \
               TIME '12:00:01', INTERVAL 1 MONTH, 170141183460469231731687303715884105727::HUGEINT, 'é'::VARCHAR, NULL";
    let rows = executor(limits()).run(&file, sql).unwrap();
    let shown: Vec<String> = rows[0]
        .iter()
        .map(|value| match value {
            Value::Py(py) => format!("{}:{}", py.python_type_name(), py.python_str()),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        shown,
        [
            "<class 'decimal.Decimal'>:1.50",
            "Real(0.10000000149011612)",
            "<class 'bool'>:True",
            "<class 'datetime.date'>:2020-02-29",
            "<class 'datetime.datetime'>:2020-01-02 03:04:05.500000",
            "<class 'datetime.time'>:12:00:01",
            "<class 'datetime.timedelta'>:30 days, 0:00:00",
            "<class 'decimal.Decimal'>:170141183460469231731687303715884105727",
            "Text(\"é\")",
            "Null",
        ]
    );
    let nested = executor(limits()).run(&file, "SELECT [1, 2]").unwrap_err();
    assert!(
        matches!(&nested, ExecError::Sql(m) if m.contains("LIST") && m.contains("cannot hash")),
        "{nested:?}"
    );
}

/// What DuckDB's Python client 1.5.6 `fetchall()`s (printed by it):
/// `[(datetime.time(12, 0, tzinfo=datetime.timezone(datetime.timedelta(seconds=7200))),
/// datetime.time(12, 0, 0, 500000, tzinfo=...(days=-1, seconds=73800))), b'ab', ...)]`; a
/// list or dict is unhashable (the official `set()` raises, the item scores 0) unless NULL or
/// the result is empty.
#[test]
fn timetz_blob_and_nested_values_are_what_the_python_client_builds() {
    let dir = tempfile::tempdir().unwrap();
    let file = loaded_shop(dir.path());
    let sql = "SELECT TIMETZ '12:00:00+02', TIMETZ '12:00:00.5-03:30', '\\x00ab'::BLOB, NULL::INTEGER[], NULL::STRUCT(a INTEGER), NULL::MAP(VARCHAR, INTEGER)";
    let rows = executor(limits()).run(&file, sql).unwrap();
    let shown: Vec<String> = rows[0]
        .iter()
        .map(|value| match value {
            Value::Py(py) => format!("{}:{}", py.python_type_name(), py.python_str()),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        shown,
        [
            "<class 'datetime.time'>:12:00:00+02:00",
            "<class 'datetime.time'>:12:00:00.500000-03:30",
            "Blob([0, 97, 98])",
            "Null",
            "Null",
            "Null",
        ]
    );
    for sql in [
        "SELECT [1]",
        "SELECT [1, 2]::INTEGER[2]",
        "SELECT {'a': 1}",
        "SELECT MAP {'a': 1}",
    ] {
        let error = executor(limits()).run(&file, sql).unwrap_err();
        assert!(
            matches!(&error, ExecError::Sql(m) if m.contains("cannot hash")),
            "{sql}: {error:?}"
        );
    }
    let empty = executor(limits())
        .run(&file, "SELECT [1] WHERE false")
        .unwrap();
    assert!(empty.is_empty());
}

/// Each hostile query and what it must end in; none may touch a file.
fn hostile_queries(dir: &Path) -> Vec<(String, &'static str)> {
    let outside = dir.join("outside.csv");
    std::fs::write(&outside, "secret\n42\n").unwrap();
    let outside = outside.display().to_string();
    let written = dir.join("written").display().to_string();
    vec![
        (format!("SELECT * FROM read_csv('{outside}')"), "denied"),
        (
            format!("SELECT * FROM read_csv_auto('{outside}')"),
            "denied",
        ),
        (format!("SELECT * FROM '{outside}'"), "denied"),
        (format!("SELECT * FROM read_text('{outside}')"), "denied"),
        (format!("SELECT * FROM read_blob('{outside}')"), "denied"),
        (format!("SELECT * FROM read_parquet('{outside}')"), "denied"),
        (format!("SELECT * FROM read_json('{outside}')"), "denied"),
        (
            format!("SELECT * FROM glob('{}/*')", dir.display()),
            "denied",
        ),
        (
            "SELECT * FROM read_csv('https://example.com/x.csv')".into(),
            "denied",
        ),
        (format!("COPY item TO '{written}.csv'"), "denied"),
        (
            format!("COPY (SELECT 1) TO '{written}.parquet' (FORMAT parquet)"),
            "denied",
        ),
        (format!("EXPORT DATABASE '{written}'"), "denied"),
        ("INSTALL httpfs".into(), "denied"),
        ("LOAD httpfs".into(), "denied"),
        ("SELECT * FROM duckdb_extensions()".into(), "denied"),
        (format!("ATTACH '{written}.duckdb' AS other"), "denied"),
        ("ATTACH ':memory:' AS scratch".into(), "denied"),
        ("DETACH shop".into(), "denied"),
        ("USE system".into(), "denied"),
        ("SET memory_limit = '100GB'".into(), "denied"),
        ("SET threads = 64".into(), "denied"),
        ("RESET memory_limit".into(), "denied"),
        ("SET GLOBAL enable_external_access = true".into(), "denied"),
        ("PRAGMA database_list".into(), "denied"),
        ("/* x */ pragma table_info('item')".into(), "denied"),
        ("CALL duckdb_settings()".into(), "denied"),
        ("PRAGMA enable_profiling".into(), "denied"),
        ("CALL pragma_version()".into(), "denied"),
        ("CREATE TEMP TABLE t AS SELECT 1".into(), "denied"),
        ("CREATE MACRO m(x) AS x".into(), "denied"),
        (
            "INSERT INTO item VALUES (9, 'x', 1, NULL, NULL)".into(),
            "denied",
        ),
        ("CHECKPOINT".into(), "denied"),
        (
            "SELECT * FROM query('COPY item TO ''/tmp/x.csv''')".into(),
            "error",
        ),
        ("SELECT 1; SELECT 2".into(), "error"),
    ]
}

#[test]
fn hostile_predictions_reach_no_file_extension_or_setting() {
    let dir = tempfile::tempdir().unwrap();
    let file = loaded_shop(dir.path());
    let before = std::fs::read(&file).unwrap();
    let listing = |dir: &Path| {
        let mut names: Vec<String> = walk(dir)
            .into_iter()
            .map(|p| p.display().to_string())
            .collect();
        names.sort();
        names
    };
    let queries = hostile_queries(dir.path());
    let files_before = listing(dir.path());
    let executor = executor(limits());
    for (sql, expected) in &queries {
        let result = executor.run(&file, sql);
        match (*expected, &result) {
            ("denied", Err(ExecError::Denied(_))) => {}
            ("error", Err(ExecError::Sql(_) | ExecError::Denied(_))) => {}
            _ => panic!("{sql}: expected {expected}, got {result:?}"),
        }
    }
    assert_eq!(
        listing(dir.path()),
        files_before,
        "a hostile query created or removed a file"
    );
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "the database file changed"
    );
    let settings = executor
        .run(&file, "SELECT current_setting('threads'), current_setting('enable_external_access'), current_setting('lock_configuration'), current_setting('temp_directory')")
        .unwrap();
    assert_eq!(
        format!("{settings:?}"),
        r#"[[Int(1), Py(Bool(false)), Py(Bool(true)), Text("")]]"#
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(walk(&path));
        }
        found.push(path);
    }
    found
}

#[test]
fn huge_results_stop_at_the_caps_and_duckdbs_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    let file = loaded_shop(dir.path());
    let executor = executor(limits());
    let rows = executor
        .run(&file, "SELECT * FROM range(10000000)")
        .unwrap_err();
    assert_eq!(rows, ExecError::TooLarge("more than 10000 rows".into()));
    let wide = Executor::on(
        Arc::new(DuckdbEngine::new()),
        Limits {
            max_bytes: 1 << 20,
            ..limits()
        },
    );
    let bytes = wide
        .run(&file, "SELECT repeat('x', 100000) FROM range(100)")
        .unwrap_err();
    assert_eq!(bytes, ExecError::TooLarge("more than 1048576 bytes".into()));
    // A generous deadline, so that DuckDB's memory limit, not the clock, stops the query even on
    // a loaded machine.
    let patient = Executor::on(
        Arc::new(DuckdbEngine::new()),
        Limits {
            timeout: Duration::from_secs(60),
            ..limits()
        },
    );
    let memory = patient
        .run(&file, "SELECT length(list(i)) FROM range(400000000) r(i)")
        .unwrap_err();
    assert!(
        matches!(&memory, ExecError::TooLarge(m) if m.contains("memory limit")),
        "{memory:?}"
    );
}

#[test]
fn runaway_queries_end_at_the_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let file = loaded_shop(dir.path());
    let executor = executor(limits());
    for sql in [
        "SELECT count(*) FROM range(1000000000000)",
        "SELECT count(*) FROM range(100000) a, range(100000) b WHERE a.range + b.range = -1",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
        "SELECT max(md5(range::VARCHAR)) FROM range(10000000000)",
    ] {
        let started = Instant::now();
        let result = executor.run(&file, sql);
        let took = started.elapsed();
        assert!(
            matches!(
                result,
                Err(ExecError::Timeout(1000)) | Err(ExecError::TooLarge(_))
            ),
            "{sql}: {result:?}"
        );
        assert!(took < TIMEOUT + MARGIN, "{sql}: took {took:?}");
    }
    let after = executor.run(&file, "SELECT count(*) FROM item").unwrap();
    assert_eq!(
        format!("{after:?}"),
        "[[Int(3)]]",
        "the engine still answers"
    );
}

#[test]
fn eval_scores_ex_on_duckdb_and_a_hostile_prediction_is_only_wrong() {
    let dir = tempfile::tempdir().unwrap();
    loaded_shop(dir.path());
    let config = dir.path().join("sqlgate.yml");
    std::fs::write(
        dir.path().join("gold.sql"),
        "SELECT name FROM item WHERE id = 1\tshop\nSELECT count(*) FROM item\tshop\n",
    )
    .unwrap();
    let secret = dir.path().join("secret.csv");
    std::fs::write(&secret, "pen\n").unwrap();
    std::fs::write(
        dir.path().join("pred.txt"),
        format!(
            "SELECT * FROM read_csv('{}', header = false)\nSELECT count(*) FROM item\n",
            secret.display()
        ),
    )
    .unwrap();
    let items = common::eval_items(&config, &[]);
    let outcomes: Vec<(String, String)> = items
        .iter()
        .map(|item| {
            let error = item["error"]["ex"].as_str().unwrap_or_default();
            (
                item["outcome"]["ex"].as_str().unwrap().to_string(),
                error.to_string(),
            )
        })
        .collect();
    assert_eq!(outcomes[0].0, "pred_error", "{outcomes:?}");
    assert!(outcomes[0].1.contains("Permission Error"), "{outcomes:?}");
    assert_eq!(outcomes[1], ("match".to_string(), String::new()));
}

/// DuckDB replays a `FILE.wal` beside a database even when it opens the file read-only, and no
/// digest covers it: loading the dataset refuses it (exit 2, naming the database), as SQLite's
/// `-wal`, and the engine does not open such a file.
#[test]
fn a_write_ahead_log_beside_a_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let database = loaded_shop(dir.path());
    std::fs::write(dir.path().join("pred.txt"), "SELECT name FROM item\n").unwrap();
    std::fs::write(dir.path().join("ddb/shop/shop.duckdb.wal"), b"").unwrap();
    let output = common::eval(&dir.path().join("sqlgate.yml"), &[]);
    let said = common::exited(&output, 2);
    common::assert_contains(&said, &["database `shop`", "has a .wal file beside it"]);
    let refused = executor(limits()).run(&database, "SELECT 1");
    assert!(
        matches!(&refused, Err(ExecError::Open(m)) if m.contains("has a .wal file beside it")),
        "{refused:?}"
    );
}

#[test]
fn the_config_names_what_duckdb_needs_and_refuses() {
    let dir = tempfile::tempdir().unwrap();
    shop(dir.path());
    let cases = [
        (
            "databases: ddb, engine: { kind: duckdb, url_env: X }",
            "`dataset.engine.url_env` applies to server engines only",
        ),
        (
            "engine: { kind: duckdb }",
            "`dataset.databases` is required with `dataset.engine.kind: duckdb`",
        ),
    ];
    for (engine, message) in cases {
        let yaml = format!(
            "dataset: {{ kind: spider, gold: gold.sql, difficulty: none, {engine} }}\n\
             predictions: [{{ name: m, path: gold.sql, format: tsv }}]\nmetrics: [ex]\n"
        );
        let config = common::config::write(dir.path().join("bad.yml"), &yaml);
        let output = common::eval(&config, &[]);
        let all = common::exited(&output, 2);
        assert!(all.contains(message), "{all}");
    }
    let yaml = "dataset: { kind: spider, gold: gold.sql, databases: ddb, difficulty: none, engine: { kind: duckdb } }\n\
                predictions: [{ name: m, path: gold.sql, format: tsv }]\nmetrics: [ex, esm]\n";
    let config = common::config::write(dir.path().join("esm.yml"), yaml);
    let all = common::exited(&common::eval(&config, &[]), 2);
    assert!(all.contains("`esm` is SQLite-only"), "{all}");
}

/// Red team round 8: queries the round-7 corpus (tests/it/duckdb.rs) does not try: list and
/// metadata forms of the file readers, the CLI's `getenv`, `sniff_csv`, `EXPLAIN ANALYZE`,
/// `SUMMARIZE`, `DESCRIBE`, `COPY FROM DATABASE`, `VACUUM`, `ANALYZE`, `query_table`, a secret.
/// Each reads no file outside the database and no environment variable: an error, or a result
/// that names no outside file's content, and the database file is unchanged.
#[test]
fn duckdb_predictions_outside_the_round_7_corpus_reach_no_file_or_environment() {
    let dir = tempfile::tempdir().unwrap();
    let file = loaded_shop(dir.path());
    let before = std::fs::read(&file).unwrap();
    let outside = dir.path().join("outside.csv");
    std::fs::write(&outside, "secret_marker\n42\n").unwrap();
    let outside = outside.display().to_string();
    std::env::set_var("SQLGATE_TEST_DUCKDB_SECRET", "env_marker");
    let queries = [
        format!("SELECT * FROM read_csv(['{outside}'])"),
        format!("SELECT * FROM sniff_csv('{outside}')"),
        format!("SELECT * FROM parquet_metadata('{outside}')"),
        format!("SELECT * FROM read_ndjson_objects('{outside}')"),
        format!("SELECT * FROM read_csv('file://{outside}')"),
        format!("SELECT * FROM query_table('{outside}')"),
        "SELECT getenv('SQLGATE_TEST_DUCKDB_SECRET')".to_string(),
        "SELECT * FROM duckdb_secrets()".to_string(),
        "EXPLAIN ANALYZE SELECT * FROM item".to_string(),
        "VACUUM item".to_string(),
        "ANALYZE item".to_string(),
        "COPY FROM DATABASE shop TO memory".to_string(),
        format!("SELECT * FROM (SELECT '{outside}' AS p) t, read_csv(t.p)"),
        "DESCRIBE item".to_string(),
        "SUMMARIZE item".to_string(),
        "SELECT * FROM duckdb_settings() WHERE name LIKE '%directory%'".to_string(),
    ];
    let executor = executor(limits());
    let mut reached = Vec::new();
    for sql in &queries {
        if let Ok(rows) = executor.run(&file, sql) {
            let shown = format!("{rows:?}");
            if shown.contains("secret_marker") || shown.contains("env_marker") {
                reached.push(format!("{sql}: {shown}"));
            }
        }
    }
    assert!(reached.is_empty(), "{reached:#?}");
    assert_eq!(std::fs::read(&file).unwrap(), before, "the file changed");
}

/// EX on DuckDB for typed results (BLOB, TIME, TIMETZ, INTERVAL, lists, structs, maps, NULL
/// ones, empty results) equals the verdict of the official test-suite functions run with
/// DuckDB's Python client 1.5.6 (tests/duckdb_official/ex_pairs.py, recorded in
/// tests/data/duckdb/typed_pairs_ex.jsonl with the SHA-256 of the pairs file, checked first).
#[test]
fn typed_results_score_as_the_official_evaluation_with_the_python_client() {
    use sha2::{Digest, Sha256};
    use sqlgate::engine::denotation::{denotations_equal, CompareOptions, Profile};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/duckdb");
    let pairs = std::fs::read(root.join("typed_pairs.jsonl")).unwrap();
    let recorded = common::read_jsonl(&root.join("typed_pairs_ex.jsonl"));
    let (header, verdicts) = recorded.split_first().unwrap();
    assert_eq!(
        header["pairs_sha256"].as_str().unwrap(),
        format!("{:x}", Sha256::digest(&pairs)),
        "typed_pairs.jsonl changed since the recording: record again (ex_pairs.py)"
    );
    assert_eq!(
        verdicts.len(),
        pairs
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .count()
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("typed.duckdb");
    sqlgate::engine::duckdb::tables::write_script(
        &file,
        "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);",
    )
    .unwrap();
    let run = executor(limits());
    let options = CompareOptions {
        profile: Profile::SpiderTs,
        float_tolerance: 0.0,
    };
    for verdict in verdicts {
        let (gold, pred) = (
            verdict["gold"].as_str().unwrap(),
            verdict["pred"].as_str().unwrap(),
        );
        let ours = match (run.run(&file, gold), run.run(&file, pred)) {
            (Err(_), _) => serde_json::json!("gold_error"),
            (Ok(_), Err(_)) => serde_json::json!(0),
            (Ok(g), Ok(p)) => {
                let order = gold.to_lowercase().contains("order by");
                serde_json::json!(i64::from(denotations_equal(&g, &p, order, &options)))
            }
        };
        assert_eq!(ours, verdict["exec"], "{gold} / {pred}");
    }
}
