//! Spider 2.0's result comparison (`compare_pandas_table` and `compare_multi_pandas_table` of
//! xlang-ai/Spider2 `spider2-lite/evaluation_suite/evaluate.py`), including the pandas round
//! trip every result makes there, and a sound variant of its `ignore_order`.
//!
//! Official pipeline: a predicted result is read with `pd.read_sql_query` in chunks of 500 rows,
//! each chunk appended to a CSV file with `to_csv`, and the file read back with `pd.read_csv`;
//! gold results are such CSV files. So values reach the comparison as `read_csv` types them:
//! per column int64, float64 (an integer column with a missing value becomes float), bool, or
//! text; `""`, `NULL`, `None`, `nan`, `N/A` ... are missing (NaN), and the text `007` is the
//! number 7. [`Frame::from_rows`] and [`Frame::from_csv`] reproduce that, and [`Frame::vectors`]
//! the lists `DataFrame.transpose().values.tolist()` gives (an all-numeric selection with a
//! float column turns its integers into floats).
//!
//! The comparison: every selected gold column (`condition_cols`, else all) must equal some
//! predicted column (extra predicted columns are allowed; one predicted column may serve several
//! gold columns). Two columns are equal when they have the same length and, pairwise, both
//! values are missing, or both are numbers with `math.isclose(a, b, abs_tol=1e-2)`, or they are
//! equal otherwise. With `ignore_order` the official code sorts each column on its own (by
//! `str(x)`) before comparing, which accepts rows whose values were scrambled across rows, and
//! misses tolerance matches the string order separates (`9.999` sorts after `9.0`, `10.0`
//! before). The sound variant ([`Semantics::Sound`]) instead requires one row permutation of the
//! prediction under which every gold column equals its predicted column in order.

use crate::engine::denotation::{perfect_matching, python_str};
pub use crate::engine::read_csv::Cell;
use crate::engine::read_csv::{infer, Column, Dtype};
use crate::engine::to_csv;
use crate::engine::value::{Row, Value};
use crate::input::config::Spider2Version;
use crate::input::csv::parse_csv;
use std::cmp::Ordering;

/// Rows per chunk of the official `pd.read_sql_query(..., chunksize=500)` export.
const EXPORT_CHUNK: usize = 500;
/// The official tolerance (`abs_tol` of `math.isclose`).
const TOLERANCE: f64 = 1e-2;
/// Most rows the sound variant matches row by row when sorting cannot align them.
const MAX_MATCHING_ROWS: usize = 2_000;
/// Most column assignments the sound variant tries before it gives up.
const MAX_ASSIGNMENTS: usize = 10_000;

/// A result table as the official code holds it after `pd.read_csv`.
#[derive(Debug, Clone)]
pub struct Frame {
    columns: Vec<Column>,
}

/// Which `ignore_order` semantics apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Semantics {
    /// The official code: each column sorted on its own.
    Official,
    /// One row permutation for every column; integers beyond 64 bits read as floats; a missing
    /// value equals only a missing value.
    Sound,
}

/// The comparison rules of one profile: its semantics and the `evaluate.py` it follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// Official or sound.
    pub semantics: Semantics,
    /// Which upstream `evaluate.py`.
    pub version: Spider2Version,
}

impl Rules {
    /// Whether missing values count as 0 (`normalize()` of the current `evaluate.py`).
    fn missing_is_zero(self) -> bool {
        self.semantics == Semantics::Official && self.version == Spider2Version::Current
    }

    /// Whether integers beyond 64 bits are read as floats (`spider2-sound`'s departure).
    fn big_integers_as_floats(self) -> bool {
        self.semantics == Semantics::Sound
    }
}

impl Frame {
    /// A gold result file's cells (`columns` columns), typed as `pd.read_csv` types them.
    pub fn from_csv(columns: usize, rows: &[Vec<String>], rules: Rules) -> Frame {
        let columns = (0..columns)
            .map(|c| {
                let tokens: Vec<&str> = rows.iter().map(|r| r[c].as_str()).collect();
                infer(&tokens, rules.big_integers_as_floats())
            })
            .collect();
        Frame { columns }
    }

    /// A query result (columns `names`) after the official export to CSV (in chunks of 500
    /// rows, `engine::to_csv`) and `pd.read_csv`; `Err` is why pandas cannot read the text back
    /// (a column name split by a bare CR).
    pub fn from_rows(names: &[String], rows: &[Row], rules: Rules) -> Result<Frame, String> {
        let width = names.len();
        let mut changed = to_csv::changed_by_round_trip(names, width);
        let mut columns = Vec::with_capacity(width);
        for c in 0..width {
            if changed {
                break;
            }
            let texts = export_column(rows, c);
            changed = to_csv::changed_by_round_trip(&texts, width);
            let tokens: Vec<&str> = texts.iter().map(String::as_str).collect();
            columns.push(infer(&tokens, rules.big_integers_as_floats()));
        }
        if !changed {
            return Ok(Frame { columns });
        }
        // Exported again rather than kept: the common path above holds one column's texts at a
        // time, and a large result would otherwise hold all of them for this rare case.
        let texts: Vec<Vec<String>> = (0..width).map(|c| export_column(rows, c)).collect();
        let table = parse_csv(&to_csv::write_csv(names, &texts))?;
        Ok(Frame::from_csv(table.columns.len(), &table.rows, rules))
    }

    /// How many columns the table has.
    pub fn width(&self) -> usize {
        self.columns.len()
    }

    /// How many rows the table has.
    pub fn height(&self) -> usize {
        self.columns.first().map_or(0, |c| c.cells.len())
    }

    /// The selected columns as `frame.iloc[:, selection].transpose().values.tolist()` gives
    /// them: when every selected column is numeric and they are not all int64 or all uint64,
    /// numpy's common type is float64 and the integers become floats.
    pub fn vectors(&self, selection: &[usize]) -> Vec<Vec<Cell>> {
        let dtypes: Vec<Dtype> = selection.iter().map(|&c| self.columns[c].dtype).collect();
        let numeric = !dtypes.contains(&Dtype::Other);
        let one_integer_kind =
            dtypes.iter().all(|d| *d == Dtype::Int) || dtypes.iter().all(|d| *d == Dtype::UInt);
        let as_float = numeric && !one_integer_kind;
        selection
            .iter()
            .map(|&c| {
                let cells = self.columns[c].cells.iter();
                match as_float {
                    true => cells
                        .map(|cell| match cell {
                            Cell::Int(i) => Cell::Float(*i as f64),
                            other => other.clone(),
                        })
                        .collect(),
                    false => cells.cloned().collect(),
                }
            })
            .collect()
    }
}

/// The texts `to_csv` writes for column `c` of `rows`, chunk by chunk.
fn export_column(rows: &[Row], c: usize) -> Vec<String> {
    rows.chunks(EXPORT_CHUNK)
        .flat_map(|chunk| export_chunk(chunk.iter().map(|r| &r[c])))
        .collect()
}

/// The texts `to_csv` writes for one column of one chunk, typed as `pd.read_sql_query` types
/// it: integers alone stay integers; integers with reals or NULLs become floats (`3.0`);
/// anything with text or bytes is written value by value (`str(x)`); NULL is empty.
fn export_chunk<'a>(values: impl Iterator<Item = &'a Value> + Clone) -> Vec<String> {
    let mut kinds = values.clone().map(|v| match v {
        Value::Null => 0,
        Value::Int(_) => 1,
        Value::Real(_) => 2,
        Value::Text(_) | Value::Blob(_) | Value::Py(_) => 3,
    });
    let all_int = kinds.clone().all(|k| k == 1);
    let numeric = kinds.clone().any(|k| k == 1 || k == 2) && !kinds.any(|k| k == 3);
    values
        .map(|v| match v {
            Value::Null => String::new(),
            Value::Int(i) if numeric && !all_int => python_str(&Value::Real(*i as f64)),
            other => python_str(other),
        })
        .collect()
}

/// The value as a number, when Python sees one (`isinstance(x, (int, float))`; NaN too).
fn number(cell: &Cell) -> Option<f64> {
    match cell {
        Cell::Na => Some(f64::NAN),
        Cell::Int(i) => Some(*i as f64),
        Cell::Float(f) => Some(*f),
        Cell::Bool(b) => Some(f64::from(u8::from(*b))),
        Cell::Str(_) => None,
    }
}

/// The official sort key of `ignore_order`: `(str(x), isinstance(x, (int, float)))`.
fn sort_key(cell: &Cell) -> (String, bool) {
    let text = match cell {
        Cell::Na => "nan".to_string(),
        Cell::Int(i) => i.to_string(),
        Cell::Float(f) => python_str(&Value::Real(*f)),
        Cell::Bool(b) => if *b { "True" } else { "False" }.to_string(),
        Cell::Str(s) => s.clone(),
    };
    (text, number(cell).is_some())
}

/// The official element test: both missing, or both numbers within the tolerance, or equal.
fn cells_match(a: &Cell, b: &Cell) -> bool {
    if *a == Cell::Na && *b == Cell::Na {
        return true;
    }
    match (number(a), number(b), a, b) {
        (Some(x), Some(y), _, _) => is_close(x, y),
        (_, _, Cell::Str(s), Cell::Str(t)) => s == t,
        _ => false,
    }
}

/// Python's `math.isclose(x, y, abs_tol=1e-2)` (with its default `rel_tol=1e-9`).
fn is_close(x: f64, y: f64) -> bool {
    if x == y {
        return true;
    }
    if x.is_infinite() || y.is_infinite() {
        return false;
    }
    let difference = (x - y).abs();
    difference <= 1e-9 * y.abs() || difference <= 1e-9 * x.abs() || difference <= TOLERANCE
}

/// The official `vectors_match`.
fn vectors_match(gold: &[Cell], pred: &[Cell], ignore_order: bool) -> bool {
    if gold.len() != pred.len() {
        return false;
    }
    if !ignore_order {
        return gold.iter().zip(pred).all(|(a, b)| cells_match(a, b));
    }
    let sorted = |cells: &[Cell]| -> Vec<Cell> {
        let mut keyed: Vec<((String, bool), &Cell)> =
            cells.iter().map(|c| (sort_key(c), c)).collect();
        keyed.sort_by(|a, b| a.0.cmp(&b.0));
        keyed.into_iter().map(|(_, c)| c.clone()).collect()
    };
    let (gold, pred) = (sorted(gold), sorted(pred));
    gold.iter().zip(&pred).all(|(a, b)| cells_match(a, b))
}

/// Whether `pred` answers `gold` on the gold columns `selection`: the official
/// `compare_pandas_table` (of the current `evaluate.py`, whose `normalize()` turns every missing
/// value into 0 first, or of 0c85cc21), or its sound variant. `Err` when the sound variant cannot decide
/// within its bounds.
pub fn tables_match(
    pred: &Frame,
    gold: &Frame,
    selection: &[usize],
    ignore_order: bool,
    rules: Rules,
) -> Result<bool, String> {
    let normalize = |vectors: Vec<Vec<Cell>>| -> Vec<Vec<Cell>> {
        if !rules.missing_is_zero() {
            return vectors;
        }
        let zero = |cell: Cell| if cell == Cell::Na { Cell::Int(0) } else { cell };
        vectors
            .into_iter()
            .map(|v| v.into_iter().map(zero).collect())
            .collect()
    };
    let gold = normalize(gold.vectors(selection));
    let pred = normalize(pred.vectors(&(0..pred.width()).collect::<Vec<_>>()));
    if rules.semantics == Semantics::Official || !ignore_order {
        return Ok(gold
            .iter()
            .all(|g| pred.iter().any(|p| vectors_match(g, p, ignore_order))));
    }
    SoundSearch::new(&gold, &pred).decide()
}

/// The sound `ignore_order`: a row permutation and, for each gold column, a predicted column
/// equal to it in order under that permutation.
struct SoundSearch<'a> {
    gold: Vec<&'a [Cell]>,
    pred: &'a [Vec<Cell>],
    /// `candidates[g]`: predicted columns holding the same values as gold column `g` (as bags).
    candidates: Vec<Vec<usize>>,
    tried: usize,
}

impl<'a> SoundSearch<'a> {
    fn new(gold: &'a [Vec<Cell>], pred: &'a [Vec<Cell>]) -> Self {
        let mut distinct: Vec<&[Cell]> = Vec::new();
        for column in gold {
            if !distinct.contains(&column.as_slice()) {
                distinct.push(column);
            }
        }
        let candidates = distinct
            .iter()
            .map(|g| {
                let mut seen: Vec<&[Cell]> = Vec::new();
                (0..pred.len())
                    .filter(|&p| {
                        let column = pred[p].as_slice();
                        let new = !seen.contains(&column);
                        seen.push(column);
                        new && g.len() == column.len()
                    })
                    .collect()
            })
            .collect();
        SoundSearch {
            gold: distinct,
            pred,
            candidates,
            tried: 0,
        }
    }

    fn decide(mut self) -> Result<bool, String> {
        let mut candidates = std::mem::take(&mut self.candidates);
        for (g, list) in candidates.iter_mut().enumerate() {
            let gold = self.gold[g];
            let mut kept = Vec::new();
            for &p in list.iter() {
                if self.rows_align(&[gold], &[&self.pred[p]])? {
                    kept.push(p);
                }
            }
            *list = kept;
        }
        self.candidates = candidates;
        if self.gold.is_empty() {
            return Ok(true);
        }
        let mut chosen = Vec::with_capacity(self.gold.len());
        self.extend(&mut chosen)
    }

    /// Backtracking over column assignments; every prefix must already align row by row.
    fn extend(&mut self, chosen: &mut Vec<usize>) -> Result<bool, String> {
        let g = chosen.len();
        if g == self.gold.len() {
            return Ok(true);
        }
        for p in self.candidates[g].clone() {
            chosen.push(p);
            let gold: Vec<&[Cell]> = self.gold[..=g].to_vec();
            let pred: Vec<&[Cell]> = chosen.iter().map(|&p| self.pred[p].as_slice()).collect();
            if self.rows_align(&gold, &pred)? && self.extend(chosen)? {
                return Ok(true);
            }
            chosen.pop();
        }
        Ok(false)
    }

    /// Whether the rows of `gold` (columns) can be paired one to one with the rows of `pred`
    /// (the same number of columns) so that every paired cell matches.
    fn rows_align(&mut self, gold: &[&[Cell]], pred: &[&[Cell]]) -> Result<bool, String> {
        self.tried += 1;
        if self.tried > MAX_ASSIGNMENTS {
            return Err(format!(
                "spider2-sound: more than {MAX_ASSIGNMENTS} column assignments to try"
            ));
        }
        let rows = gold.first().map_or(0, |c| c.len());
        let row = |columns: &[&[Cell]], r: usize| -> Vec<Cell> {
            columns.iter().map(|c| c[r].clone()).collect()
        };
        let sorted = |columns: &[&[Cell]]| -> Vec<Vec<Cell>> {
            let mut all: Vec<Vec<Cell>> = (0..rows).map(|r| row(columns, r)).collect();
            all.sort_by(|a, b| canonical_rows(a, b));
            all
        };
        let (sorted_gold, sorted_pred) = (sorted(gold), sorted(pred));
        let same = |a: &[Cell], b: &[Cell]| a.iter().zip(b).all(|(x, y)| cells_match(x, y));
        if sorted_gold
            .iter()
            .zip(&sorted_pred)
            .all(|(a, b)| same(a, b))
        {
            return Ok(true);
        }
        if rows > MAX_MATCHING_ROWS {
            return Err(format!(
                "spider2-sound: {rows} rows that sorting cannot align exceed the matching limit of {MAX_MATCHING_ROWS}"
            ));
        }
        let neighbours: Vec<Vec<usize>> = sorted_gold
            .iter()
            .map(|g| (0..rows).filter(|&p| same(g, &sorted_pred[p])).collect())
            .collect();
        Ok(perfect_matching(&neighbours, rows))
    }
}

/// A total order on rows of cells that keeps equal values together: missing, then numbers by
/// value, then text.
fn canonical_rows(a: &[Cell], b: &[Cell]) -> Ordering {
    let rank = |c: &Cell| match c {
        Cell::Na => 0,
        Cell::Str(_) => 2,
        _ => 1,
    };
    for (x, y) in a.iter().zip(b) {
        let ordering = rank(x).cmp(&rank(y)).then_with(|| match (x, y) {
            (Cell::Str(s), Cell::Str(t)) => s.cmp(t),
            _ => match (number(x), number(y)) {
                (Some(p), Some(q)) if !p.is_nan() && !q.is_nan() => p.total_cmp(&q),
                _ => Ordering::Equal,
            },
        });
        if ordering.is_ne() {
            return ordering;
        }
    }
    Ordering::Equal
}

#[cfg(test)]
mod tests {
    use super::*;
    use Value::{Int, Null, Real, Text};

    const OFFICIAL: Rules = Rules {
        semantics: Semantics::Official,
        version: Spider2Version::Current,
    };
    const JAN_2025: Rules = Rules {
        semantics: Semantics::Official,
        version: Spider2Version::Jan2025,
    };
    const SOUND: Rules = Rules {
        semantics: Semantics::Sound,
        version: Spider2Version::Current,
    };

    fn frame(rows: &[Row]) -> Frame {
        let names: Vec<String> = (0..rows.first().map_or(1, Vec::len))
            .map(|c| format!("c{c}"))
            .collect();
        Frame::from_rows(&names, rows, OFFICIAL).unwrap()
    }

    #[test]
    fn missing_is_zero_only_in_the_current_official_rules() {
        let gold = frame(&[vec![Null], vec![Int(2)]]);
        let pred = frame(&[vec![Real(0.004)], vec![Int(2)]]);
        let check = |rules| tables_match(&pred, &gold, &[0], false, rules);
        assert_eq!(check(OFFICIAL), Ok(true));
        assert_eq!(check(JAN_2025), Ok(false));
        assert_eq!(check(SOUND), Ok(false));
    }

    #[test]
    fn uint64_beside_int64_becomes_float() {
        let rows = [vec!["9223372036854775808".to_string(), "1".into()]];
        let frame = Frame::from_csv(2, &rows, OFFICIAL);
        assert_eq!(
            frame.vectors(&[0, 1]),
            [
                vec![Cell::Float(9.223372036854776e18)],
                vec![Cell::Float(1.0)]
            ]
        );
        assert_eq!(frame.vectors(&[0]), [vec![Cell::Int(1 << 63)]]);
    }

    #[test]
    fn export_turns_integers_with_nulls_into_floats_per_chunk() {
        let mut rows: Vec<Row> = (0..600).map(|i| vec![Int(i)]).collect();
        rows[0][0] = Text("a".into());
        rows[599][0] = Null;
        let texts: Vec<String> = rows
            .chunks(EXPORT_CHUNK)
            .flat_map(|c| export_chunk(c.iter().map(|r| &r[0])))
            .collect();
        assert_eq!((texts[499].as_str(), texts[500].as_str()), ("499", "500.0"));
        assert_eq!(texts[599], "");
    }

    #[test]
    fn scrambled_rows_pass_only_the_official_ignore_order() {
        let gold = frame(&[vec![Int(1), Int(2)], vec![Int(3), Int(4)]]);
        let pred = frame(&[vec![Int(1), Int(4)], vec![Int(3), Int(2)]]);
        let check = |rules| tables_match(&pred, &gold, &[0, 1], true, rules);
        assert_eq!(check(OFFICIAL), Ok(true));
        assert_eq!(check(SOUND), Ok(false));
        let reordered = frame(&[vec![Int(3), Int(4)], vec![Int(1), Int(2)]]);
        assert_eq!(
            tables_match(&reordered, &gold, &[0, 1], true, SOUND),
            Ok(true)
        );
    }

    #[test]
    fn tolerance_is_absolute_one_hundredth() {
        assert!(is_close(1.5, 1.509) && !is_close(1.5, 1.511) && is_close(1e12, 1e12 + 5.0));
        assert!(!cells_match(&Cell::Na, &Cell::Float(1.0)));
        assert!(cells_match(&Cell::Bool(true), &Cell::Int(1)));
        assert!(!cells_match(&Cell::Str("1".into()), &Cell::Int(1)));
        let gold = frame(&[vec![Real(10.0)], vec![Real(9.0)]]);
        let pred = frame(&[vec![Real(9.999)], vec![Real(9.0)]]);
        assert_eq!(tables_match(&pred, &gold, &[0], true, OFFICIAL), Ok(false));
        assert_eq!(tables_match(&pred, &gold, &[0], true, SOUND), Ok(true));
    }
}
