//! Red team round 33 (issue 44): `bird_critic_sound` on PostgreSQL 15 and MariaDB 10.11 after
//! round 32's fixes (commit 9c225f6: `query_check.rs::gold_writes` by the dialect's lexer, and
//! `query_check::contents` comparing every data-digest entry of the clone, with MariaDB's
//! `structure::mysql_levers` of the clone added; a PostgreSQL clone's digest leaves out the
//! built-in catalogs, `Reach::Clone`). Every test asserts the SECURE outcome and runs its
//! control: a failing test is a win. Report: `/work/notes/redteam33.md`.
//!
//! The set-up is round 32's lever item: a Query item on `shop` whose one test case rebuilds the
//! gold with `str.format` (`WRAPPED`: a plain `str`, so it runs on a new session to the
//! prediction's clone after the prediction is run again). Only the Query data check stands
//! between a persistent change of that clone and a pass. What it compares on PostgreSQL is
//! `postgres_digests(.., Reach::Clone)`: the table entries, `:order`, `:settings`
//! (`structure::postgres_settings`) and `:structure` (`structure::postgres_structure`); unlike
//! MariaDB's, **not** `structure::postgres_levers`, which the start-up check refuses.

use crate::common::servers;
use crate::redteam30::{assert_secure, my_run, pg_run};
use crate::redteam32::WRAPPED;
use sqlgate::engine::livesql::{LiveJudge, Profile};
use sqlgate::input::livesql::{parse_items, LiveItem};
use std::path::Path;

/// A Query item on `shop` with the one test case `test` and the gold statements `gold`.
pub(crate) fn item_with(gold: &[&str], test: &str) -> LiveItem {
    let line = serde_json::json!({
        "instance_id": "lever33", "db_id": "shop", "category": "Query", "sol_sql": gold,
        "preprocess_sql": [], "clean_up_sql": [], "test_cases": [test], "issue_sql": [],
        "conditions": {}, "efficiency": false, "query": "which products?",
    });
    parse_items(Path::new("lever33.jsonl"), &format!("{line}\n"))
        .unwrap()
        .remove(0)
}

/// Whether the gold, `wrong` and `lever` pass under `bird_critic_sound`, on an item whose gold
/// is `gold` and whose test case is `test`.
pub(crate) fn verdicts_with<J: LiveJudge>(
    run: &J,
    (gold, test): (&[&str], &str),
    wrong: &str,
    lever: &[&str],
) -> [bool; 3] {
    let item = item_with(gold, test);
    let predictions: [Vec<String>; 3] = [
        gold.iter().map(|s| s.to_string()).collect(),
        vec![wrong.into()],
        lever.iter().map(|s| s.to_string()).collect(),
    ];
    predictions.each_ref().map(|p| {
        let verdict = LiveJudge::judge(run, &item, Some(p), Profile::BirdCriticSound).unwrap();
        eprintln!("{p:?}: {} {}", verdict.success, verdict.message);
        verdict.success
    })
}

/// [`verdicts_with`] for a one-statement gold and [`WRAPPED`].
pub(crate) fn verdicts<J: LiveJudge>(
    run: &J,
    gold: &str,
    wrong: &str,
    lever: &[&str],
) -> [bool; 3] {
    verdicts_with(run, (&[gold], WRAPPED), wrong, lever)
}

/// Class 3 (server state a clone reads that no compared entry holds: row-level security).
/// Set-up: the lever item, gold `SELECT name FROM products WHERE stock = 0` (2 rows), wrong
/// `... stock < 5` (4 rows). Lever: the clone's role owns `products`, so it may
/// `ENABLE` and `FORCE ROW LEVEL SECURITY` on it without a policy: every later session of the
/// role (NOBYPASSRLS) reads no row of `products`, the wrapped gold and the re-run wrong query
/// alike (`[] == []`). The administrator's digest session is a superuser, which bypasses row
/// security, so every table entry and the order entry are unchanged; no policy exists, so the
/// structure entry (`policy ...`) is unchanged; `pg_class.relrowsecurity` /
/// `relforcerowsecurity` is read only by `structure::postgres_levers`, which the start-up check
/// runs and the Query data check does not. Control: the wrong prediction alone fails.
pub(crate) mod postgresql_row_security_outside_the_data_check {
    use super::*;

    pub(crate) const GOLD: &str = "SELECT name FROM products WHERE stock = 0";
    pub(crate) const WRONG: &str = "SELECT name FROM products WHERE stock < 5";
    pub(crate) const LEVER: [&str; 3] = [
        "ALTER TABLE products ENABLE ROW LEVEL SECURITY",
        "ALTER TABLE products FORCE ROW LEVEL SECURITY",
        WRONG,
    ];

    #[test]
    fn postgresql_row_security_forced_on_the_clone_does_not_pass_the_gold() {
        let found = verdicts(&pg_run(), GOLD, WRONG, &LEVER);
        assert_secure("FORCE ROW LEVEL SECURITY", found);
    }
}

/// Class 3 (round 32's collation fix, `structure::postgres_settings`' `collations=`). The
/// settings entry lists each column whose collation is not the database's, but it leaves out a
/// collation *named* `default` (`l.collname <> 'default'`), meaning `pg_catalog."default"`.
/// The clone's role owns schema `public` (`REASSIGN OWNED`), so it may `CREATE COLLATION
/// public."default"` (ICU, `und-x-icu`) and give a column that collation: the column's
/// `format_type` is still `text`, its bytes are the same, the collation is named `default`, and
/// no entry of `postgres_structure` lists user collations (`postgres_levers` does, unrun). The
/// gold of round 32's attempt 4 (`name > 'lantern'`, 0 under the database's `C.UTF-8`) then
/// counts 6, the wrong prediction's `lower(name) >= 'lantern'`. Control: the wrong prediction
/// alone fails, and round 32's plain `COLLATE "und-x-icu"` fails (the fix holds for it).
pub(crate) mod postgresql_a_collation_named_default {
    use super::*;

    pub(crate) const GOLD: &str = "SELECT COUNT(*) FROM products WHERE name > 'lantern'";
    pub(crate) const WRONG: &str = "SELECT COUNT(*) FROM products WHERE lower(name) >= 'lantern'";
    pub(crate) const LEVER: [&str; 3] = [
        "CREATE COLLATION IF NOT EXISTS public.\"default\" (provider = icu, locale = 'und-x-icu')",
        "ALTER TABLE products ALTER COLUMN name TYPE text COLLATE public.\"default\"",
        WRONG,
    ];

    #[test]
    fn postgresql_a_user_collation_named_default_does_not_pass_a_byte_order_gold() {
        let run = pg_run();
        let plain = [
            "ALTER TABLE products ALTER COLUMN name TYPE text COLLATE \"und-x-icu\"",
            WRONG,
        ];
        assert_secure("round 32's collation", verdicts(&run, GOLD, WRONG, &plain));
        assert_secure(
            "a collation named default",
            verdicts(&run, GOLD, WRONG, &LEVER),
        );
    }
}

/// Class 3 (the built-in catalogs a clone's digest leaves out, `Reach::Clone`): `pg_description`
/// is a per-database catalog the clone's role writes with `COMMENT ON` on the objects it owns.
/// No entry of the clone's digests reads it (`catalog_rows` only on a base digest). Set-up: a
/// gold reading a column's comment (`col_description`, NULL on the twin); wrong `SELECT
/// 'in stock'`. Lever: `COMMENT ON COLUMN products.stock IS 'in stock'`. A catalog-reading gold
/// is rare in bird-critic; this measures the reach of `Reach::Clone`. Control: the wrong
/// prediction alone fails.
mod postgresql_a_comment_outside_the_data_check {
    use super::*;

    const GOLD: &str = "SELECT col_description('products'::regclass, 5) AS note";
    const WRONG: &str = "SELECT 'in stock'::text AS note";

    #[test]
    fn postgresql_a_comment_on_the_clone_does_not_pass_a_gold_reading_it() {
        let lever = ["COMMENT ON COLUMN products.stock IS 'in stock'", WRONG];
        let found = verdicts(&pg_run(), GOLD, WRONG, &lever);
        assert_secure("COMMENT ON COLUMN", found);
    }
}

/// Class 3, MariaDB (the clone's contents: table entries, `:order`, `:settings`, `:structure`
/// and `mysql_levers`): a table's comment is in `information_schema.TABLES.TABLE_COMMENT`,
/// which none of them reads (`mysql_structure` keeps `CREATE_OPTIONS`). Set-up: a gold reading
/// it ('' on the twin); wrong `SELECT 'kept'`. Lever: `ALTER TABLE products COMMENT = 'kept'`
/// (the clone's user has `ALTER`). As for PostgreSQL's comment: rare in a gold; it measures the
/// reach. Control: the wrong prediction alone fails.
pub(crate) mod mariadb_a_table_comment_outside_the_data_check {
    use super::*;

    pub(crate) const GOLD: &str = "SELECT TABLE_COMMENT AS note FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'products'";
    pub(crate) const WRONG: &str = "SELECT 'kept' AS note";
    pub(crate) const LEVER: [&str; 2] = ["ALTER TABLE products COMMENT = 'kept'", WRONG];

    #[test]
    fn mariadb_a_table_comment_on_the_clone_does_not_pass_a_gold_reading_it() {
        let found = verdicts(&my_run(), GOLD, WRONG, &LEVER);
        assert_secure("table COMMENT", found);
    }
}

/// Class 3 (round 32's `gold_writes`: "a read gold it still turns off"). A gold whose only
/// writes are to a TEMP table (`CREATE TEMP TABLE oos AS SELECT ...`, then `SELECT ... FROM oos`)
/// changes nothing persistent: its twin holds exactly the template's contents. But its first
/// keyword is `create`, so `gold_writes` is true and the data check is off for the item. Test
/// case `REBUILT`: the gold's statements each led by a comment by `str.format` (plain `str`s,
/// not the gold's words, so one request on the prediction's clone), after the prediction again. Lever:
/// `UPDATE products SET stock = 0 WHERE stock < 5`, then the wrong query. This is SECURITY.md's
/// "left open, by design" for an item whose gold writes, met by a gold that writes nothing the
/// twin keeps. Control: the wrong prediction alone fails.
mod a_gold_writing_only_temporary_objects_turns_the_check_off {
    use super::*;

    const REBUILT: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn):\n    gold = ['/* rebuilt */ {}'.format(s) for s in sol_sqls]\n    pred = execute_queries(pred_sqls, db_name, conn, None, '')\n    res = execute_queries(gold, db_name, conn, None, '')\n    assert not res[1] and sorted(pred[0]) == sorted(res[0]), f'the gold gave {res[0]}'\n    return 1\n";
    const GOLD: [&str; 2] = [
        "CREATE TEMP TABLE oos AS SELECT name FROM products WHERE stock = 0",
        "SELECT name FROM oos",
    ];
    const WRONG: &str = "SELECT name FROM products WHERE stock < 5";
    const REWRITE: &str = "UPDATE products SET stock = 0 WHERE stock < 5";

    #[test]
    fn postgresql_a_gold_with_a_temp_table_is_still_data_checked() {
        let found = verdicts_with(&pg_run(), (&GOLD, REBUILT), WRONG, &[REWRITE, WRONG]);
        assert_secure("TEMP-only gold", found);
    }
}

/// Class 3 through the gate: the PostgreSQL wins above at the CLI, where the verdict that counts
/// is the exit code. Set-up (round 32's `through_the_gate`): a bundled-style bird-critic dataset
/// of ONE Query item (the lever item: [`WRAPPED`] and the gold given), gated on
/// `bird_critic_sound` (`common::bird_critic_gate`'s config without `per_difficulty`), its
/// baseline made on `main` with the gold as the prediction (100); the pull request predicts the
/// lever then the wrong query, judged with `eval --trusted-base <base>`. Control: the pull
/// request predicting the wrong query alone exits 1.
mod through_the_gate {
    use super::*;
    use crate::livesql_pg_gate::PG;
    use crate::redteam32::through_the_gate::{attempt, MY};

    #[test]
    fn postgresql_row_security_forced_on_the_clone_does_not_pass_the_gate() {
        use super::postgresql_row_security_outside_the_data_check::{GOLD, LEVER, WRONG};
        let server = servers::postgres();
        crate::livesql_pg::load_databases(server);
        attempt(&PG, server, GOLD, WRONG, &LEVER);
    }

    #[test]
    fn postgresql_a_collation_named_default_does_not_pass_the_gate() {
        use super::postgresql_a_collation_named_default::{GOLD, LEVER, WRONG};
        let server = servers::postgres();
        crate::livesql_pg::load_databases(server);
        attempt(&PG, server, GOLD, WRONG, &LEVER);
    }

    #[test]
    fn mariadb_a_table_comment_does_not_pass_the_gate() {
        use super::mariadb_a_table_comment_outside_the_data_check::{GOLD, LEVER, WRONG};
        let (server, _) = crate::livesql_my_gate::loaded();
        attempt(&MY, server, GOLD, WRONG, &LEVER);
    }
}

/// Class 2 (the repair path: the base's config does not load, so the pull request's own config
/// runs). SECURITY.md ("The read-only role"): sqlgate refuses a privileged server role "unless
/// the trusted config sets `allow_privileged_role: true`, which a pull request cannot (the base
/// commit's config decides)"; and the base commit's config names the URL's variable. In a
/// repair no base config loads, and `baseline::Settings` records neither `dataset.engine.
/// url_env` nor `allow_privileged_role`. Set-up: round 32's one-item PostgreSQL gate; after the
/// baseline a direct push breaks `main`'s config (an unknown key); the pull request repairs it
/// naming the administrator's variable as the reader (`url_env: TEST_DB_ADMIN_URL`) with
/// `allow_privileged_role: true`, and predicts the gold. Secure: the run refuses the privileged
/// role (exit 2) as it does without `allow_privileged_role` (the control). Found: exit 2, but
/// not by the role rule: the run warns "running anyway because `allow_privileged_role: true`"
/// and then stops because the administrator's data digest (superuser-only settings it reads)
/// differs from the baseline's, which the reader made. The role rule itself is the pull
/// request's to lift in a repair; the baseline's data digest is what contains it.
mod a_repair_chooses_a_privileged_role {
    use super::*;
    use crate::common::bird_critic_gate::predict;
    use crate::common::{self, repo};
    use crate::livesql_pg_gate::PG;
    use crate::redteam32::through_the_gate::based;

    const GOLD: &str = "SELECT name FROM products WHERE stock = 0";

    /// The exit code and all it said of a repair whose config is the gate's with its engine
    /// line replaced by `engine`.
    pub(super) fn repair(
        server: &servers::Server,
        engine: &str,
        env: &[(&str, &str)],
    ) -> (Option<i32>, String) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let config = based(&PG, server, root, GOLD);
        // A direct push breaks the config: it no longer loads.
        std::fs::write(root.join("sqlgate.yml"), format!("{config}bogus_key: 1\n")).unwrap();
        repo::commit_all(root, "a direct push");
        let base = repo::head(root);
        common::git(root, &["checkout", "-qb", "pr"]);
        let engine_line = "  engine: { kind: postgresql, url_env: TEST_DB_URL, admin_url_env: TEST_DB_ADMIN_URL, layout: per_db_id }\n";
        assert!(config.contains(engine_line), "{config}");
        std::fs::write(
            root.join("sqlgate.yml"),
            config.replace(engine_line, &format!("  engine: {engine}\n")),
        )
        .unwrap();
        predict(root, "lever32", &[GOLD]);
        repo::commit_all(root, "the repair");
        let args = [&repo::EVAL[..], &["--trusted-base", &base]].concat();
        let mut command = PG.command_on(server, root, &args);
        command.envs(env.iter().copied());
        let run = command.output().unwrap();
        (run.status.code(), common::text(&run))
    }

    #[test]
    fn a_repair_does_not_allow_a_privileged_role() {
        let server = servers::postgres();
        crate::livesql_pg::load_databases(server);
        let (code, said) = repair(
            server,
            "{ kind: postgresql, url_env: TEST_DB_ADMIN_URL, admin_url_env: TEST_DB_ADMIN_URL, layout: per_db_id }",
            &[],
        );
        eprintln!("control: {said}");
        assert_eq!(
            code,
            Some(2),
            "control: the privileged role refused: {said}"
        );
        let (code, said) = repair(
            server,
            "{ kind: postgresql, url_env: TEST_DB_ADMIN_URL, admin_url_env: TEST_DB_ADMIN_URL, layout: per_db_id, allow_privileged_role: true }",
            &[],
        );
        eprintln!("lever: {said}");
        assert_eq!(
            code,
            Some(2),
            "WON: the repair's own config ran as a privileged role: {said}"
        );
    }
}

/// Class 2 (the repair path, reading secrets): in a repair the pull request's config names the
/// variable sqlgate reads the server's URL from (`dataset.engine.url_env`), so it can name any
/// variable of the job's environment, a secret one included. `server::read_env_url` registers
/// the whole (trimmed) value with the scrubber before using it. Set-up: the repair of
/// [`a_repair_chooses_a_privileged_role`] naming `RT33_TOKEN`, a two-line secret
/// (`ghp_...` then `password=hunter2...`), as the reader. Secure: no part of the secret (its
/// first line, its second, the password) appears in what the run says. Control: the same
/// secret named by no config does not appear either (the harness prints no environment).
mod a_repair_names_a_secret_as_the_url {
    use super::a_repair_chooses_a_privileged_role::repair;
    use super::*;

    const FIRST: &str = "ghp_rt33FirstLineOfTheToken";
    const SECOND: &str = "host=127.0.0.1 password=hunter2rt33 port=1";

    #[test]
    fn a_secret_named_by_a_repair_is_not_shown() {
        let server = servers::postgres();
        crate::livesql_pg::load_databases(server);
        let secret = format!("{FIRST}\n{SECOND}");
        let env = [("RT33_TOKEN", secret.as_str())];
        let (_, control) = repair(
            server,
            "{ kind: postgresql, url_env: TEST_DB_URL, admin_url_env: TEST_DB_ADMIN_URL, layout: per_db_id }",
            &env,
        );
        assert!(!control.contains("hunter2rt33"), "control: {control}");
        let (code, said) = repair(
            server,
            "{ kind: postgresql, url_env: RT33_TOKEN, admin_url_env: TEST_DB_ADMIN_URL, layout: per_db_id }",
            &env,
        );
        eprintln!("lever: {code:?} {said}");
        for part in [FIRST, SECOND, "hunter2rt33", "rt33FirstLine"] {
            assert!(
                !said.contains(part),
                "WON: the repair's run showed `{part}` of the secret: {said}"
            );
        }
    }
}
