//! Rules 3, 4, 6 and 18: set operations as conditions of one select, and a query combined with
//! itself.

use crate::sql::plus::form::{
    conjunction, flatten, inner_only, Body, Expr, JoinKind, Query, Select, SetOp, Source,
};
use crate::sql::plus::rewrite::Rewriter;
use crate::sql::plus::Rule;

impl Rewriter<'_> {
    /// Rule 18: `q UNION q` and `q INTERSECT q` are `q` with DISTINCT.
    pub(in crate::sql::plus) fn self_set_op(&mut self, query: &mut Query) {
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
    pub(in crate::sql::plus) fn set_as_condition(&mut self, query: &mut Query) {
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
}

#[cfg(test)]
mod tests {
    use crate::sql::plus::test_support::{
        differ, equivalent, facts, fires, id, only_when_verified,
    };
    use crate::sql::plus::Rule;

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
        // Once dogs.owner_id may hold NULL, NOT IN would reject every row.
        let (a, b) = (
            "SELECT owner_id FROM owners EXCEPT SELECT owner_id FROM dogs",
            "SELECT owner_id FROM owners WHERE owner_id NOT IN (SELECT owner_id FROM dogs)",
        );
        assert!(equivalent(a, b, &facts()));
        let mut nullable = facts();
        nullable.not_null.remove(&id("dogs", "owner_id"));
        assert!(!equivalent(a, b, &nullable));
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
}
