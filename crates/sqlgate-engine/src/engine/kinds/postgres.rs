//! PostgreSQL as a plugin ([`crate::engine::server::postgres`]).

use crate::engine::exec::{Engine, Limits};
use crate::engine::kinds::postgres_clones;
use crate::engine::livesql::postgres::PgSettings;
use crate::engine::load::types::Server;
use crate::engine::plugin::EngineFactory;
use crate::engine::server::data_digest::{self, DataDigests, Reach};
use crate::engine::server::postgres::PostgresEngine;
use crate::engine::server::StartError;
use crate::input::config::{Config, EngineConfig};
use crate::input::dataset::Dataset;
use crate::sql::features::FeatureDialect;
use crate::util::error::InputError;
use std::sync::Arc;

/// PostgreSQL as a plugin (`kind: postgresql`): a server the URL in `url_env` names, checked at
/// start, its data digested, loaded by `sqlgate load`, its planner breaking ties; with
/// `admin_url_env`, state-changing items judged on clones ([`postgres_clones`]).
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
        let failure = |error| crate::engine::server::start_failure(config, error);
        let clones = clone_settings(config).map_err(failure)?;
        let db_ids = settings.tables.keys().cloned().collect();
        let engine = PostgresEngine::start(settings, limits).map_err(failure)?;
        match clones {
            Some(clones) => {
                let engine = postgres_clones::start(engine, clones, &db_ids).map_err(failure)?;
                Ok(Some(Arc::new(engine)))
            }
            None => Ok(Some(Arc::new(engine))),
        }
    }

    fn data_digests(
        &self,
        config: &Config,
        dataset: &Dataset,
    ) -> Result<Option<DataDigests>, InputError> {
        let Some(settings) =
            clone_settings(config).map_err(|e| crate::engine::server::start_failure(config, e))?
        else {
            let base = |url: &str, databases: &[String]| {
                data_digest::postgres_digests(url, databases, Reach::Base { clones: false })
            };
            return data_digest::of_server(config, dataset, base).map(Some);
        };
        let with_clones = |url: &str, databases: &[String]| {
            let mut digests = data_digest::postgres_digests_with_server(url, databases)?;
            data_digest::postgres_file_settings(&settings.admin_url, &mut digests)?;
            Ok(digests)
        };
        data_digest::of_server(config, dataset, with_clones).map(Some)
    }

    fn load_target(&self) -> Option<Server> {
        Some(Server::Postgres)
    }
}

/// The clones' settings when the config names an administrator (`dataset.engine.admin_url_env`,
/// its URL read and registered with the scrubber): a clone's disk budget is
/// `execution.max_copy_bytes`, its deadline `execution.item_timeout_ms` when given, the rest
/// BIRD-Critic's evaluator's.
fn clone_settings(config: &Config) -> Result<Option<PgSettings>, StartError> {
    let Some(name) = &config.dataset.engine.admin_url_env else {
        return Ok(None);
    };
    let admin_url = crate::engine::server::read_env_url("admin_url_env", name)?;
    let defaults = PgSettings::new(admin_url);
    let deadline = config.execution.item_deadline(defaults.deadline);
    Ok(Some(PgSettings {
        disk_bytes: config.execution.max_copy_bytes,
        deadline,
        ..defaults
    }))
}
