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
use crate::server_session::pull_request_on;
use common::servers::{self, Server};
use common::trust_flow::*;

/// The reasons a lever's prediction is not credited: an order, a value the plan decides.
const ORDER: &str = "prediction-order";
const VALUE: &str = "prediction-value";

/// Asserts the exit code `code` of `output`, printing everything on failure.
fn expect(output: &std::process::Output, code: i32) {
    eprintln!("{}", text(output));
    assert_eq!(output.status.code(), Some(code), "{}", text(output));
}

/// Asserts that the gate named the lever's item (the last, index 6) as a changed prediction
/// right only by the plan's choice (`reason`: `prediction-order`, `prediction-value`), not
/// credited.
fn expect_not_credited(output: &std::process::Output, reason: &str) {
    let all = text(output);
    assert!(
        all.contains(&format!("unstable, not credited: item 6 ({reason})")),
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

/// What the base commit changes in the benchmark before its baseline is recorded.
pub(crate) type Setup = fn(&std::path::Path);

/// The base's benchmark as the fixture writes it.
pub(crate) fn unchanged(_: &std::path::Path) {}

/// As [`judge`], on the base `setup` changes.
pub(crate) fn judge_on(
    setup: Setup,
    (server, database): (&'static Server, &str),
    lever: &Lever,
    prepare: &str,
) -> std::process::Output {
    let _shared = GLOBALS.read().unwrap_or_else(|e| e.into_inner());
    let pull = prepared(server, database, prepare);
    pull_request_on(server, database, lever, (&[], &setup), pull)
}

/// The three runs of the statistics lever `prepare` on `server`: the `wrong` prediction regresses
/// without the lever (database `{database}_control`) and with it, named not credited for
/// `reason` (`database`); the `right` prediction, whose order (and values) are fixed, passes
/// with it (`{database}_right`).
fn check_plan_lever(
    (setup, server, reason): (Setup, &'static Server, &str),
    database: &str,
    (question, wrong, right): (&'static str, &'static str, &'static str),
    prepare: &str,
) {
    let (wrong, right) = (asked(question, wrong), asked(question, right));
    let control = format!("{database}_control");
    expect(&judge_on(setup, (server, &control), &wrong, ""), 1);
    let judged = judge_on(setup, (server, database), &wrong, prepare);
    expect(&judged, 1);
    expect_not_credited(&judged, reason);
    let right_database = format!("{database}_right");
    expect(
        &judge_on(setup, (server, &right_database), &right, prepare),
        0,
    );
}

/// An order-dependent aggregate over `SELECT DISTINCT` (no LIMIT): PostgreSQL's hash table
/// follows the planner's estimate of the number of groups, so statistics gathered over rows
/// inserted and deleted again flip the order in which `ada` and `bob` come out of it.
pub(crate) const AGG_QUESTION: &str =
    "SELECT string_agg(name, ',' ORDER BY name DESC) FROM customers";
const AGG_WRONG: &str = "SELECT string_agg(name, ',') FROM (SELECT DISTINCT name FROM customers) s";
const AGG_RIGHT: &str =
    "SELECT string_agg(name, ',' ORDER BY name DESC) FROM (SELECT DISTINCT name FROM customers) s";
pub(crate) const AGG_STATISTICS: &str = "INSERT INTO customers SELECT g, 'x' || (g % 3) \
     FROM generate_series(3, 1000) g; ANALYZE customers; DELETE FROM customers WHERE id > 2;";
/// A table rewrite (`SET ACCESS METHOD` to the heap handler under another name) leaves the row
/// count unknown to the planner until the next `ANALYZE`, which changes the same hash order.
const TABLE_REWRITE: &str = "CREATE ACCESS METHOD heap2 TYPE TABLE HANDLER heap_tableam_handler; \
     ALTER TABLE customers SET ACCESS METHOD heap2;";

#[test]
fn postgres_statistics_ordering_an_unordered_aggregate_earn_no_credit() {
    let levers = (AGG_QUESTION, AGG_WRONG, AGG_RIGHT);
    let postgres = (unchanged as Setup, servers::postgres(), ORDER);
    check_plan_lever(postgres, "so_agg", levers, AGG_STATISTICS);
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
    expect_not_credited(&judged, ORDER);
}

/// The `strict` profile compares rows in order when the gold's outermost query has ORDER BY; a
/// prediction without it returns `SELECT DISTINCT`'s hash order, which the same statistics flip.
const ORDERED_QUESTION: &str = "SELECT name FROM customers ORDER BY name DESC";
const ORDERED_WRONG: &str = "SELECT DISTINCT name FROM customers";
const ORDERED_RIGHT: &str = "SELECT DISTINCT name FROM customers ORDER BY 1 DESC";
const STRICT: (&str, &str) = ("profile: bird", "profile: strict");

/// The base's two configs (gate and load) compare with the `strict` profile (the deployer's
/// choice).
pub(crate) fn strict(root: &std::path::Path) {
    let (from, to) = STRICT;
    for file in ["sqlgate.yml", "sqlgate-load.yml"] {
        let config = std::fs::read_to_string(root.join(file)).unwrap();
        assert!(config.contains(from), "{config}");
        std::fs::write(root.join(file), config.replace(from, to)).unwrap();
    }
}

#[test]
fn postgres_statistics_ordering_rows_an_ordered_comparison_reads_earn_no_credit() {
    let levers = (ORDERED_QUESTION, ORDERED_WRONG, ORDERED_RIGHT);
    let strict = (strict as Setup, servers::postgres(), ORDER);
    check_plan_lever(strict, "so_ordered", levers, AGG_STATISTICS);
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
pub(crate) const JOIN_STATISTICS: &str =
    "REPLACE INTO mysql.table_stats (db_name, table_name, cardinality) \
     VALUES ('{db}', 'customers', 1000000); FLUSH TABLES;";

#[test]
fn mariadb_statistics_reordering_a_join_under_group_concat_earn_no_credit() {
    let levers = (JOIN_QUESTION, JOIN_WRONG, JOIN_RIGHT);
    let mariadb = (unchanged as Setup, servers::mariadb(), ORDER);
    check_plan_lever(mariadb, "so_join", levers, JOIN_STATISTICS);
}

/// Values the plan decides (red team round 8): on a base whose customer 3 is `ADA` (equal to
/// `ada` under MariaDB's case-insensitive collation) and placed the first order in the heap, a
/// `SELECT DISTINCT` keeps whichever of `ada` and `ADA` the join meets first, and a bare column
/// beside `GROUP BY o.item_id` any row's name; the statistics lever ([`JOIN_STATISTICS`]) turns
/// the join around, so both return `ada` (the gold's) only under it. Each is a value the plan
/// picks (`prediction-value`); the right prediction groups by the customer's key, which fixes
/// the name, and passes.
pub(crate) const TIE_QUESTION: &str = "SELECT name FROM customers WHERE id = 1";
const TIE_DISTINCT: &str = "SELECT DISTINCT c.name FROM customers c JOIN orders o \
     ON o.customer_id = c.id WHERE c.name = 'ada'";
const TIE_BARE: &str = "SELECT c.name FROM customers c JOIN orders o ON o.customer_id = c.id \
     WHERE o.item_id = 1 GROUP BY o.item_id";
const TIE_RIGHT: &str = "SELECT c.name FROM customers c JOIN orders o ON o.customer_id = c.id \
     WHERE c.id = 1 GROUP BY c.id";

/// The base's benchmark with customer 3 `ADA`, who placed the first order in the heap (item 1,
/// which customer 1 ordered too).
pub(crate) fn tied_customer(root: &std::path::Path) {
    let db = rusqlite::Connection::open(root.join("bird/dev_databases/shop/shop.sqlite")).unwrap();
    db.execute_batch(
        "INSERT INTO customers VALUES (3, 'ADA'); DELETE FROM orders; \
         INSERT INTO orders VALUES (4, 3, 1), (1, 1, 2), (2, 2, 3), (3, 1, 1);",
    )
    .unwrap();
}

#[test]
fn mariadb_statistics_picking_among_case_insensitive_ties_earn_no_credit() {
    let mariadb = (tied_customer as Setup, servers::mariadb(), VALUE);
    let levers = (TIE_QUESTION, TIE_DISTINCT, TIE_RIGHT);
    check_plan_lever(mariadb, "so_ci", levers, JOIN_STATISTICS);
}

#[test]
fn mariadb_statistics_picking_a_bare_column_earn_no_credit() {
    let mariadb = (tied_customer as Setup, servers::mariadb(), VALUE);
    let levers = (TIE_QUESTION, TIE_BARE, TIE_RIGHT);
    check_plan_lever(mariadb, "so_bare", levers, JOIN_STATISTICS);
}
