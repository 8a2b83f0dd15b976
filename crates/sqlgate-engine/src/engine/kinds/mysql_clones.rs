//! MariaDB / MySQL with state-changing items (`dataset.engine.admin_url_env`, issue 46): the
//! read-only engine ([`MysqlEngine`]: start-up checks, the hold on the base data and its
//! digests, the server claim) with one BIRD-Critic MySQL run ([`MyRun`]) beside it, which judges
//! every item on a clone of its database and which the metrics reach through
//! [`Engine::live_judge`].
//!
//! The order matters. At start-up every base database is checked as the administrator (what a
//! clone may copy: [`MyRun::check_bases`]), copying nothing. The run's templates are copied at
//! the first item (`WithMyClones::started`): in a run that holds the data, after the engine
//! holds the base data ([`Engine::hold_data`]: its `LOCK TABLES ... READ` lets other sessions
//! read, so the templates are copies of exactly the data digested) and claims the server, so
//! the copy's sessions are counted as sqlgate's and no other session can alter a template
//! unseen between its copy and the claim. A command that judges items without holding the data
//! (`sqlgate audit`'s gold self-check) starts the run the same way.
use crate::engine::exec::{Engine, ExecError, Limits, ResultTable};
use crate::engine::livesql::mysql::{add_time_zones, clone_digests, MyRun, MySettings};
use crate::engine::server::data_digest::DataDigests;
use crate::engine::server::mysql::MysqlEngine;
use crate::engine::server::StartError;
use crate::engine::state::{Fault, LiveJudge, Verdict};
use crate::input::livesql::LiveItem;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Mutex, OnceLock, PoisonError};

/// The read-only engine and the run that judges the items on clones, made at the first item.
#[derive(Debug)]
pub struct WithMyClones {
    engine: MysqlEngine,
    settings: MySettings,
    db_ids: BTreeSet<String>,
    url: String,
    run: OnceLock<MyRun>,
    /// Held while the run starts, so that it starts once.
    starting: Mutex<()>,
}

impl WithMyClones {
    /// Checks, as the administrator `settings` names, that every db_id's database in `db_ids`
    /// can be copied; the run itself starts once the data are held. `url` is the reader's, for
    /// the clone entries of the digests.
    pub fn start(
        engine: MysqlEngine,
        settings: MySettings,
        db_ids: BTreeSet<String>,
        url: String,
    ) -> Result<Self, StartError> {
        MyRun::check_bases(&settings, &db_ids).map_err(|e| {
            StartError::new(format!(
                "`dataset.engine.admin_url_env`: cannot prepare the items' clones: {e}"
            ))
        })?;
        Ok(WithMyClones {
            engine,
            settings,
            db_ids,
            url,
            run: OnceLock::new(),
            starting: Mutex::default(),
        })
    }

    /// The run, started (its templates copied from the base databases) at the first item.
    fn started(&self) -> Result<&MyRun, Fault> {
        if let Some(run) = self.run.get() {
            return Ok(run);
        }
        let _one = self.starting.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(run) = self.run.get() {
            return Ok(run);
        }
        let run = MyRun::start(self.settings.clone(), &self.db_ids)
            .map_err(|e| format!("cannot prepare the items' clones: {e}"))?;
        Ok(self.run.get_or_init(|| run))
    }
}

impl Engine for WithMyClones {
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

    /// The engine's hold and digests, with the clone entries.
    fn hold_data(&self) -> Result<Option<DataDigests>, String> {
        let mut digests = self.engine.hold_data()?.unwrap_or_default();
        let databases: Vec<String> = self.db_ids.iter().cloned().collect();
        digests.extend(clone_digests(&self.url, &databases)?);
        add_time_zones(&self.settings.admin_url, &mut digests)?;
        Ok(Some(digests))
    }

    /// Closes the run (its templates) first: the claim was checked.
    fn release_data(&self) -> Result<(), String> {
        LiveJudge::close(self);
        self.engine.release_data()
    }

    fn claim_server(&self) -> Result<(), String> {
        self.engine.claim_server()
    }

    /// Drops the clones and their users, then checks the claim.
    fn check_claim(&self) -> Result<(), String> {
        LiveJudge::finish(self)?;
        self.engine.check_claim()
    }

    fn live_judge(&self) -> Option<&dyn LiveJudge> {
        Some(self)
    }
}

/// The run's judge, started at the first item.
impl LiveJudge for WithMyClones {
    fn judge(&self, item: &LiveItem, prediction: Option<&[String]>) -> Result<Verdict, Fault> {
        LiveJudge::judge(self.started()?, item, prediction)
    }

    fn finish(&self) -> Result<(), Fault> {
        self.run.get().map_or(Ok(()), LiveJudge::finish)
    }

    fn close(&self) {
        if let Some(run) = self.run.get() {
            run.close();
        }
    }
}
