//! What decides a query's result on a server besides its rows, on real servers
//! (tests/common/servers.rs): each test is a regressing pull request run through docs/ACTION.md's
//! server workflow (tests/common/trust_flow.rs) whose server preparation, run as the superuser
//! just before the gate, pulls one lever that keeps every table's rows (so their digests) as the
//! base commit recorded them yet makes the pull request's wrong prediction score as the gold
//! does: a view or a row-level security policy that hides rows from sqlgate's scoring sessions
//! only, a case-insensitive or case-sensitive collation, an always-true `=` operator or a
//! function first on the reader's `search_path`, a role- or database-level setting, a table in
//! `pg_catalog` shadowing `public`'s, an invisible or a virtual generated column, the server's
//! `sql_mode`, time zone, regular-expression flags or `init_connect`, the rows' physical order
//! (a delete and re-insert, `CLUSTER`, another storage engine) or a MERGE table. The gate must
//! not pass:
//! exit 2 naming the lever, or exit 1 (the regression seen, the lever having no effect on
//! sqlgate's sessions).

use crate::common;

use common::servers::{self, Server};
use common::trust_flow::*;
use std::sync::RwLock;

/// One lever: the question it bends (asked on the base commit with a right prediction), the
/// pull request's wrong prediction for it, and what the refusal names.
pub(crate) struct Lever {
    pub(crate) question: &'static str,
    pub(crate) wrong: &'static str,
    pub(crate) names: &'static str,
}

/// Tests that change a MariaDB server's global settings take this for writing, the others for
/// reading: a global setting reaches every session of the server this binary shares.
pub(crate) static GLOBALS: RwLock<()> = RwLock::new(());

/// Records the base commit's baseline, then runs a pull request that predicts the lever's
/// question wrongly, with `pull` (the lever) run before the gate; returns the gate's output.
pub(crate) fn pull_request_with(
    server: &'static Server,
    database: &str,
    lever: &Lever,
    pull: impl FnOnce(),
) -> std::process::Output {
    let mut gold: Vec<&str> = GOLD.to_vec();
    gold.push(lever.question);
    pull_request_asking(server, database, (&gold, gold.len() - 1, lever.wrong), pull)
}

/// [`pull_request_with`] on a benchmark asking `gold`, the pull request predicting its item
/// `index` as `wrong`.
fn pull_request_asking(
    server: &'static Server,
    database: &str,
    (gold, index, wrong): (&[&str], usize, &'static str),
    pull: impl FnOnce(),
) -> std::process::Output {
    let dir = recorded_repository(server, database, gold);
    let root = dir.path();
    let mut predictions = gold.to_vec();
    predictions[index] = wrong;
    let pull_request = Run::pull_request(server, database, hostile_predictions(root, &predictions));
    pull_request.workflow_with(root, pull)
}

/// The pull request with the lever `prepare` (SQL the server's preparation runs as the superuser
/// on the benchmark's database, `{db}` standing for its name) does not pass.
pub(crate) fn check_lever(server: &'static Server, database: &str, lever: &Lever, prepare: &str) {
    let judged = judge_lever(server, database, lever, prepare);
    check_outcome(server, &judged, lever);
}

/// As [`check_lever`], but the gate must refuse the lever at start-up (exit 2 naming it).
pub(crate) fn check_refused(server: &'static Server, database: &str, lever: &Lever, prepare: &str) {
    let judged = judge_lever(server, database, lever, prepare);
    assert_eq!(judged.status.code(), Some(2), "{}", text(&judged));
    check_outcome(server, &judged, lever);
}

/// The gate's output on the pull request predicting `lever.wrong`, with `prepare` (SQL run as
/// the superuser on the benchmark's database, `{db}` standing for its name; empty: no lever)
/// run just before the gate.
pub(crate) fn judge_lever(
    server: &'static Server,
    database: &str,
    lever: &Lever,
    prepare: &str,
) -> std::process::Output {
    let _shared = GLOBALS.read().unwrap_or_else(|e| e.into_inner());
    pull_request_with(server, database, lever, prepared(server, database, prepare))
}

/// The server's preparation just before the gate: `prepare` run as the superuser on `database`
/// (`{db}` standing for its name), nothing when it is empty.
pub(crate) fn prepared<'a>(
    server: &'a Server,
    database: &'a str,
    prepare: &'a str,
) -> impl FnOnce() + 'a {
    move || {
        if !prepare.is_empty() {
            server.admin_sql(database, &prepare.replace("{db}", database));
        }
    }
}

/// The gate did not pass: exit 2 naming the lever, or exit 1 (the regression seen).
pub(crate) fn check_outcome(server: &Server, judged: &std::process::Output, lever: &Lever) {
    let all = text(judged);
    match judged.status.code() {
        Some(2) => assert!(
            all.contains(lever.names),
            "expected `{}`: {all}",
            lever.names
        ),
        Some(1) => {}
        _ => panic!("the regressing pull request was not stopped: {all}"),
    }
    assert_no_secret(server, judged);
}

/// The pull request with the MariaDB global `name` set to `value` before the gate (restored
/// after) does not pass.
fn check_global(database: &str, lever: &Lever, name: &str, value: &str) {
    let server = servers::mariadb();
    let _alone = GLOBALS.write().unwrap_or_else(|e| e.into_inner());
    let mut set = None;
    let judged = pull_request_with(server, database, lever, || {
        set = Some(Global::set(server, name, value));
    });
    drop(set);
    check_outcome(server, &judged, lever);
}

/// A question about customer 2 that a view or a policy empties for sqlgate's sessions, with a
/// wrong prediction (customer 3 does not exist) that is empty too.
const HIDDEN_QUESTION: &str = "SELECT name FROM customers WHERE id = 2";
const HIDDEN_WRONG: &str = "SELECT name FROM customers WHERE id = 3";

#[test]
fn postgres_a_view_that_hides_rows_from_the_scoring_session_is_refused() {
    check_lever(
        servers::postgres(),
        "lever_view",
        &Lever {
            question: HIDDEN_QUESTION,
            wrong: HIDDEN_WRONG,
            names: "a view public.customers",
        },
        "CREATE SCHEMA hidden; ALTER TABLE customers SET SCHEMA hidden; \
                      CREATE VIEW public.customers AS SELECT * FROM hidden.customers \
                      WHERE current_setting('application_name') <> 'sqlgate';",
    );
}

#[test]
fn postgres_a_row_level_security_policy_is_refused() {
    check_lever(
        servers::postgres(),
        "lever_rls",
        &Lever {
            question: HIDDEN_QUESTION,
            wrong: HIDDEN_WRONG,
            names: "row-level security",
        },
        "ALTER TABLE customers ENABLE ROW LEVEL SECURITY; \
                      CREATE POLICY hide ON customers \
                      USING (current_setting('application_name') <> 'sqlgate');",
    );
}

#[test]
fn postgres_a_case_insensitive_collation_is_refused() {
    check_lever(
        servers::postgres(),
        "lever_collation",
        &Lever {
            question: "SELECT id FROM customers WHERE name = 'bob'",
            wrong: "SELECT id FROM customers WHERE name = 'BOB'",
            names: "collation",
        },
        "CREATE COLLATION nocase (provider = icu, locale = 'und-u-ks-level2', \
                      deterministic = false); \
                      ALTER TABLE customers ALTER COLUMN name TYPE text COLLATE nocase;",
    );
}

#[test]
fn postgres_an_always_true_operator_on_the_search_path_is_refused() {
    check_lever(
        servers::postgres(),
        "lever_operator",
        &Lever {
            question: HIDDEN_QUESTION,
            wrong: HIDDEN_WRONG,
            names: "a user-defined operator evil.=",
        },
        "CREATE SCHEMA evil; GRANT USAGE ON SCHEMA evil TO sqlgate_reader; \
                      CREATE FUNCTION evil.yes(bigint, integer) RETURNS boolean \
                      LANGUAGE sql IMMUTABLE AS 'SELECT true'; \
                      CREATE OPERATOR evil.= (LEFTARG = bigint, RIGHTARG = integer, \
                      FUNCTION = evil.yes); \
                      ALTER ROLE sqlgate_reader IN DATABASE {db} \
                      SET search_path = evil, pg_catalog, public;",
    );
}

#[test]
fn postgres_a_function_shadowing_a_built_in_one_is_refused() {
    check_lever(
        servers::postgres(),
        "lever_function",
        &Lever {
            question: "SELECT id FROM customers WHERE lower(name) = 'bob'",
            wrong: "SELECT id FROM customers WHERE lower(name) = 'ada'",
            names: "a user-defined function evil.lower(text)",
        },
        "CREATE SCHEMA evil; GRANT USAGE ON SCHEMA evil TO sqlgate_reader; \
                      CREATE FUNCTION evil.lower(text) RETURNS text \
                      LANGUAGE sql IMMUTABLE AS 'SELECT ''x''::text'; \
                      ALTER ROLE sqlgate_reader IN DATABASE {db} \
                      SET search_path = evil, pg_catalog, public;",
    );
}

/// A setting of the reader's role applies at every connection and after every `DISCARD ALL`;
/// sqlgate pins `transform_null_equals` after both, and refuses the setting at start-up.
#[test]
fn postgres_a_role_level_setting_of_a_pinned_name_is_refused() {
    check_refused(
        servers::postgres(),
        "lever_role_setting",
        &Lever {
            question: "SELECT count(*) FROM customers WHERE name IS NOT NULL",
            wrong: "SELECT count(*) FROM customers WHERE NOT (name = NULL)",
            names: "transform_null_equals",
        },
        "ALTER ROLE sqlgate_reader IN DATABASE {db} SET transform_null_equals = on;",
    );
}

#[test]
fn mariadb_a_view_that_hides_rows_from_the_scoring_session_is_refused() {
    check_lever(
        servers::mariadb(),
        "lever_view",
        &Lever {
            question: HIDDEN_QUESTION,
            wrong: HIDDEN_WRONG,
            names: "a view `customers`",
        },
        "DROP DATABASE IF EXISTS {db}_hidden; CREATE DATABASE {db}_hidden; \
                      RENAME TABLE {db}.customers TO {db}_hidden.customers; \
                      CREATE SQL SECURITY DEFINER VIEW {db}.customers AS \
                      SELECT * FROM {db}_hidden.customers WHERE DATABASE() IS NULL;",
    );
}

#[test]
fn mariadb_a_case_sensitive_collation_is_recorded() {
    check_lever(
        servers::mariadb(),
        "lever_collation",
        &Lever {
            question: "SELECT id FROM customers WHERE name = 'BOB'",
            wrong: "SELECT id FROM customers WHERE 1 = 0",
            names: "collations=customers.name utf8mb4_bin",
        },
        "ALTER TABLE customers MODIFY name LONGTEXT COLLATE utf8mb4_bin;",
    );
}

#[test]
fn mariadb_the_servers_sql_mode_is_recorded() {
    let lever = Lever {
        question: "SELECT count(*) FROM customers WHERE name IS NOT NULL",
        wrong: "SELECT count(*) FROM customers WHERE name = \"name\"",
        names: "sql_mode=",
    };
    let ansi_quotes = "CONCAT(@@GLOBAL.sql_mode, ',ANSI_QUOTES')";
    check_global("lever_sql_mode", &lever, "sql_mode", ansi_quotes);
}

#[test]
fn mariadb_the_servers_time_zone_does_not_reach_the_scoring_session() {
    let lever = Lever {
        question: "SELECT TIMESTAMPDIFF(HOUR, UTC_TIMESTAMP(), NOW())",
        wrong: "SELECT 5",
        names: "time_zone=",
    };
    check_global("lever_time_zone", &lever, "time_zone", "'+05:00'");
}

/// `init_connect` runs when the reader connects, before sqlgate pins `sql_mode`.
#[test]
fn mariadb_init_connect_does_not_reach_the_scoring_session() {
    let lever = Lever {
        question: "SELECT count(*) FROM customers WHERE name IS NOT NULL",
        wrong: "SELECT count(*) FROM customers WHERE name = \"name\"",
        names: "sql_mode=",
    };
    let ansi_quotes = "'SET SESSION sql_mode = ''ANSI_QUOTES'''";
    check_global("lever_init_connect", &lever, "init_connect", ansi_quotes);
}

/// A role-level setting sqlgate does not pin (red team round 5): `IST` read as India's time
/// zone instead of Israel's moves the gold's hour to the wrong prediction's.
#[test]
fn postgres_a_role_level_setting_sqlgate_does_not_pin_is_refused() {
    check_refused(
        servers::postgres(),
        "lever_role_unpinned",
        &Lever {
            question: "SELECT extract(hour from timestamptz '2020-01-01 12:00 IST')::int AS h \
                       FROM customers WHERE id = 1",
            wrong: "SELECT 6 AS h FROM customers WHERE id = 1",
            names: "a setting timezone_abbreviations=India of role sqlgate_reader in this \
                    database (remove it: ALTER ROLE sqlgate_reader IN DATABASE \
                    lever_role_unpinned RESET timezone_abbreviations)",
        },
        "ALTER ROLE sqlgate_reader IN DATABASE {db} SET timezone_abbreviations = 'India';",
    );
}

/// The same through a database-level default, which applies to every role.
#[test]
fn postgres_a_database_level_setting_is_refused() {
    check_refused(
        servers::postgres(),
        "lever_database_setting",
        &Lever {
            question: "SELECT extract(hour from timestamptz '2020-01-01 12:00 IST')::int AS h \
                       FROM customers WHERE id = 1",
            wrong: "SELECT 6 AS h FROM customers WHERE id = 1",
            names: "a setting timezone_abbreviations=India of every role in this database \
                    (remove it: ALTER DATABASE lever_database_setting RESET \
                    timezone_abbreviations)",
        },
        "ALTER DATABASE {db} SET timezone_abbreviations = 'India';",
    );
}

/// A table in `pg_catalog` (a superuser with `allow_system_table_mods`) comes before `public`'s
/// on the pinned `search_path`, and the digests skip system schemas (red team round 5).
#[test]
fn postgres_a_table_shadowing_from_pg_catalog_is_refused() {
    check_refused(
        servers::postgres(),
        "lever_catalog_table",
        &Lever {
            question: HIDDEN_QUESTION,
            wrong: HIDDEN_WRONG,
            names: "a relation pg_catalog.customers in a system schema",
        },
        "SET allow_system_table_mods = on; \
         CREATE TABLE pg_catalog.customers (id bigint, name text); \
         INSERT INTO pg_catalog.customers VALUES (1, 'ada'); \
         GRANT SELECT ON pg_catalog.customers TO PUBLIC;",
    );
}

/// An invisible column is left out of `SELECT *` while the table's rows, and so its digest,
/// stay the same (red team round 5).
#[test]
fn mariadb_an_invisible_column_is_refused() {
    check_refused(
        servers::mariadb(),
        "lever_invisible",
        &Lever {
            question: "SELECT * FROM customers WHERE id = 2",
            wrong: "SELECT id FROM customers WHERE id = 2",
            names: "an invisible column `customers`.`name`",
        },
        "ALTER TABLE customers MODIFY name LONGTEXT INVISIBLE;",
    );
}

/// A virtual generated column is computed at each read: from `group_concat_max_len`, which
/// sqlgate's digest session raises and its scoring sessions do not, it reads `bob` for the
/// digest and NULL for the predictions.
#[test]
fn mariadb_a_virtual_generated_column_is_refused() {
    check_refused(
        servers::mariadb(),
        "lever_virtual",
        &Lever {
            question: "SELECT id FROM customers WHERE name = 'bob'",
            wrong: "SELECT id FROM customers WHERE 1 = 0",
            names: "a virtual generated column `customers`.`name`",
        },
        "ALTER TABLE customers DROP COLUMN name, ADD COLUMN name LONGTEXT \
         AS (IF(@@group_concat_max_len < 100000000, NULL, ELT(id, 'ada', 'bob'))) VIRTUAL;",
    );
}

/// MariaDB's global `default_regex_flags` (red team round 5): `EXTENDED` ignores the space in the
/// wrong prediction's pattern. sqlgate's scoring sessions pin the flags to none.
#[test]
fn mariadb_the_servers_regex_flags_do_not_reach_the_scoring_session() {
    let lever = Lever {
        question: "SELECT id FROM customers WHERE name REGEXP '^bob$'",
        wrong: "SELECT id FROM customers WHERE name REGEXP '^b ob$'",
        names: "default_regex_flags",
    };
    check_global(
        "lever_regex_flags",
        &lever,
        "default_regex_flags",
        "'EXTENDED'",
    );
}

/// A question whose wrong prediction, without `ORDER BY`, reads the first row a plain scan
/// returns: right only on a table whose physical row order the preparation changed.
const ORDER_QUESTION: &str = "SELECT name FROM customers ORDER BY id DESC LIMIT 1";
const ORDER_WRONG: &str = "SELECT name FROM customers LIMIT 1";
const ORDER_NAMES: &str = "row order differs from the baseline's";

/// Deleting a row and inserting it again keeps the rows (red team round 6) but moves it to the
/// end of the heap.
#[test]
fn postgres_a_row_moved_to_the_end_of_the_heap_is_refused() {
    let lever = Lever {
        question: ORDER_QUESTION,
        wrong: ORDER_WRONG,
        names: ORDER_NAMES,
    };
    let reorder = "DELETE FROM customers WHERE id = 1; INSERT INTO customers VALUES (1, 'ada');";
    check_refused(servers::postgres(), "lever_order_moved", &lever, reorder);
}

/// `CLUSTER` on a descending index rewrites the heap in that order (red team round 6).
#[test]
fn postgres_a_table_clustered_in_another_order_is_refused() {
    let lever = Lever {
        question: ORDER_QUESTION,
        wrong: ORDER_WRONG,
        names: ORDER_NAMES,
    };
    let cluster = "CREATE INDEX lever_desc ON customers (id DESC); \
                   CLUSTER customers USING lever_desc;";
    check_refused(servers::postgres(), "lever_order_cluster", &lever, cluster);
}

/// Deleting a row and inserting it again on MariaDB (red team round 6).
#[test]
fn mariadb_a_row_deleted_and_inserted_again_is_refused() {
    let lever = Lever {
        question: ORDER_QUESTION,
        wrong: ORDER_WRONG,
        names: ORDER_NAMES,
    };
    let reorder = "DELETE FROM customers WHERE id = 1; INSERT INTO customers VALUES (1, 'ada');";
    check_refused(servers::mariadb(), "lever_order_moved", &lever, reorder);
}

/// The table rebuilt as MyISAM in reversed order: the same rows and columns, another storage
/// engine and scan order (red team round 6).
#[test]
fn mariadb_a_table_moved_to_another_storage_engine_is_refused() {
    let lever = Lever {
        question: ORDER_QUESTION,
        wrong: ORDER_WRONG,
        names: "storage engine",
    };
    let rebuild = "CREATE TABLE lever_copy ENGINE=MyISAM AS SELECT * FROM customers \
                   ORDER BY id DESC; DROP TABLE customers; RENAME TABLE lever_copy TO customers;";
    check_refused(servers::mariadb(), "lever_order_engine", &lever, rebuild);
}

/// A MERGE table reads its rows from other tables, which a digest of its own rows cannot vouch
/// for: refused at start-up, as are FEDERATED, CONNECT, SPIDER and BLACKHOLE tables.
#[test]
fn mariadb_a_merge_table_is_refused() {
    let lever = Lever {
        question: ORDER_QUESTION,
        wrong: ORDER_WRONG,
        names: "a table `customers` on the MRG_MyISAM storage engine",
    };
    let merge = "CREATE TABLE lever_part ENGINE=MyISAM AS SELECT * FROM customers; \
                 DROP TABLE customers; CREATE TABLE customers LIKE lever_part; \
                 ALTER TABLE customers ENGINE=MERGE UNION=(lever_part);";
    check_refused(servers::mariadb(), "lever_merge", &lever, merge);
}

/// Issue 44: statistics the preparation makes decide the plan of a prediction whose rows at its
/// LIMIT the query leaves open. Loading analyzes `customers` (two rows), so `DISTINCT name ...
/// LIMIT 1` sorts and returns `ada`; statistics of 200 rows (inserted, analyzed, deleted: the
/// rows and their order are the base's again) make it hash and return `bob`, the gold's answer.
/// Planner statistics cannot be digested, so the gate credits no right verdict the query's own
/// order does not decide: the regression is seen (exit 1), the item named unstable.
#[test]
fn postgres_statistics_that_pick_a_plan_make_no_undetermined_prediction_right() {
    let lever = Lever {
        question: "SELECT name FROM customers WHERE id = 2",
        wrong: "SELECT DISTINCT name FROM customers LIMIT 1",
        names: "unstable",
    };
    let statistics = "INSERT INTO customers SELECT g, 'x' || g FROM generate_series(3, 200) g; \
                      ANALYZE customers; DELETE FROM customers WHERE id > 2;";
    let judged = judge_lever(servers::postgres(), "lever_statistics", &lever, statistics);
    let all = text(&judged);
    assert_eq!(judged.status.code(), Some(1), "{all}");
    // Where the hash plan returned the gold's answer, the verdict is not credited; where the
    // server kept the sorted plan (autovacuum analyzed the table again, say, on a loaded
    // machine), the prediction is plainly wrong: either way the item regresses.
    let not_credited = all.contains("model: unstable, not credited: item 6 (prediction-order)");
    assert!(not_credited || all.contains("1 regressed"), "{all}");
}

/// Issue 45: on MariaDB, `ORDER BY MAX(x) DESC LIMIT 1` over groups tied at the top returns
/// whichever group the plan meets first: the baseline records the gold's verdict as unstable,
/// and the prediction's (the gold's own text) too.
#[test]
fn mariadb_a_tie_at_order_by_max_limit_1_is_recorded_unstable() {
    let server = servers::mariadb();
    let database = "unstable_max_tie";
    let mut gold: Vec<&str> = GOLD.to_vec();
    gold.push("SELECT name FROM items GROUP BY name ORDER BY MAX(price > 5) DESC LIMIT 1");
    let dir = recorded_repository(server, database, &gold);
    let baseline = recorded_baseline(dir.path());
    let reasons: Vec<&serde_json::Value> = baseline["systems"]["model"]
        .as_array()
        .unwrap()
        .iter()
        .map(|record| &record["unstable"])
        .collect();
    let mut expected = vec![&serde_json::Value::Null; GOLD.len()];
    let tied = serde_json::json!("gold-order+prediction-order");
    expected.push(&tied);
    assert_eq!(reasons, expected);
}

/// `init_connect` runs at each login of a user without SUPER, before sqlgate pins anything: a
/// user variable it sets (`@answer`; `@x` is not a `@@` system variable, so no refusal) would be
/// read by the wrong prediction. Every session is reset before its first query (a new one too),
/// so the variable is gone and the regression is seen (exit 1).
#[test]
fn mariadb_a_user_variable_set_by_init_connect_does_not_reach_the_prediction() {
    check_init_connect_variable("lever_init_variable", false);
}

/// As [`mariadb_a_user_variable_set_by_init_connect_does_not_reach_the_prediction`], with the question
/// first (so scored on a new session, which a prediction could reach before any item's reset).
#[test]
fn mariadb_a_user_variable_set_by_init_connect_does_not_reach_a_new_session() {
    check_init_connect_variable("lever_init_first", true);
}

/// The pull request reading `@answer`, which `init_connect` sets, is seen regressing (exit 1),
/// with the lever's question last in the gold or, with `first`, first (so on a fresh session).
fn check_init_connect_variable(database: &str, first: bool) {
    let server = servers::mariadb();
    let _alone = GLOBALS.write().unwrap_or_else(|e| e.into_inner());
    let lever = Lever {
        question: "SELECT name FROM customers WHERE id = 2",
        wrong: "SELECT @answer",
        names: "init_connect",
    };
    let old = server.admin_sql("mysql", "SELECT @@GLOBAL.init_connect");
    let pull = || {
        server.admin_sql("mysql", "SET GLOBAL init_connect = 'SET @answer = ''bob'''");
    };
    let judged = match first {
        false => pull_request_with(server, database, &lever, pull),
        true => {
            let gold: Vec<&str> = std::iter::once(lever.question).chain(GOLD).collect();
            pull_request_asking(server, database, (&gold, 0, lever.wrong), pull)
        }
    };
    server.admin_sql(
        "mysql",
        &format!(
            "SET GLOBAL init_connect = '{}'",
            old.trim().replace('\'', "''")
        ),
    );
    assert_eq!(judged.status.code(), Some(1), "{}", text(&judged));
}

/// A MariaDB table repartitioned (same rows) so that one partition holds only the gold's row:
/// the wrong prediction reads `PARTITION (p2)`, an error on the unpartitioned table.
#[test]
fn mariadb_a_partition_holding_the_answer_is_refused() {
    check_lever(
        servers::mariadb(),
        "lever_partition",
        &Lever {
            question: "SELECT name FROM customers WHERE id = 2",
            wrong: "SELECT name FROM customers PARTITION (p2)",
            names: "partition",
        },
        "ALTER TABLE customers PARTITION BY LIST (id) \
         (PARTITION p1 VALUES IN (1), PARTITION p2 VALUES IN (2));",
    );
}
