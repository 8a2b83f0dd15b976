//! The Python values the official comparison holds, and their `str()` / `repr()` texts.

use super::*;

pub(super) const MICROS_PER_DAY: i64 = 86_400_000_000;
/// Days from 0001-01-01 (ordinal 1) to 1970-01-01.
pub(super) const EPOCH_ORDINAL: i64 = 719_163;

/// One value as the official comparison holds it (a Python object).
#[derive(Debug, Clone, PartialEq)]
pub enum Py {
    /// `None`.
    None,
    /// `pd.NA` (a NULL of a nullable integer or boolean column).
    Na,
    /// `pd.NaT`.
    NaT,
    /// `int`.
    Int(i128),
    /// `float`.
    Float(f64),
    /// `bool`.
    Bool(bool),
    /// `str`.
    Str(String),
    /// `datetime` / `Timestamp`: microseconds since 1970 and `str(x)`.
    Stamp(i64, String),
    /// An aware `Timestamp` (`TIMESTAMPTZ`): microseconds since 1970 UTC and `str(x)` in UTC.
    StampTz(i64, String),
    /// `datetime.time`: microseconds since midnight and `str(x)`.
    Time(i64, String),
    /// `timedelta` / `Timedelta`: microseconds and `str(x)`.
    Delta(i64, String),
    /// `bytearray` (`BLOB`).
    Bytes(Vec<u8>),
    /// `uuid.UUID`.
    Uuid(u128),
    /// A numpy array (`LIST`, `ARRAY`); in the sound variant, a list of declared values.
    Array(Vec<Py>),
}

impl Py {
    /// `pd.isna(x)`.
    pub(super) fn is_na(&self) -> bool {
        match self {
            Py::None | Py::Na | Py::NaT => true,
            Py::Float(f) => f.is_nan(),
            _ => false,
        }
    }

    /// A NULL (not a stored NaN).
    pub(super) fn is_missing(&self) -> bool {
        matches!(self, Py::None | Py::Na | Py::NaT)
    }

    /// `float(x)` when `isinstance(x, (int, float))` (a `bool` is an `int`).
    pub(super) fn number(&self) -> Option<f64> {
        match self {
            Py::Int(i) => Some(*i as f64),
            Py::Float(f) => Some(*f),
            Py::Bool(b) => Some(f64::from(u8::from(*b))),
            _ => None,
        }
    }

    /// `str(x)`.
    pub(super) fn text(&self) -> String {
        match self {
            Py::None => "None".into(),
            Py::Na => "<NA>".into(),
            Py::NaT => "NaT".into(),
            Py::Int(i) => i.to_string(),
            Py::Float(f) => python_str(&Value::Real(*f)),
            Py::Bool(true) => "True".into(),
            Py::Bool(false) => "False".into(),
            Py::Str(s) => s.clone(),
            Py::Stamp(_, text) | Py::StampTz(_, text) | Py::Time(_, text) | Py::Delta(_, text) => {
                text.clone()
            }
            Py::Bytes(bytes) => bytearray_repr(bytes),
            Py::Uuid(bits) => uuid_text(*bits),
            // Never sorted: a vector holding an array is decided before sorting matters.
            Py::Array(items) => format!("<array of {}>", items.len()),
        }
    }
}

/// `str(bytearray(b))`: `bytearray(b'...')`, in double quotes when the bytes hold `'` and no
/// `"`; `'` and `\\` escaped in either, `\t` `\n` `\r`, other bytes outside 0x20..0x7e as `\xhh`.
pub(super) fn bytearray_repr(bytes: &[u8]) -> String {
    let quote = match bytes.contains(&b'\'') && !bytes.contains(&b'"') {
        true => '"',
        false => '\'',
    };
    let mut text = format!("bytearray(b{quote}");
    for &byte in bytes {
        match byte {
            b'\'' => text.push_str("\\'"),
            b'\\' => text.push_str("\\\\"),
            b'\t' => text.push_str("\\t"),
            b'\n' => text.push_str("\\n"),
            b'\r' => text.push_str("\\r"),
            0x20..=0x7e => text.push(char::from(byte)),
            _ => text.push_str(&format!("\\x{byte:02x}")),
        }
    }
    text.push(quote);
    text.push(')');
    text
}

/// `str(uuid.UUID(int=bits))`: 8-4-4-4-12 lowercase hex digits.
pub(super) fn uuid_text(bits: u128) -> String {
    let hex = format!("{bits:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// `str(pd.Timedelta(microseconds=micros))`: `D days HH:MM:SS[.ffffff]`, a negative one as
/// `-D days +HH:MM:SS[.ffffff]`.
pub(super) fn timedelta_text(micros: i64) -> String {
    let days = micros.div_euclid(MICROS_PER_DAY);
    let rest = micros.rem_euclid(MICROS_PER_DAY);
    let (seconds, micro) = (rest / 1_000_000, rest % 1_000_000);
    let sign = if days < 0 { "+" } else { "" };
    let clock = format!(
        "{:02}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    );
    match micro {
        0 => format!("{days} days {sign}{clock}"),
        micro => format!("{days} days {sign}{clock}.{micro:06}"),
    }
}
