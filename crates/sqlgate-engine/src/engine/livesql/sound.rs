//! `livesql-sound`: the official checks without the official quirks. The prediction runs once;
//! a Query item (no test cases) compares its last result with the gold's, run on a twin fresh
//! copy, without rewriting either text (numbers quantised half-up to 2 places from their
//! shortest decimal text, an integer equal to the same float, empty equal to empty, a set or,
//! with `conditions.order`, a list); the test cases of other items run on a new connection to
//! the prediction's copy, so a TEMP object the prediction left cannot answer them, and every gold
//! statement they run reads the gold's twin (`twin`); an item whose gold writes nothing (a Query)
//! fails when its prediction left the database changed; RETURNING works; the deadline is a
//! timeout, and no error text is reclassified. `bird-critic-sound` adds BIRD-Critic's two rules
//! ([`judge_bird_critic`]).

use super::cells::{cell, Cell};
use super::copy::ItemCopy;
use super::gold_twin::LazyTwin;
use super::post;
use super::python::{self, Job, TestsError};
use super::session::{rows_json, Rows, Session};
use super::twin::Sides;
use super::{open, Profile, Settings, Verdict};
use crate::input::livesql::LiveItem;
use std::collections::BTreeSet;
use std::path::Path;

/// One sound verdict; `copy` is the prediction's copy of `template`.
pub fn judge(
    item: &LiveItem,
    prediction: &[String],
    copy: &ItemCopy,
    template: &Path,
    settings: &Settings,
) -> Result<Verdict, TestsError> {
    let session = open(copy.path(), &settings.budget, Profile::Sound)?;
    session.execute_queries(&item.preprocess_sql)?;
    if let Some(unjudged) = temporary_objects_left(item, &session) {
        return Ok(unjudged);
    }
    let query = session.reads_only(&item.sol_sql);
    let before = session.writes();
    let ran = session.execute_queries(prediction)?;
    let mut verdict = Verdict::from_ran(&ran);
    if !verdict.success {
        return Ok(verdict);
    }
    let twin = LazyTwin::new(item, template, settings);
    if item.test_cases.is_empty() {
        compare_with_gold(&mut verdict, &ran.rows, item, &twin)?;
    }
    // A gold that writes nothing leaves the database as it found it; so must its prediction.
    let unchanged = query && session.writes() > before;
    if item.test_cases.is_empty() && item.post.is_empty() && !unchanged {
        return Ok(verdict);
    }
    let budget = session.remaining();
    drop(session);
    let checks = open(copy.path(), &budget, Profile::Sound)?;
    let mut post_failures = post::failures(&checks, item, &twin, unchanged, settings)?;
    let checks = match item.test_cases.is_empty() {
        true => checks,
        false => {
            let sides = Sides::new((checks, copy.path()), &twin, prediction, query);
            run_tests(&mut verdict, &sides, item, prediction, &ran.rows, settings)?;
            let (last, changed) = sides.finish();
            // A Query item's prediction run again by its tests must change nothing either.
            if post_failures.is_empty() {
                post_failures = changed;
            }
            last
        }
    };
    add_post_failures(&mut verdict, post_failures);
    checks.execute_queries(&item.clean_up_sql)?;
    Ok(verdict)
}

/// One `bird-critic-sound` verdict: [`judge`] with `conditions=` for every test, failed when the
/// item's `issue_sql`, judged the same way on a copy and a twin of its own, passes (an
/// `issue_sql` the deadline stops does not pass).
pub fn judge_bird_critic(
    item: &LiveItem,
    prediction: &[String],
    copy: &ItemCopy,
    template: &Path,
    settings: &Settings,
) -> Result<Verdict, TestsError> {
    let issue_passed = !item.issue_sql.is_empty() && issue_sql_passes(item, template, settings)?;
    let mut verdict = judge(item, prediction, copy, template, settings)?;
    if issue_passed {
        verdict.success = false;
        verdict.issue_sql_passed = true;
    }
    Ok(verdict)
}

/// Whether the item's `issue_sql` passes its checks on a fresh copy of `template`.
fn issue_sql_passes(
    item: &LiveItem,
    template: &Path,
    settings: &Settings,
) -> Result<bool, TestsError> {
    let issue_copy = ItemCopy::make(template).map_err(TestsError::Fault)?;
    match judge(item, &item.issue_sql, &issue_copy, template, settings) {
        Ok(verdict) => Ok(verdict.success),
        Err(TestsError::Stopped(_)) => Ok(false),
        Err(fault) => Err(fault),
    }
}

/// Fails `verdict` when the prediction's last rows differ from the gold's on its twin.
fn compare_with_gold(
    verdict: &mut Verdict,
    rows: &Option<Rows>,
    item: &LiveItem,
    twin: &LazyTwin<'_>,
) -> Result<(), TestsError> {
    let gold = twin.get()?.rows(item)?;
    let order = item.conditions.get("order").and_then(|o| o.as_bool()) == Some(true);
    if !same_result(rows, gold, order) {
        verdict.success = false;
        verdict.assertion_error = true;
        verdict.message = "the result differs from the gold's".into();
    }
    Ok(())
}

/// The item's test cases on `sides`, their failures added to `verdict`.
fn run_tests(
    verdict: &mut Verdict,
    sides: &Sides<'_>,
    item: &LiveItem,
    prediction: &[String],
    rows: &Option<Rows>,
    settings: &Settings,
) -> Result<(), TestsError> {
    let job = Job {
        tests: &item.test_cases,
        pass_conditions: settings.profile.bird_critic_rules(),
        conditions: &item.conditions,
        pred_sqls: prediction,
        sol_sqls: &item.sol_sql,
        pred_query_result: rows_json(rows),
        profile: settings.profile,
    };
    let results = python::run_with(
        sides,
        python::HELPERS,
        &job,
        &settings.python,
        sides.deadline(),
    )?;
    verdict.add_tests(&results);
    Ok(())
}

/// The verdict of an item whose checks run on a new session (test cases, post-conditions) while
/// its preprocess left objects in `session`'s temporary schema, read there
/// ([`Session::temporary_objects`], however the preprocess made them: red team rounds 41 to 43),
/// which that new session would not have, so the checks would judge another item; `None` for
/// any other item (one that made and dropped a staging table too).
fn temporary_objects_left(item: &LiveItem, session: &Session) -> Option<Verdict> {
    if item.test_cases.is_empty() && item.post.is_empty() {
        return None;
    }
    match session.temporary_objects() {
        Some(objects) if objects.is_empty() => None,
        Some(objects) => Some(unjudged(&format!("temporary objects {objects}"))),
        None => Some(unjudged("its temporary schema could not be read")),
    }
}

/// The failed verdict of an item not judged under the sound profiles because its preprocess
/// leaves state on its session (`what`: the statement, or what was read of the session), which
/// the new sessions its checks run on would not have.
pub(super) fn unjudged(what: &str) -> Verdict {
    Verdict {
        success: false,
        message: format!(
            "not judged under the sound profile: its preprocess leaves state on its session \
             ({what}), which the new sessions its checks run on would not have"
        ),
        ..Verdict::default()
    }
}

/// Fails `verdict` with the declarative checks' failures (after any test case's message).
pub(super) fn add_post_failures(verdict: &mut Verdict, failures: Vec<String>) {
    if failures.is_empty() {
        return;
    }
    let joined = failures.join("; ");
    verdict.success = false;
    verdict.assertion_error = true;
    verdict.message = match verdict.message.is_empty() {
        true => joined,
        false => format!("{}; {joined}", verdict.message),
    };
}

/// Whether the prediction's rows (`None`: no statement gave any) equal the gold's.
fn same_result(prediction: &Option<Rows>, gold: &Rows, order: bool) -> bool {
    let Some(prediction) = prediction else {
        return false;
    };
    let cells = |rows: &Rows| -> Vec<Vec<Cell>> {
        rows.iter()
            .map(|row| row.iter().map(cell).collect())
            .collect()
    };
    let (left, right) = (cells(prediction), cells(gold));
    match order {
        true => left == right,
        false => left.into_iter().collect::<BTreeSet<_>>() == right.into_iter().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::types::Value;

    #[test]
    fn empty_equals_empty_and_order_is_a_condition() {
        let rows =
            |values: &[i64]| -> Rows { values.iter().map(|v| vec![Value::Integer(*v)]).collect() };
        assert!(same_result(&Some(rows(&[])), &rows(&[]), false));
        assert!(same_result(&Some(rows(&[2, 1, 1])), &rows(&[1, 2]), false));
        assert!(!same_result(&Some(rows(&[2, 1])), &rows(&[1, 2]), true));
        assert!(!same_result(&None, &rows(&[]), false));
    }
}
