//! Google's EvalBench (`dataset.kind: evalbench`) on SQLite: a JSON list of items tagged `dql`,
//! `dml` or `ddl` (`input::evalbench`), judged by the `evalbench` metric as EvalBench's
//! `exact_match` scores them, each item on a private copy of its database.

use super::Kind;
use crate::input::config::{Config, DatasetConfig, DifficultySource, PredictionFormat};
use crate::input::config::{Spider2Version, SuiteKind};
use crate::input::dataset::GoldItem;
use crate::input::evalbench::EvalItem;
use crate::util::error::InputError;
use std::sync::Arc;

/// The metrics that judge EvalBench items.
const METRICS: [&str; 1] = ["evalbench"];

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
        let bytes = crate::util::error::read_bytes(&config.gold)?;
        let text = crate::input::dataset::utf8_or_line_error(&config.gold, &bytes)?;
        let items = crate::input::evalbench::parse_items(&config.gold, text)?;
        Ok((items.into_iter().enumerate().map(item).collect(), bytes))
    }

    fn sqlite_only(&self) -> bool {
        true
    }

    fn reads_statement_lists(&self) -> bool {
        true
    }

    /// The `evalbench` metric only, difficulty from a field (`field:query_type`: a cell per
    /// query type) or none, `format: livesql` predictions, no test suite, no gold audit settings
    /// and none of `compare`'s knobs (EvalBench's exact match decides).
    fn check(&self, config: &Config) -> Result<(), String> {
        if config.dataset.difficulty == DifficultySource::SpiderHardness {
            return Err("`dataset.kind: evalbench` items are not parsed for Spider hardness: set `dataset.difficulty: field:query_type` (a cell per dql / dml / ddl) or `none`".into());
        }
        if let Some(other) = (config.metrics.iter()).find(|m| !METRICS.contains(&m.as_str())) {
            return Err(format!(
                "`metrics`: `{other}` is not available for `dataset.kind: evalbench` (only `evalbench`)"
            ));
        }
        if let Some(spec) =
            (config.predictions.iter()).find(|p| p.format != PredictionFormat::Livesql)
        {
            return Err(format!("`predictions`: `{}` needs `format: livesql` with `dataset.kind: evalbench` (`instance_id`, the item's `id`, and `pred_sqls` per line)", spec.path));
        }
        if config.suite.kind != SuiteKind::Original {
            return Err("`suite`: `dataset.kind: evalbench` runs on each item's own database only (`suite.kind: original`)".into());
        }
        if config.audit.overrides.is_some() || !config.audit.dialects.is_empty() {
            return Err("`audit.overrides` and `audit.dialects` do not apply to `dataset.kind: evalbench`: its golds run on a copy as EvalBench runs them, which the gold audit does not read".into());
        }
        let compare = &config.compare;
        if compare.float_tolerance != 0.0 || compare.keep_distinct || compare.plug_value {
            return Err("`compare.float_tolerance`, `keep_distinct` and `plug_value` do not apply to `dataset.kind: evalbench` (EvalBench's exact match decides)".into());
        }
        Ok(())
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
