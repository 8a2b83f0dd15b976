//! EX of BIRD mini-dev's GPT-4-turbo PostgreSQL predictions (500 items) on a local PostgreSQL 15,
//! sqlgate against BIRD's official loop (`run_sqls_parallel` of evaluation_ex.py with the
//! official `num_cpus=16` and `meta_time_out=30`, run by tests/bird_official/ from the upstream
//! folder `SQLGATE_BIRD_OFFICIAL` names) on the same server, the
//! same databases (generated from `dev_tables.json`, tests/it/common/bird_minidev.rs) and the same
//! read-only role. Also 4 systems (the same predictions under four names; the official loop runs
//! once per system). Prints wall times, medians of 3 for sqlgate, and the ratios.
//!
//! Run with `SQLGATE_BIRD_OFFICIAL=<mini_dev evaluation/ at bee73fe> cargo bench --bench
//! bird_server` (needs `.ci/install-servers` and a CPython 3.8 or later, see
//! tests/bird_official/run); without the variable only sqlgate is timed.

#[allow(dead_code)]
#[path = "../tests/it/common/bird_minidev.rs"]
mod bird_minidev;
#[allow(dead_code)]
#[path = "../tests/it/common/servers.rs"]
mod servers;

use sqlgate::input::config::Config;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// The variable the bench config names for the server's URL.
const URL_VARIABLE: &str = "SQLGATE_BENCH_PG_URL";

fn config(dir: &Path, systems: usize, threads: usize) -> Config {
    let data = bird_minidev::folder();
    let predictions = data.join("predictions/predict_mini_dev_gpt-4-turbo_postgresql.json");
    let systems: String = (1..=systems)
        .map(|i| {
            format!(
                "  - {{ name: gpt-4-turbo-{i}, path: {}, format: bird-json }}\n",
                predictions.display()
            )
        })
        .collect();
    let yaml = format!(
        "dataset: {{ kind: bird, gold: {gold}, tables: {tables}, difficulty: 'field:difficulty', \
         engine: {{ kind: postgresql, url_env: {URL_VARIABLE}, layout: shared }} }}\n\
         predictions:\n{systems}metrics: [ex]\ncompare: {{ profile: bird }}\n\
         execution: {{ timeout_ms: 30000, threads: {threads} }}\n",
        gold = data.join("mini_dev_postgresql.json").display(),
        tables = data.join("dev_tables.json").display(),
    );
    Config::parse(
        &yaml,
        &dir.join("bench.yml"),
        &sqlgate::engine::registry::Engines,
    )
    .expect("valid bench config")
}

/// Median wall time of `runs` sqlgate evaluations, with the EX sum of the first system.
fn time_sqlgate(config: &Config, runs: usize) -> (f64, f64) {
    let mut seconds = Vec::with_capacity(runs);
    let mut correct = 0.0;
    for _ in 0..runs {
        let started = Instant::now();
        let evaluation = sqlgate::score::evaluation::evaluate(config, &Default::default())
            .expect("the evaluation runs");
        seconds.push(started.elapsed().as_secs_f64());
        correct = evaluation
            .results
            .iter()
            .filter(|r| r.system == 0)
            .filter_map(|r| r.scores[0].value)
            .sum();
    }
    seconds.sort_by(f64::total_cmp);
    (seconds[runs / 2], correct)
}

/// Wall time of one official EX loop (Python start included) and the seconds it reports for
/// the loop alone.
fn time_official(url: &str, dir: &Path) -> (f64, f64) {
    let data = bird_minidev::folder();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bird_official/run");
    let started = Instant::now();
    let output = Command::new("bash")
        .arg(script)
        .args([
            "--dialect",
            "PostgreSQL",
            "--metrics",
            "ex",
            "--num-cpus",
            "16",
        ])
        .arg("--predicted")
        .arg(data.join("predictions/predict_mini_dev_gpt-4-turbo_postgresql.json"))
        .arg("--gold")
        .arg(data.join("mini_dev_postgresql_gold.sql"))
        .arg("--output")
        .arg(dir.join("official.jsonl"))
        .env("BIRD_OFFICIAL_URL", url)
        .output()
        .expect("the official loop runs");
    let wall = started.elapsed().as_secs_f64();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("the official loop prints its timing");
    (
        wall,
        report["seconds"]["ex"]
            .as_f64()
            .expect("seconds of the EX loop"),
    )
}

fn main() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let databases = dir.path().join("databases");
    bird_minidev::generate(&databases);
    let server = servers::postgres();
    server.admin_sql("postgres", "CREATE DATABASE bird");
    let workspace = sqlgate::util::workspace::Workspace::detect(dir.path()).expect("workspace");
    sqlgate::engine::load::load(
        sqlgate::engine::load::types::Server::Postgres,
        &server.admin_url("bird"),
        sqlgate::engine::load::Layout::Shared,
        &databases,
        &workspace,
    )
    .expect("the databases load");
    let url = server.url(servers::READER, &server.reader_password, "bird");
    std::env::set_var(URL_VARIABLE, &url);

    // Warm both sides once (server caches, the official virtualenv).
    time_sqlgate(&config(dir.path(), 1, 2), 1);
    let upstream = std::env::var("SQLGATE_BIRD_OFFICIAL").is_ok_and(|v| !v.is_empty());
    println!("BIRD mini-dev, GPT-4-turbo PostgreSQL predictions, EX on a local PostgreSQL 15 (500 items)");
    // (1 system, 4 systems) wall seconds of the official loop.
    let official = upstream.then(|| {
        time_official(&url, dir.path());
        let (wall, in_loop) = time_official(&url, dir.path());
        let four: f64 = (0..4).map(|_| time_official(&url, dir.path()).0).sum();
        println!("  official loop (num_cpus=16): 1 system {wall:.2} s wall ({in_loop:.2} s in run_sqls_parallel), 4 systems {four:.2} s (4 runs)");
        (wall, four)
    });
    if official.is_none() {
        println!("  official loop not timed: SQLGATE_BIRD_OFFICIAL is not set");
    }
    for threads in [2, 8] {
        let (one, correct) = time_sqlgate(&config(dir.path(), 1, threads), 3);
        let (four, _) = time_sqlgate(&config(dir.path(), 4, threads), 3);
        let ratios = official.map_or(("-".into(), "-".into()), |(wall, wall_four)| {
            (
                format!("{:.1}x", wall / one),
                format!("{:.1}x", wall_four / four),
            )
        });
        println!(
            "  sqlgate, execution.threads {threads} (medians of 3): 1 system {one:.2} s ({}), 4 systems {four:.2} s ({}); EX {correct} / 500",
            ratios.0, ratios.1
        );
    }
}
