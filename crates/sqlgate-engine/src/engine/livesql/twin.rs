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
//! stays on the twin (round 27, win C).

use super::copy::ItemCopy;
use super::python::{self, ItemDb, TestsError};
use super::session::{Ran, Rows, Session};
use super::{open, Profile, Settings};
use crate::input::livesql::LiveItem;
use serde_json::Value as Json;
use std::cell::{Cell, OnceCell, RefCell};
use std::collections::BTreeSet;
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

/// A Query item's check of a connection to the prediction's copy: what differs from the twin.
pub type Unchanged<'a> = &'a dyn Fn(&Session) -> Result<Vec<String>, TestsError>;

/// What the sound profile's test cases reach: the prediction's copy, and, for a request the
/// runner marks `"side": "gold"` (it runs the gold's statements) or whose statements are the
/// gold's alone ([`Sides::gold_text`]), the gold's twin. Every request runs on a new connection
/// to its side, so no TEMP object or setting a request made (the prediction run again, a view
/// named after the gold's table) is there for the next one (red team round 28). For a Query
/// item, a request on the prediction's copy that ran a statement that is not read-only is
/// followed by its check ([`Unchanged`], the exact comparison with the twin): whatever a later
/// request reads of the copy is what the twin holds, or the item fails.
pub struct Sides<'a> {
    copy: &'a Path,
    /// The last connection to the prediction's copy (its budget is the next one's).
    last: RefCell<Session>,
    /// Statements that are not read-only run on the prediction's copy by the requests so far.
    writes: Cell<u64>,
    unchanged: Option<Unchanged<'a>>,
    /// What the Query item's comparisons found changed.
    changed: RefCell<Vec<String>>,
    twin: &'a LazyTwin<'a>,
    /// The gold's statements, normalised ([`normalised`]).
    gold_texts: BTreeSet<String>,
    /// The prediction's statements, normalised.
    prediction_texts: BTreeSet<String>,
}

impl<'a> Sides<'a> {
    /// The two sides of one item's test cases: `session` a connection to the prediction's
    /// `copy`, `prediction` the statements judged, `unchanged` a Query item's check.
    pub fn new(
        (session, copy): (Session, &'a Path),
        twin: &'a LazyTwin<'a>,
        prediction: &[String],
        unchanged: Option<Unchanged<'a>>,
    ) -> Self {
        let texts = |sqls: &[String]| sqls.iter().map(|sql| normalised(sql)).collect();
        Sides {
            copy,
            last: RefCell::new(session),
            writes: Cell::new(0),
            unchanged,
            changed: RefCell::default(),
            twin,
            gold_texts: texts(&twin.item.sol_sql),
            prediction_texts: texts(prediction),
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
        let check = self
            .unchanged
            .filter(|_| wrote > 0 && self.changed.borrow().is_empty());
        if let Some(check) = check {
            let failures = check(&session)?;
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

    /// Whether an unmarked request of `sqls` is the gold's: every statement is one of the
    /// gold's, once normalised, and one at least is not also the prediction's (a statement
    /// both share stays on the prediction's side, so a prediction cannot send its own
    /// statements to the twin by repeating the gold's).
    fn gold_text(&self, sqls: &[String]) -> bool {
        let texts: Vec<String> = sqls.iter().map(|sql| normalised(sql)).collect();
        !texts.is_empty()
            && texts.iter().all(|text| self.gold_texts.contains(text))
            && texts
                .iter()
                .any(|text| !self.prediction_texts.contains(text))
    }

    /// Whether `request` goes to the twin: marked so, or unmarked and the gold's text.
    fn to_gold(&self, op: &str, request: &Json) -> Result<bool, TestsError> {
        match request["side"].as_str() {
            Some("gold") => Ok(true),
            Some("prediction") => Ok(false),
            None => Ok(self.gold_text(&request_texts(op, request))),
            Some(other) => Err(TestsError::Fault(format!("an unknown side `{other}`"))),
        }
    }
}

/// The statements of a runner request (`exec`'s list, `query`'s one, `cost`'s two lists).
fn request_texts(op: &str, request: &Json) -> Vec<String> {
    let list = |key: &str| -> Vec<String> {
        serde_json::from_value(request[key].clone()).unwrap_or_default()
    };
    match op {
        "exec" => list("sqls"),
        "query" => request["sql"]
            .as_str()
            .map(str::to_string)
            .into_iter()
            .collect(),
        "cost" => [list("old"), list("new")].concat(),
        _ => Vec::new(),
    }
}

/// A statement's text as the gold's and the prediction's are matched: trimmed, without
/// trailing semicolons, whitespace runs as one space, ASCII letters in lower case.
fn normalised(sql: &str) -> String {
    let trimmed = sql
        .trim()
        .trim_end_matches(|c: char| c == ';' || c.is_whitespace());
    let words: Vec<&str> = trimmed.split_whitespace().collect();
    words.join(" ").to_ascii_lowercase()
}

impl ItemDb for Sides<'_> {
    fn answer(&self, op: &str, request: &Json) -> Result<Json, TestsError> {
        match self.to_gold(op, request)? {
            true => self.on_gold(op, request),
            false => self.on_prediction(op, request),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::normalised;

    #[test]
    fn statements_match_whatever_their_spacing_case_and_trailing_semicolons() {
        let gold = normalised("SELECT name,  gpa\nFROM students ;; ");
        assert_eq!(gold, "select name, gpa from students");
        assert_eq!(normalised(" select name, gpa from students"), gold);
        assert_ne!(normalised("SELECT name, gpa FROM students LIMIT 1"), gold);
    }
}
