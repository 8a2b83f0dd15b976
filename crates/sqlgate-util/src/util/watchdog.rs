//! The wall-clock deadline of every guarded SQLite connection, enforced from outside the query.
//!
//! A progress handler only runs between virtual-machine steps, so one step that takes long (a
//! `count(*)` over a huge table, a function building a 32 MiB value many times over) slips past
//! it. A watchdog thread therefore calls `sqlite3_interrupt` on every connection whose deadline
//! has passed: SQLite checks that flag at every loop of a statement and inside its own long loops
//! (b-tree counts, integrity checks), and sqlgate's bounded functions (`util::sqlite_functions`)
//! poll it too, so a query ends within one step of its deadline plus [`POLL`].

use rusqlite::{Connection, InterruptHandle};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

/// How often the watchdog looks at the deadlines.
pub const POLL: Duration = Duration::from_millis(10);

/// One connection's deadline and the handle that interrupts it.
pub struct Deadline {
    /// Nanoseconds on [`now_nanos`]'s clock; `u64::MAX` when disarmed.
    nanos: AtomicU64,
    /// Held while the watchdog interrupts and while the deadline is disarmed, so an interrupt
    /// meant for one query never lands on the next.
    interrupt: Mutex<InterruptHandle>,
}

impl Deadline {
    /// A disarmed deadline for `conn`, watched until the returned value is dropped.
    pub fn watch(conn: &Connection) -> Arc<Deadline> {
        let deadline = Arc::new(Deadline {
            nanos: AtomicU64::new(u64::MAX),
            interrupt: Mutex::new(conn.get_interrupt_handle()),
        });
        let mut watched = registry().lock().unwrap_or_else(|e| e.into_inner());
        watched.push(Arc::downgrade(&deadline));
        deadline
    }

    /// Arms the deadline `budget` from now and returns it (nanoseconds on [`now_nanos`]'s clock).
    pub fn arm(&self, budget: Duration) -> u64 {
        let at = now_nanos().saturating_add(budget.as_nanos().min(u64::MAX as u128) as u64);
        self.nanos.store(at, Ordering::Relaxed);
        at
    }

    /// Disarms the deadline; once it returns, the watchdog no longer interrupts the connection.
    pub fn disarm(&self) {
        let _held = self.interrupt.lock().unwrap_or_else(|e| e.into_inner());
        self.nanos.store(u64::MAX, Ordering::Relaxed);
    }

    /// Whether the deadline has passed.
    pub fn expired(&self) -> bool {
        now_nanos() >= self.nanos.load(Ordering::Relaxed)
    }

    /// Interrupts the connection if its deadline has passed.
    fn enforce(&self) {
        if !self.expired() {
            return;
        }
        let handle = self.interrupt.lock().unwrap_or_else(|e| e.into_inner());
        if self.expired() {
            handle.interrupt();
        }
    }
}

/// Nanoseconds since the first call, the clock deadlines are measured on.
pub fn now_nanos() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// The deadlines being watched; the watchdog thread starts with the first one.
fn registry() -> &'static Mutex<Vec<Weak<Deadline>>> {
    static WATCHED: OnceLock<Mutex<Vec<Weak<Deadline>>>> = OnceLock::new();
    WATCHED.get_or_init(|| {
        // Without the thread (a process out of threads) the progress handlers still stop queries.
        let _ = std::thread::Builder::new()
            .name("sqlgate-sqlite-watchdog".into())
            .spawn(watch_forever);
        Mutex::new(Vec::new())
    })
}

fn watch_forever() {
    loop {
        std::thread::sleep(POLL);
        let live: Vec<Arc<Deadline>> = {
            let mut watched = registry().lock().unwrap_or_else(|e| e.into_inner());
            watched.retain(|d| d.strong_count() > 0);
            watched.iter().filter_map(Weak::upgrade).collect()
        };
        for deadline in &live {
            deadline.enforce();
        }
    }
}

/// Steps of a bounded function between two interrupt checks.
const STEPS_PER_CHECK: u32 = 1 << 14;

/// Why a bounded function stopped before its result.
#[derive(Debug, PartialEq, Eq)]
pub enum Stop {
    /// The connection was interrupted (its deadline passed).
    Interrupted,
    /// The result would exceed the value-length limit.
    TooBig,
}

/// Counts work and asks, every [`STEPS_PER_CHECK`] steps, whether to stop.
pub struct Budget<'a> {
    steps: u32,
    interrupted: &'a dyn Fn() -> bool,
}

impl<'a> Budget<'a> {
    /// A budget that stops when `interrupted` says so.
    pub fn new(interrupted: &'a dyn Fn() -> bool) -> Self {
        Budget {
            steps: 0,
            interrupted,
        }
    }

    /// Counts `steps` of work; `Err` once the connection is interrupted.
    pub fn spend(&mut self, steps: u32) -> Result<(), Stop> {
        self.steps = self.steps.saturating_add(steps);
        if self.steps >= STEPS_PER_CHECK {
            self.steps = 0;
            if (self.interrupted)() {
                return Err(Stop::Interrupted);
            }
        }
        Ok(())
    }
}
