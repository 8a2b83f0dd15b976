//! Every prediction format parser either loads exactly one prediction per gold item or reports
//! an error; it never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sqlgate::input::config::{PredictionFormat, PredictionSpec};
use sqlgate::input::dataset::{Dataset, GoldItem};
use std::path::Path;

const GOLD_ITEMS: usize = 8;

fn dataset() -> Dataset {
    Dataset {
        items: (0..GOLD_ITEMS)
            .map(|index| GoldItem {
                index,
                db_id: "singer".into(),
                sql: "SELECT 1".into(),
                question: None,
                evidence: None,
                difficulty: None,
                skipped: false,
                spider2: None,
                task: None,
            })
            .collect(),
        databases: Default::default(),
        sha256: String::new(),
        digests: Default::default(),
        copies: None,
    }
}

fuzz_target!(|bytes: &[u8]| {
    let dataset = dataset();
    for format in [
        PredictionFormat::Lines,
        PredictionFormat::Tsv,
        PredictionFormat::Jsonl,
        PredictionFormat::BirdJson,
    ] {
        for allow_missing in [false, true] {
            let spec = PredictionSpec {
                name: None,
                path: "p".into(),
                format,
                allow_missing,
                extract: Default::default(),
            };
            let parsed =
                sqlgate::input::predictions::parse_predictions(Path::new("p"), bytes, &spec, &dataset);
            if let Ok(predictions) = parsed {
                assert_eq!(predictions.len(), GOLD_ITEMS);
            }
        }
    }
});
