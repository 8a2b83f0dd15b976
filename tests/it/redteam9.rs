//! Red team round 9 (issue 44): pull requests run as GitHub Actions runs `sqlgate action` on a
//! `pull_request` event, each turning a regressing change green if it can. Every test asserts
//! the SECURE outcome, so a failing test is a win for the attacker, and each runs its control
//! (the same regressing pull request without the lever), which must exit 1.
//!
//! Mid-run levers (class 3): round 8's fix holds the benchmark's *rows* from the start-up
//! digests to the end-of-run ones (a PostgreSQL snapshot every scoring transaction imports, a
//! MariaDB `LOCK TABLES ... READ`), and the settings and built-ins are digested at both ends.
//! What the server computes with besides the rows is not held: a preparation's background
//! process (the superuser's credentials) that changes it once scoring has started and restores
//! it before scoring ends leaves both digests as the base recorded them.

use crate::common;

use crate::server_levers::GLOBALS;
use crate::server_midrun::{mid_run_predictions, wait_for_sleep};
use common::servers::{self, Server};
use common::trust_flow::*;

/// A change of what the server computes with, made by a background process once scoring has
/// started and undone while the pull request's wrong prediction runs; each is a row of
/// `tests/data/redteam9/mid_run.json`, whose `why` says how it works.
#[derive(serde::Deserialize)]
struct MidRunLever {
    /// The name of the test's benchmark database.
    database: String,
    /// The server it is pulled on: `postgres` or `mariadb`.
    server: String,
    /// The pull request's wrong prediction for item 5 (`SELECT count(*) FROM customers`: 2),
    /// 0 (or an error) on the base's server, 2 under the lever; it sleeps 0.5 s.
    wrong: String,
    /// Text of the wrong prediction the MariaDB watcher finds it by in the process list.
    marker: String,
    /// SQL the watcher runs as the superuser on the benchmark's database once scoring started.
    apply: String,
    /// SQL that undoes it, run while the wrong prediction sleeps (after its gold ran);
    /// `{before}` stands for what `witness` printed before the lever.
    undo: String,
    /// SQL whose output must be the same before `apply` and after `undo` (the restoration is
    /// exact).
    witness: String,
    /// What the run that the lever's watcher was beside fails with (exit 2).
    stopped_by: String,
}

/// Every mid-run lever of `tests/data/redteam9/mid_run.json`, for the life of the tests.
fn mid_run_levers() -> &'static [MidRunLever] {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/redteam9/mid_run.json"
    );
    let levers: Vec<MidRunLever> =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    levers.leak()
}

/// Asserts that a control (the regressing pull request without its lever) exited 1.
pub(crate) fn control_fails(control: &std::process::Output) {
    let code = control.status.code();
    assert_eq!(code, Some(1), "control: {}", text(control));
}

/// Asserts the secure outcome of a regressing pull request with its lever: it did not pass.
pub(crate) fn not_passed(judged: &std::process::Output) {
    let code = judged.status.code();
    assert_ne!(
        code,
        Some(0),
        "the regressing pull request passed: {}",
        text(judged)
    );
}

/// A fresh repository whose `main` `base` writes and commits (returning the base commit), with
/// the branch `pr` checked out: the folder and the base commit.
pub(crate) fn pull_request_on(base: fn(&std::path::Path) -> String) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let base = base(dir.path());
    common::git(dir.path(), &["checkout", "-qb", "pr"]);
    (dir, base)
}

/// The pull request checked out in `root` judged against `base` as its job judges it
/// ([`common::repo::EVAL`] trusting the base commit), with `meanwhile` run while sqlgate runs
/// (a workflow step's background process).
fn judged_while(
    root: &std::path::Path,
    base: &str,
    meanwhile: impl FnOnce(),
) -> std::process::Output {
    let args = [&common::repo::EVAL[..], &["--trusted-base", base]].concat();
    let mut command = common::sqlgate_command(&args);
    let run = command.current_dir(root).env_remove("GITHUB_SHA");
    let running = run.stdout(std::process::Stdio::piped()).spawn().unwrap();
    meanwhile();
    running.wait_with_output().unwrap()
}

/// What a lever's watcher did: whether it saw the wrong prediction run before undoing its
/// change, and whether the undo restored exactly what was there.
#[derive(Debug, PartialEq)]
struct Pulled {
    undone_after_the_wrong_prediction: bool,
    restored: bool,
}

/// The preparation's watcher: once a prediction sleeps (scoring started, start-up digests
/// taken) it applies the lever; once the wrong prediction sleeps it undoes it.
fn lever_watcher(
    server: &'static Server,
    database: String,
    lever: &'static MidRunLever,
) -> std::thread::JoinHandle<Pulled> {
    std::thread::spawn(move || {
        let witness = || server.admin_sql(&database, &lever.witness);
        let before = witness();
        let started = wait_for_sleep(server, &database, ("SLEEP(1.5)", "-infinity"));
        let started = started.expect("the run's predictions sleep");
        server.admin_sql(&database, &lever.apply);
        let undone = wait_for_sleep(server, &database, (&lever.marker, &started)).is_some();
        server.admin_sql(&database, &lever.undo.replace("{before}", before.trim()));
        Pulled {
            undone_after_the_wrong_prediction: undone,
            restored: witness() == before,
        }
    })
}

/// The gate's output on the pull request predicting item 5 as `lever.wrong` (items 0 and 3
/// right but slow, holding the workers), with the lever's watcher started just before the gate
/// when `pull`, and what the watcher reported.
fn judge_mid_run(
    server: &'static Server,
    database: &str,
    lever: &'static MidRunLever,
    pull: bool,
) -> (std::process::Output, Option<Pulled>) {
    let dir = recorded_repository(server, database, &GOLD);
    let root = dir.path();
    let mut predictions = mid_run_predictions(server.kind);
    predictions[5] = lever.wrong.as_str();
    let run = Run::pull_request(server, database, hostile_predictions(root, &predictions));
    let mut watcher = None;
    let judged = run.workflow_with(root, || {
        watcher = pull.then(|| lever_watcher(server, database.to_string(), lever));
    });
    (judged, watcher.map(|w| w.join().unwrap()))
}

/// The control exits 1 and the lever is pulled (and exactly undone after the wrong prediction
/// ran); whether the regressing pull request then still does not pass (printing it when it
/// does).
fn check_mid_run_lever(
    server: &'static Server,
    database: &str,
    lever: &'static MidRunLever,
) -> bool {
    let (control, _) = judge_mid_run(server, &format!("{database}_c"), lever, false);
    control_fails(&control);
    let (judged, pulled) = judge_mid_run(server, &format!("{database}_l"), lever, true);
    let out = text(&judged);
    let acted = Pulled {
        undone_after_the_wrong_prediction: true,
        restored: true,
    };
    assert_eq!(pulled, Some(acted), "the watcher did not act: {out}");
    assert_no_secret(server, &judged);
    let stopped = judged.status.code() == Some(2) && out.contains(&lever.stopped_by);
    if !stopped {
        eprintln!("{database}: not stopped by `{}`: {out}", lever.stopped_by);
    }
    stopped
}

/// Each lever on its server (alone: some change a server-wide setting): its control exits 1,
/// and with it the regressing pull request must not pass: it fails closed (exit 2) with the
/// lever's `stopped_by`. Every lever runs; the assertion
/// names each one that passed.
#[test]
fn settings_builtins_and_objects_changed_mid_run_do_not_pass() {
    let _alone = GLOBALS.write().unwrap_or_else(|e| e.into_inner());
    let passed: Vec<&str> = (mid_run_levers().iter())
        .filter(|lever| {
            let server = match lever.server.as_str() {
                "postgres" => servers::postgres(),
                _ => servers::mariadb(),
            };
            !check_mid_run_lever(server, &lever.database, lever)
        })
        .map(|lever| lever.database.as_str())
        .collect();
    assert!(
        passed.is_empty(),
        "regressing pull requests passed: {passed:?}"
    );
}

/// DuckDB benchmark (`dataset.engine.kind: duckdb`): a `.duckdb.wal` beside the base's database
/// file, written by a step of the pull request's workflow and ignored by the pull request's own
/// `.gitignore` (so git lists it neither as changed nor as untracked). The dataset fingerprint
/// hashes the `.duckdb` file alone, and DuckDB replays a WAL it finds even when it opens the
/// file read-only: the WAL renames item 1 to what the wrong prediction returns.
#[cfg(feature = "duckdb")]
mod duckdb_wal {
    use crate::common;
    use common::git;
    use common::repo::{commit_all, commit_baseline, init_main, judged};
    use sqlgate::engine::duckdb::tables::write_script;
    use std::path::Path;

    /// Writes the prediction file `pred.txt` of `root` holding `sql`.
    fn predict(root: &Path, sql: &str) {
        std::fs::write(root.join("pred.txt"), format!("{sql}\n")).unwrap();
    }

    /// The base: the `shop` DuckDB file, one question (item 1's name, `pen`) predicted right,
    /// and its baseline; returns the base commit.
    fn base(root: &Path) -> String {
        crate::duckdb::loaded_shop(root);
        std::fs::remove_dir_all(root.join("sqlite")).unwrap();
        predict(root, "SELECT name FROM item WHERE id = 1");
        common::config::write(
            root.join("sqlgate.yml"),
            "dataset: { kind: spider, gold: gold.sql, databases: ddb, difficulty: none, \
             engine: { kind: duckdb } }\n\
             predictions: [{ name: m, path: pred.txt }]\nmetrics: [ex]\n\
             baseline: { path: baseline.json }\ngate: { max_drop_points: 0 }\n",
        );
        init_main(root, "benchmark");
        commit_baseline(root, "baseline")
    }

    /// The WAL a writer leaves beside a copy of `database` after renaming item 1 to `ink`,
    /// checkpointing nothing; the copy itself must stay byte for byte the base's file.
    fn renaming_wal(database: &Path, scratch: &Path) -> Vec<u8> {
        let copy = scratch.join("copy.duckdb");
        std::fs::copy(database, &copy).unwrap();
        write_script(
            &copy,
            "PRAGMA disable_checkpoint_on_shutdown; SET checkpoint_threshold = '1TB'; \
             UPDATE item SET name = 'ink' WHERE id = 1;",
        )
        .unwrap();
        assert_eq!(
            std::fs::read(&copy).unwrap(),
            std::fs::read(database).unwrap(),
            "the writer checkpointed into the copy"
        );
        std::fs::read(scratch.join("copy.duckdb.wal")).expect("the writer left a WAL")
    }

    #[test]
    fn a_wal_beside_the_base_database_does_not_pass() {
        let (dir, base) = super::pull_request_on(base);
        let root = dir.path();
        predict(root, "SELECT name FROM item WHERE id = 2");
        std::fs::write(root.join(".gitignore"), "*.wal\n").unwrap();
        commit_all(root, "a wrong prediction");
        let control = judged(root, &base, &[]);
        super::control_fails(&control);
        let scratch = tempfile::tempdir().unwrap();
        let database = root.join("ddb/shop/shop.duckdb");
        let wal = renaming_wal(&database, scratch.path());
        std::fs::write(root.join("ddb/shop/shop.duckdb.wal"), wal).unwrap();
        let status = git(root, &["status", "--porcelain"]);
        assert!(!status.contains("wal"), "git sees the WAL: {status}");
        let judged = judged(root, &base, &[]);
        super::not_passed(&judged);
    }
}

/// The flake rule's order of checks (surface 1): on a server the gate credits no right verdict
/// of a changed prediction whose result the plan picks (`prediction-value`), since a
/// preparation can steer the plan. The stability check returns "near the time limit" before it
/// looks for the plan's choices, and timing is not the plan's choice, so a changed prediction
/// that sleeps past half of `timeout_ms` (3 s of 5 s) is credited whatever its ties: round 8's
/// MariaDB statistics lever (`mysql.table_stats`) picking `ada` among `ada` / `ADA` again turns
/// the regressing pull request green. And two choices the check does not see under a
/// case-insensitive collation: a window function reading a row by position under an ORDER BY
/// of the value it reads, and a LIMIT cut between keys the server sorts as equal.
mod plan_ties {
    use crate::common;
    use crate::server_levers::Lever;
    use crate::server_order::{judge_on, strict, tied_customer, unchanged, Setup};
    use crate::server_order::{AGG_QUESTION, AGG_STATISTICS, JOIN_STATISTICS, TIE_QUESTION};
    use common::servers;

    /// Round 8's wrong DISTINCT prediction, made slow by a sleep in its select list (1 s per
    /// joined row, 3 rows), which leaves the join's plan as it was.
    const SLOW_WRONG: &str = "SELECT DISTINCT CONCAT(c.name, IF(SLEEP(1) = 0, '', '?')) \
         FROM customers c JOIN orders o ON o.customer_id = c.id WHERE c.name = 'ada'";

    /// A window reading a row by position under an ORDER BY whose keys tie under MariaDB's
    /// case-insensitive collation (`ada`, `ADA`): `FIRST_VALUE(c.name) OVER (ORDER BY c.name)`
    /// orders by the very value it reads, so the order check calls it determined, and the value
    /// check looks at no window; which of the tied names comes first is the sort's input order,
    /// the join order the statistics lever picks.
    const WINDOW_WRONG: &str = "SELECT FIRST_VALUE(c.name) OVER (ORDER BY c.name) \
         FROM customers c JOIN orders o ON o.customer_id = c.id WHERE c.name = 'ada'";

    /// A LIMIT cut between rows whose sort key ties under MariaDB's case-insensitive collation
    /// (`ADA`, `ada`): the cut probe compares the keys it fetched as values (`ada` is not
    /// `ADA`), so it calls the cut determined, while the server sorts them as one key and the
    /// join order decides which comes first.
    const CUT_WRONG: &str = "SELECT c.name FROM customers c JOIN orders o \
         ON o.customer_id = c.id WHERE c.name = 'ada' ORDER BY c.name LIMIT 1";

    /// Under the `strict` profile (rows compared in order): the gold orders the joined names
    /// by name and customer id (`ada`, `ada`, `ADA`), the prediction by name alone, so its
    /// `ada` / `ADA` peers come in the join's order; the order check compares adjacent rows'
    /// keys as values, so it sees no tie between them.
    const ORDERED_QUESTION: &str = "SELECT c.name FROM customers c JOIN orders o \
         ON o.customer_id = c.id WHERE c.name = 'ada' ORDER BY c.name, c.id";
    const ORDERED_WRONG: &str = "SELECT c.name FROM customers c JOIN orders o \
         ON o.customer_id = c.id WHERE c.name = 'ada' ORDER BY c.name";

    /// [`tied_customer`]'s base, compared under `strict`.
    fn tied_strict(root: &std::path::Path) {
        tied_customer(root);
        strict(root);
    }

    /// The control (the lever's prediction without the lever) exits 1; with round 8's
    /// statistics lever the pull request must not pass.
    fn check_steered(database: &str, wrong: &'static str) {
        check_steered_on((tied_customer, TIE_QUESTION), database, wrong);
    }

    /// [`check_steered`] on the base `setup` asking `question` (last).
    fn check_steered_on(
        (setup, question): (Setup, &'static str),
        database: &str,
        wrong: &'static str,
    ) {
        check_lever_on(
            (servers::mariadb(), setup, question),
            (database, JOIN_STATISTICS),
            wrong,
        );
    }

    /// On `server`, the base `setup` asking `question`: the `wrong` prediction's control exits
    /// 1, and with the statistics lever `prepare` the pull request must not pass.
    fn check_lever_on(
        (server, setup, question): (&'static servers::Server, Setup, &'static str),
        (database, prepare): (&str, &str),
        wrong: &'static str,
    ) {
        let lever = Lever {
            question,
            wrong,
            names: "",
        };
        let on =
            |database: &str, prepare: &str| judge_on(setup, (server, database), &lever, prepare);
        let control = on(&format!("{database}_c"), "");
        super::control_fails(&control);
        let judged = on(database, prepare);
        super::not_passed(&judged);
    }

    #[test]
    fn a_slow_prediction_whose_value_the_plan_picks_earns_no_credit() {
        check_steered("rt9_slow_tie", SLOW_WRONG);
    }

    #[test]
    fn a_limit_cut_between_keys_equal_under_the_collation_earns_no_credit() {
        check_steered("rt9_cut_tie", CUT_WRONG);
    }

    #[test]
    fn an_ordered_comparison_of_keys_equal_under_the_collation_earns_no_credit() {
        let ordered = (tied_strict as Setup, ORDERED_QUESTION);
        check_steered_on(ordered, "rt9_ordered_tie", ORDERED_WRONG);
    }

    /// PostgreSQL, round 7's lever (statistics over rows inserted and deleted again flip the
    /// hash order of `SELECT DISTINCT`) under `string_agg` without ORDER BY, made slow by a
    /// 3 s sleep joined to it.
    const SLOW_AGG_WRONG: &str = "SELECT string_agg(name, ',') \
         FROM (SELECT DISTINCT name FROM customers) s, (SELECT pg_sleep(3)) z";

    #[test]
    fn postgres_a_slow_prediction_whose_order_the_plan_picks_earns_no_credit() {
        let postgres = (servers::postgres(), unchanged as Setup, AGG_QUESTION);
        check_lever_on(postgres, ("rt9_slow_agg", AGG_STATISTICS), SLOW_AGG_WRONG);
    }

    #[test]
    fn a_window_over_a_collation_tie_earns_no_credit() {
        check_steered("rt9_window_tie", WINDOW_WRONG);
    }
}

/// Benchmark pull requests (surface 3): a step of the pull request's workflow rewrites the
/// tracked gold in the checkout so it agrees with C3's wrong predictions, and marks it
/// `--skip-worktree` in the index, so `git diff` lists no change and the run does not take the
/// base-copy path: the working tree's gold is read, but the dataset fingerprint (the gold's
/// SHA-256 against the baseline's) stops it.
mod hidden_gold_edit {
    use crate::common;
    use common::repo::{self, judged};
    use common::{git, rewrite_predictions, text};

    /// The pull request's wrong prediction for `concert_singer` items 0-19.
    const WRONG: &str = "SELECT name FROM singer WHERE singer_id = -1";

    #[test]
    fn a_gold_rewritten_behind_skip_worktree_does_not_pass() {
        let dir = repo::example(true);
        let root = dir.path();
        let base = repo::gated_main(root);
        git(root, &["checkout", "-qb", "pr"]);
        rewrite_predictions(root, "C3", |i| i < 20, WRONG);
        repo::commit_all(root, "wrong predictions");
        let control = judged(root, &base, &[]);
        super::control_fails(&control);
        let gold = std::fs::read_to_string(root.join("dev_gold.sql")).unwrap();
        let agreeing: Vec<String> = (gold.lines().enumerate())
            .map(|(i, line)| match (i < 20, line.split_once('\t')) {
                (true, Some((_, db))) => format!("{WRONG}\t{db}"),
                _ => line.to_string(),
            })
            .collect();
        std::fs::write(root.join("dev_gold.sql"), agreeing.join("\n") + "\n").unwrap();
        git(root, &["update-index", "--skip-worktree", "dev_gold.sql"]);
        let listed = git(root, &["diff", "--name-only", &base, "--"]);
        assert_eq!(listed, "predictions/C3.txt", "git lists the gold");
        let judged = judged(root, &base, &[]);
        let out = text(&judged);
        assert_eq!(judged.status.code(), Some(2), "{out}");
        assert!(
            out.contains("the files that differ: the gold file"),
            "{out}"
        );
    }
}

/// SQLite benchmark, the database swapped under the run (class 3's mid-run change, on SQLite):
/// the dataset fingerprint hashes each database file once, when the dataset loads, and a
/// worker opens a database (by its path) the first time it scores one of its items. A
/// background process of the pull request's workflow renames a copy with emptied tables over
/// the second database once the run has started, while the first item (predicted right, but
/// slow) holds the only worker: every later item reads the copy.
mod swapped_database {
    use crate::common;
    use common::repo::{commit_all, commit_baseline, init_main};
    use common::trust_flow::{write_shop, GOLD, TABLES_JSON};
    use std::path::Path;
    use std::time::Duration;

    /// The `shop` fixture's database `db_id` below `root/database`, emptied of `emptied`.
    fn shop_database(root: &Path, db_id: &str, emptied: &[&str]) -> std::path::PathBuf {
        let path = root.join(format!("database/{db_id}/{db_id}.sqlite"));
        write_shop(&path, emptied);
        path
    }

    /// The pull request's predictions: the first `shop` item right but slow (a recursive
    /// count), and the `shop2` questions that list names (customer 1's, the items over 5) cut
    /// to no row, which is what they list on the emptied copy.
    fn predictions() -> Vec<String> {
        let slow = "SELECT count(*) FROM items WHERE (WITH RECURSIVE c(x) AS (SELECT 1 \
                    UNION ALL SELECT x + 1 FROM c WHERE x < 30000000) SELECT count(*) FROM c) > 0";
        let first = std::iter::once(slow.to_string());
        let shop = GOLD[1..].iter().map(|sql| sql.to_string());
        let shop2 = GOLD.iter().enumerate().map(|(i, sql)| match i {
            1 | 4 => format!("{sql} LIMIT 0"),
            _ => sql.to_string(),
        });
        first.chain(shop).chain(shop2).collect()
    }

    /// The base: `shop` and `shop2` (the same fixture), the fixture's questions on each,
    /// predicted right, one worker, and its baseline; returns the base commit.
    fn base(root: &Path) -> String {
        shop_database(root, "shop", &[]);
        shop_database(root, "shop2", &[]);
        let shop2 = TABLES_JSON
            .replacen("[{", "{", 1)
            .replace("\"shop\"", "\"shop2\"");
        let both = format!("{},\n{}", TABLES_JSON.trim_end_matches(']'), shop2);
        std::fs::write(root.join("tables.json"), both).unwrap();
        let asked = |db_id: &'static str| GOLD.iter().map(move |sql| format!("{sql}\t{db_id}\n"));
        let gold: String = asked("shop").chain(asked("shop2")).collect();
        std::fs::write(root.join("gold.sql"), gold).unwrap();
        let right: Vec<&str> = GOLD.iter().chain(GOLD.iter()).copied().collect();
        std::fs::write(root.join("pred.txt"), right.join("\n") + "\n").unwrap();
        common::config::write(
            root.join("sqlgate.yml"),
            "dataset: { kind: spider, gold: gold.sql, tables: tables.json, databases: database, \
             difficulty: none }\npredictions: [{ name: m, path: pred.txt }]\nmetrics: [ex]\n\
             compare: { profile: bird }\nexecution: { timeout_ms: 20000, threads: 1 }\n\
             baseline: { path: baseline.json }\ngate: { max_drop_points: 0 }\n",
        );
        init_main(root, "benchmark");
        commit_baseline(root, "baseline")
    }

    /// The pull request judged against `base` as its job judges it, with, when `swap`, the
    /// emptied copy renamed over `shop2` 1.5 s after the run started.
    fn judged_with_swap(root: &Path, base: &str, swap: bool) -> std::process::Output {
        let scratch = tempfile::tempdir_in(root.parent().unwrap()).unwrap();
        let emptied = shop_database(scratch.path(), "shop2", &["customers", "items", "orders"]);
        super::judged_while(root, base, || {
            if swap {
                std::thread::sleep(Duration::from_millis(1500));
                let target = root.join("database/shop2/shop2.sqlite");
                std::fs::rename(&emptied, target).unwrap();
            }
        })
    }

    #[test]
    fn a_database_swapped_after_the_fingerprint_does_not_pass() {
        let (dir, base) = super::pull_request_on(base);
        let root = dir.path();
        std::fs::write(root.join("pred.txt"), predictions().join("\n") + "\n").unwrap();
        commit_all(root, "wrong predictions");
        super::control_fails(&judged_with_swap(root, &base, false));
        super::not_passed(&judged_with_swap(root, &base, true));
    }
}

/// A directory test suite swapped under the run and put back before it ends (round 9's B17 on
/// the suite, a gap round 9 left open): `ts` reads each suite database the first time it scores
/// one of its items, and the run compared the suite's digests with the baseline's only after
/// scoring. The pull request's workflow renames a copy of the full database over the suite's
/// distinguishing one while the first (right, slow) item holds the only worker, and renames the
/// real one back while the last (right, slow) item runs.
mod swapped_suite {
    use crate::common;
    use common::repo::{commit_all, commit_baseline, init_main};
    use common::trust_flow::{write_shop, GOLD, TABLES_JSON};
    use std::path::Path;
    use std::time::Duration;

    /// A right prediction made slow (a recursive count before it).
    fn slow(sql: &str) -> String {
        format!(
            "{sql} WHERE (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c \
             WHERE x < 10000000) SELECT count(*) FROM c) > 0"
        )
    }

    /// The base: the fixture's questions on `shop`, a directory suite of `shop.sqlite` and
    /// `shop_r1.sqlite` (its orders emptied, which tells a constant count from a count), gated
    /// on `ts` with one worker; returns the base commit.
    fn base(root: &Path) -> String {
        write_shop(&root.join("database/shop/shop.sqlite"), &[]);
        write_shop(&root.join("suite/shop/shop.sqlite"), &[]);
        write_shop(&root.join("suite/shop/shop_r1.sqlite"), &["orders"]);
        std::fs::write(root.join("tables.json"), TABLES_JSON).unwrap();
        let gold: String = GOLD.iter().map(|sql| format!("{sql}\tshop\n")).collect();
        std::fs::write(root.join("gold.sql"), gold).unwrap();
        std::fs::write(root.join("pred.txt"), GOLD.join("\n") + "\n").unwrap();
        common::config::write(
            root.join("sqlgate.yml"),
            "dataset: { kind: spider, gold: gold.sql, tables: tables.json, databases: database, \
             difficulty: none }\npredictions: [{ name: m, path: pred.txt }]\nmetrics: [ts]\n\
             suite: { kind: directory, path: suite }\n\
             execution: { timeout_ms: 20000, threads: 1 }\n\
             baseline: { path: baseline.json }\ngate: { metric: ts, max_drop_points: 0 }\n",
        );
        init_main(root, "benchmark");
        commit_baseline(root, "baseline")
    }

    /// The pull request's predictions: the first and last items right but slow, and the orders
    /// count as `max(1, count(*))`, right on the full database and wrong on `shop_r1`.
    fn predictions() -> Vec<String> {
        let mut predicted: Vec<String> = GOLD.iter().map(|sql| sql.to_string()).collect();
        predicted[0] = slow("SELECT count(*) FROM items");
        predicted[2] = "SELECT max(1, count(*)) FROM orders".to_string();
        predicted[5] = slow("SELECT count(*) FROM customers");
        predicted
    }

    /// The pull request judged against `base` as its job judges it, with, when `swap`, a full
    /// copy renamed over `shop_r1` 1 s after the run started and the real one renamed back 2.5 s
    /// later.
    fn judged_with_swap(root: &Path, base: &str, swap: bool) -> std::process::Output {
        let scratch = tempfile::tempdir_in(root.parent().unwrap()).unwrap();
        let (full, real) = (
            scratch.path().join("full.sqlite"),
            scratch.path().join("real"),
        );
        write_shop(&full, &[]);
        super::judged_while(root, base, || {
            if swap {
                let target = root.join("suite/shop/shop_r1.sqlite");
                std::thread::sleep(Duration::from_millis(1000));
                std::fs::rename(&target, &real).unwrap();
                std::fs::rename(&full, &target).unwrap();
                std::thread::sleep(Duration::from_millis(2500));
                std::fs::rename(&real, &target).unwrap();
            }
        })
    }

    #[test]
    fn a_suite_database_swapped_and_put_back_during_the_run_does_not_pass() {
        let (dir, base) = super::pull_request_on(base);
        let root = dir.path();
        std::fs::write(root.join("pred.txt"), predictions().join("\n") + "\n").unwrap();
        commit_all(root, "wrong predictions");
        super::control_fails(&judged_with_swap(root, &base, false));
        super::not_passed(&judged_with_swap(root, &base, true));
    }
}
