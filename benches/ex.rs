//! Scoring benchmark on the shared Spider dev data: the four published systems plus the gold
//! itself (5 x 1034 items), timed end to end (loading, hardness, parsing, execution,
//! comparison) for each metric on its own, and for ESM and ESM+ together.
//!
//! Run with `cargo bench --bench ex`; it prints the wall time of each repetition and the median.
//! Set `SQLGATE_SPIDER` to point at another copy of the data.

use sqlgate::input::config::Config;
use std::path::PathBuf;
use std::time::Instant;

const REPETITIONS: usize = 7;

fn spider_dir() -> PathBuf {
    std::env::var_os("SQLGATE_SPIDER")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/spider"))
}

fn config(spider: &std::path::Path, metric: &str) -> Config {
    let yaml = format!(
        "dataset:\n  gold: {spider}/dev_gold.sql\n  tables: {spider}/tables.json\n  databases: {spider}/database\n  skip_missing_databases: true\n\
         metrics: [{metric}]\n\
         predictions:\n  - {{ path: '{spider}/predictions/*.txt' }}\n  - {{ name: gold, path: {spider}/dev_gold.sql }}\n",
        spider = spider.display()
    );
    Config::parse(&yaml, &spider.join("bench.yml")).expect("valid bench config")
}

fn bench(metric: &str, config: &Config) {
    let mut seconds = Vec::new();
    let mut scored = 0;
    for _ in 0..REPETITIONS {
        let started = Instant::now();
        let evaluation =
            sqlgate::score::evaluation::evaluate(config).expect("the shared data loads");
        seconds.push(started.elapsed().as_secs_f64());
        scored = evaluation
            .results
            .iter()
            .filter(|r| r.scores[0].outcome.is_scored())
            .count();
    }
    seconds.sort_by(f64::total_cmp);
    println!(
        "{metric}: {scored} (system, item) pairs scored; median {:.3} s, best {:.3} s over {REPETITIONS} runs ({} threads)",
        seconds[REPETITIONS / 2],
        seconds[0],
        rayon::current_num_threads()
    );
}

fn main() {
    let spider = spider_dir();
    for metric in ["ex", "esm", "esm_plus", "esm, esm_plus"] {
        bench(metric, &config(&spider, metric));
    }
}
