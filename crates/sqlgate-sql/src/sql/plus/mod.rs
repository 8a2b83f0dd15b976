//! ESM+'s canonical query form (seed 001): built on sqlparser's AST, it keeps what the Spider IR
//! drops on purpose (values, JOIN kinds and ON conditions, DISTINCT everywhere, LIMIT values, IN
//! value lists), resolves table aliases per sub-query scope and column aliases, keeps
//! parenthesised condition structure, and then applies the equivalence rules of seed 001 Table 1,
//! each only when its assumption holds in [`DbFacts`].
//!
//! What enters: SQL text and the [`DbFacts`] of its database. What leaves: the canonical
//! [`Query`] (two queries are equivalent when theirs are equal) and the [`RuleSet`] of rules that
//! changed it. Apart from the Spider text normaliser (`crate::sql::text`), nothing here imports
//! from outside `crate::sql` but external crates.
//!
//! - `form`: the canonical form and its generic helpers;
//! - `resolve`: sqlparser's AST to the canonical form (names, aliases, scopes);
//! - `rewrite`: the driver that applies the rules bottom-up and sorts what is unordered;
//! - `rules`: one file per rule or family of rules, with its tests.

mod form;
#[cfg(test)]
mod issue_patterns;
mod resolve;
mod rewrite;
mod rules;
#[cfg(test)]
mod test_support;

pub use form::Query;

use crate::sql::facts::DbFacts;
use crate::sql::SqlError;
use resolve::Resolver;
use rewrite::Rewriter;
use sqlparser::ast as sql;
use sqlparser::dialect::SQLiteDialect;
use sqlparser::parser::Parser;

/// Longest query text accepted; longer predictions are wrong without being parsed.
pub const MAX_QUERY_CHARS: usize = 20_000;

/// The equivalence rules of seed 001 Table 1, in the table's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rule {
    /// 1: `WHERE c = (SELECT MIN/MAX(c) FROM t)` = `ORDER BY c ASC/DESC LIMIT 1` (c UNIQUE, NOT NULL).
    ExtremeSubquery,
    /// 2: `SELECT DISTINCT c` = `SELECT c` (c UNIQUE and NOT NULL, one table, no GROUP BY; or
    /// the select an IN sub-query or a set operation's branch, where only the set of rows counts).
    RedundantDistinct,
    /// 3: `q1 INTERSECT q2` on one key column = one query with `d1 AND d2`.
    IntersectAsAnd,
    /// 4: `q1 UNION q2` on one key column = one query with `d1 OR d2`.
    UnionAsOr,
    /// 5: `GROUP BY c1, c2, ...` = `GROUP BY c1` (c1 UNIQUE and NOT NULL, one table).
    GroupByKey,
    /// 6: `SELECT c FROM t EXCEPT q` = `... WHERE c NOT IN (q)` (c never NULL, DISTINCT unless c
    /// UNIQUE; q's NULL rows dropped first, q's column then never NULL); also over several
    /// columns with a key among them, the anti-join `LEFT JOIN u ... WHERE u.z IS NULL`, and
    /// `NOT EXISTS` correlated by one equality.
    ExceptAsNotIn,
    /// 7: `COUNT(c)` = `COUNT(*)` (c NOT NULL, no outer join).
    CountStar,
    /// 8: `WHERE c IS NOT NULL` dropped (c NOT NULL, no outer join; or every item an aggregate
    /// of c that skips NULL, no GROUP BY; or c the column of a top-level IN's sub-query).
    IsNotNull,
    /// 9: `SELECT MIN/MAX(c) FROM t` = `SELECT c FROM t ORDER BY c LIMIT 1` (t non-empty, c NOT NULL).
    ExtremeOrderLimit,
    /// 10: `SELECT *` = the table's columns (one table; columns from the schema).
    StarColumns,
    /// 11: `c = '5'` = `c = 5` (number without a leading zero, c has a type affinity).
    NumericString,
    /// 12: `c2 IN (SELECT c1 FROM t1 WHERE d1)` = `t1 JOIN t2 ON t1.c1 = t2.c2 WHERE d1` (c1 key);
    /// also `EXISTS` correlated by one equality as IN.
    InAsJoin,
    /// 13: a joined table nothing else uses dropped (declared foreign key onto a key; a nullable
    /// one leaves `fk IS NOT NULL`).
    UnneededJoin,
    /// 14: `t1 AS t` = `t1 t` (aliases resolved; always).
    TableAlias,
    /// 15: `c IN (x, y)` = `c = x OR c = y` (always).
    InList,
    /// 16: `t1.c1` = `t2.c2` after `JOIN ON t1.c1 = t2.c2` (inner joins; always).
    JoinColumn,
    /// 17: `c IN (SELECT c FROM t WHERE d)` over t = `WHERE d` (c key).
    SelfIn,
    /// 18: `q UNION/INTERSECT q` = `q` with DISTINCT (always).
    SelfSetOp,
    /// 19: `BETWEEN x AND y` = `>= x AND <= y` (always).
    Between,
    /// 20: `NOT c op x` = `c negated-op x` (always).
    NotComparison,
}

impl Rule {
    /// All rules, in Table 1 order.
    pub const ALL: [Rule; 20] = [
        Rule::ExtremeSubquery,
        Rule::RedundantDistinct,
        Rule::IntersectAsAnd,
        Rule::UnionAsOr,
        Rule::GroupByKey,
        Rule::ExceptAsNotIn,
        Rule::CountStar,
        Rule::IsNotNull,
        Rule::ExtremeOrderLimit,
        Rule::StarColumns,
        Rule::NumericString,
        Rule::InAsJoin,
        Rule::UnneededJoin,
        Rule::TableAlias,
        Rule::InList,
        Rule::JoinColumn,
        Rule::SelfIn,
        Rule::SelfSetOp,
        Rule::Between,
        Rule::NotComparison,
    ];

    /// The rule's name as written in JSONL and summaries (`r<number>_<what>`).
    pub fn name(self) -> &'static str {
        match self {
            Rule::ExtremeSubquery => "r1_extreme_subquery",
            Rule::RedundantDistinct => "r2_redundant_distinct",
            Rule::IntersectAsAnd => "r3_intersect_as_and",
            Rule::UnionAsOr => "r4_union_as_or",
            Rule::GroupByKey => "r5_group_by_key",
            Rule::ExceptAsNotIn => "r6_except_as_not_in",
            Rule::CountStar => "r7_count_star",
            Rule::IsNotNull => "r8_is_not_null",
            Rule::ExtremeOrderLimit => "r9_extreme_order_limit",
            Rule::StarColumns => "r10_star_columns",
            Rule::NumericString => "r11_numeric_string",
            Rule::InAsJoin => "r12_in_as_join",
            Rule::UnneededJoin => "r13_unneeded_join",
            Rule::TableAlias => "r14_table_alias",
            Rule::InList => "r15_in_list",
            Rule::JoinColumn => "r16_join_column",
            Rule::SelfIn => "r17_self_in",
            Rule::SelfSetOp => "r18_self_set_op",
            Rule::Between => "r19_between",
            Rule::NotComparison => "r20_not_comparison",
        }
    }

    /// The rule a name stands for.
    pub fn parse(name: &str) -> Option<Rule> {
        Rule::ALL.into_iter().find(|r| r.name() == name)
    }

    fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

/// A set of rules (bit set over [`Rule`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct RuleSet(u32);

impl RuleSet {
    /// Every rule.
    pub fn all() -> RuleSet {
        RuleSet(Rule::ALL.iter().fold(0, |bits, r| bits | r.bit()))
    }
    /// No rule.
    pub fn none() -> RuleSet {
        RuleSet(0)
    }
    /// Whether `rule` is in the set.
    pub fn contains(self, rule: Rule) -> bool {
        self.0 & rule.bit() != 0
    }
    /// The set with `rule` added.
    pub fn with(self, rule: Rule) -> RuleSet {
        RuleSet(self.0 | rule.bit())
    }
    /// The set without `rule`.
    pub fn without(self, rule: Rule) -> RuleSet {
        RuleSet(self.0 & !rule.bit())
    }
    /// The union of two sets.
    pub fn union(self, other: RuleSet) -> RuleSet {
        RuleSet(self.0 | other.0)
    }
    /// The rules in the set, in Table 1 order.
    pub fn rules(self) -> impl Iterator<Item = Rule> {
        Rule::ALL.into_iter().filter(move |r| self.contains(*r))
    }
}

/// Parses `text` into its canonical form under `rules`; returns the rules that changed it.
pub fn canonical(
    text: &str,
    facts: &DbFacts,
    rules: RuleSet,
) -> Result<(Query, RuleSet), SqlError> {
    let (mut query, aliased) = parse_with_aliases(text, facts)?;
    let mut fired = RuleSet::none();
    if aliased {
        fired = fired.with(Rule::TableAlias);
    }
    let mut rewriter = Rewriter {
        facts,
        rules,
        fired: &mut fired,
        scopes: Vec::new(),
    };
    rewriter.query(&mut query);
    Ok((query, fired))
}

/// Parses and resolves `text`; also says whether it gives a table an alias.
fn parse_with_aliases(text: &str, facts: &DbFacts) -> Result<(Query, bool), SqlError> {
    if text.trim().is_empty() {
        return Err(SqlError("empty query".into()));
    }
    if text.chars().count() > MAX_QUERY_CHARS {
        return Err(SqlError(format!(
            "query longer than {MAX_QUERY_CHARS} characters"
        )));
    }
    let text = crate::sql::text::normalize_spaced_operators(text);
    let statements = Parser::parse_sql(&SQLiteDialect {}, &text)
        .map_err(|e| SqlError(format!("does not parse: {e}")))?;
    let [sql::Statement::Query(query)] = statements.as_slice() else {
        return Err(SqlError("not exactly one SELECT statement".into()));
    };
    let resolver = Resolver {
        facts,
        aliased: std::cell::Cell::new(false),
    };
    let resolved = resolver.query(query, &[])?;
    Ok((resolved, resolver.aliased.get()))
}
