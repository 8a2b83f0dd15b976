//! Hostile databases committed by a pull request: generated columns, views and triggers calling
//! functions, a header claiming billions of pages, corrupted pages, a write-ahead log beside the
//! file. Every connection sqlgate opens (executor, schema, ESM+ facts) is guarded, so the run
//! finishes within its limits, with bounded memory, and the files are untouched; a file whose
//! header lies about its pages, or whose gold fails on garbage pages, is refused by name.

use crate::common;

use common::{read_jsonl, snapshot};
use rusqlite::Connection;
use std::path::Path;
use std::time::{Duration, Instant};

/// The wall-clock limit the configs set per query.
const TIMEOUT_MS: u64 = 1500;

fn create(databases: &Path, db_id: &str, ddl: &str) -> std::path::PathBuf {
    let folder = databases.join(db_id);
    std::fs::create_dir_all(&folder).unwrap();
    let path = folder.join(format!("{db_id}.sqlite"));
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(ddl).unwrap();
    path
}

/// Rows of `t(a)`, shared by the corpus.
const ROWS: &str = "CREATE TABLE t (a INTEGER PRIMARY KEY, n TEXT);\
    WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 400) \
    INSERT INTO t (a, n) SELECT i, 'x' || i FROM r;";

/// Builds the corpus; returns (db_id, prediction) pairs, each run against `SELECT count(*) FROM t`.
fn corpus(databases: &Path) -> Vec<(&'static str, &'static str)> {
    create(
        databases,
        "gencol",
        &format!(
            "{ROWS} CREATE TABLE g (a INTEGER, b BLOB GENERATED ALWAYS AS (zeroblob(20000000)) VIRTUAL);\
             INSERT INTO g (a) SELECT a FROM t;"
        ),
    );
    create(
        databases,
        "views",
        &format!(
            "{ROWS} CREATE VIEW v AS SELECT randomblob(30000000) AS x FROM t, t AS t2;\
             CREATE VIEW w AS SELECT zeroblob(20000000) AS y FROM t;\
             CREATE TABLE log (x);\
             CREATE TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO log SELECT randomblob(1000000); END;"
        ),
    );
    let pages = create(databases, "pages", ROWS);
    let mut bytes = std::fs::read(&pages).unwrap();
    bytes[28..32].copy_from_slice(&0x7fff_fff0u32.to_be_bytes());
    std::fs::write(&pages, bytes).unwrap();
    let corrupt = create(databases, "corrupt", ROWS);
    let mut bytes = std::fs::read(&corrupt).unwrap();
    let page = 4096.min(bytes.len() / 2);
    for (i, byte) in bytes[page..].iter_mut().enumerate() {
        *byte = (i * 131 % 251) as u8;
    }
    std::fs::write(&corrupt, bytes).unwrap();
    vec![
        ("gencol", "SELECT count(*) FROM t"),
        ("gencol", "SELECT b FROM g"),
        ("gencol", "SELECT sum(length(b)) FROM g"),
        ("gencol", "SELECT count(*) FROM g AS x, g AS y ORDER BY x.b"),
        ("views", "SELECT count(*) FROM v"),
        ("views", "SELECT y FROM w"),
        ("views", "SELECT x FROM v ORDER BY x"),
        ("pages", "SELECT count(*) FROM t"),
        ("pages", "SELECT a FROM t ORDER BY n DESC"),
        ("corrupt", "SELECT count(*) FROM t"),
        ("corrupt", "SELECT * FROM t"),
    ]
}

/// Peak resident memory (VmHWM, KiB) of a running process, read until it exits.
fn run_measured(mut command: std::process::Command) -> (std::process::Output, u64, Duration) {
    let started = Instant::now();
    let child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status_file = format!("/proc/{}/status", child.id());
    let peak = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let (peak, done) = (peak.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                if let Ok(status) = std::fs::read_to_string(&status_file) {
                    if let Some(kib) = status
                        .lines()
                        .find_map(|l| l.strip_prefix("VmHWM:"))
                        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                    {
                        peak.fetch_max(kib, std::sync::atomic::Ordering::Relaxed);
                    }
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        })
    };
    let output = child.wait_with_output().unwrap();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    watcher.join().unwrap();
    let elapsed = started.elapsed();
    (
        output,
        peak.load(std::sync::atomic::Ordering::Relaxed),
        elapsed,
    )
}

/// The databases of the corpus refused at load: the header of `pages` claims more pages than
/// the file holds, and `corrupt`'s table pages are garbage, so its gold query fails.
const REFUSED: [&str; 2] = ["pages", "corrupt"];

#[test]
fn a_database_whose_header_lies_or_whose_pages_are_garbage_is_refused_by_name() {
    let work = tempfile::tempdir().unwrap();
    let databases = work.path().join("database");
    corpus(&databases);
    let config = work.path().join("sqlgate.yml");
    std::fs::write(
        &config,
        "dataset: { gold: gold.sql, databases: database, difficulty: none }\n\
         predictions: [{ name: hostile, path: pred.txt }]\nmetrics: [ex]\n",
    )
    .unwrap();
    std::fs::write(work.path().join("pred.txt"), "SELECT count(*) FROM t\n").unwrap();
    let refusal = |db: &str| {
        let gold = format!("SELECT count(*) FROM t\t{db}\n");
        std::fs::write(work.path().join("gold.sql"), gold).unwrap();
        let output = common::eval(&config, &[]);
        common::assert_exit(&output, 2);
        common::stderr(&output)
    };
    let pages = databases.join("pages/pages.sqlite");
    let size = std::fs::metadata(&pages).unwrap().len();
    assert_eq!(
        refusal("pages"),
        format!(
            "sqlgate: error: {}: database `pages`: is truncated: {size} bytes, but its header \
             declares 2147483632 pages of 4096 bytes (8796092956672 bytes)\n",
            pages.display()
        )
    );
    common::assert_contains(
        &refusal("corrupt"),
        &[
            "gold.sql: item 0 (db `corrupt`): the gold query `SELECT count(*) FROM t` failed: ",
            "malformed",
            "list the item in `dataset.allow_failing_golds`",
        ],
    );
}

#[test]
fn hostile_databases_finish_within_limits_and_bounded_memory() {
    let work = tempfile::tempdir().unwrap();
    let databases = work.path().join("database");
    let cases: Vec<_> = (corpus(&databases).into_iter())
        .filter(|(db, _)| !REFUSED.contains(db))
        .collect();
    let gold: Vec<_> = (cases.iter())
        .map(|(db, _)| ("SELECT count(*) FROM t".to_string(), db.to_string()))
        .collect();
    let predictions: Vec<_> = cases.iter().map(|(_, sql)| sql.to_string()).collect();
    common::write_items(work.path(), &gold, &predictions);
    let config = work.path().join("sqlgate.yml");
    std::fs::write(
        &config,
        format!(
            "dataset: {{ gold: gold.sql, databases: database, difficulty: none }}\n\
             predictions: [{{ name: hostile, path: pred.txt }}]\n\
             metrics: [ex, esm, esm_plus]\n\
             execution: {{ timeout_ms: {TIMEOUT_MS}, threads: 2, max_result_bytes: 67108864 }}\n"
        ),
    )
    .unwrap();
    let before = snapshot(&databases);
    let jsonl = work.path().join("items.jsonl");
    let mut command = common::eval_command(&config, &["--jsonl", common::arg(&jsonl)]);
    command.env_remove("SQLGATE_WORKSPACE");
    let (output, peak_kib, elapsed) = run_measured(command);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(matches!(output.status.code(), Some(0 | 1)), "{stderr}");
    eprintln!(
        "hostile corpus: {} items in {:.1} s, peak RSS {} MiB",
        cases.len(),
        elapsed.as_secs_f64(),
        peak_kib / 1024
    );
    // Every query is bounded by the timeout; two workers; schema and facts by their own budget.
    let budget = Duration::from_millis(TIMEOUT_MS) * cases.len() as u32 + Duration::from_secs(30);
    assert!(elapsed < budget, "took {elapsed:?}");
    assert!(peak_kib < 1024 * 1024, "peak RSS {peak_kib} KiB");
    let items = read_jsonl(&jsonl);
    assert_eq!(items.len(), cases.len());
    for (item, (db, sql)) in items.iter().zip(&cases) {
        if *sql != "SELECT count(*) FROM t" {
            continue;
        }
        assert_eq!(item["outcome"]["ex"], "match", "{db}: {sql}: {item}");
    }
    assert_eq!(
        snapshot(&databases),
        before,
        "a database changed or a file appeared"
    );
}

#[test]
fn a_database_with_a_wal_beside_it_is_refused() {
    let work = tempfile::tempdir().unwrap();
    let databases = work.path().join("database");
    let path = create(&databases, "walled", ROWS);
    {
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        conn.execute("CREATE TABLE hidden (x)", []).unwrap();
        std::fs::copy(
            path.with_extension("sqlite-wal"),
            work.path().join("saved-wal"),
        )
        .unwrap();
    }
    // The WAL is checkpointed on close; put an uncheckpointed one back, as a commit would.
    std::fs::copy(
        work.path().join("saved-wal"),
        path.with_extension("sqlite-wal"),
    )
    .unwrap();
    let _ = std::fs::remove_file(path.with_extension("sqlite-shm"));
    std::fs::write(
        work.path().join("gold.sql"),
        "SELECT count(*) FROM t\twalled\n",
    )
    .unwrap();
    std::fs::write(
        work.path().join("pred.txt"),
        "SELECT count(*) FROM hidden\n",
    )
    .unwrap();
    let config = work.path().join("sqlgate.yml");
    std::fs::write(
        &config,
        "dataset: { gold: gold.sql, databases: database, difficulty: none }\n\
         predictions: [{ path: pred.txt }]\nmetrics: [ex, esm_plus]\n",
    )
    .unwrap();
    let output = common::eval_command(&config, &[])
        .env_remove("SQLGATE_WORKSPACE")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    common::assert_contains(&stderr, &["database `walled`", "-wal"]);
    assert!(
        !path.with_extension("sqlite-shm").exists(),
        "no -shm was created"
    );
}

/// A database rewritten in place, or renamed over, after the dataset loaded (a background
/// process of the pull request's workflow) is not what the run reads: the engine reads the
/// run's private copy the digest was computed over, which is removed with the dataset.
#[test]
fn a_database_changed_after_loading_is_not_read() {
    use sqlgate::engine::exec::{Executor, Limits};
    let work = tempfile::tempdir().unwrap();
    let dataset = crate::distill::dataset(work.path(), &["SELECT max(age) FROM emp"]);
    let original = work.path().join("database/company/company.sqlite");
    let read = dataset
        .database_path(&dataset.items[0])
        .unwrap()
        .to_path_buf();
    assert!(!read.starts_with(work.path()), "{}", read.display());
    let executor = Executor::new(Limits::of(&Default::default()));
    let oldest = |db: &Path| executor.run(db, "SELECT max(age) FROM emp").unwrap();
    let before = oldest(&read);
    let aged = Connection::open(&original).unwrap();
    aged.execute("UPDATE emp SET age = 99", []).unwrap();
    assert_eq!(
        oldest(&original),
        vec![vec![sqlgate::engine::value::Value::Int(99)]]
    );
    assert_eq!(oldest(&read), before);
    let elsewhere = work.path().join("other.sqlite");
    std::fs::copy(&original, &elsewhere).unwrap();
    std::fs::rename(&elsewhere, &original).unwrap();
    assert_eq!(oldest(&read), before);
    drop(dataset);
    assert!(!read.exists(), "the run's copy outlives the dataset");
}
