//! The shape of a text column's values, read from the data, not from the column's name: a
//! code (`ABW`, `ESK`, `A1-7`), a name (`Aruba`, `Phillips AAF`), or anything else (numbers,
//! weights, dates, phone numbers, e-mail addresses, free text stored as text). Only codes and
//! names identify a row, so only they form the pairings the domain checks restore.

use crate::engine::value::Value;
use crate::util::sqlite::quoted_identifier as quoted;
use rusqlite::Connection;

/// Distinct values read to decide a column's shape (every one of them must fit it).
const SAMPLE: usize = 500;
/// Longest code, in characters.
const CODE_LENGTH: usize = 12;
/// Longest name, in characters.
const NAME_LENGTH: usize = 60;

/// What a text column's values look like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Short tokens of letters and digits (`-`, `_`, `.` allowed), at least one letter, no
    /// space: a code.
    Code,
    /// Mostly letters, possibly with spaces and punctuation, short, on one line: a name.
    Name,
    /// Anything else: numbers, dates or phone numbers stored as text, addresses, free text.
    Other,
}

impl Shape {
    /// Whether the values identify what a row is about (a code or a name).
    pub fn identifies(self) -> bool {
        self != Shape::Other
    }
}

/// The shape of one value.
pub fn value_shape(text: &str) -> Shape {
    let letters = text.chars().filter(|c| c.is_alphabetic()).count();
    let digits = text.chars().filter(|c| c.is_ascii_digit()).count();
    let length = text.chars().count();
    if letters == 0
        || text.trim().parse::<f64>().is_ok()
        || 2 * letters < letters + digits
        || text.contains(['@', '\n', '\r', '/', ':'])
        || text.starts_with(|c: char| c.is_ascii_digit())
    {
        return Shape::Other;
    }
    let code_char = |c: char| c.is_alphanumeric() || matches!(c, '-' | '_' | '.');
    if length <= CODE_LENGTH && text.chars().all(code_char) {
        Shape::Code
    } else if length <= NAME_LENGTH {
        Shape::Name
    } else {
        Shape::Other
    }
}

/// The shape every value of a column fits: `Code` when all are codes, `Name` when all are
/// codes or names, otherwise `Other` (also when the column holds a non-text value).
pub fn shape_of(values: &[Value]) -> Shape {
    let mut shape = Shape::Code;
    for value in values {
        let Value::Text(text) = value else {
            return Shape::Other;
        };
        match value_shape(text) {
            Shape::Other => return Shape::Other,
            Shape::Name => shape = Shape::Name,
            Shape::Code => {}
        }
    }
    if values.is_empty() {
        Shape::Other
    } else {
        shape
    }
}

/// The shape of `table.column` in the original, from up to [`SAMPLE`] of its distinct
/// non-NULL values.
pub fn column_shape(original: &Connection, table: &str, column: &str) -> Shape {
    let (c, t) = (quoted(column), quoted(table));
    let sql = format!("SELECT DISTINCT {c} FROM {t} WHERE {c} IS NOT NULL LIMIT {SAMPLE}");
    let Ok(mut statement) = original.prepare(&sql) else {
        return Shape::Other;
    };
    let Ok(mut rows) = statement.query([]) else {
        return Shape::Other;
    };
    let mut values = Vec::new();
    while let Ok(Some(row)) = rows.next() {
        match row.get_ref(0) {
            Ok(value) => values.push(crate::engine::sqlite::read_value(value)),
            Err(_) => return Shape::Other,
        }
    }
    shape_of(&values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_names_are_told_from_numbers_dates_and_phones() {
        for code in ["ABW", "ESK", "AB-7", "Kacey", "BUL", "apg"] {
            assert_eq!(value_shape(code), Shape::Code, "{code}");
        }
        for name in [
            "Phillips AAF",
            "American Motor Company",
            "Saint-Étienne",
            "Boeing 747",
        ] {
            assert_eq!(value_shape(name), Shape::Name, "{name}");
        }
        for other in [
            "7.57",
            "12",
            "2012-01-27 05:11:53",
            "1-682-845-0116x63235",
            "(799)563-0260x454",
            "lynn81@example.org",
            "0647 Hintz Village Apt. 024",
            "02647",
            "",
            "6915 Oberbrunner Point\nGleasonville",
        ] {
            assert_eq!(value_shape(other), Shape::Other, "{other:?}");
        }
    }

    #[test]
    fn a_column_takes_the_widest_shape_of_its_values() {
        let text = |s: &str| Value::Text(s.to_string());
        assert_eq!(shape_of(&[text("ABW"), text("AFG")]), Shape::Code);
        assert_eq!(
            shape_of(&[text("ABW"), text("Papua New Guinea")]),
            Shape::Name
        );
        assert_eq!(shape_of(&[text("Aruba"), text("7.57")]), Shape::Other);
        assert_eq!(shape_of(&[text("Aruba"), Value::Int(3)]), Shape::Other);
        assert_eq!(shape_of(&[]), Shape::Other);
    }
}
