//! State-changing SQL on PostgreSQL (issue 46): what judging the PostgreSQL corpus of
//! tests/data/livesql/postgres (210 items, four databases) costs in sqlgate's BIRD-Critic
//! PostgreSQL evaluation, with and without the rollback fast path, against the official
//! evaluator's loop on the same items and the same server, end to end.
//!
//! It times, on the server at `SQLGATE_PG_URL` (a URL of a superuser, or of a role that may create
//! databases and roles):
//!
//! - sqlgate's [`PgRun`] on the predictions, 2 workers, with the fast path and without it (every
//!   item's clone dropped and made again): start (the templates), every item, the clean-up;
//! - the per-item isolation cost of each path alone: an item of `SELECT 1` without a test judged
//!   50 times in a row (its clone's session, and the `ROLLBACK` or the clone dropped and made
//!   again), the median;
//! - the official `wrapper_evaluation_postgresql.py --mode pred` at each `--num_threads` asked for
//!   (default 2), databases `<db>_template` and `<db>` built before (its layout);
//!
//! and compares every run's verdicts item for item with the one-thread recording
//! (`official_verdicts_pg.jsonl`): sqlgate's must be equal (the bench panics otherwise), the
//! live official runs' differences are listed.
//!
//! The official code is not in this repository: `SQLGATE_LIVESQL_OFFICIAL=DIR` names a folder
//! holding `pg/` (bird-bench/BIRD-CRITIC-1 `evaluation/src/*.py` at f408d6c, unmodified);
//! `SQLGATE_PYTHON` a Python with `tqdm` and `psycopg2-binary` from PyPI (default `python3`),
//! `SQLGATE_PG_BIN` the folder of `psql` / `createdb` / `dropdb` the evaluator runs (default
//! `/usr/lib/postgresql/15/bin`). The evaluator reaches host `bird_critic_postgresql` port 5432 as
//! `root` / `123123` (hard-coded): the server must be that one, listening on 127.0.0.1:5432
//! (`PGHOSTADDR` sends the host name there). Without the variable only sqlgate is timed.
//! Arguments after `--`: `threads=2,1` (the official thread counts).
//!
//! ```text
//! SQLGATE_PG_URL=postgres://root:123123@127.0.0.1:5432/postgres \
//! SQLGATE_LIVESQL_OFFICIAL=/path/to/official SQLGATE_PYTHON=/path/to/venv/bin/python3 \
//!   cargo bench --bench livesql_pg_speed -- threads=2
//! ```

mod common;

use common::median;
use serde_json::Value;
use sqlgate::engine::livesql::postgres::{Paths, PgRun, PgSettings};
use sqlgate::input::livesql::{parse_items, read_items, read_predictions, LiveItem};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const DATABASES: [&str; 4] = ["shop", "school", "fleet", "clinic"];

/// Pass / fail per instance.
type Verdicts = BTreeMap<String, bool>;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/livesql/postgres")
}

fn read_jsonl(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (text.lines().filter(|l| !l.trim().is_empty()))
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// An administrator's session on `database` of the server at `url`.
fn admin(url: &str, database: &str) -> postgres::Client {
    let mut config: postgres::Config = url.parse().expect("SQLGATE_PG_URL is a URL");
    config.dbname(database);
    config
        .connect(postgres::NoTls)
        .unwrap_or_else(|e| panic!("connecting to the server: {e}"))
}

/// Builds `<db>_template` from `db/<db>.sql` and `<db>` from it, for every database (the
/// official layout; sqlgate reads `<db>`).
fn build_databases(url: &str) {
    let mut client = admin(url, "postgres");
    for db in DATABASES {
        for sql in [
            format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"),
            format!("DROP DATABASE IF EXISTS {db}_template WITH (FORCE)"),
            format!("CREATE DATABASE {db}_template"),
        ] {
            client.batch_execute(&sql).unwrap();
        }
        let script = std::fs::read_to_string(corpus_dir().join(format!("db/{db}.sql"))).unwrap();
        admin(url, &format!("{db}_template"))
            .batch_execute(&script)
            .unwrap();
        client
            .batch_execute(&format!("CREATE DATABASE {db} TEMPLATE {db}_template"))
            .unwrap();
    }
}

fn settings(url: &str, fast_path: bool) -> PgSettings {
    let mut settings = PgSettings::new(url.to_string());
    settings.fast_path = fast_path;
    settings
}

fn db_ids() -> BTreeSet<String> {
    DATABASES.iter().map(|d| d.to_string()).collect()
}

/// sqlgate on the corpus with 2 workers: its wall time (start to clean-up), verdicts and paths.
fn run_sqlgate(url: &str, fast_path: bool) -> (Duration, Verdicts, Paths) {
    use rayon::prelude::*;
    let items = read_items(&corpus_dir().join("items_pg.jsonl")).unwrap();
    let predictions = read_predictions(&corpus_dir().join("predictions_pg.jsonl")).unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let start = Instant::now();
    let run = PgRun::start(settings(url, fast_path), &db_ids()).expect("a run");
    let verdicts: Verdicts = pool.install(|| {
        items
            .par_iter()
            .map(|item| {
                let prediction = predictions.get(&item.instance_id).map(Vec::as_slice);
                let verdict = run.judge(item, prediction).expect("no fault");
                (item.instance_id.clone(), verdict.success)
            })
            .collect()
    });
    let paths = run.paths();
    drop(run);
    (start.elapsed(), verdicts, paths)
}

/// An item of `SELECT 1` on `shop` without a test.
fn null_item() -> LiveItem {
    let line = serde_json::json!({
        "instance_id": "null", "db_id": "shop", "category": "Query", "sol_sql": ["SELECT 1"],
        "preprocess_sql": [], "clean_up_sql": [], "test_cases": [], "issue_sql": [],
        "conditions": {}, "efficiency": false, "query": "null",
    });
    parse_items(Path::new("null.jsonl"), &format!("{line}\n"))
        .unwrap()
        .remove(0)
}

/// The median time of judging the null item, 50 times in a row on one run.
fn isolation_cost(url: &str, fast_path: bool) -> Duration {
    let run = PgRun::start(settings(url, fast_path), &db_ids()).expect("a run");
    let item = null_item();
    let prediction = ["SELECT 1".to_string()];
    run.judge(&item, Some(&prediction)).unwrap();
    let times: Vec<Duration> = (0..50)
        .map(|_| {
            let start = Instant::now();
            assert!(run.judge(&item, Some(&prediction)).unwrap().success);
            start.elapsed()
        })
        .collect();
    median(times)
}

/// The official evaluator (`dir`) on the predictions with `threads`, in a fresh folder: its wall
/// time (the wrapper's process, databases built before) and per-item verdicts.
fn run_official(url: &str, dir: &Path, python: &Path, threads: usize) -> (Duration, Verdicts) {
    let work = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(dir.join("pg")).expect("the official folder") {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "py") {
            std::fs::copy(&path, work.path().join(path.file_name().unwrap())).unwrap();
        }
    }
    build_databases(url);
    let predictions: BTreeMap<String, Value> =
        read_jsonl(&corpus_dir().join("predictions_pg.jsonl"))
            .into_iter()
            .map(|p| {
                (
                    p["instance_id"].as_str().unwrap().to_string(),
                    p["pred_sqls"].clone(),
                )
            })
            .collect();
    let input: String = read_jsonl(&corpus_dir().join("items_pg.jsonl"))
        .into_iter()
        .map(|mut item| {
            let id = item["instance_id"].as_str().unwrap().to_string();
            item["pred_sqls"] = predictions[&id].clone();
            format!("{item}\n")
        })
        .collect();
    std::fs::write(work.path().join("input_pred.jsonl"), input).unwrap();
    // The wrapper runs `python` from PATH for every task, the reset `psql` / `createdb`.
    let pg_bin = std::env::var_os("SQLGATE_PG_BIN").unwrap_or("/usr/lib/postgresql/15/bin".into());
    let bins = [
        python.parent().unwrap_or(Path::new("")).to_path_buf(),
        PathBuf::from(pg_bin),
    ];
    let path = std::env::join_paths(bins.into_iter().chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    let mut command = Command::new(python);
    command
        .current_dir(work.path())
        .env("PATH", path)
        .env("PGHOSTADDR", "127.0.0.1")
        .args([
            "wrapper_evaluation_postgresql.py",
            "--jsonl_file",
            "input_pred.jsonl",
        ])
        .args([
            "--num_threads",
            &threads.to_string(),
            "--mode",
            "pred",
            "--logging",
            "false",
        ]);
    let start = Instant::now();
    let output = command.output().expect("the official wrapper");
    let wall = start.elapsed();
    assert!(
        output.status.success(),
        "the official wrapper failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let status = read_jsonl(&work.path().join("input_pred_output_with_status.jsonl"));
    let verdicts = (status.iter())
        .map(|row| {
            (
                row["instance_id"].as_str().unwrap().to_string(),
                row["status"] == "success",
            )
        })
        .collect();
    (wall, verdicts)
}

/// The recorded one-thread official verdicts (pred run).
fn recorded() -> Verdicts {
    read_jsonl(&corpus_dir().join("official_verdicts_pg.jsonl"))[1..]
        .iter()
        .map(|l| {
            (
                l["instance_id"].as_str().unwrap().to_string(),
                l["status"] == "success",
            )
        })
        .collect()
}

/// The instances where `a` and `b` differ (an instance missing from either counts).
fn differing<'a>(a: &'a Verdicts, b: &Verdicts) -> Vec<&'a str> {
    (a.iter())
        .filter(|(id, v)| b.get(*id) != Some(v))
        .map(|(id, _)| id.as_str())
        .collect()
}

/// `key=a,b` from the bench's arguments, else `default`.
fn list_arg(key: &str, default: &str) -> Vec<String> {
    let prefix = format!("{key}=");
    let value = std::env::args()
        .find_map(|a| a.strip_prefix(&prefix).map(str::to_string))
        .unwrap_or_else(|| default.to_string());
    value.split(',').map(|v| v.trim().to_string()).collect()
}

fn main() {
    let Ok(url) = std::env::var("SQLGATE_PG_URL") else {
        println!(
            "SQLGATE_PG_URL not set: the PostgreSQL bench needs a server (see its doc comment)"
        );
        return;
    };
    let official = std::env::var_os("SQLGATE_LIVESQL_OFFICIAL").map(PathBuf::from);
    let python = PathBuf::from(std::env::var_os("SQLGATE_PYTHON").unwrap_or("python3".into()));
    let threads: Vec<usize> = (list_arg("threads", "2").iter())
        .map(|t| t.parse().expect("threads=N,M"))
        .collect();
    let recorded = recorded();
    build_databases(&url);
    println!(
        "== BIRD-Critic PostgreSQL corpus ({} items)",
        recorded.len()
    );
    let mut walls = Vec::new();
    for fast_path in [true, false] {
        let (wall, ours, paths) = run_sqlgate(&url, fast_path);
        assert_eq!(
            differing(&ours, &recorded),
            Vec::<&str>::new(),
            "sqlgate's verdicts (fast path {fast_path}) differ from the one-thread recording"
        );
        let passes = ours.values().filter(|v| **v).count();
        println!(
            "sqlgate (2 workers, fast path {}): {:.2} s, {passes} pass, equal to the recording; \
             paths: {} fast, {} refused and judged again, {} slow, {} clones remade after a fast item",
            if fast_path { "on" } else { "off" },
            wall.as_secs_f64(),
            paths.fast,
            paths.refused,
            paths.slow,
            paths.remade
        );
        walls.push(wall);
    }
    let (fast, slow) = (isolation_cost(&url, true), isolation_cost(&url, false));
    println!(
        "per-item isolation cost (an item of SELECT 1 without a test, median of 50): fast path \
         {:.1} ms, drop and clone {:.1} ms",
        fast.as_secs_f64() * 1e3,
        slow.as_secs_f64() * 1e3
    );
    let Some(dir) = &official else {
        println!("(SQLGATE_LIVESQL_OFFICIAL not set: the official evaluator not run)");
        return;
    };
    for &n in &threads {
        let (wall, theirs) = run_official(&url, dir, &python, n);
        let passes = theirs.values().filter(|v| **v).count();
        println!(
            "official --num_threads {n}: {:.2} s, {passes} pass; sqlgate {:.1}x faster with the \
             fast path, {:.1}x without; this run vs the one-thread recording differs on {:?}",
            wall.as_secs_f64(),
            wall.as_secs_f64() / walls[0].as_secs_f64(),
            wall.as_secs_f64() / walls[1].as_secs_f64(),
            differing(&theirs, &recorded)
        );
    }
}
