//! PostgreSQL as a plugin ([`crate::engine::server::postgres`]).

use crate::engine::exec::{Engine, Limits};
use crate::engine::plugin::EngineFactory;
use crate::engine::server::postgres::PostgresEngine;
use crate::engine::server::{ServerSettings, StartError};
use std::sync::Arc;
/// PostgreSQL as a plugin: a server the URL names, checked at start,
/// its data digested, loaded by `sqlgate load`, its planner breaking ties.
pub struct PostgresFactory;

impl EngineFactory for PostgresFactory {
    fn kind(&self) -> crate::input::config::EngineKind {
        crate::input::config::EngineKind::Postgresql
    }

    fn dialect(&self) -> crate::sql::features::FeatureDialect {
        crate::sql::features::FeatureDialect::Postgresql
    }

    fn planner_breaks_ties(&self) -> bool {
        true
    }

    fn start(
        &self,
        settings: ServerSettings,
        limits: &Limits,
    ) -> Result<Option<Arc<dyn Engine>>, StartError> {
        Ok(Some(Arc::new(PostgresEngine::start(settings, limits)?)))
    }

    fn data_digests(
        &self,
        url: &str,
        databases: &[String],
    ) -> Result<Option<crate::engine::server::data_digest::DataDigests>, String> {
        crate::engine::server::data_digest::postgres_digests(url, databases).map(Some)
    }

    fn load_target(&self) -> Option<crate::engine::load::types::Server> {
        Some(crate::engine::load::types::Server::Postgres)
    }
}
