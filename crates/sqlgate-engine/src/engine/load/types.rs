//! What a SQLite column becomes on a server: its name there and its type, from the declared
//! type (SQLite's affinity rules, plus `DATE` / `DATETIME`, as BIRD's own PostgreSQL and MySQL
//! versions type them) checked against the values the column actually holds, so that every row
//! copies exactly.

use crate::engine::value::Value;

/// The server a database is copied to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    /// PostgreSQL.
    Postgres,
    /// MySQL or MariaDB.
    Mysql,
    /// DuckDB files (`dataset.databases`), one per db_id.
    Duckdb,
}

/// The type a column gets on the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    /// 64-bit integers.
    Integer,
    /// Doubles.
    Real,
    /// Calendar dates (`YYYY-MM-DD`).
    Date,
    /// Date and time (`YYYY-MM-DD HH:MM:SS[.ffffff]`).
    Timestamp,
    /// Text.
    Text,
    /// Bytes.
    Bytes,
}

impl ColumnType {
    /// The type's name in `server`'s DDL.
    pub fn sql(self, server: Server) -> String {
        match (self, server) {
            (ColumnType::Integer, _) => "BIGINT".into(),
            (ColumnType::Real, Server::Postgres) => "DOUBLE PRECISION".into(),
            (ColumnType::Real, Server::Mysql) => "DOUBLE".into(),
            (ColumnType::Date, _) => "DATE".into(),
            (ColumnType::Timestamp, Server::Postgres) => "TIMESTAMP".into(),
            (ColumnType::Timestamp, Server::Mysql) => "DATETIME(6)".into(),
            (ColumnType::Text, Server::Postgres) => "TEXT".into(),
            (ColumnType::Text, Server::Mysql) => "LONGTEXT".into(),
            (ColumnType::Bytes, Server::Postgres) => "BYTEA".into(),
            (ColumnType::Bytes, Server::Mysql) => "LONGBLOB".into(),
            (ColumnType::Real, Server::Duckdb) => "DOUBLE".into(),
            (ColumnType::Timestamp, Server::Duckdb) => "TIMESTAMP".into(),
            (ColumnType::Text, Server::Duckdb) => "VARCHAR".into(),
            (ColumnType::Bytes, Server::Duckdb) => "BLOB".into(),
        }
    }
}

/// What the values of one column are, gathered over every row.
#[derive(Debug, Default, Clone, Copy)]
pub struct Observed {
    /// Some value is an integer.
    pub integers: bool,
    /// Some value is a real.
    pub reals: bool,
    /// Some value is text.
    pub texts: bool,
    /// Some value is text that is not a number.
    pub non_numeric_texts: bool,
    /// Some value is text that is not a `YYYY-MM-DD` date.
    pub non_dates: bool,
    /// Some value is text that is not a `YYYY-MM-DD HH:MM:SS[.f]` timestamp (or a date).
    pub non_timestamps: bool,
    /// Some value is a blob.
    pub blobs: bool,
}

impl Observed {
    /// Adds one value.
    pub fn add(&mut self, value: &Value) {
        match value {
            Value::Null => {}
            Value::Int(_) => {
                self.integers = true;
                self.non_dates = true;
                self.non_timestamps = true;
            }
            Value::Real(_) => {
                self.reals = true;
                self.non_dates = true;
                self.non_timestamps = true;
            }
            Value::Text(text) => {
                self.texts = true;
                if text.trim().parse::<f64>().is_err() || text.trim() != text {
                    self.non_numeric_texts = true;
                }
                if !is_date(text) {
                    self.non_dates = true;
                }
                if !is_date(text) && !is_timestamp(text) {
                    self.non_timestamps = true;
                }
            }
            Value::Blob(_) => self.blobs = true,
            // Never read from SQLite; counted as what holds anything.
            Value::Py(_) => {
                self.texts = true;
                self.non_numeric_texts = true;
                self.non_dates = true;
                self.non_timestamps = true;
            }
        }
    }
}

/// The server type of a column declared `declared` holding `observed` values: the declared
/// type when every value fits it, otherwise the narrowest type that holds them all (text in an
/// INTEGER column makes it TEXT, as the value would not survive the copy otherwise).
pub fn column_type(declared: &str, observed: Observed) -> ColumnType {
    if observed.blobs {
        return ColumnType::Bytes;
    }
    let upper = declared.to_ascii_uppercase();
    let wanted = declared_type(&upper);
    let fits = match wanted {
        ColumnType::Integer => !observed.texts && !observed.reals,
        ColumnType::Real => !observed.texts,
        ColumnType::Date => !observed.non_dates,
        ColumnType::Timestamp => !observed.non_timestamps,
        ColumnType::Text | ColumnType::Bytes => true,
    };
    if fits && wanted != ColumnType::Bytes {
        wanted
    } else {
        by_values(observed)
    }
}

/// The type SQLite's affinity rules give `upper` (a declared type in upper case), with DATE
/// and DATETIME / TIMESTAMP kept; NUMERIC affinity and no declared type (BLOB affinity) are
/// decided by the values.
fn declared_type(upper: &str) -> ColumnType {
    if upper.contains("INT") {
        ColumnType::Integer
    } else if upper.contains("CHAR") || upper.contains("CLOB") || upper.contains("TEXT") {
        ColumnType::Text
    } else if upper.is_empty() || upper.contains("BLOB") {
        ColumnType::Bytes
    } else if upper.contains("REAL") || upper.contains("FLOA") || upper.contains("DOUB") {
        ColumnType::Real
    } else if upper == "DATE" {
        ColumnType::Date
    } else if upper == "DATETIME" || upper == "TIMESTAMP" {
        ColumnType::Timestamp
    } else {
        ColumnType::Bytes
    }
}

/// The narrowest type holding every observed value.
fn by_values(observed: Observed) -> ColumnType {
    if observed.texts {
        ColumnType::Text
    } else if observed.reals {
        ColumnType::Real
    } else {
        ColumnType::Integer
    }
}

fn is_date(text: &str) -> bool {
    let bytes = text.as_bytes();
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return false;
    }
    let number = |range: std::ops::Range<usize>| text.get(range)?.parse::<u32>().ok();
    let (Some(year), Some(month), Some(day)) = (number(0..4), number(5..7), number(8..10)) else {
        return false;
    };
    let digits = [0..4, 5..7, 8..10]
        .into_iter()
        .all(|r| bytes[r].iter().all(u8::is_ascii_digit));
    digits && year >= 1 && (1..=12).contains(&month) && day >= 1 && day <= days_in(year, month)
}

fn days_in(year: u32, month: u32) -> u32 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `YYYY-MM-DD HH:MM:SS` with optional fractional seconds (up to microseconds).
fn is_timestamp(text: &str) -> bool {
    let (Some(date), Some(time)) = (text.get(..10), text.get(11..)) else {
        return false;
    };
    if !is_date(date) || text.as_bytes()[10] != b' ' {
        return false;
    }
    let (clock, fraction) = time.split_once('.').unwrap_or((time, "0"));
    let fraction_ok =
        (1..=6).contains(&fraction.len()) && fraction.bytes().all(|b| b.is_ascii_digit());
    let parts: Vec<&str> = clock.split(':').collect();
    let limits = [23, 59, 59];
    parts.len() == 3
        && fraction_ok
        && parts.iter().zip(limits).all(|(part, limit)| {
            part.len() == 2
                && part.bytes().all(|b| b.is_ascii_digit())
                && part.parse::<u32>().is_ok_and(|v| v <= limit)
        })
}

/// A table or column's name on `server`: MySQL keeps it; PostgreSQL folds a plain name
/// (letters, digits, underscores, not starting with a digit) to lower case, as BIRD's
/// PostgreSQL version does, so that queries naming it unquoted in any case find it, and keeps
/// any other name (`Free Meal Count (K-12)`) as it is, to be quoted as BIRD's queries quote it.
pub fn server_name(name: &str, server: Server) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if server == Server::Postgres && plain {
        name.to_ascii_lowercase()
    } else {
        name.to_string()
    }
}

/// `name` quoted as an identifier for `server` (embedded quotes doubled).
pub fn quote(name: &str, server: Server) -> String {
    match server {
        Server::Postgres | Server::Duckdb => format!("\"{}\"", name.replace('"', "\"\"")),
        Server::Mysql => format!("`{}`", name.replace('`', "``")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn observed(values: &[Value]) -> Observed {
        let mut observed = Observed::default();
        values.iter().for_each(|v| observed.add(v));
        observed
    }

    #[test]
    fn declared_types_map_when_values_fit() {
        let ints = observed(&[Value::Int(1), Value::Null]);
        assert_eq!(column_type("integer", ints), ColumnType::Integer);
        assert_eq!(column_type("INT(11)", ints), ColumnType::Integer);
        assert_eq!(column_type("real", ints), ColumnType::Real);
        assert_eq!(column_type("DECIMAL(10, 2)", ints), ColumnType::Integer);
        let reals = observed(&[Value::Int(1), Value::Real(0.5)]);
        assert_eq!(column_type("NUMERIC", reals), ColumnType::Real);
        let texts = observed(&[Value::Text("a".into())]);
        assert_eq!(column_type("VARCHAR(20)", texts), ColumnType::Text);
        let dates = observed(&[Value::Text("2012-02-29".into())]);
        assert_eq!(column_type("date", dates), ColumnType::Date);
        assert_eq!(column_type("datetime", dates), ColumnType::Timestamp);
        let stamps = observed(&[Value::Text("2012-02-28 23:59:59.5".into())]);
        assert_eq!(column_type("DATETIME", stamps), ColumnType::Timestamp);
    }

    #[test]
    fn values_that_do_not_fit_widen_the_type() {
        let mixed = observed(&[Value::Int(1), Value::Text("n/a".into())]);
        assert_eq!(column_type("integer", mixed), ColumnType::Text);
        let reals = observed(&[Value::Int(1), Value::Real(1.5)]);
        assert_eq!(column_type("integer", reals), ColumnType::Real);
        let bad_date = observed(&[Value::Text("2011-02-29".into())]);
        assert_eq!(column_type("date", bad_date), ColumnType::Text);
        let month = observed(&[Value::Text("201201".into())]);
        assert_eq!(column_type("date", month), ColumnType::Text);
        let blob = observed(&[Value::Blob(vec![0, 1])]);
        assert_eq!(column_type("text", blob), ColumnType::Bytes);
        assert_eq!(
            column_type("", observed(&[Value::Int(3)])),
            ColumnType::Integer
        );
        assert_eq!(column_type("", observed(&[])), ColumnType::Integer);
    }

    #[test]
    fn postgres_folds_plain_names_only() {
        assert_eq!(server_name("CustomerID", Server::Postgres), "customerid");
        assert_eq!(
            server_name("Free Meal Count (K-12)", Server::Postgres),
            "Free Meal Count (K-12)"
        );
        assert_eq!(server_name("T-CHO", Server::Postgres), "T-CHO");
        assert_eq!(server_name("CustomerID", Server::Mysql), "CustomerID");
        assert_eq!(quote("a\"b", Server::Postgres), "\"a\"\"b\"");
        assert_eq!(quote("a`b", Server::Mysql), "`a``b`");
    }
}
