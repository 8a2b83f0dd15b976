//! What an item's session keeps of its own, read on it before and after the preprocess under
//! `bird_critic_sound` (red team rounds 41 and 42): its user variables however they were set (`SET
//! @v`, `SELECT ... INTO @v` on any line, a procedure that sets one) and its session variables
//! (`SET sql_mode`, ...), but those the server moves by itself or the harness sets (the last
//! insert id, the time stamp, the random seeds, whether a transaction is open). A new session
//! would have none of it, so an item whose preprocess changed it is not judged there. Temporary
//! tables MariaDB 10.11 does not list; the preprocess's text tells them
//! (`query_check::session_state`).

use super::ItemSession;
use mysql::prelude::Queryable;

/// One line digesting the session's user variables and its session variables.
const SESSION_STATE: &str = "SELECT CONCAT_WS('/', \
     (SELECT CONCAT(COUNT(*), ':', MD5(GROUP_CONCAT(VARIABLE_NAME, '=', IFNULL(VARIABLE_VALUE, '<null>') \
      ORDER BY VARIABLE_NAME SEPARATOR ','))) FROM information_schema.USER_VARIABLES), \
     (SELECT CONCAT(COUNT(*), ':', MD5(GROUP_CONCAT(VARIABLE_NAME, '=', IFNULL(VARIABLE_VALUE, '<null>') \
      ORDER BY VARIABLE_NAME SEPARATOR ','))) FROM information_schema.SESSION_VARIABLES \
      WHERE VARIABLE_NAME NOT IN ('LAST_INSERT_ID', 'INSERT_ID', 'IDENTITY', 'TIMESTAMP', \
      'RAND_SEED1', 'RAND_SEED2', 'LAST_GTID', 'GTID_SEQ_NO', 'IN_TRANSACTION', \
      'MAX_STATEMENT_TIME')))";

impl ItemSession {
    /// What the session holds of its own ([`SESSION_STATE`]), read on it without the
    /// evaluator's commit rule; `None` when it cannot be read.
    pub(super) fn own_state(&self) -> Option<String> {
        let mut conn = self.conn.borrow_mut();
        conn.query_first(SESSION_STATE).ok().flatten()
    }
}
