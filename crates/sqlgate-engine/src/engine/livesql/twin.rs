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
use std::cell::OnceCell;
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

/// What the sound profile's test cases reach: the prediction's copy (a new connection to it),
/// and, for a request the runner marks `"side": "gold"` (it runs the gold's statements) or whose
/// statements are the gold's alone ([`Sides::gold_text`]), a new connection to the gold's twin,
/// opened on the first such request.
pub struct Sides<'a> {
    prediction: &'a Session,
    twin: &'a LazyTwin<'a>,
    gold: OnceCell<Session>,
    /// The gold's statements, normalised ([`normalised`]).
    gold_texts: BTreeSet<String>,
    /// The prediction's statements, normalised.
    prediction_texts: BTreeSet<String>,
}

impl<'a> Sides<'a> {
    /// The two sides of one item's test cases, `prediction` the statements judged.
    pub fn new(session: &'a Session, twin: &'a LazyTwin<'a>, prediction: &[String]) -> Self {
        let texts = |sqls: &[String]| sqls.iter().map(|sql| normalised(sql)).collect();
        Sides {
            prediction: session,
            twin,
            gold: OnceCell::new(),
            gold_texts: texts(&twin.item.sol_sql),
            prediction_texts: texts(prediction),
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
        match (self.to_gold(op, request)?, op) {
            (false, _) => python::answer(self.prediction, op, request),
            // A plan comparison runs statements of both sides: on a scratch copy of the twin.
            (true, "cost") => {
                let (_copy, scratch) = self.twin.get()?.scratch(self.twin.settings)?;
                python::answer(&scratch, op, request)
            }
            (true, _) => python::answer(self.gold()?, op, request),
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
