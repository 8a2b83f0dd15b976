//! `bird_critic_sound` on MariaDB / MySQL (red team round 26, win C): the server evaluator's flow
//! (preprocess, prediction, the test cases with the official server arguments, clean-up) with
//! the gold kept out of the prediction's reach. The prediction's session is closed before the
//! test cases, which run on a new session to its clone (a `TEMPORARY` table, which shadows the
//! base table of its name, is gone with the session that made it); every gold statement they
//! run (the runner marks them, `bird_critic_runner.py`) runs on the item's twin clone: a second
//! clone of the template on which the item's preprocess and gold ran, as that clone's own user,
//! made the first time a test asks for the gold's side, watched like the prediction's and
//! dropped and rebuilt after the item like it (the pools hold at most two clones per worker;
//! `finish` drops the twins with every clone). Each clone user has `MAX_USER_CONNECTIONS 2`:
//! its sessions follow one another (the one before closed first), and the watchdogs connect as
//! the administrator, so two always suffice.

use super::watch::Watch;
use super::{ItemSession, MyRun, Slot, HELPERS_MYSQL};
use crate::engine::livesql::python::{self, GoldSide, ItemDb, ServerSides, TestsError};
use crate::engine::livesql::{Fault, Profile, Verdict};
use crate::input::livesql::LiveItem;
use serde_json::Value as Json;
use std::cell::OnceCell;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Why an item stopped, shared by its sessions and their watchdogs.
type Stop = Arc<Mutex<Option<String>>>;

impl MyRun {
    /// Judges one item under `profile`: `bird-critic` as [`MyRun::judge`], `bird-critic-sound`
    /// with the tests on a new session and their gold on a twin clone; any other profile is not
    /// judged on a server (a fault).
    pub fn judge_as(
        &self,
        item: &LiveItem,
        prediction: Option<&[String]>,
        profile: Profile,
    ) -> Result<Verdict, Fault> {
        match (profile, prediction) {
            (Profile::BirdCritic, _) => self.judge(item, prediction),
            (Profile::BirdCriticSound, None) => Ok(Verdict::no_prediction()),
            (Profile::BirdCriticSound, Some(prediction)) => self.judge_sound(item, prediction),
            (other, _) => Err(format!(
                "`{}` is not judged on MariaDB / MySQL",
                other.name()
            )),
        }
    }

    /// One `bird_critic_sound` verdict on a fresh clone of the item's database (and, if a test
    /// asks for the gold's side, a twin clone), both rebuilt after it.
    pub(super) fn judge_sound(
        &self,
        item: &LiveItem,
        prediction: &[String],
    ) -> Result<Verdict, Fault> {
        let slot = self.acquire(&item.db_id)?;
        let deadline = Instant::now() + self.settings.deadline;
        let stop = Stop::default();
        let twin = Twin {
            run: self,
            item,
            deadline,
            stop: Arc::clone(&stop),
            slot: OnceCell::new(),
            ready: OnceCell::new(),
        };
        let outcome = self.run_sound(&slot, &twin, item, prediction, (deadline, stop));
        let twin_slot = twin.finish();
        let reset = self.reset(&item.db_id, slot);
        let twin_reset = twin_slot.map_or(Ok(()), |slot| self.reset(&item.db_id, slot));
        reset.and(twin_reset)?;
        match outcome {
            Ok(verdict) => Ok(verdict),
            Err(TestsError::Stopped(stop)) => Ok(Verdict::stopped(Profile::BirdCritic, stop)),
            Err(TestsError::Fault(fault)) => Err(fault),
        }
    }

    /// The item on `slot`'s clone, watched until it ends.
    fn run_sound(
        &self,
        slot: &Slot,
        twin: &Twin<'_>,
        item: &LiveItem,
        prediction: &[String],
        (deadline, stop): (Instant, Stop),
    ) -> Result<Verdict, TestsError> {
        let session = self.session(slot, &stop)?;
        let watch = Watch::start(self, slot, deadline, Arc::clone(&stop))?;
        let result = self.sound_on(session, slot, twin, item, prediction, (deadline, &stop));
        watch.finish();
        result
    }

    /// A new session of `slot`'s user sharing `stop`.
    fn session(&self, slot: &Slot, stop: &Stop) -> Result<ItemSession, TestsError> {
        let mut session = self.open(slot).map_err(TestsError::Fault)?;
        session.stop = Arc::clone(stop);
        Ok(session)
    }

    /// Preprocess and prediction on `session`; then, if they ran cleanly and the item has test
    /// cases, `session` closed and the tests on a new one (their gold on the twin); the clean-up
    /// on the last session.
    fn sound_on(
        &self,
        session: ItemSession,
        slot: &Slot,
        twin: &Twin<'_>,
        item: &LiveItem,
        prediction: &[String],
        (deadline, stop): (Instant, &Stop),
    ) -> Result<Verdict, TestsError> {
        session.execute_queries(&item.preprocess_sql, false)?;
        let ran = session.execute_queries(prediction, true)?;
        let mut verdict = Verdict {
            success: !ran.exec_error,
            execution_error: ran.exec_error,
            message: ran.message.clone(),
            ..Verdict::default()
        };
        if !verdict.success || item.test_cases.is_empty() {
            session.execute_queries(&item.clean_up_sql, false)?;
            return Ok(verdict);
        }
        drop(session);
        let checks = self.session(slot, stop)?;
        let sides = ServerSides {
            prediction: &checks,
            twin,
        };
        let rows = ran.rows.clone().unwrap_or(Json::Null);
        let results = python::bird_critic_tests(
            &sides,
            HELPERS_MYSQL,
            (item, prediction, rows),
            Profile::BirdCriticSound,
            &self.settings.python,
            deadline,
        )?;
        verdict.add_tests(&results);
        checks.execute_queries(&item.clean_up_sql, false)?;
        Ok(verdict)
    }
}

/// An item's twin clone: taken from the pool, its preprocess and gold run, the first time a
/// test asks for the gold's side.
struct Twin<'a> {
    run: &'a MyRun,
    item: &'a LiveItem,
    deadline: Instant,
    stop: Stop,
    /// The twin's slot, once taken (rebuilt after the item even when making the twin failed).
    slot: OnceCell<Slot>,
    /// The session the tests' gold runs on, and the twin's watchdog.
    ready: OnceCell<(ItemSession, Watch)>,
}

impl Twin<'_> {
    /// Takes the twin's slot, runs the preprocess (errors ignored) and the gold on a session of
    /// its own, closes it, and opens the session the tests' gold runs on, all watched.
    fn make(&self) -> Result<(ItemSession, Watch), TestsError> {
        let taken = self
            .run
            .acquire(&self.item.db_id)
            .map_err(TestsError::Fault)?;
        let slot = self.slot.get_or_init(|| taken);
        let session = self.run.session(slot, &self.stop)?;
        let watch = Watch::start(self.run, slot, self.deadline, Arc::clone(&self.stop))?;
        let made = self.gold_ran(session, slot);
        match made {
            Ok(gold) => Ok((gold, watch)),
            Err(error) => {
                watch.finish();
                Err(error)
            }
        }
    }

    /// The preprocess (errors ignored) and the gold on `session`, closed, then the session the
    /// tests' gold runs on.
    fn gold_ran(&self, session: ItemSession, slot: &Slot) -> Result<ItemSession, TestsError> {
        session.execute_queries(&self.item.preprocess_sql, false)?;
        session.execute_queries(&self.item.sol_sql, true)?;
        drop(session);
        self.run.session(slot, &self.stop)
    }

    /// Ends the twin's watch and sessions; its slot, if one was taken, to rebuild.
    fn finish(self) -> Option<Slot> {
        if let Some((session, watch)) = self.ready.into_inner() {
            drop(session);
            watch.finish();
        }
        self.slot.into_inner()
    }
}

impl GoldSide for Twin<'_> {
    fn gold(&self) -> Result<&dyn ItemDb, TestsError> {
        if let Some((session, _)) = self.ready.get() {
            return Ok(session);
        }
        if self.slot.get().is_some() {
            return Err(TestsError::Fault(format!(
                "the twin clone of {} could not be made",
                self.item.instance_id
            )));
        }
        let made = self.make()?;
        Ok(&self.ready.get_or_init(|| made).0)
    }
}
