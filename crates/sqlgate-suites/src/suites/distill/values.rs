//! Where generated values come from: value profiles learned from the original database (its
//! distinct values and their formats: dates, times, codes) and the gold queries' constants with
//! close variants, so that random databases exercise the conditions the queries test.

use super::constraints::{Affinity, Constraints};
use crate::engine::value::Value;
use crate::suites::neighbors::Conditions;
use crate::util::sqlite::quoted_identifier as quote;
use chrono::{Datelike, NaiveDate, NaiveDateTime};
use rusqlite::Connection;

/// Distinct values kept per column of the original database.
const SAMPLED_VALUES: usize = 60;

/// What one column's values look like.
#[derive(Debug, Clone, Default)]
pub struct ColumnProfile {
    /// Distinct non-NULL values seen in the original database (at most [`SAMPLED_VALUES`]).
    pub seen: Vec<Value>,
    /// Share of the original database's rows where the column is NULL. Seed 000 (section 4.1)
    /// samples numbers and strings, never NULL: a column gets NULLs only at the rate its
    /// original data has them, and none without an original database.
    pub null_rate: f64,
    /// Smallest and largest number in the original column (all its rows, not only the
    /// sampled ones), where fresh numbers are drawn.
    pub range: Option<(f64, f64)>,
    /// The original column holds at least two non-NULL values, all distinct: it stays distinct
    /// within every table of a natural generated database. False when unknown (no original
    /// data).
    pub distinct: bool,
    /// The first and last moment of a column whose original text values are all calendar years
    /// or ISO dates (`2011`, `2018-03-19`, `2018-03-19 04:39:54`): fresh values are drawn
    /// between them in the shape of a seen value, so a generated database holds dates the
    /// domain could have (no awarded year `8691`, no month `92`).
    pub dates: Option<(NaiveDateTime, NaiveDateTime)>,
    /// Text values the original holds under two parents or more of one declared single-column
    /// foreign key of the table (a city name in two countries: `Hamilton`, `Córdoba`), at most
    /// [`SAMPLED_VALUES`]: the domain lets two rows under different parents share them, so
    /// generated rows sometimes do ([`super::generate`]).
    pub shared: Vec<Value>,
}

/// Original rows kept per table, sampled whole so that columns that go together (a code and its
/// name) stay together in generated rows.
const SAMPLED_ROWS: usize = 1000;

/// Whole rows of every table of the original database, `[table][row][column]` (at most
/// [`SAMPLED_ROWS`] per table, in rowid order).
pub fn sample_rows(
    conn: &Connection,
    constraints: &Constraints,
) -> rusqlite::Result<Vec<Vec<Vec<Value>>>> {
    constraints
        .tables
        .iter()
        .map(|table| {
            let columns: Vec<String> = table.columns.iter().map(|c| quote(&c.name)).collect();
            let sql = format!(
                "SELECT {} FROM {} LIMIT {SAMPLED_ROWS}",
                columns.join(", "),
                quote(&table.name)
            );
            let mut statement = conn.prepare(&sql)?;
            let width = columns.len();
            let rows = statement
                .query_map([], |row| {
                    (0..width)
                        .map(|i| Ok(super::query::read_value(row.get_ref(i)?)))
                        .collect::<rusqlite::Result<Vec<Value>>>()
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
        .collect()
}

/// Profiles of every column, `[table][column]`.
pub type Profiles = Vec<Vec<ColumnProfile>>;

/// Learns the profiles of every column from the original database.
pub fn learn(conn: &Connection, constraints: &Constraints) -> rusqlite::Result<Profiles> {
    constraints
        .tables
        .iter()
        .map(|table| {
            table
                .columns
                .iter()
                .enumerate()
                .map(|(index, column)| {
                    let sql = format!(
                        "SELECT DISTINCT {c} FROM {t} ORDER BY {c} LIMIT {}",
                        SAMPLED_VALUES + 1,
                        c = quote(&column.name),
                        t = quote(&table.name)
                    );
                    let mut statement = conn.prepare(&sql)?;
                    let values: Vec<Value> = statement
                        .query_map([], |row| Ok(super::query::read_value(row.get_ref(0)?)))?
                        .collect::<Result<_, _>>()?;
                    let seen = values
                        .into_iter()
                        .filter(|v| !matches!(v, Value::Null))
                        .take(SAMPLED_VALUES)
                        .collect();
                    let (rows, nulls): (i64, i64) = conn.query_row(
                        &format!(
                            "SELECT count(*), count(*) - count({c}) FROM {t}",
                            c = quote(&column.name),
                            t = quote(&table.name)
                        ),
                        [],
                        |row| Ok((row.get(0)?, row.get(1)?)),
                    )?;
                    let null_rate = if rows == 0 {
                        0.0
                    } else {
                        nulls as f64 / rows as f64
                    };
                    let range: (Option<f64>, Option<f64>) = conn.query_row(
                        &format!(
                            "SELECT min({c}), max({c}) FROM {t} \
                             WHERE typeof({c}) IN ('integer', 'real')",
                            c = quote(&column.name),
                            t = quote(&table.name)
                        ),
                        [],
                        |row| Ok((row.get(0)?, row.get(1)?)),
                    )?;
                    let range = match range {
                        (Some(low), Some(high)) => Some((low, high)),
                        _ => None,
                    };
                    let max_repeat: Option<(i64, i64)> = conn
                        .query_row(
                            &format!(
                                "SELECT count(*), count(*) OVER () FROM {t} WHERE {c} IS NOT NULL \
                                 GROUP BY {c} ORDER BY 1 DESC LIMIT 1",
                                c = quote(&column.name),
                                t = quote(&table.name)
                            ),
                            [],
                            |row| Ok((row.get(0)?, row.get(1)?)),
                        )
                        .map(Some)
                        .or_else(|e| match e {
                            rusqlite::Error::QueryReturnedNoRows => Ok(None),
                            e => Err(e),
                        })?;
                    Ok(ColumnProfile {
                        seen,
                        null_rate,
                        range,
                        dates: date_span(conn, &table.name, &column.name)?,
                        shared: shared_across_parents(conn, table, index)?,
                        distinct: matches!(max_repeat, Some((1, values)) if values >= 2)
                            && !person_name_part(&column.name),
                    })
                })
                .collect()
        })
        .collect()
}

/// The text values of column `index` that the original holds under two parents or more of
/// one declared single-column foreign key of `table` ([`ColumnProfile::shared`]); none for a
/// column of a foreign key.
fn shared_across_parents(
    conn: &Connection,
    table: &super::constraints::Table,
    index: usize,
) -> rusqlite::Result<Vec<Value>> {
    if table
        .foreign_keys
        .iter()
        .any(|fk| fk.columns.contains(&index))
    {
        return Ok(Vec::new());
    }
    let mut shared: Vec<Value> = Vec::new();
    for fk in table.foreign_keys.iter().filter(|fk| fk.columns.len() == 1) {
        let (c, t) = (quote(&table.columns[index].name), quote(&table.name));
        let parent = quote(&table.columns[fk.columns[0]].name);
        let sql = format!(
            "SELECT {c} FROM {t} WHERE typeof({c}) = 'text' AND {parent} IS NOT NULL \
             GROUP BY {c} HAVING count(DISTINCT {parent}) > 1 ORDER BY {c} LIMIT {SAMPLED_VALUES}"
        );
        let mut statement = conn.prepare(&sql)?;
        let values =
            statement.query_map([], |row| Ok(super::query::read_value(row.get_ref(0)?)))?;
        for value in values {
            let value = value?;
            if !shared.contains(&value) && shared.len() < SAMPLED_VALUES {
                shared.push(value);
            }
        }
    }
    Ok(shared)
}

/// The first and last moment of a column whose text values (two or more) are all years or ISO
/// dates ([`ColumnProfile::dates`]); `None` for any other column.
fn date_span(
    conn: &Connection,
    table: &str,
    column: &str,
) -> rusqlite::Result<Option<(NaiveDateTime, NaiveDateTime)>> {
    let c = quote(column);
    let sql = format!(
        "SELECT count(*), coalesce(sum({c} GLOB '[0-9][0-9][0-9][0-9]' \
         OR {c} GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]' \
         OR {c} GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9]'), 0), \
         min({c}), max({c}) FROM {t} WHERE typeof({c}) = 'text'",
        t = quote(table)
    );
    let (texts, dated, first, last): (i64, i64, Option<String>, Option<String>) =
        conn.query_row(&sql, [], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
        })?;
    if texts < 2 || dated != texts {
        return Ok(None);
    }
    let moment = |text: Option<String>| text.as_deref().and_then(calendar_moment);
    Ok(moment(first).zip(moment(last)))
}

/// The moment a year or ISO date written as text stands for (a year is its first day), `None`
/// for any other text or an impossible date.
fn calendar_moment(text: &str) -> Option<NaiveDateTime> {
    match text.len() {
        4 => NaiveDate::from_ymd_opt(text.parse().ok()?, 1, 1)?.and_hms_opt(0, 0, 0),
        10 => NaiveDate::parse_from_str(text, "%Y-%m-%d")
            .ok()?
            .and_hms_opt(0, 0, 0),
        19 => NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S").ok(),
        _ => None,
    }
}

/// A fresh year or date between `first` and `last`, written in the shape of `example` (a year,
/// a date or a date with a time); `None` when `example` is none of these.
pub fn calendar_value(
    example: &str,
    (first, last): (NaiveDateTime, NaiveDateTime),
    rng: &mut fastrand::Rng,
) -> Option<String> {
    calendar_moment(example)?;
    let (start, end) = (first.and_utc().timestamp(), last.and_utc().timestamp());
    let moment =
        chrono::DateTime::from_timestamp(rng.i64(start.min(end)..=end.max(start)), 0)?.naive_utc();
    Some(match example.len() {
        4 => format!("{:04}", moment.year()),
        10 => moment.format("%Y-%m-%d").to_string(),
        _ => moment.format("%Y-%m-%d %H:%M:%S").to_string(),
    })
}

/// Column names (lower case, letters and digits only) that hold one part of a person's name.
const PERSON_NAME_PARTS: [&str; 10] = [
    "firstname",
    "middlename",
    "lastname",
    "surname",
    "forename",
    "givenname",
    "familyname",
    "fname",
    "mname",
    "lname",
];

/// Whether a column holds one part of a person's name (`first_name`, `LName`, `surname`): people
/// share first and last names, so such a column is never an identifier, even when a small
/// original happens to hold each value once (two students called Smith are natural; two
/// stadiums called Balmoor are not).
pub fn person_name_part(column: &str) -> bool {
    let folded: String = column
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    PERSON_NAME_PARTS.contains(&folded.as_str())
}

/// Empty profiles (no original database).
pub fn empty(constraints: &Constraints) -> Profiles {
    constraints
        .tables
        .iter()
        .map(|t| vec![ColumnProfile::default(); t.columns.len()])
        .collect()
}

/// The gold constants and their close variants, per column `[table][column]`: a constant is
/// planted in the columns its gold query mentions that can hold it (numbers: the constant, +-1
/// and +-0.5; strings: the constant without LIKE wildcards, with prefixes, suffixes, a sub-string
/// and case variants), so conditions like `city = 'Aberdeen'` or `age > 30` meet rows on both
/// sides of their boundary.
#[derive(Debug, Clone, Default)]
pub struct Planted {
    /// Per gold query, `[table][column]`.
    golds: Vec<Vec<Vec<Vec<Value>>>>,
    /// Per gold query (aligned with `golds`), its exact constants: numbers, then texts.
    exact: Vec<(Vec<Value>, Vec<Value>)>,
    /// Per gold query (aligned with `golds`), `[table][column]`: the constants its conditions
    /// compare that column with (and the columns it references), exact.
    targeted: Vec<Vec<Vec<Vec<Value>>>>,
    /// Per gold query (aligned with `golds`), `[table][column]`: the constants its conditions
    /// compare that column with and their close variants (what natural databases plant).
    compared: Vec<Vec<Vec<Vec<Value>>>>,
    /// All gold queries' `compared` pools together, `[table][column]`.
    compared_all: Vec<Vec<Vec<Value>>>,
    /// Per gold query (aligned with `golds`), the tables it names.
    tables: Vec<Vec<bool>>,
    /// Per gold query (aligned with `golds`), the group sizes its HAVING compares count with.
    group_sizes: Vec<Vec<i64>>,
    /// All gold queries together, `[table][column]`.
    all: Vec<Vec<Vec<Value>>>,
}

impl Planted {
    /// Plants each gold query's constants in the columns it names.
    pub fn new(constraints: &Constraints, golds: &[(String, Vec<Value>, Conditions)]) -> Planted {
        let empty = || -> Vec<Vec<Vec<Value>>> {
            constraints
                .tables
                .iter()
                .map(|t| vec![Vec::new(); t.columns.len()])
                .collect()
        };
        let mut planted = Planted {
            all: empty(),
            compared_all: empty(),
            ..Planted::default()
        };
        for (gold, constants, conditions) in golds {
            let mut columns = empty();
            let mut targeted = empty();
            let mut compared = empty();
            let words = identifiers(gold);
            let (numbers, texts) = variants(constants);
            for (((table, pools), targets), near) in constraints
                .tables
                .iter()
                .zip(&mut columns)
                .zip(&mut targeted)
                .zip(&mut compared)
            {
                for (((column, pool), target), near) in table
                    .columns
                    .iter()
                    .zip(pools.iter_mut())
                    .zip(targets)
                    .zip(near)
                {
                    let name = column.name.to_lowercase();
                    for (_, constant) in conditions.compared.iter().filter(|(c, _)| *c == name) {
                        if fits(constant, column.affinity) {
                            push_unique(target, constant.clone());
                            let (numbers, texts) = variants(std::slice::from_ref(constant));
                            let close = match column.affinity {
                                Affinity::Integer | Affinity::Real => numbers,
                                Affinity::Text => texts,
                            };
                            push_unique(near, constant.clone());
                            for value in close {
                                push_unique(near, value);
                            }
                        }
                    }
                    if !words.contains(&name) {
                        continue;
                    }
                    let planted = match column.affinity {
                        Affinity::Integer | Affinity::Real => &numbers,
                        Affinity::Text => &texts,
                    };
                    for value in planted {
                        push_unique(pool, value.clone());
                    }
                }
            }
            propagate_to_parents(constraints, &mut columns);
            propagate_to_parents(constraints, &mut targeted);
            propagate_to_parents(constraints, &mut compared);
            for (pools, gold_pools) in planted.compared_all.iter_mut().zip(&compared) {
                for (pool, gold_pool) in pools.iter_mut().zip(gold_pools) {
                    for value in gold_pool {
                        push_unique(pool, value.clone());
                    }
                }
            }
            for (pools, gold_pools) in planted.all.iter_mut().zip(&columns) {
                for (pool, gold_pool) in pools.iter_mut().zip(gold_pools) {
                    for value in gold_pool {
                        push_unique(pool, value.clone());
                    }
                }
            }
            let has_pool =
                |pools: &Vec<Vec<Vec<Value>>>| pools.iter().flatten().any(|p| !p.is_empty());
            if has_pool(&columns) || has_pool(&targeted) || !conditions.group_sizes.is_empty() {
                planted.golds.push(columns);
                planted.exact.push(exact_constants(constants));
                planted.targeted.push(targeted);
                planted.compared.push(compared);
                planted.tables.push(
                    constraints
                        .tables
                        .iter()
                        .map(|t| words.contains(&t.name.to_lowercase()))
                        .collect(),
                );
                planted.group_sizes.push(conditions.group_sizes.clone());
            }
        }
        planted
    }

    /// How many gold queries have constants to plant.
    pub fn focus_count(&self) -> usize {
        self.golds.len()
    }

    /// The values of one gold query (the database's focus) to plant in a column.
    pub fn for_focus(&self, focus: usize, table: usize, column: usize) -> &[Value] {
        pool(self.golds.get(focus), table, column)
    }

    /// The exact constants (no variants) of the focus gold query that fit a column.
    pub fn exact_for_focus(&self, focus: usize, affinity: Affinity) -> &[Value] {
        match (self.exact.get(focus), affinity) {
            (Some((numbers, _)), Affinity::Integer | Affinity::Real) => numbers,
            (Some((_, texts)), Affinity::Text) => texts,
            (None, _) => &[],
        }
    }

    /// The constants the focus gold query compares a column with.
    pub fn targeted_for_focus(&self, focus: usize, table: usize, column: usize) -> &[Value] {
        pool(self.targeted.get(focus), table, column)
    }

    /// The constants the focus gold query compares a column with, and their close variants.
    pub fn compared_for_focus(&self, focus: usize, table: usize, column: usize) -> &[Value] {
        pool(self.compared.get(focus), table, column)
    }

    /// The constants any gold query compares a column with, and their close variants.
    pub fn compared_for_column(&self, table: usize, column: usize) -> &[Value] {
        pool(Some(&self.compared_all), table, column)
    }

    /// Whether the focus gold query names a table.
    pub fn names_table(&self, focus: usize, table: usize) -> bool {
        self.tables
            .get(focus)
            .and_then(|t| t.get(table))
            .copied()
            .unwrap_or(false)
    }

    /// The group sizes the focus gold query's HAVING compares count with.
    pub fn group_sizes(&self, focus: usize) -> &[i64] {
        self.group_sizes.get(focus).map_or(&[], Vec::as_slice)
    }

    /// The values of every gold query to plant in a column.
    pub fn for_column(&self, table: usize, column: usize) -> &[Value] {
        pool(Some(&self.all), table, column)
    }
}

/// Whether a compared constant is a value of a column's type: numbers fit every column (a
/// text column stores their text), texts only text columns or, when they spell a number,
/// numeric ones.
fn fits(constant: &Value, affinity: Affinity) -> bool {
    match (constant, affinity) {
        (Value::Text(text), Affinity::Integer | Affinity::Real) => {
            text.trim().parse::<f64>().is_ok()
        }
        (Value::Null | Value::Blob(_), _) => false,
        _ => true,
    }
}

fn pool(columns: Option<&Vec<Vec<Vec<Value>>>>, table: usize, column: usize) -> &[Value] {
    columns
        .and_then(|c| c.get(table))
        .and_then(|t| t.get(column))
        .map_or(&[], Vec::as_slice)
}

/// A value planted in a foreign-key column must exist in the referenced column, or children
/// (which copy their keys from parent rows) could never hold it.
fn propagate_to_parents(constraints: &Constraints, columns: &mut [Vec<Vec<Value>>]) {
    for _ in 0..constraints.tables.len() {
        for (table_index, table) in constraints.tables.iter().enumerate() {
            for fk in &table.foreign_keys {
                for (child, parent) in fk.columns.iter().zip(&fk.parent_columns) {
                    let values = columns[table_index][*child].clone();
                    let pool = &mut columns[fk.parent][*parent];
                    for value in values {
                        push_unique(pool, value);
                    }
                }
            }
        }
    }
}

/// The lower-cased words of a query (its identifiers among them).
fn identifiers(sql: &str) -> std::collections::HashSet<String> {
    sql.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The constants themselves (LIKE wildcards removed), as numbers and texts.
fn exact_constants(constants: &[Value]) -> (Vec<Value>, Vec<Value>) {
    let (mut numbers, mut texts) = (Vec::new(), Vec::new());
    for constant in constants {
        match constant {
            Value::Int(_) | Value::Real(_) => push_unique(&mut numbers, constant.clone()),
            Value::Text(s) => {
                let core: String = s.chars().filter(|c| *c != '%' && *c != '_').collect();
                push_unique(&mut texts, Value::Text(core));
            }
            Value::Null | Value::Blob(_) | Value::Py(_) => {}
        }
    }
    (numbers, texts)
}

/// Number and text variants of constants, deduplicated in first-seen order.
fn variants(constants: &[Value]) -> (Vec<Value>, Vec<Value>) {
    let (mut numbers, mut texts) = (Vec::new(), Vec::new());
    for constant in constants {
        match constant {
            Value::Int(i) => {
                for v in [*i, i.saturating_sub(1), i.saturating_add(1)] {
                    push_unique(&mut numbers, Value::Int(v));
                }
            }
            Value::Real(f) => {
                for v in [*f, f - 1.0, f + 1.0, f - 0.5, f + 0.5] {
                    push_unique(&mut numbers, Value::Real(v));
                }
            }
            Value::Text(s) => {
                let core: String = s.chars().filter(|c| *c != '%' && *c != '_').collect();
                if let Ok(number) = core.trim().parse::<f64>() {
                    push_unique(&mut numbers, number_value(number));
                }
                for variant in text_variants(&core) {
                    push_unique(&mut texts, Value::Text(variant));
                }
            }
            Value::Null | Value::Blob(_) | Value::Py(_) => {}
        }
    }
    (numbers, texts)
}

fn number_value(number: f64) -> Value {
    if number.fract() == 0.0 && number.abs() < 1e15 {
        Value::Int(number as i64)
    } else {
        Value::Real(number)
    }
}

fn push_unique(list: &mut Vec<Value>, value: Value) {
    if !list.contains(&value) {
        list.push(value);
    }
}

fn text_variants(core: &str) -> Vec<String> {
    let mut variants = vec![core.to_string()];
    if core.is_empty() {
        return variants;
    }
    variants.push(format!("{core}x"));
    variants.push(format!("x{core}"));
    variants.push(format!("a {core} b"));
    variants.push(core.to_uppercase());
    variants.push(core.to_lowercase());
    let chars: Vec<char> = core.chars().collect();
    if chars.len() > 1 {
        variants.push(chars[..chars.len() - 1].iter().collect());
        variants.push(chars[1..].iter().collect());
    }
    variants
}

/// A fresh value in the format of `example`: digits replaced by random digits, letters by
/// random letters of the same case, everything else kept (dates, times, codes keep their shape).
pub fn same_format(example: &str, rng: &mut fastrand::Rng) -> String {
    example
        .chars()
        .map(|c| {
            if c.is_ascii_digit() {
                rng.char('0'..='9')
            } else if c.is_ascii_uppercase() {
                rng.char('A'..='Z')
            } else if c.is_ascii_lowercase() {
                rng.char('a'..='z')
            } else {
                c
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_learned_and_drawn_inside_the_original_span() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE e (awarded TEXT, seen TEXT, code TEXT);
             INSERT INTO e VALUES ('2011', '2018-03-19 04:39:54', '2011'),
                                  ('2016', '2017-09-08 20:10:13', 'A-12'),
                                  ('2013', '2018-13-01 00:00:00', '2012');",
        )
        .unwrap();
        let span = |column: &str| date_span(&conn, "e", column).unwrap();
        assert_eq!(span("code"), None);
        let awarded = span("awarded").unwrap();
        assert_eq!(awarded.0.year(), 2011);
        assert_eq!(awarded.1.year(), 2016);
        // The latest text is an impossible date: no span is learned from it.
        assert_eq!(span("seen"), None);
        let mut rng = fastrand::Rng::with_seed(3);
        for _ in 0..200 {
            let year = calendar_value("2013", awarded, &mut rng).unwrap();
            assert!(("2011"..="2016").contains(&year.as_str()), "{year}");
            let day = calendar_value("2013-05-01 10:00:00", awarded, &mut rng).unwrap();
            assert!(calendar_moment(&day).is_some_and(|d| d >= awarded.0 && d <= awarded.1));
        }
        assert_eq!(calendar_value("A-12", awarded, &mut rng), None);
    }

    #[test]
    fn person_name_parts_are_told_from_names_of_things() {
        for part in [
            "first_name",
            "LName",
            "Fname",
            "middle_name",
            "Surname",
            "lastName",
        ] {
            assert!(person_name_part(part), "{part}");
        }
        for other in [
            "name",
            "FullName",
            "LocalName",
            "Stadium_name",
            "first_show",
        ] {
            assert!(!person_name_part(other), "{other}");
        }
    }
}
