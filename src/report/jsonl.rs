//! The per-item JSONL output: one line per (system, item) with every metric's value, outcome,
//! error and details (and, when its verdict is unstable, why), streamed so a large leaderboard never sits in memory twice.

use crate::score::evaluation::Evaluation;
use serde_json::{json, Map, Value as Json};

/// Writes one JSONL line per (system, item), systems in config order, items in gold order.
pub fn write_jsonl(evaluation: &Evaluation, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    for result in &evaluation.results {
        let item = &evaluation.dataset.items[result.index];
        let mut metrics = Map::new();
        let mut outcomes = Map::new();
        let mut errors = Map::new();
        let mut details = Map::new();
        for (name, score) in evaluation.metrics.iter().zip(&result.scores) {
            let value = match &score.details {
                Some(detail) if detail.is_value_object() && score.value.is_some() => {
                    detail.to_json()
                }
                detail => {
                    if let Some(detail) = detail {
                        details.insert(format!("{name}_components"), detail.to_json());
                    }
                    score.value.map_or(Json::Null, metric_json)
                }
            };
            metrics.insert(name.clone(), value);
            outcomes.insert(name.clone(), json!(score.outcome.as_str()));
            if let Some(error) = &score.error {
                errors.insert(name.clone(), json!(error));
            }
        }
        let mut line = Map::new();
        line.insert(
            "system".into(),
            json!(evaluation.systems[result.system].name),
        );
        line.insert("index".into(), json!(result.index));
        line.insert("db_id".into(), json!(item.db_id));
        line.insert("difficulty".into(), json!(item.difficulty));
        line.insert("metrics".into(), Json::Object(metrics));
        line.insert("outcome".into(), Json::Object(outcomes));
        if !errors.is_empty() {
            line.insert("error".into(), Json::Object(errors));
        }
        if !result.unstable.is_empty() {
            line.insert("unstable".into(), json!(result.unstable.names()));
        }
        line.extend(details);
        serde_json::to_writer(&mut *out, &Json::Object(line))?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// Binary values are written as integers 0 / 1, others as numbers.
fn metric_json(value: f64) -> Json {
    if value == 0.0 || value == 1.0 {
        json!(value as i64)
    } else {
        json!(value)
    }
}
