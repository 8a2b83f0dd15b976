//! ESM+ (seed 001): exact set match with the eight fixes of its section 3.3 (JOIN kinds, no
//! foreign-key rewrite, join conditions, scoped aliases, DISTINCT, LIMIT values, IN lists,
//! values compared) and the equivalence rules of its Table 1, each applied only when its
//! assumption is verified in the item's database (see [`crate::sql::facts`]).
//!
//! Details record the rules that fired and, for a match, the rules it needed: those without
//! which gold and prediction would differ (the "wrong to right" count of seed 001 section 5.4).

use super::{Detail, Details, Env, Metric, Outcome, Score};
use crate::input::dataset::GoldItem;
use crate::sql::facts::DbFacts;
use crate::sql::plus::{canonical, RuleSet};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// One database's facts, read on first use (`None`: no schema at all).
type FactsSlot = Arc<OnceLock<Option<Arc<DbFacts>>>>;

/// The `esm_plus` metric; caches database facts per db_id.
#[derive(Default)]
pub struct EsmPlus {
    facts: Mutex<HashMap<String, FactsSlot>>,
}

impl EsmPlus {
    /// The item's database facts, read once per db_id (file first, tables.json otherwise).
    fn facts(&self, env: &Env<'_>, item: &GoldItem) -> Option<Arc<DbFacts>> {
        let slot = {
            let mut slots = self
                .facts
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            Arc::clone(slots.entry(item.db_id.clone()).or_default())
        };
        slot.get_or_init(|| {
            let database = env.dataset.databases.get(&item.db_id)?;
            let from_file = database
                .path
                .as_deref()
                .and_then(|path| DbFacts::from_sqlite(path).ok());
            from_file
                .or_else(|| {
                    database
                        .tables_entry
                        .as_deref()
                        .map(DbFacts::from_tables_json)
                })
                .map(Arc::new)
        })
        .clone()
    }
}

impl Metric for EsmPlus {
    fn read_details(&self, json: &serde_json::Value) -> Option<Details> {
        Rules::from_json(json).map(Details::new)
    }

    fn name(&self) -> &'static str {
        "esm_plus"
    }

    fn reads_results(&self) -> bool {
        false
    }

    fn needs_sqlite_files(&self) -> bool {
        true
    }

    fn score(&self, env: &Env<'_>, item: &GoldItem, prediction: Option<&str>) -> Score {
        let Some(facts) = self.facts(env, item) else {
            return Score::unscored(Outcome::Skipped, "no schema for this database");
        };
        if let Err(e) = canonical(&item.sql, &facts, RuleSet::all()) {
            return Score::unscored(Outcome::GoldError, format!("gold query: {e}"));
        }
        let Some(prediction) = prediction else {
            return Score::missing();
        };
        match compare(&item.sql, prediction, &facts) {
            Ok(verdict) => {
                let mut score = Score::binary(verdict.matches);
                score.details = Some(Details::new(Rules {
                    fired: verdict.fired,
                    needed: verdict.needed,
                }));
                score
            }
            Err(reason) => Score::wrong(Outcome::PredError, reason),
        }
    }
}

/// ESM+'s per-item detail: the equivalence rules that fired, and those a match needed.
#[derive(Debug, Clone, PartialEq)]
pub struct Rules {
    /// Rules that changed the gold or the prediction.
    pub fired: RuleSet,
    /// Rules without which the match would fail (empty for a mismatch).
    pub needed: RuleSet,
}

impl Detail for Rules {
    fn to_json(&self) -> serde_json::Value {
        let names = |set: &RuleSet| -> Vec<&str> { set.rules().map(|r| r.name()).collect() };
        serde_json::json!({"rules_fired": names(&self.fired), "rules_needed": names(&self.needed)})
    }
}

impl Rules {
    /// Reads what [`Detail::to_json`] wrote.
    fn from_json(json: &serde_json::Value) -> Option<Rules> {
        let set = |list: &serde_json::Value| -> Option<RuleSet> {
            (list.as_array()?.iter()).try_fold(RuleSet::none(), |set, name| {
                Some(set.with(crate::sql::plus::Rule::parse(name.as_str()?)?))
            })
        };
        Some(Rules {
            fired: set(json.get("rules_fired")?)?,
            needed: set(json.get("rules_needed")?)?,
        })
    }
}

/// ESM+'s verdict on one pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Whether the canonical forms are equal.
    pub matches: bool,
    /// Rules that changed either query.
    pub fired: RuleSet,
    /// For a match: the fired rules without which it would not match.
    pub needed: RuleSet,
}

/// Compares gold and prediction under every rule; the error says why the prediction has no
/// canonical form.
pub fn compare(gold: &str, prediction: &str, facts: &DbFacts) -> Result<Verdict, String> {
    let (gold_form, gold_fired) =
        canonical(gold, facts, RuleSet::all()).map_err(|e| format!("gold query: {e}"))?;
    let (pred_form, pred_fired) = canonical(prediction, facts, RuleSet::all())
        .map_err(|e| format!("the prediction has no ESM+ form: {e}"))?;
    let fired = gold_fired.union(pred_fired);
    let matches = gold_form == pred_form;
    let mut needed = RuleSet::none();
    if matches {
        for rule in fired.rules() {
            let without = RuleSet::all().without(rule);
            let (Ok((g, _)), Ok((p, _))) = (
                canonical(gold, facts, without),
                canonical(prediction, facts, without),
            ) else {
                continue;
            };
            if g != p {
                needed = needed.with(rule);
            }
        }
    }
    Ok(Verdict {
        matches,
        fired,
        needed,
    })
}
