//! Red team round 49 (issue 44): rounds 47's and 48's preprocess whitelist
//! (`crates/sqlgate-engine/src/engine/livesql/stateless.rs`), what a whitelisted statement runs
//! that its text's kind does not say.
//!
//! The attempts:
//! - PostgreSQL: a partition of a table the preprocess made, whose bound (`FOR VALUES IN
//!   (...)`) is an expression PostgreSQL evaluates once, on the preprocess's session, when the
//!   partition is made: `set_config(..., false)` there sets the session;
//! - PostgreSQL: a partitioned table whose partition key is an expression (a whitelisted
//!   function's call), run on every row a whitelisted literal `INSERT` routes;
//! - PostgreSQL: an assignment cast of the database (`integer` to `text`) run by a whitelisted
//!   literal `INSERT` into a `TEXT` column;
//! - PostgreSQL: `Made::key` folds an unquoted non-ASCII name (`É`) that the server does not
//!   fold, so a literal `INSERT` "into the table the preprocess made" (`"é"`) reaches a table of
//!   the database with a trigger;
//! - class 2: the name-fold lever on the repair path's SQLite engine (contained);
//! - class 4: a forged shard committed under a folder whose name is not UTF-8, behind a
//!   committed link `shards`.
//!
//! Every test asserts the SECURE outcome and runs its control: a failing test is a win.
//! Report: `/work/notes/redteam49.md`.
//!
//! After the lead's fixes (4030037) every attempt is contained: partitioned tables and
//! partitions are outside the whitelist, `Made::key` folds only ASCII letters on PostgreSQL, a
//! database with a user-defined cast (operator, operator class or family, conversion) is
//! refused at start, and a repository path that is not UTF-8 is an error. The gate run of the
//! partition-bound item (exit 0) is gone with the item, which is not judged now and which no
//! pull request can regress.

use sqlgate::engine::livesql::Profile;

use crate::redteam46::{judged, line};

/// Round 48's test case on PostgreSQL: no Canteen sits outside the catalogue the session notes
/// (`current_setting('shop.catalogue', true)`, `NULL` on a session without it).
pub(crate) const IN_NOTED_CATALOGUE: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn, conditions=None):\n    res = execute_queries([\"SELECT count(*) FROM products WHERE name = 'Canteen'\"], db_name, conn, None, '')\n    assert not res[1] and res[0][0][0] == 1, f'found {res[0]}'\n    res = execute_queries([\"SELECT count(*) FROM products WHERE name = 'Canteen' AND category <> current_setting('shop.catalogue', true)\"], db_name, conn, None, '')\n    assert not res[1] and res[0][0][0] == 0, f'outside the catalogue: {res[0]}'\n    return 1\n";

/// The gold, an honest and a wrong (kitchen) insert of the Canteen.
pub(crate) const CANTEENS: [&str; 3] = [
    "INSERT INTO products (id, name, category, price, stock) VALUES (11, 'Canteen', 'outdoor', 12.5, 3)",
    "INSERT INTO products (id, name, category, price, stock) VALUES (11, 'Canteen', 'outdoor', 11.0, 3)",
    "INSERT INTO products (id, name, category, price, stock) VALUES (11, 'Canteen', 'kitchen', 12.5, 3)",
];

/// Judges [`CANTEENS`] on a one-item PostgreSQL run of `preprocess` with
/// [`IN_NOTED_CATALOGUE`]: asserts the control (bird_critic: gold, honest and wrong
/// `[T, T, F]`) and that the wrong insert fails bird_critic_sound (the secure outcome).
pub(crate) fn assert_wrong_canteen_fails(preprocess: &[&str]) {
    let run = crate::redteam30::pg_run();
    let item = line("Management", preprocess, &CANTEENS[..1], IN_NOTED_CATALOGUE);
    let three = |profile| CANTEENS.map(|p| judged(&run, &item, &[p], profile));
    assert_eq!(
        three(Profile::BirdCritic),
        [true, true, false],
        "control: gold, honest and wrong under bird_critic (the preprocess noted the catalogue)"
    );
    let sound = three(Profile::BirdCriticSound);
    assert!(
        !sound[2],
        "WON: the wrong insert passed bird_critic_sound ({sound:?})"
    );
}

/// [`assert_wrong_canteen_fails`] on `db`, a copy of the test `shop` database with the
/// administrator's `preparation` (SECURITY.md, "Threat model"), dropped after: contained too
/// when the run refuses the database at start.
pub(crate) fn assert_wrong_canteen_fails_on(db: &str, preparation: &str, preprocess: &[&str]) {
    use sqlgate::engine::livesql::postgres::PgRun;
    let server = crate::common::servers::postgres();
    let script =
        std::fs::read_to_string(crate::livesql_pg::corpus_dir().join("db/shop.sql")).unwrap();
    server.recreate_database(db, &format!("{script}\n{preparation}"));
    let ids = [db.to_string()].into_iter().collect();
    let started = PgRun::start(crate::livesql_pg::settings(server), &ids);
    let outcome = started.map(|run| {
        let item = line("Management", preprocess, &CANTEENS[..1], IN_NOTED_CATALOGUE)
            .replace("\"db_id\":\"shop\"", &format!("\"db_id\":\"{db}\""));
        let three = |profile| CANTEENS.map(|p| judged(&run, &item, &[p], profile));
        (three(Profile::BirdCritic), three(Profile::BirdCriticSound))
    });
    let system = server.system_database();
    server.admin_sql(system, &format!("DROP DATABASE IF EXISTS {db}"));
    let (official, sound) = match outcome {
        Ok(verdicts) => verdicts,
        Err(refused) => {
            eprintln!("contained: the run refused the database at start: {refused}");
            return;
        }
    };
    assert_eq!(
        official,
        [true, true, false],
        "control: gold, honest and wrong under bird_critic (the preparation noted the catalogue)"
    );
    assert!(
        !sound[2],
        "WON: the wrong insert passed bird_critic_sound ({sound:?})"
    );
}

/// Class 3, PostgreSQL: a partition bound is an expression evaluated when the partition is
/// made. `plain_table` checks that a `PARTITION OF` names a table the preprocess made, not its
/// `FOR VALUES` (`CreateTable::for_values`); PostgreSQL (12 and later) evaluates any
/// variable-free bound expression, volatile ones included, once, on the session running the
/// `CREATE TABLE`. Set-up: round 48's item (the test case reads `current_setting
/// ('shop.catalogue', true)`), its preprocess a list-partitioned `notes` table and its partition
/// whose bound is `set_config('shop.catalogue', 'outdoor', false)`. Lever: the wrong (kitchen)
/// insert; on the sound flow's new session the setting is `NULL`.
mod postgresql_a_partition_bound_evaluated_on_the_preprocess_session {
    #[test]
    fn postgresql_a_partition_bound_setting_the_session_does_not_pass_a_wrong_insert() {
        super::assert_wrong_canteen_fails(&[
            "CREATE TABLE notes (catalogue TEXT) PARTITION BY LIST (catalogue)",
            "CREATE TABLE notes_outdoor PARTITION OF notes FOR VALUES IN (set_config('shop.catalogue', 'outdoor', false))",
        ]);
    }
}

/// Class 3, PostgreSQL: a partition key is an expression run on every row routed into the
/// table. `plain_table` does not read `CreateTable::partition_by`, so `PARTITION BY LIST
/// (note(catalogue))` is whitelisted, `note` a whitelisted `CREATE FUNCTION` (declared
/// `IMMUTABLE`, as a partition key wants, and setting the session all the same), and the
/// literal `INSERT` into the table the preprocess made routes its row through it. Set-up: as
/// above; the preprocess the function, the table, its `DEFAULT` partition and one literal row.
/// Lever: the wrong (kitchen) insert.
mod postgresql_a_partition_key_run_by_a_whitelisted_insert {
    #[test]
    fn postgresql_a_partition_key_setting_the_session_does_not_pass_a_wrong_insert() {
        super::assert_wrong_canteen_fails(&[
            "CREATE FUNCTION note(v TEXT) RETURNS TEXT LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN PERFORM set_config('shop.catalogue', v, false); RETURN v; END $$",
            "CREATE TABLE notes (catalogue TEXT) PARTITION BY LIST (note(catalogue))",
            "CREATE TABLE notes_all PARTITION OF notes DEFAULT",
            "INSERT INTO notes VALUES ('outdoor')",
        ]);
    }
}

/// Class 3, PostgreSQL: what a whitelisted literal `INSERT` runs that is not in its text, an
/// assignment cast. The preparation (the administrator's SQL, which the pull request controls:
/// SECURITY.md, "Threat model") gives the database a cast from `integer` to `text` (none is in
/// `pg_cast`: PostgreSQL converts through text I/O, so `CREATE CAST` may add one) `AS
/// ASSIGNMENT`, whose function notes the catalogue on the session; every clone copies it.
/// Set-up: a copy of the test `shop` database (`shopcast`, dropped by the test) with that cast;
/// round 48's item on it; the preprocess a plain `CREATE TABLE staging (c TEXT)` and the literal
/// `INSERT INTO staging VALUES (1)`, whose integer the cast's function turns into the column's
/// text on the preprocess's session. Lever: the wrong (kitchen) insert.
mod postgresql_an_assignment_cast_behind_a_whitelisted_insert {
    use super::*;

    const CAST: &str = "CREATE FUNCTION note_catalogue(n integer) RETURNS text LANGUAGE plpgsql AS $$ BEGIN PERFORM set_config('shop.catalogue', 'outdoor', false); RETURN format('%s', n); END $$; CREATE CAST (integer AS text) WITH FUNCTION note_catalogue(integer) AS ASSIGNMENT;";

    #[test]
    fn postgresql_an_assignment_cast_setting_the_session_does_not_pass_a_wrong_insert() {
        let preprocess = [
            "CREATE TABLE staging (c TEXT)",
            "INSERT INTO staging VALUES (1)",
        ];
        assert_wrong_canteen_fails_on("shopcast", CAST, &preprocess);
    }
}

/// Class 3, PostgreSQL: the name matching of "a table the preprocess made"
/// (`stateless.rs::Made::key`). The key folds an unquoted name with Rust's `to_lowercase`,
/// which folds every letter; PostgreSQL folds only ASCII letters in a UTF-8 database
/// (`downcase_identifier`), so the unquoted `É` is the table `"É"` to the server and the key
/// `é` to the whitelist, the key of the table `"é"` the preprocess made. Set-up: a copy of the
/// test `shop` database (`shopcase`, dropped by the test) whose preparation (SECURITY.md,
/// "Threat model") has a table `"É"` with a row trigger noting the catalogue on the session;
/// round 48's item on it; the preprocess `CREATE TABLE "é" (a INT)` and `INSERT INTO É VALUES
/// (1)`, which the whitelist reads as literal rows into the table it made and the server runs
/// into the database's `"É"`, firing its trigger. Lever: the wrong (kitchen) insert.
mod postgresql_a_name_folded_otherwise_than_the_server_folds_it {
    use super::*;

    const TABLE: &str = "CREATE TABLE \"É\" (a INT); CREATE FUNCTION note_catalogue() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM set_config('shop.catalogue', 'outdoor', false); RETURN NEW; END $$; CREATE TRIGGER note_catalogue BEFORE INSERT ON \"É\" FOR EACH ROW EXECUTE FUNCTION note_catalogue();";

    #[test]
    fn postgresql_an_insert_into_a_table_of_the_database_named_like_a_made_one_does_not_pass_a_wrong_insert(
    ) {
        let preprocess = ["CREATE TABLE \"é\" (a INT)", "INSERT INTO É VALUES (1)"];
        assert_wrong_canteen_fails_on("shopcase", TABLE, &preprocess);
    }
}

/// Class 4, a forged shard merged in a pull-request run outside Actions, round 21's set-up
/// (`redteam21::shard_in_a_submodule::merged`). Round 22 committed `shards` as a link to a
/// folder holding the forged shard, and round 48 a link through `/proc/self/cwd`; both are
/// caught because `trust::refuse_committed_shards` also asks git about the resolved path. The
/// lever here: the folder's name is not UTF-8 (`f\xff`), and the repository path of the resolved
/// file (`input::trusted::repo_path`) is built with `to_string_lossy`, so the pathspec git is
/// asked about (`f\u{fffd}/1.jsonl`) names no file of the index. Committed: the forged shard
/// at `f\xff/1.jsonl` and the link `shards` -> `f\xff`. Secure: no exit 0.
mod shard_under_a_folder_named_otherwise_than_utf8 {
    use crate::common::repo;
    use crate::redteam21::shard_in_a_submodule::merged;
    use std::os::unix::ffi::OsStrExt;

    /// Commits the forged shard at `folder/1.jsonl` and the link `shards` -> `folder`.
    fn linked(folder: &'static [u8]) -> (Option<i32>, String) {
        merged(move |root, shard| {
            let folder = std::ffi::OsStr::from_bytes(folder);
            std::fs::create_dir_all(root.join(folder)).unwrap();
            std::fs::write(root.join(folder).join("1.jsonl"), shard).unwrap();
            std::os::unix::fs::symlink(folder, root.join("shards")).unwrap();
            repo::commit_all(root, "a shard under a linked folder");
        })
    }

    /// The control: the same link to a folder named in UTF-8 (round 22's lever) is refused.
    #[test]
    fn control_a_forged_shard_under_a_linked_utf8_folder_is_refused() {
        let (code, out) = linked(b"forged");
        assert_eq!(code, Some(2), "{out}");
        crate::common::assert_contains(&out, &["is a file of the pull request's tree"]);
    }

    #[test]
    fn a_forged_shard_under_a_folder_whose_name_is_not_utf8_is_refused() {
        let (code, out) = linked(b"f\xff");
        eprintln!("{out}");
        assert_ne!(code, Some(0), "WON: merged to exit 0: {out}");
    }
}

/// Class 2 (the repair path's SQLite livesql engine): [`postgresql_a_name_folded_otherwise_than_the_server_folds_it`]
/// on SQLite, which folds only ASCII letters too. Set-up: the test `shop` with a table `É`
/// whose row trigger files every product under `kitchen` (`UPDATE main.products`); a Management
/// item adding the Canteen to `outdoor`, its test case reading the Canteen's category; the
/// preprocess `CREATE TABLE "é" (a INT)` and `INSERT INTO É VALUES (1)`. On SQLite
/// `Made::key` keeps the name as written, so `É` is not the made `é` and the whitelist refuses
/// the `INSERT` (the item is not judged). Secure: the wrong prediction fails
/// bird_critic_sound. Control: bird_critic judges gold, honest and wrong `[T, T, F]`.
pub(crate) mod sqlite_a_name_folded_otherwise_than_the_engine_folds_it {
    use crate::redteam46::{sqlite_judged, sqlite_shop};
    use sqlgate::engine::livesql::Profile;

    const OUTDOOR: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn, conditions=None):\n    res = execute_queries([\"SELECT category FROM products WHERE name = 'Canteen'\"], db_name, conn, None, '')\n    assert not res[1] and res[0] == [('outdoor',)], f'found {res[0]}'\n    return 1\n";

    /// On a `shop` copy whose `table` has the row trigger filing the Canteen under `kitchen`
    /// (`table_sql` makes both), a Management item adding it to `outdoor` after `preprocess`:
    /// asserts the control (bird_critic `[T, T, F]`) and the wrong category failing
    /// bird_critic_sound.
    pub(crate) fn assert_refiled_canteen_fails(table_sql: &str, preprocess: &[&str]) {
        let folder = tempfile::tempdir().unwrap();
        let template = sqlite_shop(folder.path());
        let db = rusqlite::Connection::open(&template).unwrap();
        db.execute_batch(table_sql).unwrap();
        drop(db);
        let canteens = [
            "INSERT INTO main.products (name, category, price, stock) VALUES ('Canteen', 'outdoor', 12.5, 3)",
            "INSERT INTO main.products (name, category, price, stock) VALUES ('Canteen', 'outdoor', 11.0, 3)",
            "INSERT INTO main.products (name, category, price, stock) VALUES ('Canteen', 'camping', 12.5, 3)",
        ];
        let item = crate::redteam46::line("Management", preprocess, &canteens[..1], OUTDOOR);
        let three = |profile| canteens.map(|p| sqlite_judged(&template, &item, &[p], profile));
        assert_eq!(
            three(Profile::BirdCritic),
            [true, true, false],
            "control: the official profile"
        );
        let sound = three(Profile::BirdCriticSound);
        assert!(
            !sound[2],
            "WON: the wrong prediction passed bird_critic_sound ({sound:?})"
        );
    }

    #[test]
    fn sqlite_an_insert_into_a_table_of_the_database_named_like_a_made_one_is_not_judged() {
        assert_refiled_canteen_fails(
            "CREATE TABLE \"É\" (a INT); CREATE TRIGGER refile AFTER INSERT ON \"É\" BEGIN UPDATE products SET category = 'kitchen' WHERE name = 'Canteen'; END;",
            &["CREATE TABLE \"é\" (a INT)", "INSERT INTO É VALUES (1)"],
        );
    }
}

/// Class 3, PostgreSQL, found by the lead after this round: the whitelist admits built-in type
/// names and clock calls that PostgreSQL resolves through the search path (`text`, `now()`), so
/// a database whose search path puts `pg_catalog` after `public` lets a domain `public.text`
/// (its check calling `set_config`) or a function `public.now()` run behind a whitelisted
/// `CREATE TABLE` / `INSERT`. Set-up: a copy of the test `shop` database (`shoppath`, dropped by
/// the test) with `search_path = public, pg_catalog` and such a `now()`. Secure: the run refuses
/// the database at start (`PgRun::refusal`).
mod postgresql_a_search_path_putting_pg_catalog_last {
    use sqlgate::engine::livesql::postgres::PgRun;

    const SHADOW: &str = "CREATE FUNCTION public.now() RETURNS timestamptz LANGUAGE plpgsql AS $$ BEGIN PERFORM set_config('shop.catalogue', 'outdoor', false); RETURN pg_catalog.now(); END $$; ALTER DATABASE shoppath SET search_path = public, pg_catalog;";

    #[test]
    fn postgresql_a_database_searching_public_first_is_refused_at_start() {
        let server = crate::common::servers::postgres();
        let script =
            std::fs::read_to_string(crate::livesql_pg::corpus_dir().join("db/shop.sql")).unwrap();
        server.recreate_database("shoppath", &format!("{script}\n{SHADOW}"));
        let ids = ["shoppath".to_string()].into_iter().collect();
        let started = PgRun::start(crate::livesql_pg::settings(server), &ids);
        let system = server.system_database();
        server.admin_sql(system, "DROP DATABASE IF EXISTS shoppath");
        let Err(refused) = started else {
            panic!("WON: a database searching `public` before `pg_catalog` was taken");
        };
        assert!(refused.contains("sets the search path"), "{refused}");
    }
}
