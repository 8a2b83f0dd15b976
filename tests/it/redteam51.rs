//! Red team round 51 (issue 44): rounds 47's to 50's preprocess whitelist
//! (`crates/sqlgate-engine/src/engine/livesql/stateless.rs`) and, outside class 3, the repair
//! path's SQLite lexer and the shard refusal's links.
//!
//! The attempts:
//! - PostgreSQL: `stateless.rs::literal` takes any call of a clock name with one number
//!   argument (a precision) as a literal, `now(3)` included; PostgreSQL has no `now(integer)`,
//!   so the name resolves past `pg_catalog` to a whitelisted `CREATE FUNCTION now(INTEGER)` of
//!   the same preprocess, which sets the session (as a row value and as a column default);
//! - class 2 (the repair path's SQLite engine): a bracket-quoted name `[n]]...]` the parser
//!   reads with `]]` as an escaped bracket and SQLite ends at the first `]`;
//! - class 4: a forged shard under a folder reached through a committed link whose target is
//!   written otherwise (absolute, `./forged/`).
//!
//! Every test asserts the SECURE outcome and runs its control: a failing test is a win.
//! Report: `/work/notes/redteam51.md`.
//!
//! After the lead's fix (on PostgreSQL `now` is whitelisted only without an argument) every
//! attempt is contained. The gate run of the `now(3)` item (exit 0) is gone with the item, which
//! is not judged now and which no pull request can regress.

use crate::redteam49::assert_wrong_canteen_fails;

/// A whitelisted function named like the clock `now` but taking a precision, which PostgreSQL's
/// `pg_catalog` has no overload for: it notes the catalogue on the session running it.
const NOW_OF_PRECISION: &str = "CREATE FUNCTION now(p INTEGER) RETURNS TEXT LANGUAGE plpgsql AS $$ BEGIN PERFORM set_config('shop.catalogue', 'outdoor', false); RETURN 'noted'; END $$";

/// Class 3, PostgreSQL: `stateless.rs::literal` calls `now(3)` a clock with a precision
/// (`clock` checks the name, `precision_at_most` one number argument). PostgreSQL's `now` takes
/// no argument, so `now(3)` resolves on the search path to the preprocess's own `now(integer)`
/// (`CREATE FUNCTION`, whitelisted), run by the literal `INSERT` on the preprocess's session.
/// Set-up: round 48's item (the test case reads `current_setting('shop.catalogue', true)`).
/// Lever: the wrong (kitchen) insert; on the sound flow's new session the setting is `NULL`.
mod postgresql_a_clock_with_a_precision_naming_a_function_of_the_preprocess {
    #[test]
    fn postgresql_now_of_a_precision_in_a_literal_row_does_not_pass_a_wrong_insert() {
        super::assert_wrong_canteen_fails(&[
            super::NOW_OF_PRECISION,
            "CREATE TABLE notes (noted TEXT)",
            "INSERT INTO notes VALUES (now(3))",
        ]);
    }

    /// The same function as a made column's default (`plain_column_option` takes `literal`
    /// defaults), run by a literal insert that leaves the column out.
    #[test]
    fn postgresql_now_of_a_precision_as_a_default_does_not_pass_a_wrong_insert() {
        super::assert_wrong_canteen_fails(&[
            super::NOW_OF_PRECISION,
            "CREATE TABLE notes (id INTEGER, noted TEXT DEFAULT now(0))",
            "INSERT INTO notes (id) VALUES (1)",
        ]);
    }
}

/// Class 3, MariaDB: [`postgresql_a_clock_with_a_precision_naming_a_function_of_the_preprocess`]
/// on MariaDB: a whitelisted `CREATE FUNCTION now(p INT)` of the preprocess setting
/// `@catalogue`, and `NOW(3)` in the literal row. Set-up: round 48's MariaDB item (its test case
/// counts Canteens outside `@catalogue`). Lever: the wrong (kitchen) insert. Secure: it fails
/// bird_critic_sound (MariaDB calls its native `NOW` before a stored function of that name).
mod mariadb_a_clock_with_a_precision_naming_a_function_of_the_preprocess {
    use crate::redteam46::{judged, line};
    use sqlgate::engine::livesql::Profile;

    const IN_CATALOGUE: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn, conditions=None):\n    res = execute_queries([\"SELECT count(*) FROM products WHERE name = 'Canteen'\"], db_name, conn, None, '')\n    assert not res[1] and res[0][0][0] == 1, f'found {res[0]}'\n    res = execute_queries([\"SELECT count(*) FROM products WHERE name = 'Canteen' AND category <> @catalogue\"], db_name, conn, None, '')\n    assert not res[1] and res[0][0][0] == 0, f'outside the catalogue: {res[0]}'\n    return 1\n";

    #[test]
    fn mariadb_now_of_a_precision_does_not_pass_a_wrong_insert() {
        let run = crate::redteam30::my_run();
        let canteens = crate::redteam49::CANTEENS;
        let noted = [
            "CREATE TABLE notes (noted TEXT)",
            "INSERT INTO notes VALUES ('x')",
        ];
        let control = line("Management", &noted, &canteens[..1], IN_CATALOGUE);
        let official = canteens.map(|p| judged(&run, &control, &[p], Profile::BirdCritic));
        assert_eq!(
            official,
            [true, true, true],
            "control: without a note the test case counts nothing outside a NULL catalogue"
        );
        let preprocess = [
            "CREATE FUNCTION now(p INT) RETURNS TEXT DETERMINISTIC RETURN (SELECT @catalogue := 'outdoor')",
            "CREATE TABLE notes (noted TEXT)",
            "INSERT INTO notes VALUES (NOW(3))",
        ];
        let item = line("Management", &preprocess, &canteens[..1], IN_CATALOGUE);
        let official = canteens.map(|p| judged(&run, &item, &[p], Profile::BirdCritic));
        let sound = canteens.map(|p| judged(&run, &item, &[p], Profile::BirdCriticSound));
        eprintln!("bird_critic: {official:?}, bird_critic_sound: {sound:?}");
        assert!(
            !sound[2] || official[2],
            "WON: the wrong insert passed bird_critic_sound and failed bird_critic ({sound:?})"
        );
    }
}

/// Class 3, PostgreSQL, `stateless.rs::Made`: `CREATE TABLE pg_settings (...)` makes
/// `public.pg_settings`, and `INSERT INTO pg_settings` is a literal insert "into the table the
/// preprocess made" to the whitelist; PostgreSQL searches `pg_catalog` first (implicitly), so
/// the insert names the catalogue's view `pg_settings` (whose rules call `set_config`).
/// Set-up: round 48's item; the row names the setting its test case reads. Lever: the wrong
/// (kitchen) insert. Secure: it fails bird_critic_sound (contained if the insert fails at run
/// time: the item is not judged).
mod postgresql_a_made_table_named_like_a_catalogue_view {
    #[test]
    fn postgresql_an_insert_into_pg_settings_keyed_like_a_made_table_does_not_pass_a_wrong_insert()
    {
        let run = crate::redteam30::pg_run();
        let preprocess = [
            "CREATE TABLE pg_settings (name TEXT, setting TEXT)",
            "INSERT INTO pg_settings (name, setting) VALUES ('shop.catalogue', 'outdoor')",
        ];
        let item = crate::redteam46::line(
            "Management",
            &preprocess,
            &crate::redteam49::CANTEENS[..1],
            crate::redteam49::IN_NOTED_CATALOGUE,
        );
        let judge = |profile| {
            crate::redteam49::CANTEENS.map(|p| crate::redteam46::judged(&run, &item, &[p], profile))
        };
        let official = judge(sqlgate::engine::livesql::Profile::BirdCritic);
        let sound = judge(sqlgate::engine::livesql::Profile::BirdCriticSound);
        eprintln!("bird_critic: {official:?}, bird_critic_sound: {sound:?}");
        assert!(
            !sound[2] || official[2],
            "WON: the wrong insert passed bird_critic_sound and failed bird_critic ({sound:?})"
        );
    }
}

/// Class 2 (the repair path's SQLite engine), the lexer: sqlparser reads `]]` inside a
/// bracket-quoted name as an escaped `]`, so `CREATE TABLE [n]]; CREATE TEMP VIEW products
/// ...; --] (a INT)` is one whitelisted `CREATE TABLE` to it; SQLite ends the name at the first
/// `]`. Set-up: round 46's SQLite `shop`, a test case reading the catalogue through the
/// unqualified `products` (the temporary view would show only the outdoor ones). Lever: the
/// wrong (camping) insert. Secure: it fails bird_critic_sound.
mod sqlite_a_bracket_name_with_a_doubled_bracket {
    use crate::redteam46::{sqlite_judged, sqlite_shop};
    use sqlgate::engine::livesql::Profile;

    const OUTDOOR_LISTED: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn, conditions=None):\n    res = execute_queries([\"SELECT count(*) FROM products WHERE name = 'Canteen'\"], db_name, conn, None, '')\n    assert not res[1] and res[0][0][0] == 1, f'found {res[0]}'\n    return 1\n";

    #[test]
    fn sqlite_a_doubled_bracket_hiding_a_temporary_view_does_not_pass_a_wrong_insert() {
        let folder = tempfile::tempdir().unwrap();
        let template = sqlite_shop(folder.path());
        let canteens = [
            "INSERT INTO main.products (name, category, price, stock) VALUES ('Canteen', 'outdoor', 12.5, 3)",
            "INSERT INTO main.products (name, category, price, stock) VALUES ('Canteen', 'outdoor', 11.0, 3)",
            "INSERT INTO main.products (name, category, price, stock) VALUES ('Canteen', 'camping', 12.5, 3)",
        ];
        let plain = [
            "CREATE TEMP VIEW products AS SELECT * FROM main.products WHERE category = 'outdoor'",
        ];
        let control = crate::redteam46::line("Management", &plain, &canteens[..1], OUTDOOR_LISTED);
        let official =
            canteens.map(|p| sqlite_judged(&template, &control, &[p], Profile::BirdCritic));
        assert_eq!(
            official,
            [true, true, false],
            "control: the official profile"
        );
        let hidden = ["CREATE TABLE [n]]; CREATE TEMP VIEW products AS SELECT * FROM main.products WHERE category = 'outdoor'; --] (a INT)"];
        let item = crate::redteam46::line("Management", &hidden, &canteens[..1], OUTDOOR_LISTED);
        let sound =
            canteens.map(|p| sqlite_judged(&template, &item, &[p], Profile::BirdCriticSound));
        eprintln!("bird_critic_sound: {sound:?} (all false: the item is not judged)");
        assert!(
            !sound[2],
            "WON: the wrong prediction passed bird_critic_sound ({sound:?})"
        );
    }
}

/// Class 4 (shards / `merge`): round 22's forged shard committed under `forged/`, reached
/// through a committed link `shards` whose target is written otherwise than the folder's
/// name: absolute (`/.../forged`, so the resolved path is outside the tree as written) and
/// `./forged/`. Secure: the merge refuses the shard (exit 2). Control: the link `forged`.
pub(crate) mod shard_under_a_link_written_otherwise {
    use crate::common::repo;
    use crate::redteam21::shard_in_a_submodule::merged;

    /// Commits the forged shard at `forged/1.jsonl` and the link `shards` -> `target(root)`.
    pub(crate) fn linked(
        target: fn(&std::path::Path) -> std::path::PathBuf,
    ) -> (Option<i32>, String) {
        merged(move |root, shard| {
            std::fs::create_dir_all(root.join("forged")).unwrap();
            std::fs::write(root.join("forged").join("1.jsonl"), shard).unwrap();
            std::os::unix::fs::symlink(target(root), root.join("shards")).unwrap();
            repo::commit_all(root, "a shard under a linked folder");
        })
    }

    #[test]
    fn control_a_forged_shard_under_a_linked_folder_is_refused() {
        let (code, out) = linked(|_| "forged".into());
        assert_eq!(code, Some(2), "{out}");
    }

    #[test]
    fn a_forged_shard_under_an_absolute_link_is_refused() {
        let (code, out) = linked(|root| root.join("forged"));
        eprintln!("{out}");
        assert_ne!(code, Some(0), "WON: merged to exit 0: {out}");
    }

    #[test]
    fn a_forged_shard_under_a_dotted_link_is_refused() {
        let (code, out) = linked(|_| "./forged/".into());
        eprintln!("{out}");
        assert_ne!(code, Some(0), "WON: merged to exit 0: {out}");
    }
}
