//! Rules 12, 13 and 16: a join as IN, a join nothing needs, and columns a join equates.

use crate::sql::plus::form::{
    comparison, conjunction, equated_by, for_each_expr, inner_only, into_conjuncts, mentions_table,
    Body, Expr, JoinKind, Query, Select, Source,
};
use crate::sql::plus::rewrite::{join_classes, stand_for_each_other, Rewriter};
use crate::sql::plus::Rule;

impl Rewriter<'_> {
    /// Rule 12: `FROM t1 JOIN t2 ON t1.k = t2.c WHERE d1 AND d2` with k a key, t1 used only by
    /// d1, becomes `FROM t2 WHERE d2 AND t2.c IN (SELECT t1.k FROM t1 WHERE d1)`: each t2 row
    /// matches at most one t1 row, so rows and multiplicities are the same.
    pub(in crate::sql::plus) fn in_as_join(&mut self, query: &mut Query) {
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

    /// Rule 13: an inner-joined table used only by its join, joined through a declared foreign
    /// key onto its UNIQUE NOT NULL column, is dropped: with foreign keys taken as enforced, each
    /// row of the other table whose foreign key is not NULL matches exactly one row, and one
    /// whose foreign key is NULL matches none. A foreign key declared NOT NULL (or a column of
    /// the child's primary key) keeps every row; a nullable one becomes `fk IS NOT NULL`.
    pub(in crate::sql::plus) fn unneeded_join(
        &mut self,
        select: &mut Select,
        order_by: &mut [(Expr, bool)],
    ) {
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

    /// Rule 13 written as IN: a top-level WHERE conjunct `fk IN (SELECT k FROM t)` over the
    /// whole of t, fk a declared foreign key onto t's key k, holds exactly when fk is not NULL
    /// (foreign keys taken as enforced; a NULL and a false conjunct both drop the row), so it is
    /// `fk IS NOT NULL`, the form the dropped join leaves (rule 8 then drops it if fk is NOT
    /// NULL).
    pub(in crate::sql::plus) fn in_whole_parent(&mut self, select: &mut Select) {
        if !self.allow(Rule::UnneededJoin) {
            return;
        }
        let Some(filter) = select.filter.take() else {
            return;
        };
        let conjuncts = into_conjuncts(filter);
        let mut changed = false;
        let rewritten = conjuncts
            .into_iter()
            .map(|conjunct| match self.whole_parent_member(&conjunct) {
                Some(child) => {
                    changed = true;
                    Expr::IsNull {
                        expr: Box::new(child),
                        negated: true,
                    }
                }
                None => conjunct,
            })
            .collect();
        select.filter = conjunction(rewritten);
        if changed {
            self.fire(Rule::UnneededJoin);
        }
    }

    /// The foreign-key column of `expr` when it is `fk IN (SELECT k FROM t)`, with nothing but
    /// t's key k read from the whole of t, and fk declared a foreign key onto it.
    fn whole_parent_member(&self, expr: &Expr) -> Option<Expr> {
        let Expr::InQuery {
            expr: child,
            query,
            negated: false,
        } = expr
        else {
            return None;
        };
        let Expr::Column(ct, cc) = &**child else {
            return None;
        };
        let Body::Select(sub) = &query.body else {
            return None;
        };
        let [Expr::Column(pt, pc)] = sub.items.as_slice() else {
            return None;
        };
        let whole = matches!(sub.from.as_slice(), [(JoinKind::Inner, Source::Table(t))] if t == pt)
            && sub.on.is_empty()
            && sub.filter.is_none()
            && sub.group_by.is_empty()
            && sub.having.is_none()
            && query.limit.is_none();
        let key = ((ct.clone(), cc.clone()), (pt.clone(), pc.clone()));
        (whole && self.facts.foreign_keys.contains(&key)).then(|| (**child).clone())
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
            if parent == child || !self.facts.foreign_keys.contains(&key) {
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
                vec![(parent_column, child_column.clone())]
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
            if !self.facts.not_null.contains(&key.0) && !equated_by(&others.on, &child_column) {
                // The join kept exactly the rows whose foreign key is not NULL.
                let conjuncts = others.filter.take().into_iter().chain([Expr::IsNull {
                    expr: Box::new(child_column),
                    negated: true,
                }]);
                others.filter = conjunction(conjuncts.collect());
            }
            *select = others;
            order_by.clone_from_slice(&other_order);
            self.fire(Rule::UnneededJoin);
            return true;
        }
        false
    }

    /// Rule 16: inside inner joins, columns equated by ON stand for one another.
    pub(in crate::sql::plus) fn join_column(
        &mut self,
        select: &mut Select,
        order_by: &mut [(Expr, bool)],
    ) {
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

#[cfg(test)]
mod tests {
    use crate::sql::facts::Affinity;
    use crate::sql::plus::test_support::{
        differ, equivalent, facts, fires, id, only_when_verified,
    };
    use crate::sql::plus::Rule;

    #[test]
    fn rule_12_join_is_in_when_the_joined_column_is_a_key() {
        let a = "SELECT T1.name FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id WHERE T2.city = 'x'";
        let b = "SELECT name FROM dogs WHERE owner_id IN (SELECT owner_id FROM owners WHERE city = 'x')";
        only_when_verified(Rule::InAsJoin, a, b);
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
    fn rule_13_unneeded_join_needs_a_declared_not_null_foreign_key() {
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
        facts.not_null.insert(id("owners", "city"));
        facts
            .foreign_keys
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
    fn rule_13_in_over_the_whole_parent_is_the_join() {
        let join = "SELECT T1.name FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id";
        let within = "SELECT name FROM dogs WHERE owner_id IN (SELECT owner_id FROM owners)";
        assert!(equivalent(join, within, &facts()));
        assert!(equivalent(within, "SELECT name FROM dogs", &facts()));
        let mut nullable = facts();
        nullable.not_null.remove(&id("dogs", "owner_id"));
        assert!(equivalent(join, within, &nullable));
        assert!(!equivalent(within, "SELECT name FROM dogs", &nullable));
        let some = "SELECT name FROM dogs WHERE owner_id IN (SELECT owner_id FROM owners WHERE city = 'x')";
        assert!(!equivalent(some, "SELECT name FROM dogs", &facts()));
        let mut undeclared = facts();
        undeclared.foreign_keys.clear();
        assert!(!equivalent(within, "SELECT name FROM dogs", &undeclared));
    }

    #[test]
    fn rule_13_over_a_nullable_foreign_key_leaves_is_not_null() {
        let mut nullable = facts();
        nullable.not_null.remove(&id("dogs", "owner_id"));
        let join = "SELECT T1.name FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id";
        let filtered = "SELECT name FROM dogs WHERE owner_id IS NOT NULL";
        assert!(equivalent(join, filtered, &nullable));
        assert!(!equivalent(join, "SELECT name FROM dogs", &nullable));
        // Without the declared foreign key, the join may drop any row.
        let mut undeclared = nullable.clone();
        undeclared.foreign_keys.clear();
        assert!(!equivalent(join, filtered, &undeclared));
    }
}
