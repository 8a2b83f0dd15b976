//! The values of two dialects' answers compared by what they mean, not by their types: a server
//! returns a `DATE` where SQLite returns the text of the same date, a `DECIMAL` where SQLite
//! returns a float. Under the official comparisons those differ (Python's `date` is never equal
//! to a `str`, nor `Decimal('74.138')` to the float `74.138`), so with real PostgreSQL / MySQL
//! data every gold returning a date would be a `dialect-disagreement`. Before comparing dialects
//! the audit writes both answers in one form: dates, datetimes and times as ISO text (a `T`
//! between date and time read as a space, fractional seconds to microseconds, zero dropped, as
//! Python's `str` writes them), decimals as floats (the profile's `float_tolerance` then applies).

use crate::engine::pyvalue::PyValue;
use crate::engine::value::{Row, Value};

/// `rows` with every value in its meaning's form ([`value`]).
pub(super) fn rows(rows: &[Row]) -> Vec<Row> {
    rows.iter()
        .map(|row| row.iter().map(value).collect())
        .collect()
}

/// One value in its meaning's form: a date or time as ISO text, a text holding an ISO date or
/// time written as Python's `str` writes it, a decimal as a float; anything else unchanged.
pub(super) fn value(value: &Value) -> Value {
    match value {
        Value::Py(py) => match py.as_ref() {
            PyValue::Decimal(_) => py.as_f64().map_or_else(|| value.clone(), Value::Real),
            PyValue::Date(_)
            | PyValue::DateTime { .. }
            | PyValue::Time(_)
            | PyValue::TimeTz { .. } => Value::Text(py.python_str()),
            PyValue::Bool(_) | PyValue::TimeDelta(_) => value.clone(),
        },
        Value::Text(text) => iso_text(text).map_or_else(|| value.clone(), Value::Text),
        _ => value.clone(),
    }
}

/// The text of an ISO date (`YYYY-MM-DD`), date and time (`YYYY-MM-DD[ T]HH:MM[:SS[.f]]`) or
/// time (`HH:MM[:SS[.f]]`) as Python's `str` writes the value: a space between date and time,
/// seconds always, fractional seconds as six digits and only when not zero. `None` for any
/// other text.
fn iso_text(text: &str) -> Option<String> {
    let Some(date) = text.get(..10).filter(|head| is_date(head)) else {
        return time_text(text);
    };
    let rest = &text[date.len()..];
    if rest.is_empty() {
        return Some(text.to_string());
    }
    let time = rest.strip_prefix([' ', 'T'])?;
    Some(format!("{date} {}", time_text(time)?))
}

/// `YYYY-MM-DD`, digits where digits belong.
fn is_date(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() == 10
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && [0, 1, 2, 3, 5, 6, 8, 9]
            .iter()
            .all(|&i| bytes[i].is_ascii_digit())
}

/// `HH:MM[:SS[.f]]` as `HH:MM:SS[.ffffff]`, or `None`.
fn time_text(text: &str) -> Option<String> {
    let two_digits = |part: &str| part.len() == 2 && part.bytes().all(|b| b.is_ascii_digit());
    let (clock, fraction) = match text.split_once('.') {
        Some((clock, fraction)) => (clock, Some(fraction)),
        None => (text, None),
    };
    let parts: Vec<&str> = clock.split(':').collect();
    let seconds = match parts.as_slice() {
        [hour, minute] if two_digits(hour) && two_digits(minute) && fraction.is_none() => "00",
        [hour, minute, second] if [hour, minute, second].iter().all(|p| two_digits(p)) => second,
        _ => return None,
    };
    let base = format!("{}:{}:{seconds}", parts[0], parts[1]);
    let Some(fraction) = fraction else {
        return Some(base);
    };
    if fraction.is_empty() || fraction.len() > 6 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let micros = format!("{fraction:0<6}");
    Some(match micros.as_str() {
        "000000" => base,
        _ => format!("{base}.{micros}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::pyvalue::{Date, TimeOfDay};

    fn text(value: &str) -> Value {
        Value::Text(value.to_string())
    }

    fn py(value: PyValue) -> Value {
        Value::Py(Box::new(value))
    }

    #[test]
    fn a_server_date_or_time_reads_as_the_iso_text_sqlite_keeps() {
        let date = Date::new(2011, 5, 17).unwrap();
        assert_eq!(value(&py(PyValue::Date(date))), text("2011-05-17"));
        let time = TimeOfDay::new(10, 4, 5, 250_000).unwrap();
        let datetime = PyValue::DateTime {
            date,
            time,
            offset: None,
        };
        assert_eq!(value(&py(datetime)), text("2011-05-17 10:04:05.250000"));
        assert_eq!(value(&py(PyValue::Time(time))), text("10:04:05.250000"));
        // SQLite's texts of the same values, written as the server's are.
        assert_eq!(value(&text("2011-05-17")), text("2011-05-17"));
        assert_eq!(
            value(&text("2011-05-17T10:04:05.25")),
            text("2011-05-17 10:04:05.250000")
        );
        assert_eq!(
            value(&text("2011-05-17 10:04:05.000")),
            text("2011-05-17 10:04:05")
        );
        assert_eq!(
            value(&text("2011-05-17 10:04")),
            text("2011-05-17 10:04:00")
        );
        assert_eq!(value(&text("10:04:05.25")), text("10:04:05.250000"));
    }

    #[test]
    fn other_texts_stay_as_they_are() {
        for other in [
            "x2010-02-22",
            "2010-02-22x",
            "2010/02/22",
            "2010-02-22 1:00",
            "10:4",
            "10:04:05.",
            "10:04:05.1234567",
            "1:27",
            "Antal Doráti",
            "Baranovitši",
            "12:3á",
            "",
        ] {
            assert_eq!(value(&text(other)), text(other), "{other:?}");
        }
    }

    #[test]
    fn a_decimal_reads_as_the_float_of_its_value() {
        let decimal = crate::engine::pyvalue::Decimal::parse("74.138").unwrap();
        assert_eq!(value(&py(PyValue::Decimal(decimal))), Value::Real(74.138));
        assert_eq!(value(&py(PyValue::Bool(true))), py(PyValue::Bool(true)));
        assert_eq!(value(&Value::Int(3)), Value::Int(3));
    }
}
