//! TLS to real PostgreSQL and MariaDB servers started with a throwaway CA
//! (tests/it/common/servers.rs): `sqlgate load` and an `ex` run over verified TLS, the session
//! really encrypted (the run's reader is one the server admits over TLS only: a `hostnossl ...
//! reject` line in `pg_hba.conf`, MariaDB's `REQUIRE SSL`; a prediction may not read the
//! server's own view, `pg_stat_ssl` or `Ssl_cipher`, since it reads only the benchmark's
//! rows), chain-only
//! verification accepting another host name, and the failures (wrong CA, wrong host name, a
//! malformed mode, a missing CA file) exiting 2 with the URL's option named and no secret.
//! `KILL QUERY` reaches a TLS-only user. A server without TLS refusing `require` is tested in
//! server_engines.rs (its servers have none).

use crate::common;

use common::servers::{self, Server, ADMIN};
use common::{read_jsonl, sqlgate_command};
use std::path::Path;

const TABLES: &str = r#"[
 {"db_id": "shop", "table_names_original": ["items"], "table_names": ["items"],
  "column_names_original": [[-1, "*"], [0, "id"]], "column_names": [[-1, "*"], [0, "id"]],
  "column_types": ["number"], "primary_keys": [], "foreign_keys": []}
]"#;

/// The password of [`TLS_READER`].
const TLS_READER_PASSWORD: &str = "Tls-Reader-9x";

/// A read-only user of `tls_shop` that the server admits over TLS only.
const TLS_READER: &str = "tls_reader";

/// Creates [`TLS_READER`] once the tables are loaded (reading them, nothing else) and makes the
/// server refuse it any session without TLS; its URL.
fn tls_only_reader(server: &Server) -> String {
    match server.kind {
        servers::Kind::Postgres => {
            server.admin_sql(
                "tls_shop",
                &format!(
                    "CREATE ROLE {TLS_READER} LOGIN PASSWORD '{TLS_READER_PASSWORD}'; \
                     GRANT SELECT ON ALL TABLES IN SCHEMA public TO {TLS_READER};"
                ),
            );
            let hba = server.folder().join("data/pg_hba.conf");
            let rules = std::fs::read_to_string(&hba).unwrap();
            let reject = format!("hostnossl all {TLS_READER} all reject\n");
            std::fs::write(&hba, reject + &rules).unwrap();
            server.admin_sql("postgres", "SELECT pg_reload_conf();");
        }
        servers::Kind::Mariadb => {
            server.admin_sql(
                "mysql",
                &format!(
                    "CREATE USER '{TLS_READER}'@'%' IDENTIFIED BY '{TLS_READER_PASSWORD}' \
                     REQUIRE SSL; GRANT SELECT, LOCK TABLES ON tls_shop.* TO '{TLS_READER}'@'%';"
                ),
            );
        }
    }
    server.url(TLS_READER, TLS_READER_PASSWORD, "tls_shop")
}

fn engine_kind(server: &Server) -> &'static str {
    match server.kind {
        servers::Kind::Postgres => "postgresql",
        servers::Kind::Mariadb => "mysql",
    }
}

/// Writes a config whose gold is `SELECT count(*) FROM items` and `SELECT true`, and whose
/// predictions are the same count and the same truth.
fn write_case(dir: &Path, server: &Server) -> std::path::PathBuf {
    let truth = match server.kind {
        servers::Kind::Postgres => "SELECT true",
        servers::Kind::Mariadb => "SELECT 1",
    };
    std::fs::write(
        dir.join("gold.sql"),
        format!("SELECT count(*) FROM items\tshop\n{truth}\tshop\n"),
    )
    .unwrap();
    std::fs::write(dir.join("preds.txt"), format!("SELECT 3\n{truth}\n")).unwrap();
    std::fs::write(dir.join("tables.json"), TABLES).unwrap();
    let config = format!(
        "dataset: {{ gold: gold.sql, tables: tables.json, difficulty: none, engine: {{ kind: {}, url_env: TLS_TEST_URL }} }}\n\
         predictions: [{{ name: model, path: preds.txt }}]\n\
         metrics: [ex]\ncompare: {{ profile: bird }}\n\
         execution: {{ timeout_ms: 5000, threads: 1 }}\n",
        engine_kind(server)
    );
    let path = dir.join("sqlgate.yml");
    std::fs::write(&path, config).unwrap();
    path
}

/// The SQLite source of `sqlgate load`: `shop` with three items.
fn write_source(dir: &Path) -> std::path::PathBuf {
    let from = dir.join("from");
    std::fs::create_dir_all(from.join("shop")).unwrap();
    let db = rusqlite::Connection::open(from.join("shop/shop.sqlite")).unwrap();
    db.execute_batch("CREATE TABLE items (id integer); INSERT INTO items VALUES (1), (2), (3);")
        .unwrap();
    from
}

/// Runs `sqlgate` with the URL in `TLS_TEST_URL`; the exit code and everything printed.
fn run(args: &[&str], url: &str) -> (Option<i32>, String) {
    let output = sqlgate_command(args)
        .env("TLS_TEST_URL", url)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code(), text)
}

/// `sqlgate load` of the databases under `from` as `config` says, over `url`.
fn load(config: &Path, from: &Path, url: &str) -> (Option<i32>, String) {
    let (config, from) = (config.to_str().unwrap(), from.to_str().unwrap());
    run(&["load", "--config", config, "--from", from], url)
}

/// `sqlgate eval` of `config` over `url`, its items written to `jsonl`.
fn eval(config: &Path, jsonl: &Path, url: &str) -> (Option<i32>, String) {
    let (config, jsonl) = (config.to_str().unwrap(), jsonl.to_str().unwrap());
    run(&["eval", "--config", config, "--jsonl", jsonl], url)
}

/// The per-item `ex` of an eval over `url`, after checking it succeeded.
fn ex_values(config: &Path, url: &str) -> Vec<f64> {
    let jsonl = config.with_extension("items.jsonl");
    let (code, text) = eval(config, &jsonl, url);
    assert_eq!(code, Some(0), "{text}");
    read_jsonl(&jsonl)
        .iter()
        .map(|line| line["metrics"]["ex"].as_f64().unwrap())
        .collect()
}

/// `url` with `localhost` for `127.0.0.1` (a name the certificate does not hold) and `options`.
fn with(url: &str, localhost: bool, options: &str) -> String {
    let url = match localhost {
        true => url.replace("@127.0.0.1:", "@localhost:"),
        false => url.to_string(),
    };
    format!("{url}?{options}")
}

/// The failing settings: each exits 2 naming the option, with no password or URL printed.
fn check_failures(server: &Server, config: &Path, cases: &[(&str, String, &str)]) {
    let jsonl = config.with_extension("fail.jsonl");
    for (name, url, expected) in cases {
        let (code, text) = eval(config, &jsonl, url);
        assert_eq!(code, Some(2), "{name}: {text}");
        assert!(
            text.contains(expected),
            "{name}: expected {expected:?} in {text}"
        );
        assert!(text.contains("TLS_TEST_URL"), "{name}: {text}");
        assert!(!text.contains(TLS_READER_PASSWORD), "{name}: {text}");
        assert!(!text.contains(&server.admin_password), "{name}: {text}");
        assert!(!text.contains("://"), "{name} printed a URL: {text}");
    }
}

fn check_tls(server: &Server) {
    let dir = tempfile::tempdir().unwrap();
    let ca = server.ca_file().display().to_string();
    let wrong_ca = server.wrong_ca_file().display().to_string();
    let postgres = server.kind == servers::Kind::Postgres;
    let verified = match postgres {
        true => format!("sslmode=verify-full&sslrootcert={ca}"),
        false => format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}"),
    };
    let create = match postgres {
        true => ("postgres", "CREATE DATABASE tls_shop;"),
        false => ("mysql", "CREATE DATABASE tls_shop;"),
    };
    server.admin_sql(create.0, create.1);
    let config = write_case(dir.path(), server);
    let from = write_source(dir.path());
    let (code, text) = load(
        &config,
        &from,
        &with(&server.admin_url("tls_shop"), false, &verified),
    );
    assert_eq!(code, Some(0), "load over TLS: {text}");
    assert!(!text.contains(&server.admin_password), "{text}");

    let reader = tls_only_reader(server);
    assert_eq!(
        ex_values(&config, &with(&reader, false, &verified)),
        [1.0, 1.0]
    );
    let chain_only = match postgres {
        true => format!("sslmode=verify-ca&sslrootcert={ca}"),
        false => format!("ssl-mode=VERIFY_CA&ssl-ca={ca}"),
    };
    assert_eq!(
        ex_values(&config, &with(&reader, true, &chain_only)),
        [1.0, 1.0]
    );
    let unverified = match postgres {
        true => "sslmode=require",
        false => "ssl-mode=REQUIRED",
    };
    assert_eq!(
        ex_values(&config, &with(&reader, true, unverified)),
        [1.0, 1.0]
    );
    let clear = match postgres {
        true => "sslmode=disable",
        false => "ssl-mode=DISABLED",
    };
    let refused = ex_values_or_error(&config, &with(&reader, false, clear));
    common::assert_contains(&refused, &["cannot connect", TLS_READER]);

    let (mode, root, bad_mode) = match postgres {
        true => ("sslmode=verify-full", "sslrootcert", "sslmode=verify"),
        false => ("ssl-mode=VERIFY_IDENTITY", "ssl-ca", "ssl-mode=ON"),
    };
    let option = mode.split('=').next().unwrap();
    let cases = [
        (
            "wrong CA",
            with(&reader, false, &format!("{mode}&{root}={wrong_ca}")),
            "certificate",
        ),
        (
            "wrong host name",
            with(&reader, true, &format!("{mode}&{root}={ca}")),
            "certificate",
        ),
        ("malformed mode", with(&reader, false, bad_mode), option),
        (
            "missing CA file",
            with(
                &reader,
                false,
                &format!("{mode}&{root}=/nonexistent/ca.pem"),
            ),
            "/nonexistent/ca.pem",
        ),
    ];
    check_failures(server, &config, &cases);
    let admin = server.url(ADMIN, &server.admin_password, "tls_shop");
    let (code, text) = load(
        &config,
        &from,
        &with(&admin, true, &format!("{mode}&{root}={ca}")),
    );
    assert_eq!(code, Some(2), "load to a wrong host name: {text}");
    common::assert_contains(&text, &["certificate", option]);
    assert!(!text.contains(&server.admin_password), "{text}");
}

#[test]
fn postgres_over_tls_verifies_the_server_and_encrypts() {
    check_tls(servers::postgres_tls());
}

#[test]
fn mariadb_over_tls_verifies_the_server_and_encrypts() {
    check_tls(servers::mariadb_tls());
}

/// The cancel path over TLS: for a user the server admits only over TLS (`REQUIRE SSL`), a
/// result past `max_rows` ends at once because the `KILL QUERY` connection connects with the
/// same TLS; were it refused, dropping the endless result would wait for the 60 s statement
/// timeout.
#[test]
fn mariadb_kill_query_connects_over_the_same_tls() {
    let server = servers::mariadb_tls();
    let password = "Tls-only-9f3c";
    server.admin_sql(
        "mysql",
        &format!(
            "CREATE DATABASE tls_kill; CREATE TABLE tls_kill.items (id integer);\n\
             CREATE USER 'tls_only'@'%' IDENTIFIED BY '{password}' REQUIRE SSL;\n\
             GRANT SELECT, LOCK TABLES ON tls_kill.* TO 'tls_only'@'%';"
        ),
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("gold.sql"), "SELECT 1\tshop\n").unwrap();
    std::fs::write(
        dir.path().join("preds.txt"),
        "SELECT a.seq FROM seq_1_to_1000000 a, seq_1_to_1000000 b\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("tables.json"), TABLES).unwrap();
    let config = dir.path().join("sqlgate.yml");
    std::fs::write(
        &config,
        "dataset: { gold: gold.sql, tables: tables.json, difficulty: none, engine: { kind: mysql, url_env: TLS_TEST_URL } }\n\
         predictions: [{ name: model, path: preds.txt }]\nmetrics: [ex]\ncompare: { profile: bird }\n\
         execution: { timeout_ms: 60000, threads: 1, max_rows: 1000 }\n",
    )
    .unwrap();
    let ca = server.ca_file().display().to_string();
    let url = server.url("tls_only", password, "tls_kill");
    let started = std::time::Instant::now();
    let ex = ex_values(
        &config,
        &with(
            &url,
            false,
            &format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}"),
        ),
    );
    let elapsed = started.elapsed();
    assert_eq!(ex, [0.0]);
    assert!(elapsed.as_secs() < 30, "the capped query took {elapsed:?}");
    let clear = ex_values_or_error(&config, &with(&url, false, "ssl-mode=DISABLED"));
    common::assert_contains(&clear, &["tls_only"]);
}

/// Everything an eval printed, when it fails.
fn ex_values_or_error(config: &Path, url: &str) -> String {
    let (code, text) = run(&["eval", "--config", config.to_str().unwrap()], url);
    assert_eq!(code, Some(2), "{text}");
    text
}
