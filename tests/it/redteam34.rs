//! Red team round 34 (issue 44): `bird_critic_sound` on PostgreSQL 15 and MariaDB 10.11 after
//! round 33's fixes (commit e7e9e8e: the PostgreSQL Query data check compares the clone's
//! `structure::postgres_levers`, but the role settings, and `structure::postgres_comments`;
//! MariaDB's compares `mysql_levers` and `mysql_comments`). Every test asserts the SECURE
//! outcome and runs its control: a failing test is a win. Report: `/work/notes/redteam34.md`.
//!
//! The set-up is round 32's / 33's lever item (`redteam33::verdicts`): a Query item on `shop`
//! whose one test case ([`WRAPPED`](crate::redteam32::WRAPPED)) runs the gold wrapped by
//! `str.format` on a new session to the prediction's clone, after the prediction again, so only
//! the Query data check stands between a persistent change of that clone and a pass. Each
//! attempt looks for what the clone's role may change, that a read gold returns, and that no
//! compared entry (table entries, `:order`, `:settings`, `:structure`, `:levers`) holds.

use crate::common::servers;
use crate::redteam30::{assert_secure, my_run, pg_run};
use crate::redteam33::verdicts;

/// Class 3, PostgreSQL (planner statistics: `pg_class.reltuples`). `postgres_structure` says
/// "the statistics' contents (what `ANALYZE` gathers) are not recorded", and `catalog_rows`
/// (which reads `reltuples`) is skipped on a clone (`Reach::Clone`). The clone's role owns
/// `products`, so it may `ANALYZE` it. Set-up: the lever item, a gold reading the planner's row
/// estimate (the "fast count" answer, `reltuples`), as on the twin (never analyzed: -1); wrong
/// `count(*)` (10). Lever: `ANALYZE products`, then the wrong query. Control: the wrong query
/// alone fails.
pub(crate) mod postgresql_analyze_outside_the_data_check {
    use super::*;

    pub(crate) const GOLD: &str =
        "SELECT reltuples::bigint AS estimate FROM pg_class WHERE oid = 'products'::regclass";
    pub(crate) const WRONG: &str = "SELECT count(*)::bigint AS estimate FROM products";
    pub(crate) const LEVER: [&str; 2] = ["ANALYZE products", WRONG];

    #[test]
    #[ignore = "documented limit (docs/SECURITY.md, Plans and statistics): a gold that reads the planner's statistics (`reltuples`) reads what the prediction's ANALYZE left; the data check does not compare statistics, which autovacuum changes"]
    fn postgresql_analyze_on_the_clone_does_not_pass_a_gold_reading_the_estimate() {
        let found = verdicts(&pg_run(), GOLD, WRONG, &LEVER);
        assert_secure("ANALYZE products", found);
    }
}

/// Class 3, PostgreSQL (privileges: `pg_class.relacl`). No compared entry reads a table's
/// access list (`postgres_structure` lists unreadable tables only, the levers none). The
/// clone's role owns `products`, so it may `GRANT SELECT ON products TO PUBLIC`. Set-up: the
/// lever item, a gold counting `PUBLIC`'s privileges on `products`
/// (`information_schema.table_privileges`, 0 on the twin); wrong `SELECT 1`. Lever: the grant,
/// then the wrong query. Control: the wrong query alone fails.
pub(crate) mod postgresql_a_grant_outside_the_data_check {
    use super::*;

    pub(crate) const GOLD: &str = "SELECT count(*)::bigint AS n FROM information_schema.table_privileges WHERE table_name = 'products' AND grantee = 'PUBLIC'";
    pub(crate) const WRONG: &str = "SELECT 1::bigint AS n";
    pub(crate) const LEVER: [&str; 2] = ["GRANT SELECT ON products TO PUBLIC", WRONG];

    #[test]
    fn postgresql_a_grant_to_public_on_the_clone_does_not_pass_a_gold_reading_it() {
        let found = verdicts(&pg_run(), GOLD, WRONG, &LEVER);
        assert_secure("GRANT ... TO PUBLIC", found);
    }
}

/// Class 3, MariaDB (round 33's `mysql_comments`: table and column comments, column `EXTRA`).
/// An index's comment (`information_schema.STATISTICS.INDEX_COMMENT`) is a third kind of
/// comment. Set-up: the lever item, a gold reading the primary key's comment ('' on the twin);
/// wrong `SELECT 'kept'`. Lever: `ALTER TABLE products DROP PRIMARY KEY, ADD PRIMARY KEY (id)
/// COMMENT 'kept'` (the same key, the clone's user has `ALTER`), then the wrong query. Control:
/// the wrong query alone fails.
pub(crate) mod mariadb_an_index_comment_outside_the_data_check {
    use super::*;

    pub(crate) const GOLD: &str = "SELECT INDEX_COMMENT AS note FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'products' AND INDEX_NAME = 'PRIMARY'";
    pub(crate) const WRONG: &str = "SELECT 'kept' AS note";
    pub(crate) const LEVER: [&str; 2] = [
        "ALTER TABLE products DROP PRIMARY KEY, ADD PRIMARY KEY (id) COMMENT 'kept'",
        WRONG,
    ];

    #[test]
    fn mariadb_an_index_comment_on_the_clone_does_not_pass_a_gold_reading_it() {
        let found = verdicts(&my_run(), GOLD, WRONG, &LEVER);
        assert_secure("index COMMENT", found);
    }
}

/// Class 3, MariaDB (a column's position). `SELECT *` returns the columns in their order; a
/// clone's user with `ALTER` may move one (`MODIFY ... AFTER`) without changing a value.
/// Set-up: the lever item, gold `SELECT * FROM products WHERE id = 1`; wrong: the same columns
/// with `stock` before `price`. Lever: `ALTER TABLE products MODIFY price DOUBLE AFTER stock`,
/// then the wrong query. Control: the wrong query alone fails.
mod mariadb_a_column_moved_on_the_clone {
    use super::*;

    pub(crate) const GOLD: &str = "SELECT * FROM products WHERE id = 1";
    pub(crate) const WRONG: &str =
        "SELECT id, name, category, stock, price FROM products WHERE id = 1";

    #[test]
    fn mariadb_a_column_moved_on_the_clone_does_not_pass_a_star_gold() {
        let lever = [
            "ALTER TABLE products MODIFY price DOUBLE AFTER stock",
            WRONG,
        ];
        let found = verdicts(&my_run(), GOLD, WRONG, &lever);
        assert_secure("MODIFY ... AFTER", found);
    }
}

/// Class 3, PostgreSQL (a column's position). PostgreSQL moves no column, but the owner may drop
/// one and add it again at the end, then fill it back (`UPDATE` of every row, which keeps their
/// relative heap order). Set-up: the lever item, gold `SELECT * FROM products WHERE id = 1`;
/// wrong: the same columns with `stock` before `price`. Lever: save `price` in a temporary
/// table, `DROP COLUMN price`, `ADD COLUMN price double precision`, `UPDATE` it back, then the
/// wrong query. Control: the wrong query alone fails.
mod postgresql_a_column_moved_on_the_clone {
    use super::*;

    pub(crate) const GOLD: &str = "SELECT * FROM products WHERE id = 1";
    pub(crate) const WRONG: &str =
        "SELECT id, name, category, stock, price FROM products WHERE id = 1";

    #[test]
    fn postgresql_a_column_moved_on_the_clone_does_not_pass_a_star_gold() {
        let lever = [
            "CREATE TEMP TABLE keep AS SELECT id, price FROM products",
            "ALTER TABLE products DROP COLUMN price",
            "ALTER TABLE products ADD COLUMN price double precision",
            "UPDATE products p SET price = k.price FROM keep k WHERE k.id = p.id",
            WRONG,
        ];
        let found = verdicts(&pg_run(), GOLD, WRONG, &lever);
        assert_secure("DROP / ADD COLUMN", found);
    }
}

/// Class 3 through the gate: this round's engine wins at the CLI, where the verdict that counts
/// is the exit code. Set-up: round 32's `through_the_gate` (a bundled-style bird-critic dataset
/// of ONE Query item, the lever item on the gold given, gated on `bird_critic_sound`, its
/// baseline made on `main` with the gold as the prediction; the pull request predicts the lever
/// then the wrong query, `eval --trusted-base <base>`). Control: the pull request predicting the
/// wrong query alone exits 1.
mod through_the_gate {
    use super::*;
    use crate::livesql_pg_gate::PG;
    use crate::redteam32::through_the_gate::{attempt, MY};

    #[test]
    #[ignore = "documented limit (docs/SECURITY.md, Plans and statistics): a gold that reads the planner's statistics (`reltuples`) reads what the prediction's ANALYZE left; the data check does not compare statistics, which autovacuum changes"]
    fn postgresql_analyze_does_not_pass_the_gate() {
        use super::postgresql_analyze_outside_the_data_check::{GOLD, LEVER, WRONG};
        let server = servers::postgres();
        crate::livesql_pg::load_databases(server);
        attempt(&PG, server, GOLD, WRONG, &LEVER);
    }

    #[test]
    fn postgresql_a_grant_to_public_does_not_pass_the_gate() {
        use super::postgresql_a_grant_outside_the_data_check::{GOLD, LEVER, WRONG};
        let server = servers::postgres();
        crate::livesql_pg::load_databases(server);
        attempt(&PG, server, GOLD, WRONG, &LEVER);
    }

    #[test]
    fn mariadb_an_index_comment_does_not_pass_the_gate() {
        use super::mariadb_an_index_comment_outside_the_data_check::{GOLD, LEVER, WRONG};
        let (server, _) = crate::livesql_my_gate::loaded();
        attempt(&MY, server, GOLD, WRONG, &LEVER);
    }
}
