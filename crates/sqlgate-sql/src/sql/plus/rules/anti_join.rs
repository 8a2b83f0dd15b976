//! Rule 6 written as an outer join: `t LEFT JOIN u ON t.x = u.y WHERE u.z IS NULL` keeps the
//! rows of t that no row of u matches, which is `t.x NOT IN (SELECT u.y ...)`.

use crate::sql::plus::form::{
    conjunction, conjuncts_of, mentions_table, Body, Expr, JoinKind, Query, Select, Source,
};
use crate::sql::plus::rewrite::{stand_for_each_other, Rewriter};
use crate::sql::plus::Rule;

/// `SELECT ... FROM t LEFT JOIN u ON t.x = u.y AND e WHERE d AND u.z IS NULL`, taken apart.
struct AntiJoin {
    /// t.
    outer: String,
    /// t.x.
    x: Expr,
    /// u.y.
    y: Expr,
    /// e's conjuncts.
    on_rest: Vec<Expr>,
    /// d's conjuncts.
    rest: Vec<Expr>,
}

impl Rewriter<'_> {
    /// Rule 6 as an anti-join: `SELECT ... FROM t LEFT JOIN u ON t.x = u.y AND e WHERE d AND
    /// u.z IS NULL`, with u.z never NULL in a matched row (declared NOT NULL, or u.y itself),
    /// u used nowhere else, e about u alone, t.x declared NOT NULL and of u.y's type affinity, is
    /// `SELECT ... FROM t WHERE d AND t.x NOT IN (SELECT u.y FROM u WHERE e AND u.y IS NOT
    /// NULL)`: a matched row of t is dropped by `u.z IS NULL`, an unmatched one appears once.
    pub(in crate::sql::plus) fn anti_join(
        &mut self,
        select: &mut Select,
        order_by: &[(Expr, bool)],
    ) {
        let Some(AntiJoin {
            outer,
            x,
            y,
            on_rest,
            rest,
        }) = self.anti_join_parts(select, order_by)
        else {
            return;
        };
        if !self.allow(Rule::ExceptAsNotIn) {
            return;
        }
        let not_null = Expr::IsNull {
            expr: Box::new(y.clone()),
            negated: true,
        };
        let Expr::Column(inner, _) = &y else {
            return;
        };
        let mut read = Query {
            body: Body::Select(Box::new(Select {
                distinct: false,
                items: vec![y.clone()],
                from: vec![(JoinKind::Inner, Source::Table(inner.clone()))],
                on: Vec::new(),
                filter: conjunction(on_rest.into_iter().chain([not_null]).collect()),
                group_by: Vec::new(),
                having: None,
            })),
            order_by: Vec::new(),
            limit: None,
        };
        self.query(&mut read);
        let not_in = Expr::InQuery {
            expr: Box::new(x),
            query: Box::new(read),
            negated: true,
        };
        select.from = vec![(JoinKind::Inner, Source::Table(outer))];
        select.on.clear();
        select.filter = conjunction(rest.into_iter().chain([not_in]).collect());
        self.fire(Rule::ExceptAsNotIn);
    }

    /// The parts of an anti-join [`Rewriter::anti_join`] rewrites.
    fn anti_join_parts(&self, select: &Select, order_by: &[(Expr, bool)]) -> Option<AntiJoin> {
        let [(JoinKind::Inner, Source::Table(t)), (JoinKind::Left, Source::Table(u))] =
            select.from.as_slice()
        else {
            return None;
        };
        let [Expr::Func { name, args, .. }] = select.on.as_slice() else {
            return None;
        };
        let [condition] = args.as_slice() else {
            return None;
        };
        if t == u || name != "left on" {
            return None;
        }
        let (x, y, on_rest) = self.anti_join_equality(condition, t, u)?;
        let conjuncts = match &select.filter {
            Some(Expr::And(list)) => list.clone(),
            Some(other) => vec![other.clone()],
            None => Vec::new(),
        };
        let unmatched = |e: &Expr| {
            matches!(e, Expr::IsNull { expr, negated: false }
                if matches!(&**expr, Expr::Column(owner, column) if owner == u
                    && (**expr == y || self.facts.not_null.contains(&(u.clone(), column.clone())))))
        };
        let position = conjuncts.iter().position(unmatched)?;
        let mut rest = conjuncts;
        rest.remove(position);
        let elsewhere = select
            .items
            .iter()
            .chain(&rest)
            .chain(&select.group_by)
            .chain(&select.having)
            .chain(order_by.iter().map(|(e, _)| e))
            .any(|e| mentions_table(e, u));
        (!elsewhere).then(|| AntiJoin {
            outer: t.clone(),
            x,
            y,
            on_rest,
            rest,
        })
    }

    /// `(t.x, u.y, other conjuncts)` when `condition` is `t.x = u.y AND e`, e about u alone, t.x
    /// declared NOT NULL and of u.y's affinity.
    fn anti_join_equality(
        &self,
        condition: &Expr,
        t: &str,
        u: &str,
    ) -> Option<(Expr, Expr, Vec<Expr>)> {
        let conjuncts = conjuncts_of(condition).to_vec();
        let (x, y, rest) = take_column_equality(conjuncts, |a, b| {
            matches!((a, b), (Expr::Column(ta, ca), Expr::Column(tb, _))
                if ta == t
                    && tb == u
                    && self.facts.not_null.contains(&(ta.clone(), ca.clone()))
                    && stand_for_each_other(a, b, self.facts))
        })?;
        let about_u_alone = rest
            .iter()
            .all(|e| !mentions_table(e, t) && mentions_table(e, u) && !contains_query(e));
        about_u_alone.then_some((x, y, rest))
    }
}

/// Takes out of `conjuncts` the first equality between two columns that `accept(a, b)` admits,
/// read either way round (`a = b` or `b = a`); returns `a`, `b` and the other conjuncts.
pub(super) fn take_column_equality(
    mut conjuncts: Vec<Expr>,
    accept: impl Fn(&Expr, &Expr) -> bool,
) -> Option<(Expr, Expr, Vec<Expr>)> {
    let equality = |e: &Expr| -> Option<(Expr, Expr)> {
        let Expr::Binary { op, left, right } = e else {
            return None;
        };
        if op != "=" {
            return None;
        }
        [(&**left, &**right), (&**right, &**left)]
            .into_iter()
            .find(|(a, b)| accept(a, b))
            .map(|(a, b)| (a.clone(), b.clone()))
    };
    let (position, (a, b)) = conjuncts
        .iter()
        .enumerate()
        .find_map(|(i, e)| equality(e).map(|pair| (i, pair)))?;
    conjuncts.remove(position);
    Some((a, b, conjuncts))
}

/// True when `expr` holds a sub-query (whose columns may name any scope).
pub(super) fn contains_query(expr: &Expr) -> bool {
    match expr {
        Expr::InQuery { .. } | Expr::Scalar(_) | Expr::Exists { .. } | Expr::Other(_) => true,
        Expr::Func { args: list, .. } | Expr::And(list) | Expr::Or(list) => {
            list.iter().any(contains_query)
        }
        Expr::Binary { left, right, .. } => contains_query(left) || contains_query(right),
        Expr::Not(inner) | Expr::IsNull { expr: inner, .. } => contains_query(inner),
        Expr::InList { expr, list, .. } => contains_query(expr) || list.iter().any(contains_query),
        Expr::Between {
            expr, low, high, ..
        } => [expr, low, high].into_iter().any(|e| contains_query(e)),
        Expr::Column(..) | Expr::Star | Expr::Number(_) | Expr::Text(_) | Expr::Keyword(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use crate::sql::plus::test_support::{differ, equivalent, facts, id};

    const GONE: &str = "SELECT owner_id, city FROM owners EXCEPT SELECT T1.owner_id, T1.city FROM owners AS T1 JOIN dogs AS T2 ON T1.owner_id = T2.owner_id";

    #[test]
    fn rule_6_an_anti_join_is_not_in() {
        let anti = "SELECT T1.owner_id, T1.city FROM owners AS T1 LEFT JOIN dogs AS T2 ON T1.owner_id = T2.owner_id WHERE T2.dog_id IS NULL";
        let not_in =
            "SELECT owner_id, city FROM owners WHERE owner_id NOT IN (SELECT owner_id FROM dogs)";
        assert!(equivalent(GONE, anti, &facts()));
        assert!(equivalent(GONE, not_in, &facts()));
        let mut nullable = facts();
        nullable.not_null.remove(&id("dogs", "owner_id"));
        assert!(equivalent(GONE, anti, &nullable));
        assert!(!equivalent(GONE, not_in, &nullable));
    }

    #[test]
    fn rule_6_an_anti_join_needs_a_column_never_null_in_a_match() {
        // dogs.name may be NULL in a matched row, which the IS NULL would keep.
        differ(
            GONE,
            "SELECT T1.owner_id, T1.city FROM owners AS T1 LEFT JOIN dogs AS T2 ON T1.owner_id = T2.owner_id WHERE T2.name IS NULL",
        );
        // A condition on u in the WHERE, not the ON, drops the unmatched rows too.
        differ(
            "SELECT owner_id FROM owners WHERE owner_id NOT IN (SELECT owner_id FROM dogs WHERE age > 3)",
            "SELECT T1.owner_id FROM owners AS T1 LEFT JOIN dogs AS T2 ON T1.owner_id = T2.owner_id WHERE T2.dog_id IS NULL OR T2.age <= 3",
        );
        assert!(equivalent(
            "SELECT owner_id FROM owners WHERE owner_id NOT IN (SELECT owner_id FROM dogs WHERE age > 3)",
            "SELECT T1.owner_id FROM owners AS T1 LEFT JOIN dogs AS T2 ON T1.owner_id = T2.owner_id AND T2.age > 3 WHERE T2.dog_id IS NULL",
            &facts()
        ));
    }
}
