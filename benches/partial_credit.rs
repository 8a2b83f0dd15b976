//! Result-table comparison at 1,000 gold rows vs 1,000 predicted rows (3 columns): QAS's S_T
//! (cell edit distance, ordered and unordered), SQLMorph's exact-column partial-cell matching
//! and column-free cell-set matching, with 10 % of the predicted rows changed and with every row
//! changed (the greedy phase's worst case), and the embedding techniques with a local
//! deterministic embedder (no network), so their assignments are measured alone.
//!
//! Run with `cargo bench --bench partial_credit`; prints the median of several runs.

mod common;

use sqlgate::engine::value::{Row, Value};
use sqlgate::metrics::{table_similarity, Embedder, Metric, Technique};
use std::time::{Duration, Instant};

const ROWS: usize = 1_000;
const REPETITIONS: usize = 7;

/// Row `i`: a name, an integer and a real.
fn row(i: usize) -> Row {
    vec![
        Value::Text(format!("name {i}")),
        Value::Int(i as i64 * 7),
        Value::Real(i as f64 / 3.0),
    ]
}

/// The gold table and a prediction with every `step`-th row's integer changed, in reverse order.
fn tables(step: usize) -> (Vec<Row>, Vec<Row>) {
    let gold: Vec<Row> = (0..ROWS).map(row).collect();
    let predicted: Vec<Row> = (0..ROWS)
        .rev()
        .map(|i| {
            let mut r = row(i);
            if i % step == 0 {
                r[1] = Value::Int(-1);
            }
            r
        })
        .collect();
    (gold, predicted)
}

/// A deterministic embedder: 32 dimensions from the text's bytes.
struct Hashing;

impl Embedder for Hashing {
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0.0f32; 32];
                for (i, b) in t.bytes().enumerate() {
                    v[(i * 31 + b as usize) % 32] += 1.0;
                }
                v
            })
            .collect())
    }
}

fn median(mut f: impl FnMut()) -> Duration {
    let times: Vec<Duration> = (0..REPETITIONS)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    common::median(times)
}

fn report(what: &str, time: Duration) {
    println!("{what:<58} {:>9.2} ms", time.as_secs_f64() * 1e3);
}

fn main() {
    let names: Vec<String> = ["name", "number", "ratio"].map(String::from).to_vec();
    println!("{ROWS} gold rows vs {ROWS} predicted rows, 3 columns, median of {REPETITIONS}");
    for (label, step) in [("10 % of rows changed", 10), ("every row changed", 1)] {
        let (gold, predicted) = tables(step);
        let gold_table = (names.as_slice(), gold.as_slice());
        let predicted_table = (names.as_slice(), predicted.as_slice());
        report(
            &format!("QAS S_T, row order free ({label})"),
            median(|| {
                std::hint::black_box(table_similarity(&gold, &predicted, false));
            }),
        );
        report(
            &format!("QAS S_T, row order kept ({label})"),
            median(|| {
                std::hint::black_box(table_similarity(&gold, &predicted, true));
            }),
        );
        for technique in [
            Technique::ExactColumnPartialCell,
            Technique::NoColumnPartialCell,
            Technique::SemanticColumnPartialCell,
        ] {
            report(
                &format!("{} ({label})", technique.name()),
                median(|| {
                    let scores = technique.compare(Ok(&Hashing), gold_table, predicted_table);
                    std::hint::black_box(scores.expect("local embedder answers"));
                }),
            );
        }
    }
    let (gold, predicted) = tables(10);
    report(
        "unified_column_and_semantic_row (10 % of rows changed, 1000 x 1000 assignment)",
        median(|| {
            let scores = Technique::UnifiedColumnSemanticRow.compare(
                Ok(&Hashing),
                (names.as_slice(), gold.as_slice()),
                (names.as_slice(), predicted.as_slice()),
            );
            std::hint::black_box(scores.expect("local embedder answers"));
        }),
    );
}
