//! A server's text form of a value turned into the Python value psycopg2 (PostgreSQL) or PyMySQL
//! (MySQL) would build from the same text: both read results in the text protocol and convert
//! each column by its type, and BIRD's official evaluation compares what they return.

use crate::engine::exec::ExecError;
use crate::engine::pyvalue::{Date, Decimal, PyValue, TimeOfDay};
use crate::engine::value::Value;

/// How a column's text becomes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Python `int`.
    Int,
    /// Python `float`.
    Float,
    /// `decimal.Decimal`.
    Decimal,
    /// `bool` (PostgreSQL `t` / `f`).
    Bool,
    /// `str`.
    Text,
    /// `bytes` from PostgreSQL's hex `bytea` text (`\x...`).
    HexBytes,
    /// `bytes` as sent (MySQL binary strings).
    Bytes,
    /// `datetime.date`.
    Date,
    /// `datetime.datetime`, naive.
    DateTime,
    /// `datetime.datetime`, aware (PostgreSQL `timestamptz`).
    DateTimeTz,
    /// `datetime.time` (naive).
    Time,
    /// `datetime.time` with a fixed-offset tzinfo (PostgreSQL `timetz`).
    TimeTz,
    /// `datetime.timedelta` from PostgreSQL's `interval` text.
    Interval,
    /// `datetime.timedelta` from MySQL's `TIME` text (`-838:59:59`).
    MysqlTime,
    /// PyMySQL's `DATETIME`: a datetime, else a date, else the text.
    MysqlDateTime,
    /// PyMySQL's `DATE`: a date, else the text.
    MysqlDate,
    /// PostgreSQL `json` / `jsonb`, which psycopg2 parses with `json.loads`: a scalar becomes a
    /// `str`, `int`, `float`, `bool` or `None`; an object or array a `dict` / `list`, unhashable.
    Json,
    /// A PostgreSQL array, which psycopg2 returns as a Python `list`: unhashable, so the
    /// official `set(rows)` raises on any row holding one and the item scores 0.
    Unhashable,
}

/// Why a row holding a `list` or `dict` scores 0 under the official comparison.
const UNHASHABLE: &str =
    "(a Python list or dict under psycopg2, which the official comparison cannot hash)";

/// The value of one non-NULL cell.
pub fn convert(kind: Kind, bytes: &[u8]) -> Result<Value, ExecError> {
    let text = || String::from_utf8_lossy(bytes);
    let invalid = |what: &str| {
        ExecError::Sql(format!(
            "cannot read {what} `{}` as the Python client would",
            crate::util::scrub::scrub_cut(&text(), 60)
        ))
    };
    let py = |value: PyValue| Value::Py(Box::new(value));
    Ok(match kind {
        Kind::Int => match text().trim().parse::<i64>() {
            Ok(i) => Value::Int(i),
            Err(_) => Value::Py(Box::new(PyValue::Decimal(
                Decimal::parse(&text()).ok_or_else(|| invalid("an integer"))?,
            ))),
        },
        Kind::Float => Value::Real(parse_float(&text()).ok_or_else(|| invalid("a float"))?),
        Kind::Decimal => py(PyValue::Decimal(
            Decimal::parse(&text()).ok_or_else(|| invalid("a decimal"))?,
        )),
        Kind::Bool => py(PyValue::Bool(bytes == b"t" || bytes == b"1")),
        Kind::Text => Value::Text(crate::engine::exec::decode_lenient(bytes)),
        Kind::HexBytes => Value::Blob(parse_hex(bytes).ok_or_else(|| invalid("bytea"))?),
        Kind::Bytes => Value::Blob(bytes.to_vec()),
        Kind::Date => py(PyValue::Date(
            pg_date(&text()).ok_or_else(|| invalid("a date"))?,
        )),
        Kind::DateTime | Kind::DateTimeTz => {
            py(pg_datetime(&text(), kind == Kind::DateTimeTz)
                .ok_or_else(|| invalid("a timestamp"))?)
        }
        Kind::Time => py(PyValue::Time(
            pg_time(&text()).ok_or_else(|| invalid("a time"))?,
        )),
        Kind::TimeTz => py(parse_timetz(&text()).ok_or_else(|| invalid("a time"))?),
        Kind::Json => json_scalar(&text())?,
        Kind::Interval => py(PyValue::TimeDelta(
            parse_interval(&text()).ok_or_else(|| invalid("an interval"))?,
        )),
        Kind::MysqlTime => match parse_mysql_time(&text()) {
            Some(micros) => py(PyValue::TimeDelta(micros)),
            None => Value::Text(text().into_owned()),
        },
        Kind::MysqlDateTime => match parse_datetime(&text(), false) {
            Some(value) => py(value),
            None => mysql_date(&text()),
        },
        Kind::MysqlDate => mysql_date(&text()),
        Kind::Unhashable => return Err(ExecError::Sql(format!("an array column {UNHASHABLE}"))),
    })
}

/// `json.loads(text)` of a JSON value: its scalar as the Python value, or an error for an
/// object or array. A number is an `int` without `.`, `e` or `E`, else `float(text)`.
fn json_scalar(text: &str) -> Result<Value, ExecError> {
    let invalid = || {
        ExecError::Sql(format!(
            "cannot read the JSON value `{}` as psycopg2 would",
            crate::util::scrub::scrub_cut(text, 60)
        ))
    };
    let text = text.trim_matches([' ', '\t', '\n', '\r']);
    Ok(match text.as_bytes().first() {
        Some(b'{' | b'[') => {
            return Err(ExecError::Sql(format!(
                "a JSON object or array {UNHASHABLE}"
            )))
        }
        Some(b'"') => Value::Text(serde_json::from_str(text).map_err(|_| invalid())?),
        _ => match text {
            "null" => Value::Null,
            "true" => Value::Py(Box::new(PyValue::Bool(true))),
            "false" => Value::Py(Box::new(PyValue::Bool(false))),
            _ if !is_json_number(text) => return Err(invalid()),
            _ if text.contains(['.', 'e', 'E']) => {
                Value::Real(text.parse().map_err(|_| invalid())?)
            }
            _ => convert(Kind::Int, text.as_bytes())?,
        },
    })
}

/// JSON's number grammar: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
fn is_json_number(text: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => (mantissa, Some(exponent)),
        None => (unsigned, None),
    };
    let (whole, fraction) = match mantissa.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (mantissa, None),
    };
    let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['+', '-']).unwrap_or(e)));
    digits(whole)
        && (whole == "0" || !whole.starts_with('0'))
        && fraction.is_none_or(digits)
        && exponent_ok
}

/// psycopg2's date: PostgreSQL's `infinity` / `-infinity` become `date.max` / `date.min`.
fn pg_date(text: &str) -> Option<Date> {
    match text.trim() {
        "infinity" => Date::new(9999, 12, 31),
        "-infinity" => Date::new(1, 1, 1),
        other => parse_date(other),
    }
}

/// psycopg2's timestamp: `infinity` / `-infinity` become `datetime.max` / `datetime.min`
/// (in UTC when aware).
fn pg_datetime(text: &str, aware: bool) -> Option<PyValue> {
    let (date, time) = match text.trim() {
        "infinity" => (
            Date::new(9999, 12, 31)?,
            TimeOfDay::new(23, 59, 59, 999_999)?,
        ),
        "-infinity" => (Date::new(1, 1, 1)?, TimeOfDay::new(0, 0, 0, 0)?),
        other => return parse_datetime(other, aware),
    };
    let offset = aware.then_some(0);
    Some(PyValue::DateTime { date, time, offset })
}

/// psycopg2's time: PostgreSQL's `24:00:00` becomes `time(0, 0)`.
fn pg_time(text: &str) -> Option<TimeOfDay> {
    match text.trim().strip_prefix("24:") {
        Some(rest) if rest.bytes().all(|b| matches!(b, b'0' | b':' | b'.')) => {
            TimeOfDay::new(0, 0, 0, 0)
        }
        _ => parse_time(text),
    }
}

/// `HH:MM:SS[.ffffff]+HH[:MM[:SS]]` (PostgreSQL `timetz`) as an aware `datetime.time`.
fn parse_timetz(text: &str) -> Option<PyValue> {
    let text = text.trim();
    let at = text.rfind(['+', '-'])?;
    let time = pg_time(&text[..at])?;
    let offset = parse_offset(&text[at..])?;
    Some(PyValue::TimeTz { time, offset })
}

/// PyMySQL's `convert_date`: a date, else the text itself (`0000-00-00`).
fn mysql_date(text: &str) -> Value {
    match parse_date(text) {
        Some(date) => Value::Py(Box::new(PyValue::Date(date))),
        None => Value::Text(text.to_string()),
    }
}

/// Python's `float(text)`, with the spellings servers print for the special values.
fn parse_float(text: &str) -> Option<f64> {
    let text = text.trim();
    match text.to_ascii_lowercase().as_str() {
        "nan" => Some(f64::NAN),
        "infinity" | "inf" => Some(f64::INFINITY),
        "-infinity" | "-inf" => Some(f64::NEG_INFINITY),
        _ => text.parse().ok(),
    }
}

fn parse_hex(bytes: &[u8]) -> Option<Vec<u8>> {
    let hex = bytes.strip_prefix(b"\\x")?;
    hex.chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
        .collect()
}

/// `YYYY-MM-DD`.
fn parse_date(text: &str) -> Option<Date> {
    let mut parts = text.trim().splitn(3, '-');
    let year = parts.next()?.parse().ok()?;
    let month = parts.next()?.parse().ok()?;
    let day = parts.next()?.parse().ok()?;
    Date::new(year, month, day)
}

/// `HH:MM:SS[.ffffff]`.
fn parse_time(text: &str) -> Option<TimeOfDay> {
    let (clock, fraction) = text.trim().split_once('.').unwrap_or((text.trim(), ""));
    let mut parts = clock.split(':');
    let hour = parts.next()?.parse().ok()?;
    let minute = parts.next()?.parse().ok()?;
    let second = parts.next()?.parse().ok()?;
    if parts.next().is_some() {
        return None;
    }
    TimeOfDay::new(hour, minute, second, micros_of_fraction(fraction)?)
}

/// `.123` -> 123000 microseconds (digits past the sixth are dropped, as PyMySQL does).
fn micros_of_fraction(fraction: &str) -> Option<u32> {
    if fraction.is_empty() {
        return Some(0);
    }
    if !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let six: String = fraction
        .chars()
        .chain(std::iter::repeat('0'))
        .take(6)
        .collect();
    six.parse().ok()
}

/// `YYYY-MM-DD HH:MM:SS[.ffffff][+HH[:MM[:SS]]]` (the zone only when `aware`).
fn parse_datetime(text: &str, aware: bool) -> Option<PyValue> {
    let text = text.trim();
    let (date, rest) = text.split_once([' ', 'T'])?;
    let date = parse_date(date)?;
    let (clock, offset) = if aware {
        let at = rest.rfind(['+', '-'])?;
        (&rest[..at], Some(parse_offset(&rest[at..])?))
    } else {
        (rest, None)
    };
    let time = parse_time(clock)?;
    Some(PyValue::DateTime { date, time, offset })
}

/// `+05`, `-03:30`, `+05:45:10` -> seconds.
fn parse_offset(text: &str) -> Option<i32> {
    let sign = if text.starts_with('-') { -1 } else { 1 };
    let mut total = 0;
    for (part, scale) in text[1..].split(':').zip([3600, 60, 1]) {
        total += part.parse::<i32>().ok()? * scale;
    }
    Some(sign * total)
}

/// MySQL `TIME` text (`[-]H+:MM:SS[.ffffff]`, hours up to 838) as PyMySQL's timedelta.
fn parse_mysql_time(text: &str) -> Option<i64> {
    let text = text.trim();
    let (negative, body) = match text.strip_prefix('-') {
        Some(body) => (true, body),
        None => (false, text),
    };
    let (clock, fraction) = body.split_once('.').unwrap_or((body, ""));
    let mut parts = clock.split(':');
    let hours: i64 = parts.next()?.parse().ok()?;
    let minutes: i64 = parts.next()?.parse().ok()?;
    let seconds: i64 = parts.next()?.parse().ok()?;
    let micros = ((hours * 60 + minutes) * 60 + seconds) * 1_000_000
        + i64::from(micros_of_fraction(fraction)?);
    Some(if negative { -micros } else { micros })
}

/// PostgreSQL's `interval` text (IntervalStyle `postgres`: `1 year 2 mons -3 days 04:05:06.5`)
/// as psycopg2's timedelta: a year is 365 days, a month 30.
fn parse_interval(text: &str) -> Option<i64> {
    const DAY: i64 = 86_400_000_000;
    let mut micros = 0i64;
    let mut words = text.split_whitespace().peekable();
    while let Some(word) = words.next() {
        if word.contains(':') {
            let (negative, clock) = match word.strip_prefix('-') {
                Some(clock) => (true, clock),
                None => (false, word.trim_start_matches('+')),
            };
            let value = parse_mysql_time(clock)?;
            micros += if negative { -value } else { value };
            continue;
        }
        let count: i64 = word.parse().ok()?;
        let unit = words.next()?;
        let scale = match unit.trim_end_matches('s') {
            "year" => 365 * DAY,
            "mon" => 30 * DAY,
            "day" => DAY,
            _ => return None,
        };
        micros += count * scale;
    }
    Some(micros)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn py(kind: Kind, text: &str) -> String {
        match convert(kind, text.as_bytes()).unwrap() {
            Value::Py(value) => value.python_str(),
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn texts_become_the_python_values_of_the_client() {
        assert_eq!(py(Kind::Decimal, "12.50"), "12.50");
        assert_eq!(py(Kind::Bool, "t"), "True");
        assert_eq!(
            py(Kind::DateTimeTz, "2020-01-02 03:04:05.5+05:30"),
            "2020-01-02 03:04:05.500000+05:30"
        );
        assert_eq!(
            py(Kind::DateTime, "2020-01-02 03:04:05"),
            "2020-01-02 03:04:05"
        );
        assert_eq!(
            py(Kind::Interval, "1 year 2 mons -3 days 04:05:06"),
            "422 days, 4:05:06"
        );
        assert_eq!(py(Kind::Interval, "-00:00:01"), "-1 day, 23:59:59");
        assert_eq!(py(Kind::MysqlTime, "-838:59:59"), "-35 days, 1:00:01");
        assert_eq!(py(Kind::MysqlDate, "0000-00-00"), "Text(\"0000-00-00\")");
        assert_eq!(py(Kind::MysqlDateTime, "2020-01-02"), "2020-01-02");
        assert_eq!(py(Kind::Float, "Infinity"), "Real(inf)");
        assert_eq!(py(Kind::HexBytes, "\\x00ff"), "Blob([0, 255])");
        assert!(convert(Kind::Date, b"20200-01-01").is_err());
        assert_eq!(py(Kind::Date, "-infinity"), "0001-01-01");
        assert_eq!(
            py(Kind::DateTimeTz, "infinity"),
            "9999-12-31 23:59:59.999999+00:00"
        );
        assert_eq!(py(Kind::Time, "24:00:00"), "00:00:00");
        assert_eq!(
            py(Kind::TimeTz, "12:30:00.25-03:30"),
            "12:30:00.250000-03:30"
        );
    }

    #[test]
    fn json_scalars_become_what_json_loads_returns() {
        assert_eq!(py(Kind::Json, "true"), "True");
        assert_eq!(py(Kind::Json, " 1.50 "), "Real(1.5)");
        assert_eq!(py(Kind::Json, "7"), "Int(7)");
        assert_eq!(py(Kind::Json, "1e400"), "Real(inf)");
        assert_eq!(py(Kind::Json, "\"a\\u00e9\""), "Text(\"aé\")");
        assert_eq!(py(Kind::Json, "null"), "Null");
        assert_eq!(
            py(Kind::Json, "123456789012345678901234567890"),
            "123456789012345678901234567890"
        );
        assert!(convert(Kind::Json, b"{\"a\": 1}").is_err());
        assert!(convert(Kind::Json, b"[1]").is_err());
        assert!(convert(Kind::Json, b"01").is_err());
    }
}
