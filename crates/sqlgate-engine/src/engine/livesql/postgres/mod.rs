//! State-changing SQL on PostgreSQL (issue 46): BIRD-Critic's PostgreSQL evaluation, each item on
//! a database of its own cloned from a template, run as a role that reaches only that clone.
//!
//! At start ([`PgRun::start`], as a role that may create databases and roles): for every db_id a
//! template `CREATE DATABASE ... TEMPLATE <db_id>` (the base database is only read, as the source
//! of the copy), whose schemas and objects are handed to a login-less owner role of the run, its
//! connections then refused (`ALLOW_CONNECTIONS false`). Items take a clone from a pool per db_id
//! (at most one clone per worker is ever made): `CREATE DATABASE ... TEMPLATE`, no privilege for
//! `PUBLIC`, `CONNECT` and `TEMPORARY` for the clone's own role, which is given the objects
//! (`REASSIGN OWNED`). That role has no superuser, database, role, replication or RLS-bypass
//! right, no membership, no `CREATE` on any database (so no `CREATE EXTENSION`, no schema), and
//! may not read or write server files or run programs (`COPY ... TO / FROM` a file or `PROGRAM`,
//! `pg_read_file`, `lo_import` are superuser or predefined-role rights it lacks). Before each item
//! its password is new and its settings reset (`temp_file_limit` from the temporary-file budget). After
//! each item the clone is dropped (`WITH (FORCE)`) and made again from the template: a failure
//! there is a fault of the harness, never a verdict.
//!
//! One item, as BIRD-Critic's `single_instance_eval_postgresql.py` judges it: the preprocess
//! (errors ignored), the prediction's statements in order on one session (the first error or
//! timeout ends them), then, if they ran cleanly and the item has test cases, its Python tests
//! (`helpers_pg.py`) on the same session (for an `efficiency` item the tests get the item's
//! `issue_sql` as `pred_sqls` and the prediction as `sol_sqls`), then the clean-up. No default
//! test: an item without test cases passes when its statements run. Each statement runs as
//! psycopg2 runs it for that evaluator: its own transaction with `statement_timeout` 60 s (15 s
//! when the text holds `WITH RECURSIVE`), committed, or rolled back on error; a
//! `QueryCanceled` is a timeout, any other error an execution error; a statement's rows are
//! those of its last result, at most 10 000 kept.
//!
//! A watchdog ends the item's session at the item's deadline (the wrapper's kill: an execution
//! error), when its clone outgrows the disk budget, and the item stops when a statement returns
//! more rows than the row budget.

use super::python::{self, ItemDb, Job, TestsError};
use super::session::Stopped;
use super::{Fault, Profile, Verdict};
use crate::engine::server::tls::{self, PgTarget};
use crate::input::livesql::LiveItem;
use crate::util::sqlite::now_nanos;
use futures_util::StreamExt;
use postgres::types::Type;
use serde_json::{json, Value as Json};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio_postgres::{Client, SimpleQueryMessage};
use watch::Watch;

mod gate;
mod watch;

/// The PostgreSQL runner and its helpers, written for sqlgate (no upstream code).
pub const HELPERS_PG: &str = include_str!("../helpers_pg.py");
/// Rows of a statement's result kept (the evaluator's `fetchmany(MAX_ROWS + 1)[:MAX_ROWS]`).
const KEPT_ROWS: usize = 10_000;

/// What a PostgreSQL run needs.
#[derive(Debug, Clone)]
pub struct PgSettings {
    /// A URL of a role that may create databases and roles (a secret: never printed).
    pub admin_url: String,
    /// The Python interpreter for the test cases.
    pub python: PathBuf,
    /// Wall-clock time an item may take, over all its statements and tests (the evaluator's
    /// wrapper kills a task after 300 s).
    pub deadline: Duration,
    /// Most bytes an item's clone may grow to (`pg_database_size`).
    pub disk_bytes: u64,
    /// Most bytes of temporary files one of its statements may write (`temp_file_limit`): the
    /// evaluator has no such limit, so it is large (a statement that spills more fails with an
    /// execution error where the evaluator would have run it to its own timeout).
    pub temp_bytes: u64,
    /// Most rows one statement may return before the item is stopped.
    pub max_rows: u64,
}

impl PgSettings {
    /// The defaults with `admin_url`: 300 s, 1 GiB of database, 8 GiB of temporary files, a
    /// million rows, `python3`.
    pub fn new(admin_url: String) -> PgSettings {
        PgSettings {
            admin_url,
            python: PathBuf::from("python3"),
            deadline: Duration::from_secs(300),
            disk_bytes: 1 << 30,
            temp_bytes: 8 << 30,
            max_rows: 1_000_000,
        }
    }
}

/// A clone and the role that reaches it.
#[derive(Debug)]
struct Slot {
    database: String,
    role: String,
}

/// One run on a PostgreSQL server: the templates, the pools of clones, the roles.
pub struct PgRun {
    target: PgTarget,
    settings: PgSettings,
    tag: String,
    owner: String,
    /// db_id -> its template database.
    templates: BTreeMap<String, String>,
    /// db_id -> its free clones.
    free: Mutex<BTreeMap<String, Vec<Slot>>>,
    /// Every slot made, for the clean-up at the end.
    made: Mutex<Vec<(String, String)>>,
    /// The sessions it opened, by database (`gate`).
    tally: gate::Tally,
}

impl std::fmt::Debug for PgRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgRun").field("tag", &self.tag).finish()
    }
}

/// `name` as a quoted identifier.
fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `text` as a quoted literal.
fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// 16 random bytes as hex, from the system's generator.
pub(super) fn random_hex() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| format!("no random bytes for a password: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The server's message of a client error.
fn pg_text(error: &tokio_postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => db.message().to_string(),
        None => tls::with_causes(error),
    }
}

/// Hands every schema of the current database but the system's, and every object in them, to
/// `owner` (run in a template, by the administrator).
fn hand_over(owner: &str) -> String {
    let owner = literal(owner);
    format!(
        "DO $$ DECLARE r record; BEGIN
  FOR r IN SELECT n.nspname FROM pg_namespace n WHERE n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema' LOOP
    EXECUTE format('ALTER SCHEMA %I OWNER TO %I', r.nspname, {owner});
  END LOOP;
  FOR r IN SELECT c.relname, n.nspname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema' AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f') LOOP
    EXECUTE format('ALTER %s %I.%I OWNER TO %I', CASE r.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' WHEN 'S' THEN 'SEQUENCE' WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END, r.nspname, r.relname, {owner});
  END LOOP;
  FOR r IN SELECT p.oid::regprocedure AS sig, p.prokind FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema' LOOP
    EXECUTE format('ALTER %s %s OWNER TO %I', CASE r.prokind WHEN 'p' THEN 'PROCEDURE' WHEN 'a' THEN 'AGGREGATE' ELSE 'FUNCTION' END, r.sig, {owner});
  END LOOP;
  FOR r IN SELECT t.typname, n.nspname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
      WHERE n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema' AND t.typtype IN ('e', 'd', 'r') LOOP
    EXECUTE format('ALTER TYPE %I.%I OWNER TO %I', r.nspname, r.typname, {owner});
  END LOOP;
END $$"
    )
}

impl PgRun {
    /// Makes the run's owner role and one template per db_id in `db_ids` (each a database of
    /// that name on the server). The administrator must be able to create databases and roles;
    /// a base database with an extension other than `plpgsql` is refused (its clones would lend
    /// it to the prediction).
    pub fn start(settings: PgSettings, db_ids: &BTreeSet<String>) -> Result<PgRun, String> {
        let mut target = tls::postgres_target(&settings.admin_url)?;
        target.config.application_name("sqlgate-livesql");
        target.session_config.application_name("sqlgate-livesql");
        let tag = random_hex()?[..10].to_string();
        let owner = format!("sqlgate_live_{tag}_owner");
        let mut run = PgRun {
            target,
            settings,
            owner,
            tag,
            templates: BTreeMap::new(),
            free: Mutex::default(),
            made: Mutex::default(),
            tally: gate::Tally::default(),
        };
        let mut admin = run.admin(None)?;
        let may: (bool, bool, bool) = admin
            .query_one(
                "SELECT rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = current_user",
                &[],
            )
            .map(|row| (row.get(0), row.get(1), row.get(2)))
            .map_err(|e| format!("reading the administrator's rights: {}", pg_text(&e)))?;
        if !(may.0 || (may.1 && may.2)) {
            return Err("the administrator role may not create databases and roles (CREATEDB and CREATEROLE, or a superuser, are needed to clone the item's databases)".into());
        }
        run.sql(
            &mut admin,
            &format!("CREATE ROLE {} NOLOGIN", ident(&run.owner)),
        )?;
        for (index, db_id) in db_ids.iter().enumerate() {
            let template = format!("sqlgate_live_{}_{index}_t", run.tag);
            run.make_template(&mut admin, db_id, &template)?;
            run.templates.insert(db_id.clone(), template);
        }
        Ok(run)
    }

    /// A synchronous administrator session on `database` (the URL's when `None`).
    fn admin(&self, database: Option<&str>) -> Result<postgres::Client, String> {
        let mut config = self.target.config.clone();
        if let Some(database) = database {
            config.dbname(database);
        }
        let client = config
            .connect(self.target.connector.clone())
            .map_err(|e| format!("cannot connect as the administrator: {}", pg_text(&e)))?;
        self.tally.connected(database);
        Ok(client)
    }

    fn sql(&self, client: &mut postgres::Client, sql: &str) -> Result<(), String> {
        client
            .batch_execute(sql)
            .map_err(|e| format!("`{}`: {}", sql.lines().next().unwrap_or(sql), pg_text(&e)))
    }

    /// The template of `db_id`: a copy of it whose objects the run's owner role owns, closed to
    /// connections.
    fn make_template(
        &self,
        admin: &mut postgres::Client,
        db_id: &str,
        template: &str,
    ) -> Result<(), String> {
        let extensions = self.extensions(db_id)?;
        if let Some(other) = extensions.iter().find(|e| e.as_str() != "plpgsql") {
            return Err(format!("database `{db_id}` has the extension `{other}`: its clones would lend it to the predictions, so it is refused"));
        }
        let base = ident(db_id);
        self.sql(
            admin,
            &format!("CREATE DATABASE {} TEMPLATE {base}", ident(template)),
        )?;
        self.sql(
            admin,
            &format!("REVOKE ALL ON DATABASE {} FROM PUBLIC", ident(template)),
        )?;
        let mut inside = self.admin(Some(template))?;
        self.sql(&mut inside, &hand_over(&self.owner))?;
        drop(inside);
        self.sql(
            admin,
            &format!(
                "ALTER DATABASE {} WITH ALLOW_CONNECTIONS false",
                ident(template)
            ),
        )
    }

    /// A free clone of `db_id`'s template, made when none is free.
    fn acquire(&self, db_id: &str) -> Result<Slot, Fault> {
        let template = (self.templates.get(db_id))
            .ok_or_else(|| format!("no database `{db_id}` in the run"))?;
        let taken = {
            let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
            free.get_mut(db_id).and_then(Vec::pop)
        };
        if let Some(slot) = taken {
            return Ok(slot);
        }
        let slot = {
            let mut made = self.made.lock().unwrap_or_else(PoisonError::into_inner);
            let n = made.len();
            let slot = Slot {
                database: format!("sqlgate_live_{}_c{n}", self.tag),
                role: format!("sqlgate_live_{}_r{n}", self.tag),
            };
            made.push((slot.database.clone(), slot.role.clone()));
            slot
        };
        let mut admin = self.admin(None)?;
        self.sql(&mut admin, &format!(
            "CREATE ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS CONNECTION LIMIT 3",
            ident(&slot.role)
        ))?;
        self.make_clone(&mut admin, &slot, template)?;
        Ok(slot)
    }

    /// `slot`'s clone of `template`, reachable by its role only, its objects the role's.
    fn make_clone(
        &self,
        admin: &mut postgres::Client,
        slot: &Slot,
        template: &str,
    ) -> Result<(), Fault> {
        let (database, role) = (ident(&slot.database), ident(&slot.role));
        self.sql(
            admin,
            &format!("CREATE DATABASE {database} TEMPLATE {}", ident(template)),
        )?;
        self.sql(admin, &format!(
            "REVOKE ALL ON DATABASE {database} FROM PUBLIC; GRANT CONNECT, TEMPORARY ON DATABASE {database} TO {role}"
        ))?;
        let mut inside = self.admin(Some(&slot.database))?;
        self.sql(
            &mut inside,
            &format!("REASSIGN OWNED BY {} TO {role}", ident(&self.owner)),
        )
    }

    /// Drops `slot`'s clone (ending its sessions) and makes it again; the slot is free again.
    fn reset(&self, db_id: &str, slot: Slot) -> Result<(), Fault> {
        let template = &self.templates[db_id];
        let mut admin = self.admin(None)?;
        self.release(&mut admin, &slot.database)
            .and_then(|()| {
                let drop = format!("DROP DATABASE {} WITH (FORCE)", ident(&slot.database));
                self.sql(&mut admin, &drop)
            })
            .and_then(|()| self.make_clone(&mut admin, &slot, template))
            .map_err(|e| format!("resetting an item's clone: {e}"))?;
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        free.entry(db_id.to_string()).or_default().push(slot);
        Ok(())
    }

    /// A new password and fresh settings for `slot`'s role, and the role's session on its clone.
    fn open(&self, slot: &Slot) -> Result<ItemSession, Fault> {
        let password = random_hex()?;
        let mut admin = self.admin(None)?;
        let role = ident(&slot.role);
        self.sql(&mut admin, &format!(
            "ALTER ROLE {role} RESET ALL; ALTER ROLE {role} SET temp_file_limit = {}; ALTER ROLE {role} PASSWORD {}",
            (self.settings.temp_bytes / 1024).max(1),
            literal(&password)
        ))?;
        let mut config = self.target.session_config.clone();
        config
            .user(&slot.role)
            .password(&password)
            .dbname(&slot.database);
        let session = ItemSession::connect(&config, &self.target, self.settings.max_rows)?;
        self.tally.connected(Some(&slot.database));
        Ok(session)
    }

    /// The names of the extensions installed in `db_id`.
    fn extensions(&self, db_id: &str) -> Result<Vec<String>, String> {
        let mut client = self.admin(Some(db_id))?;
        let rows = client
            .query("SELECT extname::text FROM pg_extension ORDER BY 1", &[])
            .map_err(|e| format!("reading database `{db_id}`: {}", pg_text(&e)))?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    /// Judges one item on a fresh clone of its database; a fault of the harness (a clone that
    /// could not be made or reset, a runner that could not start) is an `Err`, never a verdict.
    pub fn judge(&self, item: &LiveItem, prediction: Option<&[String]>) -> Result<Verdict, Fault> {
        let Some(prediction) = prediction else {
            return Ok(Verdict::no_prediction());
        };
        let slot = self.acquire(&item.db_id)?;
        let outcome = self.run_item(&slot, item, prediction);
        self.reset(&item.db_id, slot)?;
        match outcome {
            Ok(verdict) => Ok(verdict),
            Err(TestsError::Stopped(stop)) => Ok(Verdict::stopped(Profile::BirdCritic, stop)),
            Err(TestsError::Fault(fault)) => Err(fault),
        }
    }

    /// The item on `slot`'s clone, watched until it ends.
    fn run_item(
        &self,
        slot: &Slot,
        item: &LiveItem,
        prediction: &[String],
    ) -> Result<Verdict, TestsError> {
        let session = self.open(slot).map_err(TestsError::Fault)?;
        let deadline = Instant::now() + self.settings.deadline;
        let watch = Watch::start(self, slot, deadline, Arc::clone(&session.stop))?;
        let result = judge_on(&session, item, prediction, &self.settings, deadline);
        watch.finish();
        result
    }
}

impl PgRun {
    /// Drops every clone, template and role the run made (best effort: a server that is gone
    /// keeps them, all named `sqlgate_live_<tag>_...`); again on drop.
    pub fn close(&self) {
        let Ok(mut admin) = self.admin(None) else {
            return;
        };
        let made = std::mem::take(&mut *self.made.lock().unwrap_or_else(PoisonError::into_inner));
        for (database, role) in made {
            let _ = admin.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                ident(&database)
            ));
            let _ = admin.batch_execute(&format!("DROP ROLE IF EXISTS {}", ident(&role)));
        }
        for template in self.templates.values() {
            let _ = admin.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                ident(template)
            ));
        }
        let _ = admin.batch_execute(&format!("DROP ROLE IF EXISTS {}", ident(&self.owner)));
    }
}

/// The evaluator's flow on one session: preprocess, prediction, tests, clean-up.
fn judge_on(
    session: &ItemSession,
    item: &LiveItem,
    prediction: &[String],
    settings: &PgSettings,
    deadline: Instant,
) -> Result<Verdict, TestsError> {
    session.execute_queries(&item.preprocess_sql)?;
    let ran = session.execute_queries(prediction)?;
    let mut verdict = Verdict {
        success: !ran.exec_error && !ran.timeout,
        execution_error: ran.exec_error,
        timeout_error: ran.timeout,
        message: ran.message.clone(),
        ..Verdict::default()
    };
    if verdict.success && !item.test_cases.is_empty() {
        let (pred_sqls, sol_sqls) = match item.efficiency {
            true => (&item.issue_sql[..], prediction),
            false => (prediction, &item.sol_sql[..]),
        };
        let job = Job {
            tests: &item.test_cases,
            pass_conditions: false,
            conditions: &item.conditions,
            pred_sqls,
            sol_sqls,
            pred_query_result: ran.rows.clone().unwrap_or(Json::Null),
            profile: Profile::BirdCritic,
        };
        let left = deadline.saturating_duration_since(Instant::now());
        let until = now_nanos().saturating_add(left.as_nanos() as u64);
        let results = python::run_with(session, HELPERS_PG, &job, &settings.python, until)?;
        verdict.add_tests(&results);
    }
    session.execute_queries(&item.clean_up_sql)?;
    Ok(verdict)
}

/// What `execute_queries` returns: the last rows (protocol form) and the flags.
#[derive(Debug, Default)]
struct Ran {
    rows: Option<Json>,
    exec_error: bool,
    timeout: bool,
    message: String,
}

/// A statement's error: the class psycopg2 raises and the server's text.
#[derive(Debug)]
struct StatementError {
    class: &'static str,
    message: String,
}

/// The item's session on its clone, as its own role.
struct ItemSession {
    client: Client,
    runtime: tokio::runtime::Runtime,
    stop: Arc<Mutex<Option<String>>>,
    max_rows: u64,
}

impl ItemSession {
    fn connect(
        config: &tokio_postgres::Config,
        target: &PgTarget,
        max_rows: u64,
    ) -> Result<ItemSession, Fault> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("no runtime for an item's session: {e}"))?;
        let connector = target.connector.clone();
        let client = runtime
            .block_on(async {
                let (client, connection) = config.connect(connector).await?;
                tokio::spawn(connection);
                Ok::<_, tokio_postgres::Error>(client)
            })
            .map_err(|e| format!("cannot connect to an item's clone: {}", pg_text(&e)))?;
        Ok(ItemSession {
            client,
            runtime,
            stop: Arc::default(),
            max_rows,
        })
    }

    /// Why the watchdog ended the session, if it did.
    fn stopped(&self) -> Option<Stopped> {
        let stop = self.stop.lock().unwrap_or_else(PoisonError::into_inner);
        stop.clone().map(Stopped)
    }

    /// The statements in order, stopping at the first error (the evaluator's
    /// `execute_queries`).
    fn execute_queries(&self, sqls: &[String]) -> Result<Ran, Stopped> {
        let mut ran = Ran::default();
        for (i, sql) in sqls.iter().enumerate() {
            match self.perform(sql) {
                Ok(rows) => ran.rows = rows,
                Err(error) => {
                    if let Some(stop) = self.stopped() {
                        return Err(stop);
                    }
                    ran.timeout = error.class == "QueryCanceled";
                    ran.exec_error = !ran.timeout;
                    ran.message = format!(
                        "{} executing query {}: {}",
                        error.class,
                        i + 1,
                        error.message
                    );
                    break;
                }
            }
        }
        Ok(ran)
    }

    /// One statement as the evaluator's `perform_query_on_postgresql_databases` runs it: in a
    /// transaction of its own with the evaluator's `statement_timeout`, committed (rolled back on
    /// an error); its last result's rows, `None` when that result has none.
    fn perform(&self, sql: &str) -> Result<Option<Json>, StatementError> {
        if let Some(stop) = self.stopped() {
            return Err(StatementError {
                class: "OperationalError",
                message: stop.0,
            });
        }
        let timeout = match sql.to_uppercase().contains("WITH RECURSIVE") {
            true => "15s",
            false => "60s",
        };
        self.runtime.block_on(async {
            let tags = column_tags(&self.client, sql).await;
            let begin = format!("BEGIN; SET statement_timeout = '{timeout}'");
            self.client
                .batch_execute(&begin)
                .await
                .map_err(statement_error)?;
            match self.last_result(sql, tags).await {
                Ok(rows) => {
                    self.client
                        .batch_execute("COMMIT")
                        .await
                        .map_err(statement_error)?;
                    Ok(rows)
                }
                Err(error) => {
                    let _ = self.client.batch_execute("ROLLBACK").await;
                    Err(error)
                }
            }
        })
    }

    /// Runs `sql` by the simple protocol (as psycopg2 does: several statements in one text all
    /// run) and keeps the rows of its last result; a text without a statement (empty, blank, a
    /// comment: [`is_blank`]) is psycopg2's `ProgrammingError`.
    async fn last_result(
        &self,
        sql: &str,
        tags: Option<Vec<&'static str>>,
    ) -> Result<Option<Json>, StatementError> {
        let stream = self
            .client
            .simple_query_raw(sql)
            .await
            .map_err(statement_error)?;
        let mut stream = std::pin::pin!(stream);
        let (mut current, mut last): (Option<(usize, Vec<Json>)>, Option<Json>) = (None, None);
        if is_blank(sql) {
            return Err(StatementError {
                class: "ProgrammingError",
                message: "can't execute an empty query".into(),
            });
        }
        let mut seen = 0u64;
        while let Some(message) = stream.next().await {
            match message.map_err(statement_error)? {
                SimpleQueryMessage::RowDescription(columns) => {
                    current = Some((columns.len(), Vec::new()))
                }
                SimpleQueryMessage::Row(row) => {
                    seen += 1;
                    if seen > self.max_rows {
                        return Err(StatementError {
                            class: "OperationalError",
                            message: format!(
                                "a statement returned more than {} rows, the item's row budget",
                                self.max_rows
                            ),
                        });
                    }
                    if let Some((width, rows)) =
                        current.as_mut().filter(|(_, rows)| rows.len() < KEPT_ROWS)
                    {
                        let cells: Vec<Json> = (0..*width)
                            .map(|i| row.get(i).map_or(Json::Null, Json::from))
                            .collect();
                        rows.push(Json::Array(cells));
                    }
                }
                SimpleQueryMessage::CommandComplete(_) => {
                    last = current.take().map(|(width, rows)| {
                        let tags = tags
                            .clone()
                            .filter(|t| t.len() == width)
                            .unwrap_or_else(|| vec!["text"; width]);
                        json!({ "types": tags, "data": rows })
                    });
                }
                _ => {}
            }
        }
        Ok(last)
    }
}

/// The database side of the PostgreSQL runner's requests.
impl ItemDb for ItemSession {
    fn answer(&self, op: &str, request: &Json) -> Result<Json, TestsError> {
        match op {
            "exec" => {
                let sqls: Vec<String> =
                    serde_json::from_value(request["sqls"].clone()).map_err(|_| {
                        TestsError::Fault("`exec` without a list of texts `sqls`".into())
                    })?;
                let ran = self.execute_queries(&sqls)?;
                Ok(
                    json!({ "rows": ran.rows, "exec_error": ran.exec_error, "timeout": ran.timeout, "message": ran.message }),
                )
            }
            "query" => {
                let sql = request["sql"].as_str().unwrap_or_default();
                let result = self.perform(sql);
                if let Some(stop) = self.stopped() {
                    return Err(stop.into());
                }
                Ok(match result {
                    Ok(rows) => json!({ "rows": rows, "error": null }),
                    Err(e) => {
                        json!({ "rows": null, "error": { "class": e.class, "message": e.message } })
                    }
                })
            }
            other => Err(TestsError::Fault(format!("an unknown request `{other}`"))),
        }
    }
}

/// The psycopg2 casts of a single statement's columns, from the server's description (outside
/// any transaction, so a statement the server cannot describe changes nothing); `None` for a
/// text of several statements or one it cannot describe (every column then arrives as text).
async fn column_tags(client: &Client, sql: &str) -> Option<Vec<&'static str>> {
    let statement = client.prepare(sql).await.ok()?;
    Some(
        statement
            .columns()
            .iter()
            .map(|c| tag_of(c.type_()))
            .collect(),
    )
}

/// Whether `sql` holds no statement: only white space, `;`s and comments (`--` to the line's end,
/// `/* */`, nested), which the server answers with an empty-query response.
fn is_blank(sql: &str) -> bool {
    let mut rest = sql;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == ';');
        if let Some(after) = rest.strip_prefix("--") {
            rest = after.split_once('\n').map_or("", |(_, next)| next);
        } else if rest.starts_with("/*") {
            let mut depth = 0usize;
            let mut end = None;
            let bytes = rest.as_bytes();
            let mut i = 0;
            while i + 1 < bytes.len() {
                match &bytes[i..i + 2] {
                    b"/*" => (depth, i) = (depth + 1, i + 2),
                    b"*/" => {
                        (depth, i) = (depth - 1, i + 2);
                        if depth == 0 {
                            end = Some(i);
                            break;
                        }
                    }
                    _ => i += 1,
                }
            }
            // An unclosed comment is the server's syntax error, not an empty query.
            let Some(end) = end else { return false };
            rest = &rest[end..];
        } else {
            return rest.is_empty();
        }
    }
}

/// psycopg2's cast of a column type, as the runner names it.
fn tag_of(column_type: &Type) -> &'static str {
    match *column_type {
        Type::INT2 | Type::INT4 | Type::INT8 | Type::OID => "int",
        Type::FLOAT4 | Type::FLOAT8 => "float",
        Type::NUMERIC => "decimal",
        Type::BOOL => "bool",
        Type::DATE => "date",
        Type::TIMESTAMP | Type::TIMESTAMPTZ => "timestamp",
        Type::JSON | Type::JSONB => "json",
        Type::BYTEA => "bytea",
        _ => "text",
    }
}

/// The psycopg2 class of a client error, by SQLSTATE class; a lost connection is an
/// `OperationalError`, a closed one an `InterfaceError`.
fn statement_error(error: tokio_postgres::Error) -> StatementError {
    let message = pg_text(&error);
    let Some(code) = error.code() else {
        let class = match error.is_closed() {
            true => "InterfaceError",
            false => "OperationalError",
        };
        return StatementError { class, message };
    };
    let code = code.code();
    let class = match &code[..2] {
        _ if code == "57014" => "QueryCanceled",
        "40" => "TransactionRollbackError",
        "08" | "53" | "54" | "55" | "57" | "58" | "F0" | "P0" | "HV" => "OperationalError",
        "22" => "DataError",
        "23" => "IntegrityError",
        "0A" => "NotSupportedError",
        "42" | "26" | "34" | "3D" | "3F" | "2F" | "28" => "ProgrammingError",
        _ => "InternalError",
    };
    StatementError { class, message }
}

#[cfg(test)]
mod tests {
    use super::is_blank;

    #[test]
    fn a_text_of_white_space_semicolons_and_comments_is_blank() {
        for blank in [
            "",
            "  ",
            " ;; ",
            "-- only a comment",
            "/* a /* nested */ one */ ;",
            "--x\n/*y*/\n",
        ] {
            assert!(is_blank(blank), "{blank:?}");
        }
        for statement in [
            "SELECT 1",
            "-- c\nSELECT 1",
            "/* c */ SELECT 1",
            "; x",
            "/* open",
        ] {
            assert!(!is_blank(statement), "{statement:?}");
        }
    }
}
