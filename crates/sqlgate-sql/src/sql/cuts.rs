//! Where a query's result is cut by a LIMIT / OFFSET / FETCH, and how to see whether that cut
//! is determined by the query's own ORDER BY: the probe queries that fetch one row past each cut
//! (with the sort keys that are not output columns appended to the projection), and the reading
//! of their rows ([`undetermined`]).
//!
//! A cut is undetermined when the rows on either side of it tie on every sort key (without
//! ORDER BY every row ties) while their outputs differ: which of them the engine returns is its
//! plan's choice, not the query's (issues 44 and 45; docs/METRICS.md, "Unstable verdicts").
//! Every query with a cut gets a probe: the statement's own, and each nested query's (any
//! parenthesis opening with SELECT or WITH: a scalar or IN sub-query, a function's argument, a
//! derived table, a CTE body), run on its own with the statement's WITH clause (a correlated one
//! fails to run and decides nothing). A cut whose count is not a
//! number, FETCH ... PERCENT, ORDER BY ALL, and an ORDER BY whose keys cannot be fetched
//! without changing the rows (a key that is not an output column of a DISTINCT or a set
//! operation, or any key beside a `*`) are not checked; neither is a query that does not parse.

use crate::sql::features::FeatureDialect;
use sqlparser::ast::{
    Expr, Fetch, LimitClause, OrderByKind, Query, SelectItem, SetExpr, Statement, UnaryOperator,
    Value as AstValue, With,
};
use sqlparser::dialect::{Dialect, MySqlDialect, PostgreSqlDialect, SQLiteDialect};
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, Tokenizer};

/// Where a probe's rows hold one sort key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyColumn {
    /// The query's own output column at this position.
    Output(usize),
    /// The n-th column appended after the output columns.
    Appended(usize),
}

/// One probe: a query fetching one row past each of its cuts, and how to read its rows.
#[derive(Debug, Clone, PartialEq)]
pub struct CutProbe {
    /// The probe SQL: the query without OFFSET / FETCH, limited to one row past the last cut,
    /// its appended sort keys last in every row.
    pub sql: String,
    /// The cuts, as row positions: a cut at `p` lies between rows `p - 1` and `p` (never 0).
    pub cuts: Vec<usize>,
    /// The sort keys' columns; `None` when the query has no ORDER BY (every row ties).
    pub keys: Option<Vec<KeyColumn>>,
    /// How many sort-key columns the probe appends after the output columns.
    pub appended: usize,
    /// The probe without its rank column ([`ranks_ties`]), when it has one: a rank that fails
    /// to run where this runs (a key the window cannot order by) decides the cut undetermined.
    pub plain: Option<String>,
    /// Whether each row's last two columns count the rows that tie with it (its peers, all of
    /// them, fetched or not) and those of its peers whose output is its own byte for byte: a cut
    /// inside a tie whose counts differ is undetermined although the fetched peers agree.
    pub counted: bool,
}

/// How a server's probe reads ties ([`ranks_ties`]).
#[derive(Clone, Copy)]
struct Ranking<'d> {
    /// The dialect its columns are parsed in.
    parser: &'d dyn Dialect,
    /// Whether it is MySQL / MariaDB's (else PostgreSQL's): how a value's bytes are written.
    mysql: bool,
    /// Whether it counts each row's peers and its alike peers ([`CutProbe::counted`]).
    counted: bool,
}

/// Whether the probes of `dialect` read ties from a rank the server computes, not from the
/// keys' values: on a server, rows tie as its ORDER BY compares them, under the keys' collation
/// (`ada` and `ADA` are one key under MariaDB's `utf8mb4_general_ci`, or under a PostgreSQL
/// nondeterministic collation), which the fetched values compared byte for byte do not show
/// (red team round 9). Each such probe appends `DENSE_RANK() OVER (ORDER BY` the query's own
/// sort keys`)`: rows with one rank are peers, the rows the server's sort ties. A cut's probe
/// also counts each row's peers and those whose output is the row's own as bytes
/// (`COUNT(*) OVER (PARTITION BY` the keys`)`, then the keys and each output's bytes), since it
/// fetches one row past the cut, not the whole tie.
/// SQLite and DuckDB, run from sqlgate's own engines on the trusted files, keep the values.
pub fn ranks_ties(dialect: FeatureDialect) -> bool {
    matches!(dialect, FeatureDialect::Mysql | FeatureDialect::Postgresql)
}

/// The most probes a query is checked with: a query with more cuts (a hostile one nesting
/// hundreds of sub-queries) is held undetermined without running any, so no cut goes unchecked.
pub const MOST_PROBES: usize = 32;

/// Whether `sql` may have a cut (LIMIT, OFFSET, FETCH) in the words of its text: only such
/// queries are parsed and probed, so the others cost nothing. (TOP is SQL Server's, which no
/// engine of sqlgate speaks.)
pub fn may_cut(sql: &str) -> bool {
    let lower = sql.to_ascii_lowercase();
    ["limit", "offset", "fetch"]
        .iter()
        .any(|word| lower.contains(word))
}

/// The probes of every cut of `sql` read in `dialect`; `None` when it does not parse (not
/// checked), empty when it has no cut that can be checked.
pub fn probes(sql: &str, dialect: FeatureDialect) -> Option<Vec<CutProbe>> {
    if !may_cut(sql) {
        return Some(Vec::new());
    }
    let mysql = dialect == FeatureDialect::Mysql;
    let ranked = ranks_ties(dialect);
    let dialect = parser_dialect(dialect);
    let rank = ranked.then_some(Ranking {
        parser: dialect.as_ref(),
        mysql,
        counted: true,
    });
    let statements = Parser::parse_sql(dialect.as_ref(), sql).ok()?;
    let with = statements.iter().find_map(|statement| match statement {
        Statement::Query(query) => query.with.as_ref(),
        _ => None,
    });
    let own = statements.iter().filter_map(|statement| match statement {
        Statement::Query(query) => cut_probe(query, None, rank),
        _ => None,
    });
    let nested = nested_queries(sql, dialect.as_ref());
    let nested = nested
        .iter()
        .filter_map(|query| cut_probe(query, with, rank));
    Some(own.chain(nested).collect())
}

/// Whether a probe's `rows` show an undetermined cut: at some cut, the row just inside and the
/// row just outside tie on the sort keys, and the rows of that tie (as far as fetched) do not
/// all have the same output.
pub fn undetermined<R: AsRef<[T]>, T: PartialEq>(probe: &CutProbe, rows: &[R]) -> bool {
    probe.cuts.iter().any(|&cut| {
        let (Some(inside), Some(outside)) =
            (cut.checked_sub(1).and_then(|i| rows.get(i)), rows.get(cut))
        else {
            return false;
        };
        let cut_key = sort_key(probe, outside.as_ref());
        if cut_key.is_none() || sort_key(probe, inside.as_ref()) != cut_key {
            return false;
        }
        if probe.counted && peers_differ(outside.as_ref()) {
            return true;
        }
        let mut tied = rows
            .iter()
            .map(AsRef::as_ref)
            .filter(|row| sort_key(probe, row) == cut_key);
        let first = tied.next().map(|row| output(probe, row));
        tied.any(|row| Some(output(probe, row)) != first)
    })
}

/// The probe of the row order an ordered comparison reads from `sql` (read in `dialect`): the
/// query itself, its outermost ORDER BY's keys that are not output columns appended to the
/// projection, and no cut (`cuts` empty: every pair of adjacent rows is read, by
/// [`ties_differ`]). Without an outermost ORDER BY, or when its keys cannot be read or appended
/// (see [`probes`]), or when `sql` does not parse as one query, the probe is `sql` as written with
/// no keys: every row ties, so the order is undetermined as soon as two rows differ (fail
/// closed).
pub fn order_probe(sql: &str, dialect: FeatureDialect) -> CutProbe {
    let unordered = CutProbe {
        sql: sql.to_string(),
        cuts: Vec::new(),
        keys: None,
        appended: 0,
        plain: None,
        counted: false,
    };
    let parser = parser_dialect(dialect);
    let rank = ranks_ties(dialect).then_some(Ranking {
        parser: parser.as_ref(),
        mysql: dialect == FeatureDialect::Mysql,
        counted: false,
    });
    let statements = Parser::parse_sql(parser.as_ref(), sql);
    let Ok([Statement::Query(query)]) = statements.as_deref() else {
        return unordered;
    };
    let Some(OrderByKind::Expressions(order)) = query.order_by.as_ref().map(|o| &o.kind) else {
        return unordered;
    };
    let exprs: Vec<&Expr> = order.iter().map(|k| &k.expr).collect();
    let Some((keys, extra)) = sort_keys(&query.body, &exprs) else {
        return unordered;
    };
    let mut probe = query.as_ref().clone();
    let Some((keys, appended)) = append_keys(&mut probe, (keys, extra), rank) else {
        return unordered;
    };
    CutProbe {
        sql: match appended {
            0 => sql.to_string(),
            _ => probe.to_string(),
        },
        cuts: Vec::new(),
        keys,
        appended,
        plain: None,
        counted: false,
    }
}

/// Whether an order probe's `rows` ([`order_probe`]) come in an undetermined order: two adjacent
/// rows tie on every sort key (without keys, every row ties) while their outputs differ, so
/// another plan may return them the other way round.
pub fn ties_differ<R: AsRef<[T]>, T: PartialEq>(probe: &CutProbe, rows: &[R]) -> bool {
    rows.windows(2).any(|pair| {
        let (first, second) = (pair[0].as_ref(), pair[1].as_ref());
        let key = sort_key(probe, first);
        key.is_some()
            && key == sort_key(probe, second)
            && output(probe, first) != output(probe, second)
    })
}

/// Whether a counted probe's row ([`CutProbe::counted`]) has peers whose output is not its own.
fn peers_differ<T: PartialEq>(row: &[T]) -> bool {
    match row {
        [.., peers, alike] => peers != alike,
        _ => true,
    }
}

/// The sqlparser dialect of `dialect`.
pub(crate) fn parser_dialect(dialect: FeatureDialect) -> Box<dyn Dialect> {
    match dialect {
        FeatureDialect::Sqlite => Box::new(SQLiteDialect {}),
        FeatureDialect::Postgresql => Box::new(PostgreSqlDialect {}),
        FeatureDialect::Mysql => Box::new(MySqlDialect {}),
        FeatureDialect::Duckdb => Box::new(sqlparser::dialect::DuckDbDialect {}),
    }
}

/// A probe row's output columns (without the appended sort keys).
fn output<'r, T>(probe: &CutProbe, row: &'r [T]) -> &'r [T] {
    &row[..row.len().saturating_sub(probe.appended)]
}

/// A probe row's sort key (empty without ORDER BY: every row ties); `None` for a row too short.
fn sort_key<'r, T>(probe: &CutProbe, row: &'r [T]) -> Option<Vec<&'r T>> {
    let width = row.len().checked_sub(probe.appended)?;
    let keys = probe.keys.as_deref().unwrap_or_default();
    keys.iter()
        .map(|k| match *k {
            KeyColumn::Output(i) if i < width => row.get(i),
            KeyColumn::Appended(j) => row.get(width + j),
            KeyColumn::Output(_) => None,
        })
        .collect()
}

/// Every query nested in `sql` (tokens in `dialect`): the text inside each parenthesis that
/// opens with SELECT or WITH, wherever it stands (a sub-query in WHERE, a function's argument, a
/// CASE, a join condition, a derived table, a CTE body), parsed on its own. A parse of the whole
/// statement succeeded first, so the nesting is within sqlparser's recursion limit.
pub(crate) fn nested_queries(sql: &str, dialect: &dyn Dialect) -> Vec<Query> {
    let Ok(tokens) = Tokenizer::new(dialect, sql).tokenize() else {
        return Vec::new();
    };
    let opens_query = |i: usize| {
        let next = tokens[i + 1..]
            .iter()
            .find(|t| !matches!(t, Token::Whitespace(_)));
        matches!(next, Some(Token::Word(w)) if matches!(w.keyword, Keyword::SELECT | Keyword::WITH))
    };
    let mut found = Vec::new();
    for open in (0..tokens.len()).filter(|&i| tokens[i] == Token::LParen && opens_query(i)) {
        let Some(close) = matching_paren(&tokens, open) else {
            continue;
        };
        let text: String = tokens[open + 1..close]
            .iter()
            .map(Token::to_string)
            .collect();
        if let Ok(statements) = Parser::parse_sql(dialect, &text) {
            if let [Statement::Query(query)] = statements.as_slice() {
                found.push(query.as_ref().clone());
            }
        }
    }
    found
}

/// The position of the parenthesis that closes the one at `open`.
pub(crate) fn matching_paren(tokens: &[Token], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (position, token) in tokens.iter().enumerate().skip(open) {
        match token {
            Token::LParen => depth += 1,
            Token::RParen => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(position);
                }
            }
            _ => {}
        }
    }
    None
}

/// The rows a cut keeps: OFFSET `offset` (0 without), then at most `limit` (`None`: all).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cut {
    offset: usize,
    limit: Option<usize>,
}

/// The cut of `query` itself, when it has one that can be checked.
fn cut_of(query: &Query) -> Option<Cut> {
    let (limit, offset) = match &query.limit_clause {
        None => (None, None),
        Some(LimitClause::LimitOffset {
            limit,
            offset,
            limit_by,
        }) if limit_by.is_empty() => (limit.as_ref(), offset.as_ref().map(|o| &o.value)),
        Some(LimitClause::OffsetCommaLimit { offset, limit }) => (Some(limit), Some(offset)),
        Some(_) => return None,
    };
    let fetched = match &query.fetch {
        None => None,
        Some(Fetch { percent: true, .. }) => return None,
        Some(Fetch {
            with_ties: true, ..
        }) => Some(None),
        Some(Fetch { quantity, .. }) => Some(quantity.as_ref().map_or(Some(Some(1)), count)?),
    };
    let limit = match (limit, fetched) {
        (Some(_), Some(_)) => return None,
        (Some(limit), None) => count(limit)?,
        (None, Some(fetched)) => fetched,
        (None, None) => None,
    };
    let offset = offset.map_or(Some(Some(0)), count)?.unwrap_or(0);
    Some(Cut { offset, limit })
}

/// A cut's count: `Some(Some(n))` for a number, `Some(None)` for no bound (`ALL`, a negative
/// SQLite LIMIT), `None` for anything else (not checked).
fn count(expr: &Expr) -> Option<Option<usize>> {
    match expr {
        Expr::Value(v) => match &v.value {
            AstValue::Number(n, _) => Some(Some(n.parse().ok()?)),
            AstValue::Null => Some(None),
            _ => None,
        },
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => matches!(count(expr), Some(Some(_))).then_some(None),
        Expr::Nested(inner) => count(inner),
        _ => None,
    }
}

/// The probe of `query`'s own cut (with the statement's `with` when it has none of its own),
/// reading ties from a rank when `rank` says how ([`ranks_ties`]).
fn cut_probe(query: &Query, with: Option<&With>, rank: Option<Ranking<'_>>) -> Option<CutProbe> {
    let cut = cut_of(query)?;
    // A cut past any result a run may read (a hostile `LIMIT 2^64 - 1`) is not checked.
    let end = match cut.limit {
        Some(limit) => Some(cut.offset.checked_add(limit)?),
        None => None,
    };
    let cuts: Vec<usize> = [Some(cut.offset), end]
        .into_iter()
        .flatten()
        .filter(|&p| p > 0)
        .collect();
    let last = cuts.iter().max()?.checked_add(1)?;
    let mut probe = query.clone();
    if probe.with.is_none() {
        probe.with = with.cloned();
    }
    probe.fetch = None;
    probe.limit_clause = Some(LimitClause::LimitOffset {
        limit: Some(Expr::value(AstValue::Number(last.to_string(), false))),
        offset: None,
        limit_by: Vec::new(),
    });
    let plain = probe.to_string();
    let (keys, appended) = match &query.order_by {
        None => (None, 0),
        Some(order) => {
            let OrderByKind::Expressions(order) = &order.kind else {
                return None;
            };
            let exprs: Vec<&Expr> = order.iter().map(|k| &k.expr).collect();
            let (keys, extra) = sort_keys(&query.body, &exprs)?;
            append_keys(&mut probe, (keys, extra), rank)?
        }
    };
    let ranked = rank.is_some() && keys.is_some();
    Some(CutProbe {
        sql: probe.to_string(),
        cuts,
        keys,
        appended,
        plain: ranked.then_some(plain),
        counted: ranked && appended == 3,
    })
}

/// Appends to `probe`'s projection what its rows need to tell which rows tie: with `rank`
/// ([`ranks_ties`]), the rank column (its only key) and, when counted and the projection lists
/// its outputs, the two counts ([`CutProbe::counted`]); else the sort keys `extra` that are not
/// output columns. Returns the keys' columns (`None`: every row ties)
/// and how many columns were appended; `None` when keys must be appended and cannot. A set
/// operation's projection cannot grow, nor can a rank be written over a key that is no
/// expression, so where a rank is needed every row of those ties (fail closed: a cut is
/// undetermined as soon as two rows differ).
fn append_keys(
    probe: &mut Query,
    (keys, extra): (Vec<KeyColumn>, Vec<&Expr>),
    rank: Option<Ranking<'_>>,
) -> Option<(Option<Vec<KeyColumn>>, usize)> {
    let SetExpr::Select(select) = probe.body.as_mut() else {
        return match (rank, extra.is_empty()) {
            (Some(_), _) => Some((None, 0)),
            (None, true) => Some((Some(keys), 0)),
            (None, false) => None,
        };
    };
    let Some(ranking) = rank else {
        (select.projection).extend(extra.iter().map(|e| SelectItem::UnnamedExpr((*e).clone())));
        return Some((Some(keys), extra.len()));
    };
    // The counts would split a DISTINCT's rows that tie under the collation (`ada`, `ADA`).
    let ranking = Ranking {
        counted: ranking.counted && select.distinct.is_none(),
        ..ranking
    };
    match rank_columns(&select.projection, (&keys, &extra), ranking) {
        Some(columns) => {
            let appended = columns.len();
            (select.projection).extend(columns.into_iter().map(SelectItem::UnnamedExpr));
            Some((Some(vec![KeyColumn::Appended(0)]), appended))
        }
        None => Some((None, 0)),
    }
}

/// `DENSE_RANK() OVER (ORDER BY` the sort keys`)`, each output key written as its projection's
/// expression (a window cannot name an output alias or position), and, when `ranking` counts
/// and the projection lists its outputs (no `*`), the peers' and the alike peers' counts
/// (without them, as for a DISTINCT, only the fetched peers are compared).
fn rank_columns(
    projection: &[SelectItem],
    (keys, extra): (&[KeyColumn], &[&Expr]),
    ranking: Ranking<'_>,
) -> Option<Vec<Expr>> {
    let ordered: Vec<String> = (keys.iter())
        .map(|key| match *key {
            KeyColumn::Output(i) => Some(projected(projection.get(i)?)?.to_string()),
            KeyColumn::Appended(j) => Some(extra.get(j)?.to_string()),
        })
        .collect::<Option<_>>()?;
    let keys = ordered.join(", ");
    let mut columns = vec![format!("DENSE_RANK() OVER (ORDER BY {keys})")];
    let outputs: Option<Vec<&Expr>> = projection.iter().map(projected).collect();
    if let (true, Some(outputs)) = (ranking.counted, outputs) {
        let bytes: Vec<String> = (outputs.iter())
            .map(|output| match ranking.mysql {
                true => format!("CAST({output} AS BINARY)"),
                false => format!("CAST({output} AS TEXT) COLLATE \"C\""),
            })
            .collect();
        columns.push(format!("COUNT(*) OVER (PARTITION BY {keys})"));
        columns.push(format!(
            "COUNT(*) OVER (PARTITION BY {keys}, {})",
            bytes.join(", ")
        ));
    }
    (columns.iter())
        .map(|column| {
            Parser::new(ranking.parser)
                .try_with_sql(column)
                .and_then(|mut parser| parser.parse_expr())
                .ok()
        })
        .collect()
}

/// A projection item's expression (`None`: a `*`).
fn projected(item: &SelectItem) -> Option<&Expr> {
    match item {
        SelectItem::UnnamedExpr(expr) | SelectItem::ExprWithAlias { expr, .. } => Some(expr),
        _ => None,
    }
}

/// Each sort key's column, and the keys to append to the projection (those that are not output
/// columns); `None` when a key can be neither read nor appended without changing the rows.
fn sort_keys<'q>(body: &SetExpr, exprs: &[&'q Expr]) -> Option<(Vec<KeyColumn>, Vec<&'q Expr>)> {
    let (projection, appendable) = match body {
        SetExpr::Select(select) => (&select.projection, select.distinct.is_none()),
        SetExpr::SetOperation { .. } => (leftmost_projection(body)?, false),
        _ => return None,
    };
    let starred = projection.iter().any(|item| {
        !matches!(
            item,
            SelectItem::UnnamedExpr(_) | SelectItem::ExprWithAlias { .. }
        )
    });
    let set_operation = matches!(body, SetExpr::SetOperation { .. });
    let mut keys = Vec::new();
    let mut extra = Vec::new();
    for expr in exprs {
        let output = (!starred)
            .then(|| output_column(projection, expr, set_operation))
            .flatten();
        match output {
            Some(position) => keys.push(KeyColumn::Output(position)),
            None if appendable && !is_ordinal(expr) => {
                keys.push(KeyColumn::Appended(extra.len()));
                extra.push(*expr);
            }
            None => return None,
        }
    }
    Some((keys, extra))
}

fn leftmost_projection(body: &SetExpr) -> Option<&Vec<SelectItem>> {
    match body {
        SetExpr::Select(select) => Some(&select.projection),
        SetExpr::SetOperation { left, .. } => leftmost_projection(left),
        SetExpr::Query(query) => leftmost_projection(&query.body),
        _ => None,
    }
}

fn is_ordinal(expr: &Expr) -> bool {
    matches!(expr, Expr::Value(v) if matches!(v.value, AstValue::Number(..)))
}

/// The output column a sort key names: by position (`ORDER BY 2`), by alias, as the same
/// expression, or (over a set operation, whose keys are output names) by a column's name.
fn output_column(projection: &[SelectItem], key: &Expr, by_name: bool) -> Option<usize> {
    if let Expr::Value(v) = key {
        if let AstValue::Number(n, _) = &v.value {
            let position = n.parse::<usize>().ok()?.checked_sub(1)?;
            return (position < projection.len()).then_some(position);
        }
    }
    let text = key.to_string().to_lowercase();
    let name = match key {
        Expr::Identifier(ident) => Some(ident.value.to_lowercase()),
        _ => None,
    };
    projection.iter().position(|item| match item {
        SelectItem::ExprWithAlias { expr, alias } => {
            name.as_deref() == Some(alias.value.to_lowercase().as_str())
                || expr.to_string().to_lowercase() == text
        }
        SelectItem::UnnamedExpr(expr) => {
            expr.to_string().to_lowercase() == text
                || by_name
                    && match (expr, &name) {
                        (Expr::CompoundIdentifier(parts), Some(name)) => parts
                            .last()
                            .is_some_and(|last| last.value.to_lowercase() == *name),
                        _ => false,
                    }
        }
        _ => false,
    })
}

#[cfg(test)]
mod tests;
