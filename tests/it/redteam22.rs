//! Red team round 22 (issue 44): pull requests run as `sqlgate` runs them on a `pull_request`
//! event, each turning a regressing change green if it can. Every test asserts the SECURE
//! outcome, so a failing test is a win for the attacker, and each runs its control (the same
//! regressing pull request without the lever), which must exit 1. The threat model is
//! SECURITY.md's "What the workflow must do": the pull request controls its tree and the SQL the
//! workflow's preparation runs on the server as the administrator, not programs in the gate's
//! job.

/// `dataset.kind: bird-critic` on MariaDB (class 3), round 18's set-up: a database-level grant
/// to the anonymous user (`mysql.db` with `User = ''`), which MariaDB applies to every account
/// (its privilege check matches an empty user name to any user), so the clone's user reads a
/// database the preparation makes. `SHOW GRANTS` of a named account does not list it.
mod bird_critic_mariadb_anonymous_grant {
    use crate::redteam18::bird_critic_mariadb_server_state::attempt;

    /// `INSERT INTO mysql.db` a row for `''@'%'` on `rt22` (no such account needs to exist),
    /// then `FLUSH PRIVILEGES`: the prediction reads `rt22.k`.
    #[test]
    fn a_database_granted_to_the_anonymous_user_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE EXISTS (SELECT 1 FROM rt22.k) \
             GROUP BY status ORDER BY status",
            "CREATE DATABASE rt22; CREATE TABLE rt22.k (v INT); INSERT INTO rt22.k VALUES (1); \
             INSERT INTO mysql.db (Host, Db, User, Select_priv) VALUES ('%', 'rt22', '', 'Y'); \
             FLUSH PRIVILEGES",
            "DROP DATABASE IF EXISTS rt22; DELETE FROM mysql.db WHERE Db = 'rt22'; \
             FLUSH PRIVILEGES",
        );
    }

    /// The same grant on a function of another database (`mysql.procs_priv` for `''@'%'`,
    /// `EXECUTE`): the prediction calls it.
    #[test]
    fn a_function_granted_to_the_anonymous_user_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE rt22f.flag() = 1 GROUP BY status \
             ORDER BY status",
            "CREATE DATABASE rt22f; CREATE FUNCTION rt22f.flag() RETURNS INT DETERMINISTIC \
             RETURN 1; INSERT INTO mysql.procs_priv (Host, Db, User, Routine_name, \
             Routine_type, Grantor, Proc_priv) VALUES ('%', 'rt22f', '', 'flag', 'FUNCTION', \
             'root@localhost', 'Execute'); FLUSH PRIVILEGES",
            "DROP DATABASE IF EXISTS rt22f; DELETE FROM mysql.procs_priv WHERE Db = 'rt22f'; \
             FLUSH PRIVILEGES",
        );
    }
}

/// `dataset.kind: bird-critic` on MariaDB (class 3), round 18's set-up: a grant on a database
/// name pattern that matches no database at start-up but every one the run makes
/// (`sqlgate\_live\_%`: the templates and the other items' clones), so a start-up look at
/// which databases the reader may see finds none; the clone's user then sees (and with more
/// rights could write) the run's templates.
mod bird_critic_mariadb_pattern_grant {
    use crate::redteam18::bird_critic_mariadb_server_state::attempt;

    /// The prediction counts the `sqlgate...` databases it sees: its own clone alone (1)
    /// without the lever.
    const SEES_THE_RUNS_DATABASES: &str = "SELECT status, count(id) AS n FROM orders WHERE \
        (SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE 'sqlgate%') > 1 \
        GROUP BY status ORDER BY status";

    /// To the anonymous user (`mysql.db`, `User = ''`), which MariaDB applies to every account.
    #[test]
    fn a_pattern_granted_to_the_anonymous_user_does_not_pass() {
        attempt(
            SEES_THE_RUNS_DATABASES,
            "INSERT INTO mysql.db (Host, Db, User, Select_priv) VALUES ('%', \
             'sqlgate\\\\_live\\\\_%', '', 'Y'); FLUSH PRIVILEGES",
            "DELETE FROM mysql.db WHERE User = '' AND Db LIKE 'sqlgate%'; FLUSH PRIVILEGES",
        );
    }

    /// To `PUBLIC` (MariaDB 10.11's role every account holds).
    #[test]
    fn a_pattern_granted_to_public_does_not_pass() {
        attempt(
            SEES_THE_RUNS_DATABASES,
            "GRANT SELECT ON `sqlgate\\_live\\_%`.* TO PUBLIC",
            "DELETE FROM mysql.db WHERE Db LIKE 'sqlgate%' AND User IN ('', 'PUBLIC'); \
             FLUSH PRIVILEGES",
        );
    }
}

/// Paths the base config names, replaced in the pull request's tree (class 1), round 15's
/// set-up (`written_paths`, Spider on SQLite): C3 regressed on 30 items and the pull request's
/// config loosened; the base's config must judge it (exit 1) or refuse (exit 2), never the
/// pull request's.
mod written_paths_links {
    use crate::redteam15::written_paths::attempt;
    use std::path::Path;

    /// Copies the folder `from` to `to`, files and folders.
    fn copy_tree(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            match entry.file_type().unwrap().is_dir() {
                true => copy_tree(&entry.path(), &target),
                false => {
                    std::fs::copy(entry.path(), target).unwrap();
                }
            }
        }
    }

    /// `sqlgate.yml` itself a symlink to the pull request's loosened config under another
    /// name.
    #[test]
    fn the_config_a_symlink_does_not_run_the_pull_requests_config() {
        attempt(|root| {
            std::fs::rename(root.join("sqlgate.yml"), root.join("loose.yml")).unwrap();
            std::os::unix::fs::symlink("loose.yml", root.join("sqlgate.yml")).unwrap();
        });
    }

    /// The databases' folder the base names (`database`) a symlink to an identical copy.
    #[test]
    fn the_databases_folder_a_symlink_does_not_run_the_pull_requests_config() {
        attempt(|root| {
            copy_tree(&root.join("database"), &root.join("db-copy"));
            std::fs::remove_dir_all(root.join("database")).unwrap();
            std::os::unix::fs::symlink("db-copy", root.join("database")).unwrap();
        });
    }
}

/// `dataset.kind: bird-critic` on PostgreSQL (class 3), round 17's set-up: the size of a
/// database outside the base ones (`postgres`), which every role reads through
/// `pg_database_size` (`PUBLIC` may connect to it). The preparation grows it with dead catalog
/// rows only (tables made and dropped in one transaction), so every live catalog row, and
/// every digest, is as the baseline saw it.
mod bird_critic_pg_database_size {
    use crate::common::servers::Server;
    use crate::redteam15::bird_critic_server_state::attempt_with;

    /// `tables` tables of 60 columns made and dropped (a commit every 1000, for the lock table): some 8 kB of dead
    /// rows each in `pg_attribute`, `pg_class`, `pg_type` and `pg_depend`, no live row changed.
    fn bloat(tables: u32) -> String {
        format!(
            "DO $$ DECLARE cols text := (SELECT string_agg('c' || g || ' int', ', ') FROM \
             generate_series(1, 60) g); BEGIN FOR i IN 1..{tables} LOOP EXECUTE \
             format('CREATE TABLE rt22_%s (%s)', i, cols); EXECUTE format('DROP TABLE \
             rt22_%s', i); IF i % 1000 = 0 THEN COMMIT; END IF; END LOOP; END $$"
        )
    }

    /// `postgres`'s size as the server is before the lever.
    fn size(server: &Server) -> u64 {
        let size = server.admin_sql("postgres", "SELECT pg_database_size('postgres')");
        size.trim().parse().unwrap()
    }

    /// [`bloat`] of 3000 tables (some 25 MB); the prediction asks whether `postgres` grew by
    /// more than 8 MB.
    #[test]
    #[ignore = "a documented limit: the sizes of the server's files, which every write (the \
                run's own clones too) moves, are counters (docs/SECURITY.md, round 22)"]
    fn dead_catalog_rows_in_another_database_do_not_pass() {
        attempt_with(
            |server| {
                format!(
                    "SELECT status, count(id) AS n FROM orders WHERE pg_database_size('postgres') \
                     > {} GROUP BY status ORDER BY status",
                    size(server) + 8_000_000
                )
            },
            ("postgres", &bloat(3000)),
            "SELECT 1",
        );
    }

    /// The same through the default tablespace's size (`pg_tablespace_size('pg_default')`,
    /// which any role may read for its own database's tablespace, with or without `CONNECT` on
    /// `postgres`): 12 000 tables (some 100 MB), the threshold 60 MB above the size before
    /// the control, as the run's own templates and clones (a few MB each) count too.
    #[test]
    #[ignore = "a documented limit: the sizes of the server's files, which every write (the \
                run's own clones too) moves, are counters (docs/SECURITY.md, round 22)"]
    fn dead_catalog_rows_seen_through_the_tablespace_size_do_not_pass() {
        attempt_with(
            |server| {
                let size = server.admin_sql("postgres", "SELECT pg_tablespace_size('pg_default')");
                format!(
                    "SELECT status, count(id) AS n FROM orders WHERE \
                     pg_tablespace_size('pg_default') > {} GROUP BY status ORDER BY status",
                    size.trim().parse::<u64>().unwrap() + 60_000_000
                )
            },
            ("postgres", &bloat(12_000)),
            "SELECT 1",
        );
    }
}

/// A forged shard (class 4) merged in a pull-request run outside Actions, round 21's set-up
/// (`shard_in_a_submodule`): C3 regressed on 30 items, the shard's header the pull request's
/// own run's over the base's records. Committed at `shards/1.jsonl` it is refused (round 21's
/// control); the lever commits it at `forged/1.jsonl` and `shards` as a symlink to `forged`,
/// so the path `merge` is given lies under a link git tracks, not a file it tracks.
mod shard_under_a_linked_folder {
    use crate::common::repo;
    use crate::redteam21::shard_in_a_submodule::merged;

    #[test]
    fn a_forged_shard_under_a_committed_folder_link_is_refused() {
        let (code, out) = merged(|root, shard| {
            std::fs::create_dir(root.join("forged")).unwrap();
            std::fs::write(root.join("forged/1.jsonl"), shard).unwrap();
            std::os::unix::fs::symlink("forged", root.join("shards")).unwrap();
            repo::commit_all(root, "a shard behind a link");
            assert!(root.join("shards/1.jsonl").is_file());
        });
        eprintln!("{out}");
        assert_ne!(code, Some(0), "the forged shard merged: {out}");
    }
}

/// `dataset.kind: livesql` (SQLite) in a repair (class 2), round 19's set-up: a direct push
/// breaks `main`'s config (gated on `livesql_sound` with `dataset.post_state: touched`) and the
/// pull request repairing it regresses lsq_081 in a way only the post-state comparison sees.
/// The lever: the repairing config keeps `dataset.post_state` (so the baseline's settings
/// match) but gates on `livesql`, the official metric, which ignores post-states.
mod livesql_repair_gate_metric {
    use crate::common;
    use crate::redteam19::livesql_repair_post_state::repaired_with;

    /// The control: the repair with the base's config text is a regression (exit 1).
    #[test]
    fn control_the_repair_alone_is_a_regression() {
        let (code, out) = repaired_with(str::to_string, |_| ());
        assert_eq!(code, Some(1), "{out}");
        common::assert_contains(&out, &["1 regressed"]);
    }

    /// `gate.metric` and `reference` moved to `livesql`.
    #[test]
    fn a_repair_cannot_gate_on_the_metric_that_ignores_the_post_state() {
        let (code, out) = repaired_with(
            |good| {
                good.replace("  metric: livesql_sound\n", "  metric: livesql\n")
                    .replace("reference: livesql_sound\n", "reference: livesql\n")
            },
            |_| (),
        );
        eprintln!("{out}");
        assert_ne!(code, Some(0), "the regressing repair passed: {out}");
    }
}
