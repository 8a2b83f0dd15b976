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
//!
//! Rounds 27 and 28 (`server_sides.rs`): every test-case request runs on a new session to
//! its side, closed after it, so nothing of one request's session (a TEMP object, a variable, a
//! prepared statement, an open transaction) is there for the next; an unmarked request of the
//! gold's words alone goes to the twin (`routing.rs`, shared with SQLite); and for an item whose
//! gold writes nothing, the prediction's clone is compared with the twin after the prediction
//! and after each request on its clone (`query_check.rs`, the Query data check).
//!
//! Round 40: the clones' sequences are made uncached before they are read (`sequences.rs`).
//! Rounds 41 to 44: the preprocess's session is closed before the prediction, which runs on a
//! new one, as the twin's gold does; an item whose gold runs otherwise on the preprocess's own
//! session (a second twin, rebuilt before the prediction's clone is taken) is not judged
//! (`gold_effect.rs`): without that session's state (a variable, the last insert id, a pinned
//! clock, a temporary table) it would be another item.

use super::watch::Watch;
use super::{ident, my_text, ItemSession, MyRun, Slot, HELPERS_MYSQL};
use crate::engine::livesql::gold_effect::{self, Gold, Read};
use crate::engine::livesql::python::{self, ItemDb, TestsError};
use crate::engine::livesql::query_check::{self, CloneContents, Contents, QueryCheck, OWN};
use crate::engine::livesql::server_sides::{ServerSide, ServerSides};
use crate::engine::livesql::sound::{
    add_post_failures, preprocess_failed, refused, unjudged, verdict_of,
};
use crate::engine::livesql::stateless::{preprocess_bound, Engine};
use crate::engine::livesql::{Fault, Profile, Verdict};
use crate::engine::server::catalog_rows;
use crate::engine::server::data_digest::mysql_digests;
use crate::input::livesql::LiveItem;
use serde_json::Value as Json;
use sqlparser::dialect::MySqlDialect;
use std::cell::OnceCell;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Why an item stopped, shared by its sessions and their watchdogs.
type Stop = Arc<Mutex<Option<String>>>;

impl super::Ran {
    /// The error's text when a statement counted as failing (the solution's, or one run as
    /// such: the sound flow's preprocess), `None` when every one ran.
    fn failure(&self) -> Option<&str> {
        self.exec_error.then_some(self.message.as_str())
    }
}

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
    /// asks for the gold's side, a twin clone), both rebuilt after it. An item with a preprocess
    /// and test cases first has its gold run on the preprocess's own session, on a twin rebuilt
    /// before the prediction's clone is taken, to compare with the twin's ([`gold_effect`]).
    pub(super) fn judge_sound(
        &self,
        item: &LiveItem,
        prediction: &[String],
    ) -> Result<Verdict, Fault> {
        if let Some(unjudged) = refused(item, Engine::Mysql) {
            return Ok(unjudged);
        }
        let observed = preprocess_bound(item, Engine::Mysql);
        let shared = match observed {
            true => match self.shared_effect(item) {
                Ok(effect) => Some(effect),
                Err(error) => return verdict_of(Err(error)),
            },
            false => None,
        };
        let deadline = Instant::now() + self.settings.deadline;
        let stop = Stop::default();
        let slot = self.acquire(&item.db_id)?;
        let twin = Twin::new(self, item, (deadline, &stop), Gold::Alone { observed });
        let on = (&slot, &twin, shared.as_ref());
        let outcome = self.run_sound(on, item, prediction, (deadline, stop));
        let twin_slot = twin.finish();
        let reset = self.reset(&item.db_id, slot);
        let twin_reset = twin_slot.map_or(Ok(()), |slot| self.reset(&item.db_id, slot));
        reset.and(twin_reset)?;
        verdict_of(outcome)
    }

    /// What the gold does on a twin where it runs on the preprocess's own session (the official
    /// flow), under a deadline of its own (the item's starts after it), the twin rebuilt after.
    fn shared_effect(&self, item: &LiveItem) -> Result<Read, TestsError> {
        let deadline = Instant::now() + self.settings.deadline;
        let mut twin = Twin::new(self, item, (deadline, &Stop::default()), Gold::Shared);
        let made = twin.made().map(|_| ());
        let effect = twin.effect.take();
        if let Some(slot) = twin.finish() {
            self.reset(&item.db_id, slot).map_err(TestsError::Fault)?;
        }
        made?;
        effect.ok_or_else(|| TestsError::Fault("the gold's run was not read".into()))
    }

    /// The item on `slot`'s clone, watched until it ends.
    fn run_sound(
        &self,
        on: (&Slot, &Twin<'_>, Option<&Read>),
        item: &LiveItem,
        prediction: &[String],
        (deadline, stop): (Instant, Stop),
    ) -> Result<Verdict, TestsError> {
        let slot = on.0;
        let session = self.session(slot, &stop)?;
        let watch = Watch::start(self, slot, deadline, Arc::clone(&stop))?;
        let result = self.sound_on(session, on, item, prediction, (deadline, &stop));
        watch.finish();
        result
    }

    /// A new session of `slot`'s user sharing `stop`.
    fn session(&self, slot: &Slot, stop: &Stop) -> Result<ItemSession, TestsError> {
        let mut session = self.open(slot).map_err(TestsError::Fault)?;
        session.stop = Arc::clone(stop);
        Ok(session)
    }

    /// The preprocess on `session`; for an item with test cases, which run on new sessions,
    /// `session` closed, the item not judged when its gold ran otherwise there (`shared`) than on
    /// the twin, and the prediction on a new session (else on `session`, as the official
    /// evaluator runs it); then, if it ran cleanly and the item has test cases, the tests on new
    /// sessions (their gold on the twin); the clean-up on the last session.
    fn sound_on(
        &self,
        session: ItemSession,
        (slot, twin, shared): (&Slot, &Twin<'_>, Option<&Read>),
        item: &LiveItem,
        prediction: &[String],
        (deadline, stop): (Instant, &Stop),
    ) -> Result<Verdict, TestsError> {
        let ran = session.execute_queries(&item.preprocess_sql, true)?;
        if let Some(unjudged) = preprocess_failed(item, Engine::Mysql, ran.failure()) {
            session.execute_queries(&item.clean_up_sql, false)?;
            return Ok(unjudged);
        }
        let session = match item.test_cases.is_empty() {
            true => session,
            false => {
                drop(session);
                if let Some(why) = twin.differs_from(shared)? {
                    self.session(slot, stop)?
                        .execute_queries(&item.clean_up_sql, false)?;
                    return Ok(unjudged(&why));
                }
                self.session(slot, stop)?
            }
        };
        let clones = Clones {
            run: self,
            slot,
            twin,
        };
        let check = QueryCheck::new(&clones, &item.sol_sql, &MySqlDialect {});
        if !item.test_cases.is_empty() {
            check.start()?;
        }
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
        let checks = Checks {
            run: self,
            slot,
            stop,
        };
        check.check("after its statements")?;
        let sides = ServerSides::new((&checks, twin), (&item.sol_sql, prediction), &check);
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
        add_post_failures(&mut verdict, check.failures());
        self.session(slot, stop)?
            .execute_queries(&item.clean_up_sql, false)?;
        Ok(verdict)
    }
}

/// The prediction's clone during the tests: each request on a new session of its user (the
/// one before closed first).
struct Checks<'a> {
    run: &'a MyRun,
    slot: &'a Slot,
    stop: &'a Stop,
}

impl ServerSide for Checks<'_> {
    fn fresh_answer(&self, op: &str, request: &Json) -> Result<Json, TestsError> {
        self.run.session(self.slot, self.stop)?.answer(op, request)
    }
}

/// What the Query data check compares: the prediction's clone and the twin.
struct Clones<'a> {
    run: &'a MyRun,
    slot: &'a Slot,
    twin: &'a Twin<'a>,
}

/// Both clones have their sequences uncached before they are first read (`sequences.rs`): the
/// prediction's before its prediction (a lock the preprocess left on a sequence makes that a
/// fault, which fails the item), the twin before it is compared.
impl CloneContents for Clones<'_> {
    fn started(&self) -> Result<Contents, TestsError> {
        self.run.uncache_sequences(self.slot)?;
        self.run.contents(self.slot)
    }

    fn prediction(&self) -> Result<Contents, TestsError> {
        self.run.contents(self.slot)
    }

    fn twin(&self) -> Result<Contents, TestsError> {
        let twin = self.twin.made()?;
        self.run.uncache_sequences(twin)?;
        self.run.contents(twin)
    }
}

impl MyRun {
    /// The contents of `slot`'s clone, read by the administrator: its data digests, every
    /// `information_schema` row about it, which they do not hold, and its own times
    /// ([`MyRun::levers`]).
    fn contents(&self, slot: &Slot) -> Result<Contents, TestsError> {
        let fault = |e: String| TestsError::Fault(format!("reading a clone's contents: {e}"));
        let database = slot.database.clone();
        let mut digests = mysql_digests(&self.settings.admin_url, &[database]).map_err(fault)?;
        let (levers, own) = self.levers(slot).map_err(fault)?;
        digests.insert(format!("{}:levers", slot.database), levers);
        digests.insert(format!("{}:{OWN}", slot.database), own);
        Ok(query_check::contents(digests, &slot.database))
    }

    /// Every `information_schema` row about `slot`'s clone
    /// ([`catalog_rows::mysql_clone_rows`]: what else than the rows can change a read there, a
    /// view, a routine, an invisible column, a comment, a collation, a foreign key, every kind
    /// at once: red team rounds 32 to 38), as one line, and the clone's own times and history
    /// periods.
    fn levers(&self, slot: &Slot) -> Result<(String, String), String> {
        let mut admin = self.admin()?;
        self.sql(&mut admin, &format!("USE {}", ident(&slot.database)))?;
        let rows = catalog_rows::mysql_clone_rows(&mut admin, &slot.database, &slot.user)
            .map_err(|e| my_text(&e))?;
        Ok((rows.parts.join("; "), rows.own))
    }
}

/// An item's twin clone: taken from the pool, its preprocess and gold run, the first time a
/// test asks for the gold's side (or, when the gold's effect is read, before the prediction).
struct Twin<'a> {
    run: &'a MyRun,
    item: &'a LiveItem,
    deadline: Instant,
    stop: Stop,
    gold: Gold,
    /// The twin's slot, once taken (rebuilt after the item even when making the twin failed).
    slot: OnceCell<Slot>,
    /// The twin's watchdog, once its preprocess and gold ran.
    ready: OnceCell<Watch>,
    /// What the gold did, when it is read.
    effect: OnceCell<Read>,
}

impl<'a> Twin<'a> {
    /// The twin of `item`, not made yet, watched until `deadline` and stopped with `stop`.
    fn new(
        run: &'a MyRun,
        item: &'a LiveItem,
        (deadline, stop): (Instant, &Stop),
        gold: Gold,
    ) -> Self {
        Twin {
            run,
            item,
            deadline,
            stop: Arc::clone(stop),
            gold,
            slot: OnceCell::new(),
            ready: OnceCell::new(),
            effect: OnceCell::new(),
        }
    }

    /// Takes the twin's slot and runs the preprocess (errors ignored) and the gold
    /// ([`Twin::gold_ran`]), all watched.
    fn make(&self) -> Result<Watch, TestsError> {
        let taken = self
            .run
            .acquire(&self.item.db_id)
            .map_err(TestsError::Fault)?;
        let slot = self.slot.get_or_init(|| taken);
        let session = self.run.session(slot, &self.stop)?;
        let watch = Watch::start(self.run, slot, self.deadline, Arc::clone(&self.stop))?;
        let made = self.gold_ran(slot, session);
        match made {
            Ok(()) => Ok(watch),
            Err(error) => {
                watch.finish();
                Err(error)
            }
        }
    }

    /// The preprocess (errors ignored) on `session`, then the gold on it or on a new session
    /// ([`Gold`]), the clone's contents read before and after the gold when its effect is read
    /// (its sequences uncached first, as the Query data check reads a twin).
    fn gold_ran(&self, slot: &Slot, session: ItemSession) -> Result<(), TestsError> {
        session.execute_queries(&self.item.preprocess_sql, false)?;
        let read = || {
            self.run.uncache_sequences(slot)?;
            self.run.contents(slot)
        };
        let before = match self.gold.observed() {
            true => Some(gold_effect::before_gold(read())?),
            false => None,
        };
        let session = match self.gold {
            Gold::Shared => session,
            Gold::Alone { .. } => {
                drop(session);
                self.run.session(slot, &self.stop)?
            }
        };
        let mut notes = Vec::new();
        let noted = before.is_some().then_some(&mut notes);
        session.execute_noting(&self.item.sol_sql, true, noted)?;
        drop(session);
        if let Some(before) = before {
            let outcome = notes.join("; ");
            let effect = gold_effect::read(outcome, before, read)?;
            self.effect.get_or_init(|| effect);
        }
        Ok(())
    }

    /// Why the item is not judged, its gold's run on the preprocess's own session (`shared`,
    /// when it was read) compared with this twin's, made now; `None` when it was not read or
    /// ran the same ([`gold_effect::why_unjudged`]).
    fn differs_from(&self, shared: Option<&Read>) -> Result<Option<String>, TestsError> {
        let Some(shared) = shared else {
            return Ok(None);
        };
        self.made()?;
        let alone = self.effect.get().ok_or_else(|| self.unmade())?;
        Ok(gold_effect::why_unjudged(shared, alone))
    }

    /// Ends the twin's watch; its slot, if one was taken, to rebuild.
    fn finish(self) -> Option<Slot> {
        if let Some(watch) = self.ready.into_inner() {
            watch.finish();
        }
        self.slot.into_inner()
    }
}

impl ServerSide for Twin<'_> {
    fn fresh_answer(&self, op: &str, request: &Json) -> Result<Json, TestsError> {
        let slot = self.made()?;
        self.run.session(slot, &self.stop)?.answer(op, request)
    }
}

impl Twin<'_> {
    /// The twin's slot, its preprocess and gold run now if they were not.
    fn made(&self) -> Result<&Slot, TestsError> {
        match (self.ready.get(), self.slot.get()) {
            (Some(_), Some(slot)) => Ok(slot),
            (None, None) => {
                let watch = self.make()?;
                self.ready.get_or_init(|| watch);
                self.slot.get().ok_or_else(|| self.unmade())
            }
            _ => Err(self.unmade()),
        }
    }

    /// The fault of a twin that could not be made.
    fn unmade(&self) -> TestsError {
        TestsError::Fault(format!(
            "the twin clone of {} could not be made",
            self.item.instance_id
        ))
    }
}
