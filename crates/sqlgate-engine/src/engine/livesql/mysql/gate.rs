//! What the gate needs of a [`MyRun`]: what a base database may hold to be copied, the record of
//! what a clone copies (the `<database>:clone` data-digest entries), the run's clean-up in two
//! steps, and the judge interface the metrics reach it through ([`LiveJudge`]).
//!
//! A base database is copied when it holds base tables on InnoDB, Aria or MyISAM and nothing
//! else (an allow list, fail closed): a view, a sequence, a system-versioned table, a table on
//! any other storage engine, a stored routine, a trigger or an event refuses it at start-up.
//! What a copy carries besides the rows, and a prediction can read on its clone (each table's
//! `SHOW CREATE TABLE`: columns, keys, defaults, comments, table options and the
//! `AUTO_INCREMENT` counter; the database's character set and collation), is recorded with the
//! data digests ([`clone_digests`]), so a change of it between the baseline and the run, or
//! during the run, is a change of the data.
//!
//! Every session the run opens is one of sqlgate's for the server claim (`server::exclusive`:
//! MariaDB / MySQL count connection attempts server-wide, and `tls::mysql_connect` counts each
//! of sqlgate's), so no per-database accounting is needed: the databases and users the run
//! makes and drops hold no count of their own.

use super::{ident, literal, my_text, MyRun, Template};
use crate::engine::livesql::{Fault, LiveJudge, Profile, Verdict};
use crate::engine::server::data_digest::DataDigests;
use crate::engine::server::tls;
use crate::input::livesql::LiveItem;
use mysql::prelude::Queryable;
use mysql::Conn;
use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::sync::PoisonError;

/// The storage engines a base table may be on (each keeps its rows in the server's own files).
const ENGINES: &str = "'InnoDB', 'Aria', 'MyISAM'";

/// The end of a clone entry's key in the data digests.
const CLONE: &str = ":clone";

/// A base database as a clone copies it: its character set, collation, and each table's name
/// and `CREATE TABLE` text, in name order.
struct Definition {
    charset: String,
    collation: String,
    tables: Vec<(String, String)>,
}

/// `db_id`'s definition as `conn`'s user sees it; a database holding anything outside the allow
/// list (base tables on [`ENGINES`]) is refused, naming the first such object.
fn definition(conn: &mut Conn, db_id: &str) -> Result<Definition, String> {
    let reading = |e: mysql::Error| format!("reading database `{db_id}`: {}", my_text(&e));
    let schema: Option<(String, String)> = conn
        .exec_first(
            "SELECT DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?",
            (db_id,),
        )
        .map_err(reading)?;
    let (charset, collation) =
        schema.ok_or_else(|| format!("no database `{db_id}` on the server"))?;
    let others: Option<(String, String)> = conn
        .exec_first(
            format!("SELECT kind, name FROM (
               SELECT LOWER(TABLE_TYPE) AS kind, TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_TYPE <> 'BASE TABLE'
               UNION ALL SELECT CONCAT('table on the ', IFNULL(ENGINE, 'unknown'), ' storage engine'), TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE' AND IFNULL(ENGINE, '') NOT IN ({ENGINES})
               UNION ALL SELECT 'routine', ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ?
               UNION ALL SELECT 'trigger', TRIGGER_NAME FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ?
               UNION ALL SELECT 'event', EVENT_NAME FROM information_schema.EVENTS WHERE EVENT_SCHEMA = ?) o ORDER BY 1, 2 LIMIT 1"),
            (db_id, db_id, db_id, db_id, db_id),
        )
        .map_err(reading)?;
    if let Some((kind, other)) = others {
        return Err(format!("database `{db_id}` has the {kind} `{other}`: only base tables on InnoDB, Aria or MyISAM are copied into an item's database, so it is refused"));
    }
    let names: Vec<String> = conn
        .exec(
            "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY 1",
            (db_id,),
        )
        .map_err(reading)?;
    let mut tables = Vec::with_capacity(names.len());
    for table in names {
        let create: Option<(String, String)> = conn
            .query_first(format!(
                "SHOW CREATE TABLE {}.{}",
                ident(db_id),
                ident(&table)
            ))
            .map_err(reading)?;
        let (_, create) = create.ok_or_else(|| format!("no table `{table}` in `{db_id}`"))?;
        tables.push((table, create));
    }
    Ok(Definition {
        charset,
        collation,
        tables,
    })
}

impl MyRun {
    /// The base database's character set, collation and tables, for the template `name`;
    /// anything outside the allow list refused ([`definition`]).
    pub(super) fn read_base(
        &self,
        admin: &mut Conn,
        db_id: &str,
        name: String,
    ) -> Result<Template, String> {
        let Definition {
            charset,
            collation,
            tables,
        } = definition(admin, db_id)?;
        Ok(Template {
            database: name,
            charset,
            collation,
            tables,
        })
    }

    /// Checks, as the administrator `settings` names, that every db_id's base database in
    /// `db_ids` can be copied ([`definition`]), copying nothing: a run's start-up check.
    pub fn check_bases(
        settings: &super::MySettings,
        db_ids: &BTreeSet<String>,
    ) -> Result<(), String> {
        let tls::MysqlTarget { opts, mode } = tls::mysql_target(&settings.admin_url)?;
        let mut admin = tls::mysql_connect(opts, mode)
            .map_err(|e| format!("cannot connect as the administrator: {}", my_text(&e)))?;
        for db_id in db_ids {
            definition(&mut admin, db_id)?;
        }
        refuse_foreign_state(&mut admin)
    }

    /// Drops every clone and its user (all are free once scoring has ended); an error (a fault)
    /// when one cannot be.
    fn drop_clones(&self) -> Result<(), Fault> {
        let made = std::mem::take(&mut *self.made.lock().unwrap_or_else(PoisonError::into_inner));
        self.free
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        if made.is_empty() {
            return Ok(());
        }
        let mut admin = self.admin()?;
        for (database, user) in made {
            self.kill_sessions(&mut admin, &user)?;
            self.sql(
                &mut admin,
                &format!("DROP USER IF EXISTS {}@'%'", literal(&user)),
            )?;
            self.sql(
                &mut admin,
                &format!("DROP DATABASE IF EXISTS {}", ident(&database)),
            )?;
        }
        Ok(())
    }

    /// Drops every clone, template and user the run made, once (best effort: a server that is
    /// gone keeps them, all named `sqlgate_live_<tag>_...`).
    pub fn close(&self) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        let _ = self.drop_clones();
        let Ok(mut admin) = self.admin() else {
            return;
        };
        for template in self.templates.values() {
            let _ = admin.query_drop(format!(
                "DROP DATABASE IF EXISTS {}",
                ident(&template.database)
            ));
        }
    }
}

impl Drop for MyRun {
    fn drop(&mut self) {
        self.close();
    }
}

/// A run judges through the gate's metrics (`bird_critic` and `bird_critic_sound` on
/// MariaDB / MySQL).
impl LiveJudge for MyRun {
    fn judge(
        &self,
        item: &LiveItem,
        prediction: Option<&[String]>,
        profile: Profile,
    ) -> Result<Verdict, Fault> {
        MyRun::judge_as(self, item, prediction, profile)
    }

    fn finish(&self) -> Result<(), Fault> {
        self.drop_clones()
    }

    fn close(&self) {
        MyRun::close(self)
    }
}

/// The clone entry of each database in `databases` (key `<database>:clone`): SHA-256 over its
/// character set, collation and every table's `SHOW CREATE TABLE`, read as the URL's user (the
/// reader) on one session; a database outside the allow list ([`definition`]) is an error.
pub fn clone_digests(url: &str, databases: &[String]) -> Result<DataDigests, String> {
    let tls::MysqlTarget { opts, mode } = tls::mysql_target(url)?;
    let opts = mysql::OptsBuilder::from_opts(opts).db_name(None::<String>);
    let mut conn = tls::mysql_connect(opts.into(), mode).map_err(|e| my_text(&e))?;
    let mut digests = DataDigests::new();
    for database in databases {
        let Definition {
            charset,
            collation,
            tables,
        } = definition(&mut conn, database)?;
        let parts = [charset.as_bytes(), collation.as_bytes()].into_iter();
        let tables = tables
            .iter()
            .flat_map(|(name, create)| [name.as_bytes(), create.as_bytes()]);
        let digest = crate::util::digest::content_hash(parts.chain(tables));
        digests.insert(format!("{database}{CLONE}"), digest);
    }
    super::server_state::add_server_state(&mut conn, &mut digests)?;
    Ok(digests)
}

/// The run's own databases (`sqlgate_live_...`) are left out of what the run records of the
/// server (the stopword tables' entry, `server_state::add_admin_entries`), so at start-up no
/// other database or user of that name may exist: one would be another run's, left when it
/// could not end, or a preparation's, named to be left out while a prediction reads it (red
/// team round 23). Refused, naming them.
fn refuse_foreign_state(admin: &mut Conn) -> Result<(), String> {
    let names: Vec<String> = admin
        .query(
            "SELECT CONCAT('database ', SCHEMA_NAME) AS name FROM information_schema.SCHEMATA \
             WHERE SCHEMA_NAME LIKE 'sqlgate\\_live\\_%' UNION ALL SELECT CONCAT('user ', User) \
             FROM mysql.user WHERE User LIKE 'sqlgate\\_live\\_%' ORDER BY 1 LIMIT 5",
        )
        .map_err(|e| format!("reading the server's databases and users: {}", my_text(&e)))?;
    match names.is_empty() {
        true => Ok(()),
        false => Err(format!(
            "the server holds databases or users named `sqlgate_live_...` that are not this \
             run's ({}): another run's that could not end, or ones made to be left out of what \
             the run records; drop them before the run",
            names.join(", ")
        )),
    }
}
