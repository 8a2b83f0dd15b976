//! Neighbor-query generation on the shared Spider dev data (1034 gold queries): neighbors per
//! query (mean / min / max), total, generation time (sequential, median of several runs), and
//! the fraction of neighbors that execute on the databases present (the gold's own database,
//! through the safe executor).
//!
//! Run with `cargo bench --bench neighbors`. Set `SQLGATE_SPIDER` to point at another copy of the
//! data.

mod common;

use common::spider_dir;
use rayon::prelude::*;
use sqlgate::engine::exec::{ExecError, Executor, Limits};
use sqlgate::sql::schema::{Schema, TablesJson};
use sqlgate::suites::neighbors::neighbors;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const REPETITIONS: usize = 5;
const SEED: u64 = 0;

/// (gold SQL, db_id, schema) for every line of dev_gold.sql.
fn gold_items(spider: &std::path::Path) -> Vec<(String, String, Schema)> {
    let tables = TablesJson::load(&spider.join("tables.json")).expect("tables.json loads");
    let text = std::fs::read_to_string(spider.join("dev_gold.sql")).expect("dev_gold.sql reads");
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let (sql, db_id) = line
                .rsplit_once('\t')
                .expect("gold lines are SQL<TAB>db_id");
            let entry = tables.get(db_id).expect("gold database in tables.json");
            (
                sql.to_string(),
                db_id.to_string(),
                Schema::from_tables_json(entry),
            )
        })
        .collect()
}

fn generate_all(items: &[(String, String, Schema)]) -> Vec<Vec<String>> {
    items
        .iter()
        .map(|(sql, _, schema)| neighbors(sql, schema, SEED))
        .collect()
}

fn main() {
    let spider = spider_dir();
    let items = gold_items(&spider);
    let mut seconds = Vec::new();
    let mut generated = Vec::new();
    for _ in 0..REPETITIONS {
        let started = Instant::now();
        generated = generate_all(&items);
        seconds.push(started.elapsed().as_secs_f64());
    }
    seconds.sort_by(f64::total_cmp);
    let counts: Vec<usize> = generated.iter().map(Vec::len).collect();
    let total: usize = counts.iter().sum();
    println!(
        "{} gold queries: {total} neighbors, {:.1} per query (min {}, max {}); generation median {:.3} s, best {:.3} s over {REPETITIONS} runs (one thread)",
        items.len(),
        total as f64 / items.len() as f64,
        counts.iter().min().unwrap_or(&0),
        counts.iter().max().unwrap_or(&0),
        seconds[REPETITIONS / 2],
        seconds[0],
    );

    let executor = Executor::new(Limits {
        timeout: Duration::from_secs(5),
        max_rows: 1_000_000,
        max_bytes: 256 << 20,
    });
    let jobs: Vec<(PathBuf, &String)> = items
        .iter()
        .zip(&generated)
        .filter_map(|((_, db_id, _), found)| {
            let db = spider
                .join("database")
                .join(db_id)
                .join(format!("{db_id}.sqlite"));
            db.is_file().then_some((db, found))
        })
        .flat_map(|(db, found)| found.iter().map(move |n| (db.clone(), n)))
        .collect();
    let started = Instant::now();
    let outcomes: Vec<Result<(), ExecError>> = jobs
        .par_iter()
        .map(|(db, sql)| executor.run(db, sql).map(|_| ()))
        .collect();
    let executed = outcomes.iter().filter(|o| o.is_ok()).count();
    println!(
        "on the present databases: {executed} of {} neighbors execute ({:.1} %), checked in {:.1} s ({} threads)",
        jobs.len(),
        100.0 * executed as f64 / jobs.len().max(1) as f64,
        started.elapsed().as_secs_f64(),
        rayon::current_num_threads()
    );
    let mut errors: BTreeMap<String, usize> = BTreeMap::new();
    for error in outcomes.iter().filter_map(|o| o.as_ref().err()) {
        let message = error.to_string();
        let kind = message.split(':').next().unwrap_or(&message).to_string();
        *errors.entry(kind).or_default() += 1;
    }
    let mut errors: Vec<(String, usize)> = errors.into_iter().collect();
    errors.sort_by_key(|(_, count)| std::cmp::Reverse(*count));
    for (kind, count) in errors.iter().take(8) {
        println!("  {count:>6}  {kind}");
    }
}
