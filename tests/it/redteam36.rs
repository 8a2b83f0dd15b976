//! Red team round 36 (issue 44): `bird_critic_sound` on PostgreSQL 15 and MariaDB 10.11 after
//! round 35's fix (commit 44bd7ae: the Query data check compares every catalog row of the
//! prediction's clone with its twin, `server/catalog_rows.rs::postgres_clone_rows` /
//! `mysql_clone_rows`). Every test asserts the SECURE outcome and runs its control: a failing
//! test is a win. Report: `/work/notes/redteam36.md`.
//!
//! The class 3 set-up is round 32's / 33's lever item (a Query item on `shop` whose one test
//! case, [`WRAPPED`], runs the gold rebuilt by `str.format` on a new session to the
//! prediction's clone, after the prediction again), here with a preprocess (the item's own, from
//! the base's dataset, run on the prediction's clone and on the twin alike) that makes the
//! object the gold reads. Only the Query data check stands between a persistent change of the
//! clone and a pass.

use crate::common::servers;
use crate::redteam30::{assert_secure, my_run, pg_run};
use crate::redteam32::WRAPPED;
use sqlgate::engine::livesql::{LiveJudge, Profile};
use sqlgate::input::livesql::{parse_items, LiveItem};
use std::path::Path;

/// The item's line: a Query item on `shop` with `preprocess`, the gold `gold` and [`WRAPPED`].
fn line(id: &str, preprocess: &[&str], gold: &str) -> serde_json::Value {
    serde_json::json!({
        "instance_id": id, "db_id": "shop", "category": "Query", "sol_sql": [gold],
        "preprocess_sql": preprocess, "clean_up_sql": [], "test_cases": [WRAPPED],
        "issue_sql": [], "conditions": {}, "efficiency": false, "query": "which products?",
    })
}

/// The lever item with `preprocess` and `gold`.
fn item(preprocess: &[&str], gold: &str) -> LiveItem {
    let line = line("lever36", preprocess, gold);
    parse_items(Path::new("lever36.jsonl"), &format!("{line}\n"))
        .unwrap()
        .remove(0)
}

/// Whether the gold, `wrong` and `lever` pass under `bird_critic_sound` on the lever item with
/// `preprocess` and `gold`.
pub(crate) fn verdicts<J: LiveJudge>(
    run: &J,
    (preprocess, gold): (&[&str], &str),
    wrong: &str,
    lever: &[&str],
) -> [bool; 3] {
    let item = item(preprocess, gold);
    let predictions: [Vec<String>; 3] = [
        vec![gold.into()],
        vec![wrong.into()],
        lever.iter().map(|s| s.to_string()).collect(),
    ];
    predictions.each_ref().map(|p| {
        let verdict = LiveJudge::judge(run, &item, Some(p), Profile::BirdCriticSound).unwrap();
        eprintln!("{p:?}: {} {}", verdict.success, verdict.message);
        verdict.success
    })
}

/// Class 3, PostgreSQL (a SQL-standard function body, `pg_proc.prosqlbody`). Round 35's catalog
/// rows leave out every parse tree (`pg_node_tree` columns) on the ground that "what they say is
/// in the structure entry", but `structure::postgres_structure` digests a function by `prosrc`
/// (and its language, kind, volatility, result, arguments, settings), and a function written
/// with `RETURN ...` or `BEGIN ATOMIC ... END` keeps its body in `prosqlbody` alone, with
/// `prosrc` the empty string. The clone's role owns the function (the preprocess made it), so
/// `CREATE OR REPLACE` gives it another body under the same id: no compared column changes.
/// Set-up: the lever item, its preprocess making `low_stock()` (`RETURN 0`), gold `SELECT name
/// FROM products WHERE stock <= low_stock()` (two rows), wrong `... stock < 5` (four). Lever:
/// the function replaced with `RETURN 4`, then the wrong query. Control: the wrong query alone
/// fails.
pub(crate) mod postgresql_a_function_body_outside_the_data_check {
    use super::*;

    pub(crate) const PREPROCESS: [&str; 1] =
        ["CREATE FUNCTION low_stock() RETURNS integer LANGUAGE sql IMMUTABLE RETURN 0"];
    pub(crate) const GOLD: &str = "SELECT name FROM products WHERE stock <= low_stock()";
    pub(crate) const WRONG: &str = "SELECT name FROM products WHERE stock < 5";
    pub(crate) const LEVER: [&str; 2] = [
        "CREATE OR REPLACE FUNCTION low_stock() RETURNS integer LANGUAGE sql IMMUTABLE RETURN 4",
        WRONG,
    ];

    #[test]
    fn postgresql_a_replaced_function_body_does_not_pass_a_gold_calling_it() {
        let found = verdicts(&pg_run(), (&PREPROCESS, GOLD), WRONG, &LEVER);
        assert_secure("CREATE OR REPLACE FUNCTION ... RETURN", found);
    }
}

/// Class 3, PostgreSQL (a domain's `CHECK`, `pg_constraint.conbin` of a row whose `conrelid` is
/// 0). The catalog rows leave out `conbin` (a parse tree); `postgres_structure`'s `constraint
/// ...` lines join `pg_constraint` to `pg_class` on `conrelid`, so a domain's constraints are not
/// there either. Dropping the constraint and adding one of the same name gives a row that
/// `pg_describe_object` writes the same (`constraint stock_floor`) with every other column
/// equal. Set-up: the lever item, its preprocess making the domain `stock_level` with `CHECK
/// (VALUE >= 0)`, a gold reading the check (`information_schema.check_constraints`); wrong: the
/// lever's check as a literal. Lever: `ALTER DOMAIN ... DROP CONSTRAINT`, `ADD CONSTRAINT` of the
/// same name with `VALUE >= 5`, then the wrong query. Control: the wrong query alone fails.
pub(crate) mod postgresql_a_domain_check_outside_the_data_check {
    use super::*;

    pub(crate) const PREPROCESS: [&str; 1] =
        ["CREATE DOMAIN stock_level AS integer CONSTRAINT stock_floor CHECK (VALUE >= 0)"];
    pub(crate) const GOLD: &str = "SELECT check_clause::text AS clause FROM information_schema.check_constraints WHERE constraint_name = 'stock_floor'";
    pub(crate) const WRONG: &str = "SELECT '((VALUE >= 5))'::text AS clause";
    pub(crate) const LEVER: [&str; 3] = [
        "ALTER DOMAIN stock_level DROP CONSTRAINT stock_floor",
        "ALTER DOMAIN stock_level ADD CONSTRAINT stock_floor CHECK (VALUE >= 5)",
        WRONG,
    ];

    #[test]
    fn postgresql_a_domain_check_made_again_does_not_pass_a_gold_reading_it() {
        let found = verdicts(&pg_run(), (&PREPROCESS, GOLD), WRONG, &LEVER);
        assert_secure("ALTER DOMAIN ... ADD CONSTRAINT", found);
    }
}

/// Class 3, PostgreSQL (a partition's bound, `pg_class.relpartbound`, a parse tree the catalog
/// rows leave out, and no line of `postgres_structure`: it has indexes, constraints, defaults,
/// views, triggers, rules and policies, not partition bounds). The clone's role owns the
/// partitioned table (the preprocess made it), so it may detach a partition and attach it again
/// with another bound: `pg_inherits`, `pg_depend` and the `pg_class` row read as before. Set-up:
/// the lever item, its preprocess making `stock_bands` partitioned by range with `stock_low`
/// `FROM (0) TO (10)`, a gold reading the bound (`pg_get_expr`); wrong: the lever's bound as a
/// literal. Lever: `DETACH`, `ATTACH ... FROM (0) TO (5)`, then the wrong query. Control: the
/// wrong query alone fails.
pub(crate) mod postgresql_a_partition_bound_outside_the_data_check {
    use super::*;

    pub(crate) const PREPROCESS: [&str; 2] = [
        "CREATE TABLE stock_bands (stock integer) PARTITION BY RANGE (stock)",
        "CREATE TABLE stock_low PARTITION OF stock_bands FOR VALUES FROM (0) TO (10)",
    ];
    pub(crate) const GOLD: &str =
        "SELECT pg_get_expr(relpartbound, oid) AS bound FROM pg_class WHERE relname = 'stock_low'";
    pub(crate) const WRONG: &str = "SELECT 'FOR VALUES FROM (0) TO (5)'::text AS bound";
    pub(crate) const LEVER: [&str; 3] = [
        "ALTER TABLE stock_bands DETACH PARTITION stock_low",
        "ALTER TABLE stock_bands ATTACH PARTITION stock_low FOR VALUES FROM (0) TO (5)",
        WRONG,
    ];

    /// After round 49's fix (partitioned tables and partitions are outside the whitelist,
    /// `livesql/stateless.rs`) the item is not judged (the documented cost, docs/SECURITY.md),
    /// so the lever fails with every prediction.
    #[test]
    fn postgresql_a_partition_attached_again_does_not_pass_a_gold_reading_its_bound() {
        let found = verdicts(&pg_run(), (&PREPROCESS, GOLD), WRONG, &LEVER);
        assert_eq!(found, [false; 3], "not judged: {found:?}");
    }

    /// The same for the partition key's expression (`pg_partitioned_table.partexprs`, a parse
    /// tree; `partattrs` reads 0 for an expression): the table dropped and made again
    /// partitioned by another expression of the same column reads as before in every compared
    /// row. Gold: `pg_get_partkeydef`; wrong: the lever's key as a literal.
    #[test]
    fn postgresql_a_partition_key_made_again_does_not_pass_a_gold_reading_it() {
        let preprocess =
            ["CREATE TABLE stock_bands (stock integer) PARTITION BY RANGE ((stock * 2))"];
        let gold = "SELECT pg_get_partkeydef('stock_bands'::regclass) AS key";
        let wrong = "SELECT 'RANGE (((stock + 1)))'::text AS key";
        let lever = [
            "DROP TABLE stock_bands",
            "CREATE TABLE stock_bands (stock integer) PARTITION BY RANGE ((stock + 1))",
            wrong,
        ];
        let found = verdicts(&pg_run(), (&preprocess, gold), wrong, &lever);
        assert_eq!(found, [false; 3], "not judged (round 49's fix): {found:?}");
    }
}

/// Class 3, MariaDB (a `FLOAT` value; two states that digest to the same text). The data digest
/// (`data_digest.rs::mysql_hashed`) hashes each value as `HEX(CAST(v AS BINARY))`, which MariaDB
/// writes for a `FLOAT` with at most six significant digits (`my_gcvt`, `FLT_DIG`): 4.5 and
/// 4.5000005 are both `4.5`, while `v > 4.5` tells them apart. So the row's hash, the table's
/// digest and its scan order stay as the twin's. Set-up: the lever item, its preprocess making
/// `readings (id, level FLOAT)` with levels 4.5 and 7.25, gold `SELECT id FROM readings WHERE
/// level > 4.5` (one row), wrong `... level >= 4.5` (two). Lever: `UPDATE readings SET level =
/// 4.5000005 WHERE id = 1`, then the wrong query. Control: the wrong query alone fails.
pub(crate) mod mariadb_a_float_beyond_its_printed_digits {
    use super::*;

    pub(crate) const PREPROCESS: [&str; 2] = [
        "CREATE TABLE readings (id INT PRIMARY KEY, level FLOAT)",
        "INSERT INTO readings VALUES (1, 4.5), (2, 7.25)",
    ];
    pub(crate) const GOLD: &str = "SELECT id FROM readings WHERE level > 4.5";
    pub(crate) const WRONG: &str = "SELECT id FROM readings WHERE level >= 4.5";
    pub(crate) const LEVER: [&str; 2] =
        ["UPDATE readings SET level = 4.5000005 WHERE id = 1", WRONG];

    #[test]
    fn mariadb_a_float_moved_below_its_printed_digits_does_not_pass_a_gold_reading_it() {
        let found = verdicts(&my_run(), (&PREPROCESS, GOLD), WRONG, &LEVER);
        assert_secure("UPDATE ... FLOAT", found);
    }
}

/// The other side of round 35's fix (a false fail is a finding too): an honest Query
/// prediction that makes session-only objects (a temporary table with a serial column, an
/// index and a temporary view, a temporary sequence) and a `SET`, then reads, must still pass:
/// the temporary schema those leave behind, its rows and what they depend on must all compare
/// equal to the twin's. Set-up: the lever item, no preprocess, gold `SELECT name FROM products
/// WHERE stock = 0`. The "lever" is the honest prediction; the control: the wrong query
/// `... stock < 5` fails. Secure here: the honest prediction PASSES.
mod honest_session_only_objects_still_pass {
    use super::*;

    const GOLD: &str = "SELECT name FROM products WHERE stock = 0";
    const WRONG: &str = "SELECT name FROM products WHERE stock < 5";

    fn honest<J: LiveJudge>(run: &J, honest: &[&str]) {
        let found = verdicts(run, (&[], GOLD), WRONG, honest);
        assert_eq!(found[..2], [true, false], "control: gold / wrong");
        assert!(
            found[2],
            "FALSE FAIL: an honest prediction failed: {found:?}"
        );
    }

    #[test]
    fn postgresql_temporary_objects_and_a_set_do_not_fail_an_honest_prediction() {
        honest(
            &pg_run(),
            &[
                "SET work_mem = '8MB'",
                "CREATE TEMP TABLE oos (n serial PRIMARY KEY, name text)",
                "CREATE INDEX ON oos (name)",
                "CREATE TEMP SEQUENCE tick",
                "INSERT INTO oos (name) SELECT name FROM products WHERE stock = 0",
                "CREATE TEMP VIEW oos_names AS SELECT name FROM oos",
                "SELECT name FROM oos_names",
            ],
        );
    }

    #[test]
    fn mariadb_a_temporary_table_and_a_set_do_not_fail_an_honest_prediction() {
        honest(
            &my_run(),
            &[
                "SET SESSION group_concat_max_len = 100000",
                "CREATE TEMPORARY TABLE oos (n INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(255), KEY (name))",
                "INSERT INTO oos (name) SELECT name FROM products WHERE stock = 0",
                "SELECT name FROM oos",
            ],
        );
    }
}

/// Class 3 through the gate: this round's engine wins as a pull request, where the verdict is
/// the CLI's exit code. Set-up: round 32's `through_the_gate` (a bundled-style dataset of ONE
/// Query item, gated on `bird_critic_sound`, its baseline made on `main` with the gold as the
/// prediction; the pull request predicts the lever then the wrong query, `eval --trusted-base
/// <base>`), with the item's preprocess. Control: the pull request predicting the wrong query
/// alone exits 1.
mod through_the_gate {
    use super::*;
    use crate::livesql_pg_gate::PG;
    use crate::redteam32::through_the_gate::{attempt_with as attempt, MY};

    #[test]
    fn postgresql_a_replaced_function_body_does_not_pass_the_gate() {
        use super::postgresql_a_function_body_outside_the_data_check::{
            GOLD, LEVER, PREPROCESS, WRONG,
        };
        let server = servers::postgres();
        crate::livesql_pg::load_databases(server);
        attempt(&PG, server, (&PREPROCESS, GOLD), WRONG, &LEVER);
    }

    #[test]
    fn postgresql_a_domain_check_made_again_does_not_pass_the_gate() {
        use super::postgresql_a_domain_check_outside_the_data_check::{
            GOLD, LEVER, PREPROCESS, WRONG,
        };
        let server = servers::postgres();
        crate::livesql_pg::load_databases(server);
        attempt(&PG, server, (&PREPROCESS, GOLD), WRONG, &LEVER);
    }

    /// Contained (the run fails closed): the large object's fault through the gate.
    #[test]
    fn postgresql_a_large_object_does_not_pass_the_gate() {
        let server = servers::postgres();
        crate::livesql_pg::load_databases(server);
        let wrong = "SELECT name FROM products WHERE stock < 5";
        let gold = "SELECT name FROM products WHERE stock = 0";
        attempt(
            &PG,
            server,
            (&[], gold),
            wrong,
            &["SELECT lo_create(0)", wrong],
        );
    }

    #[test]
    fn mariadb_a_float_below_its_printed_digits_does_not_pass_the_gate() {
        use super::mariadb_a_float_beyond_its_printed_digits::{GOLD, LEVER, PREPROCESS, WRONG};
        let (server, _) = crate::livesql_my_gate::loaded();
        attempt(&MY, server, (&PREPROCESS, GOLD), WRONG, &LEVER);
    }
}

/// The other side again (a false fail): an item whose preprocess stamps a row with the time
/// (`now()`, `CURRENT_TIMESTAMP(6)`: a BIRD-Critic preprocess often fills a log table so) runs
/// that preprocess on the prediction's clone and, later, on the twin, so the two clones hold
/// different rows before any prediction has run, and the Query data check compares them. An
/// honest prediction (the gold itself, which reads neither the table nor the time) must pass.
/// Set-up: the lever item with that preprocess, gold `SELECT name FROM products WHERE stock =
/// 0`. Secure here: the gold as the prediction PASSES (and the wrong query fails).
mod honest_items_with_a_timestamped_preprocess_still_pass {
    use super::*;

    const GOLD: &str = "SELECT name FROM products WHERE stock = 0";
    const WRONG: &str = "SELECT name FROM products WHERE stock < 5";

    fn honest<J: LiveJudge>(run: &J, preprocess: &[&str]) {
        let found = verdicts(run, (preprocess, GOLD), WRONG, &[GOLD]);
        assert!(
            found[0] && found[2],
            "FALSE FAIL: the gold as the prediction failed: {found:?}"
        );
        assert!(!found[1], "control: the wrong query passed");
    }

    #[test]
    fn postgresql_a_preprocess_stamping_the_time_does_not_fail_the_gold() {
        honest(
            &pg_run(),
            &[
                "CREATE TABLE audit (id integer, at timestamptz DEFAULT now())",
                "INSERT INTO audit (id) VALUES (1)",
            ],
        );
    }

    #[test]
    fn mariadb_a_preprocess_stamping_the_time_does_not_fail_the_gold() {
        honest(
            &my_run(),
            &[
                "CREATE TABLE audit (id INT, at TIMESTAMP(6) DEFAULT CURRENT_TIMESTAMP(6))",
                "INSERT INTO audit (id) VALUES (1)",
            ],
        );
    }
}

/// Class 3, PostgreSQL (what a session leaves that no compared row renders: a large object).
/// `catalog_rows.rs::clone_text` writes each catalog's `oid` column with `pg_describe_object(
/// '<catalog>'::regclass, oid, 0)`, and for `pg_largeobject_metadata` that class is one
/// `pg_describe_object` does not know (a large object is described under `pg_largeobject`), so
/// once a prediction made one (`lo_create`, which every role may call) the check's query
/// errors. Set-up: the lever item, gold `SELECT name FROM products WHERE stock = 0`, wrong
/// `... stock < 5`. Lever: `SELECT lo_create(0)`, then the wrong query. Secure: the lever does
/// not pass (the engine's answer is printed: a fault of the harness fails the run closed).
/// Control: the wrong query alone fails.
mod postgresql_a_large_object_in_the_data_check {
    use super::*;

    #[test]
    fn postgresql_a_large_object_does_not_pass_and_is_not_a_pass() {
        let run = pg_run();
        let gold = "SELECT name FROM products WHERE stock = 0";
        let wrong = "SELECT name FROM products WHERE stock < 5";
        let item = item(&[], gold);
        let judge = |p: &[&str]| {
            let p: Vec<String> = p.iter().map(|s| s.to_string()).collect();
            LiveJudge::judge(&run, &item, Some(&p), Profile::BirdCriticSound)
        };
        assert!(judge(&[gold]).unwrap().success, "control: the gold");
        assert!(
            !judge(&[wrong]).unwrap().success,
            "control: the wrong query"
        );
        let lever = judge(&["SELECT lo_create(0)", wrong]);
        eprintln!("the lever: {lever:?}");
        assert!(
            !matches!(&lever, Ok(verdict) if verdict.success),
            "WON: a large object passed: {lever:?}"
        );
    }
}

/// The other side (a false fail, the run's fault): `clone_text` describes every catalog's `oid`
/// column with `pg_describe_object`, which knows no `pg_enum` class (`unrecognized object
/// class: 3501`) and errors instead of returning NULL; an enum label made after `initdb` has an
/// id of at least 16384. So on a database with an enum type (a base database's, or one the
/// item's preprocess makes) the Query data check's read fails for every Query item, honest or
/// not, and the run stops on the fault. Set-up: the lever item, its preprocess making an enum,
/// gold `SELECT name FROM products WHERE stock = 0`. Secure here: the gold as the prediction is
/// judged (no fault) and PASSES.
mod honest_items_on_a_database_with_an_enum_still_pass {
    use super::*;

    #[test]
    fn postgresql_an_enum_type_does_not_fault_the_gold() {
        let run = pg_run();
        let gold = "SELECT name FROM products WHERE stock = 0";
        let item = item(
            &["CREATE TYPE stock_state AS ENUM ('out', 'low', 'ok')"],
            gold,
        );
        let verdict = LiveJudge::judge(
            &run,
            &item,
            Some(&[gold.to_string()]),
            Profile::BirdCriticSound,
        );
        assert!(
            matches!(&verdict, Ok(v) if v.success),
            "FALSE FAIL: the gold on a database with an enum: {verdict:?}"
        );
    }
}
