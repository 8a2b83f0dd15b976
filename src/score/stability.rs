//! Whether an item's verdict is stable: the same prediction, run again on the same data, could
//! be judged otherwise when the gold's or the prediction's result depends on an order the query
//! does not determine, or when one of its queries ran near the time limit (issues 44 and 45).
//! An undetermined order is the engine's plan's choice (statistics, `ANALYZE`, a table rewrite
//! or a server's version change it) wherever the result reads it: a tie at a LIMIT / OFFSET /
//! FETCH cut ([`crate::sql::cuts`]), a call that strings rows together or reads them by position
//! without an ORDER BY that fixes them ([`crate::sql::order_calls`]), and, when the comparison
//! reads rows in order, rows that tie on every ORDER BY key (every row, without one) while they
//! differ ([`crate::sql::cuts::order_probe`]). On MySQL / MariaDB a value is the plan's choice
//! too where rows tie under a collation that is not binary or share a group: which of `ada` and
//! `ADA` a DISTINCT, a GROUP BY key, a UNION or a MIN / MAX keeps, and a grouped query's bare
//! column ([`crate::sql::value_choices`]), unless the benchmark's data holds no such tie (one
//! probe per column, cached). The gate never counts such a verdict's change, and never credits a
//! changed prediction that is right only by that chance ([`crate::analysis::comparison`]).
//!
//! Only the queries a metric executed are checked. Only a query with a cut pays for probes (one
//! query per cut, [`crate::sql::cuts::probes`]); only a text naming an order-dependent call is
//! tokenized; only a query compared in order pays for one more run (none for a gold whose sort
//! keys are output columns: its rows are at hand); timing is read from the queries the item ran.

use crate::engine::exec::Executor;
use crate::engine::value::Row;
use crate::input::config::EngineName;
use crate::input::dataset::GoldItem;
use crate::metrics::Env;
use crate::sql::features::FeatureDialect;
use crate::sql::{cuts, order_calls, value_choices};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// The share of the time limit above which a query's verdict depends on timing: a query that
/// took more than half of `execution.timeout_ms` may time out in the next run, or one that timed
/// out may finish.
pub const TIMING_SHARE: f64 = 0.5;

/// Why an item's verdict may change between two runs of the same prediction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unstable {
    /// The gold query took more than [`TIMING_SHARE`] of the time limit.
    GoldTiming,
    /// A query the item's scoring ran (the prediction's, a test suite's) took more than
    /// [`TIMING_SHARE`] of the time limit, or timed out.
    PredictionTiming,
    /// The gold's result depends on an undetermined order: at a cut, in an order-dependent call,
    /// or in the rows an ordered comparison reads.
    GoldOrder,
    /// The prediction's result depends on an undetermined order, as for [`Unstable::GoldOrder`].
    PredictionOrder,
    /// The gold's result may hold a value the plan picks among rows that tie under a collation
    /// or share a group (MySQL / MariaDB).
    GoldValue,
    /// The prediction's result may hold a value the plan picks, as for [`Unstable::GoldValue`].
    PredictionValue,
}

impl Unstable {
    /// The reason's name as written in JSONL, summary.json and baselines.
    pub fn as_str(self) -> &'static str {
        match self {
            Unstable::GoldTiming => "gold-timing",
            Unstable::PredictionTiming => "prediction-timing",
            Unstable::GoldOrder => "gold-order",
            Unstable::PredictionOrder => "prediction-order",
            Unstable::GoldValue => "gold-value",
            Unstable::PredictionValue => "prediction-value",
        }
    }

    /// The reason in words, for the report.
    pub fn describe(self) -> &'static str {
        match self {
            Unstable::GoldTiming => "the gold ran near the time limit",
            Unstable::PredictionTiming => "the prediction ran near the time limit",
            Unstable::GoldOrder => "the gold's result depends on an undetermined row order",
            Unstable::PredictionOrder => {
                "the prediction's result depends on an undetermined row order"
            }
            Unstable::GoldValue => "the gold's result may hold a value the plan picks",
            Unstable::PredictionValue => "the prediction's result may hold a value the plan picks",
        }
    }

    /// Whether the reason is the plan's choice (an undetermined order or value), not the clock.
    pub fn is_plans_choice(self) -> bool {
        !matches!(self, Unstable::GoldTiming | Unstable::PredictionTiming)
    }

    /// Every reason, in order.
    pub const ALL: [Unstable; 6] = [
        Unstable::GoldTiming,
        Unstable::PredictionTiming,
        Unstable::GoldOrder,
        Unstable::PredictionOrder,
        Unstable::GoldValue,
        Unstable::PredictionValue,
    ];

    /// Parses a name written by [`Unstable::as_str`].
    pub fn parse(name: &str) -> Option<Unstable> {
        Unstable::ALL
            .into_iter()
            .find(|reason| reason.as_str() == name)
    }
}

/// Every reason an item's verdict may change between two runs (empty: stable). The clock and
/// the plan are checked independently: a query near the time limit can still hold a tie the
/// plan breaks, and a pull request controls how slow its own prediction is (red team round 9),
/// so one reason never hides another.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reasons(u8);

impl Reasons {
    /// No reason: the verdict is stable.
    pub const NONE: Reasons = Reasons(0);

    /// The set holding `reason` alone.
    pub fn of(reason: Unstable) -> Reasons {
        Reasons(1 << reason as u8)
    }

    /// This set with `reason` added when `add` holds.
    pub fn with(self, reason: Unstable, add: bool) -> Reasons {
        match add {
            true => Reasons(self.0 | Reasons::of(reason).0),
            false => self,
        }
    }

    /// Whether the verdict is stable.
    pub fn is_empty(&self) -> bool {
        self.0 == 0
    }

    /// Whether `reason` is among them.
    pub fn contains(self, reason: Unstable) -> bool {
        self.0 & Reasons::of(reason).0 != 0
    }

    /// The reasons, in [`Unstable`]'s order.
    pub fn iter(self) -> impl Iterator<Item = Unstable> {
        Unstable::ALL.into_iter().filter(move |r| self.contains(*r))
    }

    /// The first reason that is the plan's choice (an undetermined order or value), if any.
    pub fn plans_choice(self) -> Option<Unstable> {
        self.iter().find(|reason| reason.is_plans_choice())
    }

    /// The first reason, if any.
    pub fn first(self) -> Option<Unstable> {
        self.iter().next()
    }

    /// The names joined by `+` (`prediction-timing+prediction-value`), as written in JSONL,
    /// summary.json and baselines; one reason is its name alone, as older sqlgate wrote it.
    pub fn names(self) -> String {
        self.iter()
            .map(Unstable::as_str)
            .collect::<Vec<_>>()
            .join("+")
    }

    /// Parses [`Reasons::names`]; `None` names an unknown reason.
    pub fn parse(names: &str) -> Option<Reasons> {
        (names.split('+')).try_fold(Reasons::NONE, |set, name| {
            Some(set.with(Unstable::parse(name)?, true))
        })
    }
}

impl Serialize for Reasons {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.names())
    }
}

impl<'de> Deserialize<'de> for Reasons {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let names = Option::<String>::deserialize(deserializer)?;
        match names {
            None => Ok(Reasons::NONE),
            Some(names) => Reasons::parse(&names).ok_or_else(|| {
                serde::de::Error::custom(format!("unknown `unstable` reason in `{names}`"))
            }),
        }
    }
}

/// Who breaks a tie at a cut when the same query runs again: whether an undetermined order can
/// come out otherwise, or be steered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TieBreaker {
    /// SQLite reading the benchmark's own file (trusted: a pull request cannot change it) with
    /// the engine built into sqlgate: the same rows in the same order on every run.
    Fixed,
    /// A server's planner: statistics, settings and parallel workers pick among tied rows, and
    /// a pull request that prepares the server can steer them.
    Planner,
}

impl TieBreaker {
    /// The tie-breaker of the engine named `kind`.
    pub fn of(kind: &EngineName) -> TieBreaker {
        match crate::engine::registry::factory(kind).planner_breaks_ties() {
            true => TieBreaker::Planner,
            false => TieBreaker::Fixed,
        }
    }
}

/// The stability check of a run: its executor, its engine's dialect, each item's gold verdict,
/// probed once however many systems share it, and each value probe's finding.
pub struct StabilityCheck<'e> {
    executor: &'e Executor,
    dialect: FeatureDialect,
    gold_plan: Vec<OnceLock<Reasons>>,
    value_ties: Mutex<HashMap<(PathBuf, String), bool>>,
}

impl<'e> StabilityCheck<'e> {
    /// The check of a run over `items` gold items on `executor`'s engine, named `kind`.
    pub fn new(executor: &'e Executor, kind: &EngineName, items: usize) -> Self {
        StabilityCheck {
            executor,
            dialect: crate::engine::registry::factory(kind).dialect(),
            gold_plan: (0..items).map(|_| OnceLock::new()).collect(),
            value_ties: Mutex::new(HashMap::new()),
        }
    }

    /// Every reason the verdict on `item` with `prediction` is unstable, once its metrics ran in
    /// `env` and its slowest query took `slowest`; none when it is stable or was not executed
    /// (its gold did not run: no execution metric, the database is absent, the gold failed).
    /// Timing never stands in for the plan's checks: the gold's and the prediction's orders and
    /// values are checked whatever the clock says.
    pub fn of_pair(
        &self,
        env: &Env<'_>,
        item: &GoldItem,
        prediction: Option<&str>,
        slowest: Duration,
    ) -> Reasons {
        let executed = (item.spider2.is_none())
            .then(|| env.dataset.database_path(item))
            .flatten()
            .and_then(|db| Some((db, env.executed_gold(item, db)?)));
        let Some((db, gold)) = executed.filter(|(_, gold)| gold.rows.is_ok()) else {
            return Reasons::NONE;
        };
        let near = self.executor.limits().timeout.mul_f64(TIMING_SHARE);
        let ordered = gold.prepared.order_matters;
        let gold_plan = *self.gold_plan[item.index].get_or_init(|| {
            let (sql, rows) = (&gold.prepared.sql, gold.rows.as_deref().ok());
            Reasons::NONE
                .with(
                    Unstable::GoldOrder,
                    self.query_undetermined(db, sql, ordered, rows),
                )
                .with(Unstable::GoldValue, self.value_undetermined(db, sql))
        });
        let prediction_plan = prediction.map_or(Reasons::NONE, |sql| {
            let prepared = env.profile.prepare_prediction(sql);
            Reasons::NONE
                .with(
                    Unstable::PredictionOrder,
                    self.prediction_undetermined(env, db, sql, ordered),
                )
                .with(
                    Unstable::PredictionValue,
                    self.value_undetermined(db, &prepared),
                )
        });
        Reasons(gold_plan.0 | prediction_plan.0)
            .with(
                Unstable::GoldTiming,
                gold.elapsed.is_some_and(|elapsed| elapsed > near),
            )
            .with(Unstable::PredictionTiming, slowest > near)
    }

    /// Whether `sql`'s result on `db` may hold a value the plan picks
    /// ([`value_choices::choices`]): a choice the analysis cannot bound, one whose column's data
    /// holds a tie, or one none of whose probes ran (fail closed).
    pub fn value_undetermined(&self, db: &Path, sql: &str) -> bool {
        value_choices::choices(sql, self.dialect)
            .iter()
            .any(|choice| {
                let found: Vec<Option<bool>> = (choice.candidates.iter())
                    .map(|candidate| self.column_ties(db, &candidate.probe_sql()))
                    .collect();
                found.iter().all(Option::is_none) || found.contains(&Some(true))
            })
    }

    /// Whether the value probe `probe` finds a tie on `db` (`None`: it did not run), cached.
    fn column_ties(&self, db: &Path, probe: &str) -> Option<bool> {
        let key = (db.to_path_buf(), probe.to_string());
        let known = (self.value_ties.lock().unwrap_or_else(|e| e.into_inner()))
            .get(&key)
            .copied();
        if known.is_some() {
            return known;
        }
        let ties = !self.executor.run(db, probe).ok()?.is_empty();
        (self.value_ties.lock().unwrap_or_else(|e| e.into_inner())).insert(key, ties);
        Some(ties)
    }

    /// Whether the prediction `sql`'s result on `db` depends on an undetermined order: its cuts
    /// as written, its calls and (when `ordered`) its row order as the profile prepares it to run.
    fn prediction_undetermined(&self, env: &Env<'_>, db: &Path, sql: &str, ordered: bool) -> bool {
        if self.order_undetermined(db, sql) {
            return true;
        }
        let prepared = env.profile.prepare_prediction(sql);
        order_calls::depends_on_order(&prepared, self.dialect)
            || ordered && self.rows_unordered(db, &prepared, None)
    }

    /// Whether `sql`'s result on `db` depends on an undetermined order: in an order-dependent
    /// call, at one of its cuts, or (when `ordered`: the comparison reads its rows in order) in
    /// its row order; `rows` is its result when already at hand.
    pub fn query_undetermined(
        &self,
        db: &Path,
        sql: &str,
        ordered: bool,
        rows: Option<&[Row]>,
    ) -> bool {
        order_calls::depends_on_order(sql, self.dialect)
            || self.order_undetermined(db, sql)
            || ordered && self.rows_unordered(db, sql, rows)
    }

    /// Whether `sql`'s rows on `db` come in an undetermined order ([`cuts::order_probe`]),
    /// read from `rows` when its sort keys are output columns and the rows are at hand, else
    /// from one more run. A probe that appends keys and fails while the query itself runs is
    /// held undetermined (fail closed); a query that fails has no order to decide.
    fn rows_unordered(&self, db: &Path, sql: &str, rows: Option<&[Row]>) -> bool {
        let probe = cuts::order_probe(sql, self.dialect);
        match (rows, probe.appended) {
            (Some(rows), 0) => cuts::ties_differ(&probe, rows),
            (_, appended) => match self.executor.run(db, &probe.sql) {
                Ok(rows) => cuts::ties_differ(&probe, &rows),
                Err(_) => appended > 0 && self.executor.run(db, sql).is_ok(),
            },
        }
    }

    /// Whether `sql`'s result on `db` depends on an undetermined order at one of its cuts: some
    /// probe shows it (a probe that fails decides nothing, nor does a query that does not
    /// parse, but a ranked probe that fails where its plain form runs is held undetermined), or
    /// it has more cuts than [`cuts::MOST_PROBES`] (held undetermined, unprobed).
    pub fn order_undetermined(&self, db: &Path, sql: &str) -> bool {
        let Some(probes) = cuts::probes(sql, self.dialect) else {
            return false;
        };
        if probes.len() > cuts::MOST_PROBES {
            return true;
        }
        probes
            .iter()
            .any(|probe| match self.executor.run(db, &probe.sql) {
                Ok(rows) => cuts::undetermined(probe, &rows),
                Err(_) => {
                    (probe.plain.as_ref()).is_some_and(|plain| self.executor.run(db, plain).is_ok())
                }
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::exec::Limits;

    /// `count` scalar sub-queries, each cut after one row of a one-row result (determined).
    fn sub_queries(count: usize) -> String {
        let nested: Vec<&str> = vec!["(SELECT 1 LIMIT 1)"; count];
        format!("SELECT {}", nested.join(" + "))
    }

    #[test]
    fn a_query_with_more_cuts_than_are_probed_is_held_undetermined() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("empty.sqlite");
        rusqlite::Connection::open(&db)
            .unwrap()
            .execute_batch("CREATE TABLE t(x INTEGER)")
            .unwrap();
        let limits = Limits {
            timeout: Duration::from_secs(10),
            max_rows: 1000,
            max_bytes: 1 << 20,
        };
        let executor = Executor::new(limits);
        let check = StabilityCheck::new(&executor, &EngineName::default(), 0);
        assert!(!check.order_undetermined(&db, &sub_queries(cuts::MOST_PROBES)));
        assert!(check.order_undetermined(&db, &sub_queries(cuts::MOST_PROBES + 1)));
    }
}
