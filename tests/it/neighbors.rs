//! Neighbor generation over every Spider dev gold query: each yields neighbors, every neighbor
//! parses, generation is deterministic, no neighbor is the gold, and constants are found.

use crate::common;

use sqlgate::sql::schema::{Schema, TablesJson};
use sqlgate::suites::neighbors::{constants, neighbors};
use sqlparser::dialect::SQLiteDialect;
use sqlparser::parser::Parser;
use std::collections::HashSet;

/// (gold SQL, db_id, schema) for every line of dev_gold.sql.
fn gold_items() -> Vec<(String, String, Schema)> {
    let spider = common::shared_spider();
    let tables = TablesJson::load(&spider.join("tables.json")).expect("tables.json loads");
    let text = std::fs::read_to_string(spider.join("dev_gold.sql")).expect("dev_gold.sql reads");
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let (sql, db_id) = line
                .rsplit_once('\t')
                .expect("gold lines are SQL<TAB>db_id");
            let entry = tables
                .get(db_id)
                .expect("every gold database is in tables.json");
            (
                sql.to_string(),
                db_id.to_string(),
                Schema::from_tables_json(entry),
            )
        })
        .collect()
}

fn canonical(sql: &str) -> String {
    let statements = Parser::parse_sql(&SQLiteDialect {}, sql)
        .unwrap_or_else(|e| panic!("`{sql}` does not parse: {e}"));
    statements[0].to_string()
}

#[test]
fn every_dev_gold_query_has_parsable_distinct_deterministic_neighbors() {
    let items = gold_items();
    assert_eq!(items.len(), 1034);
    for (sql, db_id, schema) in &items {
        let found = neighbors(sql, schema, 7);
        assert!(!found.is_empty(), "no neighbors for `{sql}` ({db_id})");
        assert_eq!(
            found,
            neighbors(sql, schema, 7),
            "not deterministic: `{sql}`"
        );
        let gold = canonical(&sqlgate::sql::text::normalize_spaced_operators(sql));
        let unique: HashSet<&String> = found.iter().collect();
        assert_eq!(unique.len(), found.len(), "duplicates for `{sql}`");
        for neighbor in &found {
            assert_ne!(canonical(neighbor), gold, "`{sql}` is its own neighbor");
        }
    }
}

#[test]
fn constants_of_dev_gold_queries_cover_between_bounds_and_skip_limits() {
    let items = gold_items();
    let between = items
        .iter()
        .find(|(sql, _, _)| sql.contains("capacity BETWEEN 5000 AND 10000"))
        .expect("the stadium BETWEEN query is in dev");
    assert_eq!(
        constants(&between.0),
        [
            sqlgate::engine::value::Value::Int(5000),
            sqlgate::engine::value::Value::Int(10000)
        ]
    );
    let limited = "SELECT song_name ,  song_release_year FROM singer ORDER BY age LIMIT 1";
    assert!(constants(limited).is_empty());
    for (sql, _, _) in &items {
        assert_eq!(constants(sql), constants(sql), "not deterministic: `{sql}`");
    }
}
