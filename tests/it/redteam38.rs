//! Red team round 38 (issue 44): `bird_critic_sound` on PostgreSQL 15 and MariaDB 10.11 after
//! rounds 35 to 37's fixes (commits 05d01cc, af25851: the Query data check compares the
//! prediction's clone on its data digests and every catalog row, rows of temporary schemas and
//! of objects whose description names one left out; a MariaDB system-versioned table read
//! `FOR SYSTEM_TIME ALL`). Every test asserts the SECURE outcome and runs its control: a failing
//! test is a win. Report: `/work/notes/redteam38.md`.
//!
//! The class 3 set-up is round 36's lever item (`redteam36::verdicts`: a Query item on `shop`
//! with a preprocess from the base's dataset and round 32's `WRAPPED` test case, which runs the
//! prediction again, then the gold on a new session to the prediction's clone), and round 32's
//! `through_the_gate::attempt_with` for the CLI's verdict.

use crate::common::servers;
use crate::redteam30::{assert_secure, my_run, pg_run};
use crate::redteam36::verdicts;

/// Class 3, PostgreSQL (the temporary filter, `catalog_rows.rs::temporary`: a row is left out
/// when the description of any id it holds matches ` pg_(toast_)?temp_[0-9]+([.]|$)`, and
/// `pg_describe_object` writes a function's name as its identifier, which may hold that text).
/// A persistent function named `"low pg_temp_1.stock"` has its `pg_proc` row (and so its
/// `prosqlbody`, which only the catalog rows hold: `structure::postgres_structure` hashes
/// `prosrc`, empty for a SQL-standard body) left out as if it were a session's. Set-up: the
/// lever item, its preprocess making `"low pg_temp_1.stock"()` as `RETURN 0`, gold `SELECT name
/// FROM products WHERE stock <= "low pg_temp_1.stock"()` (two rows), wrong `... stock < 5`
/// (four). Lever: `CREATE OR REPLACE` with `RETURN 4`, then the wrong query. Control: the wrong
/// query alone fails.
pub(crate) mod postgresql_a_function_named_like_a_temporary_schema {
    use super::*;

    pub(crate) const PREPROCESS: [&str; 1] = ["CREATE FUNCTION \"low pg_temp_1.stock\"() RETURNS integer LANGUAGE sql IMMUTABLE RETURN 0"];
    pub(crate) const GOLD: &str =
        "SELECT name FROM products WHERE stock <= \"low pg_temp_1.stock\"()";
    pub(crate) const WRONG: &str = "SELECT name FROM products WHERE stock < 5";
    pub(crate) const LEVER: [&str; 2] = [
        "CREATE OR REPLACE FUNCTION \"low pg_temp_1.stock\"() RETURNS integer LANGUAGE sql IMMUTABLE RETURN 4",
        WRONG,
    ];

    #[test]
    fn postgresql_a_body_replaced_under_a_temporary_looking_name_does_not_pass() {
        let _db_ids = servers::db_id_databases();
        let found = verdicts(&pg_run(), (&PREPROCESS, GOLD), WRONG, &LEVER);
        assert_secure("CREATE OR REPLACE FUNCTION \"low pg_temp_1.stock\"()", found);
    }
}

/// Class 3, PostgreSQL (the same filter, with the object the prediction's own: nothing in the
/// preprocess named oddly). A domain's constraint is described as `constraint <name>` (its name
/// unquoted) and no line of `postgres_structure` holds it (its `constraint` lines join
/// `pg_constraint` to a table by `conrelid`, 0 for a domain's). So a constraint the prediction
/// adds to the preprocess's domain under the name `cap pg_temp_1.x` leaves no compared row: its
/// `pg_constraint` row and its `pg_depend` rows are all left out as a temporary object's.
/// Set-up: the lever item, its preprocess making the domain `stock_level` with one check, gold
/// `SELECT count(*) AS checks FROM pg_constraint WHERE contypid = 'stock_level'::regtype` (1),
/// wrong `SELECT 2 AS checks`. Lever: the constraint added (in a `DO` block that ignores a
/// duplicate, since `WRAPPED` runs the prediction twice), then the wrong query. Control: the
/// wrong query alone fails.
pub(crate) mod postgresql_a_domain_check_named_like_a_temporary_schema {
    use super::*;

    pub(crate) const PREPROCESS: [&str; 1] =
        ["CREATE DOMAIN stock_level AS integer CONSTRAINT stock_floor CHECK (VALUE >= 0)"];
    pub(crate) const GOLD: &str = "SELECT count(*) AS checks FROM pg_constraint WHERE contypid = 'stock_level'::regtype";
    pub(crate) const WRONG: &str = "SELECT 2 AS checks";
    pub(crate) const LEVER: [&str; 2] = [
        "DO $$ BEGIN ALTER DOMAIN stock_level ADD CONSTRAINT \"cap pg_temp_1.x\" CHECK (VALUE < 1000); EXCEPTION WHEN duplicate_object THEN NULL; END $$",
        WRONG,
    ];

    #[test]
    fn postgresql_a_domain_check_added_under_a_temporary_looking_name_does_not_pass() {
        let _db_ids = servers::db_id_databases();
        let found = verdicts(&pg_run(), (&PREPROCESS, GOLD), WRONG, &LEVER);
        assert_secure("ALTER DOMAIN ... ADD CONSTRAINT \"cap pg_temp_1.x\"", found);
    }
}

/// Class 3, MariaDB (round 37's fix reads a system-versioned table `FOR SYSTEM_TIME ALL`, but
/// hashes its visible columns only: `data_digest.rs::mysql_hashed` takes the columns from
/// `information_schema.columns`, where the period columns `ROW_START` / `ROW_END` are not).
/// So the history's values are compared as a multiset and its periods not at all: a prediction
/// that deletes the history (`DELETE HISTORY`) and makes the same values again has versions
/// that start later. Set-up: the lever item, its preprocess making `price_log` `WITH SYSTEM
/// VERSIONING` with the price 10, 11, then 10 again, then stamping `audit.at`; gold `SELECT
/// COUNT(*) AS n FROM price_log FOR SYSTEM_TIME ALL WHERE ROW_START > (SELECT at FROM audit)`
/// (0: every version is older than the stamp). Lever: `DELETE HISTORY`, the price set to 11 and
/// back to 10 (the versions 10, 11, 10 again), then `SELECT 3 AS n` (`WRAPPED` runs it twice,
/// so all three versions are newer). Control: the wrong query alone fails.
pub(crate) mod mariadb_history_periods {
    use super::*;

    pub(crate) const PREPROCESS: [&str; 5] = [
        "CREATE TABLE price_log (id INT PRIMARY KEY, price INT) WITH SYSTEM VERSIONING",
        "INSERT INTO price_log VALUES (1, 10)",
        "UPDATE price_log SET price = 11 WHERE id = 1",
        "UPDATE price_log SET price = 10 WHERE id = 1",
        "CREATE TABLE audit AS SELECT NOW(6) AS at",
    ];
    pub(crate) const GOLD: &str = "SELECT COUNT(*) AS n FROM price_log FOR SYSTEM_TIME ALL WHERE ROW_START > (SELECT at FROM audit)";
    pub(crate) const WRONG: &str = "SELECT 3 AS n";
    /// The clone's user may not `DELETE HISTORY` (error 1142): this lever is refused by the
    /// server, not by the check.
    pub(crate) const DELETED: [&str; 4] = [
        "DELETE HISTORY FROM price_log",
        "UPDATE price_log SET price = 11 WHERE id = 1",
        "UPDATE price_log SET price = 10 WHERE id = 1",
        WRONG,
    ];
    /// The same versions made again by making the table again.
    pub(crate) const LEVER: [&str; 6] = [
        "DROP TABLE price_log",
        "CREATE TABLE price_log (id INT PRIMARY KEY, price INT) WITH SYSTEM VERSIONING",
        "INSERT INTO price_log VALUES (1, 10)",
        "UPDATE price_log SET price = 11 WHERE id = 1",
        "UPDATE price_log SET price = 10 WHERE id = 1",
        WRONG,
    ];

    #[test]
    fn mariadb_history_deleted_and_made_again_does_not_pass_a_gold_reading_its_periods() {
        let _db_ids = servers::db_id_databases();
        let found = verdicts(&my_run(), (&PREPROCESS, GOLD), WRONG, &DELETED);
        assert_secure("DELETE HISTORY, then the same versions again", found);
    }

    #[test]
    fn mariadb_a_versioned_table_made_again_does_not_pass_a_gold_reading_its_periods() {
        let _db_ids = servers::db_id_databases();
        let found = verdicts(&my_run(), (&PREPROCESS, GOLD), WRONG, &LEVER);
        assert_secure("DROP and CREATE ... WITH SYSTEM VERSIONING, the same versions", found);
    }
}

/// Class 3 through the gate: this round's engine attempts as a pull request, where the verdict
/// is the CLI's exit code (round 32's `through_the_gate::attempt_with`: one Query item with its
/// preprocess, the baseline made on `main` with the gold, the pull request predicting the lever;
/// control: the wrong query alone exits 1).
mod through_the_gate {
    use super::*;
    use crate::livesql_pg_gate::PG;
    use crate::redteam32::through_the_gate::attempt_with as attempt;
    use crate::redteam32::through_the_gate::MY;

    #[test]
    fn postgresql_a_function_named_like_a_temporary_schema_does_not_pass_the_gate() {
        use super::postgresql_a_function_named_like_a_temporary_schema::{
            GOLD, LEVER, PREPROCESS, WRONG,
        };
        let _db_ids = servers::db_id_databases();
        let server = servers::postgres();
        crate::livesql_pg::load_databases(server);
        attempt(&PG, server, (&PREPROCESS, GOLD), WRONG, &LEVER);
    }

    #[test]
    fn postgresql_a_domain_check_named_like_a_temporary_schema_does_not_pass_the_gate() {
        use super::postgresql_a_domain_check_named_like_a_temporary_schema::{
            GOLD, LEVER, PREPROCESS, WRONG,
        };
        let _db_ids = servers::db_id_databases();
        let server = servers::postgres();
        crate::livesql_pg::load_databases(server);
        attempt(&PG, server, (&PREPROCESS, GOLD), WRONG, &LEVER);
    }

    #[test]
    fn mariadb_a_versioned_table_made_again_does_not_pass_the_gate() {
        use super::mariadb_history_periods::{GOLD, LEVER, PREPROCESS, WRONG};
        let _db_ids = servers::db_id_databases();
        let (server, _) = crate::livesql_my_gate::loaded();
        attempt(&MY, server, (&PREPROCESS, GOLD), WRONG, &LEVER);
    }
}
