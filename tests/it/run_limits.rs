//! The run-wide limits on real Spider data: the memory budget (`execution.max_memory`) stops a
//! result that would push the run over it and keeps the process's peak under the budget whatever
//! the per-query caps allow; EX under `spider-ts` stops reading a prediction longer than the gold;
//! a timed-out query gives its worker back within a small margin of its limit, and the run says
//! how much time went to timeouts.
//!
//! Everything runs in a process of its own (one test function, which runs again alone in a
//! re-run of the test binary, so no other test shares the process-wide budget or the SQLite
//! allocator it installs), and peak memory is read from `/proc/self/status`.

use crate::common;

use common::shared_spider;
use sqlgate::engine::exec::{ExecError, Executor, Limits};
use sqlgate::input::config::Config;
use sqlgate::metrics::Outcome;
use sqlgate::score::evaluation::{evaluate, Evaluation};
use std::path::Path;
use std::time::{Duration, Instant};

/// A cross join of `city` (4,079 rows) with itself: 16.6 million rows of ten columns, some
/// gigabytes once read.
const HUGE: &str = "SELECT * FROM city AS a, city AS b";
const GOLD: &str = "SELECT count(*) FROM city";

/// Peak resident memory of this process so far, in MiB.
fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .unwrap();
    kib / 1024.0
}

/// A run over world_1 with `predictions` (gold: `GOLD` for each) and the given sections.
fn run(work: &Path, predictions: &[&str], compare: &str, execution: &str) -> Evaluation {
    let gold: String = predictions
        .iter()
        .map(|_| format!("{GOLD}\tworld_1\n"))
        .collect();
    std::fs::write(work.join("gold.sql"), gold).unwrap();
    let lines: String = predictions.iter().map(|p| format!("{p}\n")).collect();
    std::fs::write(work.join("system.txt"), lines).unwrap();
    let yaml = format!(
        "dataset: {{ gold: gold.sql, databases: database, difficulty: none }}\n\
         predictions: [{{ name: system, path: system.txt }}]\n\
         metrics: [ex]\n\
         compare: {compare}\n\
         execution: {execution}\n"
    );
    let config = Config::parse(
        &yaml,
        &work.join("sqlgate.yml"),
        &sqlgate::engine::registry::Engines,
    )
    .expect("a valid config");
    evaluate(&config, &Default::default()).expect("the run loads")
}

fn world_1(work: &Path) {
    let databases = work.join("database/world_1");
    std::fs::create_dir_all(&databases).unwrap();
    std::fs::copy(
        shared_spider().join("database/world_1/world_1.sqlite"),
        databases.join("world_1.sqlite"),
    )
    .unwrap();
}

#[test]
fn the_run_stays_under_its_memory_budget_and_timeouts_are_bounded_and_reported() {
    if !common::in_own_process(
        "run_limits::the_run_stays_under_its_memory_budget_and_timeouts_are_bounded_and_reported",
        &[],
    ) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    world_1(work.path());
    the_budget_stops_results_that_would_exceed_it(work.path());
    ex_stops_reading_a_prediction_longer_than_the_gold(work.path());
    timed_out_queries_give_their_worker_back_promptly(work.path());
    a_run_says_how_much_time_went_to_timeouts(work.path());
}

/// Under `bird` (sets of rows: no row bound) with per-query caps far above the budget, four
/// huge results on two workers all stop at the 64 MiB budget, and the peak stays near it.
fn the_budget_stops_results_that_would_exceed_it(work: &Path) {
    let before = peak_rss_mib();
    let evaluation = run(
        work,
        &[HUGE; 4],
        "{ profile: bird }",
        "{ threads: 2, max_memory: 67108864, max_result_bytes: 4294967296, max_rows: 100000000 }",
    );
    for result in &evaluation.results {
        let score = &result.scores[0];
        assert_eq!(score.outcome, Outcome::PredError, "{score:?}");
        let error = score.error.as_deref().unwrap_or_default();
        common::assert_contains(
            error,
            &["result too large", "`execution.max_memory`, 67108864 bytes"],
        );
    }
    let growth = peak_rss_mib() - before;
    assert!(
        growth < 64.0 + 48.0,
        "peak RSS grew by {growth:.0} MiB under a 64 MiB budget"
    );
}

/// A prediction with more rows than the gold cannot match under `spider-ts`: a mismatch read no
/// further than one row past the gold's, however large the result would be.
fn ex_stops_reading_a_prediction_longer_than_the_gold(work: &Path) {
    let evaluation = run(
        work,
        &[HUGE, GOLD],
        "{ profile: spider-ts }",
        "{ threads: 2, max_memory: 67108864 }",
    );
    let outcomes: Vec<Outcome> = evaluation
        .results
        .iter()
        .map(|r| r.scores[0].outcome)
        .collect();
    assert_eq!(outcomes, [Outcome::Mismatch, Outcome::Match]);
}

/// Shapes of runaway query (a recursive CTE, nested-loop joins, sorting, grouping and DISTINCT
/// over a cross join) each give the worker back well within a second of a 300 ms limit, and the
/// executor logs each with the time it took.
fn timed_out_queries_give_their_worker_back_promptly(work: &Path) {
    // The default budget: under the 64 MiB one of the runs above, SQLite's sorter for GROUP BY
    // over the cross join may run out of memory before the deadline.
    let budget = &sqlgate::util::memory::PROCESS;
    budget.set_limit(sqlgate::util::memory::DEFAULT_MAX_MEMORY);
    let timeout = Duration::from_millis(300);
    let executor = Executor::new(Limits {
        timeout,
        max_rows: 100_000_000,
        max_bytes: 4 << 30,
    });
    let db = work.join("database/world_1/world_1.sqlite");
    let runaways = [
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
        "SELECT count(*) FROM city AS a, city AS b, city AS c",
        "SELECT a.Name FROM city AS a, city AS b ORDER BY a.Name || b.Name LIMIT 1",
        "SELECT a.Name, count(*) FROM city AS a, city AS b GROUP BY a.Name || b.Name LIMIT 1",
        "SELECT count(DISTINCT a.Name || b.Name) FROM city AS a, city AS b",
    ];
    for sql in runaways {
        let started = Instant::now();
        let result = executor.run(&db, sql);
        let took = started.elapsed();
        assert!(
            matches!(result, Err(ExecError::Timeout(300))),
            "{sql}: {result:?}"
        );
        assert!(
            took < timeout + Duration::from_millis(700),
            "{sql} held its worker {took:?} under a {timeout:?} limit"
        );
    }
    let logged = executor.timeouts();
    assert_eq!(logged.queries, runaways.len());
    assert!(logged.seconds >= 0.3 * runaways.len() as f64, "{logged:?}");
}

/// A run whose prediction times out records it, and the summaries say what share it took.
fn a_run_says_how_much_time_went_to_timeouts(work: &Path) {
    let evaluation = run(
        work,
        &["SELECT count(*) FROM city AS a, city AS b, city AS c", GOLD],
        "{ profile: spider-ts }",
        "{ threads: 1, timeout_ms: 300 }",
    );
    let timing = evaluation.timing;
    assert_eq!(timing.threads, 1);
    assert_eq!(timing.timeouts.queries, 1);
    assert!(timing.timeouts.seconds >= 0.3 && timing.timeouts.seconds <= timing.wall_seconds);
    let note = sqlgate::report::summary::timeout_note(&evaluation).expect("a timeout note");
    assert!(
        note.starts_with("1 query hit the time limit and took 0."),
        "{note}"
    );
    let summary = sqlgate::report::summary::Summary::of(&evaluation);
    let document = sqlgate::report::summary::summary_json(&evaluation, &summary, None);
    assert_eq!(document["timeouts"]["queries"], 1);
    assert_eq!(document["timeouts"]["threads"], 1);
}
