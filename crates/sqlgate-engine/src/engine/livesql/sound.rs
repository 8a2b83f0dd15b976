//! `livesql-sound`: the official checks without the official quirks. The preprocess runs on a
//! connection of its own, closed before the prediction, which runs once on a new one (an item
//! whose checks run on new connections is not judged when its preprocess may leave state on its
//! connection, `stateless`, or fails, nor when its gold runs otherwise on the preprocess's own
//! connection, `gold_effect`);
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
use super::gold_effect::{self, Gold};
use super::gold_twin::{self, LazyTwin};
use super::post;
use super::python::{self, Job, TestsError};
use super::session::{rows_json, Rows};
use super::stateless::{self, preprocess_bound, Engine};
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
    if let Some(unjudged) = refused(item, Engine::Sqlite) {
        return Ok(unjudged);
    }
    let preprocessed = open(copy.path(), &settings.budget, Profile::Sound)?;
    let ran = preprocessed.execute_queries(&item.preprocess_sql)?;
    if let Some(unjudged) = preprocess_failed(item, Engine::Sqlite, ran.failure()) {
        return Ok(unjudged);
    }
    let budget = preprocessed.remaining();
    drop(preprocessed);
    let twin = LazyTwin::new(item, template, settings, post::contents);
    if let Some(unjudged) = gold_apart(item, &twin, template, settings)? {
        return Ok(unjudged);
    }
    let session = open(copy.path(), &budget, Profile::Sound)?;
    let query = session.reads_only(&item.sol_sql);
    let before = session.writes();
    let ran = session.execute_queries(prediction)?;
    let mut verdict = Verdict::from_ran(&ran);
    if !verdict.success {
        return Ok(verdict);
    }
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

/// The verdict of an item with a preprocess whose gold runs otherwise on the preprocess's own
/// connection (a copy of its own, the official flow) than on the twin, where it runs on a new
/// one as the prediction does ([`gold_effect`]); `None` for any other item.
fn gold_apart(
    item: &LiveItem,
    twin: &LazyTwin<'_>,
    template: &Path,
    settings: &Settings,
) -> Result<Option<Verdict>, TestsError> {
    if !preprocess_bound(item, Engine::Sqlite) {
        return Ok(None);
    }
    let shared = gold_twin::gold_ran(item, (template, settings), Gold::Shared, post::contents)?;
    let (Some(shared), Some(alone)) = (shared.effect(), twin.get()?.effect()) else {
        return Err(TestsError::Fault("the gold's run was not read".into()));
    };
    Ok(gold_effect::why_unjudged(shared, alone).map(|why| unjudged(&why)))
}

/// The failed verdict of an item not judged under the sound profiles (`why`): its preprocess
/// may leave state on its session ([`refused`]), a preprocess statement failed
/// ([`preprocess_failed`]), or its gold runs otherwise on the preprocess's session than on a new
/// one ([`gold_effect`]); the new sessions the prediction and its checks run on do not have that
/// state. Failed for every prediction, the gold too, so its baseline records it failing and no
/// pull request can regress or improve on it.
pub(super) fn unjudged(why: &str) -> Verdict {
    Verdict {
        success: false,
        message: format!(
            "not judged under the sound profile, whose prediction and checks run on new \
             sessions without the preprocess's: {why}"
        ),
        ..Verdict::default()
    }
}

/// The not-judged verdict of a [`preprocess_bound`] item whose preprocess may leave state on its
/// session on `engine` ([`stateless::refusal`]: a statement outside the whitelist); `None` for
/// any other item. Read from the texts, before anything runs.
pub(super) fn refused(item: &LiveItem, engine: Engine) -> Option<Verdict> {
    if !preprocess_bound(item, engine) {
        return None;
    }
    stateless::refusal(&item.preprocess_sql, engine).map(|why| unjudged(&why))
}

/// The not-judged verdict of a [`preprocess_bound`] item on `engine` whose preprocess failed
/// (`failure`: the error's text, `None` when every statement ran): a table it makes may then be
/// the database's own, whose triggers its `INSERT` ran.
pub(super) fn preprocess_failed(
    item: &LiveItem,
    engine: Engine,
    failure: Option<&str>,
) -> Option<Verdict> {
    let failure = failure.filter(|_| preprocess_bound(item, engine))?;
    Some(unjudged(&format!(
        "a preprocess statement failed ({})",
        failure.trim()
    )))
}

/// The verdict of a server item's outcome: a stop is a verdict (as the official evaluator's
/// kill of the task), a fault is not.
pub(super) fn verdict_of(outcome: Result<Verdict, TestsError>) -> Result<Verdict, super::Fault> {
    match outcome {
        Ok(verdict) => Ok(verdict),
        Err(TestsError::Stopped(stop)) => Ok(Verdict::stopped(Profile::BirdCritic, stop)),
        Err(TestsError::Fault(fault)) => Err(fault),
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
