//! What an engine is to the rest of sqlgate, as a plugin: its [`EngineFactory`], listed in
//! [`crate::engine::registry::ENGINES`]: the SQL dialect its queries are read in, how it starts
//! (its start-up checks included), the digests of its data, its `sqlgate load` target, and who
//! breaks a tie at a LIMIT cut.

use crate::engine::exec::{Engine, Limits};
use crate::engine::load::types::Server;
use crate::engine::server::data_digest::DataDigests;
use crate::engine::server::{ServerSettings, StartError};
use crate::input::config::EngineKind;
use crate::sql::features::FeatureDialect;
use std::sync::Arc;

/// One engine kind, as everything outside the engine's files sees it.
pub trait EngineFactory: Sync {
    /// The kind `dataset.engine.kind` names.
    fn kind(&self) -> EngineKind;
    /// The dialect its queries are written in (features, the probes of a query's cuts).
    fn dialect(&self) -> FeatureDialect;
    /// Whether a planner breaks a tie at a cut, one a pull request that prepares the server can
    /// steer (false where the trusted file and the engine built into sqlgate decide).
    fn planner_breaks_ties(&self) -> bool;
    /// Starts the engine on the server `settings` names, after its start-up checks; `None` for
    /// an engine the executor runs in-process on the benchmark's files.
    fn start(
        &self,
        settings: ServerSettings,
        limits: &Limits,
    ) -> Result<Option<Arc<dyn Engine>>, StartError>;
    /// Starts the engine on the benchmark's files (`dataset.databases`); `None` for an engine
    /// that runs on a server, or on SQLite files (the executor's default engine).
    fn start_on_files(&self, _limits: &Limits) -> Option<Arc<dyn Engine>> {
        None
    }
    /// The digests of the data in `databases` on the server at `url`; `None` where the dataset's
    /// fingerprint covers the data (files).
    fn data_digests(&self, url: &str, databases: &[String]) -> Result<Option<DataDigests>, String>;
    /// Where `sqlgate load` copies databases to; `None` for an engine that reads files.
    fn load_target(&self) -> Option<Server>;
}
