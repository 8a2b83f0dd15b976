//! The SQL features of a (gold) query, for per-feature accuracy cells: joins, nested
//! sub-queries, set operations, GROUP BY / HAVING, ORDER BY with LIMIT, window functions, CASE,
//! date/time functions, string functions, DISTINCT, NULL tests and aggregates. One query has
//! any number of them.
//!
//! The query is read with sqlparser's tokenizer for the dialect of the engine that runs it
//! (SQLite, PostgreSQL, MySQL quoting and operators), and the features are found in its
//! tokens with their nesting depth, so a query any engine accepts is classified, even where
//! sqlparser's grammar lags the engine's.

use sqlparser::dialect::{Dialect, MySqlDialect, PostgreSqlDialect, SQLiteDialect};
use sqlparser::tokenizer::{Token, Tokenizer};
use std::collections::BTreeSet;

/// One SQL feature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Feature {
    /// An explicit JOIN, or several tables in one FROM.
    Join,
    /// A SELECT inside parentheses (a sub-query, a derived table, a CTE body).
    Nested,
    /// UNION, INTERSECT or EXCEPT.
    SetOperation,
    /// GROUP BY or HAVING.
    GroupBy,
    /// ORDER BY with a LIMIT (or FETCH FIRST) on the same query: a top-k.
    OrderLimit,
    /// A window function (`... OVER (...)`).
    Window,
    /// A CASE expression (or IIF / IF).
    Case,
    /// A date or time function (`strftime`, `date`, `julianday`, `EXTRACT`, `NOW()`, ...).
    DateTime,
    /// A string function (`substr`, `lower`, `replace`, `||`, ...).
    StringFunction,
    /// DISTINCT.
    Distinct,
    /// IS NULL / IS NOT NULL.
    NullTest,
    /// An aggregate (`count`, `sum`, `avg`, `min`, `max`, ...).
    Aggregate,
}

impl Feature {
    /// Every feature, in report order.
    pub const ALL: [Feature; 12] = [
        Feature::Join,
        Feature::Nested,
        Feature::SetOperation,
        Feature::GroupBy,
        Feature::OrderLimit,
        Feature::Window,
        Feature::Case,
        Feature::DateTime,
        Feature::StringFunction,
        Feature::Distinct,
        Feature::NullTest,
        Feature::Aggregate,
    ];

    /// The name in configs, reports and `summary.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Feature::Join => "join",
            Feature::Nested => "nested",
            Feature::SetOperation => "set_operation",
            Feature::GroupBy => "group_by",
            Feature::OrderLimit => "order_limit",
            Feature::Window => "window",
            Feature::Case => "case",
            Feature::DateTime => "date_time",
            Feature::StringFunction => "string_function",
            Feature::Distinct => "distinct",
            Feature::NullTest => "null_test",
            Feature::Aggregate => "aggregate",
        }
    }

    /// The feature a name stands for.
    pub fn parse(name: &str) -> Option<Feature> {
        Feature::ALL.into_iter().find(|f| f.as_str() == name)
    }
}

/// The SQL dialect a query is read in: the engine's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FeatureDialect {
    /// SQLite.
    #[default]
    Sqlite,
    /// PostgreSQL.
    Postgresql,
    /// MySQL / MariaDB.
    Mysql,
    /// DuckDB.
    Duckdb,
}

const AGGREGATES: [&str; 12] = [
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "total",
    "group_concat",
    "string_agg",
    "array_agg",
    "stddev",
    "variance",
    "bool_and",
];

const DATE_TIME_FUNCTIONS: [&str; 27] = [
    "date",
    "time",
    "datetime",
    "julianday",
    "unixepoch",
    "strftime",
    "timediff",
    "now",
    "extract",
    "date_part",
    "date_trunc",
    "age",
    "to_date",
    "to_timestamp",
    "year",
    "month",
    "day",
    "hour",
    "minute",
    "dayofweek",
    "datediff",
    "date_add",
    "date_sub",
    "timestampdiff",
    "date_format",
    "str_to_date",
    "curdate",
];

/// Date/time keywords used without parentheses.
const DATE_TIME_WORDS: [&str; 3] = ["current_date", "current_time", "current_timestamp"];

const STRING_FUNCTIONS: [&str; 24] = [
    "substr",
    "substring",
    "length",
    "char_length",
    "lower",
    "upper",
    "trim",
    "ltrim",
    "rtrim",
    "replace",
    "instr",
    "concat",
    "concat_ws",
    "left",
    "right",
    "position",
    "strpos",
    "split_part",
    "lpad",
    "rpad",
    "reverse",
    "locate",
    "printf",
    "format",
];

/// The features of `sql`, or the tokenizer's error.
pub fn features(sql: &str, dialect: FeatureDialect) -> Result<BTreeSet<Feature>, String> {
    let dialect: Box<dyn Dialect> = match dialect {
        FeatureDialect::Sqlite => Box::new(SQLiteDialect {}),
        FeatureDialect::Postgresql => Box::new(PostgreSqlDialect {}),
        FeatureDialect::Mysql => Box::new(MySqlDialect {}),
        FeatureDialect::Duckdb => Box::new(sqlparser::dialect::DuckDbDialect {}),
    };
    let tokens: Vec<Token> = Tokenizer::new(dialect.as_ref(), sql)
        .tokenize()
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect();
    Ok(Scan::default().run(&tokens))
}

/// Per nesting level (0 the statement, one more per open parenthesis): what was seen.
#[derive(Default, Clone)]
struct Level {
    in_from: bool,
    order_by: bool,
    limit: bool,
}

#[derive(Default)]
struct Scan {
    found: BTreeSet<Feature>,
    levels: Vec<Level>,
}

impl Scan {
    fn run(mut self, tokens: &[Token]) -> BTreeSet<Feature> {
        self.levels.push(Level::default());
        for (index, token) in tokens.iter().enumerate() {
            let next = tokens.get(index + 1);
            let previous = index.checked_sub(1).and_then(|i| tokens.get(i));
            match token {
                Token::LParen => self.levels.push(Level::default()),
                Token::RParen if self.levels.len() > 1 => {
                    self.close_level();
                }
                Token::Comma if self.level().in_from => {
                    self.found.insert(Feature::Join);
                }
                Token::StringConcat => {
                    self.found.insert(Feature::StringFunction);
                }
                Token::Word(word) if word.quote_style.is_none() => {
                    let lower = word.value.to_ascii_lowercase();
                    self.word(&lower, previous, next);
                }
                _ => {}
            }
        }
        while !self.levels.is_empty() {
            self.close_level();
        }
        self.found
    }

    fn level(&mut self) -> &mut Level {
        self.levels
            .last_mut()
            .expect("the statement level is never popped")
    }

    /// Ends a level: ORDER BY and LIMIT on one query make a top-k.
    fn close_level(&mut self) {
        if let Some(level) = self.levels.pop() {
            if level.order_by && level.limit {
                self.found.insert(Feature::OrderLimit);
            }
        }
    }

    fn word(&mut self, word: &str, previous: Option<&Token>, next: Option<&Token>) {
        let next_word =
            |w: &str| matches!(next, Some(Token::Word(n)) if n.value.eq_ignore_ascii_case(w));
        let called = matches!(next, Some(Token::LParen));
        let after_dot = matches!(previous, Some(Token::Period));
        let feature = match word {
            "join" => Some(Feature::Join),
            "select" if matches!(previous, Some(Token::LParen)) => Some(Feature::Nested),
            "union" | "intersect" | "except" => Some(Feature::SetOperation),
            "group" if next_word("by") => Some(Feature::GroupBy),
            "having" => Some(Feature::GroupBy),
            "over" if matches!(next, Some(Token::LParen) | Some(Token::Word(_))) => {
                Some(Feature::Window)
            }
            "case" | "iif" => Some(Feature::Case),
            "if" if called => Some(Feature::Case),
            "distinct" => Some(Feature::Distinct),
            "isnull" | "notnull" => Some(Feature::NullTest),
            "is" if next_word("null") || next_word("not") => Some(Feature::NullTest),
            _ if DATE_TIME_WORDS.contains(&word) => Some(Feature::DateTime),
            _ if called && !after_dot && AGGREGATES.contains(&word) => Some(Feature::Aggregate),
            _ if called && !after_dot && DATE_TIME_FUNCTIONS.contains(&word) => {
                Some(Feature::DateTime)
            }
            _ if called && !after_dot && STRING_FUNCTIONS.contains(&word) => {
                Some(Feature::StringFunction)
            }
            _ => None,
        };
        self.found.extend(feature);
        self.clause(
            word,
            next_word("by"),
            next_word("first") || next_word("next"),
        );
    }

    /// Tracks the clause of the current level: FROM (where a comma is a join), ORDER BY and
    /// LIMIT / FETCH FIRST.
    fn clause(&mut self, word: &str, by_follows: bool, fetch_first: bool) {
        let level = self.level();
        match word {
            "from" => level.in_from = true,
            "where" | "group" | "having" | "order" | "limit" | "window" | "union" | "intersect"
            | "except" | "on" | "using" => level.in_from = false,
            _ => {}
        }
        if word == "order" && by_follows {
            level.order_by = true;
        }
        if word == "limit" || word == "top" || (word == "fetch" && fetch_first) {
            level.limit = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(sql: &str, dialect: FeatureDialect) -> Vec<&'static str> {
        features(sql, dialect)
            .unwrap()
            .into_iter()
            .map(Feature::as_str)
            .collect()
    }

    #[test]
    fn each_feature_is_found_where_it_is_and_only_there() {
        let sqlite = FeatureDialect::Sqlite;
        assert_eq!(names("SELECT name FROM singer", sqlite), Vec::<&str>::new());
        assert_eq!(
            names(
                "SELECT T1.a FROM x AS T1 JOIN y AS T2 ON T1.id = T2.id",
                sqlite
            ),
            ["join"]
        );
        assert_eq!(
            names("SELECT a FROM x, y WHERE x.id = y.id", sqlite),
            ["join"]
        );
        assert_eq!(
            names("SELECT a, b FROM x WHERE c IN (1, 2)", sqlite),
            Vec::<&str>::new()
        );
        assert_eq!(
            names("SELECT a FROM x WHERE b > (SELECT avg(b) FROM x)", sqlite),
            ["nested", "aggregate"]
        );
        assert_eq!(
            names("SELECT a FROM x UNION SELECT a FROM y ORDER BY a", sqlite),
            ["set_operation"]
        );
        assert_eq!(
            names(
                "SELECT a, count(*) FROM x GROUP BY a HAVING count(*) > 1",
                sqlite
            ),
            ["group_by", "aggregate"]
        );
        assert_eq!(
            names("SELECT a FROM x ORDER BY b DESC LIMIT 1", sqlite),
            ["order_limit"]
        );
        assert_eq!(
            names("SELECT a FROM (SELECT a FROM x ORDER BY a) LIMIT 3", sqlite),
            ["nested"],
            "ORDER BY and LIMIT on different queries are no top-k"
        );
        assert_eq!(
            names("SELECT rank() OVER (ORDER BY a) FROM x", sqlite),
            ["window"]
        );
        assert_eq!(
            names(
                "SELECT CASE WHEN a IS NULL THEN 0 ELSE 1 END FROM x",
                sqlite
            ),
            ["case", "null_test"]
        );
        assert_eq!(
            names(
                "SELECT strftime('%Y', d) FROM x WHERE e IS NOT NULL",
                sqlite
            ),
            ["date_time", "null_test"]
        );
        assert_eq!(
            names("SELECT substr(a, 1, 2) || lower(b) FROM x", sqlite),
            ["string_function"]
        );
        assert_eq!(names("SELECT DISTINCT a FROM x", sqlite), ["distinct"]);
        assert_eq!(
            names("SELECT \"count\" FROM x WHERE 'is null' = b", sqlite),
            Vec::<&str>::new(),
            "quoted names and strings are not keywords"
        );
    }

    #[test]
    fn each_dialect_reads_its_own_quoting_and_functions() {
        assert_eq!(
            names(
                "SELECT `date`, EXTRACT(YEAR FROM d) FROM `t` LIMIT 5",
                FeatureDialect::Mysql
            ),
            ["date_time"]
        );
        assert_eq!(
            names(
                "SELECT \"T\".a::text || 'x' FROM \"T\" ORDER BY 1 FETCH FIRST 2 ROWS ONLY",
                FeatureDialect::Postgresql
            ),
            ["order_limit", "string_function"]
        );
        assert!(features("SELECT 'open", FeatureDialect::Sqlite).is_err());
    }
}
