//! The sound profile's gold twin: a fresh copy of the item's template on which the item's
//! preprocess and its gold ran, on a connection of their own. Whatever the gold decides reads
//! this copy, never the prediction's: a Query item's result, `post_state`, the post-state of a
//! Query item whose prediction wrote, and every gold statement the item's test cases run
//! (`ex_base`'s `sol_sqls`, `execute_queries(sol_sqls, ...)`: the runner marks them, see
//! `helpers.py`), so what the prediction wrote on its own copy cannot change what the gold
//! answers (red team round 26, win B). The twin is made once per item, the first time a check
//! needs it. A request the runner does not mark goes to the twin when its statements are, word
//! for word, the gold's and not the prediction's (a test that rebuilt the gold's text with a
//! Python operation the mark does not survive, red team round 27, win A); a plan comparison
//! that involves the gold runs on a scratch copy of the twin, so nothing of the prediction's
//! stays on the twin (round 27, win C). The twin itself is `gold_twin.rs`.

use super::gold_twin::LazyTwin;
use super::post;
use super::python::{self, ItemDb, TestsError};
use super::routing::GoldTexts;
use super::session::Session;
use super::{open, Profile};
use serde_json::Value as Json;
use std::cell::{Cell, RefCell};
use std::path::Path;

/// What the sound profile's test cases reach: the prediction's copy, and, for a request the
/// runner marks `"side": "gold"` (it runs the gold's statements) or whose statements are the
/// gold's alone ([`GoldTexts::is_gold`]), the gold's twin. Every request runs on a new connection
/// to its side, so no TEMP object or setting a request made (the prediction run again, a view
/// named after the gold's table) is there for the next one (red team round 28). For a Query
/// item (`unchanged`), a request on the prediction's copy that ran a statement that is not
/// read-only is followed by the exact comparison with the twin ([`post::unchanged_failures`]):
/// whatever a later request reads of the copy is what the twin holds, or the item fails.
pub struct Sides<'a> {
    copy: &'a Path,
    /// The last connection to the prediction's copy (its budget is the next one's).
    last: RefCell<Session>,
    /// Statements that are not read-only run on the prediction's copy by the requests so far.
    writes: Cell<u64>,
    unchanged: bool,
    /// What the Query item's comparisons found changed.
    changed: RefCell<Vec<String>>,
    twin: &'a LazyTwin<'a>,
    /// The gold's and the prediction's statements, for an unmarked request.
    texts: GoldTexts,
}

impl<'a> Sides<'a> {
    /// The two sides of one item's test cases: `session` a connection to the prediction's
    /// `copy`, `prediction` the statements judged, `unchanged` whether the item is a Query.
    pub fn new(
        (session, copy): (Session, &'a Path),
        twin: &'a LazyTwin<'a>,
        prediction: &[String],
        unchanged: bool,
    ) -> Self {
        Sides {
            copy,
            last: RefCell::new(session),
            writes: Cell::new(0),
            unchanged,
            changed: RefCell::default(),
            twin,
            texts: GoldTexts::new(&twin.item.sol_sql, prediction),
        }
    }

    /// The item's deadline, nanoseconds on `now_nanos`' clock.
    pub fn deadline(&self) -> u64 {
        self.last.borrow().deadline()
    }

    /// The last connection to the prediction's copy, and what the Query item's comparisons
    /// found changed.
    pub fn finish(self) -> (Session, Vec<String>) {
        (self.last.into_inner(), self.changed.into_inner())
    }

    /// `request` on a new connection to the prediction's copy, the Query item's comparison
    /// after it when it wrote.
    fn on_prediction(&self, op: &str, request: &Json) -> Result<Json, TestsError> {
        let budget = self.last.borrow().remaining();
        let session = open(self.copy, &budget, Profile::Sound)?;
        let answer = python::answer(&session, op, request)?;
        let wrote = session.writes();
        self.writes.set(self.writes.get() + wrote);
        if self.unchanged && wrote > 0 && self.changed.borrow().is_empty() {
            let failures = post::unchanged_failures(&session, self.twin, self.twin.settings)?;
            let later = failures
                .into_iter()
                .map(|why| format!("in its test cases: {why}"));
            self.changed.borrow_mut().extend(later);
        }
        self.last.replace(session);
        Ok(answer)
    }

    /// `request` on a new connection to the gold's twin, or for a plan comparison (which runs
    /// the statements of both sides) on a scratch copy of it.
    fn on_gold(&self, op: &str, request: &Json) -> Result<Json, TestsError> {
        let twin = self.twin.get()?;
        match op {
            "cost" => {
                let (_copy, scratch) = twin.scratch(self.twin.settings)?;
                python::answer(&scratch, op, request)
            }
            _ => python::answer(&twin.open(self.twin.settings)?, op, request),
        }
    }

    /// Whether `request` goes to the twin: marked so, or unmarked and the gold's text.
    fn to_gold(&self, op: &str, request: &Json) -> Result<bool, TestsError> {
        match request["side"].as_str() {
            Some("gold") => Ok(true),
            Some("prediction") => Ok(false),
            None => Ok(self.texts.is_gold(op, request)),
            Some(other) => Err(TestsError::Fault(format!("an unknown side `{other}`"))),
        }
    }
}

impl ItemDb for Sides<'_> {
    fn answer(&self, op: &str, request: &Json) -> Result<Json, TestsError> {
        match self.to_gold(op, request)? {
            true => self.on_gold(op, request),
            false => self.on_prediction(op, request),
        }
    }
}
