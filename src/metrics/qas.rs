//! QAS, the Query Accuracy Score (seed 003): `w * S_T + (1 - w) * S_C`, where S_T is the
//! edit-distance similarity of the two result tables and S_C the cosine similarity of the two
//! queries' embeddings. Without an embedding provider S_C is not invented: the item is
//! unavailable, with the reason.

use super::resultset::{cosine, table_similarity};
use super::{
    gold_and_prediction, prediction_failure, Detail, Details, Embedder, Env, Metric, Outcome, Score,
};
use crate::input::config::Config;
use crate::input::dataset::GoldItem;

/// The `qas` metric.
pub struct QueryAccuracyScore;

/// S_C: cosine similarity of the embeddings of the gold and predicted SQL.
pub fn code_similarity(
    embedder: &dyn Embedder,
    gold: &str,
    predicted: &str,
) -> Result<f64, String> {
    let vectors = embedder.embed(&[gold.to_string(), predicted.to_string()])?;
    match vectors.as_slice() {
        [g, p] => Ok(cosine(g, p)),
        other => Err(format!(
            "the embedding provider returned {} vectors for 2 texts",
            other.len()
        )),
    }
}

/// QAS's per-item detail: its two components and the weight that combined them.
#[derive(Debug, Clone, PartialEq)]
pub struct QasParts {
    /// S_T: table similarity.
    pub table: f64,
    /// S_C: SQL embedding cosine similarity.
    pub code: f64,
    /// w.
    pub weight: f64,
}

impl Detail for QasParts {
    fn to_json(&self) -> serde_json::Value {
        serde_json::json!({"s_t": self.table, "s_c": self.code, "w": self.weight})
    }
}

impl QasParts {
    /// Reads what [`Detail::to_json`] wrote.
    fn from_json(json: &serde_json::Value) -> Option<QasParts> {
        let number = |key: &str| json.get(key).and_then(serde_json::Value::as_f64);
        Some(QasParts {
            table: number("s_t")?,
            code: number("s_c")?,
            weight: number("w")?,
        })
    }
}

impl Metric for QueryAccuracyScore {
    fn read_details(&self, json: &serde_json::Value) -> Option<Details> {
        QasParts::from_json(json).map(Details::new)
    }

    fn name(&self) -> &'static str {
        "qas"
    }

    /// S_C is a cosine similarity, which may be negative.
    fn value_range(&self) -> (f64, f64) {
        (-1.0, 1.0)
    }

    fn continuous_scores(&self) -> Vec<String> {
        vec![self.name().to_string()]
    }

    fn settings(&self, config: &Config) -> Vec<(&'static str, serde_json::Value)> {
        vec![("qas_weight", config.qas.weight.into())]
    }

    fn score(&self, env: &Env<'_>, item: &GoldItem, prediction: Option<&str>) -> Score {
        let embedder = match env.embedder() {
            Ok(embedder) => embedder,
            Err(reason) => return Score::unscored(Outcome::Unavailable, reason),
        };
        let (run, prediction) = match gold_and_prediction(env, item, prediction) {
            Ok(pair) => pair,
            Err(unscored) => return unscored,
        };
        let sql = env.profile.prepare_prediction(prediction);
        let predicted_rows = match env.executor.run(run.db, &sql) {
            Ok(rows) => rows,
            Err(e) => return prediction_failure(e),
        };
        let order_matters = run.gold.prepared.order_matters;
        let table = table_similarity(run.rows(), &predicted_rows, order_matters);
        let code = match code_similarity(embedder, &item.sql, prediction) {
            Ok(code) => code,
            Err(reason) => {
                return Score::unscored(
                    Outcome::Unavailable,
                    format!("embedding provider failed: {reason}"),
                )
            }
        };
        let weight = env.qas_weight;
        let qas = weight * table + (1.0 - weight) * code;
        Score {
            value: Some(qas),
            outcome: if qas >= 1.0 {
                Outcome::Match
            } else {
                Outcome::Mismatch
            },
            error: None,
            details: Some(Details::new(QasParts {
                table,
                code,
                weight,
            })),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::value::{Row, Value};
    use crate::metrics::resultset::table_similarity;

    fn column(values: &[i64]) -> Vec<Row> {
        values.iter().map(|v| vec![Value::Int(*v)]).collect()
    }

    #[test]
    fn table_similarity_is_one_minus_cell_edit_distance_over_the_longer_table() {
        let gold = column(&[1, 2, 3]);
        // One substituted cell of three.
        let s = table_similarity(&gold, &column(&[1, 2, 4]), false);
        assert!((s - 2.0 / 3.0).abs() < 1e-12, "{s}");
        // Order is free without ORDER BY; with it, 1 2 3 -> 3 2 1 costs two substitutions.
        assert_eq!(table_similarity(&gold, &column(&[3, 2, 1]), false), 1.0);
        let ordered = table_similarity(&gold, &column(&[3, 2, 1]), true);
        assert!((ordered - 1.0 / 3.0).abs() < 1e-12, "{ordered}");
        // One missing row of four: distance 1.
        let s = table_similarity(&column(&[1, 2, 3, 4]), &gold, false);
        assert!((s - 0.75).abs() < 1e-12, "{s}");
        assert_eq!(table_similarity(&[], &[], true), 1.0);
        assert_eq!(table_similarity(&gold, &[], true), 0.0);
        // Two rows of two cells, one cell differs (2 vs 2.5): 1 edit of 4 cells.
        let wide = vec![
            vec![Value::Int(1), Value::Int(2)],
            vec![Value::Int(3), Value::Int(4)],
        ];
        let other = vec![
            vec![Value::Int(1), Value::Real(2.5)],
            vec![Value::Int(3), Value::Int(4)],
        ];
        assert_eq!(table_similarity(&wide, &other, true), 0.75);
        // An extra column on every row: 2 insertions over 6 cells.
        let extra = vec![
            vec![Value::Int(1), Value::Int(2), Value::Int(9)],
            vec![Value::Int(3), Value::Int(4), Value::Int(9)],
        ];
        let s = table_similarity(&wide, &extra, true);
        assert!((s - 4.0 / 6.0).abs() < 1e-12, "{s}");
        // Integral reals equal integers, as in EX.
        assert_eq!(
            table_similarity(&column(&[1]), &[vec![Value::Real(1.0)]], true),
            1.0
        );
    }

    struct Fixed;

    impl Embedder for Fixed {
        fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
            Ok(texts
                .iter()
                .map(|t| {
                    if t.contains("JOIN") {
                        vec![0.6, 0.8]
                    } else {
                        vec![1.0, 0.0]
                    }
                })
                .collect())
        }
    }

    #[test]
    fn code_similarity_is_the_cosine_of_the_two_query_embeddings() {
        let same = code_similarity(&Fixed, "SELECT a FROM t", "SELECT a FROM t").unwrap();
        assert!((same - 1.0).abs() < 1e-6);
        let joined = code_similarity(&Fixed, "SELECT a FROM t", "SELECT a FROM t JOIN u").unwrap();
        assert!((joined - 0.6).abs() < 1e-6, "{joined}");
    }
}
