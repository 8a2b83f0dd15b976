//! Red team round 42 (issue 44): `bird_critic_sound` after round 41's fixes (commits 99e76d0
//! and e580560): an item whose preprocess leaves state on its session
//! (`query_check::session_state`) and whose checks run on new sessions is not judged under the
//! sound profiles (`livesql/sound.rs::session_bound`). The attempts are honest, plain
//! BIRD-Critic-style preprocesses that leave session state by a statement form the detection
//! does not read (a false pass), or that leave none and are flagged all the same (a false fail).
//! Every test asserts the SECURE outcome and runs its control: a failing test is a win.
//! Report: `/work/notes/redteam42.md`.
//!
//! Set-up: round 41's lever item (`shop`, a Query item with round 32's `WRAPPED` test case,
//! which runs the prediction again, then the gold, on a new session to the prediction's clone).

use crate::redteam30::{my_run, pg_run};
use sqlgate::engine::livesql::{LiveJudge, Profile};

/// Whether `prediction` passes the item (`preprocess`, `gold`, round 32's `WRAPPED` test case)
/// under `profile` (round 41's `judged`).
fn judged<J: LiveJudge>(
    run: &J,
    (preprocess, gold): (&[&str], &str),
    prediction: &str,
    profile: Profile,
) -> bool {
    let line = serde_json::json!({
        "instance_id": "lever42", "db_id": "shop", "category": "Query", "sol_sql": [gold],
        "preprocess_sql": preprocess, "clean_up_sql": [],
        "test_cases": [crate::redteam32::WRAPPED], "issue_sql": [], "conditions": {},
        "efficiency": false, "query": "which products?",
    });
    let item = sqlgate::input::livesql::parse_items(
        std::path::Path::new("lever42.jsonl"),
        &format!("{line}\n"),
    )
    .unwrap()
    .remove(0);
    let verdict = run
        .judge(&item, Some(&[prediction.to_string()]), profile)
        .unwrap();
    eprintln!(
        "{profile:?} {prediction:?}: {} {}",
        verdict.success, verdict.message
    );
    verdict.success
}

/// The verdicts of the gold, `honest` and `wrong` under `profile`.
fn three<J: LiveJudge>(
    run: &J,
    item: (&[&str], &str),
    honest: &str,
    wrong: &str,
    profile: Profile,
) -> [bool; 3] {
    [item.1, honest, wrong].map(|p| judged(run, item, p, profile))
}

/// A false pass: the control (the official `bird_critic` passes the gold and the honest
/// prediction and fails the wrong one), then the secure outcome under `bird_critic_sound`: the
/// wrong prediction fails (the item judged as the official profile does, or not judged at all).
fn assert_wrong_fails<J: LiveJudge>(run: &J, item: (&[&str], &str), honest: &str, wrong: &str) {
    let official = three(run, item, honest, wrong, Profile::BirdCritic);
    assert_eq!(
        official,
        [true, true, false],
        "control: the official profile"
    );
    let sound = three(run, item, honest, wrong, Profile::BirdCriticSound);
    assert!(
        !sound[2],
        "WON: the wrong prediction passed bird_critic_sound ({sound:?}; official {official:?})"
    );
}

/// Class 3, MariaDB: a user variable assigned by `SELECT ... INTO @var` written over several
/// lines. `query_check::leaves_session_state` looks for the text `into @` in the statement's
/// code, so `INTO` at the end of one line and `@avg_stock` on the next (or two blanks between
/// them) is not read as session state. Set-up: preprocess `SELECT AVG(stock)` / `INTO` /
/// `@avg_stock FROM products` (three lines); gold: the products under the average stock. On a
/// new session `@avg_stock` is NULL, so the `WRAPPED` test case's gold is empty there. Wrong: the
/// products under 0 in stock (none). Honest: the same filter against the average computed
/// inline. No lever: the pull request only predicts the wrong query.
mod mariadb_a_variable_selected_into_on_the_next_line {
    use super::*;

    #[test]
    fn mariadb_select_into_a_variable_across_lines_does_not_pass_a_wrong_query() {
        let preprocess = ["SELECT AVG(stock)\nINTO\n  @avg_stock\nFROM products"];
        let gold = "SELECT name FROM products WHERE stock < @avg_stock";
        let honest = "SELECT name FROM products WHERE stock < (SELECT AVG(stock) FROM products)";
        let wrong = "SELECT name FROM products WHERE stock < 0";
        assert_wrong_fails(&my_run(), (&preprocess, gold), honest, wrong);
    }
}

/// Class 3, MariaDB: a user variable set by a stored procedure the preprocess makes and calls.
/// Neither `CREATE PROCEDURE` (its first words are not `create temporary`, its body has `@` but
/// no `:=` or `into @`) nor `CALL` is read as session state, yet `CALL set_low()` leaves `@low`
/// on the item's session only. Set-up: preprocess `CREATE PROCEDURE set_low() BEGIN SET @low =
/// 5; END`, `CALL set_low()`; gold: the products under `@low` in stock; honest `stock < 5`;
/// wrong `stock < 0` (none, like the gold on a new session, where `@low` is NULL).
mod mariadb_a_variable_set_by_a_called_procedure {
    use super::*;

    #[test]
    fn mariadb_a_procedure_setting_a_variable_does_not_pass_a_wrong_query() {
        let preprocess = [
            "CREATE PROCEDURE set_low() BEGIN SET @low = 5; END",
            "CALL set_low()",
        ];
        let gold = "SELECT name FROM products WHERE stock < @low";
        let honest = "SELECT name FROM products WHERE stock < 5";
        let wrong = "SELECT name FROM products WHERE stock < 0";
        assert_wrong_fails(&my_run(), (&preprocess, gold), honest, wrong);
    }
}

/// Class 3, PostgreSQL: a temporary table made by `SELECT ... INTO TEMP` (PostgreSQL's other
/// form of `CREATE TEMP TABLE ... AS`). Its first word is `select`, so it is not read as session
/// state. Set-up: round 41's snapshot item in that form: `SELECT name, stock INTO TEMP before
/// FROM products`, then every stock raised by 100; gold: the products `before` had under 5 in
/// stock; wrong: the products under 5 now (none); honest: `before` read with another filter
/// (`stock <= 4`). On a new session `before` does not exist (no prelude since round 41).
/// Observed (contained): the gold errors on the test case's new session, so every prediction
/// fails under `bird_critic_sound`, the gold too (a dead item, like one `session_bound` flags).
mod postgresql_a_temporary_table_made_by_select_into {
    use super::*;

    #[test]
    fn postgresql_select_into_temp_does_not_pass_a_wrong_query() {
        let preprocess = [
            "SELECT name, stock INTO TEMP before FROM products",
            "UPDATE products SET stock = stock + 100",
        ];
        let gold = "SELECT name FROM before WHERE stock < 5";
        let honest = "SELECT name FROM before WHERE stock <= 4";
        let wrong = "SELECT name FROM products WHERE stock < 5";
        assert_wrong_fails(&pg_run(), (&preprocess, gold), honest, wrong);
    }
}

/// Class 3, PostgreSQL: a setting changed inside a `DO` block. `SET` in PL/pgSQL is session
/// wide (not `SET LOCAL`), so it outlives the block; the detection reads a `DO` block only for
/// a temporary object or `set_config`. Set-up: round 41's datestyle item, its preprocess `DO $$
/// BEGIN SET datestyle = 'German'; END $$`; gold `joined::date::text` (`01.01.2023` on the item's
/// session, `2023-01-01` on a new one), honest `to_char(joined::date, 'DD.MM.YYYY')`, wrong the
/// literal `'2023-01-01'`.
mod postgresql_a_setting_changed_in_a_do_block {
    use super::*;

    #[test]
    fn postgresql_a_datestyle_set_in_a_do_block_does_not_pass_a_wrong_query() {
        let preprocess = ["DO $$ BEGIN SET datestyle = 'German'; END $$"];
        let gold = "SELECT joined::date::text AS day FROM customers WHERE id = 1";
        let honest =
            "SELECT to_char(joined::date, 'DD.MM.YYYY') AS day FROM customers WHERE id = 1";
        let wrong = "SELECT '2023-01-01' AS day";
        assert_wrong_fails(&pg_run(), (&preprocess, gold), honest, wrong);
    }
}

/// A false fail (class 3's fix read too widely): a preprocess that uses a temporary staging
/// table and drops it leaves no state on its session, but `session_state` flags its `CREATE
/// TEMP TABLE`, so the item is not judged under the sound profile and every prediction fails
/// there, the honest ones too. Set-up (PostgreSQL, a plain BIRD-Critic-style fix-up): the ids
/// of the products out of stock staged in a temporary table, those products restocked to 1, the
/// staging table dropped. Gold: the products with stock 1; honest `stock BETWEEN 1 AND 1`; wrong:
/// every product. Round 44 judged it again (the gold-effect comparison); after round 47's fix
/// (the whitelist, `livesql/stateless.rs`) it is not judged: its temporary table and its
/// `UPDATE` of a table of the database are outside the whitelist (the documented cost,
/// docs/SECURITY.md; round 44 asked the same of `redteam44`'s copy of this item).
mod postgresql_a_dropped_staging_table {
    use super::*;

    #[test]
    fn postgresql_a_staging_table_dropped_by_the_preprocess_leaves_the_item_not_judged() {
        let preprocess = [
            "CREATE TEMP TABLE staging AS SELECT id FROM products WHERE stock = 0",
            "UPDATE products SET stock = 1 WHERE id IN (SELECT id FROM staging)",
            "DROP TABLE staging",
        ];
        let gold = "SELECT name FROM products WHERE stock = 1";
        let honest = "SELECT name FROM products WHERE stock BETWEEN 1 AND 1";
        let wrong = "SELECT name FROM products";
        crate::redteam43::assert_not_judged(&pg_run(), (&preprocess, gold), honest, wrong);
    }
}

/// Class 3, PostgreSQL: `SELECT ... INTO TEMP` (not read as session state: its first word is
/// `select`) under the name of the base table it copies. `pg_temp` comes first in every search
/// path, so on the item's session `products` is the copy, on a new session the base table. Set-up
/// (a preprocess working on a copy of the products in stock): `SELECT * INTO TEMP products FROM
/// products WHERE stock > 0`; gold: the products under 5 in stock (on the copy: none of the
/// sold-out ones); honest `stock BETWEEN 1 AND 4`; wrong: the base table's products under 5
/// (`public.products`, the sold-out ones too), which is what the gold gives on a new session.
mod postgresql_select_into_temp_shadowing_a_base_table {
    use super::*;

    #[test]
    fn postgresql_a_select_into_temp_copy_does_not_pass_a_wrong_query() {
        let preprocess = ["SELECT * INTO TEMP products FROM products WHERE stock > 0"];
        let gold = "SELECT name FROM products WHERE stock < 5";
        let honest = "SELECT name FROM products WHERE stock BETWEEN 1 AND 4";
        let wrong = "SELECT name FROM public.products WHERE stock < 5";
        assert_wrong_fails(&pg_run(), (&preprocess, gold), honest, wrong);
    }
}

/// Outside class 3: the SQLite engine (livesql on a local file: the repair path's engine, round
/// 19), whose sound profile runs the checks on a new connection too. A table made in SQLite's
/// `temp` schema by name (`CREATE TABLE temp.products ...`) is a temporary table, but its first
/// words are `create table`, so it is not read as session state; `temp` comes first in SQLite's
/// name resolution, so it shadows `main.products` on the item's connection only. Set-up: the
/// corpus's `shop` file; preprocess `CREATE TABLE temp.products AS SELECT * FROM main.products
/// WHERE stock > 0`; gold: the products under 5 in stock; honest `stock BETWEEN 1 AND 4`; wrong
/// `main.products` under 5 (the sold-out ones too).
pub(crate) mod sqlite_a_table_made_in_the_temp_schema {
    use sqlgate::engine::livesql::{Budget, Profile, Settings};
    use std::path::{Path, PathBuf};
    use std::time::Duration;

    /// Round 32's `WRAPPED` test case in the SQLite bird-critic form (it takes `conditions`).
    const WRAPPED: &str = "def test_case(pred_sqls, sol_sqls, db_path, conn, conditions=None):\n    gold = ['SELECT * FROM ({}) AS gold'.format(s) for s in sol_sqls]\n    pred = execute_queries(pred_sqls, db_path, conn, None, '')\n    res = execute_queries(gold, db_path, conn, None, '')\n    assert not res[1] and sorted(pred[0]) == sorted(res[0]), f'the gold gave {res[0]}'\n    return 1\n";

    fn verdict(template: &Path, item: (&[&str], &str), prediction: &str, profile: Profile) -> bool {
        let (preprocess, gold) = item;
        let line = serde_json::json!({
            "instance_id": "lever42", "db_id": "shop", "category": "Query", "sol_sql": [gold],
            "preprocess_sql": preprocess, "clean_up_sql": [],
            "test_cases": [WRAPPED], "issue_sql": [],
            "efficiency": false, "query": "which products?",
        });
        let item =
            sqlgate::input::livesql::parse_items(Path::new("lever42.jsonl"), &format!("{line}\n"))
                .unwrap()
                .remove(0);
        let settings = Settings {
            profile,
            budget: Budget {
                deadline: Duration::from_secs(60),
                max_steps: 100_000_000,
                disk_bytes: 64 << 20,
            },
            python: PathBuf::from("python3"),
        };
        let predicted = [prediction.to_string()];
        let verdict =
            sqlgate::engine::livesql::judge(&item, Some(&predicted), template, &settings).unwrap();
        eprintln!(
            "{profile:?} {prediction:?}: {} {}",
            verdict.success, verdict.message
        );
        verdict.success
    }

    #[test]
    fn sqlite_a_temp_schema_copy_does_not_pass_a_wrong_query() {
        assert_shadow_fails(&[
            "CREATE TABLE temp.products AS SELECT * FROM main.products WHERE stock > 0",
        ]);
    }

    /// The attempt with `preprocess`, which shadows `products` with its products in stock: gold
    /// the products under 5 in stock, honest `BETWEEN 1 AND 4`, wrong `main.products` under 5
    /// ([`assert_wrong_fails`]).
    pub(crate) fn assert_shadow_fails(preprocess: &[&str]) {
        let item = (preprocess, "SELECT name FROM products WHERE stock < 5");
        let honest = "SELECT name FROM products WHERE stock BETWEEN 1 AND 4";
        let wrong = "SELECT name FROM main.products WHERE stock < 5";
        assert_wrong_fails(item, honest, wrong);
    }

    /// The SQLite item (`preprocess`, `gold`) on the corpus's `shop` file: the control (the
    /// official profile passes the gold and `honest` and fails `wrong`), then `wrong` failing
    /// under `bird_critic_sound`.
    pub(crate) fn assert_wrong_fails(item: (&[&str], &str), honest: &str, wrong: &str) {
        let folder = tempfile::tempdir().unwrap();
        let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/livesql/db");
        crate::common::databases_from_scripts(&scripts, folder.path());
        let template = folder.path().join("shop/shop.sqlite");
        let three = |profile| [item.1, honest, wrong].map(|p| verdict(&template, item, p, profile));
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
