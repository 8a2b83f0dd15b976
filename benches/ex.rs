//! EX benchmark: the four published systems plus the gold itself on the shared Spider dev data
//! (5 x 972 scored items), timed end to end (loading, hardness, execution, comparison).
//!
//! Run with `cargo bench --bench ex`; it prints the wall time of each repetition and the median.
//! Set `SQLGATE_SPIDER` to point at another copy of the data.

use sqlgate::config::Config;
use std::path::PathBuf;
use std::time::Instant;

const REPETITIONS: usize = 7;

fn spider_dir() -> PathBuf {
    std::env::var_os("SQLGATE_SPIDER")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/spider"))
}

fn main() {
    let spider = spider_dir();
    let yaml = format!(
        "dataset:\n  gold: {spider}/dev_gold.sql\n  tables: {spider}/tables.json\n  databases: {spider}/database\n  skip_missing_databases: true\n\
         predictions:\n  - {{ path: '{spider}/predictions/*.txt' }}\n  - {{ name: gold, path: {spider}/dev_gold.sql }}\n",
        spider = spider.display()
    );
    let config = Config::parse(&yaml, &spider.join("bench.yml")).expect("valid bench config");
    let mut seconds = Vec::new();
    for repetition in 1..=REPETITIONS {
        let started = Instant::now();
        let evaluation = sqlgate::run::evaluate(&config).expect("the shared data loads");
        let elapsed = started.elapsed().as_secs_f64();
        let scored = evaluation
            .results
            .iter()
            .filter(|r| r.scores[0].outcome.is_scored())
            .count();
        println!(
            "run {repetition}: {scored} (system, item) pairs scored with EX in {elapsed:.3} s"
        );
        seconds.push(elapsed);
    }
    seconds.sort_by(f64::total_cmp);
    println!(
        "ex: median {:.3} s, best {:.3} s over {REPETITIONS} runs ({} threads)",
        seconds[REPETITIONS / 2],
        seconds[0],
        rayon::current_num_threads()
    );
}
