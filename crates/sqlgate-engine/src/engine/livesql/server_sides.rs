//! The two sides of a server item's test cases under `bird_critic_sound` (PostgreSQL and
//! MariaDB / MySQL alike): each request routed to the prediction's clone or the item's twin, on a
//! new session to it, and the Query data check after each request on the prediction's clone.

use super::python::{ItemDb, TestsError};
use super::query_check::QueryCheck;
use super::routing::GoldTexts;
use serde_json::Value as Json;

/// One side of a server item's sound test cases (the prediction's clone, or the item's twin
/// clone, made the first time a request asks for it): each request on a new session to its
/// clone, the one before closed, so no TEMP object, setting, prepared statement or open
/// transaction a request made is there for the next (red team round 28).
pub trait ServerSide {
    /// The reply to `request` on a new session to this side's clone; a stop or a fault when
    /// there is none.
    fn fresh_answer(&self, op: &str, request: &Json) -> Result<Json, TestsError>;
}

/// The two sides of a server item's test cases under `bird-critic-sound`: a request marked
/// `"side": "gold"` (it runs the gold's statements), or unmarked and of the gold's words alone
/// ([`GoldTexts::is_gold`]), goes to the twin, any other to the prediction's clone, followed by
/// the Query data check ([`QueryCheck`]).
pub struct ServerSides<'a> {
    prediction: &'a dyn ServerSide,
    twin: &'a dyn ServerSide,
    texts: GoldTexts,
    check: &'a QueryCheck<'a>,
}

impl<'a> ServerSides<'a> {
    /// The sides of an item whose gold is `gold`, judging `predicted`, with its data `check`.
    pub(crate) fn new(
        (prediction, twin): (&'a dyn ServerSide, &'a dyn ServerSide),
        (gold, predicted): (&[String], &[String]),
        check: &'a QueryCheck<'a>,
    ) -> Self {
        ServerSides {
            prediction,
            twin,
            texts: GoldTexts::new(gold, predicted),
            check,
        }
    }
}

impl ItemDb for ServerSides<'_> {
    fn answer(&self, op: &str, request: &Json) -> Result<Json, TestsError> {
        let gold = match request["side"].as_str() {
            None => self.texts.is_gold(op, request),
            Some("prediction") => false,
            Some("gold") => true,
            Some(other) => return Err(TestsError::Fault(format!("an unknown side `{other}`"))),
        };
        match gold {
            true => self.twin.fresh_answer(op, request),
            false => {
                let reply = self.prediction.fresh_answer(op, request)?;
                self.check.check("in its test cases")?;
                Ok(reply)
            }
        }
    }
}
