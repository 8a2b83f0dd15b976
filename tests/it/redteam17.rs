//! Red team round 17 (issue 44): pull requests run as GitHub Actions runs `sqlgate action` on a
//! `pull_request` event, each turning a regressing change green if it can. Every test asserts
//! the SECURE outcome, so a failing test is a win for the attacker, and each runs its control
//! (the same regressing pull request without the lever), which must exit 1. The threat model is
//! SECURITY.md's "What the workflow must do": the pull request controls its tree and the SQL the
//! workflow's preparation runs on the server, not programs in the gate's job.

/// State of a base database (or of the server) that the round 16 fix (a digest of every
/// `PUBLIC`-readable catalog of `pg_catalog`, ids written as the objects they name, and of the
/// shared catalogs) does not cover, under `dataset.kind: bird-critic` on PostgreSQL (class 3):
/// each item runs on a clone of its base database as a role with no catalog refusal. The
/// preparation changes something outside `pg_catalog`'s catalogs (a row of a table of
/// `information_schema`), a setting outside the recorded categories (`ALTER SYSTEM` and a
/// reload), or an object id only (a function dropped and created again, the same in every
/// catalog column but its id), and the pull request's wrong prediction for lsq_001 (a match on
/// the base) returns the right rows only when the change is there: 0 rows otherwise. Each lever
/// is undone when its test ends.
mod bird_critic_unrecorded_state {
    use crate::redteam15::bird_critic_server_state::attempt_with as attempt;

    /// A row added to a table of `information_schema` (`sql_features`, which `PUBLIC` reads and
    /// the administrator may write): not in `pg_catalog`, so no catalog digest reads it, and
    /// the row digest leaves system schemas out. A clone copies it.
    #[test]
    fn a_row_added_to_an_information_schema_table_does_not_pass() {
        attempt(
            |_| {
                "SELECT status, count(id) AS n FROM orders WHERE EXISTS (SELECT 1 FROM \
                 information_schema.sql_features WHERE feature_name = 'rt17') GROUP BY status \
                 ORDER BY status"
                    .to_string()
            },
            (
                "shop",
                "INSERT INTO information_schema.sql_features VALUES ('X999', 'rt17', '', '', 'NO', NULL, \
                 '')",
            ),
            "DELETE FROM information_schema.sql_features WHERE feature_name = 'rt17'",
        );
    }

    /// A setting of the server's configuration outside the recorded categories (`Reporting and
    /// Logging`), changed with `ALTER SYSTEM` and a reload; every role reads it with
    /// `current_setting`.
    #[test]
    fn a_logging_setting_changed_with_alter_system_does_not_pass() {
        attempt(
            |_| {
                "SELECT status, count(id) AS n FROM orders WHERE \
                 current_setting('log_min_duration_statement') = '4242ms' GROUP BY status \
                 ORDER BY status"
                    .to_string()
            },
            (
                "postgres",
                "ALTER SYSTEM SET log_min_duration_statement = 4242; SELECT pg_reload_conf(); \
                 SELECT pg_sleep(1)",
            ),
            "ALTER SYSTEM RESET log_min_duration_statement; SELECT pg_reload_conf(); \
             SELECT pg_sleep(1)",
        );
    }

    /// The base's function `round(double precision, integer)` dropped and created again the
    /// same: every catalog row is as before but the function's object id, which the catalog
    /// digest writes as the object it names. The prediction reads the id (`::regprocedure::oid`)
    /// and compares it with the base's.
    #[test]
    fn a_function_created_again_under_a_new_object_id_does_not_pass() {
        attempt(
            |server| {
                let oid = server.admin_sql(
                    "shop",
                    "SELECT 'public.round(double precision, integer)'::regprocedure::oid",
                );
                format!(
                    "SELECT status, count(id) AS n FROM orders WHERE \
                     'public.round(double precision, integer)'::regprocedure::oid <> {} \
                     GROUP BY status ORDER BY status",
                    oid.trim()
                )
            },
            (
                "shop",
                "DROP FUNCTION round(double precision, integer); CREATE FUNCTION \
                 round(double precision, integer) RETURNS numeric LANGUAGE sql IMMUTABLE AS \
                 'SELECT round($1::numeric, $2)'",
            ),
            "SELECT 1",
        );
    }

    /// An index's `indcheckxmin` set by the administrator (`UPDATE pg_index`): a flag every role
    /// reads, left out of the catalog digest as if it changed by itself between two loads.
    #[test]
    fn an_index_flag_the_digest_leaves_out_set_by_the_administrator_does_not_pass() {
        attempt(
            |_| {
                "SELECT status, count(id) AS n FROM orders WHERE (SELECT indcheckxmin FROM \
                 pg_index WHERE indexrelid = 'orders_pkey'::regclass) GROUP BY status ORDER BY \
                 status"
                    .to_string()
            },
            (
                "shop",
                "UPDATE pg_index SET indcheckxmin = true WHERE indexrelid = \
                 'orders_pkey'::regclass",
            ),
            "UPDATE pg_index SET indcheckxmin = false WHERE indexrelid = 'orders_pkey'::regclass",
        );
    }

    /// The base's `orders` rewritten by `VACUUM FULL` (same rows, same catalog rows but its file
    /// number, `relfilenode`, which the digest leaves out); the prediction compares the file
    /// number with the base's.
    #[test]
    fn a_table_rewritten_under_a_new_file_number_does_not_pass() {
        attempt(
            |server| {
                let node = server.admin_sql("shop", "SELECT pg_relation_filenode('orders')");
                format!(
                    "SELECT status, count(id) AS n FROM orders WHERE \
                     pg_relation_filenode('orders') <> {} GROUP BY status ORDER BY status",
                    node.trim()
                )
            },
            ("shop", "VACUUM FULL orders"),
            "SELECT 1",
        );
    }
}

/// A base whose config a direct push broke (class 2: not deleted, as in round 16, but unreadable
/// YAML), and a pull request repairing it with the regressed system renamed (`C3` to `C3new`,
/// the same regressed predictions): the run has no `C3` to compare with the baseline's, and a
/// new system with no baseline. The baseline records C3; a system the baseline has and the run
/// lacks must not pass.
mod repaired_config_renaming_a_system {
    use crate::common::{self, repo};
    use crate::repair::judge_pr;

    /// The gated example whose config a direct push broke, and a pull request repairing it as
    /// `config` (given the example's) with C3 regressing on 30 items: exit code and output.
    fn repaired(config: impl Fn(&str) -> String) -> (Option<i32>, String) {
        let dir = repo::example(false);
        let root = dir.path();
        repo::gated_main(root);
        let good = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
        std::fs::write(root.join("sqlgate.yml"), format!("{good}\n  : [unclosed\n")).unwrap();
        let base = repo::commit_base(root, "a direct push that breaks the config", "pr");
        std::fs::write(root.join("sqlgate.yml"), config(&good)).unwrap();
        common::break_predictions(root, "C3", 30);
        judge_pr(root, &base)
    }

    #[test]
    fn a_repair_renaming_the_regressed_system_does_not_pass() {
        let (code, out) = repaired(str::to_string);
        assert_eq!(code, Some(1), "control: {out}");
        let (code, out) = repaired(|good| {
            good.replace("{ name: C3, path:", "{ name: C3new, path:")
                .replace("reference: ex\n", "")
        });
        eprintln!("{out}");
        assert_ne!(code, Some(0), "the regressing pull request passed: {out}");
    }
}
