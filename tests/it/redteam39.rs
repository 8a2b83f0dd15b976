//! Red team round 39 (issue 44): `bird_critic_sound` on PostgreSQL 15 and MariaDB 10.11 after round 38's fixes
//! (commit da21a6a: the Query data check compares the prediction's clone first with its own
//! contents read before the prediction, `QueryCheck::start`, and the clone's own entry, `OWN`,
//! only there, never with the twin), and sqlgate's own state (class 4: the judge cache, shards). Every
//! test asserts the SECURE outcome and runs its control: a failing test is a win. Report:
//! `/work/notes/redteam39.md`.
//!
//! The class 3 set-up is round 36's lever item (`redteam36::verdicts`: a Query item on `shop`
//! with a preprocess from the base's dataset and round 32's `WRAPPED` test case, which runs the
//! prediction again, then the gold on a new session to the prediction's clone), and round 32's
//! `through_the_gate::attempt_with` for the CLI's verdict.

use crate::redteam30::{assert_secure, my_run};
use crate::redteam36::verdicts;

/// Secure for an item whose preprocess leaves a lock (the lead's fix of this round's first win):
/// its clone cannot be read before the prediction, so the check fails the item for every
/// prediction, the gold too (a dead item, as its baseline records it), and the lever never
/// passes.
fn assert_unchecked(what: &str, found: [bool; 3]) {
    assert_eq!(
        found,
        [false, false, false],
        "{what}: an item whose preprocess leaves a lock fails every prediction"
    );
}

/// Class 3, MariaDB: the twin path forced by a lock the preprocess holds. `QueryCheck::start`
/// reads the prediction's clone on an administrator's session while the item's session is
/// open; when that read fails ("Unreadable now (a lock the preprocess holds)") it keeps no
/// snapshot, and `QueryCheck::check` then compares the clone with the twin alone, where
/// `differences` leaves the clone's own entry (`MYSQL_TIMES`, history periods) out. So every
/// round 38 win that the own entry closed is open again once the preprocess ends with `LOCK
/// TABLES ... WRITE` (the read waits `LOCK_WAIT`, 10 s, and fails). Set-up: the lever item, its
/// preprocess making a MyISAM `stock_log` with one row (or a procedure `restock`) and then
/// `LOCK TABLES stock_log WRITE`; gold: round 38's `CHECK_TIME IS NULL` (1) or `LAST_ALTERED >
/// CREATED` (0). Levers: `CHECK TABLE stock_log` under the lock; `UNLOCK TABLES`, `DO
/// SLEEP(1.2)`, `ALTER PROCEDURE restock COMMENT 'restock'` (unchanged); then the wrong query.
/// Control: the wrong query alone fails.
pub(crate) mod mariadb_a_lock_the_preprocess_holds {
    use super::*;

    pub(crate) const PREPROCESS: [&str; 3] = [
        "CREATE TABLE stock_log (id INT PRIMARY KEY, stock INT) ENGINE=MyISAM",
        "INSERT INTO stock_log VALUES (1, 5)",
        "LOCK TABLES stock_log WRITE",
    ];
    pub(crate) use crate::redteam38::mariadb_volatile_columns_a_statement_sets::{
        GOLD, LEVER, WRONG,
    };

    #[test]
    fn mariadb_check_table_behind_a_held_lock_does_not_pass_a_gold_reading_check_time() {
        let found = verdicts(&my_run(), (&PREPROCESS, GOLD), WRONG, &LEVER);
        assert_unchecked("LOCK TABLES in the preprocess, CHECK TABLE", found);
    }

    pub(crate) const ROUTINE: [&str; 3] = [
        "CREATE TABLE stock_log (id INT PRIMARY KEY, stock INT) ENGINE=MyISAM",
        "CREATE PROCEDURE restock() COMMENT 'restock' SELECT 1",
        "LOCK TABLES stock_log WRITE",
    ];
    pub(crate) use crate::redteam38::mariadb_volatile_columns_a_statement_sets::{
        ROUTINE_GOLD, ROUTINE_WRONG,
    };
    pub(crate) const ROUTINE_LEVER: [&str; 4] = [
        "UNLOCK TABLES",
        "DO SLEEP(1.2)",
        "ALTER PROCEDURE restock COMMENT 'restock'",
        ROUTINE_WRONG,
    ];

    #[test]
    fn mariadb_a_routine_altered_behind_a_held_lock_does_not_pass_a_gold_reading_last_altered() {
        let found = verdicts(
            &my_run(),
            (&ROUTINE, ROUTINE_GOLD),
            ROUTINE_WRONG,
            &ROUTINE_LEVER,
        );
        assert_unchecked("LOCK TABLES in the preprocess, ALTER PROCEDURE", found);
    }
}

/// Class 3, MariaDB: estimates a statement sets (`catalog_rows.rs::MYSQL_ESTIMATES`:
/// `TABLE_ROWS`, `DATA_FREE`, `CARDINALITY`, ... are left out of every row of
/// `mysql_clone_rows`, neither compared with the twin nor in the clone's own entry). On MyISAM
/// they are not estimates: a non-unique key's `CARDINALITY` is NULL until `ANALYZE TABLE`, and
/// `DATA_FREE` is the bytes of deleted rows until `OPTIMIZE TABLE`. Set-up: the lever item, its
/// preprocess making a MyISAM `stock_log` with a key on `stock` and three rows (for `OPTIMIZE`,
/// the middle one deleted); gold `SELECT CARDINALITY IS NULL AS unanalyzed FROM
/// information_schema.STATISTICS ...` (1), or `SELECT DATA_FREE > 0 AS fragmented FROM
/// information_schema.TABLES ...` (1). Levers: `ANALYZE TABLE stock_log` / `OPTIMIZE TABLE
/// stock_log`, then the wrong query (`SELECT 0 ...`). Control: the wrong query alone fails.
pub(crate) mod mariadb_estimates_a_statement_sets {
    use super::*;

    pub(crate) const PREPROCESS: [&str; 2] = [
        "CREATE TABLE stock_log (id INT PRIMARY KEY, stock INT, KEY k (stock)) ENGINE=MyISAM",
        "INSERT INTO stock_log VALUES (1, 5), (2, 5), (3, 7)",
    ];
    pub(crate) const GOLD: &str = "SELECT CARDINALITY IS NULL AS unanalyzed FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'stock_log' AND INDEX_NAME = 'k'";
    pub(crate) const WRONG: &str = "SELECT 0 AS unanalyzed";
    pub(crate) const LEVER: [&str; 2] = ["ANALYZE TABLE stock_log", WRONG];

    #[test]
    fn mariadb_analyze_table_does_not_pass_a_gold_reading_cardinality() {
        let found = verdicts(&my_run(), (&PREPROCESS, GOLD), WRONG, &LEVER);
        assert_secure("ANALYZE TABLE (MyISAM CARDINALITY)", found);
    }

    pub(crate) const FRAGMENTED: [&str; 3] = [
        "CREATE TABLE stock_log (id INT PRIMARY KEY, stock INT, KEY k (stock)) ENGINE=MyISAM",
        "INSERT INTO stock_log VALUES (1, 5), (2, 5), (3, 7)",
        "DELETE FROM stock_log WHERE id = 2",
    ];
    pub(crate) const FREE_GOLD: &str = "SELECT DATA_FREE > 0 AS fragmented FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'stock_log'";
    pub(crate) const FREE_WRONG: &str = "SELECT 0 AS fragmented";
    pub(crate) const FREE_LEVER: [&str; 2] = ["OPTIMIZE TABLE stock_log", FREE_WRONG];

    /// After round 47's fix (the whitelist, `livesql/stateless.rs`) the item is not judged: its preprocess's `DELETE` is
    /// outside the whitelist
    /// (the documented cost, docs/SECURITY.md), so the lever fails with every prediction.
    #[test]
    fn mariadb_optimize_table_does_not_pass_a_gold_reading_data_free() {
        let found = verdicts(&my_run(), (&FRAGMENTED, FREE_GOLD), FREE_WRONG, &FREE_LEVER);
        assert_eq!(found, [false; 3], "not judged: {found:?}");
    }
}

/// Class 3, PostgreSQL: the twin path forced by a lock the preprocess holds. A PostgreSQL
/// preprocess runs each statement in a transaction of its own, committed, so a table lock ends
/// with it, but a session-level advisory lock (`pg_advisory_lock`) outlives the `COMMIT` and
/// holds while the item's session is open. A view of the clone whose read takes the same lock
/// shared then blocks `QueryCheck::start`'s read (the data digests read views; `lock_timeout`,
/// 10 s), which fails, and the check compares the clone with the twin alone, the clone's own
/// entry (ids, file numbers) left out. Once the item's session ended the view reads at once.
/// Set-up: the lever item, round 38's rewritten-again preprocess (`t_old` rewritten, then
/// `t_new`) plus a function `hold()` taking advisory lock 7 shared, a view `held` reading it,
/// and `SELECT pg_advisory_lock(7)`; gold `pg_relation_filenode('t_old') <
/// 't_new'::regclass::oid` (true). Lever: round 38's second rewrite, then `SELECT false AS
/// older`. Control: the wrong query alone fails.
pub(crate) mod postgresql_an_advisory_lock_the_preprocess_holds {
    use super::*;
    use crate::redteam30::pg_run;

    pub(crate) const PREPROCESS: [&str; 7] = [
        "CREATE TABLE t_old (n integer)",
        "INSERT INTO t_old VALUES (1), (2)",
        "ALTER TABLE t_old ALTER COLUMN n TYPE bigint",
        "CREATE TABLE t_new (n integer)",
        "CREATE FUNCTION hold() RETURNS integer LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_advisory_lock_shared(7); RETURN 1; END $$",
        "CREATE VIEW held AS SELECT hold() AS held",
        "SELECT pg_advisory_lock(7)",
    ];
    pub(crate) use crate::redteam38::postgresql_a_table_rewritten_again::{GOLD, LEVER, WRONG};

    #[test]
    fn postgresql_a_table_rewritten_again_behind_an_advisory_lock_does_not_pass() {
        let found = verdicts(&pg_run(), (&PREPROCESS, GOLD), WRONG, &LEVER);
        assert_unchecked(
            "advisory lock in the preprocess, ALTER COLUMN ... USING n + 0",
            found,
        );
    }
}

/// Class 3 through the gate: the `ANALYZE TABLE` attempt as a pull request, where the verdict is
/// the CLI's exit code (round 32's `through_the_gate::attempt_with`: one Query item with its
/// preprocess, the baseline made on `main` with the gold, the pull request predicting the lever;
/// control: the wrong query alone exits 1). The held-lock attempts made it through the gate too
/// before the fix; now such an item fails every prediction, the gold in the baseline too, so no
/// pull request can regress on it (the engine tests above pin that).
mod through_the_gate {
    use crate::redteam32::through_the_gate::attempt_with as attempt;
    use crate::redteam32::through_the_gate::MY;

    #[test]
    fn mariadb_analyze_table_does_not_pass_the_gate() {
        use super::mariadb_estimates_a_statement_sets::{GOLD, LEVER, PREPROCESS, WRONG};
        let (server, _) = crate::livesql_my_gate::loaded();
        attempt(&MY, server, (&PREPROCESS, GOLD), WRONG, &LEVER);
    }
}

/// Class 4 (sqlgate's own state: the judge cache, `providers/cache.rs`). A pull-request run
/// uses a cache entry only when `entry_digest(key, text)` is one the base's baseline records
/// (`provider_cache`). The lever transplants **trusted** text: the pull request commits, under
/// the keys of its broken predictions, the exact bytes of an entry the base's run wrote and
/// recorded (an "equivalent" verdict for a correct prediction), so every file holds text a
/// base-branch run wrote. Set-up: `judge_cache_trust`'s repository (20 Spider items judged by a
/// local OpenAI-compatible server, the base's baseline recording its cache; the pull request
/// breaks 10 predictions). Secure: exit 1 with the judge's real verdicts (flex 100.0 -> 50.0).
/// Control: the same pull request without the transplanted files exits 1.
mod a_trusted_judge_reply_moved_to_another_key {
    use crate::common::git;
    use crate::judge_cache_trust::{assert_real_verdicts, eval, repository, start_judge, BROKEN};
    use std::collections::BTreeSet;
    use std::path::{Path, PathBuf};
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    /// Every cache file below `dir`.
    fn files(dir: &Path) -> BTreeSet<PathBuf> {
        let mut found = BTreeSet::new();
        for shard in std::fs::read_dir(dir).unwrap() {
            for file in std::fs::read_dir(shard.unwrap().path()).unwrap() {
                found.insert(file.unwrap().path());
            }
        }
        found
    }

    #[test]
    fn a_recorded_judge_reply_under_a_broken_predictions_key_is_not_used() {
        let server = start_judge(Arc::new(AtomicBool::new(false)));
        let (dir, base) = repository(&server);
        let repo = dir.path().join("repo");
        let cache = repo.join(".sqlgate/cache/judge");
        let recorded = files(&cache);

        // Control: the pull request as it is.
        let (run, honest) = eval(&repo, Some(&base));
        assert_real_verdicts(&run, &honest);
        let written: Vec<PathBuf> = files(&cache).difference(&recorded).cloned().collect();
        assert_eq!(written.len(), BROKEN, "the broken predictions' keys");

        // Lever: each broken key's file holds a recorded "equivalent" reply, byte for byte.
        let trusted = std::fs::read(recorded.iter().next().unwrap()).unwrap();
        for path in &written {
            std::fs::write(path, &trusted).unwrap();
        }
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-qm", "judge replies the base wrote"]);
        let (run, verdicts) = eval(&repo, Some(&base));
        let out = assert_real_verdicts(&run, &verdicts);
        assert_eq!(verdicts, honest, "{out}");
        assert!(
            out.contains(&format!(
                "{BROKEN} judge cache entries were not written by a base-branch run"
            )),
            "{out}"
        );
    }
}

/// Class 4 (shards, `merge`): round 21's forged shard (the pull request's own header over the
/// base's records, the trailer recomputed), committed so that `Base::tracks` does not see it.
/// `tracks` names the path as written (`repo_path` follows no link inside the repository) and
/// asks `git ls-files --stage -- shards/1.jsonl shards`, counting a folder entry only when it is a
/// submodule (mode 160000). The lever commits `shards` as a **symbolic link** (mode 120000) to a
/// folder `stash` holding the shard, so the index lists `shards` as a link and
/// `stash/1.jsonl` as the file, never `shards/1.jsonl`. Set-up: `redteam21::shard_in_a_submodule
/// ::merged` (`merge --trusted-base` of `shards/1.jsonl`, outside Actions). Secure: no exit 0.
/// Control: the same shard committed at `shards/1.jsonl` is refused (exit 2).
mod a_forged_shard_behind_a_committed_link {
    use crate::common::repo;
    use crate::redteam21::shard_in_a_submodule::merged;

    #[test]
    fn a_forged_shard_reached_through_a_committed_folder_link_is_refused() {
        let (code, out) = merged(|root, shard| {
            std::fs::create_dir(root.join("shards")).unwrap();
            std::fs::write(root.join("shards/1.jsonl"), shard).unwrap();
            repo::commit_all(root, "a shard");
        });
        assert_eq!(code, Some(2), "control: {out}");
        let (code, out) = merged(|root, shard| {
            std::fs::create_dir(root.join("stash")).unwrap();
            std::fs::write(root.join("stash/1.jsonl"), shard).unwrap();
            std::os::unix::fs::symlink("stash", root.join("shards")).unwrap();
            repo::commit_all(root, "a shard behind a link");
        });
        eprintln!("{out}");
        assert_ne!(code, Some(0), "WON: the forged shard merged: {out}");
    }
}
