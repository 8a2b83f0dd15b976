//! What the gate needs of a [`PgRun`]: its sessions counted as sqlgate's own for the server claim
//! (`server::exclusive`), and the judge interface the metrics reach it through
//! ([`LiveJudge`]).
//!
//! Every session the run opens counts as one of sqlgate's (`exclusive::opened`), and the run
//! tallies those it opens on each database it made. A clone is dropped and made again after each
//! item, and PostgreSQL's per-database session counter goes with the dropped database, so before
//! the drop ([`PgRun::release`]) the clone is closed to new sessions (`ALLOW_CONNECTIONS false`,
//! which binds superusers too), and the server's counter on it must come to exactly the run's
//! own tally with no session left on it: those sessions are then recorded as counted
//! (`exclusive::forgotten`), so the end-of-run check still balances. A counter above the tally
//! is another session's (fails the run); one that stays below it cannot be accounted for
//! (fails the run too). When scoring ends the remaining clones go the same way
//! ([`PgRun::drop_clones`]), before the claim is checked: the check reads the server's databases
//! in the snapshot of the run's hold on the data, which does not see a database made after it.
//! The templates, made before the hold, stay until the run closes ([`PgRun::close`]).

use super::{ident, pg_text, PgRun};
use crate::engine::livesql::{Fault, LiveJudge, Profile, Verdict};
use crate::engine::server::exclusive;
use crate::input::livesql::LiveItem;
use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a clone's session counter may take to reach the run's tally (a session that has just
/// ended reports its count as it exits).
const SETTLE: Duration = Duration::from_secs(5);

/// The sessions a run opened on each database, since the database was last made.
#[derive(Debug, Default)]
pub(super) struct Tally(Mutex<BTreeMap<String, i64>>);

impl Tally {
    /// Counts one session the run opened (on `database`, or the URL's when `None`) as one of
    /// sqlgate's own.
    pub(super) fn connected(&self, database: Option<&str>) {
        exclusive::opened();
        if let Some(database) = database {
            self.on(database);
        }
    }

    /// Counts one session on `database` that is already one of sqlgate's (`exclusive::opened`
    /// by whatever opened it: the Query data check's digest session).
    pub(super) fn on(&self, database: &str) {
        let mut tally = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        *tally.entry(database.to_string()).or_default() += 1;
    }

    /// The sessions opened on `database` since it was made, forgotten here.
    fn take(&self, database: &str) -> i64 {
        let mut tally = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        tally.remove(database).unwrap_or(0)
    }
}

impl PgRun {
    /// Before `database` (a clone the run made) is dropped: closes it to new sessions, waits
    /// until no session is on it and the server counts exactly the run's own there, and records
    /// those as counted. An error (a fault: the run stops) when another session was established
    /// on it, or the count does not come to the run's.
    pub(super) fn release(
        &self,
        admin: &mut postgres::Client,
        database: &str,
    ) -> Result<(), Fault> {
        self.sql(
            admin,
            &format!(
                "ALTER DATABASE {} WITH ALLOW_CONNECTIONS false",
                ident(database)
            ),
        )?;
        let ours = self.tally.take(database);
        let until = Instant::now() + SETTLE;
        loop {
            let (seen, connected) = clone_sessions(admin, database)?;
            if seen == ours && connected == 0 {
                exclusive::forgotten(ours);
                return Ok(());
            }
            if seen > ours {
                return Err(format!("another session connected to an item's clone `{database}` during the run ({seen} sessions established on it, {ours} of them sqlgate's own): nothing but sqlgate may connect to the server while it runs"));
            }
            if Instant::now() >= until {
                return Err(format!("cannot account for the sessions on an item's clone `{database}`: the server counts {seen} established on it ({connected} still connected), sqlgate opened {ours}"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl PgRun {
    /// Drops every free clone and its role, each clone accounted for first
    /// ([`PgRun::release`]); an error (a fault) when one cannot be.
    pub(super) fn drop_clones(&self) -> Result<(), Fault> {
        let free = std::mem::take(&mut *self.free.lock().unwrap_or_else(PoisonError::into_inner));
        let mut admin = self.admin(None)?;
        for slot in free.into_values().flatten() {
            self.release(&mut admin, &slot.database)?;
            let database = ident(&slot.database);
            self.sql(
                &mut admin,
                &format!("DROP DATABASE {database} WITH (FORCE)"),
            )?;
            self.sql(&mut admin, &format!("DROP ROLE {}", ident(&slot.role)))?;
        }
        Ok(())
    }
}

/// The sessions established on `database` as the server counts them (read afresh), and how many
/// are connected to it now.
fn clone_sessions(admin: &mut postgres::Client, database: &str) -> Result<(i64, i64), Fault> {
    let error =
        |e: postgres::Error| format!("reading the sessions of `{database}`: {}", pg_text(&e));
    admin
        .batch_execute("SELECT pg_catalog.pg_stat_clear_snapshot()")
        .map_err(error)?;
    let row = admin
        .query_one(
            "SELECT coalesce((SELECT sessions FROM pg_catalog.pg_stat_database WHERE datname = $1::text), 0)::int8, \
             (SELECT count(*) FROM pg_catalog.pg_stat_activity WHERE datname = $1::text)::int8",
            &[&database],
        )
        .map_err(error)?;
    Ok((row.get(0), row.get(1)))
}

impl Drop for PgRun {
    fn drop(&mut self) {
        self.close();
    }
}

/// A run judges through the gate's metrics (`bird_critic` and `bird_critic_sound` on
/// PostgreSQL).
impl LiveJudge for PgRun {
    fn judge(
        &self,
        item: &LiveItem,
        prediction: Option<&[String]>,
        profile: Profile,
    ) -> Result<Verdict, Fault> {
        PgRun::judge_as(self, item, prediction, profile)
    }

    fn finish(&self) -> Result<(), Fault> {
        self.drop_clones()
    }

    fn close(&self) {
        PgRun::close(self)
    }
}

/// The run's own databases and roles (`sqlgate_live_...`) are left out of what the run records
/// of the server (`structure::postgres_server_state`, the shared catalogs), so at start-up no
/// other may exist: one would be another run's, left when it could not end, or a preparation's,
/// named to be left out while a prediction reads it. Refused, naming them.
///
/// Refused too: a replication slot or a prepared transaction, server state a clone's
/// prediction reads (`pg_replication_slots`, `pg_prepared_xacts`: views over the server's
/// memory, which no catalog digest reads; red team round 20) and a benchmark server has no use
/// for; a subscription (its skip position, `subskiplsn`, is a log position every role reads,
/// which the catalog digests leave out with the server's other positions; round 23); and a
/// setting waiting for a restart, or taken from a configuration file line that is no
/// longer there (a reload, then the file restored: the value as before, but `pg_settings` says
/// where it came from; red team round 21), read here on the administrator's session, which
/// sets nothing but its name, so every setting the digest session pins reads its server
/// source.
pub(super) fn refuse_foreign_state(admin: &mut postgres::Client) -> Result<(), String> {
    let names: Vec<String> = admin
        .query(
            "SELECT kind || ' ' || name FROM (SELECT 'database' AS kind, datname::text AS name \
             FROM pg_catalog.pg_database WHERE datname LIKE 'sqlgate\\_live\\_%' \
             UNION ALL SELECT 'role', rolname::text FROM pg_catalog.pg_roles \
             WHERE rolname LIKE 'sqlgate\\_live\\_%' \
             UNION ALL SELECT 'replication slot', slot_name::text \
             FROM pg_catalog.pg_replication_slots \
             UNION ALL SELECT 'prepared transaction', gid FROM pg_catalog.pg_prepared_xacts \
             UNION ALL SELECT 'subscription', subname::text FROM pg_catalog.pg_subscription \
             UNION ALL SELECT 'setting', name || ' waiting for a restart' \
             FROM pg_catalog.pg_settings WHERE pending_restart \
             UNION ALL SELECT 'setting', name || ' from a configuration file line no longer there' \
             FROM pg_catalog.pg_settings s WHERE s.source = 'configuration file' \
             AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_file_settings f \
             WHERE lower(f.name) = lower(s.name) AND f.applied)) o \
             ORDER BY 1 LIMIT 5",
            &[],
        )
        .map_err(|e| format!("reading the server's databases and roles: {}", pg_text(&e)))?
        .iter()
        .map(|row| row.get(0))
        .collect();
    match names.is_empty() {
        true => Ok(()),
        false => Err(format!(
            "the server holds what a run on clones does not start beside ({}): a database or \
             role named `sqlgate_live_...` that is not this run's (another run's that could not \
             end, or one made to be left out of what the run records), a replication slot, a \
             prepared transaction, a subscription, or a setting the configuration files no longer explain \
             (state a prediction reads that no digest holds); drop them, or reload or restart \
             the server, before the run",
            names.join(", ")
        )),
    }
}
