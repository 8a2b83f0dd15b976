//! Spider 2.0-lite's layout (`dataset.kind: spider2`): a task file, the evaluation settings,
//! gold result files or queries, and flat `<db_id>.sqlite` files; compared by the `spider2`
//! profiles with `ex` only.

use super::Kind;
use crate::input::config::{Config, DatasetConfig, DifficultySource, Spider2Version};
use crate::input::dataset::GoldItem;
use crate::util::error::InputError;
use std::path::{Path, PathBuf};

/// The Spider 2.0 kind.
pub struct Spider2;

impl Kind for Spider2 {
    fn name(&self) -> &'static str {
        "spider2"
    }

    fn load_items(
        &self,
        config: &DatasetConfig,
        version: Spider2Version,
    ) -> Result<(Vec<GoldItem>, Vec<u8>), InputError> {
        let (instances, digest) = crate::input::spider2::load_instances(config, version)?;
        let items = instances.into_iter().enumerate().map(item).collect();
        Ok((items, digest))
    }

    /// Spider 2.0's local databases lie flat: `<databases>/<db_id>.sqlite`.
    fn database_file(&self, folder: &Path, db_id: &str) -> PathBuf {
        folder.join(format!("{db_id}.sqlite"))
    }

    fn sqlite_only(&self) -> bool {
        true
    }

    fn takes_spider2_profiles(&self) -> bool {
        true
    }

    /// The layout needs its files, difficulty `none`, a `spider2` profile and the `ex` metric
    /// only.
    fn check(&self, config: &Config) -> Result<(), String> {
        let dataset = &config.dataset;
        if dataset.eval.is_none() || (dataset.gold_results.is_none() && dataset.gold_sql.is_none())
        {
            return Err("`dataset.kind: spider2` needs `dataset.eval` (spider2lite_eval.jsonl) and `dataset.gold_results` or `dataset.gold_sql`".into());
        }
        if dataset.difficulty != DifficultySource::None {
            return Err(
                "`dataset.kind: spider2` has no difficulty labels: set `dataset.difficulty: none`"
                    .into(),
            );
        }
        if !config.compare.profile.is_spider2() {
            return Err(
                "`dataset.kind: spider2` needs `compare.profile: spider2` or `spider2-sound`"
                    .into(),
            );
        }
        let compare = &config.compare;
        if compare.float_tolerance != 0.0 || compare.keep_distinct || compare.plug_value {
            return Err("`compare.float_tolerance`, `keep_distinct` and `plug_value` do not apply to the spider2 profiles (the official tolerance is fixed at 1e-2)".into());
        }
        match config.metrics.iter().find(|m| *m != "ex") {
            Some(other) => Err(format!(
                "`metrics`: `{other}` is not available for `dataset.kind: spider2` (only `ex`)"
            )),
            None => Ok(()),
        }
    }

    /// The profiles, `compare.version` and the layout's files need the layout.
    fn refuse_in_other_kinds(&self, config: &Config) -> Result<(), String> {
        let profile = config.compare.profile;
        if config.compare.version.is_some() {
            return Err("`compare.version` is for the spider2 profiles only".into());
        }
        if let Some((key, _, _)) = config.dataset.spider2_paths().first() {
            return Err(format!("`{key}` is for `dataset.kind: spider2` only"));
        }
        if profile.is_spider2() && !super::of(&config.dataset).takes_spider2_profiles() {
            return Err(format!(
                "`compare.profile: {}` needs `dataset.kind: spider2` (its gold results and evaluation settings)",
                profile.as_str()
            ));
        }
        Ok(())
    }
}

/// One instance as a gold item: its reference query (if any) and its answers.
fn item((index, instance): (usize, crate::input::spider2::Instance)) -> GoldItem {
    GoldItem {
        index,
        db_id: instance.db_id,
        sql: instance.sql,
        question: instance.question,
        evidence: None,
        difficulty: None,
        skipped: false,
        spider2: Some(instance.gold),
        task: None,
    }
}
