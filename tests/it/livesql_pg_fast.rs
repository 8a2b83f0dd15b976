//! Issue 46 on PostgreSQL, the rollback fast path: items that use what escapes or changes under
//! an outer transaction (a sequence, the transaction's time, a deferred constraint, VACUUM, a
//! write in a test case) take the slow path with the slow path's verdict, and no item's verdict
//! moves the next one's, the fast path on or off.

use crate::common::servers::{self, Server};
use crate::livesql_pg::{db_ids, item_testing, judge_run, load_databases, settings};
use sqlgate::engine::livesql::postgres::{Paths, PgRun, PgSettings};
use sqlgate::engine::livesql::Verdict;
use sqlgate::input::livesql::LiveItem;
use std::collections::BTreeMap;

/// An item on `db` whose one test runs `check` (a list of statements) and compares its rows
/// with `expected` (a Python literal).
fn item(id: &str, db: &str, check: &[&str], expected: &str) -> LiveItem {
    let test = format!(
        "def test_case(pred_sqls, sol_sqls, db_name, conn):\n    res, err, to = execute_queries({check:?}, db_name, conn, None, '')\n    assert not err and not to and res == {expected}, f'got {{res}} {{err}} {{to}}'\n    return 1\n"
    );
    item_testing(id, db, &test)
}

/// Judges `items` one after the other (in order, on one run with `fast_path`): their verdicts
/// and the run's paths.
fn judge_in_order(
    server: &Server,
    fast_path: bool,
    items: &[(LiveItem, Vec<String>)],
) -> (Vec<Verdict>, Paths) {
    let mut settings: PgSettings = settings(server);
    settings.fast_path = fast_path;
    let run = PgRun::start(settings, &db_ids()).unwrap();
    let verdicts = (items.iter())
        .map(|(item, prediction)| run.judge(item, Some(prediction)).unwrap())
        .collect();
    (verdicts, run.paths())
}

fn flags(verdict: &Verdict) -> (bool, bool, bool, bool) {
    (
        verdict.success,
        verdict.execution_error,
        verdict.timeout_error,
        verdict.assertion_error,
    )
}

/// The items of the escape test: each uses one thing that escapes or changes under an outer
/// transaction, followed by a read-only canary that checks the base data.
fn escaping_items() -> Vec<(LiveItem, Vec<String>)> {
    let one = |id: &str, check: &[&str], expected: &str, prediction: &[&str]| {
        let prediction = prediction.iter().map(|s| s.to_string()).collect();
        (item(id, "shop", check, expected), prediction)
    };
    let canary = |id: &str| {
        one(
            id,
            &["SELECT count(*), sum(stock) FROM products"],
            "[(10, 290)]",
            &["SELECT 1"],
        )
    };
    vec![
        // A sequence: nextval is not rolled back; each item sees a fresh sequence.
        one(
            "nextval",
            &["SELECT nextval('s'), nextval('s')"],
            "[(2, 3)]",
            &["CREATE SEQUENCE s", "SELECT nextval('s')"],
        ),
        canary("c1"),
        // The transaction's time: now() differs between two statements' transactions.
        one(
            "now",
            &["SELECT pg_sleep(0.05)", "SELECT now() > (SELECT t FROM at)"],
            "[(True,)]",
            &["CREATE TABLE at AS SELECT now() AS t"],
        ),
        one(
            "now-read",
            &["SELECT now() = now()"],
            "[(True,)]",
            &["SELECT now()"],
        ),
        canary("c2"),
        // A deferred constraint is checked at each statement's commit: the insert fails.
        one(
            "deferred",
            &["SELECT 1"],
            "[(1,)]",
            &[
                "CREATE TABLE p (id int PRIMARY KEY)",
                "CREATE TABLE c (pid int REFERENCES p DEFERRABLE INITIALLY DEFERRED)",
                "INSERT INTO c VALUES (1)",
            ],
        ),
        // VACUUM is refused in a transaction block: in the evaluator's own statement transaction
        // too, so it is an execution error on either path.
        one(
            "vacuum",
            &["SELECT count(*) FROM products"],
            "[(10,)]",
            &["VACUUM products"],
        ),
        canary("c3"),
        // A read-only prediction whose test case writes: refused part-way, judged again.
        one(
            "test-writes",
            &[
                "UPDATE products SET stock = 1 WHERE stock = 0",
                "SELECT sum(stock) FROM products",
            ],
            "[(292,)]",
            &["SELECT count(*) FROM products"],
        ),
        canary("c4"),
        // A test case's BEGIN (sent as a statement of its own, as the efficiency test does).
        one(
            "test-begin",
            &[
                "BEGIN",
                "UPDATE products SET stock = 0",
                "ROLLBACK",
                "SELECT sum(stock) FROM products",
            ],
            // Each statement its own transaction: the ROLLBACK ends the one it runs in, and
            // the UPDATE was committed before it.
            "[(0,)]",
            &["SELECT 1"],
        ),
        canary("c5"),
        // A write in the prediction, a read-only check: its change must not reach the canary.
        one(
            "write",
            &["SELECT sum(stock) FROM products"],
            "[(300,)]",
            &["UPDATE products SET stock = stock + 1"],
        ),
        canary("c6"),
    ]
}

/// The escaping items whose verdict is a failure (an execution error), the rest pass.
const FAILING: [&str; 2] = ["deferred", "vacuum"];

#[test]
fn what_escapes_a_transaction_takes_the_slow_path_with_the_slow_verdict() {
    let server = servers::postgres();
    load_databases(server);
    let items = escaping_items();
    let (slow, slow_paths) = judge_in_order(server, false, &items);
    let (fast, fast_paths) = judge_in_order(server, true, &items);
    for (((item, _), slow), fast) in items.iter().zip(&slow).zip(&fast) {
        assert_eq!(
            flags(fast),
            flags(slow),
            "{}: fast {fast:?}, slow {slow:?}",
            item.instance_id
        );
        let expected = !FAILING.contains(&item.instance_id.as_str());
        assert_eq!(slow.success, expected, "{}: {slow:?}", item.instance_id);
    }
    assert!(
        slow[5].execution_error,
        "the deferred insert: {:?}",
        slow[5]
    );
    assert!(slow[6].message.contains("VACUUM"), "{:?}", slow[6]);
    assert_eq!(slow_paths.slow, items.len());
    // Only the canaries are fast; `test-writes` and `test-begin` start fast and are refused.
    assert_eq!(
        fast_paths,
        Paths {
            fast: 6,
            refused: 2,
            slow: items.len() - 8,
            remade: 0
        }
    );
}

#[test]
fn a_function_that_advances_a_sequence_moves_no_later_verdict() {
    let server = servers::postgres();
    load_databases(server);
    // A function whose text names no sequence call (it builds `nextval` at run time), so the
    // database takes the fast path; only the check after the item sees the sequence moved.
    server.admin_sql(
        "shop",
        "CREATE SEQUENCE ticket; SELECT nextval('ticket'); \
         CREATE FUNCTION take_ticket() RETURNS bigint LANGUAGE plpgsql AS $f$ DECLARE v bigint; \
         BEGIN EXECUTE 'SELECT next' || 'val(''ticket'')' INTO v; RETURN v; END $f$;",
    );
    let taking = |id: &str| {
        let item = item(id, "shop", &["SELECT take_ticket()"], "[(3,)]");
        (item, vec!["SELECT take_ticket()".to_string()])
    };
    let items: Vec<_> = (0..4).map(|i| taking(&format!("t{i}"))).collect();
    let (fast, paths) = judge_in_order(server, true, &items);
    for verdict in &fast {
        assert!(verdict.success, "{verdict:?}");
    }
    // Each item either was refused (the sequence's WAL record assigned a transaction id) or
    // left its clone to be made again (the fingerprint differed): none was kept as it was.
    assert_eq!(paths.fast + paths.refused, items.len(), "{paths:?}");
    assert_eq!(paths.remade, paths.fast, "{paths:?}");
    load_databases(server);
}

#[test]
fn no_item_moves_the_next_in_a_parallel_run_on_the_corpus_databases() {
    let server = servers::postgres();
    load_databases(server);
    let items = escaping_items();
    let predictions: BTreeMap<String, Vec<String>> = (items.iter())
        .map(|(item, prediction)| (item.instance_id.clone(), prediction.clone()))
        .collect();
    let list: Vec<LiveItem> = items.iter().map(|(item, _)| item.clone()).collect();
    let (verdicts, _) = judge_run(server, settings(server), &list, &predictions);
    for item in &list {
        let verdict = &verdicts[&item.instance_id];
        assert_eq!(
            verdict.success,
            !FAILING.contains(&item.instance_id.as_str()),
            "{}: {verdict:?}",
            item.instance_id
        );
    }
}
