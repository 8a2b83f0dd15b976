//! The sound profile's gold twin: a fresh copy of the item's template on which the item's
//! preprocess and its gold ran, on a connection of their own. Whatever the gold decides reads
//! this copy, never the prediction's: a Query item's result, `post_state`, the post-state of a
//! Query item whose prediction wrote, and every gold statement the item's test cases run
//! (`ex_base`'s `sol_sqls`, `execute_queries(sol_sqls, ...)`: the runner marks them, see
//! `helpers.py`), so what the prediction wrote on its own copy cannot change what the gold
//! answers (red team round 26, win B). The twin is made once per item, the first time a check
//! needs it.

use super::copy::ItemCopy;
use super::python::{self, ItemDb, TestsError};
use super::session::{Ran, Rows, Session};
use super::{open, Profile, Settings};
use crate::input::livesql::LiveItem;
use serde_json::Value as Json;
use std::cell::OnceCell;
use std::path::Path;

/// A copy of the template after the item's preprocess and gold.
pub struct GoldTwin {
    copy: ItemCopy,
    ran: Ran,
}

impl GoldTwin {
    /// The file the twin was copied from.
    pub fn template(&self) -> &Path {
        self.copy.template()
    }

    /// A new connection to the twin (the gold's TEMP objects gone), with the item's budget.
    pub fn open(&self, settings: &Settings) -> Result<Session, TestsError> {
        open(self.copy.path(), &settings.budget, Profile::Sound)
    }

    /// A new connection to the twin, or a fault naming `purpose` when the gold did not run
    /// cleanly there: there is nothing to compare with.
    pub fn checked(
        &self,
        item: &LiveItem,
        purpose: &str,
        settings: &Settings,
    ) -> Result<Session, TestsError> {
        if self.ran.exec_error || self.ran.timeout {
            return Err(TestsError::Fault(format!(
                "the gold of {} does not run for {purpose}: {}",
                item.instance_id, self.ran.message
            )));
        }
        self.open(settings)
    }

    /// The gold's last rows, or a fault when it gives none (a sound judge has nothing to
    /// compare with).
    pub fn rows(&self, item: &LiveItem) -> Result<&Rows, TestsError> {
        match (self.ran.exec_error || self.ran.timeout, &self.ran.rows) {
            (false, Some(rows)) => Ok(rows),
            _ => Err(TestsError::Fault(format!(
                "the gold of {} gives no result: {}",
                item.instance_id, self.ran.message
            ))),
        }
    }
}

/// An item's gold twin, made the first time a check asks for it.
pub struct LazyTwin<'a> {
    item: &'a LiveItem,
    template: &'a Path,
    settings: &'a Settings,
    twin: OnceCell<GoldTwin>,
}

impl<'a> LazyTwin<'a> {
    /// The twin of `item`'s `template`, not made yet.
    pub fn new(item: &'a LiveItem, template: &'a Path, settings: &'a Settings) -> Self {
        LazyTwin {
            item,
            template,
            settings,
            twin: OnceCell::new(),
        }
    }

    /// The twin, made now if it was not: a fresh copy, the preprocess (errors ignored) and the
    /// gold on one connection, then closed.
    pub fn get(&self) -> Result<&GoldTwin, TestsError> {
        if let Some(twin) = self.twin.get() {
            return Ok(twin);
        }
        let copy = ItemCopy::make(self.template).map_err(TestsError::Fault)?;
        let session = open(copy.path(), &self.settings.budget, Profile::Sound)?;
        session.execute_queries(&self.item.preprocess_sql)?;
        let ran = session.execute_queries(&self.item.sol_sql)?;
        drop(session);
        Ok(self.twin.get_or_init(|| GoldTwin { copy, ran }))
    }
}

/// What the sound profile's test cases reach: the prediction's copy (a new connection to it),
/// and, for a request the runner marks `"side": "gold"` (it runs the gold's statements), a new
/// connection to the gold's twin, opened on the first such request.
pub struct Sides<'a> {
    prediction: &'a Session,
    twin: &'a LazyTwin<'a>,
    gold: OnceCell<Session>,
}

impl<'a> Sides<'a> {
    /// The two sides of one item's test cases.
    pub fn new(prediction: &'a Session, twin: &'a LazyTwin<'a>) -> Self {
        Sides {
            prediction,
            twin,
            gold: OnceCell::new(),
        }
    }

    /// The item's deadline (the prediction's session's), nanoseconds on `now_nanos`' clock.
    pub fn deadline(&self) -> u64 {
        self.prediction.deadline()
    }

    /// The connection to the gold's twin the test cases use.
    fn gold(&self) -> Result<&Session, TestsError> {
        if let Some(session) = self.gold.get() {
            return Ok(session);
        }
        let session = self.twin.get()?.open(self.twin.settings)?;
        Ok(self.gold.get_or_init(|| session))
    }
}

impl ItemDb for Sides<'_> {
    fn answer(&self, op: &str, request: &Json) -> Result<Json, TestsError> {
        match request["side"].as_str() {
            None | Some("prediction") => python::answer(self.prediction, op, request),
            Some("gold") => python::answer(self.gold()?, op, request),
            Some(other) => Err(TestsError::Fault(format!("an unknown side `{other}`"))),
        }
    }
}
