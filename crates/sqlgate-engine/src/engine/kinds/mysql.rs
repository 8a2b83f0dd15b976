//! MySQL / MariaDB as a plugin ([`crate::engine::server::mysql`]).

use crate::engine::exec::{Engine, Limits};
use crate::engine::plugin::EngineFactory;
use crate::engine::server::mysql::MysqlEngine;
use crate::engine::server::{ServerSettings, StartError};
use std::sync::Arc;
/// MySQL / MariaDB as a plugin: a server the URL names, checked at start,
/// its data digested, loaded by `sqlgate load`, its planner breaking ties.
pub struct MysqlFactory;

impl EngineFactory for MysqlFactory {
    fn kind(&self) -> crate::input::config::EngineKind {
        crate::input::config::EngineKind::Mysql
    }

    fn dialect(&self) -> crate::sql::features::FeatureDialect {
        crate::sql::features::FeatureDialect::Mysql
    }

    fn planner_breaks_ties(&self) -> bool {
        true
    }

    fn start(
        &self,
        settings: ServerSettings,
        limits: &Limits,
    ) -> Result<Option<Arc<dyn Engine>>, StartError> {
        Ok(Some(Arc::new(MysqlEngine::start(settings, limits)?)))
    }

    fn data_digests(
        &self,
        url: &str,
        databases: &[String],
    ) -> Result<Option<crate::engine::server::data_digest::DataDigests>, String> {
        crate::engine::server::data_digest::mysql_digests(url, databases).map(Some)
    }

    fn load_target(&self) -> Option<crate::engine::load::types::Server> {
        Some(crate::engine::load::types::Server::Mysql)
    }
}
