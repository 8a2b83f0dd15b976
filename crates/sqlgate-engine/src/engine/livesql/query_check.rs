//! The servers' Query data check under `bird_critic_sound` (issue 44; red team round 26, the
//! lever h69 left open): an item whose gold reads ([`writes_nothing`]) must leave its
//! clone holding what the twin holds. After the prediction, and again after each test-case
//! request on the prediction's clone, every table's rows and the schema's objects of the
//! prediction's clone are compared with the twin's ([`Contents`]): a prediction that rewrote the
//! rows its wrong query reads (`UPDATE ... SET qty = id` before a `COUNT(DISTINCT qty)` where
//! the gold counts rows) fails, naming the table.

use super::python::TestsError;
use std::cell::{OnceCell, RefCell};
use std::collections::BTreeMap;

/// A clone's contents as the check compares them: each table's digest, and the database's
/// structure entry, keyed without the clone's database name (the server's data digests,
/// `server::data_digest`; the heap-order and settings entries are left out: an `UPDATE` that
/// puts every row back moves them, and they do not hold rows).
pub type Contents = BTreeMap<String, String>;

/// How a statement the check treats as a read starts (its first word, after comments, blanks
/// and opening parentheses).
const READING: [&str; 6] = ["select", "with", "show", "explain", "values", "table"];

/// Whether the check is on for an item whose gold is `sqls`: every statement starts with a
/// reading word ([`READING`]). What a statement holds after its first word does not turn the
/// check off (a writing word in a literal, a comment or a quoted name did: red team round 30).
/// A gold led by a read that writes all the same (a data-changing CTE, `SELECT ... INTO`,
/// `EXPLAIN ANALYZE` of a write, a function that writes) is checked too: its twin holds the
/// gold's writes, so the prediction must leave its clone as the gold leaves it, a false fail at
/// worst, never a false pass.
pub fn writes_nothing(sqls: &[String]) -> bool {
    !sqls.is_empty()
        && sqls.iter().all(|sql| {
            let first = first_word(sql).to_ascii_lowercase();
            READING.contains(&first.as_str())
        })
}

/// The first word of `sql` after its leading blanks, comments (`--`, `/* */`) and parentheses.
fn first_word(sql: &str) -> &str {
    let mut rest = sql;
    loop {
        let trimmed = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '(');
        if let Some(after) = trimmed.strip_prefix("--") {
            rest = after.split_once('\n').map_or("", |(_, next)| next);
        } else if let Some(after) = trimmed.strip_prefix("/*") {
            rest = after.split_once("*/").map_or("", |(_, next)| next);
        } else {
            let end = trimmed
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(trimmed.len());
            return &trimmed[..end];
        }
    }
}

/// The check's reach: the contents of the prediction's clone, and of the twin (made if not yet).
pub trait CloneContents {
    /// The prediction's clone, read now on a session of the administrator's.
    fn prediction(&self) -> Result<Contents, TestsError>;
    /// The twin clone, made now if it was not.
    fn twin(&self) -> Result<Contents, TestsError>;
}

/// The `contents` of a clone from its data `digests`: the table entries and the structure entry
/// of `database`, keyed without `database`.
pub fn contents(digests: BTreeMap<String, String>, database: &str) -> Contents {
    let table = format!("{database}.");
    let structure = format!("{database}:structure");
    (digests.into_iter())
        .filter_map(|(key, value)| match key.strip_prefix(&table) {
            Some(name) => Some((name.to_string(), value)),
            None => (key == structure).then(|| ("the schema's objects".to_string(), value)),
        })
        .collect()
}

/// The tables (or the schema's objects) where `now` differs from `twin`.
fn differences(twin: &Contents, now: &Contents) -> Vec<String> {
    let mut names: Vec<&String> = twin.keys().chain(now.keys()).collect();
    names.sort();
    names.dedup();
    (names.into_iter())
        .filter(|name| twin.get(*name) != now.get(*name))
        .map(|name| format!("`{name}`"))
        .collect()
}

/// One item's Query data check: off for an item whose gold may write; the twin's contents read
/// once; the first difference found kept.
pub struct QueryCheck<'a> {
    clones: &'a dyn CloneContents,
    on: bool,
    twin: OnceCell<Contents>,
    changed: RefCell<Vec<String>>,
}

impl<'a> QueryCheck<'a> {
    /// The check of an item (on when its gold `writes_nothing`) on `clones`.
    pub fn new(clones: &'a dyn CloneContents, gold: &[String]) -> Self {
        QueryCheck {
            clones,
            on: writes_nothing(gold),
            twin: OnceCell::new(),
            changed: RefCell::default(),
        }
    }

    /// Compares the prediction's clone with the twin (`when`: after what), unless the check is
    /// off or already found a difference.
    pub fn check(&self, when: &str) -> Result<(), TestsError> {
        if !self.on || !self.changed.borrow().is_empty() {
            return Ok(());
        }
        let now = self.clones.prediction()?;
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
    use super::{contents, writes_nothing};

    #[test]
    fn a_gold_led_by_a_read_is_checked_whatever_it_holds_after() {
        let one = |sql: &str| writes_nothing(&[sql.to_string()]);
        assert!(one("SELECT COUNT(*) FROM orders"));
        assert!(one("with t AS (SELECT 1) SELECT * FROM t"));
        assert!(one(
            "SELECT 'load' AS x /* set ... do */ FROM t AS \"call\""
        ));
        assert!(one("-- the count\n  (SELECT 1) UNION (SELECT 2)"));
        assert!(one("/* a note */ SELECT 1"));
        assert!(one("WITH d AS (DELETE FROM t RETURNING *) SELECT 1"));
        assert!(!one("UPDATE t SET a = 1"));
        assert!(!one("/* SELECT */ UPDATE t SET a = 1"));
        assert!(!one("-- SELECT\nDELETE FROM t"));
        assert!(!writes_nothing(&[
            "SELECT 1".into(),
            "INSERT INTO t VALUES (1)".into()
        ]));
        assert!(!writes_nothing(&[]));
    }

    #[test]
    fn contents_are_keyed_without_the_database() {
        let digests = [
            ("c1.public.t", "a"),
            ("c1:order", "b"),
            ("c1:structure", "s"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        let kept = contents(digests.into_iter().collect(), "c1");
        assert_eq!(kept.get("public.t").map(String::as_str), Some("a"));
        assert_eq!(kept.len(), 2);
    }
}
