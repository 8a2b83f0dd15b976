//! Whether a query's result depends on how the server breaks ties: an `ORDER BY ... LIMIT` (of
//! the query or of a subquery that runs on its own) whose cut falls between two rows with equal
//! ORDER BY keys. Such a query can return different rows from one execution to the next (MariaDB
//! breaks ties differently on different connections), so no two scorers can agree on it run for
//! run. Found from the rows at the cut, deterministically: the query is rewritten to return its
//! ORDER BY keys (aliases and positions resolved) for one row past the LIMIT, and the keys on
//! either side of each cut (the OFFSET, the OFFSET plus the LIMIT) compared.

use sqlparser::ast::{Expr, LimitClause, OrderByKind, SelectItem, SetExpr, Statement};
use sqlparser::dialect::Dialect;
use sqlparser::parser::Parser;

/// Rows of a query as text (`None` when the server refuses it, e.g. a correlated subquery).
pub type Run<'a> = dyn FnMut(&str) -> Option<Vec<Vec<String>>> + 'a;

/// Whether `sql` or one of its subqueries cuts a tie under `ORDER BY ... LIMIT`.
pub fn cuts_a_tie(dialect: &dyn Dialect, run: &mut Run<'_>, sql: &str) -> bool {
    subqueries(sql).into_iter().chain([sql]).any(|text| {
        let Some(probe) = probe(dialect, text) else {
            return false;
        };
        let Some(rows) = run(&probe.sql) else {
            return false;
        };
        let keys = |row: &Vec<String>| row[row.len() - probe.keys..].to_vec();
        probe
            .cuts
            .iter()
            .any(|&cut| cut > 0 && rows.len() > cut && keys(&rows[cut - 1]) == keys(&rows[cut]))
    })
}

/// A query returning the original columns then the ORDER BY keys, up to one row past the cut.
struct Probe {
    sql: String,
    /// How many key columns end each row.
    keys: usize,
    /// Row positions where the result is cut: a tie across one changes the rows returned.
    cuts: Vec<usize>,
}

fn probe(dialect: &dyn Dialect, sql: &str) -> Option<Probe> {
    let mut statements = Parser::parse_sql(dialect, sql).ok()?;
    let Statement::Query(query) = statements.pop()? else {
        return None;
    };
    let mut query = *query;
    let (limit, offset) = match query.limit_clause.as_ref()? {
        LimitClause::LimitOffset {
            limit: Some(limit),
            offset,
            ..
        } => (
            number(limit)?,
            offset.as_ref().map_or(Some(0), |o| number(&o.value))?,
        ),
        LimitClause::OffsetCommaLimit { offset, limit } => (number(limit)?, number(offset)?),
        LimitClause::LimitOffset { limit: None, .. } => return None,
    };
    let OrderByKind::Expressions(order) = &mut query.order_by.as_mut()?.kind else {
        return None;
    };
    let SetExpr::Select(select) = query.body.as_mut() else {
        return None;
    };
    if select.distinct.is_some() {
        return None;
    }
    for key in order.iter_mut() {
        if let Some(expr) = projected(&select.projection, &key.expr) {
            key.expr = expr;
        }
    }
    let keys = order.len();
    select.projection.extend(
        order
            .iter()
            .map(|key| SelectItem::UnnamedExpr(key.expr.clone())),
    );
    let cut = offset + limit;
    query.limit_clause = limit_clause(dialect, cut + 1)?;
    Some(Probe {
        sql: query.to_string(),
        keys,
        cuts: vec![offset, cut],
    })
}

fn number(expr: &Expr) -> Option<usize> {
    expr.to_string().parse().ok()
}

/// The projected expression an ORDER BY key names by position or by alias.
fn projected(projection: &[SelectItem], key: &Expr) -> Option<Expr> {
    if let Some(position) = number(key) {
        return match projection.get(position.checked_sub(1)?)? {
            SelectItem::UnnamedExpr(expr) | SelectItem::ExprWithAlias { expr, .. } => {
                Some(expr.clone())
            }
            _ => None,
        };
    }
    let Expr::Identifier(name) = key else {
        return None;
    };
    projection.iter().find_map(|item| match item {
        SelectItem::ExprWithAlias { expr, alias }
            if alias.value.eq_ignore_ascii_case(&name.value) =>
        {
            Some(expr.clone())
        }
        _ => None,
    })
}

/// `LIMIT rows`.
fn limit_clause(dialect: &dyn Dialect, rows: usize) -> Option<Option<LimitClause>> {
    let parsed = Parser::parse_sql(dialect, &format!("SELECT 1 LIMIT {rows}")).ok()?;
    match parsed.into_iter().next()? {
        Statement::Query(query) => Some(query.limit_clause),
        _ => None,
    }
}

/// The text of every parenthesised `SELECT` inside `sql` (quotes are not tracked: a parenthesis
/// inside a string literal only yields a text that does not parse).
fn subqueries(sql: &str) -> Vec<&str> {
    let bytes = sql.as_bytes();
    let mut found = Vec::new();
    for (open, _) in sql.match_indices('(') {
        let inner = sql[open + 1..].trim_start();
        if !inner
            .get(..6)
            .is_some_and(|w| w.eq_ignore_ascii_case("select"))
        {
            continue;
        }
        let mut depth = 0usize;
        for (at, byte) in bytes.iter().enumerate().skip(open) {
            match byte {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        found.push(&sql[open + 1..at]);
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    found
}
