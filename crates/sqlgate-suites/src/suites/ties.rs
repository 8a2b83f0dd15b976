//! Whether a gold query's own answer is determined on a database: an `ORDER BY ... LIMIT k`
//! whose cut falls on tied sort keys (rows k and k+1 have the same keys), a `LIMIT k` without
//! ORDER BY over more than k rows that are not all alike, or a bare-column
//! `MIN` / `MAX` arg-row (`SELECT name, max(x) FROM t`) whose extreme value is held by several
//! rows, leaves the answer to SQLite's scan order, or, when the tied rows project the same
//! values, leaves to the question whether one of them or all are the answer (`LIMIT 1` returns
//! one of two equal rows, `= (SELECT max ...)` both). Such a suite database does not decide a test-suite verdict: the item is judged on the
//! others (see docs/METRICS.md, "Distilled test suites").
//!
//! Detection runs probe queries derived from the gold (its top-level query and the sub-queries
//! of its WHERE / HAVING / set operations): the same query with its sort keys appended to the
//! projection and one more row, or the arg-row rows at the extreme value. A probe that fails to
//! run (a correlated sub-query) decides nothing.

use crate::engine::exec::Executor;
use crate::engine::sqlite::Scratch;
use crate::engine::value::{Row, Value};
use sqlparser::ast::{
    BinaryOperator, Expr, Function, FunctionArg, FunctionArgExpr, FunctionArguments, LimitClause,
    OrderByKind, Query, Select, SelectItem, SetExpr, Value as AstValue,
};
use sqlparser::dialect::SQLiteDialect;
use sqlparser::parser::Parser;
use std::path::Path;

/// A probe: a query and how to read its rows.
#[derive(Debug, Clone, PartialEq)]
pub enum Probe {
    /// Rows of the query with `keys` sort-key columns appended, one past the cut: the cut is
    /// tied when that row shares the keys of the last row inside it.
    Cut {
        /// The probe SQL.
        sql: String,
        /// The original LIMIT.
        limit: usize,
        /// Number of appended key columns.
        keys: usize,
    },
    /// Projected rows at the extreme value: more than one means the arg-row is tied.
    ArgRow {
        /// The probe SQL.
        sql: String,
    },
    /// `LIMIT k` without ORDER BY: every row ties on the (absent) sort key, so which k rows come
    /// back is the engine's scan order when there are more than k and they are not all alike.
    /// The probe answers one row, 1 when so.
    Unordered {
        /// The probe SQL.
        sql: String,
        /// The original LIMIT.
        limit: usize,
    },
}

/// The tie probes of a gold query (empty when it has no LIMIT cut or arg-row, or does not
/// parse).
pub fn probes(sql: &str) -> Vec<Probe> {
    let Ok(statements) = Parser::parse_sql(&SQLiteDialect {}, sql) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for statement in statements {
        if let sqlparser::ast::Statement::Query(query) = statement {
            collect(&query, &mut found);
        }
    }
    found
}

/// Whether a probe's rows show a tie that leaves the gold's answer undetermined.
pub fn tied(probe: &Probe, rows: &[Row]) -> bool {
    match probe {
        Probe::Cut { limit, keys, .. } => {
            let Some(last) = rows.get(limit.wrapping_sub(1)) else {
                return false;
            };
            let width = last.len().saturating_sub(*keys);
            let same_keys = |row: &&Row| row.len() == last.len() && row[width..] == last[width..];
            rows.get(*limit).is_some_and(|row| same_keys(&row))
        }
        Probe::ArgRow { .. } => rows.len() > 1,
        Probe::Unordered { .. } => matches!(rows, [row] if row.first() == Some(&Value::Int(1))),
    }
}

/// Whether the gold query `sql` (as prepared by the profile) has an undetermined answer on the
/// database at `db`: some probe shows a tie at its cut or arg-row.
pub fn undetermined(executor: &Executor, db: &Path, sql: &str) -> bool {
    undetermined_with(sql, &|probe| executor.run(db, probe).ok())
}

/// Whether the gold query `sql` has an undetermined answer on the private copy `scratch` (a
/// counterexample being shrunk or repaired).
pub fn undetermined_on(executor: &Executor, scratch: &Scratch, sql: &str) -> bool {
    undetermined_with(sql, &|probe| scratch.run(executor, probe).ok())
}

/// Whether `sql` has an undetermined answer on the database `run` executes probes on (a probe
/// that fails, `None`, decides nothing).
pub fn undetermined_with(
    sql: &str,
    run: &dyn Fn(&str) -> Option<Vec<crate::engine::value::Row>>,
) -> bool {
    undetermined_by(&probes(sql), run)
}

/// Like [`undetermined_with`], with the query's [`probes`] made once by the caller: a
/// counterexample being shrunk asks after every deletion, and parsing the gold each time was a
/// good part of the shrinking.
pub fn undetermined_by(
    probes: &[Probe],
    run: &dyn Fn(&str) -> Option<Vec<crate::engine::value::Row>>,
) -> bool {
    probes
        .iter()
        .any(|probe| run(probe.sql()).is_some_and(|rows| tied(probe, &rows)))
}

/// The top-level `ORDER BY` of a query, read through a probe: the query with its sort keys
/// appended to the projection and without its LIMIT, so every row and its keys are seen.
#[derive(Debug, Clone, PartialEq)]
pub struct SortProbe {
    /// The probe SQL.
    pub sql: String,
    /// The sort keys as written, in order.
    pub keys: Vec<String>,
    /// The original LIMIT, when there is one.
    pub limit: Option<usize>,
}

/// The sort probe of a query whose top level is one SELECT with ORDER BY (no OFFSET); `None`
/// otherwise or when it does not parse.
pub fn sort_probe(sql: &str) -> Option<SortProbe> {
    let statements = Parser::parse_sql(&SQLiteDialect {}, sql).ok()?;
    let [sqlparser::ast::Statement::Query(query)] = statements.as_slice() else {
        return None;
    };
    let SetExpr::Select(select) = query.body.as_ref() else {
        return None;
    };
    let limit = match &query.limit_clause {
        None => None,
        Some(_) => Some(plain_limit(query)?),
    };
    let OrderByKind::Expressions(order) = &query.order_by.as_ref()?.kind else {
        return None;
    };
    if order.is_empty() {
        return None;
    }
    let mut probe = query.as_ref().clone();
    let mut widened = select.as_ref().clone();
    for key in order {
        widened
            .projection
            .push(SelectItem::UnnamedExpr(resolve_key(&key.expr, select)));
    }
    *probe.body = SetExpr::Select(Box::new(widened));
    probe.limit_clause = None;
    Some(SortProbe {
        sql: probe.to_string(),
        keys: order.iter().map(|k| k.expr.to_string()).collect(),
        limit,
    })
}

impl Probe {
    /// The probe's SQL.
    pub fn sql(&self) -> &str {
        match self {
            Probe::Cut { sql, .. } | Probe::ArgRow { sql } | Probe::Unordered { sql, .. } => sql,
        }
    }
}

fn collect(query: &Query, found: &mut Vec<Probe>) {
    if let Some(probe) = cut_probe(query).or_else(|| unordered_probe(query)) {
        found.push(probe);
    }
    if let SetExpr::Select(select) = query.body.as_ref() {
        if query.limit_clause.is_none() {
            found.extend(arg_row_probe(select));
        }
    }
    walk_set(&query.body, found);
}

fn walk_set(body: &SetExpr, found: &mut Vec<Probe>) {
    match body {
        SetExpr::Select(select) => {
            for expr in select.selection.iter().chain(select.having.iter()) {
                walk_expr(expr, found);
            }
        }
        SetExpr::Query(query) => collect(query, found),
        SetExpr::SetOperation { left, right, .. } => {
            walk_set(left, found);
            walk_set(right, found);
        }
        _ => {}
    }
}

fn walk_expr(expr: &Expr, found: &mut Vec<Probe>) {
    match expr {
        Expr::Subquery(query)
        | Expr::Exists {
            subquery: query, ..
        } => collect(query, found),
        Expr::InSubquery { expr, subquery, .. } => {
            walk_expr(expr, found);
            collect(subquery, found);
        }
        Expr::BinaryOp { left, right, .. } => {
            walk_expr(left, found);
            walk_expr(right, found);
        }
        Expr::UnaryOp { expr, .. } | Expr::Nested(expr) => walk_expr(expr, found),
        _ => {}
    }
}

/// `... ORDER BY keys LIMIT k` over one SELECT: the same query with the keys appended to its
/// projection and `LIMIT k + 1`, so that the first row past the cut is seen.
fn cut_probe(query: &Query) -> Option<Probe> {
    let SetExpr::Select(select) = query.body.as_ref() else {
        return None;
    };
    let limit = plain_limit(query)?;
    let OrderByKind::Expressions(order) = &query.order_by.as_ref()?.kind else {
        return None;
    };
    if limit == 0 || order.is_empty() {
        return None;
    }
    let mut probe = query.clone();
    let mut widened = select.as_ref().clone();
    for key in order {
        widened
            .projection
            .push(SelectItem::UnnamedExpr(resolve_key(&key.expr, select)));
    }
    *probe.body = SetExpr::Select(Box::new(widened));
    probe.limit_clause = Some(LimitClause::LimitOffset {
        limit: Some(Expr::value(AstValue::Number(
            (limit + 1).to_string(),
            false,
        ))),
        offset: None,
        limit_by: Vec::new(),
    });
    Some(Probe::Cut {
        sql: probe.to_string(),
        limit,
        keys: order.len(),
    })
}

/// The `k` of a query's `LIMIT k` (a number, no OFFSET); `None` for any other LIMIT or none.
fn plain_limit(query: &Query) -> Option<usize> {
    match &query.limit_clause {
        Some(LimitClause::LimitOffset {
            limit: Some(limit),
            offset: None,
            ..
        }) => number(limit),
        _ => None,
    }
}

/// `... LIMIT k` without ORDER BY (no OFFSET): whether the query without its LIMIT returns
/// more than k rows, not all alike.
fn unordered_probe(query: &Query) -> Option<Probe> {
    let limit = plain_limit(query)?;
    if limit == 0 || query.order_by.is_some() {
        return None;
    }
    let mut all = query.clone();
    all.limit_clause = None;
    let sql = format!(
        "SELECT CASE WHEN count(*) > {limit} AND (SELECT count(*) FROM (SELECT DISTINCT * FROM \
         ({all}) AS sqlgate_kept) AS sqlgate_distinct) > 1 THEN 1 ELSE 0 END FROM ({all}) AS \
         sqlgate_rows"
    );
    Some(Probe::Unordered { sql, limit })
}

/// A sort key that names a projection alias or position stands for that projected expression.
fn resolve_key(key: &Expr, select: &Select) -> Expr {
    let projected = |index: usize| match select.projection.get(index) {
        Some(SelectItem::UnnamedExpr(e)) | Some(SelectItem::ExprWithAlias { expr: e, .. }) => {
            Some(e.clone())
        }
        _ => None,
    };
    match key {
        Expr::Identifier(name) => select
            .projection
            .iter()
            .find_map(|item| match item {
                SelectItem::ExprWithAlias { expr, alias }
                    if alias.value.eq_ignore_ascii_case(&name.value) =>
                {
                    Some(expr.clone())
                }
                _ => None,
            })
            .unwrap_or_else(|| key.clone()),
        Expr::Value(v) => match &v.value {
            AstValue::Number(n, _) => n
                .parse::<usize>()
                .ok()
                .and_then(|i| projected(i.checked_sub(1)?))
                .unwrap_or_else(|| key.clone()),
            _ => key.clone(),
        },
        _ => key.clone(),
    }
}

/// `SELECT a, b, max(x) FROM ... WHERE ...` (one MIN / MAX, other items bare columns, no GROUP
/// BY): the distinct bare-column rows whose `x` is the extreme.
fn arg_row_probe(select: &Select) -> Option<Probe> {
    if !group_by_is_empty(select) || select.having.is_some() || select.from.is_empty() {
        return None;
    }
    let mut extreme = None;
    let mut bare = Vec::new();
    for item in &select.projection {
        let expr = match item {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => e,
            _ => return None,
        };
        match expr {
            Expr::Function(f) if min_max(f).is_some() => {
                if extreme.replace(min_max(f)?).is_some() {
                    return None;
                }
            }
            Expr::Identifier(_) | Expr::CompoundIdentifier(_) => bare.push(expr.clone()),
            _ => return None,
        }
    }
    let (function, argument) = extreme?;
    if bare.is_empty() {
        return None;
    }
    let mut scalar = select.clone();
    scalar.distinct = None;
    scalar.projection = vec![SelectItem::UnnamedExpr(Expr::Function(function))];
    let mut rows = select.clone();
    rows.distinct = None;
    rows.projection = bare.into_iter().map(SelectItem::UnnamedExpr).collect();
    let at_extreme = Expr::BinaryOp {
        left: Box::new(argument),
        op: BinaryOperator::Eq,
        right: Box::new(Expr::Subquery(Box::new(query_of(scalar)))),
    };
    rows.selection = Some(match rows.selection.take() {
        Some(condition) => Expr::BinaryOp {
            left: Box::new(Expr::Nested(Box::new(condition))),
            op: BinaryOperator::And,
            right: Box::new(at_extreme),
        },
        None => at_extreme,
    });
    Some(Probe::ArgRow {
        sql: query_of(rows).to_string(),
    })
}

fn group_by_is_empty(select: &Select) -> bool {
    match &select.group_by {
        sqlparser::ast::GroupByExpr::Expressions(list, _) => list.is_empty(),
        sqlparser::ast::GroupByExpr::All(_) => false,
    }
}

/// A `min(x)` / `max(x)` call and its argument.
fn min_max(function: &Function) -> Option<(Function, Expr)> {
    let name = function.name.to_string().to_lowercase();
    if name != "min" && name != "max" {
        return None;
    }
    let FunctionArguments::List(list) = &function.args else {
        return None;
    };
    match list.args.as_slice() {
        [FunctionArg::Unnamed(FunctionArgExpr::Expr(arg))]
            if list.duplicate_treatment.is_none() =>
        {
            Some((function.clone(), arg.clone()))
        }
        _ => None,
    }
}

fn query_of(select: Select) -> Query {
    let mut query = match Parser::parse_sql(&SQLiteDialect {}, "SELECT 1")
        .ok()
        .and_then(|mut s| s.pop())
    {
        Some(sqlparser::ast::Statement::Query(q)) => *q,
        _ => unreachable!("SELECT 1 parses"),
    };
    *query.body = SetExpr::Select(Box::new(select));
    query
}

fn number(expr: &Expr) -> Option<usize> {
    match expr {
        Expr::Value(v) => match &v.value {
            AstValue::Number(n, _) => n.parse().ok(),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows `sql` answers on a table `t(id, name, x)` holding `values`.
    fn rows_on(values: &str, sql: &str) -> Vec<Row> {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch(&format!(
            "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, x INT); INSERT INTO t VALUES {values};"
        ))
        .unwrap();
        let mut statement = conn.prepare(sql).unwrap();
        let width = statement.column_count();
        statement
            .query_map([], |row| {
                Ok((0..width)
                    .map(|i| crate::suites::distill::read_value(row.get_ref(i).unwrap()))
                    .collect())
            })
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    fn rows(sql: &str) -> Vec<Row> {
        rows_on("(1,'a',5),(2,'b',9),(3,'c',9),(4,'d',1),(5,'e',1)", sql)
    }

    fn undetermined(sql: &str) -> bool {
        probes(sql)
            .iter()
            .any(|probe| tied(probe, &rows(probe.sql())))
    }

    #[test]
    fn a_limit_cut_on_tied_keys_leaves_the_answer_undetermined() {
        assert!(undetermined("SELECT name FROM t ORDER BY x DESC LIMIT 1"));
        assert!(undetermined("SELECT name FROM t ORDER BY x LIMIT 1"));
        assert!(!undetermined("SELECT name FROM t ORDER BY x LIMIT 2"));
        assert!(!undetermined("SELECT name FROM t ORDER BY x DESC LIMIT 3"));
        assert!(undetermined("SELECT name FROM t ORDER BY x DESC LIMIT 4"));
        // Two rows at the top project the same 9: one of them, or both, is the answer.
        assert!(undetermined("SELECT x FROM t ORDER BY x DESC LIMIT 1"));
        assert!(!undetermined(
            "SELECT name FROM t ORDER BY x DESC, id LIMIT 1"
        ));
        assert!(undetermined(
            "SELECT id FROM t WHERE id IN (SELECT id FROM t ORDER BY x DESC LIMIT 1)"
        ));
    }

    #[test]
    fn a_limit_without_order_by_over_rows_that_differ_is_undetermined() {
        let run = |sql: &str| rows_on("(1,'b',9),(2,'b',9),(3,'c',1)", sql);
        let tied_on = |sql: &str| probes(sql).iter().any(|p| tied(p, &run(p.sql())));
        assert!(tied_on("SELECT name FROM t LIMIT 2"));
        assert!(tied_on(
            "SELECT id FROM t WHERE x = (SELECT x FROM t LIMIT 1)"
        ));
        assert!(tied_on("SELECT id FROM t WHERE x = 9 LIMIT 1"));
        // Every row kept or every row alike: determined.
        assert!(!tied_on("SELECT name FROM t LIMIT 3"));
        assert!(!tied_on("SELECT name FROM t WHERE id < 3 LIMIT 1"));
    }

    #[test]
    fn a_tie_whose_rows_project_the_same_values_is_still_a_tie() {
        // Three rows at x = 9 project 'b', 'b' and 'c' (employee_hire_evaluation: one employee
        // twice at the top bonus, another once).
        let run = |sql: &str| rows_on("(1,'b',9),(2,'b',9),(3,'c',9),(4,'d',1)", sql);
        let tied_on = |sql: &str| probes(sql).iter().any(|p| tied(p, &run(p.sql())));
        assert!(!tied_on("SELECT name FROM t ORDER BY x DESC, id LIMIT 1"));
        assert!(tied_on("SELECT name FROM t ORDER BY x DESC LIMIT 1"));
        assert!(tied_on("SELECT name FROM t ORDER BY x DESC LIMIT 2"));
        assert!(!tied_on("SELECT name FROM t ORDER BY x DESC LIMIT 3"));
        // One employee twice at the top bonus: `LIMIT 1` answers the name once, `= max(...)`
        // twice, and the question does not say which (C3 #279-280 on a generated database).
        assert!(tied_on(
            "SELECT name FROM t WHERE id < 3 ORDER BY x DESC LIMIT 1"
        ));
        assert!(tied_on("SELECT name, max(x) FROM t WHERE id < 3"));
        assert!(!tied_on("SELECT name, max(x) FROM t WHERE id > 2"));
    }

    #[test]
    fn a_bare_column_beside_min_or_max_is_tied_when_the_extreme_is_shared() {
        assert!(undetermined("SELECT name, max(x) FROM t"));
        assert!(undetermined("SELECT min(x), name FROM t"));
        assert!(!undetermined("SELECT name, max(x) FROM t WHERE id < 3"));
        assert!(!undetermined("SELECT max(x) FROM t"));
        assert!(probes("SELECT name, max(x) FROM t GROUP BY name").is_empty());
    }
}
