//! State-changing SQL (issue 46): LiveSQLBench-style items judged on a private copy of their
//! SQLite database each, by the item's test cases after the prediction ran.
//!
//! Four profiles: [`Profile::Official`] reproduces the mini_dev `live_sql_bench_sqlite`
//! evaluator (with its two fixes) verdict for verdict, each item on a fresh copy;
//! [`Profile::BirdCritic`] its descendant in BIRD-Critic; [`Profile::Sound`] fixes their
//! semantic quirks (`sound`), and [`Profile::BirdCriticSound`] is the sound profile with
//! BIRD-Critic's two rules. All run every item on its own copy
//! (`copy`) through the guarded read-write session (`session`), in parallel: verdicts never
//! depend on the number of threads. Python test cases run in a subprocess that reaches the
//! database only through sqlgate (`python`). The template file is only read.

mod cells;
pub mod copy;
mod gold_effect;
mod gold_twin;
pub mod mysql;
mod post;
pub mod postgres;
pub mod python;
mod query_check;
mod routing;
mod server_sides;
pub mod session;
mod sound;
mod stateless;
mod twin;

pub use crate::engine::state::{Fault, LiveJudge, Profile, Verdict};
use crate::input::livesql::LiveItem;
use python::{Job, TestResult, TestsError};
use rayon::prelude::*;
use session::{Ran, Session, Stopped};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What one item may spend, over all its statements and test cases together.
#[derive(Debug, Clone)]
pub struct Budget {
    /// Wall-clock time (the official wrapper kills a task after 180 s).
    pub deadline: Duration,
    /// SQLite virtual-machine steps: a deterministic deadline, the same on every machine.
    pub max_steps: u64,
    /// Most bytes the item's copy may grow to (SQLite `max_page_count`).
    pub disk_bytes: u64,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            deadline: Duration::from_secs(180),
            max_steps: 1_000_000_000,
            disk_bytes: 1 << 30,
        }
    }
}

/// How a run judges its items.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The profile.
    pub profile: Profile,
    /// Each item's budget.
    pub budget: Budget,
    /// The Python interpreter for test cases.
    pub python: PathBuf,
}

impl Verdict {
    fn from_ran(ran: &Ran) -> Verdict {
        Verdict {
            success: !ran.exec_error && !ran.timeout,
            execution_error: ran.exec_error,
            timeout_error: ran.timeout,
            message: ran.message.clone(),
            ..Verdict::default()
        }
    }

    fn stopped(profile: Profile, stop: Stopped) -> Verdict {
        Verdict {
            execution_error: profile.python_semantics(),
            timeout_error: !profile.python_semantics(),
            stopped: true,
            message: stop.0,
            ..Verdict::default()
        }
    }

    fn no_prediction() -> Verdict {
        Verdict {
            execution_error: true,
            message: "no prediction for this item".into(),
            ..Verdict::default()
        }
    }

    fn add_tests(&mut self, results: &[TestResult]) {
        let failed: Vec<&str> = (results.iter())
            .filter(|r| !r.success)
            .map(|r| r.message.as_str())
            .collect();
        if !failed.is_empty() {
            self.assertion_error = true;
            self.success = false;
            self.message = format!("Test case errors: {}", failed.join(" "));
        }
    }
}

/// Judges every item on its own copy, in parallel; `templates` maps each database to its file.
/// The result is in item order.
pub fn judge_all(
    items: &[LiveItem],
    predictions: &BTreeMap<String, Vec<String>>,
    templates: &BTreeMap<String, PathBuf>,
    settings: &Settings,
) -> Vec<Result<Verdict, Fault>> {
    items
        .par_iter()
        .map(|item| {
            let template = templates
                .get(&item.db_id)
                .ok_or_else(|| format!("no database `{}`", item.db_id))?;
            let prediction = predictions.get(&item.instance_id).map(Vec::as_slice);
            judge(item, prediction, template, settings)
        })
        .collect()
}

/// Judges one item on a fresh copy of `template`.
pub fn judge(
    item: &LiveItem,
    prediction: Option<&[String]>,
    template: &Path,
    settings: &Settings,
) -> Result<Verdict, Fault> {
    let Some(prediction) = prediction else {
        return Ok(Verdict::no_prediction());
    };
    let copy = copy::ItemCopy::make(template)?;
    let outcome = match settings.profile {
        Profile::Official | Profile::BirdCritic => official(item, prediction, &copy, settings),
        Profile::Sound => sound::judge(item, prediction, &copy, template, settings),
        Profile::BirdCriticSound => {
            sound::judge_bird_critic(item, prediction, &copy, template, settings)
        }
    };
    match outcome {
        Ok(verdict) => Ok(verdict),
        Err(TestsError::Stopped(stop)) => Ok(Verdict::stopped(settings.profile, stop)),
        Err(TestsError::Fault(fault)) => Err(fault),
    }
}

/// Opens a session on `path` with `budget`; an error is a fault.
fn open(path: &Path, budget: &Budget, profile: Profile) -> Result<Session, TestsError> {
    Session::open(path, budget, profile)
        .map_err(|e| TestsError::Fault(format!("opening an item's copy: {e}")))
}

/// The official task: preprocess (errors ignored), the prediction, then, if it ran cleanly,
/// the test cases (or the default test) on the same connection, then the clean-up.
///
/// Under `bird-critic` the item's `issue_sql` runs first the same way on a copy of its own (its
/// clean-up not run, as upstream); if it passes every test, the item fails whatever the
/// prediction does.
fn official(
    item: &LiveItem,
    prediction: &[String],
    copy: &copy::ItemCopy,
    settings: &Settings,
) -> Result<Verdict, TestsError> {
    let mut budget = settings.budget.clone();
    let mut issue_passed = false;
    if settings.profile == Profile::BirdCritic && !item.issue_sql.is_empty() {
        let issue_copy = copy::ItemCopy::make(copy.template()).map_err(TestsError::Fault)?;
        let session = open(issue_copy.path(), &budget, settings.profile)?;
        issue_passed = run_with_tests(&session, item, &item.issue_sql, settings)?.success;
        budget = session.remaining();
    }
    let session = open(copy.path(), &budget, settings.profile)?;
    let mut verdict = run_with_tests(&session, item, prediction, settings)?;
    session.execute_queries(&item.clean_up_sql)?;
    if issue_passed {
        verdict.success = false;
        verdict.issue_sql_passed = true;
    }
    Ok(verdict)
}

/// Preprocess (errors ignored), `statements`, then, if they ran cleanly, the item's test cases
/// (or the default test) on the same connection.
fn run_with_tests(
    session: &Session,
    item: &LiveItem,
    statements: &[String],
    settings: &Settings,
) -> Result<Verdict, TestsError> {
    session.execute_queries(&item.preprocess_sql)?;
    let ran = session.execute_queries(statements)?;
    let mut verdict = Verdict::from_ran(&ran);
    if verdict.success {
        let job = Job {
            tests: &item.test_cases,
            pass_conditions: item.test_cases.is_empty() || settings.profile.bird_critic_rules(),
            conditions: &item.conditions,
            pred_sqls: statements,
            sol_sqls: &item.sol_sql,
            pred_query_result: session::rows_json(&ran.rows),
            profile: settings.profile,
        };
        let results = python::run(session, &job, &settings.python, session.deadline())?;
        verdict.add_tests(&results);
    }
    Ok(verdict)
}
