//! State-changing SQL on MariaDB / MySQL (issue 46): what judging the MariaDB form of the
//! conformance corpus (tests/data/livesql/mysql, 210 items) costs in sqlgate's [`MyRun`], and what
//! isolating one item costs there against the official loop on the same items.
//!
//! On a scratch server (the bench drops and re-creates the databases `shop`, `school`, `fleet`,
//! `clinic` from `mysql/db/*.sql`) it times
//!
//! - [`MyRun`] judging the 210 predictions with `threads=` workers (default 2), the item deadline
//!   `deadline=` seconds (default 20: the one never-ending item, `lsq_191`, stops there; the
//!   official wrapper kills it after 300 s), and compares the verdicts with the recording
//!   (`official_verdicts_my.jsonl`), printing the items that differ;
//! - the per-item isolation cost alone, item by item on one worker: in sqlgate a blank item (no
//!   statement, no test) on each item's database, so the time is taking a clone, a new password,
//!   the user's session, the watchdog, and killing the user's sessions, dropping the clone and
//!   rebuilding it from the template (`SHOW CREATE TABLE` replayed, `INSERT ... SELECT`); in the
//!   official loop its `reset_and_restore_database` after each task, replayed command for command
//!   (three `mysql` client processes: `DROP DATABASE`, `CREATE DATABASE`, the dump loaded into
//!   it), without its fixed `time.sleep(1)` per task.
//!
//! `SQLGATE_MYSQL_ADMIN_URL` is an administrator's URL of the scratch server (the bench prints
//! nothing of it); without it nothing is timed. The `mysql` command-line client must be on `PATH`.
//!
//! ```text
//! SQLGATE_MYSQL_ADMIN_URL=mysql://root:pw@127.0.0.1:3306/mysql SQLGATE_PYTHON=python3 \
//!   cargo bench --bench livesql_speed_my -- threads=2 deadline=20
//! ```

mod common;

use common::median;
use mysql::prelude::Queryable;
use serde_json::Value;
use sqlgate::engine::livesql::mysql::{MyRun, MySettings};
use sqlgate::engine::livesql::Verdict;
use sqlgate::input::livesql::{parse_items, read_items, read_predictions, LiveItem};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const DBS: [&str; 4] = ["shop", "school", "fleet", "clinic"];

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/livesql/mysql")
}

/// The value of `key=` among the arguments, or `default`.
fn arg(key: &str, default: u64) -> u64 {
    std::env::args()
        .find_map(|a| a.strip_prefix(&format!("{key}=")).map(str::to_string))
        .map_or(default, |v| v.parse().expect("a number"))
}

/// Drops and re-creates the four base databases from their scripts.
fn load_databases(opts: &mysql::Opts) {
    let mut conn = mysql::Conn::new(opts.clone()).expect("the administrator's session");
    for db in DBS {
        let script = std::fs::read_to_string(corpus_dir().join(format!("db/{db}.sql"))).unwrap();
        conn.query_drop(format!(
            "DROP DATABASE IF EXISTS `{db}`; CREATE DATABASE `{db}`"
        ))
        .unwrap();
        conn.query_drop(format!("USE `{db}`")).unwrap();
        conn.query_drop(&script).unwrap();
    }
}

/// The recorded official flags (success, execution error, timeout, assertion) per item.
fn recorded() -> BTreeMap<String, (bool, bool, bool, bool)> {
    let text = std::fs::read_to_string(corpus_dir().join("official_verdicts_my.jsonl")).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (lines[1..].iter())
        .map(|l| {
            let flag = |k: &str| l[k].as_bool().unwrap();
            let id = l["instance_id"].as_str().unwrap().to_string();
            let flags = (
                l["status"] == "success",
                flag("execution_error"),
                flag("timeout_error"),
                flag("assertion_error"),
            );
            (id, flags)
        })
        .collect()
}

fn flags(verdict: &Verdict) -> (bool, bool, bool, bool) {
    (
        verdict.success,
        verdict.execution_error,
        verdict.timeout_error,
        verdict.assertion_error,
    )
}

fn settings(url: &str, deadline: u64) -> MySettings {
    let mut settings = MySettings::new(url.to_string());
    settings.deadline = Duration::from_secs(deadline);
    if let Some(python) = std::env::var_os("SQLGATE_PYTHON") {
        settings.python = PathBuf::from(python);
    }
    settings
}

fn db_ids() -> BTreeSet<String> {
    DBS.iter().map(|d| d.to_string()).collect()
}

/// sqlgate on the predictions: the wall-clock time (start, judging, clean-up) and the items
/// whose verdict differs from the recording.
fn run_sqlgate(
    url: &str,
    items: &[LiveItem],
    threads: usize,
    deadline: u64,
) -> (Duration, Vec<String>) {
    use rayon::prelude::*;
    let predictions = read_predictions(&corpus_dir().join("predictions_my.jsonl")).unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let started = Instant::now();
    let run = MyRun::start(settings(url, deadline), &db_ids()).expect("the run");
    let verdicts: BTreeMap<String, Verdict> = pool.install(|| {
        items
            .par_iter()
            .map(|item| {
                let prediction = predictions.get(&item.instance_id).map(Vec::as_slice);
                (
                    item.instance_id.clone(),
                    run.judge(item, prediction).expect("no fault"),
                )
            })
            .collect()
    });
    drop(run);
    let elapsed = started.elapsed();
    let recorded = recorded();
    let differing = (verdicts.iter())
        .filter(|(id, v)| recorded[*id] != flags(v))
        .map(|(id, _)| id.clone())
        .collect();
    (elapsed, differing)
}

/// A blank item on `db`: no statement, no test.
fn blank_item(db: &str) -> LiveItem {
    let line = serde_json::json!({
        "instance_id": "blank", "db_id": db, "category": "Management", "sol_sql": [],
        "preprocess_sql": [], "clean_up_sql": [], "test_cases": [], "issue_sql": [],
        "conditions": {}, "efficiency": false, "query": "blank",
    });
    parse_items(Path::new("blank.jsonl"), &format!("{line}\n"))
        .unwrap()
        .remove(0)
}

/// sqlgate's isolation cost per item, item by item on one worker.
fn sqlgate_isolation(url: &str, items: &[LiveItem]) -> Vec<Duration> {
    let run = MyRun::start(settings(url, 60), &db_ids()).expect("the run");
    let blanks: BTreeMap<&str, LiveItem> = DBS.iter().map(|db| (*db, blank_item(db))).collect();
    items
        .iter()
        .map(|item| {
            let started = Instant::now();
            let verdict = run
                .judge(&blanks[item.db_id.as_str()], Some(&[]))
                .expect("no fault");
            assert!(verdict.success, "{verdict:?}");
            started.elapsed()
        })
        .collect()
}

/// The official loop's reset after one task on `db`, as its `reset_and_restore_database` runs it.
fn official_reset(opts: &mysql::Opts, db: &str) -> Duration {
    let client = |extra: &[&str]| {
        let mut command = Command::new("mysql");
        command
            .arg(format!("-h{}", opts.get_ip_or_hostname()))
            .arg(format!("-P{}", opts.get_tcp_port()))
            .arg(format!("-u{}", opts.get_user().unwrap_or("root")))
            .arg(format!("-p{}", opts.get_pass().unwrap_or("")))
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        command
    };
    let dump = std::fs::File::open(corpus_dir().join(format!("db/{db}.sql"))).unwrap();
    let started = Instant::now();
    let drop_sql = format!("DROP DATABASE IF EXISTS `{db}`");
    let create_sql = format!("CREATE DATABASE `{db}`");
    assert!(client(&["-e", &drop_sql]).status().unwrap().success());
    assert!(client(&["-e", &create_sql]).status().unwrap().success());
    assert!(client(&[db]).stdin(dump).status().unwrap().success());
    started.elapsed()
}

fn print_costs(what: &str, costs: &[Duration]) {
    let total: Duration = costs.iter().sum();
    println!(
        "{what}: {:.2} s for {} items, median {:.1} ms per item",
        total.as_secs_f64(),
        costs.len(),
        median(costs.to_vec()).as_secs_f64() * 1000.0
    );
}

fn main() {
    let Ok(url) = std::env::var("SQLGATE_MYSQL_ADMIN_URL") else {
        println!("(SQLGATE_MYSQL_ADMIN_URL not set: nothing timed)");
        return;
    };
    let opts = mysql::Opts::from_url(&url).expect("a MySQL URL");
    let (threads, deadline) = (arg("threads", 2) as usize, arg("deadline", 20));
    let items = read_items(&corpus_dir().join("items_my.jsonl")).unwrap();
    load_databases(&opts);
    let (elapsed, differing) = run_sqlgate(&url, &items, threads, deadline);
    println!(
        "sqlgate MyRun, {} items, {threads} workers, {deadline} s deadline: {:.1} s; verdicts differing from the recording: {differing:?}",
        items.len(),
        elapsed.as_secs_f64()
    );
    print_costs(
        "sqlgate isolation (clone, user session, watchdog, reset)",
        &sqlgate_isolation(&url, &items),
    );
    let official: Vec<Duration> = items
        .iter()
        .map(|item| official_reset(&opts, &item.db_id))
        .collect();
    print_costs(
        "official reset_and_restore_database (3 mysql processes)",
        &official,
    );
    load_databases(&opts);
}
