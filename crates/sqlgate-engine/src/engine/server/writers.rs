//! What could still write the benchmark's data while a run reads them. The data digests are
//! taken at start-up and again when scoring ends (`score::data`), so a change that stays is
//! seen; these start-up checks refuse (exit 2, naming it) what is already in place to make one
//! in between: on PostgreSQL a session of a role that can write the tables connected to a
//! benchmark database (a session the preparation left behind), on MariaDB / MySQL the server's
//! event scheduler switched on (an event runs as its definer, whom the read-only user cannot
//! see). What connects later is kept from the data the run reads by the run's hold on them
//! (`Engine::hold_data`): a PostgreSQL snapshot every scoring transaction imports, or a
//! MariaDB / MySQL session locking every benchmark table for reading ([`mysql_lock_tables`]).

use crate::engine::server::StartError;
use std::time::{Duration, Instant};

/// How many other sessions a refusal lists.
const LISTED: i64 = 8;

/// How long the start-up check waits for other sessions to end: a client that has just
/// disconnected (`sqlgate load`'s, a preparation's script) leaves its backend for a moment.
const SETTLE: Duration = Duration::from_secs(3);

/// The other sessions connected to the session's PostgreSQL database whose role can write its
/// tables, each as `pid <pid> of role <role>`, once none has ended for [`SETTLE`]: every
/// backend of the database but this session's own whose role is a superuser, or owns or holds
/// `INSERT`, `UPDATE`, `DELETE` or `TRUNCATE` on a table outside the system schemas, itself or
/// through a role it is a member of (`pg_write_all_data` included). Sessions of read-only roles
/// (other sqlgate runs, each with its own role as docs/SECURITY.md asks) change no row, and
/// autovacuum workers have no role (the server starts them; they write no row).
/// `pg_stat_activity` shows every role the database, process id and role of every session, and
/// any role may ask another role's privileges.
pub fn postgres_other_sessions(
    client: &mut postgres::Client,
) -> Result<Vec<String>, postgres::Error> {
    let until = Instant::now() + SETTLE;
    loop {
        let rows = client.query(
            "SELECT 'pid ' || a.pid || ' of role ' || coalesce(quote_ident(a.usename::text), '?') \
             FROM pg_catalog.pg_stat_activity a WHERE a.datname = current_database() \
             AND a.pid <> pg_backend_pid() AND a.usesysid IS NOT NULL \
             AND EXISTS (SELECT 1 FROM pg_catalog.pg_roles r \
               WHERE pg_has_role(a.usesysid, r.oid, 'MEMBER') AND (r.rolsuper OR EXISTS (\
                 SELECT 1 FROM pg_catalog.pg_class c \
                 JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
                 WHERE c.relkind IN ('r', 'p') AND n.nspname <> 'information_schema' \
                 AND n.nspname NOT LIKE 'pg\\_%' AND (c.relowner = r.oid \
                   OR has_table_privilege(r.oid, c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE'))))) \
             ORDER BY a.pid LIMIT $1",
            &[&LISTED],
        )?;
        if rows.is_empty() || Instant::now() >= until {
            return Ok(rows.iter().map(|row| row.get(0)).collect());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Refuses a PostgreSQL database (`database`, the URL's when empty) that other sessions are
/// connected to at start-up.
pub fn refuse_postgres(sessions: &[String], database: &str) -> Result<(), StartError> {
    if sessions.is_empty() {
        return Ok(());
    }
    Err(StartError::new(format!(
        "`dataset.engine`: sessions of roles that can write its tables are connected to {} at \
         start-up ({}): a session left behind by the server's preparation can write the \
         benchmark's tables while the run reads them, after the data digests were taken. Close \
         every session of a role that can write the benchmark's tables (a superuser, an owner, \
         a role holding INSERT, UPDATE, DELETE or TRUNCATE) before the run",
        place(database),
        sessions.join(", ")
    )))
}

/// Whether the MariaDB / MySQL server's event scheduler is on (`@@GLOBAL.event_scheduler`).
pub fn mysql_scheduler_on(conn: &mut mysql::Conn) -> Result<bool, mysql::Error> {
    use mysql::prelude::Queryable;
    let scheduler: Option<String> =
        conn.query_first("SELECT CAST(@@GLOBAL.event_scheduler AS CHAR)")?;
    let scheduler = scheduler.unwrap_or_default();
    Ok(scheduler.eq_ignore_ascii_case("ON") || scheduler == "1")
}

/// Refuses a MariaDB / MySQL server whose event scheduler is on ([`mysql_scheduler_on`]): an
/// event can write the benchmark's tables while the run reads them, and the read-only user
/// cannot list the events of schemas it holds no `EVENT` privilege on.
pub fn refuse_mysql_scheduler(scheduler_on: bool) -> Result<(), StartError> {
    if !scheduler_on {
        return Ok(());
    }
    Err(StartError::new(
        "`dataset.engine`: the server's event scheduler is on (`@@GLOBAL.event_scheduler = \
         ON`): an event can write the benchmark's tables while the run reads them, after the \
         data digests were taken, and the read-only user cannot list the events. Turn it off \
         for the run (`SET GLOBAL event_scheduler = OFF`, or start the server with \
         `--event-scheduler=OFF`; MySQL 8 has it on by default)",
    ))
}

/// The most a MariaDB / MySQL session may idle (`wait_timeout`, in seconds: a year), so that the
/// server does not end the session holding the benchmark's tables during a long run.
const HOLD_IDLE_SECONDS: u64 = 31_536_000;

/// Locks every table of `schemas` for reading in the session of `conn` (`LOCK TABLES ...
/// READ`): until the session unlocks them or ends, other sessions may read them but none may
/// write, alter, drop or rename them, so a change made after the start-up digests and undone
/// before the end-of-run ones cannot happen while the run reads. No idle timeout of the server
/// ends the session meanwhile; a lock another session holds is waited for `lock_wait` seconds.
/// Returns the session's id ([`mysql_unlock`] checks it is the same session). Needs the `LOCK
/// TABLES` privilege on the run's databases (docs/SECURITY.md).
pub fn mysql_lock_tables(
    conn: &mut mysql::Conn,
    schemas: &std::collections::BTreeSet<String>,
    lock_wait: u64,
) -> Result<u32, mysql::Error> {
    use mysql::prelude::Queryable;
    let idle: Vec<(String, String)> =
        conn.query("SHOW SESSION VARIABLES LIKE 'idle\\_%transaction\\_timeout'")?;
    let mut settings: Vec<String> = idle
        .iter()
        .map(|(name, _)| format!("SESSION {name} = 0"))
        .collect();
    settings.push(format!("SESSION wait_timeout = {HOLD_IDLE_SECONDS}"));
    settings.push(format!("SESSION lock_wait_timeout = {lock_wait}"));
    conn.query_drop(format!("SET {}", settings.join(", ")))?;
    let quote = |name: &str| format!("`{}`", name.replace('`', "``"));
    let mut tables = Vec::new();
    for schema in schemas {
        let names: Vec<String> = conn.exec(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = ? \
             ORDER BY table_name",
            (schema,),
        )?;
        tables.extend(
            names
                .iter()
                .map(|t| format!("{}.{} READ", quote(schema), quote(t))),
        );
    }
    if !tables.is_empty() {
        conn.query_drop(format!("LOCK TABLES {}", tables.join(", ")))?;
    }
    conn.query_first::<u32, _>("SELECT CONNECTION_ID()")
        .map(Option::unwrap_or_default)
}

/// Unlocks the tables [`mysql_lock_tables`] locked in the session `id` of `conn`; an error
/// when that session ended before (killed from outside: its locks went with it).
pub fn mysql_unlock(conn: &mut mysql::Conn, id: u32) -> Result<(), String> {
    use mysql::prelude::Queryable;
    let lost = |why: String| {
        format!("the session locking the benchmark's tables for reading ended before scoring did ({why})")
    };
    let now: Option<u32> = conn
        .query_first("SELECT CONNECTION_ID()")
        .map_err(|e| lost(e.to_string()))?;
    if now != Some(id) {
        return Err(lost(format!("it is now session {now:?}, not {id}")));
    }
    conn.query_drop("UNLOCK TABLES")
        .map_err(|e| lost(e.to_string()))
}

/// The database named in a message.
fn place(database: &str) -> String {
    match database.is_empty() {
        true => "the database of `dataset.engine.url_env`".to_string(),
        false => format!("database `{database}`"),
    }
}
