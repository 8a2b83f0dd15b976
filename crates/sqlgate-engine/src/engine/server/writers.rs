//! What could still write the benchmark's data while a run reads them. The data digests are
//! taken at start-up and again when scoring ends (`score::data`), so a change that stays is
//! seen; these start-up checks refuse (exit 2, naming it) what is already in place to make one
//! in between: on PostgreSQL another session connected to a benchmark database (a session the
//! preparation left behind), on MariaDB / MySQL the server's event scheduler switched on (an
//! event runs as its definer, whom the read-only user cannot see).

use crate::engine::server::StartError;

/// How many other sessions a refusal lists.
const LISTED: i64 = 8;

/// The other sessions connected to the session's PostgreSQL database, each as `pid <pid> of
/// role <role>`: every backend of the database but this session's own and those without a
/// role (autovacuum workers, which write no row: the server starts them itself, under no
/// login role). The role's own other sessions count too (a second sqlgate run on the same
/// database, which docs/SECURITY.md asks the deployer to avoid). `pg_stat_activity` shows
/// every role the database, process id and role of other roles' sessions.
pub fn postgres_other_sessions(
    client: &mut postgres::Client,
) -> Result<Vec<String>, postgres::Error> {
    let rows = client.query(
        "SELECT 'pid ' || pid || ' of role ' || coalesce(quote_ident(usename::text), '?') \
         FROM pg_catalog.pg_stat_activity WHERE datname = current_database() \
         AND pid <> pg_backend_pid() AND usesysid IS NOT NULL ORDER BY pid LIMIT $1",
        &[&LISTED],
    )?;
    Ok(rows.iter().map(|row| row.get(0)).collect())
}

/// Refuses a PostgreSQL database (`database`, the URL's when empty) that other sessions are
/// connected to at start-up.
pub fn refuse_postgres(sessions: &[String], database: &str) -> Result<(), StartError> {
    if sessions.is_empty() {
        return Ok(());
    }
    Err(StartError::new(format!(
        "`dataset.engine`: other sessions are connected to {} at start-up ({}): a session left \
         behind by the server's preparation can write the benchmark's tables while the run \
         reads them, after the data digests were taken. Close every other session of the \
         benchmark's databases before the run (autovacuum workers are not counted)",
        place(database),
        sessions.join(", ")
    )))
}

/// Refuses a MariaDB / MySQL server whose event scheduler is on (`@@GLOBAL.event_scheduler`):
/// an event can write the benchmark's tables while the run reads them, and the read-only user
/// cannot list the events of schemas it holds no `EVENT` privilege on.
pub fn refuse_mysql_scheduler(conn: &mut mysql::Conn) -> Result<(), StartError> {
    use mysql::prelude::Queryable;
    let scheduler: Option<String> = conn
        .query_first("SELECT CAST(@@GLOBAL.event_scheduler AS CHAR)")
        .map_err(|e| {
            StartError::new(format!(
                "`dataset.engine`: the start-up check failed: cannot read the event scheduler's \
                 state: {e}"
            ))
        })?;
    let scheduler = scheduler.unwrap_or_default();
    if !scheduler.eq_ignore_ascii_case("ON") && scheduler != "1" {
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

/// The database named in a message.
fn place(database: &str) -> String {
    match database.is_empty() {
        true => "the database of `dataset.engine.url_env`".to_string(),
        false => format!("database `{database}`"),
    }
}
