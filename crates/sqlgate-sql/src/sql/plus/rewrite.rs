//! The rewriting driver: walks the canonical form bottom-up, applies the enabled rules of
//! `rules/` in a fixed order, each only when its assumption holds in [`DbFacts`], records the
//! ones that fired, and sorts what SQL leaves unordered. Also the join facts and join classes
//! several rules share.

use super::form::{
    comparison, conjuncts_of, flatten, inner_only, into_conjuncts, is_comparison, Body, Expr,
    JoinKind, Query, Select, SetOp, Source,
};
use super::{Rule, RuleSet};
use crate::sql::facts::{ColumnId, DbFacts};

/// Applies the enabled rules bottom-up and sorts what is unordered.
pub(super) struct Rewriter<'a> {
    /// What is known of the database, the rules' assumptions.
    pub(super) facts: &'a DbFacts,
    /// The rules enabled.
    pub(super) rules: RuleSet,
    /// The rules that changed the query so far.
    pub(super) fired: &'a mut RuleSet,
    /// What the FROM of the select being rewritten guarantees (innermost last).
    pub(super) scopes: Vec<JoinFacts>,
}

/// What one select's inner joins guarantee about the rows they produce.
#[derive(Debug, Default)]
pub(super) struct JoinFacts {
    /// Columns an inner join's ON equates with another column: never NULL in the result.
    pub(super) joined: Vec<Expr>,
    /// Tables whose rows each appear at most once in the result: the table occurs once and every
    /// other table is reached through ON equalities onto a key.
    pub(super) unduplicated: Vec<String>,
}

impl JoinFacts {
    /// What the inner joins of `select` guarantee (nothing when it has an outer join).
    fn of(select: &Select, facts: &DbFacts) -> JoinFacts {
        if !inner_only(&select.from) {
            return JoinFacts::default();
        }
        let equalities = on_equalities(&select.on);
        let joined = equalities
            .iter()
            .flat_map(|(a, b)| [a.clone(), b.clone()])
            .collect();
        let tables: Option<Vec<&String>> = select
            .from
            .iter()
            .map(|(_, source)| match source {
                Source::Table(t) => Some(t),
                Source::Derived(_) => None,
            })
            .collect();
        let tables = tables.unwrap_or_default();
        let once = |t: &String| tables.iter().filter(|x| **x == t).count() == 1;
        let unduplicated = tables
            .iter()
            .filter(|t| once(t) && reaches_all_through_keys(t, &tables, &equalities, facts))
            .map(|t| t.to_string())
            .collect();
        JoinFacts {
            joined,
            unduplicated,
        }
    }
}

/// True when every table of `tables` is reached from `start` by ON equalities `x = u.k` with
/// u.k a key of a table not yet reached: each row of `start` then joins with at most one row.
fn reaches_all_through_keys(
    start: &str,
    tables: &[&String],
    equalities: &[(Expr, Expr)],
    facts: &DbFacts,
) -> bool {
    let mut reached = vec![start.to_string()];
    let mut grew = true;
    while grew {
        grew = false;
        for (a, b) in equalities {
            for (from, to) in [(a, b), (b, a)] {
                let (Expr::Column(ft, _), Expr::Column(tt, tc)) = (from, to) else {
                    continue;
                };
                if reached.contains(ft)
                    && !reached.contains(tt)
                    && facts.is_key(&(tt.clone(), tc.clone()))
                {
                    reached.push(tt.clone());
                    grew = true;
                }
            }
        }
    }
    tables.iter().all(|t| reached.contains(t))
}

impl Rewriter<'_> {
    /// Whether `rule` is enabled.
    pub(super) fn allow(&mut self, rule: Rule) -> bool {
        self.rules.contains(rule)
    }

    /// Records that `rule` changed the query.
    pub(super) fn fire(&mut self, rule: Rule) {
        *self.fired = self.fired.with(rule);
    }

    /// Canonicalises a query bottom-up: its selects, then the rules over whole queries; its
    /// select list is compared as a set (its columns in canonical order).
    pub(super) fn query(&mut self, query: &mut Query) {
        self.query_with(query, true);
    }

    /// [`Rewriter::query`]; with `free_columns` false (a branch of a set operation, whose
    /// columns pair up by position with the other branch's) the select list keeps its order.
    fn query_with(&mut self, query: &mut Query, free_columns: bool) {
        match &mut query.body {
            Body::Select(select) => {
                self.scopes.push(JoinFacts::of(select, self.facts));
                for (expr, _) in &mut query.order_by {
                    self.expr(expr, &select.from);
                }
                self.select(select, &mut query.order_by);
                self.scopes.pop();
            }
            Body::Set {
                all, left, right, ..
            } => {
                self.query_with(left, false);
                self.query_with(right, false);
                if !*all {
                    self.distinct_in_set_context(left);
                    self.distinct_in_set_context(right);
                }
            }
        }
        if let Some(limit) = &mut query.limit {
            self.expr(limit, &[]);
        }
        self.self_set_op(query);
        self.set_as_condition(query);
        self.in_as_join(query);
        self.extreme_subquery(query);
        self.extreme_order_limit(query);
        if free_columns {
            sort_columns(query);
        }
        if let Body::Set {
            op: SetOp::Union | SetOp::Intersect,
            left,
            right,
            ..
        } = &mut query.body
        {
            if right < left {
                std::mem::swap(left, right);
            }
        }
    }

    /// Canonicalises a select; `order_by` is its query's ORDER BY, which rules that replace
    /// columns (13, 16) rewrite too.
    fn select(&mut self, select: &mut Select, order_by: &mut [(Expr, bool)]) {
        // A sub-query's columns are read by name, unless `*` shows them in their order.
        let star = select.items.contains(&Expr::Star);
        for (_, source) in &mut select.from {
            if let Source::Derived(query) = source {
                self.query_with(query, !star);
            }
        }
        let from = select.from.clone();
        for expr in select
            .items
            .iter_mut()
            .chain(select.on.iter_mut())
            .chain(select.filter.iter_mut())
            .chain(select.group_by.iter_mut())
            .chain(select.having.iter_mut())
        {
            self.expr(expr, &from);
        }
        self.anti_join(select, order_by);
        if inner_only(&select.from) {
            // Inner joins: the ON conditions are one conjunction over the whole FROM.
            let conjuncts = std::mem::take(&mut select.on)
                .into_iter()
                .flat_map(into_conjuncts)
                .collect();
            select.on = conjuncts;
            select.on.sort();
            select.on.dedup();
        }
        self.exists_as_in(select);
        self.self_in(select);
        self.star_columns(select);
        self.is_not_null_under_in(select);
        self.in_whole_parent(select);
        self.is_not_null(select);
        select.group_by.sort();
        self.group_by_key(select);
        self.unneeded_join(select, order_by);
        self.is_not_null_under_aggregates(select);
        self.join_column(select, order_by);
        self.redundant_distinct(select);
        if inner_only(&select.from) {
            select.from.sort();
        }
        select.on.sort();
        select.group_by.sort();
    }

    /// Canonicalises an expression bottom-up (sub-queries included).
    pub(super) fn expr(&mut self, expr: &mut Expr, from: &[(JoinKind, Source)]) {
        match expr {
            Expr::Func { args, .. } => args.iter_mut().for_each(|a| self.expr(a, from)),
            Expr::Binary { left, right, .. } => {
                self.expr(left, from);
                self.expr(right, from);
            }
            Expr::And(list) | Expr::Or(list) => list.iter_mut().for_each(|a| self.expr(a, from)),
            Expr::Not(inner) => self.expr(inner, from),
            Expr::IsNull { expr, .. } => self.expr(expr, from),
            Expr::InList { expr, list, .. } => {
                self.expr(expr, from);
                list.iter_mut().for_each(|a| self.expr(a, from));
            }
            Expr::InQuery { expr, query, .. } => {
                self.expr(expr, from);
                self.query(query);
                self.distinct_in_set_context(query);
            }
            Expr::Between {
                expr, low, high, ..
            } => {
                self.expr(expr, from);
                self.expr(low, from);
                self.expr(high, from);
            }
            Expr::Scalar(query) | Expr::Exists { query, .. } => self.query(query),
            _ => {}
        }
        self.expr_rules(expr, from);
    }

    /// The always-valid rewrites (15, 19, 20), rules 7 and 11, and canonical operand order.
    fn expr_rules(&mut self, expr: &mut Expr, from: &[(JoinKind, Source)]) {
        self.in_list(expr);
        self.between(expr);
        self.not_comparison(expr);
        self.distinct_aggregate_of_key(expr);
        self.count_star(expr, from);
        if let Expr::Binary { op, left, right } = expr {
            if is_comparison(op) {
                self.numeric_string(left, right);
                self.numeric_string(right, left);
            }
            let (op_now, l, r) = (op.clone(), (**left).clone(), (**right).clone());
            *expr = comparison(&op_now, l, r);
        }
        flatten(expr);
    }

    /// What the joins of the select being rewritten guarantee.
    pub(super) fn scope(&self) -> &JoinFacts {
        static NONE: JoinFacts = JoinFacts {
            joined: Vec::new(),
            unduplicated: Vec::new(),
        };
        self.scopes.last().unwrap_or(&NONE)
    }

    /// True when `expr` is a UNIQUE NOT NULL column, the key most rules need.
    pub(super) fn is_key_column(&self, expr: &Expr) -> bool {
        let Expr::Column(t, c) = expr else {
            return false;
        };
        let id: ColumnId = (t.clone(), c.clone());
        self.facts.is_key(&id)
    }
}

/// Puts the columns of a query whose column order does not matter in canonical order: a
/// select's list sorted; a set operation's branches all permuted alike, by the order that sorts
/// its first branch (the branches pair up by position).
fn sort_columns(query: &mut Query) {
    let mut lists = Vec::new();
    select_lists(query, &mut lists);
    let Some(first) = lists.first() else {
        return;
    };
    let mut order: Vec<usize> = (0..first.len()).collect();
    order.sort_by(|a, b| first[*a].cmp(&first[*b]));
    if lists.iter().any(|list| list.len() != order.len()) {
        return;
    }
    for list in lists {
        let permuted = order.iter().map(|i| list[*i].clone()).collect();
        *list = permuted;
    }
}

/// The select lists of a query's branches, left to right.
fn select_lists<'q>(query: &'q mut Query, lists: &mut Vec<&'q mut Vec<Expr>>) {
    match &mut query.body {
        Body::Select(select) => lists.push(&mut select.items),
        Body::Set { left, right, .. } => {
            select_lists(left, lists);
            select_lists(right, lists);
        }
    }
}

/// True when two columns an ON equates hold the same values (same type affinity), so either
/// can be shown or grouped on for the other: an INTEGER `1` joined with a TEXT `'1'` cannot.
pub(super) fn stand_for_each_other(a: &Expr, b: &Expr, facts: &DbFacts) -> bool {
    match (a, b) {
        (Expr::Column(ta, ca), Expr::Column(tb, cb)) => {
            facts.same_affinity(&(ta.clone(), ca.clone()), &(tb.clone(), cb.clone()))
        }
        _ => false,
    }
}

/// `(column, representative)` pairs from `a = b` ON conjuncts between columns.
pub(super) fn join_classes(on: &[Expr], facts: &DbFacts) -> Vec<(Expr, Expr)> {
    let mut pairs: Vec<(Expr, Expr)> = on_equalities(on)
        .into_iter()
        .filter(|(a, b)| stand_for_each_other(a, b, facts))
        .map(|(a, b)| if a < b { (b, a) } else { (a, b) })
        .collect();
    let mut changed = true;
    while changed {
        changed = false;
        for i in 0..pairs.len() {
            for j in 0..pairs.len() {
                if pairs[i].1 == pairs[j].0 && pairs[i].1 != pairs[j].1 {
                    pairs[i].1 = pairs[j].1.clone();
                    changed = true;
                }
            }
        }
    }
    pairs
}

/// The `column = column` conjuncts of inner-join ON conditions.
fn on_equalities(on: &[Expr]) -> Vec<(Expr, Expr)> {
    let mut pairs = Vec::new();
    for condition in on {
        let conjuncts = conjuncts_of(condition);
        for conjunct in conjuncts {
            if let Expr::Binary { op, left, right } = conjunct {
                if op == "="
                    && matches!(**left, Expr::Column(..))
                    && matches!(**right, Expr::Column(..))
                {
                    pairs.push(((**left).clone(), (**right).clone()));
                }
            }
        }
    }
    pairs
}
