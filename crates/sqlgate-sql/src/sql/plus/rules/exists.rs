//! Rules 6 and 12 written with EXISTS: a sub-query correlated by one equality onto an outer
//! column is a membership test, `[NOT] EXISTS (SELECT ... FROM u WHERE u.y = t.x AND e)` =
//! `t.x [NOT] IN (SELECT u.y FROM u WHERE e)`.

use super::anti_join::{contains_query, take_column_equality};
use crate::sql::plus::form::{
    conjunction, flatten, inner_only, into_conjuncts, mentions_table, Body, Expr, JoinKind, Query,
    Select, Source,
};
use crate::sql::plus::rewrite::{stand_for_each_other, Rewriter};
use crate::sql::plus::Rule;

impl Rewriter<'_> {
    /// A top-level WHERE conjunct `EXISTS (SELECT ... FROM u WHERE u.y = t.x AND e)`, t read
    /// once by the outer inner joins, u not among them, e about u alone, no aggregate, grouping
    /// or limit, t.x of u.y's type affinity, is `t.x IN (SELECT u.y FROM u WHERE e)` (rule 12: a
    /// NULL t.x fails both); `NOT EXISTS` is `t.x NOT IN (SELECT u.y FROM u WHERE e AND u.y IS
    /// NOT NULL)` when t.x is declared NOT NULL (rule 6: NOT IN of a NULL would be NULL).
    pub(in crate::sql::plus) fn exists_as_in(&mut self, select: &mut Select) {
        if !inner_only(&select.from) {
            return;
        }
        let Some(filter) = select.filter.take() else {
            return;
        };
        let conjuncts = into_conjuncts(filter);
        let mut rewritten = Vec::new();
        let mut fired = Vec::new();
        for conjunct in conjuncts {
            match self.membership(&conjunct, &select.from) {
                Some((membership, rule)) if self.allow(rule) => {
                    rewritten.push(membership);
                    fired.push(rule);
                }
                _ => rewritten.push(conjunct),
            }
        }
        select.filter = conjunction(rewritten).map(|mut f| {
            flatten(&mut f);
            f
        });
        for rule in fired {
            self.fire(rule);
        }
    }

    /// The IN / NOT IN form of `conjunct` and the rule it is, when it is such an EXISTS.
    fn membership(&mut self, conjunct: &Expr, from: &[(JoinKind, Source)]) -> Option<(Expr, Rule)> {
        let Expr::Exists { query, negated } = conjunct else {
            return None;
        };
        let Body::Select(sub) = &query.body else {
            return None;
        };
        let [(JoinKind::Inner, Source::Table(u))] = sub.from.as_slice() else {
            return None;
        };
        let outer: Vec<&String> = from
            .iter()
            .filter_map(|(_, source)| match source {
                Source::Table(t) => Some(t),
                Source::Derived(_) => None,
            })
            .collect();
        let plain_items = sub
            .items
            .iter()
            .all(|e| matches!(e, Expr::Column(..) | Expr::Star | Expr::Number(_)));
        let plain = sub.on.is_empty()
            && sub.group_by.is_empty()
            && sub.having.is_none()
            && query.limit.is_none()
            && plain_items;
        if !plain || outer.contains(&u) {
            return None;
        }
        let conjuncts = match &sub.filter {
            Some(Expr::And(list)) => list.clone(),
            Some(other) => vec![other.clone()],
            None => return None,
        };
        let (y, x, mut rest) = take_column_equality(conjuncts, |a, b| {
            matches!((a, b), (Expr::Column(ta, _), Expr::Column(tb, _))
                if ta == u
                    && outer.iter().filter(|t| **t == tb).count() == 1
                    && stand_for_each_other(a, b, self.facts))
        })?;
        let uncorrelated = rest
            .iter()
            .all(|e| !contains_query(e) && outer.iter().all(|t| !mentions_table(e, t)));
        let Expr::Column(tx, cx) = &x else {
            return None;
        };
        let x_never_null = self.facts.not_null.contains(&(tx.clone(), cx.clone()));
        if !uncorrelated || (*negated && !x_never_null) {
            return None;
        }
        if *negated {
            rest.push(Expr::IsNull {
                expr: Box::new(y.clone()),
                negated: true,
            });
        }
        let mut read = Query {
            body: Body::Select(Box::new(Select {
                distinct: false,
                items: vec![y],
                from: vec![(JoinKind::Inner, Source::Table(u.clone()))],
                on: Vec::new(),
                filter: conjunction(rest),
                group_by: Vec::new(),
                having: None,
            })),
            order_by: Vec::new(),
            limit: None,
        };
        self.query(&mut read);
        let rule = if *negated {
            Rule::ExceptAsNotIn
        } else {
            Rule::InAsJoin
        };
        let membership = Expr::InQuery {
            expr: Box::new(x),
            query: Box::new(read),
            negated: *negated,
        };
        Some((membership, rule))
    }
}

#[cfg(test)]
mod tests {
    use crate::sql::plus::test_support::{differ, equivalent, facts, id};

    #[test]
    fn not_exists_is_not_in_when_the_outer_column_holds_no_null() {
        let not_exists = "SELECT T1.city FROM owners AS T1 WHERE NOT EXISTS (SELECT * FROM dogs AS T2 WHERE T2.owner_id = T1.owner_id AND T2.age > 3)";
        let not_in = "SELECT city FROM owners WHERE owner_id NOT IN (SELECT owner_id FROM dogs WHERE age > 3)";
        assert!(equivalent(not_exists, not_in, &facts()));
        let mut nullable = facts();
        nullable.not_null.remove(&id("dogs", "owner_id"));
        assert!(!equivalent(not_exists, not_in, &nullable));
        let not_null_in = "SELECT city FROM owners WHERE owner_id NOT IN (SELECT owner_id FROM dogs WHERE age > 3 AND owner_id IS NOT NULL)";
        assert!(equivalent(not_exists, not_null_in, &nullable));
        let mut nullable_outer = facts();
        nullable_outer.not_null.remove(&id("owners", "owner_id"));
        assert!(!equivalent(not_exists, not_in, &nullable_outer));
    }

    #[test]
    fn exists_is_in() {
        assert!(equivalent(
            "SELECT name FROM dogs AS T1 WHERE EXISTS (SELECT 1 FROM owners AS T2 WHERE T2.owner_id = T1.owner_id AND T2.city = 'x')",
            "SELECT name FROM dogs WHERE owner_id IN (SELECT owner_id FROM owners WHERE city = 'x')",
            &facts()
        ));
        // An aggregate always gives a row: EXISTS is true.
        differ(
            "SELECT name FROM dogs AS T1 WHERE EXISTS (SELECT count(*) FROM owners AS T2 WHERE T2.owner_id = T1.owner_id)",
            "SELECT name FROM dogs WHERE owner_id IN (SELECT owner_id FROM owners)",
        );
    }
}
