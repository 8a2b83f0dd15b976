//! ESM+'s canonical query form (seed 001): built on sqlparser's AST, it keeps what the Spider IR
//! drops on purpose (values, JOIN kinds and ON conditions, DISTINCT everywhere, LIMIT values, IN
//! value lists), resolves table aliases per sub-query scope and column aliases, keeps
//! parenthesised condition structure, and then applies the equivalence rules of seed 001 Table 1,
//! each only when its assumption holds in [`DbFacts`].

use super::facts::{ColumnId, DbFacts};
use super::SqlError;
use sqlparser::ast as sql;
use sqlparser::dialect::SQLiteDialect;
use sqlparser::parser::Parser;

/// Longest query text accepted; longer predictions are wrong without being parsed.
pub const MAX_QUERY_CHARS: usize = 20_000;

/// The equivalence rules of seed 001 Table 1, in the table's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rule {
    /// 1: `WHERE c = (SELECT MIN/MAX(c) FROM t)` = `ORDER BY c ASC/DESC LIMIT 1` (c UNIQUE, NOT NULL).
    ExtremeSubquery,
    /// 2: `SELECT DISTINCT c` = `SELECT c` (c UNIQUE and NOT NULL, one table, no GROUP BY).
    RedundantDistinct,
    /// 3: `q1 INTERSECT q2` on one key column = one query with `d1 AND d2`.
    IntersectAsAnd,
    /// 4: `q1 UNION q2` on one key column = one query with `d1 OR d2`.
    UnionAsOr,
    /// 5: `GROUP BY c1, c2, ...` = `GROUP BY c1` (c1 UNIQUE and NOT NULL, one table).
    GroupByKey,
    /// 6: `SELECT c FROM t EXCEPT q` = `... WHERE c NOT IN (q)` (c key; q's column NOT NULL).
    ExceptAsNotIn,
    /// 7: `COUNT(c)` = `COUNT(*)` (c NOT NULL, no outer join).
    CountStar,
    /// 8: `WHERE c IS NOT NULL` dropped (c NOT NULL, no outer join).
    IsNotNull,
    /// 9: `SELECT MIN/MAX(c) FROM t` = `SELECT c FROM t ORDER BY c LIMIT 1` (t non-empty, c NOT NULL).
    ExtremeOrderLimit,
    /// 10: `SELECT *` = the table's columns (one table; columns from the schema).
    StarColumns,
    /// 11: `c = '5'` = `c = 5` (number without a leading zero, c has a type affinity).
    NumericString,
    /// 12: `c2 IN (SELECT c1 FROM t1 WHERE d1)` = `t1 JOIN t2 ON t1.c1 = t2.c2 WHERE d1` (c1 key).
    InAsJoin,
    /// 13: a joined table nothing else uses dropped (total foreign key to a key).
    UnneededJoin,
    /// 14: `t1 AS t` = `t1 t` (aliases resolved; always).
    TableAlias,
    /// 15: `c IN (x, y)` = `c = x OR c = y` (always).
    InList,
    /// 16: `t1.c1` = `t2.c2` after `JOIN ON t1.c1 = t2.c2` (inner joins; always).
    JoinColumn,
    /// 17: `c IN (SELECT c FROM t WHERE d)` over t = `WHERE d` (c key).
    SelfIn,
    /// 18: `q UNION/INTERSECT q` = `q` with DISTINCT (always).
    SelfSetOp,
    /// 19: `BETWEEN x AND y` = `>= x AND <= y` (always).
    Between,
    /// 20: `NOT c op x` = `c negated-op x` (always).
    NotComparison,
}

impl Rule {
    /// All rules, in Table 1 order.
    pub const ALL: [Rule; 20] = [
        Rule::ExtremeSubquery,
        Rule::RedundantDistinct,
        Rule::IntersectAsAnd,
        Rule::UnionAsOr,
        Rule::GroupByKey,
        Rule::ExceptAsNotIn,
        Rule::CountStar,
        Rule::IsNotNull,
        Rule::ExtremeOrderLimit,
        Rule::StarColumns,
        Rule::NumericString,
        Rule::InAsJoin,
        Rule::UnneededJoin,
        Rule::TableAlias,
        Rule::InList,
        Rule::JoinColumn,
        Rule::SelfIn,
        Rule::SelfSetOp,
        Rule::Between,
        Rule::NotComparison,
    ];

    /// The rule's name as written in JSONL and summaries (`r<number>_<what>`).
    pub fn name(self) -> &'static str {
        match self {
            Rule::ExtremeSubquery => "r1_extreme_subquery",
            Rule::RedundantDistinct => "r2_redundant_distinct",
            Rule::IntersectAsAnd => "r3_intersect_as_and",
            Rule::UnionAsOr => "r4_union_as_or",
            Rule::GroupByKey => "r5_group_by_key",
            Rule::ExceptAsNotIn => "r6_except_as_not_in",
            Rule::CountStar => "r7_count_star",
            Rule::IsNotNull => "r8_is_not_null",
            Rule::ExtremeOrderLimit => "r9_extreme_order_limit",
            Rule::StarColumns => "r10_star_columns",
            Rule::NumericString => "r11_numeric_string",
            Rule::InAsJoin => "r12_in_as_join",
            Rule::UnneededJoin => "r13_unneeded_join",
            Rule::TableAlias => "r14_table_alias",
            Rule::InList => "r15_in_list",
            Rule::JoinColumn => "r16_join_column",
            Rule::SelfIn => "r17_self_in",
            Rule::SelfSetOp => "r18_self_set_op",
            Rule::Between => "r19_between",
            Rule::NotComparison => "r20_not_comparison",
        }
    }

    /// The rule a name stands for.
    pub fn parse(name: &str) -> Option<Rule> {
        Rule::ALL.into_iter().find(|r| r.name() == name)
    }

    fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

/// A set of rules (bit set over [`Rule`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct RuleSet(u32);

impl RuleSet {
    /// Every rule.
    pub fn all() -> RuleSet {
        RuleSet(Rule::ALL.iter().fold(0, |bits, r| bits | r.bit()))
    }
    /// No rule.
    pub fn none() -> RuleSet {
        RuleSet(0)
    }
    /// Whether `rule` is in the set.
    pub fn contains(self, rule: Rule) -> bool {
        self.0 & rule.bit() != 0
    }
    /// The set with `rule` added.
    pub fn with(self, rule: Rule) -> RuleSet {
        RuleSet(self.0 | rule.bit())
    }
    /// The set without `rule`.
    pub fn without(self, rule: Rule) -> RuleSet {
        RuleSet(self.0 & !rule.bit())
    }
    /// The union of two sets.
    pub fn union(self, other: RuleSet) -> RuleSet {
        RuleSet(self.0 | other.0)
    }
    /// The rules in the set, in Table 1 order.
    pub fn rules(self) -> impl Iterator<Item = Rule> {
        Rule::ALL.into_iter().filter(move |r| self.contains(*r))
    }
}

/// A canonical query.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Query {
    body: Body,
    order_by: Vec<(Expr, bool)>,
    limit: Option<Expr>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Body {
    Select(Box<Select>),
    Set {
        op: SetOp,
        all: bool,
        left: Box<Query>,
        right: Box<Query>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum SetOp {
    Union,
    Intersect,
    Except,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Select {
    distinct: bool,
    items: Vec<Expr>,
    from: Vec<(JoinKind, Source)>,
    on: Vec<Expr>,
    filter: Option<Expr>,
    group_by: Vec<Expr>,
    having: Option<Expr>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum JoinKind {
    Inner,
    Left,
    Right,
    Full,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Source {
    Table(String),
    Derived(Box<Query>),
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Expr {
    Column(String, String),
    Star,
    Number(String),
    Text(String),
    Keyword(String),
    Func {
        name: String,
        distinct: bool,
        args: Vec<Expr>,
    },
    Binary {
        op: String,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    And(Vec<Expr>),
    Or(Vec<Expr>),
    Not(Box<Expr>),
    IsNull {
        expr: Box<Expr>,
        negated: bool,
    },
    InList {
        expr: Box<Expr>,
        list: Vec<Expr>,
        negated: bool,
    },
    InQuery {
        expr: Box<Expr>,
        query: Box<Query>,
        negated: bool,
    },
    Between {
        expr: Box<Expr>,
        low: Box<Expr>,
        high: Box<Expr>,
        negated: bool,
    },
    Scalar(Box<Query>),
    Exists {
        query: Box<Query>,
        negated: bool,
    },
    Other(String),
}

/// Parses `text` into its canonical form under `rules`; returns the rules that changed it.
pub fn canonical(
    text: &str,
    facts: &DbFacts,
    rules: RuleSet,
) -> Result<(Query, RuleSet), SqlError> {
    let (mut query, aliased) = parse_with_aliases(text, facts)?;
    let mut fired = RuleSet::none();
    if aliased {
        fired = fired.with(Rule::TableAlias);
    }
    let mut rewriter = Rewriter {
        facts,
        rules,
        fired: &mut fired,
        scopes: Vec::new(),
    };
    rewriter.query(&mut query);
    Ok((query, fired))
}

/// Parses and resolves `text`; also says whether it gives a table an alias.
fn parse_with_aliases(text: &str, facts: &DbFacts) -> Result<(Query, bool), SqlError> {
    if text.trim().is_empty() {
        return Err(SqlError("empty query".into()));
    }
    if text.chars().count() > MAX_QUERY_CHARS {
        return Err(SqlError(format!(
            "query longer than {MAX_QUERY_CHARS} characters"
        )));
    }
    let text = crate::sql::text::normalize_spaced_operators(text);
    let statements = Parser::parse_sql(&SQLiteDialect {}, &text)
        .map_err(|e| SqlError(format!("does not parse: {e}")))?;
    let [sql::Statement::Query(query)] = statements.as_slice() else {
        return Err(SqlError("not exactly one SELECT statement".into()));
    };
    let resolver = Resolver {
        facts,
        aliased: std::cell::Cell::new(false),
    };
    let resolved = resolver.query(query, &[])?;
    Ok((resolved, resolver.aliased.get()))
}

/// One FROM entry visible to column references.
#[derive(Debug, Clone)]
struct Visible {
    name: String,
    target: Target,
}

#[derive(Debug, Clone)]
enum Target {
    Table(String),
    Derived { id: String, columns: Vec<String> },
}

/// Turns sqlparser's AST into [`Query`], resolving names against the schema and scopes.
struct Resolver<'a> {
    facts: &'a DbFacts,
    aliased: std::cell::Cell<bool>,
}

type Scope = Vec<Visible>;

/// Column aliases of a select list, with what they stand for.
type Aliases = Vec<(String, Expr)>;

impl Resolver<'_> {
    fn query(&self, query: &sql::Query, outer: &[Scope]) -> Result<Query, SqlError> {
        if query.with.is_some() {
            return Err(SqlError("WITH is not supported".into()));
        }
        let (body, scope, aliases) = self.set_expr(&query.body, outer)?;
        let mut scopes = outer.to_vec();
        scopes.push(scope);
        let order_by = match &query.order_by {
            Some(order) => match &order.kind {
                sql::OrderByKind::Expressions(list) => list
                    .iter()
                    .map(|o| {
                        let expr = self.order_expr(&o.expr, &scopes, &aliases)?;
                        Ok((expr, matches!(o.options.sort, Some(sql::OrderBySort::Desc))))
                    })
                    .collect::<Result<_, SqlError>>()?,
                sql::OrderByKind::All(_) => return Err(SqlError("ORDER BY ALL".into())),
            },
            None => Vec::new(),
        };
        let limit = match &query.limit_clause {
            Some(sql::LimitClause::LimitOffset {
                limit,
                offset: None,
                ..
            }) => limit
                .as_ref()
                .map(|limit| self.expr(limit, &scopes, &aliases))
                .transpose()?,
            Some(_) => return Err(SqlError("OFFSET is not supported".into())),
            None => None,
        };
        Ok(Query {
            body,
            order_by,
            limit,
        })
    }

    fn order_expr(
        &self,
        expr: &sql::Expr,
        scopes: &[Scope],
        aliases: &[(String, Expr)],
    ) -> Result<Expr, SqlError> {
        if let sql::Expr::Identifier(ident) = expr {
            let name = ident.value.to_lowercase();
            if let Some((_, aliased)) = aliases.iter().find(|(a, _)| *a == name) {
                return Ok(aliased.clone());
            }
        }
        self.expr(expr, scopes, aliases)
    }

    fn set_expr(
        &self,
        body: &sql::SetExpr,
        outer: &[Scope],
    ) -> Result<(Body, Scope, Aliases), SqlError> {
        match body {
            sql::SetExpr::Select(select) => {
                let (select, scope, aliases) = self.select(select, outer)?;
                Ok((Body::Select(Box::new(select)), scope, aliases))
            }
            sql::SetExpr::Query(_) => Err(SqlError("parenthesised query body".into())),
            sql::SetExpr::SetOperation {
                op,
                set_quantifier,
                left,
                right,
            } => {
                let op = match op {
                    sql::SetOperator::Union => SetOp::Union,
                    sql::SetOperator::Intersect => SetOp::Intersect,
                    sql::SetOperator::Except => SetOp::Except,
                    other => return Err(SqlError(format!("set operation {other}"))),
                };
                let all = matches!(set_quantifier, sql::SetQuantifier::All);
                let (left_body, scope, aliases) = self.set_expr(left, outer)?;
                let (right_body, _, _) = self.set_expr(right, outer)?;
                let wrap = |body| Query {
                    body,
                    order_by: Vec::new(),
                    limit: None,
                };
                Ok((
                    Body::Set {
                        op,
                        all,
                        left: Box::new(wrap(left_body)),
                        right: Box::new(wrap(right_body)),
                    },
                    scope,
                    aliases,
                ))
            }
            other => Err(SqlError(format!("unsupported query body: {other}"))),
        }
    }

    fn select(
        &self,
        select: &sql::Select,
        outer: &[Scope],
    ) -> Result<(Select, Scope, Aliases), SqlError> {
        let mut scope: Scope = Vec::new();
        let mut from = Vec::new();
        let mut pending_on = Vec::new();
        for table in &select.from {
            self.factor(
                &table.relation,
                outer,
                &mut scope,
                &mut from,
                JoinKind::Inner,
            )?;
            for join in &table.joins {
                let (kind, constraint) = join_kind(&join.join_operator)?;
                self.factor(&join.relation, outer, &mut scope, &mut from, kind)?;
                if let Some(sql::JoinConstraint::On(condition)) = constraint {
                    pending_on.push((kind, condition.clone()));
                } else if let Some(sql::JoinConstraint::Using(_) | sql::JoinConstraint::Natural) =
                    constraint
                {
                    return Err(SqlError("JOIN USING / NATURAL is not supported".into()));
                }
            }
        }
        let mut scopes = outer.to_vec();
        scopes.push(scope.clone());
        let mut aliases: Vec<(String, Expr)> = Vec::new();
        let mut items = Vec::new();
        for item in &select.projection {
            match item {
                sql::SelectItem::UnnamedExpr(e) => items.push(self.expr(e, &scopes, &aliases)?),
                sql::SelectItem::ExprWithAlias { expr, alias } => {
                    let resolved = self.expr(expr, &scopes, &aliases)?;
                    aliases.push((alias.value.to_lowercase(), resolved.clone()));
                    items.push(resolved);
                }
                sql::SelectItem::Wildcard(_) => items.push(Expr::Star),
                sql::SelectItem::QualifiedWildcard(
                    sql::SelectItemQualifiedWildcardKind::ObjectName(name),
                    _,
                ) => items.extend(self.qualified_star(&name.to_string(), &scope)?),
                other => return Err(SqlError(format!("unsupported select item {other}"))),
            }
        }
        let mut on = Vec::new();
        for (kind, condition) in pending_on {
            let condition = self.expr(&condition, &scopes, &aliases)?;
            on.push(match kind {
                JoinKind::Inner => condition,
                outer_kind => Expr::Func {
                    name: format!("{outer_kind:?} on").to_lowercase(),
                    distinct: false,
                    args: vec![condition],
                },
            });
        }
        let filter = select
            .selection
            .as_ref()
            .map(|e| self.expr(e, &scopes, &aliases))
            .transpose()?;
        let group_by = match &select.group_by {
            sql::GroupByExpr::Expressions(list, _) => list
                .iter()
                .map(|e| self.order_expr(e, &scopes, &aliases))
                .collect::<Result<_, _>>()?,
            sql::GroupByExpr::All(_) => return Err(SqlError("GROUP BY ALL".into())),
        };
        let having = select
            .having
            .as_ref()
            .map(|e| self.order_expr(e, &scopes, &aliases))
            .transpose()?;
        let distinct = match &select.distinct {
            None | Some(sql::Distinct::All) => false,
            Some(sql::Distinct::Distinct) => true,
            Some(_) => return Err(SqlError("DISTINCT ON is not supported".into())),
        };
        Ok((
            Select {
                distinct,
                items,
                from,
                on,
                filter,
                group_by,
                having,
            },
            scope,
            aliases,
        ))
    }
}

impl Resolver<'_> {
    fn factor(
        &self,
        factor: &sql::TableFactor,
        outer: &[Scope],
        scope: &mut Scope,
        from: &mut Vec<(JoinKind, Source)>,
        kind: JoinKind,
    ) -> Result<(), SqlError> {
        match factor {
            sql::TableFactor::Table { name, alias, .. } => {
                let table = name.to_string().trim_matches('"').to_lowercase();
                if self.facts.table_columns(&table).is_none() {
                    return Err(SqlError(format!("unknown table `{table}`")));
                }
                let visible = match alias {
                    Some(alias) => {
                        self.aliased.set(true);
                        alias.name.value.to_lowercase()
                    }
                    None => table.clone(),
                };
                scope.push(Visible {
                    name: visible,
                    target: Target::Table(table.clone()),
                });
                from.push((kind, Source::Table(table)));
            }
            sql::TableFactor::Derived {
                subquery, alias, ..
            } => {
                let query = self.query(subquery, outer)?;
                let id = format!("derived{}", from.len());
                let columns = output_columns(&subquery.body);
                let name = alias
                    .as_ref()
                    .map(|a| a.name.value.to_lowercase())
                    .unwrap_or_else(|| id.clone());
                scope.push(Visible {
                    name,
                    target: Target::Derived { id, columns },
                });
                from.push((kind, Source::Derived(Box::new(query))));
            }
            sql::TableFactor::NestedJoin { .. } => {
                return Err(SqlError("parenthesised joins are not supported".into()))
            }
            other => return Err(SqlError(format!("unsupported FROM item {other}"))),
        }
        Ok(())
    }

    /// The columns `qualifier.*` stands for, in declaration order.
    fn qualified_star(&self, qualifier: &str, scope: &Scope) -> Result<Vec<Expr>, SqlError> {
        let qualifier = qualifier.trim_matches('"').to_lowercase();
        let visible = scope
            .iter()
            .find(|v| v.name == qualifier)
            .ok_or_else(|| SqlError(format!("unknown table or alias `{qualifier}`")))?;
        Ok(match &visible.target {
            Target::Table(table) => self
                .facts
                .table_columns(table)
                .unwrap_or_default()
                .iter()
                .map(|c| Expr::Column(table.clone(), c.clone()))
                .collect(),
            Target::Derived { id, columns } => columns
                .iter()
                .map(|c| Expr::Column(id.clone(), c.clone()))
                .collect(),
        })
    }

    /// Resolves a column reference in the innermost scope that has it; an unqualified name that
    /// two FROM entries of that scope have is ambiguous, an error as in SQLite.
    fn column(
        &self,
        qualifier: Option<&str>,
        column: &str,
        scopes: &[Scope],
    ) -> Result<Option<Expr>, SqlError> {
        for scope in scopes.iter().rev() {
            let mut found = scope
                .iter()
                .filter(|visible| qualifier.is_none_or(|q| q == visible.name))
                .filter_map(|visible| self.visible_column(visible, qualifier, column));
            let Some(first) = found.next() else {
                continue;
            };
            if found.next().is_some() {
                return Err(SqlError(format!("ambiguous column `{column}`")));
            }
            return Ok(Some(first));
        }
        Ok(None)
    }

    /// The column `column` of one FROM entry, when it has it.
    fn visible_column(
        &self,
        visible: &Visible,
        qualifier: Option<&str>,
        column: &str,
    ) -> Option<Expr> {
        match &visible.target {
            Target::Table(table) => {
                let columns = self.facts.table_columns(table)?;
                columns
                    .iter()
                    .any(|c| c == column)
                    .then(|| Expr::Column(table.clone(), column.to_string()))
            }
            Target::Derived { id, columns } => (columns.iter().any(|c| c == column)
                || qualifier.is_some())
            .then(|| Expr::Column(id.clone(), column.to_string())),
        }
    }

    fn expr(
        &self,
        expr: &sql::Expr,
        scopes: &[Scope],
        aliases: &[(String, Expr)],
    ) -> Result<Expr, SqlError> {
        let recurse = |e: &sql::Expr| self.expr(e, scopes, aliases).map(Box::new);
        Ok(match expr {
            sql::Expr::Identifier(ident) => {
                let name = ident.value.to_lowercase();
                if let Some(column) = self.column(None, &name, scopes)? {
                    column
                } else if let Some((_, aliased)) = aliases.iter().find(|(a, _)| *a == name) {
                    aliased.clone()
                } else if ident.quote_style == Some('"') {
                    Expr::Text(ident.value.clone())
                } else {
                    return Err(SqlError(format!("unknown column `{name}`")));
                }
            }
            sql::Expr::CompoundIdentifier(parts) => {
                let [qualifier, column] = parts.as_slice() else {
                    return Err(SqlError(format!("unsupported name {expr}")));
                };
                let (qualifier, column) =
                    (qualifier.value.to_lowercase(), column.value.to_lowercase());
                self.column(Some(&qualifier), &column, scopes)?
                    .ok_or_else(|| SqlError(format!("unknown column `{qualifier}.{column}`")))?
            }
            sql::Expr::Value(value) => literal(&value.value),
            sql::Expr::Nested(inner) => self.expr(inner, scopes, aliases)?,
            sql::Expr::BinaryOp { left, op, right } => {
                let (left, right) = (recurse(left)?, recurse(right)?);
                match op {
                    sql::BinaryOperator::And => Expr::And(vec![*left, *right]),
                    sql::BinaryOperator::Or => Expr::Or(vec![*left, *right]),
                    op => Expr::Binary {
                        op: comparison_name(op),
                        left,
                        right,
                    },
                }
            }
            sql::Expr::UnaryOp {
                op: sql::UnaryOperator::Not,
                expr,
            } => Expr::Not(recurse(expr)?),
            sql::Expr::UnaryOp {
                op: sql::UnaryOperator::Minus,
                expr: inner,
            } => match self.expr(inner, scopes, aliases)? {
                Expr::Number(n) => Expr::Number(canonical_number(&format!("-{n}"))),
                other => Expr::Func {
                    name: "-".into(),
                    distinct: false,
                    args: vec![other],
                },
            },
            sql::Expr::IsNull(inner) => Expr::IsNull {
                expr: recurse(inner)?,
                negated: false,
            },
            sql::Expr::IsNotNull(inner) => Expr::IsNull {
                expr: recurse(inner)?,
                negated: true,
            },
            sql::Expr::InList {
                expr,
                list,
                negated,
            } => Expr::InList {
                expr: recurse(expr)?,
                list: list
                    .iter()
                    .map(|e| self.expr(e, scopes, aliases))
                    .collect::<Result<_, _>>()?,
                negated: *negated,
            },
            sql::Expr::InSubquery {
                expr,
                subquery,
                negated,
            } => Expr::InQuery {
                expr: recurse(expr)?,
                query: Box::new(self.query(subquery, scopes)?),
                negated: *negated,
            },
            sql::Expr::Between {
                expr,
                negated,
                low,
                high,
            } => Expr::Between {
                expr: recurse(expr)?,
                low: recurse(low)?,
                high: recurse(high)?,
                negated: *negated,
            },
            sql::Expr::Like {
                negated,
                expr,
                pattern,
                escape_char: None,
                any: false,
            } => Expr::Binary {
                op: if *negated { "not like" } else { "like" }.into(),
                left: recurse(expr)?,
                right: recurse(pattern)?,
            },
            sql::Expr::Subquery(query) => Expr::Scalar(Box::new(self.query(query, scopes)?)),
            sql::Expr::Exists { subquery, negated } => Expr::Exists {
                query: Box::new(self.query(subquery, scopes)?),
                negated: *negated,
            },
            sql::Expr::Function(function) => self.function(function, scopes, aliases)?,
            other => Expr::Other(other.to_string().to_lowercase()),
        })
    }

    fn function(
        &self,
        function: &sql::Function,
        scopes: &[Scope],
        aliases: &[(String, Expr)],
    ) -> Result<Expr, SqlError> {
        let name = function.name.to_string().to_lowercase();
        let (distinct, args) = match &function.args {
            sql::FunctionArguments::None => (false, Vec::new()),
            sql::FunctionArguments::List(list) => {
                let distinct = matches!(
                    list.duplicate_treatment,
                    Some(sql::DuplicateTreatment::Distinct)
                );
                let args = list
                    .args
                    .iter()
                    .map(|arg| match arg {
                        sql::FunctionArg::Unnamed(sql::FunctionArgExpr::Expr(e)) => {
                            self.expr(e, scopes, aliases)
                        }
                        sql::FunctionArg::Unnamed(sql::FunctionArgExpr::Wildcard) => Ok(Expr::Star),
                        other => Err(SqlError(format!("unsupported argument {other}"))),
                    })
                    .collect::<Result<_, _>>()?;
                (distinct, args)
            }
            sql::FunctionArguments::Subquery(_) => {
                return Err(SqlError("sub-query function argument".into()))
            }
        };
        Ok(Expr::Func {
            name,
            distinct,
            args,
        })
    }
}

/// The join kind and constraint of a join operator.
/// The names a FROM sub-query's columns go by, as SQLite names them: the alias, else the column
/// name, else the expression's text; a set operation's come from its first select.
fn output_columns(body: &sql::SetExpr) -> Vec<String> {
    match body {
        sql::SetExpr::Select(select) => select
            .projection
            .iter()
            .filter_map(|item| match item {
                sql::SelectItem::ExprWithAlias { alias, .. } => Some(alias.value.to_lowercase()),
                sql::SelectItem::UnnamedExpr(sql::Expr::Identifier(ident)) => {
                    Some(ident.value.to_lowercase())
                }
                sql::SelectItem::UnnamedExpr(sql::Expr::CompoundIdentifier(parts)) => {
                    parts.last().map(|ident| ident.value.to_lowercase())
                }
                sql::SelectItem::UnnamedExpr(expr) => Some(expr.to_string().to_lowercase()),
                _ => None,
            })
            .collect(),
        sql::SetExpr::SetOperation { left, .. } => output_columns(left),
        sql::SetExpr::Query(query) => output_columns(&query.body),
        _ => Vec::new(),
    }
}

fn join_kind(
    operator: &sql::JoinOperator,
) -> Result<(JoinKind, Option<&sql::JoinConstraint>), SqlError> {
    Ok(match operator {
        sql::JoinOperator::Join(c)
        | sql::JoinOperator::Inner(c)
        | sql::JoinOperator::CrossJoin(c) => (JoinKind::Inner, Some(c)),
        sql::JoinOperator::Left(c) | sql::JoinOperator::LeftOuter(c) => (JoinKind::Left, Some(c)),
        sql::JoinOperator::Right(c) | sql::JoinOperator::RightOuter(c) => {
            (JoinKind::Right, Some(c))
        }
        sql::JoinOperator::FullOuter(c) => (JoinKind::Full, Some(c)),
        other => return Err(SqlError(format!("unsupported join {other:?}"))),
    })
}

/// A literal's canonical form.
fn literal(value: &sql::Value) -> Expr {
    match value {
        sql::Value::Number(n, _) => Expr::Number(canonical_number(n)),
        sql::Value::SingleQuotedString(s) | sql::Value::DoubleQuotedString(s) => {
            Expr::Text(s.clone())
        }
        other => Expr::Keyword(other.to_string().to_lowercase()),
    }
}

/// `5.0` and `5` are the same number for SQLite.
fn canonical_number(text: &str) -> String {
    match text.parse::<f64>() {
        Ok(n) if n.is_finite() => format!("{n}"),
        _ => text.to_string(),
    }
}

/// The operator's name, with `<>` spelled `!=` and `==` spelled `=`.
fn comparison_name(op: &sql::BinaryOperator) -> String {
    match op {
        sql::BinaryOperator::NotEq => "!=".into(),
        sql::BinaryOperator::Eq => "=".into(),
        other => other.to_string().to_lowercase(),
    }
}

/// Applies the enabled rules bottom-up and sorts what is unordered.
struct Rewriter<'a> {
    facts: &'a DbFacts,
    rules: RuleSet,
    fired: &'a mut RuleSet,
    /// What the FROM of the select being rewritten guarantees (innermost last).
    scopes: Vec<JoinFacts>,
}

/// What one select's inner joins guarantee about the rows they produce.
#[derive(Debug, Default)]
struct JoinFacts {
    /// Columns an inner join's ON equates with another column: never NULL in the result.
    joined: Vec<Expr>,
    /// Tables whose rows each appear at most once in the result: the table occurs once and every
    /// other table is reached through ON equalities onto a key.
    unduplicated: Vec<String>,
}

impl JoinFacts {
    fn of(select: &Select, facts: &DbFacts) -> JoinFacts {
        if !inner_only(&select.from) {
            return JoinFacts::default();
        }
        let equalities = on_equalities(&select.on);
        let joined = equalities
            .iter()
            .flat_map(|(a, b)| [a.clone(), b.clone()])
            .collect();
        let tables: Option<Vec<&String>> = select
            .from
            .iter()
            .map(|(_, source)| match source {
                Source::Table(t) => Some(t),
                Source::Derived(_) => None,
            })
            .collect();
        let tables = tables.unwrap_or_default();
        let once = |t: &String| tables.iter().filter(|x| **x == t).count() == 1;
        let unduplicated = tables
            .iter()
            .filter(|t| once(t) && reaches_all_through_keys(t, &tables, &equalities, facts))
            .map(|t| t.to_string())
            .collect();
        JoinFacts {
            joined,
            unduplicated,
        }
    }
}

/// True when every table of `tables` is reached from `start` by ON equalities `x = u.k` with
/// u.k a key of a table not yet reached: each row of `start` then joins with at most one row.
fn reaches_all_through_keys(
    start: &str,
    tables: &[&String],
    equalities: &[(Expr, Expr)],
    facts: &DbFacts,
) -> bool {
    let mut reached = vec![start.to_string()];
    let mut grew = true;
    while grew {
        grew = false;
        for (a, b) in equalities {
            for (from, to) in [(a, b), (b, a)] {
                let (Expr::Column(ft, _), Expr::Column(tt, tc)) = (from, to) else {
                    continue;
                };
                if reached.contains(ft)
                    && !reached.contains(tt)
                    && facts.is_key(&(tt.clone(), tc.clone()))
                {
                    reached.push(tt.clone());
                    grew = true;
                }
            }
        }
    }
    tables.iter().all(|t| reached.contains(t))
}

impl Rewriter<'_> {
    fn allow(&mut self, rule: Rule) -> bool {
        self.rules.contains(rule)
    }

    fn fire(&mut self, rule: Rule) {
        *self.fired = self.fired.with(rule);
    }

    fn query(&mut self, query: &mut Query) {
        match &mut query.body {
            Body::Select(select) => {
                self.scopes.push(JoinFacts::of(select, self.facts));
                for (expr, _) in &mut query.order_by {
                    self.expr(expr, &select.from);
                }
                self.select(select, &mut query.order_by);
                self.scopes.pop();
            }
            Body::Set { left, right, .. } => {
                self.query(left);
                self.query(right);
            }
        }
        if let Some(limit) = &mut query.limit {
            self.expr(limit, &[]);
        }
        self.self_set_op(query);
        self.set_as_condition(query);
        self.in_as_join(query);
        self.extreme_subquery(query);
        self.extreme_order_limit(query);
        if let Body::Set {
            op: SetOp::Union | SetOp::Intersect,
            left,
            right,
            ..
        } = &mut query.body
        {
            if right < left {
                std::mem::swap(left, right);
            }
        }
    }

    /// Canonicalises a select; `order_by` is its query's ORDER BY, which rules that replace
    /// columns (13, 16) rewrite too.
    fn select(&mut self, select: &mut Select, order_by: &mut [(Expr, bool)]) {
        for (_, source) in &mut select.from {
            if let Source::Derived(query) = source {
                self.query(query);
            }
        }
        let from = select.from.clone();
        for expr in select
            .items
            .iter_mut()
            .chain(select.on.iter_mut())
            .chain(select.filter.iter_mut())
            .chain(select.group_by.iter_mut())
            .chain(select.having.iter_mut())
        {
            self.expr(expr, &from);
        }
        self.self_in(select);
        self.star_columns(select);
        self.is_not_null(select);
        select.group_by.sort();
        self.group_by_key(select);
        self.unneeded_join(select, order_by);
        self.join_column(select, order_by);
        self.redundant_distinct(select);
        if inner_only(&select.from) {
            select.from.sort();
        }
        select.items.sort();
        select.on.sort();
        select.group_by.sort();
    }

    /// Canonicalises an expression bottom-up (sub-queries included).
    fn expr(&mut self, expr: &mut Expr, from: &[(JoinKind, Source)]) {
        match expr {
            Expr::Func { args, .. } => args.iter_mut().for_each(|a| self.expr(a, from)),
            Expr::Binary { left, right, .. } => {
                self.expr(left, from);
                self.expr(right, from);
            }
            Expr::And(list) | Expr::Or(list) => list.iter_mut().for_each(|a| self.expr(a, from)),
            Expr::Not(inner) => self.expr(inner, from),
            Expr::IsNull { expr, .. } => self.expr(expr, from),
            Expr::InList { expr, list, .. } => {
                self.expr(expr, from);
                list.iter_mut().for_each(|a| self.expr(a, from));
            }
            Expr::InQuery { expr, query, .. } => {
                self.expr(expr, from);
                self.query(query);
            }
            Expr::Between {
                expr, low, high, ..
            } => {
                self.expr(expr, from);
                self.expr(low, from);
                self.expr(high, from);
            }
            Expr::Scalar(query) | Expr::Exists { query, .. } => self.query(query),
            _ => {}
        }
        self.expr_rules(expr, from);
    }

    /// The always-valid rewrites (15, 19, 20), rules 7 and 11, and canonical operand order.
    fn expr_rules(&mut self, expr: &mut Expr, from: &[(JoinKind, Source)]) {
        if let Expr::InList {
            expr: subject,
            list,
            negated,
        } = expr
        {
            if self.allow(Rule::InList) {
                let op = if *negated { "!=" } else { "=" };
                let parts: Vec<Expr> = list
                    .iter()
                    .map(|v| comparison(op, (**subject).clone(), v.clone()))
                    .collect();
                *expr = if *negated {
                    Expr::And(parts)
                } else {
                    Expr::Or(parts)
                };
                self.fire(Rule::InList);
            }
        }
        if let Expr::Between {
            expr: subject,
            low,
            high,
            negated: false,
        } = expr
        {
            if self.allow(Rule::Between) {
                *expr = Expr::And(vec![
                    comparison(">=", (**subject).clone(), (**low).clone()),
                    comparison("<=", (**subject).clone(), (**high).clone()),
                ]);
                self.fire(Rule::Between);
            }
        }
        if let Expr::Not(inner) = expr {
            if let Expr::Binary { op, left, right } = &**inner {
                if let Some(negated) = negate(op) {
                    if self.allow(Rule::NotComparison) {
                        *expr = comparison(negated, (**left).clone(), (**right).clone());
                        self.fire(Rule::NotComparison);
                    }
                }
            }
        }
        self.distinct_aggregate_of_key(expr);
        if let Expr::Func {
            name,
            distinct: false,
            args,
        } = expr
        {
            if name == "count" && args.len() == 1 && !has_outer_join(from) {
                if let Expr::Column(t, c) = &args[0] {
                    let never_null = self.facts.not_null.contains(&(t.clone(), c.clone()))
                        || self.scope().joined.contains(&args[0]);
                    if never_null && self.allow(Rule::CountStar) {
                        args[0] = Expr::Star;
                        self.fire(Rule::CountStar);
                    }
                }
            }
        }
        if let Expr::Binary { op, left, right } = expr {
            if is_comparison(op) {
                self.numeric_string(left, right);
                self.numeric_string(right, left);
            }
            let (op_now, l, r) = (op.clone(), (**left).clone(), (**right).clone());
            *expr = comparison(&op_now, l, r);
        }
        flatten(expr);
    }

    /// What the joins of the select being rewritten guarantee.
    fn scope(&self) -> &JoinFacts {
        static NONE: JoinFacts = JoinFacts {
            joined: Vec::new(),
            unduplicated: Vec::new(),
        };
        self.scopes.last().unwrap_or(&NONE)
    }

    /// Rule 2 inside aggregates: `COUNT/SUM/AVG/MIN/MAX(DISTINCT t.k)` drops DISTINCT when k is a
    /// key and the joins keep each row of t at most once, so the values are already distinct.
    fn distinct_aggregate_of_key(&mut self, expr: &mut Expr) {
        let Expr::Func {
            name,
            distinct: distinct @ true,
            args,
        } = expr
        else {
            return;
        };
        let [column @ Expr::Column(table, _)] = args.as_slice() else {
            return;
        };
        let applies = matches!(name.as_str(), "count" | "sum" | "avg" | "min" | "max")
            && self.is_key_column(column)
            && self.scope().unduplicated.contains(table);
        if applies && self.allow(Rule::RedundantDistinct) {
            *distinct = false;
            self.fire(Rule::RedundantDistinct);
        }
    }

    /// Rule 11: a number-valued string compared with a typed column becomes the number.
    fn numeric_string(&mut self, column: &Expr, value: &mut Expr) {
        let (Expr::Column(t, c), Expr::Text(text)) = (column, &*value) else {
            return;
        };
        let is_number = text.parse::<f64>().is_ok_and(f64::is_finite)
            && !text.starts_with('0')
            && !text.starts_with("-0")
            && text.trim() == text
            && !text.contains(['e', 'E', '+', 'x', 'X'])
            && !text.eq_ignore_ascii_case("inf")
            && !text.eq_ignore_ascii_case("nan");
        let zero = text == "0";
        if (is_number || zero)
            && self.facts.typed.contains(&(t.clone(), c.clone()))
            && self.allow(Rule::NumericString)
        {
            *value = Expr::Number(canonical_number(text));
            self.fire(Rule::NumericString);
        }
    }

    /// Rule 10: `SELECT *` over one table lists its columns.
    fn star_columns(&mut self, select: &mut Select) {
        let [(_, Source::Table(table))] = select.from.as_slice() else {
            return;
        };
        if !select.items.contains(&Expr::Star) || !self.allow(Rule::StarColumns) {
            return;
        }
        let Some(columns) = self.facts.table_columns(table) else {
            return;
        };
        let expanded: Vec<Expr> = columns
            .iter()
            .map(|c| Expr::Column(table.clone(), c.clone()))
            .collect();
        select.items = std::mem::take(&mut select.items)
            .into_iter()
            .flat_map(|item| match item {
                Expr::Star => expanded.clone(),
                other => vec![other],
            })
            .collect();
        self.fire(Rule::StarColumns);
    }

    /// Rule 8: `c IS NOT NULL` conjuncts on NOT NULL columns are dropped.
    fn is_not_null(&mut self, select: &mut Select) {
        if has_outer_join(&select.from) || !self.allow(Rule::IsNotNull) {
            return;
        }
        let Some(filter) = select.filter.take() else {
            return;
        };
        let conjuncts = match filter {
            Expr::And(list) => list,
            other => vec![other],
        };
        let before = conjuncts.len();
        let kept: Vec<Expr> = conjuncts
            .into_iter()
            .filter(|e| {
                !matches!(e, Expr::IsNull { expr, negated: true }
                    if matches!(&**expr, Expr::Column(t, c) if self.facts.not_null.contains(&(t.clone(), c.clone()))))
            })
            .collect();
        if kept.len() != before {
            self.fire(Rule::IsNotNull);
        }
        select.filter = conjunction(kept);
    }

    /// Rule 13: an inner-joined table used only by its join, joined through a total foreign key
    /// onto its UNIQUE NOT NULL column, is dropped (each row of the other table matches once).
    fn unneeded_join(&mut self, select: &mut Select, order_by: &mut [(Expr, bool)]) {
        if !inner_only(&select.from) || !self.allow(Rule::UnneededJoin) {
            return;
        }
        let mut index = 0;
        while index < select.on.len() {
            if self.try_drop_join(select, order_by, index) {
                index = 0;
            } else {
                index += 1;
            }
        }
    }

    fn try_drop_join(
        &mut self,
        select: &mut Select,
        order_by: &mut [(Expr, bool)],
        index: usize,
    ) -> bool {
        let Expr::Binary { op, left, right } = &select.on[index] else {
            return false;
        };
        if op != "=" {
            return false;
        }
        let (Expr::Column(ta, ca), Expr::Column(tb, cb)) = (&**left, &**right) else {
            return false;
        };
        let (a, b) = ((ta.clone(), ca.clone()), (tb.clone(), cb.clone()));
        for ((parent, pcol), (child, ccol)) in [(&a, &b), (&b, &a)] {
            let key = (
                (child.clone(), ccol.clone()),
                (parent.clone(), pcol.clone()),
            );
            if parent == child || !self.facts.total_keys.contains(&key) {
                continue;
            }
            let occurrences = select
                .from
                .iter()
                .filter(|(_, s)| *s == Source::Table(parent.clone()))
                .count();
            if occurrences != 1 {
                continue;
            }
            let mut others = select.clone();
            others.on.remove(index);
            others
                .from
                .retain(|(_, s)| *s != Source::Table(parent.clone()));
            let parent_column = Expr::Column(parent.clone(), pcol.clone());
            let child_column = Expr::Column(child.clone(), ccol.clone());
            let classes = if stand_for_each_other(&parent_column, &child_column, self.facts) {
                vec![(parent_column, child_column)]
            } else {
                Vec::new()
            };
            let mut other_order = order_by.to_vec();
            for_each_expr(&mut others, &mut other_order, |e| {
                substitute(e, &classes);
            });
            let mut uses_parent = false;
            for_each_expr(&mut others, &mut other_order, |e| {
                uses_parent |= mentions_table(e, parent)
            });
            if uses_parent {
                continue;
            }
            *select = others;
            order_by.clone_from_slice(&other_order);
            self.fire(Rule::UnneededJoin);
            return true;
        }
        false
    }

    /// Rule 16: inside inner joins, columns equated by ON stand for one another.
    fn join_column(&mut self, select: &mut Select, order_by: &mut [(Expr, bool)]) {
        if !inner_only(&select.from) || !self.allow(Rule::JoinColumn) {
            return;
        }
        let classes = join_classes(&select.on, self.facts);
        if classes.is_empty() {
            return;
        }
        let mut changed = false;
        for expr in select
            .items
            .iter_mut()
            .chain(select.filter.iter_mut())
            .chain(select.group_by.iter_mut())
            .chain(select.having.iter_mut())
            .chain(order_by.iter_mut().map(|(e, _)| e))
        {
            changed |= substitute(expr, &classes);
        }
        if changed {
            self.fire(Rule::JoinColumn);
        }
    }

    /// Rule 2: DISTINCT over one table whose selected columns include a key.
    fn redundant_distinct(&mut self, select: &mut Select) {
        if !select.distinct || !select.group_by.is_empty() || !self.allow(Rule::RedundantDistinct) {
            return;
        }
        let [(_, Source::Table(_))] = select.from.as_slice() else {
            return;
        };
        if select.items.iter().any(|e| self.is_key_column(e)) {
            select.distinct = false;
            self.fire(Rule::RedundantDistinct);
        }
    }

    /// Rule 5: a GROUP BY holding a key column of a table (inner joins only, the table once in
    /// FROM) drops that table's other columns: the key determines them. A column equated by ON
    /// with a key column keys that table too.
    fn group_by_key(&mut self, select: &mut Select) {
        if select.group_by.len() < 2 || !inner_only(&select.from) || !self.allow(Rule::GroupByKey) {
            return;
        }
        let classes = join_classes(&select.on, self.facts);
        let occurs_once = |table: &String| {
            let source = Source::Table(table.clone());
            select.from.iter().filter(|(_, s)| *s == source).count() == 1
        };
        let keyed_by = |expr: &Expr| -> Vec<String> {
            let mut tables: Vec<String> = equal_columns(expr, &classes)
                .into_iter()
                .filter(|column| self.is_key_column(column))
                .filter_map(|column| match column {
                    Expr::Column(t, _) if occurs_once(&t) => Some(t),
                    _ => None,
                })
                .collect();
            tables.dedup();
            tables
        };
        let keyed: Vec<Vec<String>> = select.group_by.iter().map(keyed_by).collect();
        let all_keyed: Vec<&String> = keyed.iter().flatten().collect();
        let mut kept = Vec::new();
        let mut kept_keys: Vec<&String> = Vec::new();
        for (expr, keys) in select.group_by.iter().zip(&keyed) {
            let keep = if keys.is_empty() {
                !matches!(expr, Expr::Column(t, _) if all_keyed.contains(&t))
            } else {
                !keys.iter().all(|t| kept_keys.contains(&t))
            };
            if keep {
                kept.push(expr.clone());
                kept_keys.extend(keys);
            }
        }
        if kept.len() != select.group_by.len() {
            select.group_by = kept;
            self.fire(Rule::GroupByKey);
        }
    }

    /// Rule 18: `q UNION q` and `q INTERSECT q` are `q` with DISTINCT.
    fn self_set_op(&mut self, query: &mut Query) {
        let Body::Set {
            op: SetOp::Union | SetOp::Intersect,
            all: false,
            left,
            right,
        } = &query.body
        else {
            return;
        };
        if left != right || !left.order_by.is_empty() || left.limit.is_some() {
            return;
        }
        let Body::Select(select) = &left.body else {
            return;
        };
        if !self.allow(Rule::SelfSetOp) {
            return;
        }
        let mut select = select.clone();
        select.distinct = true;
        query.body = Body::Select(select);
        self.fire(Rule::SelfSetOp);
    }

    /// Rules 3, 4 and 6: a set operation between selects of the same columns of one table, one
    /// of them a key, is one select: INTERSECT joins the conditions with AND, UNION with OR (the
    /// key makes each row its own distinct result row), and `EXCEPT q` becomes `AND k NOT IN (q)`
    /// when the select is of the key alone and q's column holds no NULL (a NULL would make
    /// `NOT IN` reject every row).
    fn set_as_condition(&mut self, query: &mut Query) {
        let Body::Set {
            op,
            all: false,
            left,
            right,
        } = &query.body
        else {
            return;
        };
        let Some(left_select) = self.keyed_single_table(left) else {
            return;
        };
        let (rule, filter) = match op {
            SetOp::Intersect | SetOp::Union => {
                let Some(right_select) = self.keyed_single_table(right) else {
                    return;
                };
                if right_select.items != left_select.items || right_select.from != left_select.from
                {
                    return;
                }
                let (left_filter, right_filter) =
                    (left_select.filter.clone(), right_select.filter.clone());
                if *op == SetOp::Intersect {
                    let conjuncts = left_filter.into_iter().chain(right_filter).collect();
                    (Rule::IntersectAsAnd, conjunction(conjuncts))
                } else {
                    let disjunction = left_filter
                        .zip(right_filter)
                        .map(|(l, r)| Expr::Or(vec![l, r]));
                    (Rule::UnionAsOr, disjunction)
                }
            }
            SetOp::Except => {
                let [key] = left_select.items.as_slice() else {
                    return;
                };
                if !self.is_key_column(key) || !self.never_null_column(right) {
                    return;
                }
                let not_in = Expr::InQuery {
                    expr: Box::new(key.clone()),
                    query: right.clone(),
                    negated: true,
                };
                let conjuncts = left_select.filter.clone().into_iter().chain([not_in]);
                (Rule::ExceptAsNotIn, conjunction(conjuncts.collect()))
            }
        };
        if !self.allow(rule) {
            return;
        }
        let mut select = left_select.clone();
        select.distinct = false;
        select.filter = filter.map(|mut f| {
            flatten(&mut f);
            f
        });
        for (expr, _) in &mut query.order_by {
            self.expr(expr, &select.from);
        }
        query.body = Body::Select(Box::new(select));
        self.fire(rule);
    }

    /// The select of `query` when it reads one table (no join, grouping, order or limit) and
    /// lists only that table's columns, a key among them.
    fn keyed_single_table<'q>(&self, query: &'q Query) -> Option<&'q Select> {
        let Body::Select(select) = &query.body else {
            return None;
        };
        let [(JoinKind::Inner, Source::Table(table))] = select.from.as_slice() else {
            return None;
        };
        let own_columns = select
            .items
            .iter()
            .all(|item| matches!(item, Expr::Column(t, _) if t == table));
        let simple = query.order_by.is_empty()
            && query.limit.is_none()
            && select.on.is_empty()
            && select.group_by.is_empty()
            && select.having.is_none();
        (simple && own_columns && select.items.iter().any(|e| self.is_key_column(e)))
            .then_some(&**select)
    }

    /// True when `query` returns one column that is a NOT NULL table column read through inner
    /// joins only, so its result holds no NULL.
    fn never_null_column(&self, query: &Query) -> bool {
        let Body::Select(select) = &query.body else {
            return false;
        };
        let [Expr::Column(table, column)] = select.items.as_slice() else {
            return false;
        };
        inner_only(&select.from)
            && select
                .from
                .iter()
                .any(|(_, source)| *source == Source::Table(table.clone()))
            && self
                .facts
                .not_null
                .contains(&(table.clone(), column.clone()))
    }

    /// Rule 17: a top-level conjunct `t.k IN (SELECT t.k FROM t WHERE d)`, with k a key and t
    /// once among the select's inner-joined tables, is `d`: the key makes the sub-query's row
    /// the outer row itself.
    fn self_in(&mut self, select: &mut Select) {
        let Some(filter) = &select.filter else {
            return;
        };
        let conjuncts = match filter {
            Expr::And(list) => list.clone(),
            other => vec![other.clone()],
        };
        let mut changed = false;
        let mut kept = Vec::new();
        for conjunct in conjuncts {
            match self.self_in_condition(&conjunct, &select.from) {
                Some(condition) => {
                    changed = true;
                    kept.extend(condition);
                }
                None => kept.push(conjunct),
            }
        }
        if !changed {
            return;
        }
        select.filter = conjunction(kept);
        self.fire(Rule::SelfIn);
    }

    /// For a conjunct rule 17 applies to, the sub-query's condition (`None`: it has none).
    fn self_in_condition(
        &mut self,
        conjunct: &Expr,
        from: &[(JoinKind, Source)],
    ) -> Option<Option<Expr>> {
        let Expr::InQuery {
            expr: key,
            query,
            negated: false,
        } = conjunct
        else {
            return None;
        };
        let Expr::Column(table, _) = &**key else {
            return None;
        };
        let Body::Select(inner) = &query.body else {
            return None;
        };
        let table_source = Source::Table(table.clone());
        let occurrences = from.iter().filter(|(_, s)| *s == table_source).count();
        let applies = occurrences == 1
            && inner_only(from)
            && inner.items.as_slice() == [(**key).clone()]
            && inner.from.as_slice() == [(JoinKind::Inner, table_source)]
            && inner.on.is_empty()
            && inner.group_by.is_empty()
            && inner.having.is_none()
            && query.order_by.is_empty()
            && query.limit.is_none()
            && self.is_key_column(key);
        (applies && self.allow(Rule::SelfIn)).then(|| inner.filter.clone())
    }

    /// Rule 12: `FROM t1 JOIN t2 ON t1.k = t2.c WHERE d1 AND d2` with k a key, t1 used only by
    /// d1, becomes `FROM t2 WHERE d2 AND t2.c IN (SELECT t1.k FROM t1 WHERE d1)`: each t2 row
    /// matches at most one t1 row, so rows and multiplicities are the same.
    fn in_as_join(&mut self, query: &mut Query) {
        let Body::Select(select) = &query.body else {
            return;
        };
        let select = select.clone();
        let [(JoinKind::Inner, Source::Table(a)), (JoinKind::Inner, Source::Table(b))] =
            select.from.as_slice()
        else {
            return;
        };
        let [Expr::Binary { op, left, right }] = select.on.as_slice() else {
            return;
        };
        if a == b || op != "=" || !self.allow(Rule::InAsJoin) {
            return;
        }
        for (key, other) in [(&**left, &**right), (&**right, &**left)] {
            let (Expr::Column(inner_table, _), Expr::Column(outer_table, _)) = (key, other) else {
                continue;
            };
            if inner_table == outer_table || !self.is_key_column(key) {
                continue;
            }
            let outside = select
                .items
                .iter()
                .chain(&select.group_by)
                .chain(&select.having)
                .chain(query.order_by.iter().map(|(e, _)| e));
            let mut uses_inner = false;
            for expr in outside {
                uses_inner |= mentions_table(expr, inner_table);
            }
            if uses_inner {
                continue;
            }
            let conjuncts = match &select.filter {
                Some(Expr::And(list)) => list.clone(),
                Some(other) => vec![other.clone()],
                None => Vec::new(),
            };
            let (inner_part, outer_part): (Vec<Expr>, Vec<Expr>) = conjuncts
                .into_iter()
                .partition(|e| mentions_table(e, inner_table));
            if inner_part.iter().any(|e| mentions_table(e, outer_table)) {
                continue;
            }
            let inner_filter = conjunction(inner_part);
            let sub = Query {
                body: Body::Select(Box::new(Select {
                    distinct: false,
                    items: vec![key.clone()],
                    from: vec![(JoinKind::Inner, Source::Table(inner_table.clone()))],
                    on: Vec::new(),
                    filter: inner_filter,
                    group_by: Vec::new(),
                    having: None,
                })),
                order_by: Vec::new(),
                limit: None,
            };
            let mut outer_conjuncts = outer_part;
            outer_conjuncts.push(Expr::InQuery {
                expr: Box::new(other.clone()),
                query: Box::new(sub),
                negated: false,
            });
            let mut rewritten = (*select).clone();
            rewritten.from = vec![(JoinKind::Inner, Source::Table(outer_table.clone()))];
            rewritten.on.clear();
            rewritten.filter = conjunction(outer_conjuncts);
            query.body = Body::Select(Box::new(rewritten));
            self.fire(Rule::InAsJoin);
            return;
        }
    }

    /// Rule 1: `WHERE c = (SELECT MIN/MAX(c) FROM t)` over t is `ORDER BY c ASC/DESC LIMIT 1`.
    fn extreme_subquery(&mut self, query: &mut Query) {
        if !query.order_by.is_empty() || query.limit.is_some() {
            return;
        }
        let Body::Select(select) = &mut query.body else {
            return;
        };
        let [(_, Source::Table(table))] = select.from.as_slice() else {
            return;
        };
        if !select.group_by.is_empty() || select.having.is_some() {
            return;
        }
        let Some(Expr::Binary { op, left, right }) = &select.filter else {
            return;
        };
        if op != "=" {
            return;
        }
        let (column, sub) = match (&**left, &**right) {
            (Expr::Column(..), Expr::Scalar(sub)) => (&**left, sub),
            (Expr::Scalar(sub), Expr::Column(..)) => (&**right, sub),
            _ => return,
        };
        let Body::Select(inner) = &sub.body else {
            return;
        };
        let descending = match inner.items.as_slice() {
            [Expr::Func {
                name,
                distinct: false,
                args,
            }] if args.as_slice() == [column.clone()] => match name.as_str() {
                "min" => false,
                "max" => true,
                _ => return,
            },
            _ => return,
        };
        let simple = inner.from.as_slice() == [(JoinKind::Inner, Source::Table(table.clone()))]
            && inner.filter.is_none()
            && inner.group_by.is_empty()
            && inner.having.is_none()
            && sub.order_by.is_empty()
            && sub.limit.is_none();
        if !simple || !self.is_key_column(column) || !self.allow(Rule::ExtremeSubquery) {
            return;
        }
        let column = column.clone();
        select.filter = None;
        query.order_by = vec![(column, descending)];
        query.limit = Some(Expr::Number("1".into()));
        self.fire(Rule::ExtremeSubquery);
    }

    /// Rule 9: `SELECT c FROM t ORDER BY c LIMIT 1` over a non-empty t with c NOT NULL is
    /// `SELECT MIN(c) FROM t` (MAX for DESC).
    fn extreme_order_limit(&mut self, query: &mut Query) {
        let Body::Select(select) = &mut query.body else {
            return;
        };
        let [(_, Source::Table(table))] = select.from.as_slice() else {
            return;
        };
        let [(column @ Expr::Column(t, c), descending)] = query.order_by.as_slice() else {
            return;
        };
        let applies = query.limit == Some(Expr::Number("1".into()))
            && select.items.as_slice() == [column.clone()]
            && select.filter.is_none()
            && select.group_by.is_empty()
            && select.having.is_none()
            && self.facts.non_empty.contains(table)
            && (*descending || self.facts.not_null.contains(&(t.clone(), c.clone())));
        if !applies || !self.allow(Rule::ExtremeOrderLimit) {
            return;
        }
        select.items = vec![Expr::Func {
            name: if *descending { "max" } else { "min" }.into(),
            distinct: false,
            args: vec![column.clone()],
        }];
        select.distinct = false;
        query.order_by.clear();
        query.limit = None;
        self.fire(Rule::ExtremeOrderLimit);
    }

    fn is_key_column(&self, expr: &Expr) -> bool {
        let Expr::Column(t, c) = expr else {
            return false;
        };
        let id: ColumnId = (t.clone(), c.clone());
        self.facts.is_key(&id)
    }
}

/// A comparison in canonical orientation: `>`/`>=` become `<`/`<=` with sides swapped, and the
/// sides of `=` and `!=` are sorted.
fn comparison(op: &str, left: Expr, right: Expr) -> Expr {
    let (op, left, right) = match op {
        ">" => ("<", right, left),
        ">=" => ("<=", right, left),
        "=" | "!=" if right < left => (op, right, left),
        _ => (op, left, right),
    };
    Expr::Binary {
        op: op.to_string(),
        left: Box::new(left),
        right: Box::new(right),
    }
}

fn is_comparison(op: &str) -> bool {
    matches!(op, "=" | "!=" | "<" | ">" | "<=" | ">=")
}

fn negate(op: &str) -> Option<&'static str> {
    Some(match op {
        "=" => "!=",
        "!=" => "=",
        "<" => ">=",
        ">" => "<=",
        "<=" => ">",
        ">=" => "<",
        _ => return None,
    })
}

/// Flattens a nested AND (or OR), sorts and de-duplicates its operands; other expressions stay.
fn flatten(expr: &mut Expr) {
    let is_and = matches!(expr, Expr::And(_));
    let list = match expr {
        Expr::And(list) | Expr::Or(list) => std::mem::take(list),
        _ => return,
    };
    let mut flat = Vec::new();
    for item in list {
        match item {
            Expr::And(inner) if is_and => flat.extend(inner),
            Expr::Or(inner) if !is_and => flat.extend(inner),
            other => flat.push(other),
        }
    }
    flat.sort();
    flat.dedup();
    *expr = if flat.len() == 1 {
        flat.pop().expect("one operand")
    } else if is_and {
        Expr::And(flat)
    } else {
        Expr::Or(flat)
    };
}

/// The flattened AND of `list` (`None` when empty: no condition).
fn conjunction(mut list: Vec<Expr>) -> Option<Expr> {
    let mut expr = match list.len() {
        0 => return None,
        1 => list.pop()?,
        _ => Expr::And(list),
    };
    flatten(&mut expr);
    Some(expr)
}

fn inner_only(from: &[(JoinKind, Source)]) -> bool {
    from.iter().all(|(kind, _)| *kind == JoinKind::Inner)
}

fn has_outer_join(from: &[(JoinKind, Source)]) -> bool {
    !inner_only(from)
}

/// True when two columns an ON equates hold the same values (same type affinity), so either
/// can be shown or grouped on for the other: an INTEGER `1` joined with a TEXT `'1'` cannot.
fn stand_for_each_other(a: &Expr, b: &Expr, facts: &DbFacts) -> bool {
    match (a, b) {
        (Expr::Column(ta, ca), Expr::Column(tb, cb)) => {
            facts.same_affinity(&(ta.clone(), ca.clone()), &(tb.clone(), cb.clone()))
        }
        _ => false,
    }
}

/// `(column, representative)` pairs from `a = b` ON conjuncts between columns.
fn join_classes(on: &[Expr], facts: &DbFacts) -> Vec<(Expr, Expr)> {
    let mut pairs: Vec<(Expr, Expr)> = on_equalities(on)
        .into_iter()
        .filter(|(a, b)| stand_for_each_other(a, b, facts))
        .map(|(a, b)| if a < b { (b, a) } else { (a, b) })
        .collect();
    let mut changed = true;
    while changed {
        changed = false;
        for i in 0..pairs.len() {
            for j in 0..pairs.len() {
                if pairs[i].1 == pairs[j].0 && pairs[i].1 != pairs[j].1 {
                    pairs[i].1 = pairs[j].1.clone();
                    changed = true;
                }
            }
        }
    }
    pairs
}

/// `expr` and every column an inner join's ON equates with it (through `classes`).
fn equal_columns(expr: &Expr, classes: &[(Expr, Expr)]) -> Vec<Expr> {
    let representative = classes
        .iter()
        .find(|(column, _)| column == expr)
        .map_or(expr, |(_, r)| r);
    let mut columns = vec![expr.clone(), representative.clone()];
    columns.extend(
        classes
            .iter()
            .filter(|(_, r)| r == representative)
            .map(|(column, _)| column.clone()),
    );
    columns.sort();
    columns.dedup();
    columns
}

/// The `column = column` conjuncts of inner-join ON conditions.
fn on_equalities(on: &[Expr]) -> Vec<(Expr, Expr)> {
    let mut pairs = Vec::new();
    for condition in on {
        let conjuncts = match condition {
            Expr::And(list) => list.as_slice(),
            other => std::slice::from_ref(other),
        };
        for conjunct in conjuncts {
            if let Expr::Binary { op, left, right } = conjunct {
                if op == "="
                    && matches!(**left, Expr::Column(..))
                    && matches!(**right, Expr::Column(..))
                {
                    pairs.push(((**left).clone(), (**right).clone()));
                }
            }
        }
    }
    pairs
}

/// Replaces columns by their class representative (not inside sub-queries); true on change.
fn substitute(expr: &mut Expr, classes: &[(Expr, Expr)]) -> bool {
    if let Some((_, representative)) = classes.iter().find(|(c, _)| c == expr) {
        *expr = representative.clone();
        return true;
    }
    let mut changed = false;
    match expr {
        Expr::Func { args, .. } => args
            .iter_mut()
            .for_each(|a| changed |= substitute(a, classes)),
        Expr::Binary { left, right, .. } => {
            changed |= substitute(left, classes);
            changed |= substitute(right, classes);
        }
        Expr::And(list) | Expr::Or(list) => list
            .iter_mut()
            .for_each(|a| changed |= substitute(a, classes)),
        Expr::Not(inner) | Expr::IsNull { expr: inner, .. } => {
            changed |= substitute(inner, classes)
        }
        Expr::InQuery { expr: inner, .. } => changed |= substitute(inner, classes),
        _ => {}
    }
    if changed {
        if let Expr::Binary { op, left, right } = expr {
            *expr = comparison(&op.clone(), (**left).clone(), (**right).clone());
        }
    }
    changed
}

/// Calls `f` on every expression of a select's own clauses and its query's ORDER BY.
fn for_each_expr(select: &mut Select, order_by: &mut [(Expr, bool)], mut f: impl FnMut(&mut Expr)) {
    for expr in select
        .items
        .iter_mut()
        .chain(select.on.iter_mut())
        .chain(select.filter.iter_mut())
        .chain(select.group_by.iter_mut())
        .chain(select.having.iter_mut())
        .chain(order_by.iter_mut().map(|(e, _)| e))
    {
        f(expr);
    }
}

/// True when the expression (sub-queries included) may name a column of `table`; an expression
/// kept as unresolved text counts as naming every table.
fn mentions_table(expr: &Expr, table: &str) -> bool {
    let any = |list: &[Expr]| list.iter().any(|e| mentions_table(e, table));
    match expr {
        Expr::Column(t, _) => t == table,
        Expr::Star | Expr::Number(_) | Expr::Text(_) | Expr::Keyword(_) => false,
        Expr::Other(_) => true,
        Expr::Func { args: list, .. } | Expr::And(list) | Expr::Or(list) => any(list),
        Expr::Binary { left, right, .. } => {
            mentions_table(left, table) || mentions_table(right, table)
        }
        Expr::Not(inner) | Expr::IsNull { expr: inner, .. } => mentions_table(inner, table),
        Expr::InList { expr, list, .. } => mentions_table(expr, table) || any(list),
        Expr::InQuery { expr, query, .. } => {
            mentions_table(expr, table) || query_mentions_table(query, table)
        }
        Expr::Between {
            expr, low, high, ..
        } => [expr, low, high]
            .into_iter()
            .any(|e| mentions_table(e, table)),
        Expr::Scalar(query) | Expr::Exists { query, .. } => query_mentions_table(query, table),
    }
}

/// True when any expression of `query` (nested sub-queries included) may name a column of
/// `table`.
fn query_mentions_table(query: &Query, table: &str) -> bool {
    let in_body = match &query.body {
        Body::Select(select) => {
            select
                .items
                .iter()
                .chain(&select.on)
                .chain(&select.filter)
                .chain(&select.group_by)
                .chain(&select.having)
                .any(|e| mentions_table(e, table))
                || select.from.iter().any(|(_, source)| {
                    matches!(source, Source::Derived(q) if query_mentions_table(q, table))
                })
        }
        Body::Set { left, right, .. } => {
            query_mentions_table(left, table) || query_mentions_table(right, table)
        }
    };
    in_body
        || query.order_by.iter().any(|(e, _)| mentions_table(e, table))
        || query.limit.iter().any(|e| mentions_table(e, table))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::facts::Affinity;

    fn id(t: &str, c: &str) -> ColumnId {
        (t.to_string(), c.to_string())
    }

    /// dogs(dog_id key, name, age typed, owner_id -> owners.owner_id total), owners(owner_id key,
    /// city); both non-empty.
    fn facts() -> DbFacts {
        let mut facts = DbFacts {
            columns: vec![
                (
                    "dogs".into(),
                    vec![
                        "dog_id".into(),
                        "name".into(),
                        "age".into(),
                        "owner_id".into(),
                    ],
                ),
                ("owners".into(), vec!["owner_id".into(), "city".into()]),
            ],
            ..DbFacts::default()
        };
        for key in [id("dogs", "dog_id"), id("owners", "owner_id")] {
            facts.unique.insert(key.clone());
            facts.not_null.insert(key);
        }
        facts.typed.insert(id("dogs", "age"));
        for (table, columns) in facts.columns.clone() {
            for column in columns {
                let affinity = match column.as_str() {
                    "name" | "city" => Affinity::Text,
                    _ => Affinity::Integer,
                };
                facts.affinity.insert(id(&table, &column), affinity);
            }
        }
        facts
            .non_empty
            .extend(["dogs".to_string(), "owners".to_string()]);
        facts
            .total_keys
            .insert((id("dogs", "owner_id"), id("owners", "owner_id")));
        facts
    }

    /// Without the assumption: nothing is a key, nothing is typed, tables may be empty.
    fn bare() -> DbFacts {
        DbFacts {
            columns: facts().columns,
            ..DbFacts::default()
        }
    }

    fn equivalent(a: &str, b: &str, facts: &DbFacts) -> bool {
        let left = canonical(a, facts, RuleSet::all()).unwrap().0;
        let right = canonical(b, facts, RuleSet::all()).unwrap().0;
        left == right
    }

    fn fires(rule: Rule, a: &str, b: &str) {
        assert!(
            equivalent(a, b, &facts()),
            "{rule:?} should fire: {a} / {b}"
        );
        let (_, fired_a) = canonical(a, &facts(), RuleSet::all()).unwrap();
        let (_, fired_b) = canonical(b, &facts(), RuleSet::all()).unwrap();
        assert!(fired_a.union(fired_b).contains(rule));
        let without = RuleSet::all().without(rule);
        let left = canonical(a, &facts(), without).unwrap().0;
        let right = canonical(b, &facts(), without).unwrap().0;
        assert_ne!(left, right, "{rule:?} is what made them equal");
    }

    /// The rule makes `a` and `b` equal under [`facts`], and nothing does under [`bare`].
    fn only_when_verified(rule: Rule, a: &str, b: &str) {
        fires(rule, a, b);
        assert!(
            !equivalent(a, b, &bare()),
            "{rule:?} must not fire without the assumption"
        );
    }

    fn differ(a: &str, b: &str) {
        assert!(!equivalent(a, b, &facts()), "{a} / {b}");
    }

    #[test]
    fn rule_1_extreme_subquery_needs_a_key() {
        let a = "SELECT name FROM dogs WHERE dog_id = (SELECT max(dog_id) FROM dogs)";
        let b = "SELECT name FROM dogs ORDER BY dog_id DESC LIMIT 1";
        only_when_verified(Rule::ExtremeSubquery, a, b);
    }

    #[test]
    fn rule_2_distinct_needs_a_key() {
        let (a, b) = (
            "SELECT DISTINCT dog_id FROM dogs",
            "SELECT dog_id FROM dogs",
        );
        only_when_verified(Rule::RedundantDistinct, a, b);
    }

    #[test]
    fn rule_3_intersect_on_a_key_is_and() {
        let a = "SELECT dog_id FROM dogs WHERE age > 3 INTERSECT SELECT dog_id FROM dogs WHERE name = 'x'";
        let b = "SELECT dog_id FROM dogs WHERE name = 'x' AND age > 3";
        only_when_verified(Rule::IntersectAsAnd, a, b);
        differ(
            "SELECT name FROM dogs WHERE age > 3 INTERSECT SELECT name FROM dogs WHERE age < 9",
            "SELECT name FROM dogs WHERE age > 3 AND age < 9",
        );
    }

    #[test]
    fn rule_4_union_on_a_key_is_or() {
        let a = "SELECT dog_id, name FROM dogs WHERE age > 3 UNION SELECT dog_id, name FROM dogs WHERE name = 'x'";
        let b = "SELECT name, dog_id FROM dogs WHERE age > 3 OR name = 'x'";
        only_when_verified(Rule::UnionAsOr, a, b);
        differ(
            "SELECT dog_id FROM dogs WHERE age > 3 UNION ALL SELECT dog_id FROM dogs WHERE age < 9",
            "SELECT dog_id FROM dogs WHERE age > 3 OR age < 9",
        );
    }

    #[test]
    fn rule_6_except_is_not_in_when_the_key_and_the_subtracted_column_hold_no_null() {
        let a = "SELECT owner_id FROM owners EXCEPT SELECT owner_id FROM owners WHERE city = 'x'";
        let b = "SELECT owner_id FROM owners WHERE owner_id NOT IN (SELECT owner_id FROM owners WHERE city = 'x')";
        only_when_verified(Rule::ExceptAsNotIn, a, b);
        // dogs.owner_id may hold NULL: NOT IN would then reject every row.
        differ(
            "SELECT owner_id FROM owners EXCEPT SELECT owner_id FROM dogs",
            "SELECT owner_id FROM owners WHERE owner_id NOT IN (SELECT owner_id FROM dogs)",
        );
    }

    #[test]
    fn rule_17_self_in_needs_a_key() {
        let a = "SELECT name FROM dogs WHERE dog_id IN (SELECT dog_id FROM dogs WHERE age > 3)";
        let b = "SELECT name FROM dogs WHERE age > 3";
        only_when_verified(Rule::SelfIn, a, b);
        differ(
            "SELECT name FROM dogs WHERE name IN (SELECT name FROM dogs WHERE age > 3)",
            "SELECT name FROM dogs WHERE age > 3",
        );
    }

    #[test]
    fn rule_2_inside_an_aggregate_needs_a_key_that_joins_do_not_repeat() {
        let a = "SELECT count(DISTINCT T1.dog_id) FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id WHERE T2.city = 'x'";
        let b = "SELECT count(*) FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id WHERE T2.city = 'x'";
        only_when_verified(Rule::RedundantDistinct, a, b);
        differ(
            "SELECT count(DISTINCT T2.owner_id) FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id WHERE T1.age > 1",
            "SELECT count(*) FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id WHERE T1.age > 1",
        );
    }

    #[test]
    fn rule_5_group_by_key() {
        let a = "SELECT count(*) FROM dogs GROUP BY dog_id, name";
        let b = "SELECT count(*) FROM dogs GROUP BY dog_id";
        only_when_verified(Rule::GroupByKey, a, b);
    }

    #[test]
    fn rule_5_a_column_joined_to_a_key_keys_its_table() {
        let a = "SELECT count(*) FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id GROUP BY T1.owner_id, T2.city";
        let b = "SELECT count(*) FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id GROUP BY T1.owner_id";
        only_when_verified(Rule::GroupByKey, a, b);
    }

    #[test]
    fn rule_7_count_star_needs_not_null() {
        let (a, b) = (
            "SELECT count(dog_id) FROM dogs",
            "SELECT count(*) FROM dogs",
        );
        only_when_verified(Rule::CountStar, a, b);
    }

    #[test]
    fn rule_7_a_column_an_inner_join_equates_is_never_null() {
        let on =
            "FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id WHERE T2.city = 'x'";
        fires(
            Rule::CountStar,
            &format!("SELECT count(T1.owner_id) {on}"),
            &format!("SELECT count(*) {on}"),
        );
        let left = "FROM owners AS T2 LEFT JOIN dogs AS T1 ON T1.owner_id = T2.owner_id";
        differ(
            &format!("SELECT count(T1.owner_id) {left}"),
            &format!("SELECT count(*) {left}"),
        );
    }

    #[test]
    fn rule_8_is_not_null_needs_not_null() {
        let a = "SELECT name FROM dogs WHERE dog_id IS NOT NULL";
        let b = "SELECT name FROM dogs";
        only_when_verified(Rule::IsNotNull, a, b);
    }

    #[test]
    fn rule_9_extreme_order_limit_needs_rows_and_not_null() {
        let (a, b) = (
            "SELECT min(dog_id) FROM dogs",
            "SELECT dog_id FROM dogs ORDER BY dog_id ASC LIMIT 1",
        );
        only_when_verified(Rule::ExtremeOrderLimit, a, b);
    }

    #[test]
    fn rule_9_max_needs_rows_but_not_not_null() {
        let (a, b) = (
            "SELECT max(age) FROM dogs",
            "SELECT age FROM dogs ORDER BY age DESC LIMIT 1",
        );
        only_when_verified(Rule::ExtremeOrderLimit, a, b);
        differ(
            "SELECT min(age) FROM dogs",
            "SELECT age FROM dogs ORDER BY age ASC LIMIT 1",
        );
    }

    #[test]
    fn rule_10_star_uses_the_schema_columns() {
        let (a, b) = ("SELECT * FROM owners", "SELECT owner_id, city FROM owners");
        fires(Rule::StarColumns, a, b);
        differ("SELECT * FROM owners", "SELECT owner_id FROM owners");
    }

    #[test]
    fn qualified_star_is_the_table_columns() {
        assert!(equivalent(
            "SELECT T2.*, T1.name FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id",
            "SELECT T2.owner_id, T2.city, T1.name FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id",
            &facts()
        ));
        fires(
            Rule::StarColumns,
            "SELECT owners.* FROM owners",
            "SELECT * FROM owners",
        );
    }

    #[test]
    fn rule_11_numeric_string_needs_a_typed_column_and_no_leading_zero() {
        let (a, b) = (
            "SELECT name FROM dogs WHERE age = '5'",
            "SELECT name FROM dogs WHERE age = 5",
        );
        only_when_verified(Rule::NumericString, a, b);
        differ(
            "SELECT name FROM dogs WHERE age = '05'",
            "SELECT name FROM dogs WHERE age = 5",
        );
    }

    #[test]
    fn rule_12_join_is_in_when_the_joined_column_is_a_key() {
        let a = "SELECT T1.name FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id WHERE T2.city = 'x'";
        let b = "SELECT name FROM dogs WHERE owner_id IN (SELECT owner_id FROM owners WHERE city = 'x')";
        only_when_verified(Rule::InAsJoin, a, b);
    }

    #[test]
    fn rule_13_unneeded_join_needs_a_total_key() {
        let a = "SELECT T1.name FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id";
        let b = "SELECT name FROM dogs";
        only_when_verified(Rule::UnneededJoin, a, b);
    }

    #[test]
    fn rule_13_drops_a_chain_of_joins_whatever_their_order() {
        let mut facts = facts();
        facts.columns.push(("towns".into(), vec!["name".into()]));
        facts.unique.insert(id("towns", "name"));
        facts.not_null.insert(id("towns", "name"));
        facts
            .total_keys
            .insert((id("owners", "city"), id("towns", "name")));
        let chain = "SELECT T1.name FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id JOIN towns AS T3 ON T2.city = T3.name";
        assert!(equivalent(chain, "SELECT name FROM dogs", &facts));
    }

    #[test]
    fn rule_13_rewrites_order_by_too() {
        let a = "SELECT T1.name FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id ORDER BY T2.owner_id";
        let b = "SELECT name FROM dogs ORDER BY owner_id";
        only_when_verified(Rule::UnneededJoin, a, b);
    }

    #[test]
    fn rule_12_keeps_a_disjunction_a_disjunction() {
        let join = "SELECT T1.name FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id";
        let a = format!("{join} WHERE T2.city = 'x' OR T2.city = 'y'");
        let b = "SELECT name FROM dogs WHERE owner_id IN (SELECT owner_id FROM owners WHERE city IN ('x', 'y'))";
        only_when_verified(Rule::InAsJoin, &a, b);
        differ(&format!("{join} WHERE T2.city = 'x' AND T2.city = 'y'"), b);
    }

    #[test]
    fn rule_14_aliases_with_or_without_as() {
        assert!(equivalent(
            "SELECT T.name FROM dogs AS T",
            "SELECT d.name FROM dogs d",
            &bare()
        ));
    }

    #[test]
    fn rule_15_in_list_is_a_disjunction() {
        fires(
            Rule::InList,
            "SELECT name FROM dogs WHERE age IN (1, 2)",
            "SELECT name FROM dogs WHERE age = 2 OR age = 1",
        );
    }

    #[test]
    fn rule_16_joined_columns_stand_for_each_other() {
        fires(
            Rule::JoinColumn,
            "SELECT T2.owner_id FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id WHERE T2.city = 'x'",
            "SELECT T1.owner_id FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id WHERE T2.city = 'x'",
        );
        differ(
            "SELECT T2.owner_id FROM dogs AS T1 LEFT JOIN owners AS T2 ON T1.owner_id = T2.owner_id",
            "SELECT T1.owner_id FROM dogs AS T1 LEFT JOIN owners AS T2 ON T1.owner_id = T2.owner_id",
        );
        let mut text_child = facts();
        text_child
            .affinity
            .insert(id("dogs", "owner_id"), Affinity::Text);
        let join =
            "FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id WHERE T2.city = 'x'";
        assert!(
            !equivalent(
                &format!("SELECT T2.owner_id {join}"),
                &format!("SELECT T1.owner_id {join}"),
                &text_child
            ),
            "'1' joined with 1 is shown differently"
        );
    }

    #[test]
    fn rule_18_self_union_is_distinct() {
        fires(
            Rule::SelfSetOp,
            "SELECT name FROM dogs UNION SELECT name FROM dogs",
            "SELECT DISTINCT name FROM dogs",
        );
        differ(
            "SELECT name FROM dogs UNION ALL SELECT name FROM dogs",
            "SELECT DISTINCT name FROM dogs",
        );
        differ(
            "SELECT name FROM dogs UNION SELECT name FROM dogs",
            "SELECT name FROM dogs",
        );
    }

    #[test]
    fn rule_19_between() {
        fires(
            Rule::Between,
            "SELECT name FROM dogs WHERE age BETWEEN 1 AND 3",
            "SELECT name FROM dogs WHERE age >= 1 AND age <= 3",
        );
    }

    #[test]
    fn rule_20_not_comparison() {
        fires(
            Rule::NotComparison,
            "SELECT name FROM dogs WHERE NOT age > 3",
            "SELECT name FROM dogs WHERE age <= 3",
        );
    }

    #[test]
    fn fixes_join_conditions_distinct_limit_values_and_precedence() {
        differ(
            "SELECT T1.name FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id",
            "SELECT T1.name FROM dogs AS T1 JOIN owners AS T2 ON T1.dog_id = T2.owner_id",
        );
        differ("SELECT DISTINCT name FROM dogs", "SELECT name FROM dogs");
        differ(
            "SELECT name FROM dogs ORDER BY age LIMIT 1",
            "SELECT name FROM dogs ORDER BY age LIMIT 3",
        );
        differ(
            "SELECT name FROM dogs WHERE age = 3",
            "SELECT name FROM dogs WHERE age = 4",
        );
        differ(
            "SELECT name FROM dogs WHERE age = 1 AND (name = 'a' OR age = 2)",
            "SELECT name FROM dogs WHERE age = 1 AND name = 'a' OR age = 2",
        );
        differ(
            "SELECT T1.name FROM dogs AS T1 LEFT JOIN owners AS T2 ON T1.owner_id = T2.owner_id",
            "SELECT T1.name FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id",
        );
        assert!(equivalent(
            "SELECT age AS a FROM dogs ORDER BY a",
            "SELECT age FROM dogs ORDER BY age",
            &facts()
        ));
    }

    #[test]
    fn from_sub_queries_resolve_their_output_names() {
        let facts = facts();
        for text in [
            "SELECT name FROM (SELECT name FROM dogs UNION SELECT city FROM owners) AS t WHERE name = 'x'",
            "SELECT n FROM (SELECT count(*) AS n FROM dogs) AS t ORDER BY n",
            "SELECT t.name FROM (SELECT T1.name FROM dogs AS T1) AS t",
            "SELECT t.* FROM (SELECT T1.name FROM dogs AS T1) AS t",
        ] {
            assert!(canonical(text, &facts, RuleSet::all()).is_ok(), "{text}");
        }
        differ(
            "SELECT name FROM (SELECT name FROM dogs UNION SELECT city FROM owners) AS t",
            "SELECT name FROM (SELECT name FROM dogs) AS t",
        );
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        let facts = facts();
        for text in [
            "",
            "   ",
            "SELEC name",
            "SELECT nope FROM dogs",
            "DROP TABLE dogs",
            "SELECT owner_id FROM dogs JOIN owners ON dogs.owner_id = owners.owner_id",
        ] {
            assert!(canonical(text, &facts, RuleSet::all()).is_err(), "{text}");
        }
        let huge = format!("SELECT name FROM dogs WHERE {}", "age = 1 OR ".repeat(5000));
        assert!(canonical(&huge, &facts, RuleSet::all()).is_err());
        let deep = format!("SELECT {}1{}", "(".repeat(5000), ")".repeat(5000));
        assert!(canonical(&deep, &facts, RuleSet::all()).is_err());
    }
}
