//! Red team round 46 (issue 44): `bird_critic_sound` after round 45's fix (467129b): the gold
//! runs on the preprocess's own session and on a new one, and an item whose gold's statements
//! answer or write otherwise is not judged (`gold_effect.rs`). The comparison is of the gold's
//! statements alone; a test case's own query (unmarked, run on a new session to the
//! prediction's copy under the sound profile) is not compared. The attempts:
//! - a preprocess's temporary view named after a base table (`products`, the outdoor
//!   catalogue): the gold writes the base table by its qualified name, so it runs the same both
//!   ways, while the test case's own unqualified query reads the view officially and the base
//!   table under the sound profile (SQLite livesql engine, the repair path's; PostgreSQL, also
//!   through the gate, exit 0);
//! - a MariaDB user variable of the preprocess's session read by the test case's own query;
//! - a constraint of the preprocess's session that the gold satisfies and a wrong prediction
//!   breaks: a SQLite temporary trigger, a PostgreSQL temporary view `WITH CHECK OPTION` named
//!   after the base table, MariaDB's `sql_safe_updates`; officially the wrong prediction fails
//!   to run, on the sound profile's new session it runs and passes;
//! - an honest SQLite staging table in the preprocess (contained: judged).
//!
//! Every test asserts the SECURE outcome and runs its control: a failing test is a win. Report:
//! `/work/notes/redteam46.md`.
//!
//! After the lead's fix (1700966: a prediction of an item with a preprocess whose checks run on
//! new sessions passes only when the official flow passes it too, `sound::preprocess_bound`),
//! every attempt was contained and the items stayed judged. Round 47 passed that fix; its fix
//! (the whitelist, `livesql/stateless.rs`) leaves none of these items judged under the sound
//! profiles (a temporary view, trigger or table, a `SET`, an `UPDATE` of the database's table),
//! so the wrong predictions fail with every other one. The one-item gate of the PostgreSQL
//! attempt is gone with its item, which no pull request can regress any more.

use sqlgate::engine::livesql::{LiveJudge, Profile};

/// A `shop` item line (`category`, `preprocess`, `gold`, one `test`).
pub(crate) fn line(category: &str, preprocess: &[&str], gold: &[&str], test: &str) -> String {
    let line = serde_json::json!({
        "instance_id": "lever46", "db_id": "shop", "category": category, "sol_sql": gold,
        "preprocess_sql": preprocess, "clean_up_sql": [],
        "test_cases": [test], "issue_sql": [], "conditions": {},
        "efficiency": false, "query": "add the canteen to the outdoor catalogue",
    });
    format!("{line}\n")
}

pub(crate) fn item_of(line: &str) -> sqlgate::input::livesql::LiveItem {
    sqlgate::input::livesql::parse_items(std::path::Path::new("lever46.jsonl"), line)
        .unwrap()
        .remove(0)
}

/// Whether `prediction` passes the server item `line` under `profile`.
pub(crate) fn judged<J: LiveJudge>(
    run: &J,
    line: &str,
    prediction: &[&str],
    profile: Profile,
) -> bool {
    let predicted: Vec<String> = prediction.iter().map(|s| s.to_string()).collect();
    let verdict = run
        .judge(&item_of(line), Some(&predicted), profile)
        .unwrap();
    eprintln!(
        "{profile:?} {prediction:?}: {} {}",
        verdict.success, verdict.message
    );
    verdict.success
}

/// Whether `prediction` passes the SQLite livesql item `line` on `template` under `profile`.
pub(crate) fn sqlite_judged(
    template: &std::path::Path,
    line: &str,
    prediction: &[&str],
    profile: Profile,
) -> bool {
    use sqlgate::engine::livesql::{Budget, Settings};
    let settings = Settings {
        profile,
        budget: Budget {
            deadline: std::time::Duration::from_secs(60),
            max_steps: 100_000_000,
            disk_bytes: 64 << 20,
        },
        python: std::path::PathBuf::from("python3"),
    };
    let predicted: Vec<String> = prediction.iter().map(|s| s.to_string()).collect();
    let verdict =
        sqlgate::engine::livesql::judge(&item_of(line), Some(&predicted), template, &settings)
            .unwrap();
    eprintln!(
        "{profile:?} {prediction:?}: {} {}",
        verdict.success, verdict.message
    );
    verdict.success
}

/// The SQLite `shop` template in `folder`.
pub(crate) fn sqlite_shop(folder: &std::path::Path) -> std::path::PathBuf {
    let scripts = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/livesql/db");
    crate::common::databases_from_scripts(&scripts, folder);
    folder.join("shop/shop.sqlite")
}

/// A test case whose own query (no gold statement in it) looks for the new product in the
/// catalogue, unqualified, as the item's preprocess left it.
const LISTED: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn, conditions=None):\n    res = execute_queries([\"SELECT name FROM products WHERE name = 'Canteen'\"], db_name, conn, None, '')\n    assert not res[1] and len(res[0]) == 1, f'the catalogue shows {res[0]}'\n    return 1\n";

/// Class 2 (the repair path's SQLite livesql engine), the checks see the session. Set-up: a
/// Management item on `shop` whose preprocess makes the outdoor catalogue a temporary view
/// named `products` (`CREATE TEMP VIEW products AS SELECT * FROM main.products WHERE category =
/// 'outdoor'`), shadowing the base table for unqualified names on its session; the gold adds
/// a product through `main.products`, so it runs the same on either session and the item is
/// judged; the test case ([`LISTED`]) looks for it through `products`. Lever: a wrong
/// prediction adding the product to another category, which the view hides (officially the
/// test fails) but the base table the new session reads shows.
mod sqlite_a_temporary_view_read_by_the_test_alone {
    use super::*;

    #[test]
    fn sqlite_a_test_reading_the_preprocess_view_does_not_pass_a_wrong_insert() {
        let folder = tempfile::tempdir().unwrap();
        let template = sqlite_shop(folder.path());
        let preprocess = [
            "CREATE TEMP VIEW products AS SELECT * FROM main.products WHERE category = 'outdoor'",
        ];
        let gold = ["INSERT INTO main.products (name, category, price, stock) VALUES ('Canteen', 'outdoor', 12.5, 3)"];
        let item = line("Management", &preprocess, &gold, LISTED);
        let honest = ["INSERT INTO main.products (name, category, price, stock) VALUES ('Canteen', 'outdoor', 11.0, 3)"];
        let wrong = ["INSERT INTO main.products (name, category, price, stock) VALUES ('Canteen', 'kitchen', 12.5, 3)"];
        let three = |profile| {
            [&gold[..], &honest, &wrong].map(|p| sqlite_judged(&template, &item, p, profile))
        };
        let official = three(Profile::BirdCritic);
        assert_eq!(
            official,
            [true, true, false],
            "control: the official profile"
        );
        let sound = three(Profile::BirdCriticSound);
        assert!(
            !sound[2],
            "WON: the wrong prediction passed bird_critic_sound ({sound:?}; official {official:?})"
        );
    }
}

/// Class 3, PostgreSQL: [`sqlite_a_temporary_view_read_by_the_test_alone`] on the server. The
/// preprocess's `CREATE TEMP VIEW products AS SELECT * FROM public.products WHERE category =
/// 'outdoor'` sits in `pg_temp`, which comes first for unqualified names; the gold writes
/// `public.products`.
mod postgresql_a_temporary_view_read_by_the_test_alone {
    use super::*;

    #[test]
    fn postgresql_a_test_reading_the_preprocess_view_does_not_pass_a_wrong_insert() {
        let run = crate::redteam30::pg_run();
        let preprocess = [
            "CREATE TEMP VIEW products AS SELECT * FROM public.products WHERE category = 'outdoor'",
        ];
        let gold = ["INSERT INTO public.products (id, name, category, price, stock) VALUES (11, 'Canteen', 'outdoor', 12.5, 3)"];
        let item = line("Management", &preprocess, &gold, LISTED);
        let honest = ["INSERT INTO public.products (id, name, category, price, stock) VALUES (11, 'Canteen', 'outdoor', 11.0, 3)"];
        let wrong = ["INSERT INTO public.products (id, name, category, price, stock) VALUES (11, 'Canteen', 'kitchen', 12.5, 3)"];
        let three = |profile| [&gold[..], &honest, &wrong].map(|p| judged(&run, &item, p, profile));
        let official = three(Profile::BirdCritic);
        assert_eq!(
            official,
            [true, true, false],
            "control: the official profile"
        );
        let sound = three(Profile::BirdCriticSound);
        assert!(
            !sound[2],
            "WON: the wrong prediction passed bird_critic_sound ({sound:?}; official {official:?})"
        );
    }
}

/// Class 3, MariaDB: the test case's own query reads a user variable of the preprocess's
/// session. Set-up: a Management item whose preprocess names the catalogue the task is about
/// (`SET @catalogue = 'outdoor'`); the gold adds the product with the category written out, so
/// it runs the same on either session and the item is judged; the test case checks the
/// product is there and that none of that name sits outside `@catalogue`. Lever: the wrong
/// prediction's kitchen category, which officially fails the second check, while on the new
/// session `@catalogue` is `NULL` and `category <> NULL` counts nothing.
mod mariadb_a_user_variable_read_by_the_test_alone {
    use super::*;

    const IN_CATALOGUE: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn, conditions=None):\n    res = execute_queries([\"SELECT count(*) FROM products WHERE name = 'Canteen'\"], db_name, conn, None, '')\n    assert not res[1] and res[0][0][0] == 1, f'found {res[0]}'\n    res = execute_queries([\"SELECT count(*) FROM products WHERE name = 'Canteen' AND category <> @catalogue\"], db_name, conn, None, '')\n    assert not res[1] and res[0][0][0] == 0, f'outside the catalogue: {res[0]}'\n    return 1\n";

    #[test]
    fn mariadb_a_test_reading_the_preprocess_variable_does_not_pass_a_wrong_insert() {
        let run = crate::redteam30::my_run();
        let preprocess = ["SET @catalogue = 'outdoor'"];
        let gold = ["INSERT INTO products (id, name, category, price, stock) VALUES (11, 'Canteen', 'outdoor', 12.5, 3)"];
        let item = line("Management", &preprocess, &gold, IN_CATALOGUE);
        let honest = ["INSERT INTO products (id, name, category, price, stock) VALUES (11, 'Canteen', 'outdoor', 11.0, 3)"];
        let wrong = ["INSERT INTO products (id, name, category, price, stock) VALUES (11, 'Canteen', 'kitchen', 12.5, 3)"];
        let three = |profile| [&gold[..], &honest, &wrong].map(|p| judged(&run, &item, p, profile));
        let official = three(Profile::BirdCritic);
        assert_eq!(
            official,
            [true, true, false],
            "control: the official profile"
        );
        let sound = three(Profile::BirdCriticSound);
        assert!(
            !sound[2],
            "WON: the wrong prediction passed bird_critic_sound ({sound:?}; official {official:?})"
        );
    }
}

/// Class 2 (the repair path's SQLite livesql engine), the prediction sees the session. Set-up:
/// a Management item whose preprocess guards the catalogue with a temporary trigger (`CREATE
/// TEMP TRIGGER outdoor_only BEFORE INSERT ON main.products WHEN new.category <> 'outdoor'
/// BEGIN SELECT RAISE(ABORT, 'outdoor only'); END`), a constraint of its session alone; the gold
/// inserts an outdoor product, so the trigger fires on the preprocess's session without effect
/// and the gold runs the same both ways; the test case only checks the product is there.
/// Lever: the wrong prediction's kitchen category, which the trigger aborts officially (an
/// execution error) and which the new session the prediction runs on lets through.
mod sqlite_a_temporary_trigger_the_gold_satisfies {
    use super::*;

    const THERE: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn, conditions=None):\n    res = execute_queries([\"SELECT count(*) FROM main.products WHERE name = 'Canteen'\"], db_name, conn, None, '')\n    assert not res[1] and res[0][0][0] == 1, f'found {res[0]}'\n    return 1\n";

    #[test]
    fn sqlite_a_temporary_trigger_of_the_preprocess_does_not_let_a_wrong_insert_pass() {
        let folder = tempfile::tempdir().unwrap();
        let template = sqlite_shop(folder.path());
        let preprocess = ["CREATE TEMP TRIGGER outdoor_only BEFORE INSERT ON main.products WHEN new.category <> 'outdoor' BEGIN SELECT RAISE(ABORT, 'outdoor only'); END"];
        let gold = ["INSERT INTO products (name, category, price, stock) VALUES ('Canteen', 'outdoor', 12.5, 3)"];
        let item = line("Management", &preprocess, &gold, THERE);
        let honest = ["INSERT INTO products (name, category, price, stock) VALUES ('Canteen', 'outdoor', 11.0, 3)"];
        let wrong = ["INSERT INTO products (name, category, price, stock) VALUES ('Canteen', 'kitchen', 12.5, 3)"];
        let three = |profile| {
            [&gold[..], &honest, &wrong].map(|p| sqlite_judged(&template, &item, p, profile))
        };
        let official = three(Profile::BirdCritic);
        assert_eq!(
            official,
            [true, true, false],
            "control: the official profile"
        );
        let sound = three(Profile::BirdCriticSound);
        assert!(
            !sound[2],
            "WON: the wrong prediction passed bird_critic_sound ({sound:?}; official {official:?})"
        );
    }
}

/// Class 3, PostgreSQL, the prediction sees the session: [`sqlite_a_temporary_trigger_the_gold_satisfies`]
/// through a temporary view `WITH CHECK OPTION` named after the base table (`pg_temp` comes
/// first), so unqualified inserts go through the view's check on the preprocess's session only.
/// The gold's unqualified insert of an outdoor product passes the check there and writes the
/// same row either way; the test case reads `public.products`. Lever: the wrong prediction's
/// kitchen category (officially a check-option violation).
mod postgresql_a_checked_temporary_view_the_gold_satisfies {
    use super::*;

    const THERE: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn, conditions=None):\n    res = execute_queries([\"SELECT count(*) FROM public.products WHERE name = 'Canteen'\"], db_name, conn, None, '')\n    assert not res[1] and res[0][0][0] == 1, f'found {res[0]}'\n    return 1\n";

    #[test]
    fn postgresql_a_checked_view_of_the_preprocess_does_not_let_a_wrong_insert_pass() {
        let run = crate::redteam30::pg_run();
        let preprocess = ["CREATE TEMP VIEW products AS SELECT * FROM public.products WHERE category = 'outdoor' WITH CHECK OPTION"];
        let gold = ["INSERT INTO products (id, name, category, price, stock) VALUES (11, 'Canteen', 'outdoor', 12.5, 3)"];
        let item = line("Management", &preprocess, &gold, THERE);
        let honest = ["INSERT INTO products (id, name, category, price, stock) VALUES (11, 'Canteen', 'outdoor', 11.0, 3)"];
        let wrong = ["INSERT INTO products (id, name, category, price, stock) VALUES (11, 'Canteen', 'kitchen', 12.5, 3)"];
        let three = |profile| [&gold[..], &honest, &wrong].map(|p| judged(&run, &item, p, profile));
        let official = three(Profile::BirdCritic);
        assert_eq!(
            official,
            [true, true, false],
            "control: the official profile"
        );
        let sound = three(Profile::BirdCriticSound);
        assert!(
            !sound[2],
            "WON: the wrong prediction passed bird_critic_sound ({sound:?}; official {official:?})"
        );
    }
}

/// Class 2 (the SQLite livesql engine), false fail?: an honest item whose preprocess stages
/// rows in a temporary table and restocks from it (`CREATE TEMP TABLE restock AS ...`, then an
/// `UPDATE` of `main.products` reading it); the gold and the test never read the staging table.
/// Is it judged as the official profile judges it? Judged until round 47's fix (the whitelist,
/// `livesql/stateless.rs`); now not judged, the documented cost (docs/SECURITY.md).
mod sqlite_a_temporary_staging_table_of_the_preprocess {
    use super::*;

    const SAME: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn, conditions=None):\n    pred = execute_queries(pred_sqls, db_name, conn, None, '')\n    res = execute_queries(sol_sqls, db_name, conn, None, '')\n    assert not res[1] and sorted(pred[0]) == sorted(res[0]), f'the gold gave {res[0]}'\n    return 1\n";

    #[test]
    fn sqlite_an_honest_staged_restock_is_not_judged() {
        let folder = tempfile::tempdir().unwrap();
        let template = sqlite_shop(folder.path());
        let preprocess = [
            "CREATE TEMP TABLE restock AS SELECT id FROM main.products WHERE stock < 5",
            "UPDATE main.products SET stock = stock + 10 WHERE id IN (SELECT id FROM restock)",
        ];
        let gold = ["SELECT name FROM products WHERE stock < 12"];
        let item = line("Query", &preprocess, &gold, SAME);
        let honest = ["SELECT name FROM products WHERE stock <= 11"];
        let wrong = ["SELECT name FROM products WHERE stock < 5"];
        let three = |profile| {
            [&gold[..], &honest, &wrong].map(|p| sqlite_judged(&template, &item, p, profile))
        };
        let official = three(Profile::BirdCritic);
        assert_eq!(
            official,
            [true, true, false],
            "control: the official profile"
        );
        let sound = three(Profile::BirdCriticSound);
        assert_eq!(
            sound, [false; 3],
            "the documented cost: not judged under bird_critic_sound (official {official:?})"
        );
    }
}

/// Class 3, MariaDB, the prediction sees the session: the preprocess turns on safe updates for
/// its session (`SET SESSION sql_safe_updates = 1`: an `UPDATE` whose `WHERE` uses no key
/// fails); the gold reprices one product by its key, the same on either session; the test case
/// checks that product's price. Lever: the wrong prediction repricing the whole outdoor
/// category, which safe updates reject officially and the new session lets through.
mod mariadb_safe_updates_the_gold_satisfies {
    use super::*;

    const PRICED: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn, conditions=None):\n    res = execute_queries([\"SELECT price FROM products WHERE name = 'Compass'\"], db_name, conn, None, '')\n    assert not res[1] and float(res[0][0][0]) == 14.0, f'found {res[0]}'\n    return 1\n";

    #[test]
    fn mariadb_safe_updates_of_the_preprocess_do_not_let_a_wrong_update_pass() {
        let run = crate::redteam30::my_run();
        let preprocess = ["SET SESSION sql_safe_updates = 1"];
        let gold = ["UPDATE products SET price = 14.0 WHERE id = 10"];
        let item = line("Management", &preprocess, &gold, PRICED);
        let honest = ["UPDATE products SET price = 14 WHERE id = 10"];
        let wrong = ["UPDATE products SET price = 14.0 WHERE category = 'outdoor'"];
        let three = |profile| [&gold[..], &honest, &wrong].map(|p| judged(&run, &item, p, profile));
        let official = three(Profile::BirdCritic);
        assert_eq!(
            official,
            [true, true, false],
            "control: the official profile"
        );
        let sound = three(Profile::BirdCriticSound);
        assert!(
            !sound[2],
            "WON: the wrong prediction passed bird_critic_sound ({sound:?}; official {official:?})"
        );
    }
}
