//! PostgreSQL with state-changing items (`dataset.engine.admin_url_env`, issue 46): the
//! read-only engine ([`PostgresEngine`]: start-up checks, the hold on the base data and its
//! digests, the server claim) with one BIRD-Critic PostgreSQL run ([`PgRun`]) beside it, which
//! judges every item on a clone of its database and which the metrics reach through
//! [`Engine::live_judge`].
//!
//! The order matters. The run's templates are copied from the base databases at start-up,
//! before the engine holds them (`CREATE DATABASE ... TEMPLATE` refuses a source with a session
//! on it). When scoring ends the clones are dropped, each accounted for, before the claim is
//! checked ([`LiveJudge::finish`]), and the templates and roles once it is
//! ([`LiveJudge::close`]).

use crate::engine::exec::{Engine, ExecError, Limits, ResultTable};
use crate::engine::livesql::postgres::{PgRun, PgSettings};
use crate::engine::server::data_digest::{self, DataDigests};
use crate::engine::server::postgres::PostgresEngine;
use crate::engine::server::StartError;
use crate::engine::state::LiveJudge;
use std::path::Path;

/// The read-only engine and the run that judges the items on clones.
#[derive(Debug)]
pub struct WithClones {
    engine: PostgresEngine,
    run: PgRun,
    /// The administrator's URL, for the configuration files' entry of the digests.
    admin_url: String,
}

impl WithClones {
    /// Starts the run beside the started `engine`: its templates made from every db_id's
    /// database in `db_ids`, as the administrator `settings` names.
    pub fn start(
        engine: PostgresEngine,
        settings: PgSettings,
        db_ids: &std::collections::BTreeSet<String>,
    ) -> Result<Self, StartError> {
        let admin_url = settings.admin_url.clone();
        let run = PgRun::start(settings, db_ids).map_err(|e| {
            StartError::new(format!(
                "`dataset.engine.admin_url_env`: cannot prepare the items' clones: {e}"
            ))
        })?;
        Ok(WithClones {
            engine,
            run,
            admin_url,
        })
    }
}

impl Engine for WithClones {
    fn run(
        &self,
        db: &Path,
        sql: &str,
        limits: &Limits,
        with_columns: bool,
        most_rows: usize,
    ) -> Result<ResultTable, ExecError> {
        self.engine.run(db, sql, limits, with_columns, most_rows)
    }

    fn column_names(
        &self,
        db: &Path,
        sql: &str,
        limits: &Limits,
    ) -> Result<Vec<String>, ExecError> {
        self.engine.column_names(db, sql, limits)
    }

    /// The engine's hold and digests, with the server's configuration files.
    fn hold_data(&self) -> Result<Option<DataDigests>, String> {
        let mut digests = self.engine.hold_data()?.unwrap_or_default();
        data_digest::postgres_file_settings(&self.admin_url, &mut digests)?;
        Ok(Some(digests))
    }

    /// Closes the run (its templates and roles) first: the claim was checked.
    fn release_data(&self) -> Result<(), String> {
        self.run.close();
        self.engine.release_data()
    }

    fn claim_server(&self) -> Result<(), String> {
        self.engine.claim_server()
    }

    /// Drops the clones, each accounted for, then checks the claim.
    fn check_claim(&self) -> Result<(), String> {
        self.run.finish()?;
        self.engine.check_claim()
    }

    fn live_judge(&self) -> Option<&dyn LiveJudge> {
        Some(&self.run)
    }
}
