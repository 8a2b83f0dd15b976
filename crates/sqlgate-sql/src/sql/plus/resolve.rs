//! The resolver: sqlparser's AST to the canonical form, with table aliases resolved per
//! sub-query scope, column aliases replaced by what they stand for, and names checked against
//! the schema (rule 14 is applied here: aliases leave no trace).

use super::form::{canonical_number, Body, Expr, JoinKind, Query, Select, SetOp, Source};
use crate::sql::facts::DbFacts;
use crate::sql::SqlError;
use sqlparser::ast as sql;

/// One FROM entry visible to column references.
#[derive(Debug, Clone)]
pub(super) struct Visible {
    name: String,
    target: Target,
}

/// What a FROM entry names: a schema table or a sub-query with its output columns.
#[derive(Debug, Clone)]
enum Target {
    Table(String),
    Derived { id: String, columns: Vec<String> },
}

/// Turns sqlparser's AST into [`Query`], resolving names against the schema and scopes.
pub(super) struct Resolver<'a> {
    /// The schema names resolve against.
    pub(super) facts: &'a DbFacts,
    /// Set when a table is given an alias (rule 14 fired).
    pub(super) aliased: std::cell::Cell<bool>,
}

/// The FROM entries of one select.
type Scope = Vec<Visible>;

/// Column aliases of a select list, with what they stand for.
type Aliases = Vec<(String, Expr)>;

impl Resolver<'_> {
    /// Resolves a query whose sub-queries may name the columns of the `outer` scopes.
    pub(super) fn query(&self, query: &sql::Query, outer: &[Scope]) -> Result<Query, SqlError> {
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

/// The join kind and constraint of a join operator.
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

/// The operator's name, with `<>` spelled `!=` and `==` spelled `=`.
fn comparison_name(op: &sql::BinaryOperator) -> String {
    match op {
        sql::BinaryOperator::NotEq => "!=".into(),
        sql::BinaryOperator::Eq => "=".into(),
        other => other.to_string().to_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use crate::sql::plus::test_support::{bare, differ, equivalent, facts};
    use crate::sql::plus::{canonical, RuleSet};

    #[test]
    fn rule_14_aliases_with_or_without_as() {
        assert!(equivalent(
            "SELECT T.name FROM dogs AS T",
            "SELECT d.name FROM dogs d",
            &bare()
        ));
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
