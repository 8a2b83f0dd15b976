//! SQLite as a plugin: the executor runs it in-process on the benchmark's files
//! ([`crate::engine::sqlite`]), whose data the dataset fingerprint covers.

use crate::engine::exec::{Engine, Limits};
use crate::engine::plugin::EngineFactory;
use crate::engine::server::{ServerSettings, StartError};
use std::sync::Arc;
/// SQLite as a plugin: the executor runs it in-process on the
/// benchmark's files, whose data the dataset fingerprint covers.
pub struct SqliteFactory;

impl EngineFactory for SqliteFactory {
    fn kind(&self) -> crate::input::config::EngineKind {
        crate::input::config::EngineKind::Sqlite
    }

    fn dialect(&self) -> crate::sql::features::FeatureDialect {
        crate::sql::features::FeatureDialect::Sqlite
    }

    fn planner_breaks_ties(&self) -> bool {
        false
    }

    fn start(
        &self,
        _settings: ServerSettings,
        _limits: &Limits,
    ) -> Result<Option<Arc<dyn Engine>>, StartError> {
        Ok(None)
    }

    fn data_digests(
        &self,
        _url: &str,
        _databases: &[String],
    ) -> Result<Option<crate::engine::server::data_digest::DataDigests>, String> {
        Ok(None)
    }

    fn load_target(&self) -> Option<crate::engine::load::types::Server> {
        None
    }
}
