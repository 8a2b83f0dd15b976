//! One database per schema from its tables.json entry alone, for benchmarks that ship without
//! databases (BIRD mini-dev ships gold queries and `dev_tables.json`): the distillation
//! generator fills many seeded candidates, each favouring one gold query's constants, dates are
//! made valid calendar dates (so that a server types the column DATE as BIRD does), and the
//! candidate on which the most gold queries return rows is kept, so that comparing results on
//! it means something.

use super::constraints::Constraints;
use super::generate::{Generator, Phase};
use super::query::Timed;
use super::values::{ColumnProfile, Planted};
use super::NeighborSource;
use crate::engine::value::Value;
use crate::sql::schema::TableEntry;
use crate::util::sqlite::quoted_identifier as quote;
use rayon::prelude::*;
use rusqlite::Connection;
use std::time::Duration;

/// Longest a gold query may run on a candidate.
const GOLD_LIMIT: Duration = Duration::from_secs(2);

/// A generated database and how many gold queries return rows on it.
pub struct Synthesized {
    /// The SQLite file's bytes.
    pub bytes: Vec<u8>,
    /// Gold queries that run and return at least one row.
    pub golds_with_rows: usize,
    /// Gold queries tried.
    pub golds: usize,
}

/// The best of `candidates` databases of `entry`'s schema generated from `seed` with `rows`
/// rows per table (inclusive bounds), by the number of `golds` (SQLite dialect) returning rows.
pub fn synthesize(
    entry: &TableEntry,
    golds: &[String],
    source: &dyn NeighborSource,
    seed: u64,
    rows: (usize, usize),
    candidates: u64,
) -> Result<Synthesized, String> {
    let constraints = Constraints::from_tables_json(entry);
    let profiles: Vec<Vec<ColumnProfile>> = constraints
        .tables
        .iter()
        .map(|t| {
            t.columns
                .iter()
                .map(|c| profile_of(&c.declared_type))
                .collect()
        })
        .collect();
    let constants: Vec<_> = golds
        .iter()
        .map(|g| (g.clone(), source.constants(g), source.conditions(g)))
        .collect();
    let planted = Planted::new(&constraints, &constants);
    let originals = vec![Vec::new(); constraints.tables.len()];
    let generator = Generator {
        constraints: &constraints,
        profiles: &profiles,
        originals: &originals,
        planted: &planted,
        rows,
    };
    let scored = (0..candidates)
        .into_par_iter()
        .map(|index| {
            let candidate_seed = seed.wrapping_mul(1_000_003).wrapping_add(index);
            let conn = generator
                .generate(candidate_seed, Phase::Capped)
                .map_err(|e| e.to_string())?;
            make_dates_valid(&conn, &constraints).map_err(|e| e.to_string())?;
            let timed = Timed::new(conn).map_err(|e| e.to_string())?;
            let with_rows = golds
                .iter()
                .filter(|gold| {
                    timed
                        .run(gold, GOLD_LIMIT)
                        .is_some_and(|rows| !rows.is_empty())
                })
                .count();
            Ok((with_rows, index, timed))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let (golds_with_rows, _, mut timed) = scored
        .into_iter()
        .max_by_key(|(with_rows, index, _)| (*with_rows, std::cmp::Reverse(*index)))
        .ok_or("no candidate database (candidates must be at least 1)")?;
    let bytes = timed
        .conn_mut()
        .serialize(rusqlite::MAIN_DB)
        .map_err(|e| e.to_string())?
        .to_vec();
    Ok(Synthesized {
        bytes,
        golds_with_rows,
        golds: golds.len(),
    })
}

/// A column without original data: dates get date-shaped examples (fresh values keep their
/// shape; [`make_dates_valid`] repairs the calendar), others nothing.
fn profile_of(declared_type: &str) -> ColumnProfile {
    let seen = match declared_type {
        "DATE" => vec![Value::Text("2012-06-15".into())],
        "DATETIME" => vec![Value::Text("2012-06-15 12:30:00".into())],
        _ => Vec::new(),
    };
    ColumnProfile {
        seen,
        ..ColumnProfile::default()
    }
}

/// Every DATE / DATETIME value made a valid `YYYY-MM-DD` (`YYYY-MM-DD HH:MM:SS`) keeping what
/// it already has right: a planted `2012` stays in 2012.
fn make_dates_valid(conn: &Connection, constraints: &Constraints) -> rusqlite::Result<()> {
    for table in &constraints.tables {
        for column in &table.columns {
            let with_time = match column.declared_type.as_str() {
                "DATE" => false,
                "DATETIME" => true,
                _ => continue,
            };
            let (t, c) = (quote(&table.name), quote(&column.name));
            let values: Vec<(i64, String)> = conn
                .prepare(&format!(
                    "SELECT rowid, CAST({c} AS TEXT) FROM {t} WHERE {c} IS NOT NULL"
                ))?
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?;
            let mut update = conn.prepare(&format!("UPDATE {t} SET {c} = ?1 WHERE rowid = ?2"))?;
            for (rowid, value) in values {
                if valid_date(&value, with_time, 0) == value {
                    continue;
                }
                // A date in a key may clash with another row's: later attempts draw the day
                // (and time) afresh; a row no attempt fits is dropped.
                let fitted = (0..DATE_ATTEMPTS).any(|attempt| {
                    let valid = valid_date(&value, with_time, attempt);
                    update.execute(rusqlite::params![valid, rowid]).is_ok()
                });
                if !fitted {
                    conn.execute(&format!("DELETE FROM {t} WHERE rowid = ?1"), [rowid])?;
                }
            }
        }
    }
    Ok(())
}

/// Dates tried for one value before its row is dropped.
const DATE_ATTEMPTS: u64 = 64;

/// `value` as a valid date (with a time when `with_time`): its leading digits where they make a
/// valid year (1900-2030), month and day, the rest drawn from a hash of the value and
/// `attempt` (after the first attempt the day and time are always drawn).
fn valid_date(value: &str, with_time: bool, attempt: u64) -> String {
    let digits: Vec<u32> = value.chars().filter_map(|c| c.to_digit(10)).collect();
    let number = |range: std::ops::Range<usize>| -> Option<u32> {
        digits
            .get(range)
            .map(|d| d.iter().fold(0, |n, d| n * 10 + d))
    };
    let hash = value
        .bytes()
        .chain(attempt.to_le_bytes())
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
    let kept = |part: Option<u32>| part.filter(|_| attempt == 0);
    let pick = |shift: u32, modulo: u64| ((hash >> shift) % modulo) as u32;
    let year = number(0..4)
        .filter(|y| (1900..=2030).contains(y))
        .unwrap_or(1990 + pick(0, 31));
    let month = number(4..6)
        .filter(|m| (1..=12).contains(m))
        .unwrap_or(1 + pick(8, 12));
    let day = kept(number(6..8))
        .filter(|d| (1..=28).contains(d))
        .unwrap_or(1 + pick(16, 28));
    let date = format!("{year:04}-{month:02}-{day:02}");
    if !with_time {
        return date;
    }
    let hour = kept(number(8..10))
        .filter(|h| *h < 24)
        .unwrap_or(pick(24, 24));
    let minute = kept(number(10..12))
        .filter(|m| *m < 60)
        .unwrap_or(pick(32, 60));
    let second = kept(number(12..14))
        .filter(|s| *s < 60)
        .unwrap_or(pick(40, 60));
    format!("{date} {hour:02}:{minute:02}:{second:02}")
}

#[cfg(test)]
mod tests {
    use super::valid_date;

    #[test]
    fn valid_dates_keep_what_is_right() {
        assert_eq!(valid_date("2012-06-15", false, 0), "2012-06-15");
        assert_eq!(
            valid_date("2012-06-15 08:09:10", true, 0),
            "2012-06-15 08:09:10"
        );
        assert!(valid_date("2012", false, 0).starts_with("2012-"));
        let repaired = valid_date("8391-47-92", false, 0);
        let year: u32 = repaired[..4].parse().unwrap();
        assert!((1990..=2020).contains(&year), "{repaired}");
        assert_eq!(
            valid_date("8391-47-92", false, 0),
            repaired,
            "deterministic"
        );
        assert_eq!(valid_date("2012-06-15", true, 0).len(), 19);
        let days: std::collections::HashSet<String> = (0..20)
            .map(|a| valid_date("2012-06-15", false, a))
            .collect();
        assert!(
            days.len() > 5 && days.iter().all(|d| d.starts_with("2012-06-")),
            "{days:?}"
        );
    }
}
