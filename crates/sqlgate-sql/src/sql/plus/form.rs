//! The canonical form of ESM+ queries and the generic helpers over it: two queries are
//! equivalent for ESM+ when their canonical forms are equal, so these types derive `Ord` and
//! `Eq` and the rewriting sorts what SQL leaves unordered.

/// A canonical query.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Query {
    /// The select or set operation.
    pub(super) body: Body,
    /// ORDER BY terms, `true` for DESC.
    pub(super) order_by: Vec<(Expr, bool)>,
    /// The LIMIT value, if any.
    pub(super) limit: Option<Expr>,
}

/// What a query computes: one select, or a set operation between two queries.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum Body {
    Select(Box<Select>),
    Set {
        op: SetOp,
        all: bool,
        left: Box<Query>,
        right: Box<Query>,
    },
}

/// The set operator of a [`Body::Set`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum SetOp {
    Union,
    Intersect,
    Except,
}

/// One SELECT with its own clauses (ORDER BY and LIMIT belong to its [`Query`]).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) struct Select {
    /// SELECT DISTINCT.
    pub(super) distinct: bool,
    /// The select list.
    pub(super) items: Vec<Expr>,
    /// FROM entries with how each is joined.
    pub(super) from: Vec<(JoinKind, Source)>,
    /// ON conditions (an outer join's wrapped in a `left on` / `right on` / `full on` function).
    pub(super) on: Vec<Expr>,
    /// The WHERE condition.
    pub(super) filter: Option<Expr>,
    /// GROUP BY terms.
    pub(super) group_by: Vec<Expr>,
    /// The HAVING condition.
    pub(super) having: Option<Expr>,
}

/// How a FROM entry is joined to the ones before it (the first is `Inner`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum JoinKind {
    Inner,
    Left,
    Right,
    Full,
}

/// A FROM entry: a schema table or a sub-query.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum Source {
    Table(String),
    Derived(Box<Query>),
}

/// A resolved expression: columns are `(table, column)`, literals canonical.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum Expr {
    Column(String, String),
    Star,
    Number(String),
    Text(String),
    Keyword(String),
    Func {
        name: String,
        distinct: bool,
        args: Vec<Expr>,
    },
    Binary {
        op: String,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    And(Vec<Expr>),
    Or(Vec<Expr>),
    Not(Box<Expr>),
    IsNull {
        expr: Box<Expr>,
        negated: bool,
    },
    InList {
        expr: Box<Expr>,
        list: Vec<Expr>,
        negated: bool,
    },
    InQuery {
        expr: Box<Expr>,
        query: Box<Query>,
        negated: bool,
    },
    Between {
        expr: Box<Expr>,
        low: Box<Expr>,
        high: Box<Expr>,
        negated: bool,
    },
    Scalar(Box<Query>),
    Exists {
        query: Box<Query>,
        negated: bool,
    },
    Other(String),
}

/// A comparison in canonical orientation: `>`/`>=` become `<`/`<=` with sides swapped, and the
/// sides of `=` and `!=` are sorted.
pub(super) fn comparison(op: &str, left: Expr, right: Expr) -> Expr {
    let (op, left, right) = match op {
        ">" => ("<", right, left),
        ">=" => ("<=", right, left),
        "=" | "!=" if right < left => (op, right, left),
        _ => (op, left, right),
    };
    Expr::Binary {
        op: op.to_string(),
        left: Box::new(left),
        right: Box::new(right),
    }
}

/// True for the comparison operators rule 11 and orientation apply to.
pub(super) fn is_comparison(op: &str) -> bool {
    matches!(op, "=" | "!=" | "<" | ">" | "<=" | ">=")
}

/// The comparison that is true exactly when `op` is false (rule 20).
pub(super) fn negate(op: &str) -> Option<&'static str> {
    Some(match op {
        "=" => "!=",
        "!=" => "=",
        "<" => ">=",
        ">" => "<=",
        "<=" => ">",
        ">=" => "<",
        _ => return None,
    })
}

/// Flattens a nested AND (or OR), sorts and de-duplicates its operands; other expressions stay.
pub(super) fn flatten(expr: &mut Expr) {
    let is_and = matches!(expr, Expr::And(_));
    let list = match expr {
        Expr::And(list) | Expr::Or(list) => std::mem::take(list),
        _ => return,
    };
    let mut flat = Vec::new();
    for item in list {
        match item {
            Expr::And(inner) if is_and => flat.extend(inner),
            Expr::Or(inner) if !is_and => flat.extend(inner),
            other => flat.push(other),
        }
    }
    flat.sort();
    flat.dedup();
    *expr = if flat.len() == 1 {
        flat.pop().expect("one operand")
    } else if is_and {
        Expr::And(flat)
    } else {
        Expr::Or(flat)
    };
}

/// The flattened AND of `list` (`None` when empty: no condition).
pub(super) fn conjunction(mut list: Vec<Expr>) -> Option<Expr> {
    let mut expr = match list.len() {
        0 => return None,
        1 => list.pop()?,
        _ => Expr::And(list),
    };
    flatten(&mut expr);
    Some(expr)
}

/// The conjuncts of `condition`: the items of an AND, else the condition alone.
pub(super) fn into_conjuncts(condition: Expr) -> Vec<Expr> {
    match condition {
        Expr::And(list) => list,
        other => vec![other],
    }
}

/// [`into_conjuncts`] of a borrowed condition.
pub(super) fn conjuncts_of(condition: &Expr) -> &[Expr] {
    match condition {
        Expr::And(list) => list.as_slice(),
        other => std::slice::from_ref(other),
    }
}

/// True when an ON equality of `on` names `column`, so the join already keeps it non-NULL.
pub(super) fn equated_by(on: &[Expr], column: &Expr) -> bool {
    on.iter().any(|condition| {
        conjuncts_of(condition).iter().any(|c| {
            matches!(c, Expr::Binary { op, left, right }
                if op == "=" && (**left == *column || **right == *column))
        })
    })
}

/// True when `filter` has the top-level conjunct `column IS NOT NULL`.
pub(super) fn filtered_not_null(filter: Option<&Expr>, column: &Expr) -> bool {
    let conjuncts = match filter {
        Some(Expr::And(list)) => list.as_slice(),
        Some(other) => std::slice::from_ref(other),
        None => &[],
    };
    conjuncts
        .iter()
        .any(|c| matches!(c, Expr::IsNull { expr, negated: true } if **expr == *column))
}

/// True when every FROM entry is inner-joined, as most rules require.
pub(super) fn inner_only(from: &[(JoinKind, Source)]) -> bool {
    from.iter().all(|(kind, _)| *kind == JoinKind::Inner)
}

/// True when some FROM entry is outer-joined (NULLs may appear).
pub(super) fn has_outer_join(from: &[(JoinKind, Source)]) -> bool {
    !inner_only(from)
}

/// A numeric literal's canonical text, its type kept: an INTEGER literal (`5`, `05`) as the
/// integer, a REAL one (`5.0`, `5.`, `50e-1`) as the float with its fraction (`5.0`), since
/// SQLite keeps them apart (`sum(x) / 2` divides as integers, `sum(x) / 2.0` does not).
pub(super) fn canonical_number(text: &str) -> String {
    if !text.contains(['.', 'e', 'E']) {
        if let Ok(n) = text.parse::<i64>() {
            return n.to_string();
        }
    }
    match text.parse::<f64>() {
        Ok(n) if n.is_finite() => format!("{n:?}"),
        _ => text.to_string(),
    }
}

/// Calls `f` on every expression of a select's own clauses and its query's ORDER BY.
pub(super) fn for_each_expr(
    select: &mut Select,
    order_by: &mut [(Expr, bool)],
    mut f: impl FnMut(&mut Expr),
) {
    for expr in select
        .items
        .iter_mut()
        .chain(select.on.iter_mut())
        .chain(select.filter.iter_mut())
        .chain(select.group_by.iter_mut())
        .chain(select.having.iter_mut())
        .chain(order_by.iter_mut().map(|(e, _)| e))
    {
        f(expr);
    }
}

/// True when the expression (sub-queries included) may name a column of `table`; an expression
/// kept as unresolved text counts as naming every table.
pub(super) fn mentions_table(expr: &Expr, table: &str) -> bool {
    let any = |list: &[Expr]| list.iter().any(|e| mentions_table(e, table));
    match expr {
        Expr::Column(t, _) => t == table,
        Expr::Star | Expr::Number(_) | Expr::Text(_) | Expr::Keyword(_) => false,
        Expr::Other(_) => true,
        Expr::Func { args: list, .. } | Expr::And(list) | Expr::Or(list) => any(list),
        Expr::Binary { left, right, .. } => {
            mentions_table(left, table) || mentions_table(right, table)
        }
        Expr::Not(inner) | Expr::IsNull { expr: inner, .. } => mentions_table(inner, table),
        Expr::InList { expr, list, .. } => mentions_table(expr, table) || any(list),
        Expr::InQuery { expr, query, .. } => {
            mentions_table(expr, table) || query_mentions_table(query, table)
        }
        Expr::Between {
            expr, low, high, ..
        } => [expr, low, high]
            .into_iter()
            .any(|e| mentions_table(e, table)),
        Expr::Scalar(query) | Expr::Exists { query, .. } => query_mentions_table(query, table),
    }
}

/// True when any expression of `query` (nested sub-queries included) may name a column of
/// `table`.
fn query_mentions_table(query: &Query, table: &str) -> bool {
    let in_body = match &query.body {
        Body::Select(select) => {
            select
                .items
                .iter()
                .chain(&select.on)
                .chain(&select.filter)
                .chain(&select.group_by)
                .chain(&select.having)
                .any(|e| mentions_table(e, table))
                || select.from.iter().any(|(_, source)| {
                    matches!(source, Source::Derived(q) if query_mentions_table(q, table))
                })
        }
        Body::Set { left, right, .. } => {
            query_mentions_table(left, table) || query_mentions_table(right, table)
        }
    };
    in_body
        || query.order_by.iter().any(|(e, _)| mentions_table(e, table))
        || query.limit.iter().any(|e| mentions_table(e, table))
}
