//! The audit's findings about a gold's row order: a LIMIT cut on tied rows (`limit-tie`, with
//! `suites::ties`' probes), tied rows in an ordered comparison (`order-tie`), a sort key holding
//! NULL (`null-order`) and numbers stored as text sorted as text (`text-number-sort`). Each is
//! reported once, on the first database (the item's, then its suite's) that shows it.

use super::{row_shown, shown_db, Context, Kind};
use crate::engine::profile::PreparedGold;
use crate::engine::value::{Row, Value};
use crate::suites::ties::{self, Probe, SortProbe};
use std::path::PathBuf;

/// The order findings of a gold on its databases, as (kind, evidence), in kind order.
pub(super) fn findings(
    context: &Context<'_>,
    prepared: &PreparedGold,
    databases: &[PathBuf],
) -> Vec<(Kind, String)> {
    let mut found: Vec<(Kind, String)> = Vec::new();
    let mut note = |kind: Kind, evidence: String| {
        if !found.iter().any(|(k, _)| *k == kind) {
            found.push((kind, evidence));
        }
    };
    let probes = ties::probes(&prepared.sql);
    let sort = ties::sort_probe(&prepared.sql);
    for db in databases {
        for probe in &probes {
            let Ok(rows) = context.executor.run(db, probe.sql()) else {
                continue;
            };
            if ties::tied(probe, &rows) {
                note(Kind::LimitTie, tie_evidence(probe, &rows, db));
            }
        }
        let Some(sort) = &sort else { continue };
        let Ok(rows) = context.executor.run(db, &sort.sql) else {
            continue;
        };
        for (kind, evidence) in sorted_rows(sort, &rows, prepared.order_matters) {
            note(kind, format!("on {}: {evidence}", shown_db(db)));
        }
    }
    found.sort_by_key(|(kind, _)| *kind);
    found
}

fn tie_evidence(probe: &Probe, rows: &[Row], db: &std::path::Path) -> String {
    match probe {
        Probe::Cut { limit, keys, .. } => {
            let key = |row: &Row| row_shown(&row[row.len() - keys..]);
            format!(
                "on {}: rows {limit} and {} tie on the sort key {} at the LIMIT {limit} cut",
                shown_db(db),
                limit + 1,
                key(&rows[limit - 1])
            )
        }
        Probe::Unordered { limit, .. } => format!(
            "on {}: LIMIT {limit} without ORDER BY keeps {limit} of more rows, not all alike: \
             which ones is the engine's scan order",
            shown_db(db)
        ),
        Probe::ArgRow { .. } => format!(
            "on {}: {} rows share the MIN / MAX value beside a bare column: {}",
            shown_db(db),
            rows.len(),
            super::rows_shown(rows)
        ),
    }
}

/// The findings the rows of a sort probe show (rows in the gold's order, its sort keys
/// appended): only where the order decides the answer (an ordered comparison, or a LIMIT that
/// cuts rows off).
pub(super) fn sorted_rows(
    sort: &SortProbe,
    rows: &[Row],
    order_matters: bool,
) -> Vec<(Kind, String)> {
    let keys = sort.keys.len();
    let cut = sort.limit.is_some_and(|limit| rows.len() > limit);
    if !(order_matters || cut) || rows.iter().any(|r| r.len() < keys) {
        return Vec::new();
    }
    let mut found = Vec::new();
    let key_values =
        |k: usize| -> Vec<&Value> { rows.iter().map(|r| &r[r.len() - keys + k]).collect() };
    for (k, name) in sort.keys.iter().enumerate() {
        let values = key_values(k);
        let nulls = values.iter().filter(|v| matches!(v, Value::Null)).count();
        if nulls > 0 && nulls < values.len() {
            found.push((
                Kind::NullOrder,
                format!(
                    "sort key `{name}` is NULL in {nulls} of {} rows (SQLite and MySQL sort NULL \
                     first ascending, PostgreSQL last)",
                    values.len()
                ),
            ));
        }
        if let Some(inversion) = text_number_inversion(&values) {
            found.push((Kind::TextNumberSort, inversion.evidence(name)));
        }
    }
    // Under a LIMIT only the rows it keeps are compared: a tie inside the cut leaves their order
    // undetermined (a tie across the cut is a `limit-tie`).
    let compared = &rows[..sort.limit.map_or(rows.len(), |limit| limit.min(rows.len()))];
    if order_matters {
        if let Some(evidence) = order_tie(compared, keys) {
            found.push((Kind::OrderTie, evidence));
        }
    }
    found
}

/// The share of a sort key's non-NULL values that must be texts parsing as numbers for the key
/// to count as numbers stored as text: nearly all, so a few other strings (`'null'`, `'-'`) do
/// not hide it, while a column of words with a few numbers is not one.
pub(super) const TEXT_NUMBER_SHARE: f64 = 0.9;

/// Two texts of a sort key of numbers stored as text whose text order and numeric order
/// disagree, and how many of the key's non-NULL values are such numbers.
struct Inversion {
    before: String,
    after: String,
    numbers: usize,
    values: usize,
}

impl Inversion {
    /// The evidence of the finding on the sort key `name`.
    fn evidence(&self, name: &str) -> String {
        let share = match self.numbers == self.values {
            true => String::new(),
            false => format!(
                " ({} of its {} non-NULL values are numbers)",
                self.numbers, self.values
            ),
        };
        format!(
            "sort key `{name}` holds numbers stored as text{share}: '{}' sorts before '{}' as \
             text, after it as a number",
            self.before, self.after
        )
    }
}

/// Two values of a column of numbers stored as text (at least [`TEXT_NUMBER_SHARE`] of the
/// non-NULL values texts that parse as numbers) whose text order and numeric order disagree.
fn text_number_inversion(values: &[&Value]) -> Option<Inversion> {
    let present: Vec<&&Value> = values
        .iter()
        .filter(|v| !matches!(v, Value::Null))
        .collect();
    let mut numbers: Vec<(&str, f64)> = present
        .iter()
        .filter_map(|value| match value {
            Value::Text(text) => Some((text.as_str(), number(text)?)),
            _ => None,
        })
        .collect();
    let counted = numbers.len();
    if counted < 2 || (counted as f64) < TEXT_NUMBER_SHARE * present.len() as f64 {
        return None;
    }
    numbers.sort_by(|a, b| a.0.cmp(b.0));
    numbers.dedup_by(|a, b| a.0 == b.0);
    let pair = numbers.windows(2).find(|pair| pair[0].1 > pair[1].1)?;
    Some(Inversion {
        before: pair[0].0.to_string(),
        after: pair[1].0.to_string(),
        numbers: counted,
        values: present.len(),
    })
}

/// The number a text holds, when it is one (finite: `'inf'` and `'NaN'` are words here).
fn number(text: &str) -> Option<f64> {
    text.trim().parse::<f64>().ok().filter(|n| n.is_finite())
}

/// Adjacent rows with the same sort keys that project different values.
fn order_tie(rows: &[Row], keys: usize) -> Option<String> {
    rows.windows(2).enumerate().find_map(|(i, pair)| {
        let width = pair[0].len() - keys;
        (pair[0][width..] == pair[1][width..] && pair[0][..width] != pair[1][..width]).then(|| {
            format!(
                "rows {} and {} tie on the sort key {} but differ: {} and {}",
                i + 1,
                i + 2,
                row_shown(&pair[0][width..]),
                row_shown(&pair[0][..width]),
                row_shown(&pair[1][..width])
            )
        })
    })
}
