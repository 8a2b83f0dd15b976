//! The sound variant of `duckdb_match`: rows, not columns one by one (see the module above).

use super::*;

/// Most rows the sound variant pairs by bipartite matching when sorting cannot align them.
const MAX_MATCHING_ROWS: usize = 2_000;
/// Most column assignments the sound variant tries before it gives up.
const MAX_ASSIGNMENTS: usize = 10_000;

/// Whether two values are equal to the sound variant: NULL only to NULL, NaN only to NaN,
/// integers exactly, a float within 1e-2 of a number, text and datetimes exactly, `True` as 1.
pub(super) fn sound_equal(a: &Py, b: &Py) -> bool {
    match (a, b) {
        (Py::Float(x), Py::Float(y)) if x.is_nan() || y.is_nan() => x.is_nan() && y.is_nan(),
        (x, y) if x.is_missing() || y.is_missing() => x.is_missing() && y.is_missing(),
        (Py::Int(x), Py::Int(y)) => x == y,
        (Py::Bool(x), Py::Bool(y)) => x == y,
        (Py::Bool(x), Py::Int(y)) | (Py::Int(y), Py::Bool(x)) => i128::from(u8::from(*x)) == *y,
        (Py::Float(_), _) | (_, Py::Float(_)) => match (a.number(), b.number()) {
            (Some(x), Some(y)) => x == y || (x - y).abs() <= TOLERANCE,
            _ => false,
        },
        (Py::Array(x), Py::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| sound_equal(p, q))
        }
        _ => same_kind_equal(a, b),
    }
}

/// A total order on values that keeps sound-equal values together: missing, numbers by value,
/// text, datetimes.
fn canonical(a: &Py, b: &Py) -> Ordering {
    let rank = |p: &Py| match p {
        _ if p.is_missing() => 0,
        Py::Int(_) | Py::Float(_) | Py::Bool(_) => 1,
        Py::Str(_) => 2,
        Py::Stamp(..) => 3,
        Py::StampTz(..) => 4,
        Py::Time(..) => 5,
        Py::Delta(..) => 6,
        Py::Bytes(_) => 7,
        Py::Uuid(_) => 8,
        _ => 9,
    };
    rank(a).cmp(&rank(b)).then_with(|| match (a, b) {
        (Py::Str(x), Py::Str(y)) => x.cmp(y),
        (Py::Stamp(x, _), Py::Stamp(y, _))
        | (Py::StampTz(x, _), Py::StampTz(y, _))
        | (Py::Time(x, _), Py::Time(y, _))
        | (Py::Delta(x, _), Py::Delta(y, _)) => x.cmp(y),
        (Py::Bytes(x), Py::Bytes(y)) => x.cmp(y),
        (Py::Uuid(x), Py::Uuid(y)) => x.cmp(y),
        (Py::Array(x), Py::Array(y)) => (x.iter().zip(y))
            .map(|(p, q)| canonical(p, q))
            .find(|o| o.is_ne())
            .unwrap_or_else(|| x.len().cmp(&y.len())),
        _ => match (a.number(), b.number()) {
            (Some(x), Some(y)) => x.total_cmp(&y),
            _ => Ordering::Equal,
        },
    })
}

/// The sound comparison of `pred` with the gold's `condition` columns: a distinct predicted
/// column for each selected gold column and one row order (the given one without
/// `ignore_order`) under which every cell is [`sound_equal`]. `Err` when it cannot decide
/// within its bounds.
pub fn sound_match(
    pred: &Frame,
    gold: &Frame,
    condition: &[i64],
    ignore_order: bool,
) -> Result<bool, String> {
    let selected = match selection(condition, gold.width()) {
        Ok(selected) => selected,
        Err(_) => return Ok(false),
    };
    if gold.height != pred.height {
        return Ok(false);
    }
    let gold_columns: Vec<&[Py]> = (selected.iter())
        .map(|&i| gold.columns[i].declared.as_slice())
        .collect();
    let pred_columns: Vec<&[Py]> = (pred.columns.iter())
        .map(|c| c.declared.as_slice())
        .collect();
    let mut search = Assignment {
        gold: gold_columns,
        pred: pred_columns,
        ignore_order,
        rows: gold.height,
        tried: 0,
    };
    search.extend(&mut Vec::new())
}

/// The backtracking search of [`sound_match`].
struct Assignment<'a> {
    gold: Vec<&'a [Py]>,
    pred: Vec<&'a [Py]>,
    ignore_order: bool,
    rows: usize,
    tried: usize,
}

impl Assignment<'_> {
    /// Extends `chosen` (predicted column per gold column so far) to every gold column.
    fn extend(&mut self, chosen: &mut Vec<usize>) -> Result<bool, String> {
        if chosen.len() == self.gold.len() {
            return Ok(true);
        }
        for p in 0..self.pred.len() {
            if chosen.contains(&p) {
                continue;
            }
            chosen.push(p);
            if self.aligned(chosen)? && self.extend(chosen)? {
                return Ok(true);
            }
            chosen.pop();
        }
        Ok(false)
    }

    /// Whether the gold columns so far and their chosen predicted columns hold the same rows
    /// (in order, or as bags with `ignore_order`).
    fn aligned(&mut self, chosen: &[usize]) -> Result<bool, String> {
        self.tried += 1;
        if self.tried > MAX_ASSIGNMENTS {
            return Err(format!(
                "more than {MAX_ASSIGNMENTS} column assignments to try"
            ));
        }
        let row = |columns: &[&[Py]], r: usize| -> Vec<Py> {
            columns.iter().map(|c| c[r].clone()).collect()
        };
        let gold_part = &self.gold[..chosen.len()];
        let pred_part: Vec<&[Py]> = chosen.iter().map(|&p| self.pred[p]).collect();
        let same = |a: &[Py], b: &[Py]| a.iter().zip(b).all(|(x, y)| sound_equal(x, y));
        if !self.ignore_order {
            return Ok((0..self.rows).all(|r| same(&row(gold_part, r), &row(&pred_part, r))));
        }
        let sorted = |columns: &[&[Py]]| -> Vec<Vec<Py>> {
            let mut all: Vec<Vec<Py>> = (0..self.rows).map(|r| row(columns, r)).collect();
            all.sort_by(|a, b| {
                (a.iter().zip(b))
                    .map(|(x, y)| canonical(x, y))
                    .find(|o| o.is_ne())
                    .unwrap_or(Ordering::Equal)
            });
            all
        };
        let (gold_rows, pred_rows) = (sorted(gold_part), sorted(&pred_part));
        if gold_rows.iter().zip(&pred_rows).all(|(a, b)| same(a, b)) {
            return Ok(true);
        }
        if self.rows > MAX_MATCHING_ROWS {
            return Err(format!(
                "{} rows that sorting cannot align exceed the matching limit of {MAX_MATCHING_ROWS}",
                self.rows
            ));
        }
        let neighbours: Vec<Vec<usize>> = (gold_rows.iter())
            .map(|g| (0..self.rows).filter(|&p| same(g, &pred_rows[p])).collect())
            .collect();
        Ok(perfect_matching(&neighbours, self.rows))
    }
}
