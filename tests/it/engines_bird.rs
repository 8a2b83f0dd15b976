//! BIRD mini-dev's 500 items on live PostgreSQL 15 and MariaDB 10.11 servers: per item, sqlgate's
//! `ex` (bird profile) and `soft_f1` of GPT-4-turbo's predictions equal the official functions'
//! (bird-bench/mini_dev evaluation/ at bee73fe: `execute_sql`, `calculate_ex`,
//! `calculate_f1_score` and their loops, run with psycopg2 / PyMySQL) on the same server, the
//! same databases, through the same read-only role. The official verdicts are the ones recorded
//! in tests/data/bird/servers/minidev_*.jsonl, or, with `SQLGATE_BIRD_OFFICIAL` naming the
//! upstream folder, computed live and checked against the recording (tests/it/common/official.rs).
//!
//! The databases are generated from `dev_tables.json` (tests/it/common/bird_minidev.rs), written as
//! SQLite files and copied into each server with `sqlgate load` in BIRD's `shared` layout; the
//! recording holds a digest of their contents, of the gold and of the predictions.
//!
//! On MariaDB, which breaks ties differently on different connections, an item whose verdicts
//! differ is left out only when its prediction or gold cuts a tie under `ORDER BY ... LIMIT`
//! (found from the rows at the cut, tests/it/common/ties.rs): the server may then return different
//! rows to the two scorers. The recording names these tie items with the reason
//! (`left_out_when_different`), and the test checks they are exactly the items that cut a tie
//! now. Any other difference, or more than five left out, fails the test.

use crate::common;

use common::servers::{self, Server};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

/// The generated SQLite databases, made once per test binary.
fn generated() -> &'static Path {
    static FOLDER: OnceLock<tempfile::TempDir> = OnceLock::new();
    FOLDER
        .get_or_init(|| {
            let folder = tempfile::tempdir().unwrap();
            let coverage = common::bird_minidev::generate(folder.path());
            let (with_rows, golds) = coverage
                .values()
                .fold((0, 0), |(a, b), (x, y)| (a + x, b + y));
            println!(
                "SQLite golds returning rows on the generated databases: {with_rows} of {golds}"
            );
            folder
        })
        .path()
}

/// One server's side of the comparison.
struct Dialect {
    /// The official code's `sql_dialect`.
    official: &'static str,
    /// sqlgate's `dataset.engine.kind`.
    kind: &'static str,
    /// The file name part of the gold and prediction files.
    files: &'static str,
    server: fn() -> &'static Server,
    load_kind: sqlgate::engine::load::types::Server,
    /// The recording of the official verdicts (tests/data/bird/servers/).
    recording: &'static str,
    /// The golds that fail on the generated data (`dataset.allow_failing_golds`): 9 of the 500
    /// on PostgreSQL (dates such as `x2010-02-22`), 5 on MariaDB (a scalar subquery of several
    /// rows).
    failing_golds: &'static str,
    /// Whether the server may break ties differently for each connection (then tie-cutting
    /// items are left out).
    ties_vary: bool,
}

const POSTGRES: Dialect = Dialect {
    official: "PostgreSQL",
    kind: "postgresql",
    files: "postgresql",
    server: servers::postgres,
    load_kind: sqlgate::engine::load::types::Server::Postgres,
    recording: "minidev_postgresql",
    failing_golds: "[132, 135, 144, 149, 228, 244, 245, 412, 449]",
    ties_vary: false,
};

const MARIADB: Dialect = Dialect {
    official: "MySQL",
    kind: "mysql",
    files: "mysql",
    server: servers::mariadb,
    load_kind: sqlgate::engine::load::types::Server::Mysql,
    recording: "minidev_mysql",
    failing_golds: "[282, 405, 406, 413, 437]",
    ties_vary: true,
};

/// The dialects here are servers; DuckDB's files are tested in tests/it/duckdb.rs.
const NOT_A_SERVER: &str = "the BIRD server tests run on PostgreSQL and MariaDB";

/// The database `bird` on the server, loaded with the generated databases (shared layout).
fn load_bird(dialect: &Dialect) -> &'static Server {
    let server = (dialect.server)();
    let system_database = match dialect.load_kind {
        sqlgate::engine::load::types::Server::Postgres => "postgres",
        sqlgate::engine::load::types::Server::Mysql => "mysql",
        sqlgate::engine::load::types::Server::Duckdb => unreachable!("{}", NOT_A_SERVER),
    };
    server.admin_sql(system_database, "CREATE DATABASE bird");
    sqlgate::engine::load::load(
        dialect.load_kind,
        &server.admin_url("bird"),
        sqlgate::engine::load::Layout::Shared,
        generated(),
        &sqlgate::util::workspace::Workspace::detect(generated()).unwrap(),
    )
    .unwrap();
    server
}

/// The server dialect's gold queries with how many return at least one row.
fn golds_with_rows(dialect: &Dialect, server: &Server) -> (usize, usize) {
    let gold = std::fs::read_to_string(
        common::bird_minidev::folder().join(format!("mini_dev_{}_gold.sql", dialect.files)),
    )
    .unwrap();
    let queries: Vec<&str> = gold
        .lines()
        .map(|l| l.rsplit_once('\t').unwrap().0)
        .collect();
    let url = server.reader_url("bird");
    let with_rows = match dialect.load_kind {
        sqlgate::engine::load::types::Server::Postgres => {
            let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
            queries
                .iter()
                .filter(|q| {
                    client.simple_query(q).is_ok_and(|messages| {
                        messages
                            .iter()
                            .any(|m| matches!(m, postgres::SimpleQueryMessage::Row(_)))
                    })
                })
                .count()
        }
        sqlgate::engine::load::types::Server::Mysql => {
            use mysql::prelude::Queryable;
            let mut conn = mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).unwrap();
            queries
                .iter()
                .filter(|q| {
                    conn.query::<mysql::Row, _>(**q)
                        .is_ok_and(|rows| !rows.is_empty())
                })
                .count()
        }
        sqlgate::engine::load::types::Server::Duckdb => unreachable!("{}", NOT_A_SERVER),
    };
    (with_rows, queries.len())
}

/// Each item's (prediction, gold) in the server's dialect.
fn pairs(dialect: &Dialect) -> Vec<[String; 2]> {
    let data = common::bird_minidev::folder();
    let gold =
        std::fs::read_to_string(data.join(format!("mini_dev_{}_gold.sql", dialect.files))).unwrap();
    let predictions: serde_json::Map<String, Json> = serde_json::from_str(
        &std::fs::read_to_string(data.join(format!(
            "predictions/predict_mini_dev_gpt-4-turbo_{}.json",
            dialect.files
        )))
        .unwrap(),
    )
    .unwrap();
    gold.lines()
        .zip(predictions.values())
        .map(|(g, p)| {
            let prediction = p
                .as_str()
                .unwrap()
                .split("\t----- bird -----\t")
                .next()
                .unwrap();
            [
                prediction.to_string(),
                g.rsplit_once('\t').unwrap().0.to_string(),
            ]
        })
        .collect()
}

/// A runner of queries on the server through the read-only role, rows as text.
fn runner(dialect: &Dialect, server: &Server) -> Box<common::ties::Run<'static>> {
    let url = server.reader_url("bird");
    match dialect.load_kind {
        sqlgate::engine::load::types::Server::Postgres => {
            let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
            Box::new(move |sql| {
                let messages = client.simple_query(sql).ok()?;
                Some(
                    messages
                        .iter()
                        .filter_map(|m| match m {
                            postgres::SimpleQueryMessage::Row(row) => Some(
                                (0..row.len())
                                    .map(|i| format!("{:?}", row.get(i)))
                                    .collect(),
                            ),
                            _ => None,
                        })
                        .collect(),
                )
            })
        }
        sqlgate::engine::load::types::Server::Mysql => {
            use mysql::prelude::Queryable;
            let mut conn = mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).unwrap();
            Box::new(move |sql| {
                let rows = conn.query::<mysql::Row, _>(sql).ok()?;
                Some(
                    rows.into_iter()
                        .map(|row| row.unwrap().into_iter().map(|v| format!("{v:?}")).collect())
                        .collect(),
                )
            })
        }
        sqlgate::engine::load::types::Server::Duckdb => unreachable!("{}", NOT_A_SERVER),
    }
}

/// The items whose prediction or gold cuts a tie under `ORDER BY ... LIMIT` (tests/it/common/ties.rs)
/// on a server that breaks ties per connection: it may return other rows to each scorer, so their
/// verdicts can differ run for run. Found from the rows at the cut, not by repeating executions.
fn tie_items(dialect: &Dialect, server: &Server) -> BTreeMap<usize, String> {
    if !dialect.ties_vary {
        return BTreeMap::new();
    }
    let pairs = pairs(dialect);
    let mut run = runner(dialect, server);
    let parser: Box<dyn sqlparser::dialect::Dialect> = match dialect.load_kind {
        sqlgate::engine::load::types::Server::Postgres => {
            Box::new(sqlparser::dialect::PostgreSqlDialect {})
        }
        sqlgate::engine::load::types::Server::Mysql => {
            Box::new(sqlparser::dialect::MySqlDialect {})
        }
        sqlgate::engine::load::types::Server::Duckdb => unreachable!("{}", NOT_A_SERVER),
    };
    (0..pairs.len())
        .filter(|index| {
            pairs[*index]
                .iter()
                .any(|sql| common::ties::cuts_a_tie(parser.as_ref(), run.as_mut(), sql))
        })
        .map(|index| (index, TIE_REASON.to_string()))
        .collect()
}

/// Why a tie item is left out when its verdicts differ (in the recording).
const TIE_REASON: &str = "its prediction or gold cuts a tie under ORDER BY ... LIMIT, which \
     MariaDB breaks differently on different connections";

/// sqlgate's per-item lines for GPT-4-turbo's predictions on the server.
fn sqlgate_items(dialect: &Dialect, url: &str, dir: &Path) -> Vec<Json> {
    let data = common::bird_minidev::folder();
    let config = format!(
        "dataset: {{ kind: bird, gold: {gold}, tables: {tables}, difficulty: 'field:difficulty', \
         allow_failing_golds: {allowed}, \
         engine: {{ kind: {kind}, url_env: BIRD_TEST_URL, layout: shared }} }}\n\
         predictions:\n  - {{ name: gpt-4-turbo, path: {predictions}, format: bird-json }}\n\
         metrics: [ex, soft_f1]\ncompare: {{ profile: bird }}\n\
         execution: {{ timeout_ms: 30000 }}\n",
        gold = data
            .join(format!("mini_dev_{}.json", dialect.files))
            .display(),
        tables = data.join("dev_tables.json").display(),
        kind = dialect.kind,
        allowed = dialect.failing_golds,
        predictions = data
            .join(format!(
                "predictions/predict_mini_dev_gpt-4-turbo_{}.json",
                dialect.files
            ))
            .display(),
    );
    let path = dir.join("sqlgate.yml");
    std::fs::write(&path, config).unwrap();
    let items = common::eval_items_with_env(&path, "BIRD_TEST_URL", url);
    let gold_errors: Vec<u64> = (items.iter())
        .filter(|line| line["outcome"]["ex"] == "gold_error")
        .map(|line| line["index"].as_u64().unwrap())
        .collect();
    assert_eq!(format!("{gold_errors:?}"), dialect.failing_golds);
    items
}

/// The official loop's per-item EX and Soft-F1 on the server: live with `SQLGATE_BIRD_OFFICIAL`,
/// else recorded (tests/it/common/official.rs).
fn official_items(dialect: &Dialect, server: &Server, url: &str, dir: &Path) -> Vec<Json> {
    let data = common::bird_minidev::folder();
    let predicted = data.join(format!(
        "predictions/predict_mini_dev_gpt-4-turbo_{}.json",
        dialect.files
    ));
    let gold = data.join(format!("mini_dev_{}_gold.sql", dialect.files));
    let inputs = [
        dialect.official.as_bytes().to_vec(),
        std::fs::read(&gold).unwrap(),
        std::fs::read(&predicted).unwrap(),
        common::bird_minidev::content_digest(generated()).into_bytes(),
    ];
    let comparison = common::official::Comparison {
        name: dialect.recording,
        inputs_sha256: sqlgate::util::digest::content_hash(inputs.iter().map(Vec::as_slice)),
        server: server
            .admin_sql("bird", "SELECT version()")
            .trim()
            .to_string(),
        unstable: tie_items(dialect, server),
    };
    println!(
        "{}: items that cut a tie: {:?}",
        dialect.official,
        comparison.unstable.keys().collect::<Vec<_>>()
    );
    common::official::verdicts(&comparison, || {
        common::official::items(dialect.official, &predicted, &gold, url, dir)
    })
}

/// What comparing sqlgate's verdicts with the official ones found.
struct Found {
    /// "item i metric: ..." for every verdict that differs (tie items excepted).
    differences: Vec<String>,
    /// Tie items whose verdicts differ, left out.
    left_out: Vec<usize>,
    /// Items compared and equal.
    equal: usize,
    /// Equal items the official EX counts correct.
    correct: usize,
}

/// Compares sqlgate's lines with the official verdicts, item by item; a tie item (recorded as
/// `left_out_when_different`) whose verdicts differ is left out.
fn compare(sqlgate: &[Json], official: &[Json]) -> Found {
    assert_eq!(sqlgate.len(), 500);
    assert_eq!(official.len(), 500);
    let mut found = Found {
        differences: Vec::new(),
        left_out: Vec::new(),
        equal: 0,
        correct: 0,
    };
    for (line, reference) in sqlgate.iter().zip(official) {
        let index = line["index"].as_u64().unwrap();
        assert_eq!(reference["index"].as_u64(), Some(index));
        let mut differences = Vec::new();
        for metric in ["ex", "soft_f1"] {
            let expected = reference[metric].as_f64().unwrap();
            let actual = common::official::as_official(line, metric);
            if actual != Some(expected) {
                differences.push(format!(
                    "item {index} {metric}: sqlgate {actual:?} ({}), official {expected}",
                    line["outcome"][metric]
                ));
            }
        }
        if differences.is_empty() {
            found.equal += 1;
            found.correct += usize::from(reference["ex"].as_f64() == Some(1.0));
        } else if reference.get(common::official::UNSTABLE).is_some() {
            found.left_out.push(index as usize);
        } else {
            found.differences.extend(differences);
        }
    }
    found
}

fn check(dialect: &Dialect) {
    let server = load_bird(dialect);
    let (with_rows, golds) = golds_with_rows(dialect, server);
    println!(
        "{}: {with_rows} of {golds} golds return rows",
        dialect.official
    );
    assert!(
        with_rows * 2 > golds,
        "{with_rows} of {golds} golds return rows"
    );
    let url = server.reader_url("bird");
    let dir = tempfile::tempdir().unwrap();
    let sqlgate = sqlgate_items(dialect, &url, dir.path());
    let official = official_items(dialect, server, &url, dir.path());
    let mut unstable: BTreeMap<&str, usize> = BTreeMap::new();
    for reason in sqlgate.iter().filter_map(|line| line["unstable"].as_str()) {
        *unstable.entry(reason).or_default() += 1;
    }
    println!("{}: unstable verdicts {unstable:?}", dialect.official);
    let found = compare(&sqlgate, &official);
    assert!(
        found.differences.is_empty(),
        "{} differences:\n{}",
        found.differences.len(),
        found.differences[..found.differences.len().min(30)].join("\n")
    );
    assert!(
        found.left_out.len() <= 5,
        "{} tie items differ",
        found.left_out.len()
    );
    println!(
        "{}: {} items equal, tie items that differ left out: {:?}; official EX {} / {}",
        dialect.official, found.equal, found.left_out, found.correct, found.equal
    );
    assert!(
        found.correct > 0 && found.correct < found.equal,
        "a comparison that means something"
    );
}

#[test]
fn postgresql_verdicts_equal_the_official_functions_item_by_item() {
    check(&POSTGRES);
}

#[test]
fn mariadb_verdicts_equal_the_official_functions_item_by_item() {
    check(&MARIADB);
}
