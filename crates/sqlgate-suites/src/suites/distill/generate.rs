//! The random database generator: fills every table of a schema (parents before children) with
//! rows that satisfy every declared constraint: types, PRIMARY KEY / UNIQUE, NOT NULL and foreign
//! keys (children take their key values from parent rows). Values come from the learned column
//! profiles, fresh values in the learned formats, and the planted gold constants.

use super::constraints::{Affinity, Column, Constraints, Table};
use super::values::{calendar_value, same_format, ColumnProfile, Profiles};
use crate::engine::value::Value;
use crate::util::sqlite::quoted_identifier as quote;
use rusqlite::Connection;

/// Chance that a value is a constant (or variant) of the database's focus gold query, when the
/// column can hold one: each database favours one gold query, so that conditions combining
/// several constants (`first_name = 'x' AND last_name = 'y'`, INTERSECT of two values) meet.
const FOCUS_CHANCE: f64 = 0.4;
/// Chance that a value is a constant (or variant) of any gold query of the schema.
const PLANTED_CHANCE: f64 = 0.15;
/// Chance that a value is one seen in the original database, when it has some.
const SEEN_CHANCE: f64 = 0.5;
/// Attempts per wanted row before giving up on it (unique keys may be exhausted).
const ATTEMPTS_PER_ROW: usize = 4;
/// Chance that a database is a witness for its focus gold query: the columns that query
/// compares with constants mostly hold exactly those constants, so that conditions on several
/// joined tables meet in one row combination and the gold returns rows (seed 000 A.2).
const WITNESS_CHANCE: f64 = 0.3;
/// In a witness database, chance that a compared column takes one of its constants.
const WITNESS_PICK: f64 = 0.75;
/// Chance that a database whose focus gold query compares a group size with `count(...)` in
/// HAVING is built around one big group of about that size.
const BIG_GROUP_CHANCE: f64 = 0.5;
/// Chance that a database probes NULLs: the nullable attribute columns (no key, no foreign
/// key) of the tables its focus gold query names hold NULL at least at [`PROBE_NULL_RATE`].
/// Seed 000 never samples NULL, and other databases hold NULLs only at the original data's
/// rate; without probes a query that differs only on NULLs (`count(a)` against `count(b)`)
/// could never be told apart, and Algorithm 1 keeps a probe only when it separates a neighbor
/// nothing else does. Keys and foreign keys keep the original rate, so joins behave as in the
/// original data.
const NULL_PROBE_CHANCE: f64 = 0.05;
/// Least NULL rate of a nullable column in a NULL probe.
const PROBE_NULL_RATE: f64 = 0.2;
/// Chance that a column with values the original shares across parents
/// ([`ColumnProfile::shared`]) takes one of them in a generated row: a city name two countries
/// have, so that a query that excludes by the name instead of by the country can be told
/// apart. Drawn from its own random stream, so the other values of every database stay those
/// of the same seed without it.
const SHARE_CHANCE: f64 = 0.15;
/// Seeds the stream of [`SHARE_CHANCE`] draws, apart from the main one.
const SHARE_STREAM: u64 = 0x5348_4152_4544;
/// Group sizes a HAVING may ask for that a random row count (`rows`) rarely or never
/// reaches, and that a generated database can still afford.
const BIG_GROUP_SIZES: std::ops::RangeInclusive<i64> = 5..=1000;

/// How a database treats its focus gold query.
#[derive(Debug, Clone, Copy)]
struct Mode {
    /// The gold query whose constants it favours.
    focus: usize,
    /// Compared columns mostly hold their constants.
    witness: bool,
    /// Nullable columns of the focus query's tables often hold NULL.
    null_probe: bool,
    /// The rows of every table the focus query names, all in one group: key columns count
    /// up, other columns repeat the first row, foreign keys point to the first parent row.
    big_group: Option<usize>,
    /// A natural database (see [`Generator::generate`]): respects what the original data says
    /// about the domain.
    natural: bool,
    /// The sampling phase the database belongs to.
    phase: Phase,
}

/// The three phases of a distillation run, from the most natural databases to the freest (see
/// [`Generator::generate`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Natural databases.
    Natural,
    /// The free generator, but text columns outside foreign keys that are all distinct in the
    /// original stay distinct, NULL probes only where the original has NULLs, and no NULL
    /// reference where the original has none.
    Capped,
    /// Seed 000's free generator.
    Free,
}

/// Everything needed to generate databases of one schema.
pub struct Generator<'a> {
    /// The schema's constraints and DDL.
    pub constraints: &'a Constraints,
    /// Value profiles per column.
    pub profiles: &'a Profiles,
    /// Whole rows of the original database per table, `[table][row][column]`; generated rows
    /// take their unplanted values from one of them (or from the one holding a planted
    /// constant), so columns that go together stay together.
    pub originals: &'a [Vec<Vec<Value>>],
    /// Gold constants and variants to plant.
    pub planted: &'a super::values::Planted,
    /// Inclusive bounds on rows per table.
    pub rows: (usize, usize),
}

impl Generator<'_> {
    /// A new in-memory database filled from `seed`; the same seed and `natural` always give the
    /// same rows.
    ///
    /// A natural database respects what the original data says about the domain, as learned in
    /// [`ColumnProfile`]: a column whose original values are all distinct stays distinct within
    /// each table (planted constants included); NULLs only where the original has them, at its
    /// rate (no NULL probe, no big group); rows of lookup-like tables (those other tables
    /// reference) are original rows taken whole, other tables take whole original rows half of
    /// the time, so that columns that go together (a code and its name) stay together; gold
    /// constants and their variants are planted only into the columns their query compares
    /// them with, and a planted constant found in the original keeps the rest of its original
    /// row; a row holding its original foreign-key value keeps that parent when it is here.
    /// Distillation samples natural databases first, then [`Phase::Capped`] ones (the free
    /// generator, with witness, big-group and NULL-probe databases, that still keeps names and
    /// codes distinct and NULLs where the original has them), and seed 000's free generator
    /// last, only for what the others leave undistinguished: the suite keeps the free
    /// generator's power and holds as few unnatural databases as that power needs.
    pub fn generate(&self, seed: u64, phase: Phase) -> rusqlite::Result<Connection> {
        let conn = crate::util::sqlite::open_in_memory()?;
        // Foreign keys are satisfied by construction; SQLite's own enforcement is off because
        // some real schemas declare keys it rejects outright ("foreign key mismatch": a parent
        // column that is not unique), which would refuse every child row.
        conn.pragma_update(None, "foreign_keys", false)?;
        for statement in &self.constraints.ddl {
            conn.execute_batch(statement)?;
        }
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut share = fastrand::Rng::with_seed(seed ^ SHARE_STREAM);
        let mut mode = self.mode(&mut rng);
        mode.phase = phase;
        if phase == Phase::Natural {
            mode.natural = true;
            mode.null_probe = false;
            mode.big_group = None;
        }
        let mut filled: Vec<Vec<Vec<Value>>> = vec![Vec::new(); self.constraints.tables.len()];
        conn.execute_batch("BEGIN")?;
        for table_index in self.constraints.topological_order() {
            let rngs = (&mut rng, &mut share);
            let rows = self.fill_table(&conn, table_index, mode, &filled, rngs)?;
            filled[table_index] = rows;
        }
        conn.execute_batch("COMMIT")?;
        Ok(conn)
    }

    /// The focus gold query of a new database and how it is served.
    fn mode(&self, rng: &mut fastrand::Rng) -> Mode {
        let focus = rng.usize(..self.planted.focus_count().max(1));
        let witness = rng.f64() < WITNESS_CHANCE;
        let null_probe = rng.f64() < NULL_PROBE_CHANCE;
        let sizes: Vec<i64> = self
            .planted
            .group_sizes(focus)
            .iter()
            .copied()
            .filter(|n| BIG_GROUP_SIZES.contains(n))
            .collect();
        let big_group = (!sizes.is_empty() && rng.f64() < BIG_GROUP_CHANCE).then(|| {
            let size = sizes[rng.usize(..sizes.len())] + rng.i64(-1..=1);
            size.max(1) as usize
        });
        Mode {
            focus,
            witness,
            null_probe,
            big_group,
            natural: false,
            phase: Phase::Free,
        }
    }

    /// Rows over all tables of a database of this schema.
    pub fn count_rows(&self, conn: &Connection) -> rusqlite::Result<u64> {
        let mut total = 0u64;
        for table in &self.constraints.tables {
            let sql = format!("SELECT count(*) FROM {}", quote(&table.name));
            total += conn.query_row(&sql, [], |row| row.get::<_, i64>(0))? as u64;
        }
        Ok(total)
    }

    fn fill_table(
        &self,
        conn: &Connection,
        table_index: usize,
        mode: Mode,
        filled: &[Vec<Vec<Value>>],
        (rng, share): (&mut fastrand::Rng, &mut fastrand::Rng),
    ) -> rusqlite::Result<Vec<Vec<Value>>> {
        let table = &self.constraints.tables[table_index];
        let random_count = rng.usize(self.rows.0..=self.rows.1.max(self.rows.0));
        let big_group = mode
            .big_group
            .filter(|_| self.planted.names_table(mode.focus, table_index));
        let wanted = big_group.unwrap_or(random_count);
        let names: Vec<String> = table.columns.iter().map(|c| quote(&c.name)).collect();
        let placeholders = vec!["?"; names.len()].join(", ");
        let mut insert = conn.prepare(&format!(
            "INSERT INTO {} ({}) VALUES ({placeholders})",
            quote(&table.name),
            names.join(", ")
        ))?;
        let mut rows: Vec<Vec<Value>> = Vec::with_capacity(wanted);
        for _ in 0..wanted * ATTEMPTS_PER_ROW {
            if rows.len() == wanted {
                break;
            }
            let Some(mut row) = self.row(table_index, mode, filled, &rows, rng) else {
                continue;
            };
            if big_group.is_some() {
                one_group(table, &mut row, &rows);
            } else {
                self.share_values(table_index, &mut row, &rows, share);
            }
            if big_group.is_none()
                && mode.phase != Phase::Free
                && !self.within_repeats(table_index, &mut row, &rows, mode.natural, rng)
            {
                continue;
            }
            // SQLite enforces the declared PRIMARY KEY, UNIQUE, NOT NULL and type constraints:
            // a row it refuses is dropped (foreign keys are respected by construction).
            let params: Vec<rusqlite::types::Value> = row.iter().map(to_sql).collect();
            if insert.execute(rusqlite::params_from_iter(params)).is_ok() {
                rows.push(row);
            }
        }
        Ok(rows)
    }

    /// Sometimes gives `row` a value the original holds under several parents
    /// ([`ColumnProfile::shared`], at [`SHARE_CHANCE`] per column): half of the time one an
    /// earlier row under another parent holds (a second `Hamilton`, in another country), else
    /// any of them.
    fn share_values(
        &self,
        table_index: usize,
        row: &mut [Value],
        earlier: &[Vec<Value>],
        rng: &mut fastrand::Rng,
    ) {
        let table = &self.constraints.tables[table_index];
        let other_parent = |other: &[Value], row: &[Value]| {
            table
                .foreign_keys
                .iter()
                .filter(|fk| fk.columns.len() == 1)
                .any(|fk| !same_value(&other[fk.columns[0]], &row[fk.columns[0]]))
        };
        for (index, profile) in self.profiles[table_index].iter().enumerate() {
            if profile.shared.is_empty() || rng.f64() >= SHARE_CHANCE {
                continue;
            }
            let second: Vec<&Value> = earlier
                .iter()
                .filter(|other| other_parent(other, row))
                .map(|other| &other[index])
                .filter(|v| profile.shared.iter().any(|s| same_value(s, v)))
                .collect();
            row[index] = if !second.is_empty() && rng.bool() {
                second[rng.usize(..second.len())].clone()
            } else {
                profile.shared[rng.usize(..profile.shared.len())].clone()
            };
        }
    }

    /// Whether other tables reference `table` (a lookup-like table: its rows are sampled whole
    /// in natural databases).
    fn is_lookup(&self, table: usize) -> bool {
        self.constraints
            .tables
            .iter()
            .enumerate()
            .any(|(i, t)| i != table && t.foreign_keys.iter().any(|fk| fk.parent == table))
    }

    /// Keeps every column whose original values are all distinct ([`ColumnProfile::distinct`])
    /// distinct within the table, planted constants included: a repeated value is replaced by a
    /// fresh one, or the row is dropped when that cannot help (a foreign key, a fresh value that
    /// repeats too). Natural databases keep every such column distinct, free ones only the
    /// text columns outside foreign keys (names and codes: two singers called the same when
    /// no two are in the original data make a question that uses the name as an identifier
    /// ambiguous), so that numbers still tie and references still repeat.
    fn within_repeats(
        &self,
        table_index: usize,
        row: &mut [Value],
        earlier: &[Vec<Value>],
        natural: bool,
        rng: &mut fastrand::Rng,
    ) -> bool {
        let table = &self.constraints.tables[table_index];
        let profiles = &self.profiles[table_index];
        let in_key = |index: usize| {
            table
                .foreign_keys
                .iter()
                .any(|fk| fk.columns.contains(&index))
        };
        for (index, profile) in profiles.iter().enumerate() {
            let capped = profile.distinct
                && (natural || (table.columns[index].affinity == Affinity::Text && !in_key(index)));
            let repeats = |v: &Value| earlier.iter().any(|r| same_value(&r[index], v));
            if !capped || matches!(row[index], Value::Null) || !repeats(&row[index]) {
                continue;
            }
            if table
                .foreign_keys
                .iter()
                .any(|fk| fk.columns.contains(&index))
            {
                return false;
            }
            let affinity = table.columns[index].affinity;
            let fresh = coerce(fresh(affinity, profile, rng), affinity);
            if repeats(&fresh) {
                return false;
            }
            row[index] = fresh;
        }
        true
    }

    /// One candidate row, or `None` when a NOT NULL foreign key has no parent row to point to.
    fn row(
        &self,
        table_index: usize,
        mode: Mode,
        filled: &[Vec<Vec<Value>>],
        own_rows: &[Vec<Value>],
        rng: &mut fastrand::Rng,
    ) -> Option<Vec<Value>> {
        let focus = mode.focus;
        let named = self.planted.names_table(focus, table_index);
        let big_group = mode.big_group.is_some() && named;
        let table = &self.constraints.tables[table_index];
        let profiles = &self.profiles[table_index];
        // NULL probes only where the original has NULLs (anywhere without an original).
        let learned =
            mode.phase != Phase::Free && self.originals.iter().any(|rows| !rows.is_empty());
        let probed = |column: usize| {
            mode.null_probe
                && named
                && (!learned || profiles[column].null_rate > 0.0)
                && !table.unique.iter().any(|key| key.contains(&column))
                && !table
                    .foreign_keys
                    .iter()
                    .any(|fk| fk.columns.contains(&column))
        };
        let originals = if mode.natural {
            self.originals[table_index].as_slice()
        } else {
            &[]
        };
        let whole = self.is_lookup(table_index) || rng.f64() < SEEN_CHANCE;
        let base =
            (!originals.is_empty() && whole).then(|| &originals[rng.usize(..originals.len())]);
        let mut planted_columns = Vec::new();
        let mut row: Vec<Value> = table
            .columns
            .iter()
            .zip(profiles)
            .enumerate()
            .map(|(index, (column, profile))| {
                let planted = if mode.natural {
                    Planted {
                        focus: self.planted.compared_for_focus(focus, table_index, index),
                        exact: &[],
                        all: self.planted.compared_for_column(table_index, index),
                        witness: if mode.witness {
                            self.planted.targeted_for_focus(focus, table_index, index)
                        } else {
                            &[]
                        },
                    }
                } else {
                    Planted {
                        focus: self.planted.for_focus(focus, table_index, index),
                        exact: self.planted.exact_for_focus(focus, column.affinity),
                        all: self.planted.for_column(table_index, index),
                        witness: if mode.witness {
                            self.planted.targeted_for_focus(focus, table_index, index)
                        } else {
                            &[]
                        },
                    }
                };
                let null_rate = if probed(index) {
                    profile.null_rate.max(PROBE_NULL_RATE)
                } else {
                    profile.null_rate
                };
                let from_base = base.map(|r| &r[index]);
                let (value, source) = value(column, profile, null_rate, planted, from_base, rng);
                if source == Source::Planted {
                    planted_columns.push(index);
                }
                value
            })
            .collect();
        align_with_original(&mut row, &planted_columns, originals);
        for fk in &table.foreign_keys {
            let parents: &[Vec<Value>] = if fk.parent == table_index {
                own_rows
            } else {
                &filled[fk.parent]
            };
            if parents.is_empty() {
                if fk.parent == table_index {
                    link_to_self(table, fk, &mut row);
                    continue;
                }
                // No parent row: NULL where the key may be NULL and the original has such NULLs
                // (a reference that always holds in the original data holds here too).
                if fk.columns.iter().any(|c| table.columns[*c].not_null)
                    || (learned && profiles[fk.columns[0]].null_rate == 0.0)
                {
                    return None;
                }
                for c in &fk.columns {
                    row[*c] = Value::Null;
                }
                continue;
            }
            let nullable = fk.columns.iter().all(|c| !table.columns[*c].not_null);
            if nullable && rng.f64() < profiles[fk.columns[0]].null_rate {
                for c in &fk.columns {
                    row[*c] = Value::Null;
                }
                continue;
            }
            // A natural row keeps the parent its original row names when that parent is here
            // (the model `volvo` stays Volvo's, not another maker's).
            let keeps_parent = |parent: &Vec<Value>| {
                fk.columns
                    .iter()
                    .zip(&fk.parent_columns)
                    .all(|(c, p)| same_value(&row[*c], &parent[*p]))
            };
            if mode.natural && parents.iter().any(keeps_parent) {
                continue;
            }
            let pick = rng.usize(..parents.len());
            let parent = &parents[if big_group { 0 } else { pick }];
            if fk
                .parent_columns
                .iter()
                .any(|p| matches!(parent[*p], Value::Null))
                && !nullable
            {
                return None;
            }
            for (c, p) in fk.columns.iter().zip(&fk.parent_columns) {
                row[*c] = parent[*p].clone();
            }
        }
        Some(row)
    }
}

/// The planted values a column may take.
struct Planted<'a> {
    /// Of the database's focus gold query.
    focus: &'a [Value],
    /// The focus gold query's exact constants of the column's kind.
    exact: &'a [Value],
    /// Of any gold query.
    all: &'a [Value],
    /// In a witness database, the constants the focus query compares the column with.
    witness: &'a [Value],
}

/// One column value: NULL (when allowed, at `null_rate`), a planted constant, a value of the original database,
/// or a fresh one.
fn value(
    column: &Column,
    profile: &ColumnProfile,
    null_rate: f64,
    planted: Planted<'_>,
    base: Option<&Value>,
    rng: &mut fastrand::Rng,
) -> (Value, Source) {
    // A NULL probe (a rate above the original's) comes first, so probes are not diluted.
    if !column.not_null && null_rate > profile.null_rate && rng.f64() < null_rate {
        return (Value::Null, Source::Original);
    }
    if let Some(value) = planted_value(&planted, rng) {
        return (coerce(value, column.affinity), Source::Planted);
    }
    if let Some(value) = base {
        if !(column.not_null && matches!(value, Value::Null)) {
            return (coerce(value.clone(), column.affinity), Source::Original);
        }
    }
    if !column.not_null && rng.f64() < null_rate {
        return (Value::Null, Source::Original);
    }
    let value = if base.is_none() && !profile.seen.is_empty() && rng.f64() < SEEN_CHANCE {
        profile.seen[rng.usize(..profile.seen.len())].clone()
    } else {
        fresh(column.affinity, profile, rng)
    };
    (coerce(value, column.affinity), Source::Original)
}

/// Where a generated value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// A gold constant or variant.
    Planted,
    /// The original data (a whole row or a column value), a fresh value, or NULL.
    Original,
}

/// A planted constant for the column, when one is drawn (the chances above).
fn planted_value(planted: &Planted<'_>, rng: &mut fastrand::Rng) -> Option<Value> {
    if !planted.witness.is_empty() && rng.f64() < WITNESS_PICK {
        Some(planted.witness[rng.usize(..planted.witness.len())].clone())
    } else if !planted.focus.is_empty() && rng.f64() < FOCUS_CHANCE {
        // Half of the time the exact constant: variants are many, the boundary value is one.
        if !planted.exact.is_empty() && rng.bool() {
            Some(planted.exact[rng.usize(..planted.exact.len())].clone())
        } else {
            Some(planted.focus[rng.usize(..planted.focus.len())].clone())
        }
    } else if !planted.all.is_empty() && rng.f64() < PLANTED_CHANCE {
        Some(planted.all[rng.usize(..planted.all.len())].clone())
    } else {
        None
    }
}

/// When a planted constant is a value of the original column, the row's other unplanted values
/// come from the original row that holds it (`Name = 'Aruba'` keeps Aruba's code).
fn align_with_original(row: &mut [Value], planted: &[usize], originals: &[Vec<Value>]) {
    let holder = planted.iter().find_map(|c| {
        originals
            .iter()
            .find(|original| same_value(&original[*c], &row[*c]))
    });
    let Some(holder) = holder else {
        return;
    };
    for (index, value) in row.iter_mut().enumerate() {
        if !planted.contains(&index) {
            *value = holder[index].clone();
        }
    }
}

fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(x), Value::Real(y)) | (Value::Real(y), Value::Int(x)) => *x as f64 == *y,
        (Value::Null, _) | (_, Value::Null) => false,
        _ => a == b,
    }
}

/// Makes `row` join the one group of a big-group table: the last column of each unique key
/// counts up with the rows (so keys stay distinct), every other column repeats the first
/// row's value; foreign keys already point to the first parent row and are kept.
fn one_group(table: &Table, row: &mut [Value], earlier: &[Vec<Value>]) {
    let counting: Vec<usize> = table
        .unique
        .iter()
        .filter_map(|key| key.last().copied())
        .collect();
    let serial = earlier.len();
    for (index, column) in table.columns.iter().enumerate() {
        if table
            .foreign_keys
            .iter()
            .any(|fk| fk.columns.contains(&index))
        {
            continue;
        }
        if counting.contains(&index) {
            row[index] = match column.affinity {
                Affinity::Integer | Affinity::Real => Value::Int(serial as i64 + 1),
                Affinity::Text => Value::Text(format!("k{}", serial + 1)),
            };
        } else if let Some(first) = earlier.first() {
            row[index] = first[index].clone();
        }
    }
}

/// A self-referencing key in the first row of its table points at the row itself.
fn link_to_self(table: &Table, fk: &super::constraints::ForeignKey, row: &mut [Value]) {
    for (c, p) in fk.columns.iter().zip(&fk.parent_columns) {
        row[*c] = if table.columns[*c].not_null {
            row[*p].clone()
        } else {
            Value::Null
        };
    }
}

/// A value not taken from any list: in the learned format for text, in the original column's
/// range for numbers (all of it, so that ties are as rare or common as in the original data;
/// seed 000 draws numbers from a range wide enough that ties come only from planted
/// constants).
/// A numeric column whose original values are all text (`Is_male` declared `bool` holding
/// 'T' / 'F') gets text in their format.
fn fresh(affinity: Affinity, profile: &ColumnProfile, rng: &mut fastrand::Rng) -> Value {
    let (low, high) = profile.range.unwrap_or((0.0, 100.0));
    let text_only = profile.range.is_none() && !profile.seen.is_empty();
    match affinity {
        Affinity::Integer | Affinity::Real if text_only => fresh(Affinity::Text, profile, rng),
        Affinity::Integer => {
            let (low, high) = (low.floor() as i64 - 2, high.ceil() as i64 + 2);
            Value::Int(rng.i64(low..=high))
        }
        Affinity::Real => {
            let value = low + (high - low + 2.0) * rng.f64() - 1.0;
            Value::Real((value * 10.0).round() / 10.0)
        }
        Affinity::Text => {
            let examples: Vec<&str> = profile
                .seen
                .iter()
                .filter_map(|v| match v {
                    Value::Text(s) => Some(s.as_str()),
                    _ => None,
                })
                .collect();
            if examples.is_empty() {
                let length = rng.usize(1..=6);
                Value::Text((0..length).map(|_| rng.char('a'..='f')).collect())
            } else {
                let example = examples[rng.usize(..examples.len())];
                let dated = profile
                    .dates
                    .and_then(|span| calendar_value(example, span, rng));
                Value::Text(dated.unwrap_or_else(|| same_format(example, rng)))
            }
        }
    }
}

/// The value SQLite would store in a column of this affinity, so that the generator's copy of
/// a row (used for children's foreign keys and for uniqueness) equals the stored one.
fn coerce(value: Value, affinity: Affinity) -> Value {
    match (&value, affinity) {
        (Value::Text(s), Affinity::Integer | Affinity::Real) => match s.trim().parse::<f64>() {
            Ok(n) if s.trim() == s && n.is_finite() => {
                if n.fract() == 0.0 && n.abs() < 9e15 {
                    Value::Int(n as i64)
                } else {
                    Value::Real(n)
                }
            }
            _ => value,
        },
        (Value::Real(f), Affinity::Integer | Affinity::Real)
            if f.fract() == 0.0 && f.abs() < 9e15 =>
        {
            Value::Int(*f as i64)
        }
        (Value::Int(i), Affinity::Text) => Value::Text(i.to_string()),
        (Value::Real(f), Affinity::Text) => Value::Text(python_float(*f)),
        _ => value,
    }
}

/// SQLite's text form of a real (`15.0`, `2.5`).
fn python_float(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e15 {
        format!("{f:.1}")
    } else {
        format!("{f}")
    }
}

fn to_sql(value: &Value) -> rusqlite::types::Value {
    match value {
        Value::Null => rusqlite::types::Value::Null,
        Value::Int(i) => rusqlite::types::Value::Integer(*i),
        Value::Real(f) => rusqlite::types::Value::Real(*f),
        Value::Text(s) => rusqlite::types::Value::Text(s.clone()),
        Value::Blob(b) => rusqlite::types::Value::Blob(b.clone()),
        Value::Py(value) => rusqlite::types::Value::Text(value.python_str()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::distill::values::{learn, Planted};

    /// `p(id, note)` and `c(id, p_id REFERENCES p, score)`: `note` and `score` nullable with
    /// no NULL in the data, `p_id` a nullable foreign key with one NULL in two rows.
    fn original() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE p (id INTEGER PRIMARY KEY, note TEXT);
             CREATE TABLE c (id INTEGER PRIMARY KEY, p_id INTEGER REFERENCES p(id), score REAL);
             INSERT INTO p VALUES (1, 'a'), (2, 'b');
             INSERT INTO c VALUES (1, 1, 2.5), (2, NULL, 7.0);",
        )
        .unwrap();
        conn
    }

    fn nulls(conn: &Connection, table: &str, column: &str) -> i64 {
        let sql = format!("SELECT count(*) FROM {table} WHERE {column} IS NULL");
        conn.query_row(&sql, [], |row| row.get(0)).unwrap()
    }

    #[test]
    fn nulls_appear_at_the_original_rate_only() {
        let conn = original();
        let constraints = Constraints::from_connection(&conn).unwrap();
        let profiles = learn(&conn, &constraints).unwrap();
        assert_eq!(profiles[0][1].null_rate, 0.0);
        assert_eq!(profiles[1][1].null_rate, 0.5);
        assert_eq!(profiles[1][2].range, Some((2.5, 7.0)));
        let planted = Planted::new(&constraints, &[]);
        let generator = Generator {
            constraints: &constraints,
            profiles: &profiles,
            originals: &vec![Vec::new(); constraints.tables.len()],
            planted: &planted,
            rows: (5, 20),
        };
        let (mut note, mut score, mut parent) = (0, 0, 0);
        for seed in 0..40 {
            let phase = [Phase::Natural, Phase::Capped, Phase::Free][seed as usize % 3];
            let db = generator.generate(seed, phase).unwrap();
            note += nulls(&db, "p", "note");
            score += nulls(&db, "c", "score");
            parent += nulls(&db, "c", "p_id");
        }
        assert_eq!((note, score), (0, 0));
        assert!(parent > 0);
    }
}
