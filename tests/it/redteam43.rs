//! Red team round 43 (issue 44): `bird_critic_sound` after round 42's fix (commits 674060c and
//! 9489bff): the servers read the item session's state before and after the preprocess
//! (`postgres/item.rs::SESSION_STATE`, `mysql/session_state.rs`) besides the text test
//! (`query_check::session_state`), and an item whose preprocess leaves state is not judged under
//! the sound profiles. The attempts are preprocesses that leave session state in a form neither
//! reads (a temporary type, a temporary table made by a procedure or in a MariaDB executable
//! comment, an object named `temp .x` with a blank before the dot). Every test asserts the
//! SECURE outcome and runs its control: a failing test is a win. Report:
//! `/work/notes/redteam43.md`.
//!
//! After the lead's fix (round 43: the state read at run time on every engine, the text test
//! gone), each won item is not judged under the sound profile (every prediction fails, the gold
//! too), which is what the wins' tests now see; their gate runs (the lever exited 0 through the
//! gate) are dropped with the item, which no pull request can regress any more.
//!
//! Set-up: round 42's lever item (`shop`, a Query item with round 32's `WRAPPED` test case,
//! which runs the prediction again, then the gold, on a new session to the prediction's clone).
//! The pull request only predicts the wrong query.

use crate::redteam30::{my_run, pg_run};
use sqlgate::engine::livesql::{LiveJudge, Profile};

/// Whether `prediction` passes the item (`preprocess`, `gold`, round 32's `WRAPPED` test case)
/// under `profile` (round 42's `judged`).
pub(crate) fn judged<J: LiveJudge>(
    run: &J,
    (preprocess, gold): (&[&str], &str),
    prediction: &str,
    profile: Profile,
) -> bool {
    let line = serde_json::json!({
        "instance_id": "lever43", "db_id": "shop", "category": "Query", "sol_sql": [gold],
        "preprocess_sql": preprocess, "clean_up_sql": [],
        "test_cases": [crate::redteam32::WRAPPED], "issue_sql": [], "conditions": {},
        "efficiency": false, "query": "which products?",
    });
    let item = sqlgate::input::livesql::parse_items(
        std::path::Path::new("lever43.jsonl"),
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

/// A false pass: the control (the official `bird_critic` passes the gold and the honest
/// prediction and fails the wrong one), then the secure outcome under `bird_critic_sound`: the
/// wrong prediction fails (the item judged as the official profile does, or not judged at all).
pub(crate) fn assert_wrong_fails<J: LiveJudge>(
    run: &J,
    item: (&[&str], &str),
    honest: &str,
    wrong: &str,
) {
    let three = |profile| [item.1, honest, wrong].map(|p| judged(run, item, p, profile));
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

/// The PostgreSQL item of the temporary-type attempts: the gold casts the names of the products
/// under 5 in stock to `text`, which the preprocess's temporary domain (`varchar(4)`) shadows on
/// the item's session (the temporary schema is searched first for types, before `pg_catalog`);
/// honest: the names cut to four letters; wrong: the whole names, the gold's answer on a new
/// session.
const PG_GOLD: &str = "SELECT name::text AS name FROM products WHERE stock < 5";
const PG_HONEST: &str = "SELECT left(name, 4) AS name FROM products WHERE stock < 5";
const PG_WRONG: &str = "SELECT name FROM products WHERE stock < 5";

/// Class 3, PostgreSQL: a temporary domain made in a `DO` block. `SESSION_STATE` counts the
/// temporary schema's relations (`pg_class`), but a domain (or an enum, a range type, a
/// function) has no `pg_class` row; the text test reads a `DO` block only for `temp table` /
/// `temp view` / `temp sequence` and `set_config`, and the block's `pg_temp.` is inside a
/// dollar-quoted string (one token). Set-up: preprocess `DO $$ BEGIN CREATE DOMAIN
/// pg_temp.text AS varchar(4); END $$`; gold, honest and wrong as [`PG_GOLD`].
mod postgresql_a_temporary_domain_made_in_a_do_block {
    use super::*;

    #[test]
    fn postgresql_a_temporary_domain_from_a_do_block_does_not_pass_a_wrong_query() {
        let preprocess = ["DO $$ BEGIN CREATE DOMAIN pg_temp.text AS varchar(4); END $$"];
        assert_wrong_fails(&pg_run(), (&preprocess, PG_GOLD), PG_HONEST, PG_WRONG);
    }
}

/// Class 3, PostgreSQL: the same temporary domain made by a plain statement (`CREATE DOMAIN
/// pg_temp .text AS varchar(4)`). The PostgreSQL engine does not consult the text test
/// (`sound::session_bound` is called by the SQLite and MariaDB engines only); it reads the
/// session (`SESSION_STATE`), which does not see the domain (no `pg_class` row), however the
/// statement is written.
mod postgresql_a_temporary_domain_with_a_blank_before_the_dot {
    use super::*;

    #[test]
    fn postgresql_a_temporary_domain_named_with_a_blank_does_not_pass_a_wrong_query() {
        let preprocess = ["CREATE DOMAIN pg_temp .text AS varchar(4)"];
        assert_wrong_fails(&pg_run(), (&preprocess, PG_GOLD), PG_HONEST, PG_WRONG);
    }
}

/// The MariaDB item of the shadowing attempts: a temporary `products` holding the products in
/// stock shadows the base table on the item's session. Gold: the products under 5 in stock
/// (on the item's session the two with 1 to 4; on a new session the four with 0 to 4). Honest:
/// `BETWEEN 1 AND 4`. Wrong: `stock < 5` only when some product is out of stock, which is empty
/// on the item's session (the official profile fails it) and the gold's four on a new session.
const MY_GOLD: &str = "SELECT name FROM products WHERE stock < 5";
const MY_HONEST: &str = "SELECT name FROM products WHERE stock BETWEEN 1 AND 4";
const MY_WRONG: &str =
    "SELECT name FROM products WHERE stock < 5 AND EXISTS (SELECT 1 FROM products p WHERE p.stock = 0)";

/// Class 3, MariaDB: a temporary table made by a stored procedure. MariaDB 10.11 does not list
/// temporary tables, so only the text test finds them: `CREATE PROCEDURE` is not `create
/// temporary`, and `CALL` is not a session word. Set-up: preprocess `CREATE PROCEDURE
/// keep_stocked() CREATE TEMPORARY TABLE products SELECT * FROM products WHERE stock > 0`,
/// `CALL keep_stocked()`; gold, honest and wrong as [`MY_GOLD`].
mod mariadb_a_temporary_table_made_by_a_procedure {
    use super::*;

    #[test]
    fn mariadb_a_temporary_table_from_a_procedure_does_not_pass_a_wrong_query() {
        let preprocess = [
            "CREATE PROCEDURE keep_stocked() CREATE TEMPORARY TABLE products SELECT * FROM products WHERE stock > 0",
            "CALL keep_stocked()",
        ];
        assert_wrong_fails(&my_run(), (&preprocess, MY_GOLD), MY_HONEST, MY_WRONG);
    }
}

/// Class 3, MariaDB: `CREATE /*! TEMPORARY */ TABLE`. MariaDB runs the text of an executable
/// comment; the tokenizer reads it as a comment, so the leading words are `create table`.
/// Set-up: preprocess `CREATE /*! TEMPORARY */ TABLE products SELECT * FROM products WHERE
/// stock > 0`; gold, honest and wrong as [`MY_GOLD`].
mod mariadb_temporary_in_an_executable_comment {
    use super::*;

    #[test]
    fn mariadb_a_temporary_table_in_an_executable_comment_does_not_pass_a_wrong_query() {
        let preprocess =
            ["CREATE /*! TEMPORARY */ TABLE products SELECT * FROM products WHERE stock > 0"];
        assert_wrong_fails(&my_run(), (&preprocess, MY_GOLD), MY_HONEST, MY_WRONG);
    }
}

/// Outside class 3, the SQLite livesql engine (the repair path's): round 42's temp-schema copy
/// written `temp .products` (a blank before the dot). SQLite has no session read; the text test's
/// `in_temporary_schema` wants the word `temp` directly followed by a period token. Set-up:
/// round 42's SQLite attempt (`redteam42::sqlite_a_table_made_in_the_temp_schema`) with the
/// preprocess `CREATE TABLE temp .products AS SELECT * FROM main.products WHERE stock > 0`.
mod sqlite_a_temp_schema_with_a_blank_before_the_dot {
    #[test]
    fn sqlite_a_temp_schema_copy_named_with_a_blank_does_not_pass_a_wrong_query() {
        crate::redteam42::sqlite_a_table_made_in_the_temp_schema::assert_shadow_fails(&[
            "CREATE TABLE temp .products AS SELECT * FROM main.products WHERE stock > 0",
        ]);
    }
}

/// Asserts the control (the official `bird_critic` passes the gold and the honest prediction
/// and fails the wrong one), then the verdicts under `bird_critic_sound`: the same when `judged`,
/// else every prediction failing, the gold too (`why`: what the failure would mean).
fn assert_sound<J: LiveJudge>(
    run: &J,
    item: (&[&str], &str),
    (honest, wrong): (&str, &str),
    (judged_there, why): (bool, &str),
) {
    let three = |profile| [item.1, honest, wrong].map(|p| judged(run, item, p, profile));
    let official = three(Profile::BirdCritic);
    assert_eq!(
        official,
        [true, true, false],
        "control: the official profile"
    );
    let expected = if judged_there { official } else { [false; 3] };
    assert_eq!(three(Profile::BirdCriticSound), expected, "{why}");
}

/// The documented cost of round 47's whitelist (`livesql/stateless.rs`): after the control, the
/// item is not judged under `bird_critic_sound` (every prediction fails, the gold too), its
/// preprocess holding a statement outside the whitelist.
pub(crate) fn assert_not_judged<J: LiveJudge>(
    run: &J,
    item: (&[&str], &str),
    honest: &str,
    wrong: &str,
) {
    let why = "the documented cost: the item is not judged under bird_critic_sound";
    assert_sound(run, item, (honest, wrong), (false, why));
}

/// A false fail: the control, then the secure outcome under `bird_critic_sound`: the same
/// verdicts (an item whose preprocess is of the whitelist's kinds is judged).
pub(crate) fn assert_judged<J: LiveJudge>(
    run: &J,
    item: (&[&str], &str),
    honest: &str,
    wrong: &str,
) {
    let why = "FALSE FAIL: an item whose preprocess leaves no session state is not judged";
    assert_sound(run, item, (honest, wrong), (true, why));
}

/// Class 3, MariaDB, false fail: the common BIRD-Critic opening `DROP TABLE IF EXISTS` of a
/// table that is not there. It leaves a note (a warning) and nothing else on the session; the
/// attempt is whether `mysql/session_state.rs::SESSION_STATE` reads a server-moved session
/// variable (`warning_count`, `error_count`) as state. Set-up: preprocess `DROP TABLE IF EXISTS
/// restock_log`; gold `stock < 5`; honest `stock <= 4`; wrong every product.
mod mariadb_a_drop_if_exists_of_no_table {
    use super::*;

    #[test]
    fn mariadb_a_drop_if_exists_does_not_kill_the_item() {
        let preprocess = ["DROP TABLE IF EXISTS restock_log"];
        let gold = "SELECT name FROM products WHERE stock < 5";
        let honest = "SELECT name FROM products WHERE stock <= 4";
        let wrong = "SELECT name FROM products";
        assert_judged(&my_run(), (&preprocess, gold), honest, wrong);
    }
}

/// Class 3, PostgreSQL, false fail: `SET LOCAL` (and `SET CONSTRAINTS`) last only until the end
/// of the transaction the statement runs in (each preprocess statement commits on its own), so
/// they leave nothing on the session. The attempt is whether they are flagged as session state
/// all the same (by the text's first word `set`, or by `SESSION_STATE`).
/// Set-up: preprocess `SET LOCAL datestyle = 'German'`, `SET CONSTRAINTS ALL DEFERRED`, then
/// the stock of the products out of stock set to 1; gold `stock = 1`; honest `stock BETWEEN 1
/// AND 1`; wrong every product. After round 47's fix (the whitelist, `livesql/stateless.rs`) the item is not judged under
/// `bird_critic_sound`: its preprocess holds a statement outside the whitelist (the documented
/// cost, docs/SECURITY.md).
mod postgresql_transaction_scoped_settings {
    use super::*;

    #[test]
    fn postgresql_set_local_leaves_the_item_not_judged() {
        let preprocess = [
            "SET LOCAL datestyle = 'German'",
            "SET CONSTRAINTS ALL DEFERRED",
            "UPDATE products SET stock = 1 WHERE stock = 0",
        ];
        let gold = "SELECT name FROM products WHERE stock = 1";
        let honest = "SELECT name FROM products WHERE stock BETWEEN 1 AND 1";
        let wrong = "SELECT name FROM products";
        assert_not_judged(&pg_run(), (&preprocess, gold), honest, wrong);
    }
}

/// Class 3, MariaDB, false fail: `SET STATEMENT <variable> = <value> FOR <statement>` sets the
/// variable for that one statement only, so it leaves nothing on the session
/// (`mysql/session_state.rs::SESSION_STATE` reads the same before and after); but its first word
/// is `set`, a `query_check::SESSION_WORDS` word, so `sound::session_bound` does not judge the
/// item. Set-up: preprocess `SET STATEMENT sql_mode = '' FOR UPDATE products SET stock = 1 WHERE
/// stock = 0`; gold `stock = 1`; honest `stock BETWEEN 1 AND 1`; wrong every product. After round 47's fix (the whitelist, `livesql/stateless.rs`) the item is not judged under
/// `bird_critic_sound`: its preprocess holds a statement outside the whitelist (the documented
/// cost, docs/SECURITY.md).
mod mariadb_a_setting_for_one_statement {
    use super::*;

    #[test]
    fn mariadb_set_statement_for_leaves_the_item_not_judged() {
        let preprocess =
            ["SET STATEMENT sql_mode = '' FOR UPDATE products SET stock = 1 WHERE stock = 0"];
        let gold = "SELECT name FROM products WHERE stock = 1";
        let honest = "SELECT name FROM products WHERE stock BETWEEN 1 AND 1";
        let wrong = "SELECT name FROM products";
        assert_not_judged(&my_run(), (&preprocess, gold), honest, wrong);
    }
}
