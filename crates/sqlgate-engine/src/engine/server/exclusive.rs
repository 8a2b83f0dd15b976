//! The server to itself for the whole run (red team round 9). What a server computes with
//! besides the rows (a setting changed by `ALTER SYSTEM` and a reload or by `SET GLOBAL`, a
//! built-in replaced in place, a view or table created) can be changed once scoring has started
//! and restored before the end-of-run digests, and the run's hold on the data covers rows only.
//! Every such change needs a session on the server, so sqlgate claims the server: once its data
//! are held, no client session but the run's own may exist on the whole server (any database,
//! any role), and when scoring ends the server's own count of the sessions established since
//! then must equal the number sqlgate opened itself. PostgreSQL counts them per database in
//! `pg_stat_database.sessions` (version 14 and later) and lists every backend in
//! `pg_stat_activity`, both readable by any role; MariaDB / MySQL count connection attempts in
//! the global status `Connections` and open ones in `Threads_connected`, which need no
//! privilege (a user without `PROCESS` cannot list other sessions). PostgreSQL's
//! `pg_conf_load_time()` shows, besides, a configuration reload however it was signalled.
//!
//! A count is only as good as its history (red team round 10): PostgreSQL's per-database
//! counters are compared database by database, and a database dropped or whose statistics were
//! reset (`pg_stat_reset()`) during the run fails it, so no session can be balanced away. SQL a
//! MariaDB / MySQL server runs for no client (a replica's applier threads, which count in
//! neither status) is refused: a server that replicates from another, at the claim or at the
//! check, fails the run.

use std::collections::BTreeMap;

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

/// The sessions this process opened on the server (on PostgreSQL those established, on
/// MariaDB / MySQL every connection attempt, as each server counts them).
static OPENED: AtomicI64 = AtomicI64::new(0);

/// The sessions sqlgate opened on PostgreSQL databases it made and dropped during the run, each
/// counted on the dropped database before it went ([`forgotten`]): the server's counters forget
/// them with the database.
static FORGOTTEN: AtomicI64 = AtomicI64::new(0);

/// How long a check waits for a session that has just ended to leave the server's lists (a
/// client that has just disconnected, sqlgate's own start-up session) or its count to reach
/// the server's statistics (PostgreSQL flushes a session's count when it goes idle or ends).
/// Only a check that is not yet settled waits; on a loaded machine a backend's exit took more
/// than three seconds (a count one short, seen in a broad test run on two cores).
const SETTLE: Duration = Duration::from_secs(10);

/// How many other sessions a refusal lists.
const LISTED: i64 = 8;

/// Counts one session sqlgate opens on the server, before (MariaDB / MySQL) or once
/// (PostgreSQL) the server counts it.
pub fn opened() {
    OPENED.fetch_add(1, Ordering::SeqCst);
}

/// Records `sessions` established on a database sqlgate made during the run and is about to drop
/// (the caller checked that the server counted exactly sqlgate's own there, and that none can
/// connect any more): the server's count of them goes with the database.
pub fn forgotten(sessions: i64) {
    FORGOTTEN.fetch_add(sessions, Ordering::SeqCst);
}

/// What the server showed when the run claimed it: the sessions established so far (MariaDB /
/// MySQL) or each database's session counter (PostgreSQL), how many sqlgate had opened by then,
/// and (PostgreSQL) when the configuration was last loaded.
#[derive(Debug, Clone)]
pub struct Claim {
    established: i64,
    counters: Counters,
    own: i64,
    forgotten: i64,
    loaded: Option<String>,
}

/// One database's session counter as PostgreSQL's `pg_stat_database` shows it.
#[derive(Debug, Clone, PartialEq)]
struct Counter {
    /// The database's name, quoted (the shared objects' row has none).
    name: String,
    /// Sessions established on it since its statistics were last reset.
    sessions: i64,
    /// When its statistics were last reset (`stats_reset`), empty when never.
    reset: String,
}

/// The session counters of a PostgreSQL server, by database oid.
type Counters = BTreeMap<i64, Counter>;

/// Every database's session counter and last statistics reset, read afresh.
const POSTGRES_COUNTERS: &str = "SELECT datid::int8, \
     coalesce(quote_ident(datname::text), '(shared objects)'), coalesce(sessions, 0)::int8, \
     coalesce(stats_reset::text, '') FROM pg_catalog.pg_stat_database";

/// The backends that are neither one of `ours` nor the server's own housekeeping, as
/// `pid <pid> (<type>) of role <role> on <database>`, with when the server's configuration was
/// last loaded.
const POSTGRES_STATE: &str = "SELECT pg_catalog.pg_conf_load_time()::text, \
     ARRAY(SELECT 'pid ' || pid || ' (' || backend_type || ') of role ' || \
       coalesce(quote_ident(usename::text), '?') || ' on ' || coalesce(quote_ident(datname::text), '?') \
       FROM pg_catalog.pg_stat_activity WHERE pid <> ALL($1) AND backend_type NOT IN \
       ('autovacuum launcher', 'autovacuum worker', 'logical replication launcher', \
        'background writer', 'checkpointer', 'walwriter', 'archiver', 'startup') \
       ORDER BY pid LIMIT $2)";

/// One reading of the PostgreSQL server, read afresh (not from the transaction's cached
/// statistics): each database's session counter, the configuration load time, and the other
/// backends.
fn postgres_state(
    client: &mut postgres::Client,
    ours: &[i32],
) -> Result<(Counters, String, Vec<String>), String> {
    let error = |e: postgres::Error| format!("cannot read the server's sessions: {e}");
    client
        .batch_execute("SELECT pg_catalog.pg_stat_clear_snapshot()")
        .map_err(error)?;
    let counters = (client.query(POSTGRES_COUNTERS, &[]).map_err(error)?.iter())
        .map(|row| {
            let counter = Counter {
                name: row.get(1),
                sessions: row.get(2),
                reset: row.get(3),
            };
            (row.get(0), counter)
        })
        .collect();
    let row = client
        .query_one(POSTGRES_STATE, &[&ours, &LISTED])
        .map_err(error)?;
    Ok((counters, row.get(0), row.get(1)))
}

/// The sessions established on the PostgreSQL server since `claim`, database by database (a
/// database created since counts from nothing); an error when a database of the claim was
/// dropped or had its statistics reset, which would take sessions out of the count.
fn postgres_established(claim: &Claim, now: &Counters) -> Result<i64, String> {
    for (datid, before) in &claim.counters {
        let erased = match now.get(datid) {
            None => "was dropped",
            Some(after) if after.reset != before.reset => "had its statistics reset",
            Some(_) => continue,
        };
        return Err(format!(
            "database {} {erased} during the run: that takes the sessions established on it out \
             of the server's count, so the run cannot tell that it was alone on the server \
             (a session with the server's credentials can change what the server computes \
             with once scoring has started and restore it before the end-of-run digests)",
            before.name
        ));
    }
    Ok((now.iter())
        .map(|(datid, after)| {
            let before = claim.counters.get(datid).map_or(0, |c| c.sessions);
            after.sessions - before
        })
        .sum())
}

/// Claims the PostgreSQL server in a session of the run's hold (`ours`: the run's open
/// sessions' process ids): no other backend but the server's housekeeping may be connected,
/// once those that have just ended have left (two readings [`SETTLE`] apart at most).
pub fn postgres_claim(client: &mut postgres::Client, ours: &[i32]) -> Result<Claim, String> {
    let until = Instant::now() + SETTLE;
    let mut alone_once = false;
    loop {
        let own = OPENED.load(Ordering::SeqCst);
        let (counters, loaded, others) = postgres_state(client, ours)?;
        match (others.is_empty(), alone_once) {
            (true, true) => {
                return Ok(Claim {
                    established: 0,
                    counters,
                    own,
                    forgotten: FORGOTTEN.load(Ordering::SeqCst),
                    loaded: Some(loaded),
                })
            }
            (true, false) => alone_once = true,
            (false, _) if Instant::now() >= until => return Err(not_alone_at_start(&others)),
            (false, _) => alone_once = false,
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Checks, in a session of the run's hold (`ours`: the hold's sessions' process ids), that no
/// session but sqlgate's own was established on the PostgreSQL server since `claim`, that none
/// but the hold's is still connected once sqlgate's others have closed, and that the server's
/// configuration was not reloaded.
pub fn postgres_check(
    client: &mut postgres::Client,
    claim: &Claim,
    ours: &[i32],
) -> Result<(), String> {
    let until = Instant::now() + SETTLE;
    loop {
        let (counters, loaded, others) = postgres_state(client, ours)?;
        if claim.loaded.as_deref() != Some(loaded.as_str()) {
            return Err(format!(
                "the server's configuration was reloaded during the run (last loaded at {loaded}, \
                 {} at start-up): a setting changed by `ALTER SYSTEM` or the configuration file \
                 reaches every session at its next statement",
                claim.loaded.as_deref().unwrap_or("?")
            ));
        }
        let (seen, own) = counted(claim, postgres_established(claim, &counters)?);
        // A session that ends reports its count as it ends: a count short of sqlgate's own is
        // waited for, one above it is another session's.
        let settled = seen == own && others.is_empty();
        if settled || seen > own || Instant::now() >= until {
            if seen == own && !others.is_empty() {
                return Err(still_connected(&others));
            }
            return verdict((seen, own));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Claims the MariaDB / MySQL server in the session of the run's hold, the run's one open
/// connection: the server may not replicate from another ([`mysql_not_replicating`]) and may
/// have no other connection open (`Threads_connected`), once those that have just closed are
/// gone.
pub fn mysql_claim(conn: &mut mysql::Conn) -> Result<Claim, String> {
    mysql_not_replicating(conn)?;
    let until = Instant::now() + SETTLE;
    loop {
        let own = OPENED.load(Ordering::SeqCst);
        let (connections, open) = mysql_state(conn)?;
        if open <= 1 {
            return Ok(Claim {
                established: connections,
                counters: Counters::new(),
                own,
                forgotten: FORGOTTEN.load(Ordering::SeqCst),
                loaded: None,
            });
        }
        if Instant::now() >= until {
            return Err(not_alone_at_start(&[format!(
                "{} connections besides the run's own (`Threads_connected`: {open})",
                open - 1
            )]));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Checks, in the session of the run's hold, that the MariaDB / MySQL server does not replicate
/// from another and that no connection but sqlgate's own was made to it since `claim` (the
/// server counts each attempt at once).
pub fn mysql_check(conn: &mut mysql::Conn, claim: &Claim) -> Result<(), String> {
    mysql_not_replicating(conn)?;
    let (connections, _) = mysql_state(conn)?;
    verdict(counted(claim, connections - claim.established))
}

/// Refuses a MariaDB / MySQL server that replicates from another: its applier threads run the
/// other server's statements (a table created and dropped again, a setting) with no client
/// connection, so neither `Connections` nor `Threads_connected` sees them. MariaDB shows it to
/// any user in the global status (`Slaves_running`, `Slave_running`); MySQL 8 only in
/// `performance_schema.replication_applier_status`, and a server whose state cannot be read
/// is refused.
fn mysql_not_replicating(conn: &mut mysql::Conn) -> Result<(), String> {
    let Some(shown) = mysql_replication(conn)? else {
        return Ok(());
    };
    Err(format!(
        "the server replicates from another ({shown}): a replica's applier runs the other \
         server's statements (a table created and dropped again, a setting) with no client \
         connection, while the run reads. Stop replication (`STOP SLAVE` / `STOP REPLICA`) for \
         the run"
    ))
}

/// What the server shows of a replica thread running (`Slaves_running` and the like on
/// MariaDB, `replication_applier_status` on MySQL 8), `None` when none runs; an error when
/// that cannot be read.
pub(crate) fn mysql_replication(conn: &mut mysql::Conn) -> Result<Option<String>, String> {
    use mysql::prelude::Queryable;
    let error = |e: mysql::Error| format!("cannot tell whether the server replicates: {e}");
    let status: Vec<(String, String)> = conn
        .query(
            "SHOW GLOBAL STATUS WHERE Variable_name IN ('Slaves_running', 'Slave_running', \
             'Replica_running')",
        )
        .map_err(error)?;
    let replicating = match status.is_empty() {
        false => (status.iter()).any(|(_, value)| !["0", "OFF"].contains(&value.as_str())),
        true => {
            let running: Option<i64> = conn
                .query_first(
                    "SELECT COUNT(*) FROM performance_schema.replication_applier_status \
                     WHERE SERVICE_STATE = 'ON'",
                )
                .map_err(|e| {
                    format!(
                        "cannot tell whether the server replicates (grant the reader SELECT on \
                         `performance_schema.replication_applier_status`): {e}"
                    )
                })?;
            running.unwrap_or(0) > 0
        }
    };
    if !replicating {
        return Ok(None);
    }
    let shown: Vec<String> = (status.iter())
        .map(|(name, value)| format!("`{name}` {value}"))
        .collect();
    Ok(Some(match shown.is_empty() {
        true => "`replication_applier_status` shows an applier on".to_string(),
        false => shown.join(", "),
    }))
}

/// The server's `Connections` and `Threads_connected`.
fn mysql_state(conn: &mut mysql::Conn) -> Result<(i64, i64), String> {
    use mysql::prelude::Queryable;
    let rows: Vec<(String, i64)> = conn
        .query("SHOW GLOBAL STATUS WHERE Variable_name IN ('Connections', 'Threads_connected')")
        .map_err(|e| format!("cannot read the server's connections: {e}"))?;
    let value = |name: &str| {
        let found = rows.iter().find(|(n, _)| n.eq_ignore_ascii_case(name));
        found.map(|(_, v)| *v)
    };
    match (value("Connections"), value("Threads_connected")) {
        (Some(connections), Some(open)) => Ok((connections, open)),
        _ => Err(
            "cannot read the server's connections: the server shows no `Connections` \
                  or `Threads_connected` status"
                .into(),
        ),
    }
}

/// The sessions the server saw established since `claim` (`seen`, with those counted on the
/// databases sqlgate dropped since: [`forgotten`]) and those sqlgate opened.
fn counted(claim: &Claim, seen: i64) -> (i64, i64) {
    let forgotten = FORGOTTEN.load(Ordering::SeqCst) - claim.forgotten;
    (seen + forgotten, OPENED.load(Ordering::SeqCst) - claim.own)
}

/// Whether `(seen, own)` sessions since the claim leave the run alone on the server.
fn verdict((seen, own): (i64, i64)) -> Result<(), String> {
    match seen.cmp(&own) {
        std::cmp::Ordering::Equal => Ok(()),
        std::cmp::Ordering::Greater => Err(format!(
            "another session connected to the server during the run ({seen} sessions were \
             established on it since the start-up check, {own} of them sqlgate's own): a session \
             with the server's credentials can change what the server computes with (a setting, \
             a built-in function, a view or table) once scoring has started and restore it \
             before the end-of-run digests. Nothing but sqlgate may connect to the server while \
             it runs"
        )),
        std::cmp::Ordering::Less => Err(format!(
            "cannot account for the server's sessions: it counts {seen} established since the \
             start-up check, fewer than the {own} sqlgate opened"
        )),
    }
}

/// The error of a run that other sessions are still connected to when it ends.
fn still_connected(others: &[String]) -> String {
    format!(
        "other sessions are connected to the server when the run ends ({}): a session with the \
         server's credentials can change what the server computes with while the run reads. \
         Nothing but sqlgate may connect to the server while it runs",
        others.join(", ")
    )
}

/// The refusal of a server that others are connected to when the run starts.
fn not_alone_at_start(others: &[String]) -> String {
    format!(
        "other sessions are connected to the server at start-up ({}): a session with the \
         server's credentials can change what the server computes with (a setting, a built-in \
         function, a view or table) once scoring has started and restore it before the \
         end-of-run digests. Nothing but sqlgate may be connected to the server while it runs: \
         close every other session (and stop every process that connects) before the run",
        others.join(", ")
    )
}
