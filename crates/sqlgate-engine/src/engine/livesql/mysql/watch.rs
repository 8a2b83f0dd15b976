//! The watchdog of one MariaDB / MySQL item: the item's deadline and its clone's disk budget.

use super::{MyRun, Slot};
use crate::engine::livesql::python::TestsError;
use mysql::prelude::Queryable;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How often the watchdog looks at the item's deadline and its clone's size.
const WATCH_EVERY: Duration = Duration::from_millis(100);

/// The bytes of `database`'s tables: InnoDB's files as allocated on disk
/// (`INNODB_SYS_TABLESPACES`, which grows as rows are written, unlike the tables' statistics),
/// and the data and index lengths of its tables of other engines.
const SIZE_SQL: &str = "SELECT
  (SELECT COALESCE(SUM(ALLOCATED_SIZE), 0) FROM information_schema.INNODB_SYS_TABLESPACES WHERE NAME LIKE CONCAT(REPLACE(?, '_', '\\_'), '/%'))
  + (SELECT COALESCE(SUM(DATA_LENGTH + INDEX_LENGTH), 0) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND ENGINE <> 'InnoDB')";

/// The watchdog of one item: kills the user's sessions at the deadline or when the clone
/// outgrows the disk budget, saying why in `stop`.
pub(super) struct Watch {
    done: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl Watch {
    pub(super) fn start(
        run: &MyRun,
        slot: &Slot,
        deadline: Instant,
        stop: Arc<Mutex<Option<String>>>,
    ) -> Result<Watch, TestsError> {
        let mut admin = run.admin().map_err(TestsError::Fault)?;
        let done = Arc::new(AtomicBool::new(false));
        let (flag, user, database) = (Arc::clone(&done), slot.user.clone(), slot.database.clone());
        let disk = run.settings.disk_bytes;
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::SeqCst) {
                let reason = match Instant::now() >= deadline {
                    true => Some("the item's deadline passed".to_string()),
                    false => admin
                        .exec_first::<u64, _, _>(SIZE_SQL, (&database, &database))
                        .ok()
                        .flatten()
                        .filter(|size| *size > disk)
                        .map(|size| format!("the item's database grew to {size} bytes, over its disk budget of {disk}")),
                };
                if let Some(reason) = reason {
                    *stop.lock().unwrap_or_else(PoisonError::into_inner) = Some(reason);
                    let ids: Vec<u64> = admin
                        .exec(
                            "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = ?",
                            (&user,),
                        )
                        .unwrap_or_default();
                    for id in ids {
                        let _ = admin.query_drop(format!("KILL CONNECTION {id}"));
                    }
                    return;
                }
                // Woken early by `finish`, so an item's end never waits for a poll.
                std::thread::park_timeout(WATCH_EVERY);
            }
        });
        Ok(Watch { done, thread })
    }

    pub(super) fn finish(self) {
        self.done.store(true, Ordering::SeqCst);
        self.thread.thread().unpark();
        let _ = self.thread.join();
    }
}
