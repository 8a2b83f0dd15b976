//! A server's read-only engine with a run beside it that judges state-changing items on clones
//! of its databases (`dataset.engine.admin_url_env`, issue 46): one wrapper for every server
//! kind, so that the order of the hold, the claim and the clean-up is written once.
//!
//! The engine keeps the start-up checks, the hold on the base data and its digests, and the
//! server claim; the run ([`CloneRun`]) adds its own entries to the hold's digests, is what the
//! metrics reach through [`Engine::live_judge`], drops its clones (each accounted for) before
//! the claim is checked ([`LiveJudge::finish`]) and the rest it made once it is
//! ([`LiveJudge::close`]).

use crate::engine::exec::{Engine, ExecError, Limits, ResultTable};
use crate::engine::server::data_digest::DataDigests;
use crate::engine::state::LiveJudge;
use std::path::Path;

/// What a server kind runs beside its read-only engine to judge items on clones.
pub trait CloneRun: LiveJudge + std::fmt::Debug {
    /// Adds what the clones read beyond the engine's digests (server state a clone's prediction
    /// can see) to the digests taken inside the hold.
    fn add_digests(&self, digests: &mut DataDigests) -> Result<(), String>;
}

/// The read-only engine and the run that judges the items on clones.
#[derive(Debug)]
pub struct WithClones<E, C> {
    engine: E,
    clones: C,
}

impl<E: Engine, C: CloneRun> WithClones<E, C> {
    /// Pairs a started `engine` with the run `clones` beside it.
    pub fn new(engine: E, clones: C) -> Self {
        WithClones { engine, clones }
    }
}

impl<E: Engine, C: CloneRun> Engine for WithClones<E, C> {
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

    /// The engine's hold and digests, with the run's entries.
    fn hold_data(&self) -> Result<Option<DataDigests>, String> {
        let mut digests = self.engine.hold_data()?.unwrap_or_default();
        self.clones.add_digests(&mut digests)?;
        Ok(Some(digests))
    }

    /// Closes the run (all it made) first: the claim was checked.
    fn release_data(&self) -> Result<(), String> {
        self.clones.close();
        self.engine.release_data()
    }

    fn claim_server(&self) -> Result<(), String> {
        self.engine.claim_server()
    }

    /// Drops the clones, each accounted for, then checks the claim.
    fn check_claim(&self) -> Result<(), String> {
        self.clones.finish()?;
        self.engine.check_claim()
    }

    fn live_judge(&self) -> Option<&dyn LiveJudge> {
        Some(&self.clones)
    }
}
