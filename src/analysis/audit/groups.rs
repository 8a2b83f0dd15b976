//! `bare-column`: a grouped gold (GROUP BY, or aggregates over the whole selection) that also
//! selects a plain column it neither groups by nor aggregates, where that column holds several
//! values in a group the answer shows. SQLite (and MariaDB) return the value of whichever row
//! they read first, so the answer is undetermined (`SELECT id FROM tv_channel GROUP BY country`:
//! one channel id per country, any of them); PostgreSQL refuses such a query. One MIN or MAX
//! in the query is SQLite's exception (the bare columns come from the extreme row), which
//! `limit-tie` checks instead.

use super::{row_shown, shown_db, Context};
use crate::engine::profile::PreparedGold;
use sqlparser::ast::{
    Expr, FunctionArg, FunctionArgExpr, FunctionArguments, GroupByExpr, OrderByKind, Query, Select,
    SelectItem, SetExpr, Statement,
};
use sqlparser::dialect::SQLiteDialect;
use sqlparser::parser::Parser;
use std::path::PathBuf;

/// Aggregate functions: a projected expression calling one is not a bare column.
const AGGREGATES: [&str; 7] = ["count", "sum", "avg", "min", "max", "total", "group_concat"];

/// The query with, per bare column, how many values (NULL counted as one) it holds in each
/// group appended to its projection; the names of those columns; the original width.
struct GroupProbe {
    sql: String,
    columns: Vec<String>,
    width: usize,
}

/// Evidence of a bare column holding several values in a group the gold's answer shows, on the
/// first of `databases` where one does.
pub(super) fn bare_column(
    context: &Context<'_>,
    prepared: &PreparedGold,
    databases: &[PathBuf],
) -> Option<String> {
    let probe = group_probe(&prepared.sql)?;
    databases.iter().find_map(|db| {
        let rows = context.executor.run(db, &probe.sql).ok()?;
        rows.iter().find_map(|row| {
            let counts = row.get(probe.width..)?;
            let (column, count) = probe.columns.iter().zip(counts).find_map(|(c, n)| {
                let n = n.as_f64().filter(|n| *n > 1.0)?;
                Some((c, n))
            })?;
            Some(format!(
                "on {}: `{column}` is neither grouped nor aggregated and holds {count} values in \
                 one group of the answer, so the engine returns any of them: {}",
                shown_db(db),
                row_shown(&row[..probe.width])
            ))
        })
    })
}

/// The probe of a grouped top-level SELECT with bare columns; `None` for any other query, one
/// that does not parse, or one with exactly one MIN or MAX.
fn group_probe(sql: &str) -> Option<GroupProbe> {
    let statements = Parser::parse_sql(&SQLiteDialect {}, sql).ok()?;
    let [Statement::Query(query)] = statements.as_slice() else {
        return None;
    };
    let SetExpr::Select(select) = query.body.as_ref() else {
        return None;
    };
    let grouped = match &select.group_by {
        GroupByExpr::Expressions(keys, _) => !keys.is_empty(),
        GroupByExpr::All(_) => return None,
    };
    let mut columns = Vec::new();
    let mut aggregated = false;
    for item in &select.projection {
        let (SelectItem::UnnamedExpr(expr) | SelectItem::ExprWithAlias { expr, .. }) = item else {
            return None;
        };
        match expr {
            Expr::Identifier(_) | Expr::CompoundIdentifier(_) => columns.push(expr.to_string()),
            other => aggregated |= calls(other, &AGGREGATES) > 0,
        }
    }
    if columns.is_empty() || !(grouped || aggregated) || extremes(query, select) == 1 {
        return None;
    }
    let mut probe = query.as_ref().clone();
    let mut widened = select.as_ref().clone();
    let dialect = SQLiteDialect {};
    for column in &columns {
        let count =
            format!("count(DISTINCT {column}) + max(CASE WHEN {column} IS NULL THEN 1 ELSE 0 END)");
        let expr = Parser::new(&dialect)
            .try_with_sql(&count)
            .ok()?
            .parse_expr()
            .ok()?;
        widened.projection.push(SelectItem::UnnamedExpr(expr));
    }
    let width = select.projection.len();
    *probe.body = SetExpr::Select(Box::new(widened));
    Some(GroupProbe {
        sql: probe.to_string(),
        columns,
        width,
    })
}

/// Calls of the named functions in an expression, sub-queries left out (their aggregates are
/// their own).
fn calls(expr: &Expr, names: &[&str]) -> usize {
    match expr {
        Expr::Function(function) => {
            let own = names.contains(&function.name.to_string().to_lowercase().as_str());
            let inner = match &function.args {
                FunctionArguments::List(list) => (list.args.iter())
                    .map(|arg| match arg {
                        FunctionArg::Unnamed(FunctionArgExpr::Expr(e))
                        | FunctionArg::Named {
                            arg: FunctionArgExpr::Expr(e),
                            ..
                        } => calls(e, names),
                        _ => 0,
                    })
                    .sum(),
                _ => 0,
            };
            usize::from(own) + inner
        }
        Expr::BinaryOp { left, right, .. } => calls(left, names) + calls(right, names),
        Expr::UnaryOp { expr, .. } | Expr::Nested(expr) | Expr::Cast { expr, .. } => {
            calls(expr, names)
        }
        Expr::Case {
            operand,
            conditions,
            else_result,
            ..
        } => {
            let parts = operand
                .iter()
                .map(AsRef::as_ref)
                .chain(else_result.iter().map(AsRef::as_ref));
            let branches = conditions.iter().flat_map(|c| [&c.condition, &c.result]);
            parts.chain(branches).map(|e| calls(e, names)).sum()
        }
        _ => 0,
    }
}

/// How many MIN / MAX calls the top-level SELECT makes in its projection, HAVING and ORDER BY
/// (SQLite's bare-column exception needs exactly one).
fn extremes(query: &Query, select: &Select) -> usize {
    let order = match query.order_by.as_ref().map(|o| &o.kind) {
        Some(OrderByKind::Expressions(keys)) => keys.iter().map(|k| &k.expr).collect(),
        _ => Vec::new(),
    };
    (select.projection.iter())
        .filter_map(|item| match item {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => Some(e),
            _ => None,
        })
        .chain(select.having.iter())
        .chain(order)
        .map(|e| calls(e, &["min", "max"]))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_grouped_queries_with_bare_columns_get_a_probe() {
        let probe = group_probe("SELECT id FROM tv_channel GROUP BY country HAVING count(*) > 2")
            .expect("a bare column");
        assert_eq!(probe.columns, ["id"]);
        assert_eq!(
            probe.sql,
            "SELECT id, count(DISTINCT id) + max(CASE WHEN id IS NULL THEN 1 ELSE 0 END) FROM \
             tv_channel GROUP BY country HAVING count(*) > 2"
        );
        assert!(group_probe("SELECT name, count(*) FROM t").is_some());
        // Not grouped, no bare column, SQLite's one-MIN / MAX exception, a set operation.
        for sql in [
            "SELECT name FROM t",
            "SELECT count(*) FROM t GROUP BY x",
            "SELECT name, max(score) FROM t GROUP BY code",
            "SELECT a FROM t GROUP BY a UNION SELECT b FROM u GROUP BY b",
        ] {
            assert!(group_probe(sql).is_none(), "{sql}");
        }
        assert!(group_probe("SELECT name, min(x), max(x) FROM t GROUP BY code").is_some());
        // An aggregate inside a sub-query does not group the outer query (BIRD mini-dev #471).
        assert!(group_probe("SELECT id, (SELECT max(a) - min(a) FROM d) FROM t").is_none());
        assert!(group_probe("SELECT name, round(avg(x), 2) FROM t").is_some());
    }
}
