//! What the original database says about the domain, checked on a shrunk counterexample: a
//! column whose values are all distinct there stays distinct, a text value that occurs once
//! there occurs once, a column without NULL there holds none, a text value is written in the
//! original's letter case, and two all-distinct text columns
//! of a table (a code and its name) keep the original's pairing. Each violation carries the repair
//! that undoes it, so a verdict can ask whether the difference between gold and prediction
//! depends on data the original would not allow ([`depends_on_violations`]).

use crate::engine::sqlite::Scratch;
use crate::engine::value::{Row, Value};
use crate::suites::distill::person_name_part;
use crate::util::sqlite::quoted_identifier as quoted;
use rusqlite::Connection;

mod links;
mod memo;
mod shape;

pub use shape::Shape;

/// One way the shrunk data departs from the original's domain, and how to undo it.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// What is wrong, for the report.
    pub reason: String,
    /// The UPDATE that undoes it on the scratch copy.
    repair: String,
}

/// What the original says about one column.
#[derive(Debug, Clone, Copy)]
struct ColumnFacts {
    /// Two values or more, all distinct.
    distinct: bool,
    /// Holds NULL somewhere.
    nulls: bool,
    /// Every value is text (a code or a name rather than a number or an id).
    text: bool,
    /// One part of a person's name ([`person_name_part`]): its values repeat naturally.
    name_part: bool,
    /// A column of a declared foreign key: its value names a parent row.
    reference: bool,
    /// The shape of its values when they are all distinct text ([`Shape::Other`] otherwise):
    /// only codes and names pair with each other.
    shape: Shape,
}

impl ColumnFacts {
    /// Whether the column may be one side of a pairing: all distinct, a code or a name.
    fn pairs(self) -> bool {
        self.distinct && self.text && self.shape.identifies()
    }
}

/// Whether two columns pair: both may ([`ColumnFacts::pairs`]), a code and its name, or two
/// names of one thing (a car model and its maker's full name).
fn pairing(a: ColumnFacts, b: ColumnFacts) -> bool {
    a.pairs() && b.pairs()
}

/// The violations of the shrunk tables (name, columns, rows) against `original`, in table and
/// column order: NULLs first, then broken pairings, then repeats, the order their repairs run.
pub fn violations(
    tables: &[(String, Vec<String>, Vec<Row>)],
    original: &Connection,
) -> Vec<Violation> {
    let mut nulls = Vec::new();
    let mut pairs = Vec::new();
    let mut repeats = Vec::new();
    for (table, columns, rows) in tables {
        let facts: Vec<Option<ColumnFacts>> = columns
            .iter()
            .map(|c| column_facts(original, table, c))
            .collect();
        for (index, column) in columns.iter().enumerate() {
            let Some(fact) = facts[index] else { continue };
            let values: Vec<&Value> = rows.iter().filter_map(|r| r.get(index)).collect();
            if !fact.nulls && values.iter().any(|v| matches!(v, Value::Null)) {
                nulls.push(null_violation(table, column, fact.reference));
            }
            nulls.extend(case_violations(original, table, column, &values));
            repeats.extend(repeat_violations(original, table, column, fact, &values));
        }
        pairs.extend(pair_violations(original, table, columns, &facts, rows));
    }
    pairs.extend(links::linked_pair_violations(tables, original));
    pairs.extend(links::dependency_violations(tables, original));
    nulls.into_iter().chain(pairs).chain(repeats).collect()
}

/// Whether undoing every violation (inside a savepoint that is rolled back, foreign keys not
/// enforced meanwhile) removes the difference `differs` reports: then the difference exists
/// only on data the original would not allow. A repair that fails to apply is left out; with
/// no violation, or none that applies, the answer is no.
pub fn depends_on_violations(
    scratch: &mut Scratch,
    violations: &[Violation],
    differs: &dyn Fn(&Scratch) -> bool,
) -> bool {
    if violations.is_empty()
        || scratch
            .execute_trusted("PRAGMA foreign_keys = OFF", [])
            .is_err()
    {
        return false;
    }
    let mut gone = false;
    if scratch.execute_trusted("SAVEPOINT domain", []).is_ok() {
        let applied = violations
            .iter()
            .filter(|v| scratch.execute_trusted(&v.repair, []).is_ok())
            .count();
        gone = applied > 0 && !differs(scratch);
        let _ = scratch.execute_trusted("ROLLBACK TO domain", []);
        let _ = scratch.execute_trusted("RELEASE domain", []);
    }
    let _ = scratch.execute_trusted("PRAGMA foreign_keys = ON", []);
    gone
}

/// Whether a column of the original holds two values or more, all distinct.
pub fn all_distinct(original: &Connection, table: &str, column: &str) -> bool {
    column_facts(original, table, column).is_some_and(|f| f.distinct)
}

fn column_facts(original: &Connection, table: &str, column: &str) -> Option<ColumnFacts> {
    memo::remembered(original, format!("facts\0{table}\0{column}"), || {
        learned_facts(original, table, column)
    })
}

fn learned_facts(original: &Connection, table: &str, column: &str) -> Option<ColumnFacts> {
    let (c, t) = (quoted(column), quoted(table));
    original
        .query_row(
            &format!(
                "SELECT count({c}), count(DISTINCT {c}), count(*) - count({c}), \
                 sum(typeof({c}) = 'text') FROM {t}"
            ),
            [],
            |row| {
                let counts: (i64, i64, i64, Option<i64>) =
                    (row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?);
                Ok(counts)
            },
        )
        .ok()
        .filter(|(values, ..)| *values > 0)
        .map(|(values, distinct, nulls, texts)| {
            let name_part = person_name_part(column);
            let distinct = values >= 2 && values == distinct && !name_part;
            let text = texts == Some(values);
            ColumnFacts {
                distinct,
                name_part,
                reference: references(original, table, column),
                nulls: nulls > 0,
                text,
                shape: if distinct && text {
                    shape::column_shape(original, table, column)
                } else {
                    Shape::Other
                },
            }
        })
}

/// Whether `column` of `table` is a column of a foreign key the original declares.
fn references(original: &Connection, table: &str, column: &str) -> bool {
    let sql = format!(
        "SELECT count(*) FROM pragma_foreign_key_list({}) WHERE \"from\" = {} COLLATE NOCASE",
        literal(&Value::Text(table.to_string())),
        literal(&Value::Text(column.to_string()))
    );
    original
        .query_row(&sql, [], |row| row.get::<_, i64>(0))
        .is_ok_and(|n| n > 0)
}

/// A NULL where the original has none. An attribute is filled with a fresh value; a reference
/// cannot be: a fresh value names no parent row, and a row that must name one but names none
/// is a row the domain does not have, so the repair removes it.
fn null_violation(table: &str, column: &str, reference: bool) -> Violation {
    let (t, c) = (quoted(table), quoted(column));
    Violation {
        reason: format!("{table}.{column} holds NULL but is never NULL in the original data"),
        repair: if reference {
            format!("DELETE FROM {t} WHERE {c} IS NULL")
        } else {
            format!(
                "UPDATE {t} SET {c} = CASE WHEN (SELECT typeof(max({c})) FROM {t}) = 'text' \
                 THEN 'filled #' || rowid ELSE coalesce((SELECT max({c}) FROM {t}), 0) + rowid END \
                 WHERE {c} IS NULL"
            )
        },
    }
}

/// Text values the original column does not hold that differ from one value it holds only in
/// letter case (`'korea'` where the original writes `'Korea'`): the generator plants case
/// variants of gold constants, but a domain writes each of its values one way. Surrounding
/// spaces are not a case difference (`'Aberdeen'` against the original's `'Aberdeen '` is a
/// value the question names, not a misspelling); the repair writes the original's letters and
/// keeps the value's own spaces.
fn case_violations(
    original: &Connection,
    table: &str,
    column: &str,
    values: &[&Value],
) -> Vec<Violation> {
    let mut found = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for value in values {
        let Value::Text(text) = value else { continue };
        if seen.contains(&text.as_str()) {
            continue;
        }
        seen.push(text);
        if occurrences(original, table, column, value) != Some(0) {
            continue;
        }
        let (c, t, v) = (quoted(column), quoted(table), literal(value));
        let sql = format!(
            "SELECT DISTINCT {c} FROM {t} WHERE typeof({c}) = 'text' \
             AND lower(trim({c})) = lower(trim({v})) AND trim({c}) <> trim({v})"
        );
        let Some(Value::Text(written)) = unique_value(original, &sql) else {
            continue;
        };
        let core = text.trim_matches(' ');
        let start = text.len() - text.trim_start_matches(' ').len();
        let repaired = format!(
            "{}{}{}",
            &text[..start],
            written.trim_matches(' '),
            &text[start + core.len()..]
        );
        found.push(Violation {
            reason: format!(
                "{table}.{column} holds {}, which the original data writes {}",
                shown(value),
                shown(&Value::Text(written))
            ),
            repair: format!(
                "UPDATE {t} SET {c} = {} WHERE {c} = {v}",
                literal(&Value::Text(repaired))
            ),
        });
    }
    found
}

/// Repeated values of a column that the original keeps apart: any repeat in an all-distinct
/// column, and a repeated text value that occurs exactly once in the original column.
fn repeat_violations(
    original: &Connection,
    table: &str,
    column: &str,
    fact: ColumnFacts,
    values: &[&Value],
) -> Vec<Violation> {
    let mut repeated: Vec<&Value> = Vec::new();
    for (i, value) in values.iter().enumerate() {
        if !matches!(value, Value::Null) && values[..i].contains(value) && !repeated.contains(value)
        {
            repeated.push(value);
        }
    }
    let (t, c) = (quoted(table), quoted(column));
    repeated
        .into_iter()
        .filter_map(|value| {
            let reason = if fact.distinct {
                format!(
                    "{table}.{column} repeats {} but its values are all distinct in the original data",
                    shown(value)
                )
            } else if matches!(value, Value::Text(_))
                && !fact.name_part
                && occurrences(original, table, column, value) == Some(1) {
                format!(
                    "{table}.{column} repeats {}, which occurs once in the original data",
                    shown(value)
                )
            } else {
                return None;
            };
            // In an all-distinct column every repeat is undone, whatever value an earlier
            // repair (a pairing restored) left in it; a single value's repeats by value.
            let repeats = if fact.distinct {
                format!(
                    "{c} IS NOT NULL AND rowid NOT IN (SELECT min(rowid) FROM {t} GROUP BY {c})"
                )
            } else {
                let v = literal(value);
                format!("{c} = {v} AND rowid <> (SELECT min(rowid) FROM {t} WHERE {c} = {v})")
            };
            // A repeated reference (a pet with a second owner) made distinct would name no
            // parent row; the rows that repeat it are removed instead.
            let repair = if fact.reference {
                format!("DELETE FROM {t} WHERE {repeats}")
            } else {
                format!(
                    "UPDATE {t} SET {c} = CASE WHEN typeof({c}) = 'text' THEN {c} || ' #' || rowid \
                     ELSE {c} + rowid * 0.001 END WHERE {repeats}"
                )
            };
            Some(Violation { reason, repair })
        })
        .collect()
}

fn occurrences(original: &Connection, table: &str, column: &str, value: &Value) -> Option<i64> {
    let sql = format!(
        "SELECT count(*) FROM {} WHERE {} = {}",
        quoted(table),
        quoted(column),
        literal(value)
    );
    memo::remembered(original, sql.clone(), || {
        original.query_row(&sql, [], |row| row.get(0)).ok()
    })
}

/// Rows that hold an original value of one all-distinct text column beside another all-distinct
/// text column's value that the original does not pair with it (a country code beside another
/// country's name). Numeric ids are arbitrary: any row may carry any of them, and so are
/// values that neither name nor code anything (a weight, a date, a phone number stored as
/// text): only codes and names pair ([`pairing`]).
fn pair_violations(
    original: &Connection,
    table: &str,
    columns: &[String],
    facts: &[Option<ColumnFacts>],
    rows: &[Row],
) -> Vec<Violation> {
    let texts: Vec<usize> = (0..columns.len())
        .filter(|i| facts[*i].is_some_and(ColumnFacts::pairs))
        .collect();
    let mut found = Vec::new();
    for row in rows {
        for &a in &texts {
            let Some(key) = row.get(a).filter(|v| !matches!(v, Value::Null)) else {
                continue;
            };
            for &b in texts.iter().filter(|b| **b != a) {
                let (Some(fa), Some(fb)) = (facts[a], facts[b]) else {
                    continue;
                };
                if !pairing(fa, fb) {
                    continue;
                }
                let Some(partner) =
                    original_partner(original, table, (&columns[a], &columns[b]), key)
                else {
                    continue;
                };
                let Some(held) = row.get(b).filter(|v| !matches!(v, Value::Null)) else {
                    continue;
                };
                if !same_value(held, &partner) {
                    found.push(pair_violation(
                        table,
                        (&columns[a], &columns[b]),
                        key,
                        held,
                        &partner,
                    ));
                }
            }
        }
    }
    found
}

/// The value of column `b` in the one original row whose column `a` holds `key`.
fn original_partner(
    original: &Connection,
    table: &str,
    (a, b): (&str, &str),
    key: &Value,
) -> Option<Value> {
    let sql = format!(
        "SELECT {} FROM {} WHERE {} = {} LIMIT 2",
        quoted(b),
        quoted(table),
        quoted(a),
        literal(key)
    );
    unique_value(original, &sql)
}

fn pair_violation(
    table: &str,
    (a, b): (&str, &str),
    key: &Value,
    held: &Value,
    partner: &Value,
) -> Violation {
    let (t, ca, cb) = (quoted(table), quoted(a), quoted(b));
    Violation {
        reason: format!(
            "{table} pairs {a} {} with {b} {}, but the original pairs it with {}",
            shown(key),
            shown(held),
            shown(partner)
        ),
        repair: format!(
            "UPDATE {t} SET {cb} = {} WHERE {ca} = {}",
            literal(partner),
            literal(key)
        ),
    }
}

/// The one value `sql` (`... LIMIT 2`) returns, or `None` when it returns no row or several.
fn unique_value(original: &Connection, sql: &str) -> Option<Value> {
    memo::remembered(original, sql.to_string(), || only_value(original, sql))
}

fn only_value(original: &Connection, sql: &str) -> Option<Value> {
    let mut statement = original.prepare(sql).ok()?;
    let mut rows = statement.query([]).ok()?;
    let first = rows
        .next()
        .ok()??
        .get_ref(0)
        .ok()
        .map(crate::engine::sqlite::read_value)?;
    match rows.next() {
        Ok(None) => Some(first),
        _ => None,
    }
}

/// Equality as SQLite compares stored numbers (1 = 1.0) and texts.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(x), Value::Real(y)) | (Value::Real(y), Value::Int(x)) => *x as f64 == *y,
        _ => a == b,
    }
}

/// A value as an SQL literal (text quoted, blobs in hex).
fn literal(value: &Value) -> String {
    match value {
        Value::Null => "NULL".into(),
        Value::Int(i) => i.to_string(),
        Value::Real(f) if f.is_finite() => format!("{f:?}"),
        Value::Real(_) => "NULL".into(),
        Value::Text(s) => format!("'{}'", s.replace('\'', "''")),
        Value::Blob(b) => format!("X'{}'", crate::util::digest::hex(b)),
        Value::Py(value) => format!("'{}'", value.python_str().replace('\'', "''")),
    }
}

/// A value as the report shows it.
pub fn shown(value: &Value) -> String {
    match value {
        Value::Text(s) => format!("'{s}'"),
        Value::Null => "NULL".into(),
        other => crate::engine::denotation::python_str(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::exec::{Executor, Limits};
    use std::time::Duration;

    /// An original where `code` and `name` are all distinct text, `team` repeats ('x' twice,
    /// 'y' once) and nothing is NULL but `note`.
    const ORIGINAL: &str =
        "CREATE TABLE t (id INTEGER PRIMARY KEY, code TEXT, name TEXT, team TEXT, note TEXT);
        INSERT INTO t VALUES (1, 'ABW', 'Aruba', 'x', NULL), (2, 'AFG', 'Afghanistan', 'x', 'n'),
                             (3, 'AGO', 'Angola', 'y', 'n');";

    fn original() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(ORIGINAL).unwrap();
        conn
    }

    fn shrunk(rows: Vec<Row>) -> Vec<(String, Vec<String>, Vec<Row>)> {
        let columns = ["id", "code", "name", "team", "note"]
            .map(String::from)
            .to_vec();
        vec![("t".to_string(), columns, rows)]
    }

    fn row(id: i64, code: &str, name: &str, team: &str) -> Row {
        vec![
            Value::Int(id),
            Value::Text(code.into()),
            Value::Text(name.into()),
            Value::Text(team.into()),
            Value::Null,
        ]
    }

    fn reasons(rows: Vec<Row>) -> Vec<String> {
        violations(&shrunk(rows), &original())
            .into_iter()
            .map(|v| v.reason)
            .collect()
    }

    #[test]
    fn data_the_original_allows_has_no_violation() {
        // Ids are arbitrary (id 1 may name Angola), 'x' repeats in the original too, and
        // `note` has NULL there.
        assert!(reasons(vec![
            row(1, "AGO", "Angola", "x"),
            row(7, "ABW", "Aruba", "x")
        ])
        .is_empty());
    }

    #[test]
    fn repeats_nulls_and_broken_pairings_are_named() {
        let found = reasons(vec![
            row(1, "ABW", "Aruba", "y"),
            row(2, "ZZZ", "Aruba", "y"),
        ]);
        assert!(
            found.iter().any(|r| r
                == "t.name repeats 'Aruba' but its values are all distinct in the original data"),
            "{found:?}"
        );
        assert!(
            found
                .iter()
                .any(|r| r == "t.team repeats 'y', which occurs once in the original data"),
            "{found:?}"
        );
        assert!(
            found
                .iter()
                .any(|r| r.starts_with("t pairs name 'Aruba' with code 'ZZZ'")),
            "{found:?}"
        );
        let mut with_null = row(1, "ABW", "Aruba", "x");
        with_null[1] = Value::Null;
        let found = reasons(vec![with_null]);
        assert_eq!(
            found,
            ["t.code holds NULL but is never NULL in the original data"]
        );
    }

    #[test]
    fn a_value_written_in_another_case_is_a_violation_but_another_spacing_is_not() {
        let original = Connection::open_in_memory().unwrap();
        original
            .execute_batch(
                "CREATE TABLE c (id INTEGER PRIMARY KEY, city TEXT);
                 INSERT INTO c VALUES (1, 'Aberdeen '), (2, 'Korea'), (3, 'Oslo'), (4, 'OSLO');",
            )
            .unwrap();
        let city = |id: i64, name: &str| vec![Value::Int(id), Value::Text(name.into())];
        let found = violations(
            &[(
                "c".to_string(),
                ["id", "city"].map(String::from).to_vec(),
                vec![
                    city(1, "korea"),
                    city(2, "aberdeen"),
                    city(3, "Aberdeen"),
                    city(4, "oslo"),
                    city(5, "Korea"),
                ],
            )],
            &original,
        );
        let shown: Vec<(&str, &str)> = found
            .iter()
            .map(|v| (v.reason.as_str(), v.repair.as_str()))
            .collect();
        // 'Aberdeen' only lacks the original's space, and 'oslo' has two original spellings.
        assert_eq!(
            shown,
            [
                (
                    "c.city holds 'korea', which the original data writes 'Korea'",
                    "UPDATE \"c\" SET \"city\" = 'Korea' WHERE \"city\" = 'korea'"
                ),
                (
                    "c.city holds 'aberdeen', which the original data writes 'Aberdeen '",
                    "UPDATE \"c\" SET \"city\" = 'Aberdeen' WHERE \"city\" = 'aberdeen'"
                ),
            ]
        );
    }

    #[test]
    fn a_null_or_repeated_reference_is_undone_by_removing_its_row() {
        let executor = Executor::new(Limits {
            timeout: Duration::from_secs(5),
            max_rows: 1000,
            max_bytes: 1 << 20,
        });
        const SCHEMA: &str = "CREATE TABLE p (id INTEGER PRIMARY KEY, kind TEXT);
             CREATE TABLE c (pid INTEGER REFERENCES p(id), n INT);";
        let original = Connection::open_in_memory().unwrap();
        original
            .execute_batch(&format!(
                "{SCHEMA} INSERT INTO p VALUES (1, 'cat'), (2, 'dog');
                 INSERT INTO c VALUES (1, 5), (2, 6);"
            ))
            .unwrap();
        let check = |rows: &str, gold: &str, prediction: &str| {
            let mut conn = Connection::open_in_memory().unwrap();
            conn.execute_batch(&format!(
                "{SCHEMA} INSERT INTO p VALUES (1, 'cat'), (7, 'dog'); {rows}"
            ))
            .unwrap();
            let image = conn.serialize(rusqlite::MAIN_DB).unwrap().to_vec();
            let mut scratch = Scratch::from_image(&image).unwrap();
            let shrunk_rows = scratch.read_trusted("SELECT pid, n FROM c").unwrap();
            let tables = vec![(
                "c".to_string(),
                vec!["pid".to_string(), "n".to_string()],
                shrunk_rows,
            )];
            let found = violations(&tables, &original);
            let differs = |s: &Scratch| {
                s.run(&executor, gold).unwrap() != s.run(&executor, prediction).unwrap()
            };
            assert!(differs(&scratch));
            (
                found.len(),
                depends_on_violations(&mut scratch, &found, &differs),
            )
        };
        // A pet with a second owner: counting ownerships against counting the pets they name
        // (made distinct, the repeat would name no pet and still differ).
        let repeated = check(
            "INSERT INTO c VALUES (1, 5), (1, 7);",
            "SELECT count(*) FROM c",
            "SELECT count(DISTINCT p.id) FROM c JOIN p ON p.id = c.pid",
        );
        assert_eq!(repeated, (1, true));
        // A child naming no parent: counting children against counting joined ones (filled
        // with a fresh value, it would name no parent either).
        let null = check(
            "INSERT INTO c VALUES (7, 4), (NULL, 5);",
            "SELECT count(*) FROM c",
            "SELECT count(*) FROM c JOIN p ON p.id = c.pid",
        );
        assert_eq!(null, (1, true));
    }

    #[test]
    fn a_shared_surname_is_no_violation_but_a_shared_name_is() {
        let original = Connection::open_in_memory().unwrap();
        original
            .execute_batch(
                "CREATE TABLE p (id INTEGER PRIMARY KEY, last_name TEXT, name TEXT);
                 INSERT INTO p VALUES (1, 'Smith', 'Balmoor'), (2, 'Jones', 'Hampden');",
            )
            .unwrap();
        let columns = ["id", "last_name", "name"].map(String::from).to_vec();
        let person = |id: i64, last_name: &str, name: &str| {
            vec![
                Value::Int(id),
                Value::Text(last_name.into()),
                Value::Text(name.into()),
            ]
        };
        let found: Vec<String> = violations(
            &[(
                "p".to_string(),
                columns,
                vec![person(1, "Smith", "Balmoor"), person(2, "Smith", "Balmoor")],
            )],
            &original,
        )
        .into_iter()
        .map(|v| v.reason)
        .collect();
        assert_eq!(
            found,
            ["p.name repeats 'Balmoor' but its values are all distinct in the original data"]
        );
    }

    #[test]
    fn a_difference_depends_on_a_violation_only_when_undoing_it_removes_it() {
        let executor = Executor::new(Limits {
            timeout: Duration::from_secs(5),
            max_rows: 1000,
            max_bytes: 1 << 20,
        });
        let image = {
            let mut conn = Connection::open_in_memory().unwrap();
            conn.execute_batch(
                "CREATE TABLE t (id INTEGER PRIMARY KEY, code TEXT, name TEXT, team TEXT, note TEXT);
                 INSERT INTO t VALUES (1, 'ABW', 'Aruba', 'x', NULL), (2, 'ZZZ', 'Aruba', 'x', NULL);",
            )
            .unwrap();
            conn.serialize(rusqlite::MAIN_DB).unwrap().to_vec()
        };
        let rows = vec![row(1, "ABW", "Aruba", "x"), row(2, "ZZZ", "Aruba", "x")];
        let found = violations(&shrunk(rows), &original());
        let differs_by = |gold: &'static str, prediction: &'static str| {
            let executor = executor.clone();
            move |s: &Scratch| {
                s.run(&executor, gold).unwrap() != s.run(&executor, prediction).unwrap()
            }
        };
        // Counting rows named Aruba against one row: only the repeated name separates them.
        let mut scratch = Scratch::from_image(&image).unwrap();
        let by_name = differs_by("SELECT count(*) FROM t WHERE name = 'Aruba'", "SELECT 1");
        assert!(depends_on_violations(&mut scratch, &found, &by_name));
        // Counting all rows against one: two rows remain after any repair.
        let all = differs_by("SELECT count(*) FROM t", "SELECT 1");
        assert!(!depends_on_violations(&mut scratch, &found, &all));
        assert!(!depends_on_violations(&mut scratch, &[], &by_name));
    }
}
