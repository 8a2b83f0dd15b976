//! Google's EvalBench (`dataset.kind: evalbench`) on SQLite: a JSON list of items tagged `dql`,
//! `dml` or `ddl` (`input::evalbench`), judged as EvalBench's `exact_match` scores them on
//! private copies of the item's database: `evalbench` in EvalBench's order (the prediction, then
//! the gold, on one copy), `evalbench_sound` with each side on its own copy. Only the sound one
//! may be gated on (the gate rule `judge::rules::sound_gate`).

use super::{statements, Kind};
use crate::input::config::{Config, DatasetConfig, Spider2Version};
use crate::input::dataset::GoldItem;
use crate::input::evalbench::EvalItem;
use crate::util::error::InputError;
use std::sync::Arc;

/// The metrics that judge EvalBench items.
const METRICS: [&str; 2] = ["evalbench", "evalbench_sound"];

/// The EvalBench kind.
pub struct EvalBench;

impl Kind for EvalBench {
    fn name(&self) -> &'static str {
        "evalbench"
    }

    /// The JSON list, in file order; the gold digest covers the file's bytes.
    fn load_items(
        &self,
        config: &DatasetConfig,
        _version: Spider2Version,
    ) -> Result<(Vec<GoldItem>, Vec<u8>), InputError> {
        statements::load(config, crate::input::evalbench::parse_items, item)
    }

    fn sqlite_only(&self) -> bool {
        true
    }

    fn reads_statement_lists(&self) -> bool {
        true
    }

    /// Its metrics only, difficulty from a field (`field:query_type`: a cell per query type)
    /// or none, `format: livesql` predictions, no test suite, no gold audit settings and none of
    /// `compare`'s knobs (EvalBench's exact match decides).
    fn check(&self, config: &Config) -> Result<(), String> {
        let rules = statements::Rules {
            name: "evalbench",
            metrics: &METRICS,
            cells: ("query_type", "a cell per dql / dml / ddl"),
            prediction_line: "`instance_id`, the item's `id`, and `pred_sqls` per line",
            audit: "its golds run on a copy as EvalBench runs them, which the gold audit judges as predictions (`gold-self-check`), not by the read-only checks these keys feed",
            decides: "EvalBench's exact match decides",
        };
        statements::check(config, &rules)
    }

    /// Its metric needs its items.
    fn refuse_in_other_kinds(&self, config: &Config) -> Result<(), String> {
        match (config.metrics.iter()).find(|m| METRICS.contains(&m.as_str())) {
            Some(metric) => Err(format!(
                "`metrics`: `{metric}` needs `dataset.kind: evalbench`"
            )),
            None => Ok(()),
        }
    }
}

/// One EvalBench item as a gold item: its gold SQL for display, the item itself on `task`.
fn item((index, eval): (usize, EvalItem)) -> GoldItem {
    GoldItem {
        index,
        db_id: eval.db_id.clone(),
        sql: eval.golden_sql.clone(),
        question: None,
        evidence: None,
        difficulty: None,
        skipped: false,
        spider2: None,
        task: Some(Arc::new(eval)),
    }
}
