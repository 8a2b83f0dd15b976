//! The DuckDB worker process, seen from sqlgate: one per executing thread, kept across queries,
//! which the parent caps and can kill.
//!
//! DuckDB checks its interrupt flag only between operator steps, never inside one scalar call
//! (`levenshtein` of two long strings, `list_sort` of a huge list), and the values such a call
//! builds are outside its `memory_limit` (red team round 25, wins A and B). So queries run in a
//! child process, sqlgate's own executable (`sqlgate duckdb-worker`, [`super::serve`]), whose
//! address space is capped with `RLIMIT_AS` (an allocation past it fails inside DuckDB, or the
//! worker dies: either is `result too large`), which dies with the thread that started it
//! (`PR_SET_PDEATHSIG`), and which is killed at the deadline plus [`GRACE`] when the interrupt
//! did not end the query: a timeout, the next query getting a fresh worker.

use super::wire::{self, Reader};
use crate::engine::exec::ExecError;
use std::cell::RefCell;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::RwLock;
use std::time::{Duration, Instant};

/// The hidden subcommand of sqlgate's executable that serves DuckDB queries on its stdin/stdout.
pub const SUBCOMMAND: &str = "duckdb-worker";

/// How long past its deadline a query's worker may take to answer before it is killed: DuckDB
/// ends an interrupted query within one operator step, which is normally milliseconds.
pub const GRACE: Duration = Duration::from_millis(500);

/// The address space a worker takes before its share: with a database open and queries run it
/// measured 108 MiB at start and 131-138 MiB after (Linux x86-64, DuckDB 1.5.6, a debug build:
/// the mapped code of sqlgate and libduckdb, two threads' stacks, one malloc arena;
/// docs/DEVELOPMENT.md), with room for larger catalogs.
pub const BASELINE: u64 = 192 << 20;

/// What a worker is: the executable and its share of the run's memory budget. A thread's worker
/// is replaced when a query asks for another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// sqlgate's executable (the worker is its [`SUBCOMMAND`]).
    pub program: PathBuf,
    /// The bytes the worker may use beyond [`BASELINE`]; each database it opens gets half of
    /// it as DuckDB's `memory_limit`, so DuckDB's own limit is met first when it applies.
    pub share: usize,
}

impl Spec {
    /// A worker of the executable [`program`] names, with `share` bytes of the run's budget.
    pub fn new(share: usize) -> Spec {
        Spec {
            program: program(),
            share,
        }
    }

    /// DuckDB's `memory_limit` of each database the worker opens.
    fn duckdb_limit(&self) -> usize {
        self.share / 2
    }

    /// The worker's `RLIMIT_AS`.
    fn address_space(&self) -> u64 {
        BASELINE.saturating_add(self.share as u64)
    }
}

/// The executable set by [`use_program`], if any.
static PROGRAM: RwLock<Option<PathBuf>> = RwLock::new(None);

/// Names the executable whose [`SUBCOMMAND`] serves DuckDB queries, for library users and tests
/// whose own executable is not sqlgate's (an integration test passes
/// `env!("CARGO_BIN_EXE_sqlgate")`); engines made after this call use it.
pub fn use_program(path: &Path) {
    *PROGRAM.write().unwrap_or_else(|e| e.into_inner()) = Some(path.to_path_buf());
}

/// The worker executable: the one [`use_program`] set, else this process's own.
pub fn program() -> PathBuf {
    let set = PROGRAM.read().unwrap_or_else(|e| e.into_inner()).clone();
    set.or_else(|| std::env::current_exe().ok())
        .unwrap_or_else(|| PathBuf::from("sqlgate"))
}

thread_local! {
    /// This thread's worker, started on its first DuckDB query.
    static WORKER: RefCell<Option<Worker>> = const { RefCell::new(None) };
}

/// What the caller makes of one response frame: `Ok(true)` once the answer is complete.
pub type OnFrame<'a> = dyn FnMut(u8, &mut Reader<'_>) -> Result<bool, ExecError> + 'a;

/// Sends `request` (a frame of [`wire::request`]) to this thread's worker for `spec` and hands
/// each response frame to `on_frame` until it says the answer is complete; an error frame is
/// the answer's error. Past `timeout` plus [`GRACE`] the worker is killed and the answer is
/// [`ExecError::Timeout`]; a worker that ends, whose answer the caller refuses, or that ran out
/// of memory (what it freed may stay mapped) is dropped, so the next request starts a fresh one.
pub fn call(
    spec: &Spec,
    request: &[u8],
    timeout: Duration,
    on_frame: &mut OnFrame<'_>,
) -> Result<(), ExecError> {
    WORKER.with(|slot| {
        let mut slot = slot.borrow_mut();
        let wait = timeout.saturating_add(GRACE);
        let kill_at = (Instant::now().checked_add(wait)).unwrap_or_else(far_future);
        match exchange(&mut slot, spec, request, kill_at, on_frame) {
            Ok(()) => Ok(()),
            Err(Lost::Failed(error)) => {
                if matches!(&error, ExecError::TooLarge(why) if why.contains("memory limit")) {
                    *slot = None;
                }
                Err(error)
            }
            Err(lost) => {
                *slot = None;
                Err(lost.error(spec, timeout))
            }
        }
    })
}

/// One request and its answer on the slot's worker (started, or restarted once if it had
/// ended since the last request).
fn exchange(
    slot: &mut Option<Worker>,
    spec: &Spec,
    request: &[u8],
    kill_at: Instant,
    on_frame: &mut OnFrame<'_>,
) -> Result<(), Lost> {
    if slot.as_ref().is_some_and(|worker| worker.spec != *spec) {
        *slot = None;
    }
    let worker = match slot {
        Some(worker) => worker,
        None => slot.insert(Worker::start(spec)?),
    };
    if worker.send(request).is_err() {
        *slot = None;
        let fresh = slot.insert(Worker::start(spec)?);
        fresh.send(request).map_err(|_| fresh.ended())?;
    }
    let worker = slot.as_mut().expect("started above");
    loop {
        let (kind, payload) = worker.receive(kill_at)?;
        let mut reader = Reader::new(&payload);
        if kind == wire::response::ERROR {
            let error = reader.error().map_err(|m| Lost::Refused(m.into()))?;
            return Err(Lost::Failed(error));
        }
        match on_frame(kind, &mut reader) {
            Ok(true) => return Ok(()),
            Ok(false) => {}
            Err(refused) => return Err(Lost::Refused(refused)),
        }
    }
}

/// An instant no deadline reaches (a timeout too long to add to now).
fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(100 * 365 * 86_400)
}

/// Why an answer did not come whole.
enum Lost {
    /// The worker answered with an error (the query's).
    Failed(ExecError),
    /// The deadline plus the grace passed.
    Late,
    /// The worker ended (or could not start).
    Ended(String, Option<ExitStatus>),
    /// The caller refused the answer (a cap, the run's budget, a malformed frame).
    Refused(ExecError),
}

impl Lost {
    /// The error a query gets.
    fn error(&self, spec: &Spec, timeout: Duration) -> ExecError {
        match self {
            Lost::Late => ExecError::Timeout(timeout.as_millis()),
            Lost::Refused(error) | Lost::Failed(error) => error.clone(),
            Lost::Ended(what, status) if status.is_some_and(died_of_memory) => {
                ExecError::TooLarge(format!(
                    "the DuckDB worker passed its memory limit ({} MiB beyond its baseline) \
                     and ended: {what}",
                    spec.share >> 20
                ))
            }
            Lost::Ended(what, _) => ExecError::Fault(format!(
                "the DuckDB worker `{} {SUBCOMMAND}` ended: {what}",
                spec.program.display()
            )),
        }
    }
}

/// How a worker that ran out of address space ends: an abort (a failed Rust allocation, an
/// uncaught `std::bad_alloc`) or a fault (an unchecked `malloc`), or a kill by the system's
/// out-of-memory killer.
fn died_of_memory(status: ExitStatus) -> bool {
    matches!(
        status.signal(),
        Some(libc::SIGABRT | libc::SIGSEGV | libc::SIGBUS | libc::SIGKILL)
    )
}

/// A running worker: its process and the two pipes.
struct Worker {
    spec: Spec,
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    /// Bytes read from stdout and not yet taken as frames.
    inbox: Vec<u8>,
}

impl Worker {
    /// Starts a worker for `spec`.
    fn start(spec: &Spec) -> Result<Worker, Lost> {
        let mut command = Command::new(&spec.program);
        command
            .arg(SUBCOMMAND)
            .arg("--memory-limit")
            .arg(spec.duckdb_limit().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            // Nothing of a query reaches the job's log unescaped (a workflow command): the
            // worker's errors come back as frames, how it ended as its exit status.
            .stderr(Stdio::null())
            // One malloc arena: each thread's own would reserve 64 MiB of address space.
            .env("MALLOC_ARENA_MAX", "1");
        let (address_space, parent) = (spec.address_space(), std::process::id());
        // SAFETY: the closure only makes async-signal-safe system calls.
        unsafe { command.pre_exec(move || confine(address_space, parent)) };
        let mut child = command.spawn().map_err(|error| {
            let what = format!("cannot start {}: {error}", spec.program.display());
            Lost::Ended(what, None)
        })?;
        let (stdin, stdout) = (child.stdin.take(), child.stdout.take());
        let (Some(stdin), Some(stdout)) = (stdin, stdout) else {
            unreachable!("both pipes were asked for");
        };
        Ok(Worker {
            spec: spec.clone(),
            child,
            stdin,
            stdout,
            inbox: Vec::new(),
        })
    }

    fn send(&mut self, request: &[u8]) -> std::io::Result<()> {
        self.stdin.write_all(request)?;
        self.stdin.flush()
    }

    /// The next frame (its kind and payload), waiting until `kill_at` at most.
    fn receive(&mut self, kill_at: Instant) -> Result<(u8, Vec<u8>), Lost> {
        self.fill(4, kill_at)?;
        let length = u32::from_le_bytes(self.inbox[..4].try_into().expect("4 bytes")) as usize;
        if !(1..=wire::MAX_FRAME).contains(&length) {
            let malformed =
                ExecError::Fault(format!("the DuckDB worker sent a frame of {length} bytes"));
            return Err(Lost::Refused(malformed));
        }
        self.fill(4 + length, kill_at)?;
        let payload = self.inbox[5..4 + length].to_vec();
        let kind = self.inbox[4];
        self.inbox.drain(..4 + length);
        Ok((kind, payload))
    }

    /// Reads until the inbox holds `bytes`, or the worker ends, or `kill_at` passes.
    fn fill(&mut self, bytes: usize, kill_at: Instant) -> Result<(), Lost> {
        while self.inbox.len() < bytes {
            let left = kill_at.saturating_duration_since(Instant::now());
            if left.is_zero() || !readable(&self.stdout, left) {
                return Err(Lost::Late);
            }
            let mut chunk = [0u8; 64 << 10];
            match std::io::Read::read(&mut self.stdout, &mut chunk) {
                Ok(0) => return Err(self.ended()),
                Ok(read) => self.inbox.extend_from_slice(&chunk[..read]),
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return Err(self.ended()),
            }
        }
        Ok(())
    }

    /// The worker has ended (its stdout closed): reaped, with how it ended (killed if it has
    /// not exited within [`GRACE`]).
    fn ended(&mut self) -> Lost {
        let until = Instant::now() + GRACE;
        while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(2));
        }
        let _ = self.child.kill();
        match self.child.wait() {
            Ok(status) => Lost::Ended(format!("{status}"), Some(status)),
            Err(error) => Lost::Ended(format!("{error}"), None),
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Killed, then reaped: no zombie, and a worker stuck in one call stops now.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether `stdout` has bytes (or its end) to read within `left`.
fn readable(stdout: &ChildStdout, left: Duration) -> bool {
    let millis = i32::try_from(left.as_millis().max(1)).unwrap_or(i32::MAX);
    let mut poll = libc::pollfd {
        fd: stdout.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    loop {
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut poll, 1, millis) };
        if ready >= 0 {
            return ready > 0;
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return true;
        }
    }
}

/// In the worker, before it runs sqlgate: the address-space cap, no core file, and death with
/// the thread that started it (or at once if the parent is already gone).
fn confine(address_space: u64, parent: u32) -> std::io::Result<()> {
    let limit = |bytes: u64| libc::rlimit {
        rlim_cur: bytes,
        rlim_max: bytes,
    };
    // SAFETY: plain system calls on valid arguments.
    unsafe {
        if libc::setrlimit(libc::RLIMIT_AS, &limit(address_space)) != 0
            || libc::setrlimit(libc::RLIMIT_CORE, &limit(0)) != 0
            || libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
        if libc::getppid() as u32 != parent {
            libc::_exit(1);
        }
    }
    Ok(())
}
