//! Red team round 8 (issue 44, class 3): a change made after the start-up data digests and
//! undone before the end-of-run ones, by a process the server's preparation left running with
//! the superuser's credentials. Both digests saw the base's rows, so the gate passed a
//! regressing pull request. Now the run holds the data it digested until scoring ends
//! (docs/SECURITY.md): every PostgreSQL scoring transaction imports the snapshot the start-up
//! digests were taken in, and a MariaDB session locks every benchmark table for reading, so
//! the change is invisible (PostgreSQL) or cannot be made (MariaDB), and the regression shows
//! (exit 1). A hold whose session is ended from outside fails the run closed (exit 2).

use crate::common;

use crate::server_levers::GLOBALS;
use common::servers::{self, Kind, Server};
use common::trust_flow::*;
use std::time::{Duration, Instant};

/// How long a watcher waits for what it watches for before giving up.
const WATCH: Duration = Duration::from_secs(60);

/// The pull request's predictions: items 0 and 3 stay right but sleep (they hold both workers
/// while the watcher acts), item 5 is wrong (3 customers, the gold counts 2) and sleeps while
/// the watcher undoes the change.
pub(crate) fn mid_run_predictions(kind: Kind) -> Vec<&'static str> {
    let mut predictions = GOLD.to_vec();
    let sleep = match kind {
        Kind::Postgres => "pg_sleep",
        Kind::Mariadb => "SLEEP",
    };
    let slow = |sql: &str| -> &'static str { sql.replace("sleep", sleep).leak() };
    predictions[0] = slow("SELECT count(*) FROM items, (SELECT sleep(1.5)) s");
    predictions[3] = slow("SELECT city FROM stores, (SELECT sleep(1.5)) s WHERE id = 2");
    predictions[5] = slow("SELECT 3 FROM (SELECT sleep(0.5)) s");
    predictions
}

/// Polls `count_sql` (a query of the server's system database whose first column counts what
/// is awaited) until it is positive; what it printed then, or `None` after [`WATCH`].
fn wait_for(server: &Server, count_sql: &str) -> Option<String> {
    let until = Instant::now() + WATCH;
    while Instant::now() < until {
        let printed = server.admin_sql(server.system_database(), count_sql);
        if printed.split('\t').next().unwrap_or("0").trim() != "0" {
            return Some(printed.trim().to_string());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    None
}

/// Waits until a prediction of the run on `database` sleeps: `late`, none started before the
/// server's time `since` plus one second (PostgreSQL, where a prediction runs in a `FETCH`),
/// or whose text holds `marker` (MariaDB). Returns the server's time then (PostgreSQL).
pub(crate) fn wait_for_sleep(
    server: &Server,
    database: &str,
    (marker, since): (&str, &str),
) -> Option<String> {
    let sql = match server.kind {
        Kind::Postgres => format!(
            "SELECT count(*), now() FROM pg_stat_activity WHERE datname = '{database}' \
             AND wait_event = 'PgSleep' AND query_start > '{since}'::timestamptz + interval '1s'"
        ),
        Kind::Mariadb => format!(
            "SELECT count(*), '' FROM information_schema.processlist WHERE ID <> \
             CONNECTION_ID() AND db = '{database}' AND info LIKE '%{marker}%'"
        ),
    };
    wait_for(server, &sql).map(|printed| printed.split('\t').nth(1).unwrap_or("").to_string())
}

/// What a watcher did: whether its write went through (a table lock refuses it), and whether
/// it then saw the wrong prediction run before undoing it.
#[derive(Debug, PartialEq)]
struct Watched {
    written: bool,
    undone_after_the_wrong_prediction: bool,
}

/// The preparation's background watcher: once scoring has started (a sleeping prediction runs),
/// it adds a customer (the gold `count(*)` becomes 3, what the wrong prediction says), waiting
/// at most 1 s for a lock; while the wrong prediction sleeps (after its gold ran), it deletes
/// the customer again, so both digests (start-up and end of scoring) see the base's rows.
fn mid_run_watcher(server: &'static Server, database: String) -> std::thread::JoinHandle<Watched> {
    std::thread::spawn(move || {
        let started = wait_for_sleep(server, &database, ("SLEEP(1.5)", "-infinity"));
        let started = started.expect("the run's predictions sleep");
        let insert = match server.kind {
            Kind::Postgres => "SET lock_timeout = '1s'; INSERT INTO customers VALUES (3, 'cy');",
            Kind::Mariadb => {
                "SET SESSION lock_wait_timeout = 1; INSERT INTO customers VALUES (3, 'cy');"
            }
        };
        if !server.client(&database, insert).status.success() {
            return Watched {
                written: false,
                undone_after_the_wrong_prediction: false,
            };
        }
        let last = ("SELECT 3 FROM (SELECT SLEEP(0.5))", started.as_str());
        let undone = wait_for_sleep(server, &database, last).is_some();
        server.admin_sql(&database, "DELETE FROM customers WHERE id = 3;");
        Watched {
            written: true,
            undone_after_the_wrong_prediction: undone,
        }
    })
}

/// A watcher that ends the session holding the run's data once scoring has started (a
/// sleeping prediction runs), as a superuser can: the holding PostgreSQL transaction (the
/// reader's oldest open one) or the MariaDB session locking the tables (the reader's idle one
/// while both workers sleep). Returns whether it ended one.
fn hold_killer(server: &'static Server, database: String) -> std::thread::JoinHandle<bool> {
    std::thread::spawn(move || {
        wait_for_sleep(server, &database, ("SLEEP(1.5)", "-infinity"))
            .expect("the run's predictions sleep");
        let system = server.system_database();
        match server.kind {
            Kind::Postgres => server
                .admin_sql(
                    system,
                    &format!(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                         WHERE datname = '{database}' AND state = 'idle in transaction' \
                         ORDER BY xact_start LIMIT 1"
                    ),
                )
                .contains('t'),
            Kind::Mariadb => {
                let id = server.admin_sql(
                    system,
                    &format!(
                        "SELECT id FROM information_schema.processlist WHERE user = \
                         'sqlgate_reader_{database}' AND command = 'Sleep' \
                         ORDER BY time_ms DESC LIMIT 1"
                    ),
                );
                let id = id.trim();
                !id.is_empty() && {
                    server.admin_sql(system, &format!("KILL {id};"));
                    true
                }
            }
        }
    })
}

/// What runs beside the gate: nothing (the control), the mid-run change, or the end of the
/// run's hold.
#[derive(Clone, Copy, Debug)]
enum Beside {
    Nothing,
    MidRunChange,
    HoldKiller,
}

/// The gate's output on the regressing pull request of [`mid_run_predictions`] with `beside`
/// started just before the gate, and what its thread reported.
fn judge_beside(
    server: &'static Server,
    database: &str,
    beside: Beside,
) -> (std::process::Output, String) {
    let _shared = GLOBALS.read().unwrap_or_else(|e| e.into_inner());
    let dir = recorded_repository(server, database, &GOLD);
    let root = dir.path();
    let predictions = mid_run_predictions(server.kind);
    let run = Run::pull_request(server, database, hostile_predictions(root, &predictions));
    let mut report: Box<dyn FnOnce() -> String> = Box::new(String::new);
    let judged = run.workflow_with(root, || {
        let database = database.to_string();
        report = match beside {
            Beside::Nothing => Box::new(String::new),
            Beside::MidRunChange => {
                let watcher = mid_run_watcher(server, database);
                Box::new(move || format!("{:?}", watcher.join().unwrap()))
            }
            Beside::HoldKiller => {
                let killer = hold_killer(server, database);
                Box::new(move || format!("ended: {}", killer.join().unwrap()))
            }
        };
    });
    (judged, report())
}

/// The control exits 1; the mid-run change is invisible to scoring (PostgreSQL: the watcher
/// wrote and undid it) or refused by the lock (MariaDB), and the regression shows (exit 1);
/// ending the hold's session fails the run closed (exit 2, naming it). `written`: whether the
/// watcher's write goes through (then it is undone after the wrong prediction ran).
fn check_mid_run(server: &'static Server, database: &str, written: bool) {
    let watched = Watched {
        written,
        undone_after_the_wrong_prediction: written,
    };
    let cases = [
        (Beside::Nothing, 1, String::new(), ""),
        (Beside::MidRunChange, 1, format!("{watched:?}"), ""),
        (
            Beside::HoldKiller,
            2,
            "ended: true".to_string(),
            "the hold on the server's data was lost during the run",
        ),
    ];
    for (i, (beside, code, report, needle)) in cases.into_iter().enumerate() {
        let (judged, reported) = judge_beside(server, &format!("{database}_{i}"), beside);
        let out = text(&judged);
        assert_eq!(reported, report, "{beside:?}: {out}");
        assert_eq!(judged.status.code(), Some(code), "{beside:?}: {out}");
        assert!(
            out.contains(needle),
            "{beside:?}: expected `{needle}`: {out}"
        );
    }
}

/// PostgreSQL: the watcher's write goes through and is undone, unseen by scoring; MariaDB: the
/// lock refuses it.
#[test]
fn a_change_made_after_start_up_and_undone_before_the_end_is_not_read() {
    check_mid_run(servers::postgres(), "mr_pg", true);
    check_mid_run(servers::mariadb(), "mr_maria", false);
}
