//! `sqlgate audit` on BIRD mini-dev's 500 items, on generated data (tests/it/common/bird_minidev.rs):
//! the SQLite golds on the generated SQLite files, compared with the PostgreSQL and MySQL golds
//! of the same items on the same data loaded into live PostgreSQL 15 and MariaDB 10.11 servers
//! (`audit.dialects`). Every finding is a known kind with evidence; the dialects disagree on
//! some items (BIRD's three golds are not the same query), but not where they return the same
//! date or number in another type; the findings are printed.

use crate::common;

use common::servers;
use std::collections::BTreeMap;
use std::path::Path;

const KINDS: [&str; 11] = [
    "gold-error",
    "gold-timeout",
    "limit-tie",
    "order-tie",
    "null-order",
    "text-number-sort",
    "bare-column",
    "empty-everywhere",
    "dialect-disagreement",
    "gold-result-mismatch",
    "suspect-gold",
];

/// The database the generated mini-dev is loaded into on each shared server (not `bird`, which
/// `engines_bird` loads on the same servers).
const DATABASE: &str = "gold_audit_bird";

fn load(
    kind: sqlgate::engine::load::types::Server,
    server: &servers::Server,
    system: &str,
    from: &Path,
) {
    server.admin_sql(system, &format!("CREATE DATABASE {DATABASE}"));
    let workspace = sqlgate::util::workspace::Workspace::detect(from).unwrap();
    sqlgate::engine::load::load(
        kind,
        &server.admin_url(DATABASE),
        sqlgate::engine::load::Layout::Shared,
        from,
        &workspace,
    )
    .unwrap();
}

#[test]
fn bird_minidev_audit_lists_findings_on_sqlite_and_both_servers() {
    let work = tempfile::tempdir().unwrap();
    let databases = work.path().join("database");
    common::bird_minidev::generate(&databases);
    let postgres = servers::postgres();
    let mariadb = servers::mariadb();
    load(
        sqlgate::engine::load::types::Server::Postgres,
        postgres,
        "postgres",
        &databases,
    );
    load(
        sqlgate::engine::load::types::Server::Mysql,
        mariadb,
        "mysql",
        &databases,
    );
    let data = common::bird_minidev::folder();
    let config = format!(
        "dataset: {{ kind: bird, gold: {sqlite}, tables: {tables}, databases: {databases}, difficulty: 'field:difficulty' }}\n\
         predictions:\n  - {{ name: gpt-4-turbo, path: {predictions}, format: bird-json }}\n\
         metrics: [ex]\ncompare: {{ profile: bird }}\nexecution: {{ timeout_ms: 30000 }}\n\
         audit:\n  dialects:\n\
         \x20   - {{ name: postgresql, gold: {pg}, engine: {{ kind: postgresql, url_env: AUDIT_PG_URL }} }}\n\
         \x20   - {{ name: mysql, gold: {my}, engine: {{ kind: mysql, url_env: AUDIT_MYSQL_URL }} }}\n",
        sqlite = data.join("mini_dev_sqlite.json").display(),
        tables = data.join("dev_tables.json").display(),
        databases = databases.display(),
        predictions = data
            .join("predictions/predict_mini_dev_gpt-4-turbo_cot_SQLite.json")
            .display(),
        pg = data.join("mini_dev_postgresql.json").display(),
        my = data.join("mini_dev_mysql.json").display(),
    );
    std::fs::write(work.path().join("sqlgate.yml"), config).unwrap();
    let output =
        common::sqlgate_command(&["audit", "--config", "sqlgate.yml", "--jsonl", "audit.jsonl"])
            .current_dir(work.path())
            .env("AUDIT_PG_URL", postgres.reader_url(DATABASE))
            .env("AUDIT_MYSQL_URL", mariadb.reader_url(DATABASE))
            .output()
            .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut dialects: BTreeMap<String, usize> = BTreeMap::new();
    for line in std::fs::read_to_string(work.path().join("audit.jsonl"))
        .unwrap()
        .lines()
    {
        let finding: serde_json::Value = serde_json::from_str(line).unwrap();
        let kind = finding["kind"].as_str().unwrap().to_string();
        let evidence = finding["evidence"].as_str().unwrap();
        assert!(KINDS.contains(&kind.as_str()), "{line}");
        assert!(
            !evidence.is_empty() && finding["index"].as_u64().unwrap() < 500,
            "{line}"
        );
        if kind == "dialect-disagreement" {
            let name = if evidence.starts_with("the postgresql gold") {
                "postgresql"
            } else {
                assert!(evidence.starts_with("the mysql gold"), "{line}");
                "mysql"
            };
            let index = finding["index"].as_u64().unwrap();
            // The golds of these items return a date (or a decimal) the server types and SQLite
            // keeps as text (or a float): the same answer by meaning, no disagreement.
            assert!(
                ![82, 103, 126, 235].contains(&index) && (index, name) != (413, "postgresql"),
                "{line}"
            );
            *dialects.entry(name.to_string()).or_default() += 1;
        }
        *counts.entry(kind).or_default() += 1;
    }
    println!("{stdout}");
    println!("findings per kind: {counts:?}; dialect disagreements: {dialects:?}");
    assert!(
        dialects.get("postgresql").is_some_and(|n| *n > 0),
        "{counts:?}"
    );
    assert!(dialects.get("mysql").is_some_and(|n| *n > 0), "{counts:?}");
    assert!(
        counts.keys().any(|k| k != "dialect-disagreement"),
        "{counts:?}"
    );
}
