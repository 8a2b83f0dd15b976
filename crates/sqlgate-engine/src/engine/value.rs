//! Cell values returned by an engine, with the equality Python gives them (the `sqlite3` module
//! on SQLite, psycopg2 / PyMySQL on a server).
//!
//! The official Spider / test-suite scorer compares Python objects: an integer equals a float
//! with the same numeric value, NULL (`None`) equals NULL, text never equals a blob. Every
//! comparison profile builds on this one definition so verdicts agree with published numbers.
//! The Python types only servers return (`Decimal`, `bool`, dates and times) are
//! [`crate::engine::pyvalue::PyValue`]s.

use crate::engine::pyvalue::{Identity, PyValue};
use std::hash::{Hash, Hasher};

/// One cell of a query result.
#[derive(Debug, Clone)]
pub enum Value {
    /// SQL NULL (Python `None`).
    Null,
    /// 64-bit integer (Python `int`).
    Int(i64),
    /// Double (Python `float`).
    Real(f64),
    /// Text, decoded leniently: invalid UTF-8 bytes are dropped, as the official scorer does.
    Text(String),
    /// Raw bytes (Python `bytes`).
    Blob(Vec<u8>),
    /// A `Decimal`, `bool`, date, datetime, time or timedelta from a server engine (boxed, so
    /// SQLite's values stay as small as before).
    Py(Box<PyValue>),
}

/// A result row.
pub type Row = Vec<Value>;

/// Canonical form used for hashing and exact equality: integral reals collapse onto integers,
/// `-0.0` onto `0`, so that `Key` equality is exactly Python's `==` on the original values.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key<'a> {
    /// NULL.
    Null,
    /// An integer, or a real with an exactly integral value in i64 range.
    Int(i64),
    /// The bit pattern of a non-integral (or out-of-range) real.
    Real(u64),
    /// Text.
    Text(&'a str),
    /// Bytes.
    Blob(&'a [u8]),
    /// A non-float exact number, or a date or time value.
    Py(Identity<'a>),
    /// A NaN (float or `Decimal`), by the address of the value holding it: Python's `==` finds
    /// a NaN unequal even to itself, and `x in row` / set look-ups match it only as the same
    /// object, so a NaN from one query never equals one from another.
    Nan(usize),
}

impl Value {
    /// The canonical key of this value (see [`Key`]).
    pub fn key(&self) -> Key<'_> {
        if self.is_nan() {
            return Key::Nan(std::ptr::from_ref(self) as usize);
        }
        match self {
            Value::Null => Key::Null,
            Value::Int(i) => Key::Int(*i),
            Value::Real(f) => match integral_i64(*f) {
                Some(i) => Key::Int(i),
                None => Key::Real(f.to_bits()),
            },
            Value::Text(s) => Key::Text(s),
            Value::Blob(b) => Key::Blob(b),
            Value::Py(value) => match value.identity() {
                Identity::Int(i) => Key::Int(i),
                Identity::Real(bits) => match integral_i64(f64::from_bits(bits)) {
                    Some(i) => Key::Int(i),
                    None => Key::Real(bits),
                },
                other => Key::Py(other),
            },
        }
    }

    /// A float or `Decimal` NaN (only servers return them: SQLite stores NaN as NULL).
    pub fn is_nan(&self) -> bool {
        match self {
            Value::Real(f) => f.is_nan(),
            Value::Py(value) => value.is_nan(),
            _ => false,
        }
    }

    /// The numeric value, for numbers only.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Real(f) => Some(*f),
            Value::Py(value) => value.as_f64(),
            _ => None,
        }
    }

    /// Python's `str(type(x))` for this value, used by the official row-sorting key.
    pub fn python_type_name(&self) -> &'static str {
        match self {
            Value::Null => "<class 'NoneType'>",
            Value::Int(_) => "<class 'int'>",
            Value::Real(_) => "<class 'float'>",
            Value::Text(_) => "<class 'str'>",
            Value::Blob(_) => "<class 'bytes'>",
            Value::Py(value) => value.python_type_name(),
        }
    }
}

/// `Some(i)` when `f` is an integral value that an i64 holds exactly.
fn integral_i64(f: f64) -> Option<i64> {
    const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
    if f.fract() == 0.0 && (-TWO_POW_63..TWO_POW_63).contains(&f) {
        Some(f as i64)
    } else {
        None
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Value {}

impl Hash for Value {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key().hash(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_equals_integral_real_like_python() {
        assert_eq!(Value::Int(1), Value::Real(1.0));
        assert_eq!(Value::Int(0), Value::Real(-0.0));
        assert_ne!(Value::Int(1), Value::Real(1.5));
        assert_ne!(Value::Int(1), Value::Text("1".into()));
        assert_ne!(Value::Text("a".into()), Value::Blob(b"a".to_vec()));
        assert_eq!(Value::Null, Value::Null);
    }

    #[test]
    fn server_values_compare_as_python_compares_them() {
        use crate::engine::pyvalue::Decimal;
        let decimal = |t: &str| Value::Py(Box::new(PyValue::Decimal(Decimal::parse(t).unwrap())));
        assert_eq!(decimal("1.0"), Value::Int(1));
        assert_eq!(decimal("0.5"), Value::Real(0.5));
        assert_ne!(decimal("0.1"), Value::Real(0.1));
        assert_eq!(decimal("0.10"), decimal("0.1"));
        assert_eq!(Value::Py(Box::new(PyValue::Bool(true))), Value::Real(1.0));
        assert_ne!(
            Value::Py(Box::new(PyValue::Bool(true))),
            Value::Text("True".into())
        );
        assert_eq!(std::mem::size_of::<Value>(), 32);
    }

    #[test]
    fn huge_reals_do_not_collapse_onto_wrong_integers() {
        assert_ne!(Value::Real(9.3e18), Value::Int(i64::MAX));
        assert_eq!(
            Value::Real(-9_223_372_036_854_775_808.0),
            Value::Int(i64::MIN)
        );
    }
}
