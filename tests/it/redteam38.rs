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
//! Classes 1 and 2 use the same one-item gate: `the_reports_path_linked_out_of_the_workspace`
//! (an output path the base config names) and `a_repair_moves_the_gold_to_a_file_of_its_own`.

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

    pub(crate) const PREPROCESS: [&str; 1] = [
        "CREATE FUNCTION \"low pg_temp_1.stock\"() RETURNS integer LANGUAGE sql IMMUTABLE RETURN 0",
    ];
    pub(crate) const GOLD: &str =
        "SELECT name FROM products WHERE stock <= \"low pg_temp_1.stock\"()";
    pub(crate) const WRONG: &str = "SELECT name FROM products WHERE stock < 5";
    pub(crate) const LEVER: [&str; 2] = [
        "CREATE OR REPLACE FUNCTION \"low pg_temp_1.stock\"() RETURNS integer LANGUAGE sql IMMUTABLE RETURN 4",
        WRONG,
    ];

    #[test]
    fn postgresql_a_body_replaced_under_a_temporary_looking_name_does_not_pass() {
        let found = verdicts(&pg_run(), (&PREPROCESS, GOLD), WRONG, &LEVER);
        assert_secure(
            "CREATE OR REPLACE FUNCTION \"low pg_temp_1.stock\"()",
            found,
        );
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
    pub(crate) const GOLD: &str =
        "SELECT count(*) AS checks FROM pg_constraint WHERE contypid = 'stock_level'::regtype";
    pub(crate) const WRONG: &str = "SELECT 2 AS checks";
    pub(crate) const LEVER: [&str; 2] = [
        "DO $$ BEGIN ALTER DOMAIN stock_level ADD CONSTRAINT \"cap pg_temp_1.x\" CHECK (VALUE < 1000); EXCEPTION WHEN duplicate_object THEN NULL; END $$",
        WRONG,
    ];

    #[test]
    fn postgresql_a_domain_check_added_under_a_temporary_looking_name_does_not_pass() {
        let found = verdicts(&pg_run(), (&PREPROCESS, GOLD), WRONG, &LEVER);
        assert_secure("ALTER DOMAIN ... ADD CONSTRAINT \"cap pg_temp_1.x\"", found);
    }
}

/// Class 3, PostgreSQL (the `relfilenode` classes: `catalog_rows.rs::clone_text` writes a
/// table's file number as `0`, `its id` or `rewritten`, so a table rewritten once and one
/// rewritten twice read the same, while the number itself, which a prediction's rewrite moves
/// past every id made since, is `PUBLIC`'s to read: `pg_relation_filenode`). Set-up: the lever
/// item, its preprocess making `t_old` (two rows), rewriting it (`ALTER COLUMN ... TYPE
/// bigint`), then making `t_new`; gold `SELECT pg_relation_filenode('t_old') <
/// 't_new'::regclass::oid AS older` (true on every clone: ids are handed out in order), wrong
/// `SELECT false AS older`. Lever: `t_old` rewritten again with the same type and values
/// (`ALTER COLUMN n TYPE bigint USING n + 0`; rows, order and definition as before), then the
/// wrong query. Control: the wrong query alone fails.
pub(crate) mod postgresql_a_table_rewritten_again {
    use super::*;

    pub(crate) const PREPROCESS: [&str; 4] = [
        "CREATE TABLE t_old (n integer)",
        "INSERT INTO t_old VALUES (1), (2)",
        "ALTER TABLE t_old ALTER COLUMN n TYPE bigint",
        "CREATE TABLE t_new (n integer)",
    ];
    pub(crate) const GOLD: &str =
        "SELECT pg_relation_filenode('t_old') < 't_new'::regclass::oid AS older";
    pub(crate) const WRONG: &str = "SELECT false AS older";
    pub(crate) const LEVER: [&str; 2] = [
        "ALTER TABLE t_old ALTER COLUMN n TYPE bigint USING n + 0",
        WRONG,
    ];

    /// After round 47's fix (the whitelist, `livesql/stateless.rs`) the item is not judged: its preprocess's `ALTER TABLE`
    /// is outside the whitelist
    /// (the documented cost, docs/SECURITY.md), so the lever fails with every prediction.
    #[test]
    fn postgresql_a_table_rewritten_again_does_not_pass_a_gold_reading_its_file_number() {
        let found = verdicts(&pg_run(), (&PREPROCESS, GOLD), WRONG, &LEVER);
        assert_eq!(found, [false; 3], "not judged: {found:?}");
    }
}

/// Class 3, MariaDB (round 37's fix reads a system-versioned table `FOR SYSTEM_TIME ALL`, but
/// hashes its visible columns only: `data_digest.rs::mysql_hashed` takes the columns from
/// `information_schema.columns`, where the implicit period columns `ROW_START` / `ROW_END` are
/// not). So the history's values are compared as a multiset and its periods not at all: a
/// prediction that makes the same versions again has versions that start later. Set-up: the
/// lever item, its preprocess making `price_log` `WITH SYSTEM VERSIONING` with the price 10,
/// 11, then 10 again, then stamping `audit.at`; gold `SELECT COUNT(*) AS n FROM price_log FOR
/// SYSTEM_TIME ALL WHERE ROW_START > (SELECT at FROM audit)` (0: every version is older than
/// the stamp), wrong `SELECT 3 AS n`. Levers: `DELETE HISTORY` and the price set to 11 and back
/// to 10 (refused by the server: the clone's user lacks the privilege); the table dropped and
/// made again with the same three versions (all newer than the stamp), then the wrong query.
/// Control: the wrong query alone fails.
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

    /// After round 47's fix (the whitelist, `livesql/stateless.rs`) the item is not judged: the
    /// parser does not read `WITH SYSTEM VERSIONING`, and a preprocess it cannot read is outside
    /// the whitelist (the documented cost). A template's versioned table is refused at start
    /// (`livesql_my`), so no judged item has one; both levers fail with every other prediction.
    #[test]
    fn mariadb_history_deleted_and_made_again_does_not_pass_a_gold_reading_its_periods() {
        let found = verdicts(&my_run(), (&PREPROCESS, GOLD), WRONG, &DELETED);
        assert_eq!(found, [false; 3], "not judged: {found:?}");
    }

    #[test]
    fn mariadb_a_versioned_table_made_again_does_not_pass_a_gold_reading_its_periods() {
        let found = verdicts(&my_run(), (&PREPROCESS, GOLD), WRONG, &LEVER);
        assert_eq!(found, [false; 3], "not judged: {found:?}");
    }
}

/// Class 3, MariaDB (round 36's `FLOAT` lever, one type over: a `DOUBLE`). Round 36's fix
/// hashes a `FLOAT` as a double (`data_digest.rs::exact`: `(v + 0e0)`), and every other value
/// as `HEX(CAST(v AS BINARY))`, MariaDB's text of it. If that text holds fewer digits than a
/// double needs to be read back (17), two doubles one unit apart read the same. Set-up: the
/// lever item, its preprocess making `readings (id, level DOUBLE)` with levels 0.3 and 7.25,
/// gold `SELECT id FROM readings WHERE level > 0.3e0` (one row), wrong `... level >= 0.3e0`
/// (two). Lever: `UPDATE readings SET level = 0.1e0 + 0.2e0 WHERE id = 1`
/// (0.30000000000000004), then the wrong query. Control: the wrong query alone fails.
pub(crate) mod mariadb_a_double_beyond_its_printed_digits {
    use super::*;

    pub(crate) const PREPROCESS: [&str; 2] = [
        "CREATE TABLE readings (id INT PRIMARY KEY, level DOUBLE)",
        "INSERT INTO readings VALUES (1, 0.3e0), (2, 7.25e0)",
    ];
    pub(crate) const GOLD: &str = "SELECT id FROM readings WHERE level > 0.3e0";
    pub(crate) const WRONG: &str = "SELECT id FROM readings WHERE level >= 0.3e0";
    pub(crate) const LEVER: [&str; 2] = [
        "UPDATE readings SET level = 0.1e0 + 0.2e0 WHERE id = 1",
        WRONG,
    ];

    #[test]
    fn mariadb_a_double_one_unit_up_does_not_pass_a_gold_comparing_it() {
        let found = verdicts(&my_run(), (&PREPROCESS, GOLD), WRONG, &LEVER);
        assert_secure("UPDATE ... DOUBLE 0.1e0 + 0.2e0", found);
    }
}

/// Class 3, MariaDB (`information_schema` columns left out as volatile:
/// `catalog_rows.rs::MYSQL_VOLATILE` drops `CHECK_TIME`, `LAST_ALTERED` and the like from every
/// row of `mysql_clone_rows`, since they change "by themselves"; but a statement of the
/// prediction's sets them, and a gold reads them). Set-up: the lever item, its preprocess making
/// `stock_log` on MyISAM (or Aria) with one row; gold `SELECT CHECK_TIME IS NULL AS unchecked
/// FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME =
/// 'stock_log'` (1: never checked), wrong `SELECT 0 AS unchecked`. Lever: `CHECK TABLE
/// stock_log` (which stamps `CHECK_TIME`, data and definition unchanged), then the wrong query.
/// The same with a routine's `LAST_ALTERED`: `ALTER PROCEDURE ... COMMENT` with the comment it
/// had, after a second, against a gold comparing it with `CREATED`. Control: the wrong query
/// alone fails.
pub(crate) mod mariadb_volatile_columns_a_statement_sets {
    use super::*;

    pub(crate) const GOLD: &str = "SELECT CHECK_TIME IS NULL AS unchecked FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'stock_log'";
    pub(crate) const WRONG: &str = "SELECT 0 AS unchecked";
    pub(crate) const LEVER: [&str; 2] = ["CHECK TABLE stock_log", WRONG];

    fn preprocess(engine: &str) -> [String; 2] {
        [
            format!("CREATE TABLE stock_log (id INT PRIMARY KEY, stock INT) ENGINE={engine}"),
            "INSERT INTO stock_log VALUES (1, 5)".to_string(),
        ]
    }

    #[test]
    fn mariadb_check_table_on_myisam_does_not_pass_a_gold_reading_check_time() {
        let made = preprocess("MyISAM");
        let made: Vec<&str> = made.iter().map(String::as_str).collect();
        let found = verdicts(&my_run(), (&made, GOLD), WRONG, &LEVER);
        assert_secure("CHECK TABLE (MyISAM)", found);
    }

    #[test]
    fn mariadb_check_table_on_aria_does_not_pass_a_gold_reading_check_time() {
        let made = preprocess("Aria");
        let made: Vec<&str> = made.iter().map(String::as_str).collect();
        let found = verdicts(&my_run(), (&made, GOLD), WRONG, &LEVER);
        assert_secure("CHECK TABLE (Aria)", found);
    }

    pub(crate) const ROUTINE: [&str; 1] = ["CREATE PROCEDURE restock() COMMENT 'restock' SELECT 1"];
    pub(crate) const ROUTINE_GOLD: &str = "SELECT LAST_ALTERED > CREATED AS altered FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_NAME = 'restock'";
    pub(crate) const ROUTINE_WRONG: &str = "SELECT 1 AS altered";
    pub(crate) const ROUTINE_LEVER: [&str; 3] = [
        "DO SLEEP(1.2)",
        "ALTER PROCEDURE restock COMMENT 'restock'",
        ROUTINE_WRONG,
    ];

    /// After round 47's fix (the whitelist, `livesql/stateless.rs`) the item is not judged: the parser does not read its
    /// preprocess's MariaDB `CREATE PROCEDURE`
    /// (the documented cost, docs/SECURITY.md), so the lever fails with every prediction.
    #[test]
    fn mariadb_a_routine_altered_to_what_it_was_does_not_pass_a_gold_reading_last_altered() {
        let found = verdicts(
            &my_run(),
            (&ROUTINE, ROUTINE_GOLD),
            ROUTINE_WRONG,
            &ROUTINE_LEVER,
        );
        assert_eq!(found, [false; 3], "not judged: {found:?}");
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
        let server = servers::postgres();
        crate::livesql_pg::load_databases(server);
        attempt(&PG, server, (&PREPROCESS, GOLD), WRONG, &LEVER);
    }

    #[test]
    fn postgresql_a_domain_check_named_like_a_temporary_schema_does_not_pass_the_gate() {
        use super::postgresql_a_domain_check_named_like_a_temporary_schema::{
            GOLD, LEVER, PREPROCESS, WRONG,
        };
        let server = servers::postgres();
        crate::livesql_pg::load_databases(server);
        attempt(&PG, server, (&PREPROCESS, GOLD), WRONG, &LEVER);
    }

    #[test]
    fn mariadb_check_table_does_not_pass_the_gate() {
        use super::mariadb_volatile_columns_a_statement_sets::{GOLD, LEVER, WRONG};
        let (server, _) = crate::livesql_my_gate::loaded();
        let preprocess = [
            "CREATE TABLE stock_log (id INT PRIMARY KEY, stock INT) ENGINE=MyISAM",
            "INSERT INTO stock_log VALUES (1, 5)",
        ];
        attempt(&MY, server, (&preprocess, GOLD), WRONG, &LEVER);
    }
}

/// Class 1 (an output path the base config names, changed in the pull request's tree): the base
/// config writes the report to `sqlgate-report.md` (`report.output`), and the pull request
/// commits that path as a symbolic link, once to a file outside the workspace and once into
/// `.git` (`.git/config`: a report written there would be the repository's configuration for
/// every later git command of the job). Set-up: round 32's one-item server gate on PostgreSQL
/// (`through_the_gate::based`: the baseline made on `main` with the gold), the pull request
/// predicting a wrong query, judged with `eval --trusted-base`. Secure: no exit 0, and neither
/// target changed. Control: the same pull request without the link exits 1.
mod the_reports_path_linked_out_of_the_workspace {
    use super::*;
    use crate::common::bird_critic_gate::predict;
    use crate::common::{self, repo};
    use crate::livesql_pg_gate::PG;
    use crate::redteam32::through_the_gate::based;
    use std::path::Path;

    const GOLD: &str = "SELECT name FROM products WHERE stock = 0";
    const WRONG: &str = "SELECT name FROM products WHERE stock < 5";

    /// The exit code and output of the pull request predicting [`WRONG`], its tree changed by
    /// `lever` before the commit.
    fn judged(lever: impl Fn(&Path)) -> (Option<i32>, String) {
        let server = servers::postgres();
        crate::livesql_pg::load_databases(server);
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        based(&PG, server, root, GOLD);
        let base = repo::head(root);
        common::git(root, &["checkout", "-qb", "pr"]);
        predict(root, "lever32", &[WRONG]);
        lever(root);
        repo::commit_all(root, "the pull request");
        let args = [&repo::EVAL[..], &["--trusted-base", &base]].concat();
        let run = PG.sqlgate_on(server, root, &args);
        (run.status.code(), common::text(&run))
    }

    /// Replaces the report's path by a link to `target`.
    fn link_report(root: &Path, target: &Path) {
        let report = root.join("sqlgate-report.md");
        let _ = std::fs::remove_file(&report);
        std::os::unix::fs::symlink(target, &report).unwrap();
    }

    #[test]
    fn a_report_linked_outside_the_workspace_is_not_written_there() {
        let (code, said) = judged(|_| {});
        assert_eq!(code, Some(1), "control: {said}");
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("victim.txt");
        std::fs::write(&target, "untouched\n").unwrap();
        let (code, said) = judged(|root| link_report(root, &target));
        eprintln!("{said}");
        assert_ne!(code, Some(0), "WON: passed: {said}");
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            "untouched\n",
            "WON: the report was written outside the workspace: {said}"
        );
    }

    #[test]
    fn a_report_linked_into_dot_git_is_not_written_there() {
        let server = servers::postgres();
        crate::livesql_pg::load_databases(server);
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        based(&PG, server, root, GOLD);
        let base = repo::head(root);
        common::git(root, &["checkout", "-qb", "pr"]);
        predict(root, "lever32", &[WRONG]);
        link_report(root, Path::new(".git/config"));
        repo::commit_all(root, "the pull request");
        let config = std::fs::read_to_string(root.join(".git/config")).unwrap();
        let args = [&repo::EVAL[..], &["--trusted-base", &base]].concat();
        let run = PG.sqlgate_on(server, root, &args);
        let said = common::text(&run);
        eprintln!("{said}");
        assert_ne!(run.status.code(), Some(0), "WON: passed: {said}");
        assert_eq!(
            std::fs::read_to_string(root.join(".git/config")).unwrap(),
            config,
            "WON: the report was written into .git/config: {said}"
        );
    }
}

/// The other side (false fails): honest predictions and preprocesses that this round's levers
/// resemble must still pass. A Query prediction that works through a temporary table (with a
/// `serial` column, so a temporary sequence, and an index), and a preprocess making a
/// SQL-standard function that reads a table, with the gold as the prediction. Secure here: the
/// honest prediction PASSES (and the wrong query fails).
mod honest_predictions_still_pass {
    use super::*;
    use sqlgate::engine::livesql::LiveJudge;

    const GOLD: &str = "SELECT name FROM products WHERE stock = 0";
    const WRONG: &str = "SELECT name FROM products WHERE stock < 5";

    fn honest<J: LiveJudge>(run: &J, preprocess: &[&str], gold: &str, honest: &[&str]) {
        crate::redteam30::assert_honest(verdicts(run, (preprocess, gold), WRONG, honest));
    }

    #[test]
    fn postgresql_a_prediction_through_a_temporary_table_passes() {
        honest(
            &pg_run(),
            &[],
            GOLD,
            &[
                "CREATE TEMP TABLE out_of_stock (n serial PRIMARY KEY, name text)",
                "CREATE INDEX ON out_of_stock (name)",
                "INSERT INTO out_of_stock (name) SELECT name FROM products WHERE stock = 0",
                "SELECT name FROM out_of_stock",
            ],
        );
    }

    /// After round 47's fix (the whitelist, `livesql/stateless.rs`) the item is not judged: the parser does not read a
    /// `BEGIN ATOMIC` body
    /// (the documented cost, docs/SECURITY.md), so the lever fails with every prediction.
    #[test]
    fn postgresql_a_sql_body_reading_a_table_in_the_preprocess_is_not_judged() {
        let gold = "SELECT name FROM products WHERE stock <= empty_level()";
        let preprocess = ["CREATE FUNCTION empty_level() RETURNS integer LANGUAGE sql STABLE BEGIN ATOMIC SELECT min(stock) FROM products; END"];
        let found = verdicts(&pg_run(), (&preprocess, gold), WRONG, &[gold]);
        assert_eq!(found, [false; 3], "not judged: {found:?}");
    }

    #[test]
    fn mariadb_a_prediction_through_a_temporary_table_passes() {
        honest(
            &my_run(),
            &[],
            GOLD,
            &[
                "CREATE TEMPORARY TABLE out_of_stock (n INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(100), KEY (name))",
                "INSERT INTO out_of_stock (name) SELECT name FROM products WHERE stock = 0",
                "SELECT name FROM out_of_stock",
            ],
        );
    }
}

/// Class 2 (the repair path: the base's config does not load, so the pull request's own config
/// runs, held to what the base's baseline recorded: `trust::repair::govern` pins each dataset's
/// overrides, directory suite and prediction files, and the gate settings come from the
/// baseline). Lever: the repairing config moves `dataset.gold` to a file the pull request adds,
/// `alt/items.jsonl`, holding the same item (same `instance_id`, `db_id`, gold) with a test case
/// that passes whatever it is given. Set-up: round 33's repair (round 32's one-item PostgreSQL
/// gate, its baseline made on `main` with the gold; then a direct push breaks `main`'s config
/// with an unknown key), the pull request predicting a wrong query. Secure: no exit 0. Control:
/// the same repair with `gold: items.jsonl` exits 1.
mod a_repair_moves_the_gold_to_a_file_of_its_own {
    use super::*;
    use crate::common::bird_critic_gate::predict;
    use crate::common::{self, repo};
    use crate::livesql_pg_gate::PG;
    use crate::redteam32::through_the_gate::based;

    const GOLD: &str = "SELECT name FROM products WHERE stock = 0";
    const WRONG: &str = "SELECT name FROM products WHERE stock < 5";
    const ANY: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn):\n    return 1\n";

    /// The exit code and output of the repair predicting [`WRONG`], its config reading the gold
    /// from `alt/items.jsonl` when `moved`.
    fn repair(server: &servers::Server, moved: bool) -> (Option<i32>, String) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let config = based(&PG, server, root, GOLD);
        std::fs::write(root.join("sqlgate.yml"), format!("{config}bogus_key: 1\n")).unwrap();
        repo::commit_all(root, "a direct push");
        let base = repo::head(root);
        common::git(root, &["checkout", "-qb", "pr"]);
        let mut repaired = config.clone();
        if moved {
            let line = serde_json::json!({
                "instance_id": "lever32", "db_id": "shop", "category": "Query", "sol_sql": [GOLD],
                "preprocess_sql": [], "clean_up_sql": [], "test_cases": [ANY],
                "issue_sql": [], "conditions": {}, "efficiency": false, "query": "which products?",
            });
            let line = line.to_string().replace("\"db_id\":", "\"db_id\": ");
            std::fs::create_dir_all(root.join("alt")).unwrap();
            std::fs::write(root.join("alt/items.jsonl"), format!("{line}\n")).unwrap();
            assert!(config.contains("  gold: items.jsonl\n"), "{config}");
            repaired = config.replace("  gold: items.jsonl\n", "  gold: alt/items.jsonl\n");
        }
        std::fs::write(root.join("sqlgate.yml"), repaired).unwrap();
        predict(root, "lever32", &[WRONG]);
        repo::commit_all(root, "the repair");
        let args = [&repo::EVAL[..], &["--trusted-base", &base]].concat();
        let run = PG.sqlgate_on(server, root, &args);
        (run.status.code(), common::text(&run))
    }

    #[test]
    fn a_repair_reading_the_gold_from_a_file_it_adds_does_not_pass() {
        let server = servers::postgres();
        crate::livesql_pg::load_databases(server);
        let (code, said) = repair(server, false);
        assert_eq!(code, Some(1), "control: {said}");
        let (code, said) = repair(server, true);
        eprintln!("{said}");
        assert_ne!(code, Some(0), "WON: the repair passed: {said}");
    }
}
