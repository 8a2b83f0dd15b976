//! Answers of questions put to an original database, kept for the rest of the run.
//!
//! Whether a counterexample is natural is checked against the item's original database with
//! dozens of small queries (a column's facts, a value's occurrences, a code's partner, a
//! dependency between two columns), most of them full scans, and one run explains hundreds of
//! counterexamples against the same few originals: asked afresh each time, they were two thirds
//! of a warm test-suite run. The answers are pure functions of the file, so each is computed
//! once. Only a read-only connection's answers are kept, keyed by the file's path, length and
//! modification time (a file changed meanwhile is asked again), and the store is emptied when it
//! grows past [`MAX_ANSWERS`], so it never holds more than a bounded amount.

use rusqlite::{Connection, MAIN_DB};
use std::any::Any;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::SystemTime;

/// Answers kept before the store starts over (each is a few bytes to a few hundred).
const MAX_ANSWERS: usize = 200_000;

/// Which file, as it was when asked, and which question.
type Key = (String, u64, Option<SystemTime>, String);

type Store = HashMap<Key, Box<dyn Any + Send>>;

fn store() -> MutexGuard<'static, Store> {
    static STORE: OnceLock<Mutex<Store>> = OnceLock::new();
    STORE
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The file behind a read-only connection, with its length and modification time; `None` for
/// a writable, temporary or in-memory database, whose answers may change.
fn file_of(original: &Connection) -> Option<(String, u64, Option<SystemTime>)> {
    if !original.is_readonly(MAIN_DB).unwrap_or(false) {
        return None;
    }
    let path = original.path().filter(|p| !p.is_empty())?;
    let metadata = std::fs::metadata(path).ok()?;
    Some((path.to_string(), metadata.len(), metadata.modified().ok()))
}

/// The answer to `question` (any text naming it uniquely, such as its SQL) on `original`: the
/// one kept from earlier in the run, else `answer()`, kept for later.
pub(super) fn remembered<T: Clone + Send + 'static>(
    original: &Connection,
    question: String,
    answer: impl FnOnce() -> T,
) -> T {
    let Some((path, length, modified)) = file_of(original) else {
        return answer();
    };
    let key = (path, length, modified, question);
    if let Some(kept) = store()
        .get(&key)
        .and_then(|kept| kept.downcast_ref::<T>())
        .cloned()
    {
        return kept;
    }
    let value = answer();
    let mut answers = store();
    if answers.len() >= MAX_ANSWERS {
        answers.clear();
    }
    answers.insert(key, Box::new(value.clone()));
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn a_read_only_file_is_asked_once_and_a_changed_file_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("original.sqlite");
        let write = |rows: &str| {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(&format!(
                "DROP TABLE IF EXISTS t; CREATE TABLE t (x); INSERT INTO t VALUES {rows};"
            ))
            .unwrap();
        };
        let count = |asked: &Cell<usize>| {
            let conn = crate::util::sqlite::open_read_only(&path).unwrap();
            remembered(&conn.conn, "count".into(), || {
                asked.set(asked.get() + 1);
                conn.conn
                    .query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0))
                    .unwrap()
            })
        };
        write("(1), (2)");
        let asked = Cell::new(0);
        assert_eq!((count(&asked), count(&asked)), (2, 2));
        assert_eq!(asked.get(), 1);
        // Longer, so the change shows even within one tick of the file clock.
        write("(1), (2), (randomblob(20000))");
        assert_eq!(count(&asked), 3);
        assert_eq!(asked.get(), 2);
    }

    #[test]
    fn a_writable_connection_is_asked_every_time() {
        let conn = Connection::open_in_memory().unwrap();
        let asked = Cell::new(0);
        for _ in 0..2 {
            remembered(&conn, "q".into(), || asked.set(asked.get() + 1));
        }
        assert_eq!(asked.get(), 2);
    }
}
