//! A normal form for telling a neighbor query that is provably equivalent to its gold query
//! from a real neighbor (seed 000 section 3.1: a span is dropped or replaced "unless it does not
//! change the semantics of the query"). No database can distinguish such a neighbor, so counting
//! it as undistinguished measures nothing.
//!
//! [`normal_form`] rewrites a query into a text where each rewrite keeps the query's result on
//! every database that satisfies the schema; two queries with the same normal form are
//! equivalent. Every rewrite is justified in its doc comment:
//!
//! - identifiers and function names are lower-cased and unquoted (SQLite compares names
//!   without regard to ASCII case), a double-quoted word that names no column is the string
//!   SQLite reads it as;
//! - a column equated with another by an inner join condition or a WHERE conjunct is written
//!   as the smaller of the two in the SELECT list, GROUP BY, HAVING and the other WHERE
//!   conjuncts ([`Classes`]);
//! - `count(c)` of a NOT NULL column in a block without outer joins is `count(*)`;
//! - with GROUP BY, a HAVING condition on `count(*)` alone is replaced by the set of group sizes
//!   (n >= 1) it accepts, and dropped when it accepts them all;
//! - LIMIT k (k >= 1, no OFFSET) of a scalar sub-query is dropped;
//! - DISTINCT and UNION ALL are UNION where only set membership counts: IN / EXISTS sub-queries
//!   and the operands of UNION, INTERSECT and EXCEPT.

use super::walk::{frame_of, walk_query, Scope, Site, TableRef};
use crate::suites::storage_class::Affinity;
use sqlparser::ast::{
    BinaryOperator, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, GroupByExpr, Ident,
    JoinOperator, LimitClause, ObjectNamePart, Query, Select, SelectItem, SetExpr, SetOperator,
    SetQuantifier, Value,
};
use std::collections::HashMap;

/// What the normal form needs to know about one column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnFact {
    /// How SQLite stores its values: two columns of the same affinity hold identical values
    /// when they compare equal.
    pub affinity: Affinity,
    /// Declared NOT NULL (primary keys included).
    pub not_null: bool,
    /// Compared under a declared collation (equal values may then differ).
    pub collated: bool,
}

/// The columns of a schema, by lower-case table and column name.
#[derive(Debug, Clone, Default)]
pub struct ColumnFacts {
    tables: HashMap<String, HashMap<String, ColumnFact>>,
}

impl ColumnFacts {
    /// Records one column.
    pub fn insert(&mut self, table: &str, column: &str, fact: ColumnFact) {
        self.tables
            .entry(table.to_lowercase())
            .or_default()
            .insert(column.to_lowercase(), fact);
    }

    fn get(&self, table: &str, column: &str) -> Option<ColumnFact> {
        self.tables.get(table)?.get(column).copied()
    }

    fn is_column(&self, name: &str) -> bool {
        let name = name.to_lowercase();
        self.tables
            .values()
            .any(|columns| columns.contains_key(&name))
    }
}

/// The normal form of `sql`: equal for two queries only when they are equivalent on every
/// database of the schema `facts` describes. A query sqlparser cannot read is its text with
/// whitespace collapsed.
pub fn normal_form(sql: &str, facts: &ColumnFacts) -> String {
    let text = crate::sql::text::normalize_spaced_operators(sql);
    let Some(mut query) = super::parse_query(&text) else {
        return text.split_whitespace().collect::<Vec<_>>().join(" ");
    };
    walk_query(
        &mut query,
        &mut Scope::default(),
        &mut |site, scope| match site {
            Site::Select(select) => normalise_select(select, facts),
            Site::SetOperation(body) => dedup_operands(body),
            Site::Expr(expr, _) => {
                if let Some(frame) = scope.frames.last() {
                    bound_by_extreme(expr, &Block { frame, facts });
                }
                normalise_expr(expr, facts)
            }
            Site::Query(_) | Site::Join(_) | Site::OrderItem(_) => {}
        },
    );
    query.to_string()
}

/// The block-level rewrites; they need the block's FROM tables and join kinds.
fn normalise_select(select: &mut Select, facts: &ColumnFacts) {
    if !only_inner_joins(select) {
        return;
    }
    let frame = frame_of(&select.from);
    let block = Block {
        frame: &frame,
        facts,
    };
    let classes = Classes::of(select, &block);
    for item in &mut select.projection {
        if let SelectItem::UnnamedExpr(expr) | SelectItem::ExprWithAlias { expr, .. } = item {
            block.rewrite(expr, &classes);
        }
    }
    if let Some(selection) = &mut select.selection {
        rewrite_conjuncts(selection, &block, &classes);
    }
    let grouped = match &mut select.group_by {
        GroupByExpr::Expressions(exprs, _) => {
            for expr in exprs.iter_mut() {
                block.rewrite(expr, &classes);
            }
            !exprs.is_empty()
        }
        GroupByExpr::All(_) => false,
    };
    if let Some(having) = &mut select.having {
        block.rewrite(having, &classes);
        if grouped {
            if let Some(sizes) = accepted_group_sizes(having) {
                select.having = (sizes != "T").then(|| marker(&sizes));
            }
        }
    }
}

/// True when every join of the block is an inner (or cross) join: an outer join can pad a
/// NOT NULL column with NULL and make joined columns differ.
fn only_inner_joins(select: &Select) -> bool {
    select.from.iter().all(|table| {
        !matches!(
            table.relation,
            sqlparser::ast::TableFactor::NestedJoin { .. }
        ) && table.joins.iter().all(|join| {
            matches!(
                join.join_operator,
                JoinOperator::Join(_) | JoinOperator::Inner(_) | JoinOperator::CrossJoin(_)
            )
        })
    })
}

/// One SELECT block's tables, for resolving its column references.
struct Block<'a> {
    frame: &'a [TableRef],
    facts: &'a ColumnFacts,
}

/// A column reference resolved to its table: (written key `qualifier.column`, table, column),
/// all lower-case.
type Resolved = (String, String, String);

impl Block<'_> {
    /// The table a (possibly qualified) column reference of this block reads, when it is one
    /// of the block's own tables; an outer or ambiguous reference is left alone.
    fn resolve(&self, expr: &Expr) -> Option<Resolved> {
        let (qualifier, column) = match expr {
            Expr::CompoundIdentifier(parts) if parts.len() == 2 => (
                Some(parts[0].value.to_lowercase()),
                parts[1].value.to_lowercase(),
            ),
            Expr::Identifier(ident) => (None, ident.value.to_lowercase()),
            _ => return None,
        };
        let mut owners = self.frame.iter().filter(|t| match &qualifier {
            Some(q) => t.qualifier.to_lowercase() == *q,
            None => t
                .table
                .as_deref()
                .is_some_and(|table| self.facts.get(table, &column).is_some()),
        });
        let owner = owners.next()?;
        if owners.next().is_some() {
            return None;
        }
        let table = owner.table.clone()?;
        self.facts.get(&table, &column)?;
        let key = format!("{}.{column}", owner.qualifier.to_lowercase());
        Some((key, table, column))
    }

    /// Rewrites the column references of `expr` (not those of nested sub-queries, which are
    /// blocks of their own): members of an equality class become its representative, and
    /// `count(c)` of a NOT NULL column becomes `count(*)`.
    fn rewrite(&self, expr: &mut Expr, classes: &Classes) {
        if let Some((key, _, _)) = self.resolve(expr) {
            if let Some(representative) = classes.representative(&key) {
                *expr = representative;
            }
            return;
        }
        if self.counts_non_null_column(expr) {
            if let Expr::Function(function) = expr {
                if let FunctionArguments::List(list) = &mut function.args {
                    list.args = vec![FunctionArg::Unnamed(FunctionArgExpr::Wildcard)];
                }
            }
            return;
        }
        for child in children(expr) {
            self.rewrite(child, classes);
        }
    }

    /// `count(c)` (no DISTINCT) of a column declared NOT NULL: it counts every row, as
    /// `count(*)` does (seed 000 A.3, "counting any column is the same").
    fn counts_non_null_column(&self, expr: &Expr) -> bool {
        let Expr::Function(function) = expr else {
            return false;
        };
        let FunctionArguments::List(list) = &function.args else {
            return false;
        };
        let is_count = function.name.to_string().eq_ignore_ascii_case("count");
        let [FunctionArg::Unnamed(FunctionArgExpr::Expr(argument))] = list.args.as_slice() else {
            return false;
        };
        is_count
            && list.duplicate_treatment.is_none()
            && self
                .resolve(argument)
                .and_then(|(_, table, column)| self.facts.get(&table, &column))
                .is_some_and(|fact| fact.not_null)
    }
}

/// Rewrites the conjuncts of a WHERE clause, except the column equalities that define the
/// classes (rewriting `T1.k = T2.k` into `T1.k = T1.k` would change its meaning).
fn rewrite_conjuncts(expr: &mut Expr, block: &Block<'_>, classes: &Classes) {
    match expr {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => {
            rewrite_conjuncts(left, block, classes);
            rewrite_conjuncts(right, block, classes);
        }
        Expr::Nested(inner) if matches!(**inner, Expr::BinaryOp { .. }) => {
            rewrite_conjuncts(inner, block, classes)
        }
        _ if column_equality(expr, block).is_some() => {}
        _ => block.rewrite(expr, classes),
    }
}

/// Columns known equal on every row of a block: those equated by a top-level conjunct of an
/// inner join condition or of WHERE. In every row the block produces, all members of a class
/// hold the same value, and (same affinity, no collation) the identical value, so any member
/// can stand for another outside the defining equalities.
struct Classes {
    parent: HashMap<String, String>,
}

impl Classes {
    fn of(select: &Select, block: &Block<'_>) -> Classes {
        let mut classes = Classes {
            parent: HashMap::new(),
        };
        let mut conditions: Vec<&Expr> = Vec::new();
        for table in &select.from {
            for join in &table.joins {
                if let JoinOperator::Join(sqlparser::ast::JoinConstraint::On(on))
                | JoinOperator::Inner(sqlparser::ast::JoinConstraint::On(on)) =
                    &join.join_operator
                {
                    conditions.push(on);
                }
            }
        }
        conditions.extend(select.selection.as_ref());
        for condition in conditions {
            for conjunct in conjuncts(condition) {
                if let Some((a, b)) = column_equality(conjunct, block) {
                    classes.union(a, b);
                }
            }
        }
        classes
    }

    fn find(&self, key: &str) -> String {
        let mut current = key.to_string();
        while let Some(parent) = self.parent.get(&current).filter(|p| **p != current) {
            current = parent.clone();
        }
        current
    }

    fn union(&mut self, a: String, b: String) {
        let (a, b) = (self.find(&a), self.find(&b));
        let (low, high) = if a <= b { (a, b) } else { (b, a) };
        self.parent.insert(low.clone(), low.clone());
        self.parent.insert(high, low);
    }

    /// The representative column of `key`'s class, when it has one other than itself.
    fn representative(&self, key: &str) -> Option<Expr> {
        if !self.parent.contains_key(key) {
            return None;
        }
        let root = self.find(key);
        let (qualifier, column) = root.split_once('.')?;
        Some(Expr::CompoundIdentifier(vec![
            Ident::new(qualifier),
            Ident::new(column),
        ]))
    }
}

/// The top-level conjuncts of a condition.
fn conjuncts(expr: &Expr) -> Vec<&Expr> {
    match expr {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => {
            let mut all = conjuncts(left);
            all.extend(conjuncts(right));
            all
        }
        Expr::Nested(inner) => conjuncts(inner),
        other => vec![other],
    }
}

/// `a = b` between two of the block's columns of the same affinity and no collation: their
/// keys.
fn column_equality(expr: &Expr, block: &Block<'_>) -> Option<(String, String)> {
    let Expr::BinaryOp {
        left,
        op: BinaryOperator::Eq,
        right,
    } = expr
    else {
        return None;
    };
    let (a_key, a_table, a_column) = block.resolve(left)?;
    let (b_key, b_table, b_column) = block.resolve(right)?;
    let a = block.facts.get(&a_table, &a_column)?;
    let b = block.facts.get(&b_table, &b_column)?;
    (a.affinity == b.affinity && !a.collated && !b.collated && a_key != b_key)
        .then_some((a_key, b_key))
}

/// The direct sub-expressions of `expr`, sub-queries excluded.
fn children(expr: &mut Expr) -> Vec<&mut Expr> {
    match expr {
        Expr::BinaryOp { left, right, .. } => vec![left, right],
        Expr::UnaryOp { expr, .. }
        | Expr::Nested(expr)
        | Expr::IsNull(expr)
        | Expr::IsNotNull(expr)
        | Expr::Cast { expr, .. }
        | Expr::InSubquery { expr, .. } => vec![expr],
        Expr::Like { expr, pattern, .. } | Expr::ILike { expr, pattern, .. } => {
            vec![expr, pattern]
        }
        Expr::InList { expr, list, .. } => {
            let mut all: Vec<&mut Expr> = vec![expr];
            all.extend(list.iter_mut());
            all
        }
        Expr::Between {
            expr, low, high, ..
        } => vec![expr, low, high],
        Expr::Function(function) => match &mut function.args {
            FunctionArguments::List(list) => list
                .args
                .iter_mut()
                .filter_map(|arg| match arg {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(expr)) => Some(expr),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        },
        Expr::Case {
            operand,
            conditions,
            else_result,
            ..
        } => {
            let mut all: Vec<&mut Expr> = Vec::new();
            all.extend(operand.as_deref_mut());
            for when in conditions {
                all.push(&mut when.condition);
                all.push(&mut when.result);
            }
            all.extend(else_result.as_deref_mut());
            all
        }
        _ => Vec::new(),
    }
}

/// With GROUP BY every group has n >= 1 rows, so a HAVING condition on `count(*)` alone is
/// decided by the group size: the sizes it accepts, as `T`/`F` per size from 1 up to where the
/// answer stops changing (its constants bound that point). `None` for any other condition.
fn accepted_group_sizes(having: &Expr) -> Option<String> {
    let (test, largest) = count_test(having)?;
    let last = largest.clamp(1, 100_000) + 1;
    let mut answers: Vec<bool> = (1..=last).map(&test).collect();
    while answers.len() > 1 && answers[answers.len() - 1] == answers[answers.len() - 2] {
        answers.pop();
    }
    Some(answers.iter().map(|a| if *a { 'T' } else { 'F' }).collect())
}

/// A test of the group size.
type SizeTest = Box<dyn Fn(i64) -> bool>;

/// A HAVING condition on `count(*)` as a test of the group size, and its largest constant.
fn count_test(having: &Expr) -> Option<(SizeTest, i64)> {
    match having {
        Expr::Nested(inner) => count_test(inner),
        Expr::BinaryOp { left, op, right } => {
            let (constant, op) = match (is_count_star(left), is_count_star(right)) {
                (true, false) => (integer(right)?, op.clone()),
                (false, true) => (integer(left)?, mirrored(op)?),
                _ => return None,
            };
            let test: SizeTest = match op {
                BinaryOperator::Gt => Box::new(move |n| n > constant),
                BinaryOperator::GtEq => Box::new(move |n| n >= constant),
                BinaryOperator::Lt => Box::new(move |n| n < constant),
                BinaryOperator::LtEq => Box::new(move |n| n <= constant),
                BinaryOperator::Eq => Box::new(move |n| n == constant),
                BinaryOperator::NotEq => Box::new(move |n| n != constant),
                _ => return None,
            };
            Some((test, constant))
        }
        Expr::Between {
            expr,
            negated,
            low,
            high,
        } if is_count_star(expr) => {
            let (low, high, negated) = (integer(low)?, integer(high)?, *negated);
            Some((
                Box::new(move |n| (low <= n && n <= high) != negated),
                low.max(high),
            ))
        }
        _ => None,
    }
}

/// The operator with its operands swapped (`5 < count(*)` is `count(*) > 5`).
fn mirrored(op: &BinaryOperator) -> Option<BinaryOperator> {
    Some(match op {
        BinaryOperator::Gt => BinaryOperator::Lt,
        BinaryOperator::GtEq => BinaryOperator::LtEq,
        BinaryOperator::Lt => BinaryOperator::Gt,
        BinaryOperator::LtEq => BinaryOperator::GtEq,
        BinaryOperator::Eq => BinaryOperator::Eq,
        BinaryOperator::NotEq => BinaryOperator::NotEq,
        _ => return None,
    })
}

fn is_count_star(expr: &Expr) -> bool {
    let Expr::Function(function) = expr else {
        return false;
    };
    function.name.to_string().eq_ignore_ascii_case("count")
        && matches!(&function.args, FunctionArguments::List(list)
            if list.duplicate_treatment.is_none()
                && matches!(list.args.as_slice(), [FunctionArg::Unnamed(FunctionArgExpr::Wildcard)]))
}

fn integer(expr: &Expr) -> Option<i64> {
    match expr {
        Expr::Value(value) => match &value.value {
            Value::Number(text, _) => text.parse().ok(),
            _ => None,
        },
        Expr::UnaryOp {
            op: sqlparser::ast::UnaryOperator::Minus,
            expr,
        } => integer(expr).map(|n| -n),
        _ => None,
    }
}

/// The stand-in for a HAVING condition known by the group sizes it accepts: only ever
/// compared, never run.
fn marker(sizes: &str) -> Expr {
    Expr::value(Value::SingleQuotedString(format!(
        "\u{1}sqlgate group sizes {sizes}"
    )))
}

/// `x <= (SELECT min(x) FROM t)` is `x = (SELECT min(x) FROM t)` when `x` is the outer
/// block's column `x` of the same table `t`: no value of a column is below its minimum (the
/// minimum is taken, and compared, in the column's own ordering; a NULL makes both false).
/// Likewise `x > min` is `x <> min`, and with max, `x >= max` is `x = max` and `x < max` is
/// `x <> max`.
fn bound_by_extreme(expr: &mut Expr, block: &Block<'_>) {
    let Expr::BinaryOp { left, op, right } = expr else {
        return;
    };
    let (column, extreme, op) = match (&**left, &**right) {
        (column, Expr::Subquery(query)) => (column, query, op.clone()),
        (Expr::Subquery(query), column) => match mirrored(op) {
            Some(op) => (column, query, op),
            None => return,
        },
        _ => return,
    };
    let Some((_, table, name)) = block.resolve(column) else {
        return;
    };
    if block
        .facts
        .get(&table, &name)
        .is_none_or(|fact| fact.collated)
    {
        return;
    }
    let replacement = match (extreme_of(extreme, &table, &name), &op) {
        (Some(Extreme::Min), BinaryOperator::LtEq) | (Some(Extreme::Max), BinaryOperator::GtEq) => {
            BinaryOperator::Eq
        }
        (Some(Extreme::Min), BinaryOperator::Gt) | (Some(Extreme::Max), BinaryOperator::Lt) => {
            BinaryOperator::NotEq
        }
        _ => return,
    };
    let (mut column, mut extreme) = (left.clone(), right.clone());
    if matches!(*column, Expr::Subquery(_)) {
        std::mem::swap(&mut column, &mut extreme);
    }
    *expr = Expr::BinaryOp {
        left: column,
        op: replacement,
        right: extreme,
    };
}

/// Which extreme of a column a scalar sub-query computes.
enum Extreme {
    Min,
    Max,
}

/// `Some` when `query` is exactly `SELECT min(column) FROM table` (or max): one table, no
/// condition, no grouping, no offset.
fn extreme_of(query: &Query, table: &str, column: &str) -> Option<Extreme> {
    let SetExpr::Select(select) = &*query.body else {
        return None;
    };
    let [from] = select.from.as_slice() else {
        return None;
    };
    let sqlparser::ast::TableFactor::Table { name, alias, .. } = &from.relation else {
        return None;
    };
    let reads_table = name.to_string().to_lowercase() == table;
    let unconditioned = from.joins.is_empty()
        && select.selection.is_none()
        && select.having.is_none()
        && matches!(&select.group_by, GroupByExpr::Expressions(e, _) if e.is_empty());
    let no_offset = matches!(
        &query.limit_clause,
        None | Some(LimitClause::LimitOffset { offset: None, .. })
    );
    let [SelectItem::UnnamedExpr(Expr::Function(function))] = select.projection.as_slice() else {
        return None;
    };
    let FunctionArguments::List(list) = &function.args else {
        return None;
    };
    let [FunctionArg::Unnamed(FunctionArgExpr::Expr(argument))] = list.args.as_slice() else {
        return None;
    };
    let qualifier = alias
        .as_ref()
        .map_or(table.to_string(), |a| a.name.value.to_lowercase());
    let reads_column = match argument {
        Expr::Identifier(ident) => ident.value.to_lowercase() == column,
        Expr::CompoundIdentifier(parts) => {
            parts.len() == 2
                && parts[0].value.to_lowercase() == qualifier
                && parts[1].value.to_lowercase() == column
        }
        _ => false,
    };
    if !(reads_table && unconditioned && no_offset && reads_column) {
        return None;
    }
    match function.name.to_string().to_lowercase().as_str() {
        "min" => Some(Extreme::Min),
        "max" => Some(Extreme::Max),
        _ => None,
    }
}

/// Expression-level rewrites: names, scalar sub-query LIMIT, membership sub-queries.
fn normalise_expr(expr: &mut Expr, facts: &ColumnFacts) {
    match expr {
        Expr::Identifier(ident)
            if ident.quote_style == Some('"') && !facts.is_column(&ident.value) =>
        {
            *expr = Expr::value(Value::SingleQuotedString(ident.value.clone()));
        }
        Expr::Identifier(ident) => lower(ident),
        Expr::CompoundIdentifier(parts) => parts.iter_mut().for_each(lower),
        Expr::Function(function) => {
            for part in &mut function.name.0 {
                if let ObjectNamePart::Identifier(ident) = part {
                    lower(ident);
                }
            }
        }
        Expr::Subquery(query) => drop_scalar_limit(query),
        Expr::InSubquery { subquery, .. } | Expr::Exists { subquery, .. } => {
            dedup_membership(subquery)
        }
        _ => {}
    }
}

fn lower(ident: &mut Ident) {
    ident.value = ident.value.to_lowercase();
    ident.quote_style = None;
}

/// A scalar sub-query yields its first row; LIMIT k with k >= 1 (and no OFFSET) keeps that row.
fn drop_scalar_limit(query: &mut Query) {
    if let Some(LimitClause::LimitOffset {
        limit: Some(limit),
        offset: None,
        limit_by,
    }) = &query.limit_clause
    {
        if limit_by.is_empty() && integer(limit).is_some_and(|k| k >= 1) {
            query.limit_clause = None;
        }
    }
}

/// Only which rows an IN / EXISTS sub-query yields counts, not how often: its DISTINCT and
/// UNION ALL are plain UNION. Not under LIMIT, which counts rows.
fn dedup_membership(query: &mut Query) {
    if query.limit_clause.is_none() {
        dedup_body(&mut query.body);
    }
}

/// UNION, INTERSECT and EXCEPT (without ALL) return distinct rows and depend only on which
/// rows their operands yield, so DISTINCT and UNION ALL inside the operands are plain UNION.
fn dedup_operands(body: &mut SetExpr) {
    if let SetExpr::SetOperation {
        op: SetOperator::Union | SetOperator::Intersect | SetOperator::Except,
        set_quantifier: SetQuantifier::None | SetQuantifier::Distinct,
        left,
        right,
    } = body
    {
        dedup_body(left);
        dedup_body(right);
    }
}

fn dedup_body(body: &mut SetExpr) {
    match body {
        SetExpr::Select(select) => select.distinct = None,
        SetExpr::SetOperation {
            op: SetOperator::Union,
            set_quantifier,
            left,
            right,
        } if matches!(
            set_quantifier,
            SetQuantifier::All | SetQuantifier::None | SetQuantifier::Distinct
        ) =>
        {
            *set_quantifier = SetQuantifier::None;
            dedup_body(left);
            dedup_body(right);
        }
        SetExpr::SetOperation { .. } => dedup_operands(body),
        SetExpr::Query(query) => dedup_membership(query),
        _ => {}
    }
}

#[cfg(test)]
mod tests;
