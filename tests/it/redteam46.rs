//! Red team round 46 (issue 44): `bird_critic_sound` after round 45's fix (467129b): the gold
//! runs on the preprocess's own session and on a new one, and an item whose gold's statements
//! answer or write otherwise is not judged (`gold_effect.rs`). The comparison is of the gold's
//! statements alone; a test case's own query (unmarked, run on a new session to the
//! prediction's copy under the sound profile) is not compared. The attempts:
//! - a preprocess's temporary view named after a base table (`products`, the outdoor
//!   catalogue): the gold writes the base table by its qualified name, so it runs the same both
//!   ways, while the test case's own unqualified query reads the view officially and the base
//!   table under the sound profile (SQLite livesql engine, the repair path's; PostgreSQL).
//!
//! Every test asserts the SECURE outcome and runs its control: a failing test is a win. Report:
//! `/work/notes/redteam46.md`.

use sqlgate::engine::livesql::{LiveJudge, Profile};

/// A `shop` item line (`category`, `preprocess`, `gold`, one `test`).
fn line(category: &str, preprocess: &[&str], gold: &[&str], test: &str) -> String {
    let line = serde_json::json!({
        "instance_id": "lever46", "db_id": "shop", "category": category, "sol_sql": gold,
        "preprocess_sql": preprocess, "clean_up_sql": [],
        "test_cases": [test], "issue_sql": [], "conditions": {},
        "efficiency": false, "query": "add the canteen to the outdoor catalogue",
    });
    format!("{line}\n")
}

fn item_of(line: &str) -> sqlgate::input::livesql::LiveItem {
    sqlgate::input::livesql::parse_items(std::path::Path::new("lever46.jsonl"), line)
        .unwrap()
        .remove(0)
}

/// Whether `prediction` passes the server item `line` under `profile`.
fn judged<J: LiveJudge>(run: &J, line: &str, prediction: &[&str], profile: Profile) -> bool {
    let predicted: Vec<String> = prediction.iter().map(|s| s.to_string()).collect();
    let verdict = run.judge(&item_of(line), Some(&predicted), profile).unwrap();
    eprintln!(
        "{profile:?} {prediction:?}: {} {}",
        verdict.success, verdict.message
    );
    verdict.success
}

/// Whether `prediction` passes the SQLite livesql item `line` on `template` under `profile`.
fn sqlite_judged(
    template: &std::path::Path,
    line: &str,
    prediction: &[&str],
    profile: Profile,
) -> bool {
    use sqlgate::engine::livesql::{Budget, Settings};
    let settings = Settings {
        profile,
        budget: Budget {
            deadline: std::time::Duration::from_secs(60),
            max_steps: 100_000_000,
            disk_bytes: 64 << 20,
        },
        python: std::path::PathBuf::from("python3"),
    };
    let predicted: Vec<String> = prediction.iter().map(|s| s.to_string()).collect();
    let verdict =
        sqlgate::engine::livesql::judge(&item_of(line), Some(&predicted), template, &settings)
            .unwrap();
    eprintln!(
        "{profile:?} {prediction:?}: {} {}",
        verdict.success, verdict.message
    );
    verdict.success
}

/// The SQLite `shop` template in `folder`.
fn sqlite_shop(folder: &std::path::Path) -> std::path::PathBuf {
    let scripts = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/livesql/db");
    crate::common::databases_from_scripts(&scripts, folder);
    folder.join("shop/shop.sqlite")
}

/// A test case whose own query (no gold statement in it) looks for the new product in the
/// catalogue, unqualified, as the item's preprocess left it.
const LISTED: &str = "def test_case(pred_sqls, sol_sqls, db_name, conn, conditions=None):\n    res = execute_queries([\"SELECT name FROM products WHERE name = 'Canteen'\"], db_name, conn, None, '')\n    assert not res[1] and len(res[0]) == 1, f'the catalogue shows {res[0]}'\n    return 1\n";

/// Class 2 (the repair path's SQLite livesql engine), the checks see the session. Set-up: a
/// Management item on `shop` whose preprocess makes the outdoor catalogue a temporary view
/// named `products` (`CREATE TEMP VIEW products AS SELECT * FROM main.products WHERE category =
/// 'outdoor'`), shadowing the base table for unqualified names on its session; the gold adds
/// a product through `main.products`, so it runs the same on either session and the item is
/// judged; the test case ([`LISTED`]) looks for it through `products`. Lever: a wrong
/// prediction adding the product to another category, which the view hides (officially the
/// test fails) but the base table the new session reads shows.
mod sqlite_a_temporary_view_read_by_the_test_alone {
    use super::*;

    #[test]
    fn sqlite_a_test_reading_the_preprocess_view_does_not_pass_a_wrong_insert() {
        let folder = tempfile::tempdir().unwrap();
        let template = sqlite_shop(folder.path());
        let preprocess = ["CREATE TEMP VIEW products AS SELECT * FROM main.products WHERE category = 'outdoor'"];
        let gold = ["INSERT INTO main.products (name, category, price, stock) VALUES ('Canteen', 'outdoor', 12.5, 3)"];
        let item = line("Management", &preprocess, &gold, LISTED);
        let honest = ["INSERT INTO main.products (name, category, price, stock) VALUES ('Canteen', 'outdoor', 11.0, 3)"];
        let wrong = ["INSERT INTO main.products (name, category, price, stock) VALUES ('Canteen', 'kitchen', 12.5, 3)"];
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

/// Class 3, PostgreSQL: [`sqlite_a_temporary_view_read_by_the_test_alone`] on the server. The
/// preprocess's `CREATE TEMP VIEW products AS SELECT * FROM public.products WHERE category =
/// 'outdoor'` sits in `pg_temp`, which comes first for unqualified names; the gold writes
/// `public.products`.
mod postgresql_a_temporary_view_read_by_the_test_alone {
    use super::*;

    #[test]
    fn postgresql_a_test_reading_the_preprocess_view_does_not_pass_a_wrong_insert() {
        let run = crate::redteam30::pg_run();
        let preprocess = ["CREATE TEMP VIEW products AS SELECT * FROM public.products WHERE category = 'outdoor'"];
        let gold = ["INSERT INTO public.products (id, name, category, price, stock) VALUES (11, 'Canteen', 'outdoor', 12.5, 3)"];
        let item = line("Management", &preprocess, &gold, LISTED);
        let honest = ["INSERT INTO public.products (id, name, category, price, stock) VALUES (11, 'Canteen', 'outdoor', 11.0, 3)"];
        let wrong = ["INSERT INTO public.products (id, name, category, price, stock) VALUES (11, 'Canteen', 'kitchen', 12.5, 3)"];
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
