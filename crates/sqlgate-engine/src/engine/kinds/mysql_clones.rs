//! MariaDB / MySQL with state-changing items (`dataset.engine.admin_url_env`, issue 46): the
//! read-only engine ([`MysqlEngine`]) with one BIRD-Critic MySQL run ([`MyRun`]) beside it
//! ([`WithClones`]), which judges every item on a clone of its database.
//!
//! The order matters. At start-up every base database is checked as the administrator (what a
//! clone may copy: [`MyRun::check_bases`]), copying nothing. The run's templates are copied at
//! the first item (`LazyMyRun::started`): in a run that holds the data, after the engine
//! holds the base data (`Engine::hold_data`: its `LOCK TABLES ... READ` lets other sessions
//! read, so the templates are copies of exactly the data digested) and claims the server, so
//! the copy's sessions are counted as sqlgate's and no other session can alter a template
//! unseen between its copy and the claim. A command that judges items without holding the data
//! (`sqlgate audit`'s gold self-check) starts the run the same way.
use crate::engine::kinds::with_clones::{CloneRun, WithClones};
use crate::engine::livesql::mysql::{add_admin_entries, clone_digests, MyRun, MySettings};
use crate::engine::server::data_digest::DataDigests;
use crate::engine::server::mysql::MysqlEngine;
use crate::engine::server::StartError;
use crate::engine::state::{Fault, LiveJudge, Profile, Verdict};
use crate::input::livesql::LiveItem;
use std::collections::BTreeSet;
use std::sync::{Mutex, OnceLock, PoisonError};

/// The run that judges the items on clones, started at the first item.
#[derive(Debug)]
pub struct LazyMyRun {
    settings: MySettings,
    db_ids: BTreeSet<String>,
    url: String,
    run: OnceLock<MyRun>,
    /// Held while the run starts, so that it starts once.
    starting: Mutex<()>,
}

/// Checks, as the administrator `settings` names, that every db_id's database in `db_ids` can be
/// copied, and pairs the started `engine` with the run, which itself starts once the data are
/// held. `url` is the reader's, for the clone entries of the digests.
pub fn start(
    engine: MysqlEngine,
    settings: MySettings,
    db_ids: BTreeSet<String>,
    url: String,
) -> Result<WithClones<MysqlEngine, LazyMyRun>, StartError> {
    MyRun::check_bases(&settings, &db_ids).map_err(|e| {
        StartError::new(format!(
            "`dataset.engine.admin_url_env`: cannot prepare the items' clones: {e}"
        ))
    })?;
    let run = LazyMyRun {
        settings,
        db_ids,
        url,
        run: OnceLock::new(),
        starting: Mutex::default(),
    };
    Ok(WithClones::new(engine, run))
}

impl LazyMyRun {
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

/// A clone's prediction reads each database's definition, the named time zones and stopword
/// tables, which the
/// engine's digests leave out: the run adds them.
impl CloneRun for LazyMyRun {
    fn add_digests(&self, digests: &mut DataDigests) -> Result<(), String> {
        let databases: Vec<String> = self.db_ids.iter().cloned().collect();
        add_clone_entries(&self.url, &self.settings.admin_url, &databases, digests)
    }
}

/// Adds the clone entry of each database in `databases` (read as the reader `url`) and the
/// entries read as the administrator `admin_url` (the named time zones, the tables InnoDB may
/// take stopwords from) to `digests`: what a run on clones records
/// beyond the read-only engine's digests, at the hold and for the baseline alike.
pub(crate) fn add_clone_entries(
    url: &str,
    admin_url: &str,
    databases: &[String],
    digests: &mut DataDigests,
) -> Result<(), String> {
    digests.extend(clone_digests(url, databases)?);
    add_admin_entries(admin_url, digests)
}

/// The run's judge, started at the first item.
impl LiveJudge for LazyMyRun {
    fn judge(
        &self,
        item: &LiveItem,
        prediction: Option<&[String]>,
        profile: Profile,
    ) -> Result<Verdict, Fault> {
        LiveJudge::judge(self.started()?, item, prediction, profile)
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
