//! Facts of the original that span columns beyond one pair of all-distinct columns: pairings
//! across a declared foreign key (a car model and its maker's name), and functional
//! dependencies between text columns of one table that repeat (a make name and its model).
//! Each violation carries the repair that restores the original's partner.

use super::{
    column_facts, literal, memo, pairing, quoted, same_value, shown, unique_value, ColumnFacts,
    Violation,
};
use crate::engine::value::{Row, Value};
use rusqlite::Connection;

/// A declared single-column foreign key of the original: `child.column` references
/// `parent.key`.
#[derive(Clone)]
struct Link {
    child: String,
    column: String,
    parent: String,
    key: String,
}

/// The declared single-column foreign keys of `table` in the original (composite ones and
/// those naming no parent column are left out).
fn links(original: &Connection, table: &str) -> Vec<Link> {
    memo::remembered(original, format!("links\0{table}"), || {
        declared_links(original, table)
    })
}

fn declared_links(original: &Connection, table: &str) -> Vec<Link> {
    let sql = format!(
        "SELECT id, \"table\", \"from\", \"to\" FROM pragma_foreign_key_list({})",
        literal(&Value::Text(table.to_string()))
    );
    let Ok(mut statement) = original.prepare(&sql) else {
        return Vec::new();
    };
    let rows = statement.query_map([], |row| {
        Ok((
            row.get::<_, i64>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, String>(2)?,
            row.get::<_, Option<String>>(3)?,
        ))
    });
    let Ok(rows) = rows else { return Vec::new() };
    let found: Vec<(i64, String, String, Option<String>)> = rows.flatten().collect();
    found
        .iter()
        .filter(|(id, ..)| found.iter().filter(|(other, ..)| other == id).count() == 1)
        .filter_map(|(_, parent, column, key)| {
            Some(Link {
                child: table.to_string(),
                column: column.clone(),
                parent: parent.clone(),
                key: key.clone()?,
            })
        })
        .collect()
}

/// Pairings that hold across a declared foreign key in the original: a child row's all-distinct
/// text column names one original child row, whose parent's all-distinct text column holds one
/// value (a car model and its maker's name: the model `volvo` is made by the maker `volvo`).
/// A shrunk child row holding that value under a parent with another name departs from the
/// original; the repair gives the parent the original's name. Only this direction is a fact:
/// a parent may have children the original does not list (a maker's new model).
pub(super) fn linked_pair_violations(
    tables: &[(String, Vec<String>, Vec<Row>)],
    original: &Connection,
) -> Vec<Violation> {
    let mut found = Vec::new();
    for (child, child_columns, child_rows) in tables {
        for link in links(original, child) {
            let Some((_, parent_columns, parent_rows)) = tables
                .iter()
                .find(|(name, ..)| name.eq_ignore_ascii_case(&link.parent))
            else {
                continue;
            };
            let position = |columns: &[String], name: &str| {
                columns.iter().position(|c| c.eq_ignore_ascii_case(name))
            };
            let (Some(fk), Some(key)) = (
                position(child_columns, &link.column),
                position(parent_columns, &link.key),
            ) else {
                continue;
            };
            let texts = |table: &str, columns: &[String], skip: usize| {
                (0..columns.len())
                    .filter(|i| *i != skip)
                    .filter_map(|i| {
                        column_facts(original, table, &columns[i])
                            .filter(|f| f.pairs())
                            .map(|f| (i, f))
                    })
                    .collect::<Vec<(usize, ColumnFacts)>>()
            };
            let child_texts = texts(child, child_columns, fk);
            let parent_texts = texts(&link.parent, parent_columns, key);
            if child_texts.is_empty() || parent_texts.is_empty() {
                continue;
            }
            for row in child_rows {
                let Some(reference) = row.get(fk).filter(|v| !matches!(v, Value::Null)) else {
                    continue;
                };
                let Some(parent_row) = parent_rows
                    .iter()
                    .find(|p| p.get(key).is_some_and(|k| same_value(k, reference)))
                else {
                    continue;
                };
                for &(a, child_facts) in &child_texts {
                    for &(b, parent_facts) in &parent_texts {
                        if !pairing(child_facts, parent_facts) {
                            continue;
                        }
                        let pair = LinkedPair {
                            link: &link,
                            child_column: &child_columns[a],
                            parent_column: &parent_columns[b],
                            reference,
                        };
                        found.extend(pair.violation(original, &row[a], &parent_row[b]));
                    }
                }
            }
        }
    }
    found
}

/// One child row's text value and its parent row's text value, across a foreign key.
struct LinkedPair<'a> {
    link: &'a Link,
    child_column: &'a str,
    parent_column: &'a str,
    /// The child row's foreign key value.
    reference: &'a Value,
}

impl LinkedPair<'_> {
    /// The violation of this pairing, when the original gives the child's value a parent
    /// with another name.
    fn violation(
        &self,
        original: &Connection,
        held_child: &Value,
        held_parent: &Value,
    ) -> Option<Violation> {
        if matches!(held_child, Value::Null) || matches!(held_parent, Value::Null) {
            return None;
        }
        let link = self.link;
        let (ct, pt) = (quoted(&link.child), quoted(&link.parent));
        let (cc, pc) = (quoted(self.child_column), quoted(self.parent_column));
        let sql = format!(
            "SELECT {pt}.{pc} FROM {ct} JOIN {pt} ON {ct}.{} = {pt}.{} WHERE {ct}.{cc} = {} LIMIT 2",
            quoted(&link.column),
            quoted(&link.key),
            literal(held_child)
        );
        let expected = unique_value(original, &sql).filter(|p| !same_value(p, held_parent))?;
        Some(Violation {
            reason: format!(
                "{} {} {} belongs to {} {} {}, but in the original data its partner is {}",
                link.child,
                self.child_column,
                shown(held_child),
                link.parent,
                self.parent_column,
                shown(held_parent),
                shown(&expected)
            ),
            repair: format!(
                "UPDATE {pt} SET {pc} = {} WHERE {} = {}",
                literal(&expected),
                quoted(&link.key),
                literal(self.reference)
            ),
        })
    }
}

/// Least number of values of the determining column that repeat in the original before a
/// dependency between two text columns counts as a fact rather than chance: two repeated
/// values that agree by chance are likely (dog_kennels: two states whose professionals share a
/// role), five are not (with three equally likely values, (1/3)^5 < 0.5 %).
const DEPENDENCY_SUPPORT: i64 = 5;

/// Functional dependencies between two text columns of one table that hold in the original
/// data and are not implied by distinctness: the determining column `a` repeats values
/// (at least [`DEPENDENCY_SUPPORT`] of them) and every row with the same `a` holds the same `b`
/// (car_1's `car_names`: the make `amc hornet` is always the model `amc`), but for rare
/// noise (see [`determines`]). A shrunk row whose
/// `a` is an original value but whose `b` is not that value's `b` departs from the original;
/// the repair gives it the original's `b`, or removes it when that `b` is a reference to a
/// parent row the shrunk data lacks ([`dependency_repair`]).
pub(super) fn dependency_violations(
    tables: &[(String, Vec<String>, Vec<Row>)],
    original: &Connection,
) -> Vec<Violation> {
    let mut found = Vec::new();
    for (table, columns, rows) in tables {
        let texts: Vec<usize> = (0..columns.len())
            .filter(|i| column_facts(original, table, &columns[*i]).is_some_and(|f| f.text))
            .collect();
        for &a in &texts {
            for &b in texts.iter().filter(|b| **b != a) {
                let (column_a, column_b) = (&columns[a], &columns[b]);
                if !determines(original, table, column_a, column_b) {
                    continue;
                }
                for row in rows {
                    let (Some(key), Some(held)) = (row.get(a), row.get(b)) else {
                        continue;
                    };
                    if matches!(key, Value::Null) || matches!(held, Value::Null) {
                        continue;
                    }
                    let sql = format!(
                        "SELECT DISTINCT {} FROM {} WHERE {} = {} LIMIT 2",
                        quoted(column_b),
                        quoted(table),
                        quoted(column_a),
                        literal(key)
                    );
                    let Some(partner) = unique_value(original, &sql)
                        .filter(|p| !matches!(p, Value::Null) && !same_value(p, held))
                    else {
                        continue;
                    };
                    let orphaned = names_no_parent(tables, original, table, column_b, &partner);
                    found.push(Violation {
                        reason: format!(
                            "{table} has {column_a} {} with {column_b} {}, but in the original \
                             data every {column_a} {} has {column_b} {}{}",
                            shown(key),
                            shown(held),
                            shown(key),
                            shown(&partner),
                            if orphaned {
                                ", a parent the data lacks"
                            } else {
                                ""
                            }
                        ),
                        repair: dependency_repair(
                            table,
                            (column_a, column_b),
                            (key, &partner),
                            orphaned,
                        ),
                    });
                }
            }
        }
    }
    found
}

/// The repair of a dependency: the row gets the original's partner; when that partner is a
/// reference naming no parent row of the shrunk data (a car whose make says the model `amc`,
/// where only the model `fiat` is listed), the row as the original has it cannot exist there,
/// and is removed, as a row holding a NULL reference is.
fn dependency_repair(
    table: &str,
    (a, b): (&str, &str),
    (key, partner): (&Value, &Value),
    orphaned: bool,
) -> String {
    let (t, ca, cb) = (quoted(table), quoted(a), quoted(b));
    let (k, p) = (literal(key), literal(partner));
    if orphaned {
        format!("DELETE FROM {t} WHERE {ca} = {k} AND {cb} IS NOT {p}")
    } else {
        format!("UPDATE {t} SET {cb} = {p} WHERE {ca} = {k}")
    }
}

/// Whether `table.column` is a declared single-column foreign key and no row of its parent
/// table in the shrunk `tables` holds `value` in the referenced column.
fn names_no_parent(
    tables: &[(String, Vec<String>, Vec<Row>)],
    original: &Connection,
    table: &str,
    column: &str,
    value: &Value,
) -> bool {
    let Some(link) = links(original, table)
        .into_iter()
        .find(|l| l.column.eq_ignore_ascii_case(column))
    else {
        return false;
    };
    let Some((_, columns, rows)) = tables
        .iter()
        .find(|(name, ..)| name.eq_ignore_ascii_case(&link.parent))
    else {
        return true;
    };
    let Some(key) = columns
        .iter()
        .position(|c| c.eq_ignore_ascii_case(&link.key))
    else {
        return false;
    };
    !rows
        .iter()
        .any(|row| row.get(key).is_some_and(|k| same_value(k, value)))
}

/// Whether, in the original, `a` determines `b` (text columns): at least
/// [`DEPENDENCY_SUPPORT`] values of `a` repeat, and every value of `a` holds one value of `b`
/// (NULL counted as one), but for at most one in a hundred (data-entry noise: car_1 lists one
/// make under `volkswagen` and ` volkswagen`); such a value has no partner.
fn determines(original: &Connection, table: &str, a: &str, b: &str) -> bool {
    memo::remembered(original, format!("determines\0{table}\0{a}\0{b}"), || {
        dependency_holds(original, table, a, b)
    })
}

fn dependency_holds(original: &Connection, table: &str, a: &str, b: &str) -> bool {
    let (t, a, b) = (quoted(table), quoted(a), quoted(b));
    let sql = format!(
        "SELECT sum(values_of_b > 1), sum(rows > 1), count(*) FROM (SELECT \
         count(DISTINCT coalesce({b}, x'00')) AS values_of_b, count(*) AS rows FROM {t} \
         WHERE {a} IS NOT NULL GROUP BY {a})"
    );
    original
        .query_row(&sql, [], |row| {
            Ok((
                row.get::<_, Option<i64>>(0)?,
                row.get::<_, Option<i64>>(1)?,
                row.get::<_, i64>(2)?,
            ))
        })
        .is_ok_and(|(split, repeated, values)| {
            split.is_some_and(|split| split * 100 <= values)
                && repeated.is_some_and(|r| r >= DEPENDENCY_SUPPORT)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `maker(id, name)` and `model(id, maker REFERENCES maker, name)`, names all distinct; in
    /// `region(name, continent)` six regions repeat, each on one continent, and in
    /// `staff(state, role)` two states repeat with one role each.
    fn original() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE maker (id INTEGER PRIMARY KEY, name TEXT);
             CREATE TABLE model (id INTEGER PRIMARY KEY, maker INTEGER REFERENCES maker(id),
                                 name TEXT);
             INSERT INTO maker VALUES (1, 'volvo'), (2, 'renault');
             INSERT INTO model VALUES (1, 1, 'volvo'), (2, 2, 'clio'), (3, 2, 'megane');
             CREATE TABLE region (name TEXT, continent TEXT);
             INSERT INTO region VALUES ('a', 'Asia'), ('a', 'Asia'), ('b', 'Asia'), ('b', 'Asia'),
               ('c', 'Europe'), ('c', 'Europe'), ('d', 'Africa'), ('d', 'Africa'),
               ('e', 'Europe'), ('e', 'Europe'), ('f', 'Asia'), ('f', 'Asia'), ('g', 'Africa');
             CREATE TABLE staff (state TEXT, role TEXT);
             INSERT INTO staff VALUES ('Utah', 'vet'), ('Utah', 'vet'), ('Ohio', 'clerk'),
               ('Ohio', 'clerk'), ('Iowa', 'vet');",
        )
        .unwrap();
        conn
    }

    fn table(name: &str, columns: &[&str], rows: Vec<Row>) -> (String, Vec<String>, Vec<Row>) {
        let columns = columns.iter().map(|c| c.to_string()).collect();
        (name.to_string(), columns, rows)
    }

    fn text(value: &str) -> Value {
        Value::Text(value.into())
    }

    #[test]
    fn a_child_value_under_another_parent_than_in_the_original_is_named() {
        let makers = table(
            "maker",
            &["id", "name"],
            vec![vec![Value::Int(2), text("renault")]],
        );
        let models = |name: &str| {
            table(
                "model",
                &["id", "maker", "name"],
                vec![vec![Value::Int(1), Value::Int(2), text(name)]],
            )
        };
        let found: Vec<String> =
            linked_pair_violations(&[makers.clone(), models("volvo")], &original())
                .into_iter()
                .map(|v| v.reason)
                .collect();
        assert_eq!(
            found,
            [
                "model name 'volvo' belongs to maker name 'renault', but in the original data its \
              partner is 'volvo'"
            ]
        );
        // A model the original does not have may belong to any maker.
        assert!(linked_pair_violations(&[makers, models("twingo")], &original()).is_empty());
    }

    #[test]
    fn only_a_dependency_with_enough_repeated_values_is_a_fact() {
        let conn = original();
        assert!(determines(&conn, "region", "name", "continent"));
        assert!(!determines(&conn, "region", "continent", "name"));
        assert!(!determines(&conn, "staff", "state", "role"));
        let moved = table(
            "region",
            &["name", "continent"],
            vec![
                vec![text("g"), text("Europe")],
                vec![text("z"), text("Europe")],
            ],
        );
        let found: Vec<String> = dependency_violations(&[moved], &conn)
            .into_iter()
            .map(|v| v.reason)
            .collect();
        assert_eq!(
            found,
            [
                "region has name 'g' with continent 'Europe', but in the original data every name \
              'g' has continent 'Africa'"
            ]
        );
    }

    #[test]
    fn a_dependency_whose_partner_names_no_parent_row_removes_the_row() {
        // car_1: the make `amc hornet` is always the model `amc`, a reference to model_list.
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE model_list (id INTEGER PRIMARY KEY, model TEXT UNIQUE);
             CREATE TABLE car_names (id INTEGER PRIMARY KEY,
                                     model TEXT REFERENCES model_list(model), make TEXT);
             INSERT INTO model_list VALUES (1, 'amc'), (2, 'fiat');
             INSERT INTO car_names VALUES (1, 'amc', 'amc hornet'), (2, 'amc', 'amc hornet'),
               (3, 'fiat', 'fiat 128'), (4, 'fiat', 'fiat 128'), (5, 'amc', 'amc gremlin'),
               (6, 'amc', 'amc gremlin'), (7, 'fiat', 'fiat x1.9'), (8, 'fiat', 'fiat x1.9'),
               (9, 'amc', 'amc matador'), (10, 'amc', 'amc matador');",
        )
        .unwrap();
        let cars = table(
            "car_names",
            &["id", "model", "make"],
            vec![vec![Value::Int(1), text("fiat"), text("amc hornet")]],
        );
        let models = |name: &str| {
            table(
                "model_list",
                &["id", "model"],
                vec![vec![Value::Int(2), text(name)]],
            )
        };
        let repairs = |models| -> Vec<String> {
            dependency_violations(&[cars.clone(), models], &conn)
                .into_iter()
                .map(|v| v.repair)
                .collect()
        };
        assert_eq!(
            repairs(models("fiat")),
            ["DELETE FROM \"car_names\" WHERE \"make\" = 'amc hornet' AND \"model\" IS NOT 'amc'"]
        );
        assert_eq!(
            repairs(models("amc")),
            ["UPDATE \"car_names\" SET \"model\" = 'amc' WHERE \"make\" = 'amc hornet'"]
        );
    }
}
