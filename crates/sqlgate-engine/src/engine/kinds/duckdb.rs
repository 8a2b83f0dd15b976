//! DuckDB as a plugin ([`crate::engine::duckdb`]): the executor runs it in-process on the
//! benchmark's `.duckdb` files, whose data the dataset fingerprint covers.

use crate::engine::duckdb::DuckdbEngine;
use crate::engine::exec::{Engine, Limits};
use crate::engine::plugin::EngineFactory;
use crate::engine::server::{ServerSettings, StartError};
use std::sync::Arc;

/// DuckDB as a plugin: files under `dataset.databases`, opened read-only and locked down by the
/// engine, written by `sqlgate load` from SQLite files; the trusted file and the DuckDB built into sqlgate decide a tie at a cut.
pub struct DuckdbFactory;

impl EngineFactory for DuckdbFactory {
    fn kind(&self) -> crate::input::config::EngineKind {
        crate::input::config::EngineKind::Duckdb
    }

    fn dialect(&self) -> crate::sql::features::FeatureDialect {
        crate::sql::features::FeatureDialect::Duckdb
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

    fn start_on_files(&self, _limits: &Limits) -> Option<Arc<dyn Engine>> {
        Some(Arc::new(DuckdbEngine::new()))
    }

    fn data_digests(
        &self,
        _url: &str,
        _databases: &[String],
    ) -> Result<Option<crate::engine::server::data_digest::DataDigests>, String> {
        Ok(None)
    }

    fn load_target(&self) -> Option<crate::engine::load::types::Server> {
        Some(crate::engine::load::types::Server::Duckdb)
    }
}
