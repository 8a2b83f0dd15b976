//! The sound profile's gold twin itself (`twin.rs` routes the test cases' requests to it): a
//! fresh copy of the item's template on which the item's preprocess and its gold ran, on a
//! connection of their own, made the first time a check needs it.

use super::copy::ItemCopy;
use super::python::TestsError;
use super::session::{Ran, Rows, Session};
use super::{open, Profile, Settings};
use crate::input::livesql::LiveItem;
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

    /// A scratch copy of the twin and a connection to it, dropped after one use: what runs there
    /// (a plan comparison's statements, the prediction's among them) never reaches the twin.
    pub fn scratch(&self, settings: &Settings) -> Result<(ItemCopy, Session), TestsError> {
        let copy = ItemCopy::make(self.copy.path()).map_err(TestsError::Fault)?;
        let session = open(copy.path(), &settings.budget, Profile::Sound)?;
        Ok((copy, session))
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
    /// The item.
    pub(super) item: &'a LiveItem,
    template: &'a Path,
    /// The item's settings.
    pub(super) settings: &'a Settings,
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
