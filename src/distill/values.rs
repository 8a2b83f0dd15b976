//! Where generated values come from: value profiles learned from the original database (its
//! distinct values and their formats: dates, times, codes) and the gold queries' constants with
//! close variants, so that random databases exercise the conditions the queries test.

use super::constraints::{Affinity, Constraints};
use crate::value::Value;
use rusqlite::Connection;

/// Distinct values kept per column of the original database.
const SAMPLED_VALUES: usize = 60;

/// What one column's values look like.
#[derive(Debug, Clone, Default)]
pub struct ColumnProfile {
    /// Distinct non-NULL values seen in the original database (at most [`SAMPLED_VALUES`]).
    pub seen: Vec<Value>,
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
                .map(|column| {
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
                    Ok(ColumnProfile { seen })
                })
                .collect()
        })
        .collect()
}

/// Empty profiles (no original database).
pub fn empty(constraints: &Constraints) -> Profiles {
    constraints
        .tables
        .iter()
        .map(|t| vec![ColumnProfile::default(); t.columns.len()])
        .collect()
}

/// The gold constants and their close variants, split by kind.
#[derive(Debug, Clone, Default)]
pub struct Planted {
    /// Numbers: each constant, +-1 and +-0.5.
    pub numbers: Vec<Value>,
    /// Strings: each constant (LIKE wildcards removed), with prefixes, suffixes, a sub-string
    /// and case variants.
    pub texts: Vec<Value>,
}

impl Planted {
    /// Variants of the given constants, deduplicated in first-seen order.
    pub fn from_constants(constants: &[Value]) -> Planted {
        let mut planted = Planted::default();
        for constant in constants {
            match constant {
                Value::Int(i) => {
                    for v in [*i, i.saturating_sub(1), i.saturating_add(1)] {
                        push_unique(&mut planted.numbers, Value::Int(v));
                    }
                }
                Value::Real(f) => {
                    for v in [*f, f - 1.0, f + 1.0, f - 0.5, f + 0.5] {
                        push_unique(&mut planted.numbers, Value::Real(v));
                    }
                }
                Value::Text(s) => {
                    let core: String = s.chars().filter(|c| *c != '%' && *c != '_').collect();
                    if let Ok(number) = core.trim().parse::<f64>() {
                        push_unique(&mut planted.numbers, number_value(number));
                    }
                    for variant in text_variants(&core) {
                        push_unique(&mut planted.texts, Value::Text(variant));
                    }
                }
                Value::Null | Value::Blob(_) => {}
            }
        }
        planted
    }

    /// The planted values suitable for a column of this affinity.
    pub fn for_affinity(&self, affinity: Affinity) -> &[Value] {
        match affinity {
            Affinity::Integer | Affinity::Real => &self.numbers,
            Affinity::Text => &self.texts,
        }
    }
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

fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}
