//! Rules 1 and 9: the extreme of a column as a sub-query, an aggregate or ORDER BY ... LIMIT 1.

use crate::sql::plus::form::{Body, Expr, JoinKind, Query, Source};
use crate::sql::plus::rewrite::Rewriter;
use crate::sql::plus::Rule;

impl Rewriter<'_> {
    /// Rule 1: `WHERE c = (SELECT MIN/MAX(c) FROM t)` over t is `ORDER BY c ASC/DESC LIMIT 1`.
    pub(in crate::sql::plus) fn extreme_subquery(&mut self, query: &mut Query) {
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
    pub(in crate::sql::plus) fn extreme_order_limit(&mut self, query: &mut Query) {
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
}

#[cfg(test)]
mod tests {
    use crate::sql::plus::test_support::{differ, only_when_verified};
    use crate::sql::plus::Rule;

    #[test]
    fn rule_1_extreme_subquery_needs_a_key() {
        let a = "SELECT name FROM dogs WHERE dog_id = (SELECT max(dog_id) FROM dogs)";
        let b = "SELECT name FROM dogs ORDER BY dog_id DESC LIMIT 1";
        only_when_verified(Rule::ExtremeSubquery, a, b);
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
}
