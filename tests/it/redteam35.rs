//! Red team round 35 (issue 44): `bird_critic_sound` on PostgreSQL 15 and MariaDB 10.11 after
//! rounds 33's and 34's fixes (commits e7e9e8e, b32597c: the Query data check compares a
//! PostgreSQL clone's `postgres_levers` but the role settings, `postgres_comments` and
//! `postgres_access`; a MariaDB clone's `mysql_levers` and `mysql_comments`), and class 4.
//! Every test asserts the SECURE outcome and runs its control: a failing test is a win.
//! Report: `/work/notes/redteam35.md`.
//!
//! The class 3 set-up is round 32's / 33's lever item (`redteam33::verdicts`): a Query item on
//! `shop` whose one test case ([`WRAPPED`](crate::redteam32::WRAPPED)) runs the gold wrapped
//! by `str.format` on a new session to the prediction's clone, after the prediction again, so
//! only the Query data check stands between a persistent change of that clone and a pass.

use crate::common::servers;
use crate::redteam30::{assert_secure, my_run, pg_run};
use crate::redteam33::verdicts;

/// Class 3, PostgreSQL (a column's `NOT NULL`: `pg_attribute.attnotnull`). On PostgreSQL 15 a
/// `NOT NULL` is no `pg_constraint` row, so `postgres_structure`'s `constraint ...` lines do not
/// hold it; the table entries hash each column's name and `format_type` only. The clone's role
/// owns `products`, so it may `ALTER COLUMN name DROP NOT NULL` (every value stays). Set-up: the
/// lever item, a gold reading the column's nullability (`information_schema.columns`, 'NO' on
/// the twin); wrong `SELECT 'YES'`. Lever: the `ALTER`, then the wrong query. Control: the wrong
/// query alone fails.
pub(crate) mod postgresql_not_null_outside_the_data_check {
    use super::*;

    pub(crate) const GOLD: &str = "SELECT is_nullable::text AS nullable FROM information_schema.columns WHERE table_name = 'products' AND column_name = 'name'";
    pub(crate) const WRONG: &str = "SELECT 'YES'::text AS nullable";
    pub(crate) const LEVER: [&str; 2] = [
        "ALTER TABLE products ALTER COLUMN name DROP NOT NULL",
        WRONG,
    ];

    #[test]
    fn postgresql_drop_not_null_on_the_clone_does_not_pass_a_gold_reading_it() {
        let found = verdicts(&pg_run(), GOLD, WRONG, &LEVER);
        assert_secure("DROP NOT NULL", found);
    }
}

/// Class 3, PostgreSQL (round 34's `postgres_access`: relation and schema access lists, default
/// privileges). A column's own access list (`pg_attribute.attacl`) is a fourth one. The clone's
/// role owns `products`, so it may `GRANT SELECT (price) ON products TO PUBLIC`. Set-up: the
/// lever item, a gold counting `PUBLIC`'s column privileges on `products`
/// (`information_schema.column_privileges`, 0 on the twin); wrong `SELECT 1`. Lever: the
/// grant, then the wrong query. Control: the wrong query alone fails.
pub(crate) mod postgresql_a_column_grant_outside_the_data_check {
    use super::*;

    pub(crate) const GOLD: &str = "SELECT count(*)::bigint AS n FROM information_schema.column_privileges WHERE table_name = 'products' AND grantee = 'PUBLIC'";
    pub(crate) const WRONG: &str = "SELECT 1::bigint AS n";
    pub(crate) const LEVER: [&str; 2] = ["GRANT SELECT (price) ON products TO PUBLIC", WRONG];

    #[test]
    fn postgresql_a_column_grant_on_the_clone_does_not_pass_a_gold_reading_it() {
        let found = verdicts(&pg_run(), GOLD, WRONG, &LEVER);
        assert_secure("GRANT SELECT (column)", found);
    }
}

/// Class 3, PostgreSQL (the database's access list, `pg_database.datacl`). `postgres_access`
/// reads relations, schemas and default privileges, not the database. If the clone's role owns
/// its clone database, it may `GRANT CREATE ON DATABASE` to `PUBLIC` (the name is the clone's,
/// so a `DO` block). Set-up: the lever item, a gold asking whether `PUBLIC` may create schemas
/// in the database (`has_database_privilege`, false on the twin); wrong `SELECT true`. Lever:
/// the grant, then the wrong query. Control: the wrong query alone fails.
mod postgresql_a_database_grant_outside_the_data_check {
    use super::*;

    const GOLD: &str =
        "SELECT has_database_privilege('public', current_database(), 'CREATE') AS may";
    const WRONG: &str = "SELECT true AS may";

    #[test]
    fn postgresql_a_database_grant_on_the_clone_does_not_pass_a_gold_reading_it() {
        let lever = [
            "DO $$ BEGIN EXECUTE format('GRANT CREATE ON DATABASE %I TO PUBLIC', current_database()); END $$",
            WRONG,
        ];
        let found = verdicts(&pg_run(), GOLD, WRONG, &lever);
        assert_secure("GRANT CREATE ON DATABASE", found);
    }
}

/// Class 3, MariaDB (a table's storage engine, `information_schema.TABLES.ENGINE`).
/// `mysql_levers` names only the engines that read elsewhere (`FEDERATED`, `CONNECT`, ...);
/// `CREATE_OPTIONS` does not hold the engine. The clone's user has `ALTER`, so it may move
/// `products` to Aria (every row stays). Set-up: the lever item, a gold reading the engine
/// ('InnoDB' on the twin); wrong `SELECT 'Aria'`. Lever: `ALTER TABLE products ENGINE = Aria`,
/// then the wrong query. Control: the wrong query alone fails.
pub(crate) mod mariadb_an_engine_outside_the_data_check {
    use super::*;

    pub(crate) const GOLD: &str = "SELECT ENGINE AS engine FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'products'";
    pub(crate) const WRONG: &str = "SELECT 'Aria' AS engine";
    pub(crate) const LEVER: [&str; 2] = ["ALTER TABLE products ENGINE = Aria", WRONG];

    #[test]
    fn mariadb_an_engine_change_on_the_clone_does_not_pass_a_gold_reading_it() {
        let found = verdicts(&my_run(), GOLD, WRONG, &LEVER);
        assert_secure("ENGINE = Aria", found);
    }
}

/// Class 3, MariaDB (a table's default collation, `information_schema.TABLES.TABLE_COLLATION`).
/// `mysql_settings` records the schema's default collation and each column whose collation
/// differs from it; a table's own default, which changes no column, is in no compared entry.
/// Set-up: the lever item, a gold reading it; wrong `SELECT 'utf8mb4_bin'`. Lever: `ALTER TABLE
/// products DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin` (no `CONVERT`: the columns
/// keep theirs), then the wrong query. Control: the wrong query alone fails.
pub(crate) mod mariadb_a_table_collation_outside_the_data_check {
    use super::*;

    pub(crate) const GOLD: &str = "SELECT TABLE_COLLATION AS collation FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'products'";
    pub(crate) const WRONG: &str = "SELECT 'utf8mb4_bin' AS collation";
    pub(crate) const LEVER: [&str; 2] = [
        "ALTER TABLE products DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
        WRONG,
    ];

    #[test]
    fn mariadb_a_table_collation_on_the_clone_does_not_pass_a_gold_reading_it() {
        let found = verdicts(&my_run(), GOLD, WRONG, &LEVER);
        assert_secure("DEFAULT COLLATE", found);
    }
}

/// Class 3, MariaDB (a column's nullability, `information_schema.COLUMNS.IS_NULLABLE`). The
/// table entries hash `column_type`, which does not say `NULL` / `NOT NULL`. Set-up: the lever
/// item, a gold reading `name`'s nullability ('NO' on the twin); wrong `SELECT 'YES'`. Lever:
/// `ALTER TABLE products MODIFY name VARCHAR(255) NULL`, then the wrong query. Control: the
/// wrong query alone fails.
mod mariadb_not_null_outside_the_data_check {
    use super::*;

    const GOLD: &str = "SELECT IS_NULLABLE AS nullable FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'products' AND COLUMN_NAME = 'name'";
    const WRONG: &str = "SELECT 'YES' AS nullable";

    #[test]
    fn mariadb_a_dropped_not_null_on_the_clone_does_not_pass_a_gold_reading_it() {
        let lever = ["ALTER TABLE products MODIFY name VARCHAR(255) NULL", WRONG];
        let found = verdicts(&my_run(), GOLD, WRONG, &lever);
        assert_secure("MODIFY ... NULL", found);
    }
}

/// Class 3, PostgreSQL (round 33's `postgres_comments`). It keeps the comments on objects whose
/// oid is at least 16384 (`FIRST_USER_OID`), but the `public` schema is a pinned object (oid
/// 2200) that `mod.rs::hand_over` gives to the clone's role with every other schema, and its
/// comment ("standard public schema") is in `pg_description` of every database. Set-up: the
/// lever item, a gold reading that comment (`obj_description`); wrong `SELECT 'kept'`. Lever:
/// `COMMENT ON SCHEMA public IS 'kept'` (the role owns the schema), then the wrong query.
/// Control: the wrong query alone fails.
pub(crate) mod postgresql_a_public_schema_comment_outside_the_data_check {
    use super::*;

    pub(crate) const GOLD: &str =
        "SELECT obj_description('public'::regnamespace, 'pg_namespace') AS note";
    pub(crate) const WRONG: &str = "SELECT 'kept'::text AS note";
    pub(crate) const LEVER: [&str; 2] = ["COMMENT ON SCHEMA public IS 'kept'", WRONG];

    #[test]
    fn postgresql_a_comment_on_the_public_schema_does_not_pass_a_gold_reading_it() {
        let found = verdicts(&pg_run(), GOLD, WRONG, &LEVER);
        assert_secure("COMMENT ON SCHEMA public", found);
    }
}

/// Class 3, PostgreSQL (a relation's and a column's catalog flags that `postgres_structure` does
/// not record: `pg_attribute.attstorage`, `pg_class.relreplident`, `pg_index.indisclustered`). The clone's role owns `products`, so it may set each. Set-up: the
/// lever item, a gold reading the flag as the twin has it; wrong: the flag's new value. Lever:
/// the `ALTER`, then the wrong query. Control: the wrong query alone fails.
mod postgresql_catalog_flags_outside_the_data_check {
    use super::*;

    fn attempt(gold: &str, alter: &str, new: &str) {
        let wrong = format!("SELECT '{new}'::text AS flag");
        let found = verdicts(&pg_run(), gold, &wrong, &[alter, &wrong]);
        assert_secure(alter, found);
    }

    #[test]
    fn postgresql_a_column_storage_does_not_pass_a_gold_reading_it() {
        attempt(
            "SELECT attstorage::text AS flag FROM pg_attribute WHERE attrelid = 'products'::regclass AND attname = 'name'",
            "ALTER TABLE products ALTER COLUMN name SET STORAGE EXTERNAL",
            "e",
        );
    }

    #[test]
    fn postgresql_a_replica_identity_does_not_pass_a_gold_reading_it() {
        attempt(
            "SELECT relreplident::text AS flag FROM pg_class WHERE oid = 'products'::regclass",
            "ALTER TABLE products REPLICA IDENTITY FULL",
            "f",
        );
    }

    #[test]
    fn postgresql_a_cluster_mark_does_not_pass_a_gold_reading_it() {
        attempt(
            "SELECT indisclustered::text AS flag FROM pg_index WHERE indrelid = 'products'::regclass AND indisprimary",
            "ALTER TABLE products CLUSTER ON products_pkey",
            "true",
        );
    }
}

/// Class 3, MariaDB (a foreign key, `information_schema.REFERENTIAL_CONSTRAINTS`).
/// `mysql_structure` records each index, `CREATE_OPTIONS`, defaults and `CHECK` constraints, not
/// foreign keys; dropping one leaves its index and every row. The clone's user has `ALTER`.
/// Set-up: the lever item, a gold naming the foreign keys that reference `products`
/// (`orders_ibfk_2` on the twin); wrong: no row. Lever: `ALTER TABLE orders DROP FOREIGN KEY
/// orders_ibfk_2`, then the wrong query. Control: the wrong query alone fails.
pub(crate) mod mariadb_a_foreign_key_outside_the_data_check {
    use super::*;

    pub(crate) const GOLD: &str = "SELECT CONSTRAINT_NAME AS name FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = DATABASE() AND REFERENCED_TABLE_NAME = 'products'";
    pub(crate) const WRONG: &str = "SELECT 'none' AS name FROM DUAL WHERE 1 = 0";
    pub(crate) const LEVER: [&str; 2] =
        ["ALTER TABLE orders DROP FOREIGN KEY orders_ibfk_2", WRONG];

    #[test]
    fn mariadb_a_dropped_foreign_key_does_not_pass_a_gold_reading_it() {
        let found = verdicts(&my_run(), GOLD, WRONG, &LEVER);
        assert_secure("DROP FOREIGN KEY", found);
    }
}

/// Class 3 through the gate: this round's engine wins at the CLI, where the verdict that counts
/// is the exit code. Set-up: round 32's `through_the_gate` (one Query item, the lever item on
/// the gold given, gated on `bird_critic_sound`, its baseline made on `main` with the gold as
/// the prediction; the pull request predicts the lever then the wrong query, `eval
/// --trusted-base <base>`). Control: the pull request predicting the wrong query alone exits 1.
mod through_the_gate {
    use super::*;
    use crate::livesql_pg_gate::PG;
    use crate::redteam32::through_the_gate::{attempt, MY};

    #[test]
    fn postgresql_drop_not_null_does_not_pass_the_gate() {
        use super::postgresql_not_null_outside_the_data_check::{GOLD, LEVER, WRONG};
        let server = servers::postgres();
        crate::livesql_pg::load_databases(server);
        attempt(&PG, server, GOLD, WRONG, &LEVER);
    }

    #[test]
    fn postgresql_a_column_grant_does_not_pass_the_gate() {
        use super::postgresql_a_column_grant_outside_the_data_check::{GOLD, LEVER, WRONG};
        let server = servers::postgres();
        crate::livesql_pg::load_databases(server);
        attempt(&PG, server, GOLD, WRONG, &LEVER);
    }

    #[test]
    fn postgresql_a_public_schema_comment_does_not_pass_the_gate() {
        use super::postgresql_a_public_schema_comment_outside_the_data_check::{
            GOLD, LEVER, WRONG,
        };
        let server = servers::postgres();
        crate::livesql_pg::load_databases(server);
        attempt(&PG, server, GOLD, WRONG, &LEVER);
    }

    #[test]
    fn mariadb_a_dropped_foreign_key_does_not_pass_the_gate() {
        use super::mariadb_a_foreign_key_outside_the_data_check::{GOLD, LEVER, WRONG};
        let (server, _) = crate::livesql_my_gate::loaded();
        attempt(&MY, server, GOLD, WRONG, &LEVER);
    }

    #[test]
    fn mariadb_a_table_collation_does_not_pass_the_gate() {
        use super::mariadb_a_table_collation_outside_the_data_check::{GOLD, LEVER, WRONG};
        let (server, _) = crate::livesql_my_gate::loaded();
        attempt(&MY, server, GOLD, WRONG, &LEVER);
    }
}

/// Class 4 (shards, `merge`): a forged shard merged in a pull-request run outside Actions, round
/// 21's set-up (`redteam21::shard_in_a_submodule::merged`: C3 regressed on 30 items, the shard's
/// header the pull request's own run's over the base's records, the trailer recomputed, `merge
/// --trusted-base <base> shards/1.jsonl`). `trust::refuse_committed_shards` asks
/// `TrustedBase::tracks`, which passes the repository name to `git ls-files` as a pathspec, of the
/// path as given and as it resolves. A name starting with `:` is pathspec magic (`:x/1.jsonl` is
/// the pattern `x/1.jsonl`), so without literal pathspecs git lists nothing for it. Round 22's
/// linked folder was refused because the resolved path is tracked; the lever names the target
/// folder with the magic: the shard committed at `:forged/1.jsonl`, `shards` a committed symlink
/// to `:forged`. Control: round 21's (committed at `shards/1.jsonl`: refused; the pull request's
/// own shard: exit 1).
mod shard_behind_a_pathspec_magic_name {
    use crate::common::{self, git, repo};
    use crate::redteam21::shard_in_a_submodule::merged;

    #[test]
    fn a_forged_shard_under_a_colon_named_folder_is_refused() {
        let (code, out) = merged(|root, shard| {
            std::fs::create_dir(root.join("shards")).unwrap();
            std::fs::write(root.join("shards/1.jsonl"), shard).unwrap();
            repo::commit_all(root, "a shard");
        });
        assert_eq!(code, Some(2), "control: {out}");
        common::assert_contains(&out, &["never committed"]);
        let (code, out) = merged(|root, shard| {
            std::fs::create_dir(root.join(":forged")).unwrap();
            std::fs::write(root.join(":forged/1.jsonl"), shard).unwrap();
            std::os::unix::fs::symlink(":forged", root.join("shards")).unwrap();
            repo::commit_all(root, "a shard behind a link to a magic name");
            let listed = git(root, &["ls-files", "--", ":forged/1.jsonl"]);
            assert!(listed.trim().is_empty(), "the magic name: {listed}");
            assert!(root.join("shards/1.jsonl").is_file());
        });
        eprintln!("{out}");
        assert_ne!(code, Some(0), "WON: the forged shard merged: {out}");
    }

    /// The same with the forged shard in a submodule at `:sub` (round 21's lever), `shards` a
    /// committed symlink to it: the folder check looks for a gitlink among the folders of the
    /// resolved name, `:sub`, again through a pathspec.
    #[test]
    fn a_forged_shard_in_a_colon_named_submodule_is_refused() {
        let inner = tempfile::tempdir().unwrap();
        let (code, out) = merged(|root, shard| {
            let sub = inner.path();
            std::fs::write(sub.join("1.jsonl"), shard).unwrap();
            repo::init_main(sub, "the shard");
            let url = sub.to_str().unwrap();
            let add = [
                "--literal-pathspecs",
                "-c",
                "protocol.file.allow=always",
                "submodule",
                "add",
                "-q",
            ];
            git(root, &[&add[..], &[url, ":sub"]].concat());
            std::os::unix::fs::symlink(":sub", root.join("shards")).unwrap();
            repo::commit_all(root, "a submodule behind a link");
            assert!(root.join("shards/1.jsonl").is_file());
        });
        eprintln!("{out}");
        assert_ne!(code, Some(0), "WON: the forged shard merged: {out}");
    }
}
