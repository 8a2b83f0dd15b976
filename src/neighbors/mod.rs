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
mod literals;
mod walk;

use crate::schema::Schema;
use crate::value::Value as Constant;
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
    let text = crate::spider_text::normalize_spaced_operators(gold_sql);
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
