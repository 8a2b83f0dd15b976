//! A database value as the sound profile compares it (its result comparison and the
//! declarative post-conditions alike): numbers quantised half-up to 2 places from their
//! shortest decimal text, so an integer equals the same float.

use rusqlite::types::Value;

/// A cell as the sound comparison sees it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Cell {
    Null,
    Number(String),
    Text(String),
    Blob(Vec<u8>),
}

/// A database value as the sound comparison sees it.
pub(super) fn cell(value: &Value) -> Cell {
    match value {
        Value::Null => Cell::Null,
        Value::Integer(i) => Cell::Number(quantize(&i.to_string())),
        Value::Real(f) if f.is_finite() => Cell::Number(quantize(&f.to_string())),
        Value::Real(f) => Cell::Number(f.to_string()),
        Value::Text(text) => Cell::Text(text.clone()),
        Value::Blob(bytes) => Cell::Blob(bytes.clone()),
    }
}

/// A plain decimal text (`-12.345`, no exponent: Rust's shortest display of a float) rounded
/// half-up to 2 places; `-0.00` is `0.00`.
fn quantize(text: &str) -> String {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let mut kept: Vec<u8> = whole
        .bytes()
        .chain(fraction.bytes().chain(*b"00").take(2))
        .collect();
    if fraction.as_bytes().get(2).is_some_and(|&d| d >= b'5') {
        let mut at = kept.len();
        loop {
            if at == 0 {
                kept.insert(0, b'1');
                break;
            }
            at -= 1;
            if kept[at] == b'9' {
                kept[at] = b'0';
            } else {
                kept[at] += 1;
                break;
            }
        }
    }
    let split = kept.len() - 2;
    let whole = String::from_utf8_lossy(&kept[..split])
        .trim_start_matches('0')
        .to_string();
    let whole = if whole.is_empty() {
        "0".to_string()
    } else {
        whole
    };
    let fraction = String::from_utf8_lossy(&kept[split..]).to_string();
    let zero = whole == "0" && fraction == "00";
    format!(
        "{}{whole}.{fraction}",
        if negative && !zero { "-" } else { "" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_quantised_half_up_from_their_shortest_text() {
        let cases = [
            ("18.125", "18.13"),
            ("759.165", "759.17"),
            ("1", "1.00"),
            ("-0.001", "0.00"),
            ("-2.675", "-2.68"),
            ("99.995", "100.00"),
            ("0.5", "0.50"),
        ];
        for (text, expected) in cases {
            assert_eq!(quantize(text), expected, "{text}");
        }
        assert_eq!(cell(&Value::Integer(1)), cell(&Value::Real(1.0)));
    }
}
