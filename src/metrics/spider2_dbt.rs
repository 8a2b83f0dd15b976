//! `duckdb_match`: Spider 2.0-DBT's table comparison of a predicted `.duckdb` file with the
//! item's gold file (`engine::spider2_dbt`), for `dataset.kind: spider2-dbt`. The verdict is the
//! configured profile's (`spider2`, the official `eval_utils.py`, by default; `spider2-sound`
//! compares rows); the other profile's verdict goes beside it in the item's detail
//! (`duckdb_match_components`), so a run shows where the two disagree.

use super::{prediction_failure, Detail, Details, Env, Metric, Outcome, Score};
use crate::engine::exec::Limits;
use crate::engine::spider2_dbt::{judge_files, Tables, Verdict};
use crate::input::config::{Config, ProfileName};
use crate::input::dataset::GoldItem;
use crate::input::spider2_dbt::{checked_answer, DbtInstance};
use serde_json::json;
use std::path::Path;

/// The metric.
pub struct DuckdbMatch;

impl Metric for DuckdbMatch {
    fn name(&self) -> &'static str {
        "duckdb_match"
    }

    fn score(&self, env: &Env<'_>, item: &GoldItem, prediction: Option<&str>) -> Score {
        let task = item.task.as_deref().map(|task| task.as_any());
        let Some(instance) = task.and_then(|task| task.downcast_ref::<DbtInstance>()) else {
            return Score::unscored(
                Outcome::GoldError,
                "not a Spider 2.0-DBT instance (`dataset.kind: spider2-dbt`)",
            );
        };
        let Some(gold) = env.dataset.database_path(item) else {
            // The load refuses a missing gold file, so this is a gold that went away: a
            // finding that stops the run, never an item quietly out of the denominator.
            return Score::unscored(
                Outcome::GoldError,
                format!("the gold database `{}` is absent", item.db_id),
            );
        };
        let limits = env.executor.limits();
        let tables = tables_of(instance);
        if let Some(start) = &instance.start {
            if already_matches(gold, &start.copy, tables, &limits) {
                return Score::unscored(Outcome::GoldError, format!(
                    "gold-unchanged: the starting database {} already matches the gold (an agent that changes nothing scores 1); list the item in `dataset.allow_failing_golds` to leave it unscored",
                    start.file.display()
                ));
            }
        }
        let Some(text) = prediction else {
            return Score::missing();
        };
        // Only a file the submission's metadata named for this instance, checked when read
        // and unchanged since, is opened: never a path a prediction text merely names.
        let answer = match checked_answer(text, &instance.instance_id) {
            Ok(answer) => answer,
            Err(why) => return Score::wrong(Outcome::PredError, why),
        };
        let (official, sound) = both_profiles(gold, &answer, tables, &limits);
        let chosen = match env.profile.config().profile {
            ProfileName::Spider2Sound => &sound,
            _ => &official,
        };
        let mut score = verdict_score(chosen);
        score.details = Some(Details::new(BothProfiles {
            official: verdict_value(&official),
            official_reason: reason(&official),
            sound: verdict_value(&sound),
            sound_reason: reason(&sound),
        }));
        score
    }

    /// The comparison contract is `duckdb_match`'s (not the Spider 2.0-lite profile's of the
    /// same name): a baseline under another is not comparable.
    fn settings(&self, config: &Config) -> Vec<(&'static str, serde_json::Value)> {
        vec![("contract", json!(contract(config.compare.profile)))]
    }

    fn read_details(&self, json: &serde_json::Value) -> Option<Details> {
        let value = |key: &str| json.get(key).and_then(serde_json::Value::as_u64);
        let text = |key: &str| json.get(key)?.as_str().map(str::to_string);
        Some(Details::new(BothProfiles {
            official: value("official").map(|v| u8::from(v == 1)),
            official_reason: text("official_reason")?,
            sound: value("sound").map(|v| u8::from(v == 1)),
            sound_reason: text("sound_reason")?,
        }))
    }
}

/// `duckdb_match`'s comparison contract in words under `profile` (`spider2-sound`, else the
/// official one), as the baseline records it.
pub(crate) fn contract(profile: ProfileName) -> String {
    let common = "each of the item's condition_tabs read from the gold .duckdb file and the predicted one (a table missing from the prediction: wrong); extra predicted tables and columns allowed; right when every table matches";
    match profile {
        ProfileName::Spider2Sound => format!(
            "spider2-sound duckdb_match: {common}; a column type not compared: unscored; rows, not columns one by one: one row permutation of the prediction (with the table's ignore_order, else rows in order) and a distinct predicted column per gold column (the item's condition_cols, else all) such that every cell matches; values in their declared types (an integer exact, a float within 1e-2 absolute, NULL only NULL, text never a number, a list element by element, an aware timestamp never a naive one); table names quoted; a predicted view scores 0 (base tables only)"
        ),
        _ => format!(
            "spider2 duckdb_match (the official {OFFICIAL}): {common}; every gold column (the item's condition_cols, else all) equals some predicted column as a list of the values DuckDB's fetchdf() gives pandas (the frame's common dtype decides int / float / object); numbers within math.isclose(abs_tol=1e-2); two missing values (None, NaN, NaT, pd.NA) equal; a list column never matches (its comparison raises), save one of one-element lists (unscored), BLOB, TIME, UUID and INTERVAL values equal only to their own kind, UHUGEINT / BIGNUM / non-empty TIMETZ columns unreadable (score 0); rows in order unless the table's ignore_order, then each column's values sorted on their own (values may be scrambled across rows); table names pasted unquoted (a name that needs quoting: wrong); a column type not reproduced: unscored"
        ),
    }
}

/// The upstream code the official profile reproduces.
pub(crate) const OFFICIAL: &str =
    "xlang-ai/Spider2 spider2-dbt/evaluation_suite/eval_utils.py duckdb_match at e12c5f1e";

/// What `duckdb_match` compares of an instance: its tables, their columns and row-order flags.
pub(crate) fn tables_of(instance: &DbtInstance) -> Tables<'_> {
    Tables {
        names: &instance.tables,
        conditions: &instance.conditions,
        ignore_orders: &instance.ignore_orders,
    }
}

/// `duckdb_match` of `answer` against `gold` under the official profile, then the sound one.
pub(crate) fn both_profiles(
    gold: &Path,
    answer: &Path,
    tables: Tables<'_>,
    limits: &Limits,
) -> (Verdict, Verdict) {
    (
        judge_files(gold, answer, tables, limits, false),
        judge_files(gold, answer, tables, limits, true),
    )
}

/// Whether the starting database `start` already matches `gold` officially: an agent that
/// changes nothing scores 1 (the `gold-unchanged` finding).
pub(crate) fn already_matches(
    gold: &Path,
    start: &Path,
    tables: Tables<'_>,
    limits: &Limits,
) -> bool {
    judge_files(gold, start, tables, limits, false) == Verdict::Match
}

/// Both profiles' verdicts on one item: 1, 0, or `None` (unscored), with the reason of each.
#[derive(Debug, Clone, PartialEq)]
pub struct BothProfiles {
    /// The official `duckdb_match`'s verdict.
    pub official: Option<u8>,
    /// Why.
    pub official_reason: String,
    /// The sound profile's verdict.
    pub sound: Option<u8>,
    /// Why.
    pub sound_reason: String,
}

impl Detail for BothProfiles {
    fn to_json(&self) -> serde_json::Value {
        json!({
            "official": self.official,
            "official_reason": self.official_reason,
            "sound": self.sound,
            "sound_reason": self.sound_reason,
        })
    }

    /// The official and the sound verdicts, when they differ.
    fn disagreement(&self) -> Option<String> {
        let shown = |value: Option<u8>| value.map_or_else(|| "-".into(), |v| v.to_string());
        (self.official != self.sound).then(|| {
            format!(
                "official {} ({}), sound {} ({})",
                shown(self.official),
                self.official_reason,
                shown(self.sound),
                self.sound_reason
            )
        })
    }
}

/// The gate's verdict of one profile's: a gold that cannot be read is a gold error (the run
/// stops on it, naming the item), an undecided one unavailable, a predicted file the limits
/// stopped a prediction failure.
fn verdict_score(verdict: &Verdict) -> Score {
    match verdict {
        Verdict::Match => Score::binary(true),
        Verdict::Mismatch(why) => Score::wrong(Outcome::Mismatch, why.clone()),
        Verdict::PredFailure(error) => prediction_failure(error.clone()),
        Verdict::GoldFailure(why) => Score::unscored(Outcome::GoldError, why.clone()),
        Verdict::Unavailable(why) => Score::unscored(Outcome::Unavailable, why.clone()),
    }
}

/// 1, 0, or `None` (unscored: a gold that does not read, a type or bound the profile cannot
/// decide), as the detail and `sqlgate spider2-dbt` count it.
pub(crate) fn verdict_value(verdict: &Verdict) -> Option<u8> {
    match verdict {
        Verdict::Match => Some(1),
        Verdict::Mismatch(_) | Verdict::PredFailure(_) => Some(0),
        Verdict::GoldFailure(_) | Verdict::Unavailable(_) => None,
    }
}

/// A verdict's reason, as the detail and `sqlgate spider2-dbt` write it.
pub(crate) fn reason(verdict: &Verdict) -> String {
    match verdict {
        Verdict::Match => "match".into(),
        Verdict::Mismatch(why) => why.clone(),
        Verdict::PredFailure(e) => format!("the prediction failed: {e}"),
        Verdict::GoldFailure(why) => format!("gold_error: {why}"),
        Verdict::Unavailable(why) => format!("unavailable: {why}"),
    }
}
