//! Red team round (issue 44 re-test): regressing pull requests built as in
//! tests/it/server_levers.rs. Each test asserts what the gate *should* do (not pass); a test that
//! fails with "the regressing pull request was not stopped" is an attack that won (exit 0).

use crate::common;
use crate::server_levers::{check_lever, check_outcome, pull_request_with, Lever, GLOBALS};

use common::git;
use common::servers;
use common::trust_flow::{repository_with, text, Event, Run, GOLD};

/// A CHECK constraint is not recorded anywhere (neither the data digests nor the structure
/// entry), and a function in a schema the reader cannot reach is not refused at start-up. With
/// the default `constraint_exclusion = partition`, the planner tests the CHECK constraints of
/// every UNION ALL member (an appendrel member) and folds immutable functions in them: the
/// constraint `id <> 2 OR evil.f()` held when added (`f()` true), then `f()` is replaced to
/// return false, so the planner drops the `items` member of a query whose WHERE says `id = 2`.
/// The wrong prediction (customer 2 and item 2) then returns only the gold's `bob`.
#[test]
fn postgres_check_constraint_with_hidden_function_excludes_a_union_member() {
    check_lever(
        servers::postgres(),
        "rt_check_exclusion",
        &Lever {
            question: "SELECT name FROM customers WHERE id = 2",
            wrong: "SELECT name FROM (SELECT id, name FROM customers UNION ALL \
                    SELECT id, name FROM items) s WHERE id = 2",
            names: "constraint",
        },
        "CREATE SCHEMA evil; \
         CREATE FUNCTION evil.f() RETURNS boolean LANGUAGE sql IMMUTABLE AS 'SELECT true'; \
         ALTER TABLE items ADD CONSTRAINT rt CHECK (id <> 2 OR evil.f()); \
         CREATE OR REPLACE FUNCTION evil.f() RETURNS boolean LANGUAGE sql IMMUTABLE \
         AS 'SELECT false';",
    );
}

/// `CREATE OR REPLACE FUNCTION pg_catalog.upper(text)` as a SQL function keeps the built-in's
/// OID (below 16384, so the start-up check's "user-defined function" query does not list it),
/// and the planner inlines the new SQL body wherever `upper` takes a column: `upper(name)`
/// becomes `lower(name)` for every session of that database. (`lower` would also break
/// sqlgate's own settings query, which uses it, and so be noticed by accident.)
#[test]
fn postgres_a_built_in_function_replaced_in_place_is_refused() {
    check_lever(
        servers::postgres(),
        "rt_replace_builtin",
        &Lever {
            question: "SELECT id FROM customers WHERE lower(name) = 'bob'",
            wrong: "SELECT id FROM customers WHERE upper(name) = 'bob'",
            names: "upper",
        },
        "CREATE OR REPLACE FUNCTION pg_catalog.upper(text) RETURNS text LANGUAGE sql \
         IMMUTABLE STRICT PARALLEL SAFE AS 'SELECT lower($1)';",
    );
}

/// The control of an attack: the same pull request without the lever exits 1 (the wrong
/// prediction really is a regression).
fn control(server: &'static servers::Server, database: &str, lever: &Lever) {
    let _shared = GLOBALS.read().unwrap_or_else(|e| e.into_inner());
    let judged = pull_request_with(server, database, lever, || ());
    assert_eq!(judged.status.code(), Some(1), "{}", text(&judged));
}

#[test]
fn control_check_constraint_union_prediction_is_a_regression() {
    control(
        servers::postgres(),
        "rt_control_union",
        &Lever {
            question: "SELECT name FROM customers WHERE id = 2",
            wrong: "SELECT name FROM (SELECT id, name FROM customers UNION ALL \
                    SELECT id, name FROM items) s WHERE id = 2",
            names: "",
        },
    );
}

#[test]
fn control_upper_prediction_is_a_regression() {
    control(
        servers::postgres(),
        "rt_control_upper",
        &Lever {
            question: "SELECT id FROM customers WHERE lower(name) = 'bob'",
            wrong: "SELECT id FROM customers WHERE upper(name) = 'bob'",
            names: "",
        },
    );
}

/// `ALTER SYSTEM SET timezone_abbreviations` (the server-level twin of the role-level lever
/// server_levers.rs refuses): not pinned, not in the settings entry, not a role or database
/// setting. docs/SECURITY.md lists "ALTER SYSTEM ... of a setting sqlgate neither pins nor
/// records" as beyond its checks; this shows it wins.
#[test]
fn postgres_alter_system_timezone_abbreviations() {
    let server = servers::postgres();
    let _alone = GLOBALS.write().unwrap_or_else(|e| e.into_inner());
    let lever = Lever {
        question: "SELECT extract(hour from timestamptz '2020-01-01 12:00 IST')::int AS h \
                   FROM customers WHERE id = 1",
        wrong: "SELECT 6 AS h FROM customers WHERE id = 1",
        names: "timezone_abbreviations",
    };
    struct Reset(&'static servers::Server);
    impl Drop for Reset {
        fn drop(&mut self) {
            self.0.admin_sql(
                "postgres",
                "ALTER SYSTEM RESET timezone_abbreviations; SELECT pg_reload_conf();",
            );
        }
    }
    let mut reset = None;
    let judged = pull_request_with(server, "rt_alter_system_tz", &lever, || {
        server.admin_sql(
            "postgres",
            "ALTER SYSTEM SET timezone_abbreviations = 'India'; SELECT pg_reload_conf(); \
             SELECT pg_sleep(0.5);",
        );
        reset = Some(Reset(server));
    });
    drop(reset);
    check_outcome(server, &judged, &lever);
}

/// A pull request whose `sqlgate.yml` is a committed symlink to `/dev/zero`: the trust stage
/// refuses it (not a regular file, exit 2), then the failure path (`commands::failure`,
/// `report_path`) reads the same path with `std::fs::read_to_string` to find `report.output`,
/// unbounded, when the Action's `report` input is empty (docs/ACTION.md's workflow gives
/// none). Run here under a 2 GiB address-space cap and a 60 s kill so the machine survives:
/// the gate should exit 2 within seconds.
#[test]
fn failure_report_reads_a_config_symlinked_to_dev_zero() {
    let server = servers::postgres();
    let dir = repository_with(server.kind, &GOLD);
    let root = dir.path();
    let base = git(root, &["rev-parse", "HEAD"]);
    git(root, &["checkout", "-qb", "hostile"]);
    std::fs::remove_file(root.join("sqlgate.yml")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", root.join("sqlgate.yml")).unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "config is /dev/zero"]);
    let run = Run {
        server,
        database: "rt_dev_zero",
        event: Event::PullRequest,
        base,
    };
    let mut capped = std::process::Command::new("prlimit");
    capped.args([
        "--as=2147483648",
        "--",
        "/usr/bin/time",
        "-f",
        "max_rss_kib=%M",
    ]);
    capped.args(["timeout", "-s", "KILL", "60"]);
    capped.arg(env!("CARGO_BIN_EXE_sqlgate")).arg("action");
    let mut command = run.command(root, capped);
    command
        .env("INPUT_CONFIG", "sqlgate.yml")
        .env("GITHUB_STEP_SUMMARY", root.join(".git/summary.md"))
        .env("GITHUB_OUTPUT", root.join(".git/outputs"));
    let started = std::time::Instant::now();
    let judged = command.output().unwrap();
    let all = text(&judged);
    eprintln!("{all}");
    let rss: u64 = (all.split("max_rss_kib=").nth(1))
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .unwrap();
    assert!(
        rss < 256 * 1024,
        "the failure path held {rss} KiB: it read /dev/zero"
    );
    assert_eq!(
        judged.status.code(),
        Some(2),
        "after {:?} (signal {:?}): {all}",
        started.elapsed(),
        std::os::unix::process::ExitStatusExt::signal(&judged.status)
    );
}

/// `ALTER TEXT SEARCH CONFIGURATION english DROP MAPPING FOR asciiword` edits the built-in
/// `english` configuration in place (its OID stays below 16384; `pg_ts_config_map` is read by no
/// check, and `default_text_search_config` alone is recorded): `to_tsvector('english', 'ada')`
/// becomes empty, so the wrong prediction's extra row disappears.
#[test]
fn postgres_a_built_in_text_search_configuration_edited_in_place() {
    check_lever(
        servers::postgres(),
        "rt_ts_config",
        &Lever {
            question: "SELECT id FROM customers WHERE id = 2",
            wrong: "SELECT id FROM customers WHERE to_tsvector('english', name) @@ \
                    to_tsquery('simple', 'ada') OR id = 2",
            names: "english",
        },
        "ALTER TEXT SEARCH CONFIGURATION english DROP MAPPING FOR asciiword;",
    );
}

#[test]
fn control_text_search_prediction_is_a_regression() {
    control(
        servers::postgres(),
        "rt_control_ts",
        &Lever {
            question: "SELECT id FROM customers WHERE id = 2",
            wrong: "SELECT id FROM customers WHERE to_tsvector('english', name) @@ \
                    to_tsquery('simple', 'ada') OR id = 2",
            names: "",
        },
    );
}

const TZ_QUESTION: &str =
    "SELECT CONVERT_TZ('2020-01-01 12:00:00', '+00:00', '+05:00') FROM customers WHERE id = 1";
const TZ_WRONG: &str =
    "SELECT CONVERT_TZ('2020-01-01 12:00:00', '+00:00', 'Evil') FROM customers WHERE id = 1";

/// MariaDB's named time zones live in `mysql.time_zone*`, tables of the `mysql` database that
/// no digest covers: the admin defines a zone `Evil` at +05:00 and the wrong prediction (a zone
/// that does not exist: NULL) converts to the gold's answer.
#[test]
fn mariadb_a_named_time_zone_defined_in_the_mysql_tables() {
    check_lever(
        servers::mariadb(),
        "rt_named_zone",
        &Lever {
            question: TZ_QUESTION,
            wrong: TZ_WRONG,
            names: "time_zone",
        },
        "DELETE FROM mysql.time_zone_name WHERE Name = 'Evil'; \
         INSERT INTO mysql.time_zone (Use_leap_seconds) VALUES ('N'); \
         SET @z = LAST_INSERT_ID(); \
         INSERT INTO mysql.time_zone_name (Name, Time_zone_id) VALUES ('Evil', @z); \
         INSERT INTO mysql.time_zone_transition_type \
           (Time_zone_id, Transition_type_id, `Offset`, Is_DST, Abbreviation) \
           VALUES (@z, 0, 18000, 0, 'EVL');",
    );
}

#[test]
fn control_named_time_zone_prediction_is_a_regression() {
    control(
        servers::mariadb(),
        "rt_control_zone",
        &Lever {
            question: TZ_QUESTION,
            wrong: TZ_WRONG,
            names: "",
        },
    );
}

/// The example's config gated on `ts` over a distilled suite (`distill`: the suite's knobs),
/// with no significance test (one regressed item fails the gate).
fn ts_config(good: &str, suite: &str) -> String {
    good.replace("metrics: [ex, esm]", "metrics: [ex, ts]")
        .replace("reference: ex", &format!("reference: ex\nsuite: {suite}"))
        .replace("  metric: ex\n", "  metric: ts\n")
        .replace("  per_difficulty: { extra: 2.0 }\n", "")
        .replace("  significance: { test: mcnemar-exact, alpha: 0.05 }\n", "")
}

const BASE_SUITE: &str =
    "{ kind: distilled, path: .sqlgate/suite, distill: { max_random_dbs: 20 } }";

/// `main` gated on `ts` over [`BASE_SUITE`], then a direct push that breaks the config (a
/// misspelt key); C3's first prediction replaced by the constant the original database gives
/// (`SELECT 6` for `SELECT count(*) FROM singer`): right there, wrong on a random database.
/// Returns the base commit and the good config text.
fn ts_repair_repository(root: &std::path::Path) -> (String, String) {
    use common::repo;
    let example = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
    let good = ts_config(&example, BASE_SUITE);
    std::fs::write(root.join("sqlgate.yml"), &good).unwrap();
    repo::gated_main(root);
    std::fs::write(
        root.join("sqlgate.yml"),
        good.replace("max_drop_points: 0.0", "max_drop_point: 0.0"),
    )
    .unwrap();
    let base = repo::commit_base(root, "a direct push that breaks the config", "pr");
    let predictions = root.join("predictions/C3.txt");
    let text = std::fs::read_to_string(&predictions).unwrap();
    let (_, rest) = text.split_once('\n').unwrap();
    std::fs::write(&predictions, format!("SELECT 6\n{rest}")).unwrap();
    (base, good)
}

fn judge_pr(root: &std::path::Path, base: &str) -> (Option<i32>, String) {
    let run = common::repo::judged(root, base, &[]);
    let out = format!(
        "exit {:?}\n{}\n{}",
        run.status.code(),
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    (run.status.code(), out)
}

/// A repair of a broken base config is held to the base baseline's gate, datasets, overrides,
/// directory suite and prediction files, but a *distilled* suite's folder and knobs
/// (`suite.path`, `suite.distill`) are the pull request's: a new folder (no manifest on the
/// base) is distilled afresh with one random database whose every table has exactly 6 rows,
/// so `SELECT 6` for `SELECT count(*) FROM singer` is right on every database of the suite and
/// the regression is not seen.
#[test]
fn repair_weakens_the_distilled_suite() {
    let dir = common::repo::example(false);
    let root = dir.path();
    let (base, good) = ts_repair_repository(root);
    let weak = "{ kind: distilled, path: .sqlgate/weak, \
                distill: { max_random_dbs: 1, rows: [6, 6] } }";
    let example_good = good.replace(BASE_SUITE, weak);
    std::fs::write(root.join("sqlgate.yml"), example_good).unwrap();
    let (code, out) = judge_pr(root, &base);
    eprintln!("{out}");
    assert_ne!(code, Some(0), "the regressing repair passed: {out}");
}

/// The control: the same repair with the base's suite exits 1.
#[test]
fn control_repair_with_the_base_suite_is_a_regression() {
    let dir = common::repo::example(false);
    let root = dir.path();
    let (base, good) = ts_repair_repository(root);
    std::fs::write(root.join("sqlgate.yml"), good).unwrap();
    let (code, out) = judge_pr(root, &base);
    assert_eq!(code, Some(1), "{out}");
}

const LOCK_QUESTION: &str = "SELECT name FROM customers WHERE id = 2";
const LOCK_WRONG: &str = "SELECT name FROM customers WHERE id = 2 - IS_FREE_LOCK('rt_answer')";

/// MariaDB's user-level locks are server state any session sees: `GET_LOCK` is refused in a
/// prediction, but `IS_FREE_LOCK` / `IS_USED_LOCK` are not. A preparation that leaves one admin
/// session holding the lock `rt_answer` (a background client) makes `IS_FREE_LOCK` 0 during the
/// gate, and the wrong prediction (customer 1 when the lock is free) reads customer 2.
#[test]
fn mariadb_a_user_lock_held_by_a_background_session() {
    let server = servers::mariadb();
    let _shared = GLOBALS.read().unwrap_or_else(|e| e.into_inner());
    let lever = Lever {
        question: LOCK_QUESTION,
        wrong: LOCK_WRONG,
        names: "lock",
    };
    let mut holder = None;
    let judged = pull_request_with(server, "rt_user_lock", &lever, || {
        let socket = server.folder().join("socket/mysql.sock");
        let child = std::process::Command::new("mariadb")
            .arg("--no-defaults")
            .arg(format!("--socket={}", socket.display()))
            .args(["-u", "root", "--batch", "-e"])
            .arg("SELECT GET_LOCK('rt_answer', 10); SELECT SLEEP(120);")
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        holder = Some(child);
        let held = std::time::Instant::now();
        while server
            .admin_sql("mysql", "SELECT IS_USED_LOCK('rt_answer') IS NOT NULL")
            .trim()
            != "1"
        {
            assert!(held.elapsed().as_secs() < 20, "the lock was not taken");
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    });
    if let Some(mut child) = holder {
        child.kill().ok();
        child.wait().ok();
    }
    check_outcome(server, &judged, &lever);
}

#[test]
fn control_user_lock_prediction_is_a_regression() {
    control(
        servers::mariadb(),
        "rt_control_lock",
        &Lever {
            question: LOCK_QUESTION,
            wrong: LOCK_WRONG,
            names: "",
        },
    );
}

/// `CREATE OR REPLACE AGGREGATE pg_catalog.max(bigint)` with `int8smaller` keeps the built-in
/// aggregate's OID and makes `max` compute the minimum in every session of the database.
#[test]
fn postgres_a_built_in_aggregate_replaced_in_place() {
    check_lever(
        servers::postgres(),
        "rt_replace_aggregate",
        &Lever {
            question: "SELECT min(id) FROM customers",
            wrong: "SELECT max(id) FROM customers",
            names: "max",
        },
        "CREATE OR REPLACE AGGREGATE pg_catalog.max(bigint) \
         (sfunc = int8smaller, stype = bigint, combinefunc = int8smaller);",
    );
}

#[test]
fn control_max_prediction_is_a_regression() {
    control(
        servers::postgres(),
        "rt_control_max",
        &Lever {
            question: "SELECT min(id) FROM customers",
            wrong: "SELECT max(id) FROM customers",
            names: "",
        },
    );
}

/// The data digests list the tables the reader holds table-level `SELECT` on
/// (`has_table_privilege(c.oid, 'SELECT')`), and the role check refuses writes, not reads: a
/// table the reader may read through a column-level grant only is in no digest, and the wrong
/// prediction reads the gold's answer from it.
#[test]
fn postgres_a_table_readable_through_a_column_grant_only() {
    check_lever(
        servers::postgres(),
        "rt_column_grant",
        &Lever {
            question: "SELECT name FROM customers WHERE id = 2",
            wrong: "SELECT v FROM answers",
            names: "answers",
        },
        "CREATE TABLE answers (v text); INSERT INTO answers VALUES ('bob'); \
         REVOKE ALL ON answers FROM sqlgate_reader; \
         GRANT SELECT (v) ON answers TO sqlgate_reader;",
    );
}

#[test]
fn control_answers_table_prediction_is_a_regression() {
    control(
        servers::postgres(),
        "rt_control_column_grant",
        &Lever {
            question: "SELECT name FROM customers WHERE id = 2",
            wrong: "SELECT v FROM answers",
            names: "",
        },
    );
}

/// A MariaDB role with no privileges passes the role check (USAGE only), and
/// `SET DEFAULT ROLE` makes it the reader's current role at every connection: `CURRENT_ROLE()`
/// (not a catalog word) then returns a name the preparation chose, here the gold's answer.
#[test]
fn mariadb_a_default_role_named_for_the_answer() {
    let server = servers::mariadb();
    let _alone = GLOBALS.write().unwrap_or_else(|e| e.into_inner());
    let lever = Lever {
        question: "SELECT name FROM customers WHERE id = 2",
        wrong: "SELECT CURRENT_ROLE()",
        names: "bob",
    };
    let reader = server.grant_reader(&["rt_default_role"]);
    let judged = pull_request_with(server, "rt_default_role", &lever, || {
        server.admin_sql(
            "mysql",
            &format!(
                "CREATE ROLE IF NOT EXISTS bob; GRANT bob TO '{reader}'@'%'; \
                 SET DEFAULT ROLE bob FOR '{reader}'@'%';"
            ),
        );
    });
    server.admin_sql("mysql", "DROP ROLE IF EXISTS bob;");
    check_outcome(server, &judged, &lever);
}

#[test]
fn control_current_role_prediction_is_a_regression() {
    control(
        servers::mariadb(),
        "rt_control_role",
        &Lever {
            question: "SELECT name FROM customers WHERE id = 2",
            wrong: "SELECT CURRENT_ROLE()",
            names: "",
        },
    );
}

const DEFAULT_QUESTION: &str = "SELECT name FROM customers WHERE id = 2";
const DEFAULT_WRONG: &str = "SELECT DEFAULT(name) FROM customers WHERE id = 1";

/// A column's default value is in no digest (the columns are recorded by name and type, the
/// structure entry holds indexes and table options), and MariaDB's `DEFAULT(col)` reads it.
#[test]
fn mariadb_a_column_default_holding_the_answer() {
    check_lever(
        servers::mariadb(),
        "rt_column_default",
        &Lever {
            question: DEFAULT_QUESTION,
            wrong: DEFAULT_WRONG,
            names: "default",
        },
        "ALTER TABLE customers ALTER name SET DEFAULT 'bob';",
    );
}

#[test]
fn control_column_default_prediction_is_a_regression() {
    control(
        servers::mariadb(),
        "rt_control_default",
        &Lever {
            question: DEFAULT_QUESTION,
            wrong: DEFAULT_WRONG,
            names: "",
        },
    );
}

/// `init_connect` runs at each login of a user without SUPER, before sqlgate pins anything,
/// and a fresh session is used without a reset: a user variable it sets (`@answer`; `@x` is
/// not a `@@` system variable, so no refusal) is read by the wrong prediction.
#[test]
fn mariadb_init_connect_sets_a_user_variable() {
    let server = servers::mariadb();
    let _alone = GLOBALS.write().unwrap_or_else(|e| e.into_inner());
    let lever = Lever {
        question: "SELECT name FROM customers WHERE id = 2",
        wrong: "SELECT @answer",
        names: "init_connect",
    };
    let old = server.admin_sql("mysql", "SELECT @@GLOBAL.init_connect");
    let judged = pull_request_with(server, "rt_init_variable", &lever, || {
        server.admin_sql("mysql", "SET GLOBAL init_connect = 'SET @answer = ''bob'''");
    });
    server.admin_sql(
        "mysql",
        &format!(
            "SET GLOBAL init_connect = '{}'",
            old.trim().replace('\'', "''")
        ),
    );
    check_outcome(server, &judged, &lever);
}

/// [`pull_request_with`] with the lever's question first in the gold (so on a fresh session).
fn pull_request_first(
    server: &'static servers::Server,
    database: &str,
    lever: &Lever,
    pull: impl FnOnce(),
) -> std::process::Output {
    common::trust_flow::fresh_database(server, database);
    let mut gold: Vec<&str> = vec![lever.question];
    gold.extend(GOLD);
    let dir = repository_with(server.kind, &gold);
    let root = dir.path();
    let push = Run {
        server,
        database,
        event: Event::Push,
        base: git(root, &["rev-parse", "HEAD"]),
    };
    let recorded = push.workflow(root);
    assert!(recorded.status.success(), "{}", text(&recorded));
    git(root, &["add", "baseline.json"]);
    git(root, &["commit", "-qm", "baseline"]);
    let base = git(root, &["rev-parse", "HEAD"]);
    git(root, &["checkout", "-qb", "hostile"]);
    let mut predictions = gold.clone();
    predictions[0] = lever.wrong;
    std::fs::write(root.join("preds/model.txt"), predictions.join("\n") + "\n").unwrap();
    git(root, &["commit", "-qam", "a wrong prediction"]);
    let pull_request = Run {
        server,
        database,
        event: Event::PullRequest,
        base,
    };
    pull_request.workflow_with(root, pull)
}

/// As [`mariadb_init_connect_sets_a_user_variable`], with the question first (so scored on a
/// session that was never reset).
#[test]
fn mariadb_init_connect_sets_a_user_variable_first_item() {
    let server = servers::mariadb();
    let _alone = GLOBALS.write().unwrap_or_else(|e| e.into_inner());
    let lever = Lever {
        question: "SELECT name FROM customers WHERE id = 2",
        wrong: "SELECT @answer",
        names: "init_connect",
    };
    let old = server.admin_sql("mysql", "SELECT @@GLOBAL.init_connect");
    let judged = pull_request_first(server, "rt_init_first", &lever, || {
        server.admin_sql("mysql", "SET GLOBAL init_connect = 'SET @answer = ''bob'''");
    });
    server.admin_sql(
        "mysql",
        &format!(
            "SET GLOBAL init_connect = '{}'",
            old.trim().replace('\'', "''")
        ),
    );
    check_outcome(server, &judged, &lever);
}

/// A MariaDB table repartitioned (same rows) so that one partition holds only the gold's row:
/// the wrong prediction reads `PARTITION (p2)`, an error on the unpartitioned table.
#[test]
fn mariadb_a_partition_holding_the_answer() {
    check_lever(
        servers::mariadb(),
        "rt_partition",
        &Lever {
            question: "SELECT name FROM customers WHERE id = 2",
            wrong: "SELECT name FROM customers PARTITION (p2)",
            names: "partition",
        },
        "ALTER TABLE customers PARTITION BY LIST (id) \
         (PARTITION p1 VALUES IN (1), PARTITION p2 VALUES IN (2));",
    );
}

const SAMPLE_QUESTION: &str = "SELECT name FROM customers WHERE id = 2";
const SAMPLE_WRONG: &str = "SELECT name FROM customers TABLESAMPLE BERNOULLI (50) REPEATABLE (7)";

/// `TABLESAMPLE BERNOULLI ... REPEATABLE (seed)` keeps a row by a hash of its physical position
/// (block, line pointer), which neither digest records: the order entry hashes the scan order
/// only. `UPDATE customers SET name = name` writes every row again in scan order (line pointers
/// 3 and 4 instead of 1 and 2): same rows, same order, and seed 7 now keeps `bob` instead of
/// `ada`.
#[test]
fn postgres_tablesample_reads_the_rows_physical_positions() {
    check_lever(
        servers::postgres(),
        "rt_tablesample",
        &Lever {
            question: SAMPLE_QUESTION,
            wrong: SAMPLE_WRONG,
            names: "order",
        },
        "UPDATE customers SET name = name;",
    );
}

#[test]
fn control_tablesample_prediction_is_a_regression() {
    control(
        servers::postgres(),
        "rt_control_tablesample",
        &Lever {
            question: SAMPLE_QUESTION,
            wrong: SAMPLE_WRONG,
            names: "",
        },
    );
}

/// A base whose config was deleted (a direct push) but which still holds its baseline: the pull
/// request's config runs, and `refuse_hidden_baseline` runs only when the base *has* a config
/// that does not load (`broken.is_some()` in `trust::lifecycle::proposed_over_base`). A config
/// naming `baseline.path: elsewhere.json` is "introducing the gate": nothing is compared.
#[test]
fn a_base_without_config_but_with_a_baseline_compares_nothing() {
    use common::repo;
    let dir = repo::example(false);
    let root = dir.path();
    repo::gated_main(root);
    let good = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
    git(root, &["rm", "-q", "sqlgate.yml"]);
    let base = repo::commit_base(root, "a direct push that deletes the config", "pr");
    std::fs::write(
        root.join("sqlgate.yml"),
        good.replace("path: baseline.json", "path: elsewhere.json"),
    )
    .unwrap();
    common::break_predictions(root, "C3", 30);
    let (code, out) = judge_pr(root, &base);
    assert_ne!(code, Some(0), "the regressing pull request passed: {out}");
}

/// The control: the same pull request naming the base's baseline exits 1.
#[test]
fn control_a_base_without_config_compares_with_the_named_baseline() {
    use common::repo;
    let dir = repo::example(false);
    let root = dir.path();
    repo::gated_main(root);
    let good = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
    git(root, &["rm", "-q", "sqlgate.yml"]);
    let base = repo::commit_base(root, "a direct push that deletes the config", "pr");
    std::fs::write(root.join("sqlgate.yml"), good).unwrap();
    common::break_predictions(root, "C3", 30);
    let (code, out) = judge_pr(root, &base);
    assert_eq!(code, Some(1), "{out}");
}

/// The repair of a base config that is not YAML may not move the baseline away: the base's
/// baselines are found with `git grep -I` at the base commit. `git grep` reads attributes from
/// the working tree, so a pull request that commits `.gitattributes` with `*.json binary` makes
/// every baseline a binary file `-I` skips: the base "holds no baseline", the repair names
/// `elsewhere.json` and introduces the gate (nothing compared).
#[test]
fn a_repair_hides_the_base_baseline_from_git_grep_with_gitattributes() {
    use common::repo;
    let dir = repo::example(false);
    let root = dir.path();
    repo::gated_main(root);
    let good = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
    std::fs::write(root.join("sqlgate.yml"), format!("{good}\n: [ not yaml\n")).unwrap();
    let base = repo::commit_base(root, "a direct push that breaks the YAML", "repair");
    common::break_predictions(root, "C3", 30);
    std::fs::write(
        root.join("sqlgate.yml"),
        good.replace("path: baseline.json", "path: elsewhere.json"),
    )
    .unwrap();
    std::fs::write(root.join(".gitattributes"), "*.json binary\n").unwrap();
    repo::commit_all(root, "a repair, and json is binary");
    let (code, out) = judge_pr(root, &base);
    assert_ne!(code, Some(0), "the regressing repair passed: {out}");
}

/// A pull request whose `sqlgate.yml` is a committed symlink to a file outside the workspace
/// (here a one-line secret, as `~/.vault-token`, a mounted `/run/secrets/...` file or any file
/// the runner's user can read): the base config loads, the pull request changed the config, so
/// `check_proposed_config` loads it through the link (`read_bounded` follows it; no workspace
/// rule for the config itself), and the YAML error quotes the file's text ("invalid type:
/// string ..."), which goes to stderr, the `::error` line, the step summary and the PR comment.
#[test]
fn a_config_symlinked_outside_the_workspace_is_quoted_in_the_error() {
    let server = servers::postgres();
    let outside = tempfile::tempdir().unwrap();
    let secret = "s3cr3t-runner-password-4417";
    std::fs::write(outside.path().join("vault-token"), format!("{secret}\n")).unwrap();
    let dir = repository_with(server.kind, &GOLD);
    let root = dir.path();
    let base = git(root, &["rev-parse", "HEAD"]);
    git(root, &["checkout", "-qb", "hostile"]);
    std::fs::remove_file(root.join("sqlgate.yml")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("vault-token"), root.join("sqlgate.yml"))
        .unwrap();
    git(root, &["add", "-A"]);
    git(
        root,
        &["commit", "-qm", "config is a link out of the workspace"],
    );
    let run = Run {
        server,
        database: "rt_config_link",
        event: Event::PullRequest,
        base,
    };
    let mut command = run.command(
        root,
        std::process::Command::new(env!("CARGO_BIN_EXE_sqlgate")),
    );
    command
        .arg("action")
        .env("INPUT_CONFIG", "sqlgate.yml")
        .env("GITHUB_STEP_SUMMARY", root.join(".git/summary.md"))
        .env("GITHUB_OUTPUT", root.join(".git/outputs"));
    let judged = command.output().unwrap();
    let all = text(&judged);
    let summary = std::fs::read_to_string(root.join(".git/summary.md")).unwrap_or_default();
    assert!(
        !all.contains(secret) && !summary.contains(secret),
        "the file behind the link was quoted: {all}\n--- step summary\n{summary}"
    );
}
