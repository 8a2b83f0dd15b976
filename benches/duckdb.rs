//! EX on DuckDB against EX on SQLite, the same items: the shared Spider dev data is loaded into
//! DuckDB files with `sqlgate load` (into a temporary folder), the items whose gold runs on
//! DuckDB are kept (Spider's golds are SQLite SQL: 343 of the 1034 fail on DuckDB, 62 have no
//! database), and the four published systems are scored with EX on those items on each engine,
//! on 1 and on 2 worker threads, the repetitions interleaved. It prints, per engine and thread
//! count, the median wall and CPU time and the queries per second, then DuckDB's time over
//! SQLite's.
//!
//! Run with `cargo bench --bench duckdb`. Set `SQLGATE_SPIDER` to point at another copy of the data
//! and `SQLGATE_REPETITIONS` to repeat other than seven times.

mod common;

use common::{cpu_seconds, median, spider_dir};
use sqlgate::engine::exec::{Executor, Limits};
use sqlgate::input::config::Config;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// Repetitions of each run unless `SQLGATE_REPETITIONS` says otherwise.
const REPETITIONS: usize = 7;
const SYSTEMS: [&str; 4] = ["C3", "Claude", "GPT4Turbo", "RESDSQL"];

/// Loads the SQLite databases into `ddb/` below `work`.
fn load_duckdb(spider: &Path, work: &Path) {
    let from = spider.join("database");
    let workspace = sqlgate::util::workspace::Workspace::detect(&from).expect("workspace");
    let folder = work.join("ddb");
    std::fs::create_dir_all(&folder).unwrap();
    sqlgate::engine::load::load(
        sqlgate::engine::load::types::Server::Duckdb,
        folder.to_str().unwrap(),
        sqlgate::engine::load::Layout::PerDbId,
        &from,
        &workspace,
    )
    .expect("Spider dev loads into DuckDB");
}

/// The gold file and the systems' prediction files cut to the items whose database exists and
/// whose gold runs on DuckDB, written below `work`; returns how many items were kept.
fn common_items(spider: &Path, work: &Path) -> usize {
    let gold = std::fs::read_to_string(spider.join("dev_gold.sql")).unwrap();
    let executor = Executor::on(
        Arc::new(sqlgate::engine::duckdb::DuckdbEngine::new()),
        Limits {
            timeout: std::time::Duration::from_secs(30),
            max_rows: 1_000_000,
            max_bytes: 256 << 20,
        },
    );
    let kept: Vec<usize> = (gold.lines().enumerate())
        .filter(|(_, line)| {
            let (sql, db) = line.rsplit_once('\t').unwrap();
            let file = work.join(format!("ddb/{db}/{db}.duckdb"));
            file.exists() && executor.run(&file, sql).is_ok()
        })
        .map(|(index, _)| index)
        .collect();
    let cut = |text: &str| -> String {
        let lines: Vec<&str> = text.lines().collect();
        kept.iter().map(|&i| format!("{}\n", lines[i])).collect()
    };
    std::fs::write(work.join("gold.sql"), cut(&gold)).unwrap();
    for system in SYSTEMS {
        let predictions =
            std::fs::read_to_string(spider.join(format!("predictions/{system}.txt"))).unwrap();
        std::fs::write(work.join(format!("{system}.txt")), cut(&predictions)).unwrap();
    }
    kept.len()
}

fn config(spider: &Path, work: &Path, engine: &str, threads: usize) -> Config {
    let databases = match engine {
        "duckdb" => work.join("ddb"),
        _ => spider.join("database"),
    };
    let yaml = format!(
        "dataset:\n  gold: {work}/gold.sql\n  databases: {databases}\n  difficulty: none\n  engine: {{ kind: {engine} }}\n\
         metrics: [ex]\nexecution: {{ threads: {threads} }}\n\
         predictions:\n  - {{ path: '{work}/*.txt' }}\n",
        work = work.display(),
        databases = databases.display(),
    );
    Config::parse(
        &yaml,
        &work.join("bench.yml"),
        &sqlgate::engine::registry::Engines,
    )
    .expect("valid bench config")
}

/// One timed run: wall and CPU seconds, and the queries it ran (a gold per item, a prediction
/// per scored pair).
fn run_once(config: &Config) -> (f64, f64, usize) {
    let cpu_before = cpu_seconds();
    let started = Instant::now();
    let evaluation =
        sqlgate::score::evaluation::evaluate(config, &Default::default()).expect("the data loads");
    let wall = started.elapsed().as_secs_f64();
    let scored = (evaluation.results.iter())
        .filter(|r| r.scores[0].outcome.is_scored())
        .count();
    (
        wall,
        cpu_seconds() - cpu_before,
        scored + scored / evaluation.systems.len().max(1),
    )
}

fn main() {
    std::env::set_var("SQLGATE_WORKSPACE", "/");
    // The DuckDB engine's worker process is the built `sqlgate`, not this bench's executable.
    sqlgate::engine::duckdb::worker::use_program(std::path::Path::new(env!(
        "CARGO_BIN_EXE_sqlgate"
    )));
    let repetitions = (std::env::var("SQLGATE_REPETITIONS").ok())
        .and_then(|text| text.parse().ok())
        .unwrap_or(REPETITIONS);
    let spider = spider_dir();
    let work = tempfile::tempdir().expect("a temporary folder");
    let started = Instant::now();
    load_duckdb(&spider, work.path());
    println!(
        "sqlgate load of Spider dev into DuckDB: {:.2} s",
        started.elapsed().as_secs_f64()
    );
    let items = common_items(&spider, work.path());
    println!(
        "items whose gold runs on DuckDB: {items} (x {} systems)",
        SYSTEMS.len()
    );
    let runs: Vec<(&str, usize, Config)> =
        [("sqlite", 1), ("duckdb", 1), ("sqlite", 2), ("duckdb", 2)]
            .into_iter()
            .map(|(engine, threads)| {
                (
                    engine,
                    threads,
                    config(&spider, work.path(), engine, threads),
                )
            })
            .collect();
    let mut samples = vec![(Vec::new(), Vec::new(), 0); runs.len()];
    for _ in 0..repetitions {
        for ((_, _, config), (walls, cpus, queries)) in runs.iter().zip(samples.iter_mut()) {
            let (wall, cpu, ran) = run_once(config);
            walls.push(wall);
            cpus.push(cpu);
            *queries = ran;
        }
    }
    let mut medians = Vec::new();
    for ((engine, threads, _), (walls, cpus, queries)) in runs.iter().zip(samples) {
        let (wall, cpu) = (median(walls), median(cpus));
        println!(
            "EX on {engine:<6} {threads} thread(s): wall {wall:.3} s, CPU {cpu:.3} s, {:.0} queries/s",
            queries as f64 / wall
        );
        medians.push(wall);
    }
    println!(
        "DuckDB / SQLite wall time: {:.1}x on 1 thread, {:.1}x on 2 threads",
        medians[1] / medians[0],
        medians[3] / medians[2]
    );
}
