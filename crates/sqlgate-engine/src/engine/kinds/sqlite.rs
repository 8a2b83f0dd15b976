//! SQLite as a plugin: the executor runs it in-process on the benchmark's files
//! ([`crate::engine::sqlite`]), whose data the dataset fingerprint covers.

use crate::engine::exec::{Engine, Limits};
use crate::engine::load::types::Server;
use crate::engine::plugin::EngineFactory;
use crate::engine::server::data_digest::DataDigests;
use crate::input::config::{Config, EngineConfig};
use crate::input::dataset::Dataset;
use crate::sql::features::FeatureDialect;
use crate::util::error::InputError;
use std::sync::Arc;

/// SQLite as a plugin (`kind: sqlite`, the default): the executor runs it in-process on the
/// benchmark's files, whose data the dataset fingerprint covers.
pub struct SqliteFactory;

impl EngineFactory for SqliteFactory {
    fn name(&self) -> &'static str {
        "sqlite"
    }

    fn dialect(&self) -> FeatureDialect {
        FeatureDialect::Sqlite
    }

    fn planner_breaks_ties(&self) -> bool {
        false
    }

    fn reads_sqlite_files(&self) -> bool {
        true
    }

    fn check_keys(&self, section: &EngineConfig) -> Result<(), String> {
        section.refuse_server_keys()?;
        section.refuse_options()
    }

    fn start(
        &self,
        _config: &Config,
        _dataset: &Dataset,
        _limits: &Limits,
        _threads: usize,
    ) -> Result<Option<Arc<dyn Engine>>, InputError> {
        Ok(None)
    }

    fn data_digests(
        &self,
        _config: &Config,
        _dataset: &Dataset,
    ) -> Result<Option<DataDigests>, InputError> {
        Ok(None)
    }

    fn load_target(&self) -> Option<Server> {
        None
    }
}
