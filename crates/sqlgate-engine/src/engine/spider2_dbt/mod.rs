//! Spider 2.0-DBT's table comparison: `duckdb_match` of xlang-ai/Spider2
//! `spider2-dbt/evaluation_suite/eval_utils.py` at e12c5f1e6550a5df88995520c3bf00bbe7bad2d2
//! (unchanged since 90985da3, 2025-07-25), and a sound variant.
//!
//! Official: each table of `condition_tabs` is read from the gold and from the predicted file
//! with `SELECT * FROM {name}` (the name pasted in unquoted) and `fetchdf()`; the gold's
//! `condition_cols` columns (all when `[]`) are turned into lists by
//! `DataFrame.transpose().values.tolist()`, the predicted table's columns (all of them) likewise,
//! and every gold list must equal some predicted list under `vectors_match` (`ignore_order`:
//! each list sorted on its own by `(x is None, str(x), isinstance(x, (int, float)))`; values
//! equal when both are missing, both numbers with `math.isclose(a, b, abs_tol=1e-2)` (its
//! relative tolerance 1e-9 kept), or `==`; any exception is "not equal"). [`Frame::official`]
//! reproduces the values pandas hands over, dtype by dtype (`DuckDB` 1.5.6's `fetchdf`, pandas
//! 2.2.3): integers without NULL stay `int` unless a float or a mix of int64 and uint64 is in
//! the same frame (then `float`), an integer or boolean column with a NULL is a nullable column
//! (`pd.NA`) that makes the frame `object`, `DECIMAL` / `HUGEINT` / `DOUBLE` are float64 (NULL is
//! NaN), `DATE` / `TIMESTAMP` are `datetime` (`None` for NULL) in a frame of only such columns,
//! else `Timestamp` (`NaT`), `INTERVAL` likewise `timedelta` / `Timedelta`, `TIMESTAMPTZ` an
//! aware `Timestamp`, `ENUM` a categorical (NULL is NaN), `BLOB` / `TIME` / `UUID` `bytearray`
//! / `time` / `UUID` (NULL `pd.NA`), `LIST` / `ARRAY` numpy arrays (see `vectors_match`);
//! `UHUGEINT`, `BIGNUM` and a `TIMETZ` with rows make `fetchdf()` raise (0). Other column types
//! (`STRUCT`, `MAP`, ...) are not reproduced: the verdict is unavailable with the reason.
//!
//! Sound ([`sound_match`]): rows, not columns one by one: one row permutation (with
//! `ignore_order`, else the rows in order) and a distinct predicted column per gold column such
//! that every cell matches; values keep their declared types (an integer is exact, a float
//! matches within 1e-2 absolute, a NULL only a NULL, text never a number, a list element by
//! element), and names are quoted.

use crate::engine::denotation::{perfect_matching, python_str};
use crate::engine::duckdb::tables::{ColumnType, LockedFile, ReadError, TypedTable};
use crate::engine::duckdb::Cell;
use crate::engine::exec::{ExecError, Limits};
use crate::engine::pyvalue::PyValue;
use crate::engine::value::Value;
use std::cmp::Ordering;
use std::path::Path;

/// `math.isclose`'s `abs_tol` in `vectors_match`.
const TOLERANCE: f64 = 1e-2;
/// `math.isclose`'s default `rel_tol`.
const RELATIVE: f64 = 1e-9;

mod py;
mod sound;

pub use py::Py;
use py::{timedelta_text, EPOCH_ORDINAL, MICROS_PER_DAY};
pub use sound::sound_match;

/// The dtype `fetchdf()` gives a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dtype {
    /// A numpy integer without NULL: (unsigned, bits).
    Int(bool, u8),
    /// float32 / float64 (its bits).
    Float(u8),
    /// numpy bool.
    Bool,
    /// A nullable `Int*` or `boolean` extension column (it held a NULL).
    Nullable,
    /// object (text).
    Object,
    /// datetime64[us].
    Datetime,
    /// timedelta64[us].
    Timedelta,
    /// datetime64[us, tz] (its values are `Timestamp` objects in any frame).
    DatetimeTz,
}

/// One column: its dtype and its values as Python objects in the column's own type.
#[derive(Debug, Clone)]
struct Column {
    dtype: Dtype,
    cells: Vec<Py>,
    /// The values in their declared types, for the sound variant: a `HUGEINT` stays an exact
    /// integer, a NULL is `None` (a stored NaN stays a float).
    declared: Vec<Py>,
}

/// A table read from a `.duckdb` file, typed as `fetchdf()` types it.
#[derive(Debug, Clone)]
pub struct Frame {
    columns: Vec<Column>,
    height: usize,
}

impl Frame {
    /// The frame of `table`; a column type the official pipeline is not reproduced for is an
    /// error naming it.
    pub fn from_table(table: &TypedTable) -> Result<Frame, String> {
        let mut columns = Vec::with_capacity(table.types.len());
        for (index, (column_type, name)) in table.types.iter().zip(&table.names).enumerate() {
            let values: Vec<&Cell> = table.rows.iter().map(|row| &row[index]).collect();
            let cells = values
                .iter()
                .map(|value| cell(value, *column_type))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|why| format!("column `{name}`: {why}"))?;
            let declared = (values.iter())
                .map(|value| declared_cell(value, *column_type))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|why| format!("column `{name}`: {why}"))?;
            let has_null = (values.iter()).any(|v| matches!(v, Cell::Value(Value::Null)));
            let dtype = match column_type {
                ColumnType::Signed(_) | ColumnType::Unsigned(_) | ColumnType::Boolean
                    if has_null =>
                {
                    Dtype::Nullable
                }
                ColumnType::Signed(bits) => Dtype::Int(false, *bits),
                ColumnType::Unsigned(bits) => Dtype::Int(true, *bits),
                ColumnType::Float => Dtype::Float(32),
                ColumnType::Double | ColumnType::HugeInt => Dtype::Float(64),
                ColumnType::Boolean => Dtype::Bool,
                ColumnType::Text
                | ColumnType::Enum
                | ColumnType::Blob
                | ColumnType::Time
                | ColumnType::Uuid
                | ColumnType::List
                | ColumnType::TimeTz => Dtype::Object,
                ColumnType::Timestamp => Dtype::Datetime,
                ColumnType::Interval => Dtype::Timedelta,
                ColumnType::TimestampTz => Dtype::DatetimeTz,
                ColumnType::Other(_) | ColumnType::Unconvertible(_) => {
                    return Err(format!(
                        "column `{name}`: DuckDB type {column_type:?} is not reproduced (only integers, FLOAT, DOUBLE, DECIMAL, HUGEINT, BOOLEAN, VARCHAR, ENUM, DATE, TIMESTAMP, TIMESTAMPTZ, TIME, INTERVAL, BLOB, UUID, LIST, ARRAY)"
                    ))
                }
            };
            columns.push(Column {
                dtype,
                cells,
                declared,
            });
        }
        Ok(Frame {
            columns,
            height: table.rows.len(),
        })
    }

    /// Its column count.
    pub fn width(&self) -> usize {
        self.columns.len()
    }

    /// `frame.iloc[:, selection].transpose().values.tolist()`: the selected columns as the lists
    /// of Python objects the official code compares (the frame's common dtype decides them).
    fn official(&self, selection: &[usize]) -> Vec<Vec<Py>> {
        let dtypes: Vec<Dtype> = selection.iter().map(|&i| self.columns[i].dtype).collect();
        let common = common_dtype(&dtypes);
        selection
            .iter()
            .map(|&i| {
                let column = &self.columns[i];
                (column.cells.iter())
                    .map(|c| interleaved(c, common))
                    .collect()
            })
            .collect()
    }
}

/// The Python object of one DuckDB value of `column_type` (NULL as the column's own missing
/// value: NaN in a float or categorical column, `NaT` in a datetime or timedelta one, `pd.NA` in
/// a nullable or other object one, `None` in text).
fn cell(value: &Cell, column_type: ColumnType) -> Result<Py, String> {
    let value = match value {
        Cell::Value(value) => value,
        Cell::List(items) => {
            return items
                .iter()
                .map(declared_of)
                .collect::<Result<_, _>>()
                .map(Py::Array)
        }
        Cell::Uuid(bits) => return Ok(Py::Uuid(*bits)),
    };
    Ok(match (value.clone(), column_type) {
        (
            Value::Null,
            ColumnType::Float | ColumnType::Double | ColumnType::HugeInt | ColumnType::Enum,
        ) => Py::Float(f64::NAN),
        (Value::Null, ColumnType::Timestamp | ColumnType::Interval | ColumnType::TimestampTz) => {
            Py::NaT
        }
        (Value::Null, ColumnType::Text) => Py::None,
        (Value::Null, _) => Py::Na,
        (Value::Int(i), ColumnType::Double | ColumnType::HugeInt) => Py::Float(i as f64),
        (Value::Py(py), ColumnType::Double | ColumnType::HugeInt) => match py.as_ref() {
            PyValue::Decimal(d) => {
                Py::Float(d.text.parse().map_err(|_| format!("DECIMAL {}", d.text))?)
            }
            other => return Err(format!("{} is not reproduced", other.python_type_name())),
        },
        (Value::Py(py), ColumnType::Interval) => match py.as_ref() {
            PyValue::TimeDelta(micros) => Py::Delta(*micros, timedelta_text(*micros)),
            other => return Err(format!("{} is not reproduced", other.python_type_name())),
        },
        (value, _) => declared_of(&Cell::Value(value))?,
    })
}

/// The Python object of a value by its own type (a list's element, or a scalar whose column
/// type does not change it): a big integer exact, a `DECIMAL` with a fraction a float.
fn declared_of(value: &Cell) -> Result<Py, String> {
    let value = match value {
        Cell::Value(value) => value,
        Cell::List(items) => {
            return items
                .iter()
                .map(declared_of)
                .collect::<Result<_, _>>()
                .map(Py::Array)
        }
        Cell::Uuid(bits) => return Ok(Py::Uuid(*bits)),
    };
    Ok(match value.clone() {
        Value::Null => Py::None,
        Value::Int(i) => Py::Int(i128::from(i)),
        Value::Real(f) => Py::Float(f),
        Value::Text(s) => Py::Str(s),
        Value::Blob(bytes) => Py::Bytes(bytes),
        Value::Py(py) => match py.as_ref() {
            PyValue::Bool(b) => Py::Bool(*b),
            PyValue::Decimal(d) => match d.text.parse::<i128>() {
                Ok(integer) => Py::Int(integer),
                Err(_) => Py::Float(d.text.parse().map_err(|_| format!("DECIMAL {}", d.text))?),
            },
            PyValue::Date(date) => Py::Stamp(
                (date.ordinal() - EPOCH_ORDINAL) * MICROS_PER_DAY,
                format!("{} 00:00:00", date.iso()),
            ),
            PyValue::DateTime { date, time, offset } => {
                let local = (date.ordinal() - EPOCH_ORDINAL) * MICROS_PER_DAY + time.micros();
                match offset {
                    None => Py::Stamp(local, py.python_str()),
                    Some(seconds) => {
                        Py::StampTz(local - i64::from(*seconds) * 1_000_000, py.python_str())
                    }
                }
            }
            PyValue::Time(time) => Py::Time(time.micros(), time.iso()),
            PyValue::TimeDelta(micros) => Py::Delta(*micros, timedelta_text(*micros)),
            other => return Err(format!("{} is not reproduced", other.python_type_name())),
        },
    })
}

/// The value of one DuckDB value in its declared type (the sound variant's): NULL is `None`,
/// an integer of any width (`HUGEINT` included) exact, `DECIMAL` a float.
fn declared_cell(value: &Cell, column_type: ColumnType) -> Result<Py, String> {
    match (value, column_type) {
        (Cell::Value(Value::Null), _) => Ok(Py::None),
        (Cell::Value(Value::Py(py)), ColumnType::HugeInt) => {
            let text = py.python_str();
            text.parse()
                .map(Py::Int)
                .map_err(|_| format!("integer {text}"))
        }
        (Cell::Value(Value::Int(i)), _) => Ok(Py::Int(i128::from(*i))),
        _ => cell(value, column_type),
    }
}

/// The dtype of `DataFrame.values` over `dtypes` (pandas' `find_common_type`): `None` for
/// object.
fn common_dtype(dtypes: &[Dtype]) -> Option<Dtype> {
    let first = *dtypes.first()?;
    if dtypes.iter().all(|d| *d == Dtype::Bool) {
        return Some(Dtype::Bool);
    }
    if dtypes.iter().all(|d| *d == Dtype::Datetime) {
        return Some(Dtype::Datetime);
    }
    if dtypes.iter().all(|d| *d == Dtype::Timedelta) {
        return Some(Dtype::Timedelta);
    }
    if !dtypes
        .iter()
        .all(|d| matches!(d, Dtype::Int(..) | Dtype::Float(_)))
    {
        return None;
    }
    let ints = || {
        dtypes.iter().filter_map(|d| match d {
            Dtype::Int(u, b) => Some((*u, *b)),
            _ => None,
        })
    };
    let floats: Vec<u8> = (dtypes.iter())
        .filter_map(|d| match d {
            Dtype::Float(bits) => Some(*bits),
            _ => None,
        })
        .collect();
    if floats.is_empty() {
        let unsigned64 = ints().any(|(u, b)| u && b == 64);
        let signed = ints().any(|(u, _)| !u);
        return Some(match unsigned64 && signed {
            true => Dtype::Float(64),
            false => first,
        });
    }
    let narrow = floats.iter().all(|b| *b == 32) && ints().all(|(_, bits)| bits <= 16);
    Some(Dtype::Float(if narrow { 32 } else { 64 }))
}

/// A cell in an array of the common dtype (`None`: object).
fn interleaved(cell: &Py, common: Option<Dtype>) -> Py {
    match (common, cell) {
        (Some(Dtype::Float(32)), Py::Int(i)) => Py::Float(f64::from(*i as f32)),
        (Some(Dtype::Float(_)), Py::Int(i)) => Py::Float(*i as f64),
        (Some(Dtype::Datetime | Dtype::Timedelta), Py::NaT) => Py::None,
        (Some(Dtype::Timedelta), Py::Delta(micros, _)) => {
            Py::Delta(*micros, PyValue::TimeDelta(*micros).python_str())
        }
        _ => cell.clone(),
    }
}

/// `vectors_match` with `ignore_order_`; `None` when it is not reproduced (a one-element
/// array is met: numpy's truth value and `!=` of one are not modelled).
///
/// An array of any other length makes its pair raise, whatever it is paired with (`pd.isna` of
/// it, or `!=` against it, is an array whose truth value is ambiguous; numpy 2 refuses an empty
/// one's too), and every pair is reached unless an earlier one fails: so a vector holding one
/// never matches, the issue's "never matches a column of lists of two or more elements".
fn vectors_match(gold: &[Py], pred: &[Py], ignore_order: bool) -> Option<bool> {
    if gold.len() != pred.len() {
        return Some(false);
    }
    let arrays = || {
        (gold.iter().chain(pred)).filter_map(|x| match x {
            Py::Array(items) => Some(items.len()),
            _ => None,
        })
    };
    if arrays().any(|length| length != 1) {
        return Some(false);
    }
    if arrays().next().is_some() {
        return None;
    }
    Some(scalar_vectors_match(gold, pred, ignore_order))
}

/// `vectors_match` on equally long vectors without arrays.
fn scalar_vectors_match(gold: &[Py], pred: &[Py], ignore_order: bool) -> bool {
    let sorted = |v: &[Py]| -> Vec<Py> {
        let mut keyed: Vec<((bool, String, bool), &Py)> = (v.iter())
            .map(|x| ((*x == Py::None, x.text(), x.number().is_some()), x))
            .collect();
        keyed.sort_by(|a, b| a.0.cmp(&b.0));
        keyed.into_iter().map(|(_, x)| x.clone()).collect()
    };
    if ignore_order {
        let (gold, pred) = (sorted(gold), sorted(pred));
        return gold.iter().zip(&pred).all(|(a, b)| official_equal(a, b));
    }
    gold.iter().zip(pred).all(|(a, b)| official_equal(a, b))
}

/// One pair of `vectors_match`: both missing, both numbers within `math.isclose`, or `==`
/// (`pd.NA` against a value raises there, which is "not equal").
fn official_equal(a: &Py, b: &Py) -> bool {
    if a.is_na() && b.is_na() {
        return true;
    }
    match (a.number(), b.number()) {
        (Some(x), Some(y)) => is_close(x, y),
        _ => same_kind_equal(a, b),
    }
}

/// `==` between two non-numeric values: equal only within one kind (text, naive or aware
/// datetimes, times, timedeltas, bytes, UUIDs), by value; other pairs are unequal or raise.
fn same_kind_equal(a: &Py, b: &Py) -> bool {
    match (a, b) {
        (Py::Str(x), Py::Str(y)) => x == y,
        (Py::Stamp(x, _), Py::Stamp(y, _))
        | (Py::StampTz(x, _), Py::StampTz(y, _))
        | (Py::Time(x, _), Py::Time(y, _))
        | (Py::Delta(x, _), Py::Delta(y, _)) => x == y,
        (Py::Bytes(x), Py::Bytes(y)) => x == y,
        (Py::Uuid(x), Py::Uuid(y)) => x == y,
        _ => false,
    }
}

/// `math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-2)`.
fn is_close(a: f64, b: f64) -> bool {
    if a == b {
        return true;
    }
    if a.is_infinite() || b.is_infinite() {
        return false;
    }
    let diff = (b - a).abs();
    diff <= (RELATIVE * b).abs() || diff <= (RELATIVE * a).abs() || diff <= TOLERANCE
}

/// The gold columns `condition_cols` selects (`[]`: all; negative indexes count from the end,
/// as `iloc`), or the `IndexError` the official code raises.
pub fn selection(condition: &[i64], width: usize) -> Result<Vec<usize>, String> {
    if condition.is_empty() {
        return Ok((0..width).collect());
    }
    let signed_width = width as i64;
    condition
        .iter()
        .map(|&c| {
            let index = if c < 0 { c + signed_width } else { c };
            (0..signed_width)
                .contains(&index)
                .then_some(index as usize)
                .ok_or_else(|| {
                    format!("IndexError: condition column {c} of a {width}-column gold table")
                })
        })
        .collect()
}

/// The official `compare_pandas_table(pred, gold, condition_cols, ignore_order)`: every selected
/// gold column equals some predicted column; `Err` where the official code raises, `Ok(None)`
/// when a comparison that decides it is not reproduced (three-valued: a column matched
/// elsewhere, or a gold column no predicted column can match, decides without it).
pub fn official_match(
    pred: &Frame,
    gold: &Frame,
    condition: &[i64],
    ignore_order: bool,
) -> Result<Option<bool>, String> {
    let selected = selection(condition, gold.width())?;
    let gold_lists = gold.official(&selected);
    let pred_lists = pred.official(&(0..pred.width()).collect::<Vec<_>>());
    let any = |g: &Vec<Py>| {
        let outcomes: Vec<Option<bool>> = (pred_lists.iter())
            .map(|p| vectors_match(g, p, ignore_order))
            .collect();
        match outcomes.contains(&Some(true)) {
            true => Some(true),
            false => outcomes.iter().all(Option::is_some).then_some(false),
        }
    };
    let outcomes: Vec<Option<bool>> = gold_lists.iter().map(any).collect();
    Ok(match outcomes.contains(&Some(false)) {
        true => Some(false),
        false => outcomes.iter().all(Option::is_some).then_some(true),
    })
}

/// Whether `name` is read by the official `SELECT * FROM {name}` as that relation: one to three
/// dot-separated plain identifiers. Any other name (a space, a hyphen, a quote) makes DuckDB's
/// parser refuse the query or read another relation.
pub fn is_plain_name(name: &str) -> bool {
    let part = |p: &str| {
        let mut chars = p.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let parts: Vec<&str> = name.split('.').collect();
    parts.len() <= 3 && parts.iter().all(|p| part(p))
}

/// `name` as a quoted DuckDB identifier.
pub fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// One instance's verdict under one profile.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Every table matches (score 1).
    Match,
    /// Score 0, with the reason (a table that differs, or where the official code raises).
    Mismatch(String),
    /// The predicted file could not be read within the limits (a deadline, a cap): score 0,
    /// charged to the prediction as a failing query is.
    PredFailure(ExecError),
    /// The gold file or one of its tables could not be read: not the prediction's fault.
    GoldFailure(String),
    /// Not decided: a column type or a comparison the official pipeline is not reproduced for,
    /// or the sound search beyond its bounds.
    Unavailable(String),
}

/// What to compare: `condition_tabs`, `condition_cols` and `ignore_orders`, one entry per table.
#[derive(Debug, Clone, Copy)]
pub struct Tables<'a> {
    /// The table names.
    pub names: &'a [String],
    /// The gold columns compared per table (`[]`: all).
    pub conditions: &'a [Vec<i64>],
    /// Whether row order is ignored per table.
    pub ignore_orders: &'a [bool],
}

/// `duckdb_match(pred, gold, ...)` on the files at `gold` and `pred` (see [`judge`]): a gold
/// file that does not open, or has a write-ahead log beside it (which DuckDB would replay), is a
/// gold failure; a predicted one that does not open scores 0 (the official `duckdb.connect`
/// raises inside `evaluate.py`'s `try`; a log beside it is replayed, as there).
pub fn judge_files(
    gold: &Path,
    pred: &Path,
    tables: Tables<'_>,
    limits: &Limits,
    sound: bool,
) -> Verdict {
    let opened = crate::engine::duckdb::refuse_log(gold).and_then(|()| LockedFile::open(gold));
    let gold = match opened {
        Ok(file) => file,
        Err(e) => return Verdict::GoldFailure(e.to_string()),
    };
    match LockedFile::open(pred) {
        Ok(pred) => judge(&gold, &pred, tables, limits, sound),
        Err(e) => Verdict::Mismatch(format!("the predicted file does not open: {e}")),
    }
}

/// `duckdb_match(pred, gold, ...)` under the official semantics (`sound: false`) or the sound
/// ones: reads every gold table, then every predicted one, then compares them in order.
pub fn judge(
    gold_file: &LockedFile,
    pred_file: &LockedFile,
    tables: Tables<'_>,
    limits: &Limits,
    sound: bool,
) -> Verdict {
    let mut gold_frames = Vec::with_capacity(tables.names.len());
    for name in tables.names {
        if !sound && !is_plain_name(name) {
            return Verdict::Mismatch(format!(
                "`SELECT * FROM {name}` (the name pasted in unquoted) raises: the official code cannot read a name that needs quoting"
            ));
        }
        match read_frame(gold_file, name, sound, limits) {
            Ok(frame) => gold_frames.push(frame),
            Err(Failed::Exec(e)) => {
                return Verdict::GoldFailure(format!("gold table `{name}`: {e}"))
            }
            Err(Failed::Unsupported(why)) => {
                return Verdict::Unavailable(format!("gold table `{name}`: {why}"))
            }
            Err(Failed::Unconvertible(why)) => {
                return Verdict::Mismatch(format!(
                    "gold table `{name}`: {why} (`fetchdf()` raises: the official score is 0)"
                ))
            }
        }
    }
    let mut pred_frames = Vec::with_capacity(tables.names.len());
    for name in tables.names {
        if sound {
            if let Err(why) = base_table(pred_file, name, limits) {
                return why;
            }
        }
        match read_frame(pred_file, name, sound, limits) {
            Ok(frame) => pred_frames.push(frame),
            Err(Failed::Exec(
                e @ (ExecError::Timeout(_) | ExecError::TooLarge(_) | ExecError::Fault(_)),
            )) => return Verdict::PredFailure(e),
            Err(Failed::Exec(e)) => {
                return Verdict::Mismatch(format!("predicted table `{name}`: {e}"))
            }
            Err(Failed::Unsupported(why)) => {
                return Verdict::Unavailable(format!("predicted table `{name}`: {why}"))
            }
            Err(Failed::Unconvertible(why)) => {
                return Verdict::Mismatch(format!(
                    "predicted table `{name}`: {why} (`fetchdf()` raises: the official score is 0)"
                ))
            }
        }
    }
    compare_all(&gold_frames, &pred_frames, tables, sound)
}

/// The tables compared in order; the first that differs decides.
fn compare_all(gold: &[Frame], pred: &[Frame], tables: Tables<'_>, sound: bool) -> Verdict {
    for (index, (gold, pred)) in gold.iter().zip(pred).enumerate() {
        let name = &tables.names[index];
        let (Some(condition), Some(&ignore_order)) = (
            tables.conditions.get(index),
            tables.ignore_orders.get(index),
        ) else {
            return Verdict::Mismatch(format!(
                "no condition_cols / ignore_orders entry for `{name}` (AssertionError)"
            ));
        };
        let outcome = match sound {
            true => sound_match(pred, gold, condition, ignore_order).map(Some),
            false => official_match(pred, gold, condition, ignore_order),
        };
        match (outcome, sound) {
            (Ok(Some(true)), _) => {}
            (Ok(Some(false)), _) => return Verdict::Mismatch(format!("table `{name}` differs")),
            (Ok(None), _) => {
                return Verdict::Unavailable(format!(
                    "table `{name}`: a column of one-element lists decides it, and numpy's comparison of one-element arrays is not reproduced"
                ))
            }
            (Err(why), true) => return Verdict::Unavailable(format!("table `{name}`: {why}")),
            (Err(raised), false) => return Verdict::Mismatch(format!("table `{name}`: {raised}")),
        }
    }
    Verdict::Match
}

/// Why a relation was not read into a [`Frame`].
enum Failed {
    Exec(ExecError),
    Unsupported(String),
    /// `fetchdf()` raises on a column type (the official score is 0).
    Unconvertible(String),
}

/// Table `name` of `file` as a [`Frame`]: `SELECT * FROM {name}` as the official code pastes it,
/// or the quoted name (`sound`).
fn read_frame(
    file: &LockedFile,
    name: &str,
    sound: bool,
    limits: &Limits,
) -> Result<Frame, Failed> {
    let relation = if sound {
        quoted(name)
    } else {
        name.to_string()
    };
    let table = file
        .read(&format!("SELECT * FROM {relation}"), limits)
        .map_err(|e| match e {
            ReadError::Exec(e) => Failed::Exec(e),
            ReadError::Unsupported(why) => Failed::Unsupported(why),
            ReadError::Unconvertible(why) if sound => Failed::Unsupported(why),
            ReadError::Unconvertible(why) => Failed::Unconvertible(why),
        })?;
    Frame::from_table(&table).map_err(Failed::Unsupported)
}

/// The sound profile reads base tables only: a view (whose query the predicted file chose) or
/// a missing relation scores 0.
fn base_table(file: &LockedFile, name: &str, limits: &Limits) -> Result<(), Verdict> {
    let literal = format!("'{}'", name.replace('\'', "''"));
    let query = format!(
        "SELECT table_type FROM information_schema.tables WHERE lower(table_name) = lower({literal}) ORDER BY table_schema = 'main' DESC LIMIT 1"
    );
    let kind = file
        .read(&query, limits)
        .ok()
        .and_then(|t| match t.rows.first().map(|r| &r[0]) {
            Some(Cell::Value(Value::Text(kind))) => Some(kind.clone()),
            _ => None,
        });
    match kind.as_deref() {
        Some("BASE TABLE" | "LOCAL TEMPORARY") => Ok(()),
        Some(other) => Err(Verdict::Mismatch(format!(
            "predicted `{name}` is a {other}, not a table: the sound profile compares base tables only"
        ))),
        None => Err(Verdict::Mismatch(format!("the predicted file has no table `{name}`"))),
    }
}

#[cfg(test)]
mod tests {
    use super::py::{bytearray_repr, uuid_text};
    use super::sound::sound_equal;
    use super::*;

    #[test]
    fn bytes_and_timedeltas_print_as_python_prints_them() {
        // Printed by CPython 3.11.7 and pandas 2.2.3.
        assert_eq!(
            bytearray_repr(b"a'b\"c\x00\xff\n\\"),
            r#"bytearray(b'a\'b"c\x00\xff\n\\')"#
        );
        assert_eq!(bytearray_repr(b"it's"), r#"bytearray(b"it\'s")"#);
        let pandas = [
            (0, "0 days 00:00:00"),
            (1_500_000, "0 days 00:00:01.500000"),
            (-1_000_000, "-1 days +23:59:59"),
            (-172_800_000_005, "-3 days +23:59:59.999995"),
            (259_200_000_001, "3 days 00:00:00.000001"),
            (2_700_000_000, "0 days 00:45:00"),
        ];
        for (micros, text) in pandas {
            assert_eq!(timedelta_text(micros), text);
        }
        assert_eq!(uuid_text(1), "00000000-0000-0000-0000-000000000001");
    }

    #[test]
    fn an_array_other_than_one_element_never_matches_officially_and_one_is_not_decided() {
        let array = |items: &[i128]| Py::Array(items.iter().map(|i| Py::Int(*i)).collect());
        let same = vec![array(&[1, 2])];
        assert_eq!(vectors_match(&same, &same, true), Some(false));
        assert_eq!(
            vectors_match(&[array(&[])], &[array(&[])], false),
            Some(false)
        );
        assert_eq!(vectors_match(&[Py::Na], &[Py::Na], false), Some(true));
        assert_eq!(vectors_match(&[array(&[1])], &[array(&[1])], false), None);
        assert_eq!(
            vectors_match(&[array(&[1]), Py::Na], &[Py::Na], false),
            Some(false)
        );
    }

    #[test]
    fn the_sound_variant_compares_lists_element_by_element() {
        let list = |items: Vec<Py>| Py::Array(items);
        let a = list(vec![Py::Int(1), Py::Float(2.0), Py::None]);
        assert!(sound_equal(
            &a,
            &list(vec![Py::Int(1), Py::Float(2.004), Py::None])
        ));
        assert!(!sound_equal(
            &a,
            &list(vec![Py::Float(2.0), Py::Int(1), Py::None])
        ));
        assert!(!sound_equal(&a, &list(vec![Py::Int(1), Py::Float(2.0)])));
        assert!(!sound_equal(
            &a,
            &list(vec![Py::Int(1), Py::Float(2.0), Py::Int(0)])
        ));
        assert!(!sound_equal(&list(vec![Py::Int(1)]), &Py::Int(1)));
        let nested = list(vec![list(vec![Py::Str("x".into())])]);
        assert!(sound_equal(&nested, &nested.clone()));
        assert!(!sound_equal(
            &Py::Stamp(0, String::new()),
            &Py::StampTz(0, String::new())
        ));
        assert!(!sound_equal(
            &Py::Bytes(b"ab".to_vec()),
            &Py::Str("ab".into())
        ));
    }
}
