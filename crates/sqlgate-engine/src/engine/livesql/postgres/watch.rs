//! The watchdog of one PostgreSQL item: the item's deadline and its clone's disk budget.

use super::{PgRun, Slot};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How often the watchdog looks at the item's deadline and its clone's size.
const WATCH_EVERY: Duration = Duration::from_millis(100);

/// The watchdog of one item: ends the role's sessions at the deadline or when the clone
/// outgrows the disk budget, saying why in `stop`.
pub(super) struct Watch {
    /// Dropped when the item ends: the watchdog wakes and returns at once.
    done: mpsc::Sender<()>,
    /// Gives the administrator's session back when it ends.
    thread: std::thread::JoinHandle<postgres::Client>,
}

impl Watch {
    /// Watches `slot`'s item on the administrator's session `admin` until [`Watch::finish`].
    pub(super) fn start(
        mut admin: postgres::Client,
        run: &PgRun,
        slot: &Slot,
        deadline: Instant,
        stop: Arc<Mutex<Option<String>>>,
    ) -> Watch {
        let (done, ended) = mpsc::channel::<()>();
        let (role, database) = (slot.role.clone(), slot.database.clone());
        let disk = run.settings.disk_bytes as i64;
        let thread = std::thread::spawn(move || loop {
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
                return admin;
            }
            if !matches!(
                ended.recv_timeout(WATCH_EVERY),
                Err(RecvTimeoutError::Timeout)
            ) {
                return admin;
            }
        });
        Watch { done, thread }
    }

    /// Ends the watch (at once, not at its next look), waits for its thread and gives back the
    /// administrator's session.
    pub(super) fn finish(self) -> Option<postgres::Client> {
        drop(self.done);
        self.thread.join().ok()
    }
}
