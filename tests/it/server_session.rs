//! The live-server levers of red team round 7 (issue 44, class 3) that do not go through the
//! planner's statistics, each a regressing pull request run through docs/ACTION.md's server
//! workflow (tests/it/common/trust_flow.rs) whose server preparation, run as the superuser
//! just before the gate, pulls the lever; each `control_*` is the same pull request without it
//! (exit 1, the regression seen). Before sqlgate closed them, each lever made the gate pass:
//!
//! - a MariaDB global no pin covered (`max_recursive_iterations` cutting the gold's recursive
//!   CTE, `old_mode = ZERO_DATE_TIME_CAST` changing a cast; round 8: `old_passwords`
//!   changing `PASSWORD()`): now pinned in every session, so the regression shows (exit 1);
//!   one no session can set (round 8: `max_allowed_packet` nulling a long result) is recorded
//!   with the data digests, so another value is refused (exit 2, naming it);
//! - data changed after the start-up digests: an event of MariaDB's scheduler, or a session the
//!   PostgreSQL preparation left behind, refused at start-up (exit 2, naming it); a session that
//!   connects later and writes a row while the run reads is, on PostgreSQL, invisible to the
//!   scoring transactions (they read the start-up digests' snapshot) and seen by the digests
//!   taken again when scoring ends (exit 2, naming the table), and on MariaDB made to wait
//!   until scoring ends by the run's lock on the tables (exit 1, the regression seen);
//! - a PostgreSQL prediction reading the transaction counter (`age('3'::xid)`): refused as it
//!   runs, so it scores as an error (exit 1), while `age(timestamp)` still runs;
//! - a PostgreSQL table with a column named `t`, whose digest once hashed that column alone:
//!   its other columns rewritten are now `has other content` (exit 2).

use crate::common;

use common::git;
use common::servers::{self, Server};
use common::trust_flow::*;

use crate::server_levers::{pull_request_with, Lever, GLOBALS};

/// Asserts the exit code `code` of `output`, and that it names `needle`.
fn expect(output: &std::process::Output, code: i32, needle: &str) {
    let all = text(output);
    eprintln!("{all}");
    assert_eq!(output.status.code(), Some(code), "{all}");
    assert!(all.contains(needle), "expected `{needle}`: {all}");
}

/// The pull request predicting `lever.wrong`, with the MariaDB global `name` set to `value` just
/// before the gate (restored after); `value` empty: no lever.
fn judge_global(database: &str, lever: &Lever, name: &str, value: &str) -> std::process::Output {
    let server = servers::mariadb();
    let _alone = GLOBALS.write().unwrap_or_else(|e| e.into_inner());
    let mut set = None;
    let judged = pull_request_with(server, database, lever, || {
        if !value.is_empty() {
            set = Some(Global::set(server, name, value));
        }
    });
    drop(set);
    judged
}

/// `max_recursive_iterations` ends a recursive CTE silently: the gold counts to 10, and with
/// the global at 2 it would count to 3, as the wrong prediction does.
const RECURSIVE: Lever = Lever {
    question: "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 10) \
               SELECT count(*) FROM r",
    wrong: "SELECT 3",
    names: "",
};

/// The pull request predicting `lever.wrong` regresses (exit 1) without the global, and still
/// does with the global `name` set to `value` before the gate: the scoring session pins it.
fn check_global_pinned(database: &str, lever: &Lever, global: (&str, &str)) {
    check_global_judged(database, lever, global, (1, ""));
}

/// The pull request predicting `lever.wrong` regresses (exit 1) without the global; with the
/// global `name` set to `value` before the gate it exits `code`, naming `needle`.
fn check_global_judged(
    database: &str,
    lever: &Lever,
    (name, value): (&str, &str),
    (code, needle): (i32, &str),
) {
    let control = judge_global(&format!("{database}_control"), lever, "", "");
    expect(&control, 1, "");
    expect(&judge_global(database, lever, name, value), code, needle);
}

#[test]
fn mariadb_max_recursive_iterations_does_not_reach_the_scoring_session() {
    check_global_pinned(
        "ss_recursive",
        &RECURSIVE,
        ("max_recursive_iterations", "2"),
    );
}

/// `old_mode = ZERO_DATE_TIME_CAST` makes `CAST(TIME AS DATETIME)` take the date 0000-00-00
/// instead of today's: the gold's year would become 0, the wrong prediction's constant.
const ZERO_DATE: Lever = Lever {
    question: "SELECT YEAR(CAST(TIME '10:00:00' AS DATETIME)) > 2000",
    wrong: "SELECT 0",
    names: "",
};

#[test]
fn mariadb_old_mode_does_not_reach_the_scoring_session() {
    let old_mode = ("old_mode", "'UTF8_IS_UTF8MB3,ZERO_DATE_TIME_CAST'");
    check_global_pinned("ss_old_mode", &ZERO_DATE, old_mode);
}

/// Red team round 8: `old_passwords = 1` makes `PASSWORD()` the 16-character pre-4.1 hash, so
/// the wrong prediction would keep the gold's row; now pinned to 0 in every session.
const OLD_PASSWORDS: Lever = Lever {
    question: "SELECT name FROM customers WHERE id = 1",
    wrong: "SELECT name FROM customers WHERE id = 1 AND LENGTH(PASSWORD(name)) = 16",
    names: "",
};

#[test]
fn mariadb_old_passwords_does_not_reach_the_scoring_session() {
    check_global_pinned("ss_old_passwords", &OLD_PASSWORDS, ("old_passwords", "1"));
}

/// Red team round 8: a string result longer than `max_allowed_packet` is NULL, so with the
/// global at 1 MB the wrong prediction would keep the gold's row. No session can set it: it is
/// recorded with the structure entry, and a value other than the baseline's is refused.
const MAX_PACKET: Lever = Lever {
    question: "SELECT name FROM customers WHERE id = 1",
    wrong: "SELECT name FROM customers WHERE id = 1 AND REPEAT(name, 1000000) IS NULL",
    names: "",
};

#[test]
fn mariadb_max_allowed_packet_other_than_the_baselines_is_refused() {
    check_global_judged(
        "ss_max_packet",
        &MAX_PACKET,
        ("max_allowed_packet", "1048576"),
        (2, "`setting max_allowed_packet=1048576`"),
    );
}

/// What the pull request also predicts (item, a right answer written another way), and what a
/// test changes in the benchmark on the base commit.
pub(crate) type Variation<'a> = (&'a [(usize, &'a str)], &'a dyn Fn(&std::path::Path));

/// [`pull_request_with`] on a benchmark `setup` changed on the base commit (before the
/// baseline is recorded), the pull request also predicting `also[i].1` for item `also[i].0`
/// (each a right answer, written another way).
pub(crate) fn pull_request_on(
    server: &'static Server,
    database: &str,
    lever: &Lever,
    (also, setup): Variation<'_>,
    pull: impl FnOnce(),
) -> std::process::Output {
    let mut gold: Vec<&str> = GOLD.to_vec();
    gold.push(lever.question);
    let dir = recorded_repository_with(server, database, &gold, setup);
    let root = dir.path();
    git(root, &["add", "baseline.json"]);
    git(root, &["commit", "-qm", "baseline"]);
    let base = git(root, &["rev-parse", "HEAD"]);
    git(root, &["checkout", "-qb", "hostile"]);
    let mut predictions = gold.clone();
    *predictions.last_mut().unwrap() = lever.wrong;
    for (index, sql) in also {
        predictions[*index] = sql;
    }
    std::fs::write(root.join("preds/model.txt"), predictions.join("\n") + "\n").unwrap();
    git(root, &["commit", "-qam", "a wrong prediction"]);
    let pull_request = Run::pull_request(server, database, base);
    pull_request.workflow_with(root, pull)
}

/// No change to the benchmark.
fn unchanged(_: &std::path::Path) {}

/// Data written while the run reads: the pull request's other predictions are right but slow
/// (0.6 s each), and meanwhile something inserts a store 3 in `Oslo`, so the wrong prediction
/// (store 3's city) would answer as the gold (store 1's) does.
const LATER: Lever = Lever {
    question: "SELECT city FROM stores WHERE id = 1",
    wrong: "SELECT city FROM stores WHERE id = 3",
    names: "",
};

/// A MariaDB event (the server's own scheduler, which the preparation switches on) that waits,
/// as its definer, until a session of the reader runs a sleeping prediction, then inserts
/// store 3. The reader cannot list it.
const EVENT: &str = "DELIMITER //\n\
     CREATE EVENT later ON SCHEDULE AT CURRENT_TIMESTAMP DO BEGIN \
       DECLARE waited INT DEFAULT 0; \
       WHILE waited < 3000 AND NOT EXISTS (SELECT 1 FROM information_schema.processlist \
         WHERE user LIKE 'sqlgate_reader%' AND db = DATABASE() AND info LIKE '%SLEEP(0.6)%') DO \
         DO SLEEP(0.01); SET waited = waited + 1; \
       END WHILE; \
       INSERT INTO stores VALUES (3, 'Oslo'); \
     END//\nDELIMITER ;\n";

/// Right answers for items 0 to 5 that sleep 0.6 s each.
const SLOW_MARIADB: [(usize, &str); 6] = [
    (
        0,
        "SELECT count(*) FROM items WHERE (SELECT SLEEP(0.6)) = 0",
    ),
    (
        1,
        "SELECT name FROM customers WHERE id = 1 AND (SELECT SLEEP(0.6)) = 0",
    ),
    (
        2,
        "SELECT count(*) FROM orders WHERE (SELECT SLEEP(0.6)) = 0",
    ),
    (
        3,
        "SELECT city FROM stores WHERE id = 2 AND (SELECT SLEEP(0.6)) = 0",
    ),
    (
        4,
        "SELECT name FROM items WHERE price > 5 AND (SELECT SLEEP(0.6)) = 0",
    ),
    (
        5,
        "SELECT count(*) FROM customers WHERE (SELECT SLEEP(0.6)) = 0",
    ),
];

/// Right answers for items 0 to 5 that sleep 0.6 s each (as [`SLOW_MARIADB`]).
const SLOW_POSTGRES: [(usize, &str); 6] = [
    (0, "SELECT count(*) FROM items, pg_sleep(0.6)"),
    (1, "SELECT name FROM customers, pg_sleep(0.6) WHERE id = 1"),
    (2, "SELECT count(*) FROM orders, pg_sleep(0.6)"),
    (3, "SELECT city FROM stores, pg_sleep(0.6) WHERE id = 2"),
    (4, "SELECT name FROM items, pg_sleep(0.6) WHERE price > 5"),
    (5, "SELECT count(*) FROM customers, pg_sleep(0.6)"),
];

fn judge_event(database: &str, prepare: bool) -> std::process::Output {
    let server = servers::mariadb();
    let _alone = GLOBALS.write().unwrap_or_else(|e| e.into_inner());
    let mut set = None;
    let judged = pull_request_on(
        server,
        database,
        &LATER,
        (&SLOW_MARIADB, &unchanged),
        || {
            if prepare {
                set = Some(Global::set(server, "event_scheduler", "ON"));
                server.admin_sql(database, EVENT);
            }
        },
    );
    drop(set);
    judged
}

#[test]
fn control_mariadb_slow_predictions_and_a_wrong_one_are_a_regression() {
    expect(&judge_event("ss_event_control", false), 1, "");
}

#[test]
fn mariadb_the_event_scheduler_on_is_refused_at_start() {
    expect(
        &judge_event("ss_event", true),
        2,
        "the server's event scheduler is on",
    );
}

/// PostgreSQL has no scheduler, so the preparation leaves a session behind (a background
/// `psql` of its script; here a thread): a `DO` block that waits until a session of the reader
/// runs a sleeping prediction, inserts store 3 and commits.
const WATCHER: &str = "DO $$ DECLARE waited int := 0; BEGIN \
       WHILE waited < 3000 AND NOT EXISTS (SELECT 1 FROM pg_stat_activity \
         WHERE usename = 'sqlgate_reader' AND datname = current_database() AND wait_event = 'PgSleep') LOOP \
         PERFORM pg_sleep(0.01); PERFORM pg_stat_clear_snapshot(); waited := waited + 1; \
       END LOOP; \
       INSERT INTO stores VALUES (3, 'Oslo'); END $$;";

fn judge_watcher(database: &'static str, prepare: bool) -> std::process::Output {
    let server = servers::postgres();
    let _shared = GLOBALS.read().unwrap_or_else(|e| e.into_inner());
    let mut watcher = None;
    let judged = pull_request_on(
        server,
        database,
        &LATER,
        (&SLOW_POSTGRES, &unchanged),
        || {
            if prepare {
                watcher = Some(std::thread::spawn(move || {
                    server.admin_sql(database, WATCHER);
                }));
                std::thread::sleep(std::time::Duration::from_millis(300));
            }
        },
    );
    if let Some(watcher) = watcher {
        watcher.join().unwrap();
    }
    judged
}

#[test]
fn control_postgres_slow_predictions_and_a_wrong_one_are_a_regression() {
    expect(&judge_watcher("ss_watcher_control", false), 1, "");
}

#[test]
fn postgres_a_session_left_behind_is_refused_at_start() {
    expect(
        &judge_watcher("ss_watcher", true),
        2,
        "sessions of roles that can write its tables are connected to the database of \
         `dataset.engine.url_env` at start-up (pid ",
    );
}

/// A session of the read-only role left connected to the database (another run's, on a shared
/// server, or a preparation's) can write nothing, yet the run needs the server to itself (red
/// team round 9: a session can change what the server computes with): it stops at start-up
/// (exit 2), naming the session.
#[test]
fn postgres_a_read_only_session_on_the_database_stops_the_run() {
    let server = servers::postgres();
    let database = "ss_reader_session";
    let _shared = GLOBALS.read().unwrap_or_else(|e| e.into_inner());
    let mut reader = None;
    let judged = pull_request_with(server, database, &LATER, || {
        let child = std::process::Command::new("/usr/lib/postgresql/15/bin/psql")
            .args(["--no-psqlrc", "-X", "-q"])
            .arg(server.reader_url(database))
            .args(["-c", "SELECT pg_sleep(60)"])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        reader = Some(child);
        let connected = format!(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = '{database}' \
             AND usename = 'sqlgate_reader' AND wait_event = 'PgSleep'"
        );
        let started = std::time::Instant::now();
        while server.admin_sql("postgres", &connected).trim() == "0" {
            assert!(
                started.elapsed().as_secs() < 20,
                "the reader did not connect"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    });
    if let Some(mut child) = reader {
        child.kill().ok();
        child.wait().ok();
    }
    expect(
        &judged,
        2,
        "other sessions are connected to the server at start-up (pid ",
    );
    expect(&judged, 2, "of role sqlgate_reader on ss_reader_session");
}

/// A writer that connects only once the run reads (after every start-up check): from the
/// server's system database it waits until a session of the reader runs a sleeping
/// prediction (`sleeping`: how many do, in SQL), then inserts store 3 into `database`. Returns
/// whether it did.
fn late_writer(
    server: &'static Server,
    database: &'static str,
    sleeping: String,
) -> std::thread::JoinHandle<bool> {
    let system = match server.kind {
        servers::Kind::Postgres => "postgres",
        servers::Kind::Mariadb => "mysql",
    };
    std::thread::spawn(move || {
        let started = std::time::Instant::now();
        while server.admin_sql(system, &sleeping).trim() == "0" {
            if started.elapsed() > std::time::Duration::from_secs(120) {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        server.admin_sql(database, "INSERT INTO stores VALUES (3, 'Oslo');");
        true
    })
}

/// The pull request on `server` with a [`late_writer`] started just before the gate.
fn judge_late(server: &'static Server, database: &'static str) -> std::process::Output {
    let _shared = GLOBALS.read().unwrap_or_else(|e| e.into_inner());
    let (slow, sleeping): (&[(usize, &str)], String) = match server.kind {
        servers::Kind::Postgres => (
            &SLOW_POSTGRES,
            format!(
                "SELECT count(*) FROM pg_stat_activity WHERE usename = 'sqlgate_reader' \
                 AND datname = '{database}' AND wait_event = 'PgSleep'"
            ),
        ),
        servers::Kind::Mariadb => (
            &SLOW_MARIADB,
            format!(
                "SELECT count(*) FROM information_schema.processlist WHERE user LIKE \
                 'sqlgate_reader%' AND db = '{database}' AND info LIKE '%SLEEP(0.6)%'"
            ),
        ),
    };
    let mut writer = None;
    let judged = pull_request_on(server, database, &LATER, (slow, &unchanged), || {
        writer = Some(late_writer(server, database, sleeping));
    });
    assert!(writer.unwrap().join().unwrap(), "the row was not written");
    judged
}

/// Names the table whose rows changed while the run read them.
const CHANGED_WHILE_READ: &str = "the data on the server changed while the run read them";

#[test]
fn postgres_a_row_inserted_while_the_run_reads_is_seen_when_scoring_ends() {
    let judged = judge_late(servers::postgres(), "ss_late_pg");
    expect(&judged, 2, CHANGED_WHILE_READ);
    expect(&judged, 2, "`ss_late_pg.public.stores` has other content");
}

/// On MariaDB the run locks the benchmark's tables for reading until scoring ends (round 8):
/// the insert waits until then, so the run reads the base's rows; the writer's session, and the
/// watching ones before it, connected to the server during the run, which fails it closed.
#[test]
fn mariadb_a_row_inserted_while_the_run_reads_fails_the_run_closed() {
    let judged = judge_late(servers::mariadb(), "ss_late_maria");
    expect(
        &judged,
        2,
        "another session connected to the server during the run",
    );
}

/// A prediction reading the server's transaction counter: `age(xid)` is the distance from an
/// XID literal to the next transaction id. The preparation burns transaction ids until the
/// counter spells the gold's answer (thousands digit 2 for the gold's count of 2); a control
/// sets it to 7 instead.
const XID: Lever = Lever {
    question: "SELECT count(*) FROM orders WHERE customer_id = 1",
    wrong: "SELECT (age('3'::xid) / 1000) % 10",
    names: "",
};

/// Burns transaction ids until `age('3'::xid)` is `target` modulo 10,000 (other sessions of
/// the shared test server may move it by a few hundred: the prediction reads the thousands).
fn burn_to(target: i64) -> String {
    assert!((0..10000).contains(&target));
    format!(
        "DO $$ DECLARE current bigint; need bigint; BEGIN \
           current := txid_current() % 4294967296; \
           need := ((({target} - (current + 1 - 3)) % 10000) + 10000) % 10000; \
           COMMIT; \
           FOR i IN 1..need LOOP PERFORM txid_current(); COMMIT; END LOOP; \
         END $$;"
    )
}

/// [`XID`]'s pull request with the counter burnt to `target`, alone: the counter tests would
/// move each other's counter.
fn judge_counter(database: &str, target: i64) -> std::process::Output {
    let server = servers::postgres();
    let _alone = GLOBALS.write().unwrap_or_else(|e| e.into_inner());
    pull_request_with(server, database, &XID, || {
        server.admin_sql(database, &burn_to(target));
    })
}

#[test]
fn control_postgres_a_counter_spelling_another_answer_is_a_regression() {
    expect(&judge_counter("ss_xid_control", 7500), 1, "");
}

#[test]
fn postgres_a_prediction_reading_the_transaction_counter_is_refused() {
    expect(&judge_counter("ss_xid", 2500), 1, "");
}

/// `age` of timestamps reads no server state and still runs: a pull request predicting the
/// gold's 2 with it passes.
#[test]
fn postgres_age_of_timestamps_still_runs() {
    let lever = Lever {
        question: "SELECT 2",
        wrong: "SELECT extract(year FROM age(timestamp '2020-03-01', timestamp '2018-01-01'))::int",
        names: "",
    };
    let _shared = GLOBALS.read().unwrap_or_else(|e| e.into_inner());
    let judged = pull_request_with(servers::postgres(), "ss_age", &lever, || {});
    expect(&judged, 0, "");
}

/// A benchmark with a table `readings(t, value)` (a time step and a reading): PostgreSQL's
/// table digest once hashed `t::text` over `FROM readings t`, where the column `t` wins over
/// the table alias, so only that column was hashed and the preparation could rewrite every
/// other column unseen.
fn with_readings(root: &std::path::Path) {
    let db = rusqlite::Connection::open(root.join("bird/dev_databases/shop/shop.sqlite")).unwrap();
    db.execute_batch(
        "CREATE TABLE readings (t INTEGER, value TEXT); \
         INSERT INTO readings VALUES (1, 'low'), (2, 'high');",
    )
    .unwrap();
    let mut tables: serde_json::Value = serde_json::from_str(TABLES_JSON).unwrap();
    let shop = &mut tables[0];
    for key in ["table_names_original", "table_names"] {
        shop[key].as_array_mut().unwrap().push("readings".into());
    }
    for key in ["column_names_original", "column_names"] {
        let columns = shop[key].as_array_mut().unwrap();
        columns.push(serde_json::json!([4, "t"]));
        columns.push(serde_json::json!([4, "value"]));
    }
    let types = shop["column_types"].as_array_mut().unwrap();
    types.push("number".into());
    types.push("text".into());
    std::fs::write(root.join("tables.json"), tables.to_string()).unwrap();
}

const READINGS: Lever = Lever {
    question: "SELECT value FROM readings WHERE t = 2",
    wrong: "SELECT 'low'",
    names: "",
};

fn judge_readings(database: &str, prepare: &str) -> std::process::Output {
    let server = servers::postgres();
    let _shared = GLOBALS.read().unwrap_or_else(|e| e.into_inner());
    pull_request_on(server, database, &READINGS, (&[], &with_readings), || {
        if !prepare.is_empty() {
            server.admin_sql(database, prepare);
        }
    })
}

#[test]
fn control_postgres_wrong_reading_is_a_regression() {
    expect(&judge_readings("ss_column_t_control", ""), 1, "");
}

#[test]
fn postgres_a_column_named_t_does_not_hide_the_rest_of_the_row_from_the_digest() {
    let judged = judge_readings("ss_column_t", "UPDATE readings SET value = 'low';");
    expect(
        &judged,
        2,
        "`ss_column_t.public.readings` has other content",
    );
}
