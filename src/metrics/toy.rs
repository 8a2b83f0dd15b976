//! A test-only metric, registered under `cfg(test)`: it proves that adding a metric is this one
//! file and one line in [`super::REGISTRY`]. Its value is a signed agreement in [-1, 1]: 1 when
//! the prediction's text equals the gold's, -1 when it differs, and it is continuous. Its
//! per-item detail ([`Agreement`]) is its own type, written and read back here.

use super::{Detail, Details, Env, Metric, Score};
use crate::input::dataset::GoldItem;

/// The `toy` metric.
pub struct Toy;

/// The toy metric's per-item detail: the two texts' lengths.
#[derive(Debug, PartialEq)]
pub struct Agreement {
    /// Characters of the gold query.
    gold_chars: usize,
    /// Characters of the prediction.
    prediction_chars: usize,
}

impl Detail for Agreement {
    fn to_json(&self) -> serde_json::Value {
        serde_json::json!({"gold_chars": self.gold_chars, "prediction_chars": self.prediction_chars})
    }
}

impl Metric for Toy {
    fn name(&self) -> &'static str {
        "toy"
    }

    fn score(&self, _env: &Env<'_>, item: &GoldItem, prediction: Option<&str>) -> Score {
        let Some(prediction) = prediction else {
            return Score::missing();
        };
        let same = prediction.trim() == item.sql.trim();
        let agreement = Agreement {
            gold_chars: item.sql.chars().count(),
            prediction_chars: prediction.chars().count(),
        };
        Score {
            value: Some(if same { 1.0 } else { -1.0 }),
            details: Some(Details::new(agreement)),
            ..Score::binary(same)
        }
    }

    fn read_details(&self, json: &serde_json::Value) -> Option<Details> {
        let count = |key: &str| usize::try_from(json.get(key)?.as_u64()?).ok();
        Some(Details::new(Agreement {
            gold_chars: count("gold_chars")?,
            prediction_chars: count("prediction_chars")?,
        }))
    }

    fn value_range(&self) -> (f64, f64) {
        (-1.0, 1.0)
    }

    fn continuous_scores(&self) -> Vec<String> {
        vec![self.name().to_string()]
    }
}

#[cfg(test)]
mod tests {
    use super::Agreement;
    use crate::metrics::{build, check_value, continuous_scores, value_range, Details};

    #[test]
    fn a_registered_metric_describes_itself_everywhere_it_is_named() {
        assert_eq!(build("toy").unwrap().name(), "toy");
        assert_eq!(value_range("toy"), Some(-1.0..=1.0));
        assert!(check_value("toy", -0.5).is_ok() && check_value("toy", -1.5).is_err());
        assert_eq!(continuous_scores("toy"), ["toy"]);
    }

    #[test]
    fn the_failure_analysis_reads_its_range_and_continuous_score() {
        let record = crate::analysis::records::ItemRecord {
            index: 0,
            difficulty: None,
            metrics: [("ex", Some(0.0)), ("toy", Some(-0.5))]
                .map(|(k, v)| (k.to_string(), v))
                .into(),
            outcome: Default::default(),
            prediction: None,
            unstable: crate::score::stability::Reasons::NONE,
        };
        let metrics = ["ex".to_string(), "toy".to_string()];
        let scores = crate::analysis::failures::failure_scores(&[record], &metrics, "ex");
        let histogram = &scores["toy"].histogram;
        assert_eq!((histogram.lower, histogram.upper), (-1.0, 1.0));
    }

    #[test]
    fn its_detail_is_written_and_read_back_by_the_metric_alone() {
        let written = Details::new(Agreement {
            gold_chars: 12,
            prediction_chars: 9,
        });
        let json = written.to_json();
        assert_eq!(
            json,
            serde_json::json!({"gold_chars": 12, "prediction_chars": 9})
        );
        let read = build("toy")
            .unwrap()
            .read_details(&json)
            .expect("the toy reads its own");
        assert_eq!(read, written);
        let agreement = read
            .get::<Agreement>()
            .expect("the detail is the toy's type");
        assert_eq!(agreement.prediction_chars, 9);
        assert!(read.get::<crate::metrics::Timing>().is_none());
        assert!(build("ex").unwrap().read_details(&json).is_none());
    }
}
