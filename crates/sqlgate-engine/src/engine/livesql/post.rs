//! The sound profile's declarative checks of an item ([`crate::input::livesql_post`]): its
//! `post_conditions`, run on a new connection to the prediction's copy after the prediction, and
//! its `post_state`, which compares that copy table by table with the gold's twin copy
//! (`twin`; rows added, removed and, by the gold table's primary key, changed). A Query item
//! (its gold writes nothing) whose prediction wrote has every table and schema object compared.
//! Cells compare as the sound profile compares results (numbers to 2 places: `price * 1.1` and
//! `price + price * 0.1` are the same price); messages show them exactly.

use super::cells::{cell, Cell};
use super::copy::ItemCopy;
use super::gold_twin::LazyTwin;
use super::python::TestsError;
use super::query_check::Contents;
use super::session::{Ran, Session, Stopped};
use super::{open, Profile, Settings};
use crate::input::livesql::LiveItem;
use crate::input::livesql_post::{CountOf, PostCondition, PostState};
use crate::util::digest::content_hash;
use rusqlite::types::Value;
use serde_json::Value as Json;
use std::collections::{BTreeMap, BTreeSet};

/// At most this many rows are shown per table and kind of difference (and per side of a failed
/// `rows` check).
const SHOWN_ROWS: usize = 3;

/// A table with more rows than this is not compared: the item stops (a timeout verdict).
const MAX_STATE_ROWS: usize = 1_000_000;

/// The failures of `item`'s declarative checks on `session` (a fresh connection to the
/// prediction's copy), each naming its check; empty when every check passes. With `unchanged`
/// (a Query item whose prediction wrote) every table and schema object is compared with the
/// gold's `twin` in place of the item's own `post_state`.
pub fn failures(
    session: &Session,
    item: &LiveItem,
    twin: &LazyTwin<'_>,
    unchanged: bool,
    settings: &Settings,
) -> Result<Vec<String>, TestsError> {
    let mut failed = Vec::new();
    for (i, condition) in item.post.conditions.iter().enumerate() {
        if let Some(why) = check(session, condition)? {
            let what = condition.describe();
            failed.push(format!("post_conditions[{i}] ({what}) failed: {why}"));
        }
    }
    if unchanged {
        failed.extend(query_state(session, twin, settings)?);
    } else if let Some(state) = &item.post.state {
        failed.extend(post_state(session, item, state, twin, settings)?);
    }
    Ok(failed)
}

/// A Query item's unchanged check on `session` (a connection to the prediction's copy) at any
/// point: every table and schema object compared with the twin's, exactly.
pub fn unchanged_failures(
    session: &Session,
    twin: &LazyTwin<'_>,
    settings: &Settings,
) -> Result<Vec<String>, TestsError> {
    query_state(session, twin, settings)
}

/// Why `condition` fails on `session`, or `None` when it holds.
fn check(session: &Session, condition: &PostCondition) -> Result<Option<String>, TestsError> {
    Ok(match condition {
        PostCondition::Rows { query, rows, order } => {
            let got = match rows_of(session, query)? {
                Ok(got) => got,
                Err(why) => return Ok(Some(why)),
            };
            let expected: Vec<Vec<Cell>> = (rows.iter())
                .map(|row| row.iter().map(json_cell).collect())
                .collect();
            let actual: Vec<Vec<Cell>> = (got.iter())
                .map(|row| row.iter().map(cell).collect())
                .collect();
            let same = match *order {
                true => actual == expected,
                false => sorted(actual) == sorted(expected),
            };
            let shown: Vec<Vec<String>> =
                got.iter().map(|r| r.iter().map(exact).collect()).collect();
            let wanted: Vec<Vec<String>> = (rows.iter())
                .map(|r| r.iter().map(Json::to_string).collect())
                .collect();
            (!same).then(|| {
                format!(
                    "expected {} row(s) {}, got {} row(s) {}",
                    wanted.len(),
                    show(&wanted),
                    shown.len(),
                    show(&shown)
                )
            })
        }
        PostCondition::RowCount { of, count } => {
            let sql = match of {
                CountOf::Query(query) => format!("SELECT COUNT(*) FROM ({})", bare(query)),
                CountOf::Table(table) => format!("SELECT COUNT(*) FROM main.{}", quoted(table)),
            };
            match rows_of(session, &sql)? {
                Err(why) => Some(why),
                Ok(rows) => {
                    let got = rows.first().and_then(|r| r.first()).cloned();
                    match got {
                        Some(Value::Integer(n)) if n as u64 == *count => None,
                        Some(Value::Integer(n)) => Some(format!("expected {count} rows, got {n}")),
                        other => Some(format!("no count: {other:?}")),
                    }
                }
            }
        }
        PostCondition::Columns { table, columns } => {
            let sql = format!(
                "SELECT name, type FROM pragma_table_info({}, 'main')",
                literal(table)
            );
            let got: Vec<(String, String)> = match rows_of(session, &sql)? {
                Err(why) => return Ok(Some(why)),
                Ok(rows) => rows.iter().map(|r| (text(&r[0]), text(&r[1]))).collect(),
            };
            let same = got.len() == columns.len()
                && (got.iter().zip(columns)).all(|((n, t), (en, et))| {
                    n.eq_ignore_ascii_case(en) && t.eq_ignore_ascii_case(et)
                });
            let list = |cols: &[(String, String)]| -> String {
                let parts: Vec<String> = cols.iter().map(|(n, t)| format!("{n} {t}")).collect();
                format!("({})", parts.join(", "))
            };
            match (same, got.is_empty()) {
                (true, _) => None,
                (false, true) => Some(format!("table `{table}` does not exist")),
                (false, false) => Some(format!("expected {}, got {}", list(columns), list(&got))),
            }
        }
        PostCondition::Object { name, kind, exists } => {
            let mut sql = format!(
                "SELECT type FROM main.sqlite_schema WHERE lower(name) = lower({})",
                literal(name)
            );
            if let Some(kind) = kind {
                sql.push_str(&format!(" AND type = {}", literal(kind)));
            }
            let found = match rows_of(session, &sql)? {
                Err(why) => return Ok(Some(why)),
                Ok(rows) => rows.first().map(|r| text(&r[0])),
            };
            let what = kind.as_deref().unwrap_or("object");
            match (found, *exists) {
                (Some(_), true) | (None, false) => None,
                (None, true) => Some(format!("no {what} `{name}` in the database")),
                (Some(found), false) => Some(format!("the {found} `{name}` is still there")),
            }
        }
    })
}

/// The rows of one query on `session`, or why it failed (a statement error is the check's
/// failure; a spent budget stops the item).
fn rows_of(session: &Session, sql: &str) -> Result<Result<Vec<Vec<Value>>, String>, TestsError> {
    let ran: Ran = session.execute_queries(&[sql.to_string()])?;
    Ok(match (ran.exec_error || ran.timeout, ran.rows) {
        (false, Some(rows)) => Ok(rows),
        _ => Err(format!("the query failed: {}", ran.message)),
    })
}

/// A query without the `;` and blanks that may end it, for use as a subquery.
fn bare(query: &str) -> &str {
    query
        .trim()
        .trim_end_matches(|c: char| c == ';' || c.is_whitespace())
}

/// `name` as a quoted SQL identifier.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `text` as a SQL string literal.
fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

fn text(value: &Value) -> String {
    match value {
        Value::Text(t) => t.clone(),
        other => exact(other),
    }
}

/// A JSON cell of a `rows` check as the sound comparison sees a database value.
fn json_cell(value: &Json) -> Cell {
    match value {
        Json::Null => cell(&Value::Null),
        Json::Bool(b) => cell(&Value::Integer(i64::from(*b))),
        Json::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => cell(&Value::Integer(i)),
            (None, Some(f)) => cell(&Value::Real(f)),
            (None, None) => cell(&Value::Text(n.to_string())),
        },
        Json::String(s) => cell(&Value::Text(s.clone())),
        other => cell(&Value::Text(other.to_string())),
    }
}

fn sorted<T: Ord>(mut rows: Vec<T>) -> Vec<T> {
    rows.sort();
    rows
}

/// A value exactly, as SQL would write it (an integral float as the integer: `2.0` is `2`).
fn exact(value: &Value) -> String {
    match value {
        Value::Null => "NULL".to_string(),
        Value::Integer(i) => i.to_string(),
        Value::Real(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => (*f as i64).to_string(),
        Value::Real(f) => format!("{f:?}"),
        Value::Text(t) => literal(t),
        Value::Blob(bytes) => {
            let hex: String = bytes.iter().map(|b| format!("{b:02X}")).collect();
            format!("X'{hex}'")
        }
    }
}

/// The first [`SHOWN_ROWS`] rows, `(a, b); (c, d)`, with how many more.
fn show(rows: &[Vec<String>]) -> String {
    let mut parts: Vec<String> = (rows.iter().take(SHOWN_ROWS))
        .map(|r| format!("({})", r.join(", ")))
        .collect();
    if rows.len() > SHOWN_ROWS {
        parts.push(format!("... {} more", rows.len() - SHOWN_ROWS));
    }
    match parts.is_empty() {
        true => "(none)".to_string(),
        false => parts.join("; "),
    }
}

/// A table as the post-state comparison reads it.
struct Table {
    columns: Vec<String>,
    /// The positions of its primary key's columns (empty: none).
    key: Vec<usize>,
    rows: Vec<Row>,
}

/// A row: its cells as compared, and its values written [`exact`]ly for messages.
#[derive(Clone)]
struct Row {
    cells: Vec<Cell>,
    shown: Vec<String>,
}

/// The `post_state` comparison: every table `state` names compared between the gold's twin and
/// the prediction's copy; one failure per differing table.
fn post_state(
    session: &Session,
    item: &LiveItem,
    state: &PostState,
    twin: &LazyTwin<'_>,
    settings: &Settings,
) -> Result<Vec<String>, TestsError> {
    let twin = twin.get()?;
    let gold = twin.checked(item, "`post_state`", settings)?;
    let tables: Vec<String> = match state {
        PostState::Tables(tables) => tables.clone(),
        PostState::All => union(&table_names(session)?, &table_names(&gold)?),
        PostState::Touched => {
            let base_copy = ItemCopy::make(twin.template()).map_err(TestsError::Fault)?;
            let base = ran_on(&base_copy, item, &[], settings)?;
            let mut touched = Vec::new();
            for table in union(&table_names(&base)?, &table_names(&gold)?) {
                if difference(table_of(&base, &table)?, table_of(&gold, &table)?).is_some() {
                    touched.push(table);
                }
            }
            touched
        }
    };
    let mut failed = Vec::new();
    for table in tables {
        let (theirs, ours) = (table_of(&gold, &table)?, table_of(session, &table)?);
        if let Some(why) = difference(theirs, ours) {
            failed.push(format!("post_state: table `{table}`: {why}"));
        }
    }
    Ok(failed)
}

/// A Query item whose prediction wrote: every table and every schema object of the
/// prediction's copy compared with the gold's twin (which the gold, writing nothing, left as the
/// preprocess left it); one failure per differing table, one for the schema.
fn query_state(
    session: &Session,
    twin: &LazyTwin<'_>,
    settings: &Settings,
) -> Result<Vec<String>, TestsError> {
    const WHY: &str = "the gold writes nothing, and the prediction left the database changed";
    let gold = twin.get()?.open(settings)?;
    let mut failed = Vec::new();
    for table in union(&table_names(session)?, &table_names(&gold)?) {
        if let Some(why) = difference(table_of(&gold, &table)?, table_of(session, &table)?) {
            failed.push(format!("{WHY}: table `{table}`: {why}"));
        } else if exact_rows(&gold, &table)? != exact_rows(session, &table)? {
            failed.push(format!("{WHY}: table `{table}`: its rows hold the same values to 2 places but not the same exact values or rowids"));
        }
    }
    let (theirs, ours) = (schema_of(&gold)?, schema_of(session)?);
    if theirs != ours {
        let only = |a: &BTreeSet<Vec<String>>, b: &BTreeSet<Vec<String>>| -> Vec<Vec<String>> {
            a.difference(b).cloned().collect()
        };
        failed.push(format!(
            "{WHY}: schema: added {}; removed {}",
            show(&only(&ours, &theirs)),
            show(&only(&theirs, &ours))
        ));
    }
    Ok(failed)
}

/// A copy's contents as the gold-effect comparison reads them (`gold_effect.rs`), on `session`:
/// each table's exact rows with their rowids, digested, and the schema's objects.
pub fn contents(session: &Session) -> Result<Contents, TestsError> {
    let mut read = Contents::new();
    for table in table_names(session)? {
        let rows: Vec<String> = (exact_rows(session, &table)?.iter())
            .map(|row| row.join(","))
            .collect();
        let digest = content_hash(rows.iter().map(|row| row.as_bytes()));
        read.insert(format!("table `{table}`"), digest);
    }
    let schema: Vec<String> = schema_of(session)?
        .into_iter()
        .map(|o| o.join(" "))
        .collect();
    let digest = content_hash(schema.iter().map(|object| object.as_bytes()));
    read.insert("the schema".into(), digest);
    Ok(read)
}

/// The database's own schema objects (not TEMP ones): `(type, name, sql)`, as shown.
fn schema_of(session: &Session) -> Result<BTreeSet<Vec<String>>, TestsError> {
    let sql = "SELECT type, name, sql FROM main.sqlite_schema";
    match rows_of(session, sql)? {
        Ok(rows) => Ok(rows.iter().map(|r| r.iter().map(exact).collect()).collect()),
        Err(why) => Err(TestsError::Fault(format!(
            "reading the schema of a copy: {why}"
        ))),
    }
}

/// A fresh session on `copy` after its item's preprocess and `statements` ran on another one
/// (so no TEMP object of theirs is seen); the gold failing is a fault: there is nothing to
/// compare with.
fn ran_on(
    copy: &ItemCopy,
    item: &LiveItem,
    statements: &[String],
    settings: &Settings,
) -> Result<Session, TestsError> {
    let session = open(copy.path(), &settings.budget, Profile::Sound)?;
    session.execute_queries(&item.preprocess_sql)?;
    let ran = session.execute_queries(statements)?;
    if ran.exec_error || ran.timeout {
        return Err(TestsError::Fault(format!(
            "the gold of {} does not run for `post_state`: {}",
            item.instance_id, ran.message
        )));
    }
    let budget = session.remaining();
    drop(session);
    open(copy.path(), &budget, Profile::Sound)
}

fn union(a: &[String], b: &[String]) -> Vec<String> {
    a.iter()
        .chain(b)
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// The database's own tables (not SQLite's, not TEMP ones).
fn table_names(session: &Session) -> Result<Vec<String>, TestsError> {
    let sql = "SELECT name FROM main.sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'";
    match rows_of(session, sql)? {
        Ok(rows) => Ok(rows.iter().map(|r| text(&r[0])).collect()),
        Err(why) => Err(TestsError::Fault(format!(
            "listing the tables of a copy: {why}"
        ))),
    }
}

/// `name` in `session`'s database, or `None` when it has no such table.
fn table_of(session: &Session, name: &str) -> Result<Option<Table>, TestsError> {
    let info = format!(
        "SELECT name, pk FROM pragma_table_info({}, 'main')",
        literal(name)
    );
    let columns = match rows_of(session, &info)? {
        Ok(rows) if rows.is_empty() => return Ok(None),
        Ok(rows) => rows,
        Err(why) => return Err(TestsError::Fault(format!("reading table `{name}`: {why}"))),
    };
    let mut key: Vec<(i64, usize)> = (columns.iter().enumerate())
        .filter_map(|(i, r)| match r[1] {
            Value::Integer(pk) if pk > 0 => Some((pk, i)),
            _ => None,
        })
        .collect();
    key.sort();
    let conn = session.connection();
    let read = || -> rusqlite::Result<Vec<Row>> {
        let values = bounded_rows(conn, &format!("SELECT * FROM main.{}", quoted(name)))?;
        Ok((values.iter())
            .map(|values| Row {
                cells: values.iter().map(cell).collect(),
                shown: values.iter().map(exact).collect(),
            })
            .collect())
    };
    let rows = match read() {
        Ok(rows) => rows,
        Err(error) => {
            session.check_budget()?;
            if let rusqlite::Error::InvalidQuery = error {
                let why = format!("post_state: table `{name}` has more than {MAX_STATE_ROWS} rows, the comparison's bound");
                return Err(TestsError::Stopped(Stopped(why)));
            }
            return Err(TestsError::Fault(format!(
                "reading table `{name}`: {error}"
            )));
        }
    };
    Ok(Some(Table {
        columns: columns.iter().map(|r| text(&r[0])).collect(),
        key: key.into_iter().map(|(_, i)| i).collect(),
        rows,
    }))
}

/// Every row of table `name` exactly (its rowid first, when it has one), sorted: what a Query
/// item's prediction must leave as the twin has it, beyond the comparison's 2 places (a row
/// moved to a new rowid, a value changed by less than 0.005, red team round 27, win A).
fn exact_rows(session: &Session, name: &str) -> Result<Vec<Vec<String>>, TestsError> {
    let conn = session.connection();
    let read = |sql: &str| -> rusqlite::Result<Vec<Vec<String>>> {
        let rows = bounded_rows(conn, sql)?;
        Ok(sorted(
            (rows.iter())
                .map(|values| values.iter().map(exact).collect())
                .collect(),
        ))
    };
    let table = format!("main.{}", quoted(name));
    read(&format!("SELECT _rowid_, * FROM {table}"))
        .or_else(|_| read(&format!("SELECT * FROM {table}")))
        .or_else(|error| {
            session.check_budget()?;
            Err(TestsError::Fault(format!(
                "reading table `{name}`: {error}"
            )))
        })
}

/// The rows of `sql` on `conn`, at most [`MAX_STATE_ROWS`] (more is `InvalidQuery`).
fn bounded_rows(conn: &rusqlite::Connection, sql: &str) -> rusqlite::Result<Vec<Vec<Value>>> {
    let mut statement = conn.prepare(sql)?;
    let width = statement.column_count();
    let mut rows = statement.query([])?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        if out.len() == MAX_STATE_ROWS {
            return Err(rusqlite::Error::InvalidQuery);
        }
        out.push(
            (0..width)
                .map(|i| row.get(i))
                .collect::<rusqlite::Result<_>>()?,
        );
    }
    Ok(out)
}

/// How the prediction's table differs from the gold's, or `None` when they hold the same
/// columns and rows (in any order).
fn difference(gold: Option<Table>, prediction: Option<Table>) -> Option<String> {
    let (gold, prediction) = match (gold, prediction) {
        (None, None) => return None,
        (Some(_), None) => return Some("the gold's copy has it, the prediction's does not".into()),
        (None, Some(_)) => return Some("the prediction's copy has it, the gold's does not".into()),
        (Some(g), Some(p)) => (g, p),
    };
    let same_columns = gold.columns.len() == prediction.columns.len()
        && (gold.columns.iter().zip(&prediction.columns)).all(|(a, b)| a.eq_ignore_ascii_case(b));
    if !same_columns {
        return Some(format!(
            "columns ({}), the gold's ({})",
            prediction.columns.join(", "),
            gold.columns.join(", ")
        ));
    }
    let (added, removed, changed) = row_changes(&gold, &prediction);
    if added.is_empty() && removed.is_empty() && changed.is_empty() {
        return None;
    }
    let mut parts = vec![format!(
        "{} row(s) added, {} removed, {} changed against the gold's",
        added.len(),
        removed.len(),
        changed.len()
    )];
    if !added.is_empty() {
        parts.push(format!("added {}", show(&added)));
    }
    if !removed.is_empty() {
        parts.push(format!("removed {}", show(&removed)));
    }
    if !changed.is_empty() {
        let pairs: Vec<String> = (changed.iter().take(SHOWN_ROWS))
            .map(|(p, g)| format!("({}) where the gold has ({})", p.join(", "), g.join(", ")))
            .collect();
        let more = changed.len().saturating_sub(SHOWN_ROWS);
        let tail = if more > 0 {
            format!("; ... {more} more")
        } else {
            String::new()
        };
        parts.push(format!("changed {}{tail}", pairs.join("; ")));
    }
    Some(parts.join("; "))
}

/// Rows added, rows removed, and `(prediction's, gold's)` pairs of changed rows, as shown.
type Changes = (
    Vec<Vec<String>>,
    Vec<Vec<String>>,
    Vec<(Vec<String>, Vec<String>)>,
);

/// Rows in the prediction's table only, in the gold's only, and (by the gold table's primary
/// key, when every key is unique on both sides) `(prediction's, gold's)` pairs with the same key
/// and other values. Without a usable key rows are compared as multisets (no `changed`).
fn row_changes(gold: &Table, prediction: &Table) -> Changes {
    if !gold.key.is_empty() {
        if let (Some(g), Some(p)) = (by_key(gold, &gold.key), by_key(prediction, &gold.key)) {
            let changed = (p.iter())
                .filter_map(|(k, row)| {
                    let theirs = g.get(k).filter(|theirs| theirs.cells != row.cells)?;
                    Some((row.shown.clone(), theirs.shown.clone()))
                })
                .collect();
            return (only_in(&p, &g), only_in(&g, &p), changed);
        }
    }
    let (g, p) = (counts(gold), counts(prediction));
    (beyond(&p, &g), beyond(&g, &p), Vec::new())
}

/// `table`'s rows by their values at `key`, or `None` when two rows share a key.
fn by_key<'a>(table: &'a Table, key: &[usize]) -> Option<BTreeMap<Vec<Cell>, &'a Row>> {
    let mut map = BTreeMap::new();
    for row in &table.rows {
        let at: Vec<Cell> = key.iter().map(|&i| row.cells[i].clone()).collect();
        if map.insert(at, row).is_some() {
            return None;
        }
    }
    Some(map)
}

/// The rows of `a` whose key `b` lacks, as shown.
fn only_in(a: &BTreeMap<Vec<Cell>, &Row>, b: &BTreeMap<Vec<Cell>, &Row>) -> Vec<Vec<String>> {
    (a.iter())
        .filter(|(k, _)| !b.contains_key(*k))
        .map(|(_, r)| r.shown.clone())
        .collect()
}

/// How many times each distinct row occurs, with one of its occurrences.
fn counts(table: &Table) -> BTreeMap<&Vec<Cell>, (usize, &Row)> {
    let mut counts: BTreeMap<&Vec<Cell>, (usize, &Row)> = BTreeMap::new();
    for row in &table.rows {
        counts.entry(&row.cells).or_insert((0, row)).0 += 1;
    }
    counts
}

/// The occurrences of rows `a` has more of than `b`, as shown.
fn beyond(
    a: &BTreeMap<&Vec<Cell>, (usize, &Row)>,
    b: &BTreeMap<&Vec<Cell>, (usize, &Row)>,
) -> Vec<Vec<String>> {
    (a.iter())
        .flat_map(|(cells, (n, row))| {
            let extra = n.saturating_sub(b.get(cells).map_or(0, |(m, _)| *m));
            std::iter::repeat_n(row.shown.clone(), extra)
        })
        .collect()
}
