//! R-VES timing benchmark on the shared Spider dev data: the first 500 items whose database is
//! present, the gold used as both gold and prediction (so every item is timed and a fair R-VES is
//! 100), scored with `rves` in both orders (`abba`, the default, and `official`) at the official
//! repetition count (100, `iterate_num` of BIRD's `evaluation_ves.py`) and at sqlgate's default
//! (10), on one thread (the official script's default `num_cpus=1`).
//! Prints, per setting, the wall time end to end (loading,
//! execution, timing), the time per item, R-VES, and how noisy the per-item ratios were.
//!
//! Run with `cargo bench --bench rves`; set `SQLGATE_SPIDER` to point at another copy of the data,
//! `SQLGATE_RVES_ITEMS` to time another number of items.

mod common;

use common::spider_dir;
use sqlgate::input::config::{Config, RvesOrder, OFFICIAL_RVES_REPETITIONS};
use sqlgate::metrics::Timing;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Writes the first `count` gold lines whose database exists to `dir/gold.sql`.
fn gold_subset(spider: &Path, dir: &Path, count: usize) -> PathBuf {
    let gold = std::fs::read_to_string(spider.join("dev_gold.sql")).expect("dev_gold.sql");
    let present = |line: &&str| {
        let db = line.rsplit('\t').next().unwrap_or("").trim();
        spider
            .join("database")
            .join(db)
            .join(format!("{db}.sqlite"))
            .is_file()
    };
    let lines: Vec<&str> = gold.lines().filter(present).take(count).collect();
    let path = dir.join("gold.sql");
    std::fs::write(&path, lines.join("\n") + "\n").expect("writable temp dir");
    path
}

fn config(spider: &Path, gold: &Path, repetitions: usize, order: &str) -> Config {
    let yaml = format!(
        "dataset:\n  gold: {gold}\n  databases: {spider}/database\n  difficulty: none\n\
         metrics: [rves]\n\
         predictions:\n  - {{ name: gold, path: {gold} }}\n\
         rves: {{ repetitions: {repetitions}, order: {order} }}\nexecution: {{ threads: 1 }}\n",
        gold = gold.display(),
        spider = spider.display()
    );
    Config::parse(
        &yaml,
        &gold.with_file_name("bench.yml"),
        &sqlgate::engine::registry::Engines,
    )
    .expect("valid bench config")
}

fn bench(label: &str, config: &Config) {
    let started = Instant::now();
    let evaluation = sqlgate::score::evaluation::evaluate(config, &Default::default())
        .expect("the shared data loads");
    let seconds = started.elapsed().as_secs_f64();
    let scores: Vec<_> = evaluation.results.iter().map(|r| &r.scores[0]).collect();
    let values: Vec<f64> = scores.iter().filter_map(|s| s.value).collect();
    let mut spreads: Vec<f64> = scores
        .iter()
        .filter_map(|s| Some(s.details.as_ref()?.get::<Timing>()?.spread))
        .collect();
    spreads.sort_by(f64::total_cmp);
    let median = spreads.get(spreads.len() / 2).copied().unwrap_or(f64::NAN);
    println!(
        "{label}: {} items ({} timed) in {seconds:.2} s, {:.1} ms per item; R-VES {:.2}; median ratio spread {median:.3} (one thread)",
        scores.len(),
        spreads.len(),
        1000.0 * seconds / scores.len() as f64,
        100.0 * values.iter().sum::<f64>() / values.len() as f64,
    );
}

fn main() {
    let spider = spider_dir();
    let count = std::env::var("SQLGATE_RVES_ITEMS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(500);
    let dir = tempfile::tempdir().expect("a temp dir");
    let gold = gold_subset(&spider, dir.path(), count);
    let default = sqlgate::input::config::RvesConfig::default().repetitions;
    for (order, name) in [(RvesOrder::Abba, "abba"), (RvesOrder::Official, "official")] {
        for (label, repetitions) in [
            ("official repetitions", OFFICIAL_RVES_REPETITIONS),
            ("sqlgate default", default),
        ] {
            let config = config(&spider, &gold, repetitions, name);
            assert_eq!(config.rves.order, order);
            bench(&format!("order {name}, {label} ({repetitions})"), &config);
        }
    }
}
