//! Where a metric's second verdict disagrees with the one it scored (`duckdb_match`'s official
//! and sound profiles, [`crate::metrics::Detail::disagreement`]): per system and metric, the
//! items, in the console, the report's notes and `summary.json`.

use crate::score::evaluation::Evaluation;
use serde_json::{json, Value as Json};

/// Most items a note names; `summary.json` has them all.
const NAMED: usize = 20;

/// One disagreement: the item, its db_id and both verdicts in words.
struct Disagreement {
    index: usize,
    db_id: String,
    verdicts: String,
}

/// The disagreements of each (system, metric) that has any, in system then metric order, with
/// the number of items the metric scored for the system (the denominator).
fn disagreements(evaluation: &Evaluation) -> Vec<(String, String, usize, Vec<Disagreement>)> {
    let mut found = Vec::new();
    for (system, named) in evaluation.systems.iter().enumerate() {
        for (position, metric) in evaluation.metrics.iter().enumerate() {
            let results = evaluation.system_results(system);
            let listed: Vec<Disagreement> = (results.iter())
                .filter_map(|result| {
                    let details = result.scores.get(position)?.details.as_ref()?;
                    Some(Disagreement {
                        index: result.index,
                        db_id: evaluation.dataset.items[result.index].db_id.clone(),
                        verdicts: details.disagreement()?,
                    })
                })
                .collect();
            if !listed.is_empty() {
                found.push((named.name.clone(), metric.clone(), results.len(), listed));
            }
        }
    }
    found
}

/// One note per (system, metric) whose second verdict disagrees somewhere: how many items of
/// how many, and the first [`NAMED`] with both verdicts.
pub fn disagreement_notes(evaluation: &Evaluation) -> Vec<String> {
    (disagreements(evaluation).into_iter())
        .map(|(system, metric, items, listed)| {
            let shown: Vec<String> = (listed.iter().take(NAMED))
                .map(|d| format!("item {} (`{}`): {}", d.index, d.db_id, d.verdicts))
                .collect();
            let more = match listed.len().saturating_sub(NAMED) {
                0 => String::new(),
                n => format!("; and {n} more (summary.json)"),
            };
            format!(
                "{system}: {metric}'s official and sound profiles disagree on {} of {items} items: {}{more}",
                listed.len(),
                shown.join("; ")
            )
        })
        .collect()
}

/// `summary.json`'s `disagreements`: system -> metric -> the items with both verdicts; `None`
/// when no metric's verdicts disagree.
pub fn disagreements_json(evaluation: &Evaluation) -> Option<Json> {
    let mut document = serde_json::Map::new();
    for (system, metric, items, listed) in disagreements(evaluation) {
        let entry = document.entry(system).or_insert_with(|| json!({}));
        entry[metric] = json!({
            "items": items,
            "disagree": (listed.iter())
                .map(|d| json!({"index": d.index, "db_id": d.db_id, "verdicts": d.verdicts}))
                .collect::<Vec<_>>(),
        });
    }
    (!document.is_empty()).then_some(Json::Object(document))
}
