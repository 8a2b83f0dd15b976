//! Red team round 50 (issue 44): rounds 47's to 49's preprocess whitelist
//! (`crates/sqlgate-engine/src/engine/livesql/stateless.rs`) and, outside class 3, the shard
//! refusal's git pathspecs.
//!
//! The attempts:
//! - PostgreSQL: a column type the parser knows by a keyword of its own (`STRING`, read as
//!   `DataType::String`, so `built_in_type` holds) that PostgreSQL does not build in: a
//!   whitelisted `CREATE DOMAIN string` of the same preprocess whose check calls a whitelisted
//!   function setting the session, run by the whitelisted literal `INSERT`;
//! - PostgreSQL: the same domain behind a typed string (`STRING 'outdoor'`) in the literal
//!   `INSERT`'s row, into a `TEXT` column;
//! - PostgreSQL: `Made::key` joins a name's parts with `.`, so the quoted one-part name
//!   `"public.staging"` (a new table) and the two-part `public.staging` (the database's table,
//!   with a trigger) are one key: a literal `INSERT` "into the table the preprocess made" runs
//!   the database table's trigger;
//! - MariaDB: the same collision (`` `shopdot.staging` `` and `shopdot.staging`), where the
//!   qualifier is a database: the template's, not the clone's;
//! - class 2 (the repair path's SQLite engine): the same dotted-name collision on SQLite
//!   (`"main.products"` and `main.products`);
//! - class 4: a forged shard committed under a folder whose name is a git pathspec with magic
//!   (`:(icase)forged`), behind a committed link `shards` (contained: `trust::git::query` sets
//!   `GIT_LITERAL_PATHSPECS`).
//!
//! Every test asserts the SECURE outcome and runs its control: a failing test is a win.
//! Report: `/work/notes/redteam50.md`.
//!
//! After the lead's fixes (the PostgreSQL types an explicit list of PostgreSQL's own names,
//! `stateless.rs::POSTGRES_BUILT_IN`; made tables matched part by part) every attempt is
//! contained. The gate run of the `STRING` item (exit 0) is gone with the item, which is not
//! judged now and which no pull request can regress.

use crate::redteam46::{judged, line};
use crate::redteam49::assert_wrong_canteen_fails;
use sqlgate::engine::livesql::Profile;

/// The whitelisted function that notes the catalogue on the session running it (round 49's).
const NOTE: &str = "CREATE FUNCTION note(v TEXT) RETURNS BOOLEAN LANGUAGE plpgsql AS $$ BEGIN PERFORM set_config('shop.catalogue', v, false); RETURN true; END $$";

/// The whitelisted domain `string` (a name the parser reads as its own type keyword) whose
/// check runs [`NOTE`]'s function on every value cast to it.
const STRING_DOMAIN: &str = "CREATE DOMAIN string AS TEXT CHECK (note(VALUE))";

/// Class 3, PostgreSQL: `stateless.rs::built_in_type` calls every type the parser does not
/// read as `DataType::Custom` built in. sqlparser reads `STRING` (and `INT64`, `TINYTEXT`,
/// `NVARCHAR`, ...) as types of its own in every dialect, while PostgreSQL has no such type and
/// resolves the name on the search path: to the domain `string` the same preprocess made
/// (`CREATE DOMAIN`, whitelisted), whose check calls the whitelisted plpgsql `note`, which sets
/// `shop.catalogue` on the preprocess's session. Set-up: round 48's item (its test case reads
/// `current_setting('shop.catalogue', true)`), the preprocess the function, the domain, `CREATE
/// TABLE notes (catalogue STRING)` and the literal `INSERT INTO notes VALUES ('outdoor')`.
/// Lever: the wrong (kitchen) insert; on the sound flow's new session the setting is `NULL`.
mod postgresql_a_parser_type_keyword_naming_a_domain {
    #[test]
    fn postgresql_a_column_of_a_domain_the_parser_calls_built_in_does_not_pass_a_wrong_insert() {
        super::assert_wrong_canteen_fails(&[
            super::NOTE,
            super::STRING_DOMAIN,
            "CREATE TABLE notes (catalogue STRING)",
            "INSERT INTO notes VALUES ('outdoor')",
        ]);
    }
}

/// Class 3, PostgreSQL: `stateless.rs::literal` takes a typed string whose type
/// `built_in_type` calls built in, so `STRING 'outdoor'` is a literal to the whitelist; to
/// PostgreSQL it is a value of the domain `string`, cast (and checked: `note` runs) on the
/// preprocess's session. Set-up: as above, the made table's column `TEXT`, the row `(STRING
/// 'outdoor')`. Lever: the wrong (kitchen) insert.
mod postgresql_a_typed_string_of_a_domain_the_parser_calls_built_in {
    #[test]
    fn postgresql_a_typed_string_of_a_domain_the_parser_calls_built_in_does_not_pass_a_wrong_insert(
    ) {
        super::assert_wrong_canteen_fails(&[
            super::NOTE,
            super::STRING_DOMAIN,
            "CREATE TABLE notes (catalogue TEXT)",
            "INSERT INTO notes VALUES (STRING 'outdoor')",
        ]);
    }
}

/// Class 3, PostgreSQL: the name matching of "a table the preprocess made"
/// (`stateless.rs::Made::key`) joins a name's parts, quotes taken off, with `.`: the quoted
/// one-part name `"public.staging"` and the two-part `public.staging` both have the key
/// `public.staging`. So after `CREATE TABLE "public.staging" (a INT)` (a new table of that
/// odd name in `public`), `INSERT INTO public.staging VALUES (1)` is a literal insert "into the
/// table the preprocess made" to the whitelist, and to the server an insert into the
/// database's own `staging`, whose row trigger (the preparation's: SECURITY.md, "Threat model")
/// notes the catalogue on the preprocess's session. Set-up: a copy of the test `shop`
/// (`shopdot`, dropped by the test) with that table and trigger; round 48's item on it.
/// Lever: the wrong (kitchen) insert.
mod postgresql_a_dotted_name_keyed_like_a_qualified_one {

    const TABLE: &str = "CREATE TABLE staging (a INT); CREATE FUNCTION note_catalogue() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM set_config('shop.catalogue', 'outdoor', false); RETURN NEW; END $$; CREATE TRIGGER note_catalogue BEFORE INSERT ON staging FOR EACH ROW EXECUTE FUNCTION note_catalogue();";

    #[test]
    fn postgresql_an_insert_into_a_database_table_keyed_like_a_made_one_does_not_pass_a_wrong_insert(
    ) {
        let preprocess = [
            "CREATE TABLE \"public.staging\" (a INT)",
            "INSERT INTO public.staging VALUES (1)",
        ];
        crate::redteam49::assert_wrong_canteen_fails_on("shopdot", TABLE, &preprocess);
    }
}

/// Class 3, MariaDB: [`postgresql_a_dotted_name_keyed_like_a_qualified_one`] on MariaDB, where
/// `Made::key` keeps names as written: `` CREATE TABLE `shopdot.staging` (a INT) `` and
/// `INSERT INTO shopdot.staging VALUES (1)` share the key `shopdot.staging`. The qualifier is a
/// database there, the item's template (`shopdot`, a copy of the test `shop` whose `staging`
/// has a row trigger setting `@catalogue`), not the clone the item runs on. Set-up: round 48's
/// MariaDB item (its test case counts Canteens outside `@catalogue`) on `shopdot`. Lever: the
/// wrong (kitchen) insert. Secure: it fails bird_critic_sound. Contained: a database with a
/// trigger is refused at start (only base tables are copied), and without one the insert into
/// the template is denied to the clone's user, so the item is not judged.
mod mariadb_a_dotted_name_keyed_like_a_qualified_one {
    use super::*;
    use crate::redteam49::CANTEENS;
    use sqlgate::engine::livesql::mysql::MyRun;

    const IN_CATALOGUE: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn, conditions=None):\n    res = execute_queries([\"SELECT count(*) FROM products WHERE name = 'Canteen'\"], db_name, conn, None, '')\n    assert not res[1] and res[0][0][0] == 1, f'found {res[0]}'\n    res = execute_queries([\"SELECT count(*) FROM products WHERE name = 'Canteen' AND category <> @catalogue\"], db_name, conn, None, '')\n    assert not res[1] and res[0][0][0] == 0, f'outside the catalogue: {res[0]}'\n    return 1\n";

    const TABLE: &str = "CREATE TABLE staging (a INT);";
    const TRIGGER: &str =
        "CREATE TRIGGER note_catalogue BEFORE INSERT ON staging FOR EACH ROW SET @catalogue = 'outdoor';";

    /// The official and the sound verdicts of gold, honest and wrong.
    type Verdicts = ([bool; 3], [bool; 3]);

    /// Runs the item on a copy `shopdot` of `shop` with `extra` (the template's `staging`);
    /// the verdicts (official, sound), or why the run refused the database, and the rows the
    /// template's `staging` holds afterwards.
    fn run(extra: &str) -> (Result<Verdicts, String>, String) {
        let server = crate::common::servers::mariadb();
        let script =
            std::fs::read_to_string(crate::livesql_my::corpus_dir().join("db/shop.sql")).unwrap();
        server.recreate_database("shopdot", &format!("{script}\n{extra}"));
        let ids = ["shopdot".to_string()].into_iter().collect();
        let started = MyRun::start(crate::livesql_my::settings(server), &ids);
        let outcome = started.map(|run| {
            let preprocess = [
                "CREATE TABLE `shopdot.staging` (a INT)",
                "INSERT INTO shopdot.staging VALUES (1)",
            ];
            let item = line("Management", &preprocess, &CANTEENS[..1], IN_CATALOGUE)
                .replace("\"db_id\":\"shop\"", "\"db_id\":\"shopdot\"");
            let three = |profile| CANTEENS.map(|p| judged(&run, &item, &[p], profile));
            (three(Profile::BirdCritic), three(Profile::BirdCriticSound))
        });
        let rows = server.admin_sql("shopdot", "SELECT count(*) FROM staging");
        server.admin_sql(server.system_database(), "DROP DATABASE IF EXISTS shopdot");
        (outcome.map_err(|e| e.to_string()), rows)
    }

    /// With the trigger: the run refuses the database at start (only base tables are copied).
    #[test]
    fn mariadb_an_insert_into_the_templates_table_keyed_like_a_made_one_does_not_pass_a_wrong_insert(
    ) {
        let (outcome, _) = run(&format!("{TABLE} {TRIGGER}"));
        match outcome {
            Err(refused) => {
                eprintln!("contained: the run refused the database at start: {refused}")
            }
            Ok((_, sound)) => assert!(
                !sound[2],
                "WON: the wrong insert passed bird_critic_sound ({sound:?})"
            ),
        }
    }

    /// Without the trigger: the preprocess's insert must not reach the template (its `staging`
    /// keeps no row), and the wrong insert fails bird_critic_sound. Seen: the clone's user may
    /// not insert into the template (error 1142), so the item is not judged under the sound
    /// profile (`[F, F, F]`); bird_critic ignores the failed preprocess (`[T, T, T]`, the test
    /// case reading a `NULL` `@catalogue`), the official behaviour.
    #[test]
    fn mariadb_the_preprocess_does_not_write_the_template() {
        let (outcome, rows) = run(TABLE);
        let (official, sound) = outcome.expect("the database without a trigger is taken");
        eprintln!("official {official:?}, sound {sound:?}, rows in the template's staging: {rows}");
        assert_eq!(
            rows.trim(),
            "0",
            "WON: the preprocess wrote the template's staging"
        );
        assert!(
            !sound[2],
            "the wrong insert passed bird_critic_sound ({sound:?})"
        );
    }
}

/// Class 2 (the repair path's SQLite livesql engine): the dotted-name collision of
/// [`postgresql_a_dotted_name_keyed_like_a_qualified_one`] on SQLite, where `Made::key` keeps
/// names as written. Set-up: the test `shop` with a table `staging` whose row trigger files
/// every Canteen under `kitchen` (`UPDATE main.products`) after an insert; a Management item
/// adding the Canteen to `outdoor` (the gold's insert), its test case reading the Canteen's
/// category; the preprocess `CREATE TABLE "main.staging" (a INT)` and `INSERT INTO
/// main.staging VALUES (1)`, whitelisted as an insert into the table it made and run by SQLite
/// into the database's `staging`. Its trigger's effect is on the database (both flows see it),
/// and a SQLite trigger leaves nothing on the session but the counters (a documented limit), so
/// the verdicts should stay the official ones. Secure: the wrong prediction fails
/// bird_critic_sound. Control: bird_critic judges gold, honest and wrong `[T, T, F]`.
mod sqlite_a_dotted_name_keyed_like_a_qualified_one {
    #[test]
    fn sqlite_an_insert_into_a_database_table_keyed_like_a_made_one_changes_no_verdict() {
        crate::redteam49::sqlite_a_name_folded_otherwise_than_the_engine_folds_it::assert_refiled_canteen_fails(
            "CREATE TABLE staging (a INT); CREATE TRIGGER refile AFTER INSERT ON staging BEGIN UPDATE products SET category = 'kitchen' WHERE name = 'Canteen'; END;",
            &["CREATE TABLE \"main.staging\" (a INT)", "INSERT INTO main.staging VALUES (1)"],
        );
    }
}

/// Class 4 (shards / `merge`): `src/trust/mod.rs::refuse_committed_shards` asks
/// `src/trust/base.rs::tracks` whether `shards/1.jsonl` is committed, as written and as the file
/// system resolves it; `tracks` hands the repository path to `git ls-files --stage -- <path>`
/// as a pathspec, and a pathspec that begins with `:(` is read with magic. Set-up: round 21's
/// forged shard committed at `:(icase)forged/1.jsonl` and a committed link `shards` ->
/// `:(icase)forged`. As written, `shards/1.jsonl` is below a link (mode 120000, not listed);
/// resolved, `:(icase)forged/1.jsonl` is the pathspec "`forged/1.jsonl` in any case", which
/// lists nothing. Secure: the merge refuses the shard (exit 2). Control: the same link to a
/// folder named `forged` (round 22's lever) is refused.
mod shard_under_a_folder_named_like_pathspec_magic {
    use crate::common::repo;
    use crate::redteam21::shard_in_a_submodule::merged;

    /// Commits the forged shard at `folder/1.jsonl` and the link `shards` -> `folder`.
    fn linked(folder: &'static str) -> (Option<i32>, String) {
        merged(move |root, shard| {
            std::fs::create_dir_all(root.join(folder)).unwrap();
            std::fs::write(root.join(folder).join("1.jsonl"), shard).unwrap();
            std::os::unix::fs::symlink(folder, root.join("shards")).unwrap();
            repo::commit_all(root, "a shard under a linked folder");
        })
    }

    #[test]
    fn control_a_forged_shard_under_a_linked_folder_is_refused() {
        let (code, out) = linked("forged");
        assert_eq!(code, Some(2), "{out}");
        crate::common::assert_contains(&out, &["is a file of the pull request's tree"]);
    }

    #[test]
    fn a_forged_shard_under_a_folder_named_like_pathspec_magic_is_refused() {
        let (code, out) = linked(":(icase)forged");
        eprintln!("{out}");
        assert_ne!(code, Some(0), "WON: merged to exit 0: {out}");
        assert_eq!(code, Some(2), "{out}");
    }
}
