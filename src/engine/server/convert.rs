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
    /// `datetime.time`.
    Time,
    /// `datetime.timedelta` from PostgreSQL's `interval` text.
    Interval,
    /// `datetime.timedelta` from MySQL's `TIME` text (`-838:59:59`).
    MysqlTime,
    /// PyMySQL's `DATETIME`: a datetime, else a date, else the text.
    MysqlDateTime,
    /// PyMySQL's `DATE`: a date, else the text.
    MysqlDate,
    /// A PostgreSQL array, which psycopg2 returns as a Python `list`: unhashable, so the
    /// official `set(rows)` raises on any row holding one and the item scores 0.
    Unhashable,
}

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
            parse_date(&text()).ok_or_else(|| invalid("a date"))?,
        )),
        Kind::DateTime | Kind::DateTimeTz => py(parse_datetime(&text(), kind == Kind::DateTimeTz)
            .ok_or_else(|| invalid("a timestamp"))?),
        Kind::Time => py(PyValue::Time(
            parse_time(&text()).ok_or_else(|| invalid("a time"))?,
        )),
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
        Kind::Unhashable => {
            return Err(ExecError::Sql(
                "an array column (a Python list under psycopg2, which the official comparison cannot hash)".into(),
            ))
        }
    })
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
    }
}
