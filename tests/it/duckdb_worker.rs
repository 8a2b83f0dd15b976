//! The DuckDB worker process (issue 44): a query the interrupt cannot stop is killed with its
//! worker at the deadline plus the grace, a worker that dies is reaped and replaced, and the
//! hidden subcommand stays out of `--help`.

use crate::common;
use sqlgate::engine::duckdb::DuckdbEngine;
use sqlgate::engine::exec::{ExecError, Executor, Limits};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn limits(timeout: Duration) -> Limits {
    Limits {
        timeout,
        max_rows: 10_000,
        max_bytes: 64 << 20,
    }
}

/// The process ids of this process's children that hold a file under `folder` open (the
/// worker of this test: other tests' workers hold their own folders' files).
fn workers_holding(folder: &Path) -> Vec<u32> {
    let me = std::process::id().to_string();
    let children = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let parent = stat
                .rsplit(')')
                .next()?
                .split_whitespace()
                .nth(1)?
                .to_string();
            (parent == me).then_some(pid)
        });
    children
        .filter(|pid| {
            let fds = std::fs::read_dir(format!("/proc/{pid}/fd"));
            fds.into_iter().flatten().flatten().any(|fd| {
                std::fs::read_link(fd.path()).is_ok_and(|target| target.starts_with(folder))
            })
        })
        .collect()
}

/// A query stuck in one scalar call is a timeout within the deadline plus the grace; its
/// worker is killed and reaped (no zombie, no orphan), and the next query gets a fresh one.
#[test]
fn a_stuck_worker_is_killed_reaped_and_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let file = crate::duckdb::loaded_shop(dir.path());
    let worker = Path::new(env!("CARGO_BIN_EXE_sqlgate"));
    let executor = Executor::on(
        Arc::new(DuckdbEngine::with_worker(worker)),
        limits(Duration::from_millis(300)),
    );
    assert!(executor.run(&file, "SELECT 1").is_ok());
    let first = workers_holding(dir.path());
    assert_eq!(first.len(), 1, "{first:?}");
    let started = Instant::now();
    let stuck = executor.run(
        &file,
        "SELECT levenshtein(repeat('a', 100000), repeat('b', 100000))",
    );
    let took = started.elapsed();
    assert_eq!(stuck, Err(ExecError::Timeout(300)));
    assert!(took < Duration::from_millis(1500), "took {took:?}");
    assert!(
        !Path::new(&format!("/proc/{}", first[0])).exists(),
        "the killed worker was not reaped"
    );
    assert_eq!(
        format!("{:?}", executor.run(&file, "SELECT 2")),
        "Ok([[Int(2)]])"
    );
    let second = workers_holding(dir.path());
    assert!(second.len() == 1 && second != first, "{first:?} {second:?}");
}

/// A worker killed from outside between two queries is replaced without an error; one killed
/// during a query is a clear error for that query only (never a hang), and the next runs.
#[test]
fn a_worker_killed_from_outside_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let file = crate::duckdb::loaded_shop(dir.path());
    let executor = Executor::on(
        Arc::new(DuckdbEngine::new()),
        limits(Duration::from_secs(20)),
    );
    assert!(executor.run(&file, "SELECT 1").is_ok());
    let kill = |pids: Vec<u32>| {
        for pid in pids {
            std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status()
                .unwrap();
        }
    };
    kill(workers_holding(dir.path()));
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        format!("{:?}", executor.run(&file, "SELECT 3")),
        "Ok([[Int(3)]])"
    );
    let folder = dir.path().to_path_buf();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        kill(workers_holding(&folder));
    });
    let started = Instant::now();
    let killed = executor.run(
        &file,
        "SELECT levenshtein(repeat('a', 100000), repeat('b', 100000))",
    );
    killer.join().unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        matches!(&killed, Err(ExecError::TooLarge(m) | ExecError::Fault(m)) if m.contains("DuckDB worker")),
        "{killed:?}"
    );
    assert_eq!(
        format!("{:?}", executor.run(&file, "SELECT 4")),
        "Ok([[Int(4)]])"
    );
}

/// A result larger than the worker's share of the budget (128 MiB beyond its baseline by
/// default) reaches the parent whole: the worker streams it row by row and keeps none.
#[test]
fn a_result_larger_than_the_workers_share_streams_through() {
    let dir = tempfile::tempdir().unwrap();
    let file = crate::duckdb::loaded_shop(dir.path());
    let executor = Executor::on(
        Arc::new(DuckdbEngine::new()),
        Limits {
            timeout: Duration::from_secs(60),
            max_rows: 1_000_000,
            max_bytes: 512 << 20,
        },
    );
    let rows = executor
        .run(
            &file,
            "SELECT repeat('x', 1000) || i FROM range(200000) r(i)",
        )
        .unwrap();
    assert_eq!(rows.len(), 200_000);
}

/// The worker subcommand is sqlgate's, but not one a user is shown.
#[test]
fn the_worker_subcommand_is_hidden() {
    let help = common::text(&common::sqlgate(&["--help"]));
    assert!(
        help.contains("eval") && !help.contains("duckdb-worker"),
        "{help}"
    );
}
