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
pub(crate) mod bird_critic_server_state {
    use crate::common::bird_critic_gate::predict;
    use crate::common::servers::{self, Server};
    use crate::livesql_pg::load_databases;
    use crate::livesql_pg_gate::PG;

    /// Runs its SQL as the administrator on its database when dropped, panic or not.
    struct Undo(&'static Server, &'static str, &'static str);

    impl Drop for Undo {
        fn drop(&mut self) {
            self.0.admin_sql(self.1, self.2);
        }
    }

    /// The gate's exit code and output on the pull request predicting lsq_001 as `wrong` (of
    /// the gated Query items, `GateCorpus::judged_query_change`), the preparation running
    /// `lever` (a database and SQL, as the administrator) just before the gate when given.
    fn judged(wrong: &str, lever: Option<(&str, &str)>) -> (Option<i32>, String) {
        let server = servers::postgres();
        let (code, said, _) = PG.judged_query_change(
            server,
            |root| {
                predict(root, "lsq_001", &[wrong]);
                if let Some((database, lever)) = lever {
                    server.admin_sql(database, lever);
                }
            },
            || (),
        );
        (code, said)
    }

    /// Asserts the control (no lever) exits 1, then that `lever` (run on `database`) does not
    /// pass; `undo` runs on `database` before the control and when the test ends.
    pub(crate) fn attempt(wrong: &str, lever: (&'static str, &str), undo: &'static str) {
        attempt_with(|_| wrong.to_string(), lever, undo);
    }

    /// [`attempt`] with the prediction made from the freshly loaded server (to read what the
    /// base holds).
    pub(crate) fn attempt_with(
        wrong: impl Fn(&Server) -> String,
        (database, lever): (&'static str, &str),
        undo: &'static str,
    ) {
        let server = servers::postgres();
        load_databases(server);
        let _undo = Undo(server, database, undo);
        server.admin_sql(database, undo);
        let wrong = wrong(server);
        let (code, said) = judged(&wrong, None);
        assert_eq!(code, Some(1), "control: {said}");
        let (code, said) = judged(&wrong, Some((database, lever)));
        eprintln!("{said}");
        assert_ne!(code, Some(0), "the regressing pull request passed: {said}");
    }

    #[test]
    fn a_role_made_by_the_preparation_and_read_from_pg_roles_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE EXISTS (SELECT 1 FROM pg_roles \
             WHERE rolname = 'rt15_flag') GROUP BY status ORDER BY status",
            (
                "postgres",
                "DROP ROLE IF EXISTS rt15_flag; CREATE ROLE rt15_flag",
            ),
            "DROP ROLE IF EXISTS rt15_flag",
        );
    }

    #[test]
    fn a_setting_every_role_gets_at_login_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE current_setting('rt15.flag', \
             true) = 'on' GROUP BY status ORDER BY status",
            ("postgres", "ALTER ROLE ALL SET rt15.flag = 'on'"),
            "ALTER ROLE ALL RESET rt15.flag",
        );
    }

    /// A function the preparation adds to the base database itself, which every clone copies:
    /// the start-up check of a read-only run refuses user-defined functions as levers.
    #[test]
    fn a_function_made_in_the_base_database_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE rt15_flag() = 1 GROUP BY status \
             ORDER BY status",
            (
                "shop",
                "CREATE FUNCTION rt15_flag() RETURNS int LANGUAGE sql AS 'SELECT 1'",
            ),
            "DROP FUNCTION IF EXISTS rt15_flag()",
        );
    }
}

/// Files of the pull request's tree at paths the base config names for what it writes (class
/// 1): the report's output (`report.output`: a file sqlgate did not write, which no output may
/// replace) and the baseline's path made a folder. Either could make the base's config fail a
/// check made when a config is loaded, and a base config that does not load lets the pull
/// request's own config run. The pull request regresses C3 on 30 items and loosens its own
/// config's gate; the secure outcome is the base's config judging it (exit 1), or a refusal
/// (exit 2), never the pull request's config running.
pub(crate) mod written_paths {
    use crate::common;
    use common::repo::{self, commit_all, judged};
    use common::text;
    use std::path::Path;

    /// The example's config with the gate loosened (drop of 100 points allowed, no other rule).
    fn loosened(config: &str) -> String {
        config
            .replace("max_drop_points: 0.0", "max_drop_points: 100.0")
            .replace("  per_difficulty: { extra: 2.0 }\n", "")
            .replace("  significance: { test: mcnemar-exact, alpha: 0.05 }\n", "")
    }

    /// The pull request (C3 regressed, the config loosened, `lever` applied to its tree when
    /// given) judged against the gated example's `main`.
    fn judged_with(lever: Option<fn(&Path)>) -> std::process::Output {
        let dir = repo::example(false);
        let root = dir.path();
        let base = repo::gated_main(root);
        common::git(root, &["checkout", "-qb", "pr"]);
        let config = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
        std::fs::write(root.join("sqlgate.yml"), loosened(&config)).unwrap();
        common::break_predictions(root, "C3", 30);
        if let Some(lever) = lever {
            lever(root);
        }
        commit_all(root, "the pull request");
        common::git(root, &["add", "-A"]);
        common::git(root, &["commit", "-qm", "new files", "--allow-empty"]);
        judged(root, &base, &[])
    }

    /// Asserts the control exits 1 and the lever neither passes nor runs the pull request's
    /// config.
    pub(crate) fn attempt(lever: fn(&Path)) {
        let control = judged_with(None);
        assert_eq!(
            control.status.code(),
            Some(1),
            "control: {}",
            text(&control)
        );
        let judged = judged_with(Some(lever));
        let said = text(&judged);
        eprintln!("{said}");
        assert_ne!(judged.status.code(), Some(0), "passed: {said}");
        assert!(
            !said.contains("this pull request's config ran"),
            "the pull request's config ran: {said}"
        );
    }

    #[test]
    fn a_committed_file_at_the_reports_output_path_does_not_run_the_pull_requests_config() {
        attempt(|root| {
            std::fs::write(root.join("sqlgate-report.md"), "not sqlgate's\n").unwrap();
        });
    }

    #[test]
    fn the_baselines_path_made_a_folder_does_not_run_the_pull_requests_config() {
        attempt(|root| {
            std::fs::remove_file(root.join("baseline.json")).unwrap();
            std::fs::create_dir(root.join("baseline.json")).unwrap();
            std::fs::write(root.join("baseline.json/README"), "moved\n").unwrap();
        });
    }
}
