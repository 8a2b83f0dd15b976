//! The wall-clock deadline of a DuckDB query, enforced from outside it: a watchdog thread calls
//! `duckdb_interrupt` on every connection whose query has passed its deadline (DuckDB checks the
//! flag between and inside its operators), the way `util::watchdog` interrupts SQLite.

use crate::engine::duckdb::ffi::Interrupt;
use crate::util::sqlite::now_nanos;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

/// How often the watchdog looks at the deadlines.
const POLL: Duration = Duration::from_millis(10);

/// One running query's deadline and the handle that interrupts its connection.
pub struct Armed {
    at: u64,
    /// `None` once disarmed: held while the watchdog interrupts, so an interrupt never lands on
    /// a connection that has been closed.
    interrupt: Mutex<Option<Interrupt>>,
    fired: AtomicBool,
}

impl Armed {
    /// Arms a deadline `budget` from now for the query about to run on `interrupt`'s connection.
    pub fn arm(interrupt: Interrupt, budget: Duration) -> Arc<Armed> {
        let nanos = budget.as_nanos().min(u64::MAX as u128) as u64;
        let armed = Arc::new(Armed {
            at: now_nanos().saturating_add(nanos),
            interrupt: Mutex::new(Some(interrupt)),
            fired: AtomicBool::new(false),
        });
        let mut watched = registry().lock().unwrap_or_else(|e| e.into_inner());
        watched.push(Arc::downgrade(&armed));
        armed
    }

    /// Whether the deadline has passed (the query is then a timeout whatever DuckDB said).
    pub fn expired(&self) -> bool {
        self.fired.load(Ordering::Relaxed) || now_nanos() >= self.at
    }

    /// Disarms it: once this returns, the connection is never interrupted for this query.
    pub fn disarm(&self) {
        *self.interrupt.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    fn enforce(&self) {
        if now_nanos() < self.at {
            return;
        }
        let interrupt = self.interrupt.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(interrupt) = *interrupt {
            self.fired.store(true, Ordering::Relaxed);
            // SAFETY: armed, so the connection is open (disarm runs before it closes).
            unsafe { interrupt.fire() };
        }
    }
}

/// The armed deadlines; the watchdog thread starts with the first.
fn registry() -> &'static Mutex<Vec<Weak<Armed>>> {
    static WATCHED: OnceLock<Mutex<Vec<Weak<Armed>>>> = OnceLock::new();
    WATCHED.get_or_init(|| {
        let spawned = std::thread::Builder::new()
            .name("sqlgate-duckdb-watchdog".into())
            .spawn(watch);
        if let Err(error) = spawned {
            crate::util::log::note(&format!(
                "the DuckDB watchdog thread did not start ({error}): queries are also stopped between result chunks"
            ));
        }
        Mutex::new(Vec::new())
    })
}

fn watch() {
    loop {
        std::thread::sleep(POLL);
        let live: Vec<Arc<Armed>> = {
            let mut watched = registry().lock().unwrap_or_else(|e| e.into_inner());
            watched.retain(|weak| weak.strong_count() > 0);
            watched.iter().filter_map(Weak::upgrade).collect()
        };
        for armed in live {
            armed.enforce();
        }
    }
}
