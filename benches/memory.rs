//! Memory benchmark: peak resident memory of a leaderboard-sized run on the shared Spider dev
//! data. Fifty systems (the four published prediction files, each copied under several names)
//! are scored with EX and ESM on all 1034 items, then the same on a workload ten times larger
//! (the gold and every prediction file repeated ten times: 50 x 10,340 items), and the JSONL and
//! summary are written as `sqlgate eval` writes them.
//!
//! Run with `cargo bench --bench memory -- 1x` and `cargo bench --bench memory -- 10x`, one
//! workload per process, since peak memory (`VmHWM` of /proc/self/status) never goes down.
//! Other arguments change the workload: `systems=29` (how many systems), `metrics=ex,esm,esm_plus`,
//! `threads=16`, `max_memory=BYTES` (the run's budget, `execution.max_memory`).
//! Set `SQLGATE_SPIDER` to point at another copy of the data.

mod common;

use common::{peak_rss_mib, spider_dir};
use sqlgate::input::config::Config;
use sqlgate::report::summary::{self, Summary};
use std::path::Path;
use std::time::Instant;

/// The workload's shape, from the command line.
struct Workload {
    times: usize,
    systems: usize,
    metrics: String,
    execution: String,
}

impl Workload {
    fn from_args() -> Workload {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let value = |key: &str| {
            args.iter()
                .find_map(|a| a.strip_prefix(key)?.strip_prefix('=').map(str::to_string))
        };
        let mut execution = Vec::new();
        for key in ["threads", "max_memory"] {
            if let Some(v) = value(key) {
                execution.push(format!("{key}: {v}"));
            }
        }
        Workload {
            times: args
                .iter()
                .find(|a| a.ends_with('x'))
                .and_then(|a| a.trim_end_matches('x').parse().ok())
                .unwrap_or(1),
            systems: value("systems").and_then(|v| v.parse().ok()).unwrap_or(50),
            metrics: value("metrics").unwrap_or_else(|| "ex,esm".into()),
            execution: format!("{{ {} }}", execution.join(", ")),
        }
    }
}

/// Writes `text` repeated `times` times to `path`.
fn write_repeated(path: &Path, text: &str, times: usize) {
    std::fs::write(path, text.repeat(times)).expect("temporary file is writable");
}

/// A config over the workload's prediction files and the gold, each repeated `times` times.
fn workload(spider: &Path, work: &Path, shape: &Workload) -> Config {
    let times = shape.times;
    let gold = std::fs::read_to_string(spider.join("dev_gold.sql")).expect("shared gold");
    write_repeated(&work.join("gold.sql"), &gold, times);
    let sources: Vec<String> = ["C3", "Claude", "GPT4Turbo", "RESDSQL"]
        .iter()
        .map(|s| {
            std::fs::read_to_string(spider.join(format!("predictions/{s}.txt")))
                .expect("shared predictions")
        })
        .collect();
    std::fs::create_dir_all(work.join("systems")).expect("temporary folder");
    for system in 0..shape.systems {
        let path = work.join(format!("systems/system{system:02}.txt"));
        write_repeated(&path, &sources[system % sources.len()], times);
    }
    let yaml = format!(
        "dataset:\n  gold: gold.sql\n  tables: {spider}/tables.json\n  databases: {spider}/database\n  skip_missing_databases: true\n\
         metrics: [{metrics}]\n\
         execution: {execution}\n\
         predictions:\n  - {{ path: 'systems/*.txt' }}\n",
        spider = spider.display(),
        metrics = shape.metrics,
        execution = shape.execution,
    );
    Config::parse(
        &yaml,
        &work.join("bench.yml"),
        &sqlgate::engine::registry::Engines,
    )
    .expect("valid bench config")
}

fn main() {
    let shape = Workload::from_args();
    let work = tempfile::tempdir().expect("temporary folder");
    let config = workload(&spider_dir(), work.path(), &shape);
    let before = peak_rss_mib();
    let started = Instant::now();
    let evaluation = sqlgate::score::evaluation::evaluate(&config, &Default::default())
        .expect("the shared data loads");
    let summary = Summary::of(&evaluation);
    let jsonl_path = work.path().join("items.jsonl");
    sqlgate::util::fs::write_file_atomically(&jsonl_path, |out| {
        sqlgate::report::jsonl::write_jsonl(&evaluation, out)
    })
    .expect("JSONL is writable");
    let jsonl_bytes = std::fs::metadata(&jsonl_path).map_or(0, |m| m.len());
    let document = summary::summary_json(&evaluation, &summary, None);
    println!(
        "{} systems x {} items, metrics {}, execution {}: {} results, JSONL {:.1} MiB, summary {} bytes; \
         {:.1} s on {} threads ({} queries timed out, {:.1} s of worker time); \
         peak RSS {:.0} MiB (before loading: {before:.0} MiB; budget {} MiB)",
        shape.systems,
        evaluation.dataset.items.len(),
        shape.metrics,
        shape.execution,
        evaluation.results.len(),
        jsonl_bytes as f64 / (1024.0 * 1024.0),
        document.to_string().len(),
        started.elapsed().as_secs_f64(),
        evaluation.timing.threads,
        evaluation.timing.timeouts.queries,
        evaluation.timing.timeouts.seconds,
        peak_rss_mib(),
        config.execution.max_memory >> 20,
    );
}
