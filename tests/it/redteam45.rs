//! Red team round 45 (issue 44): `bird_critic_sound` after round 44's fix (ece388b): the
//! preprocess runs on a session of its own, the prediction and the twin's gold on new sessions,
//! and for an item with a preprocess (and, on the servers, test cases) the gold also runs on the
//! preprocess's own session on a second twin; an item whose gold's result or writes differ is not
//! judged (`gold_effect.rs`). The attempts:
//! - a gold of two statements whose first reads the preprocess's session state (round 44's
//!   custom setting, `LAST_INSERT_ID`, `last_insert_rowid()`), the second a summary: the result
//!   compared is the last statement's alone (`outcome` in `postgres/sound.rs::Twin::gold_ran`,
//!   `mysql/sound.rs`, `gold_twin.rs::gold_ran`), while a test case reads the first; on
//!   PostgreSQL (also through the gate), MariaDB and the SQLite livesql engine (the repair
//!   path's);
//! - honest golds the comparison cannot tell from session-bound ones: a Management gold
//!   stamping the time, Query golds whose rows carry the clock (PostgreSQL) or `random()`
//!   (SQLite) in a column the test leaves out (false fails); a plain update of the table the
//!   preprocess updated (contained).
//!
//! Every test asserts the SECURE outcome and runs its control: a failing test is a win. Report:
//! `/work/notes/redteam45.md`.
//!
//! After the lead's fix (round 45: every gold statement's rows or error are compared, not the
//! last one's), the won items are not judged (every prediction fails, the gold too); their gate
//! run is dropped with the item, which no pull request can regress any more. The false fails
//! are a documented cost (docs/SECURITY.md): a gold whose result or writes differ from run to
//! run (the clock, `random()`) cannot be told from one that reads the preprocess's session, so
//! such an item with a preprocess is not judged; their tests assert that, with the official
//! control.

use crate::redteam46::{judged, line, sqlite_judged, sqlite_shop};
use sqlgate::engine::livesql::Profile;

/// A test case that compares the first statement of the prediction with the first of the gold
/// (`sol_sqls[:1]` keeps the gold's mark: a list of its marked statements), as a test of an item
/// whose gold is a query followed by a summary does.
const FIRST: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn, conditions=None):\n    pred = execute_queries(pred_sqls[:1], db_name, conn, None, '')\n    res = execute_queries(sol_sqls[:1], db_name, conn, None, '')\n    assert not res[1] and sorted(pred[0]) == sorted(res[0]), f'the gold gave {res[0]}'\n    return 1\n";

/// Class 3, PostgreSQL: round 44's custom setting (`SET app.min_stock = '5'`), read by the
/// first statement of a two-statement gold; the second (`SELECT count(*) FROM products`) gives
/// the same on either session, and it is the only result `gold_effect` compares (the gold's
/// last rows). The test case ([`FIRST`]) compares the first statements: officially on the
/// preprocess's session (the four products under 5), under the sound profile on the twin's new
/// session (none). Honest `stock < 5`; wrong `stock < 0`.
mod postgresql_a_gold_whose_first_statement_reads_the_session {
    use super::*;

    #[test]
    fn postgresql_the_first_of_two_gold_statements_does_not_pass_a_wrong_query() {
        let run = crate::redteam30::pg_run();
        let gold = [
            "SELECT name FROM products WHERE stock < coalesce(current_setting('app.min_stock', true), '0')::int",
            "SELECT count(*) FROM products",
        ];
        let item = line("Query", &["SET app.min_stock = '5'"], &gold, FIRST);
        let honest = ["SELECT name FROM products WHERE stock < 5"];
        let wrong = ["SELECT name FROM products WHERE stock < 0"];
        let three = |profile| [&gold[..], &honest, &wrong].map(|p| judged(&run, &item, p, profile));
        let official = three(Profile::BirdCritic);
        assert_eq!(
            official,
            [true, true, false],
            "control: the official profile"
        );
        let sound = three(Profile::BirdCriticSound);
        assert!(
            !sound[2],
            "WON: the wrong prediction passed bird_critic_sound ({sound:?}; official {official:?})"
        );
    }
}

/// Class 2 (the repair path's SQLite livesql engine): round 44's `last_insert_rowid()`, read by
/// the first statement of a two-statement gold; `gold_twin.rs::gold_ran` compares the last
/// statement's rows alone. Set-up: preprocess an `INSERT` of a new product; gold `id =
/// last_insert_rowid()` then `count(*)`; the test case [`FIRST`]; honest `name = 'Canteen'`;
/// wrong `stock < 0`.
mod sqlite_a_gold_whose_first_statement_reads_the_connection {
    use super::{sqlite_judged, sqlite_shop};
    use sqlgate::engine::livesql::Profile;

    #[test]
    fn sqlite_the_first_of_two_gold_statements_does_not_pass_a_wrong_query() {
        let folder = tempfile::tempdir().unwrap();
        let template = sqlite_shop(folder.path());
        let preprocess = ["INSERT INTO products (name, category, price, stock) VALUES ('Canteen', 'outdoor', 12.5, 3)"];
        let gold = [
            "SELECT name FROM products WHERE id = last_insert_rowid()",
            "SELECT count(*) FROM products",
        ];
        let item = super::line("Query", &preprocess, &gold, super::FIRST);
        let honest = ["SELECT name FROM products WHERE name = 'Canteen'"];
        let wrong = ["SELECT name FROM products WHERE stock < 0"];
        let three = |profile| {
            [&gold[..], &honest, &wrong].map(|p| sqlite_judged(&template, &item, p, profile))
        };
        let official = three(Profile::BirdCritic);
        assert_eq!(
            official,
            [true, true, false],
            "control: the official profile"
        );
        let sound = three(Profile::BirdCriticSound);
        assert!(
            !sound[2],
            "WON: the wrong prediction passed bird_critic_sound ({sound:?}; official {official:?})"
        );
    }
}

/// Class 3, PostgreSQL, false fail: an honest Management item whose gold stamps the time
/// (`UPDATE orders SET ordered_at = now()::text WHERE status = 'pending'`), with a preprocess
/// (a note on an order), so its gold runs on two twins; their writes differ by the clock, and
/// `gold_effect::differences` compares the written entries' values. The test case checks the
/// pending orders carry the time of the last hour. Honest `current_timestamp::text`; wrong:
/// the time a day ago.
mod postgresql_a_gold_that_stamps_the_time {
    use super::*;

    const TODAY: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn, conditions=None):\n    res = execute_queries([\"SELECT count(*) FILTER (WHERE ordered_at::timestamptz > now() - interval '1 hour'), count(*) FROM orders WHERE status = 'pending'\"], db_name, conn, None, '')\n    assert not res[1] and res[0][0][0] == res[0][0][1] > 0, f'stamped now: {res[0]}'\n    return 1\n";

    #[test]
    fn postgresql_an_honest_gold_stamping_the_time_is_not_judged() {
        let run = crate::redteam30::pg_run();
        let gold = ["UPDATE orders SET ordered_at = now()::text WHERE status = 'pending'"];
        let preprocess = ["UPDATE orders SET note = 'rechecked' WHERE id = 2"];
        let item = line("Management", &preprocess, &gold, TODAY);
        let honest =
            ["UPDATE orders SET ordered_at = current_timestamp::text WHERE status = 'pending'"];
        let wrong = ["UPDATE orders SET ordered_at = (now() - interval '1 day')::text WHERE status = 'pending'"];
        let three = |profile| [&gold[..], &honest, &wrong].map(|p| judged(&run, &item, p, profile));
        let official = three(Profile::BirdCritic);
        assert_eq!(
            official,
            [true, true, false],
            "control: the official profile"
        );
        let sound = three(Profile::BirdCriticSound);
        assert_eq!(
            sound, [false; 3],
            "the documented cost: not judged under bird_critic_sound (official {official:?})"
        );
    }
}

/// Class 3, PostgreSQL, false fail: an honest Query item whose gold's rows carry the clock
/// (`SELECT name, clock_timestamp() AS asked_at …`), with a preprocess, so the gold's two runs
/// are compared: their results (`outcome`, every column) differ by the clock. The test case
/// compares the names only. Honest `now()` for the clock; wrong `stock < 0`.
mod postgresql_a_gold_whose_rows_carry_the_clock {
    use super::*;

    const NAMES: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn, conditions=None):\n    pred = execute_queries(pred_sqls, db_name, conn, None, '')\n    res = execute_queries(sol_sqls, db_name, conn, None, '')\n    assert not res[1] and sorted(r[0] for r in pred[0]) == sorted(r[0] for r in res[0]), f'the gold gave {res[0]}'\n    return 1\n";

    #[test]
    fn postgresql_an_honest_gold_reading_the_clock_is_not_judged() {
        let run = crate::redteam30::pg_run();
        let gold = ["SELECT name, clock_timestamp() AS asked_at FROM products WHERE stock < 5"];
        let preprocess = ["UPDATE orders SET note = 'rechecked' WHERE id = 2"];
        let item = line("Query", &preprocess, &gold, NAMES);
        let honest = ["SELECT name, now() AS asked_at FROM products WHERE stock < 5"];
        let wrong = ["SELECT name, now() AS asked_at FROM products WHERE stock < 0"];
        let three = |profile| [&gold[..], &honest, &wrong].map(|p| judged(&run, &item, p, profile));
        let official = three(Profile::BirdCritic);
        assert_eq!(
            official,
            [true, true, false],
            "control: the official profile"
        );
        let sound = three(Profile::BirdCriticSound);
        assert_eq!(
            sound, [false; 3],
            "the documented cost: not judged under bird_critic_sound (official {official:?})"
        );
    }
}

/// Class 3, MariaDB: round 44's `LAST_INSERT_ID(expr)` (the tent restocked to 12), read by the
/// first statement of a two-statement gold; `mysql/sound.rs` compares the gold's last rows
/// alone. The test case [`FIRST`]. Honest `id = 7`; wrong `stock = 0` (the gold's answer on a
/// new session, where `LAST_INSERT_ID()` is 0).
mod mariadb_a_gold_whose_first_statement_reads_the_session {
    use super::*;

    #[test]
    fn mariadb_the_first_of_two_gold_statements_does_not_pass_a_wrong_query() {
        let run = crate::redteam30::my_run();
        let gold = [
            "SELECT name FROM products WHERE stock = LAST_INSERT_ID()",
            "SELECT count(*) FROM products",
        ];
        let preprocess = ["UPDATE products SET stock = LAST_INSERT_ID(stock + 10) WHERE id = 7"];
        let item = line("Query", &preprocess, &gold, FIRST);
        let honest = ["SELECT name FROM products WHERE id = 7"];
        let wrong = ["SELECT name FROM products WHERE stock = 0"];
        let three = |profile| [&gold[..], &honest, &wrong].map(|p| judged(&run, &item, p, profile));
        let official = three(Profile::BirdCritic);
        assert_eq!(
            official,
            [true, true, false],
            "control: the official profile"
        );
        let sound = three(Profile::BirdCriticSound);
        assert!(
            !sound[2],
            "WON: the wrong prediction passed bird_critic_sound ({sound:?}; official {official:?})"
        );
    }
}

/// Class 3, PostgreSQL, false fail: an honest Management item whose gold is a plain,
/// deterministic update of the table its preprocess updated (no clock, no session state). The
/// two twins' `orders` entries may still differ in the rows' scan order (the preprocess's and
/// the gold's row versions on one session or two). The test case checks no order is pending.
/// Honest `status IN ('pending')`; wrong: one order shipped. After round 47's fix (the
/// whitelist, `livesql/stateless.rs`) the item is not judged: an `UPDATE` of a table of the
/// database may run its triggers on the preprocess's session (the documented cost,
/// docs/SECURITY.md).
mod postgresql_a_plain_update_after_the_preprocess {
    use super::*;

    const NONE_PENDING: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn, conditions=None):\n    res = execute_queries([\"SELECT count(*) FROM orders WHERE status = 'pending'\"], db_name, conn, None, '')\n    assert not res[1] and res[0][0][0] == 0, f'pending: {res[0]}'\n    return 1\n";

    #[test]
    fn postgresql_an_honest_plain_update_in_the_preprocess_leaves_the_item_not_judged() {
        let run = crate::redteam30::pg_run();
        let gold = ["UPDATE orders SET status = 'shipped' WHERE status = 'pending'"];
        let preprocess = ["UPDATE orders SET note = 'rechecked' WHERE id = 2"];
        let item = line("Management", &preprocess, &gold, NONE_PENDING);
        let honest = ["UPDATE orders SET status = 'shipped' WHERE status IN ('pending')"];
        let wrong = ["UPDATE orders SET status = 'shipped' WHERE id = 1"];
        let three = |profile| [&gold[..], &honest, &wrong].map(|p| judged(&run, &item, p, profile));
        let official = three(Profile::BirdCritic);
        assert_eq!(
            official,
            [true, true, false],
            "control: the official profile"
        );
        let sound = three(Profile::BirdCriticSound);
        assert_eq!(
            sound, [false; 3],
            "the documented cost: not judged under bird_critic_sound (official {official:?})"
        );
    }
}

/// Class 2 (the SQLite livesql engine), false fail: an honest Query item whose gold's rows
/// carry `random()` (a sample column the test case leaves out), with a preprocess, so the
/// gold's two runs (`gold_twin.rs::gold_ran`) are compared with every column. The test case
/// compares the names only. Honest `abs(random())`; wrong `stock < 0`.
mod sqlite_a_gold_with_a_random_column {
    use super::{sqlite_judged, sqlite_shop};
    use sqlgate::engine::livesql::Profile;

    #[test]
    fn sqlite_an_honest_gold_with_a_random_column_is_not_judged() {
        let folder = tempfile::tempdir().unwrap();
        let template = sqlite_shop(folder.path());
        let names = "def test_case(pred_sqls, sol_sqls, db_path, conn, conditions=None):\n    pred = execute_queries(pred_sqls, db_path, conn, None, '')\n    res = execute_queries(sol_sqls, db_path, conn, None, '')\n    assert not res[1] and sorted(r[0] for r in pred[0]) == sorted(r[0] for r in res[0]), f'the gold gave {res[0]}'\n    return 1\n";
        let preprocess = ["UPDATE orders SET note = 'rechecked' WHERE id = 2"];
        let gold = ["SELECT name, random() AS draw FROM products WHERE stock < 5"];
        let item = super::line("Query", &preprocess, &gold, names);
        let honest = ["SELECT name, abs(random()) AS draw FROM products WHERE stock < 5"];
        let wrong = ["SELECT name, random() AS draw FROM products WHERE stock < 0"];
        let three = |profile| {
            [&gold[..], &honest, &wrong].map(|p| sqlite_judged(&template, &item, p, profile))
        };
        let official = three(Profile::BirdCritic);
        assert_eq!(
            official,
            [true, true, false],
            "control: the official profile"
        );
        let sound = three(Profile::BirdCriticSound);
        assert_eq!(
            sound, [false; 3],
            "the documented cost: not judged under bird_critic_sound (official {official:?})"
        );
    }
}
