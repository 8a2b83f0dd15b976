//! A sound clone's sequences made uncached after the item's preprocess (red team round 40): a
//! MariaDB sequence with a cache writes its row (`next_not_cached_value`) once per `CACHE`
//! values and serves the values in between from memory, on every session; so a prediction
//! taking values from the cache (`NEXTVAL`, an insert rolled back, `SETVAL` within the cached
//! range) changes no row and no `information_schema` row the Query data check reads, while the
//! next value a gold reads has moved. Uncached, every value taken is written to the row, which
//! the data digest reads. The values a session gets stay the ones it would have got: the next
//! value is taken once and the sequence restarted at it (`ALTER SEQUENCE ... NOCACHE` alone
//! would restart it at the row's `next_not_cached_value`, past the cached values).

use super::{ident, my_text, MyRun, Slot};
use crate::engine::livesql::python::TestsError;
use crate::engine::server::data_digest::mysql_lock_waits;
use mysql::prelude::Queryable;
use mysql::Conn;

impl MyRun {
    /// Makes every sequence of `slot`'s clone uncached, its next value kept, on an
    /// administrator's session that waits for a lock as long as the data digest does (a lock the
    /// preprocess left on a sequence makes this a fault, which fails the item).
    pub(super) fn uncache_sequences(&self, slot: &Slot) -> Result<(), TestsError> {
        let fault = |e: String| TestsError::Fault(format!("uncaching a clone's sequences: {e}"));
        let mut admin = self.admin().map_err(fault)?;
        self.sql(&mut admin, &mysql_lock_waits()).map_err(fault)?;
        for name in sequences(&mut admin, &slot.database).map_err(fault)? {
            let sequence = format!("{}.{}", ident(&slot.database), ident(&name));
            self.uncache(&mut admin, &sequence).map_err(fault)?;
        }
        Ok(())
    }

    /// Restarts `sequence` uncached at its next value; a sequence that has run out (its
    /// `NEXTVAL` fails) is made uncached as it is, still run out.
    fn uncache(&self, admin: &mut Conn, sequence: &str) -> Result<(), String> {
        let next: Result<Option<i64>, _> = admin.query_first(format!("SELECT NEXTVAL({sequence})"));
        let restart = match next {
            Ok(Some(value)) => format!(" RESTART WITH {value}"),
            Ok(None) | Err(_) => String::new(),
        };
        self.sql(
            admin,
            &format!("ALTER SEQUENCE {sequence} NOCACHE{restart}"),
        )
    }
}

/// The names of the sequences of `database`.
fn sequences(admin: &mut Conn, database: &str) -> Result<Vec<String>, String> {
    admin
        .exec(
            "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'SEQUENCE' ORDER BY TABLE_NAME",
            (database,),
        )
        .map_err(|e| format!("listing the sequences: {}", my_text(&e)))
}
