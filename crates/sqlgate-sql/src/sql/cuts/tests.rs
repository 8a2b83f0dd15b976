//! Probes run on a real SQLite database: `t` holds `a` and `b` tied at x = 3, `c` at x = 1.

use super::*;
use rusqlite::types::Value;

fn database() -> rusqlite::Connection {
    let db = rusqlite::Connection::open_in_memory().unwrap();
    db.execute_batch(
        "CREATE TABLE t(name TEXT, x INT); INSERT INTO t VALUES ('a', 3), ('b', 3), ('c', 1);
         CREATE TABLE u(name TEXT, x INT); INSERT INTO u VALUES ('d', 3), ('e', 2);",
    )
    .unwrap();
    db
}

fn rows(db: &rusqlite::Connection, sql: &str) -> Vec<Vec<Value>> {
    let mut statement = db.prepare(sql).unwrap();
    let width = statement.column_count();
    statement
        .query_map([], |row| (0..width).map(|i| row.get(i)).collect())
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Whether `sql` (SQLite) is undetermined on the test database: any probe says so.
fn unstable(sql: &str) -> bool {
    let db = database();
    probes(sql, FeatureDialect::Sqlite)
        .unwrap()
        .iter()
        .any(|probe| undetermined(probe, &rows(&db, &probe.sql)))
}

#[test]
fn without_order_by_more_distinct_rows_than_the_limit_are_undetermined() {
    let probe = &probes("SELECT name FROM t LIMIT 1", FeatureDialect::Sqlite).unwrap()[0];
    assert_eq!(probe.sql, "SELECT name FROM t LIMIT 2");
    assert_eq!((probe.cuts.as_slice(), &probe.keys), (&[1][..], &None));
    assert!(unstable("SELECT name FROM t LIMIT 1"));
    assert!(unstable("SELECT name FROM t LIMIT 2"));
    // Every row past the cut is alike, or none is cut off.
    assert!(!unstable("SELECT x FROM t WHERE x = 3 LIMIT 1"));
    assert!(!unstable("SELECT name FROM t LIMIT 3"));
    assert!(!unstable("SELECT count(*) FROM t LIMIT 1"));
}

#[test]
fn an_order_by_tie_across_the_cut_with_different_outputs_is_undetermined() {
    let sql = "SELECT name FROM t ORDER BY x DESC LIMIT 1";
    let probe = &probes(sql, FeatureDialect::Sqlite).unwrap()[0];
    assert_eq!(probe.sql, "SELECT name, x FROM t ORDER BY x DESC LIMIT 2");
    assert_eq!(probe.keys, Some(vec![KeyColumn::Appended(0)]));
    assert_eq!(probe.appended, 1);
    assert!(unstable(sql));
    // No tie at the cut: the two largest are both kept, or the smallest alone.
    assert!(!unstable("SELECT name FROM t ORDER BY x DESC LIMIT 2"));
    assert!(!unstable("SELECT name FROM t ORDER BY x LIMIT 1"));
    // A tie whose rows project the same value is no choice.
    assert!(!unstable("SELECT x FROM t ORDER BY x DESC LIMIT 1"));
    // A second key breaks the tie.
    assert!(!unstable(
        "SELECT name FROM t ORDER BY x DESC, name LIMIT 1"
    ));
}

#[test]
fn aliases_and_ordinals_read_the_output_columns() {
    let sql = "SELECT name, x AS score FROM t ORDER BY score DESC LIMIT 1";
    let probe = &probes(sql, FeatureDialect::Sqlite).unwrap()[0];
    assert_eq!(probe.keys, Some(vec![KeyColumn::Output(1)]));
    assert_eq!(probe.appended, 0);
    assert!(unstable(sql));
    let by_position = "SELECT name, x FROM t ORDER BY 2 DESC LIMIT 1";
    assert_eq!(
        probes(by_position, FeatureDialect::Sqlite).unwrap()[0].keys,
        Some(vec![KeyColumn::Output(1)])
    );
    assert!(unstable(by_position));
    assert!(!unstable("SELECT name, x FROM t ORDER BY 2, 1 LIMIT 1"));
}

#[test]
fn an_offset_is_a_cut_too() {
    let sql = "SELECT name FROM t ORDER BY x LIMIT 1 OFFSET 1";
    let probe = &probes(sql, FeatureDialect::Sqlite).unwrap()[0];
    assert_eq!(probe.cuts, vec![1, 2]);
    assert_eq!(probe.sql, "SELECT name, x FROM t ORDER BY x LIMIT 3");
    // Rows 2 and 3 (a, b) tie at x = 3: the second row is either.
    assert!(unstable(sql));
    // Skipping the two tied rows at the top leaves only c.
    assert!(!unstable(
        "SELECT name FROM t ORDER BY x DESC LIMIT 1 OFFSET 2"
    ));
    // MySQL's LIMIT offset, count.
    let mysql = "SELECT name FROM t ORDER BY x LIMIT 1, 1";
    let probe = &probes(mysql, FeatureDialect::Mysql).unwrap()[0];
    assert_eq!(probe.cuts, vec![1, 2]);
}

#[test]
fn distinct_keeps_its_rows_and_a_key_outside_them_is_not_checked() {
    assert!(unstable("SELECT DISTINCT name FROM t LIMIT 1"));
    assert!(!unstable("SELECT DISTINCT x FROM t WHERE x = 3 LIMIT 1"));
    let sql = "SELECT DISTINCT name FROM t ORDER BY name LIMIT 1";
    assert_eq!(
        probes(sql, FeatureDialect::Sqlite).unwrap()[0].sql,
        "SELECT DISTINCT name FROM t ORDER BY name LIMIT 2"
    );
    assert!(!unstable(sql));
    // Appending x would change the distinct rows: not checked.
    let outside = "SELECT DISTINCT name FROM t ORDER BY x LIMIT 1";
    assert_eq!(probes(outside, FeatureDialect::Sqlite), Some(Vec::new()));
}

#[test]
fn a_set_operation_is_read_by_its_output_names() {
    let sql = "SELECT name, x FROM t UNION ALL SELECT name, x FROM u ORDER BY x DESC LIMIT 2";
    let probe = &probes(sql, FeatureDialect::Sqlite).unwrap()[0];
    assert_eq!(probe.keys, Some(vec![KeyColumn::Output(1)]));
    // a, b and d all have x = 3.
    assert!(unstable(sql));
    assert!(!unstable(
        "SELECT name, x FROM t UNION SELECT name, x FROM u ORDER BY x DESC LIMIT 3"
    ));
    let by_other = "SELECT name FROM t UNION SELECT name FROM u ORDER BY x LIMIT 1";
    assert_eq!(probes(by_other, FeatureDialect::Sqlite), Some(Vec::new()));
}

#[test]
fn a_scalar_sub_query_cut_is_probed_on_its_own() {
    let sql = "SELECT count(*) FROM t WHERE name = (SELECT name FROM t WHERE x = 3 LIMIT 1)";
    let found = probes(sql, FeatureDialect::Sqlite).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].sql, "SELECT name FROM t WHERE x = 3 LIMIT 2");
    assert!(unstable(sql));
    assert!(!unstable(
        "SELECT count(*) FROM t WHERE name = (SELECT name FROM t ORDER BY x LIMIT 1)"
    ));
    // Wherever it stands: a function's argument, a CASE, a join condition.
    assert!(unstable(
        "SELECT upper((SELECT DISTINCT name FROM t LIMIT 1))"
    ));
    assert!(unstable(
        "SELECT CASE WHEN 1 = 1 THEN (SELECT name FROM t ORDER BY x DESC LIMIT 1) END"
    ));
    assert!(unstable(
        "SELECT u.name FROM u JOIN t ON t.name = (SELECT name FROM t WHERE x = 3 LIMIT 1)"
    ));
    assert!(!unstable(
        "SELECT upper((SELECT name FROM t ORDER BY name LIMIT 1))"
    ));
    // A CTE body is probed with its WITH clause.
    let cte = "WITH top AS (SELECT name FROM t ORDER BY x DESC LIMIT 1) SELECT * FROM top";
    assert!(unstable(cte));
}

#[test]
fn every_nested_cut_has_its_probe() {
    let nested: Vec<String> = (0..40)
        .map(|i| format!("(SELECT x FROM t LIMIT {i})"))
        .collect();
    let sql = format!("SELECT {}", nested.join(" + "));
    // LIMIT 0 keeps nothing: no cut.
    assert_eq!(probes(&sql, FeatureDialect::Sqlite).unwrap().len(), 39);
}

#[test]
fn what_is_not_checked() {
    assert_eq!(
        probes("SELECT name FROM t LIMIT", FeatureDialect::Sqlite),
        None
    );
    assert_eq!(
        probes("SELECT name FROM t", FeatureDialect::Sqlite),
        Some(Vec::new())
    );
    let counted = "SELECT name FROM t LIMIT (SELECT 1)";
    assert_eq!(probes(counted, FeatureDialect::Sqlite), Some(Vec::new()));
    let huge = format!(
        "SELECT name FROM t LIMIT {} OFFSET {}",
        usize::MAX,
        usize::MAX
    );
    assert_eq!(probes(&huge, FeatureDialect::Sqlite), Some(Vec::new()));
    let last = format!("SELECT name FROM t LIMIT {}", usize::MAX);
    assert_eq!(probes(&last, FeatureDialect::Sqlite), Some(Vec::new()));
    let percent = "SELECT name FROM t ORDER BY x FETCH FIRST 10 PERCENT ROWS ONLY";
    assert_eq!(
        probes(percent, FeatureDialect::Postgresql),
        Some(Vec::new())
    );
}

#[test]
fn fetch_first_is_a_limit_and_with_ties_keeps_the_tie() {
    let only = "SELECT name FROM t ORDER BY x DESC FETCH FIRST 1 ROWS ONLY";
    let probe = &probes(only, FeatureDialect::Postgresql).unwrap()[0];
    assert_eq!(probe.cuts, vec![1]);
    let ties = "SELECT name FROM t ORDER BY x DESC FETCH FIRST 1 ROWS WITH TIES";
    assert_eq!(probes(ties, FeatureDialect::Postgresql), Some(Vec::new()));
}

/// Whether `sql`'s row order is undetermined on the test database, as an ordered comparison
/// reads it.
fn unordered(sql: &str) -> bool {
    let db = database();
    let probe = order_probe(sql, FeatureDialect::Sqlite);
    ties_differ(&probe, &rows(&db, &probe.sql))
}

#[test]
fn an_order_probe_appends_keys_that_are_not_output_columns() {
    let probe = order_probe("SELECT name FROM t ORDER BY x DESC", FeatureDialect::Sqlite);
    assert_eq!(probe.sql, "SELECT name, x FROM t ORDER BY x DESC");
    assert_eq!(
        (probe.cuts.as_slice(), &probe.keys, probe.appended),
        (&[][..], &Some(vec![KeyColumn::Appended(0)]), 1)
    );
    let kept = order_probe("SELECT name, x FROM t ORDER BY 2", FeatureDialect::Sqlite);
    assert_eq!(kept.sql, "SELECT name, x FROM t ORDER BY 2");
    assert_eq!(kept.keys, Some(vec![KeyColumn::Output(1)]));
}

#[test]
fn rows_tied_on_every_key_with_different_outputs_are_unordered() {
    assert!(unordered("SELECT name FROM t ORDER BY x DESC"));
    assert!(unordered("SELECT name FROM t ORDER BY x DESC LIMIT 2"));
    assert!(!unordered("SELECT name FROM t ORDER BY x DESC, name"));
    assert!(!unordered("SELECT x FROM t ORDER BY x DESC"));
    assert!(!unordered("SELECT name FROM t ORDER BY x LIMIT 2"));
}

#[test]
fn without_order_by_two_different_rows_are_unordered() {
    assert!(unordered("SELECT name FROM t"));
    assert!(!unordered("SELECT x FROM t WHERE x = 3"));
    assert!(!unordered("SELECT count(*) FROM t"));
    assert!(unordered(
        "SELECT name FROM (SELECT name FROM t ORDER BY name)"
    ));
}

#[test]
fn an_order_that_cannot_be_read_is_held_unordered_once_two_rows_differ() {
    // A DISTINCT's key that is not an output column, and a text that does not parse.
    let probe = order_probe(
        "SELECT DISTINCT name FROM t ORDER BY x",
        FeatureDialect::Sqlite,
    );
    assert_eq!((probe.keys, probe.appended), (None, 0));
    assert!(unordered("SELECT DISTINCT name FROM t ORDER BY x"));
    let unparsed = order_probe(
        "SELECT name FROM t ORDER BY name ,,",
        FeatureDialect::Sqlite,
    );
    assert_eq!(unparsed.keys, None);
}

/// On a server the probes rank rows as its ORDER BY compares them (SQLite's NOCASE stands in
/// for MariaDB's `utf8mb4_general_ci`): `ada` and `ADA` are peers, which their values compared
/// byte for byte do not show (red team round 9).
#[test]
fn on_a_server_rows_tie_as_the_sort_compares_them() {
    let db = database();
    db.execute_batch(
        "CREATE TABLE v(name TEXT COLLATE NOCASE, id INT);
         INSERT INTO v VALUES ('ADA', 1), ('ada', 2), ('bob', 3);",
    )
    .unwrap();
    let cut = "SELECT name FROM v ORDER BY name LIMIT 1";
    let probe = &probes(cut, FeatureDialect::Mysql).unwrap()[0];
    assert_eq!(
        probe.sql,
        "SELECT name, DENSE_RANK() OVER (ORDER BY name), COUNT(*) OVER (PARTITION BY name), \
         COUNT(*) OVER (PARTITION BY name, CAST(name AS BINARY)) FROM v ORDER BY name LIMIT 2"
    );
    assert_eq!(
        (&probe.keys, probe.appended, probe.plain.as_deref()),
        (
            &Some(vec![KeyColumn::Appended(0)]),
            3,
            Some("SELECT name FROM v ORDER BY name LIMIT 2")
        )
    );
    assert!(probe.counted);
    let by_value = &probes(cut, FeatureDialect::Sqlite).unwrap()[0];
    assert_eq!(by_value.plain, None);
    assert!(undetermined(probe, &rows(&db, &probe.sql)));
    assert!(!undetermined(by_value, &rows(&db, &by_value.sql)));
    // Ordered comparisons: adjacent peers that differ; a key that breaks the tie settles it.
    let ordered = |sql: &str, dialect| {
        let probe = order_probe(sql, dialect);
        ties_differ(&probe, &rows(&db, &probe.sql))
    };
    assert!(ordered(
        "SELECT name FROM v ORDER BY name",
        FeatureDialect::Postgresql
    ));
    assert!(!ordered(
        "SELECT name FROM v ORDER BY name",
        FeatureDialect::Sqlite
    ));
    assert!(!ordered(
        "SELECT name FROM v ORDER BY name, id",
        FeatureDialect::Mysql
    ));
    // Counted: PostgreSQL's probe runs (its byte order "C" is SQLite's BINARY) and sees the tie.
    let probe = &probes(cut, FeatureDialect::Postgresql).unwrap()[0];
    assert!(
        probe.sql.contains("CAST(name AS TEXT) COLLATE \"C\")"),
        "{}",
        probe.sql
    );
    let fetched = rows(&db, &probe.sql.replace("COLLATE \"C\"", "COLLATE BINARY"));
    assert!(undetermined(probe, &fetched), "{fetched:?}");
    // The fetched peers agree (`ada`, `ada`) where the tie goes on past them (3 peers, 2 alike):
    // the counts show it; a tie whose peers are all alike is no choice.
    let row = |peers: i64, alike: i64| {
        let name = Value::Text("ada".into());
        vec![
            name,
            Value::Integer(1),
            Value::Integer(peers),
            Value::Integer(alike),
        ]
    };
    let uncounted = CutProbe {
        counted: false,
        ..probe.clone()
    };
    assert!(undetermined(probe, &[row(3, 2), row(3, 2)]));
    assert!(!undetermined(&uncounted, &[row(3, 2), row(3, 2)]));
    assert!(!undetermined(probe, &[row(2, 2), row(2, 2)]));
    // An alias or a position is ranked as its expression; a key beside the output too.
    let named = [
        (
            "SELECT upper(name) AS n FROM v ORDER BY n LIMIT 1",
            "upper(name)",
        ),
        ("SELECT name, id FROM v ORDER BY 2 DESC LIMIT 1", "id"),
        ("SELECT id FROM v ORDER BY name, id LIMIT 1", "name, id"),
    ];
    for (sql, keys) in named {
        let probe = &probes(sql, FeatureDialect::Mysql).unwrap()[0];
        let rank = format!("DENSE_RANK() OVER (ORDER BY {keys})");
        assert!(probe.sql.contains(&rank), "{sql}: {}", probe.sql);
        rows(&db, &probe.sql);
    }
    // A set operation's projection cannot take a rank: every row ties (fail closed).
    let union = "SELECT name FROM v UNION SELECT name FROM t ORDER BY name LIMIT 1";
    assert_eq!(probes(union, FeatureDialect::Mysql).unwrap()[0].keys, None);
    assert_eq!(order_probe(union, FeatureDialect::Mysql).keys, None);
}
