//! Rule 2: DISTINCT over values a key already keeps distinct, in the select list or inside an
//! aggregate.

use crate::sql::plus::form::{Body, Expr, Query, Select, Source};
use crate::sql::plus::rewrite::Rewriter;
use crate::sql::plus::Rule;

impl Rewriter<'_> {
    /// Rule 2 inside aggregates: `COUNT/SUM/AVG/MIN/MAX(DISTINCT t.k)` drops DISTINCT when k is a
    /// key and the joins keep each row of t at most once, so the values are already distinct.
    pub(in crate::sql::plus) fn distinct_aggregate_of_key(&mut self, expr: &mut Expr) {
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

    /// Rule 2 where only the set of rows counts: a select that is a branch of UNION, INTERSECT
    /// or EXCEPT (not ALL), which remove duplicates themselves, or the sub-query of `IN`, which
    /// asks only whether a value is among its rows, drops DISTINCT (not under a LIMIT, which
    /// would count the duplicates).
    pub(in crate::sql::plus) fn distinct_in_set_context(&mut self, query: &mut Query) {
        let Body::Select(select) = &mut query.body else {
            return;
        };
        if !select.distinct || query.limit.is_some() || !self.allow(Rule::RedundantDistinct) {
            return;
        }
        select.distinct = false;
        self.fire(Rule::RedundantDistinct);
    }

    /// Rule 2: DISTINCT over one table whose selected columns include a key.
    pub(in crate::sql::plus) fn redundant_distinct(&mut self, select: &mut Select) {
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
}

#[cfg(test)]
mod tests {
    use crate::sql::plus::test_support::{differ, fires, only_when_verified};
    use crate::sql::plus::Rule;

    #[test]
    fn rule_2_distinct_counts_nothing_where_only_the_set_of_rows_counts() {
        let owners = "SELECT owner_id FROM owners";
        fires(
            Rule::RedundantDistinct,
            &format!("{owners} EXCEPT SELECT DISTINCT owner_id FROM dogs"),
            &format!("{owners} EXCEPT SELECT owner_id FROM dogs"),
        );
        fires(
            Rule::RedundantDistinct,
            "SELECT name FROM dogs WHERE age IN (SELECT DISTINCT age FROM dogs WHERE name = 'x')",
            "SELECT name FROM dogs WHERE age IN (SELECT age FROM dogs WHERE name = 'x')",
        );
        differ(
            &format!("{owners} UNION ALL SELECT DISTINCT owner_id FROM dogs"),
            &format!("{owners} UNION ALL SELECT owner_id FROM dogs"),
        );
        differ(
            "SELECT name FROM dogs WHERE age IN (SELECT DISTINCT age FROM dogs ORDER BY age LIMIT 2)",
            "SELECT name FROM dogs WHERE age IN (SELECT age FROM dogs ORDER BY age LIMIT 2)",
        );
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
    fn rule_2_inside_an_aggregate_needs_a_key_that_joins_do_not_repeat() {
        let a = "SELECT count(DISTINCT T1.dog_id) FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id WHERE T2.city = 'x'";
        let b = "SELECT count(*) FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id WHERE T2.city = 'x'";
        only_when_verified(Rule::RedundantDistinct, a, b);
        differ(
            "SELECT count(DISTINCT T2.owner_id) FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id WHERE T1.age > 1",
            "SELECT count(*) FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id WHERE T1.age > 1",
        );
    }
}
