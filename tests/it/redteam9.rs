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
/// started and undone while the pull request's wrong prediction runs.
struct MidRunLever {
    /// The pull request's wrong prediction for item 5 (`SELECT count(*) FROM customers`: 2),
    /// 0 rows counted on the base's server, 2 under the lever; it sleeps 0.5 s.
    wrong: &'static str,
    /// Text of the wrong prediction the MariaDB watcher finds it by in the process list.
    marker: &'static str,
    /// SQL the watcher runs as the superuser on the benchmark's database once scoring started.
    apply: &'static str,
    /// SQL that undoes it, run while the wrong prediction sleeps (after its gold ran);
    /// `{before}` stands for what `witness` printed before the lever.
    undo: &'static str,
    /// SQL whose output must be the same before `apply` and after `undo` (the restoration is
    /// exact), empty for none.
    witness: &'static str,
}

/// PostgreSQL: `default_text_search_config` is left to the server and recorded (not pinned),
/// so `ALTER SYSTEM` + `pg_reload_conf()` reaches every scoring session at its next command.
/// The test server's is `english` (C locale), where `the` is a stop word (an empty query,
/// matching nothing); under `simple` it matches.
const PG_TEXT_SEARCH: MidRunLever = MidRunLever {
    wrong: "SELECT count(*) FILTER (WHERE to_tsvector('the ' || name) @@ to_tsquery('the')) \
            FROM customers, (SELECT pg_sleep(0.5)) s",
    marker: "",
    apply: "ALTER SYSTEM SET default_text_search_config = 'pg_catalog.simple'; \
            SELECT pg_reload_conf();",
    undo: "ALTER SYSTEM RESET default_text_search_config; SELECT pg_reload_conf();",
    witness: "SELECT setting FROM pg_settings WHERE name = 'default_text_search_config'",
};

/// PostgreSQL: a built-in replaced in place (same OID) by an SQL function, which the planner
/// inlines (a call by a built-in's OID alone runs its C code, whatever `pg_proc` says); the
/// `builtins pg_proc` digest sees it at start-up and at the end, not in between, and function
/// lookups read the catalog's latest snapshot, not the imported data snapshot.
const PG_BUILTIN: MidRunLever = MidRunLever {
    wrong: "SELECT count(*) FILTER (WHERE upper(name) = name) \
            FROM customers, (SELECT pg_sleep(0.5)) s",
    marker: "",
    apply: "CREATE OR REPLACE FUNCTION pg_catalog.upper(text) RETURNS text LANGUAGE sql \
            IMMUTABLE STRICT AS 'SELECT pg_catalog.lower($1)';",
    undo: "CREATE OR REPLACE FUNCTION pg_catalog.upper(text) RETURNS text LANGUAGE internal \
           IMMUTABLE STRICT PARALLEL SAFE AS 'upper';",
    witness: "SELECT p::text FROM pg_proc p WHERE oid = 'pg_catalog.upper(text)'::regprocedure",
};

/// MariaDB: every scoring session sets `sql_mode = @@GLOBAL.sql_mode` after each reset, so a
/// global `ANSI_QUOTES` set mid-run makes `"name"` the column, not the string `'name'`.
const MARIA_SQL_MODE: MidRunLever = MidRunLever {
    wrong: "SELECT COUNT(IF(\"name\" = name, 1, NULL)) FROM customers, (SELECT SLEEP(0.5)) s",
    marker: "SLEEP(0.5)) s",
    apply: "SET GLOBAL sql_mode = CONCAT(@@GLOBAL.sql_mode, ',ANSI_QUOTES');",
    undo: "SET GLOBAL sql_mode = '{before}';",
    witness: "SELECT @@GLOBAL.sql_mode",
};

/// MariaDB: `max_allowed_packet` (recorded, global-only) is taken by a session at connect and
/// at every `COM_RESET_CONNECTION`; at 1 MiB `REPEAT(name, 1000000)` is NULL.
const MARIA_PACKET: MidRunLever = MidRunLever {
    wrong: "SELECT count(*) FROM customers, (SELECT SLEEP(0.5)) s \
            WHERE REPEAT(name, 1000000) IS NULL",
    marker: "SLEEP(0.5)) s WHERE REPEAT",
    apply: "SET GLOBAL max_allowed_packet = 1048576;",
    undo: "SET GLOBAL max_allowed_packet = {before};",
    witness: "SELECT @@GLOBAL.max_allowed_packet",
};

/// PostgreSQL: a view created once scoring started (views are refused at start-up and a new
/// relation is named by the end-of-run digests, so it is dropped before them). A view over no
/// table returns its rows whatever snapshot the scoring transaction imported.
const PG_NEW_VIEW: MidRunLever = MidRunLever {
    wrong: "SELECT n FROM rt9_answer, (SELECT pg_sleep(0.5)) s",
    marker: "",
    apply: "CREATE VIEW public.rt9_answer AS SELECT 2::bigint AS n;",
    undo: "DROP VIEW public.rt9_answer;",
    witness: "SELECT count(*) FROM pg_class WHERE relname = 'rt9_answer'",
};

/// MariaDB: a table created once scoring started holding the gold's answer; the run's
/// `LOCK TABLES ... READ` covers the tables that existed, not a new one.
const MARIA_NEW_TABLE: MidRunLever = MidRunLever {
    wrong: "SELECT n FROM rt9_answer, (SELECT SLEEP(0.5)) s",
    marker: "FROM rt9_answer",
    apply: "CREATE TABLE rt9_answer AS SELECT 2 AS n;",
    undo: "DROP TABLE rt9_answer;",
    witness: "SELECT count(*) FROM information_schema.tables WHERE table_name = 'rt9_answer'",
};

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
        let witness = || match lever.witness {
            "" => String::new(),
            sql => server.admin_sql(&database, sql),
        };
        let before = witness();
        let started = wait_for_sleep(server, &database, ("SLEEP(1.5)", "-infinity"));
        let started = started.expect("the run's predictions sleep");
        server.admin_sql(&database, lever.apply);
        let undone = wait_for_sleep(server, &database, (lever.marker, &started)).is_some();
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
    predictions[5] = lever.wrong;
    let run = Run::pull_request(server, database, hostile_predictions(root, &predictions));
    let mut watcher = None;
    let judged = run.workflow_with(root, || {
        watcher = pull.then(|| lever_watcher(server, database.to_string(), lever));
    });
    (judged, watcher.map(|w| w.join().unwrap()))
}

/// The control exits 1; with the lever pulled (and exactly undone after the wrong prediction
/// ran) the regressing pull request still does not pass.
fn check_mid_run_lever(server: &'static Server, database: &str, lever: &'static MidRunLever) {
    let (control, _) = judge_mid_run(server, &format!("{database}_c"), lever, false);
    assert_eq!(
        control.status.code(),
        Some(1),
        "control: {}",
        text(&control)
    );
    let (judged, pulled) = judge_mid_run(server, &format!("{database}_l"), lever, true);
    let out = text(&judged);
    let acted = Pulled {
        undone_after_the_wrong_prediction: true,
        restored: true,
    };
    assert_eq!(pulled, Some(acted), "the watcher did not act: {out}");
    assert_ne!(
        judged.status.code(),
        Some(0),
        "the regressing pull request passed: {out}"
    );
    assert_no_secret(server, &judged);
}

#[test]
fn postgres_text_search_config_changed_mid_run_does_not_pass() {
    let _alone = GLOBALS.write().unwrap_or_else(|e| e.into_inner());
    check_mid_run_lever(servers::postgres(), "rt9_pg_tsc", &PG_TEXT_SEARCH);
}

#[test]
fn postgres_builtin_replaced_mid_run_does_not_pass() {
    let _shared = GLOBALS.read().unwrap_or_else(|e| e.into_inner());
    check_mid_run_lever(servers::postgres(), "rt9_pg_upper", &PG_BUILTIN);
}

#[test]
fn postgres_view_created_mid_run_does_not_pass() {
    let _shared = GLOBALS.read().unwrap_or_else(|e| e.into_inner());
    check_mid_run_lever(servers::postgres(), "rt9_pg_view", &PG_NEW_VIEW);
}

#[test]
fn mariadb_table_created_mid_run_does_not_pass() {
    let _shared = GLOBALS.read().unwrap_or_else(|e| e.into_inner());
    check_mid_run_lever(servers::mariadb(), "rt9_ma_table", &MARIA_NEW_TABLE);
}

#[test]
fn mariadb_sql_mode_changed_mid_run_does_not_pass() {
    let _alone = GLOBALS.write().unwrap_or_else(|e| e.into_inner());
    check_mid_run_lever(servers::mariadb(), "rt9_ma_mode", &MARIA_SQL_MODE);
}

#[test]
fn mariadb_max_allowed_packet_changed_mid_run_does_not_pass() {
    let _alone = GLOBALS.write().unwrap_or_else(|e| e.into_inner());
    check_mid_run_lever(servers::mariadb(), "rt9_ma_packet", &MARIA_PACKET);
}

/// DuckDB benchmark (`dataset.engine.kind: duckdb`): a `.duckdb.wal` beside the base's database
/// file, written by a step of the pull request's workflow and ignored by the pull request's own
/// `.gitignore` (so git lists it neither as changed nor as untracked). The dataset fingerprint
/// hashes the `.duckdb` file alone, and DuckDB replays a WAL it finds even when it opens the
/// file read-only: the WAL renames item 1 to what the wrong prediction returns.
#[cfg(feature = "duckdb")]
mod duckdb_wal {
    use crate::common;
    use common::repo::{commit_all, commit_baseline, init_main, judged};
    use common::{git, text};
    use sqlgate::engine::duckdb::tables::write_script;
    use std::path::Path;

    /// The base: the `shop` DuckDB file, one question (item 1's name, `pen`) predicted right,
    /// and its baseline; returns the base commit.
    fn base(root: &Path) -> String {
        crate::duckdb::loaded_shop(root);
        std::fs::remove_dir_all(root.join("sqlite")).unwrap();
        std::fs::write(
            root.join("pred.txt"),
            "SELECT name FROM item WHERE id = 1\n",
        )
        .unwrap();
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
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let base = base(root);
        git(root, &["checkout", "-qb", "pr"]);
        std::fs::write(
            root.join("pred.txt"),
            "SELECT name FROM item WHERE id = 2\n",
        )
        .unwrap();
        std::fs::write(root.join(".gitignore"), "*.wal\n").unwrap();
        commit_all(root, "a wrong prediction");
        let control = judged(root, &base, &[]);
        assert_eq!(
            control.status.code(),
            Some(1),
            "control: {}",
            text(&control)
        );
        let scratch = tempfile::tempdir().unwrap();
        let database = root.join("ddb/shop/shop.duckdb");
        let wal = renaming_wal(&database, scratch.path());
        std::fs::write(root.join("ddb/shop/shop.duckdb.wal"), wal).unwrap();
        let status = git(root, &["status", "--porcelain"]);
        assert!(!status.contains("wal"), "git sees the WAL: {status}");
        let judged = judged(root, &base, &[]);
        assert_ne!(
            judged.status.code(),
            Some(0),
            "the regressing pull request passed: {}",
            text(&judged)
        );
    }
}

/// The flake rule's order of checks (surface 1): on a server the gate credits no right verdict
/// of a changed prediction whose result the plan picks (`prediction-value`), since a
/// preparation can steer the plan. The stability check returns "near the time limit" before it
/// looks for the plan's choices, and timing is not the plan's choice, so a changed prediction
/// that sleeps past half of `timeout_ms` (3 s of 5 s) is credited whatever its ties: round 8's
/// MariaDB statistics lever (`mysql.table_stats`) picking `ada` among `ada` / `ADA` again turns
/// the regressing pull request green. And a window function reading a row by position, under
/// an ORDER BY of the value it reads, is neither an order nor a value choice to the check.
mod plan_ties {
    use crate::common;
    use crate::server_levers::Lever;
    use crate::server_order::{judge_on, tied_customer, Setup, JOIN_STATISTICS, TIE_QUESTION};
    use common::servers;
    use common::trust_flow::*;

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

    /// The control (the lever's prediction without the lever) exits 1; with round 8's
    /// statistics lever the pull request must not pass.
    fn check_steered(database: &str, wrong: &'static str) {
        let lever = Lever {
            question: TIE_QUESTION,
            wrong,
            names: "",
        };
        let on = |database: &str, prepare: &str| {
            let mariadb = (servers::mariadb(), database);
            judge_on(tied_customer as Setup, mariadb, &lever, prepare)
        };
        let control = on(&format!("{database}_c"), "");
        assert_eq!(
            control.status.code(),
            Some(1),
            "control: {}",
            text(&control)
        );
        let judged = on(database, JOIN_STATISTICS);
        assert_ne!(
            judged.status.code(),
            Some(0),
            "the regressing pull request passed: {}",
            text(&judged)
        );
    }

    #[test]
    fn a_slow_prediction_whose_value_the_plan_picks_earns_no_credit() {
        check_steered("rt9_slow_tie", SLOW_WRONG);
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
        assert_eq!(
            control.status.code(),
            Some(1),
            "control: {}",
            text(&control)
        );
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
