//! Red team round 32 (issue 44): `bird_critic_sound` on PostgreSQL 15 and MariaDB 10.11 after
//! round 30's fixes (commit 7643296: `gold_text.py::_exec_by_side`, `query_check.rs::
//! writes_nothing` on for any gold led by a read, `postgres/mod.rs::open` resetting the role's
//! per-database settings, `mysql/mod.rs::roll_back_prepared_xa`). Every test asserts the SECURE
//! outcome and runs its control: a failing test is a win. Report: `/work/notes/redteam32.md`.
//!
//! The set-up is round 29's / 30's lever item: a Query item on `shop` with a test case that
//! rebuilds the gold with `str.format` (`WRAPPED`: a plain `str`, neither marked nor the gold's
//! words, so it runs on a new session to the prediction's clone after the prediction is run
//! again, and only the Query data check of `query_check.rs` stands between a change of the
//! clone and a pass). What that check compares is `query_check::contents`: the digests' table
//! entries (`<db>.<table>`: columns and types, row count, the rows' hashes sorted) and the
//! structure entry (`<db>:structure`); the order entry (`<db>:order`, the rows in scan order)
//! and the settings entry (`<db>:settings`, collations among them) are left out.

use crate::common::servers;
use crate::redteam30::{assert_secure, my_run, pg_run};
use sqlgate::engine::livesql::{LiveJudge, Profile};
use sqlgate::input::livesql::{parse_items, LiveItem};
use std::path::Path;

/// Round 29's `WRAPPED` test case: the gold wrapped in a derived table by `str.format`, run after
/// the prediction again, their rows compared.
pub(crate) const WRAPPED: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn):\n    gold = ['SELECT * FROM ({}) AS gold'.format(s) for s in sol_sqls]\n    pred = execute_queries(pred_sqls, db_name, conn, None, '')\n    res = execute_queries(gold, db_name, conn, None, '')\n    assert not res[1] and sorted(pred[0]) == sorted(res[0]), f'the gold gave {res[0]}'\n    return 1\n";

/// A Query item on `shop` with the one test case [`WRAPPED`] and the gold `gold`.
fn item(gold: &str) -> LiveItem {
    let line = serde_json::json!({
        "instance_id": "lever32", "db_id": "shop", "category": "Query", "sol_sql": [gold],
        "preprocess_sql": [], "clean_up_sql": [], "test_cases": [WRAPPED], "issue_sql": [],
        "conditions": {}, "efficiency": false, "query": "which products?",
    });
    parse_items(Path::new("lever32.jsonl"), &format!("{line}\n"))
        .unwrap()
        .remove(0)
}

/// Whether the gold, `wrong` and `lever` pass under `bird_critic_sound`.
fn verdicts<J: LiveJudge>(run: &J, gold: &str, wrong: &str, lever: &[&str]) -> [bool; 3] {
    let item = item(gold);
    let predictions: [Vec<String>; 3] = [
        vec![gold.into()],
        vec![wrong.into()],
        lever.iter().map(|s| s.to_string()).collect(),
    ];
    predictions.each_ref().map(|p| {
        let verdict = LiveJudge::judge(run, &item, Some(p), Profile::BirdCriticSound).unwrap();
        eprintln!("{p:?}: {} {}", verdict.success, verdict.message);
        verdict.success
    })
}

/// Class 3 (server state the Query data check does not compare: the rows' physical order).
/// Set-up: a Query item whose gold reads rows in scan order (`LIMIT 1` without `ORDER BY`, and
/// `string_agg` without `ORDER BY`): on the twin the gold reads `Toaster` (id 2) before
/// `Compass` (id 10). The wrong prediction orders by name (`Compass` first). Lever (PostgreSQL):
/// `UPDATE products SET stock = stock WHERE id = 2`, which writes a new version of the row at
/// the end of the heap: the same rows, in another order. `query_check::contents` keeps the table
/// entries (whose row hashes are sorted) and the structure entry, not the order entry, so the
/// check sees nothing, and the wrapped gold on the prediction's clone reads `Compass` first.
/// Control: the wrong prediction alone fails.
mod postgresql_row_order_outside_the_data_check {
    use super::*;

    const FIRST_GOLD: &str = "SELECT name FROM products WHERE stock = 0 LIMIT 1";
    const FIRST_WRONG: &str = "SELECT name FROM products WHERE stock = 0 ORDER BY name LIMIT 1";
    const LIST_GOLD: &str = "SELECT string_agg(name, ', ') FROM products WHERE stock = 0";
    const LIST_WRONG: &str =
        "SELECT string_agg(name, ', ' ORDER BY name) FROM products WHERE stock = 0";
    /// The same row written again: it moves to the end of the heap.
    const MOVE: &str = "UPDATE products SET stock = stock WHERE id = 2";

    #[test]
    fn postgresql_rows_moved_in_the_heap_do_not_pass_an_unordered_gold() {
        let run = pg_run();
        let first = verdicts(&run, FIRST_GOLD, FIRST_WRONG, &[MOVE, FIRST_WRONG]);
        let list = verdicts(&run, LIST_GOLD, LIST_WRONG, &[MOVE, LIST_WRONG]);
        assert_eq!(first[..2], [true, false], "LIMIT 1: control: gold / wrong");
        assert_eq!(
            list[..2],
            [true, false],
            "string_agg: control: gold / wrong"
        );
        assert!(
            !first[2] && !list[2],
            "WON: the moved row passed bird_critic_sound: LIMIT 1 {}, string_agg {}",
            first[2],
            list[2]
        );
    }
}

/// Class 3, the same lever on MariaDB: an InnoDB table is read in primary-key order, so the
/// prediction first moves `orders` (which no table references) to MyISAM (`foreign_key_checks`
/// off for its session) and has it rewritten in descending key order (`ALTER TABLE ... ORDER BY
/// id DESC`, which MyISAM keeps). The table entry (columns, types, sorted row hashes) and the
/// structure entry (indexes, `CREATE_OPTIONS`, defaults, checks) are unchanged; the engine and
/// the scan order are only in the order entry, which the check leaves out. The gold reads the
/// first pending order in scan order (id 1 on the twin), the wrong prediction the last one by
/// id. Control: the wrong prediction alone fails.
mod mariadb_row_order_outside_the_data_check {
    use super::*;

    const FIRST_GOLD: &str = "SELECT id FROM orders WHERE status = 'pending' LIMIT 1";
    const FIRST_WRONG: &str =
        "SELECT id FROM orders WHERE status = 'pending' ORDER BY id DESC LIMIT 1";

    #[test]
    fn mariadb_rows_reordered_on_disk_do_not_pass_an_unordered_gold() {
        let lever = [
            "ALTER TABLE orders DROP FOREIGN KEY orders_ibfk_1, DROP FOREIGN KEY orders_ibfk_2",
            "ALTER TABLE orders ENGINE = MyISAM",
            "ALTER TABLE orders ORDER BY id DESC",
            FIRST_WRONG,
        ];
        let found = verdicts(&my_run(), FIRST_GOLD, FIRST_WRONG, &lever);
        assert_secure("MyISAM ORDER BY", found);
    }
}

/// Class 3 (server state the Query data check does not compare: a column's collation). Set-up:
/// a Query item whose gold compares a text column under the database's case-insensitive
/// collation (`utf8mb4_general_ci`): `category = 'Outdoor'` counts the four `outdoor`
/// products. The wrong prediction compares case-sensitively (`BINARY category`, 0). Lever: the
/// prediction gives the column a binary collation (`MODIFY category VARCHAR(255) COLLATE
/// utf8mb4_bin`): the same bytes, the same `column_type` (`varchar(255)`), so the table entry
/// and the structure entry are unchanged; the collation is only in the settings entry, which the
/// check leaves out, and the wrapped gold now counts 0. Control: the wrong prediction fails.
mod mariadb_column_collation_outside_the_data_check {
    use super::*;

    const GOLD: &str = "SELECT COUNT(*) FROM products WHERE category = 'Outdoor'";
    const WRONG: &str = "SELECT COUNT(*) FROM products WHERE BINARY category = 'Outdoor'";
    const LEVER: &str =
        "ALTER TABLE products MODIFY category VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin";

    #[test]
    fn mariadb_a_column_made_case_sensitive_does_not_pass_a_case_insensitive_gold() {
        let found = verdicts(&my_run(), GOLD, WRONG, &[LEVER, WRONG]);
        assert_secure("column collation", found);
    }
}

/// Class 3 (round 30's fix to `query_check.rs::writes_nothing`): the check is on when every
/// gold statement's first word, after blanks, `--` / `/* */` comments and parentheses, is a
/// read. `first_word` knows neither MariaDB's `#` comment nor PostgreSQL's nested `/* /* */ */`
/// comment: after them it finds no reading word (`""`, `still`), so the check is off for a plain
/// read, and round 29's rewrite passes. Lever: `UPDATE products SET stock = 0 WHERE stock < 5`
/// (the wrong four now out of stock) then the wrong query. Control: the same gold's wrong query
/// alone fails, and the lever against the same gold without its comment fails.
mod a_leading_comment_the_first_word_scan_does_not_know {
    use super::*;

    const GOLD: &str = "SELECT name FROM products WHERE stock = 0";
    const WRONG: &str = "SELECT name FROM products WHERE stock < 5";
    const REWRITE: &str = "UPDATE products SET stock = 0 WHERE stock < 5";

    #[test]
    fn mariadb_a_gold_led_by_a_hash_comment_is_still_data_checked() {
        let run = my_run();
        assert_secure("plain", verdicts(&run, GOLD, WRONG, &[REWRITE, WRONG]));
        let gold = format!("# the products out of stock\n{GOLD}");
        assert_secure("# comment", verdicts(&run, &gold, WRONG, &[REWRITE, WRONG]));
    }

    #[test]
    fn postgresql_a_gold_led_by_a_nested_comment_is_still_data_checked() {
        let run = pg_run();
        assert_secure("plain", verdicts(&run, GOLD, WRONG, &[REWRITE, WRONG]));
        let gold = format!("/* out of stock /* stock = 0 */ products */ {GOLD}");
        assert_secure(
            "nested comment",
            verdicts(&run, &gold, WRONG, &[REWRITE, WRONG]),
        );
    }
}

/// Class 3, the collation lever on PostgreSQL: the test databases use `C.UTF-8` (byte order,
/// every capital before every small letter). Set-up: a Query item whose gold compares a name
/// with a small-letter literal (`name > 'lantern'`: 0 under `C.UTF-8`). The wrong prediction
/// compares the lower-cased name (`lower(name) >= 'lantern'`: 6). Lever: the prediction gives
/// the column ICU's root collation (`ALTER COLUMN name TYPE text COLLATE "und-x-icu"`, where
/// `Lantern` sorts after `lantern`): the same bytes and type (`text`), so the table entry and the
/// structure entry are unchanged; the collation is only in the settings entry, which the check
/// leaves out, and the wrapped gold now counts 6. Control: the wrong prediction fails.
mod postgresql_column_collation_outside_the_data_check {
    use super::*;

    const GOLD: &str = "SELECT COUNT(*) FROM products WHERE name > 'lantern'";
    const WRONG: &str = "SELECT COUNT(*) FROM products WHERE lower(name) >= 'lantern'";
    const LEVER: &str = "ALTER TABLE products ALTER COLUMN name TYPE text COLLATE \"und-x-icu\"";

    #[test]
    fn postgresql_a_column_given_another_collation_does_not_pass_a_byte_order_gold() {
        let found = verdicts(&pg_run(), GOLD, WRONG, &[LEVER, WRONG]);
        assert_secure("column collation", found);
    }
}

/// Class 3 (a column's visibility, which neither the table entry nor the structure entry
/// holds): MariaDB's `INVISIBLE` columns are left out of `SELECT *`. Set-up: a Query item whose
/// gold is `SELECT * FROM products WHERE stock = 0` (five columns); the wrong prediction names
/// four of them (no `stock`). Lever: `ALTER TABLE products MODIFY stock INT INVISIBLE`: the
/// table entry (`information_schema.columns`' names and `column_type`, the rows hashed over
/// every column, invisible ones too) and the structure entry are unchanged, so the check sees
/// nothing, and the wrapped gold's `SELECT *` now reads four columns. Control: the wrong
/// prediction fails.
mod mariadb_invisible_column_outside_the_data_check {
    use super::*;

    const GOLD: &str = "SELECT * FROM products WHERE stock = 0";
    const WRONG: &str = "SELECT id, name, category, price FROM products WHERE stock = 0";
    const LEVER: &str = "ALTER TABLE products MODIFY stock INT INVISIBLE";

    #[test]
    fn mariadb_a_column_made_invisible_does_not_pass_a_select_star_gold() {
        let found = verdicts(&my_run(), GOLD, WRONG, &[LEVER, WRONG]);
        assert_secure("invisible column", found);
    }
}

/// Class 3, the reach of the order and visibility levers: against a test case that runs the
/// marked gold (`execute_queries(sol_sqls, ...)`, routed to the twin, which the prediction never
/// touches) the moved row ([`postgresql_row_order_outside_the_data_check`]) and the invisible
/// column ([`mariadb_invisible_column_outside_the_data_check`]) change nothing the gold reads.
/// Contained probe: the lever fails like the wrong prediction. Control: the gold passes, the
/// wrong prediction fails.
mod order_and_visibility_against_a_marked_gold {
    use super::*;

    /// The prediction again, then the marked gold (on the twin), their rows compared.
    const MARKED: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn):\n    pred = execute_queries(pred_sqls, db_name, conn, None, '')\n    res = execute_queries(sol_sqls, db_name, conn, None, '')\n    assert not res[1] and sorted(pred[0]) == sorted(res[0]), f'the gold gave {res[0]}'\n    return 1\n";

    /// [`verdicts`] with the test case [`MARKED`].
    fn marked<J: LiveJudge>(run: &J, gold: &str, wrong: &str, lever: &[&str]) -> [bool; 3] {
        let mut item = item(gold);
        item.test_cases = vec![MARKED.to_string()];
        let predictions: [Vec<String>; 3] = [
            vec![gold.into()],
            vec![wrong.into()],
            lever.iter().map(|s| s.to_string()).collect(),
        ];
        predictions.each_ref().map(|p| {
            run.judge(&item, Some(p), Profile::BirdCriticSound)
                .unwrap()
                .success
        })
    }

    #[test]
    fn postgresql_a_moved_row_does_not_reach_the_twins_gold() {
        let found = marked(
            &pg_run(),
            "SELECT name FROM products WHERE stock = 0 LIMIT 1",
            "SELECT name FROM products WHERE stock = 0 ORDER BY name LIMIT 1",
            &[
                "UPDATE products SET stock = stock WHERE id = 2",
                "SELECT name FROM products WHERE stock = 0 ORDER BY name LIMIT 1",
            ],
        );
        assert_secure("moved row, marked gold", found);
    }

    #[test]
    fn mariadb_an_invisible_column_does_not_reach_the_twins_gold() {
        let wrong = "SELECT id, name, category, price FROM products WHERE stock = 0";
        let found = marked(
            &my_run(),
            "SELECT * FROM products WHERE stock = 0",
            wrong,
            &["ALTER TABLE products MODIFY stock INT INVISIBLE", wrong],
        );
        assert_secure("invisible column, marked gold", found);
    }
}

/// Class 3 (round 30's `writes_nothing`, the other edge): the check is on only when EVERY gold
/// statement starts with a reading word, so a read whose gold first sets a session variable
/// (`SET SESSION group_concat_max_len = 100000` before a `GROUP_CONCAT`, a common MySQL form) is
/// treated as a gold that writes and is not checked. SECURITY.md leaves open by design only "an
/// item whose gold writes"; this gold writes nothing. Set-up: the test case runs the gold's
/// leading statements as they are (to the twin) and its last one wrapped in a derived table by
/// `str.format` (to the prediction's clone). Lever: round 29's rewrite (`UPDATE products SET
/// stock = 0 WHERE stock < 5`) then the wrong query. Control: the gold passes, the wrong query
/// fails.
mod mariadb_a_gold_led_by_a_session_setting_is_not_data_checked {
    use super::*;

    /// The gold's leading statements as they are, its last wrapped.
    const WRAP_LAST: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn):\n    gold = sol_sqls[:-1] + ['SELECT * FROM ({}) AS gold'.format(sol_sqls[-1])]\n    pred = execute_queries(pred_sqls, db_name, conn, None, '')\n    res = execute_queries(gold, db_name, conn, None, '')\n    assert not res[1] and sorted(pred[0]) == sorted(res[0]), f'the gold gave {res[0]}'\n    return 1\n";
    const WRONG: &str = "SELECT GROUP_CONCAT(name ORDER BY name) FROM products WHERE stock < 5";
    const REWRITE: &str = "UPDATE products SET stock = 0 WHERE stock < 5";

    #[test]
    fn mariadb_a_read_that_sets_a_session_variable_first_is_still_data_checked() {
        let run = my_run();
        let gold = [
            "SET SESSION group_concat_max_len = 100000".to_string(),
            "SELECT GROUP_CONCAT(name ORDER BY name) FROM products WHERE stock = 0".to_string(),
        ];
        let mut item = item(&gold[1]);
        item.sol_sql = gold.to_vec();
        item.test_cases = vec![WRAP_LAST.to_string()];
        let predictions: [Vec<String>; 3] = [
            gold.to_vec(),
            vec![WRONG.into()],
            vec![REWRITE.into(), WRONG.into()],
        ];
        let found = predictions.each_ref().map(|p| {
            let verdict = LiveJudge::judge(&run, &item, Some(p), Profile::BirdCriticSound).unwrap();
            eprintln!("{p:?}: {} {}", verdict.success, verdict.message);
            verdict.success
        });
        assert_secure("SET-led gold", found);
    }
}

/// Class 1 (paths the base config names, after round 31's fix `input::spider2_dbt::
/// linked_folder`): the submission folder `sub` stays a real folder, but the results file the
/// base config reads (`sub/results_metadata.jsonl`) becomes a link to a results file the pull
/// request adds in the gold's folder (`gold/results_metadata.jsonl`, naming each instance's
/// `db.duckdb`, the gold file itself). If the run took the answers' folder from the link's target
/// (`gold`, a real folder), every answer would be the gold. Set-up: `spider2_dbt_gate::gated`
/// (`i3` wrong in the baseline), judged as a job judges it with the workspace set to the
/// repository (`common::repo::judged`). Control: `i1` answered wrong without the link
/// (exit 1).
mod spider2_dbt_results_file_linked_into_the_gold {
    use crate::redteam31::spider2_dbt_submission_folder_linked_to_the_gold::{
        judged, results_naming_the_gold,
    };
    use std::path::Path;

    /// The lever: `gold/results_metadata.jsonl` naming the gold files, and the base config's
    /// results file a link to it.
    fn results_file_is_the_golds(root: &Path) {
        results_naming_the_gold(root);
        let results = root.join("sub/results_metadata.jsonl");
        std::fs::remove_file(&results).unwrap();
        std::os::unix::fs::symlink("../gold/results_metadata.jsonl", &results).unwrap();
    }

    #[test]
    fn control_a_wrong_answer_fails_the_gate() {
        let (code, said) = judged(|_| {});
        assert_eq!(code, Some(1), "{said}");
    }

    #[test]
    fn a_results_file_linked_into_the_gold_folder_does_not_pass() {
        let (code, said) = judged(results_file_is_the_golds);
        eprintln!("{said}");
        assert_ne!(
            code,
            Some(0),
            "WON: `sub/results_metadata.jsonl` -> `gold/...` passed the gate: {said}"
        );
    }
}

/// Class 3 through the gate (what a job runs): the wins above as a pull request, so the verdict
/// is the CLI's exit code. Set-up: a bundled-style bird-critic dataset of ONE Query item (the
/// lever item: [`WRAPPED`] and the gold given), gated on `bird_critic_sound` (`common::
/// bird_critic_gate`'s config), its baseline made on `main` with the gold as the prediction
/// (100); the pull request predicts `lever` then the wrong query, judged with
/// `eval --trusted-base <base>`. Control: the pull request predicting the wrong query alone
/// exits 1.
pub(crate) mod through_the_gate {
    use super::*;
    use crate::common::bird_critic_gate::{predict, GateCorpus};
    use crate::common::{self, repo};
    use crate::livesql_pg_gate::PG;

    /// MariaDB's form of the corpus (as `livesql_my_gate` has it).
    pub(crate) const MY: GateCorpus = GateCorpus {
        engine: "mysql",
        url_database: "mysql",
        folder: "mysql",
        suffix: "my",
    };

    /// Makes `root` a repository whose `main` holds the one lever item on `gold` (item
    /// `lever32`, test case [`WRAPPED`]), its config (returned) and the baseline made with the
    /// gold as the prediction.
    pub(crate) fn based(
        corpus: &GateCorpus,
        server: &servers::Server,
        root: &Path,
        gold: &str,
    ) -> String {
        based_with(corpus, server, root, (&[], gold))
    }

    /// [`based`] with the item's `preprocess` (red team round 36).
    pub(crate) fn based_with(
        corpus: &GateCorpus,
        server: &servers::Server,
        root: &Path,
        (preprocess, gold): (&[&str], &str),
    ) -> String {
        let line = serde_json::json!({
            "instance_id": "lever32", "db_id": "shop", "category": "Query", "sol_sql": [gold],
            "preprocess_sql": preprocess, "clean_up_sql": [], "test_cases": [WRAPPED],
            "issue_sql": [], "conditions": {}, "efficiency": false, "query": "which products?",
        });
        // `GateCorpus::command_on` finds the databases by `"db_id": "<db>"`, spaced.
        let line = line.to_string().replace("\"db_id\":", "\"db_id\": ");
        std::fs::write(root.join("items.jsonl"), format!("{line}\n")).unwrap();
        std::fs::create_dir_all(root.join("predictions")).unwrap();
        let predicted = serde_json::json!({"instance_id": "lever32", "pred_sqls": [gold]});
        std::fs::write(
            root.join("predictions/model.jsonl"),
            format!("{predicted}\n"),
        )
        .unwrap();
        let config = corpus
            .config()
            .replace("  per_difficulty: { Management: 0.0, Query: 0.0 }\n", "");
        std::fs::write(root.join("sqlgate.yml"), &config).unwrap();
        repo::init_main(root, "dataset");
        let made = corpus.sqlgate_on(
            server,
            root,
            &["baseline", "update", "--config", "sqlgate.yml"],
        );
        common::assert_exit(&made, 0);
        repo::commit_all(root, "baseline");
        config
    }

    /// The exit code and all it said of the pull request predicting `prediction`, the dataset
    /// being the one lever item with `preprocess` and `gold`.
    fn gate(
        corpus: &GateCorpus,
        server: &servers::Server,
        item: (&[&str], &str),
        prediction: &[&str],
    ) -> (Option<i32>, String) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        based_with(corpus, server, root, item);
        let base = repo::head(root);
        common::git(root, &["checkout", "-qb", "pr"]);
        predict(root, "lever32", prediction);
        repo::commit_all(root, "the pull request");
        let args = [&repo::EVAL[..], &["--trusted-base", &base]].concat();
        let run = corpus.sqlgate_on(server, root, &args);
        (run.status.code(), common::text(&run))
    }

    /// Secure: the control exits 1 and the lever does not exit 0.
    pub(crate) fn attempt(
        corpus: &GateCorpus,
        server: &servers::Server,
        gold: &str,
        wrong: &str,
        lever: &[&str],
    ) {
        attempt_with(corpus, server, (&[], gold), wrong, lever);
    }

    /// [`attempt`] on the item with `preprocess` and `gold` (`item`).
    pub(crate) fn attempt_with(
        corpus: &GateCorpus,
        server: &servers::Server,
        item: (&[&str], &str),
        wrong: &str,
        lever: &[&str],
    ) {
        let (code, said) = gate(corpus, server, item, &[wrong]);
        assert_eq!(code, Some(1), "control: {said}");
        let (code, said) = gate(corpus, server, item, lever);
        eprintln!("{said}");
        assert_ne!(
            code,
            Some(0),
            "WON: the regressing pull request passed: {said}"
        );
    }

    #[test]
    fn postgresql_a_moved_row_does_not_pass_the_gate() {
        let server = servers::postgres();
        crate::livesql_pg::load_databases(server);
        let wrong = "SELECT name FROM products WHERE stock = 0 ORDER BY name LIMIT 1";
        attempt(
            &PG,
            server,
            "SELECT name FROM products WHERE stock = 0 LIMIT 1",
            wrong,
            &["UPDATE products SET stock = stock WHERE id = 2", wrong],
        );
    }

    #[test]
    fn mariadb_an_invisible_column_does_not_pass_the_gate() {
        let (server, _) = crate::livesql_my_gate::loaded();
        let wrong = "SELECT id, name, category, price FROM products WHERE stock = 0";
        attempt(
            &MY,
            server,
            "SELECT * FROM products WHERE stock = 0",
            wrong,
            &["ALTER TABLE products MODIFY stock INT INVISIBLE", wrong],
        );
    }

    #[test]
    fn postgresql_a_column_collation_does_not_pass_the_gate() {
        let server = servers::postgres();
        crate::livesql_pg::load_databases(server);
        let wrong = "SELECT COUNT(*) FROM products WHERE lower(name) >= 'lantern'";
        attempt(
            &PG,
            server,
            "SELECT COUNT(*) FROM products WHERE name > 'lantern'",
            wrong,
            &[
                "ALTER TABLE products ALTER COLUMN name TYPE text COLLATE \"und-x-icu\"",
                wrong,
            ],
        );
    }

    #[test]
    fn postgresql_a_gold_led_by_a_nested_comment_does_not_pass_the_gate() {
        let server = servers::postgres();
        crate::livesql_pg::load_databases(server);
        let wrong = "SELECT name FROM products WHERE stock < 5";
        attempt(
            &PG,
            server,
            "/* out of stock /* stock = 0 */ products */ SELECT name FROM products WHERE stock = 0",
            wrong,
            &["UPDATE products SET stock = 0 WHERE stock < 5", wrong],
        );
    }

    #[test]
    fn mariadb_rows_reordered_on_disk_do_not_pass_the_gate() {
        let (server, _) = crate::livesql_my_gate::loaded();
        let wrong = "SELECT id FROM orders WHERE status = 'pending' ORDER BY id DESC LIMIT 1";
        attempt(
            &MY,
            server,
            "SELECT id FROM orders WHERE status = 'pending' LIMIT 1",
            wrong,
            &[
                "ALTER TABLE orders DROP FOREIGN KEY orders_ibfk_1, DROP FOREIGN KEY orders_ibfk_2",
                "ALTER TABLE orders ENGINE = MyISAM",
                "ALTER TABLE orders ORDER BY id DESC",
                wrong,
            ],
        );
    }

    #[test]
    fn mariadb_a_column_collation_does_not_pass_the_gate() {
        let (server, _) = crate::livesql_my_gate::loaded();
        let wrong = "SELECT COUNT(*) FROM products WHERE BINARY category = 'Outdoor'";
        attempt(
            &MY,
            server,
            "SELECT COUNT(*) FROM products WHERE category = 'Outdoor'",
            wrong,
            &[
                "ALTER TABLE products MODIFY category VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
                wrong,
            ],
        );
    }

    #[test]
    fn mariadb_a_gold_led_by_a_hash_comment_does_not_pass_the_gate() {
        let (server, _) = crate::livesql_my_gate::loaded();
        let wrong = "SELECT name FROM products WHERE stock < 5";
        attempt(
            &MY,
            server,
            "# the products out of stock\nSELECT name FROM products WHERE stock = 0",
            wrong,
            &["UPDATE products SET stock = 0 WHERE stock < 5", wrong],
        );
    }
}
