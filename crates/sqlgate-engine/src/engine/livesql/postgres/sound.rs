//! `bird_critic_sound` on PostgreSQL (red team round 26, win C): the server evaluator's flow
//! (preprocess, prediction, the test cases with the official server arguments, clean-up) with
//! the gold kept out of the prediction's reach. The prediction's session is closed before the
//! test cases, which run on a new session to its clone (a `TEMP` relation, which PostgreSQL
//! searches before the schema's, is gone with the session that made it); every gold statement
//! they run (the runner marks them, `bird_critic_runner.py`) runs on the item's twin clone: a
//! second clone of the template on which the item's preprocess and gold ran, as that clone's own
//! role, made the first time a test asks for the gold's side, watched like the prediction's and
//! dropped and made again after the item like it (so the pools hold at most two clones per
//! worker, and `finish` accounts for the twins as for any clone). Always the slow path: a new
//! session could not see the fast path's uncommitted work.
//!
//! Rounds 27 and 28 (`server_sides.rs`): every test-case request runs on a new session to
//! its side, closed after it, so nothing of one request's session (a TEMP object, a variable, a
//! prepared statement, an open transaction) is there for the next; an unmarked request of the
//! gold's words alone goes to the twin (`routing.rs`, shared with SQLite); and for an item whose
//! gold writes nothing, the prediction's clone is compared with the twin after the prediction
//! and after each request on its clone (`query_check.rs`, the Query data check).
//!
//! Round 40: the clone's collected statistics are closed to its role (`statistics.rs`). Rounds
//! 41 to 44: the preprocess's session is closed before the prediction, which runs on a new one,
//! as the twin's gold does; an item whose gold runs otherwise on the preprocess's own session (a
//! second twin, reset before the prediction's clone is taken) is not judged
//! (`gold_effect.rs`): without that session's state it would be another item.

use super::item::ItemSession;
use super::watch::Watch;
use super::{pg_text, PgRun, Slot, HELPERS_PG};
use crate::engine::livesql::gold_effect::{self, Gold, Read};
use crate::engine::livesql::python::{self, ItemDb, TestsError};
use crate::engine::livesql::query_check::{self, CloneContents, Contents, QueryCheck, OWN};
use crate::engine::livesql::server_sides::{ServerSide, ServerSides};
use crate::engine::livesql::sound::{
    add_post_failures, preprocess_failed, refused, unjudged, verdict_of,
};
use crate::engine::livesql::stateless::{preprocess_bound, Engine};
use crate::engine::livesql::{Fault, Profile, Verdict};
use crate::engine::server::catalog_rows::{self, CloneRows};
use crate::engine::server::data_digest::{postgres_digests, Reach};
use crate::input::livesql::LiveItem;
use serde_json::Value as Json;
use sqlparser::dialect::PostgreSqlDialect;
use std::cell::OnceCell;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Why an item stopped, shared by its sessions and their watchdogs.
type Stop = Arc<Mutex<Option<String>>>;

impl PgRun {
    /// One `bird_critic_sound` verdict on a fresh clone of the item's database (and, if a test
    /// asks for the gold's side, a twin clone), both reset after it. An item with a preprocess
    /// and test cases first has its gold run on the preprocess's own session, on a twin reset
    /// before the prediction's clone is taken, to compare with the twin's ([`gold_effect`]).
    pub(super) fn judge_sound(
        &self,
        item: &LiveItem,
        prediction: &[String],
    ) -> Result<Verdict, Fault> {
        if let Some(unjudged) = refused(item, Engine::Postgres) {
            return Ok(unjudged);
        }
        let observed = preprocess_bound(item, Engine::Postgres);
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
        self.count(2);
        let twin = Twin::new(self, item, (deadline, &stop), Gold::Alone { observed });
        let outcome = self.run_sound(
            &slot,
            &twin,
            item,
            prediction,
            shared.as_ref(),
            (deadline, stop),
        );
        let twin_slot = twin.finish();
        let reset = self.reset(&item.db_id, slot);
        let twin_reset = twin_slot.map_or(Ok(()), |slot| self.reset(&item.db_id, slot));
        reset.and(twin_reset)?;
        verdict_of(outcome)
    }

    /// What the gold does on a twin where it runs on the preprocess's own session (the official
    /// flow), under a deadline of its own (the item's starts after it), the twin reset after.
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

    /// The item on `slot`'s clone (its collected statistics closed to its role), watched until
    /// it ends.
    fn run_sound(
        &self,
        slot: &Slot,
        twin: &Twin<'_>,
        item: &LiveItem,
        prediction: &[String],
        shared: Option<&Read>,
        (deadline, stop): (Instant, Stop),
    ) -> Result<Verdict, TestsError> {
        self.close_statistics(slot).map_err(TestsError::Fault)?;
        let (session, admin) = self.session(slot, &stop)?;
        let watch = Watch::start(admin, self, slot, deadline, Arc::clone(&stop));
        let on = (slot, twin, shared);
        let result = self.sound_on(session, on, item, prediction, (deadline, &stop));
        if let Some(admin) = watch.finish() {
            self.give_back(admin);
        }
        result
    }

    /// A new session of `slot`'s role sharing `stop`, and the administrator's session that set
    /// it up.
    fn session(
        &self,
        slot: &Slot,
        stop: &Stop,
    ) -> Result<(ItemSession, postgres::Client), TestsError> {
        let (mut session, admin) = self.open(slot, false).map_err(TestsError::Fault)?;
        session.stop = Arc::clone(stop);
        Ok((session, admin))
    }

    /// A new session of `slot`'s role sharing `stop`, its administrator's session given back.
    fn reopen(&self, slot: &Slot, stop: &Stop) -> Result<ItemSession, TestsError> {
        let (session, admin) = self.session(slot, stop)?;
        self.give_back(admin);
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
        let ran = session.execute_queries(&item.preprocess_sql)?;
        if let Some(unjudged) = preprocess_failed(item, Engine::Postgres, ran.failure()) {
            session.execute_queries(&item.clean_up_sql)?;
            return Ok(unjudged);
        }
        let session = match item.test_cases.is_empty() {
            true => session,
            false => {
                drop(session);
                if let Some(why) = twin.differs_from(shared)? {
                    self.reopen(slot, stop)?
                        .execute_queries(&item.clean_up_sql)?;
                    return Ok(unjudged(&why));
                }
                self.reopen(slot, stop)?
            }
        };
        let clones = Clones {
            run: self,
            slot,
            twin,
        };
        let check = QueryCheck::new(&clones, &item.sol_sql, &PostgreSqlDialect {});
        if !item.test_cases.is_empty() {
            check.start()?;
        }
        let ran = session.execute_queries(prediction)?;
        let mut verdict = Verdict {
            success: !ran.exec_error && !ran.timeout,
            execution_error: ran.exec_error,
            timeout_error: ran.timeout,
            message: ran.message.clone(),
            ..Verdict::default()
        };
        if !verdict.success || item.test_cases.is_empty() {
            session.execute_queries(&item.clean_up_sql)?;
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
            HELPERS_PG,
            (item, prediction, rows),
            Profile::BirdCriticSound,
            &self.settings.python,
            deadline,
        )?;
        verdict.add_tests(&results);
        add_post_failures(&mut verdict, check.failures());
        self.reopen(slot, stop)?
            .execute_queries(&item.clean_up_sql)?;
        Ok(verdict)
    }
}

/// The prediction's clone during the tests: each request on a new session of its role.
struct Checks<'a> {
    run: &'a PgRun,
    slot: &'a Slot,
    stop: &'a Stop,
}

impl ServerSide for Checks<'_> {
    fn fresh_answer(&self, op: &str, request: &Json) -> Result<Json, TestsError> {
        self.run.reopen(self.slot, self.stop)?.answer(op, request)
    }
}

/// What the Query data check compares: the prediction's clone and the twin.
struct Clones<'a> {
    run: &'a PgRun,
    slot: &'a Slot,
    twin: &'a Twin<'a>,
}

impl CloneContents for Clones<'_> {
    fn started(&self) -> Result<Contents, TestsError> {
        self.run.contents(self.slot, Sessions::Open)
    }

    fn prediction(&self) -> Result<Contents, TestsError> {
        self.run.contents(self.slot, Sessions::Ended)
    }

    fn twin(&self) -> Result<Contents, TestsError> {
        self.run.contents(self.twin.made()?, Sessions::Ended)
    }
}

/// Whether a clone is read while its role's session is open, or once its sessions have ended
/// (waited for, so none of their temporary objects is left).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sessions {
    Open,
    Ended,
}

impl PgRun {
    /// The contents of `slot`'s clone, read by the administrator on sessions of its own (ones
    /// of sqlgate's as the digest opens them, and counted in the clone's tally): its data
    /// digests, and every catalog row, which they do not hold ([`PgRun::levers`]).
    fn contents(&self, slot: &Slot, sessions: Sessions) -> Result<Contents, TestsError> {
        let fault = |e: String| TestsError::Fault(format!("reading a clone's contents: {e}"));
        let database = slot.database.clone();
        self.tally.on(&slot.database);
        let mut digests =
            postgres_digests(&self.settings.admin_url, &[database], Reach::Clone).map_err(fault)?;
        let rows = self.levers(slot, sessions).map_err(fault)?;
        digests.insert(format!("{}:levers", slot.database), rows.parts.join("; "));
        digests.insert(format!("{}:{OWN}", slot.database), rows.own);
        Ok(query_check::contents(digests, &slot.database))
    }

    /// Every catalog row of `slot`'s clone ([`catalog_rows::postgres_clone_rows`]: what else
    /// than the rows can change a read there, a view, a function, row-level security, a
    /// collation, a comment, an access list, a column's flags, every kind at once: red team
    /// rounds 33 to 38), read once the role's sessions have ended (`sessions`).
    fn levers(&self, slot: &Slot, sessions: Sessions) -> Result<CloneRows, String> {
        let mut admin = self.admin(Some(&slot.database))?;
        let text = |e: postgres::Error| pg_text(&e);
        if sessions == Sessions::Ended {
            catalog_rows::await_sessions_end(&mut admin, &slot.role)?;
        }
        let query = match self.clone_rows.get() {
            Some(query) => query,
            None => {
                let made = catalog_rows::postgres_clone_rows_query(&mut admin).map_err(text)?;
                self.clone_rows.get_or_init(|| made)
            }
        };
        catalog_rows::postgres_clone_rows(&mut admin, query, &slot.role).map_err(text)
    }
}

/// An item's twin clone: taken from the pool, its preprocess and gold run, the first time a
/// test asks for the gold's side (or, when the gold's effect is read, before the prediction).
struct Twin<'a> {
    run: &'a PgRun,
    item: &'a LiveItem,
    deadline: Instant,
    stop: Stop,
    gold: Gold,
    /// The twin's slot, once taken (reset after the item even when making the twin failed).
    slot: OnceCell<Slot>,
    /// The twin's watchdog, once its preprocess and gold ran.
    ready: OnceCell<Watch>,
    /// What the gold did, when it is read.
    effect: OnceCell<Read>,
}

impl<'a> Twin<'a> {
    /// The twin of `item`, not made yet, watched until `deadline` and stopped with `stop`.
    fn new(
        run: &'a PgRun,
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

    /// Takes the twin's slot, closes its collected statistics as the prediction's are, and runs
    /// the preprocess (errors ignored) and the gold ([`Twin::gold_ran`]), all watched.
    fn make(&self) -> Result<Watch, TestsError> {
        let taken = self
            .run
            .acquire(&self.item.db_id)
            .map_err(TestsError::Fault)?;
        let slot = self.slot.get_or_init(|| taken);
        self.run.close_statistics(slot).map_err(TestsError::Fault)?;
        let (session, admin) = self.run.session(slot, &self.stop)?;
        let watch = Watch::start(admin, self.run, slot, self.deadline, Arc::clone(&self.stop));
        let made = self.gold_ran(slot, session);
        match made {
            Ok(()) => Ok(watch),
            Err(error) => {
                if let Some(admin) = watch.finish() {
                    self.run.give_back(admin);
                }
                Err(error)
            }
        }
    }

    /// The preprocess (errors ignored) on `session`, then the gold on it or on a new session
    /// ([`Gold`]), the clone's contents read before and after the gold when its effect is read.
    fn gold_ran(&self, slot: &Slot, session: ItemSession) -> Result<(), TestsError> {
        session.execute_queries(&self.item.preprocess_sql)?;
        let before = match self.gold.observed() {
            true => Some(gold_effect::before_gold(
                self.run.contents(slot, Sessions::Open),
            )?),
            false => None,
        };
        let session = match self.gold {
            Gold::Shared => session,
            Gold::Alone { .. } => {
                drop(session);
                self.run.reopen(slot, &self.stop)?
            }
        };
        let mut notes = Vec::new();
        let noted = before.is_some().then_some(&mut notes);
        session.execute_noting(&self.item.sol_sql, noted)?;
        drop(session);
        if let Some(before) = before {
            let outcome = notes.join("; ");
            let after = || self.run.contents(slot, Sessions::Ended);
            let effect = gold_effect::read(outcome, before, after)?;
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

    /// Ends the twin's watch; its slot, if one was taken, to reset.
    fn finish(self) -> Option<Slot> {
        if let Some(watch) = self.ready.into_inner() {
            if let Some(admin) = watch.finish() {
                self.run.give_back(admin);
            }
        }
        self.slot.into_inner()
    }
}

impl ServerSide for Twin<'_> {
    fn fresh_answer(&self, op: &str, request: &Json) -> Result<Json, TestsError> {
        let slot = self.made()?;
        self.run.reopen(slot, &self.stop)?.answer(op, request)
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
