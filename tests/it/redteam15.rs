//! Red team round 15 (issue 44): pull requests run as GitHub Actions runs `sqlgate action` on a
//! `pull_request` event, each turning a regressing change green if it can. Every test asserts
//! the SECURE outcome, so a failing test is a win for the attacker, and each runs its control
//! (the same regressing pull request without the lever), which must exit 1. The threat model is
//! SECURITY.md's "What the workflow must do": the pull request controls its tree and the SQL the
//! workflow's preparation runs on the server, not programs in the gate's job.

/// Server state outside the base databases under `dataset.kind: bird-critic` on PostgreSQL
/// (class 3): each item's predictions run on a clone of its base database, as a role of its
/// own, with no catalog refusal (the kind runs state-changing SQL in a sandbox). The gate holds
/// the base databases' data (digested at start and end) but a prediction can read any server
/// catalog every role can: `pg_roles`, and the settings every role gets at login (`ALTER ROLE
/// ALL SET`). The preparation makes a role, or sets a custom setting for every role, and the
/// pull request's wrong prediction for lsq_001 (`SELECT status, COUNT(*) FROM orders GROUP BY
/// status`, a match on the base) returns the right rows only when that state is there: 0 rows
/// otherwise. Each lever is undone when its test ends.
mod bird_critic_server_state {
    use crate::common::servers::{self, Server};
    use crate::livesql_pg::load_databases;
    use crate::livesql_pg_gate::{judged_change, predict};

    /// Runs its SQL as the administrator on `postgres` when dropped, panic or not.
    struct Undo(&'static Server, &'static str);

    impl Drop for Undo {
        fn drop(&mut self) {
            self.0.admin_sql("postgres", self.1);
        }
    }

    /// The gate's exit code and output on the pull request predicting lsq_001 as `wrong`, the
    /// preparation running `lever` (as the administrator) just before the gate when given.
    fn judged(wrong: &str, lever: Option<&str>) -> (Option<i32>, String) {
        let server = servers::postgres();
        let (code, said, _) = judged_change(server, |root| {
            predict(root, "lsq_001", &[wrong]);
            if let Some(lever) = lever {
                server.admin_sql("postgres", lever);
            }
        });
        (code, said)
    }

    /// Asserts the control (no lever) exits 1, then that the lever does not pass.
    fn attempt(wrong: &str, lever: &str, undo: &'static str) {
        let _db_ids = servers::db_id_databases();
        let server = servers::postgres();
        load_databases(server);
        let (code, said) = judged(wrong, None);
        assert_eq!(code, Some(1), "control: {said}");
        let _undo = Undo(server, undo);
        let (code, said) = judged(wrong, Some(lever));
        eprintln!("{said}");
        assert_ne!(code, Some(0), "the regressing pull request passed: {said}");
    }

    #[test]
    fn a_role_made_by_the_preparation_and_read_from_pg_roles_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE EXISTS (SELECT 1 FROM pg_roles \
             WHERE rolname = 'rt15_flag') GROUP BY status ORDER BY status",
            "DROP ROLE IF EXISTS rt15_flag; CREATE ROLE rt15_flag",
            "DROP ROLE IF EXISTS rt15_flag",
        );
    }

    #[test]
    fn a_setting_every_role_gets_at_login_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE current_setting('rt15.flag', \
             true) = 'on' GROUP BY status ORDER BY status",
            "ALTER ROLE ALL SET rt15.flag = 'on'",
            "ALTER ROLE ALL RESET rt15.flag",
        );
    }
}
