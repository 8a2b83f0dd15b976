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
//! is closed and its tests pass. Lever 1 (a prediction removing the preprocess's session state
//! on the official flow's session) is open: its tests are ignored with that reason, and
//! docs/SECURITY.md names the fix to make.

use sqlgate::engine::livesql::Profile;

use crate::redteam46::{judged, line, sqlite_judged, sqlite_shop};

/// Asserts the secure outcome of `[gold, honest, wrong, lever]` judged by `judge`: the control
/// (the wrong prediction without the lever fails `bird_critic_sound`, the gold and the honest
/// prediction pass it) and the lever (the wrong prediction behind the statement that undoes the
/// preprocess's session state) failing `bird_critic_sound`.
fn assert_secure(judge: impl Fn(&[&str], Profile) -> bool, four: [&[&str]; 4]) {
    let sound = four.map(|p| judge(p, Profile::BirdCriticSound));
    assert_eq!(
        sound[..3],
        [true, true, false],
        "control: gold, honest, wrong under bird_critic_sound"
    );
    let official = judge(four[3], Profile::BirdCritic);
    assert!(
        !sound[3],
        "WON: the wrong prediction behind the lever passed bird_critic_sound ({sound:?}; \
         official for the lever: {official})"
    );
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
    #[ignore = "open: red team round 47, lever 1 (docs/SECURITY.md)"]
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
    #[ignore = "open: red team round 47, lever 1 (docs/SECURITY.md)"]
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
    #[ignore = "open: red team round 47, lever 1 (docs/SECURITY.md)"]
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

/// Class 3, PostgreSQL, through the gate: round 46's gate (`redteam46::through_the_gate`, the
/// preprocess's temporary view read by [`LISTED`], baseline = gold on `bird_critic_sound`).
/// Lever: the pull request predicts `DROP VIEW IF EXISTS pg_temp.products` and the kitchen
/// insert. Control: the kitchen insert alone exits 1.
mod through_the_gate {
    use crate::common::servers;
    use crate::redteam46::through_the_gate::gate;

    #[test]
    #[ignore = "open: red team round 47, lever 1 (docs/SECURITY.md)"]
    fn postgresql_a_pull_request_dropping_the_preprocess_view_does_not_pass_the_gate() {
        let server = servers::postgres();
        crate::livesql_pg::load_databases(server);
        let wrong = "INSERT INTO public.products (id, name, category, price, stock) VALUES (11, 'Canteen', 'kitchen', 12.5, 3)";
        let (code, said) = gate(server, &[wrong]);
        assert_eq!(code, Some(1), "control: {said}");
        let (code, said) = gate(server, &["DROP VIEW IF EXISTS pg_temp.products", wrong]);
        eprintln!("{said}");
        assert_ne!(
            code,
            Some(0),
            "WON: the regressing pull request passed: {said}"
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
    #[ignore = "open: red team round 47, lever 1 (docs/SECURITY.md)"]
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
    #[ignore = "open: red team round 47, lever 1 (docs/SECURITY.md)"]
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
        assert_eq!(sound[..2], [true, true], "control: livesql_sound");
        assert!(
            !sound[2],
            "WON: the wrong prediction passed livesql_sound ({sound:?}; livesql {official:?})"
        );
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
