//! MySQL / MariaDB as a plugin ([`crate::engine::server::mysql`]).

use crate::engine::exec::{Engine, Limits};
use crate::engine::kinds::mysql_clones;
use crate::engine::livesql::mysql::MySettings;
use crate::engine::load::types::Server;
use crate::engine::plugin::EngineFactory;
use crate::engine::server::data_digest::{self, DataDigests};
use crate::engine::server::mysql::MysqlEngine;
use crate::engine::server::StartError;
use crate::input::config::{Config, EngineConfig};
use crate::input::dataset::Dataset;
use crate::sql::features::FeatureDialect;
use crate::util::error::InputError;
use std::sync::Arc;

/// MySQL / MariaDB as a plugin (`kind: mysql`): a server the URL in `url_env` names, checked at
/// start, its data digested, loaded by `sqlgate load`, its planner breaking ties; with
/// `admin_url_env`, state-changing items judged on clones ([`mysql_clones`]).
pub struct MysqlFactory;

impl EngineFactory for MysqlFactory {
    fn name(&self) -> &'static str {
        "mysql"
    }

    fn dialect(&self) -> FeatureDialect {
        FeatureDialect::Mysql
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
        let (db_ids, url) = (
            settings.tables.keys().cloned().collect(),
            settings.url.clone(),
        );
        let engine = MysqlEngine::start(settings, limits).map_err(failure)?;
        match clones {
            Some(clones) => {
                let engine = mysql_clones::start(engine, clones, db_ids, url).map_err(failure)?;
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
            return data_digest::of_server(config, dataset, data_digest::mysql_digests).map(Some);
        };
        let with_clones = |url: &str, databases: &[String]| {
            let mut digests = data_digest::mysql_digests(url, databases)?;
            mysql_clones::add_clone_entries(url, &settings.admin_url, databases, &mut digests)?;
            Ok(digests)
        };
        data_digest::of_server(config, dataset, with_clones).map(Some)
    }

    fn load_target(&self) -> Option<Server> {
        Some(Server::Mysql)
    }
}

/// The clones' settings when the config names an administrator (`dataset.engine.admin_url_env`,
/// its URL read and registered with the scrubber): a clone's disk budget is
/// `execution.max_copy_bytes`, its deadline `execution.item_timeout_ms` when given, the rest
/// BIRD-Critic's evaluator's.
fn clone_settings(config: &Config) -> Result<Option<MySettings>, StartError> {
    let Some(name) = &config.dataset.engine.admin_url_env else {
        return Ok(None);
    };
    let admin_url = crate::engine::server::read_env_url("admin_url_env", name)?;
    let defaults = MySettings::new(admin_url);
    let deadline = config.execution.item_deadline(defaults.deadline);
    Ok(Some(MySettings {
        disk_bytes: config.execution.max_copy_bytes,
        deadline,
        ..defaults
    }))
}
