//! A walk over every clause of a query, nested queries and set operations included, in one fixed
//! order: the n-th site of a query is the same node on every walk of an identical tree, which is
//! what lets an edit found on one copy be applied to a fresh copy.

use sqlparser::ast::{
    CaseWhen, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, GroupByExpr, Join,
    JoinConstraint, JoinOperator, LimitClause, ObjectNamePart, OrderByExpr, OrderByKind, Query,
    Select, SelectItem, SetExpr, TableFactor, TableWithJoins, UnaryOperator, Value,
};

/// How an expression is used, which decides the edits that make sense for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// Anywhere a value or predicate may stand.
    Plain,
    /// The pattern of a LIKE.
    LikePattern,
    /// A LIMIT or OFFSET count.
    Limit,
}

/// A node where an edit may apply, lent to the visitor before its children are walked.
pub(super) enum Site<'a> {
    /// A whole query (ORDER BY, LIMIT).
    Query(&'a mut Query),
    /// A UNION / INTERSECT / EXCEPT node.
    SetOperation(&'a mut SetExpr),
    /// One SELECT block (DISTINCT, WHERE, GROUP BY, HAVING, projection).
    Select(&'a mut Select),
    /// A JOIN and its condition.
    Join(&'a mut Join),
    /// One ORDER BY item.
    OrderItem(&'a mut OrderByExpr),
    /// An expression.
    Expr(&'a mut Expr, Role),
}

/// A table visible in a SELECT: the name it is referred to by, as written, and the schema table
/// it reads (lower-case; `None` for a derived table).
#[derive(Debug, Clone)]
pub(super) struct TableRef {
    pub qualifier: String,
    pub table: Option<String>,
}

/// The FROM tables of the enclosing SELECT blocks, innermost last.
#[derive(Debug, Clone, Default)]
pub(super) struct Scope {
    pub frames: Vec<Vec<TableRef>>,
}

/// The visitor: called once per site, with the tables in scope there.
pub(super) type Visit<'v> = dyn FnMut(Site<'_>, &Scope) + 'v;

/// Walks `query` and everything nested in it.
pub(super) fn walk_query(query: &mut Query, scope: &mut Scope, visit: &mut Visit<'_>) {
    visit(Site::Query(query), scope);
    if let Some(with) = &mut query.with {
        for table in &mut with.cte_tables {
            walk_query(&mut table.query, scope, visit);
        }
    }
    walk_set_expr(&mut query.body, scope, visit);
    if let Some(order_by) = &mut query.order_by {
        if let OrderByKind::Expressions(items) = &mut order_by.kind {
            scope.frames.push(leftmost_frame(&query.body));
            for item in items {
                visit(Site::OrderItem(item), scope);
                walk_expr(&mut item.expr, Role::Plain, scope, visit);
            }
            scope.frames.pop();
        }
    }
    match &mut query.limit_clause {
        Some(LimitClause::LimitOffset { limit, offset, .. }) => {
            if let Some(limit) = limit {
                walk_expr(limit, Role::Limit, scope, visit);
            }
            if let Some(offset) = offset {
                walk_expr(&mut offset.value, Role::Limit, scope, visit);
            }
        }
        Some(LimitClause::OffsetCommaLimit { offset, limit }) => {
            walk_expr(offset, Role::Limit, scope, visit);
            walk_expr(limit, Role::Limit, scope, visit);
        }
        None => {}
    }
}

fn walk_set_expr(body: &mut SetExpr, scope: &mut Scope, visit: &mut Visit<'_>) {
    if matches!(body, SetExpr::SetOperation { .. }) {
        visit(Site::SetOperation(body), scope);
    }
    match body {
        SetExpr::SetOperation { left, right, .. } => {
            walk_set_expr(left, scope, visit);
            walk_set_expr(right, scope, visit);
        }
        SetExpr::Select(select) => walk_select(select, scope, visit),
        SetExpr::Query(query) => walk_query(query, scope, visit),
        _ => {}
    }
}

fn walk_select(select: &mut Select, scope: &mut Scope, visit: &mut Visit<'_>) {
    let frame = frame_of(&select.from);
    visit(Site::Select(select), scope);
    for table in &mut select.from {
        walk_derived(&mut table.relation, scope, visit);
        for join in &mut table.joins {
            walk_derived(&mut join.relation, scope, visit);
        }
    }
    scope.frames.push(frame);
    for item in &mut select.projection {
        if let SelectItem::UnnamedExpr(expr) | SelectItem::ExprWithAlias { expr, .. } = item {
            walk_expr(expr, Role::Plain, scope, visit);
        }
    }
    for table in &mut select.from {
        for join in &mut table.joins {
            visit(Site::Join(join), scope);
            if let Some(JoinConstraint::On(condition)) = join_constraint(&mut join.join_operator) {
                walk_expr(condition, Role::Plain, scope, visit);
            }
        }
    }
    if let Some(selection) = &mut select.selection {
        walk_expr(selection, Role::Plain, scope, visit);
    }
    if let GroupByExpr::Expressions(exprs, _) = &mut select.group_by {
        for expr in exprs {
            walk_expr(expr, Role::Plain, scope, visit);
        }
    }
    if let Some(having) = &mut select.having {
        walk_expr(having, Role::Plain, scope, visit);
    }
    scope.frames.pop();
}

fn walk_derived(relation: &mut TableFactor, scope: &mut Scope, visit: &mut Visit<'_>) {
    match relation {
        TableFactor::Derived { subquery, .. } => walk_query(subquery, scope, visit),
        TableFactor::NestedJoin {
            table_with_joins, ..
        } => {
            walk_derived(&mut table_with_joins.relation, scope, visit);
            for join in &mut table_with_joins.joins {
                walk_derived(&mut join.relation, scope, visit);
            }
        }
        _ => {}
    }
}

/// The constraint of a join operator that has one.
pub(super) fn join_constraint(operator: &mut JoinOperator) -> Option<&mut JoinConstraint> {
    match operator {
        JoinOperator::Join(c)
        | JoinOperator::Inner(c)
        | JoinOperator::Left(c)
        | JoinOperator::LeftOuter(c)
        | JoinOperator::Right(c)
        | JoinOperator::RightOuter(c)
        | JoinOperator::FullOuter(c)
        | JoinOperator::CrossJoin(c)
        | JoinOperator::Semi(c)
        | JoinOperator::LeftSemi(c)
        | JoinOperator::RightSemi(c)
        | JoinOperator::Anti(c)
        | JoinOperator::LeftAnti(c)
        | JoinOperator::RightAnti(c)
        | JoinOperator::StraightJoin(c) => Some(c),
        JoinOperator::AsOf { constraint, .. } => Some(constraint),
        JoinOperator::CrossApply
        | JoinOperator::OuterApply
        | JoinOperator::ArrayJoin
        | JoinOperator::LeftArrayJoin
        | JoinOperator::InnerArrayJoin => None,
    }
}

/// True for a numeric literal, negative ones (`-5`) included.
pub(super) fn is_number(expr: &Expr) -> bool {
    match expr {
        Expr::Value(value) => matches!(value.value, Value::Number(..)),
        Expr::UnaryOp {
            op: UnaryOperator::Minus | UnaryOperator::Plus,
            expr,
        } => matches!(&**expr, Expr::Value(v) if matches!(v.value, Value::Number(..))),
        _ => false,
    }
}

fn walk_expr(expr: &mut Expr, role: Role, scope: &mut Scope, visit: &mut Visit<'_>) {
    visit(Site::Expr(expr, role), scope);
    if is_number(expr) {
        return;
    }
    match expr {
        Expr::BinaryOp { left, right, .. }
        | Expr::IsDistinctFrom(left, right)
        | Expr::IsNotDistinctFrom(left, right) => {
            walk_expr(left, Role::Plain, scope, visit);
            walk_expr(right, Role::Plain, scope, visit);
        }
        Expr::UnaryOp { expr, .. }
        | Expr::Nested(expr)
        | Expr::IsNull(expr)
        | Expr::IsNotNull(expr)
        | Expr::IsTrue(expr)
        | Expr::IsNotTrue(expr)
        | Expr::IsFalse(expr)
        | Expr::IsNotFalse(expr)
        | Expr::Cast { expr, .. }
        | Expr::Collate { expr, .. } => walk_expr(expr, Role::Plain, scope, visit),
        Expr::Like {
            expr,
            pattern,
            escape_char,
            ..
        }
        | Expr::ILike {
            expr,
            pattern,
            escape_char,
            ..
        } => {
            walk_expr(expr, Role::Plain, scope, visit);
            walk_expr(pattern, Role::LikePattern, scope, visit);
            if let Some(escape) = escape_char {
                walk_expr(escape, Role::Plain, scope, visit);
            }
        }
        Expr::InList { expr, list, .. } => {
            walk_expr(expr, Role::Plain, scope, visit);
            for item in list {
                walk_expr(item, Role::Plain, scope, visit);
            }
        }
        Expr::InSubquery { expr, subquery, .. } => {
            walk_expr(expr, Role::Plain, scope, visit);
            walk_query(subquery, scope, visit);
        }
        Expr::Between {
            expr, low, high, ..
        } => {
            walk_expr(expr, Role::Plain, scope, visit);
            walk_expr(low, Role::Plain, scope, visit);
            walk_expr(high, Role::Plain, scope, visit);
        }
        Expr::Function(function) => match &mut function.args {
            FunctionArguments::List(list) => {
                for arg in &mut list.args {
                    if let Some(expr) = function_arg_expr(arg) {
                        walk_expr(expr, Role::Plain, scope, visit);
                    }
                }
            }
            FunctionArguments::Subquery(query) => walk_query(query, scope, visit),
            FunctionArguments::None => {}
        },
        Expr::Case {
            operand,
            conditions,
            else_result,
            ..
        } => {
            if let Some(operand) = operand {
                walk_expr(operand, Role::Plain, scope, visit);
            }
            for CaseWhen { condition, result } in conditions {
                walk_expr(condition, Role::Plain, scope, visit);
                walk_expr(result, Role::Plain, scope, visit);
            }
            if let Some(other) = else_result {
                walk_expr(other, Role::Plain, scope, visit);
            }
        }
        Expr::Exists { subquery, .. } | Expr::Subquery(subquery) => {
            walk_query(subquery, scope, visit)
        }
        Expr::Tuple(items) => {
            for item in items {
                walk_expr(item, Role::Plain, scope, visit);
            }
        }
        _ => {}
    }
}

/// The expression of a function argument, when it is one (not `*`).
pub(super) fn function_arg_expr(arg: &mut FunctionArg) -> Option<&mut Expr> {
    let (FunctionArg::Unnamed(arg)
    | FunctionArg::Named { arg, .. }
    | FunctionArg::ExprNamed { arg, .. }) = arg;
    match arg {
        FunctionArgExpr::Expr(expr) => Some(expr),
        _ => None,
    }
}

/// The tables a FROM clause makes visible.
pub(super) fn frame_of(from: &[TableWithJoins]) -> Vec<TableRef> {
    let mut frame = Vec::new();
    for table in from {
        push_table_refs(&table.relation, &mut frame);
        for join in &table.joins {
            push_table_refs(&join.relation, &mut frame);
        }
    }
    frame
}

fn push_table_refs(relation: &TableFactor, frame: &mut Vec<TableRef>) {
    match relation {
        TableFactor::Table { name, alias, .. } => {
            let Some(ObjectNamePart::Identifier(last)) = name.0.last() else {
                return;
            };
            let qualifier = alias.as_ref().map_or(&last.value, |a| &a.name.value);
            frame.push(TableRef {
                qualifier: qualifier.clone(),
                table: Some(last.value.to_lowercase()),
            });
        }
        TableFactor::Derived {
            alias: Some(alias), ..
        } => frame.push(TableRef {
            qualifier: alias.name.value.clone(),
            table: None,
        }),
        TableFactor::NestedJoin {
            table_with_joins, ..
        } => {
            push_table_refs(&table_with_joins.relation, frame);
            for join in &table_with_joins.joins {
                push_table_refs(&join.relation, frame);
            }
        }
        _ => {}
    }
}

/// The FROM tables of the first SELECT of a body, which ORDER BY of a set operation refers to.
fn leftmost_frame(body: &SetExpr) -> Vec<TableRef> {
    match body {
        SetExpr::Select(select) => frame_of(&select.from),
        SetExpr::SetOperation { left, .. } => leftmost_frame(left),
        SetExpr::Query(query) => leftmost_frame(&query.body),
        _ => Vec::new(),
    }
}
