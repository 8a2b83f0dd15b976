//! The single edits that turn a query into one of its neighbors (seed 000 section 3.1): each
//! site of the walk proposes replacements for itself, one edit per neighbor.

use super::literals::{number_variants, string_variants};
use super::walk::{join_constraint, Role, Scope, Site, TableRef};
use crate::sql::schema::Schema;
use fastrand::Rng;
use sqlparser::ast::{
    BinaryOperator, Distinct, DuplicateTreatment, Expr, Function, FunctionArg, FunctionArgExpr,
    FunctionArguments, GroupByExpr, Ident, Join, JoinConstraint, ObjectNamePart, OrderByExpr,
    OrderByKind, OrderBySort, Query, Select, SetExpr, SetOperator, SetQuantifier, UnaryOperator,
};

/// The new content of one site.
pub(super) enum Replacement {
    Query(Box<Query>),
    SetExpr(Box<SetExpr>),
    Select(Box<Select>),
    Join(Box<Join>),
    OrderItem(Box<OrderByExpr>),
    Expr(Box<Expr>),
}

/// Puts `replacement` in place of the node at `site`; false when they are of different kinds.
pub(super) fn apply(site: Site<'_>, replacement: Replacement) -> bool {
    match (site, replacement) {
        (Site::Query(node), Replacement::Query(new)) => *node = *new,
        (Site::SetOperation(node), Replacement::SetExpr(new)) => *node = *new,
        (Site::Select(node), Replacement::Select(new)) => *node = *new,
        (Site::Join(node), Replacement::Join(new)) => *node = *new,
        (Site::OrderItem(node), Replacement::OrderItem(new)) => *node = *new,
        (Site::Expr(node, _), Replacement::Expr(new)) => *node = *new,
        _ => return false,
    }
    true
}

/// The replacements one site proposes, in a fixed order.
pub(super) fn candidates(
    site: &Site<'_>,
    scope: &Scope,
    schema: &Schema,
    rng: &mut Rng,
) -> Vec<Replacement> {
    match site {
        Site::Query(query) => query_edits(query)
            .into_iter()
            .map(|q| Replacement::Query(Box::new(q)))
            .collect(),
        Site::SetOperation(body) => set_operation_edits(body)
            .into_iter()
            .map(|b| Replacement::SetExpr(Box::new(b)))
            .collect(),
        Site::Select(select) => select_edits(select)
            .into_iter()
            .map(|s| Replacement::Select(Box::new(s)))
            .collect(),
        Site::Join(join) => join_edits(join)
            .into_iter()
            .map(|j| Replacement::Join(Box::new(j)))
            .collect(),
        Site::OrderItem(item) => vec![Replacement::OrderItem(Box::new(flip_direction(item)))],
        Site::Expr(expr, role) => expr_edits(expr, *role, scope, schema, rng)
            .into_iter()
            .map(|e| Replacement::Expr(Box::new(e)))
            .collect(),
    }
}

/// Dropped LIMIT, dropped ORDER BY (with and without its LIMIT), dropped ORDER BY items.
fn query_edits(query: &Query) -> Vec<Query> {
    let mut edits = Vec::new();
    if query.limit_clause.is_some() {
        edits.push(Query {
            limit_clause: None,
            ..query.clone()
        });
    }
    let Some(order_by) = &query.order_by else {
        return edits;
    };
    edits.push(Query {
        order_by: None,
        limit_clause: None,
        ..query.clone()
    });
    if query.limit_clause.is_some() {
        edits.push(Query {
            order_by: None,
            ..query.clone()
        });
    }
    if let OrderByKind::Expressions(items) = &order_by.kind {
        for dropped in without_each(items) {
            let mut edited = query.clone();
            if let Some(order) = &mut edited.order_by {
                order.kind = OrderByKind::Expressions(dropped);
            }
            edits.push(edited);
        }
    }
    edits
}

/// Each way of removing one item from a list of two or more.
fn without_each<T: Clone>(items: &[T]) -> Vec<Vec<T>> {
    if items.len() < 2 {
        return Vec::new();
    }
    (0..items.len())
        .map(|skip| {
            let mut kept = items.to_vec();
            kept.remove(skip);
            kept
        })
        .collect()
}

/// The other set operators, UNION ALL <-> UNION, and either side on its own.
fn set_operation_edits(body: &SetExpr) -> Vec<SetExpr> {
    let SetExpr::SetOperation {
        left,
        op,
        set_quantifier,
        right,
    } = body
    else {
        return Vec::new();
    };
    let rebuilt = |op: SetOperator, set_quantifier: SetQuantifier| SetExpr::SetOperation {
        left: left.clone(),
        op,
        set_quantifier,
        right: right.clone(),
    };
    let mut edits: Vec<SetExpr> = [
        SetOperator::Union,
        SetOperator::Intersect,
        SetOperator::Except,
    ]
    .into_iter()
    .filter(|other| other != op)
    .map(|other| rebuilt(other, SetQuantifier::None))
    .collect();
    if *op == SetOperator::Union {
        let toggled = match set_quantifier {
            SetQuantifier::All => SetQuantifier::None,
            _ => SetQuantifier::All,
        };
        edits.push(rebuilt(SetOperator::Union, toggled));
    }
    edits.push((**left).clone());
    edits.push((**right).clone());
    edits
}

/// DISTINCT toggled; WHERE, HAVING, GROUP BY (with its HAVING), one GROUP BY key or one
/// projected column dropped.
fn select_edits(select: &Select) -> Vec<Select> {
    let mut edits = Vec::new();
    let distinct = match select.distinct {
        Some(Distinct::Distinct) => None,
        _ => Some(Distinct::Distinct),
    };
    edits.push(Select {
        distinct,
        ..select.clone()
    });
    if select.selection.is_some() {
        edits.push(Select {
            selection: None,
            ..select.clone()
        });
    }
    if select.having.is_some() {
        edits.push(Select {
            having: None,
            ..select.clone()
        });
    }
    if let GroupByExpr::Expressions(keys, modifiers) = &select.group_by {
        if !keys.is_empty() {
            edits.push(Select {
                group_by: GroupByExpr::Expressions(Vec::new(), Vec::new()),
                having: None,
                ..select.clone()
            });
        }
        for kept in without_each(keys) {
            edits.push(Select {
                group_by: GroupByExpr::Expressions(kept, modifiers.clone()),
                ..select.clone()
            });
        }
    }
    for kept in without_each(&select.projection) {
        edits.push(Select {
            projection: kept,
            ..select.clone()
        });
    }
    edits
}

/// The join condition dropped (a cross join).
fn join_edits(join: &Join) -> Vec<Join> {
    let mut edited = join.clone();
    match join_constraint(&mut edited.join_operator) {
        Some(constraint @ JoinConstraint::On(_)) => {
            *constraint = JoinConstraint::None;
            vec![edited]
        }
        _ => Vec::new(),
    }
}

/// ASC <-> DESC (DESC loses its keyword, since ASC is the default).
fn flip_direction(item: &OrderByExpr) -> OrderByExpr {
    let mut flipped = item.clone();
    flipped.options.sort = match item.options.sort {
        Some(OrderBySort::Desc) => None,
        _ => Some(OrderBySort::Desc),
    };
    flipped
}

const COMPARISONS: [BinaryOperator; 6] = [
    BinaryOperator::Lt,
    BinaryOperator::LtEq,
    BinaryOperator::Gt,
    BinaryOperator::GtEq,
    BinaryOperator::Eq,
    BinaryOperator::NotEq,
];

const AGGREGATES: [&str; 5] = ["max", "min", "avg", "sum", "count"];

fn expr_edits(expr: &Expr, role: Role, scope: &Scope, schema: &Schema, rng: &mut Rng) -> Vec<Expr> {
    if let Some(variants) = number_variants(expr, role, rng) {
        return variants;
    }
    if let Some(variants) = string_variants(expr, role, rng) {
        return variants;
    }
    match expr {
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) => column_edits(expr, scope, schema),
        Expr::BinaryOp { left, op, right } => binary_edits(left, op, right),
        Expr::Function(function) => aggregate_edits(function),
        Expr::Like {
            negated,
            any,
            expr,
            pattern,
            escape_char,
        } => vec![Expr::Like {
            negated: !negated,
            any: *any,
            expr: expr.clone(),
            pattern: pattern.clone(),
            escape_char: escape_char.clone(),
        }],
        Expr::InList {
            expr,
            list,
            negated,
        } => {
            let mut edits = vec![Expr::InList {
                expr: expr.clone(),
                list: list.clone(),
                negated: !negated,
            }];
            edits.extend(without_each(list).into_iter().map(|kept| Expr::InList {
                expr: expr.clone(),
                list: kept,
                negated: *negated,
            }));
            edits
        }
        Expr::InSubquery {
            expr,
            subquery,
            negated,
        } => vec![Expr::InSubquery {
            expr: expr.clone(),
            subquery: subquery.clone(),
            negated: !negated,
        }],
        Expr::Between {
            expr,
            negated,
            low,
            high,
        } => vec![Expr::Between {
            expr: expr.clone(),
            negated: !negated,
            low: low.clone(),
            high: high.clone(),
        }],
        Expr::Exists { subquery, negated } => vec![Expr::Exists {
            subquery: subquery.clone(),
            negated: !negated,
        }],
        Expr::IsNull(inner) => vec![Expr::IsNotNull(inner.clone())],
        Expr::IsNotNull(inner) => vec![Expr::IsNull(inner.clone())],
        Expr::UnaryOp {
            op: UnaryOperator::Not,
            expr: inner,
        } => vec![(**inner).clone()],
        _ => Vec::new(),
    }
}

/// Comparison operators swapped; AND <-> OR and either operand of AND / OR dropped.
fn binary_edits(left: &Expr, op: &BinaryOperator, right: &Expr) -> Vec<Expr> {
    let rebuilt = |op: BinaryOperator| Expr::BinaryOp {
        left: Box::new(left.clone()),
        op,
        right: Box::new(right.clone()),
    };
    if COMPARISONS.contains(op) {
        return COMPARISONS
            .iter()
            .filter(|other| *other != op)
            .map(|other| rebuilt(other.clone()))
            .collect();
    }
    match op {
        BinaryOperator::And | BinaryOperator::Or => {
            let swapped = if *op == BinaryOperator::And {
                BinaryOperator::Or
            } else {
                BinaryOperator::And
            };
            vec![rebuilt(swapped), right.clone(), left.clone()]
        }
        _ => Vec::new(),
    }
}

/// For MAX / MIN / AVG / SUM / COUNT of an expression: the other aggregates, DISTINCT toggled
/// inside, and the bare argument. `COUNT(*)` has no neighbor of this kind.
fn aggregate_edits(function: &Function) -> Vec<Expr> {
    let [ObjectNamePart::Identifier(name)] = function.name.0.as_slice() else {
        return Vec::new();
    };
    let lower = name.value.to_lowercase();
    if !AGGREGATES.contains(&lower.as_str()) {
        return Vec::new();
    }
    let FunctionArguments::List(list) = &function.args else {
        return Vec::new();
    };
    let [FunctionArg::Unnamed(FunctionArgExpr::Expr(argument))] = list.args.as_slice() else {
        return Vec::new();
    };
    let upper = name.value == name.value.to_uppercase();
    let mut edits: Vec<Expr> = AGGREGATES
        .iter()
        .filter(|other| **other != lower)
        .map(|other| {
            let mut renamed = function.clone();
            let text = if upper {
                other.to_uppercase()
            } else {
                other.to_string()
            };
            renamed.name.0 = vec![ObjectNamePart::Identifier(Ident::new(text))];
            Expr::Function(renamed)
        })
        .collect();
    let mut toggled = function.clone();
    if let FunctionArguments::List(list) = &mut toggled.args {
        list.duplicate_treatment = match list.duplicate_treatment {
            Some(DuplicateTreatment::Distinct) => None,
            _ => Some(DuplicateTreatment::Distinct),
        };
    }
    edits.push(Expr::Function(toggled));
    edits.push(argument.clone());
    edits
}

/// A column reference: its qualifier as written (if any) and its lower-case name.
fn column_reference(expr: &Expr) -> Option<(Option<&Ident>, String)> {
    match expr {
        Expr::Identifier(column) => Some((None, column.value.to_lowercase())),
        Expr::CompoundIdentifier(parts) => match parts.as_slice() {
            [qualifier, column] => Some((Some(qualifier), column.value.to_lowercase())),
            _ => None,
        },
        _ => None,
    }
}

/// The tables a column may be read from, innermost SELECT first.
fn visible_tables(scope: &Scope) -> impl Iterator<Item = &TableRef> {
    scope.frames.iter().rev().flatten()
}

fn has_column(schema: &Schema, table: &TableRef, column: &str) -> bool {
    table
        .table
        .as_deref()
        .and_then(|t| schema.columns(t))
        .is_some_and(|columns| columns.iter().any(|c| c == column))
}

/// The other columns of the same table, and the same column of the other tables in scope.
fn column_edits(expr: &Expr, scope: &Scope, schema: &Schema) -> Vec<Expr> {
    let Some((qualifier, column)) = column_reference(expr) else {
        return Vec::new();
    };
    let owner = match qualifier {
        Some(q) => visible_tables(scope).find(|t| t.qualifier.eq_ignore_ascii_case(&q.value)),
        None => visible_tables(scope).find(|t| has_column(schema, t, &column)),
    };
    let Some(owner) = owner else {
        return Vec::new();
    };
    let Some(columns) = owner.table.as_deref().and_then(|t| schema.columns(t)) else {
        return Vec::new();
    };
    let innermost: &[TableRef] = scope.frames.last().map_or(&[], Vec::as_slice);
    let mut edits: Vec<Expr> = columns
        .iter()
        .filter(|other| **other != column)
        .map(|other| {
            let ambiguous = innermost
                .iter()
                .filter(|t| has_column(schema, t, other))
                .count()
                > 1;
            match qualifier {
                Some(q) => qualified(q.clone(), other),
                None if ambiguous => qualified(Ident::new(&owner.qualifier), other),
                None => Expr::Identifier(column_ident(other)),
            }
        })
        .collect();
    let mut seen = vec![owner.qualifier.to_lowercase()];
    for table in visible_tables(scope) {
        let key = table.qualifier.to_lowercase();
        if seen.contains(&key) || !has_column(schema, table, &column) {
            continue;
        }
        seen.push(key);
        edits.push(qualified(Ident::new(&table.qualifier), &column));
    }
    edits
}

fn qualified(qualifier: Ident, column: &str) -> Expr {
    Expr::CompoundIdentifier(vec![qualifier, column_ident(column)])
}

/// An identifier for a schema column, quoted when it is not a plain word or is a keyword.
fn column_ident(column: &str) -> Ident {
    let plain = column
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && column
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_');
    let upper = column.to_uppercase();
    let keyword = sqlparser::keywords::ALL_KEYWORDS.contains(&upper.as_str());
    if plain && !keyword {
        Ident::new(column)
    } else {
        Ident::with_quote('"', column)
    }
}
