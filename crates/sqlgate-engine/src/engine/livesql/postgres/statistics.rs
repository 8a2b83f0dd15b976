//! A sound clone's cumulative statistics closed to every role but the administrator (red team
//! round 40): `pg_stat_user_tables`, `pg_statio_*`, `pg_stat_database` and the other collected
//! statistics count what sessions did (scans, rows read, blocks hit, transactions), so a
//! prediction moves them with plain reads, and a gold reading them on the prediction's clone
//! reads the prediction's work while no row, catalog row or digest has changed (no digest can
//! hold them: every honest read moves them too). On a `bird_critic_sound` clone and its twin,
//! `PUBLIC` loses `SELECT` on those views and `EXECUTE` on the `pg_stat_get_*` functions behind
//! them, in the clone's own `pg_catalog` (each database has its own), so the clone's role, and
//! every view or function it owns, is refused them: an item whose gold reads them fails on every
//! side, its baseline included. The views of the sessions open now (`pg_stat_activity`, its
//! TLS / GSSAPI / replication companions, `pg_stat_progress_*`), which a prediction's closed
//! session leaves nothing in, stay readable (they are the bootstrap superuser's, which reads the
//! functions); the planner's statistics (`pg_stats`) are a documented limit of their own. The
//! sizes of the whole database and of tablespaces are closed the same way: they count the
//! catalogs' files, which the temporary objects a prediction makes and drops grow (a relation's
//! own files are in the clone's own entry instead, `catalog_rows::CloneRows::own`).

use super::{pg_text, PgRun, Slot};

/// Revokes the collected statistics from `PUBLIC` in the database it runs in.
const CLOSE_STATISTICS: &str = r"DO $sqlgate$
DECLARE
  object text;
BEGIN
  FOR object IN
    SELECT 'pg_catalog.' || quote_ident(c.relname) FROM pg_catalog.pg_class c
    WHERE c.relnamespace = 'pg_catalog'::regnamespace AND c.relkind = 'v'
      AND c.relname ~ '^pg_stat(io)?_' AND c.relname !~ '^pg_stat_progress_'
      AND c.relname NOT IN ('pg_stat_activity', 'pg_stat_ssl', 'pg_stat_gssapi',
        'pg_stat_replication', 'pg_stat_wal_receiver', 'pg_stat_subscription')
  LOOP
    EXECUTE 'REVOKE SELECT ON ' || object || ' FROM PUBLIC';
  END LOOP;
  FOR object IN
    SELECT 'pg_catalog.' || p.oid::regprocedure::text FROM pg_catalog.pg_proc p
    WHERE p.pronamespace = 'pg_catalog'::regnamespace AND p.proname LIKE 'pg\_stat\_get\_%'
  LOOP
    EXECUTE 'REVOKE EXECUTE ON FUNCTION ' || object || ' FROM PUBLIC';
  END LOOP;
  REVOKE EXECUTE ON FUNCTION pg_catalog.pg_database_size(oid), pg_catalog.pg_database_size(name),
    pg_catalog.pg_tablespace_size(oid), pg_catalog.pg_tablespace_size(name) FROM PUBLIC;
END
$sqlgate$";

impl PgRun {
    /// Closes the collected statistics of `slot`'s clone to its role ([`CLOSE_STATISTICS`]),
    /// on an administrator's session of its own on the clone.
    pub(super) fn close_statistics(&self, slot: &Slot) -> Result<(), String> {
        let mut inside = self.admin(Some(&slot.database))?;
        inside
            .batch_execute(CLOSE_STATISTICS)
            .map_err(|e| format!("closing a clone's statistics: {}", pg_text(&e)))
    }
}
