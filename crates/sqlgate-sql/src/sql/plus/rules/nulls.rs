//! Rules 7 and 8: what a column that holds no NULL makes redundant.

use crate::sql::plus::form::{
    conjunction, flatten, has_outer_join, into_conjuncts, Body, Expr, JoinKind, Select, Source,
};
use crate::sql::plus::rewrite::Rewriter;
use crate::sql::plus::Rule;

impl Rewriter<'_> {
    /// Rule 7: `COUNT(c)` is `COUNT(*)` when c holds no NULL (NOT NULL, or equated by an inner
    /// join's ON) and no outer join brings NULLs in.
    pub(in crate::sql::plus) fn count_star(
        &mut self,
        expr: &mut Expr,
        from: &[(JoinKind, Source)],
    ) {
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
    }

    /// Rule 8: `c IS NOT NULL` conjuncts on NOT NULL columns are dropped.
    pub(in crate::sql::plus) fn is_not_null(&mut self, select: &mut Select) {
        if has_outer_join(&select.from) || !self.allow(Rule::IsNotNull) {
            return;
        }
        let not_null = |x: &Expr| matches!(x, Expr::Column(t, c) if self.facts.not_null.contains(&(t.clone(), c.clone())));
        if drop_is_not_null(select, not_null) {
            self.fire(Rule::IsNotNull);
        }
    }

    /// Rule 8 under aggregates: a select without GROUP BY or HAVING whose every item is
    /// `COUNT/SUM/AVG/MIN/MAX([DISTINCT] c)` gives one row from the non-NULL values of c alone,
    /// so a `c IS NOT NULL` conjunct (written, or left by rule 13 for a nullable foreign key)
    /// changes nothing.
    pub(in crate::sql::plus) fn is_not_null_under_aggregates(&mut self, select: &mut Select) {
        if has_outer_join(&select.from)
            || !select.group_by.is_empty()
            || select.having.is_some()
            || !self.allow(Rule::IsNotNull)
        {
            return;
        }
        let Some(column) = aggregated_column(&select.items) else {
            return;
        };
        if drop_is_not_null(select, |x| *x == column) {
            self.fire(Rule::IsNotNull);
        }
    }
}

/// Drops the `x IS NOT NULL` conjuncts of `select`'s WHERE whose `x` is `dropped`; whether any
/// was.
fn drop_is_not_null(select: &mut Select, dropped: impl Fn(&Expr) -> bool) -> bool {
    let Some(filter) = select.filter.take() else {
        return false;
    };
    let conjuncts = into_conjuncts(filter);
    let before = conjuncts.len();
    let kept: Vec<Expr> = conjuncts
        .into_iter()
        .filter(|e| !matches!(e, Expr::IsNull { expr, negated: true } if dropped(expr)))
        .collect();
    let changed = kept.len() != before;
    select.filter = conjunction(kept);
    changed
}

impl Rewriter<'_> {
    /// Rule 8 under IN: in the sub-query of a top-level WHERE conjunct `x IN (SELECT c ...)`,
    /// a `c IS NOT NULL` conjunct is dropped: a NULL among the values only makes IN NULL where
    /// it would be false, and the WHERE drops the row either way.
    pub(in crate::sql::plus) fn is_not_null_under_in(&mut self, select: &mut Select) {
        if !self.allow(Rule::IsNotNull) {
            return;
        }
        let conjuncts: Vec<&mut Expr> = match &mut select.filter {
            Some(Expr::And(list)) => list.iter_mut().collect(),
            Some(other) => vec![other],
            None => Vec::new(),
        };
        let mut changed = false;
        for conjunct in conjuncts {
            let Expr::InQuery {
                query,
                negated: false,
                ..
            } = conjunct
            else {
                continue;
            };
            let Body::Select(sub) = &mut query.body else {
                continue;
            };
            let [column @ Expr::Column(..)] = sub.items.as_slice() else {
                continue;
            };
            let column = column.clone();
            changed |= drop_is_not_null(sub, |x| *x == column);
        }
        if changed {
            select.filter = select.filter.take().map(|mut f| {
                flatten(&mut f);
                f
            });
            self.fire(Rule::IsNotNull);
        }
    }
}

/// The column every item of `items` aggregates, when each is an aggregate that skips NULL.
fn aggregated_column(items: &[Expr]) -> Option<Expr> {
    let mut found: Option<&Expr> = None;
    for item in items {
        let Expr::Func { name, args, .. } = item else {
            return None;
        };
        let [column @ Expr::Column(..)] = args.as_slice() else {
            return None;
        };
        let skips_null = matches!(name.as_str(), "count" | "sum" | "avg" | "min" | "max");
        if !skips_null || found.is_some_and(|f| f != column) {
            return None;
        }
        found = Some(column);
    }
    found.cloned()
}

#[cfg(test)]
mod tests {
    use crate::sql::plus::test_support::{differ, fires, only_when_verified};
    use crate::sql::plus::Rule;

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
    fn rule_8_under_aggregates_that_skip_null() {
        fires(
            Rule::IsNotNull,
            "SELECT count(DISTINCT age), max(age) FROM dogs WHERE age IS NOT NULL",
            "SELECT count(DISTINCT age), max(age) FROM dogs",
        );
        differ(
            "SELECT count(*) FROM dogs WHERE age IS NOT NULL",
            "SELECT count(*) FROM dogs",
        );
        differ(
            "SELECT max(name) FROM dogs WHERE age IS NOT NULL",
            "SELECT max(name) FROM dogs",
        );
        // A group whose ages are all NULL disappears with the condition.
        differ(
            "SELECT max(age) FROM dogs WHERE age IS NOT NULL GROUP BY name",
            "SELECT max(age) FROM dogs GROUP BY name",
        );
    }

    #[test]
    fn rule_8_under_a_top_level_in() {
        let filtered = "SELECT name FROM dogs WHERE age IN (SELECT age FROM dogs WHERE name = 'x' AND age IS NOT NULL)";
        fires(
            Rule::IsNotNull,
            filtered,
            "SELECT name FROM dogs WHERE age IN (SELECT age FROM dogs WHERE name = 'x')",
        );
        // Under NOT IN, a NULL among the values rejects every row.
        differ(
            "SELECT name FROM dogs WHERE age NOT IN (SELECT age FROM dogs WHERE age IS NOT NULL)",
            "SELECT name FROM dogs WHERE age NOT IN (SELECT age FROM dogs)",
        );
        // Under NOT, a NULL IN keeps the row out where a false one lets it in.
        differ(
            "SELECT name FROM dogs WHERE NOT (age IN (SELECT age FROM dogs WHERE age IS NOT NULL))",
            "SELECT name FROM dogs WHERE NOT (age IN (SELECT age FROM dogs))",
        );
    }
}
