//! Rules 3, 4, 6 and 18: set operations as conditions of one select, and a query combined with
//! itself.

use crate::sql::facts::ColumnId;
use crate::sql::plus::form::{
    conjunction, equated_by, filtered_not_null, flatten, inner_only, Body, Expr, JoinKind, Query,
    Select, SetOp, Source,
};
use crate::sql::plus::rewrite::{join_classes, Rewriter};
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

    /// Rules 3 and 4: a set operation between selects of the same columns of one table, one of
    /// them a key, is one select: INTERSECT joins the conditions with AND, UNION with OR (the
    /// key makes each row its own distinct result row). EXCEPT is rule 6
    /// ([`Rewriter::except_as_not_in`]).
    pub(in crate::sql::plus) fn set_as_condition(&mut self, query: &mut Query) {
        let Body::Set {
            op: op @ (SetOp::Intersect | SetOp::Union),
            all: false,
            left,
            right,
        } = &query.body
        else {
            self.except_as_not_in(query);
            return;
        };
        let Some(left_select) = self.keyed_single_table(left) else {
            return;
        };
        let Some(right_select) = self.keyed_single_table(right) else {
            return;
        };
        if right_select.items != left_select.items || right_select.from != left_select.from {
            return;
        }
        let (left_filter, right_filter) = (left_select.filter.clone(), right_select.filter.clone());
        let (rule, filter) = if *op == SetOp::Intersect {
            let conjuncts = left_filter.into_iter().chain(right_filter).collect();
            (Rule::IntersectAsAnd, conjunction(conjuncts))
        } else {
            let disjunction = left_filter
                .zip(right_filter)
                .map(|(l, r)| Expr::Or(vec![l, r]));
            (Rule::UnionAsOr, disjunction)
        };
        if !self.allow(rule) {
            return;
        }
        let mut select = left_select.clone();
        select.distinct = false;
        self.replace_with_select(query, select, filter);
        self.fire(rule);
    }

    /// Rule 6: `SELECT c FROM t WHERE d EXCEPT q` is `SELECT c FROM t WHERE d AND c NOT IN (q)`
    /// when c holds no NULL (NOT NULL, or `c IS NOT NULL` in d) and q's column holds no NULL
    /// (one NULL makes `NOT IN` reject every row); EXCEPT removes duplicates, so the NOT IN form
    /// is `SELECT DISTINCT` unless c is UNIQUE. Since c holds no NULL, q's rows whose column
    /// is NULL subtract nothing: q gets `IS NOT NULL` on its column first, which also makes
    /// `EXCEPT q` equal to `EXCEPT q'` when q' reads q's rows through a join onto a nullable
    /// foreign key (rule 13 leaves the same conjunct).
    pub(in crate::sql::plus) fn except_as_not_in(&mut self, query: &mut Query) {
        let Body::Set {
            op: SetOp::Except,
            all: false,
            left,
            right,
        } = &mut query.body
        else {
            return;
        };
        let Some((left_select, column)) = single_table_column(left) else {
            self.except_of_keyed_rows(query);
            return;
        };
        let never_null = self.facts.not_null.contains(&column)
            || filtered_not_null(
                left_select.filter.as_ref(),
                &Expr::Column(column.0.clone(), column.1.clone()),
            );
        if !never_null || !self.allow(Rule::ExceptAsNotIn) {
            return;
        }
        if self.exclude_null_rows(right) {
            self.fire(Rule::ExceptAsNotIn);
        }
        let unique = self.facts.unique.contains(&column);
        if !self.never_null_column(right) {
            return;
        }
        let not_in = Expr::InQuery {
            expr: Box::new(Expr::Column(column.0.clone(), column.1.clone())),
            query: right.clone(),
            negated: true,
        };
        let conjuncts = left_select.filter.clone().into_iter().chain([not_in]);
        let filter = conjunction(conjuncts.collect());
        let mut select = left_select.clone();
        select.distinct = !unique;
        self.replace_with_select(query, select, filter);
        self.fire(Rule::ExceptAsNotIn);
    }

    /// Rule 6 over several columns: `SELECT k, c... FROM t WHERE d EXCEPT SELECT t.k, t.c...
    /// FROM t JOIN ... WHERE e`, k a key of t and t read once (inner joins) on the right, is
    /// `SELECT k, c... FROM t WHERE d AND k NOT IN (SELECT t.k FROM t JOIN ... WHERE e)`: a right
    /// row equals a left row only when it comes from that same row of t (its key), so EXCEPT
    /// removes exactly the rows of t the right side reads, and the key is never NULL. The right
    /// side's columns may be those an ON equates with t's (rule 16 shows one for the other).
    fn except_of_keyed_rows(&mut self, query: &mut Query) {
        let Body::Set {
            op: SetOp::Except,
            all: false,
            left,
            right,
        } = &query.body
        else {
            return;
        };
        let Some((left_select, table)) = single_table_columns(left) else {
            return;
        };
        let Some(key_index) = left_select.items.iter().position(|e| self.is_key_column(e)) else {
            return;
        };
        let Body::Select(right_select) = &right.body else {
            return;
        };
        let reads_once = right_select
            .from
            .iter()
            .filter(|(_, source)| *source == Source::Table(table.clone()))
            .count()
            == 1;
        let plain = inner_only(&right_select.from)
            && right_select.group_by.is_empty()
            && right_select.having.is_none()
            && right.limit.is_none();
        let classes = join_classes(&right_select.on, self.facts);
        let shown = |column: &Expr| {
            classes
                .iter()
                .find(|(c, _)| c == column)
                .map_or(column.clone(), |(_, representative)| representative.clone())
        };
        let same_rows = right_select.items.len() == left_select.items.len()
            && left_select
                .items
                .iter()
                .zip(&right_select.items)
                .all(|(l, r)| l == r || shown(l) == *r);
        if !(reads_once && plain && same_rows && self.allow(Rule::ExceptAsNotIn)) {
            return;
        }
        let mut keys = (**right_select).clone();
        keys.items = vec![right_select.items[key_index].clone()];
        keys.distinct = false;
        let mut read = Query {
            body: Body::Select(Box::new(keys)),
            order_by: Vec::new(),
            limit: None,
        };
        self.query(&mut read);
        let not_in = Expr::InQuery {
            expr: Box::new(left_select.items[key_index].clone()),
            query: Box::new(read),
            negated: true,
        };
        let conjuncts = left_select.filter.clone().into_iter().chain([not_in]);
        let filter = conjunction(conjuncts.collect());
        let mut select = left_select.clone();
        select.distinct = false;
        self.replace_with_select(query, select, filter);
        self.fire(Rule::ExceptAsNotIn);
    }

    /// Adds `c IS NOT NULL` to `query` when it selects one column c of its own inner-joined
    /// tables that may be NULL, and dropping the rows where c is NULL removes only result rows
    /// that are NULL (no LIMIT; GROUP BY, if any, on c). True when it added it.
    fn exclude_null_rows(&self, query: &mut Query) -> bool {
        if query.limit.is_some() || self.never_null_column(query) {
            return false;
        }
        let Body::Select(select) = &mut query.body else {
            return false;
        };
        let [column @ Expr::Column(table, _)] = select.items.as_slice() else {
            return false;
        };
        let own = select
            .from
            .iter()
            .filter(|(_, source)| *source == Source::Table(table.clone()))
            .count()
            == 1;
        let grouped_on_it = select.group_by.is_empty() || select.group_by.contains(column);
        if !inner_only(&select.from) || !own || !grouped_on_it {
            return false;
        }
        let not_null = Expr::IsNull {
            expr: Box::new(column.clone()),
            negated: true,
        };
        select.filter = conjunction(select.filter.take().into_iter().chain([not_null]).collect());
        true
    }

    /// Makes `query` the single `select` with the WHERE `filter`, its ORDER BY re-read over it.
    fn replace_with_select(&mut self, query: &mut Query, mut select: Select, filter: Option<Expr>) {
        select.filter = filter.map(|mut f| {
            flatten(&mut f);
            f
        });
        for (expr, _) in &mut query.order_by {
            self.expr(expr, &select.from);
        }
        query.body = Body::Select(Box::new(select));
    }

    /// The select of `query` when it reads one table (no join, grouping, order or limit) and
    /// lists only that table's columns, a key among them.
    fn keyed_single_table<'q>(&self, query: &'q Query) -> Option<&'q Select> {
        let (select, _) = single_table_columns(query)?;
        select
            .items
            .iter()
            .any(|e| self.is_key_column(e))
            .then_some(select)
    }

    /// True when `query` returns one column of a table it reads through inner joins only, and
    /// that column holds no NULL in its result: declared NOT NULL, equated by an ON, or
    /// `IS NOT NULL` in the WHERE.
    fn never_null_column(&self, query: &Query) -> bool {
        let Body::Select(select) = &query.body else {
            return false;
        };
        let [item @ Expr::Column(table, column)] = select.items.as_slice() else {
            return false;
        };
        let never_null = self
            .facts
            .not_null
            .contains(&(table.clone(), column.clone()))
            || equated_by(&select.on, item)
            || filtered_not_null(select.filter.as_ref(), item);
        inner_only(&select.from)
            && select
                .from
                .iter()
                .any(|(_, source)| *source == Source::Table(table.clone()))
            && never_null
    }
}

/// The select of `query` and its table when it reads one table (no join, grouping, order or
/// limit) and lists only that table's columns.
fn single_table_columns(query: &Query) -> Option<(&Select, String)> {
    let Body::Select(select) = &query.body else {
        return None;
    };
    let [(JoinKind::Inner, Source::Table(table))] = select.from.as_slice() else {
        return None;
    };
    let own_columns = select
        .items
        .iter()
        .all(|item| matches!(item, Expr::Column(owner, _) if owner == table));
    let simple = query.order_by.is_empty()
        && query.limit.is_none()
        && select.on.is_empty()
        && select.group_by.is_empty()
        && select.having.is_none();
    (simple && own_columns).then(|| (&**select, table.clone()))
}

/// The select of `query` and its one column when it reads one table (no join, grouping,
/// order or limit) and lists one of that table's columns.
fn single_table_column(query: &Query) -> Option<(&Select, ColumnId)> {
    let (select, table) = single_table_columns(query)?;
    let [Expr::Column(_, column)] = select.items.as_slice() else {
        return None;
    };
    Some((select, (table, column.clone())))
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

    #[test]
    fn rule_6_keeps_distinct_for_a_column_that_is_not_unique() {
        let mut named = facts();
        named.not_null.insert(id("dogs", "name"));
        let except = "SELECT name FROM dogs EXCEPT SELECT name FROM dogs WHERE age > 3";
        let sub = "(SELECT name FROM dogs WHERE age > 3)";
        let distinct = format!("SELECT DISTINCT name FROM dogs WHERE name NOT IN {sub}");
        assert!(equivalent(except, &distinct, &named));
        let repeated = format!("SELECT name FROM dogs WHERE name NOT IN {sub}");
        assert!(!equivalent(except, &repeated, &named));
        // A NULL name stays in EXCEPT's result and fails NOT IN.
        assert!(!equivalent(except, &distinct, &facts()));
    }

    #[test]
    fn rule_6_drops_the_null_rows_of_the_subtracted_side() {
        let mut nullable = facts();
        nullable.not_null.remove(&id("dogs", "owner_id"));
        let owners = "SELECT owner_id FROM owners";
        let plain = format!("{owners} EXCEPT SELECT owner_id FROM dogs WHERE age > 3");
        let joined = format!("{owners} EXCEPT SELECT T2.owner_id FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id WHERE T1.age > 3");
        let not_in = format!("{owners} WHERE owner_id NOT IN (SELECT owner_id FROM dogs WHERE age > 3 AND owner_id IS NOT NULL)");
        assert!(equivalent(&plain, &joined, &nullable));
        assert!(equivalent(&plain, &not_in, &nullable));
        let with_null =
            format!("{owners} WHERE owner_id NOT IN (SELECT owner_id FROM dogs WHERE age > 3)");
        assert!(!equivalent(&plain, &with_null, &nullable));
    }

    #[test]
    fn rule_6_over_several_columns_needs_the_key_among_them() {
        let join =
            "FROM owners AS T1 JOIN dogs AS T2 ON T1.owner_id = T2.owner_id WHERE T2.age > 3";
        let sub = "(SELECT owner_id FROM dogs WHERE age > 3)";
        fires(
            Rule::ExceptAsNotIn,
            &format!("SELECT owner_id, city FROM owners EXCEPT SELECT T1.owner_id, T1.city {join}"),
            &format!("SELECT city, owner_id FROM owners WHERE owner_id NOT IN {sub}"),
        );
        // Without the key, two owners of one city are one row of EXCEPT.
        differ(
            &format!("SELECT city FROM owners EXCEPT SELECT T1.city {join}"),
            &format!("SELECT city FROM owners WHERE owner_id NOT IN {sub}"),
        );
    }
}
