//! Rule 17: a key IN a sub-query over the same table is the sub-query's condition.

use crate::sql::plus::form::{
    conjunction, conjuncts_of, inner_only, Body, Expr, JoinKind, Select, Source,
};
use crate::sql::plus::rewrite::Rewriter;
use crate::sql::plus::Rule;

impl Rewriter<'_> {
    /// Rule 17: a top-level conjunct `t.k IN (SELECT t.k FROM t WHERE d)`, with k a key and t
    /// once among the select's inner-joined tables, is `d`: the key makes the sub-query's row
    /// the outer row itself.
    pub(in crate::sql::plus) fn self_in(&mut self, select: &mut Select) {
        let Some(filter) = &select.filter else {
            return;
        };
        let conjuncts = conjuncts_of(filter).to_vec();
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
}

#[cfg(test)]
mod tests {
    use crate::sql::plus::test_support::{differ, only_when_verified};
    use crate::sql::plus::Rule;

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
}
