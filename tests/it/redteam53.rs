//! Red team round 53 (issue 44): rounds 47's to 52's preprocess whitelist
//! (`crates/sqlgate-engine/src/engine/livesql/stateless.rs`) and, outside class 3, the shard
//! refusal of `merge`.
//!
//! The attempts:
//! - PostgreSQL: a made table named after a shared catalog (`pg_db_role_setting`): `Made`
//!   matches the `INSERT` to the preprocess's `public.pg_db_role_setting`, but PostgreSQL looks
//!   `pg_catalog` up first, so the literal row lands in the catalog as a setting of every role in
//!   every database (`session_replication_role = replica`), which every NEW session takes at
//!   connection and the preprocess's session does not: foreign keys stop being checked on the
//!   sound flow's sessions;
//! - MariaDB: a made table qualified by the base database (`shop.leak53`), which `Made`
//!   matches, written outside the run's clone (contained: the run's role is denied, not judged);
//! - class 4: forged shards behind a committed link whose target leaves the tree and comes
//!   back in (`../<root>/forged`), through `./forged/../forged`, through `.git/../forged`, and
//!   an absolute link into the tree (contained: exit 2).
//!
//! Every test asserts the SECURE outcome and runs its control: a failing test is a win.
//! Report: `/work/notes/redteam53.md`.

use crate::redteam46::{judged, line};
use sqlgate::engine::livesql::Profile;

/// The gold (the category, then the kit), and the wrong prediction that forgets the category:
/// the made `kit` table's reference to `cats` refuses its row.
const KIT: [&[&str]; 2] = [
    &[
        "INSERT INTO cats (name) VALUES ('camping')",
        "INSERT INTO kit (id, cat) VALUES (1, 'camping')",
    ],
    &["INSERT INTO kit (id, cat) VALUES (1, 'camping')"],
];

/// The test case: the kit is filed under camping.
const FILED: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn, conditions=None):\n    res = execute_queries([\"SELECT count(*) FROM kit WHERE cat = 'camping'\"], db_name, conn, None, '')\n    assert not res[1] and res[0][0][0] == 1, f'found {res[0]}'\n    return 1\n";

/// Class 3, PostgreSQL: `stateless.rs::Made` matches names part by part as written, but an
/// unqualified name is looked up in `pg_catalog` first. The preprocess makes
/// `pg_db_role_setting` (whitelisted: built-in column types), which PostgreSQL puts in
/// `public`, then inserts a literal row into `pg_db_role_setting` (whitelisted: a made table),
/// which PostgreSQL puts in the catalog of that name (the preprocess runs as the
/// administrator): `session_replication_role = replica` for every role in every database. The
/// preprocess's session took its settings at connection; every new session (the sound flow's
/// prediction and checks) takes it and checks no foreign key. Set-up: two made tables, `kit`
/// referencing `cats`. Lever: the wrong prediction files the kit under a category that does
/// not exist. Secure: it fails bird_critic_sound (or the item is not judged). Control: the
/// same preprocess without the two catalog statements.
mod postgresql_a_made_table_named_after_a_catalog {
    use super::*;

    /// Removes every setting of every role in every database, whatever the test found.
    struct Cleanup;

    impl Drop for Cleanup {
        fn drop(&mut self) {
            let server = crate::common::servers::postgres();
            let url = server.admin_url("postgres");
            if let Ok(mut client) = postgres::Client::connect(&url, postgres::NoTls) {
                let _ = client.batch_execute(
                    "DELETE FROM pg_catalog.pg_db_role_setting \
                     WHERE setdatabase = 0 AND setrole = 0",
                );
            }
        }
    }

    fn preprocess(lever: bool) -> Vec<&'static str> {
        let mut texts = vec![
            "CREATE TABLE cats (name TEXT PRIMARY KEY)",
            "CREATE TABLE kit (id INTEGER PRIMARY KEY, cat TEXT REFERENCES cats (name))",
        ];
        if lever {
            texts.push(
                "CREATE TABLE pg_db_role_setting (setdatabase oid, setrole oid, setconfig TEXT[])",
            );
            texts.push(
                "INSERT INTO pg_db_role_setting (setdatabase, setrole, setconfig) \
                 VALUES (0, 0, '{session_replication_role=replica}')",
            );
        }
        texts
    }

    #[test]
    fn postgresql_a_catalog_row_of_the_preprocess_does_not_pass_a_wrong_kit() {
        let run = crate::redteam30::pg_run();
        let cleanup = Cleanup;
        let judge = |lever: bool, profile| {
            let item = line("Management", &preprocess(lever), KIT[0], FILED);
            KIT.map(|p| judged(&run, &item, p, profile))
        };
        let control = judge(false, Profile::BirdCriticSound);
        assert_eq!(
            control,
            [true, false],
            "control: the reference refuses the wrong kit"
        );
        let sound = judge(true, Profile::BirdCriticSound);
        drop(cleanup);
        let official = judge(true, Profile::BirdCritic);
        drop(Cleanup);
        eprintln!("bird_critic: {official:?}, bird_critic_sound: {sound:?}");
        assert!(
            !sound[1],
            "WON: the wrong kit passed bird_critic_sound ({sound:?}; bird_critic {official:?})"
        );
    }
}

/// Class 4 (shards / `merge`): round 22's forged shard committed under `forged/`, reached
/// through a committed link `shards` whose target leaves the tree and comes back into it by
/// the repository folder's own name (`../<root>/forged`), through `./forged/../forged`, through
/// `.git/../forged` (the absolute path of `forged` is round 51's attempt, whose `linked` this
/// module uses). Secure: the merge refuses the shard (exit 2), never exit 0. Control: round
/// 51's (the link `forged`, exit 2); the pull request's own shard exits 1 (round 21's control).
mod shard_behind_a_link_out_and_back_in {
    use crate::redteam51::shard_under_a_link_written_otherwise::linked;

    #[test]
    fn a_forged_shard_behind_a_link_out_of_the_tree_and_back_is_refused() {
        let (code, out) = linked(|root| {
            let name = root.file_name().unwrap().to_string_lossy();
            format!("../{name}/forged").into()
        });
        eprintln!("{out}");
        assert_ne!(code, Some(0), "WON: merged to exit 0: {out}");
    }

    #[test]
    fn a_forged_shard_behind_a_link_through_the_git_folder_is_refused() {
        let (code, out) = linked(|_| ".git/../forged".into());
        eprintln!("{out}");
        assert_ne!(code, Some(0), "WON: merged to exit 0: {out}");
    }

    #[test]
    fn a_forged_shard_behind_a_link_with_a_dot_dot_is_refused() {
        let (code, out) = linked(|_| "./forged/../forged".into());
        eprintln!("{out}");
        assert_ne!(code, Some(0), "WON: merged to exit 0: {out}");
    }
}

/// Class 3, MariaDB: `Made` matches a qualified name part by part, and on MariaDB the
/// qualifier is a database: the preprocess's `CREATE TABLE shop.leak53` and its literal
/// `INSERT INTO shop.leak53` are whitelisted, but they write into the base database `shop`,
/// not into the run's clone (`sqlgate_live_<tag>_cN`): an object outside the clone, which the
/// next run's clone copies. Secure: the base `shop` holds no `leak53` after the judge (or the
/// item is not judged and nothing was written). Control: the unqualified table, made in the
/// clone (the base untouched).
mod mariadb_a_made_table_in_the_base_database {
    use super::*;

    const GOLD: &[&str] = &[
        "INSERT INTO products (id, name, category, price, stock) VALUES (11, 'Canteen', 'outdoor', 12.5, 3)",
    ];

    const ADDED: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn, conditions=None):\n    res = execute_queries([\"SELECT count(*) FROM products WHERE name = 'Canteen'\"], db_name, conn, None, '')\n    assert not res[1] and res[0][0][0] == 1, f'found {res[0]}'\n    return 1\n";

    /// Whether the base `shop` holds `leak53`; dropped if so.
    fn leaked() -> bool {
        let server = crate::common::servers::mariadb();
        let url = server.admin_url("shop");
        let mut conn = mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).unwrap();
        use mysql::prelude::Queryable;
        let found: Vec<String> = conn.query("SHOW TABLES LIKE 'leak53'").unwrap();
        conn.query_drop("DROP TABLE IF EXISTS leak53").unwrap();
        !found.is_empty()
    }

    #[test]
    fn mariadb_a_preprocess_table_qualified_by_the_base_database_stays_out_of_it() {
        let run = crate::redteam30::my_run();
        let judge = |name: &str| {
            let preprocess = [
                format!("CREATE TABLE {name} (a INT)"),
                format!("INSERT INTO {name} (a) VALUES (1)"),
            ];
            let texts: Vec<&str> = preprocess.iter().map(String::as_str).collect();
            let item = line("Management", &texts, GOLD, ADDED);
            let verdict = judged(&run, &item, GOLD, Profile::BirdCriticSound);
            (verdict, leaked())
        };
        let control = judge("leak53");
        assert_eq!(control, (true, false), "control: made in the clone");
        let lever = judge("shop.leak53");
        eprintln!("lever (judged, leaked into the base): {lever:?}");
        assert!(
            !lever.1,
            "WON: the preprocess wrote a table into the base database ({lever:?})"
        );
    }
}
