//! What an item's session keeps of its own, read on it before and after the preprocess under
//! `bird_critic_sound` (red team rounds 41 to 43): its user variables however they were set (`SET
//! @v`, `SELECT ... INTO @v` on any line, a procedure that sets one), its session variables
//! (`SET sql_mode`, ...) but those the server moves by itself or the harness sets (the last
//! insert id, the time stamp, the random seeds, whether a transaction is open), the role it acts
//! as, and the statements that leave an object on it however they ran (in a procedure, through
//! `EXECUTE IMMEDIATE`): a temporary table or sequence made, a statement prepared, a table
//! opened by `HANDLER`. MariaDB 10.11 lists no session's temporary tables, so their making is
//! counted (`Com_create_temporary_table`); one made and dropped again is counted too. A new
//! session would have none of it, so an item whose preprocess changed it is not judged there.

use super::ItemSession;
use mysql::prelude::Queryable;

/// One line digesting the session's user variables, its session variables, its role and its
/// counts of statements that leave an object on it.
const SESSION_STATE: &str = "SELECT CONCAT_WS('/', \
     (SELECT CONCAT(COUNT(*), ':', MD5(GROUP_CONCAT(VARIABLE_NAME, '=', IFNULL(VARIABLE_VALUE, '<null>') \
      ORDER BY VARIABLE_NAME SEPARATOR ','))) FROM information_schema.USER_VARIABLES), \
     (SELECT CONCAT(COUNT(*), ':', MD5(GROUP_CONCAT(VARIABLE_NAME, '=', IFNULL(VARIABLE_VALUE, '<null>') \
      ORDER BY VARIABLE_NAME SEPARATOR ','))) FROM information_schema.SESSION_VARIABLES \
      WHERE VARIABLE_NAME NOT IN ('LAST_INSERT_ID', 'INSERT_ID', 'IDENTITY', 'TIMESTAMP', \
      'RAND_SEED1', 'RAND_SEED2', 'LAST_GTID', 'GTID_SEQ_NO', 'IN_TRANSACTION', \
      'MAX_STATEMENT_TIME')), \
     IFNULL(CURRENT_ROLE(), '<none>'), CURRENT_USER(), \
     (SELECT GROUP_CONCAT(VARIABLE_NAME, '=', VARIABLE_VALUE ORDER BY VARIABLE_NAME SEPARATOR ',') \
      FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME IN \
      ('COM_CREATE_TEMPORARY_TABLE', 'COM_PREPARE_SQL', 'COM_HA_OPEN')))";

impl ItemSession {
    /// What the session holds of its own ([`SESSION_STATE`]), read on it without the
    /// evaluator's commit rule; `None` when it cannot be read.
    pub(super) fn own_state(&self) -> Option<String> {
        let mut conn = self.conn.borrow_mut();
        conn.query_first(SESSION_STATE).ok().flatten()
    }
}
