//! What an engine is to the rest of sqlgate, as a plugin: its [`EngineFactory`], listed in
//! [`crate::engine::registry::ENGINES`] under the name `dataset.engine.kind` gives it: the SQL
//! dialect its queries are read in, the keys of `dataset.engine` it reads (checked when the
//! config loads), how it starts (its start-up checks included), the digests of its data, its
//! `sqlgate load` target, and who breaks a tie at a LIMIT cut.

use crate::engine::exec::{Engine, Limits};
use crate::engine::load::types::Server;
use crate::engine::server::data_digest::DataDigests;
use crate::input::config::{Config, DatabaseFiles, EngineConfig};
use crate::input::dataset::Dataset;
use crate::sql::features::FeatureDialect;
use crate::util::error::InputError;
use std::sync::Arc;

/// One engine, as everything outside the engine's files sees it.
pub trait EngineFactory: Sync {
    /// Its name, as `dataset.engine.kind` writes it (an [`crate::input::config::EngineName`]).
    fn name(&self) -> &'static str;
    /// The dialect its queries are written in (features, the probes of a query's cuts).
    fn dialect(&self) -> FeatureDialect;
    /// Whether a planner breaks a tie at a cut, one a pull request that prepares the server can
    /// steer (false where the trusted file and the engine built into sqlgate decide).
    fn planner_breaks_ties(&self) -> bool;
    /// Whether the executor runs SQLite in-process on the benchmark's files
    /// (`dataset.databases`), which the test suites, ESM, ESM+ and the Spider 2.0 layout need;
    /// an engine of its own (the default) is started by [`EngineFactory::start`] and names each
    /// item's database by its db_id.
    fn reads_sqlite_files(&self) -> bool {
        false
    }
    /// The files an engine of its own on files reads under `dataset.databases`, one per db_id
    /// (their extension and the check of their first bytes); `None` (the default) for a server,
    /// and for SQLite, whose files [`EngineFactory::reads_sqlite_files`] says it reads.
    fn database_files(&self) -> Option<DatabaseFiles> {
        None
    }
    /// Checks the keys of `section` (`dataset.engine`) this engine reads or refuses, its
    /// `options` among them, when the config loads; the error names the key.
    fn check_keys(&self, section: &EngineConfig) -> Result<(), String>;
    /// Starts the engine for a run of `config` on `dataset` (its own keys are in
    /// `config.dataset.engine`), after its start-up checks, with a pool of at most `threads`
    /// sessions; `None` for an engine the executor runs in-process on the benchmark's files.
    /// Errors name the key and carry no secret.
    fn start(
        &self,
        config: &Config,
        dataset: &Dataset,
        limits: &Limits,
        threads: usize,
    ) -> Result<Option<Arc<dyn Engine>>, InputError>;
    /// The digests of the data the run of `config` on `dataset` reads; `None` where the
    /// dataset's fingerprint covers the data (files).
    fn data_digests(
        &self,
        config: &Config,
        dataset: &Dataset,
    ) -> Result<Option<DataDigests>, InputError>;
    /// Where `sqlgate load` copies databases to; `None` for an engine that reads files.
    fn load_target(&self) -> Option<Server>;
}
