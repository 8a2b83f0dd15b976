//! Red team round 47 (issue 44): `bird_critic_sound` after round 46's fix (1700966): a
//! prediction of an item with a preprocess whose checks run on new sessions passes only when
//! the official `bird_critic` flow passes it too (`sound::preprocess_bound`,
//! `sound::with_official`). The official flow runs the prediction on the preprocess's own
//! session, so the prediction can undo the state the preprocess left there; the sound flow's new
//! sessions never had that state, so the same undoing is a no-op there. The attempts take each
//! of round 46's won items and prefix the wrong prediction with a statement that removes the
//! preprocess's session state, harmless on a new session:
//! - SQLite (the repair path's livesql engine): `DROP VIEW IF EXISTS temp.products` before the
//!   wrong insert (the test reads the unfiltered table officially too);
//! - SQLite: `DROP TRIGGER IF EXISTS temp.outdoor_only` before the wrong insert;
//! - PostgreSQL: `DROP VIEW IF EXISTS pg_temp.products` before the wrong insert (the checked
//!   view), and the same lever through the gate (round 46's one-item gate);
//! - MariaDB: `SET @catalogue = 'kitchen'` before the wrong insert, and `SET SESSION
//!   sql_safe_updates = 0` before the wrong update.
//!
//! And round 46's SQLite items unchanged under the `livesql_sound` metric (`Profile::Sound`),
//! which the fix's official AND does not cover.
//!
//! Every test asserts the SECURE outcome and runs its control (the wrong prediction without
//! the lever, which fails): a failing test is a win. Report: `/work/notes/redteam47.md`.
//!
//! After the lead's commit e26c0ab, lever 2 (`livesql_sound` without the official flow's check)
//! was closed. Lever 1 (a prediction removing the preprocess's session state on the official
//! flow's session) is closed by the whitelist (`livesql/stateless.rs`): an item with a
//! preprocess whose checks run on new sessions is judged only when every preprocess statement is
//! of a kind that leaves nothing on its session, and the official flow's check is gone. None of
//! this round's items is judged under the sound profiles any more (a temporary view or trigger,
//! a `SET`), so every lever fails with every other prediction; the PostgreSQL gate went with
//! its item, which no pull request can regress.

use sqlgate::engine::livesql::Profile;

use crate::redteam46::{judged, line, sqlite_judged, sqlite_shop};

/// Asserts the secure outcome of `[gold, honest, wrong, lever]` judged by `judge`: the control
/// (the official `bird_critic` passes the gold, the honest prediction and the lever, and fails
/// the wrong prediction) and the lever (the wrong prediction behind the statement that undoes
/// the preprocess's session state) failing `bird_critic_sound`, where the item is not judged
/// (the gold fails too: its preprocess is outside the whitelist).
fn assert_secure(judge: impl Fn(&[&str], Profile) -> bool, four: [&[&str]; 4]) {
    let official = four.map(|p| judge(p, Profile::BirdCritic));
    assert_eq!(
        official,
        [true, true, false, true],
        "control: gold, honest, wrong and the lever under bird_critic"
    );
    let sound = four.map(|p| judge(p, Profile::BirdCriticSound));
    assert!(
        !sound[3],
        "WON: the wrong prediction behind the lever passed bird_critic_sound ({sound:?})"
    );
    assert_eq!(sound, [false; 4], "not judged under bird_critic_sound");
}

/// A test case whose own query (no gold statement in it) looks for the new product in the
/// catalogue, unqualified, as the item's preprocess left it.
const LISTED: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn, conditions=None):\n    res = execute_queries([\"SELECT name FROM products WHERE name = 'Canteen'\"], db_name, conn, None, '')\n    assert not res[1] and len(res[0]) == 1, f'the catalogue shows {res[0]}'\n    return 1\n";

/// A test case that only checks the product is in `main.products` / `public.products`.
fn there(schema: &str) -> String {
    format!("def test_case(pred_sqls, sol_sqls, db_name, conn, conditions=None):\n    res = execute_queries([\"SELECT count(*) FROM {schema}.products WHERE name = 'Canteen'\"], db_name, conn, None, '')\n    assert not res[1] and res[0][0][0] == 1, f'found {{res[0]}}'\n    return 1\n")
}

/// Class 2 (the repair path's SQLite livesql engine). Set-up: round 46's item 1, a preprocess
/// `CREATE TEMP VIEW products AS SELECT * FROM main.products WHERE category = 'outdoor'`, the
/// gold inserting into `main.products`, the test case [`LISTED`] reading `products`
/// unqualified. Lever: the wrong (kitchen) insert behind `DROP VIEW IF EXISTS temp.products`:
/// officially the view is gone before the test reads `products`, on the sound flow's new
/// session there is no view to drop.
mod sqlite_the_prediction_drops_the_preprocess_view {
    use super::*;

    #[test]
    fn sqlite_a_wrong_insert_dropping_the_preprocess_view_does_not_pass() {
        let folder = tempfile::tempdir().unwrap();
        let template = sqlite_shop(folder.path());
        let preprocess = [
            "CREATE TEMP VIEW products AS SELECT * FROM main.products WHERE category = 'outdoor'",
        ];
        let gold = ["INSERT INTO main.products (name, category, price, stock) VALUES ('Canteen', 'outdoor', 12.5, 3)"];
        let item = line("Management", &preprocess, &gold, LISTED);
        let honest = ["INSERT INTO main.products (name, category, price, stock) VALUES ('Canteen', 'outdoor', 11.0, 3)"];
        let wrong = ["INSERT INTO main.products (name, category, price, stock) VALUES ('Canteen', 'kitchen', 12.5, 3)"];
        let lever = ["DROP VIEW IF EXISTS temp.products", wrong[0]];
        assert_secure(
            |p, profile| sqlite_judged(&template, &item, p, profile),
            [&gold, &honest, &wrong, &lever],
        );
    }
}

/// Class 2 (the SQLite livesql engine). Set-up: round 46's item 4, a preprocess `CREATE TEMP
/// TRIGGER outdoor_only ...` aborting inserts of another category, the gold inserting an
/// outdoor product, the test case only checking the product is there. Lever: the wrong insert
/// behind `DROP TRIGGER IF EXISTS temp.outdoor_only`.
mod sqlite_the_prediction_drops_the_preprocess_trigger {
    use super::*;

    #[test]
    fn sqlite_a_wrong_insert_dropping_the_preprocess_trigger_does_not_pass() {
        let folder = tempfile::tempdir().unwrap();
        let template = sqlite_shop(folder.path());
        let preprocess = ["CREATE TEMP TRIGGER outdoor_only BEFORE INSERT ON main.products WHEN new.category <> 'outdoor' BEGIN SELECT RAISE(ABORT, 'outdoor only'); END"];
        let gold = ["INSERT INTO products (name, category, price, stock) VALUES ('Canteen', 'outdoor', 12.5, 3)"];
        let item = line("Management", &preprocess, &gold, &there("main"));
        let honest = ["INSERT INTO products (name, category, price, stock) VALUES ('Canteen', 'outdoor', 11.0, 3)"];
        let wrong = ["INSERT INTO products (name, category, price, stock) VALUES ('Canteen', 'kitchen', 12.5, 3)"];
        let lever = ["DROP TRIGGER IF EXISTS temp.outdoor_only", wrong[0]];
        assert_secure(
            |p, profile| sqlite_judged(&template, &item, p, profile),
            [&gold, &honest, &wrong, &lever],
        );
    }
}

/// Class 3, PostgreSQL. Set-up: round 46's item 5, a preprocess `CREATE TEMP VIEW products AS
/// SELECT * FROM public.products WHERE category = 'outdoor' WITH CHECK OPTION`, unqualified
/// inserts, the test case reading `public.products`. Lever: the wrong insert behind `DROP VIEW
/// IF EXISTS pg_temp.products` (officially the insert then reaches the base table unchecked).
mod postgresql_the_prediction_drops_the_checked_view {
    use super::*;

    #[test]
    fn postgresql_a_wrong_insert_dropping_the_checked_view_does_not_pass() {
        let run = crate::redteam30::pg_run();
        let preprocess = ["CREATE TEMP VIEW products AS SELECT * FROM public.products WHERE category = 'outdoor' WITH CHECK OPTION"];
        let gold = ["INSERT INTO products (id, name, category, price, stock) VALUES (11, 'Canteen', 'outdoor', 12.5, 3)"];
        let item = line("Management", &preprocess, &gold, &there("public"));
        let honest = ["INSERT INTO products (id, name, category, price, stock) VALUES (11, 'Canteen', 'outdoor', 11.0, 3)"];
        let wrong = ["INSERT INTO products (id, name, category, price, stock) VALUES (11, 'Canteen', 'kitchen', 12.5, 3)"];
        let lever = ["DROP VIEW IF EXISTS pg_temp.products", wrong[0]];
        assert_secure(
            |p, profile| judged(&run, &item, p, profile),
            [&gold, &honest, &wrong, &lever],
        );
    }
}

/// Class 3, MariaDB. Set-up: round 46's item 3, a preprocess `SET @catalogue = 'outdoor'`, the
/// test case checking no Canteen sits outside `@catalogue`. Lever: the wrong insert behind `SET
/// @catalogue = 'kitchen'` (officially the test then compares with the kitchen; on the sound
/// flow's new session the setting is lost with the prediction's session).
mod mariadb_the_prediction_resets_the_preprocess_variable {
    use super::*;

    const IN_CATALOGUE: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn, conditions=None):\n    res = execute_queries([\"SELECT count(*) FROM products WHERE name = 'Canteen'\"], db_name, conn, None, '')\n    assert not res[1] and res[0][0][0] == 1, f'found {res[0]}'\n    res = execute_queries([\"SELECT count(*) FROM products WHERE name = 'Canteen' AND category <> @catalogue\"], db_name, conn, None, '')\n    assert not res[1] and res[0][0][0] == 0, f'outside the catalogue: {res[0]}'\n    return 1\n";

    #[test]
    fn mariadb_a_wrong_insert_resetting_the_preprocess_variable_does_not_pass() {
        let run = crate::redteam30::my_run();
        let preprocess = ["SET @catalogue = 'outdoor'"];
        let gold = ["INSERT INTO products (id, name, category, price, stock) VALUES (11, 'Canteen', 'outdoor', 12.5, 3)"];
        let item = line("Management", &preprocess, &gold, IN_CATALOGUE);
        let honest = ["INSERT INTO products (id, name, category, price, stock) VALUES (11, 'Canteen', 'outdoor', 11.0, 3)"];
        let wrong = ["INSERT INTO products (id, name, category, price, stock) VALUES (11, 'Canteen', 'kitchen', 12.5, 3)"];
        let lever = ["SET @catalogue = 'kitchen'", wrong[0]];
        assert_secure(
            |p, profile| judged(&run, &item, p, profile),
            [&gold, &honest, &wrong, &lever],
        );
    }
}

/// Class 3, MariaDB. Set-up: round 46's item 6, a preprocess `SET SESSION sql_safe_updates =
/// 1`, the gold repricing one product by its key, the test case checking its price. Lever: the
/// wrong update of the whole outdoor category behind `SET SESSION sql_safe_updates = 0`.
mod mariadb_the_prediction_turns_off_safe_updates {
    use super::*;

    const PRICED: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn, conditions=None):\n    res = execute_queries([\"SELECT price FROM products WHERE name = 'Compass'\"], db_name, conn, None, '')\n    assert not res[1] and float(res[0][0][0]) == 14.0, f'found {res[0]}'\n    return 1\n";

    #[test]
    fn mariadb_a_wrong_update_turning_off_safe_updates_does_not_pass() {
        let run = crate::redteam30::my_run();
        let preprocess = ["SET SESSION sql_safe_updates = 1"];
        let gold = ["UPDATE products SET price = 14.0 WHERE id = 10"];
        let item = line("Management", &preprocess, &gold, PRICED);
        let honest = ["UPDATE products SET price = 14 WHERE id = 10"];
        let wrong = ["UPDATE products SET price = 14.0 WHERE category = 'outdoor'"];
        let lever = ["SET SESSION sql_safe_updates = 0", wrong[0]];
        assert_secure(
            |p, profile| judged(&run, &item, p, profile),
            [&gold, &honest, &wrong, &lever],
        );
    }
}

/// Class 2 (the repair path's SQLite livesql engine), the `livesql_sound` metric: round 46's
/// fix ANDs the official verdict into `bird_critic_sound` only (`livesql/mod.rs::judge` calls
/// `official_too` for `Profile::BirdCriticSound`); `Profile::Sound` still runs
/// `sound::judge` alone. Set-up: round 46's items 1 (a preprocess's temporary view read by the
/// test case's own query) and 4 (a preprocess's temporary trigger the gold satisfies), judged
/// under `livesql_sound`. Lever: the plain wrong (kitchen) insert. Control: the official
/// `livesql` profile fails it, and the gold and the honest prediction pass both.
mod livesql_sound_without_the_official_flow {
    use super::*;

    fn assert_sound_agrees(template: &std::path::Path, item: &str, three: [&[&str]; 3]) {
        let official = three.map(|p| sqlite_judged(template, item, p, Profile::Official));
        assert_eq!(official, [true, true, false], "control: livesql");
        let sound = three.map(|p| sqlite_judged(template, item, p, Profile::Sound));
        assert!(
            !sound[2],
            "WON: the wrong prediction passed livesql_sound ({sound:?}; livesql {official:?})"
        );
        assert_eq!(sound, [false; 3], "not judged under livesql_sound");
    }

    #[test]
    fn livesql_sound_a_test_reading_the_preprocess_view_does_not_pass_a_wrong_insert() {
        let folder = tempfile::tempdir().unwrap();
        let template = sqlite_shop(folder.path());
        let preprocess = [
            "CREATE TEMP VIEW products AS SELECT * FROM main.products WHERE category = 'outdoor'",
        ];
        let gold = ["INSERT INTO main.products (name, category, price, stock) VALUES ('Canteen', 'outdoor', 12.5, 3)"];
        let item = line("Management", &preprocess, &gold, LISTED);
        let honest = ["INSERT INTO main.products (name, category, price, stock) VALUES ('Canteen', 'outdoor', 11.0, 3)"];
        let wrong = ["INSERT INTO main.products (name, category, price, stock) VALUES ('Canteen', 'kitchen', 12.5, 3)"];
        assert_sound_agrees(&template, &item, [&gold, &honest, &wrong]);
    }

    #[test]
    fn livesql_sound_a_temporary_trigger_of_the_preprocess_does_not_let_a_wrong_insert_pass() {
        let folder = tempfile::tempdir().unwrap();
        let template = sqlite_shop(folder.path());
        let preprocess = ["CREATE TEMP TRIGGER outdoor_only BEFORE INSERT ON main.products WHEN new.category <> 'outdoor' BEGIN SELECT RAISE(ABORT, 'outdoor only'); END"];
        let gold = ["INSERT INTO products (name, category, price, stock) VALUES ('Canteen', 'outdoor', 12.5, 3)"];
        let item = line("Management", &preprocess, &gold, &there("main"));
        let honest = ["INSERT INTO products (name, category, price, stock) VALUES ('Canteen', 'outdoor', 11.0, 3)"];
        let wrong = ["INSERT INTO products (name, category, price, stock) VALUES ('Canteen', 'kitchen', 12.5, 3)"];
        assert_sound_agrees(&template, &item, [&gold, &honest, &wrong]);
    }
}

/// Class 2 (the SQLite livesql engine), found by the lead with the whitelist: a Query item
/// without test cases, whose prediction runs on a new session and is compared with the gold's
/// rows. Set-up: the preprocess makes the outdoor catalogue a temporary view named `products`;
/// the gold lists every product through `main.products`, so it runs the same on either session.
/// Lever: the wrong query `SELECT name FROM products`, which officially reads the view (the
/// outdoor products alone, not the gold's rows) and on the sound flow's new session the base
/// table. Secure: the item is not judged under `livesql_sound`, as an item with test cases is
/// (`sound::preprocess_bound` counts a prediction on a new session too).
mod sqlite_a_query_right_only_without_the_preprocess_view {
    use super::*;

    #[test]
    fn sqlite_a_query_reading_the_base_table_under_the_view_does_not_pass() {
        let folder = tempfile::tempdir().unwrap();
        let template = sqlite_shop(folder.path());
        let line = serde_json::json!({
            "instance_id": "lever46", "db_id": "shop", "category": "Query",
            "sol_sql": ["SELECT name FROM main.products"],
            "preprocess_sql": ["CREATE TEMP VIEW products AS SELECT * FROM main.products WHERE category = 'outdoor'"],
            "clean_up_sql": [], "test_cases": [], "issue_sql": [], "conditions": {},
            "efficiency": false, "query": "list every product",
        });
        let item = format!("{line}\n");
        let gold: &[&str] = &["SELECT name FROM main.products"];
        let wrong: &[&str] = &["SELECT name FROM products"];
        let official = [gold, wrong].map(|p| sqlite_judged(&template, &item, p, Profile::Official));
        assert_eq!(official, [true, false], "control: livesql");
        let sound = [gold, wrong].map(|p| sqlite_judged(&template, &item, p, Profile::Sound));
        assert!(
            !sound[1],
            "WON: the wrong query passed livesql_sound ({sound:?})"
        );
        assert_eq!(sound, [false; 2], "not judged under livesql_sound");
    }
}
