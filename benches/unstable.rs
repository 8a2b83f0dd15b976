//! What the stability check costs on the shared Spider dev data (issues 44, 45): for the gold and
//! each of the four published systems, every query is run as scoring runs it, then checked for an
//! undetermined order ([`sqlgate::score::stability`]) the way a run checks it: at its LIMIT /
//! OFFSET cuts, in an order-dependent call, and, where `spider-ts` compares rows in order (the
//! item's gold text says `order by`), in its row order. Prints, per source, the queries run,
//! those with a cut (the only ones that pay for cut probes), those unstable at a cut, those with
//! an order-dependent call, those compared in order (the only ones that pay for an order probe),
//! those unstable by any rule, the median time of the plain runs and of the checks over
//! `REPETITIONS` passes, the check's cost as a share of the plain runs, and its slowest check.
//!
//! Run with `cargo bench --bench unstable` (or `--profile dev`: the engine, SQLite, is built
//! optimized either way). Set `SQLGATE_SPIDER` to point at another copy of the data.

mod common;

use common::{median, spider_dir};
use sqlgate::engine::exec::{Executor, Limits};
use sqlgate::input::config::EngineName;
use sqlgate::score::stability::StabilityCheck;
use sqlgate::sql::features::FeatureDialect;
use sqlgate::sql::{cuts, order_calls, text};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const REPETITIONS: usize = 3;
const SOURCES: [&str; 5] = ["gold", "C3", "Claude", "GPT4Turbo", "RESDSQL"];

/// The (query, database file, compared in order) triples of one source whose database the data
/// holds.
fn queries(spider: &Path, source: &str) -> Vec<(String, PathBuf, bool)> {
    let gold = std::fs::read_to_string(spider.join("dev_gold.sql")).expect("dev_gold.sql");
    let databases: Vec<PathBuf> = gold
        .lines()
        .map(|line| {
            let db = line.rsplit('\t').next().unwrap_or_default();
            spider
                .join("database")
                .join(db)
                .join(format!("{db}.sqlite"))
        })
        .collect();
    let golds: Vec<String> = gold
        .lines()
        .map(|l| l.rsplit_once('\t').map_or(l, |(sql, _)| sql).to_string())
        .collect();
    let ordered: Vec<bool> = golds.iter().map(|sql| text::order_matters(sql)).collect();
    let texts: Vec<String> = match source {
        "gold" => golds,
        system => std::fs::read_to_string(spider.join("predictions").join(format!("{system}.txt")))
            .expect("prediction file")
            .lines()
            .map(str::to_string)
            .collect(),
    };
    texts
        .into_iter()
        .zip(databases)
        .zip(ordered)
        .map(|((sql, db), ordered)| (sql, db, ordered))
        .filter(|(_, db, _)| db.exists())
        .collect()
}

fn main() {
    let spider = spider_dir();
    let limits = Limits {
        timeout: Duration::from_secs(30),
        max_rows: 1_000_000,
        max_bytes: 1 << 30,
    };
    let executor = Executor::new(limits);
    let check = StabilityCheck::new(&executor, &EngineName::default(), 0);
    println!(
        "source      queries  with a cut  at a cut  calls  ordered  unstable  plain (s)  check (s)  check / plain"
    );
    let (mut all_plain, mut all_check) = (Duration::ZERO, Duration::ZERO);
    for source in SOURCES {
        let pairs = queries(&spider, source);
        let with_cut = (pairs.iter())
            .filter(|(sql, _, _)| {
                cuts::probes(sql, FeatureDialect::Sqlite).is_some_and(|p| !p.is_empty())
            })
            .count();
        let at_cut = (pairs.iter())
            .filter(|(sql, db, _)| check.order_undetermined(db, sql))
            .count();
        let calls = (pairs.iter())
            .filter(|(sql, _, _)| order_calls::depends_on_order(sql, FeatureDialect::Sqlite))
            .count();
        let ordered = pairs.iter().filter(|(_, _, ordered)| *ordered).count();
        let mut plain = Vec::new();
        let mut checked = Vec::new();
        let mut unstable = 0;
        let mut slowest = (Duration::ZERO, 0);
        for _ in 0..REPETITIONS {
            let started = Instant::now();
            for (sql, db, _) in &pairs {
                let _ = executor.run(db, sql);
            }
            plain.push(started.elapsed());
            let started = Instant::now();
            unstable = 0;
            for (item, (sql, db, ordered)) in pairs.iter().enumerate() {
                let one = Instant::now();
                unstable += usize::from(check.query_undetermined(db, sql, *ordered, None));
                slowest = slowest.max((one.elapsed(), item));
            }
            checked.push(started.elapsed());
        }
        let (plain, checked) = (median(plain), median(checked));
        all_plain += plain;
        all_check += checked;
        println!(
            "{source:<10} {:>8} {with_cut:>11} {at_cut:>9} {calls:>6} {ordered:>8} {unstable:>9} {:>10.2} {:>10.2} {:>13.1} %",
            pairs.len(),
            plain.as_secs_f64(),
            checked.as_secs_f64(),
            100.0 * checked.as_secs_f64() / plain.as_secs_f64()
        );
        println!(
            "  slowest check: {:.3} s, on its query {} (of those with a database)",
            slowest.0.as_secs_f64(),
            slowest.1 + 1
        );
    }
    println!(
        "all sources: plain {:.2} s, check {:.2} s ({:.1} %)",
        all_plain.as_secs_f64(),
        all_check.as_secs_f64(),
        100.0 * all_check.as_secs_f64() / all_plain.as_secs_f64()
    );
}
