//! The patterns of issue 16 on `owner(owner_id INTEGER PRIMARY KEY, name, city)`,
//! `dog(dog_id INTEGER PRIMARY KEY, owner_id INTEGER REFERENCES owner, tag TEXT UNIQUE,
//! age INTEGER, year TEXT)` (and `toy(toy_id INTEGER PRIMARY KEY, dog_id INTEGER REFERENCES
//! dog)` for a three-table join), read from a SQLite file whose rows happen to hold no NULL:
//! the false matches must not match (a database the schema allows tells them apart), the missed
//! equivalences must.

use super::test_support::equivalent;
use crate::sql::facts::DbFacts;

/// The facts of the schema, from a file whose rows hold no NULL and no dangling key.
fn declared() -> DbFacts {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dogs.sqlite");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TABLE owner (owner_id INTEGER PRIMARY KEY, name, city);
         CREATE TABLE dog (dog_id INTEGER PRIMARY KEY, owner_id INTEGER REFERENCES owner,
                           tag TEXT UNIQUE, age INTEGER, year TEXT);
         CREATE TABLE toy (toy_id INTEGER PRIMARY KEY, dog_id INTEGER REFERENCES dog);
         INSERT INTO owner VALUES (1, 'ann', 'x'), (2, 'bob', 'y');
         INSERT INTO dog VALUES (1, 1, 'a', 3, '2014'), (2, 1, 'b', 5, '2015'), (3, 2, 'c', 7, '2016');
         INSERT INTO toy VALUES (1, 1), (2, 3);",
    )
    .unwrap();
    DbFacts::from_sqlite(&path).unwrap()
}

fn same(a: &str, b: &str) -> bool {
    equivalent(a, b, &declared())
}

#[test]
fn r7_needs_a_declared_not_null_column() {
    assert!(!same(
        "SELECT count(*) FROM dog",
        "SELECT count(tag) FROM dog"
    ));
    assert!(!same(
        "SELECT count(*) FROM dog",
        "SELECT count(owner_id) FROM dog"
    ));
    assert!(same(
        "SELECT count(*) FROM dog",
        "SELECT count(dog_id) FROM dog"
    ));
}

#[test]
fn r13_keeps_a_join_over_a_nullable_foreign_key() {
    let join = "FROM dog AS T1 JOIN owner AS T2 ON T1.owner_id = T2.owner_id";
    assert!(!same(
        &format!("SELECT count(*) {join}"),
        "SELECT count(*) FROM dog"
    ));
    // Dropping the join would give the prediction a NULL group.
    assert!(!same(
        &format!("SELECT T2.owner_id, count(*) {join} GROUP BY T2.owner_id"),
        "SELECT owner_id, count(*) FROM dog GROUP BY owner_id"
    ));
    assert!(!same(
        "SELECT name FROM owner WHERE owner_id NOT IN (SELECT o.owner_id FROM owner AS o JOIN dog AS d ON o.owner_id = d.owner_id WHERE d.age > 3)",
        "SELECT name FROM owner WHERE owner_id NOT IN (SELECT owner_id FROM dog WHERE age > 3)"
    ));
}

#[test]
fn r6_needs_a_subtracted_column_declared_not_null() {
    assert!(!same(
        "SELECT owner_id FROM owner EXCEPT SELECT owner_id FROM dog",
        "SELECT owner_id FROM owner WHERE owner_id NOT IN (SELECT owner_id FROM dog)"
    ));
    assert!(same(
        "SELECT owner_id FROM owner EXCEPT SELECT owner_id FROM owner WHERE city = 'x'",
        "SELECT owner_id FROM owner WHERE owner_id NOT IN (SELECT owner_id FROM owner WHERE city = 'x')"
    ));
}

#[test]
fn numeric_literals_keep_their_type() {
    assert!(!same(
        "SELECT sum(age) / 2 FROM dog",
        "SELECT sum(age) / 2.0 FROM dog"
    ));
    assert!(same(
        "SELECT sum(age) / 2.0 FROM dog",
        "SELECT sum(age) / 2.00 FROM dog"
    ));
}

#[test]
fn r11_only_where_affinity_makes_the_comparisons_equal() {
    let tags = "SELECT tag FROM dog WHERE";
    // TEXT column: 2014 is compared as the text '2014', never as '2014.0'.
    assert!(!same(
        &format!("{tags} year = '2014.0'"),
        &format!("{tags} year = 2014")
    ));
    assert!(same(
        &format!("{tags} year = '2014'"),
        &format!("{tags} year = 2014")
    ));
    assert!(!same(
        &format!("{tags} year = '02014'"),
        &format!("{tags} year = 2014")
    ));
    // INTEGER column: the string is converted to the number.
    assert!(same(
        &format!("{tags} age = '5'"),
        &format!("{tags} age = 5")
    ));
    // Untyped (BLOB) column: nothing is converted.
    assert!(!same(
        "SELECT name FROM owner WHERE city = '5'",
        "SELECT name FROM owner WHERE city = 5"
    ));
}

#[test]
fn r11_applies_to_in_list_members() {
    for column in ["year", "age"] {
        assert!(
            same(
                &format!("SELECT tag FROM dog WHERE {column} = 2014 OR {column} = 2015"),
                &format!("SELECT tag FROM dog WHERE {column} IN ('2014', '2015')")
            ),
            "{column}"
        );
    }
}

#[test]
fn set_operation_branches_keep_their_column_order() {
    let left = "SELECT name, city FROM owner EXCEPT";
    assert!(!same(
        &format!("{left} SELECT city, name FROM owner WHERE owner_id = 1"),
        &format!("{left} SELECT name, city FROM owner WHERE owner_id = 1")
    ));
    assert!(!same(
        "SELECT name, city FROM owner UNION SELECT city, name FROM owner",
        "SELECT DISTINCT name, city FROM owner"
    ));
    assert!(!same(
        "SELECT * FROM (SELECT name, city FROM owner) EXCEPT SELECT name, city FROM owner WHERE owner_id = 1",
        "SELECT * FROM (SELECT city, name FROM owner) EXCEPT SELECT name, city FROM owner WHERE owner_id = 1"
    ));
    // The whole result's column order is free, as for one select.
    assert!(same(
        "SELECT name, city FROM owner EXCEPT SELECT name, city FROM owner WHERE owner_id = 1",
        "SELECT city, name FROM owner EXCEPT SELECT city, name FROM owner WHERE owner_id = 1"
    ));
}

#[test]
fn inner_join_on_conditions_are_one_conjunction() {
    assert!(same(
        "SELECT t.toy_id FROM owner AS o JOIN dog AS d ON o.owner_id = d.owner_id JOIN toy AS t ON d.dog_id = t.dog_id WHERE o.city = 'x'",
        "SELECT t.toy_id FROM owner AS o JOIN dog AS d JOIN toy AS t ON o.owner_id = d.owner_id AND d.dog_id = t.dog_id WHERE o.city = 'x'"
    ));
    assert!(!same(
        "SELECT t.toy_id FROM owner AS o LEFT JOIN dog AS d ON o.owner_id = d.owner_id LEFT JOIN toy AS t ON d.dog_id = t.dog_id",
        "SELECT t.toy_id FROM owner AS o LEFT JOIN dog AS d LEFT JOIN toy AS t ON o.owner_id = d.owner_id AND d.dog_id = t.dog_id"
    ));
}
