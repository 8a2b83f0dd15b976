//! Red team round 48 (issue 44): round 47's fix, the preprocess whitelist
//! (`crates/sqlgate-engine/src/engine/livesql/stateless.rs`), read by sqlparser 0.63 in the
//! engine's dialect, and what the server runs of the same text.
//!
//! The attempts:
//! - MariaDB: `--` before a no-break space is a comment to sqlparser and two minuses to
//!   MariaDB, so a whitelisted literal `INSERT` also sets a user variable the test case reads;
//! - MariaDB and SQLite (the repair path's livesql engine, under `bird_critic_sound` and
//!   `livesql_sound`): the last insert id a whitelisted `INSERT` leaves on the preprocess's
//!   session, read by a test case's own query; on PostgreSQL `currval` of a `SERIAL` column's
//!   sequence, read through a whitelisted function;
//! - PostgreSQL: an event trigger of the database runs behind a whitelisted `CREATE TABLE` and
//!   sets a custom setting on the preprocess's session, read by a test case's own query;
//! - class 4: a forged shard behind a committed link through `/proc/self/cwd` (contained).
//!
//! Every test asserts the SECURE outcome and runs its control: a failing test is a win.
//! Report: `/work/notes/redteam48.md`.
//!
//! After the lead's fixes: a preprocess text with whitespace outside ASCII or a control
//! character is refused (the item is not judged), and a PostgreSQL database with an event
//! trigger is refused at start (`PgRun::refusal`). The last insert id and `currval` read by a
//! test case's own query are a documented limit (docs/SECURITY.md, "session counters read by a
//! test case"): those tests assert it, the wrong update passing the sound profiles.

use sqlgate::engine::livesql::Profile;

use crate::redteam46::{judged, line};

/// Asserts round 48's documented limit (docs/SECURITY.md, session counters read by a test case)
/// on a [`repriced`] item judged by `judge`: the control (`official` passes the gold and the
/// honest update and fails the wrong one), then the wrong update passing `sound`, whose test
/// case reads a new session's counter.
fn assert_counter_limit(
    judge: impl Fn(&str, Profile) -> bool,
    (official, sound): (Profile, Profile),
) {
    let three = |profile| REPRICINGS.map(|p| judge(p, profile));
    assert_eq!(
        three(official),
        [true, true, false],
        "control: gold, honest and wrong under {official:?}"
    );
    assert_eq!(
        three(sound),
        [true; 3],
        "the documented limit: the wrong update passes {sound:?}"
    );
}

/// Class 3, MariaDB: the lexers disagree on `--` followed by a no-break space (U+00A0).
/// sqlparser's MySQL dialect (`requires_single_line_comment_whitespace`) takes `--` as a comment
/// when the next character is `char::is_whitespace`, which U+00A0 is; MariaDB takes it as a
/// comment only before an ASCII space or control character, so `--\u{a0}x` is `- -` and the
/// identifier `\u{a0}x` (a column of the row set earlier). Set-up: round 46's item 3 (the test
/// case checks no Canteen sits outside `@catalogue`), its preprocess a whitelisted staging
/// table and an `INSERT` whose text, after the no-break space, assigns `@catalogue := 'outdoor'`
/// on the preprocess's session: the parser reads `INSERT INTO staging VALUES (1, 2 )`, literal
/// rows into a table the preprocess made. Lever: the wrong (kitchen) insert; on the sound
/// flow's new session `@catalogue` is `NULL` and `category <> NULL` counts nothing.
mod mariadb_a_no_break_space_after_the_comment_dashes {
    use super::*;

    const IN_CATALOGUE: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn, conditions=None):\n    res = execute_queries([\"SELECT count(*) FROM products WHERE name = 'Canteen'\"], db_name, conn, None, '')\n    assert not res[1] and res[0][0][0] == 1, f'found {res[0]}'\n    res = execute_queries([\"SELECT count(*) FROM products WHERE name = 'Canteen' AND category <> @catalogue\"], db_name, conn, None, '')\n    assert not res[1] and res[0][0][0] == 0, f'outside the catalogue: {res[0]}'\n    return 1\n";

    /// The preprocess: the parser sees a staging table and one literal row; MariaDB also sets
    /// `@catalogue` on the preprocess's session.
    pub(crate) const PREPROCESS: [&str; 2] = [
        "CREATE TABLE staging (`\u{a0}x` INT, n INT, c VARCHAR(20))",
        "INSERT INTO staging VALUES (1, 2 --\u{a0}x, @catalogue := 'outdoor'\n)",
    ];

    #[test]
    fn mariadb_a_variable_set_behind_a_no_break_space_does_not_pass_a_wrong_insert() {
        let run = crate::redteam30::my_run();
        let gold = ["INSERT INTO products (id, name, category, price, stock) VALUES (11, 'Canteen', 'outdoor', 12.5, 3)"];
        let item = line("Management", &PREPROCESS, &gold, IN_CATALOGUE);
        let honest = ["INSERT INTO products (id, name, category, price, stock) VALUES (11, 'Canteen', 'outdoor', 11.0, 3)"];
        let wrong = ["INSERT INTO products (id, name, category, price, stock) VALUES (11, 'Canteen', 'kitchen', 12.5, 3)"];
        let official =
            [&gold[..], &honest, &wrong].map(|p| judged(&run, &item, p, Profile::BirdCritic));
        assert_eq!(
            official,
            [true, true, false],
            "control: gold, honest and wrong under bird_critic (the preprocess set @catalogue)"
        );
        let sound =
            [&gold[..], &honest, &wrong].map(|p| judged(&run, &item, p, Profile::BirdCriticSound));
        assert!(
            !sound[2],
            "WON: the wrong insert passed bird_critic_sound ({sound:?})"
        );
    }
}

/// A test case for a Management item repricing the Compass (id 10, outdoor) to 14: the Compass
/// costs 14, and no product outside the catalogue the preprocess registered last (`catalogues`
/// row `last`, the session's last insert id: `last` is `LAST_INSERT_ID()` on MariaDB,
/// `last_insert_rowid()` on SQLite) costs 14.
fn repriced(last: &str) -> String {
    format!("def test_case(pred_sqls, sol_sqls, db_name, conn, conditions=None):\n    res = execute_queries([\"SELECT price FROM products WHERE name = 'Compass'\"], db_name, conn, None, '')\n    assert not res[1] and float(res[0][0][0]) == 14.0, f'found {{res[0]}}'\n    res = execute_queries([\"SELECT count(*) FROM products WHERE price = 14.0 AND category <> (SELECT name FROM catalogues WHERE id = {last})\"], db_name, conn, None, '')\n    assert not res[1] and res[0][0][0] == 0, f'repriced outside the catalogue: {{res[0]}}'\n    return 1\n")
}

/// The gold, the honest and the wrong repricing (the wrong one reprices the Kettle, kitchen, too).
const REPRICINGS: [&str; 3] = [
    "UPDATE products SET price = 14.0 WHERE id = 10",
    "UPDATE products SET price = 14 WHERE name = 'Compass'",
    "UPDATE products SET price = 14.0 WHERE id IN (10, 1)",
];

/// Class 3, MariaDB: the last insert id a whitelisted preprocess leaves, read by a test case's
/// own query (not the gold, which the gold-effect comparison covers). Set-up: a preprocess of
/// the whitelist's own kind, `CREATE TABLE catalogues (id INT AUTO_INCREMENT PRIMARY KEY, name
/// VARCHAR(20))` and `INSERT INTO catalogues (name) VALUES ('outdoor')`, which leaves
/// `LAST_INSERT_ID()` = 1 on its session; the gold reprices the Compass by its key (no
/// generated id, so `LAST_INSERT_ID()` stays); the test case [`repriced`]. Lever: the wrong
/// update repricing the Kettle too: officially the test finds it outside `outdoor`; on the
/// sound flow's new session `LAST_INSERT_ID()` is 0, the subquery `NULL`, and nothing counts.
mod mariadb_the_last_insert_id_of_a_whitelisted_insert {
    use super::*;

    #[test]
    fn mariadb_a_test_reading_the_last_insert_id_passes_a_wrong_update_a_documented_limit() {
        let run = crate::redteam30::my_run();
        let preprocess = [
            "CREATE TABLE catalogues (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(20))",
            "INSERT INTO catalogues (name) VALUES ('outdoor')",
        ];
        let test = repriced("LAST_INSERT_ID()");
        let item = line("Management", &preprocess, &REPRICINGS[..1], &test);
        assert_counter_limit(
            |p, profile| judged(&run, &item, &[p], profile),
            (Profile::BirdCritic, Profile::BirdCriticSound),
        );
    }
}

/// Class 2 (the repair path's SQLite livesql engine, where every item with a preprocess is
/// judged on new connections): the same item on SQLite, the test case reading
/// `last_insert_rowid()` (1 on the preprocess's connection after its whitelisted insert, 0 on a
/// new one; an `UPDATE` leaves it). Lever: the wrong update repricing the Kettle too.
mod sqlite_the_last_insert_rowid_of_a_whitelisted_insert {
    use super::*;
    use crate::redteam46::{sqlite_judged, sqlite_shop};

    /// Under `bird_critic_sound` and under the `livesql_sound` metric (`Profile::Sound`,
    /// `sound::judge`).
    #[test]
    fn sqlite_a_test_reading_the_last_insert_rowid_passes_a_wrong_update_a_documented_limit() {
        let folder = tempfile::tempdir().unwrap();
        let template = sqlite_shop(folder.path());
        let preprocess = [
            "CREATE TABLE catalogues (id INTEGER PRIMARY KEY, name TEXT)",
            "INSERT INTO catalogues (name) VALUES ('outdoor')",
        ];
        let test = repriced("last_insert_rowid()");
        let item = line("Management", &preprocess, &REPRICINGS[..1], &test);
        for profiles in [
            (Profile::BirdCritic, Profile::BirdCriticSound),
            (Profile::Official, Profile::Sound),
        ] {
            assert_counter_limit(
                |p, profile| sqlite_judged(&template, &item, &[p], profile),
                profiles,
            );
        }
    }
}

/// Class 3, PostgreSQL: what a whitelisted `CREATE TABLE` runs that is not in its text. The
/// preparation (the administrator's SQL, which the pull request controls: SECURITY.md, "Threat
/// model") gives the database an event trigger on `ddl_command_end` whose function notes the
/// catalogue on the session (`set_config('shop.catalogue', 'outdoor', false)`); every clone
/// copies it, and the structure digest records it (the baseline's too). Set-up: a copy of the
/// test `shop` database (`shopev`) with that trigger; round 46's item 3 on it, the test case
/// reading `current_setting('shop.catalogue', true)` instead of `@catalogue`; the preprocess
/// one plain `CREATE TABLE staging (a INT)`. Lever: the wrong (kitchen) insert; on the sound
/// flow's new session the setting is `NULL`. After the lead's fix the run refuses the database
/// at start (`PgRun::refusal`), so no item of it is judged; the test asserts that refusal.
mod postgresql_an_event_trigger_behind_a_whitelisted_create_table {
    use sqlgate::engine::livesql::postgres::PgRun;

    const TRIGGER: &str = "CREATE FUNCTION note_catalogue() RETURNS event_trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM set_config('shop.catalogue', 'outdoor', false); END $$; CREATE EVENT TRIGGER note_catalogue ON ddl_command_end EXECUTE FUNCTION note_catalogue();";

    #[test]
    fn postgresql_an_event_trigger_setting_the_session_does_not_pass_a_wrong_insert() {
        let server = crate::common::servers::postgres();
        let script =
            std::fs::read_to_string(crate::livesql_pg::corpus_dir().join("db/shop.sql")).unwrap();
        server.recreate_database("shopev", &format!("{script}\n{TRIGGER}"));
        let ids = ["shopev".to_string()].into_iter().collect();
        let started = PgRun::start(crate::livesql_pg::settings(server), &ids);
        let system = server.system_database();
        server.admin_sql(system, "DROP DATABASE IF EXISTS shopev");
        let Err(refused) = started else {
            panic!("WON: a database with an event trigger was taken");
        };
        assert!(
            refused.contains("has the event trigger `note_catalogue`"),
            "{refused}"
        );
    }
}

/// Class 4, a forged shard merged in a pull-request run outside Actions, round 21's set-up
/// (`redteam21::shard_in_a_submodule::merged`: C3 regressed on 30 items, the shard's header
/// the pull request's own run's over the base's records). Round 22 committed `shards` as a
/// relative link to the folder holding the forged shard; the lever here commits absolute links
/// through `/proc/self/cwd` (the merging process's own working directory, the workspace), so
/// the text of the link names no path of the tree: `shards` -> `/proc/self/cwd/forged`, and
/// (a file link) `shards/1.jsonl` -> `/proc/self/cwd/forged/1.jsonl`. Secure: no exit 0.
/// Control: round 21's (the pull request's own shard exits 1; committed at `shards/1.jsonl`
/// it is refused).
mod shard_behind_a_link_through_proc {
    use crate::common::repo;
    use crate::redteam21::shard_in_a_submodule::merged;

    /// Commits the forged shard at `forged/1.jsonl` and the link `link` -> `target`.
    fn linked(link: &'static str, target: &'static str) -> (Option<i32>, String) {
        merged(move |root, shard| {
            std::fs::create_dir_all(root.join("forged")).unwrap();
            std::fs::write(root.join("forged/1.jsonl"), shard).unwrap();
            let link = root.join(link);
            std::fs::create_dir_all(link.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(target, link).unwrap();
            repo::commit_all(root, "a shard behind a link through /proc");
        })
    }

    #[test]
    fn a_forged_shard_under_a_folder_link_through_proc_is_refused() {
        let (code, out) = linked("shards", "/proc/self/cwd/forged");
        eprintln!("{out}");
        assert_ne!(code, Some(0), "WON: merged to exit 0: {out}");
    }

    #[test]
    fn a_forged_shard_behind_a_file_link_through_proc_is_refused() {
        let (code, out) = linked("shards/1.jsonl", "/proc/self/cwd/forged/1.jsonl");
        eprintln!("{out}");
        assert_ne!(code, Some(0), "WON: merged to exit 0: {out}");
    }
}

/// Class 3, PostgreSQL: the same counter on PostgreSQL, `currval` of the sequence behind a
/// `SERIAL` column, set by a whitelisted `INSERT` (the column's default runs `nextval` on the
/// preprocess's session). A new session has no `currval` (an error), so the preprocess also
/// makes a function (whitelisted: made, it runs nothing) reading it, `NULL` where it is not
/// defined. Set-up: `CREATE TABLE catalogues (id SERIAL PRIMARY KEY, name TEXT)`, `INSERT INTO
/// catalogues (name) VALUES ('outdoor')`, the function `current_catalogue()`; the test case
/// [`repriced`] on `current_catalogue()`. Lever: the wrong update repricing the Kettle too.
mod postgresql_the_currval_of_a_whitelisted_insert {
    use super::*;

    #[test]
    fn postgresql_a_test_reading_the_sessions_currval_passes_a_wrong_update_a_documented_limit() {
        let run = crate::redteam30::pg_run();
        let preprocess = [
            "CREATE TABLE catalogues (id SERIAL PRIMARY KEY, name TEXT)",
            "INSERT INTO catalogues (name) VALUES ('outdoor')",
            "CREATE FUNCTION current_catalogue() RETURNS bigint LANGUAGE plpgsql AS $$ BEGIN RETURN currval('catalogues_id_seq'); EXCEPTION WHEN object_not_in_prerequisite_state THEN RETURN NULL; END $$",
        ];
        let test = repriced("current_catalogue()");
        let item = line("Management", &preprocess, &REPRICINGS[..1], &test);
        assert_counter_limit(
            |p, profile| judged(&run, &item, &[p], profile),
            (Profile::BirdCritic, Profile::BirdCriticSound),
        );
    }
}
