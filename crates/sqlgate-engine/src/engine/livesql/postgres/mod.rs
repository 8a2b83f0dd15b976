//! State-changing SQL on PostgreSQL (issue 46): BIRD-Critic's PostgreSQL evaluation, each item on
//! a database of its own cloned from a template, run as a role that reaches only that clone.
//!
//! At start ([`PgRun::start`], as a role that may create databases and roles): for every db_id a
//! template `CREATE DATABASE ... TEMPLATE <db_id>` (the base database is only read, as the source
//! of the copy), whose schemas and objects are handed to a login-less owner role of the run, its
//! connections then refused (`ALLOW_CONNECTIONS false`). Items take a clone from a pool per db_id
//! (at most one clone per worker is ever made, two under `bird_critic_sound`: the twin,
//! `sound.rs`): `CREATE DATABASE ... TEMPLATE`, no privilege for `PUBLIC`, `CONNECT` and
//! `TEMPORARY` for the clone's own role, which is given the objects (`REASSIGN OWNED`). That role has no superuser, database, role, replication or RLS-bypass
//! right, no membership, no `CREATE` on any database (so no `CREATE EXTENSION`, no schema), and
//! may not read or write server files or run programs (`COPY ... TO / FROM` a file or `PROGRAM`,
//! `pg_read_file`, `lo_import` are superuser or predefined-role rights it lacks). Before each item
//! its password is new and its settings reset (`temp_file_limit` from the temporary-file budget). After
//! each item the clone is dropped (`WITH (FORCE)`) and made again from the template: a failure
//! there is a fault of the harness, never a verdict. An item that provably changes nothing takes
//! the rollback fast path instead (`fast.rs`, [`PgSettings::fast_path`]): the whole item in one
//! transaction, each statement's own transaction a savepoint, ended by `ROLLBACK`, the clone kept.
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

use super::python::{self, TestsError};
use super::sound::verdict_of;
use super::{Fault, Profile, Verdict};
use crate::engine::server::catalog_rows::CloneRowsQuery;
use crate::engine::server::tls::{self, PgTarget};
use crate::input::livesql::LiveItem;
use item::{FastEnd, ItemSession};
use serde_json::Value as Json;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use watch::Watch;

mod fast;
mod gate;
mod item;
mod sound;
mod statistics;
mod watch;

/// The PostgreSQL runner and its helpers, written for sqlgate (no upstream code), with the
/// test-case loop it shares with MySQL's.
pub const HELPERS_PG: &str = concat!(
    include_str!("../gold_text.py"),
    include_str!("../helpers_pg.py"),
    include_str!("../bird_critic_runner.py"),
    include_str!("../test_loop.py")
);

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
    /// Whether an item that provably changes nothing runs in one transaction ended by
    /// `ROLLBACK` instead of on a clone dropped and made again after it (the rollback fast path,
    /// `fast.rs`); off, every item takes the slow path.
    pub fast_path: bool,
}

impl PgSettings {
    /// The defaults with `admin_url`: 300 s, 1 GiB of database, 8 GiB of temporary files, a
    /// million rows, `python3`, the rollback fast path on.
    pub fn new(admin_url: String) -> PgSettings {
        PgSettings {
            admin_url,
            python: PathBuf::from("python3"),
            deadline: Duration::from_secs(300),
            disk_bytes: 1 << 30,
            temp_bytes: 8 << 30,
            max_rows: 1_000_000,
            fast_path: true,
        }
    }
}

/// A clone and the role that reaches it.
#[derive(Debug)]
struct Slot {
    database: String,
    role: String,
    /// The fresh clone's relation sizes, statistics and sequences ([`fast::FINGERPRINT`]).
    fingerprint: String,
}

/// How many items took each path in a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Paths {
    /// Judged on the rollback fast path.
    pub fast: usize,
    /// Started on the fast path, refused part-way or at the end, judged again on the slow path.
    pub refused: usize,
    /// Judged on the slow path from the start.
    pub slow: usize,
    /// Fast items after which the clone differed from a fresh one and was made again.
    pub remade: usize,
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
    /// Administrator sessions on the URL's database not in use (at most one per worker is
    /// ever made, two under `bird_critic_sound`): each item's settings, watchdog and reset lease
    /// one, and its twin's watchdog another.
    admins: Mutex<Vec<postgres::Client>>,
    /// db_id -> why its items may not take the fast path (none: they may).
    no_fast: BTreeMap<String, Option<String>>,
    /// Counts of [`Paths`]: fast, refused, slow, remade.
    paths: [AtomicUsize; 4],
    /// The Query data check's catalog query, made at its first use.
    clone_rows: std::sync::OnceLock<CloneRowsQuery>,
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

/// The user-defined objects whose functions PostgreSQL runs behind statements that do not name
/// them (red team round 49: an assignment cast from `integer` to `text` ran on a whitelisted
/// `INSERT` of literals; an operator class's functions build an index on plain columns), one
/// line each: those made after the cluster's own (`oid >= 16384`, `FirstNormalObjectId`).
const HIDDEN_CODE: &str = "SELECT 'cast ' || format_type(castsource, NULL) || ' AS ' || format_type(casttarget, NULL) FROM pg_cast WHERE oid >= 16384 \
     UNION ALL SELECT 'operator ' || oid::regoperator::text FROM pg_operator WHERE oid >= 16384 \
     UNION ALL SELECT 'operator class ' || opcname::text FROM pg_opclass WHERE oid >= 16384 \
     UNION ALL SELECT 'operator family ' || opfname::text FROM pg_opfamily WHERE oid >= 16384 \
     UNION ALL SELECT 'conversion ' || conname::text FROM pg_conversion WHERE oid >= 16384 ORDER BY 1";

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
            admins: Mutex::default(),
            no_fast: BTreeMap::new(),
            paths: Default::default(),
            clone_rows: Default::default(),
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
        gate::refuse_foreign_state(&mut admin)?;
        run.sql(
            &mut admin,
            &format!("CREATE ROLE {} NOLOGIN", ident(&run.owner)),
        )?;
        let server_refusal = run.server_refusal(&mut admin)?;
        for (index, db_id) in db_ids.iter().enumerate() {
            let template = format!("sqlgate_live_{}_{index}_t", run.tag);
            let refusal = run.make_template(&mut admin, db_id, &template)?;
            run.templates.insert(db_id.clone(), template);
            let refusal = server_refusal.clone().or(refusal);
            run.no_fast.insert(db_id.clone(), refusal);
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

    /// A free administrator session on the URL's database, connected when none is free.
    fn lease(&self) -> Result<postgres::Client, String> {
        let free = self
            .admins
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        match free {
            Some(client) if !client.is_closed() => Ok(client),
            _ => self.admin(None),
        }
    }

    /// Gives a leased administrator session back (a closed one is dropped).
    fn give_back(&self, client: postgres::Client) {
        if !client.is_closed() {
            let mut admins = self.admins.lock().unwrap_or_else(PoisonError::into_inner);
            admins.push(client);
        }
    }

    fn sql(&self, client: &mut postgres::Client, sql: &str) -> Result<(), String> {
        client
            .batch_execute(sql)
            .map_err(|e| format!("`{}`: {}", sql.lines().next().unwrap_or(sql), pg_text(&e)))
    }

    /// Why no item may take the fast path on this server: a time limit on an open transaction
    /// (`idle_in_transaction_session_timeout`, `transaction_timeout`) would end it where the
    /// evaluator's short transactions run on.
    fn server_refusal(&self, admin: &mut postgres::Client) -> Result<Option<String>, String> {
        let rows = admin
            .query(
                "SELECT name, setting FROM pg_catalog.pg_settings WHERE name IN ('idle_in_transaction_session_timeout', 'transaction_timeout') AND setting <> '0'",
                &[],
            )
            .map_err(|e| format!("reading the server's settings: {}", pg_text(&e)))?;
        Ok(rows.first().map(|row| {
            let (name, setting): (String, String) = (row.get(0), row.get(1));
            format!("the server's {name} is {setting}")
        }))
    }

    /// The template of `db_id`: a copy of it whose objects the run's owner role owns, closed to
    /// connections; and why its items may not take the fast path, if they may not.
    fn make_template(
        &self,
        admin: &mut postgres::Client,
        db_id: &str,
        template: &str,
    ) -> Result<Option<String>, String> {
        if let Some(why) = self.refusal(db_id)? {
            return Err(format!("database `{db_id}` {why}, so it is refused"));
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
        let definitions: Vec<String> = (inside.query(fast::DEFINITIONS, &[]))
            .map_err(|e| format!("reading database `{db_id}`'s definitions: {}", pg_text(&e)))?
            .iter()
            .map(|row| row.get::<_, Option<String>>(0).unwrap_or_default())
            .collect();
        drop(inside);
        self.sql(
            admin,
            &format!(
                "ALTER DATABASE {} WITH ALLOW_CONNECTIONS false",
                ident(template)
            ),
        )?;
        Ok(fast::db_refusal(&definitions))
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
                fingerprint: String::new(),
            };
            made.push((slot.database.clone(), slot.role.clone()));
            slot
        };
        let mut admin = self.lease()?;
        self.sql(&mut admin, &format!(
            "CREATE ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS CONNECTION LIMIT 3",
            ident(&slot.role)
        ))?;
        let mut slot = slot;
        slot.fingerprint = self.make_clone(&mut admin, &slot, template)?;
        self.give_back(admin);
        Ok(slot)
    }

    /// `slot`'s clone of `template`, reachable by its role only, its objects the role's; its
    /// fingerprint ([`fast::FINGERPRINT`]).
    fn make_clone(
        &self,
        admin: &mut postgres::Client,
        slot: &Slot,
        template: &str,
    ) -> Result<String, Fault> {
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
        )?;
        (inside.query_one(fast::FINGERPRINT, &[]))
            .map(|row| row.get(0))
            .map_err(|e| format!("reading a clone's fingerprint: {}", pg_text(&e)))
    }

    /// Drops `slot`'s clone (ending its sessions) and makes it again.
    fn remake(&self, db_id: &str, slot: &mut Slot) -> Result<(), Fault> {
        let template = &self.templates[db_id];
        let mut admin = self.lease()?;
        slot.fingerprint = self
            .release(&mut admin, &slot.database)
            .and_then(|()| {
                let drop = format!("DROP DATABASE {} WITH (FORCE)", ident(&slot.database));
                self.sql(&mut admin, &drop)
            })
            .and_then(|()| self.make_clone(&mut admin, slot, template))
            .map_err(|e| format!("resetting an item's clone: {e}"))?;
        self.give_back(admin);
        Ok(())
    }

    /// Gives `slot` back to the pool of `db_id`.
    fn free_slot(&self, db_id: &str, slot: Slot) {
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        free.entry(db_id.to_string()).or_default().push(slot);
    }

    /// Drops `slot`'s clone, makes it again and gives it back to the pool.
    fn reset(&self, db_id: &str, mut slot: Slot) -> Result<(), Fault> {
        self.remake(db_id, &mut slot)?;
        self.free_slot(db_id, slot);
        Ok(())
    }

    /// A new password and fresh settings for `slot`'s role, the role's session on its clone
    /// (inside one transaction on the fast path), and the administrator's session that set them
    /// (for the item's watchdog).
    fn open(&self, slot: &Slot, fast: bool) -> Result<(ItemSession, postgres::Client), Fault> {
        let password = random_hex()?;
        let mut admin = self.lease()?;
        let role = ident(&slot.role);
        self.sql(&mut admin, &format!(
            "ALTER ROLE {role} RESET ALL; ALTER ROLE {role} IN DATABASE {} RESET ALL; ALTER ROLE {role} SET temp_file_limit = {}; ALTER ROLE {role} PASSWORD {}",
            ident(&slot.database),
            (self.settings.temp_bytes / 1024).max(1),
            literal(&password)
        ))?;
        let mut config = self.target.session_config.clone();
        config
            .user(&slot.role)
            .password(&password)
            .dbname(&slot.database);
        let session = ItemSession::connect(&config, &self.target, self.settings.max_rows, fast)?;
        self.tally.connected(Some(&slot.database));
        Ok((session, admin))
    }

    /// What refuses database `db_id`, if anything: an extension other than `plpgsql` (its
    /// clones would lend it to the predictions), a user-defined cast, operator, operator class
    /// or family or conversion ([`HIDDEN_CODE`]), a search path that puts `pg_catalog` after
    /// another schema (naming it at all), or an event trigger (it runs behind every DDL
    /// statement of every session, a whitelisted preprocess's `CREATE TABLE` included, and can
    /// leave state on that session: red team round 48).
    fn refusal(&self, db_id: &str) -> Result<Option<String>, String> {
        let mut client = self.admin(Some(db_id))?;
        let mut names = |sql: &str| -> Result<Vec<String>, String> {
            let rows = (client.query(sql, &[]))
                .map_err(|e| format!("reading database `{db_id}`: {}", pg_text(&e)))?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        };
        let extensions = names("SELECT extname::text FROM pg_extension ORDER BY 1")?;
        if let Some(other) = extensions.iter().find(|e| e.as_str() != "plpgsql") {
            let why =
                format!("has the extension `{other}`: its clones would lend it to the predictions");
            return Ok(Some(why));
        }
        let hidden = names(HIDDEN_CODE)?;
        if let Some(object) = hidden.first() {
            let why = format!("has the user-defined {object}, which PostgreSQL runs behind statements that do not name it");
            return Ok(Some(why));
        }
        let path = names("SELECT current_setting('search_path')")?.concat();
        if path.contains("pg_catalog") {
            let why = format!("sets the search path `{path}`, which names `pg_catalog`: a type or function of its own could stand for a built-in one (`text`, `now()`) there");
            return Ok(Some(why));
        }
        let triggers = names("SELECT evtname::text FROM pg_event_trigger ORDER BY 1")?;
        Ok(triggers.first().map(|name| {
            format!("has the event trigger `{name}`: it runs behind every DDL statement of every session")
        }))
    }

    /// Judges one item on a fresh clone of its database; a fault of the harness (a clone that
    /// could not be made or reset, a runner that could not start) is an `Err`, never a verdict.
    /// An item the fast path may take runs in one transaction rolled back after it; one it may
    /// not, or that it refuses part-way, runs on a clone dropped and made again after it.
    pub fn judge(&self, item: &LiveItem, prediction: Option<&[String]>) -> Result<Verdict, Fault> {
        let Some(prediction) = prediction else {
            return Ok(Verdict::no_prediction());
        };
        let mut slot = self.acquire(&item.db_id)?;
        if self.fast_refusal(item, prediction).is_none() {
            let (outcome, end) = self.run_item(&slot, item, prediction, true);
            match end {
                Some(FastEnd::Clean(fingerprint)) if fingerprint == slot.fingerprint => {
                    self.count(0);
                    self.free_slot(&item.db_id, slot);
                    return verdict_of(outcome);
                }
                Some(FastEnd::Refused) => {
                    self.count(1);
                    self.remake(&item.db_id, &mut slot)?;
                }
                _ => {
                    self.count(0);
                    self.count(3);
                    self.reset(&item.db_id, slot)?;
                    return verdict_of(outcome);
                }
            }
        } else {
            self.count(2);
        }
        let (outcome, _) = self.run_item(&slot, item, prediction, false);
        self.reset(&item.db_id, slot)?;
        verdict_of(outcome)
    }

    /// Judges one item under `profile`: `bird-critic` as [`PgRun::judge`], `bird-critic-sound`
    /// with the tests on a new session and their gold on a twin clone (`sound.rs`); any other
    /// profile is not judged on a server (a fault).
    pub fn judge_as(
        &self,
        item: &LiveItem,
        prediction: Option<&[String]>,
        profile: Profile,
    ) -> Result<Verdict, Fault> {
        match (profile, prediction) {
            (Profile::BirdCritic, _) => self.judge(item, prediction),
            (Profile::BirdCriticSound, None) => Ok(Verdict::no_prediction()),
            (Profile::BirdCriticSound, Some(prediction)) => self.judge_sound(item, prediction),
            (other, _) => Err(format!("`{}` is not judged on PostgreSQL", other.name())),
        }
    }

    /// Why `item` may not start on the fast path (the run's setting, its database, its texts),
    /// `None` when it may.
    fn fast_refusal(&self, item: &LiveItem, prediction: &[String]) -> Option<String> {
        if !self.settings.fast_path {
            return Some("the fast path is off".into());
        }
        if let Some(Some(why)) = self.no_fast.get(&item.db_id) {
            return Some(why.clone());
        }
        fast::item_refusal(item, prediction)
    }

    fn count(&self, path: usize) {
        self.paths[path].fetch_add(1, Ordering::Relaxed);
    }

    /// The administrator's URL the run was started with, for the digests a run on clones adds
    /// (`engine::kinds::postgres_clones`).
    pub fn admin_url(&self) -> &str {
        &self.settings.admin_url
    }

    /// How many items took each path so far.
    pub fn paths(&self) -> Paths {
        let n = |i: usize| self.paths[i].load(Ordering::Relaxed);
        Paths {
            fast: n(0),
            refused: n(1),
            slow: n(2),
            remade: n(3),
        }
    }

    /// The item on `slot`'s clone, watched until it ends; on the fast path (`fast`) also how it
    /// ended.
    fn run_item(
        &self,
        slot: &Slot,
        item: &LiveItem,
        prediction: &[String],
        fast: bool,
    ) -> (Result<Verdict, TestsError>, Option<FastEnd>) {
        let (session, admin) = match self.open(slot, fast) {
            Ok(opened) => opened,
            Err(fault) => return (Err(TestsError::Fault(fault)), None),
        };
        let deadline = Instant::now() + self.settings.deadline;
        let watch = Watch::start(admin, self, slot, deadline, Arc::clone(&session.stop));
        let result = judge_on(&session, item, prediction, &self.settings, deadline);
        let end = fast.then(|| session.end_fast(&result));
        if let Some(admin) = watch.finish() {
            self.give_back(admin);
        }
        (result, end)
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
        let rows = ran.rows.clone().unwrap_or(Json::Null);
        let job = (item, prediction, rows);
        let profile = Profile::BirdCritic;
        let results = python::bird_critic_tests(
            session,
            HELPERS_PG,
            job,
            profile,
            &settings.python,
            deadline,
        )?;
        verdict.add_tests(&results);
    }
    session.execute_queries(&item.clean_up_sql)?;
    Ok(verdict)
}
