//! Red team round 18 (issue 44): pull requests run as GitHub Actions runs `sqlgate action` on a
//! `pull_request` event, each turning a regressing change green if it can. Every test asserts
//! the SECURE outcome, so a failing test is a win for the attacker, and each runs its control
//! (the same regressing pull request without the lever), which must exit 1. The threat model is
//! SECURITY.md's "What the workflow must do": the pull request controls its tree and the SQL the
//! workflow's preparation runs on the server as the administrator, not programs in the gate's
//! job.

/// `dataset.kind: bird-critic` on MariaDB (class 3): each item runs on a clone of its base
/// database as a user of its own. The preparation changes server state that user can read and
/// that neither the base's data digests nor its `<db>:clone` entry hold, just before the gate;
/// the pull request's wrong prediction for lsq_001 (a match on the base) returns the right rows
/// only when the change is there (0 rows, or an error, otherwise). Each lever is undone when its
/// test ends.
pub(crate) mod bird_critic_mariadb_server_state {
    use crate::common::bird_critic_gate::predict;
    use crate::common::servers::Server;
    use crate::livesql_my_gate::{judged_query_change, loaded};

    /// Undoes a lever (SQL as the administrator on `mysql`) when dropped.
    struct Undo(&'static Server, &'static str);

    impl Drop for Undo {
        fn drop(&mut self) {
            self.0.admin_sql("mysql", self.1);
        }
    }

    /// The gate on the pull request predicting lsq_001 as `wrong`: first without the lever
    /// (the control, which must exit 1), then with `lever` run as the administrator on `mysql`
    /// after the baseline, just before the gate (which must not exit 0).
    pub(crate) fn attempt(wrong: &'static str, lever: &'static str, undo: &'static str) {
        let (server, _) = loaded();
        let _undo = Undo(server, undo);
        server.admin_sql("mysql", undo);
        let change = |root: &std::path::Path| predict(root, "lsq_001", &[wrong]);
        let (code, said, _) = judged_query_change(server, change, || ());
        assert_eq!(code, Some(1), "control: {said}");
        let (code, said, _) = judged_query_change(server, change, || {
            server.admin_sql("mysql", lever);
        });
        eprintln!("{said}");
        assert_ne!(code, Some(0), "the regressing pull request passed: {said}");
    }

    /// `SET GLOBAL div_precision_increment`: every new session inherits it, the clone user's
    /// too (its session pins nothing), while the digest's session pins it to 4 and records the
    /// pinned value. `1/3` then has nine decimals on the clone.
    #[test]
    fn a_global_division_precision_a_clone_session_inherits_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE 1/3 = 0.333333333 GROUP BY status \
             ORDER BY status",
            "SET GLOBAL div_precision_increment = 9",
            "SET GLOBAL div_precision_increment = 4",
        );
    }

    /// `SET GLOBAL time_zone`: inherited by the clone user's session (the digest's pins UTC
    /// and records `+00:00`).
    #[test]
    fn a_global_time_zone_a_clone_session_inherits_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE @@time_zone = '+05:00' GROUP BY \
             status ORDER BY status",
            "SET GLOBAL time_zone = '+05:00'",
            "SET GLOBAL time_zone = 'SYSTEM'",
        );
    }

    /// `SET GLOBAL init_connect`: the server runs it at every login of a user without `SUPER`,
    /// the clone user's included, before the item; here it sets a user variable the prediction
    /// reads (it could as well change the clone's rows).
    #[test]
    fn an_init_connect_run_at_the_clone_users_login_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE @rt18 = 1 GROUP BY status ORDER BY \
             status",
            "SET GLOBAL init_connect = 'SET @rt18 = 1'",
            "SET GLOBAL init_connect = ''",
        );
    }

    /// A database of the preparation's, granted to `PUBLIC` (MariaDB 10.11): every user reads
    /// it, the clone's too, and no digest covers a database the dataset does not name.
    #[test]
    fn a_database_granted_to_public_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE EXISTS (SELECT 1 FROM rt18.flag) \
             GROUP BY status ORDER BY status",
            "CREATE DATABASE rt18; CREATE TABLE rt18.flag (a INT); INSERT INTO rt18.flag \
             VALUES (1); GRANT SELECT ON rt18.* TO PUBLIC",
            "DROP DATABASE IF EXISTS rt18; DELETE FROM mysql.db WHERE Db = 'rt18'; \
             FLUSH PRIVILEGES",
        );
    }

    /// A function of the preparation's in another database, `EXECUTE` granted to `PUBLIC`
    /// (MariaDB 10.11) on it alone: every user may call it, the clone's too, and no digest
    /// covers it.
    #[test]
    fn a_function_in_another_database_granted_to_public_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE rt18f.flag() = 1 GROUP BY status \
             ORDER BY status",
            "CREATE DATABASE rt18f; CREATE FUNCTION rt18f.flag() RETURNS INT DETERMINISTIC \
             RETURN 1; GRANT EXECUTE ON FUNCTION rt18f.flag TO PUBLIC",
            "DROP DATABASE IF EXISTS rt18f; DELETE FROM mysql.procs_priv WHERE Db = 'rt18f'; \
             FLUSH PRIVILEGES",
        );
    }

    /// A time zone added to `mysql.time_zone*`: `CONVERT_TZ` reads those tables whatever the
    /// user's rights, and no digest covers the `mysql` database.
    #[test]
    fn a_time_zone_added_to_the_server_tables_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE CONVERT_TZ('2020-01-01 00:00:00', \
             '+00:00', 'Rt18/Zone') IS NOT NULL GROUP BY status ORDER BY status",
            "INSERT INTO mysql.time_zone (Time_zone_id, Use_leap_seconds) VALUES (4242, 'N'); \
             INSERT INTO mysql.time_zone_name (Name, Time_zone_id) VALUES ('Rt18/Zone', 4242); \
             INSERT INTO mysql.time_zone_transition_type (Time_zone_id, Transition_type_id, \
             `Offset`, Is_DST, Abbreviation) VALUES (4242, 0, 3600, 0, 'RT')",
            "DELETE FROM mysql.time_zone WHERE Time_zone_id = 4242; DELETE FROM \
             mysql.time_zone_name WHERE Time_zone_id = 4242; DELETE FROM \
             mysql.time_zone_transition_type WHERE Time_zone_id = 4242",
        );
    }

    /// The same zone used once by the preparation and its rows deleted again: the tables are
    /// the base's, but the server keeps a zone it has loaded in memory until it restarts, so a
    /// digest of the `mysql.time_zone*` tables alone would not see it.
    #[test]
    #[ignore = "a documented limit: a time zone MariaDB has loaded stays in its memory until it \
                restarts, which no digest reads (SECURITY.md, \"On MariaDB / MySQL\")"]
    fn a_time_zone_loaded_then_deleted_from_the_server_tables_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE CONVERT_TZ('2020-01-01 00:00:00', \
             '+00:00', 'Rt18/Cached') IS NOT NULL GROUP BY status ORDER BY status",
            "INSERT INTO mysql.time_zone (Time_zone_id, Use_leap_seconds) VALUES (4243, 'N'); \
             INSERT INTO mysql.time_zone_name (Name, Time_zone_id) VALUES ('Rt18/Cached', 4243); \
             INSERT INTO mysql.time_zone_transition_type (Time_zone_id, Transition_type_id, \
             `Offset`, Is_DST, Abbreviation) VALUES (4243, 0, 3600, 0, 'RT'); \
             SELECT CONVERT_TZ('2020-01-01 00:00:00', '+00:00', 'Rt18/Cached'); \
             DELETE FROM mysql.time_zone WHERE Time_zone_id = 4243; DELETE FROM \
             mysql.time_zone_name WHERE Time_zone_id = 4243; DELETE FROM \
             mysql.time_zone_transition_type WHERE Time_zone_id = 4243",
            "DELETE FROM mysql.time_zone WHERE Time_zone_id = 4243",
        );
    }
}
