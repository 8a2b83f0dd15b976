//! Values a MySQL / MariaDB plan picks (issue 44, red team round 8): where rows tie under a
//! collation that is not binary (`ada` and `ADA` under a case-insensitive one, `a` and `a ` under
//! PAD SPACE, `e` and `é` under an accent-insensitive one) or share a group, the query returns
//! ONE of their values, and which one is the plan's choice (the join order that statistics pick,
//! a hash or a sort), not the query's. The choice points: `SELECT DISTINCT`, a GROUP BY key's
//! value, a set operation that removes duplicates (UNION, INTERSECT, EXCEPT without ALL),
//! `MIN` / `MAX` (and any other aggregate but `COUNT`, `SUM`, `AVG` given DISTINCT), the values a
//! `GROUP_CONCAT` / `JSON_ARRAYAGG` / `JSON_OBJECTAGG` strings together (tied values come in the
//! plan's order whatever its ORDER BY), the value a window reads by position (`FIRST_VALUE`,
//! `LAST_VALUE`, `NTH_VALUE`, `LAG`, `LEAD`: its ORDER BY's peers under the collation come in the
//! plan's order; red team round 9), and a bare column of a grouped query (one neither grouped
//! nor aggregated: any row's value). An IN or
//! EXISTS sub-query's duplicates removal picks no value: its rows never reach the output.
//!
//! Each choice names the columns it reads ([`Candidate`]): the choice is determined when, in the
//! benchmark's data, the rows of the column's table that agree on the choice's keys (under their
//! collations) hold one value (as bytes; NULL counts as a value), which one query over that table
//! shows ([`Candidate::probe_sql`]); the query's own rows are a subset of those, so that probe
//! finding no tie is sound. A value that is certainly a number (a count, arithmetic, a
//! comparison) cannot tie while differing in this sense and is not a choice; a column reached
//! through a derived table or a CTE, an expression over text, and a query that does not parse
//! are choices the analysis cannot bound ([`Choice::candidates`] empty): held undetermined.

use crate::sql::features::FeatureDialect;
use sqlparser::ast::{
    BinaryOperator, Distinct, DuplicateTreatment, Expr, FunctionArg, FunctionArgExpr,
    FunctionArguments, GroupByExpr, ObjectName, ObjectNamePart, Query, Select, SelectItem, SetExpr,
    SetQuantifier, Statement, TableFactor, UnaryOperator, Value as AstValue,
};
use sqlparser::parser::Parser;

/// Aggregates that return one of their input values (or a string of them).
const PICKING_AGGREGATES: &[&str] = &[
    "min",
    "max",
    "group_concat",
    "json_arrayagg",
    "json_objectagg",
    "any_value",
];

/// Aggregates whose value is a number computed from all their input (no value is picked).
const NUMBER_AGGREGATES: &[&str] = &[
    "count",
    "sum",
    "avg",
    "std",
    "stddev",
    "stddev_pop",
    "stddev_samp",
    "variance",
    "var_pop",
    "var_samp",
    "bit_and",
    "bit_or",
    "bit_xor",
];

/// Scalar functions whose value is a number whatever their arguments.
const NUMBER_FUNCTIONS: &[&str] = &[
    "abs",
    "round",
    "floor",
    "ceil",
    "ceiling",
    "truncate",
    "length",
    "char_length",
    "character_length",
    "octet_length",
    "bit_length",
    "year",
    "month",
    "day",
    "dayofmonth",
    "dayofweek",
    "dayofyear",
    "hour",
    "minute",
    "second",
    "week",
    "quarter",
    "datediff",
    "timestampdiff",
    "locate",
    "instr",
    "position",
    "sign",
    "sqrt",
    "power",
    "pow",
    "exp",
    "ln",
    "log",
    "log10",
    "mod",
];

/// Whether `name` (lower case) is an aggregate: a query calling one outside a window is grouped.
fn is_aggregate(name: &str) -> bool {
    NUMBER_AGGREGATES.contains(&name) || PICKING_AGGREGATES.contains(&name)
}

/// Aggregates that string their input values together (in their ORDER BY's order, whose peers
/// under a collation come in the plan's order: `ada,ADA` or `ADA,ada`).
const STRINGING_AGGREGATES: &[&str] = &["group_concat", "json_arrayagg", "json_objectagg"];

/// Words without which a query has no choice point (a cheap filter before the parse).
const TRIGGERS: &[&str] = &[
    "first_value",
    "last_value",
    "nth_value",
    "lag",
    "lead",
    "distinct",
    "group",
    "union",
    "intersect",
    "except",
    "having",
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "std",
    "var",
    "bit_",
    "json_",
    "any_value",
];

/// One column a choice may read: the choice is determined when the rows of `table` that agree on
/// `keys` (columns of `table`) hold one value of `column`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Candidate {
    /// The table, as the query names it.
    pub table: String,
    /// The column whose value is picked.
    pub column: String,
    /// The columns of `table` whose equal values put rows in one choice: the column itself for a
    /// tie, the grouped columns of `table` for a bare column.
    pub keys: Vec<String>,
}

impl Candidate {
    /// The MySQL query that returns a row when two rows of the table agree on the keys and differ
    /// in the column (as bytes, or one NULL): the choice is then undetermined.
    pub fn probe_sql(&self) -> String {
        let quote = |name: &str| format!("`{}`", name.replace('`', "``"));
        let column = quote(&self.column);
        let group = match self.keys.is_empty() {
            true => String::new(),
            false => {
                let keys: Vec<String> = self.keys.iter().map(|k| quote(k)).collect();
                format!(" GROUP BY {}", keys.join(", "))
            }
        };
        format!(
            "SELECT 1 FROM {}{group} HAVING COUNT(DISTINCT CAST({column} AS BINARY)) \
             + MAX({column} IS NULL) > 1 LIMIT 1",
            quote(&self.table)
        )
    }
}

/// A value the plan picks: determined when every candidate's probe runs and finds no tie; with
/// no candidate (a choice the analysis cannot bound) it is undetermined.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Choice {
    /// The columns the choice may read (an unqualified column may belong to any table in scope).
    pub candidates: Vec<Candidate>,
}

impl Choice {
    fn unbounded() -> Choice {
        Choice {
            candidates: Vec::new(),
        }
    }
}

/// The value choices of `sql` read in `dialect` (see the module's documentation); none outside
/// MySQL / MariaDB, whose collations the benchmark's columns take by default.
pub fn choices(sql: &str, dialect: FeatureDialect) -> Vec<Choice> {
    if dialect != FeatureDialect::Mysql {
        return Vec::new();
    }
    let lower = sql.to_ascii_lowercase();
    if !TRIGGERS.iter().any(|word| lower.contains(word)) {
        return Vec::new();
    }
    let parser_dialect = super::cuts::parser_dialect(dialect);
    let Ok(statements) = Parser::parse_sql(parser_dialect.as_ref(), sql) else {
        return vec![Choice::unbounded()];
    };
    let [Statement::Query(query)] = statements.as_slice() else {
        return vec![Choice::unbounded()];
    };
    let mut found = Vec::new();
    let nested = super::cuts::nested_queries(sql, parser_dialect.as_ref());
    for query in std::iter::once(query.as_ref()).chain(&nested) {
        query_choices(query, &mut found);
    }
    found.sort();
    found.dedup();
    found
}

/// The choices of `query`'s own body (its nested queries are read on their own).
fn query_choices(query: &Query, found: &mut Vec<Choice>) {
    body_choices(&query.body, found);
}

fn body_choices(body: &SetExpr, found: &mut Vec<Choice>) {
    match body {
        SetExpr::Select(select) => select_choices(select, found),
        SetExpr::Query(query) => query_choices(query, found),
        SetExpr::SetOperation {
            set_quantifier,
            left,
            right,
            ..
        } => {
            if !matches!(
                set_quantifier,
                SetQuantifier::All | SetQuantifier::AllByName
            ) {
                set_operation_choices(body, found);
            }
            body_choices(left, found);
            body_choices(right, found);
        }
        _ => {}
    }
}

/// What one output column of a set operation's branch holds.
#[derive(Debug, PartialEq)]
enum Held {
    Number,
    Columns(Vec<Candidate>),
    Unbounded,
}

/// The choices of a duplicates-removing set operation: per output column, the branches' values
/// tie across branches unless every branch holds a number or every one the same column.
fn set_operation_choices(body: &SetExpr, found: &mut Vec<Choice>) {
    let mut branches = Vec::new();
    leaf_selects(body, &mut branches);
    let Some(branches) = branches.into_iter().collect::<Option<Vec<&Select>>>() else {
        found.push(Choice::unbounded());
        return;
    };
    let held: Vec<Vec<Held>> = branches.iter().map(|s| projection_held(s)).collect();
    let width = held.iter().map(Vec::len).max().unwrap_or(0);
    for position in 0..width {
        let column: Vec<&Held> = held.iter().filter_map(|h| h.get(position)).collect();
        if column.len() != held.len() || column.iter().any(|h| **h == Held::Unbounded) {
            found.push(Choice::unbounded());
        } else if column.iter().all(|h| **h == Held::Number) {
        } else if column.windows(2).all(|pair| pair[0] == pair[1]) {
            if let Held::Columns(candidates) = column[0] {
                found.push(Choice {
                    candidates: candidates.clone(),
                });
            }
        } else {
            found.push(Choice::unbounded());
        }
    }
}

/// The SELECTs whose rows a set operation combines (`None`: a branch that is not one).
fn leaf_selects<'q>(body: &'q SetExpr, out: &mut Vec<Option<&'q Select>>) {
    match body {
        SetExpr::Select(select) => out.push(Some(select)),
        SetExpr::Query(query) => leaf_selects(&query.body, out),
        SetExpr::SetOperation { left, right, .. } => {
            leaf_selects(left, out);
            leaf_selects(right, out);
        }
        _ => out.push(None),
    }
}

/// What each output column of `select` holds (a `*` is unbounded).
fn projection_held(select: &Select) -> Vec<Held> {
    let scope = Scope::of(select);
    select
        .projection
        .iter()
        .map(|item| match projected(item) {
            None => Held::Unbounded,
            Some(expr) => match scope.value(expr) {
                Value::Number | Value::Constant => match is_number(expr) {
                    true => Held::Number,
                    false => Held::Unbounded,
                },
                Value::Columns(c) => Held::Columns(c),
                Value::Unbounded => Held::Unbounded,
            },
        })
        .collect()
}

fn projected(item: &SelectItem) -> Option<&Expr> {
    match item {
        SelectItem::UnnamedExpr(expr) | SelectItem::ExprWithAlias { expr, .. } => Some(expr),
        _ => None,
    }
}

/// The choices of one SELECT: its DISTINCT, its grouping and its MIN / MAX.
fn select_choices(select: &Select, found: &mut Vec<Choice>) {
    let scope = Scope::of(select);
    let keys = match &select.group_by {
        GroupByExpr::Expressions(keys, _) => Some(group_keys(keys, &select.projection)),
        GroupByExpr::All(_) => None,
    };
    let Some(keys) = keys else {
        found.push(Choice::unbounded());
        return;
    };
    let exprs: Vec<&Expr> = select.projection.iter().filter_map(projected).collect();
    let starred = exprs.len() != select.projection.len();
    let aggregated = exprs
        .iter()
        .chain(select.having.as_ref().iter())
        .any(|e| has_aggregate(e));
    let grouped = !keys.is_empty() || aggregated || select.having.is_some();
    let mut walk = Walk {
        scope: &scope,
        keys: &keys,
        grouped,
        found,
    };
    if grouped && starred {
        walk.found.push(Choice::unbounded());
    }
    if select.distinct.is_some() && !grouped {
        if starred || matches!(select.distinct, Some(Distinct::On(_))) {
            walk.found.push(Choice::unbounded());
        }
        for expr in &exprs {
            walk.tie(expr);
        }
    }
    for expr in exprs.iter().copied().chain(select.having.as_ref()) {
        walk.expr(expr);
    }
}

/// The GROUP BY keys, with a position (`GROUP BY 1`) or an output alias read as its expression.
fn group_keys<'q>(keys: &'q [Expr], projection: &'q [SelectItem]) -> Vec<&'q Expr> {
    keys.iter()
        .map(|key| match key {
            Expr::Value(v) => match &v.value {
                AstValue::Number(n, _) => n
                    .parse::<usize>()
                    .ok()
                    .and_then(|p| projection.get(p.checked_sub(1)?))
                    .and_then(projected)
                    .unwrap_or(key),
                _ => key,
            },
            Expr::Identifier(name) => projection
                .iter()
                .find_map(|item| match item {
                    SelectItem::ExprWithAlias { expr, alias }
                        if alias.value.eq_ignore_ascii_case(&name.value) =>
                    {
                        Some(expr)
                    }
                    _ => None,
                })
                .unwrap_or(key),
            _ => key,
        })
        .collect()
}

/// Whether `expr` calls an aggregate outside a window (a sub-query's are its own).
fn has_aggregate(expr: &Expr) -> bool {
    if let Expr::Function(function) = expr {
        if function.over.is_none() && is_aggregate(&function_name(&function.name)) {
            return true;
        }
    }
    children(expr).is_some_and(|children| children.into_iter().any(has_aggregate))
}

/// The lower-case last part of a function's name.
fn function_name(name: &ObjectName) -> String {
    match name.0.last() {
        Some(ObjectNamePart::Identifier(ident)) => ident.value.to_lowercase(),
        _ => String::new(),
    }
}

/// A walk over one SELECT's output expressions, collecting its choices.
struct Walk<'w> {
    scope: &'w Scope,
    keys: &'w [&'w Expr],
    grouped: bool,
    found: &'w mut Vec<Choice>,
}

impl Walk<'_> {
    /// The choices in `expr`: a grouped query's keys and bare columns, and MIN / MAX anywhere.
    fn expr(&mut self, expr: &Expr) {
        let text = expr.to_string().to_lowercase();
        if self.grouped
            && self
                .keys
                .iter()
                .any(|k| k.to_string().to_lowercase() == text)
        {
            self.tie(expr);
            return;
        }
        match expr {
            Expr::Function(function) => {
                let name = function_name(&function.name);
                let aggregate = is_aggregate(&name);
                let distinct = matches!(
                    &function.args,
                    FunctionArguments::List(list)
                        if list.duplicate_treatment == Some(DuplicateTreatment::Distinct)
                );
                // A window reading a row by position, over an ORDER BY that lists the value it
                // reads (else the order check holds it undetermined), reads one of the rows
                // that tie on that value under its collation (red team round 9).
                let positional = function.over.is_some()
                    && super::order_calls::POSITION_WINDOWS.contains(&name.as_str());
                let picks = name == "min"
                    || name == "max"
                    || positional
                    || STRINGING_AGGREGATES.contains(&name.as_str())
                    || aggregate && distinct && !NUMBER_AGGREGATES.contains(&name.as_str());
                if picks {
                    for argument in arguments(&function.args).unwrap_or_default() {
                        self.tie(argument);
                    }
                }
                if aggregate && function.over.is_none() {
                    return;
                }
            }
            Expr::Identifier(_) | Expr::CompoundIdentifier(_) if self.grouped => {
                self.bare(expr);
                return;
            }
            Expr::Subquery(_) | Expr::Exists { .. } | Expr::InSubquery { .. } if self.grouped => {
                self.found.push(Choice::unbounded());
                return;
            }
            _ => {}
        }
        match children(expr) {
            Some(children) => children.into_iter().for_each(|child| self.expr(child)),
            None if self.grouped => self.found.push(Choice::unbounded()),
            None => {}
        }
    }

    /// `expr`'s value is picked among rows that tie on it.
    fn tie(&mut self, expr: &Expr) {
        match self.scope.value(expr) {
            Value::Number | Value::Constant => {}
            Value::Columns(candidates) => self.found.push(Choice { candidates }),
            Value::Unbounded => self.found.push(Choice::unbounded()),
        }
    }

    /// `expr`, a column of a grouped query that is not a key: any row of the group's value,
    /// determined where the grouped columns of its own table fix it.
    fn bare(&mut self, expr: &Expr) {
        let Some(columns) = self.scope.columns(expr) else {
            self.found.push(Choice::unbounded());
            return;
        };
        let candidates = columns
            .into_iter()
            .map(|(table, column)| {
                let keys = (self.keys.iter())
                    .filter_map(|key| match self.scope.columns(key)?.as_slice() {
                        [(key_table, key_column)] if *key_table == table => {
                            Some(key_column.clone())
                        }
                        _ => None,
                    })
                    .collect();
                Candidate {
                    table,
                    column,
                    keys,
                }
            })
            .collect();
        self.found.push(Choice { candidates });
    }
}

/// What a picked value may be.
enum Value {
    /// A number (no two different numbers tie in the sense that matters here).
    Number,
    /// One constant (all rows hold it).
    Constant,
    /// A column of one of these tables.
    Columns(Vec<Candidate>),
    Unbounded,
}

/// The tables one SELECT reads: each name or alias it binds, with its table (`None`: a derived
/// table, a function, a qualified name). A CTE's name reads as a table's: its probe fails to run,
/// which holds the choice undetermined.
struct Scope {
    bindings: Vec<(String, Option<String>)>,
}

impl Scope {
    fn of(select: &Select) -> Scope {
        let factors = (select.from.iter())
            .flat_map(|t| std::iter::once(&t.relation).chain(t.joins.iter().map(|j| &j.relation)));
        let bindings = factors
            .map(|factor| match factor {
                TableFactor::Table { name, alias, .. } => {
                    let table = match name.0.as_slice() {
                        [ObjectNamePart::Identifier(table)] => Some(table.value.clone()),
                        _ => None,
                    };
                    let bound = alias.as_ref().map(|a| &a.name.value);
                    let bound = bound.or(table.as_ref()).cloned().unwrap_or_default();
                    (bound.to_lowercase(), table)
                }
                TableFactor::Derived { alias, .. } => (
                    alias
                        .as_ref()
                        .map(|a| a.name.value.to_lowercase())
                        .unwrap_or_default(),
                    None,
                ),
                _ => (String::new(), None),
            })
            .collect();
        Scope { bindings }
    }

    /// The (table, column) pairs a column reference may name; `None` when it may name a column
    /// that is no base table's (a derived table's, an outer query's, a qualified name's).
    fn columns(&self, expr: &Expr) -> Option<Vec<(String, String)>> {
        match expr {
            Expr::Nested(inner) => self.columns(inner),
            Expr::Identifier(column) => {
                if self.bindings.is_empty() {
                    return None;
                }
                (self.bindings.iter())
                    .map(|(_, table)| Some((table.clone()?, column.value.clone())))
                    .collect()
            }
            Expr::CompoundIdentifier(parts) => {
                let [qualifier, column] = parts.as_slice() else {
                    return None;
                };
                let qualifier = qualifier.value.to_lowercase();
                let bound: Vec<&Option<String>> = (self.bindings.iter())
                    .filter(|(name, _)| *name == qualifier)
                    .map(|(_, table)| table)
                    .collect();
                match bound.as_slice() {
                    [Some(table)] => Some(vec![(table.clone(), column.value.clone())]),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// What `expr`'s value may be when a plan picks it among rows that tie on it.
    fn value(&self, expr: &Expr) -> Value {
        if is_number(expr) {
            return Value::Number;
        }
        match expr {
            Expr::Nested(inner) => self.value(inner),
            Expr::Value(_) => Value::Constant,
            Expr::Identifier(_) | Expr::CompoundIdentifier(_) => match self.columns(expr) {
                Some(columns) => Value::Columns(
                    (columns.into_iter())
                        .map(|(table, column)| Candidate {
                            keys: vec![column.clone()],
                            table,
                            column,
                        })
                        .collect(),
                ),
                None => Value::Unbounded,
            },
            _ => Value::Unbounded,
        }
    }
}

/// Whether `expr`'s value is certainly a number: a numeric literal, arithmetic, a comparison or
/// a logical operation (0 / 1 in MySQL), a count or a sum, a numeric function.
fn is_number(expr: &Expr) -> bool {
    use BinaryOperator as B;
    match expr {
        Expr::Nested(inner) => is_number(inner),
        Expr::Value(v) => matches!(v.value, AstValue::Number(..) | AstValue::Boolean(_)),
        Expr::BinaryOp { op, .. } => matches!(
            op,
            B::Plus
                | B::Minus
                | B::Multiply
                | B::Divide
                | B::Modulo
                | B::MyIntegerDivide
                | B::Gt
                | B::Lt
                | B::GtEq
                | B::LtEq
                | B::Spaceship
                | B::Eq
                | B::NotEq
                | B::And
                | B::Or
                | B::Xor
                | B::BitwiseOr
                | B::BitwiseAnd
                | B::BitwiseXor
        ),
        Expr::UnaryOp { op, .. } => matches!(op, UnaryOperator::Minus | UnaryOperator::Not),
        Expr::IsNull(_)
        | Expr::IsNotNull(_)
        | Expr::IsTrue(_)
        | Expr::IsFalse(_)
        | Expr::Like { .. }
        | Expr::ILike { .. }
        | Expr::RLike { .. }
        | Expr::Between { .. }
        | Expr::InList { .. }
        | Expr::InSubquery { .. }
        | Expr::Exists { .. } => true,
        Expr::Function(function) => {
            let name = function_name(&function.name);
            NUMBER_AGGREGATES.contains(&name.as_str()) || NUMBER_FUNCTIONS.contains(&name.as_str())
        }
        _ => false,
    }
}

/// The arguments of a call (`None`: a form not read, such as a sub-query argument).
fn arguments(args: &FunctionArguments) -> Option<Vec<&Expr>> {
    match args {
        FunctionArguments::None => Some(Vec::new()),
        FunctionArguments::Subquery(_) => None,
        FunctionArguments::List(list) => list
            .args
            .iter()
            .map(|arg| match arg {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e))
                | FunctionArg::Named {
                    arg: FunctionArgExpr::Expr(e),
                    ..
                } => Some(e),
                _ => None,
            })
            .collect(),
    }
}

/// The sub-expressions of `expr` whose values it reads (`None`: a form not read here, which a
/// grouped query holds undetermined).
fn children(expr: &Expr) -> Option<Vec<&Expr>> {
    Some(match expr {
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) | Expr::Value(_) => Vec::new(),
        Expr::Nested(e)
        | Expr::UnaryOp { expr: e, .. }
        | Expr::Cast { expr: e, .. }
        | Expr::IsNull(e)
        | Expr::IsNotNull(e)
        | Expr::IsTrue(e)
        | Expr::IsFalse(e)
        | Expr::Collate { expr: e, .. } => vec![e],
        Expr::BinaryOp { left, right, .. } => vec![left, right],
        Expr::Like { expr, pattern, .. }
        | Expr::ILike { expr, pattern, .. }
        | Expr::RLike { expr, pattern, .. } => vec![expr, pattern],
        Expr::Between {
            expr, low, high, ..
        } => vec![expr, low, high],
        Expr::InList { expr, list, .. } => std::iter::once(expr.as_ref()).chain(list).collect(),
        Expr::Case {
            operand,
            conditions,
            else_result,
            ..
        } => (operand.iter().map(|e| e.as_ref()))
            .chain(conditions.iter().flat_map(|w| [&w.condition, &w.result]))
            .chain(else_result.iter().map(|e| e.as_ref()))
            .collect(),
        Expr::Function(function) => arguments(&function.args)?,
        Expr::Substring {
            expr,
            substring_from,
            substring_for,
            ..
        } => (std::iter::once(expr.as_ref()))
            .chain(substring_from.iter().map(|e| e.as_ref()))
            .chain(substring_for.iter().map(|e| e.as_ref()))
            .collect(),
        Expr::Trim {
            expr, trim_what, ..
        } => (std::iter::once(expr.as_ref()))
            .chain(trim_what.iter().map(|e| e.as_ref()))
            .collect(),
        Expr::Extract { expr, .. } => vec![expr],
        _ => return None,
    })
}

#[cfg(test)]
mod tests;
