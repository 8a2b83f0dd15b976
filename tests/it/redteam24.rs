//! Red team round 24 (issue 44): pull requests run as `sqlgate` runs them on a `pull_request`
//! event, each turning a regressing change green if it can. Every test asserts the SECURE
//! outcome, so a failing test is a win for the attacker, and each runs its control (the same
//! regressing pull request without the lever), which must exit 1. The threat model is
//! SECURITY.md's "What the workflow must do": the pull request controls its tree and the SQL the
//! workflow's preparation runs on the server as the administrator, not programs in the gate's
//! job.

/// `dataset.kind: bird-critic` on MariaDB (class 3), round 18's set-up: a `mysql.*` table a
/// clone's user reads through a built-in function without a privilege check. MariaDB's
/// `TRT_TRX_ID(timestamp)` (and the other `TRT_*` functions of system-versioned tables) open
/// `mysql.transaction_registry` as the server does, whoever calls them. The table takes a row
/// at each commit to a transaction-precise system-versioned table; the preparation makes one
/// in a database the clone's user cannot see, after the baseline, and the prediction asks
/// whether any transaction ever committed there.
mod bird_critic_mariadb_transaction_registry {
    use crate::redteam18::bird_critic_mariadb_server_state::attempt;

    #[test]
    fn a_transaction_registry_row_read_through_trt_functions_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE TRT_TRX_ID(TIMESTAMP'2037-01-01 \
             00:00:00') IS NOT NULL GROUP BY status ORDER BY status",
            "CREATE DATABASE rt24t; CREATE TABLE rt24t.v (x INT, s BIGINT UNSIGNED AS ROW START \
             INVISIBLE, e BIGINT UNSIGNED AS ROW END INVISIBLE, PERIOD FOR SYSTEM_TIME (s, e)) \
             WITH SYSTEM VERSIONING ENGINE = InnoDB; INSERT INTO rt24t.v VALUES (1)",
            "DROP DATABASE IF EXISTS rt24t; TRUNCATE TABLE mysql.transaction_registry",
        );
    }
}

/// `dataset.kind: bird-critic` on PostgreSQL (class 3): a right every role receives from
/// something other than its own grant, here a foreign server of `postgres_fdw` with a user
/// mapping for `PUBLIC`. Before the baseline the preparation installs `postgres_fdw` in the
/// base database (`shop`, which every clone copies), a foreign server pointing at another
/// database of the same server (`rt24`, no clone, no digest), a mapping for `PUBLIC` holding
/// the administrator's login, and `USAGE` on the server for `PUBLIC`; all of it is the same in
/// both runs. The lever only adds a row to `rt24.k`; the prediction makes a foreign table of
/// its own on that server and reads it. The control runs before the set-up (a run on clones
/// refuses the extension in a base database at start-up, the baseline's run too).
mod bird_critic_pg_foreign_server {
    use crate::common::bird_critic_gate::{predict, subset};
    use crate::common::servers::{self, Server, ADMIN};
    use crate::common::{self, repo};
    use crate::livesql_pg::load_databases;
    use crate::livesql_pg_gate::{judged_query_change, PG};

    /// Removes what the set-up made, when dropped, panic or not.
    struct Undo(&'static Server);

    impl Drop for Undo {
        fn drop(&mut self) {
            undo(self.0);
        }
    }

    /// The foreign server, its extension and the other database, removed.
    fn undo(server: &Server) {
        server.admin_sql("shop", "DROP EXTENSION IF EXISTS postgres_fdw CASCADE");
        server.admin_sql("postgres", "DROP DATABASE IF EXISTS rt24 WITH (FORCE)");
    }

    /// The foreign server and what it reads, made before the baseline.
    fn set_up(server: &Server) {
        server.admin_sql("postgres", "CREATE DATABASE rt24");
        server.admin_sql("rt24", "CREATE TABLE k (v int)");
        server.admin_sql(
            "shop",
            &format!(
                "CREATE EXTENSION postgres_fdw; CREATE SERVER rt24 FOREIGN DATA WRAPPER \
                 postgres_fdw OPTIONS (host '127.0.0.1', port '{}', dbname 'rt24'); \
                 CREATE USER MAPPING FOR PUBLIC SERVER rt24 OPTIONS (user '{ADMIN}', \
                 password '{}'); GRANT USAGE ON FOREIGN SERVER rt24 TO PUBLIC",
                server.port, server.admin_password
            ),
        );
    }

    /// The control (before the set-up) exits 1; with the set-up, a run on clones refuses the
    /// extension in the base database at start-up (the baseline's run too), naming it.
    #[test]
    fn a_foreign_server_mapped_for_public_to_another_database_does_not_pass() {
        let server = servers::postgres();
        load_databases(server);
        let _undo = Undo(server);
        undo(server);
        let (code, said, _) = judged_query_change(server, |root| {
            predict(
                root,
                "lsq_001",
                &[
                    "CREATE FOREIGN TABLE rt24k (v int) SERVER rt24 OPTIONS (table_name 'k')",
                    "SELECT status, count(id) AS n FROM orders WHERE EXISTS (SELECT 1 FROM \
                     rt24k) GROUP BY status ORDER BY status",
                ],
            )
        });
        assert_eq!(code, Some(1), "control: {said}");
        set_up(server);
        server.admin_sql("rt24", "INSERT INTO k VALUES (1)");
        let dir = tempfile::tempdir().unwrap();
        PG.write_dataset(dir.path(), Some(&subset()), false, &PG.config());
        let refused = PG.sqlgate_on(server, dir.path(), &repo::EVAL);
        let said = common::exited(&refused, 2);
        assert!(said.contains("postgres_fdw"), "{said}");
    }
}

/// `dataset.kind: bird-critic` on MariaDB (class 3): the digest of the stopword tables is
/// `CHECKSUM TABLE`, which adds up one CRC-32 per row modulo 2^32 (a row's CRC covers its null
/// byte and its bytes), so rows can be chosen whose sum is that of other rows. Before the
/// baseline a database the clone's user cannot see holds an empty table InnoDB would take
/// stopwords from (checksum 0, the same in both runs). The lever adds two rows: `pending`, and
/// `rt24_239_b6mj`, whose CRC-32 (after the null byte `0xFE`) was forged so that the two add
/// up to 0 modulo 2^32: the checksum stays 0. The prediction points its session at the table
/// (round 23's M1) and reads the stopword through `MATCH ... AGAINST`.
mod bird_critic_mariadb_checksum_collision {
    use crate::redteam23::stopword_lever::attempt;

    #[test]
    fn stopword_rows_whose_checksums_add_up_to_the_baselines_do_not_pass() {
        attempt(
            "CREATE DATABASE rt24c; CREATE TABLE rt24c.stop (value VARCHAR(30)) ENGINE = InnoDB",
            "DROP DATABASE IF EXISTS rt24c",
            Some("rt24c/stop"),
            |server| {
                server.admin_sql(
                    "mysql",
                    "INSERT INTO rt24c.stop VALUES ('pending'), ('rt24_239_b6mj')",
                );
                let sum = server.admin_sql("mysql", "CHECKSUM TABLE rt24c.stop");
                assert!(sum.trim_end().ends_with("\t0"), "the forged rows: {sum}");
            },
        );
    }
}

/// Paths the base config names, made different in the working tree from what git holds
/// (class 1), round 15's set-up (`written_paths`, Spider on SQLite): C3 regressed on 30 items
/// and the pull request's config loosened. Round 23's UTF-16 gold, as line endings: the pull
/// request commits `.gitattributes` giving the gold `text eol=crlf`, so git stores the base's
/// bytes (LF) while the checkout writes CRLF to the working tree: a gold that still parses,
/// each line's last field (the database) ending in a carriage return.
mod written_paths_line_endings {
    use crate::redteam15::written_paths::attempt;

    #[test]
    fn a_gold_checked_out_with_other_line_endings_does_not_run_the_pull_requests_config() {
        attempt(|root| {
            std::fs::write(root.join(".gitattributes"), "dev_gold.sql text eol=crlf\n").unwrap();
            let gold = std::fs::read_to_string(root.join("dev_gold.sql")).unwrap();
            std::fs::write(root.join("dev_gold.sql"), gold.replace('\n', "\r\n")).unwrap();
        });
    }
}

/// `dataset.kind: livesql` (SQLite) in a repair (class 2), round 19's set-up: `main` gated on
/// `livesql_sound` with `dataset.post_state: touched`, a direct push breaks the config, and the
/// repair regresses lsq_081 in a way only the post-state comparison sees. The lever keeps the
/// key but narrows it in the repairing config to a list naming a table lsq_081 does not
/// touch (round 20 narrowed an item's own key; this is the config's).
mod livesql_repair_post_state_list {
    use crate::redteam19::livesql_repair_post_state::repaired_with;

    #[test]
    fn a_repair_cannot_narrow_the_configs_post_state_to_a_list() {
        let (code, out) = repaired_with(
            |good| good.replace("post_state: touched", "post_state: [courses]"),
            |_| (),
        );
        eprintln!("{out}");
        assert_ne!(code, Some(0), "the regressing repair passed: {out}");
    }
}

/// `dataset.kind: bird-critic` on MariaDB (class 3), round 18's set-up: M1's collision on the
/// time zone tables, which the digests also hold as `CHECKSUM TABLE`, with nothing needed at
/// the baseline. The lever adds a named zone `rt24/Z` (UTC+5, no transitions) and, in each of
/// the three tables it touches, a second row whose CRC-32 was forged so that the table's new
/// rows add up to 0 modulo 2^32 (an Aria row's CRC covers `0xFF`, then each field's bytes, a
/// `CHAR` padded to its full width): every table's checksum is what it was. The prediction
/// reads the zone through `CONVERT_TZ`.
mod bird_critic_mariadb_time_zone_collision {
    use crate::redteam18::bird_critic_mariadb_server_state::attempt;

    #[test]
    fn a_time_zone_whose_rows_checksum_to_nothing_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE CONVERT_TZ('2020-01-01 00:00:00', \
             '+00:00', 'rt24/Z') = '2020-01-01 05:00:00' GROUP BY status ORDER BY status",
            "INSERT INTO mysql.time_zone VALUES (4242, 'N'), (3984983627, 'N'); \
             INSERT INTO mysql.time_zone_transition_type VALUES (4242, 0, 18000, 0, 'RT'), \
             (2646741599, 0, 0, 0, ''); INSERT INTO mysql.time_zone_name VALUES \
             ('rt24/Z', 4242), ('rt24_126_LB3z', 4242)",
            "DELETE FROM mysql.time_zone WHERE Time_zone_id IN (4242, 3984983627); \
             DELETE FROM mysql.time_zone_transition_type WHERE Time_zone_id IN (4242, \
             2646741599); DELETE FROM mysql.time_zone_name WHERE Time_zone_id = 4242",
        );
    }
}
