//! State-changing SQL on MariaDB / MySQL (issue 46): BIRD-Critic's MySQL evaluation, each item
//! on a database of its own rebuilt from a template, run as a user whose only grants are on that
//! database.
//!
//! At start ([`MyRun::start`], as an administrator that may create databases and users, grant,
//! and `KILL`): for every db_id a template database copied from the base database, table by
//! table (`SHOW CREATE TABLE` replayed, so keys, foreign keys, defaults, the character set and the
//! `AUTO_INCREMENT` counter are the base's, then `INSERT ... SELECT`); the base database is only
//! read. A base database holding anything but base tables on InnoDB, Aria or MyISAM (views,
//! sequences, routines, triggers, events, another storage engine) is refused (`gate.rs`: an
//! allow list; their copies would run as their definer, and this copy does not rebuild them). Items take a clone
//! from a pool per db_id (at most one clone per worker is ever made, two under
//! `bird_critic_sound`: its twin, `sound.rs`), built from the template the
//! same way, with a user of its own (`MAX_USER_CONNECTIONS 2`) granted the table-level rights on
//! that one database only (its name's `_` escaped in the grant, so no other name matches):
//! `SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX, ALTER, CREATE TEMPORARY TABLES, LOCK
//! TABLES, CREATE VIEW, SHOW VIEW, CREATE ROUTINE, ALTER ROUTINE, EXECUTE, TRIGGER, REFERENCES`.
//! No global right (`FILE`, `SUPER`, `CREATE USER`, `PROCESS`, `RELOAD`...), no `EVENT`, no
//! `GRANT OPTION`: another database, the template, the base data, server files (`LOAD DATA
//! INFILE`, `SELECT ... INTO OUTFILE`), users and grants, global settings and events are out of
//! reach. `LOAD DATA LOCAL` is refused before it is sent (PyMySQL does not offer local files), and
//! the client answers any local-file request with an empty file. Before each item the user's
//! password is new. After each item the user's sessions are killed and the clone is dropped and
//! rebuilt from the template: a failure there is a fault of the harness, never a verdict.
//!
//! One item, as BIRD-Critic's `single_instance_eval_mysql.py` judges it: the preprocess (errors
//! ignored), the prediction's statements in order on one session, every one of them even after
//! an error (each error is an execution error and adds its text to the message), then, if none
//! failed and the item has test cases, its Python tests (`helpers_mysql.py`) on the same
//! session (an `efficiency` item's tests get `issue_sql` as `pred_sqls` and the prediction as
//! `sol_sqls`), then the clean-up. No default test: an item without test cases passes when its
//! statements run. Each statement runs as PyMySQL runs it for that evaluator: the session has
//! `autocommit` off, each statement is preceded by `SET SESSION MAX_EXECUTION_TIME=120000` (a
//! MySQL variable: MariaDB refuses it and the statement runs without a limit), committed when its
//! lower-cased text contains one of the evaluator's commit words (anywhere: `offset` holds
//! `set`), rolled back when it fails; a text of several statements is a syntax error (PyMySQL
//! does not ask for multi-statements); its rows are those of its first result, at most 10 000
//! kept. The evaluator's timeout flag is never set (PyMySQL raises no `TimeoutExpired`).
//!
//! A watchdog kills the user's sessions at the item's deadline (the wrapper's 300 s kill: an
//! execution error) and when the clone outgrows the disk budget; the item stops when a statement
//! returns more rows than the row budget.

use super::python::{self, ItemDb, TestsError};
use super::session::Stopped;
use super::{Fault, Profile, Verdict};
use crate::engine::server::role::MYSQL_LISTED_TO_ALL;
use crate::engine::server::tls::{self, MysqlMode};
use crate::input::livesql::LiveItem;
use mysql::consts::ColumnType;
use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder};
use serde_json::{json, Value as Json};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use watch::Watch;

mod gate;
mod sequences;
mod server_state;
mod sound;
mod watch;

pub use gate::clone_digests;
pub use server_state::add_admin_entries;

/// The MySQL runner and its helpers, written for sqlgate (no upstream code), with the test-case
/// loop it shares with PostgreSQL's.
pub const HELPERS_MYSQL: &str = concat!(
    include_str!("../gold_text.py"),
    include_str!("../helpers_mysql.py"),
    include_str!("../bird_critic_runner.py"),
    include_str!("../test_loop.py")
);

/// Rows of a statement's result kept (the evaluator's `fetchmany(MAX_ROWS + 1)[:MAX_ROWS]`).
const KEPT_ROWS: usize = 10_000;
/// The evaluator's `MYSQL_COMMIT_KEYWORDS`: a statement whose lower-cased text contains one is
/// committed.
const COMMIT_WORDS: [&str; 28] = [
    "insert",
    "update",
    "delete",
    "create",
    "drop",
    "alter",
    "truncate",
    "rename",
    "replace",
    "grant",
    "revoke",
    "lock tables",
    "unlock tables",
    "start transaction",
    "begin",
    "commit",
    "rollback",
    "call",
    "load data",
    "set",
    "do",
    "handler",
    "load xml",
    "merge",
    "prepare",
    "execute",
    "deallocate prepare",
    "xa",
];
/// What the evaluator sends before every statement.
const SESSION_TIMEOUT: &str = "SET SESSION MAX_EXECUTION_TIME=120000;";
/// `ER_PARSE_ERROR`.
const PARSE_ERROR: u16 = 1064;
/// `ER_NOT_ALLOWED_COMMAND`: the server's answer to `LOAD DATA LOCAL` from a client that does not
/// offer local files.
const NOT_ALLOWED: u16 = 1148;
/// The character set number of binary strings (PyMySQL returns them as `bytes`).
const BINARY_CHARSET: u16 = 63;
/// The rights of a clone's user, on its clone only.
const CLONE_RIGHTS: &str = "SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX, ALTER, CREATE TEMPORARY TABLES, LOCK TABLES, CREATE VIEW, SHOW VIEW, CREATE ROUTINE, ALTER ROUTINE, EXECUTE, TRIGGER, REFERENCES";

/// What a MariaDB / MySQL run needs.
#[derive(Debug, Clone)]
pub struct MySettings {
    /// A URL of a user that may create databases and users, grant, and kill sessions (a secret:
    /// never printed).
    pub admin_url: String,
    /// The Python interpreter for the test cases.
    pub python: PathBuf,
    /// Wall-clock time an item may take, over all its statements and tests (the evaluator's
    /// wrapper kills a task after 300 s).
    pub deadline: Duration,
    /// Most bytes an item's clone may grow to (its tables' files and data).
    pub disk_bytes: u64,
    /// Most rows one statement may return before the item is stopped.
    pub max_rows: u64,
}

impl MySettings {
    /// The defaults with `admin_url`: 300 s, 1 GiB of database, a million rows, `python3`.
    pub fn new(admin_url: String) -> MySettings {
        MySettings {
            admin_url,
            python: PathBuf::from("python3"),
            deadline: Duration::from_secs(300),
            disk_bytes: 1 << 30,
            max_rows: 1_000_000,
        }
    }
}

/// A template: its database, the base's character set and collation, and each table's
/// `CREATE TABLE` text (the base's, so a clone's tables are the base's).
#[derive(Debug)]
struct Template {
    database: String,
    charset: String,
    collation: String,
    tables: Vec<(String, String)>,
}

/// A clone and the user that reaches it.
#[derive(Debug)]
struct Slot {
    database: String,
    user: String,
}

/// One run on a MariaDB / MySQL server: the templates, the pools of clones, the users.
pub struct MyRun {
    opts: Opts,
    mode: MysqlMode,
    settings: MySettings,
    tag: String,
    /// db_id -> its template.
    templates: BTreeMap<String, Template>,
    /// db_id -> its free clones.
    free: Mutex<BTreeMap<String, Vec<Slot>>>,
    /// Every slot made, for the clean-up at the end.
    made: Mutex<Vec<(String, String)>>,
    /// Set once the run dropped all it made ([`MyRun::close`]).
    closed: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for MyRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MyRun").field("tag", &self.tag).finish()
    }
}

/// `name` as a quoted identifier.
fn ident(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// `text` as a quoted literal.
fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "''"))
}

/// `name` as a database pattern of a `GRANT` that matches it alone (`_` and `%` escaped).
fn grant_pattern(name: &str) -> String {
    ident(&name.replace('_', "\\_").replace('%', "\\%"))
}

/// The server's message of a client error.
fn my_text(error: &mysql::Error) -> String {
    match error {
        mysql::Error::MySqlError(e) => e.message.clone(),
        other => tls::with_causes(other),
    }
}

impl MyRun {
    /// Copies one template per db_id in `db_ids` (each a database of that name on the server).
    /// A base database holding anything but base tables is refused.
    pub fn start(settings: MySettings, db_ids: &BTreeSet<String>) -> Result<MyRun, String> {
        let tls::MysqlTarget { opts, mode } = tls::mysql_target(&settings.admin_url)?;
        let tag = super::postgres::random_hex()?[..10].to_string();
        let mut run = MyRun {
            opts,
            mode,
            settings,
            tag,
            templates: BTreeMap::new(),
            free: Mutex::default(),
            made: Mutex::default(),
            closed: Default::default(),
        };
        let mut admin = run.admin()?;
        for (index, db_id) in db_ids.iter().enumerate() {
            let name = format!("sqlgate_live_{}_{index}_t", run.tag);
            let template = run.read_base(&mut admin, db_id, name)?;
            // Recorded before it is filled, so a failure part-way still drops it.
            run.templates.insert(db_id.clone(), template);
            let template = &run.templates[db_id];
            run.build(&mut admin, &template.database, db_id, template)?;
        }
        Ok(run)
    }

    /// An administrator session on no database.
    fn admin(&self) -> Result<Conn, String> {
        tls::mysql_connect(self.opts.clone(), self.mode)
            .map_err(|e| format!("cannot connect as the administrator: {}", my_text(&e)))
    }

    fn sql(&self, conn: &mut Conn, sql: &str) -> Result<(), String> {
        conn.query_drop(sql)
            .map_err(|e| format!("`{}`: {}", sql.lines().next().unwrap_or(sql), my_text(&e)))
    }

    /// Creates `database` with `template`'s tables, filled from the database `source`.
    fn build(
        &self,
        admin: &mut Conn,
        database: &str,
        source: &str,
        template: &Template,
    ) -> Result<(), String> {
        self.sql(
            admin,
            &format!(
                "CREATE DATABASE {} CHARACTER SET {} COLLATE {}",
                ident(database),
                template.charset,
                template.collation
            ),
        )?;
        self.sql(admin, &format!("USE {}", ident(database)))?;
        self.sql(admin, "SET SESSION foreign_key_checks = 0")?;
        for (table, create) in &template.tables {
            self.sql(admin, create)?;
            self.sql(
                admin,
                &format!(
                    "INSERT INTO {}.{table} SELECT * FROM {}.{table}",
                    ident(database),
                    ident(source),
                    table = ident(table)
                ),
            )?;
        }
        self.sql(admin, "SET SESSION foreign_key_checks = 1")
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
                user: format!("sqlgate_live_{}_u{n}", self.tag),
            };
            made.push((slot.database.clone(), slot.user.clone()));
            slot
        };
        let mut admin = self.admin()?;
        let password = super::postgres::random_hex()?;
        self.sql(
            &mut admin,
            &format!(
                "CREATE USER {}@'%' IDENTIFIED BY {} WITH MAX_USER_CONNECTIONS 2",
                literal(&slot.user),
                literal(&password)
            ),
        )?;
        self.make_clone(&mut admin, &slot, template)?;
        Ok(slot)
    }

    /// `slot`'s clone of `template`, its user granted the clone's rights on it alone.
    fn make_clone(&self, admin: &mut Conn, slot: &Slot, template: &Template) -> Result<(), Fault> {
        self.build(admin, &slot.database, &template.database, template)?;
        self.sql(
            admin,
            &format!(
                "GRANT {CLONE_RIGHTS} ON {}.* TO {}@'%'",
                grant_pattern(&slot.database),
                literal(&slot.user)
            ),
        )
    }

    /// Kills `user`'s sessions.
    fn kill_sessions(&self, admin: &mut Conn, user: &str) -> Result<(), String> {
        let ids: Vec<u64> = admin
            .exec(
                "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = ?",
                (user,),
            )
            .map_err(|e| format!("listing an item's sessions: {}", my_text(&e)))?;
        for id in ids {
            // A session that ended meanwhile is no failure.
            let _ = admin.query_drop(format!("KILL CONNECTION {id}"));
        }
        Ok(())
    }

    /// Ends `slot`'s sessions, drops its clone and builds it again; the slot is free again.
    fn reset(&self, db_id: &str, slot: Slot) -> Result<(), Fault> {
        let template = &self.templates[db_id];
        let mut admin = self.admin()?;
        self.kill_sessions(&mut admin, &slot.user)
            .and_then(|()| roll_back_prepared_xa(&mut admin))
            .and_then(|()| {
                self.sql(
                    &mut admin,
                    &format!("DROP DATABASE IF EXISTS {}", ident(&slot.database)),
                )
            })
            .and_then(|()| self.build(&mut admin, &slot.database, &template.database, template))
            .map_err(|e| format!("resetting an item's clone: {e}"))?;
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        free.entry(db_id.to_string()).or_default().push(slot);
        Ok(())
    }

    /// A new password for `slot`'s user, and the user's session on its clone as PyMySQL opens
    /// it (`autocommit` off).
    fn open(&self, slot: &Slot) -> Result<ItemSession, Fault> {
        let password = super::postgres::random_hex()?;
        let mut admin = self.admin()?;
        self.sql(
            &mut admin,
            &format!(
                "ALTER USER {}@'%' IDENTIFIED BY {}",
                literal(&slot.user),
                literal(&password)
            ),
        )?;
        let opts = OptsBuilder::from_opts(self.opts.clone())
            .user(Some(&slot.user))
            .pass(Some(&password))
            .db_name(Some(&slot.database))
            .init(vec!["SET AUTOCOMMIT = 0"]);
        let mut conn = tls::mysql_connect(opts.into(), self.mode)
            .map_err(|e| format!("cannot connect to an item's clone: {}", my_text(&e)))?;
        alone_on_its_clone(&mut conn, &slot.database)?;
        Ok(ItemSession {
            conn: RefCell::new(conn),
            stop: Arc::default(),
            max_rows: self.settings.max_rows,
        })
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

/// Refuses an item's session that sees a database besides its clone (and those the server
/// lists to every user): a grant made before the run on a name pattern the run's own databases
/// match (`sqlgate\_live\_%`), to `PUBLIC` or the anonymous user, reaches the templates and
/// the other items' clones, which the start-up checks cannot see, as none exists yet (red team
/// round 22). Read on the item's own session, so every grant that reaches it counts.
fn alone_on_its_clone(conn: &mut Conn, clone: &str) -> Result<(), Fault> {
    let visible: Vec<String> = conn
        .query("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA ORDER BY 1")
        .map_err(|e| format!("reading what an item's clone user sees: {}", my_text(&e)))?;
    let others: Vec<String> = (visible.into_iter())
        .filter(|name| name != clone && !MYSQL_LISTED_TO_ALL.contains(&name.as_str()))
        .map(|name| format!("`{name}`"))
        .collect();
    match others.is_empty() {
        true => Ok(()),
        false => Err(format!(
            "an item's clone user sees databases besides its clone ({}): a grant to `PUBLIC`, \
             to the anonymous user or on a name pattern reaches the run's own databases, so one \
             item could read or change another's; remove it before the run",
            others.join(", ")
        )),
    }
}

/// The evaluator's flow on one session: preprocess, prediction, tests, clean-up.
fn judge_on(
    session: &ItemSession,
    item: &LiveItem,
    prediction: &[String],
    settings: &MySettings,
    deadline: Instant,
) -> Result<Verdict, TestsError> {
    session.execute_queries(&item.preprocess_sql, false)?;
    let ran = session.execute_queries(prediction, true)?;
    let mut verdict = Verdict {
        success: !ran.exec_error,
        execution_error: ran.exec_error,
        message: ran.message.clone(),
        ..Verdict::default()
    };
    if verdict.success && !item.test_cases.is_empty() {
        let rows = ran.rows.clone().unwrap_or(Json::Null);
        let job = (item, prediction, rows);
        let (profile, python) = (Profile::BirdCritic, &settings.python);
        let results =
            python::bird_critic_tests(session, HELPERS_MYSQL, job, profile, python, deadline)?;
        verdict.add_tests(&results);
    }
    session.execute_queries(&item.clean_up_sql, false)?;
    Ok(verdict)
}

/// What `execute_queries` returns: the rows of the last statement that ran cleanly (protocol
/// form), the error flag and the errors' text.
#[derive(Debug, Default)]
struct Ran {
    rows: Option<Json>,
    exec_error: bool,
    message: String,
}

/// A statement's error: the class PyMySQL raises, the server's code and text.
#[derive(Debug)]
struct StatementError {
    class: &'static str,
    code: u16,
    message: String,
}

impl StatementError {
    /// The error as PyMySQL prints it: `(code, 'message')`.
    fn printed(&self) -> String {
        let quoted = match self.message.contains('\'') && !self.message.contains('"') {
            true => format!("\"{}\"", self.message),
            false => format!("'{}'", self.message.replace('\'', "\\'")),
        };
        format!("({}, {quoted})", self.code)
    }
}

/// The item's session on its clone, as its own user.
struct ItemSession {
    conn: RefCell<Conn>,
    stop: Arc<Mutex<Option<String>>>,
    max_rows: u64,
}

impl ItemSession {
    /// Why the watchdog ended the session, if it did.
    fn stopped(&self) -> Option<Stopped> {
        let stop = self.stop.lock().unwrap_or_else(PoisonError::into_inner);
        stop.clone().map(Stopped)
    }

    /// Every statement in order, an error not stopping the others (the evaluator's
    /// `execute_queries`); errors count only for the solution's statements.
    fn execute_queries(&self, sqls: &[String], is_solution: bool) -> Result<Ran, Stopped> {
        self.execute_noting(sqls, is_solution, None)
    }

    /// [`ItemSession::execute_queries`], each statement's rows or error noted in `notes` when
    /// given (the gold-effect comparison reads every statement a test case may run alone).
    fn execute_noting(
        &self,
        sqls: &[String],
        is_solution: bool,
        mut notes: Option<&mut Vec<String>>,
    ) -> Result<Ran, Stopped> {
        let mut ran = Ran::default();
        for sql in sqls {
            let result = self.perform(sql);
            if let Some(notes) = notes.as_deref_mut() {
                notes.push(match &result {
                    Ok(rows) => format!("{rows:?}"),
                    Err(error) => format!("{} {} error", error.class, error.code),
                });
            }
            match result {
                Ok(rows) => ran.rows = Some(rows),
                Err(error) => {
                    if let Some(stop) = self.stopped() {
                        return Err(stop);
                    }
                    ran.exec_error |= is_solution;
                    ran.message.push_str(&format!("\n {}", error.printed()));
                }
            }
        }
        Ok(ran)
    }

    /// One statement as the evaluator's `perform_query_on_mysql_databases` runs it: after its
    /// `SET SESSION MAX_EXECUTION_TIME` (an error there ignored), committed when its text holds a
    /// commit word, rolled back on an error; the rows of its first result (none: no columns and
    /// no rows).
    fn perform(&self, sql: &str) -> Result<Json, StatementError> {
        if let Some(stop) = self.stopped() {
            return Err(StatementError {
                class: "OperationalError",
                code: 2013,
                message: stop.0,
            });
        }
        let mut conn = self.conn.borrow_mut();
        let _ = conn.query_drop(SESSION_TIMEOUT);
        let outcome = refused(&mut conn, sql).map_or_else(
            || {
                let rows = first_result(&mut conn, sql, self.max_rows)?;
                let lower = sql.trim().to_lowercase();
                if COMMIT_WORDS.iter().any(|word| lower.contains(word)) {
                    conn.query_drop("COMMIT").map_err(statement_error)?;
                }
                Ok(rows)
            },
            Err,
        );
        if outcome.is_err() {
            let _ = conn.query_drop("ROLLBACK");
        }
        outcome
    }
}

/// Rolls back every prepared XA transaction on the server (`XA RECOVER`): since MariaDB 10.5 one
/// outlives the session that prepared it and keeps its locks, so a prediction's `XA PREPARE`
/// would keep its clone from being dropped and its rows from every later reader (red team
/// round 30). The server is the run's alone (its claim), so every prepared XA is a prediction's.
fn roll_back_prepared_xa(admin: &mut Conn) -> Result<(), String> {
    let prepared: Vec<(i64, usize, usize, Vec<u8>)> = admin
        .query("XA RECOVER")
        .map_err(|e| format!("listing prepared XA transactions: {}", my_text(&e)))?;
    for (format_id, gtrid_length, bqual_length, data) in prepared {
        let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02X}")).collect::<String>();
        let (gtrid, bqual) = data.split_at(gtrid_length.min(data.len()));
        let bqual = &bqual[..bqual_length.min(bqual.len())];
        let rollback = format!(
            "XA ROLLBACK X'{}', X'{}', {format_id}",
            hex(gtrid),
            hex(bqual)
        );
        admin
            .query_drop(&rollback)
            .map_err(|e| format!("`{rollback}`: {}", my_text(&e)))?;
    }
    Ok(())
}

/// The error PyMySQL's session would get for `sql` without running it: `LOAD DATA / XML LOCAL`
/// (no local files offered), or a text of several statements (no multi-statements asked for:
/// the server's parse error, which preparing the text gives without running it).
fn refused(conn: &mut Conn, sql: &str) -> Option<StatementError> {
    let upper = sql.to_uppercase();
    let words: Vec<&str> = upper
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .collect();
    if words.first() == Some(&"LOAD") && words.contains(&"LOCAL") {
        return Some(StatementError {
            class: "OperationalError",
            code: NOT_ALLOWED,
            message: "The used command is not allowed with this MariaDB version".into(),
        });
    }
    match conn.prep(sql) {
        Ok(statement) => {
            let _ = conn.close(statement);
            None
        }
        Err(mysql::Error::MySqlError(e)) if e.code == PARSE_ERROR => {
            Some(statement_error(mysql::Error::MySqlError(e)))
        }
        Err(_) => None,
    }
}

/// Runs `sql` by the text protocol and keeps its first result's rows (PyMySQL reads the first;
/// the others are read and dropped); more than `max_rows` rows stop the item.
fn first_result(conn: &mut Conn, sql: &str, max_rows: u64) -> Result<Json, StatementError> {
    let mut result = conn.query_iter(sql).map_err(statement_error)?;
    let tags: Vec<&'static str> = result.columns().as_ref().iter().map(tag_of).collect();
    let mut data = Vec::new();
    let mut seen = 0u64;
    if let Some(set) = result.iter() {
        for row in set {
            let row = row.map_err(statement_error)?;
            seen += 1;
            if seen > max_rows {
                return Err(StatementError {
                    class: "OperationalError",
                    code: 2013,
                    message: format!(
                        "a statement returned more than {max_rows} rows, the item's row budget"
                    ),
                });
            }
            if data.len() < KEPT_ROWS {
                data.push(row_json(&row, &tags));
            }
        }
    }
    while let Some(set) = result.iter() {
        for row in set {
            row.map_err(statement_error)?;
        }
    }
    Ok(json!({ "types": tags, "data": data }))
}

/// One row's cells as text (hex for bytes), null for NULL.
fn row_json(row: &mysql::Row, tags: &[&'static str]) -> Json {
    let cells = (0..tags.len()).map(|i| match row.as_ref(i) {
        None | Some(mysql::Value::NULL) => Json::Null,
        Some(mysql::Value::Bytes(bytes)) if tags[i] == "bytes" => {
            Json::String(bytes.iter().map(|b| format!("{b:02x}")).collect())
        }
        Some(mysql::Value::Bytes(bytes)) => Json::String(String::from_utf8_lossy(bytes).into()),
        Some(other) => Json::String(other.as_sql(true).trim_matches('\'').to_string()),
    });
    Json::Array(cells.collect())
}

/// PyMySQL's conversion of a column type, as the runner names it (`decoders` in
/// `pymysql/converters.py`; text types with the binary character set stay `bytes`).
fn tag_of(column: &mysql::Column) -> &'static str {
    use ColumnType::*;
    match column.column_type() {
        MYSQL_TYPE_TINY | MYSQL_TYPE_SHORT | MYSQL_TYPE_LONG | MYSQL_TYPE_LONGLONG
        | MYSQL_TYPE_INT24 | MYSQL_TYPE_YEAR => "int",
        MYSQL_TYPE_FLOAT | MYSQL_TYPE_DOUBLE => "float",
        MYSQL_TYPE_DECIMAL | MYSQL_TYPE_NEWDECIMAL => "decimal",
        MYSQL_TYPE_DATE | MYSQL_TYPE_NEWDATE => "date",
        MYSQL_TYPE_DATETIME
        | MYSQL_TYPE_TIMESTAMP
        | MYSQL_TYPE_DATETIME2
        | MYSQL_TYPE_TIMESTAMP2 => "datetime",
        MYSQL_TYPE_TIME | MYSQL_TYPE_TIME2 => "timedelta",
        MYSQL_TYPE_JSON => "text",
        MYSQL_TYPE_BIT => "bytes",
        _ if column.character_set() == BINARY_CHARSET => "bytes",
        _ => "text",
    }
}

/// The PyMySQL class of a client error, by the server's code (`pymysql/err.py`'s tables); a lost
/// connection is an `OperationalError`.
fn statement_error(error: mysql::Error) -> StatementError {
    let mysql::Error::MySqlError(e) = &error else {
        return StatementError {
            class: "OperationalError",
            code: 2013,
            message: my_text(&error),
        };
    };
    let class = match e.code {
        1064 | 1149 | 1146 | 1054 | 1051 | 1050 | 1060 | 1061 | 1091 | 1102 | 1103 | 1104
        | 1106 | 1107 | 1110 | 1166 | 1211 | 1227 | 1044 | 1045 | 1142 | 1143 | 1049 | 1007
        | 1008 => "ProgrammingError",
        1062 | 1169 | 1215 | 1216 | 1217 | 1451 | 1452 | 1557 | 1048 => "IntegrityError",
        1264 | 1265 | 1292 | 1366 | 1406 | 1258 | 1259 | 1367 | 1441 | 1467 => "DataError",
        1235 | 1289 | 1295 => "NotSupportedError",
        _ => "OperationalError",
    };
    StatementError {
        class,
        code: e.code,
        message: e.message.clone(),
    }
}

/// The database side of the MySQL runner's requests.
impl ItemDb for ItemSession {
    fn answer(&self, op: &str, request: &Json) -> Result<Json, TestsError> {
        match op {
            "exec" => {
                let sqls: Vec<String> =
                    serde_json::from_value(request["sqls"].clone()).map_err(|_| {
                        TestsError::Fault("`exec` without a list of texts `sqls`".into())
                    })?;
                let is_solution = request["is_solution"].as_bool().unwrap_or(true);
                let ran = self.execute_queries(&sqls, is_solution)?;
                Ok(
                    json!({ "rows": ran.rows, "exec_error": ran.exec_error, "timeout": false, "message": ran.message }),
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
                    Err(e) => json!({ "rows": null, "error": {
                        "class": e.class, "code": e.code, "message": e.message
                    } }),
                })
            }
            other => Err(TestsError::Fault(format!("an unknown request `{other}`"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{grant_pattern, StatementError};

    #[test]
    fn a_grant_pattern_matches_its_own_name_only() {
        assert_eq!(
            grant_pattern("sqlgate_live_ab_c0"),
            "`sqlgate\\_live\\_ab\\_c0`"
        );
        assert_eq!(grant_pattern("a%b"), "`a\\%b`");
    }

    #[test]
    fn errors_print_as_pymysql_prints_them() {
        let error = |message: &str| StatementError {
            class: "ProgrammingError",
            code: 1146,
            message: message.into(),
        };
        assert_eq!(
            error("Table 'x.t' doesn't exist").printed(),
            "(1146, \"Table 'x.t' doesn't exist\")"
        );
        assert_eq!(error("plain").printed(), "(1146, 'plain')");
    }
}
