//! Red team round 37 (issue 44): `bird_critic_sound` on PostgreSQL 15 and MariaDB 10.11 after
//! rounds 35's and 36's fixes (commits 44bd7ae, 1de6d47, 652a0c5: the Query data check compares
//! every catalog row of the prediction's clone, parse trees by their deparsers, first with the
//! clone's own contents before the prediction and only then with the twin). Every test asserts
//! the SECURE outcome and runs its control: a failing test is a win (or, for the `honest_*`
//! modules, a false fail). Report: `/work/notes/redteam37.md`.
//!
//! The class 3 set-up is round 36's lever item (`redteam36::{item, verdicts}`: a Query item on
//! `shop` with a preprocess from the base's dataset and round 32's `WRAPPED` test case, which
//! runs the gold on a new session to the prediction's clone after the prediction again), and
//! round 36's `through_the_gate` for the CLI's verdict.

use crate::common::servers;
use crate::redteam30::{assert_secure, my_run, pg_run};
use crate::redteam36::verdicts;

/// Class 3, PostgreSQL (the catalog rows' rendering is not injective: `pg_toast_<digits>`).
/// `catalog_rows.rs::clone_digest_sql` rewrites every `pg_toast_[0-9]+` in a row's text to
/// `pg_toast_<id>` (meant for the names of TOAST tables), in every column of every catalog,
/// deparsed parse trees included. A SQL-standard function body (`RETURN ...`, `prosrc` empty)
/// is held by the catalog rows alone (round 36's fix renders it with `pg_get_functiondef`), so a
/// body whose only change is the digits after `pg_toast_` in a literal renders the same.
/// Set-up: the lever item, its preprocess making `low_stock()` as
/// `RETURN length('pg_toast_1') - 10` (0), gold `SELECT name FROM products WHERE stock <=
/// low_stock()` (two rows), wrong `... stock < 5` (four). Lever: `CREATE OR REPLACE` with
/// `length('pg_toast_11111') - 10` (4), then the wrong query. Control: the wrong query alone
/// fails.
pub(crate) mod postgresql_toast_digits_in_a_function_body {
    use super::*;

    pub(crate) const PREPROCESS: [&str; 1] = ["CREATE FUNCTION low_stock() RETURNS integer LANGUAGE sql IMMUTABLE RETURN length('pg_toast_1') - 10"];
    pub(crate) const GOLD: &str = "SELECT name FROM products WHERE stock <= low_stock()";
    pub(crate) const WRONG: &str = "SELECT name FROM products WHERE stock < 5";
    pub(crate) const LEVER: [&str; 2] = [
        "CREATE OR REPLACE FUNCTION low_stock() RETURNS integer LANGUAGE sql IMMUTABLE RETURN length('pg_toast_11111') - 10",
        WRONG,
    ];

    #[test]
    fn postgresql_toast_digits_changed_in_a_body_do_not_pass_a_gold_calling_it() {
        let found = verdicts(&pg_run(), (&PREPROCESS, GOLD), WRONG, &LEVER);
        assert_secure("RETURN length('pg_toast_11111') - 10", found);
    }
}

/// Class 3, PostgreSQL (the same rendering, the other replacement: the clone's role name).
/// `clone_digest_sql` replaces the clone's role name by `<role>` in every row's text, and
/// `PgRun::levers` does the same to the whole line, so a text that held the literal `<role>`
/// and now holds the role's name renders the same. Set-up: the lever item, its preprocess making
/// `stock_owner()` as `RETURN '<role>'`, gold `SELECT name FROM products WHERE stock <= CASE
/// WHEN stock_owner() = current_user THEN 4 ELSE 0 END` (two rows), wrong `... stock < 5`
/// (four). Lever: a `DO` block replacing the body with the session's `current_user` as a
/// literal, then the wrong query. Control: the wrong query alone fails.
pub(crate) mod postgresql_the_role_name_in_a_function_body {
    use super::*;

    pub(crate) const PREPROCESS: [&str; 1] =
        ["CREATE FUNCTION stock_owner() RETURNS text LANGUAGE sql IMMUTABLE RETURN '<role>'"];
    pub(crate) const GOLD: &str = "SELECT name FROM products WHERE stock <= CASE WHEN stock_owner() = current_user THEN 4 ELSE 0 END";
    pub(crate) const WRONG: &str = "SELECT name FROM products WHERE stock < 5";
    pub(crate) const LEVER: [&str; 2] = [
        "DO $$ BEGIN EXECUTE format('CREATE OR REPLACE FUNCTION stock_owner() RETURNS text LANGUAGE sql IMMUTABLE RETURN %L', current_user); END $$",
        WRONG,
    ];

    #[test]
    fn postgresql_the_role_name_written_into_a_body_does_not_pass_a_gold_calling_it() {
        let found = verdicts(&pg_run(), (&PREPROCESS, GOLD), WRONG, &LEVER);
        assert_secure("RETURN current_user's name", found);
    }
}

/// Class 3, MariaDB (state that is neither a catalog row nor a table's current rows: a
/// system-versioned table's history). A base database may not hold a system-versioned table
/// (`mysql/gate.rs`), but the item's preprocess can make one on each clone. The data digest
/// (`data_digest.rs::mysql_hashed`) reads a table's current rows, `structure::mysql_levers`
/// names the table (`a system versioned table ...`) and the catalog rows read
/// `information_schema` with its sizes and row counts left out as volatile: none holds the
/// history, which `FOR SYSTEM_TIME ALL` reads. Set-up: the lever item, its preprocess making
/// `price_log (id, price) WITH SYSTEM VERSIONING` with one row, gold `SELECT COUNT(*) AS
/// versions FROM price_log FOR SYSTEM_TIME ALL` (1), wrong `SELECT 5 AS versions`. Lever: the
/// price changed and changed back (two history rows, the current row as before), then the wrong
/// query; `WRAPPED` runs the prediction again before the gold, so the gold counts 1 + 2 + 2 = 5.
/// Control: the wrong query alone fails.
pub(crate) mod mariadb_a_system_versioned_history {
    use super::*;

    pub(crate) const PREPROCESS: [&str; 2] = [
        "CREATE TABLE price_log (id INT PRIMARY KEY, price INT) WITH SYSTEM VERSIONING",
        "INSERT INTO price_log VALUES (1, 10)",
    ];
    pub(crate) const GOLD: &str = "SELECT COUNT(*) AS versions FROM price_log FOR SYSTEM_TIME ALL";
    pub(crate) const WRONG: &str = "SELECT 5 AS versions";
    pub(crate) const LEVER: [&str; 3] = [
        "UPDATE price_log SET price = 11 WHERE id = 1",
        "UPDATE price_log SET price = 10 WHERE id = 1",
        WRONG,
    ];

    /// After round 47's fix (the whitelist, `livesql/stateless.rs`) the item is not judged: the
    /// parser does not read `WITH SYSTEM VERSIONING`, and a preprocess it cannot read is outside
    /// the whitelist (the documented cost); the history rows of a judged item are still in
    /// the clone's own entry (`redteam38`, `livesql_my`).
    #[test]
    fn mariadb_history_rows_added_do_not_pass_a_gold_counting_them() {
        let found = verdicts(&my_run(), (&PREPROCESS, GOLD), WRONG, &LEVER);
        assert_eq!(found, [false; 3], "not judged: {found:?}");
    }
}

/// Class 3, MariaDB (the same rendering on MariaDB: `catalog_rows.rs::mysql_clone_rows` replaces
/// the clone's database name by `<clone>` and its user by `<role>` in every `information_schema`
/// row). A view's definition (`VIEWS.VIEW_DEFINITION`) is held by those rows alone (the levers
/// name the view, the data digest reads its rows as the administrator). Set-up: the lever item,
/// its preprocess making the view `stock_cut` as `SELECT IF(SUBSTRING_INDEX(USER(), '@', 1) =
/// '<role>', 4, 0) AS cut` (0 for every session), gold `SELECT name FROM products WHERE stock
/// <= (SELECT cut FROM stock_cut)` (two rows), wrong `... stock < 5` (four). Lever: the view
/// made again by a prepared statement with the session's own user name as the literal (4 for the
/// clone's sessions, still 0 for the administrator's digest), then the wrong query. Control: the
/// wrong query alone fails.
pub(crate) mod mariadb_the_user_name_in_a_view {
    use super::*;

    pub(crate) const PREPROCESS: [&str; 1] = ["CREATE VIEW stock_cut AS SELECT IF(SUBSTRING_INDEX(USER(), '@', 1) = '<role>', 4, 0) AS cut"];
    pub(crate) const GOLD: &str =
        "SELECT name FROM products WHERE stock <= (SELECT cut FROM stock_cut)";
    pub(crate) const WRONG: &str = "SELECT name FROM products WHERE stock < 5";
    pub(crate) const LEVER: [&str; 4] = [
        "SET @made = CONCAT('CREATE OR REPLACE VIEW stock_cut AS SELECT IF(SUBSTRING_INDEX(USER(), ''@'', 1) = ''', SUBSTRING_INDEX(USER(), '@', 1), ''', 4, 0) AS cut')",
        "PREPARE made FROM @made",
        "EXECUTE made",
        WRONG,
    ];

    #[test]
    fn mariadb_the_user_name_written_into_a_view_does_not_pass_a_gold_reading_it() {
        let found = verdicts(&my_run(), (&PREPROCESS, GOLD), WRONG, &LEVER);
        assert_secure("CREATE OR REPLACE VIEW with USER()'s name", found);
    }
}

/// The other side (a false fail): round 36's fix reads the prediction's clone before the
/// prediction while the item's session is open (`QueryCheck::start`, `Sessions::Open`), and
/// after it once the sessions ended (`Sessions::Ended`). A preprocess that makes a temporary
/// table (BIRD-Critic preprocesses often do) leaves rows in the snapshot that have no schema
/// column and so are not dropped as temporary (`pg_attribute`, `pg_depend`: `catalog_rows.rs::
/// temporary` only filters rows by a `pg_namespace` column), and gone once the session ended:
/// the snapshot always differs, and the check falls back to the twin, which a preprocess that
/// stamps the time (round 36's false fail) sets apart. Set-up: the lever item, its preprocess
/// stamping the time and making a temporary table, gold `SELECT name FROM products WHERE stock
/// = 0`. Secure: the gold as the prediction passes and the wrong query fails. Rounds 41 to 43 did
/// not judge such an item (every prediction failed); since round 44 the prediction and the gold
/// run on new sessions after the preprocess, and the item is judged because its gold, which
/// never reads the temporary table, runs the same on the preprocess's own session
/// (`gold_effect.rs`). After round 47's fix (the whitelist, `livesql/stateless.rs`) the time stamp
/// alone leaves the item judged, and the temporary table makes it not judged (the documented
/// cost, docs/SECURITY.md).
mod honest_items_with_a_temporary_table_in_the_preprocess_are_judged {
    use super::*;
    use sqlgate::engine::livesql::LiveJudge;

    const GOLD: &str = "SELECT name FROM products WHERE stock = 0";
    const WRONG: &str = "SELECT name FROM products WHERE stock < 5";

    /// The verdicts of the gold, the wrong query and the gold again after `preprocess`, stamped
    /// (`stamp`) and then with `scratch`, a temporary table, as well.
    fn honest<J: LiveJudge>(run: &J, stamp: [&str; 2], scratch: &str) {
        let found = verdicts(run, (&stamp, GOLD), WRONG, &[GOLD]);
        assert_eq!(found, [true, false, true], "judged: {found:?}");
        let found = verdicts(run, (&[stamp[0], stamp[1], scratch], GOLD), WRONG, &[GOLD]);
        assert_eq!(found, [false; 3], "not judged: {found:?}");
    }

    #[test]
    fn postgresql_a_time_stamp_leaves_the_item_judged_and_a_temporary_table_not() {
        honest(
            &pg_run(),
            [
                "CREATE TABLE audit (id integer, at timestamptz DEFAULT now())",
                "INSERT INTO audit (id) VALUES (1)",
            ],
            "CREATE TEMP TABLE scratch (n integer)",
        );
    }

    #[test]
    fn mariadb_a_time_stamp_leaves_the_item_judged_and_a_temporary_table_not() {
        honest(
            &my_run(),
            [
                "CREATE TABLE audit (id INT, at TIMESTAMP(6) DEFAULT CURRENT_TIMESTAMP(6))",
                "INSERT INTO audit (id) VALUES (1)",
            ],
            "CREATE TEMPORARY TABLE scratch (n INT)",
        );
    }
}

/// Class 3 through the gate: this round's engine attempts as a pull request, where the verdict
/// is the CLI's exit code (round 36's `through_the_gate::attempt`: one Query item with its
/// preprocess, the baseline made on `main` with the gold, the pull request predicting the lever;
/// control: the wrong query alone exits 1).
mod through_the_gate {
    use super::*;
    use crate::livesql_pg_gate::PG;
    use crate::redteam32::through_the_gate::attempt_with as attempt;
    use crate::redteam32::through_the_gate::MY;

    #[test]
    fn postgresql_toast_digits_in_a_body_do_not_pass_the_gate() {
        use super::postgresql_toast_digits_in_a_function_body::{GOLD, LEVER, PREPROCESS, WRONG};
        let server = servers::postgres();
        crate::livesql_pg::load_databases(server);
        attempt(&PG, server, (&PREPROCESS, GOLD), WRONG, &LEVER);
    }

    #[test]
    fn postgresql_the_role_name_in_a_body_does_not_pass_the_gate() {
        use super::postgresql_the_role_name_in_a_function_body::{GOLD, LEVER, PREPROCESS, WRONG};
        let server = servers::postgres();
        crate::livesql_pg::load_databases(server);
        attempt(&PG, server, (&PREPROCESS, GOLD), WRONG, &LEVER);
    }

    #[test]
    fn mariadb_the_user_name_in_a_view_does_not_pass_the_gate() {
        use super::mariadb_the_user_name_in_a_view::{GOLD, LEVER, PREPROCESS, WRONG};
        let (server, _) = crate::livesql_my_gate::loaded();
        attempt(&MY, server, (&PREPROCESS, GOLD), WRONG, &LEVER);
    }
}
