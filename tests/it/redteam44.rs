//! Red team round 44 (issue 44): `bird_critic_sound` after round 43's fix (41fb513 and the
//! commits after 9489bff): every engine reads the item session's state before and after the
//! preprocess (`postgres/item.rs::SESSION_STATE`, `mysql/session_state.rs`,
//! `livesql/session.rs::temporary_objects`) and does not judge an item whose preprocess left
//! some. The attempts are honest preprocesses that leave session state none of these reads: a
//! value the session keeps of its last write (MariaDB `LAST_INSERT_ID`, SQLite
//! `last_insert_rowid()`), a pinned MariaDB clock (`SET timestamp`) and a custom (placeholder)
//! setting on PostgreSQL; honest preprocesses the read may flag although they leave nothing (a
//! MariaDB statement prepared and deallocated, a PostgreSQL staging table dropped); and, in class
//! 1, the databases the base config names checked out with CRLF line endings. Every test asserts
//! the SECURE outcome and runs its control: a failing test is a win. Report:
//! `/work/notes/redteam44.md`.
//!
//! After the lead's fix (round 44: the prediction and the gold run on new sessions after the
//! preprocess, and an item whose gold runs otherwise on the preprocess's own session is not
//! judged, `gold_effect.rs`; the session reads are gone), each won item is not judged (every
//! prediction fails, the gold too), which the wins' tests now see; their gate runs (the lever
//! exited 0 through the gate) are dropped with the item, which no pull request can regress any
//! more.
//!
//! Set-up: round 42's lever item (`redteam43::judged`: `shop`, a Query item with round 32's
//! `WRAPPED` test case, which runs the prediction again, then the gold, on a new session).

use crate::redteam30::{my_run, pg_run};
use crate::redteam43::{assert_not_judged, assert_wrong_fails};

/// The MariaDB item: the preprocess restocks the tent to 12 through `LAST_INSERT_ID(expr)`; the
/// gold reads the products whose stock is the session's last value; the wrong prediction gives
/// the gold's answer on a new session (where `LAST_INSERT_ID()` is 0).
const MY_PREPROCESS: [&str; 1] =
    ["UPDATE products SET stock = LAST_INSERT_ID(stock + 10) WHERE id = 7"];
const MY_GOLD: &str = "SELECT name FROM products WHERE stock = LAST_INSERT_ID()";
const MY_WRONG: &str = "SELECT name FROM products WHERE stock = 0";

/// The PostgreSQL item: the preprocess sets a custom setting; the gold reads the products under
/// it; the wrong prediction gives the gold's answer on a new session (where it is not set).
const PG_PREPROCESS: [&str; 1] = ["SET app.min_stock = '5'"];
const PG_GOLD: &str = "SELECT name FROM products WHERE stock < coalesce(current_setting('app.min_stock', true), '0')::int";
const PG_WRONG: &str = "SELECT name FROM products WHERE stock < 0";

/// Class 3, MariaDB: `LAST_INSERT_ID(expr)` in the preprocess. MariaDB keeps the value on the
/// session (the documented counter idiom `UPDATE t SET n = LAST_INSERT_ID(n + 1)`), and
/// `mysql/session_state.rs::SESSION_STATE` leaves `LAST_INSERT_ID` / `INSERT_ID` / `IDENTITY`
/// out as values "the server moves by itself". Set-up: preprocess `UPDATE products SET stock =
/// LAST_INSERT_ID(stock + 10) WHERE id = 7` (the tent restocked to 12); gold the products whose
/// stock is the last value (`stock = LAST_INSERT_ID()`: the tent on the item's session, the two
/// out of stock on a new session, where it is 0); honest `id = 7`; wrong `stock = 0`.
mod mariadb_the_last_insert_id_of_the_preprocess {
    use super::*;

    #[test]
    fn mariadb_a_last_insert_id_left_by_the_preprocess_does_not_pass_a_wrong_query() {
        let honest = "SELECT name FROM products WHERE id = 7";
        assert_wrong_fails(&my_run(), (&MY_PREPROCESS, MY_GOLD), honest, MY_WRONG);
    }
}

/// Class 3, PostgreSQL: a custom setting (`SET app.min_stock = '5'`, the row-level-security
/// idiom `current_setting('app.tenant')`). `SESSION_STATE` reads `pg_settings` where `source =
/// 'session'`, but a placeholder variable (a dotted name no module defines) is marked
/// `GUC_NO_SHOW_ALL` and not listed in `pg_settings`. Set-up: gold the products under the
/// session's threshold (`stock < coalesce(current_setting('app.min_stock', true), '0')::int`:
/// four on the item's session, none on a new one); honest `stock < 5`; wrong `stock < 0`.
mod postgresql_a_custom_setting {
    use super::*;

    #[test]
    fn postgresql_a_custom_setting_left_by_the_preprocess_does_not_pass_a_wrong_query() {
        let honest = "SELECT name FROM products WHERE stock < 5";
        assert_wrong_fails(&pg_run(), (&PG_PREPROCESS, PG_GOLD), honest, PG_WRONG);
    }
}

/// Class 2 (the repair path's SQLite livesql engine): `last_insert_rowid()` after an `INSERT` in
/// the preprocess. The connection keeps the rowid of its last insert; `sound.rs` reads only
/// `temp.sqlite_schema` (`session.rs::temporary_objects`). Set-up: preprocess an `INSERT` of a
/// new product (rowid 11); gold `id = last_insert_rowid()` (the new product on the item's
/// connection, nothing on a new one, where it is 0); honest `name = 'Canteen'`; wrong `stock <
/// 0`.
mod sqlite_the_last_insert_rowid_of_the_preprocess {
    use crate::redteam42::sqlite_a_table_made_in_the_temp_schema::assert_wrong_fails;

    #[test]
    fn sqlite_a_last_insert_rowid_left_by_the_preprocess_does_not_pass_a_wrong_query() {
        let preprocess = ["INSERT INTO products (name, category, price, stock) VALUES ('Canteen', 'outdoor', 12.5, 3)"];
        let gold = "SELECT name FROM products WHERE id = last_insert_rowid()";
        let honest = "SELECT name FROM products WHERE name = 'Canteen'";
        let wrong = "SELECT name FROM products WHERE stock < 0";
        assert_wrong_fails((&preprocess, gold), honest, wrong);
    }
}

/// Class 3, MariaDB: `SET timestamp` in the preprocess pins the session's clock (`NOW()`,
/// `CURDATE()`) to a fixed moment, the common way to make a date question reproducible;
/// `mysql/session_state.rs::SESSION_STATE` leaves `TIMESTAMP` out (a value the server moves by
/// itself). Set-up: preprocess `SET timestamp = UNIX_TIMESTAMP('2024-03-01 12:00:00')`; gold the
/// orders of the last 30 days (`ordered_at >= CURDATE() - INTERVAL 30 DAY`: on the item's
/// session every order dated 31 January 2024 or later, on a new session today none); honest the
/// same date written out; wrong none (`ordered_at > '2030'`).
mod mariadb_a_pinned_timestamp {
    use super::*;

    #[test]
    fn mariadb_a_timestamp_pinned_by_the_preprocess_does_not_pass_a_wrong_query() {
        let preprocess = ["SET timestamp = UNIX_TIMESTAMP('2024-03-01 12:00:00')"];
        let gold = "SELECT id AS name FROM orders WHERE ordered_at >= CURDATE() - INTERVAL 30 DAY";
        let honest = "SELECT id AS name FROM orders WHERE ordered_at >= '2024-01-31'";
        let wrong = "SELECT id AS name FROM orders WHERE ordered_at > '2030'";
        assert_wrong_fails(&my_run(), (&preprocess, gold), honest, wrong);
    }
}

/// Class 3, MariaDB, false fail: dynamic SQL prepared, run and deallocated in the preprocess
/// (`PREPARE s FROM '...'`, `EXECUTE s`, `DEALLOCATE PREPARE s`), which leaves no statement
/// prepared; the attempt is whether the session counter `Com_prepare_sql` (which
/// `SESSION_STATE` reads for a statement left prepared) flags it although nothing is left.
/// Set-up: the preprocess sets the stock of the products out of stock to 1 that way; gold
/// `stock = 1`; honest `stock BETWEEN 1 AND 1`; wrong every product. After round 47's fix (the whitelist, `livesql/stateless.rs`) the item is not judged under
/// `bird_critic_sound`: its preprocess holds a statement outside the whitelist (the documented
/// cost, docs/SECURITY.md).
mod mariadb_a_statement_prepared_and_deallocated {
    use super::*;

    #[test]
    fn mariadb_a_deallocated_statement_leaves_the_item_not_judged() {
        let preprocess = [
            "PREPARE restock FROM 'UPDATE products SET stock = 1 WHERE stock = 0'",
            "EXECUTE restock",
            "DEALLOCATE PREPARE restock",
        ];
        let gold = "SELECT name FROM products WHERE stock = 1";
        let honest = "SELECT name FROM products WHERE stock BETWEEN 1 AND 1";
        let wrong = "SELECT name FROM products";
        assert_not_judged(&my_run(), (&preprocess, gold), honest, wrong);
    }
}

/// Class 1, round 15's set-up (`written_paths`, Spider on SQLite): C3 regressed on 30 items and
/// the pull request's config loosened. Round 24's line endings, turned on the databases the base
/// config names (`dataset.databases`): the pull request commits `.gitattributes` giving every
/// `.sqlite` file `text eol=crlf`, so the checkout writes each LF byte of the binary as CR LF.
/// The databases in the working tree no longer open (or read other pages), while the tree's
/// blobs are the base's; the base's config must judge the pull request (exit 1) or refuse (exit
/// 2), never pass it nor let the pull request's config run (e.g. by dropping the items whose
/// gold now errors).
mod written_paths_databases_with_other_line_endings {
    use crate::redteam15::written_paths::attempt;

    #[test]
    fn databases_checked_out_with_other_line_endings_do_not_pass() {
        attempt(|root| {
            std::fs::write(
                root.join(".gitattributes"),
                "database/**/*.sqlite text eol=crlf\n",
            )
            .unwrap();
            for db in ["concert_singer", "pets_1", "poker_player", "singer"] {
                let path = root.join(format!("database/{db}/{db}.sqlite"));
                let bytes = std::fs::read(&path).unwrap();
                let mut crlf = Vec::with_capacity(bytes.len() * 2);
                for byte in bytes {
                    if byte == b'\n' {
                        crlf.push(b'\r');
                    }
                    crlf.push(byte);
                }
                std::fs::write(&path, crlf).unwrap();
            }
        });
    }
}
