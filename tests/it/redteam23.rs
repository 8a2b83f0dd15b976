//! Red team round 23 (issue 44): pull requests run as `sqlgate` runs them on a `pull_request`
//! event, each turning a regressing change green if it can. Every test asserts the SECURE
//! outcome, so a failing test is a win for the attacker, and each runs its control (the same
//! regressing pull request without the lever), which must exit 1. The threat model is
//! SECURITY.md's "What the workflow must do": the pull request controls its tree and the SQL the
//! workflow's preparation runs on the server as the administrator, not programs in the gate's
//! job.

/// `dataset.kind: bird-critic` on MariaDB (class 3), round 18's set-up: rights every account
/// receives through `PUBLIC` that are neither a database grant (which `SCHEMATA` would show
/// the clone's user, round 22's fix) nor a grant on the clone itself.
mod bird_critic_mariadb_public_rights {
    use crate::redteam18::bird_critic_mariadb_server_state::attempt;

    /// A routine-level grant to `PUBLIC`: `EXECUTE` on a function of another database, which
    /// runs as its definer (the administrator) and so reads anything; the prediction calls it.
    #[test]
    fn a_definer_function_granted_to_public_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE rt23f.flag() = 1 GROUP BY status \
             ORDER BY status",
            "CREATE DATABASE rt23f; CREATE DEFINER = root@localhost FUNCTION rt23f.flag() \
             RETURNS INT DETERMINISTIC SQL SECURITY DEFINER RETURN 1; \
             GRANT EXECUTE ON FUNCTION rt23f.flag TO PUBLIC",
            "DROP DATABASE IF EXISTS rt23f; DELETE FROM mysql.procs_priv WHERE Db = 'rt23f'; \
             FLUSH PRIVILEGES",
        );
    }

    /// A global right to `PUBLIC` (`PROCESS`): it opens InnoDB's own `information_schema`
    /// tables, which list every InnoDB table of the server whatever the database rights, so
    /// the prediction sees a table the preparation made in a database it cannot see.
    #[test]
    fn a_global_right_granted_to_public_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE EXISTS (SELECT 1 FROM \
             information_schema.INNODB_SYS_TABLES WHERE NAME = 'rt23p/k') GROUP BY status \
             ORDER BY status",
            "CREATE DATABASE rt23p; CREATE TABLE rt23p.k (v INT) ENGINE = InnoDB; \
             GRANT PROCESS ON *.* TO PUBLIC",
            "DROP DATABASE IF EXISTS rt23p; DELETE FROM mysql.global_priv WHERE User = 'PUBLIC'; \
             FLUSH PRIVILEGES",
        );
    }
}

/// `dataset.kind: bird-critic` on MariaDB (class 3): a role granted to `PUBLIC`, which the
/// clone's user does not hold active when the run looks at what it sees (before the item), but
/// may switch on in its prediction (`SET ROLE`, a statement the state-changing kind runs): the
/// role reads a database the preparation made.
mod bird_critic_mariadb_public_role {
    use crate::common::bird_critic_gate::predict;
    use crate::common::servers::Server;
    use crate::livesql_my_gate::{judged_query_change, loaded};

    /// What the lever leaves, removed.
    const UNDO: &str = "DROP DATABASE IF EXISTS rt23r; DROP ROLE IF EXISTS rt23r; \
        DELETE FROM mysql.roles_mapping WHERE Role = 'rt23r'; FLUSH PRIVILEGES";

    /// Runs [`UNDO`] when dropped, panic or not.
    struct Undo(&'static Server);

    impl Drop for Undo {
        fn drop(&mut self) {
            self.0.admin_sql("mysql", UNDO);
        }
    }

    #[test]
    fn a_role_granted_to_public_and_set_in_the_prediction_does_not_pass() {
        let (server, _) = loaded();
        let _undo = Undo(server);
        server.admin_sql("mysql", UNDO);
        let change = |root: &std::path::Path| {
            predict(
                root,
                "lsq_001",
                &[
                    "SET ROLE rt23r",
                    "SELECT status, count(id) AS n FROM orders WHERE EXISTS (SELECT 1 FROM \
                     rt23r.k) GROUP BY status ORDER BY status",
                ],
            )
        };
        let (code, said, _) = judged_query_change(server, change, || ());
        assert_eq!(code, Some(1), "control: {said}");
        let (code, said, _) = judged_query_change(server, change, || {
            server.admin_sql(
                "mysql",
                "CREATE DATABASE rt23r; CREATE TABLE rt23r.k (v INT); INSERT INTO rt23r.k \
                 VALUES (1); CREATE ROLE rt23r; GRANT SELECT ON rt23r.* TO rt23r; \
                 GRANT rt23r TO PUBLIC",
            );
        });
        eprintln!("{said}");
        assert_ne!(code, Some(0), "the regressing pull request passed: {said}");
    }
}

/// What the stopword levers share (rounds 23 and 24, MariaDB, class 3), on the gated subset:
/// lsq_001's prediction builds a full-text index on its clone (its session pointed first at
/// the stopword table it names, when it names one) and is right only when `pending` is a
/// stopword, which `MATCH ... AGAINST` tells it.
pub(crate) mod stopword_lever {
    use crate::common::bird_critic_gate::predict;
    use crate::common::servers::Server;
    use crate::livesql_my_gate::{judged_query_change, loaded};

    /// Runs its SQL on the server when dropped, panic or not.
    struct Undo(&'static Server, &'static str);

    impl Drop for Undo {
        fn drop(&mut self) {
            self.0.admin_sql("mysql", self.1);
        }
    }

    /// `set_up` before the baseline (`undo` before it and when the test ends); the prediction's
    /// session pointed at `session_table` when given. The control exits 1; with `lever` run
    /// after the baseline the pull request must not pass.
    pub(crate) fn attempt(
        set_up: &str,
        undo: &'static str,
        session_table: Option<&str>,
        lever: impl FnOnce(&Server),
    ) {
        let (server, _) = loaded();
        let _undo = Undo(server, undo);
        server.admin_sql("mysql", undo);
        if !set_up.is_empty() {
            server.admin_sql("mysql", set_up);
        }
        let session =
            session_table.map(|t| format!("SET SESSION innodb_ft_user_stopword_table = '{t}'"));
        let change = |root: &std::path::Path| {
            let mut statements: Vec<&str> = session.iter().map(String::as_str).collect();
            statements.extend([
                "ALTER TABLE orders ADD FULLTEXT INDEX rt23 (status)",
                "SELECT status, count(id) AS n FROM orders WHERE (SELECT COUNT(*) FROM orders \
                 WHERE MATCH (status) AGAINST ('pending')) = 0 GROUP BY status ORDER BY status",
            ]);
            predict(root, "lsq_001", &statements)
        };
        let (code, said, _) = judged_query_change(server, change, || ());
        assert_eq!(code, Some(1), "control: {said}");
        let (code, said, _) = judged_query_change(server, change, || lever(server));
        eprintln!("{said}");
        assert_ne!(code, Some(0), "the regressing pull request passed: {said}");
    }
}

/// `dataset.kind: bird-critic` on MariaDB (class 3): the rows of a table a recorded variable
/// names. The server's InnoDB stopword table (`innodb_ft_server_stopword_table`) is set before
/// the baseline (so the recorded global is the same in both runs); the preparation changes
/// only the table's rows, in a database neither the reader nor a clone's user sees. A
/// full-text index built during the run (the prediction adds one to its clone) takes the
/// stopwords at that moment, so `MATCH ... AGAINST` answers by them.
mod bird_critic_mariadb_stopword_rows {
    use super::stopword_lever::attempt;

    #[test]
    fn stopwords_changed_in_the_table_a_recorded_variable_names_do_not_pass() {
        attempt(
            "CREATE DATABASE rt23s; CREATE TABLE rt23s.stop (value VARCHAR(30)) ENGINE = InnoDB; \
             SET GLOBAL innodb_ft_server_stopword_table = 'rt23s/stop'",
            "SET GLOBAL innodb_ft_server_stopword_table = NULL; DROP DATABASE IF EXISTS rt23s",
            None,
            |server| {
                server.admin_sql("mysql", "INSERT INTO rt23s.stop VALUES ('pending')");
            },
        );
    }
}

/// `dataset.kind: bird-critic` on MariaDB (class 3): the same stopwords with nothing set
/// before the baseline. `innodb_ft_user_stopword_table` is a session variable any user may
/// set, and InnoDB opens the table it names without a privilege check; so the prediction
/// points its own session at a table of a database it cannot see (`rt23u`, made by the
/// preparation, in no digest), builds a full-text index, and reads one bit of that table
/// per word through `MATCH ... AGAINST`.
mod bird_critic_mariadb_session_stopwords {
    use super::stopword_lever::attempt;

    #[test]
    fn a_stopword_table_the_prediction_names_in_an_unseen_database_does_not_pass() {
        attempt(
            "",
            "DROP DATABASE IF EXISTS rt23u",
            Some("rt23u/stop"),
            |server| {
                server.admin_sql(
                    "mysql",
                    "CREATE DATABASE rt23u; CREATE TABLE rt23u.stop (value VARCHAR(30)) \
                     ENGINE = InnoDB; INSERT INTO rt23u.stop VALUES ('pending')",
                );
            },
        );
    }
}

/// `dataset.kind: bird-critic` on PostgreSQL (class 3): a column the catalog digest leaves out
/// as a server counter (`pg_lsn`) that the administrator sets at will. A disabled subscription
/// (made without a connection) is on the server before the baseline (round 23 used round 17's
/// set-up, now refused at the baseline already); the preparation moves only its skip position
/// (`ALTER SUBSCRIPTION ... SKIP (lsn = ...)`), which `pg_subscription.subskiplsn` shows every
/// role (PostgreSQL 15 grants that column to `PUBLIC`).
mod bird_critic_pg_subscription_skip {
    use crate::common::bird_critic_gate::subset;
    use crate::common::{self, repo, servers};
    use crate::livesql_pg_gate::PG;

    /// Drops the subscription when the test ends, panic or not.
    struct Dropped;

    impl Drop for Dropped {
        fn drop(&mut self) {
            servers::postgres().admin_sql("postgres", "DROP SUBSCRIPTION IF EXISTS rt23");
        }
    }

    /// The lever needs the subscription on the server before the baseline; a run on clones
    /// refuses a server holding one at start-up (the baseline's run too), naming it, so no
    /// verdict is read beside it. Without it the same run passes.
    #[test]
    fn a_subscriptions_skip_position_does_not_pass() {
        let server = servers::postgres();
        crate::livesql_pg::load_databases(server);
        let dir = tempfile::tempdir().unwrap();
        PG.write_dataset(dir.path(), Some(&subset()), false, &PG.config());
        let _dropped = Dropped;
        server.admin_sql(
            "postgres",
            "DROP SUBSCRIPTION IF EXISTS rt23; CREATE SUBSCRIPTION rt23 CONNECTION \
             'host=127.0.0.1 dbname=nowhere' PUBLICATION p WITH (connect = false, \
             enabled = false, create_slot = false, slot_name = NONE)",
        );
        server.admin_sql("postgres", "ALTER SUBSCRIPTION rt23 SKIP (lsn = '0/4242')");
        let refused = PG.sqlgate_on(server, dir.path(), &repo::EVAL);
        let said = common::exited(&refused, 2);
        assert!(said.contains("subscription rt23"), "{said}");
        server.admin_sql("postgres", "DROP SUBSCRIPTION rt23");
        let control = PG.sqlgate_on(server, dir.path(), &repo::EVAL);
        common::assert_exit(&control, 0);
    }
}

/// Paths the base config names, made different in the working tree from what git holds
/// (class 1), round 15's set-up (`written_paths`, Spider on SQLite): C3 regressed on 30 items
/// and the pull request's config loosened. The pull request commits a `.gitattributes` giving
/// the gold `working-tree-encoding=UTF-16`: git stores the gold as the base's bytes (no change
/// in the tree's blobs), while the checkout writes UTF-16 to the working tree, so the base's
/// config reads a gold it cannot parse although git reports nothing uncommitted.
mod written_paths_encoding {
    use crate::redteam15::written_paths::attempt;

    #[test]
    fn a_gold_checked_out_in_another_encoding_does_not_run_the_pull_requests_config() {
        attempt(|root| {
            std::fs::write(
                root.join(".gitattributes"),
                "dev_gold.sql working-tree-encoding=UTF-16\n",
            )
            .unwrap();
            let gold = std::fs::read_to_string(root.join("dev_gold.sql")).unwrap();
            let bytes: Vec<u8> = [0xFF, 0xFE]
                .into_iter()
                .chain(gold.encode_utf16().flat_map(u16::to_le_bytes))
                .collect();
            std::fs::write(root.join("dev_gold.sql"), bytes).unwrap();
        });
    }
}
