//! The Spider clause structure (the dict `process_sql.get_sql` returns), as Rust types.

/// Aggregates, in the official `AGG_OPS` order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Agg {
    /// No aggregate.
    None,
    /// `max`.
    Max,
    /// `min`.
    Min,
    /// `count`.
    Count,
    /// `sum`.
    Sum,
    /// `avg`.
    Avg,
}

impl Agg {
    /// The aggregate a lower-case token names.
    pub fn from_token(token: &str) -> Option<Agg> {
        Some(match token {
            "none" => Agg::None,
            "max" => Agg::Max,
            "min" => Agg::Min,
            "count" => Agg::Count,
            "sum" => Agg::Sum,
            "avg" => Agg::Avg,
            _ => return None,
        })
    }
}

/// Arithmetic between two columns, in the official `UNIT_OPS` order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum UnitOp {
    /// A single column.
    None,
    /// `-`.
    Minus,
    /// `+`.
    Plus,
    /// `*`.
    Times,
    /// `/`.
    Divide,
}

impl UnitOp {
    /// The operator a token names (`none` included, as the official tuple has it).
    pub fn from_token(token: &str) -> Option<UnitOp> {
        Some(match token {
            "none" => UnitOp::None,
            "-" => UnitOp::Minus,
            "+" => UnitOp::Plus,
            "*" => UnitOp::Times,
            "/" => UnitOp::Divide,
            _ => return None,
        })
    }
}

/// Condition operators, in the official `WHERE_OPS` order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WhereOp {
    /// `not` (as an operator token).
    Not,
    /// `between`.
    Between,
    /// `=`.
    Eq,
    /// `>`.
    Gt,
    /// `<`.
    Lt,
    /// `>=`.
    Ge,
    /// `<=`.
    Le,
    /// `!=`.
    Ne,
    /// `in`.
    In,
    /// `like`.
    Like,
    /// `is`.
    Is,
    /// `exists`.
    Exists,
}

impl WhereOp {
    /// The operator a lower-case token names.
    pub fn from_token(token: &str) -> Option<WhereOp> {
        Some(match token {
            "not" => WhereOp::Not,
            "between" => WhereOp::Between,
            "=" => WhereOp::Eq,
            ">" => WhereOp::Gt,
            "<" => WhereOp::Lt,
            ">=" => WhereOp::Ge,
            "<=" => WhereOp::Le,
            "!=" => WhereOp::Ne,
            "in" => WhereOp::In,
            "like" => WhereOp::Like,
            "is" => WhereOp::Is,
            "exists" => WhereOp::Exists,
            _ => return None,
        })
    }
}

/// `(agg_id, col_id, isDistinct)`; `col` is an official id such as `__singer.name__` or `__all__`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ColUnit {
    /// Aggregate applied.
    pub agg: Agg,
    /// Column id.
    pub col: String,
    /// `DISTINCT` inside the aggregate (or before the column).
    pub distinct: bool,
}

/// `(unit_op, col_unit1, col_unit2)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ValUnit {
    /// Arithmetic operator.
    pub op: UnitOp,
    /// Left column.
    pub left: ColUnit,
    /// Right column, when `op` is not `None`.
    pub right: Option<ColUnit>,
}

/// A condition's right-hand side.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    /// A number (the official parser stores `float(token)`).
    Number(f64),
    /// A string literal, with its double quotes as the official tokenizer leaves them.
    Text(String),
    /// A sub-query.
    Sql(Box<Sql>),
    /// A column.
    Column(ColUnit),
}

/// `(not_op, op_id, val_unit, val1, val2)`.
#[derive(Debug, Clone, PartialEq)]
pub struct CondUnit {
    /// Preceded by NOT (`not in`, `not like`, ...).
    pub not: bool,
    /// The operator.
    pub op: WhereOp,
    /// The left-hand side.
    pub val_unit: ValUnit,
    /// First value.
    pub val1: Option<Operand>,
    /// Second value (BETWEEN).
    pub val2: Option<Operand>,
}

/// `and` / `or` between condition units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Connective {
    /// `and`.
    And,
    /// `or`.
    Or,
}

/// `[cond_unit1, 'and'/'or', cond_unit2, ...]`: `units.len() == connectives.len() + 1` unless empty.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Condition {
    /// The condition units.
    pub units: Vec<CondUnit>,
    /// The connectives between consecutive units.
    pub connectives: Vec<Connective>,
}

impl Condition {
    /// No condition.
    pub fn is_empty(&self) -> bool {
        self.units.is_empty()
    }

    /// Python's `len()` of the official flat list.
    pub fn flat_len(&self) -> usize {
        self.units.len() + self.connectives.len()
    }
}

/// A FROM item.
#[derive(Debug, Clone, PartialEq)]
pub enum TableUnit {
    /// A sub-query.
    Sql(Box<Sql>),
    /// A table, by id (`__singer__`).
    Table(String),
}

/// `{'table_units': [...], 'conds': condition}`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct From {
    /// Tables and sub-queries.
    pub table_units: Vec<TableUnit>,
    /// JOIN ... ON conditions.
    pub conds: Condition,
}

/// ORDER BY direction (one for the whole clause, the last one written).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OrderDir {
    /// `asc` (default).
    Asc,
    /// `desc`.
    Desc,
}

/// One query (with its INTERSECT / UNION / EXCEPT continuation).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sql {
    /// `SELECT DISTINCT`.
    pub select_distinct: bool,
    /// `(agg_id, val_unit)` per selected item.
    pub select: Vec<(Agg, ValUnit)>,
    /// FROM.
    pub from: From,
    /// WHERE.
    pub where_: Condition,
    /// GROUP BY columns.
    pub group_by: Vec<ColUnit>,
    /// HAVING.
    pub having: Condition,
    /// ORDER BY: direction and items; `None` when absent.
    pub order_by: Option<(OrderDir, Vec<ValUnit>)>,
    /// LIMIT value.
    pub limit: Option<i64>,
    /// INTERSECT continuation.
    pub intersect: Option<Box<Sql>>,
    /// UNION continuation.
    pub union: Option<Box<Sql>>,
    /// EXCEPT continuation.
    pub except: Option<Box<Sql>>,
}
