//! The neighbour normal form: which rewrites make two queries provably equivalent.

use super::*;

/// `t(k INTEGER NOT NULL, a INTEGER, s TEXT)`, `u(k INTEGER NOT NULL, b INTEGER,
/// s TEXT NOT NULL)`, `v(k TEXT)`.
fn facts() -> ColumnFacts {
    let mut facts = ColumnFacts::default();
    let column = |affinity, not_null| ColumnFact {
        affinity,
        not_null,
        collated: false,
    };
    facts.insert("t", "k", column(Affinity::Integer, true));
    facts.insert("t", "a", column(Affinity::Integer, false));
    facts.insert("t", "s", column(Affinity::Text, false));
    facts.insert("u", "k", column(Affinity::Integer, true));
    facts.insert("u", "b", column(Affinity::Integer, false));
    facts.insert("u", "s", column(Affinity::Text, true));
    facts.insert("v", "k", column(Affinity::Text, false));
    facts
}

fn same(a: &str, b: &str) -> bool {
    normal_form(a, &facts()) == normal_form(b, &facts())
}

#[test]
fn spelling_does_not_matter() {
    assert!(same(
        "select T1.A from t as T1 where T1.s = \"x\"",
        "SELECT t1.a FROM t AS T1 WHERE t1.\"s\" = 'x'"
    ));
    assert!(!same(
        "SELECT a FROM t WHERE s = 'x'",
        "SELECT a FROM t WHERE s = 'X'"
    ));
}

#[test]
fn columns_equated_by_an_inner_join_stand_for_each_other() {
    let gold = "SELECT T1.k, count(*) FROM t AS T1 JOIN u AS T2 ON T1.k = T2.k GROUP BY T1.k";
    assert!(same(
        gold,
        "SELECT T1.k, count(*) FROM t AS T1 JOIN u AS T2 ON T1.k = T2.k GROUP BY T2.k"
    ));
    assert!(same(
        gold,
        "SELECT T2.k, count(*) FROM t AS T1 JOIN u AS T2 ON T1.k = T2.k GROUP BY T1.k"
    ));
    assert!(same(
        "SELECT T1.a FROM t AS T1, u AS T2 WHERE T1.k = T2.k AND T1.k > 3",
        "SELECT T1.a FROM t AS T1, u AS T2 WHERE T1.k = T2.k AND T2.k > 3"
    ));
    // The join condition itself, another operator, an outer join, another affinity and a
    // column from a nested block are real differences.
    assert!(!same(
        gold,
        "SELECT T1.k, count(*) FROM t AS T1 JOIN u AS T2 ON T2.k = T2.k GROUP BY T1.k"
    ));
    assert!(!same(
        "SELECT T1.k FROM t AS T1 JOIN u AS T2 ON T1.k >= T2.k",
        "SELECT T2.k FROM t AS T1 JOIN u AS T2 ON T1.k >= T2.k"
    ));
    assert!(!same(
        "SELECT T1.k FROM t AS T1 LEFT JOIN u AS T2 ON T1.k = T2.k",
        "SELECT T2.k FROM t AS T1 LEFT JOIN u AS T2 ON T1.k = T2.k"
    ));
    assert!(!same(
        "SELECT T1.k FROM t AS T1 JOIN v AS T2 ON T1.k = T2.k",
        "SELECT T2.k FROM t AS T1 JOIN v AS T2 ON T1.k = T2.k"
    ));
    assert!(!same(
        "SELECT T1.k FROM t AS T1 JOIN u AS T2 ON T1.k = T2.k OR T1.a = 1",
        "SELECT T2.k FROM t AS T1 JOIN u AS T2 ON T1.k = T2.k OR T1.a = 1"
    ));
}

#[test]
fn counting_a_not_null_column_counts_rows() {
    assert!(same("SELECT count(*) FROM u", "SELECT count(s) FROM u"));
    assert!(same(
        "SELECT count(T2.s) FROM t AS T1 JOIN u AS T2 ON T1.k = T2.k",
        "SELECT count(T1.k) FROM t AS T1 JOIN u AS T2 ON T1.k = T2.k"
    ));
    assert!(!same("SELECT count(*) FROM t", "SELECT count(a) FROM t"));
    assert!(!same(
        "SELECT count(k) FROM t",
        "SELECT count(DISTINCT k) FROM t"
    ));
    assert!(!same(
        "SELECT count(T2.s) FROM t AS T1 LEFT JOIN u AS T2 ON T1.k = T2.k",
        "SELECT count(*) FROM t AS T1 LEFT JOIN u AS T2 ON T1.k = T2.k"
    ));
}

#[test]
fn having_on_group_size_is_the_set_of_sizes_it_accepts() {
    let grouped = |having: &str| format!("SELECT a FROM t GROUP BY a {having}");
    assert!(same(
        &grouped("HAVING count(*) > 1"),
        &grouped("HAVING count(*) <> 1")
    ));
    assert!(same(
        &grouped("HAVING count(*) > 1"),
        &grouped("HAVING 2 <= count(*)")
    ));
    assert!(same(&grouped("HAVING count(*) >= 1"), &grouped("")));
    assert!(same(
        &grouped("HAVING count(*) >= 1"),
        &grouped("HAVING count(*) >= 0")
    ));
    assert!(same(
        &grouped("HAVING count(*) BETWEEN 1 AND 2"),
        &grouped("HAVING count(*) BETWEEN 0 AND 2")
    ));
    assert!(same(
        &grouped("HAVING count(*) = 1"),
        &grouped("HAVING count(*) <= 1")
    ));
    assert!(!same(
        &grouped("HAVING count(*) > 1"),
        &grouped("HAVING count(*) >= 1")
    ));
    assert!(!same(
        &grouped("HAVING count(*) < 200"),
        &grouped("HAVING count(*) <= 200")
    ));
    assert!(!same(&grouped("HAVING count(*) < 200"), &grouped("")));
    assert!(!same(&grouped("HAVING count(a) >= 1"), &grouped("")));
    // Without GROUP BY the only group may be empty (count 0).
    assert!(!same(
        "SELECT count(*) FROM t HAVING count(*) >= 1",
        "SELECT count(*) FROM t"
    ));
}

#[test]
fn a_scalar_sub_query_keeps_its_first_row_under_any_positive_limit() {
    let with = |limit: &str| {
        format!("SELECT count(*) FROM t WHERE k = (SELECT k FROM u ORDER BY b DESC {limit})")
    };
    assert!(same(&with("LIMIT 1"), &with("")));
    assert!(same(&with("LIMIT 1"), &with("LIMIT 2")));
    assert!(!same(&with("LIMIT 1"), &with("LIMIT 0")));
    assert!(!same(&with("LIMIT 1"), &with("LIMIT 1 OFFSET 1")));
    assert!(!same(
        "SELECT k FROM t WHERE k IN (SELECT k FROM u ORDER BY b LIMIT 1)",
        "SELECT k FROM t WHERE k IN (SELECT k FROM u ORDER BY b LIMIT 2)"
    ));
}

#[test]
fn nothing_is_below_its_own_minimum_or_above_its_maximum() {
    let with = |condition: &str| {
        format!("SELECT T1.a FROM t AS T1 JOIN u AS T2 ON T1.k = T2.k WHERE {condition}")
    };
    assert!(same(
        &with("T1.a = (SELECT min(a) FROM t)"),
        &with("T1.a <= (SELECT min(a) FROM t)")
    ));
    assert!(same(
        &with("T1.a > (SELECT min(a) FROM t)"),
        &with("T1.a <> (SELECT min(a) FROM t)")
    ));
    assert!(same(
        &with("T1.a = (SELECT max(a) FROM t)"),
        &with("(SELECT max(a) FROM t) <= T1.a")
    ));
    // Another column, another table, a filtered sub-query, or the other direction differ.
    assert!(!same(
        &with("T1.a = (SELECT min(k) FROM t)"),
        &with("T1.a <= (SELECT min(k) FROM t)")
    ));
    assert!(!same(
        &with("T2.b = (SELECT min(a) FROM t)"),
        &with("T2.b <= (SELECT min(a) FROM t)")
    ));
    assert!(!same(
        &with("T1.a = (SELECT min(a) FROM t WHERE k > 1)"),
        &with("T1.a <= (SELECT min(a) FROM t WHERE k > 1)")
    ));
    assert!(!same(
        &with("T1.a = (SELECT min(a) FROM t)"),
        &with("T1.a >= (SELECT min(a) FROM t)")
    ));
}

#[test]
fn membership_ignores_duplicates() {
    assert!(same(
        "SELECT a FROM t WHERE k NOT IN (SELECT k FROM u UNION SELECT a FROM t)",
        "SELECT a FROM t WHERE k NOT IN (SELECT k FROM u UNION ALL SELECT a FROM t)"
    ));
    assert!(same(
        "SELECT s FROM t UNION SELECT s FROM u EXCEPT SELECT k FROM v",
        "SELECT s FROM t UNION ALL SELECT s FROM u EXCEPT SELECT k FROM v"
    ));
    assert!(same(
        "SELECT a FROM t WHERE EXISTS (SELECT DISTINCT k FROM u)",
        "SELECT a FROM t WHERE EXISTS (SELECT k FROM u)"
    ));
    assert!(!same(
        "SELECT s FROM t UNION SELECT s FROM u",
        "SELECT s FROM t UNION ALL SELECT s FROM u"
    ));
    assert!(!same(
        "SELECT a FROM t WHERE k IN (SELECT k FROM u UNION ALL SELECT a FROM t LIMIT 3)",
        "SELECT a FROM t WHERE k IN (SELECT k FROM u UNION SELECT a FROM t LIMIT 3)"
    ));
}
