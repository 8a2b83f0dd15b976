//! Neighbor queries and gold constants for test-suite distillation (seed 000 sections 3.1 and
//! 4.1).
//!
//! A test suite is good when it tells the gold query apart from every query that differs from
//! it by one small edit. Those neighbors are made here by walking every (sub)query of the gold
//! and applying one edit at a time: numbers (random, +-1, +-0.001), strings (random, sub-string,
//! concatenation, LIKE wildcards), comparison / aggregate / AND-OR / LIKE / IN / BETWEEN / EXISTS
//! / IS NULL / set operators, ORDER BY direction, column names, DISTINCT, and dropped spans
//! (WHERE, a conjunct, GROUP BY, HAVING, ORDER BY, LIMIT, a join condition, a projected column,
//! an aggregate, NOT, one side of a set operation). The gold's constants (BETWEEN bounds and IN
//! lists included) are planted into the random databases so that they can tell those edits apart.

mod edits;
mod equivalence;
mod literals;
mod walk;

pub use equivalence::{normal_form, ColumnFact, ColumnFacts};

use crate::engine::value::Value as Constant;
use crate::sql::schema::Schema;
use edits::{apply, candidates, Replacement};
use sqlparser::ast::{Expr, Query, Statement, Value};
use sqlparser::dialect::SQLiteDialect;
use sqlparser::parser::Parser;
use std::collections::HashSet;
use walk::{walk_query, Scope, Site};

/// A gold query's neighbours (seed 000 section 3.1): small edits expected to change its meaning.
///
/// Deterministic for a seed, deduplicated, in a stable order, never the gold itself (compared as
/// sqlparser prints them). Each is SQLite text printed from sqlparser's AST; whether it executes
/// is for the caller to check. A gold that sqlparser cannot read as one query has no neighbors.
pub fn neighbors(gold_sql: &str, schema: &Schema, seed: u64) -> Vec<String> {
    let Some(gold) = parse_gold(gold_sql, Some(schema)) else {
        return Vec::new();
    };
    let Some(gold_text) = canonical(&gold.to_string()) else {
        return Vec::new();
    };
    let mut seen = HashSet::from([gold_text]);
    let mut found = Vec::new();
    for (target, replacement) in site_edits(&gold, schema, seed) {
        let Some(text) = edited_text(&gold, target, replacement) else {
            continue;
        };
        if seen.insert(text.clone()) {
            found.push(text);
        }
    }
    found
}

/// Constants of a gold query, to plant into random databases (numbers, strings, LIKE patterns
/// without wildcards, BETWEEN bounds, IN lists, LIMIT excluded).
///
/// In order of first appearance, deduplicated with SQLite's value equality (`1` = `1.0`).
/// Double-quoted words count as strings, as SQLite reads them when no column has that name. A
/// query sqlparser cannot read has no constants.
pub fn constants(gold_sql: &str) -> Vec<Constant> {
    let Some(mut gold) = parse_gold(gold_sql, None) else {
        return Vec::new();
    };
    let mut found: Vec<Constant> = Vec::new();
    walk_query(&mut gold, &mut Scope::default(), &mut |site, _| {
        if let Site::Expr(expr, role) = site {
            for constant in literals::literal_constants(expr, role) {
                if !found.contains(&constant) {
                    found.push(constant);
                }
            }
        }
    });
    found
}

/// What a gold query's conditions ask of the data, so that random databases can be made to
/// meet them (seed 000 A.2: every gold query must return rows on some suite database).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Conditions {
    /// `(column, constant)`: the lower-case column name (qualifier dropped) compared with a
    /// constant by `=`, `<`, LIKE, IN or BETWEEN, and that constant (LIKE wildcards removed).
    pub compared: Vec<(String, Constant)>,
    /// Integer constants a HAVING clause compares `count(...)` with: group sizes the data
    /// must reach.
    pub group_sizes: Vec<i64>,
}

/// The conditions of a gold query (see [`Conditions`]); none when sqlparser cannot read it.
pub fn conditions(gold_sql: &str) -> Conditions {
    let mut found = Conditions::default();
    let Some(mut gold) = parse_gold(gold_sql, None) else {
        return found;
    };
    walk_query(
        &mut gold,
        &mut Scope::default(),
        &mut |site, _| match site {
            Site::Expr(expr, _) => {
                for (column, constant) in compared_constants(expr) {
                    if !found.compared.contains(&(column.clone(), constant.clone())) {
                        found.compared.push((column, constant));
                    }
                }
            }
            Site::Select(select) => {
                if let Some(having) = &select.having {
                    count_constants(having, &mut found.group_sizes);
                }
            }
            _ => {}
        },
    );
    found
}

/// The column an expression reads directly, lower-case and without qualifier.
fn column_name(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Identifier(ident) => Some(ident.value.to_lowercase()),
        Expr::CompoundIdentifier(parts) => parts.last().map(|p| p.value.to_lowercase()),
        Expr::Nested(inner) => column_name(inner),
        _ => None,
    }
}

/// `(column, constant)` pairs of one comparison between a column and literals.
fn compared_constants(expr: &Expr) -> Vec<(String, Constant)> {
    use walk::Role;
    let pairs = |column: &Expr, literals: &[(&Expr, Role)]| -> Vec<(String, Constant)> {
        let Some(name) = column_name(column) else {
            return Vec::new();
        };
        literals
            .iter()
            .flat_map(|(literal, role)| literals::literal_constants(literal, *role))
            .map(|constant| (name.clone(), constant))
            .collect()
    };
    match expr {
        Expr::BinaryOp { left, op, right } if is_comparison(op) => {
            let mut all = pairs(left, &[(right, Role::Plain)]);
            all.extend(pairs(right, &[(left, Role::Plain)]));
            all
        }
        Expr::Like { expr, pattern, .. } | Expr::ILike { expr, pattern, .. } => {
            pairs(expr, &[(pattern, Role::LikePattern)])
        }
        Expr::InList { expr, list, .. } => {
            let items: Vec<(&Expr, Role)> = list.iter().map(|item| (item, Role::Plain)).collect();
            pairs(expr, &items)
        }
        Expr::Between {
            expr, low, high, ..
        } => pairs(expr, &[(low, Role::Plain), (high, Role::Plain)]),
        _ => Vec::new(),
    }
}

fn is_comparison(op: &sqlparser::ast::BinaryOperator) -> bool {
    use sqlparser::ast::BinaryOperator::*;
    matches!(op, Eq | NotEq | Lt | LtEq | Gt | GtEq)
}

/// Integer constants compared with `count(...)` anywhere in a HAVING condition.
fn count_constants(expr: &Expr, sizes: &mut Vec<i64>) {
    let is_count = |e: &Expr| matches!(e, Expr::Function(f) if f.name.to_string().eq_ignore_ascii_case("count"));
    let integer = |e: &Expr| match literals::literal_constants(e, walk::Role::Plain).as_slice() {
        [Constant::Int(n)] => Some(*n),
        _ => None,
    };
    match expr {
        Expr::BinaryOp { left, op, right } if is_comparison(op) => {
            for (count, constant) in [(left, right), (right, left)] {
                if let (true, Some(n)) = (is_count(count), integer(constant)) {
                    sizes.push(n);
                }
            }
        }
        Expr::BinaryOp { left, right, .. } => {
            count_constants(left, sizes);
            count_constants(right, sizes);
        }
        Expr::Between {
            expr, low, high, ..
        } if is_count(expr) => sizes.extend([low, high].into_iter().filter_map(|e| integer(e))),
        Expr::Nested(inner) | Expr::UnaryOp { expr: inner, .. } => count_constants(inner, sizes),
        _ => {}
    }
}

/// Every edit the sites of `gold` propose, as (site index, replacement), in walk order. Each
/// site draws its random values from its own generator, so a site's edits do not depend on the
/// others'.
fn site_edits(gold: &Query, schema: &Schema, seed: u64) -> Vec<(usize, Replacement)> {
    let mut probe = gold.clone();
    let mut index = 0;
    let mut edits = Vec::new();
    walk_query(&mut probe, &mut Scope::default(), &mut |site, scope| {
        let mut rng = fastrand::Rng::with_seed(site_seed(seed, index));
        for replacement in candidates(&site, scope, schema, &mut rng) {
            edits.push((index, replacement));
        }
        index += 1;
    });
    edits
}

fn site_seed(seed: u64, index: usize) -> u64 {
    seed ^ (index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The canonical text of `gold` with the site numbered `target` replaced, or `None` when the
/// result does not parse back.
fn edited_text(gold: &Query, target: usize, replacement: Replacement) -> Option<String> {
    let mut edited = gold.clone();
    let mut pending = Some(replacement);
    let mut index = 0;
    let mut applied = false;
    walk_query(&mut edited, &mut Scope::default(), &mut |site, _| {
        if index == target {
            if let Some(replacement) = pending.take() {
                applied = apply(site, replacement);
            }
        }
        index += 1;
    });
    if !applied {
        return None;
    }
    canonical(&edited.to_string())
}

/// The text sqlparser prints for `sql` when it is exactly one query.
fn canonical(sql: &str) -> Option<String> {
    parse_query(sql).map(|query| query.to_string())
}

fn parse_query(sql: &str) -> Option<Query> {
    let mut statements = Parser::parse_sql(&SQLiteDialect {}, sql).ok()?;
    match (statements.pop(), statements.is_empty()) {
        (Some(Statement::Query(query)), true) => Some(*query),
        _ => None,
    }
}

/// Parses a Spider gold query: spaced operators (`> =`) joined, and double-quoted words that are
/// not columns of `schema` (all of them without a schema) read as the strings SQLite takes them
/// for.
fn parse_gold(gold_sql: &str, schema: Option<&Schema>) -> Option<Query> {
    let text = crate::sql::text::normalize_spaced_operators(gold_sql);
    let mut query = parse_query(&text)?;
    let is_column = |name: &str| {
        let name = name.to_lowercase();
        schema.is_some_and(|schema| {
            schema
                .tables()
                .iter()
                .any(|(_, columns)| columns.contains(&name))
        })
    };
    walk_query(&mut query, &mut Scope::default(), &mut |site, _| {
        if let Site::Expr(expr, _) = site {
            if let Expr::Identifier(ident) = expr {
                if ident.quote_style == Some('"') && !is_column(&ident.value) {
                    *expr = Expr::value(Value::SingleQuotedString(ident.value.clone()));
                }
            }
        }
    });
    Some(query)
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex::Regex;

    /// `t(a, b)` and `u(a, c)`.
    fn schema() -> Schema {
        Schema::new(vec![
            ("t".into(), vec!["a".into(), "b".into()]),
            ("u".into(), vec!["a".into(), "c".into()]),
        ])
    }

    /// Asserts the exact neighbor list; in `expected`, `#` stands for a random integer and `$`
    /// for a random four-letter string.
    fn assert_neighbors(sql: &str, expected: &[&str]) {
        let found = neighbors(sql, &schema(), 1);
        let patterns: Vec<Regex> = expected
            .iter()
            .map(|e| {
                let escaped = regex::escape(e)
                    .replace('#', r"-?[0-9]+(\.[0-9]+)?")
                    .replace(r"\$", "[a-z]{4}");
                Regex::new(&format!("^{escaped}$")).unwrap()
            })
            .collect();
        let matches = found.len() == patterns.len()
            && found.iter().zip(&patterns).all(|(f, p)| p.is_match(f));
        assert!(matches, "neighbors of `{sql}`:\n{}", found.join("\n"));
    }

    #[test]
    fn columns_are_swapped_within_the_table_and_across_tables_in_scope() {
        assert_neighbors(
            "SELECT a FROM t",
            &["SELECT DISTINCT a FROM t", "SELECT b FROM t"],
        );
        assert_neighbors(
            "SELECT T1.b FROM t AS T1 JOIN u AS T2 ON T1.a = T2.a",
            &[
                "SELECT DISTINCT T1.b FROM t AS T1 JOIN u AS T2 ON T1.a = T2.a",
                "SELECT T1.a FROM t AS T1 JOIN u AS T2 ON T1.a = T2.a",
                "SELECT T1.b FROM t AS T1 JOIN u AS T2",
                "SELECT T1.b FROM t AS T1 JOIN u AS T2 ON T1.a < T2.a",
                "SELECT T1.b FROM t AS T1 JOIN u AS T2 ON T1.a <= T2.a",
                "SELECT T1.b FROM t AS T1 JOIN u AS T2 ON T1.a > T2.a",
                "SELECT T1.b FROM t AS T1 JOIN u AS T2 ON T1.a >= T2.a",
                "SELECT T1.b FROM t AS T1 JOIN u AS T2 ON T1.a <> T2.a",
                "SELECT T1.b FROM t AS T1 JOIN u AS T2 ON T1.b = T2.a",
                "SELECT T1.b FROM t AS T1 JOIN u AS T2 ON T2.a = T2.a",
                "SELECT T1.b FROM t AS T1 JOIN u AS T2 ON T1.a = T2.c",
                "SELECT T1.b FROM t AS T1 JOIN u AS T2 ON T1.a = T1.a",
            ],
        );
    }

    #[test]
    fn aggregates_are_swapped_toggled_and_dropped_but_count_star_is_kept() {
        assert_neighbors(
            "SELECT max(a) FROM t",
            &[
                "SELECT DISTINCT max(a) FROM t",
                "SELECT min(a) FROM t",
                "SELECT avg(a) FROM t",
                "SELECT sum(a) FROM t",
                "SELECT count(a) FROM t",
                "SELECT max(DISTINCT a) FROM t",
                "SELECT a FROM t",
                "SELECT max(b) FROM t",
            ],
        );
        assert_neighbors(
            "SELECT count(*) FROM t",
            &["SELECT DISTINCT count(*) FROM t"],
        );
    }

    #[test]
    fn order_by_and_limit_are_flipped_moved_and_dropped() {
        assert_neighbors(
            "SELECT a FROM t ORDER BY b DESC LIMIT 3",
            &[
                "SELECT a FROM t ORDER BY b DESC",
                "SELECT a FROM t",
                "SELECT a FROM t LIMIT 3",
                "SELECT DISTINCT a FROM t ORDER BY b DESC LIMIT 3",
                "SELECT b FROM t ORDER BY b DESC LIMIT 3",
                "SELECT a FROM t ORDER BY b LIMIT 3",
                "SELECT a FROM t ORDER BY a DESC LIMIT 3",
                "SELECT a FROM t ORDER BY b DESC LIMIT 2",
                "SELECT a FROM t ORDER BY b DESC LIMIT 4",
            ],
        );
    }

    #[test]
    fn set_operations_are_swapped_and_split() {
        assert_neighbors(
            "SELECT a FROM t UNION SELECT a FROM u",
            &[
                "SELECT a FROM t INTERSECT SELECT a FROM u",
                "SELECT a FROM t EXCEPT SELECT a FROM u",
                "SELECT a FROM t UNION ALL SELECT a FROM u",
                "SELECT a FROM t",
                "SELECT a FROM u",
                "SELECT DISTINCT a FROM t UNION SELECT a FROM u",
                "SELECT b FROM t UNION SELECT a FROM u",
                "SELECT a FROM t UNION SELECT DISTINCT a FROM u",
                "SELECT a FROM t UNION SELECT c FROM u",
            ],
        );
    }

    #[test]
    fn nested_queries_get_their_own_edits() {
        assert_neighbors(
            "SELECT a FROM t WHERE a NOT IN (SELECT a FROM u)",
            &[
                "SELECT DISTINCT a FROM t WHERE a NOT IN (SELECT a FROM u)",
                "SELECT a FROM t",
                "SELECT b FROM t WHERE a NOT IN (SELECT a FROM u)",
                "SELECT a FROM t WHERE a IN (SELECT a FROM u)",
                "SELECT a FROM t WHERE b NOT IN (SELECT a FROM u)",
                "SELECT a FROM t WHERE a NOT IN (SELECT DISTINCT a FROM u)",
                "SELECT a FROM t WHERE a NOT IN (SELECT c FROM u)",
                "SELECT a FROM t WHERE a NOT IN (SELECT t.a FROM u)",
            ],
        );
    }

    #[test]
    fn group_by_having_and_numbers() {
        assert_neighbors(
            "SELECT a, count(*) FROM t GROUP BY a HAVING count(*) > 1",
            &[
                "SELECT DISTINCT a, count(*) FROM t GROUP BY a HAVING count(*) > 1",
                "SELECT a, count(*) FROM t GROUP BY a",
                "SELECT a, count(*) FROM t",
                "SELECT count(*) FROM t GROUP BY a HAVING count(*) > 1",
                "SELECT a FROM t GROUP BY a HAVING count(*) > 1",
                "SELECT b, count(*) FROM t GROUP BY a HAVING count(*) > 1",
                "SELECT a, count(*) FROM t GROUP BY b HAVING count(*) > 1",
                "SELECT a, count(*) FROM t GROUP BY a HAVING count(*) < 1",
                "SELECT a, count(*) FROM t GROUP BY a HAVING count(*) <= 1",
                "SELECT a, count(*) FROM t GROUP BY a HAVING count(*) >= 1",
                "SELECT a, count(*) FROM t GROUP BY a HAVING count(*) = 1",
                "SELECT a, count(*) FROM t GROUP BY a HAVING count(*) <> 1",
                "SELECT a, count(*) FROM t GROUP BY a HAVING count(*) > 2",
                "SELECT a, count(*) FROM t GROUP BY a HAVING count(*) > 0",
                "SELECT a, count(*) FROM t GROUP BY a HAVING count(*) > #",
            ],
        );
    }

    #[test]
    fn between_bounds_move_like_other_numbers() {
        assert_neighbors(
            "SELECT a FROM t WHERE b BETWEEN 5000 AND 10000",
            &[
                "SELECT DISTINCT a FROM t WHERE b BETWEEN 5000 AND 10000",
                "SELECT a FROM t",
                "SELECT b FROM t WHERE b BETWEEN 5000 AND 10000",
                "SELECT a FROM t WHERE b NOT BETWEEN 5000 AND 10000",
                "SELECT a FROM t WHERE a BETWEEN 5000 AND 10000",
                "SELECT a FROM t WHERE b BETWEEN 5001 AND 10000",
                "SELECT a FROM t WHERE b BETWEEN 4999 AND 10000",
                "SELECT a FROM t WHERE b BETWEEN # AND 10000",
                "SELECT a FROM t WHERE b BETWEEN 5000 AND 10001",
                "SELECT a FROM t WHERE b BETWEEN 5000 AND 9999",
                "SELECT a FROM t WHERE b BETWEEN 5000 AND #",
            ],
        );
    }

    #[test]
    fn strings_like_patterns_and_logical_operators() {
        assert_neighbors(
            "SELECT a FROM t WHERE b = \"Fr\" OR b LIKE 'x%'",
            &[
                "SELECT DISTINCT a FROM t WHERE b = 'Fr' OR b LIKE 'x%'",
                "SELECT a FROM t",
                "SELECT b FROM t WHERE b = 'Fr' OR b LIKE 'x%'",
                "SELECT a FROM t WHERE b = 'Fr' AND b LIKE 'x%'",
                "SELECT a FROM t WHERE b LIKE 'x%'",
                "SELECT a FROM t WHERE b = 'Fr'",
                "SELECT a FROM t WHERE b < 'Fr' OR b LIKE 'x%'",
                "SELECT a FROM t WHERE b <= 'Fr' OR b LIKE 'x%'",
                "SELECT a FROM t WHERE b > 'Fr' OR b LIKE 'x%'",
                "SELECT a FROM t WHERE b >= 'Fr' OR b LIKE 'x%'",
                "SELECT a FROM t WHERE b <> 'Fr' OR b LIKE 'x%'",
                "SELECT a FROM t WHERE a = 'Fr' OR b LIKE 'x%'",
                "SELECT a FROM t WHERE b = '$' OR b LIKE 'x%'",
                "SELECT a FROM t WHERE b = 'F' OR b LIKE 'x%'",
                "SELECT a FROM t WHERE b = 'r' OR b LIKE 'x%'",
                "SELECT a FROM t WHERE b = 'Fr$' OR b LIKE 'x%'",
                "SELECT a FROM t WHERE b = '$Fr' OR b LIKE 'x%'",
                "SELECT a FROM t WHERE b = 'Fr' OR b NOT LIKE 'x%'",
                "SELECT a FROM t WHERE b = 'Fr' OR a LIKE 'x%'",
                "SELECT a FROM t WHERE b = 'Fr' OR b LIKE '%x%'",
                "SELECT a FROM t WHERE b = 'Fr' OR b LIKE '%x'",
                "SELECT a FROM t WHERE b = 'Fr' OR b LIKE 'x'",
                "SELECT a FROM t WHERE b = 'Fr' OR b LIKE '$%'",
                "SELECT a FROM t WHERE b = 'Fr' OR b LIKE 'x$%'",
                "SELECT a FROM t WHERE b = 'Fr' OR b LIKE '$x%'",
            ],
        );
    }

    #[test]
    fn in_lists_reals_not_and_null_tests() {
        assert_neighbors(
            "SELECT a FROM t WHERE b IN (1, 2.5) AND NOT a IS NULL",
            &[
                "SELECT DISTINCT a FROM t WHERE b IN (1, 2.5) AND NOT a IS NULL",
                "SELECT a FROM t",
                "SELECT b FROM t WHERE b IN (1, 2.5) AND NOT a IS NULL",
                "SELECT a FROM t WHERE b IN (1, 2.5) OR NOT a IS NULL",
                "SELECT a FROM t WHERE NOT a IS NULL",
                "SELECT a FROM t WHERE b IN (1, 2.5)",
                "SELECT a FROM t WHERE b NOT IN (1, 2.5) AND NOT a IS NULL",
                "SELECT a FROM t WHERE b IN (2.5) AND NOT a IS NULL",
                "SELECT a FROM t WHERE b IN (1) AND NOT a IS NULL",
                "SELECT a FROM t WHERE a IN (1, 2.5) AND NOT a IS NULL",
                "SELECT a FROM t WHERE b IN (2, 2.5) AND NOT a IS NULL",
                "SELECT a FROM t WHERE b IN (0, 2.5) AND NOT a IS NULL",
                "SELECT a FROM t WHERE b IN (#, 2.5) AND NOT a IS NULL",
                "SELECT a FROM t WHERE b IN (1, 2.501) AND NOT a IS NULL",
                "SELECT a FROM t WHERE b IN (1, 2.499) AND NOT a IS NULL",
                "SELECT a FROM t WHERE b IN (1, #) AND NOT a IS NULL",
                "SELECT a FROM t WHERE b IN (1, 2.5) AND a IS NULL",
                "SELECT a FROM t WHERE b IN (1, 2.5) AND NOT a IS NOT NULL",
                "SELECT a FROM t WHERE b IN (1, 2.5) AND NOT b IS NULL",
            ],
        );
    }

    #[test]
    fn constants_cover_between_in_and_like_pieces_but_not_limit() {
        assert_eq!(
            constants(
                "SELECT a FROM t WHERE c BETWEEN 5000 AND 10000 AND d IN (1, 'x', 1.0) \
                 AND e LIKE '%ab%c' AND f > -2.5 AND g = \"Fr\" LIMIT 3"
            ),
            [
                Constant::Int(5000),
                Constant::Int(10000),
                Constant::Int(1),
                Constant::Text("x".into()),
                Constant::Text("ab".into()),
                Constant::Text("c".into()),
                Constant::Real(-2.5),
                Constant::Text("Fr".into()),
            ]
        );
    }

    #[test]
    fn conditions_pair_columns_with_their_constants_and_find_group_sizes() {
        let found = conditions(
            "SELECT T1.a FROM t AS T1 JOIN u AS T2 ON T1.a = T2.a WHERE T2.c = \"asia\" \
             AND 3 < T1.b AND T1.b LIKE '%x%' AND c IN (1, 2) GROUP BY T1.a \
             HAVING count(*) > 10 AND count(*) BETWEEN 2 AND 40",
        );
        assert_eq!(
            found.compared,
            [
                ("c".to_string(), Constant::Text("asia".into())),
                ("b".to_string(), Constant::Int(3)),
                ("b".to_string(), Constant::Text("x".into())),
                ("c".to_string(), Constant::Int(1)),
                ("c".to_string(), Constant::Int(2)),
            ]
        );
        assert_eq!(found.group_sizes, [10, 2, 40]);
        assert_eq!(conditions("SELEC"), Conditions::default());
    }

    #[test]
    fn seeds_change_only_random_values_and_bad_sql_has_none() {
        let sql = "SELECT a FROM t WHERE b > 7";
        let (one, two) = (neighbors(sql, &schema(), 1), neighbors(sql, &schema(), 2));
        assert_eq!(one.len(), two.len());
        assert_ne!(one, two);
        assert!(neighbors("SELEC a FROM", &schema(), 1).is_empty());
        assert!(constants("SELEC 1 FROM").is_empty());
    }
}
