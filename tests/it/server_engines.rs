//! The PostgreSQL and MySQL engines on real servers (tests/it/common/servers.rs): Python's value
//! semantics under the `bird` profile (`Decimal('0.1') != 0.1`, `Decimal('0.5') == 0.5`,
//! `True == 1`, a date is not a datetime), both layouts, the role check, fetched rows charged to
//! the run's memory budget, and every start-up error (variable unset, URL in the config, server
//! unreachable, wrong password, TLS required by the URL but not offered by the server, tables
//! missing, a SQLite-only metric) exiting 2 with the key named and no secret printed.

use crate::common;

use common::read_jsonl;
use common::servers::{self, Server};
use std::path::{Path, PathBuf};
use std::process::Output;

/// One test's dataset: Spider-style gold lines, aligned predictions, tables.json.
struct Case<'a> {
    gold: &'a [(&'a str, &'a str)],
    predictions: &'a [&'a str],
    tables: &'a str,
}

/// Writes the case and a config with `engine` and `extra` keys; returns the config path.
fn write_case(dir: &Path, case: &Case<'_>, engine: &str, extra: &str) -> PathBuf {
    let gold: String = case
        .gold
        .iter()
        .map(|(sql, db)| format!("{sql}\t{db}\n"))
        .collect();
    std::fs::write(dir.join("gold.sql"), gold).unwrap();
    std::fs::write(dir.join("preds.txt"), case.predictions.join("\n") + "\n").unwrap();
    std::fs::write(dir.join("tables.json"), case.tables).unwrap();
    let config = format!(
        "dataset: {{ gold: gold.sql, tables: tables.json, difficulty: none, engine: {engine} }}\n\
         predictions: [{{ name: model, path: preds.txt }}]\n\
         metrics: [ex]\ncompare: {{ profile: bird }}\n\
         execution: {{ timeout_ms: 5000, threads: 2 }}\n{extra}"
    );
    let path = dir.join("sqlgate.yml");
    std::fs::write(&path, config).unwrap();
    path
}

/// [`write_case`] on the server engine `kind` whose URL is in `TEST_DB_URL`, shared layout.
fn write_shared_case(dir: &Path, case: &Case<'_>, kind: &str) -> PathBuf {
    let engine = format!("{{ kind: {kind}, url_env: TEST_DB_URL, layout: shared }}");
    write_case(dir, case, &engine, "")
}

/// `sqlgate eval` with the URL in the variable `TEST_DB_URL` (unset when `url` is `None`).
fn eval(config: &Path, url: Option<&str>) -> (Output, Vec<serde_json::Value>) {
    let jsonl = config.with_extension("items.jsonl");
    let mut command = common::eval_command(config, &["--jsonl", common::arg(&jsonl)]);
    match url {
        Some(url) => command.env("TEST_DB_URL", url),
        None => command.env_remove("TEST_DB_URL"),
    };
    let output = command.output().unwrap();
    let lines = if output.status.success() {
        read_jsonl(&jsonl)
    } else {
        Vec::new()
    };
    (output, lines)
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The per-item `ex` values and outcomes.
fn verdicts(lines: &[serde_json::Value]) -> Vec<(f64, String)> {
    lines
        .iter()
        .map(|l| {
            (
                l["metrics"]["ex"].as_f64().unwrap_or(-1.0),
                l["outcome"]["ex"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

const TABLES: &str = r#"[
 {"db_id": "shop", "table_names_original": ["items"], "table_names": ["items"],
  "column_names_original": [[-1, "*"], [0, "id"]], "column_names": [[-1, "*"], [0, "id"]],
  "column_types": ["text", "number"], "primary_keys": [], "foreign_keys": []},
 {"db_id": "zoo", "table_names_original": ["animals"], "table_names": ["animals"],
  "column_names_original": [[-1, "*"], [0, "name"]], "column_names": [[-1, "*"], [0, "name"]],
  "column_types": ["text", "text"], "primary_keys": [], "foreign_keys": []}
]"#;

/// Gold and predictions whose `bird` verdicts follow from Python's equality on the values
/// psycopg2 / PyMySQL return.
fn python_semantics_case() -> (
    Vec<(&'static str, &'static str)>,
    Vec<&'static str>,
    Vec<f64>,
) {
    let rows = [
        // Decimal('0.10') != 0.1
        (
            "SELECT price FROM items WHERE id = 1",
            "shop",
            "SELECT ratio FROM items WHERE id = 1",
            0.0,
        ),
        // Decimal('0.50') == 0.5
        (
            "SELECT price FROM items WHERE id = 2",
            "shop",
            "SELECT ratio FROM items WHERE id = 2",
            1.0,
        ),
        // 3 == Decimal('3.0')
        ("SELECT COUNT(*) FROM items", "shop", "SELECT 3.0", 1.0),
        // float 2.5 == Decimal('2.50')
        (
            "SELECT ratio FROM items WHERE id = 3",
            "shop",
            "SELECT price FROM items WHERE id = 3",
            1.0,
        ),
        // date(2020, 1, 2) != datetime(2020, 1, 2, 0, 0)
        (
            "SELECT day FROM items WHERE id = 1",
            "shop",
            "SELECT at FROM items WHERE id = 1",
            0.0,
        ),
        // sets: order and duplicates ignored
        (
            "SELECT name FROM animals",
            "zoo",
            "SELECT name FROM animals UNION ALL SELECT name FROM animals ORDER BY name DESC",
            1.0,
        ),
        // one statement per prediction
        (
            "SELECT name FROM animals",
            "zoo",
            "SELECT name FROM animals; SELECT 1",
            0.0,
        ),
        // text is not a number
        (
            "SELECT id FROM items WHERE id = 1",
            "shop",
            "SELECT '1'",
            0.0,
        ),
    ];
    let gold = rows.iter().map(|(g, db, _, _)| (*g, *db)).collect();
    let predictions = rows.iter().map(|(_, _, p, _)| *p).collect();
    let expected = rows.iter().map(|(_, _, _, e)| *e).collect();
    (gold, predictions, expected)
}

const SHOP_PG: &str = "CREATE TABLE items (id integer, price numeric(10,2), ratio double precision, day date, at timestamp, ok boolean);
INSERT INTO items VALUES (1, 0.10, 0.1, '2020-01-02', '2020-01-02 00:00:00', true), (2, 0.50, 0.5, '2020-01-03', '2020-01-03 00:00:00', false), (3, 2.50, 2.5, '2020-01-04', '2020-01-04 12:00:00', true);
CREATE TABLE animals (name text);
INSERT INTO animals VALUES ('cat'), ('dog'), ('cat');";

const SHOP_MYSQL: &str = "CREATE TABLE items (id integer, price decimal(10,2), ratio double, day date, at datetime, ok boolean);
INSERT INTO items VALUES (1, 0.10, 0.1, '2020-01-02', '2020-01-02 00:00:00', true), (2, 0.50, 0.5, '2020-01-03', '2020-01-03 00:00:00', false), (3, 2.50, 2.5, '2020-01-04', '2020-01-04 12:00:00', true);
CREATE TABLE animals (name text);
INSERT INTO animals VALUES ('cat'), ('dog'), ('cat');";

fn create_database(server: &Server, name: &str, ddl: &str) {
    server.recreate_database(name, ddl);
}

fn check_python_semantics(server: &Server, kind: &str, database: &str, ddl: &str) {
    create_database(server, database, ddl);
    let (gold, predictions, expected) = python_semantics_case();
    let dir = tempfile::tempdir().unwrap();
    let case = Case {
        gold: &gold,
        predictions: &predictions,
        tables: TABLES,
    };
    let config = write_shared_case(dir.path(), &case, kind);
    let (output, lines) = eval(&config, Some(&server.reader_url(database)));
    common::assert_exit(&output, 0);
    let got: Vec<f64> = verdicts(&lines).into_iter().map(|(ex, _)| ex).collect();
    assert_eq!(got, expected, "{lines:#?}");
    assert_eq!(lines[6]["outcome"]["ex"], "pred_error");
}

#[test]
fn postgres_verdicts_follow_python_equality_on_psycopg2_values() {
    check_python_semantics(
        servers::postgres(),
        "postgresql",
        "engines_semantics",
        SHOP_PG,
    );
}

#[test]
fn mariadb_verdicts_follow_python_equality_on_pymysql_values() {
    check_python_semantics(servers::mariadb(), "mysql", "engines_semantics", SHOP_MYSQL);
}

/// `per_db_id`: each db_id is a database of its own on the URL's server.
fn check_per_db_id(server: &Server, kind: &str) {
    create_database(
        server,
        "shop",
        "CREATE TABLE items (id integer); INSERT INTO items VALUES (1), (2);",
    );
    create_database(
        server,
        "zoo",
        "CREATE TABLE animals (name varchar(10)); INSERT INTO animals VALUES ('cat');",
    );
    let dir = tempfile::tempdir().unwrap();
    let case = Case {
        gold: &[
            ("SELECT COUNT(*) FROM items", "shop"),
            ("SELECT name FROM animals", "zoo"),
        ],
        predictions: &["SELECT 2", "SELECT 'dog'"],
        tables: TABLES,
    };
    let config = write_case(
        dir.path(),
        &case,
        &format!("{{ kind: {kind}, url_env: TEST_DB_URL, layout: per_db_id }}"),
        "",
    );
    let base = match server.kind {
        servers::Kind::Postgres => "postgres",
        servers::Kind::Mariadb => "mysql",
    };
    let url = server.reader_url_for(base, &["shop", "zoo"]);
    let (output, lines) = eval(&config, Some(&url));
    common::assert_exit(&output, 0);
    assert_eq!(
        verdicts(&lines),
        vec![(1.0, "match".to_string()), (0.0, "mismatch".to_string())]
    );
}

#[test]
fn postgres_per_db_id_layout_runs_each_db_id_in_its_database() {
    check_per_db_id(servers::postgres(), "postgresql");
}

#[test]
fn mariadb_per_db_id_layout_runs_each_db_id_in_its_database() {
    check_per_db_id(servers::mariadb(), "mysql");
}

/// Every start-up error: exit 2, the key named, no password or URL in any output.
fn check_bad_input(server: &Server, kind: &str, database: &str, ddl: &str) {
    create_database(server, database, ddl);
    let dir = tempfile::tempdir().unwrap();
    let case = Case {
        gold: &[("SELECT COUNT(*) FROM items", "shop")],
        predictions: &["SELECT 3"],
        tables: TABLES,
    };
    let engine = format!("{{ kind: {kind}, url_env: TEST_DB_URL }}");
    let config = write_case(dir.path(), &case, &engine, "");
    let reader = server.reader_url(database);
    let closed_port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let wrong_password = "wrong-Pa55word-xyz";
    let cases: Vec<(&str, Option<String>, &str)> = vec![
        ("unset", None, "is not set"),
        (
            "unreachable",
            Some(reader.replace(&format!(":{}/", server.port), &format!(":{closed_port}/"))),
            "cannot connect",
        ),
        (
            "wrong password",
            Some(server.url(&server.grant_reader(&[database]), wrong_password, database)),
            "cannot connect",
        ),
        ("privileged", Some(server.admin_url(database)), "CREATE"),
        (
            "TLS required by a server without it",
            Some(format!("{reader}?{}", tls_required(server))),
            tls_required(server),
        ),
    ];
    for (name, url, expected) in cases {
        let (output, _) = eval(&config, url.as_deref());
        let all = text(&output);
        assert_eq!(output.status.code(), Some(2), "{name}: {all}");
        assert!(all.contains(expected), "{name}: {all}");
        assert!(all.contains("dataset.engine"), "{name}: {all}");
        for secret in [
            &server.reader_password,
            &server.admin_password,
            &wrong_password.to_string(),
        ] {
            assert!(
                !all.contains(secret.as_str()),
                "{name} printed a password: {all}"
            );
        }
        assert!(!all.contains("://"), "{name} printed a URL: {all}");
    }
    let missing = TABLES.replace("\"items\"]", "\"items\", \"ghost\"]");
    std::fs::write(dir.path().join("tables.json"), missing).unwrap();
    let (output, _) = eval(&config, Some(&reader));
    let all = common::exited(&output, 2);
    common::assert_contains(&all, &["db_id `shop`", "ghost"]);
    assert!(!all.contains(&server.reader_password), "{all}");
}

/// The URL option requiring TLS (these servers have none; server_tls.rs tests servers that do).
fn tls_required(server: &Server) -> &'static str {
    match server.kind {
        servers::Kind::Postgres => "sslmode=require",
        servers::Kind::Mariadb => "ssl-mode=REQUIRED",
    }
}

#[test]
fn postgres_start_up_errors_name_the_key_and_print_no_secret() {
    check_bad_input(servers::postgres(), "postgresql", "engines_bad", SHOP_PG);
}

#[test]
fn mariadb_start_up_errors_name_the_key_and_print_no_secret() {
    check_bad_input(servers::mariadb(), "mysql", "engines_bad", SHOP_MYSQL);
}

#[test]
fn config_errors_are_refused_before_any_connection() {
    let dir = tempfile::tempdir().unwrap();
    let case = Case {
        gold: &[("SELECT 1", "shop")],
        predictions: &["SELECT 1"],
        tables: TABLES,
    };
    let cases = [
        (
            "{ kind: postgresql, url_env: 'postgresql://u:Secret99@h/db' }",
            "",
            "url_env",
        ),
        (
            "{ kind: postgresql, url: 'postgresql://u:Secret99@h/db' }",
            "",
            "dataset.engine.url",
        ),
        ("{ kind: mysql }", "", "dataset.engine.url_env"),
        (
            "{ kind: postgresql, url_env: X }",
            "suite: { kind: directory, path: . }\n",
            "SQLite-only",
        ),
        (
            "{ kind: postgresql, url_env: X, layout: sideways }",
            "",
            "sideways",
        ),
        (
            "{ kind: oracle, url_env: X }",
            "",
            "sqlgate.yml: dataset.engine.kind: unknown engine `oracle`; the engines are \
             `sqlite`, `postgresql`, `mysql`, `duckdb` at line 1 column",
        ),
        (
            "{ kind: postgresql, url_env: X, options: { path: a.db } }",
            "",
            "`dataset.engine.options.path`: engine `postgresql` takes no options",
        ),
    ];
    for (engine, extra, expected) in cases {
        let config = write_case(dir.path(), &case, engine, extra);
        let (output, _) = eval(&config, None);
        let all = text(&output);
        assert_eq!(output.status.code(), Some(2), "{engine}: {all}");
        assert!(all.contains(expected), "{engine}: {all}");
        assert!(!all.contains("Secret99"), "{engine}: {all}");
    }
    let config = write_case(dir.path(), &case, "{ kind: postgresql, url_env: X }", "");
    let text_of = std::fs::read_to_string(&config).unwrap();
    for metric in ["ts", "esm", "esm_plus"] {
        std::fs::write(
            &config,
            text_of.replace("metrics: [ex]", &format!("metrics: [ex, {metric}]")),
        )
        .unwrap();
        let (output, _) = eval(&config, None);
        let all = text(&output);
        assert_eq!(output.status.code(), Some(2), "{metric}: {all}");
        assert!(
            all.contains(&format!("`{metric}` is SQLite-only")),
            "{metric}: {all}"
        );
    }
}

#[test]
fn a_privileged_role_runs_only_when_allowed() {
    let server = servers::postgres();
    create_database(server, "engines_allowed", SHOP_PG);
    let dir = tempfile::tempdir().unwrap();
    let case = Case {
        gold: &[("SELECT COUNT(*) FROM items", "shop")],
        predictions: &["SELECT 3"],
        tables: TABLES,
    };
    let config = write_case(
        dir.path(),
        &case,
        "{ kind: postgresql, url_env: TEST_DB_URL, allow_privileged_role: true }",
        "",
    );
    let (output, lines) = eval(&config, Some(&server.admin_url("engines_allowed")));
    common::assert_exit(&output, 0);
    assert!(text(&output).contains("superuser"), "{}", text(&output));
    assert_eq!(verdicts(&lines), vec![(1.0, "match".to_string())]);
    assert!(!text(&output).contains(&server.admin_password));
}

/// Rows fetched from a server count against the run's memory budget like SQLite's: a result
/// over `execution.max_memory` (here 64 MiB; about 200 MB of rows, under the per-query caps)
/// stops with `result too large` naming the budget, and the next item still scores.
fn check_memory_budget(server: &Server, kind: &str, database: &str, ddl: &str, huge: &str) {
    create_database(server, database, ddl);
    let dir = tempfile::tempdir().unwrap();
    let case = Case {
        gold: &[
            ("SELECT COUNT(*) FROM items", "shop"),
            ("SELECT COUNT(*) FROM items", "shop"),
        ],
        predictions: &[huge, "SELECT 3"],
        tables: TABLES,
    };
    let config = write_shared_case(dir.path(), &case, kind);
    let yaml = std::fs::read_to_string(&config).unwrap().replace(
        "execution: { timeout_ms: 5000, threads: 2 }",
        "execution: { timeout_ms: 20000, threads: 2, max_memory: 67108864, \
         max_result_bytes: 4294967296, max_rows: 100000000 }",
    );
    std::fs::write(&config, yaml).unwrap();
    let (output, lines) = eval(&config, Some(&server.reader_url(database)));
    common::assert_exit(&output, 0);
    assert_eq!(
        verdicts(&lines),
        vec![(0.0, "pred_error".to_string()), (1.0, "match".to_string())],
        "{lines:#?}"
    );
    let error = lines[0]["error"]["ex"].as_str().unwrap_or_default();
    common::assert_contains(
        error,
        &["result too large", "`execution.max_memory`, 67108864 bytes"],
    );
}

#[test]
fn postgres_results_count_against_the_run_memory_budget() {
    check_memory_budget(
        servers::postgres(),
        "postgresql",
        "engines_budget",
        SHOP_PG,
        "SELECT repeat('x', 1000) FROM generate_series(1, 200000)",
    );
}

#[test]
fn mariadb_results_count_against_the_run_memory_budget() {
    check_memory_budget(
        servers::mariadb(),
        "mysql",
        "engines_budget",
        SHOP_MYSQL,
        "SELECT REPEAT('x', 1000) FROM seq_1_to_200000",
    );
}
