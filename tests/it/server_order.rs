//! Row orders no LIMIT cuts, on real servers (issue 44, class 3; red team round 7's wins): a
//! regressing pull request run through docs/ACTION.md's server workflow
//! (tests/it/common/trust_flow.rs) whose server preparation, run as the superuser just before
//! the gate, changes planner statistics (`ANALYZE` over rows inserted and deleted again,
//! MariaDB's `mysql.table_stats`, a table rewrite that forgets the row count) so that the order
//! in which rows reach an order-dependent aggregate, or the order an ordered comparison reads,
//! makes its wrong prediction score as the gold does. The prediction's verdict is unstable by
//! order (`prediction-order`), so on a server the changed prediction earns no credit from it:
//! exit 1. Each has a control (the same pull request without the lever, exit 1) and a pull
//! request whose changed prediction is right and order-determined, which still passes (exit 0).

use crate::common;

use crate::server_levers::{judge_lever as judge, prepared, Lever, GLOBALS};
use common::git;
use common::servers::{self, Server};
use common::trust_flow::*;

/// Asserts the exit code `code` of `output`, printing everything on failure.
fn expect(output: &std::process::Output, code: i32) {
    eprintln!("{}", text(output));
    assert_eq!(output.status.code(), Some(code), "{}", text(output));
}

/// Asserts that the gate named the lever's item (the last, index 6) as a changed prediction
/// right only by an undetermined order (`prediction-order`), not credited.
fn expect_not_credited(output: &std::process::Output) {
    let all = text(output);
    assert!(
        all.contains("unstable, not credited: item 6 (prediction-order)"),
        "{all}"
    );
}

/// `question` asked and answered by `prediction`.
fn asked(question: &'static str, prediction: &'static str) -> Lever {
    Lever {
        question,
        wrong: prediction,
        names: "",
    }
}

/// How a test judges the pull request: [`judge`] or [`judge_strict`].
type Judge = fn(&'static Server, &str, &Lever, &str) -> std::process::Output;

/// The three runs of the statistics lever `prepare` on `server`: the `wrong` prediction regresses
/// without the lever (database `{database}_control`) and with it, named not credited
/// (`database`); the `right` prediction, whose order is fixed, passes with it
/// (`{database}_right`).
fn check_order_lever(
    (judge, server): (Judge, &'static Server),
    database: &str,
    (question, wrong, right): (&'static str, &'static str, &'static str),
    prepare: &str,
) {
    let (wrong, right) = (asked(question, wrong), asked(question, right));
    expect(
        &judge(server, &format!("{database}_control"), &wrong, ""),
        1,
    );
    let judged = judge(server, database, &wrong, prepare);
    expect(&judged, 1);
    expect_not_credited(&judged);
    expect(
        &judge(server, &format!("{database}_right"), &right, prepare),
        0,
    );
}

/// An order-dependent aggregate over `SELECT DISTINCT` (no LIMIT): PostgreSQL's hash table
/// follows the planner's estimate of the number of groups, so statistics gathered over rows
/// inserted and deleted again flip the order in which `ada` and `bob` come out of it.
const AGG_QUESTION: &str = "SELECT string_agg(name, ',' ORDER BY name DESC) FROM customers";
const AGG_WRONG: &str = "SELECT string_agg(name, ',') FROM (SELECT DISTINCT name FROM customers) s";
const AGG_RIGHT: &str =
    "SELECT string_agg(name, ',' ORDER BY name DESC) FROM (SELECT DISTINCT name FROM customers) s";
const AGG_STATISTICS: &str = "INSERT INTO customers SELECT g, 'x' || (g % 3) \
     FROM generate_series(3, 1000) g; ANALYZE customers; DELETE FROM customers WHERE id > 2;";
/// A table rewrite (`SET ACCESS METHOD` to the heap handler under another name) leaves the row
/// count unknown to the planner until the next `ANALYZE`, which changes the same hash order.
const TABLE_REWRITE: &str = "CREATE ACCESS METHOD heap2 TYPE TABLE HANDLER heap_tableam_handler; \
     ALTER TABLE customers SET ACCESS METHOD heap2;";

#[test]
fn postgres_statistics_ordering_an_unordered_aggregate_earn_no_credit() {
    let levers = (AGG_QUESTION, AGG_WRONG, AGG_RIGHT);
    let postgres = (judge as Judge, servers::postgres());
    check_order_lever(postgres, "so_agg", levers, AGG_STATISTICS);
}

#[test]
fn postgres_a_table_rewrite_ordering_an_unordered_aggregate_earns_no_credit() {
    let judged = judge(
        servers::postgres(),
        "so_table_am",
        &asked(AGG_QUESTION, AGG_WRONG),
        TABLE_REWRITE,
    );
    expect(&judged, 1);
    expect_not_credited(&judged);
}

/// The `strict` profile compares rows in order when the gold's outermost query has ORDER BY; a
/// prediction without it returns `SELECT DISTINCT`'s hash order, which the same statistics flip.
const ORDERED_QUESTION: &str = "SELECT name FROM customers ORDER BY name DESC";
const ORDERED_WRONG: &str = "SELECT DISTINCT name FROM customers";
const ORDERED_RIGHT: &str = "SELECT DISTINCT name FROM customers ORDER BY 1 DESC";
const STRICT: (&str, &str) = ("profile: bird", "profile: strict");

/// [`crate::server_levers::pull_request_with`] on a benchmark whose two configs (gate and load) have `from` replaced
/// by `to` on the base commit (the deployer's choice, here another comparison profile).
fn pull_request_configured(
    server: &'static Server,
    database: &str,
    lever: &Lever,
    (from, to): (&str, &str),
    pull: impl FnOnce(),
) -> std::process::Output {
    fresh_database(server, database);
    let mut gold: Vec<&str> = GOLD.to_vec();
    gold.push(lever.question);
    let dir = repository_with(server.kind, &gold);
    let root = dir.path();
    for file in ["sqlgate.yml", "sqlgate-load.yml"] {
        let config = std::fs::read_to_string(root.join(file)).unwrap();
        assert!(config.contains(from), "{config}");
        std::fs::write(root.join(file), config.replace(from, to)).unwrap();
    }
    git(root, &["commit", "-qam", "configured"]);
    let push = Run::push(server, database, root);
    let recorded = push.workflow(root);
    assert!(recorded.status.success(), "{}", text(&recorded));
    git(root, &["add", "baseline.json"]);
    git(root, &["commit", "-qm", "baseline"]);
    let base = git(root, &["rev-parse", "HEAD"]);
    git(root, &["checkout", "-qb", "hostile"]);
    let mut predictions = gold.clone();
    *predictions.last_mut().unwrap() = lever.wrong;
    std::fs::write(root.join("preds/model.txt"), predictions.join("\n") + "\n").unwrap();
    git(root, &["commit", "-qam", "a changed prediction"]);
    let pull_request = Run::pull_request(server, database, base);
    pull_request.workflow_with(root, pull)
}

/// As [`judge`], on a base whose configs compare with the `strict` profile.
fn judge_strict(
    server: &'static Server,
    database: &str,
    lever: &Lever,
    prepare: &str,
) -> std::process::Output {
    let _shared = GLOBALS.read().unwrap_or_else(|e| e.into_inner());
    pull_request_configured(
        server,
        database,
        lever,
        STRICT,
        prepared(server, database, prepare),
    )
}

#[test]
fn postgres_statistics_ordering_rows_an_ordered_comparison_reads_earn_no_credit() {
    let levers = (ORDERED_QUESTION, ORDERED_WRONG, ORDERED_RIGHT);
    let strict = (judge_strict as Judge, servers::postgres());
    check_order_lever(strict, "so_ordered", levers, AGG_STATISTICS);
}

/// MariaDB: the engine-independent statistics (`mysql.table_stats`) say `customers` has a
/// million rows, so the optimizer joins `orders` first and buffers `customers`: `GROUP_CONCAT`
/// without ORDER BY then meets the names in another order. No row, index or setting changes.
const JOIN_QUESTION: &str = "SELECT GROUP_CONCAT(c.name ORDER BY c.name) FROM customers c \
     JOIN orders o ON o.customer_id = c.id";
const JOIN_WRONG: &str =
    "SELECT GROUP_CONCAT(c.name) FROM customers c JOIN orders o ON o.customer_id = c.id";
const JOIN_RIGHT: &str = "SELECT GROUP_CONCAT(c.name ORDER BY c.name SEPARATOR ',') \
     FROM orders o JOIN customers c ON c.id = o.customer_id";
const JOIN_STATISTICS: &str = "REPLACE INTO mysql.table_stats (db_name, table_name, cardinality) \
     VALUES ('{db}', 'customers', 1000000); FLUSH TABLES;";

#[test]
fn mariadb_statistics_reordering_a_join_under_group_concat_earn_no_credit() {
    let levers = (JOIN_QUESTION, JOIN_WRONG, JOIN_RIGHT);
    let mariadb = (judge as Judge, servers::mariadb());
    check_order_lever(mariadb, "so_join", levers, JOIN_STATISTICS);
}
