use super::*;

/// The choices of `sql` in MySQL, each as `table.column[keys]` candidates joined by `|`, `?` for
/// an unbounded one, in order, joined by spaces.
fn shown(sql: &str) -> String {
    let shown: Vec<String> = choices(sql, FeatureDialect::Mysql)
        .iter()
        .map(|choice| match choice.candidates.is_empty() {
            true => "?".to_string(),
            false => (choice.candidates.iter())
                .map(|c| format!("{}.{}[{}]", c.table, c.column, c.keys.join(",")))
                .collect::<Vec<_>>()
                .join("|"),
        })
        .collect();
    shown.join(" ")
}

#[test]
fn each_choice_point_names_the_columns_it_reads() {
    let cases = [
        // No choice point.
        ("SELECT name FROM customers WHERE id = 1", ""),
        (
            "SELECT c.name FROM customers c JOIN orders o ON o.customer_id = c.id",
            "",
        ),
        (
            "SELECT name FROM t WHERE id IN (SELECT DISTINCT id FROM u)",
            "u.id[id]",
        ),
        // DISTINCT: each output value ties among equal rows.
        (
            "SELECT DISTINCT c.name FROM customers c JOIN orders o ON o.customer_id = c.id",
            "customers.name[name]",
        ),
        ("SELECT DISTINCT name, id + 1 FROM t", "t.name[name]"),
        (
            "SELECT DISTINCT name FROM a, b",
            "a.name[name]|b.name[name]",
        ),
        ("SELECT DISTINCT count(*) FROM t", ""),
        ("SELECT DISTINCT upper(name) FROM t", "?"),
        ("SELECT DISTINCT name FROM (SELECT name FROM t) s", "?"),
        ("SELECT DISTINCT * FROM t", "?"),
        // Grouped: keys tie, bare columns are any row's value, MIN / MAX pick.
        ("SELECT name, count(*) FROM t GROUP BY name", "t.name[name]"),
        ("SELECT count(*) FROM t GROUP BY name", ""),
        ("SELECT id, count(*) FROM t GROUP BY 1", "t.id[id]"),
        (
            "SELECT c.name FROM customers c JOIN orders o ON o.customer_id = c.id \
             WHERE o.item_id = 1 GROUP BY o.item_id",
            "customers.name[]",
        ),
        (
            "SELECT T1.name, count(*) FROM customers T1 JOIN orders T2 \
             ON T2.customer_id = T1.id GROUP BY T1.id",
            "customers.name[id]",
        ),
        ("SELECT max(name) FROM t", "t.name[name]"),
        ("SELECT max(price * 2) FROM t", ""),
        ("SELECT name, sum(x) FROM t", "t.name[]"),
        (
            "SELECT group_concat(DISTINCT name ORDER BY name) FROM t",
            "t.name[name]",
        ),
        ("SELECT count(DISTINCT name) FROM t", ""),
        // Strung together or read by position: peers under the collation come in the plan's
        // order, whatever the ORDER BY (numbering windows are the order check's).
        (
            "SELECT group_concat(name ORDER BY name) FROM t",
            "t.name[name]",
        ),
        (
            "SELECT first_value(c.name) OVER (ORDER BY c.name) FROM customers c",
            "customers.name[name]",
        ),
        (
            "SELECT nth_value(name, 2) OVER (ORDER BY name) FROM t",
            "t.name[name]",
        ),
        (
            "SELECT lead(name, 1, 'x') OVER (ORDER BY name) FROM t",
            "t.name[name]",
        ),
        ("SELECT lag(id * 2) OVER (ORDER BY id) FROM t", ""),
        (
            "SELECT row_number() OVER (ORDER BY name), sum(x) OVER () FROM t",
            "",
        ),
        (
            "SELECT id FROM t GROUP BY id HAVING max(name) = 'a'",
            "t.id[id] t.name[name]",
        ),
        ("SELECT name, count(*) FROM t GROUP BY ALL", "?"),
        // Set operations removing duplicates.
        (
            "SELECT name FROM t UNION SELECT name FROM t",
            "t.name[name]",
        ),
        ("SELECT name FROM t UNION ALL SELECT name FROM u", ""),
        ("SELECT name FROM t UNION SELECT 'ADA'", "?"),
        ("SELECT id FROM t UNION SELECT 2", "?"),
        ("SELECT count(*) FROM t UNION SELECT 2", ""),
        ("SELECT name FROM t INTERSECT SELECT name FROM u", "?"),
        // What does not parse is held undetermined when it may have a choice point.
        ("SELECT DISTINCT FROM WHERE", "?"),
        ("SELECT FROM WHERE", ""),
    ];
    for (sql, expected) in cases {
        assert_eq!(shown(sql), expected, "{sql}");
    }
}

#[test]
fn only_mysql_has_value_choices() {
    let sql = "SELECT DISTINCT name FROM t";
    assert!(choices(sql, FeatureDialect::Postgresql).is_empty());
    assert!(choices(sql, FeatureDialect::Sqlite).is_empty());
}

#[test]
fn a_probe_groups_the_table_on_the_keys_and_finds_two_values() {
    let candidate = Candidate {
        table: "cus`tomers".to_string(),
        column: "name".to_string(),
        keys: vec!["id".to_string(), "name".to_string()],
    };
    assert_eq!(
        candidate.probe_sql(),
        "SELECT 1 FROM `cus``tomers` GROUP BY `id`, `name` HAVING COUNT(DISTINCT \
         CAST(`name` AS BINARY)) + MAX(`name` IS NULL) > 1 LIMIT 1"
    );
    let bare = Candidate {
        keys: Vec::new(),
        ..candidate
    };
    assert!(bare
        .probe_sql()
        .starts_with("SELECT 1 FROM `cus``tomers` HAVING"));
}
