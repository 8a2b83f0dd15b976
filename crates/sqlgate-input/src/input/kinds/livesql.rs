//! LiveSQLBench (`dataset.kind: livesql`) and BIRD-Critic (`dataset.kind: bird-critic`) on
//! SQLite: JSONL items whose SQL changes the database (`input::livesql`), judged on a copy per
//! item by the item's test cases. The two read the same files; they differ in the metric that
//! judges them (`livesql` / `livesql_sound`, or `bird_critic`).

use super::{statements, Kind};
use crate::input::config::{Config, DatasetConfig, PredictionFormat, Spider2Version};
use crate::input::dataset::GoldItem;
use crate::input::livesql::LiveItem;
use crate::util::error::InputError;
use std::sync::Arc;

/// A LiveSQLBench-style kind: its name and the metrics that judge its items.
pub struct LiveSql {
    /// What `dataset.kind` writes.
    pub name: &'static str,
    /// The metrics it allows (each is one evaluator's profile).
    pub metrics: &'static [&'static str],
}

/// Every kind of this file, so each can tell its family's settings from another kind's.
pub const FAMILY: [LiveSql; 2] = [
    LiveSql {
        name: "livesql",
        metrics: &["livesql", "livesql_sound"],
    },
    LiveSql {
        name: "bird-critic",
        metrics: &["bird_critic"],
    },
];

impl Kind for LiveSql {
    fn name(&self) -> &'static str {
        self.name
    }

    /// One item per JSON line; the gold digest covers the file's bytes.
    fn load_items(
        &self,
        config: &DatasetConfig,
        _version: Spider2Version,
    ) -> Result<(Vec<GoldItem>, Vec<u8>), InputError> {
        statements::load(config, crate::input::livesql::parse_items, item)
    }

    fn sqlite_only(&self) -> bool {
        true
    }

    fn reads_statement_lists(&self) -> bool {
        true
    }

    /// Its metrics only, difficulty from a field (`field:category`: per-category cells) or
    /// none, LiveSQLBench prediction files, no test suite, no gold audit settings and none of
    /// `compare`'s knobs.
    fn check(&self, config: &Config) -> Result<(), String> {
        let rules = statements::Rules {
            name: self.name,
            metrics: self.metrics,
            cells: ("category", "a cell per category"),
            prediction_line: "`instance_id` and `pred_sqls` or `response` per line",
            audit: "its golds are statement lists, which the gold audit judges as predictions by its metrics (`gold-self-check`), not by the read-only checks these keys feed",
            decides: "its test cases decide",
        };
        statements::check(config, &rules)
    }

    /// Its metrics and prediction format need its items.
    fn refuse_in_other_kinds(&self, config: &Config) -> Result<(), String> {
        let kind = config.dataset.kind.as_str();
        if FAMILY.iter().any(|own| own.name == kind) {
            return Ok(());
        }
        if let Some(metric) = (config.metrics.iter()).find(|m| self.metrics.contains(&m.as_str())) {
            return Err(format!(
                "`metrics`: `{metric}` needs `dataset.kind: {}`",
                self.name
            ));
        }
        let reads_format =
            super::find(&config.dataset.kind).is_some_and(|k| k.reads_statement_lists());
        match config.predictions.iter().find(|p| p.format == PredictionFormat::Livesql) {
            Some(spec) if !reads_format => Err(format!("`predictions`: `{}` has `format: livesql`, which needs `dataset.kind: livesql`, `bird-critic` or `evalbench`", spec.path)),
            _ => Ok(()),
        }
    }
}

/// One LiveSQLBench item as a gold item: its gold statements, one per line, for display; the
/// item itself on `task` for the metric.
fn item((index, live): (usize, LiveItem)) -> GoldItem {
    GoldItem {
        index,
        db_id: live.db_id.clone(),
        sql: live.sol_sql.join(";\n"),
        question: None,
        evidence: None,
        difficulty: None,
        skipped: false,
        spider2: None,
        task: Some(Arc::new(live)),
    }
}
