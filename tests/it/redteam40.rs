//! Red team round 40 (issue 44): `bird_critic_sound` on PostgreSQL 15 and MariaDB 10.11 after
//! round 39's fixes (commit 43c1a00: a clone unreadable before the prediction fails the item;
//! MyISAM / Aria estimates in the clone's own entry), and sqlgate's own state (class 4) and the
//! pull request's tree (class 1). Every test asserts the SECURE outcome and runs its control: a
//! failing test is a win. Report: `/work/notes/redteam40.md`.
//!
//! The class 3 set-up is round 36's lever item (`redteam36::verdicts`: a Query item on `shop`
//! with a preprocess from the base's dataset and round 32's `WRAPPED` test case, which runs the
//! prediction again, then the gold on a new session to the prediction's clone), and round 32's
//! `through_the_gate::attempt_with` for the CLI's verdict.

use crate::redteam30::{assert_honest, assert_secure, my_run};
use crate::redteam36::verdicts;

/// Class 3, MariaDB: a sequence's cache. A MariaDB sequence (`CREATE SEQUENCE`, which the
/// clone's `CREATE` right allows) keeps the values it handed out in the table share, not in its
/// row: the first `NEXTVAL` writes `next_not_cached_value` (start + `CACHE`, 1000 by default) to
/// the row, and the next 999 `NEXTVAL`s, on any session, are served from memory, the row
/// unchanged. The data digest (`data_digest.rs::mysql_tables`, `row_hashes::mysql_hashed`)
/// reads a sequence as a table (`SELECT` of its row), and `catalog_rows::mysql_clone_rows`
/// reads `information_schema`, so `QueryCheck::check` finds the clone equal to its state before
/// the prediction while the next value every session gets has moved. Round 37 judged this "not
/// a stable item" because a gold must call `NEXTVAL`; a gold that compares it with a bound is
/// stable over the few runs an item makes. Set-up: the lever item, its preprocess making `tick`
/// and taking its first value (so the cache is filled and the row written); gold `SELECT
/// NEXTVAL(tick) <= 10 AS fresh` (1 at each of its runs: 2, 3, 4). Lever: `SELECT NEXTVAL(tick)
/// FROM seq_1_to_20` (20 values from the cache), then the wrong `SELECT 0 AS fresh`; the test
/// case's gold, on a new session, reads a value over 10 (0). Control: the wrong query alone
/// fails.
pub(crate) mod mariadb_a_sequence_cache {
    use super::*;

    pub(crate) const PREPROCESS: [&str; 2] = [
        "CREATE SEQUENCE tick START WITH 1 INCREMENT BY 1 CACHE 1000",
        "SELECT NEXTVAL(tick)",
    ];
    pub(crate) const GOLD: &str = "SELECT NEXTVAL(tick) <= 10 AS fresh";
    pub(crate) const WRONG: &str = "SELECT 0 AS fresh";
    pub(crate) const LEVER: [&str; 2] = ["SELECT NEXTVAL(tick) AS n FROM seq_1_to_20", WRONG];

    #[test]
    fn mariadb_values_taken_from_a_sequence_cache_do_not_pass_a_gold_reading_the_next_one() {
        let found = verdicts(&my_run(), (&PREPROCESS, GOLD), WRONG, &LEVER);
        assert_dead("NEXTVAL from a MariaDB sequence's cache", found);
    }

    /// The lead's fix: the clones' sequences are made uncached before they are read
    /// (`livesql/mysql/sequences.rs`), so every value taken is written to the sequence's row.
    /// Here the preprocess's `NEXTVAL` holds the sequence's lock in the item's open transaction,
    /// so that cannot be done before the prediction, and the item fails for every prediction
    /// (the test above); committed, the sequence is uncached, and a gold that takes a value
    /// writes as surely as the lever, so the item is dead all the same: the lever never passes.
    #[test]
    fn mariadb_a_committed_sequence_is_uncached_and_every_value_taken_is_seen() {
        let committed = [PREPROCESS[0], PREPROCESS[1], "COMMIT"];
        let found = verdicts(&my_run(), (&committed, GOLD), WRONG, &LEVER);
        assert_dead("NEXTVAL from an uncached MariaDB sequence", found);
    }
}

/// Secure for an item whose gold reads what no digest can hold (a sequence's next value taken
/// by the gold itself, the collected statistics closed to the clone's role): every prediction
/// fails, the gold too (a dead item, as its baseline records it, which no pull request can
/// regress on), and the lever never passes.
fn assert_dead(what: &str, found: [bool; 3]) {
    assert_eq!(found, [false; 3], "{what}: every prediction fails");
}

/// Class 3, both servers: a lock the **prediction** takes, server-wide and outside every digest.
/// Round 39's fix fails an item whose preprocess leaves a lock (`QueryCheck::start` cannot read
/// the clone); a lock taken by the prediction itself blocks nothing the check reads (a named
/// lock, `GET_LOCK`, or a session-level advisory lock, `pg_advisory_lock`, guards no table), so
/// every read of the clone equals the one before the prediction, while the lock holds as long
/// as the item's session is open: the test case's gold, on a new session, finds it taken. Set-up:
/// the lever item with no preprocess; gold `SELECT IS_FREE_LOCK('rt40') AS free` (MariaDB) /
/// `SELECT pg_try_advisory_xact_lock(40) AS free` (PostgreSQL; a transaction's lock, gone when
/// the gold's statement ends), 1 / true at every run. Lever: `SELECT GET_LOCK('rt40', 0)` /
/// `SELECT pg_advisory_lock(40)`, then the wrong query (`SELECT 0` / `false`). Control: the
/// wrong query alone fails.
pub(crate) mod a_lock_the_prediction_takes {
    use super::*;
    use crate::redteam30::pg_run;

    pub(crate) const MY_GOLD: &str = "SELECT IS_FREE_LOCK('rt40') AS free";
    pub(crate) const MY_WRONG: &str = "SELECT 0 AS free";
    pub(crate) const MY_LEVER: [&str; 2] = ["SELECT GET_LOCK('rt40', 0) AS taken", MY_WRONG];

    #[test]
    fn mariadb_a_named_lock_the_prediction_holds_does_not_pass_a_gold_reading_it() {
        let found = verdicts(&my_run(), (&[], MY_GOLD), MY_WRONG, &MY_LEVER);
        assert_secure("GET_LOCK in the prediction", found);
    }

    pub(crate) const PG_GOLD: &str = "SELECT pg_try_advisory_xact_lock(40) AS free";
    pub(crate) const PG_WRONG: &str = "SELECT false AS free";
    pub(crate) const PG_LEVER: [&str; 2] = ["SELECT pg_advisory_lock(40) AS taken", PG_WRONG];

    #[test]
    fn postgresql_an_advisory_lock_the_prediction_holds_does_not_pass_a_gold_reading_it() {
        let found = verdicts(&pg_run(), (&[], PG_GOLD), PG_WRONG, &PG_LEVER);
        assert_secure("pg_advisory_lock in the prediction", found);
    }
}

/// Class 3, PostgreSQL: the cumulative activity statistics (`pg_stat_user_tables`: scans and
/// rows read per table), which every role may read and a plain read moves. They are views over
/// the server's shared memory, not catalog tables: `catalog_rows::postgres_clone_rows` digests
/// the `pg_catalog` tables (`relkind = 'r'`), the data digests the rows, and a read changes
/// neither, so `QueryCheck::check` finds the clone as it was before the prediction. These are
/// not the planner's statistics (`reltuples`, `ANALYZE`'s samples; the documented limit): they
/// count what sessions did. A clone is a new database, so its counters start at 0 for each item.
/// Set-up: the lever item with no preprocess; gold `SELECT coalesce(sum(seq_scan), 0) < 1000 AS
/// quiet FROM pg_stat_user_tables WHERE relname = 'products'` (true: the data digests scan
/// `products` a few times). Lever: a `DO` block scanning `products` 2000 times (each `PERFORM`
/// a new scan; the prediction's session flushes its counters when it ends, before the test
/// cases), then `SELECT false AS quiet`. Control: the wrong query alone fails. The lead's fix
/// (`livesql/postgres/statistics.rs`): a sound clone's collected statistics are closed to its
/// role, so the gold is refused them and the item is dead (round 40's gate test of this lever
/// is dropped with the one of the sequence: a dead item cannot regress).
pub(crate) mod postgresql_activity_statistics {
    use super::*;
    use crate::redteam30::pg_run;

    pub(crate) const GOLD: &str = "SELECT coalesce(sum(seq_scan), 0) < 1000 AS quiet FROM pg_stat_user_tables WHERE relname = 'products'";
    pub(crate) const WRONG: &str = "SELECT false AS quiet";
    pub(crate) const LEVER: [&str; 2] = [
        "DO $$ BEGIN FOR i IN 1..2000 LOOP PERFORM count(*) FROM products; END LOOP; END $$",
        WRONG,
    ];

    #[test]
    fn postgresql_scans_counted_by_the_activity_statistics_do_not_pass_a_gold_reading_them() {
        let found = verdicts(&pg_run(), (&[], GOLD), WRONG, &LEVER);
        assert_dead("pg_stat_user_tables.seq_scan moved by reads", found);
    }
}

/// Class 3, PostgreSQL (the lead's follow-up to the statistics lever: the same kind of state,
/// moved without a row changing): a relation's file size. Rows written and rolled back stay in
/// the file as dead tuples, so `pg_relation_size` grows while every row, catalog row and
/// statistic the check compares is as before. Set-up: the lever item with no preprocess; gold
/// `SELECT pg_relation_size('products') < 100000 AS small` (true: the table fills one page).
/// Lever: 300 no-op updates of every row in a transaction rolled back, then `SELECT false AS
/// small`. The fix: each relation's main file size is in the clone's own entry
/// (`catalog_rows::postgres_clone_rows_query`), compared with the clone before the prediction.
/// Control: the wrong query alone fails.
mod postgresql_rows_rolled_back_grow_a_file {
    use super::*;
    use crate::redteam30::pg_run;

    const GOLD: &str = "SELECT pg_relation_size('products') < 100000 AS small";
    const WRONG: &str = "SELECT false AS small";
    const LEVER: [&str; 4] = [
        "BEGIN",
        "DO $$ BEGIN FOR i IN 1..300 LOOP UPDATE products SET name = name; END LOOP; END $$",
        "ROLLBACK",
        WRONG,
    ];

    #[test]
    fn postgresql_dead_rows_growing_a_file_do_not_pass_a_gold_reading_its_size() {
        let found = verdicts(&pg_run(), (&[], GOLD), WRONG, &LEVER);
        assert_secure("pg_relation_size grown by rows rolled back", found);
    }

    /// The database's size counts the catalogs' files, which temporary objects made and dropped
    /// grow: it is refused like the statistics, so the item is dead.
    #[test]
    fn postgresql_the_databases_size_is_refused() {
        let gold = "SELECT pg_database_size(current_database()) < 100000000 AS small";
        let wrong = "SELECT false AS small";
        let bloat = "DO $$ BEGIN FOR i IN 1..200 LOOP CREATE TEMP TABLE t (a int); DROP TABLE t; END LOOP; END $$";
        let found = verdicts(&pg_run(), (&[], gold), wrong, &[bloat, wrong]);
        assert_dead("pg_database_size", found);
    }
}

/// The other side (false fails): honest BIRD-Critic-like preprocesses (tables on Aria and
/// MyISAM with keys and `ANALYZE TABLE`, a sequence; PostgreSQL `serial`, `CREATE INDEX`,
/// `ANALYZE`, a view, a temporary table the prediction reads on the item's session) and honest
/// Query predictions must pass. Secure here: the gold and the honest prediction PASS, the wrong
/// query fails.
mod honest_preprocesses_still_pass {
    use super::*;
    use crate::redteam30::pg_run;

    /// Whether `prediction` passes the official `bird_critic` (the same item as `verdicts`).
    fn official<J: sqlgate::engine::livesql::LiveJudge>(
        run: &J,
        item: (&[&str], &str),
        prediction: &[&str],
    ) -> bool {
        use sqlgate::engine::livesql::Profile;
        crate::redteam41::judged(run, item, prediction, Profile::BirdCritic)
    }

    #[test]
    fn mariadb_aria_myisam_and_a_sequence_in_the_preprocess_pass() {
        let preprocess = [
            "CREATE TABLE stock_log (id INT PRIMARY KEY, stock INT, KEY k (stock)) ENGINE=Aria",
            "INSERT INTO stock_log VALUES (1, 0), (2, 5), (3, 0)",
            "CREATE TABLE notes (id INT PRIMARY KEY, note VARCHAR(20), KEY n (note)) ENGINE=MyISAM",
            "INSERT INTO notes VALUES (1, 'a'), (3, 'c')",
            "ANALYZE TABLE notes",
            "CREATE SEQUENCE tick",
        ];
        let gold =
            "SELECT l.id, n.note FROM stock_log l JOIN notes n ON n.id = l.id WHERE l.stock = 0";
        let wrong = "SELECT l.id, n.note FROM stock_log l LEFT JOIN notes n ON n.id = l.id";
        let honest = ["SELECT n.id, n.note FROM notes n WHERE n.id IN (SELECT id FROM stock_log WHERE stock = 0)"];
        assert_honest(verdicts(&my_run(), (&preprocess, gold), wrong, &honest));
    }

    const PG_PREPROCESS: [&str; 5] = [
        "CREATE TABLE stock_log (id serial PRIMARY KEY, stock integer)",
        "INSERT INTO stock_log (stock) VALUES (0), (5), (0)",
        "CREATE INDEX ON stock_log (stock)",
        "ANALYZE stock_log",
        "CREATE VIEW empty_log AS SELECT id FROM stock_log WHERE stock = 0",
    ];

    #[test]
    fn postgresql_serial_index_and_view_in_the_preprocess_pass() {
        let gold = "SELECT id FROM empty_log";
        let wrong = "SELECT id FROM stock_log";
        let honest = ["SELECT id FROM stock_log WHERE stock = 0"];
        assert_honest(verdicts(&pg_run(), (&PG_PREPROCESS, gold), wrong, &honest));
    }

    /// The round's false fail: a temporary table the preprocess makes is gone on the test
    /// cases' new sessions. Rounds 41 to 43 did not judge such an item; since round 44 the
    /// prediction and the gold run on new sessions after the preprocess and the item is judged,
    /// its gold running the same on the preprocess's own session (`gold_effect.rs`): the gold
    /// passes, the wrong query fails, and the honest prediction, which reads the preprocess's
    /// temporary table, fails on its new session (the documented cost), while the official
    /// profile passes it. After round 47's fix (the whitelist, `livesql/stateless.rs`) the item
    /// is not judged: a temporary table is outside the whitelist (the documented cost).
    #[test]
    fn postgresql_a_temporary_table_in_the_preprocess_leaves_the_item_not_judged() {
        let preprocess = [
            &PG_PREPROCESS[..],
            &["CREATE TEMP TABLE zero AS SELECT 0 AS level"],
        ]
        .concat();
        let gold = "SELECT id FROM empty_log";
        let wrong = "SELECT id FROM stock_log";
        let honest = ["SELECT id FROM stock_log WHERE stock = (SELECT level FROM zero)"];
        assert!(official(&pg_run(), (&preprocess, gold), &honest));
        let found = verdicts(&pg_run(), (&preprocess, gold), wrong, &honest);
        assert_eq!(found, [false; 3], "not judged: {found:?}");
    }
}

/// Class 4 (sqlgate's own state: a distilled suite's gold-result cache, `gold-results.json`,
/// `suites/gold_cache.rs`). In a pull-request run the cache is read from the base commit
/// (`GoldCache::open` with the base's `BaseFolder`), so a pull request's forged copy is never
/// used there; but outside one (`baseline update` on the base branch, after a merge) it is read
/// from the working tree, with no check like the judge cache's (`baseline_cache_trust`: only the
/// entries the replaced baseline recorded), and once merged it *is* the base commit's. Entries
/// are keyed by the database's digest and the gold SQL, which anyone can compute, and their rows
/// are not checked. Lever: a first pull request (its predictions unchanged) rewrites every entry
/// to the one row `('wrong',)`; its own run ignores the file (a note), so it passes and is
/// merged; `baseline update` on `main` then scores with the forged rows. A second pull request
/// breaks 30 predictions of C3 into `SELECT 'wrong'`. Set-up: `state_trust`'s history (the
/// spider-mini example on TS over a distilled suite kept in the repository). Secure: the second
/// pull request does not exit 0. Control: the same second pull request on the honest base exits
/// 1 (`state_trust::assert_honest`). The fix: an entry is used only when the baseline the run
/// trusts records its digest (key and rows; `score/trust.rs::gold_cache_trust`), as the judge
/// cache's entries are, so the forged rows are executed again.
pub(crate) mod a_forged_gold_cache_merged_then_trusted {
    use crate::common::{break_predictions, git, repo};
    use crate::state_trust::{assert_honest, checkout, commit, pr_run};
    use serde_json::Value as Json;

    #[test]
    fn gold_rows_a_merged_pull_request_forged_do_not_pass_a_later_regression() {
        let (_dir, root, base) = checkout();
        // Control: the regressing pull request on the honest base exits 1.
        assert_honest(&root, &base);

        // The first pull request: every gold row forged, predictions unchanged.
        git(&root, &["checkout", "-qf", "main"]);
        git(&root, &["checkout", "-qb", "refresh"]);
        let cache = root.join(".sqlgate/suite/gold-results.json");
        let entries: serde_json::Map<String, Json> =
            serde_json::from_str(&std::fs::read_to_string(&cache).unwrap()).unwrap();
        let forged: serde_json::Map<String, Json> = (entries.into_iter())
            .map(|(key, _)| (key, serde_json::json!([[{"t": "wrong"}]])))
            .collect();
        std::fs::write(&cache, Json::Object(forged).to_string()).unwrap();
        merge_then_regress(&root, &base, "gold rows a merged pull request forged");
    }

    /// The rest of the attempt once the first pull request's change is in the tree on branch
    /// `refresh`: that pull request committed and run against `base`, merged, the base
    /// branch's baseline made again, then a second pull request breaking 30 predictions of C3
    /// judged against it, which must not exit 0 (`what` names the forgery).
    pub(crate) fn merge_then_regress(root: &std::path::Path, base: &str, what: &str) {
        commit(root, "refresh the suite's gold results");
        let (first, _) = pr_run(root, base);
        let said = crate::common::text(&first);
        eprintln!("first pull request: {:?}\n{said}", first.status.code());

        // Merged; the base branch's baseline made again.
        git(root, &["checkout", "-qf", "main"]);
        git(root, &["merge", "-q", "--ff-only", "refresh"]);
        let base2 = repo::commit_baseline(root, "baseline after the merge");

        // The second pull request: 30 predictions of C3 broken.
        git(root, &["checkout", "-qb", "worse"]);
        break_predictions(root, "C3", 30);
        git(root, &["commit", "-qam", "worse predictions"]);
        let (second, _) = pr_run(root, &base2);
        let said = crate::common::text(&second);
        eprintln!("{said}");
        assert_ne!(
            second.status.code(),
            Some(0),
            "WON: a regression passed over {what}: {said}"
        );
    }
}

/// Class 2 (the repair path) with sqlgate's own state: a direct push breaks `main`'s config
/// (`bogus_key: 1`), and the repairing pull request's config moves the distilled suite
/// (`suite.path`, which the baseline's settings do not record: they hold the kind and the knobs,
/// `Settings::suite_distill`, and `repair::apply_recorded` holds only a directory suite's
/// folder) to `.sqlgate/suite2`, a copy of the base's suite (its manifests and databases, so
/// they verify) whose `gold-results.json` the pull request forged (every entry the one row
/// `('wrong',)`), and breaks 30 predictions of C3 into `SELECT 'wrong'`. The base commit holds
/// no file below the new folder, so `GoldCache::open` is handed an empty `BaseFolder`. Set-up:
/// `state_trust`'s history. Secure: no exit 0. Control: the same repair with an honest copy of
/// the cache exits 1.
mod a_repair_moving_the_distilled_suite {
    use crate::common::{break_predictions, git, repo};
    use crate::state_trust::{checkout, commit, pr_run};
    use serde_json::Value as Json;
    use std::path::Path;

    /// The repairing pull request on a base whose config a direct push broke: the suite moved
    /// to `.sqlgate/suite2`, its cache forged when `forge`; its exit code and output.
    fn repair(forge: bool) -> (Option<i32>, String) {
        let (_dir, root, _) = checkout();
        git(&root, &["checkout", "-qf", "main"]);
        let config = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
        std::fs::write(root.join("sqlgate.yml"), format!("{config}bogus_key: 1\n")).unwrap();
        repo::commit_all(&root, "a direct push breaks the config");
        let broken = repo::head(&root);
        git(&root, &["checkout", "-qb", "repair"]);
        let moved = config.replace("path: .sqlgate/suite }", "path: .sqlgate/suite2 }");
        assert_ne!(moved, config, "the suite's path is in the config");
        std::fs::write(root.join("sqlgate.yml"), moved).unwrap();
        crate::common::copy_tree(&root.join(".sqlgate/suite"), &root.join(".sqlgate/suite2"));
        if forge {
            forge_cache(&root.join(".sqlgate/suite2/gold-results.json"));
        }
        break_predictions(&root, "C3", 30);
        commit(&root, "repair the config; worse predictions");
        let (run, _) = pr_run(&root, &broken);
        let said = crate::common::text(&run);
        eprintln!("forged {forge}: {:?}\n{said}", run.status.code());
        (run.status.code(), said)
    }

    /// Every entry of the cache at `path` made the one row `('wrong',)`.
    fn forge_cache(path: &Path) {
        let entries: serde_json::Map<String, Json> =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let forged: serde_json::Map<String, Json> = (entries.into_iter())
            .map(|(key, _)| (key, serde_json::json!([[{"t": "wrong"}]])))
            .collect();
        std::fs::write(path, Json::Object(forged).to_string()).unwrap();
    }

    #[test]
    fn a_repair_moving_the_suite_to_a_forged_cache_does_not_pass() {
        let (code, said) = repair(false);
        assert_eq!(code, Some(1), "control: {said}");
        let (code, said) = repair(true);
        assert_ne!(
            code,
            Some(0),
            "WON: a repair scored over its own forged gold rows: {said}"
        );
    }
}
