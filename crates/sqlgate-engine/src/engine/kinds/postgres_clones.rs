//! PostgreSQL with state-changing items (`dataset.engine.admin_url_env`, issue 46): the
//! read-only engine ([`PostgresEngine`]) with one BIRD-Critic PostgreSQL run ([`PgRun`]) beside
//! it ([`WithClones`]).
//!
//! The order matters. The run's templates are copied from the base databases at start-up,
//! before the engine holds them (`CREATE DATABASE ... TEMPLATE` refuses a source with a session
//! on it).

use crate::engine::kinds::with_clones::{CloneRun, WithClones};
use crate::engine::livesql::postgres::{PgRun, PgSettings};
use crate::engine::server::data_digest::{self, DataDigests};
use crate::engine::server::postgres::PostgresEngine;
use crate::engine::server::StartError;
use std::collections::BTreeSet;

/// Starts the run beside the started `engine`: its templates made from every db_id's database
/// in `db_ids`, as the administrator `settings` names.
pub fn start(
    engine: PostgresEngine,
    settings: PgSettings,
    db_ids: &BTreeSet<String>,
) -> Result<WithClones<PostgresEngine, PgRun>, StartError> {
    let run = PgRun::start(settings, db_ids).map_err(|e| {
        StartError::new(format!(
            "`dataset.engine.admin_url_env`: cannot prepare the items' clones: {e}"
        ))
    })?;
    Ok(WithClones::new(engine, run))
}

/// On clones, a prediction reads the server's configuration files' settings, which the
/// engine's digests leave out: the run adds them, read as the administrator.
impl CloneRun for PgRun {
    fn add_digests(&self, digests: &mut DataDigests) -> Result<(), String> {
        data_digest::postgres_file_settings(self.admin_url(), digests)
    }
}
