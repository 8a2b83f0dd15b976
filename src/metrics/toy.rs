//! A test-only metric, registered under `cfg(test)`: it proves that adding a metric is this one
//! file and one line in [`super::REGISTRY`]. Its value is a signed agreement in [-1, 1]: 1 when
//! the prediction's text equals the gold's, -1 when it differs, and it is continuous.

use super::{Env, Metric, Score};
use crate::input::dataset::GoldItem;

/// The `toy` metric.
pub struct Toy;

impl Metric for Toy {
    fn name(&self) -> &'static str {
        "toy"
    }

    fn score(&self, _env: &Env<'_>, item: &GoldItem, prediction: Option<&str>) -> Score {
        let Some(prediction) = prediction else {
            return Score::missing();
        };
        let same = prediction.trim() == item.sql.trim();
        Score {
            value: Some(if same { 1.0 } else { -1.0 }),
            ..Score::binary(same)
        }
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
    use crate::metrics::{build, check_value, continuous_scores, value_range};

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
            unstable: None,
        };
        let metrics = ["ex".to_string(), "toy".to_string()];
        let scores = crate::analysis::failures::failure_scores(&[record], &metrics, "ex");
        let histogram = &scores["toy"].histogram;
        assert_eq!((histogram.lower, histogram.upper), (-1.0, 1.0));
    }
}
