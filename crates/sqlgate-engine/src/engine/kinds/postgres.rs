//! PostgreSQL as a plugin ([`crate::engine::server::postgres`]).

use crate::engine::exec::{Engine, Limits};
use crate::engine::load::types::Server;
use crate::engine::plugin::EngineFactory;
use crate::engine::server::data_digest::{self, DataDigests};
use crate::engine::server::postgres::PostgresEngine;
use crate::input::config::{Config, EngineConfig};
use crate::input::dataset::Dataset;
use crate::sql::features::FeatureDialect;
use crate::util::error::InputError;
use std::sync::Arc;

/// PostgreSQL as a plugin (`kind: postgresql`): a server the URL in `url_env` names, checked at
/// start, its data digested, loaded by `sqlgate load`, its planner breaking ties.
pub struct PostgresFactory;

impl EngineFactory for PostgresFactory {
    fn name(&self) -> &'static str {
        "postgresql"
    }

    fn dialect(&self) -> FeatureDialect {
        FeatureDialect::Postgresql
    }

    fn planner_breaks_ties(&self) -> bool {
        true
    }

    fn check_keys(&self, section: &EngineConfig) -> Result<(), String> {
        crate::engine::server::check_keys(section)
    }

    fn start(
        &self,
        config: &Config,
        dataset: &Dataset,
        limits: &Limits,
        threads: usize,
    ) -> Result<Option<Arc<dyn Engine>>, InputError> {
        let settings = crate::engine::server::settings(config, dataset, threads)?;
        let engine = PostgresEngine::start(settings, limits)
            .map_err(|error| crate::engine::server::start_failure(config, error))?;
        Ok(Some(Arc::new(engine)))
    }

    fn data_digests(
        &self,
        config: &Config,
        dataset: &Dataset,
    ) -> Result<Option<DataDigests>, InputError> {
        data_digest::of_server(config, dataset, data_digest::postgres_digests).map(Some)
    }

    fn load_target(&self) -> Option<Server> {
        Some(Server::Postgres)
    }
}
