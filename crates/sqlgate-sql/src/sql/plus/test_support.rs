//! A small schema (dogs and their owners) and assertions the rule tests share.

use super::{canonical, Rule, RuleSet};
use crate::sql::facts::{Affinity, ColumnId, DbFacts};

/// The id of column `c` of table `t`.
pub(super) fn id(t: &str, c: &str) -> ColumnId {
    (t.to_string(), c.to_string())
}

/// dogs(dog_id key, name TEXT, age INTEGER, owner_id NOT NULL -> owners.owner_id), owners(owner_id
/// key, city); both non-empty.
pub(super) fn facts() -> DbFacts {
    let mut facts = DbFacts {
        columns: vec![
            (
                "dogs".into(),
                vec![
                    "dog_id".into(),
                    "name".into(),
                    "age".into(),
                    "owner_id".into(),
                ],
            ),
            ("owners".into(), vec!["owner_id".into(), "city".into()]),
        ],
        ..DbFacts::default()
    };
    for key in [id("dogs", "dog_id"), id("owners", "owner_id")] {
        facts.unique.insert(key.clone());
        facts.not_null.insert(key);
    }
    for (table, columns) in facts.columns.clone() {
        for column in columns {
            let affinity = match column.as_str() {
                "name" | "city" => Affinity::Text,
                _ => Affinity::Integer,
            };
            facts.affinity.insert(id(&table, &column), affinity);
        }
    }
    facts
        .non_empty
        .extend(["dogs".to_string(), "owners".to_string()]);
    facts.not_null.insert(id("dogs", "owner_id"));
    facts
        .foreign_keys
        .insert((id("dogs", "owner_id"), id("owners", "owner_id")));
    facts
}

/// Without the assumption: nothing is a key, nothing is typed, tables may be empty.
pub(super) fn bare() -> DbFacts {
    DbFacts {
        columns: facts().columns,
        ..DbFacts::default()
    }
}

/// True when `a` and `b` have one canonical form under `facts` and every rule.
pub(super) fn equivalent(a: &str, b: &str, facts: &DbFacts) -> bool {
    let left = canonical(a, facts, RuleSet::all()).unwrap().0;
    let right = canonical(b, facts, RuleSet::all()).unwrap().0;
    left == right
}

/// `a` and `b` are equal under [`facts`], `rule` fired, and without `rule` they differ.
pub(super) fn fires(rule: Rule, a: &str, b: &str) {
    assert!(
        equivalent(a, b, &facts()),
        "{rule:?} should fire: {a} / {b}"
    );
    let (_, fired_a) = canonical(a, &facts(), RuleSet::all()).unwrap();
    let (_, fired_b) = canonical(b, &facts(), RuleSet::all()).unwrap();
    assert!(fired_a.union(fired_b).contains(rule));
    let without = RuleSet::all().without(rule);
    let left = canonical(a, &facts(), without).unwrap().0;
    let right = canonical(b, &facts(), without).unwrap().0;
    assert_ne!(left, right, "{rule:?} is what made them equal");
}

/// The rule makes `a` and `b` equal under [`facts`], and nothing does under [`bare`].
pub(super) fn only_when_verified(rule: Rule, a: &str, b: &str) {
    fires(rule, a, b);
    assert!(
        !equivalent(a, b, &bare()),
        "{rule:?} must not fire without the assumption"
    );
}

/// `a` and `b` stay different under [`facts`] and every rule.
pub(super) fn differ(a: &str, b: &str) {
    assert!(!equivalent(a, b, &facts()), "{a} / {b}");
}
