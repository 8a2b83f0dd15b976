//! Red team round (issue 44 re-test): regressing pull requests built as in
//! tests/it/server_levers.rs. Each test asserts what the gate *should* do (not pass); a test that
//! fails with "the regressing pull request was not stopped" is an attack that won (exit 0).

use crate::common;
use crate::server_levers::{check_lever, check_outcome, pull_request_with, Lever, GLOBALS};

use common::servers;
use common::trust_flow::text;

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
