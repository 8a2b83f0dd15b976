//! The benchmark's Python test cases, run by `python3` in a subprocess with sqlgate's helper
//! module (`helpers.py`, shipped in the binary): an empty environment, a fresh empty working
//! folder, resource limits set before any test code runs, no network where the system can take
//! it away (`unshare --net` in a new user namespace), and no database of its own: every helper
//! that touches the database calls back to sqlgate, which runs the statements on the item's
//! copy ([`Session`]) under the item's deadline. Where the network cannot be taken away, no
//! test case runs: the item is a fault of the harness ([`NO_ISOLATION`]), never a verdict. Each worker thread keeps one runner for the
//! items it judges, one after another.

use super::session::{rows_json, Session, Stopped};
use super::Profile;
use crate::util::sqlite::now_nanos;
use serde_json::{json, Value as Json};
use std::cell::RefCell;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::OnceLock;
use std::time::Duration;

/// The SQLite runner and its helpers, written for sqlgate (no upstream code), with the
/// test-case loop it shares with the servers' runners.
pub const HELPERS: &str = concat!(
    include_str!("gold_text.py"),
    include_str!("helpers.py"),
    include_str!("test_loop.py")
);

/// The database side of a runner's requests: the item's own session, whatever the engine.
pub trait ItemDb {
    /// The reply to one request `op` of the runner (`exec`, `query`, `cost`), or why the item
    /// stops (its deadline) or cannot be judged (a fault).
    fn answer(&self, op: &str, request: &Json) -> Result<Json, TestsError>;
}

impl ItemDb for Session {
    fn answer(&self, op: &str, request: &Json) -> Result<Json, TestsError> {
        match request.get("side") {
            None => answer(self, op, request),
            Some(_) => Err(TestsError::Fault(
                "a request for the gold's copy, which this profile does not make".into(),
            )),
        }
    }
}
/// BIRD-Critic's test phase on a server's item session (`single_instance_eval_<engine>.py`,
/// PostgreSQL and MySQL alike): the item's test cases called without `conditions`, with the
/// prediction and the gold, or for an `efficiency` item its `issue_sql` and the prediction;
/// `pred_rows` the prediction's last rows, `helpers` the engine's helper functions, until the
/// item's `deadline`. Under `bird-critic-sound` the runner marks the gold's statements (requests
/// `"side": "gold"`, which `db` answers on the item's twin clone), except for an `efficiency`
/// item, where nothing the tests get is the gold.
pub fn bird_critic_tests(
    db: &dyn ItemDb,
    helpers: &'static str,
    (item, prediction, pred_rows): (&crate::input::livesql::LiveItem, &[String], Json),
    profile: Profile,
    python: &Path,
    deadline: std::time::Instant,
) -> Result<Vec<TestResult>, TestsError> {
    let (pred_sqls, sol_sqls) = match item.efficiency {
        true => (&item.issue_sql[..], prediction),
        false => (prediction, &item.sol_sql[..]),
    };
    let marked = profile == Profile::BirdCriticSound && !item.efficiency;
    let job = Job {
        tests: &item.test_cases,
        pass_conditions: false,
        conditions: &item.conditions,
        pred_sqls,
        sol_sqls,
        pred_query_result: pred_rows,
        profile: match marked {
            true => Profile::BirdCriticSound,
            false => Profile::BirdCritic,
        },
    };
    let left = deadline.saturating_duration_since(std::time::Instant::now());
    let until = now_nanos().saturating_add(left.as_nanos() as u64);
    run_with(db, helpers, &job, python, until)
}

/// Most bytes of the runner's standard error kept for a fault's message.
const STDERR_KEPT: usize = 4096;
/// Longest protocol line accepted from the runner.
const MAX_LINE: usize = 8 << 20;

/// What the test cases of one item are given.
pub struct Job<'a> {
    /// The test sources (empty: the official default test).
    pub tests: &'a [String],
    /// Whether `test_case` gets `conditions=` (the default test).
    pub pass_conditions: bool,
    /// The item's `conditions`.
    pub conditions: &'a Json,
    /// The prediction's statements.
    pub pred_sqls: &'a [String],
    /// The gold statements.
    pub sol_sqls: &'a [String],
    /// The prediction's last rows (`pred_query_result`), as the runner's protocol encodes them.
    pub pred_query_result: Json,
    /// Which helpers the tests see.
    pub profile: Profile,
}

/// One test's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestResult {
    /// It returned without raising.
    pub success: bool,
    /// The official wording of its failure.
    pub message: String,
}

/// Why the tests gave no outcome.
#[derive(Debug)]
pub enum TestsError {
    /// The item's deadline or step budget ran out (a verdict).
    Stopped(Stopped),
    /// The runner could not be started or broke the protocol (never a verdict).
    Fault(String),
}

impl From<Stopped> for TestsError {
    fn from(stop: Stopped) -> Self {
        TestsError::Stopped(stop)
    }
}

/// A running test-case runner, kept by its worker thread between items (Python's start-up is
/// most of an item's time); dropped, it is killed.
struct Runner {
    python: PathBuf,
    helpers: &'static str,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Result<String, String>>,
    stderr: Receiver<String>,
    /// Its working folder, removed with it.
    _workdir: tempfile::TempDir,
}

impl Runner {
    fn start(python: &Path, helpers: &'static str) -> Result<Runner, TestsError> {
        let workdir = tempfile::Builder::new()
            .prefix("sqlgate-tests-")
            .tempdir()
            .map_err(|e| TestsError::Fault(format!("no working folder for the tests: {e}")))?;
        let mut child = spawn(python, helpers, workdir.path())?;
        let lines = read_lines(child.stdout.take());
        let stderr = read_stderr(child.stderr.take());
        let Some(stdin) = child.stdin.take() else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(TestsError::Fault("the runner has no standard input".into()));
        };
        Ok(Runner {
            python: python.to_path_buf(),
            helpers,
            child,
            stdin,
            lines,
            stderr,
            _workdir: workdir,
        })
    }

    /// Ends the runner after `error`, adding its standard error to a fault.
    fn fail(mut self, error: TestsError) -> TestsError {
        let _ = self.child.kill();
        let _ = self.child.wait();
        match error {
            TestsError::Fault(text) => {
                let said = (self.stderr.recv_timeout(Duration::from_secs(1))).unwrap_or_default();
                TestsError::Fault(format!("{text}; its standard error: {said}"))
            }
            stop => stop,
        }
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

thread_local! {
    /// This worker thread's runner, between two items.
    static RUNNER: RefCell<Option<Runner>> = const { RefCell::new(None) };
}

/// Runs the job's tests with `python` and the SQLite [`HELPERS`] against the item's
/// `session`, until `deadline` (nanoseconds on `now_nanos`' clock).
pub fn run(
    session: &Session,
    job: &Job<'_>,
    python: &Path,
    deadline: u64,
) -> Result<Vec<TestResult>, TestsError> {
    run_with(session, HELPERS, job, python, deadline)
}

/// Runs the job's tests with `python` and `helpers` (the runner's source) against `db`, until
/// `deadline` (nanoseconds on `now_nanos`' clock). The thread's runner is reused when it ended
/// its last job cleanly and has the same interpreter and helpers; a runner that met a deadline
/// or a fault is killed.
pub fn run_with(
    db: &dyn ItemDb,
    helpers: &'static str,
    job: &Job<'_>,
    python: &Path,
    deadline: u64,
) -> Result<Vec<TestResult>, TestsError> {
    let kept = RUNNER.with(|cell| cell.borrow_mut().take());
    let mut runner = match kept.filter(|r| r.python == python && r.helpers == helpers) {
        Some(runner) => runner,
        None => Runner::start(python, helpers)?,
    };
    match converse(db, job, &mut runner.stdin, &runner.lines, deadline) {
        Ok(results) => {
            RUNNER.with(|cell| *cell.borrow_mut() = Some(runner));
            Ok(results)
        }
        Err(error) => Err(runner.fail(error)),
    }
}

/// The runner's process: `python -I -S -c <helpers>`, in `workdir`, environment cleared.
fn spawn(python: &Path, helpers: &str, workdir: &Path) -> Result<Child, TestsError> {
    let Some(unshare) = network_isolation() else {
        return Err(TestsError::Fault(NO_ISOLATION.into()));
    };
    let mut command = Command::new(unshare);
    command
        .args(["--user", "--map-root-user", "--net", "--"])
        .arg(python);
    command
        .args(["-I", "-S", "-c", helpers])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LC_ALL", "C.UTF-8")
        .current_dir(workdir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command.spawn().map_err(|e| {
        TestsError::Fault(format!(
            "`{}` could not be started for the test cases: {e}",
            python.display()
        ))
    })
}

/// Why the test cases do not run where the runner cannot be given a network of its own: they
/// are never run unsandboxed.
pub const NO_ISOLATION: &str = "the test cases need network isolation (`unshare --user --map-root-user --net`), which is missing or refused here, and are never run without it: install util-linux's `unshare` and allow unprivileged user namespaces (`kernel.unprivileged_userns_clone=1`)";

/// Where `unshare` is taken from: the system's own folders, never the process's `PATH`, which a
/// workflow step extends for every later step (`$GITHUB_PATH`; red team round 13: an `unshare`
/// first on it that answered every test case as passed).
const UNSHARE_PROGRAMS: [&str; 2] = ["/usr/bin/unshare", "/bin/unshare"];

/// The `unshare` that gives the runner a network namespace of its own, when there is one that
/// does: the first of [`UNSHARE_PROGRAMS`] that is a file, probed once per process.
pub fn network_isolation() -> Option<&'static Path> {
    static ISOLATES: OnceLock<Option<PathBuf>> = OnceLock::new();
    let unshare = ISOLATES.get_or_init(|| {
        let unshare = UNSHARE_PROGRAMS
            .into_iter()
            .map(PathBuf::from)
            .find(|candidate| candidate.is_file())?;
        Command::new(&unshare)
            .args(["--user", "--map-root-user", "--net", "--", "true"])
            .env_clear()
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
            .then_some(unshare)
    });
    unshare.as_deref()
}

/// The runner's protocol lines, read on a thread of their own so the deadline is kept.
fn read_lines(stdout: Option<std::process::ChildStdout>) -> Receiver<Result<String, String>> {
    let (send, receive) = mpsc::channel();
    if let Some(stdout) = stdout {
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut line = String::new();
                let read = (&mut reader).take(MAX_LINE as u64).read_line(&mut line);
                let message = match read {
                    Ok(0) => Err("the runner ended without its results".to_string()),
                    Ok(_) if !line.ends_with('\n') => Err("a protocol line too long".into()),
                    Ok(_) => Ok(line),
                    Err(e) => Err(format!("reading the runner: {e}")),
                };
                let last = message.is_err();
                if send.send(message).is_err() || last {
                    return;
                }
            }
        });
    }
    receive
}

/// The first bytes of the runner's standard error, once it closes.
fn read_stderr(stderr: Option<std::process::ChildStderr>) -> Receiver<String> {
    let (send, receive) = mpsc::channel();
    if let Some(stderr) = stderr {
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            let _ = stderr.take(STDERR_KEPT as u64).read_to_end(&mut kept);
            let _ = send.send(String::from_utf8_lossy(&kept).into_owned());
        });
    }
    receive
}

/// Sends the job, answers the runner's requests on `db`, and returns the results.
fn converse(
    db: &dyn ItemDb,
    job: &Job<'_>,
    stdin: &mut ChildStdin,
    lines: &Receiver<Result<String, String>>,
    deadline: u64,
) -> Result<Vec<TestResult>, TestsError> {
    let first = json!({
        "tests": job.tests,
        "pass_conditions": job.pass_conditions,
        "conditions": job.conditions,
        "pred_sqls": job.pred_sqls,
        "sol_sqls": job.sol_sqls,
        "pred_query_result": job.pred_query_result,
        "profile": match job.profile {
            Profile::Official | Profile::BirdCritic => "official",
            Profile::Sound | Profile::BirdCriticSound => "sound",
        },
    });
    send(stdin, &first)?;
    loop {
        let wait = Duration::from_nanos(deadline.saturating_sub(now_nanos()));
        let line = match lines.recv_timeout(wait) {
            Ok(Ok(line)) => line,
            Ok(Err(text)) => return Err(TestsError::Fault(text)),
            Err(RecvTimeoutError::Timeout) => {
                return Err(Stopped("the item's deadline ran out in its test cases".into()).into())
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(TestsError::Fault("the runner's output closed".into()))
            }
        };
        let request: Json = serde_json::from_str(&line)
            .map_err(|e| TestsError::Fault(format!("a protocol line that is not JSON: {e}")))?;
        match request["op"].as_str() {
            Some("done") => return results(&request),
            Some(op) => {
                let reply = db.answer(op, &request)?;
                send(stdin, &reply)?;
            }
            None => return Err(TestsError::Fault("a protocol line without `op`".into())),
        }
    }
}

fn send(stdin: &mut ChildStdin, message: &Json) -> Result<(), TestsError> {
    let mut line = message.to_string();
    line.push('\n');
    (stdin.write_all(line.as_bytes()))
        .and_then(|()| stdin.flush())
        .map_err(|e| TestsError::Fault(format!("writing to the runner: {e}")))
}

/// The reply to one request of the SQLite runner, on `session`.
pub(super) fn answer(session: &Session, op: &str, request: &Json) -> Result<Json, TestsError> {
    let texts = |key: &str| -> Result<Vec<String>, TestsError> {
        serde_json::from_value(request[key].clone())
            .map_err(|_| TestsError::Fault(format!("`{op}` without a list of texts `{key}`")))
    };
    match op {
        "exec" => {
            let ran = session.execute_queries(&texts("sqls")?)?;
            Ok(json!({
                "rows": rows_json(&ran.rows),
                "exec_error": ran.exec_error,
                "timeout": ran.timeout,
                "message": ran.message,
            }))
        }
        "query" => {
            let sql = request["sql"].as_str().unwrap_or_default();
            let result = session.perform(sql);
            session.check_budget()?;
            Ok(match result {
                Ok(rows) => json!({ "rows": rows_json(&Some(rows)), "error": null }),
                Err(e) => {
                    json!({ "rows": null, "error": { "class": e.class, "message": e.message } })
                }
            })
        }
        "cost" => {
            let old = session.cost(&texts("old")?)?;
            let new = session.cost(&texts("new")?)?;
            Ok(json!({ "old": old, "new": new }))
        }
        other => Err(TestsError::Fault(format!("an unknown request `{other}`"))),
    }
}

/// The `done` line's results.
fn results(done: &Json) -> Result<Vec<TestResult>, TestsError> {
    let list = done["results"]
        .as_array()
        .ok_or_else(|| TestsError::Fault("`done` without results".into()))?;
    Ok(list
        .iter()
        .map(|result| TestResult {
            success: result["passed"].as_bool() == Some(true),
            message: result["message"].as_str().unwrap_or_default().to_string(),
        })
        .collect())
}
