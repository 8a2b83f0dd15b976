//! Red team round 41 (issue 44): `bird_critic_sound` on PostgreSQL 15 and MariaDB 10.11 after
//! round 40's fixes (commits fc1b460 and e090a7c: MariaDB sequences uncached before a clone is
//! read; PostgreSQL collected statistics closed to a sound clone's role; each test-case session
//! first runs the preprocess's temporary-table statements, `query_check::session_prelude`; the
//! gold cache trusts only the entries the run's baseline records), and sqlgate's own state
//! (class 4). Every test asserts the SECURE outcome and runs its control: a failing test is a
//! win. Report: `/work/notes/redteam41.md`.
//!
//! The class 3 set-up is round 36's lever item (`redteam36::verdicts`: a Query item on `shop`
//! with a preprocess from the base's dataset and round 32's `WRAPPED` test case, which runs the
//! prediction again, then the gold, on a new session to the prediction's clone).

use crate::redteam30::{assert_secure, my_run, pg_run};
use crate::redteam36::verdicts;
use sqlgate::engine::livesql::{LiveJudge, Profile};

/// Whether `prediction` passes the item (`preprocess`, `gold`, round 32's `WRAPPED` test case)
/// under `profile`.
pub(crate) fn judged<J: LiveJudge>(
    run: &J,
    (preprocess, gold): (&[&str], &str),
    prediction: &[&str],
    profile: Profile,
) -> bool {
    let line = serde_json::json!({
        "instance_id": "lever41", "db_id": "shop", "category": "Query", "sol_sql": [gold],
        "preprocess_sql": preprocess, "clean_up_sql": [],
        "test_cases": [crate::redteam32::WRAPPED], "issue_sql": [], "conditions": {},
        "efficiency": false, "query": "which products?",
    });
    let item = sqlgate::input::livesql::parse_items(
        std::path::Path::new("lever41.jsonl"),
        &format!("{line}\n"),
    )
    .unwrap()
    .remove(0);
    let predicted: Vec<String> = prediction.iter().map(|s| s.to_string()).collect();
    let verdict = run.judge(&item, Some(&predicted), profile).unwrap();
    eprintln!(
        "{profile:?} {prediction:?}: {} {}",
        verdict.success, verdict.message
    );
    verdict.success
}

/// Secure after the lead's fix of this round's prelude and setting findings
/// (`sound::session_bound`): an item whose preprocess leaves state on its session is not
/// judged under `bird_critic_sound`, so each of `predictions` fails there (the gold too: a dead
/// item, which no pull request can regress or improve on).
fn assert_unjudged<J: LiveJudge>(run: &J, item: (&[&str], &str), predictions: &[&str]) {
    for prediction in predictions {
        assert!(
            !judged(run, item, &[prediction], Profile::BirdCriticSound),
            "{prediction}: an item whose preprocess leaves session state is not judged"
        );
    }
}

/// Class 3, PostgreSQL: whether an object has collected statistics at all. Round 40's fix
/// (`livesql/postgres/statistics.rs`) revokes the `pg_stat*` / `pg_statio*` views and the
/// `pg_stat_get_*` functions from `PUBLIC` in the clone's catalog; PostgreSQL 15's
/// `pg_stat_have_stats(kind, database, object)` is named otherwise (the question: is it still
/// executable?). A
/// clone is a new database, so an object it copied from the template has no statistics entry
/// until a session that touched it flushes its counters. Set-up: the lever item; its preprocess
/// makes an index on `products (stock)` that no digest reads through; gold `SELECT NOT
/// pg_stat_have_stats('relation', <this database>, 'rt41_stock'::regclass) AS quiet` (true).
/// Lever: `SET enable_seqscan = off`, an index scan of `rt41_stock` (the prediction's session
/// flushes the index's counters when it ends, before the test cases), then `SELECT false AS
/// quiet`. Control: the wrong query alone fails. Observed: the clone's role is refused the
/// function (`permission denied`), so every prediction fails, the gold too (a dead item).
mod postgresql_whether_statistics_exist {
    use super::*;

    const PREPROCESS: [&str; 1] = ["CREATE INDEX rt41_stock ON products (stock)"];
    const GOLD: &str = "SELECT NOT pg_stat_have_stats('relation', (SELECT oid FROM pg_database WHERE datname = current_database()), 'rt41_stock'::regclass::oid) AS quiet";
    const WRONG: &str = "SELECT false AS quiet";
    const LEVER: [&str; 3] = [
        "SET enable_seqscan = off",
        "SELECT count(*) AS n FROM products WHERE stock = 3",
        WRONG,
    ];

    #[test]
    fn postgresql_an_index_scan_seen_by_pg_stat_have_stats_does_not_pass() {
        let found = verdicts(&pg_run(), (&PREPROCESS, GOLD), WRONG, &LEVER);
        assert!(
            found == [false; 3] || found[..2] == [true, false],
            "control: {found:?}"
        );
        assert!(
            !found[2],
            "WON (pg_stat_have_stats): the lever passed bird_critic_sound: {found:?}"
        );
    }
}

/// Class 3 / a false PASS of the prelude (round 40's fix, `query_check::session_prelude`): each
/// test-case session runs again the preprocess's statements that make or fill its temporary
/// tables, but on the clone as the *whole* preprocess left it and on a session with none of the
/// preprocess's session state. A temporary table the preprocess made from rows it then changed
/// (a snapshot taken before an `UPDATE`), or from a session variable it `SET` before, is rebuilt
/// with other rows than the ones the item's session (and the official `bird_critic`) holds, so
/// the test case's gold reads another answer, and a wrong prediction giving that answer passes.
/// No lever: the regressing pull request only predicts the wrong query. Set-ups (honest
/// BIRD-Critic-like preprocesses): PostgreSQL, a snapshot `before` of `products` taken, then
/// every stock raised by 100 (gold: the products `before` had under 5 in stock; the rebuilt
/// `before` has none); MariaDB, `SET @low = 5` then a temporary table of the products under
/// `@low` (on a new session `@low` is NULL, so the table is empty). Wrong: the products under 0
/// in stock (none). Control: the official `bird_critic` fails the wrong query, and the gold
/// passes both profiles. Secure: the wrong query fails `bird_critic_sound`.
mod a_prelude_rebuilding_a_temporary_table_from_other_state {
    use super::*;

    fn assert_wrong_fails<J: LiveJudge>(run: &J, item: (&[&str], &str), wrong: &str) {
        assert!(judged(run, item, &[item.1], Profile::BirdCritic), "gold");
        assert!(
            !judged(run, item, &[wrong], Profile::BirdCritic),
            "control: the official profile fails the wrong query"
        );
        assert_unjudged(run, item, &[item.1, wrong]);
    }

    #[test]
    fn postgresql_a_snapshot_taken_before_an_update_is_not_rebuilt_after_it() {
        let preprocess = [
            "CREATE TEMP TABLE before AS SELECT name, stock FROM products",
            "UPDATE products SET stock = stock + 100",
        ];
        let gold = "SELECT name FROM before WHERE stock < 5";
        let wrong = "SELECT name FROM products WHERE stock < 5";
        assert_wrong_fails(&pg_run(), (&preprocess, gold), wrong);
    }

    #[test]
    fn postgresql_rows_the_preprocess_deleted_from_its_temporary_table_do_not_come_back() {
        let preprocess = [
            "CREATE TEMP TABLE stocked AS SELECT name, stock FROM products",
            "DELETE FROM stocked WHERE stock < 5",
        ];
        let gold = "SELECT name FROM stocked";
        let wrong = "SELECT name FROM products";
        assert_wrong_fails(&pg_run(), (&preprocess, gold), wrong);
    }

    #[test]
    fn mariadb_a_temporary_table_made_from_a_user_variable_is_not_emptied() {
        let preprocess = [
            "SET @low = 5",
            "CREATE TEMPORARY TABLE low_stock AS SELECT name FROM products WHERE stock < @low",
        ];
        let gold = "SELECT name FROM low_stock";
        let wrong = "SELECT name FROM products WHERE stock < 0";
        assert_wrong_fails(&my_run(), (&preprocess, gold), wrong);
    }
}

/// False fails? Honest preprocesses with temporary tables under round 40's prelude: MariaDB (a
/// temporary table the honest prediction reads, round 40 tested only PostgreSQL) and
/// PostgreSQL (a temporary table filled from a base sequence: the prelude, run again on each
/// test-case session, takes values from the *base* sequence of the prediction's clone, so the
/// clone moves away from its twin). Secure here: the gold and the honest prediction pass, the
/// wrong query fails.
/// Since round 44 the prediction and the gold run on new sessions after the preprocess, and an
/// item whose gold runs otherwise on the preprocess's own session is not judged
/// (`gold_effect.rs`): the PostgreSQL item, whose gold reads the temporary table, is not judged
/// (every prediction fails); the MariaDB item, whose gold does not, is judged, and the honest
/// prediction that reads the preprocess's temporary table fails on its new session (the
/// documented cost, docs/SECURITY.md). Neither a false pass nor a prelude that writes. After
/// round 47's fix (the whitelist, `livesql/stateless.rs`) neither item is judged: a temporary
/// table is outside the whitelist (the documented cost).
mod honest_temporary_tables_in_the_preprocess {
    use super::*;

    #[test]
    fn mariadb_an_item_whose_gold_ignores_a_preprocess_temporary_table_is_not_judged() {
        let preprocess = [
            "CREATE TEMPORARY TABLE zero (level INT)",
            "INSERT INTO zero VALUES (0)",
        ];
        let gold = "SELECT name FROM products WHERE stock = 0";
        let wrong = "SELECT name FROM products";
        let honest = ["SELECT p.name FROM products p JOIN zero z ON p.stock = z.level"];
        let found = verdicts(&my_run(), (&preprocess, gold), wrong, &honest);
        assert_eq!(found, [false; 3], "not judged: {found:?}");
    }

    #[test]
    fn postgresql_an_item_whose_gold_reads_a_preprocess_temporary_table_is_not_judged() {
        let preprocess = [
            "CREATE SEQUENCE ticket",
            "CREATE TEMP TABLE queue AS SELECT nextval('ticket') AS n, name FROM products ORDER BY id",
        ];
        let gold = "SELECT name FROM queue ORDER BY n LIMIT 3";
        let wrong = "SELECT name FROM queue";
        let honest = ["SELECT name FROM queue WHERE n < (SELECT min(n) + 3 FROM queue)"];
        let found = verdicts(&pg_run(), (&preprocess, gold), wrong, &honest);
        assert_eq!(found, [false; 3], "not judged: {found:?}");
    }
}

/// Class 4 (sqlgate's own state: the gold cache, after round 40's fix, `score/trust.rs::
/// gold_cache_trust`). An entry is used only when the baseline the run trusts records its
/// digest; in `baseline update` that is the baseline being replaced, read from the working
/// tree. The digest (`gold_cache::entry_digest`: SHA-256 of a fixed tag, the key and the rows'
/// encoding) is a plain hash anyone can compute, and the baseline file is in the pull request's
/// tree. Lever: a first pull request (predictions unchanged) rewrites every cache entry to the
/// one row `('wrong',)` AND appends those entries' digests to `baseline.json`'s `gold_cache`;
/// its own run reads the base's baseline and cache (notes only) and passes; it is merged;
/// `baseline update` on `main` trusts the forged entries (unlike a forged score, which that
/// update would overwrite, this survives it: the new baseline records the forged digests
/// again). A second pull request breaks 30 predictions of C3. Set-up: `state_trust`'s history.
/// Control: the same second pull request on the honest base exits 1. Secure: it does not exit 0.
mod a_forged_gold_cache_vouched_for_by_a_merged_baseline {
    use crate::common::git;
    use crate::state_trust::{assert_honest, checkout};
    use serde_json::Value as Json;
    use sqlgate::engine::value::Value;
    use sqlgate::suites::gold_cache::entry_digest;

    #[test]
    fn gold_rows_and_digests_a_merged_pull_request_forged_do_not_pass_a_later_regression() {
        let (_dir, root, base) = checkout();
        assert_honest(&root, &base);

        git(&root, &["checkout", "-qf", "main"]);
        git(&root, &["checkout", "-qb", "refresh"]);
        let cache = root.join(".sqlgate/suite/gold-results.json");
        let entries: serde_json::Map<String, Json> =
            serde_json::from_str(&std::fs::read_to_string(&cache).unwrap()).unwrap();
        let rows = vec![vec![Value::Text("wrong".into())]];
        let digests: Vec<String> = entries.keys().map(|k| entry_digest(k, &rows)).collect();
        let forged: serde_json::Map<String, Json> = (entries.into_iter())
            .map(|(key, _)| (key, serde_json::json!([[{"t": "wrong"}]])))
            .collect();
        std::fs::write(&cache, Json::Object(forged).to_string()).unwrap();
        let path = root.join("baseline.json");
        let mut baseline: Json =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let recorded = baseline["gold_cache"].as_array_mut().expect("gold_cache");
        recorded.extend(digests.into_iter().map(Json::String));
        std::fs::write(&path, serde_json::to_string_pretty(&baseline).unwrap()).unwrap();
        crate::redteam40::a_forged_gold_cache_merged_then_trusted::merge_then_regress(
            &root,
            &base,
            "gold rows and digests a merged pull request forged",
        );
    }
}

/// Class 3, MariaDB (round 40's sequence fix, `mysql/sequences.rs`): the sequences are made
/// uncached before the prediction, but the prediction may make one cached again. `ALTER
/// SEQUENCE tick CACHE 1000` writes the row (`cache_size`), so the lever restores it after
/// taking values from the cache with `ALTER SEQUENCE tick NOCACHE`, which writes the row once
/// more. Set-up: the lever item; its preprocess makes `tick` and commits; gold `SELECT
/// NEXTVAL(tick) <= 10 AS fresh`. Lever: `CACHE 1000`, 20 values, `NOCACHE`, then `SELECT 0 AS
/// fresh`. Secure: the lever fails (the gold itself takes a value, so the item may be dead).
mod mariadb_a_sequence_cached_again_by_the_prediction {
    use super::*;

    const PREPROCESS: [&str; 2] = [
        "CREATE SEQUENCE tick START WITH 1 INCREMENT BY 1 NOCACHE",
        "COMMIT",
    ];
    const GOLD: &str = "SELECT NEXTVAL(tick) <= 10 AS fresh";
    const WRONG: &str = "SELECT 0 AS fresh";
    const LEVER: [&str; 4] = [
        "ALTER SEQUENCE tick CACHE 1000",
        "SELECT NEXTVAL(tick) AS n FROM seq_1_to_20",
        "ALTER SEQUENCE tick NOCACHE",
        WRONG,
    ];

    #[test]
    fn mariadb_a_sequence_cached_again_then_uncached_does_not_pass() {
        let found = verdicts(&my_run(), (&PREPROCESS, GOLD), WRONG, &LEVER);
        if found[0] {
            assert_secure("ALTER SEQUENCE CACHE / NOCACHE", found);
        }
        assert!(!found[2], "WON: the lever passed: {found:?}");
    }
}

/// False fails and a false pass: a preprocess's `SET` (session state the prelude does not run
/// again; round 40's prelude keeps only the statements that make, fill or drop temporary
/// tables). The test case's requests run on new sessions, where the preprocess's settings are
/// gone, so the gold and the prediction are read under other rules than the item's session
/// (and the official `bird_critic`) reads them. MariaDB: `SET sql_mode = 'PIPES_AS_CONCAT'`,
/// gold `name || '!'` (a string on the item's session, `name OR '!'`, that is 0, on a new one);
/// honest `CONCAT(name, '!')`; wrong `SELECT 0`. PostgreSQL: `SET datestyle = 'German'`, gold
/// `joined::date::text` (`01.01.2023` on the item's session, `2023-01-01` on a new one), honest
/// `to_char(joined::date, 'DD.MM.YYYY')`, wrong the literal `'2023-01-01'`.
/// Control: the official profile passes the gold and the honest prediction and fails the wrong
/// query. Secure (after the lead's fix): the item is not judged under `bird_critic_sound`.
mod a_preprocess_setting_not_replayed {
    use super::*;

    fn assert_as_official<J: LiveJudge>(run: &J, item: (&[&str], &str), honest: &str, wrong: &str) {
        let official =
            [item.1, honest, wrong].map(|p| judged(run, item, &[p], Profile::BirdCritic));
        assert_eq!(
            official,
            [true, true, false],
            "control: the official profile"
        );
        assert_unjudged(run, item, &[item.1, honest, wrong]);
    }

    #[test]
    fn mariadb_a_preprocess_sql_mode_is_the_test_cases_too() {
        let preprocess = ["SET sql_mode = 'PIPES_AS_CONCAT'"];
        let gold = "SELECT name || '!' AS shout FROM products WHERE stock = 0";
        let honest = "SELECT CONCAT(name, '!') AS shout FROM products WHERE stock = 0";
        let wrong = "SELECT 0 AS shout FROM products WHERE stock = 0";
        assert_as_official(&my_run(), (&preprocess, gold), honest, wrong);
    }

    #[test]
    fn postgresql_a_preprocess_datestyle_is_the_test_cases_too() {
        let preprocess = ["SET datestyle = 'German'"];
        let gold = "SELECT joined::date::text AS day FROM customers WHERE id = 1";
        let honest =
            "SELECT to_char(joined::date, 'DD.MM.YYYY') AS day FROM customers WHERE id = 1";
        let wrong = "SELECT '2023-01-01' AS day";
        assert_as_official(&pg_run(), (&preprocess, gold), honest, wrong);
    }
}
