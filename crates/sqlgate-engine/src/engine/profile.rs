//! A comparison profile bound to its options: how gold and predicted SQL are prepared before
//! execution, whether row order matters, and how two results are compared.
//!
//! Only `spider-ts` rewrites query text, because it exists to reproduce the official
//! test-suite-sql-eval numbers (`value` -> `1`, `> =` -> `>=`, DISTINCT removal, `YEAR(CURDATE())`,
//! and its substring test for `order by`). The other profiles run queries as written.

use crate::engine::denotation::{denotations_equal, CompareOptions, Profile as DenotationProfile};
use crate::engine::spider2::{tables_match, Frame, Rules, Semantics};
use crate::engine::value::Row;
use crate::input::config::{CompareConfig, ProfileName};
use crate::sql::text;
use sqlparser::dialect::SQLiteDialect;
use sqlparser::parser::Parser;

/// A gold query ready to run: the text to execute and whether its row order is significant.
#[derive(Debug, Clone)]
pub struct PreparedGold {
    /// Text to execute.
    pub sql: String,
    /// Compare rows as sequences rather than bags / sets.
    pub order_matters: bool,
}

/// Most `plug_value` alternatives tried for one prediction: the official scorer tries all of
/// them, which for a prediction with many value slots never ends.
pub const PLUG_VALUE_LIMIT: usize = 1024;

/// The configured comparison profile.
#[derive(Debug, Clone)]
pub struct Profile {
    config: CompareConfig,
}

impl Profile {
    /// Binds a profile to its options.
    pub fn new(config: &CompareConfig) -> Self {
        Profile {
            config: config.clone(),
        }
    }

    /// The options this profile compares with.
    pub fn config(&self) -> &CompareConfig {
        &self.config
    }

    /// The comparison contract in words: what must agree for two results to be equal (row
    /// multiset or set, row order, column order, numbers, NULLs, ties), with every option.
    pub fn contract(&self) -> String {
        let rows = match self.config.profile {
            ProfileName::SpiderTs => "bags of rows, ordered when the gold text contains `order by`; columns may be permuted",
            ProfileName::Bird => "sets of rows, order ignored; column order fixed",
            ProfileName::Strict => "bags of rows, ordered when the gold's outer query has ORDER BY; column order fixed",
            ProfileName::Spider2 | ProfileName::Spider2Sound => {
                return self.spider2_rules().map(spider2_contract).unwrap_or_default()
            }
        };
        let numbers = if self.config.float_tolerance > 0.0 {
            format!(
                "numbers equal within {} (relative or absolute)",
                self.config.float_tolerance
            )
        } else {
            "numbers equal as Python compares them (1 = 1.0)".to_string()
        };
        format!(
            "{}: {rows}; {numbers}; NULL equals NULL; ties at LIMIT decided by the gold's result; keep_distinct {}; plug_value {}",
            self.config.profile.as_str(),
            self.config.keep_distinct,
            self.config.plug_value
        )
    }

    /// Prepares a gold query for execution.
    pub fn prepare_gold(&self, gold: &str) -> PreparedGold {
        match self.config.profile {
            ProfileName::SpiderTs => {
                let sql = self.spider_common(gold);
                let order_matters = text::order_matters(&sql);
                PreparedGold { sql, order_matters }
            }
            ProfileName::Bird | ProfileName::Spider2 | ProfileName::Spider2Sound => PreparedGold {
                sql: gold.to_string(),
                order_matters: false,
            },
            ProfileName::Strict => PreparedGold {
                sql: gold.to_string(),
                order_matters: has_top_level_order_by(gold),
            },
        }
    }

    /// Prepares a predicted query for execution.
    pub fn prepare_prediction(&self, prediction: &str) -> String {
        match self.config.profile {
            ProfileName::SpiderTs => {
                self.spider_common(&text::replace_value_placeholder(prediction))
            }
            _ => prediction.to_string(),
        }
    }

    /// The texts to run for a prediction, the prepared prediction first; with `plug_value`, then
    /// every way of filling its value slots with the gold's values (the official
    /// `--plug_value`). The prediction is right when any of them is. An error when there would
    /// be more than [`PLUG_VALUE_LIMIT`].
    pub fn prediction_variants(&self, gold: &str, prediction: &str) -> Result<Vec<String>, String> {
        let prepared = self.prepare_prediction(prediction);
        if !self.config.plug_value {
            return Ok(vec![prepared]);
        }
        let plugged = match self.config.profile {
            ProfileName::SpiderTs => {
                let gold = self.spider_before_execution(gold);
                let prediction =
                    self.spider_before_execution(&text::replace_value_placeholder(prediction));
                text::plug_gold_values(&gold, &prediction, PLUG_VALUE_LIMIT)
                    .map(|all| all.iter().map(|q| text::replace_cur_year(q)).collect())
            }
            _ => text::plug_gold_values(gold, prediction, PLUG_VALUE_LIMIT),
        };
        let plugged: Vec<String> = plugged.map_err(|count| {
            format!(
                "plug_value: {count} ways to fill the prediction's value slots exceed the limit of {PLUG_VALUE_LIMIT}"
            )
        })?;
        Ok(std::iter::once(prepared).chain(plugged).collect())
    }

    /// `gold` and `prediction` prepared as [`Profile::prepare_gold`] and
    /// [`Profile::prepare_prediction`] do but with DISTINCT kept, when this profile strips
    /// DISTINCT and one of them has it (`None` otherwise).
    pub fn keeping_distinct(&self, gold: &str, prediction: &str) -> Option<(String, String)> {
        let strips = self.config.profile == ProfileName::SpiderTs && !self.config.keep_distinct;
        let has = |sql: &str| sql.to_lowercase().contains("distinct");
        if !strips || !(has(gold) || has(prediction)) {
            return None;
        }
        let keep = |sql: &str| text::replace_cur_year(&text::normalize_spaced_operators(sql));
        Some((
            keep(gold),
            keep(&text::replace_value_placeholder(prediction)),
        ))
    }

    /// Gold and prediction as test suites run them on generated databases: prepared as
    /// [`Profile::prepare_gold`] and [`Profile::prepare_prediction`] do, but keeping DISTINCT
    /// inside aggregates ([`text::remove_select_distinct`]), which the official removal turns
    /// from `count(DISTINCT x)` into `count(x)`. `None` when that is the profile's own
    /// preparation (not `spider-ts`, `keep_distinct`, or no aggregate DISTINCT in either).
    pub fn suite_texts(&self, gold: &str, prediction: &str) -> Option<(PreparedGold, String)> {
        let strips = self.config.profile == ProfileName::SpiderTs && !self.config.keep_distinct;
        if !strips
            || !(text::has_aggregate_distinct(gold) || text::has_aggregate_distinct(prediction))
        {
            return None;
        }
        let prepare = |sql: &str| {
            text::replace_cur_year(&text::remove_select_distinct(
                &text::normalize_spaced_operators(sql),
            ))
        };
        let sql = prepare(gold);
        let order_matters = text::order_matters(&sql);
        Some((
            PreparedGold { sql, order_matters },
            prepare(&text::replace_value_placeholder(prediction)),
        ))
    }

    /// Whether two results are the same denotation under this profile.
    /// Under a spider2 profile, every column of `gold` is checked and order is ignored unless
    /// `order_matters`.
    pub fn same_result(&self, gold: &[Row], predicted: &[Row], order_matters: bool) -> bool {
        let profile = match self.config.profile {
            ProfileName::SpiderTs => DenotationProfile::SpiderTs,
            ProfileName::Bird => DenotationProfile::Bird,
            ProfileName::Strict => DenotationProfile::Strict,
            ProfileName::Spider2 | ProfileName::Spider2Sound => {
                let Some(rules) = self.spider2_rules() else {
                    return false;
                };
                let frame = |rows: &[Row]| {
                    let width = rows.first().map_or(1, Vec::len);
                    let names: Vec<String> = (0..width).map(|c| format!("c{c}")).collect();
                    Frame::from_rows(&names, rows, rules)
                };
                let (Ok(gold), Ok(predicted)) = (frame(gold), frame(predicted)) else {
                    return false;
                };
                let all: Vec<usize> = (0..gold.width()).collect();
                return tables_match(&predicted, &gold, &all, !order_matters, rules)
                    .unwrap_or(false);
            }
        };
        let options = CompareOptions {
            profile,
            float_tolerance: self.config.float_tolerance,
        };
        denotations_equal(gold, predicted, order_matters, &options)
    }

    /// Most rows a predicted result can have and still equal a gold result of `gold_rows` rows:
    /// `spider-ts` and `strict` compare row counts first; `bird` compares sets of rows and the
    /// spider2 profiles data frames, which any number of rows may match.
    pub fn most_matching_rows(&self, gold_rows: usize) -> usize {
        match self.config.profile {
            ProfileName::SpiderTs | ProfileName::Strict => gold_rows,
            ProfileName::Bird | ProfileName::Spider2 | ProfileName::Spider2Sound => usize::MAX,
        }
    }

    /// The comparison rules of a spider2 profile (its semantics and `compare.version`); `None`
    /// for the other profiles.
    pub fn spider2_rules(&self) -> Option<Rules> {
        let semantics = match self.config.profile {
            ProfileName::Spider2 => Semantics::Official,
            ProfileName::Spider2Sound => Semantics::Sound,
            _ => return None,
        };
        Some(Rules {
            semantics,
            version: self.config.version.unwrap_or_default(),
        })
    }

    /// The official rewrites shared by gold and prediction.
    fn spider_common(&self, sql: &str) -> String {
        text::replace_cur_year(&self.spider_before_execution(sql))
    }

    /// The official rewrites made before values are plugged in: spaced operators joined, and
    /// DISTINCT removed unless `keep_distinct` (the current year is replaced at execution).
    fn spider_before_execution(&self, sql: &str) -> String {
        let sql = text::normalize_spaced_operators(sql);
        if self.config.keep_distinct {
            sql
        } else {
            text::remove_distinct(&sql)
        }
    }
}

/// The contract of the spider2 profiles.
fn spider2_contract(rules: Rules) -> String {
    let sound = rules.semantics == Semantics::Sound;
    let order = match sound {
        false => "each column's values sorted on their own (the official code: values may be scrambled across rows)",
        true => "one row permutation of the prediction for every column",
    };
    let missing = match (sound, rules.version) {
        (false, crate::input::config::Spider2Version::Current) => "NaN counts as 0 (normalize())",
        _ => "NaN equals only NaN",
    };
    let integers = match sound {
        false => "an integer beyond 64 bits keeps its column text, as pandas reads it",
        true => "integers beyond 64 bits read as floats",
    };
    format!(
        "{} (evaluate.py version {}): every gold column (the item's condition_cols as evaluate.py reads them, else all) equals some predicted column as a list of values, extra predicted columns allowed; values typed as pandas read_csv types them after the official CSV export ({integers}); numbers within math.isclose(abs_tol=1e-2); NULL, empty, 'NULL', 'None', 'nan' ... are NaN and {missing}; rows in order unless the item's ignore_order, then {order}; right when any of the item's gold answers matches",
        if sound { "spider2-sound" } else { "spider2" },
        rules.version.as_str()
    )
}

/// True when the outermost query has an ORDER BY. A query sqlparser cannot read is checked for
/// an `ORDER BY` outside parentheses, string literals and quoted names instead.
fn has_top_level_order_by(sql: &str) -> bool {
    match Parser::parse_sql(&SQLiteDialect {}, sql) {
        Ok(statements) => statements.iter().any(|statement| match statement {
            sqlparser::ast::Statement::Query(query) => query.order_by.is_some(),
            _ => false,
        }),
        Err(_) => order_by_outside_parentheses(sql),
    }
}

fn order_by_outside_parentheses(sql: &str) -> bool {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut outside = String::with_capacity(sql.len());
    for c in sql.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"' | '`') => quote = Some(c),
            (None, '[') => quote = Some(']'),
            (None, '(') => depth += 1,
            (None, ')') => depth -= 1,
            (None, c) if depth == 0 => outside.push(c.to_ascii_lowercase()),
            (None, _) => outside.push(' '),
        }
    }
    outside
        .split_whitespace()
        .collect::<Vec<_>>()
        .windows(2)
        .any(|w| w == ["order", "by"])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_order_is_top_level_only() {
        assert!(has_top_level_order_by("SELECT a FROM t ORDER BY a"));
        assert!(!has_top_level_order_by(
            "SELECT a FROM t WHERE a IN (SELECT a FROM t ORDER BY a LIMIT 3)"
        ));
        assert!(order_by_outside_parentheses("SELEKT a FROM t ORDER  BY a"));
        assert!(!order_by_outside_parentheses(
            "SELEKT (x ORDER BY a) 'order by'"
        ));
    }
}
