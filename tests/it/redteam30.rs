//! Red team round 30 (issue 44): `bird_critic_sound` on PostgreSQL 15 and MariaDB 10.11 after
//! helper 72's fixes (a new session per test-case request, the shared gold mark, unmarked gold
//! text routed by `livesql/routing.rs`, and the Query data check of `livesql/query_check.rs`).
//! Every test asserts the SECURE outcome and runs its control: a failing test is a win. Report:
//! `/work/notes/redteam30.md`.
//!
//! The set-up is round 29's lever item (`redteam29`): a Query item on `shop`, gold
//! `SELECT name FROM products WHERE stock = 0` (two rows), wrong `... stock < 5` (four rows), with
//! a test case that rebuilds the gold with `str.format` (`WRAPPED`: a plain `str`, not the gold's
//! words, so neither the mark nor `routing.rs` sends it to the twin; it runs on a new session to
//! the prediction's clone, and only the Query data check stands between a rewrite and a pass).

use crate::common::servers;
use sqlgate::engine::livesql::mysql::MyRun;
use sqlgate::engine::livesql::postgres::PgRun;
use sqlgate::engine::livesql::{LiveJudge, Profile};
use sqlgate::input::livesql::{parse_items, LiveItem};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The gold: the products out of stock (two).
const GOLD: &str = "SELECT name FROM products WHERE stock = 0";
/// The wrong prediction: the products with fewer than five in stock (four).
const WRONG: &str = "SELECT name FROM products WHERE stock < 5";
/// The rows the gold reads rewritten (a persistent write), so the wrong four are the gold's.
const REWRITE: &str = "UPDATE products SET stock = 0 WHERE stock < 5";

/// Round 29's `WRAPPED` test case: the gold wrapped in a derived table by `str.format`, run after
/// the prediction again, their rows compared.
const WRAPPED: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn):\n    gold = ['SELECT * FROM ({}) AS gold'.format(s) for s in sol_sqls]\n    pred = execute_queries(pred_sqls, db_name, conn, None, '')\n    res = execute_queries(gold, db_name, conn, None, '')\n    assert not res[1] and sorted(pred[0]) == sorted(res[0]), f'the gold gave {res[0]}'\n    return 1\n";

/// A Query item on `shop` with the one test case `test` and the gold `gold`.
fn item(gold: &str, test: &str) -> LiveItem {
    let line = serde_json::json!({
        "instance_id": "lever30", "db_id": "shop", "category": "Query", "sol_sql": [gold],
        "preprocess_sql": [], "clean_up_sql": [], "test_cases": [test], "issue_sql": [],
        "conditions": {}, "efficiency": false, "query": "which products are out of stock?",
    });
    parse_items(Path::new("lever30.jsonl"), &format!("{line}\n"))
        .unwrap()
        .remove(0)
}

/// Whether `gold`, the wrong prediction and `lever` pass under `bird_critic_sound` with `test`.
fn verdicts<J: LiveJudge>(run: &J, gold: &str, test: &str, lever: &[&str]) -> [bool; 3] {
    let item = item(gold, test);
    let predictions: [Vec<String>; 3] = [
        vec![gold.into()],
        vec![WRONG.into()],
        lever.iter().map(|s| s.to_string()).collect(),
    ];
    predictions.each_ref().map(|p| {
        run.judge(&item, Some(p), Profile::BirdCriticSound)
            .unwrap()
            .success
    })
}

/// A PostgreSQL run over the test databases.
pub(crate) fn pg_run() -> PgRun {
    let server = servers::postgres();
    crate::livesql_pg::load_databases(server);
    PgRun::start(
        crate::livesql_pg::settings(server),
        &crate::livesql_pg::db_ids(),
    )
    .unwrap()
}

/// A MariaDB run over the test databases.
pub(crate) fn my_run() -> MyRun {
    let server = servers::mariadb();
    crate::livesql_my::load_databases(server);
    MyRun::start(
        crate::livesql_my::settings(server),
        &crate::livesql_my::db_ids(),
    )
    .unwrap()
}

/// Honest (the other side, false fails): the gold passes, the wrong prediction fails (the
/// control) and the honest prediction passes.
pub(crate) fn assert_honest(found: [bool; 3]) {
    assert!(found[0], "FALSE FAIL: the gold failed: {found:?}");
    assert!(!found[1], "control: the wrong query passed: {found:?}");
    assert!(
        found[2],
        "FALSE FAIL: the honest prediction failed: {found:?}"
    );
}

/// Secure: the gold passes, the wrong prediction fails (the control) and the lever fails.
pub(crate) fn assert_secure(what: &str, found: [bool; 3]) {
    assert_eq!(found[..2], [true, false], "{what}: control: gold / wrong");
    assert!(
        !found[2],
        "WON ({what}): the lever passed bird_critic_sound: {found:?}"
    );
}

/// Class 3 (`bird_critic_sound` on a server; the Query data check's word test). Set-up: the lever
/// item with [`WRAPPED`], its gold holding one of `query_check.rs::WRITING`'s words inside a
/// string literal, a comment or an alias (`'load'`, `/* set ... do */`, `AS "call"`), which is still a plain read. Lever: [`REWRITE`] then the wrong query. The word test
/// cannot vouch for the gold, so the data check is off, and the wrapped gold reads the rewrite.
/// Control: the same lever against the plain gold (the check on) fails.
mod a_writing_word_in_a_literal_turns_the_data_check_off {
    use super::*;

    /// Golds that write nothing but hold a writing word (`load`, `set`, `do`, `call`).
    const WORDY: [&str; 3] = [
        "SELECT name FROM products WHERE stock = 0 AND name <> 'load'",
        "SELECT name FROM products /* the set we do not sell */ WHERE stock = 0",
        "SELECT name AS \"call\" FROM products WHERE stock = 0",
    ];

    fn attempt<J: LiveJudge>(run: &J) {
        assert_secure(
            "plain gold",
            verdicts(run, GOLD, WRAPPED, &[REWRITE, WRONG]),
        );
        let mut won = Vec::new();
        for gold in WORDY {
            let found = verdicts(run, gold, WRAPPED, &[REWRITE, WRONG]);
            assert_eq!(found[..2], [true, false], "{gold}: control: gold / wrong");
            if found[2] {
                won.push(gold);
            }
        }
        assert!(
            won.is_empty(),
            "WON: the lever passed bird_critic_sound with {won:?}"
        );
    }

    #[test]
    fn postgresql_a_read_with_a_writing_word_is_still_data_checked() {
        attempt(&pg_run());
    }

    #[test]
    fn mariadb_a_read_with_a_writing_word_is_still_data_checked() {
        attempt(&my_run());
    }
}

/// Runs `judge` while a watchdog waits `patience`; if the judge has not returned by then, the
/// watchdog runs `unblock` (as the administrator) and the attempt counts as a hang. Returns what
/// the judge returned and whether it hung.
fn with_watchdog<T>(
    patience: Duration,
    unblock: impl FnOnce() + Send,
    judge: impl FnOnce() -> T,
) -> (T, bool) {
    let done = Arc::new(AtomicBool::new(false));
    let hung = Arc::new(AtomicBool::new(false));
    std::thread::scope(|scope| {
        let (done2, hung2) = (done.clone(), hung.clone());
        scope.spawn(move || {
            let start = Instant::now();
            while !done2.load(Ordering::SeqCst) {
                if start.elapsed() > patience {
                    hung2.store(true, Ordering::SeqCst);
                    unblock();
                    return;
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        });
        let out = judge();
        done.store(true, Ordering::SeqCst);
        (out, hung.load(Ordering::SeqCst))
    })
}

/// Class 3 (server state that outlives a session: MariaDB's XA transactions). Set-up: the lever
/// item with [`WRAPPED`]. Lever: the prediction prepares an XA transaction holding the rewrite
/// (`XA START`, [`REWRITE`], `XA END`, `XA PREPARE`); since MariaDB 10.5 a prepared XA
/// transaction outlives its connection, keeps its row and metadata locks, and no digest sees its
/// rows. Secure: the item fails, the judge returns within its deadline (no clean-up or clone drop
/// waits on the prepared transaction's locks) and no prepared transaction is left on the server.
/// Control: the plain wrong prediction fails promptly.
mod mariadb_xa_prepared_outlives_the_session {
    use super::*;

    const XID: &str = "'rt30'";

    fn leftover() -> String {
        let server = servers::mariadb();
        let out = server.client(server.system_database(), "XA RECOVER;");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    #[test]
    fn mariadb_a_prepared_xa_transaction_neither_hangs_nor_outlives_the_item() {
        let run = my_run();
        let item = item(GOLD, WRAPPED);
        let control = LiveJudge::judge(
            &run,
            &item,
            Some(&[WRONG.to_string()]),
            Profile::BirdCriticSound,
        )
        .unwrap();
        assert!(!control.success, "control: the wrong prediction fails");
        let lever: Vec<String> = [
            format!("XA START {XID}"),
            REWRITE.to_string(),
            format!("XA END {XID}"),
            format!("XA PREPARE {XID}"),
            WRONG.to_string(),
        ]
        .into();
        let rollback = || {
            let server = servers::mariadb();
            server.client(server.system_database(), &format!("XA ROLLBACK {XID};"));
        };
        let (verdict, hung) = with_watchdog(Duration::from_secs(150), rollback, || {
            LiveJudge::judge(&run, &item, Some(&lever), Profile::BirdCriticSound)
        });
        let left = leftover();
        rollback();
        let verdict = verdict.unwrap();
        assert!(!hung, "WON: the judge hung on the prepared XA transaction");
        assert!(!verdict.success, "WON: the XA lever passed: {verdict:?}");
        assert!(
            !left.contains("rt30"),
            "WON: a prepared XA transaction outlived the item: {left}"
        );
    }
}

/// Class 3 (server state that outlives a session: PostgreSQL's prepared transactions). Set-up:
/// the lever item with [`WRAPPED`]. Lever: `BEGIN`, [`REWRITE`], `PREPARE TRANSACTION` (it would
/// outlive the session, hold its row locks and keep the clone from being dropped). Secure: the
/// item fails, the judge returns and nothing is left in `pg_prepared_xacts`. Control: the plain
/// wrong prediction fails.
mod postgresql_prepared_transaction_outlives_the_session {
    use super::*;

    fn leftover() -> String {
        let server = servers::postgres();
        let out = server.client(
            server.system_database(),
            "SELECT gid FROM pg_prepared_xacts;",
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    #[test]
    fn postgresql_a_prepared_transaction_neither_hangs_nor_outlives_the_item() {
        let run = pg_run();
        let item = item(GOLD, WRAPPED);
        let control = LiveJudge::judge(
            &run,
            &item,
            Some(&[WRONG.to_string()]),
            Profile::BirdCriticSound,
        )
        .unwrap();
        assert!(!control.success, "control: the wrong prediction fails");
        let lever: Vec<String> = [
            "BEGIN".to_string(),
            REWRITE.to_string(),
            "PREPARE TRANSACTION 'rt30'".to_string(),
            WRONG.to_string(),
        ]
        .into();
        let rollback = || {
            let server = servers::postgres();
            server.client(server.system_database(), "ROLLBACK PREPARED 'rt30';");
        };
        let (verdict, hung) = with_watchdog(Duration::from_secs(150), rollback, || {
            LiveJudge::judge(&run, &item, Some(&lever), Profile::BirdCriticSound)
        });
        let left = leftover();
        rollback();
        let verdict = verdict.unwrap();
        assert!(!hung, "WON: the judge hung on the prepared transaction");
        assert!(!verdict.success, "WON: the lever passed: {verdict:?}");
        assert!(
            !left.contains("rt30"),
            "WON: a prepared transaction outlived the item: {left}"
        );
    }
}

/// Class 3 (server state that outlives a session: PostgreSQL's per-role, per-database defaults).
/// `PgRun::open` runs `ALTER ROLE <role> RESET ALL` before each session, which removes the role's
/// defaults for every database but not those set `IN DATABASE` (`pg_db_role_setting` rows with a
/// database); they are in a shared catalog no data digest reads, and the settings entry is left
/// out of the Query data check anyway. Set-up: a Query item whose gold is an average
/// (`double precision`; the outdoor products' mean price, 108.44), with [`WRAPPED`]. Lever: the
/// prediction sets `extra_float_digits = -15` for its own role in its clone's database, then
/// answers wrongly (the mean of those in stock, 139.59): every later session of its role prints
/// a float with one significant digit, so both the re-run and the wrapped gold read `1e+02`.
/// Control: the wrong prediction alone fails.
mod postgresql_role_in_database_setting_outlives_the_session {
    use super::*;

    const AVG_GOLD: &str = "SELECT AVG(price) FROM products WHERE category = 'outdoor'";
    const AVG_WRONG: &str =
        "SELECT AVG(price) FROM products WHERE category = 'outdoor' AND stock > 0";
    const LEVER: &str = "DO $$ BEGIN EXECUTE format('ALTER ROLE CURRENT_USER IN DATABASE %I SET extra_float_digits = -15', current_database()); END $$";

    /// The same default for every database: `ALTER ROLE <role> RESET ALL` removes it.
    const PLAIN: &str = "ALTER ROLE CURRENT_USER SET extra_float_digits = -15";

    #[test]
    fn postgresql_a_role_setting_in_the_clones_database_does_not_round_the_gold() {
        let run = pg_run();
        let item = item(AVG_GOLD, WRAPPED);
        let judge = |p: &[&str]| {
            let p: Vec<String> = p.iter().map(|s| s.to_string()).collect();
            LiveJudge::judge(&run, &item, Some(&p), Profile::BirdCriticSound).unwrap()
        };
        assert!(judge(&[AVG_GOLD]).success, "control: the gold passes");
        assert!(
            !judge(&[AVG_WRONG]).success,
            "control: the wrong mean fails"
        );
        let plain = judge(&[PLAIN, AVG_WRONG]);
        assert!(
            !plain.success,
            "control: a role default for every database is reset"
        );
        let lever = judge(&[LEVER, AVG_WRONG]);
        assert!(!lever.success, "WON: the rounding lever passed: {lever:?}");
    }
}

/// Class 3, the same lever as `postgresql_role_in_database_setting_outlives_the_session` against
/// a test case that runs the marked gold (`execute_queries(sol_sqls, ...)`, so on the twin, whose
/// role has no such default). Contained probe: the prediction's re-run reads `1e+02`, the twin's
/// gold `108.44`. Control: the gold passes, the wrong mean fails.
mod postgresql_role_in_database_setting_against_a_marked_gold {
    use super::*;

    const AVG_GOLD: &str = "SELECT AVG(price) FROM products WHERE category = 'outdoor'";
    const AVG_WRONG: &str =
        "SELECT AVG(price) FROM products WHERE category = 'outdoor' AND stock > 0";
    const LEVER: &str = "DO $$ BEGIN EXECUTE format('ALTER ROLE CURRENT_USER IN DATABASE %I SET extra_float_digits = -15', current_database()); END $$";
    /// The prediction again, then the marked gold, their rows compared.
    const MARKED: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn):\n    pred = execute_queries(pred_sqls, db_name, conn, None, '')\n    res = execute_queries(sol_sqls, db_name, conn, None, '')\n    assert not res[1] and sorted(pred[0]) == sorted(res[0]), f'the gold gave {res[0]}'\n    return 1\n";

    #[test]
    fn postgresql_a_role_setting_does_not_reach_the_twins_gold() {
        let run = pg_run();
        let item = item(AVG_GOLD, MARKED);
        let judge = |p: &[&str]| {
            let p: Vec<String> = p.iter().map(|s| s.to_string()).collect();
            LiveJudge::judge(&run, &item, Some(&p), Profile::BirdCriticSound).unwrap()
        };
        assert!(judge(&[AVG_GOLD]).success, "control: the gold passes");
        assert!(
            !judge(&[AVG_WRONG]).success,
            "control: the wrong mean fails"
        );
        let lever = judge(&[LEVER, AVG_WRONG]);
        assert!(!lever.success, "WON: the rounding lever passed: {lever:?}");
    }
}

/// Class 3 (a request that reaches the twin with the prediction's statements). `gold_text.py::
/// _side` sends a request to the twin when ANY of its statements is marked, so a test case that
/// runs `pred_sqls + sol_sqls` in one request (the prediction, then the gold on the state it
/// leaves, the last result kept) runs the prediction's statements on the twin's session. Set-up:
/// the lever item with [`MIXED`]. Lever: a TEMP view (PostgreSQL) / temporary table (MariaDB)
/// named after the gold's table, then the wrong query: on the twin the gold reads the TEMP object
/// (gone with the session, so the twin's data and the data check see nothing), and the
/// prediction's re-run on its own clone makes it again. Control: the gold passes, the wrong
/// query fails.
mod a_mixed_request_runs_the_prediction_on_the_twin {
    use super::*;

    /// The prediction then the gold in one request (its last result), compared with the
    /// prediction's own rows.
    const MIXED: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn):\n    res = execute_queries(pred_sqls + sol_sqls, db_name, conn, None, '')\n    pred = execute_queries(pred_sqls, db_name, conn, None, '')\n    assert not res[1] and sorted(pred[0]) == sorted(res[0]), f'the gold gave {res[0]}'\n    return 1\n";
    /// PostgreSQL: round 29's TEMP view.
    const PG_TEMP: &str = "CREATE OR REPLACE TEMP VIEW products AS SELECT name, 0 AS stock FROM public.products WHERE stock < 5";
    /// MariaDB: round 29's temporary table.
    const MY_TEMP: &str = "CREATE TEMPORARY TABLE IF NOT EXISTS products SELECT name, 0 AS stock FROM products WHERE stock < 5";

    #[test]
    fn postgresql_the_predictions_statements_do_not_run_before_the_gold_on_the_twin() {
        assert_secure("mixed", verdicts(&pg_run(), GOLD, MIXED, &[PG_TEMP, WRONG]));
    }

    #[test]
    fn mariadb_the_predictions_statements_do_not_run_before_the_gold_on_the_twin() {
        assert_secure("mixed", verdicts(&my_run(), GOLD, MIXED, &[MY_TEMP, WRONG]));
    }
}
