//! The servers' Query data check under `bird_critic_sound` (issue 44; red team round 26, the
//! lever h69 left open): an item whose gold is not shown to write ([`gold_writes`]) must leave
//! its clone holding what the twin holds. After the prediction, and again after each test-case
//! request on the prediction's clone, the prediction's clone is compared with the twin on every
//! entry its data digests have ([`Contents`]): each table's rows, the rows' scan order, the
//! settings that decide how values compare (collations, enum labels) and the schema's objects.
//! A prediction that rewrote the rows its wrong query reads (`UPDATE ... SET qty = id` before a
//! `COUNT(DISTINCT qty)` where the gold counts rows), moved them (a no-op `UPDATE`, a table
//! rebuilt in another order, before a gold's `LIMIT 1`) or changed a column's collation fails,
//! naming what differs (red team round 32).

use super::python::TestsError;
use sqlparser::ast::{ObjectType, Statement};
use sqlparser::dialect::Dialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, Tokenizer};
use std::cell::{OnceCell, RefCell};
use std::collections::{BTreeMap, BTreeSet};

/// A clone's contents as the check compares them: every data digest entry of the clone's
/// database (`server::data_digest`: its tables, the scan order, the settings, the structure),
/// and a `levers` entry of what else can change a read there (each server's start-up levers,
/// comments and, on PostgreSQL, access lists: `PgRun::levers`, `MyRun::levers`), keyed and
/// valued without the clone's database name, so a clone and its twin compare equal when they
/// hold the same.
pub type Contents = BTreeMap<String, String>;

/// The first keywords of a statement that writes rows, the schema's objects, their order or
/// their settings. A gold with such a statement has the check off: its twin holds the gold's
/// writes, which the test cases judge. Any other first keyword (a read, `SET`, `USE`, one
/// unknown here) leaves the check on: a gold that writes under another word is checked, a
/// false fail at worst, never a false pass.
const WRITING: [&str; 25] = [
    "insert", "update", "delete", "merge", "replace", "upsert", "create", "alter", "drop",
    "truncate", "rename", "comment", "grant", "revoke", "call", "do", "copy", "load", "import",
    "refresh", "cluster", "vacuum", "optimize", "repair", "reassign",
];

/// Whether a statement of the gold `sqls` is shown to write what outlives its session: its first
/// keyword, read by the server's own lexer (`dialect`: MySQL's `#` comments, PostgreSQL's nested
/// ones), is one of [`WRITING`], and it is not a `CREATE TEMPORARY TABLE` or a `DROP` of tables
/// the gold makes temporary ([`session_only`]: those die with the gold's session, so the twin
/// keeps nothing of them; red team round 33). What a statement holds after its first keyword
/// does not count (a writing word in a literal, a comment or a quoted name: round 30), and a gold
/// the check cannot classify is checked (a leading `#` or nested comment, a `SET` before the
/// read: round 32).
pub fn gold_writes(sqls: &[String], dialect: &dyn Dialect) -> bool {
    let temporary = temporary_tables(sqls, dialect);
    sqls.iter().any(|sql| {
        !session_only(sql, dialect, &temporary)
            && first_keyword(sql, dialect).is_some_and(|word| WRITING.contains(&word.as_str()))
    })
}

/// The names (lower case) of the tables the gold `sqls` makes with `CREATE TEMPORARY TABLE`.
fn temporary_tables(sqls: &[String], dialect: &dyn Dialect) -> BTreeSet<String> {
    (sqls.iter())
        .filter_map(|sql| Parser::parse_sql(dialect, sql).ok())
        .flatten()
        .filter_map(|statement| match statement {
            Statement::CreateTable(table) if table.temporary => {
                Some(table.name.to_string().to_lowercase())
            }
            _ => None,
        })
        .collect()
}

/// Whether every statement of `sql` writes only what dies with its session: it makes a
/// temporary table, or drops tables all named in `temporary` (a `DROP` of a base table of the
/// same name writes all the same, and the check, left on, fails the item: a false fail at
/// worst).
fn session_only(sql: &str, dialect: &dyn Dialect, temporary: &BTreeSet<String>) -> bool {
    every_statement(sql, dialect, |statement| match statement {
        Statement::CreateTable(table) => table.temporary,
        Statement::Drop {
            object_type: ObjectType::Table,
            names,
            ..
        } => (names.iter()).all(|name| temporary.contains(&name.to_string().to_lowercase())),
        _ => false,
    })
}

/// Whether `sql` parses, as `dialect` reads it, into at least one statement, and `each` holds
/// of every one.
fn every_statement(sql: &str, dialect: &dyn Dialect, each: impl Fn(&Statement) -> bool) -> bool {
    let Ok(statements) = Parser::parse_sql(dialect, sql) else {
        return false;
    };
    !statements.is_empty() && statements.iter().all(each)
}

/// The first words of a statement's `tokens` (lower case, unquoted) after blanks, comments and
/// opening parentheses.
fn leading_words(tokens: &[Token]) -> Vec<String> {
    (tokens.iter())
        .filter(|token| !matches!(token, Token::Whitespace(_) | Token::LParen))
        .take(6)
        .map_while(|token| match token {
            Token::Word(word) if word.quote_style.is_none() => {
                Some(word.value.to_ascii_lowercase())
            }
            _ => None,
        })
        .collect()
}

/// The first keyword of `sql` (lower case) after blanks, comments and opening parentheses, as
/// `dialect` reads them; `None` for a text it cannot read or that holds none.
fn first_keyword(sql: &str, dialect: &dyn Dialect) -> Option<String> {
    let tokens = Tokenizer::new(dialect, sql).tokenize().ok()?;
    leading_words(&tokens).into_iter().next()
}

/// The check's reach: the contents of the prediction's clone, and of the twin (made if not yet).
pub trait CloneContents {
    /// The prediction's clone after the item's preprocess, before its prediction, read on a
    /// session of the administrator's while the item's session is open.
    fn started(&self) -> Result<Contents, TestsError>;
    /// The prediction's clone, read now on a session of the administrator's.
    fn prediction(&self) -> Result<Contents, TestsError>;
    /// The twin clone, made now if it was not.
    fn twin(&self) -> Result<Contents, TestsError>;
}

/// The `contents` of a clone from its data `digests`: every entry of `database` (its tables,
/// `<database>:order`, `:settings`, `:structure`), keyed and valued with `database` replaced by
/// a placeholder.
pub fn contents(digests: BTreeMap<String, String>, database: &str) -> Contents {
    let table = format!("{database}.");
    let entry = format!("{database}:");
    let neutral = |text: &str| text.replace(database, "<clone>");
    (digests.into_iter())
        .filter_map(|(key, value)| {
            let name = match (key.strip_prefix(&table), key.strip_prefix(&entry)) {
                (Some(name), _) => name.to_string(),
                (None, Some(what)) => entry_name(what),
                (None, None) => return None,
            };
            Some((name, neutral(&value)))
        })
        .collect()
}

/// The key of a clone's own entry (`<database>:own`; as the check names it, [`OWN_ENTRY`]):
/// what only the same clone keeps from one read to the next (ids, file numbers, the times the
/// server stamps; `catalog_rows::CloneRows::own`), compared with the clone before the
/// prediction, never with the twin.
pub const OWN: &str = "own";

/// How the check names the clone's own entry.
pub(super) const OWN_ENTRY: &str = "its objects' ids, files and times";

/// How the check names a database entry `what` (`order`, `settings`, `structure`, `levers`,
/// [`OWN`]) it found changed.
fn entry_name(what: &str) -> String {
    match what {
        OWN => OWN_ENTRY.to_string(),
        "order" => "the rows' scan order".to_string(),
        "settings" => "the collations and settings".to_string(),
        "structure" => "the schema's objects".to_string(),
        "levers" => "what else decides a read".to_string(),
        other => format!("the database's {other}"),
    }
}

/// The tables (or the schema's objects) where `now` differs from `twin`, the clone's own entry
/// left out.
fn differences(twin: &Contents, now: &Contents) -> Vec<String> {
    let mut names: Vec<&String> = twin.keys().chain(now.keys()).collect();
    names.sort();
    names.dedup();
    (names.into_iter())
        .filter(|name| name.as_str() != OWN_ENTRY && twin.get(*name) != now.get(*name))
        .map(|name| format!("`{name}`"))
        .collect()
}

/// One item's Query data check: off for an item whose gold is shown to write; the prediction's
/// clone compared with what it held before the prediction, and only when that differs with the
/// twin, read once (a preprocess that stamps the time leaves the twin, made later, apart from
/// the prediction's clone, which holds its own stamp: red team round 36; a gold led by a read
/// that writes all the same leaves its writes on the twin only), the clone's own entry
/// ([`OWN`]) always with what it held before (a clone unreadable before the prediction fails
/// the item); the first difference found kept.
pub struct QueryCheck<'a> {
    clones: &'a dyn CloneContents,
    on: bool,
    before: OnceCell<Contents>,
    twin: OnceCell<Contents>,
    changed: RefCell<Vec<String>>,
}

impl<'a> QueryCheck<'a> {
    /// The check of an item on `clones` (on unless its gold, read as `dialect` reads it,
    /// [`gold_writes`]).
    pub fn new(clones: &'a dyn CloneContents, gold: &[String], dialect: &dyn Dialect) -> Self {
        QueryCheck {
            clones,
            on: !gold_writes(gold, dialect),
            before: OnceCell::new(),
            twin: OnceCell::new(),
            changed: RefCell::default(),
        }
    }

    /// Reads the prediction's clone before the prediction (after the preprocess), unless the
    /// check is off. A clone that cannot be read then (a lock its preprocess holds, which the
    /// prediction's session shares) fails the item: compared with the twin alone, its own
    /// entry would go unchecked (red team round 39); the deadline running out stops it.
    pub fn start(&self) -> Result<(), TestsError> {
        if !self.on || self.before.get().is_some() {
            return Ok(());
        }
        match self.clones.started() {
            Ok(read) => {
                self.before.get_or_init(|| read);
            }
            Err(TestsError::Fault(why)) => self.changed.borrow_mut().push(format!(
                "before the prediction, its clone could not be read to compare with it later \
                 ({why}): an item whose preprocess leaves a lock is not checked"
            )),
            Err(stopped) => return Err(stopped),
        }
        Ok(())
    }

    /// Compares the prediction's clone with what it held before the prediction and, when that
    /// differs, with the twin (`when`: after what), unless the check is off or already found a
    /// difference.
    pub fn check(&self, when: &str) -> Result<(), TestsError> {
        if !self.on || !self.changed.borrow().is_empty() {
            return Ok(());
        }
        let now = self.clones.prediction()?;
        if let Some(before) = self.before.get() {
            if *before == now {
                return Ok(());
            }
            if before.get(OWN_ENTRY) != now.get(OWN_ENTRY) {
                self.changed.borrow_mut().push(format!(
                    "{when}, the prediction left {OWN_ENTRY} other than they were before it \
                     (a Query item changes no data)"
                ));
                return Ok(());
            }
        }
        let twin = match self.twin.get() {
            Some(twin) => twin,
            None => {
                let read = self.clones.twin()?;
                self.twin.get_or_init(|| read)
            }
        };
        let differ = differences(twin, &now);
        if !differ.is_empty() {
            self.changed.borrow_mut().push(format!(
                "{when}, the prediction left {} other than the gold does (a Query item changes no data)",
                differ.join(", ")
            ));
        }
        Ok(())
    }

    /// What the check found.
    pub fn failures(self) -> Vec<String> {
        self.changed.into_inner()
    }
}

#[cfg(test)]
mod tests {
    use super::{contents, gold_writes};
    use sqlparser::dialect::{Dialect, MySqlDialect, PostgreSqlDialect};

    fn writes(sql: &str, dialect: &dyn Dialect) -> bool {
        gold_writes(&[sql.to_string()], dialect)
    }

    #[test]
    fn a_gold_is_checked_unless_a_statement_is_shown_to_write() {
        let (pg, my) = (PostgreSqlDialect {}, MySqlDialect {});
        for dialect in [&pg as &dyn Dialect, &my] {
            assert!(!writes("SELECT COUNT(*) FROM orders", dialect));
            assert!(!writes("with t AS (SELECT 1) SELECT * FROM t", dialect));
            assert!(!writes("SELECT 'load' AS x /* update */ FROM t", dialect));
            assert!(!writes(
                "-- the count\n  (SELECT 1) UNION (SELECT 2)",
                dialect
            ));
            assert!(!writes(
                "WITH d AS (DELETE FROM t RETURNING *) SELECT 1",
                dialect
            ));
            assert!(!writes(
                "SET SESSION group_concat_max_len = 100000",
                dialect
            ));
            assert!(!writes("", dialect));
            assert!(writes("UPDATE t SET a = 1", dialect));
            assert!(writes("/* SELECT */ update t SET a = 1", dialect));
            assert!(writes("-- SELECT\nDELETE FROM t", dialect));
            assert!(writes("(INSERT INTO t VALUES (1))", dialect));
            assert!(gold_writes(
                &["SELECT 1".into(), "DROP TABLE t".into()],
                dialect
            ));
        }
        assert!(!writes("# the out of stock ones\nSELECT 1", &my));
        assert!(writes("# a note\nDELETE FROM t", &my));
        assert!(!writes("/* a /* nested */ update */ SELECT 1", &pg));
        assert!(writes("/* a /* nested */ select */ DELETE FROM t", &pg));
        assert!(!gold_writes(&[], &pg));
    }

    #[test]
    fn a_gold_writing_only_temporary_tables_is_checked() {
        let (pg, my) = (PostgreSqlDialect {}, MySqlDialect {});
        let gold = |sqls: &[&str]| sqls.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let temp = gold(&[
            "DROP TABLE IF EXISTS oos",
            "CREATE TEMP TABLE oos AS SELECT name FROM products WHERE stock = 0",
            "SELECT name FROM oos",
            "DROP TABLE oos",
        ]);
        assert!(!gold_writes(&temp, &pg));
        let temporary = gold(&[
            "CREATE TEMPORARY TABLE oos (name TEXT)",
            "SELECT name FROM oos",
        ]);
        assert!(!gold_writes(&temporary, &my));
        let kept = gold(&["CREATE TABLE oos AS SELECT 1", "SELECT * FROM oos"]);
        assert!(gold_writes(&kept, &pg));
        let dropped = gold(&["CREATE TEMP TABLE oos (a INT)", "DROP TABLE oos, products"]);
        assert!(gold_writes(&dropped, &pg));
    }

    #[test]
    fn contents_hold_every_entry_without_the_database() {
        let digests = [
            ("c1.public.t", "a"),
            ("c1:order", "c1.public.t=11"),
            ("c1:settings", "collations=public.t.name und-x-icu"),
            ("c1:structure", "s"),
            ("c2.public.t", "other"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        let kept = contents(digests.into_iter().collect(), "c1");
        assert_eq!(kept.get("public.t").map(String::as_str), Some("a"));
        assert_eq!(
            kept.get("the rows' scan order").map(String::as_str),
            Some("<clone>.public.t=11")
        );
        assert!(kept.contains_key("the collations and settings"));
        assert!(kept.contains_key("the schema's objects"));
        assert_eq!(kept.len(), 4);
    }
}
