//! Which calls leave a result to the order rows arrive in, per dialect.

use super::*;

fn postgres(sql: &str) -> bool {
    depends_on_order(sql, FeatureDialect::Postgresql)
}

fn mysql(sql: &str) -> bool {
    depends_on_order(sql, FeatureDialect::Mysql)
}

fn sqlite(sql: &str) -> bool {
    depends_on_order(sql, FeatureDialect::Sqlite)
}

#[test]
fn a_stringing_aggregate_without_order_by_depends_on_the_order() {
    for call in [
        "string_agg(name, ',')",
        "array_agg(name)",
        "json_agg(name)",
        "jsonb_agg(name)",
        "json_object_agg(id, name)",
        "jsonb_object_agg(id, name)",
        "xmlagg(xmlelement(name n, name))",
        "STRING_AGG(DISTINCT name, ',')",
        "pg_catalog.string_agg(name, ',')",
    ] {
        assert!(postgres(&format!("SELECT {call} FROM t")), "{call}");
    }
    for call in [
        "GROUP_CONCAT(name)",
        "GROUP_CONCAT(DISTINCT name SEPARATOR ';')",
        "JSON_ARRAYAGG(name)",
        "JSON_OBJECTAGG(id, name)",
    ] {
        assert!(mysql(&format!("SELECT {call} FROM t")), "{call}");
    }
    for call in [
        "group_concat(name)",
        "group_concat(name, ';')",
        "json_group_array(name)",
    ] {
        assert!(sqlite(&format!("SELECT {call} FROM t")), "{call}");
    }
}

#[test]
fn an_aggregate_ordered_by_every_value_it_strings_is_determined() {
    assert!(!postgres(
        "SELECT string_agg(name, ',' ORDER BY name DESC) FROM t"
    ));
    assert!(!postgres(
        "SELECT string_agg(name, ',' ORDER BY id, name NULLS FIRST) FROM t"
    ));
    assert!(!postgres(
        "SELECT json_object_agg(id, name ORDER BY name, id) FROM t"
    ));
    assert!(!postgres(
        "SELECT array_agg(DISTINCT lower(name) ORDER BY lower(name)) FROM t"
    ));
    assert!(!mysql("SELECT GROUP_CONCAT(c.name ORDER BY c.name) FROM c"));
    assert!(!mysql(
        "SELECT GROUP_CONCAT(name ORDER BY name DESC SEPARATOR ';') FROM t"
    ));
    assert!(!sqlite(
        "SELECT group_concat(name, ',' ORDER BY name) FROM t"
    ));
}

#[test]
fn an_aggregate_ordered_by_keys_that_may_tie_is_held_undetermined() {
    // `id` may be unique, but no token says so; a constant key ties every row.
    assert!(postgres("SELECT string_agg(name, ',' ORDER BY id) FROM t"));
    assert!(postgres("SELECT string_agg(name, ',' ORDER BY 1) FROM t"));
    assert!(postgres(
        "SELECT json_object_agg(id, name ORDER BY id) FROM t"
    ));
    assert!(mysql("SELECT GROUP_CONCAT(name ORDER BY id DESC) FROM t"));
    assert!(mysql("SELECT GROUP_CONCAT(name, age ORDER BY name) FROM t"));
}

#[test]
fn an_aggregate_inside_another_call_or_sub_query_is_found() {
    assert!(postgres(
        "SELECT length(string_agg(name, ',')) FROM t WHERE id IN (SELECT 1)"
    ));
    assert!(postgres(
        "SELECT x FROM (SELECT array_agg(name) AS x FROM t) s"
    ));
    assert!(postgres(
        "SELECT string_agg(name, ',' ORDER BY name), array_agg(id) FROM t"
    ));
}

#[test]
fn order_insensitive_queries_are_determined() {
    assert!(!postgres(
        "SELECT count(*), sum(x), max(name) FROM t GROUP BY id ORDER BY 1"
    ));
    assert!(!sqlite("SELECT DISTINCT name FROM t"));
    assert!(!postgres("SELECT string_agg FROM t"));
    assert!(!postgres("SELECT name FROM t FETCH FIRST 2 ROWS ONLY"));
}

#[test]
fn window_functions_reading_positions_need_an_order_by_their_values() {
    assert!(postgres("SELECT first_value(name) OVER () FROM t"));
    assert!(postgres("SELECT lag(name) OVER (PARTITION BY g) FROM t"));
    assert!(postgres(
        "SELECT lead(name, 1, 'none') OVER (ORDER BY id) FROM t"
    ));
    assert!(!postgres(
        "SELECT lead(name, 1, 'none') OVER (ORDER BY name) FROM t"
    ));
    assert!(!postgres(
        "SELECT last_value(x) OVER (PARTITION BY g ORDER BY x DESC) FROM t"
    ));
    assert!(!mysql("SELECT nth_value(x, 2) OVER (ORDER BY x) FROM t"));
}

#[test]
fn numbering_windows_rows_frames_and_named_windows_are_held_undetermined() {
    assert!(postgres("SELECT row_number() OVER () FROM t"));
    assert!(postgres("SELECT row_number() OVER (ORDER BY id) FROM t"));
    assert!(mysql("SELECT ntile(2) OVER (ORDER BY x) FROM t"));
    assert!(postgres(
        "SELECT sum(x) OVER (ORDER BY y ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t"
    ));
    assert!(postgres(
        "SELECT sum(x) OVER (ORDER BY y ROWS 2 PRECEDING) FROM t"
    ));
    assert!(postgres(
        "SELECT first_value(x) OVER w FROM t WINDOW w AS (ORDER BY x)"
    ));
}

#[test]
fn ranks_and_running_totals_over_peers_are_determined() {
    assert!(!postgres(
        "SELECT rank() OVER (ORDER BY x), dense_rank() OVER () FROM t"
    ));
    assert!(!postgres(
        "SELECT sum(x) OVER (ORDER BY y), count(*) OVER () FROM t"
    ));
    assert!(!postgres(
        "SELECT sum(x) OVER (ORDER BY y RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM t"
    ));
}

#[test]
fn distinct_on_is_held_undetermined() {
    assert!(postgres(
        "SELECT DISTINCT ON (g) g, name FROM t ORDER BY g, name"
    ));
    assert!(postgres("select distinct on(g) name from t"));
}

#[test]
fn a_text_the_tokenizer_refuses_is_held_undetermined_when_it_names_a_call() {
    assert!(postgres(
        "SELECT string_agg(name, ',') FROM t WHERE name = 'open"
    ));
    assert!(!postgres("SELECT name FROM t WHERE name = 'open"));
}

#[test]
fn an_array_of_a_sub_query_and_any_value_are_held_undetermined() {
    assert!(postgres(
        "SELECT array_to_string(ARRAY(SELECT name FROM t), ',')"
    ));
    assert!(postgres("SELECT array(SELECT name FROM t ORDER BY name)"));
    assert!(postgres("SELECT any_value(name) FROM t GROUP BY g"));
    assert!(mysql("SELECT ANY_VALUE(name) FROM t GROUP BY g"));
    assert!(!postgres(
        "SELECT ARRAY[1, 2], cardinality(ARRAY[name]) FROM t"
    ));
}
