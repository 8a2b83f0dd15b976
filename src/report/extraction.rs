//! What the report says about SQL extraction (`predictions[].extract`): per system, the items
//! whose raw output held no SQL, counted apart from the predictions that failed as SQL.

use crate::metrics::Outcome;
use crate::score::evaluation::Evaluation;

/// One note per system with extraction failures: the items, and how many predictions failed as
/// SQL beside them, so an extraction problem is not read as a model writing bad SQL.
pub fn extraction_notes(evaluation: &Evaluation) -> Vec<String> {
    (0..evaluation.systems.len())
        .filter_map(|system| {
            let results = evaluation.system_results(system);
            let with = |outcome: Outcome| -> Vec<usize> {
                results
                    .iter()
                    .filter(|r| r.scores.first().is_some_and(|s| s.outcome == outcome))
                    .map(|r| r.index)
                    .collect()
            };
            let failed = with(Outcome::ExtractionFailed);
            if failed.is_empty() {
                return None;
            }
            let sql_errors = with(Outcome::PredError).len();
            Some(format!(
                "{}: no SQL could be extracted from the model output of {} items {failed:?} \
                 (outcome `extraction_failed`, scored wrong); apart from them, {sql_errors} \
                 extracted predictions failed as SQL (`pred_error`)",
                evaluation.systems[system].name,
                failed.len(),
            ))
        })
        .collect()
}

/// The text the report shows for an item's prediction: the extracted SQL, or what became of it.
pub fn shown_prediction(evaluation: &Evaluation, system: usize, index: usize) -> String {
    let system = &evaluation.systems[system];
    match (
        &system.predictions[index],
        system.unextracted.contains_key(&index),
    ) {
        (Some(sql), _) => sql.clone(),
        (None, true) => "(no SQL extracted from the model output)".into(),
        (None, false) => "(no prediction)".into(),
    }
}
