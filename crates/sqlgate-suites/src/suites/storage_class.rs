//! The storage class generated values take, from a column's declared type: shared by the
//! neighbour normal form (which comparisons can differ) and the database generator.

/// The storage class a column's values are generated in (SQLite type affinity).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Affinity {
    /// INTEGER affinity (`INT` in the declared type).
    Integer,
    /// REAL / NUMERIC affinity.
    Real,
    /// TEXT affinity (also dates and times, which Spider stores as text).
    Text,
}

/// SQLite's affinity rules (section 3.1 of its datatype documentation).
pub fn affinity_of(declared: &str) -> Affinity {
    let upper = declared.to_ascii_uppercase();
    if upper.contains("INT") {
        Affinity::Integer
    } else if ["CHAR", "CLOB", "TEXT", "BLOB"]
        .iter()
        .any(|t| upper.contains(t))
        || upper.is_empty()
    {
        Affinity::Text
    } else if [
        "REAL", "FLOA", "DOUB", "NUMERIC", "DECIMAL", "NUMBER", "BOOL",
    ]
    .iter()
    .any(|t| upper.contains(t))
    {
        Affinity::Real
    } else {
        Affinity::Text
    }
}
