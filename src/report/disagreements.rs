//! Where two verdicts of the same checks disagree, per system: a metric's second verdict
//! (`duckdb_match`'s official and sound profiles, [`crate::metrics::Detail::disagreement`]), and
//! a metric listed beside the one it is the sound profile of (`livesql` and `livesql_sound`,
//! [`crate::metrics::Metric::sound_profile_of`]). The items are named in the console, the
//! report's notes (so the comment) and `summary.json`, with the denominator.

use crate::metrics::Score;
use crate::score::evaluation::{Evaluation, ItemResult};
use serde_json::{json, Value as Json};

/// Most items a note names; `summary.json` has them all.
const NAMED: usize = 20;

/// One disagreement: the item, its db_id and both verdicts in words.
struct Disagreement {
    index: usize,
    db_id: String,
    verdicts: String,
}

/// The disagreements of one system under one pair of verdicts.
struct Found {
    system: String,
    /// `summary.json`'s key: the metric, or `<official>/<sound>` for a pair of metrics.
    key: String,
    /// Who disagrees, in words: "`m`'s official and sound profiles" or "`a` and `b`".
    who: String,
    /// The number of items of the system (the denominator).
    items: usize,
    listed: Vec<Disagreement>,
}

/// Every system's disagreements, in system then metric order: first each metric's own second
/// verdict, then each (official, sound) pair of metrics the run lists both of.
fn disagreements(evaluation: &Evaluation) -> Vec<Found> {
    let mut found = Vec::new();
    for (system, named) in evaluation.systems.iter().enumerate() {
        let results = evaluation.system_results(system);
        for (position, metric) in evaluation.metrics.iter().enumerate() {
            let listed = listed(evaluation, results, |result| {
                result
                    .scores
                    .get(position)?
                    .details
                    .as_ref()?
                    .disagreement()
            });
            found.push(Found {
                system: named.name.clone(),
                key: metric.clone(),
                who: format!("{metric}'s official and sound profiles"),
                items: results.len(),
                listed,
            });
        }
        for (official, sound) in profile_pairs(evaluation) {
            let listed = listed(evaluation, results, |result| {
                pair_disagreement(
                    (&evaluation.metrics[official], result.scores.get(official)?),
                    (&evaluation.metrics[sound], result.scores.get(sound)?),
                )
            });
            found.push(Found {
                system: named.name.clone(),
                key: format!(
                    "{}/{}",
                    evaluation.metrics[official], evaluation.metrics[sound]
                ),
                who: format!(
                    "`{}` and `{}`",
                    evaluation.metrics[official], evaluation.metrics[sound]
                ),
                items: results.len(),
                listed,
            });
        }
    }
    found.retain(|found| !found.listed.is_empty());
    found
}

/// The items of `results` for which `verdicts` has words.
fn listed(
    evaluation: &Evaluation,
    results: &[ItemResult],
    verdicts: impl Fn(&ItemResult) -> Option<String>,
) -> Vec<Disagreement> {
    (results.iter())
        .filter_map(|result| {
            Some(Disagreement {
                index: result.index,
                db_id: evaluation.dataset.items[result.index].db_id.clone(),
                verdicts: verdicts(result)?,
            })
        })
        .collect()
}

/// The positions of (official, sound) metric pairs the run lists both of.
fn profile_pairs(evaluation: &Evaluation) -> Vec<(usize, usize)> {
    let position = |name: &str| evaluation.metrics.iter().position(|m| m == name);
    (evaluation.metrics.iter().enumerate())
        .filter_map(|(sound, name)| {
            let official = position(crate::metrics::sound_profile_of(name)?)?;
            Some((official, sound))
        })
        .collect()
}

/// Both verdicts in words when two scored verdicts of one item differ; `None` when they agree
/// or either was not scored.
fn pair_disagreement(official: (&str, &Score), sound: (&str, &Score)) -> Option<String> {
    let (a, b) = (official.1.value?, sound.1.value?);
    (a != b).then(|| format!("{}; {}", in_words(official), in_words(sound)))
}

/// One verdict in words: "`m` right" or "`m` wrong (why)".
fn in_words((metric, score): (&str, &Score)) -> String {
    match (score.value == Some(1.0), &score.error) {
        (true, _) => format!("`{metric}` right"),
        (false, Some(why)) => format!("`{metric}` wrong ({why})"),
        (false, None) => format!("`{metric}` wrong"),
    }
}

/// One note per (system, metric) whose second verdict disagrees somewhere: how many items of
/// how many, and the first [`NAMED`] with both verdicts.
pub fn disagreement_notes(evaluation: &Evaluation) -> Vec<String> {
    (disagreements(evaluation).into_iter())
        .map(|found| {
            let Found {
                system,
                who,
                items,
                listed,
                ..
            } = found;
            let shown: Vec<String> = (listed.iter().take(NAMED))
                .map(|d| format!("item {} (`{}`): {}", d.index, d.db_id, d.verdicts))
                .collect();
            let more = match listed.len().saturating_sub(NAMED) {
                0 => String::new(),
                n => format!("; and {n} more (summary.json)"),
            };
            format!(
                "{system}: {who} disagree on {} of {items} items: {}{more}",
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
    for found in disagreements(evaluation) {
        let entry = document.entry(found.system).or_insert_with(|| json!({}));
        entry[found.key] = json!({
            "items": found.items,
            "disagree": (found.listed.iter())
                .map(|d| json!({"index": d.index, "db_id": d.db_id, "verdicts": d.verdicts}))
                .collect::<Vec<_>>(),
        });
    }
    (!document.is_empty()).then_some(Json::Object(document))
}
