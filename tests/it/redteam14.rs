//! Red team round 14 (issue 44): pull requests run as GitHub Actions runs `sqlgate action` on a
//! `pull_request` event, each turning a regressing change green if it can. Every test asserts
//! the SECURE outcome, so a failing test is a win for the attacker, and each runs its control
//! (the same regressing pull request without the lever), which must exit 1. The threat model is
//! SECURITY.md's "What the workflow must do": the pull request controls its tree and the SQL the
//! workflow's preparation runs on the server, not programs in the gate's job.

use super::redteam9::{control_fails, not_passed};

/// A table the read-only role cannot read (class 3): the data digests cover "every table the
/// role can read", and the start-up check asks only that the benchmark's tables be present, so a
/// table the preparation creates and revokes from the role is in no digest and no lever list.
/// Its row type is still a type every role may name, so a prediction that casts to it runs only
/// when the table exists: the preparation chooses whether the wrong prediction for item 5
/// (`SELECT count(*) FROM customers`: 2) answers 2 or fails.
mod unreadable_table {
    use crate::common;
    use common::servers::{self, READER};
    use common::trust_flow::*;

    /// The table the preparation adds and keeps from the role.
    const HIDDEN: &str = "rt14_hidden";

    /// The pull request's wrong prediction for item 5: the table's row type named in a cast.
    const WRONG: &str = "SELECT count(*) FROM customers WHERE NULL::rt14_hidden IS NULL";

    /// The gate's output on the pull request predicting item 5 as `wrong`, `lever` run by the
    /// preparation just before the gate when given.
    pub(super) fn judge(database: &str, wrong: &str, lever: Option<&str>) -> std::process::Output {
        let server = servers::postgres();
        let dir = recorded_repository(server, database, &GOLD);
        let root = dir.path();
        let mut predictions = GOLD.to_vec();
        predictions[5] = wrong;
        let base = hostile_predictions(root, &predictions);
        let run = Run::pull_request(server, database, base);
        run.workflow_with(root, || {
            if let Some(lever) = lever {
                server.admin_sql(database, lever);
            }
        })
    }

    #[test]
    fn a_table_the_role_cannot_read_probed_by_its_row_type_does_not_pass() {
        super::control_fails(&judge("rt14_hid_c", WRONG, None));
        let lever = format!(
            "CREATE TABLE {HIDDEN} (answer int); REVOKE ALL ON {HIDDEN} FROM PUBLIC, {READER};"
        );
        let judged = judge("rt14_hid_l", WRONG, Some(&lever));
        eprintln!("{}", text(&judged));
        super::not_passed(&judged);
    }
}

/// A composite type (class 3): `CREATE TYPE t AS (...)` makes a row type whose `pg_type` entry
/// points at a `pg_class` entry of kind `c`. The lever list skips every type with a relation
/// (`typrelid <> 0`, meant for tables' row types) and lists relations of kinds `v`, `m`, `f`, `p`
/// only; the data digests read kinds `r`, `p`, `v`, `m`, `f`. So a composite type the
/// preparation creates is seen by nothing, and a cast to it succeeds only when it exists.
mod composite_type {
    use super::unreadable_table::judge;
    use crate::common::trust_flow::text;

    /// The pull request's wrong prediction for item 5: the composite type named in a cast.
    const WRONG: &str = "SELECT count(*) FROM customers WHERE NULL::rt14_answer IS NULL";

    #[test]
    fn a_composite_type_made_by_the_preparation_and_probed_by_a_cast_does_not_pass() {
        super::control_fails(&judge("rt14_cmp_c", WRONG, None));
        let judged = judge(
            "rt14_cmp_l",
            WRONG,
            Some("CREATE TYPE rt14_answer AS (x int)"),
        );
        eprintln!("{}", text(&judged));
        super::not_passed(&judged);
    }
}

/// The server's stack limit (class 3): `max_stack_depth` decides whether a deeply nested
/// expression is an error. It is a superuser setting (no session of the role can change it), in
/// the category `Resource Usage / Memory`, which the recorded structure does not read (it reads
/// `work_mem` and `hash_mem_multiplier` of that category only), and the preparation sets it for
/// every later session with `ALTER SYSTEM` and a reload: no role or database setting, so no
/// lever either. The wrong prediction for item 5 (`SELECT count(*) FROM customers`: 2) wraps a
/// constant in 4,500 `abs(...)` calls: past the default 2 MB limit (an error), within 6 MB (2).
mod stack_depth {
    use super::unreadable_table::judge;
    use crate::common::servers::{self, Server};
    use crate::common::trust_flow::text;

    /// Restores the server's `max_stack_depth` when dropped, panic or not.
    struct Restore(&'static Server);

    impl Drop for Restore {
        fn drop(&mut self) {
            self.0.admin_sql(
                "postgres",
                "ALTER SYSTEM RESET max_stack_depth; SELECT pg_reload_conf();",
            );
        }
    }

    /// The pull request's wrong prediction for item 5.
    fn wrong() -> String {
        let depth = 4500;
        format!(
            "SELECT count(*) FROM customers WHERE 1 = {}1{}",
            "abs(".repeat(depth),
            ")".repeat(depth)
        )
    }

    #[test]
    fn a_stack_limit_raised_by_the_preparation_does_not_pass_a_deep_prediction() {
        super::control_fails(&judge("rt14_stk_c", &wrong(), None));
        let _restore = Restore(servers::postgres());
        let lever = "ALTER SYSTEM SET max_stack_depth = '6MB'; SELECT pg_reload_conf(); \
                     SELECT pg_sleep(0.5);";
        let judged = judge("rt14_stk_l", &wrong(), Some(lever));
        eprintln!("{}", text(&judged));
        super::not_passed(&judged);
    }
}

/// MariaDB's query cache (class 3): a global cache of result sets, keyed by the query's bytes,
/// its database and a few session flags (character sets, `sql_mode`, `time_zone`,
/// `div_precision_increment`, ... and whether a transaction is open), which `SET GLOBAL
/// query_cache_type` turns on. Its key holds none of the other settings sqlgate pins in every
/// scoring session (`default_regex_flags`, `max_recursive_iterations`, ...). The preparation
/// runs the pull request's wrong prediction itself, under `default_regex_flags = 'EXTENDED'`
/// (white space in a pattern ignored), inside a read-only transaction as sqlgate's sessions do:
/// the cached result is the gold's, and the scoring session is served it from the cache, whatever
/// its own pinned flags. No digest or recorded setting reads the cache (`query_cache_type`,
/// `query_cache_size` and the cache's contents). The key also holds the client's capability
/// flags: an entry the `mariadb` command-line client made is not served to sqlgate (tried:
/// contained), one made through the `mysql` crate sqlgate itself uses is, so the preparation
/// here runs its SQL through that crate.
mod query_cache {
    use crate::common;
    use common::servers;
    use common::trust_flow::*;

    /// The pull request's wrong prediction for item 5 (`SELECT count(*) FROM customers`: 2):
    /// 0 rows without the `x` flag, 2 with it.
    const WRONG: &str = "SELECT count(*) FROM customers WHERE 'ab' REGEXP 'a b'";

    /// The preparation's SQL: the wrong prediction cached under the extended flag.
    const LEVER: [&str; 6] = [
        "SET NAMES utf8mb4",
        "SET SESSION time_zone = '+00:00'",
        "SET SESSION default_regex_flags = 'EXTENDED'",
        "START TRANSACTION READ ONLY",
        WRONG,
        "COMMIT",
    ];

    /// Runs [`LEVER`] on `database` as the admin, through the `mysql` crate.
    fn prepare(server: &servers::Server, database: &str) {
        use mysql::prelude::Queryable;
        let opts = mysql::Opts::from_url(&server.admin_url(database)).unwrap();
        let mut conn = mysql::Conn::new(opts).unwrap();
        for statement in LEVER {
            conn.query_drop(statement).unwrap();
        }
    }

    /// The gate's output on the pull request predicting item 5 as [`WRONG`], the cache turned on
    /// and filled just before the gate when `lever`.
    fn judge(database: &str, lever: bool) -> std::process::Output {
        let server = servers::mariadb();
        let dir = recorded_repository(server, database, &GOLD);
        let root = dir.path();
        let mut predictions = GOLD.to_vec();
        predictions[5] = WRONG;
        let base = hostile_predictions(root, &predictions);
        let run = Run::pull_request(server, database, base);
        let mut cache = None;
        let judged = run.workflow_with(root, || {
            if lever {
                cache = Some(Global::set(server, "query_cache_type", "ON"));
                prepare(server, database);
            }
        });
        if cache.is_some() {
            server.admin_sql("mysql", "RESET QUERY CACHE");
        }
        judged
    }

    #[test]
    fn a_result_cached_by_the_preparation_under_other_flags_does_not_pass() {
        super::control_fails(&judge("rt14_qc_c", false));
        let judged = judge("rt14_qc_l", true);
        eprintln!("{}", text(&judged));
        super::not_passed(&judged);
    }
}

/// Object ids read through `oidvectortypes` (class 3): `oidvectortypes(oidvector)` prints the
/// names of the types whose ids it is given, read from `pg_type`; its name has no refused prefix
/// and its argument is an untyped literal. Ids are the server's bookkeeping, not the rows: the
/// preparation recreates `customers` with the same rows in the same order (`CREATE TABLE ...
/// (LIKE ...)`, `INSERT ... SELECT`, the old one dropped), which no digest tells apart, and its
/// row type gets a new id. On a fresh server per job the ids are the same on every run, so the
/// pull request's author learns the id by running the workflow once; the test reads it as the
/// admin after the lever and writes it into the prediction, committed before the gate. The wrong
/// prediction for item 5 (`SELECT count(*) FROM customers`: 2) counts the customers only when that
/// id names `customers` (without the lever it names no type of the database: `-`, 0 rows).
mod object_ids {
    use crate::common;
    use common::servers;
    use common::trust_flow::*;
    use common::{git, text};

    /// The pull request's wrong prediction for item 5, the id `oid` in it.
    fn wrong(oid: &str) -> String {
        format!("SELECT count(*) FROM customers WHERE oidvectortypes('{oid}') = 'customers'")
    }

    /// The preparation's SQL: `customers` recreated with its rows, in their order.
    const LEVER: &str = "ALTER TABLE customers RENAME TO rt14_old; \
                         CREATE TABLE customers (LIKE rt14_old INCLUDING ALL); \
                         INSERT INTO customers SELECT * FROM rt14_old; DROP TABLE rt14_old;";

    /// The gate's output on the pull request predicting item 5 with the id `oid` (`None`: the
    /// one `customers`' row type gets from the lever, which runs just before the gate), and the
    /// id used.
    fn judge(database: &str, oid: Option<&str>) -> (std::process::Output, String) {
        let server = servers::postgres();
        let dir = recorded_repository(server, database, &GOLD);
        let root = dir.path();
        let mut predictions: Vec<String> = GOLD.iter().map(|g| g.to_string()).collect();
        predictions[5] = wrong(oid.unwrap_or("0"));
        let refs: Vec<&str> = predictions.iter().map(String::as_str).collect();
        let base = hostile_predictions(root, &refs);
        let run = Run::pull_request(server, database, base);
        let mut used = oid.unwrap_or_default().to_string();
        let judged = run.workflow_with(root, || {
            if oid.is_none() {
                server.admin_sql(database, LEVER);
                let sql = "SELECT reltype FROM pg_class WHERE relname = 'customers'";
                used = server.admin_sql(database, sql).trim().to_string();
                predictions[5] = wrong(&used);
                std::fs::write(root.join("preds/model.txt"), predictions.join("\n") + "\n")
                    .unwrap();
                git(root, &["commit", "-qam", "the id learnt from a run"]);
            }
        });
        (judged, used)
    }

    #[test]
    fn a_table_recreated_by_the_preparation_and_probed_by_its_type_id_does_not_pass() {
        let (judged, oid) = judge("rt14_oid_l", None);
        eprintln!("{}", text(&judged));
        super::control_fails(&judge("rt14_oid_c", Some(&oid)).0);
        super::not_passed(&judged);
    }
}
