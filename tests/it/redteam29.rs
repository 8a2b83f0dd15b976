//! Red team round 29 (issue 44): `bird_critic_sound` on PostgreSQL 15 and MariaDB 10.11 as `main`
//! holds it (`python.rs::ServerSides`: a request the runner marks `"side": "gold"` runs on the
//! twin clone, every other request on ONE session to the prediction's clone). Every test asserts
//! the SECURE outcome and runs its control (the gold passes, the plain wrong prediction fails): a
//! failing test is a win. Report: `/work/notes/redteam29.md`.
//!
//! The set-up is `livesql_server_sound`'s lever item (`shop`, gold `SELECT name FROM products
//! WHERE stock = 0`, two rows; wrong `... stock < 5`, four rows), given a test case that runs the
//! gold through a Python string operation the runner's mark (`bird_critic_runner.py::_GoldText`)
//! does not survive, so its request carries no `side` and `ServerSides::answer` sends it to the
//! prediction's clone.

use crate::common::servers;
use sqlgate::engine::livesql::mysql::MyRun;
use sqlgate::engine::livesql::postgres::PgRun;
use sqlgate::engine::livesql::{LiveJudge, Profile};
use sqlgate::input::livesql::{parse_items, LiveItem};
use std::path::Path;

/// The gold: the products out of stock (two).
const GOLD: &str = "SELECT name FROM products WHERE stock = 0";
/// The wrong prediction: the products with fewer than five in stock (four).
const WRONG: &str = "SELECT name FROM products WHERE stock < 5";
/// The rows the gold reads rewritten (a persistent write), so the wrong four are the gold's.
const REWRITE: &str = "UPDATE products SET stock = 0 WHERE stock < 5";
/// PostgreSQL: a TEMP view named after the gold's table (it lasts as long as the session).
const PG_TEMP: &str =
    "CREATE OR REPLACE TEMP VIEW products AS SELECT name, 0 AS stock FROM public.products WHERE stock < 5";
/// MariaDB: a temporary table named after the gold's table (it lasts as long as the session).
const MY_TEMP: &str =
    "CREATE TEMPORARY TABLE IF NOT EXISTS products SELECT name, 0 AS stock FROM products WHERE stock < 5";

/// A test case that normalises the gold's whitespace with `str.join` (a plain `str`, the gold's
/// own words), runs the prediction again, then the gold, and compares their rows (the corpus's
/// `lsq_155` shape).
const JOINED: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn):\n    gold = [' '.join(s.split()) for s in sol_sqls]\n    pred = execute_queries(pred_sqls, db_name, conn, None, '')\n    res = execute_queries(gold, db_name, conn, None, '')\n    assert not res[1] and sorted(pred[0]) == sorted(res[0]), f'the gold gave {res[0]}'\n    return 1\n";

/// A test case that wraps the gold in a derived table with `str.format` (a plain `str`, not the
/// gold's words), runs the prediction again, then the gold, and compares their rows.
const WRAPPED: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn):\n    gold = ['SELECT * FROM ({}) AS gold'.format(s) for s in sol_sqls]\n    pred = execute_queries(pred_sqls, db_name, conn, None, '')\n    res = execute_queries(gold, db_name, conn, None, '')\n    assert not res[1] and sorted(pred[0]) == sorted(res[0]), f'the gold gave {res[0]}'\n    return 1\n";

/// A Query item on `shop` with the one test case `test` and the gold [`GOLD`].
fn lever_item(test: &str) -> LiveItem {
    let line = serde_json::json!({
        "instance_id": "lever29", "db_id": "shop", "category": "Query", "sol_sql": [GOLD],
        "preprocess_sql": [], "clean_up_sql": [], "test_cases": [test], "issue_sql": [],
        "conditions": {}, "efficiency": false, "query": "which products are out of stock?",
    });
    parse_items(Path::new("lever29.jsonl"), &format!("{line}\n"))
        .unwrap()
        .remove(0)
}

/// Whether the gold, the wrong prediction and `lever` then the wrong prediction pass under
/// `bird_critic_sound` with the test case `test`.
fn verdicts<J: LiveJudge>(run: &J, test: &str, lever: &str) -> [bool; 3] {
    let item = lever_item(test);
    let predictions: [Vec<String>; 3] = [
        vec![GOLD.into()],
        vec![WRONG.into()],
        vec![lever.into(), WRONG.into()],
    ];
    predictions.each_ref().map(|p| {
        run.judge(&item, Some(p), Profile::BirdCriticSound)
            .unwrap()
            .success
    })
}

/// A PostgreSQL run over the test databases.
fn pg_run() -> PgRun {
    let server = servers::postgres();
    crate::livesql_pg::load_databases(server);
    PgRun::start(
        crate::livesql_pg::settings(server),
        &crate::livesql_pg::db_ids(),
    )
    .unwrap()
}

/// A MariaDB run over the test databases.
fn my_run() -> MyRun {
    let server = servers::mariadb();
    crate::livesql_my::load_databases(server);
    MyRun::start(
        crate::livesql_my::settings(server),
        &crate::livesql_my::db_ids(),
    )
    .unwrap()
}

/// Secure: the gold passes, the wrong prediction fails (the control) and the lever fails.
fn assert_secure(found: [bool; 3]) {
    assert_eq!(found[..2], [true, false], "control: gold / wrong");
    assert!(
        !found[2],
        "WON: the lever passed bird_critic_sound: {found:?}"
    );
}

/// Class 3 (`bird_critic_sound` on a server). Set-up: the lever item with [`JOINED`] (the gold's
/// own words, unmarked). Lever: the prediction rewrites the rows the gold reads
/// ([`REWRITE`], persistent on the prediction's clone), then answers wrongly; the unmarked gold
/// runs on the prediction's clone and agrees.
mod server_joined_gold_reads_rewritten_rows {
    use super::*;

    #[test]
    fn postgresql_joined_gold_does_not_read_the_predictions_rewrite() {
        assert_secure(verdicts(&pg_run(), JOINED, REWRITE));
    }

    #[test]
    fn mariadb_joined_gold_does_not_read_the_predictions_rewrite() {
        assert_secure(verdicts(&my_run(), JOINED, REWRITE));
    }
}

/// Class 3. Set-up: the lever item with [`JOINED`]. Lever: a TEMP view (PostgreSQL) / temporary
/// table (MariaDB) named after the gold's table, made by the prediction's run on the session the
/// test's requests share; nothing persistent changes.
mod server_joined_gold_reads_a_temp_object {
    use super::*;

    #[test]
    fn postgresql_joined_gold_does_not_read_the_predictions_temp_view() {
        assert_secure(verdicts(&pg_run(), JOINED, PG_TEMP));
    }

    #[test]
    fn mariadb_joined_gold_does_not_read_the_predictions_temporary_table() {
        assert_secure(verdicts(&my_run(), JOINED, MY_TEMP));
    }
}

/// Class 3. Set-up: the lever item with [`WRAPPED`] (not the gold's words, so matching the gold's
/// text would not catch it). Lever: [`REWRITE`].
mod server_wrapped_gold_reads_rewritten_rows {
    use super::*;

    #[test]
    fn postgresql_wrapped_gold_does_not_read_the_predictions_rewrite() {
        assert_secure(verdicts(&pg_run(), WRAPPED, REWRITE));
    }

    #[test]
    fn mariadb_wrapped_gold_does_not_read_the_predictions_rewrite() {
        assert_secure(verdicts(&my_run(), WRAPPED, REWRITE));
    }
}

/// Class 3. Set-up: the lever item with [`WRAPPED`]. Lever: the TEMP object of
/// `server_joined_gold_reads_a_temp_object`.
mod server_wrapped_gold_reads_a_temp_object {
    use super::*;

    #[test]
    fn postgresql_wrapped_gold_does_not_read_the_predictions_temp_view() {
        assert_secure(verdicts(&pg_run(), WRAPPED, PG_TEMP));
    }

    #[test]
    fn mariadb_wrapped_gold_does_not_read_the_predictions_temporary_table() {
        assert_secure(verdicts(&my_run(), WRAPPED, MY_TEMP));
    }
}

/// Class 4 (the gated metric): `judge::rules::sound_gate` fails a gate on `bird_critic` only
/// (the official profile whose sound one exists). Set-up: `examples/livesql-mini` as a
/// `bird-critic` dataset. Lever: gate it on a metric that is neither `bird_critic` nor
/// `bird_critic_sound` but runs the same items (`livesql_sound`, `livesql`, or a generic metric
/// such as `ex`), so the sound-gate rule has no official name to refuse. Contained: the config
/// check allows only `bird_critic` and `bird_critic_sound` on that kind.
mod bird_critic_gated_on_another_metric {
    use crate::common;
    use serde_json::json;

    /// `sqlgate baseline update` of the example as a bird-critic dataset gated on `metric`.
    fn baseline_gated_on(metric: &str) -> (Option<i32>, String) {
        let dir = crate::livesql_post::example_with("lsq_061", json!({}));
        let config = dir.path().join("sqlgate.yml");
        let text = std::fs::read_to_string(&config).unwrap();
        let edited = text
            .replace("kind: livesql\n", "kind: bird-critic\n")
            .replace(
                "metrics: [livesql, livesql_sound]",
                &match metric {
                    "bird_critic_sound" => "metrics: [bird_critic, bird_critic_sound]".to_string(),
                    _ => format!("metrics: [bird_critic, bird_critic_sound, {metric}]"),
                },
            )
            .replace(
                "reference: livesql_sound\n",
                "reference: bird_critic_sound\n",
            )
            .replace("  metric: livesql_sound", &format!("  metric: {metric}"));
        assert_ne!(edited, text);
        std::fs::write(&config, edited).unwrap();
        std::fs::remove_file(dir.path().join("baseline.json")).unwrap();
        let output = common::sqlgate(&["baseline", "update", "--config", common::arg(&config)]);
        (output.status.code(), common::text(&output))
    }

    #[test]
    fn control_a_bird_critic_dataset_gated_on_bird_critic_sound_records_its_baseline() {
        let (code, said) = baseline_gated_on("bird_critic_sound");
        assert_eq!(code, Some(0), "{said}");
    }

    #[test]
    fn a_bird_critic_dataset_is_not_gated_on_another_profile_or_metric() {
        for metric in ["livesql_sound", "livesql", "ex"] {
            let (code, said) = baseline_gated_on(metric);
            assert_ne!(code, Some(0), "{metric}: {said}");
            assert!(said.contains("is not available"), "{metric}: {said}");
        }
    }
}
