//! Server state beyond the tables' rows, on real servers (tests/common/servers.rs): each test is
//! a regressing pull request in tests/server_levers.rs's style whose server preparation (run as
//! the superuser just before the gate) stores the gold's answer where the data digests did not
//! look, and whose wrong prediction reads it back (red team round 4, class 3): an index named
//! for the answer (`to_regclass`, MariaDB's `FORCE INDEX`), a sequence's value, a table comment,
//! another MariaDB database, a descending covering index a `LIMIT` without `ORDER BY` reads in
//! its order. Each exits non-zero, naming the cause: 2 when the start-up check refuses it (a
//! structure digest that differs, a role that may read a sequence or another database), 1 when
//! the prediction is refused as it runs ("reads the server's catalog, not the benchmark's
//! rows") and so scores as an error. Also: two fresh loads give the same digests, and what
//! changes plans on PostgreSQL (an index's definition, storage and column options, extended
//! statistics, a planner setting changed by `ALTER SYSTEM`) is named when it changes.

use crate::common;
use crate::server_levers::{check_refused, pull_request_with, Lever, GLOBALS};

use common::git;
use common::servers::{self, Server};
use common::trust_flow::*;

/// The question every lever bends: customer 2's name, `bob`.
const QUESTION: &str = "SELECT name FROM customers WHERE id = 2";

/// The pull request with the lever `prepare` exits 1 (the regression seen: the wrong
/// prediction refused as it runs) and its output names the refusal.
fn check_denied(server: &'static Server, database: &str, lever: &Lever, prepare: &str) {
    let _shared = GLOBALS.read().unwrap_or_else(|e| e.into_inner());
    let judged = pull_request_with(server, database, lever, || {
        server.admin_sql(database, prepare);
    });
    let all = text(&judged);
    assert_eq!(judged.status.code(), Some(1), "{all}");
    assert!(
        all.contains(lever.names),
        "expected `{}`: {all}",
        lever.names
    );
    assert_no_secret(server, &judged);
}

#[test]
fn postgres_an_index_named_for_the_answer_is_refused() {
    check_refused(
        servers::postgres(),
        "state_regclass",
        &Lever {
            question: QUESTION,
            wrong: "SELECT CASE WHEN to_regclass('answer_bob') IS NOT NULL THEN 'bob' END",
            names:
                "`index answer_bob=CREATE INDEX answer_bob ON public.customers USING btree (id)`",
        },
        "CREATE INDEX answer_bob ON customers (id);",
    );
}

#[test]
fn postgres_a_sequence_holding_the_answer_is_refused() {
    check_refused(
        servers::postgres(),
        "state_sequence",
        &Lever {
            question: QUESTION,
            wrong: "SELECT name FROM customers WHERE id = (SELECT last_value FROM answers)",
            names: "may read or use these sequences (SELECT, USAGE, UPDATE), whose values are \
                    the server's state, not the benchmark's rows: public.answers",
        },
        "CREATE SEQUENCE answers START 2; GRANT SELECT ON SEQUENCE answers TO sqlgate_reader;",
    );
}

#[test]
fn postgres_a_table_comment_is_refused() {
    check_denied(
        servers::postgres(),
        "state_comment",
        &Lever {
            question: QUESTION,
            wrong: "SELECT obj_description('customers'::regclass, 'pg_class')",
            names: "`obj_description` reads the server's catalog, not the benchmark's rows",
        },
        "COMMENT ON TABLE customers IS 'bob';",
    );
}

#[test]
fn postgres_a_column_comment_is_refused() {
    check_denied(
        servers::postgres(),
        "state_column_comment",
        &Lever {
            question: QUESTION,
            wrong: "SELECT col_description(c.oid, 2) FROM pg_class c WHERE c.relname = 'customers'",
            names: "`col_description` reads the server's catalog, not the benchmark's rows",
        },
        "COMMENT ON COLUMN customers.name IS 'bob';",
    );
}

#[test]
fn mariadb_a_forced_index_named_for_the_answer_is_refused() {
    check_refused(
        servers::mariadb(),
        "state_force_index",
        &Lever {
            question: "SELECT id FROM customers ORDER BY id DESC LIMIT 1",
            wrong: "SELECT id FROM customers FORCE INDEX (by_id) LIMIT 1",
            names: "`index customers.by_id=BTREE (id D)",
        },
        "CREATE INDEX by_id ON customers (id DESC);",
    );
}

/// A covering index read in its (descending) order by a `LIMIT` without `ORDER BY`.
#[test]
fn mariadb_a_descending_covering_index_is_refused() {
    check_refused(
        servers::mariadb(),
        "state_desc_index",
        &Lever {
            question: "SELECT id FROM customers ORDER BY id DESC LIMIT 1",
            wrong: "SELECT id FROM customers LIMIT 1",
            names: "`index customers.newest=BTREE (id D)",
        },
        "CREATE INDEX newest ON customers (id DESC);",
    );
}

#[test]
fn mariadb_a_table_comment_is_refused() {
    check_denied(
        servers::mariadb(),
        "state_comment",
        &Lever {
            question: QUESTION,
            wrong: "SELECT table_comment FROM information_schema.TABLES \
                    WHERE table_name = 'customers'",
            names:
                "`information_schema.TABLES` reads the server's catalog, not the benchmark's rows",
        },
        "ALTER TABLE customers COMMENT = 'bob';",
    );
}

#[test]
fn mariadb_another_database_holding_the_answer_is_refused() {
    check_refused(
        servers::mariadb(),
        "state_otherdb",
        &Lever {
            question: QUESTION,
            wrong: "SELECT name FROM state_otherdb_answers.t",
            names: "holds privileges on databases the run does not use: `state_otherdb_answers`",
        },
        "DROP DATABASE IF EXISTS state_otherdb_answers; CREATE DATABASE state_otherdb_answers; \
         CREATE TABLE state_otherdb_answers.t (name TEXT); \
         INSERT INTO state_otherdb_answers.t VALUES ('bob'); \
         GRANT SELECT ON state_otherdb_answers.* TO 'sqlgate_reader_state_otherdb'@'%';",
    );
}

/// The data digests a push run's `sqlgate baseline update` records on a fresh database.
fn recorded_digests(server: &'static Server, database: &str) -> serde_json::Value {
    fresh_database(server, database);
    let dir = repository(server.kind);
    let root = dir.path();
    let push = Run {
        server,
        database,
        event: Event::Push,
        base: git(root, &["rev-parse", "HEAD"]),
    };
    let recorded = push.workflow(root);
    assert!(recorded.status.success(), "{}", text(&recorded));
    let baseline: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("baseline.json")).unwrap())
            .unwrap();
    baseline["data_digests"].clone()
}

/// Two fresh loads of the same data on the same server give the same digests, structure
/// entries included (an honest run stays stable), which record the planner's settings.
fn check_stable(server: &'static Server, database: &str, setting: &str) {
    let first = recorded_digests(server, database);
    let second = recorded_digests(server, database);
    assert_eq!(first, second);
    let structure = first[format!("{database}:structure")].as_str().unwrap();
    assert!(structure.contains(setting), "{structure}");
}

#[test]
fn postgres_digests_of_two_fresh_loads_are_the_same() {
    check_stable(
        servers::postgres(),
        "state_stable",
        "setting enable_hashagg=on",
    );
}

#[test]
fn mariadb_digests_of_two_fresh_loads_are_the_same() {
    let _shared = GLOBALS.read().unwrap_or_else(|e| e.into_inner());
    check_stable(
        servers::mariadb(),
        "state_stable",
        "setting optimizer_switch=",
    );
}

/// What a PostgreSQL preparation can set that changes plans, each named when it changes: an
/// index's definition (`DESC`, `INCLUDE`, partial `WHERE`), a table's storage options, a
/// column's statistics target and `n_distinct` override, an extended statistics object.
#[test]
fn postgres_what_changes_plans_is_named_when_it_changes() {
    let server = servers::postgres();
    let database = "state_plans";
    let lever = Lever {
        question: "SELECT name FROM customers ORDER BY id DESC LIMIT 1",
        wrong: "SELECT name FROM customers WHERE id > 0 LIMIT 1",
        names: "`state_plans:structure` differ",
    };
    let judged = pull_request_with(server, database, &lever, || {
        server.admin_sql(
            database,
            "CREATE INDEX newest ON customers (id DESC) INCLUDE (name) WHERE id > 0; \
             ALTER TABLE customers SET (fillfactor = 70); \
             ALTER TABLE customers ALTER COLUMN name SET (n_distinct = 5); \
             ALTER TABLE customers ALTER COLUMN id SET STATISTICS 500; \
             CREATE STATISTICS pairs (ndistinct) ON id, name FROM customers;",
        );
    });
    let all = text(&judged);
    assert_eq!(judged.status.code(), Some(2), "{all}");
    for part in [
        lever.names,
        "`index newest=CREATE INDEX newest ON public.customers USING btree (id DESC) INCLUDE (name) WHERE (id > 0)`",
        "`options customers=fillfactor=70`",
        "`column customers.name=statistics -1 options n_distinct=5`",
        "`column customers.id=statistics 500 options `",
        "`statistics public.pairs=CREATE STATISTICS public.pairs (ndistinct) ON id, name FROM customers target -1`",
    ] {
        assert!(all.contains(part), "expected {part}: {all}");
    }
    assert_no_secret(server, &judged);
}

/// Restores the PostgreSQL server's `geqo_threshold` when dropped, panic or not.
struct GeqoRestored(&'static Server);

impl Drop for GeqoRestored {
    fn drop(&mut self) {
        self.0
            .admin_sql("postgres", "ALTER SYSTEM RESET geqo_threshold");
        self.0.admin_sql("postgres", "SELECT pg_reload_conf()");
    }
}

/// A planner setting changed for the whole server (`ALTER SYSTEM`, then a reload) is named: the
/// structure entry records the value a scoring session starts with. The setting is
/// `geqo_threshold`, which no query of these tests reaches (it takes 12 `FROM` items), so the
/// other tests sharing the server plan as before.
#[test]
fn postgres_a_planner_setting_changed_by_alter_system_is_named() {
    let server = servers::postgres();
    let lever = Lever {
        question: QUESTION,
        wrong: "SELECT name FROM customers WHERE id = 1 + 1",
        names: "`setting geqo_threshold=13` (recorded: `12`)",
    };
    let mut restore = None;
    let judged = pull_request_with(server, "state_alter_system", &lever, || {
        server.admin_sql("postgres", "ALTER SYSTEM SET geqo_threshold = 13");
        restore = Some(GeqoRestored(server));
        server.admin_sql("postgres", "SELECT pg_reload_conf()");
        let reloaded = (0..50).any(|_| {
            let value = server.admin_sql(
                "postgres",
                "SELECT reset_val FROM pg_settings WHERE name = 'geqo_threshold'",
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
            value.trim() == "13"
        });
        assert!(reloaded, "the server did not reload its configuration");
    });
    drop(restore);
    let all = text(&judged);
    assert_eq!(judged.status.code(), Some(2), "{all}");
    assert!(all.contains(lever.names), "expected {}: {all}", lever.names);
    assert_no_secret(server, &judged);
}
