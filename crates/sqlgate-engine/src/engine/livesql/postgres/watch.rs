//! The watchdog of one PostgreSQL item: the item's deadline and its clone's disk budget.

use super::{PgRun, Slot};
use crate::engine::livesql::python::TestsError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How often the watchdog looks at the item's deadline and its clone's size.
const WATCH_EVERY: Duration = Duration::from_millis(100);

/// The watchdog of one item: ends the role's sessions at the deadline or when the clone
/// outgrows the disk budget, saying why in `stop`.
pub(super) struct Watch {
    done: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl Watch {
    pub(super) fn start(
        run: &PgRun,
        slot: &Slot,
        deadline: Instant,
        stop: Arc<Mutex<Option<String>>>,
    ) -> Result<Watch, TestsError> {
        let mut admin = run.admin(None).map_err(TestsError::Fault)?;
        let done = Arc::new(AtomicBool::new(false));
        let (flag, role, database) = (Arc::clone(&done), slot.role.clone(), slot.database.clone());
        let disk = run.settings.disk_bytes as i64;
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::SeqCst) {
                let reason = match Instant::now() >= deadline {
                    true => Some("the item's deadline passed".to_string()),
                    false => admin
                        .query_one("SELECT pg_database_size($1::text)", &[&database])
                        .ok()
                        .map(|row| row.get::<_, i64>(0))
                        .filter(|size| *size > disk)
                        .map(|size| format!("the item's database grew to {size} bytes, over its disk budget of {disk}")),
                };
                if let Some(reason) = reason {
                    *stop.lock().unwrap_or_else(PoisonError::into_inner) = Some(reason);
                    let _ = admin.execute(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1::text",
                        &[&role],
                    );
                    return;
                }
                std::thread::sleep(WATCH_EVERY);
            }
        });
        Ok(Watch { done, thread })
    }

    pub(super) fn finish(self) {
        self.done.store(true, Ordering::SeqCst);
        let _ = self.thread.join();
    }
}
