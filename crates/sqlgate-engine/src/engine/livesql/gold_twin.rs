//! The sound profile's gold twin itself (`twin.rs` routes the test cases' requests to it): a
//! fresh copy of the item's template on which the item's preprocess ran on a connection of its
//! own, then its gold on a new one (as the prediction runs), made the first time a check needs
//! it. For an item with a preprocess, the gold's effect is read there and on a copy where it
//! ran on the preprocess's own connection (the official flow), to compare (`gold_effect.rs`).

use super::copy::ItemCopy;
use super::gold_effect::{self, Gold, Read};
use super::python::TestsError;
use super::query_check::Contents;
use super::session::{Ran, Rows, Session};
use super::stateless::{preprocess_bound, Engine};
use super::{open, Profile, Settings};
use crate::input::livesql::LiveItem;
use std::cell::OnceCell;
use std::path::Path;

/// A copy of the template after the item's preprocess and gold.
pub struct GoldTwin {
    copy: ItemCopy,
    ran: Ran,
    /// What the gold did, read for an item with a preprocess.
    effect: Option<Read>,
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

    /// What the gold did there, read for an item with a preprocess.
    pub fn effect(&self) -> Option<&Read> {
        self.effect.as_ref()
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

/// How a copy's contents are read for the gold-effect comparison (`post::contents`, passed in:
/// `post` reads the twin, so the twin does not import it).
pub type Reader = fn(&Session) -> Result<Contents, TestsError>;

/// An item's gold twin, made the first time a check asks for it.
pub struct LazyTwin<'a> {
    /// The item.
    pub(super) item: &'a LiveItem,
    template: &'a Path,
    /// The item's settings.
    pub(super) settings: &'a Settings,
    read: Reader,
    twin: OnceCell<GoldTwin>,
}

impl<'a> LazyTwin<'a> {
    /// The twin of `item`'s `template`, not made yet, its contents read with `read`.
    pub fn new(
        item: &'a LiveItem,
        template: &'a Path,
        settings: &'a Settings,
        read: Reader,
    ) -> Self {
        LazyTwin {
            item,
            template,
            settings,
            read,
            twin: OnceCell::new(),
        }
    }

    /// The twin, made now if it was not: a fresh copy, the preprocess (errors ignored) on a
    /// connection of its own, then the gold on a new one ([`Gold::Alone`]), its effect read for
    /// an item with a preprocess.
    pub fn get(&self) -> Result<&GoldTwin, TestsError> {
        if let Some(twin) = self.twin.get() {
            return Ok(twin);
        }
        let observed = preprocess_bound(self.item, Engine::Sqlite);
        let gold = Gold::Alone { observed };
        let made = gold_ran(self.item, (self.template, self.settings), gold, self.read)?;
        Ok(self.twin.get_or_init(|| made))
    }
}

/// A fresh copy of `template` with `item`'s preprocess (errors ignored) and gold run (`gold`),
/// its contents read (`reader`) before and after the gold when its effect is read.
pub fn gold_ran(
    item: &LiveItem,
    (template, settings): (&Path, &Settings),
    gold: Gold,
    reader: Reader,
) -> Result<GoldTwin, TestsError> {
    let copy = ItemCopy::make(template).map_err(TestsError::Fault)?;
    let read = || reader(&open(copy.path(), &settings.budget, Profile::Sound)?);
    let session = open(copy.path(), &settings.budget, Profile::Sound)?;
    session.execute_queries(&item.preprocess_sql)?;
    let before = match gold.observed() {
        true => Some(gold_effect::before_gold(read())?),
        false => None,
    };
    let session = match gold {
        Gold::Shared => session,
        Gold::Alone { .. } => {
            let budget = session.remaining();
            drop(session);
            open(copy.path(), &budget, Profile::Sound)?
        }
    };
    let mut notes = Vec::new();
    let noted = before.is_some().then_some(&mut notes);
    let ran = session.execute_noting(&item.sol_sql, noted)?;
    drop(session);
    let effect = match before {
        Some(before) => Some(gold_effect::read(notes.join("; "), before, read)?),
        None => None,
    };
    Ok(GoldTwin { copy, ran, effect })
}
