//! Spider's official hardness classifier (easy / medium / hard / extra), over the Spider
//! structure, with the official counting rules kept as they are.

use super::ir::{Agg, Connective, Operand, Sql, WhereOp};

/// Spider difficulty levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Hardness {
    /// easy
    Easy,
    /// medium
    Medium,
    /// hard
    Hard,
    /// extra hard
    Extra,
}

impl Hardness {
    /// The official label.
    pub fn as_str(self) -> &'static str {
        match self {
            Hardness::Easy => "easy",
            Hardness::Medium => "medium",
            Hardness::Hard => "hard",
            Hardness::Extra => "extra",
        }
    }
}

/// The official `eval_hardness`.
pub fn hardness(sql: &Sql) -> Hardness {
    let (c1, c2, others) = (component1(sql), component2(sql), others(sql));
    if c1 <= 1 && others == 0 && c2 == 0 {
        Hardness::Easy
    } else if (others <= 2 && c1 <= 1 && c2 == 0) || (c1 <= 2 && others < 2 && c2 == 0) {
        Hardness::Medium
    } else if (c2 == 0 && ((others > 2 && c1 <= 2) || (c1 == 3 && others <= 2)))
        || (c1 <= 1 && others == 0 && c2 <= 1)
    {
        Hardness::Hard
    } else {
        Hardness::Extra
    }
}

/// WHERE, GROUP BY, ORDER BY, LIMIT, each extra FROM unit, each OR, each LIKE.
fn component1(sql: &Sql) -> usize {
    let conditions = [&sql.from.conds, &sql.where_, &sql.having];
    let present = [
        !sql.where_.is_empty(),
        !sql.group_by.is_empty(),
        sql.order_by.is_some(),
        sql.limit.is_some(),
    ];
    let ors = conditions
        .iter()
        .flat_map(|c| &c.connectives)
        .filter(|&&c| c == Connective::Or)
        .count();
    let likes = conditions
        .iter()
        .flat_map(|c| &c.units)
        .filter(|u| u.op == WhereOp::Like)
        .count();
    present.iter().filter(|&&p| p).count()
        + sql.from.table_units.len().saturating_sub(1)
        + ors
        + likes
}

/// Nested queries in conditions, plus INTERSECT / UNION / EXCEPT (FROM sub-queries do not count).
fn component2(sql: &Sql) -> usize {
    let nested_values = [&sql.from.conds, &sql.where_, &sql.having]
        .iter()
        .flat_map(|c| &c.units)
        .flat_map(|u| [&u.val1, &u.val2])
        .filter(|v| matches!(v, Some(Operand::Sql(_))))
        .count();
    nested_values
        + [&sql.intersect, &sql.except, &sql.union]
            .iter()
            .filter(|s| s.is_some())
            .count()
}

/// More than one aggregate, selected column, WHERE condition or GROUP BY column. The official
/// aggregate count also counts NOT-conditions in WHERE and HAVING and every AND/OR in HAVING.
fn others(sql: &Sql) -> usize {
    let select_aggs = sql
        .select
        .iter()
        .filter(|(agg, _)| *agg != Agg::None)
        .count();
    let where_nots = sql.where_.units.iter().filter(|u| u.not).count();
    let group_aggs = sql.group_by.iter().filter(|c| c.agg != Agg::None).count();
    let order_aggs = sql.order_by.as_ref().map_or(0, |(_, units)| {
        units
            .iter()
            .flat_map(|u| std::iter::once(&u.left).chain(u.right.as_ref()))
            .filter(|c| c.agg != Agg::None)
            .count()
    });
    let having_items =
        sql.having.units.iter().filter(|u| u.not).count() + sql.having.connectives.len();
    let aggregates = select_aggs + where_nots + group_aggs + order_aggs + having_items;
    [
        aggregates > 1,
        sql.select.len() > 1,
        sql.where_.flat_len() > 1,
        sql.group_by.len() > 1,
    ]
    .iter()
    .filter(|&&b| b)
    .count()
}
