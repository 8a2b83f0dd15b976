//! Exact set match (ESM), Spider's official `eval_exact_match`, reproduced verdict for verdict.
//!
//! Both queries are parsed into the Spider structure; values are dropped (sub-queries kept),
//! foreign-key columns of the FROM tables are mapped to the column they reference (tables.json),
//! DISTINCT is dropped, and ten components are compared as multisets. The official blind spots
//! (join conditions, LIMIT values, DISTINCT outside aggregates) stay, on purpose: `esm` says what
//! the official evaluator says. A prediction the official parser rejects is wrong.

use super::{Detail, Details, Env, Metric, Outcome, Score};
use crate::input::dataset::GoldItem;
use crate::sql::ir::*;
use crate::sql::parse::parse_spider;
use crate::sql::schema::Schema;
use crate::sql::text::replace_value_placeholder;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

/// One component's official partial-match scores (ESM).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ComponentScore {
    /// Precision (official "acc").
    pub acc: f64,
    /// Recall.
    pub rec: f64,
    /// F1.
    pub f1: f64,
    /// Items of this component in the gold.
    pub label_total: usize,
    /// Items of this component in the prediction.
    pub pred_total: usize,
}

/// Component names of [`Components`], in the official report order.
pub const COMPONENTS: [&str; 10] = [
    "select",
    "select(no AGG)",
    "where",
    "where(no OP)",
    "group(no Having)",
    "group",
    "order",
    "and/or",
    "IUEN",
    "keywords",
];

/// ESM's per-item detail: the official partial-match scores, in [`COMPONENTS`] order.
#[derive(Debug, Clone, PartialEq)]
pub struct Components(pub [ComponentScore; 10]);

impl Detail for Components {
    fn to_json(&self) -> serde_json::Value {
        let map: serde_json::Map<String, serde_json::Value> = (COMPONENTS.iter())
            .zip(&self.0)
            .map(|(name, c)| {
                let value = serde_json::json!({"acc": c.acc, "rec": c.rec, "f1": c.f1, "label_total": c.label_total, "pred_total": c.pred_total});
                (name.to_string(), value)
            })
            .collect();
        serde_json::Value::Object(map)
    }
}

impl Components {
    /// Reads what [`Detail::to_json`] wrote.
    fn from_json(json: &serde_json::Value) -> Option<Components> {
        let component = |name: &str| -> Option<ComponentScore> {
            let c = json.get(name)?;
            let number = |key: &str| c.get(key).and_then(serde_json::Value::as_f64);
            Some(ComponentScore {
                acc: number("acc")?,
                rec: number("rec")?,
                f1: number("f1")?,
                label_total: number("label_total")? as usize,
                pred_total: number("pred_total")? as usize,
            })
        };
        let scores: Vec<ComponentScore> = (COMPONENTS.iter())
            .map(|n| component(n))
            .collect::<Option<_>>()?;
        Some(Components(scores.try_into().ok()?))
    }
}

/// The `esm` metric, with each item's gold parsed once however many systems are scored.
#[derive(Default)]
pub struct ExactSetMatch {
    golds: Mutex<HashMap<usize, Arc<ParsedGold>>>,
}

/// An item's gold as ESM compares it: parsed and rebuilt the official way, or why the official
/// parser rejects it. It keeps the text and database it was parsed from, so an item index of
/// another dataset never reads it.
struct ParsedGold {
    sql: String,
    db_id: String,
    rebuilt: Result<Sql, String>,
}

impl ExactSetMatch {
    /// The item's gold, parsed and rebuilt on first use.
    fn gold(
        &self,
        item: &GoldItem,
        schema: &Schema,
        kmap: &HashMap<String, String>,
    ) -> Arc<ParsedGold> {
        let cached = self
            .golds
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(&item.index)
            .cloned();
        if let Some(gold) = cached.filter(|g| g.sql == item.sql && g.db_id == item.db_id) {
            return gold;
        }
        let gold = Arc::new(ParsedGold {
            sql: item.sql.clone(),
            db_id: item.db_id.clone(),
            rebuilt: parse_spider(&item.sql, schema)
                .map(|gold| official_rebuild(gold, schema, kmap))
                .map_err(|e| e.to_string()),
        });
        self.golds
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(item.index, Arc::clone(&gold));
        gold
    }
}

impl Metric for ExactSetMatch {
    fn read_details(&self, json: &serde_json::Value) -> Option<Details> {
        Components::from_json(json).map(Details::new)
    }

    fn name(&self) -> &'static str {
        "esm"
    }

    fn reads_results(&self) -> bool {
        false
    }

    fn needs_sqlite_files(&self) -> bool {
        true
    }

    fn score(&self, env: &Env<'_>, item: &GoldItem, prediction: Option<&str>) -> Score {
        let database = &env.dataset.databases[&item.db_id];
        let (Some(schema), Some(entry)) = (&database.schema, &database.tables_entry) else {
            return Score::unscored(
                Outcome::Skipped,
                "no schema and foreign keys (tables.json) for this database",
            );
        };
        let kmap = entry.foreign_key_map();
        let parsed_gold = self.gold(item, schema, kmap);
        let gold = match &parsed_gold.rebuilt {
            Ok(gold) => gold,
            Err(e) => {
                return Score::unscored(
                    Outcome::GoldError,
                    format!("gold query does not parse: {e}"),
                )
            }
        };
        let Some(prediction) = prediction else {
            return Score::missing();
        };
        let parsed = parse_spider(&replace_value_placeholder(prediction), schema);
        let (pred, parse_error) = match parsed {
            Ok(pred) => (pred, None),
            Err(e) => (Sql::default(), Some(e.to_string())),
        };
        let pred = official_rebuild(pred, schema, kmap);
        let partial = partial_match(&pred, gold);
        let exact = exact_match(&pred, gold, &partial);
        let mut score = match parse_error {
            Some(error) => Score::wrong(
                Outcome::PredError,
                format!("the official parser rejects it: {error}"),
            ),
            None => Score::binary(exact),
        };
        score.details = Some(Details::new(Components(partial)));
        score
    }
}

/// The official `rebuild_sql_val` then `rebuild_sql_col`, with the valid columns of the
/// top-level FROM tables.
fn official_rebuild(mut sql: Sql, schema: &Schema, kmap: &HashMap<String, String>) -> Sql {
    let valid = valid_col_units(&sql.from.table_units, schema);
    drop_values(&mut sql);
    map_columns(&mut sql, &valid, kmap);
    sql
}

/// Column ids of the tables named directly in FROM.
fn valid_col_units(table_units: &[TableUnit], schema: &Schema) -> HashSet<String> {
    let tables: Vec<&str> = table_units
        .iter()
        .filter_map(|t| match t {
            TableUnit::Table(id) => Some(id.trim_start_matches("__").trim_end_matches("__")),
            TableUnit::Sql(_) => None,
        })
        .collect();
    schema
        .tables()
        .iter()
        .filter(|(table, _)| tables.contains(&table.as_str()))
        .flat_map(|(table, columns)| columns.iter().map(move |c| format!("__{table}.{c}__")))
        .collect()
}

/// Values become `None` except sub-queries, which lose their values too (FROM sub-queries are
/// left alone, as in the official code).
fn drop_values(sql: &mut Sql) {
    for condition in [&mut sql.from.conds, &mut sql.having, &mut sql.where_] {
        for unit in &mut condition.units {
            for value in [&mut unit.val1, &mut unit.val2] {
                *value = match value.take() {
                    Some(Operand::Sql(mut nested)) => {
                        drop_values(&mut nested);
                        Some(Operand::Sql(nested))
                    }
                    _ => None,
                };
            }
        }
    }
    for nested in [&mut sql.intersect, &mut sql.except, &mut sql.union]
        .into_iter()
        .flatten()
    {
        drop_values(nested);
    }
}

/// Foreign keys to the key they reference and DISTINCT dropped, in this query's own clauses and
/// its set-operation continuations (not inside condition sub-queries, as in the official code).
fn map_columns(sql: &mut Sql, valid: &HashSet<String>, kmap: &HashMap<String, String>) {
    let map_col = |unit: &mut ColUnit| {
        if valid.contains(&unit.col) {
            if let Some(target) = kmap.get(&unit.col) {
                unit.col = target.clone();
            }
        }
        unit.distinct = false;
    };
    let map_val = |unit: &mut ValUnit| {
        map_col(&mut unit.left);
        if let Some(right) = &mut unit.right {
            map_col(right);
        }
    };
    sql.select_distinct = false;
    sql.select.iter_mut().for_each(|(_, unit)| map_val(unit));
    for condition in [&mut sql.from.conds, &mut sql.where_, &mut sql.having] {
        condition
            .units
            .iter_mut()
            .for_each(|u| map_val(&mut u.val_unit));
    }
    sql.group_by.iter_mut().for_each(map_col);
    if let Some((_, units)) = &mut sql.order_by {
        units.iter_mut().for_each(map_val);
    }
    for nested in [&mut sql.intersect, &mut sql.except, &mut sql.union]
        .into_iter()
        .flatten()
    {
        map_columns(nested, valid, kmap);
    }
}

/// The official `get_scores`: all or nothing.
fn scores(count: usize, pred_total: usize, label_total: usize) -> ComponentScore {
    let hit = pred_total == label_total && count == pred_total;
    let v = if hit { 1.0 } else { 0.0 };
    ComponentScore {
        acc: v,
        rec: v,
        f1: v,
        label_total,
        pred_total,
    }
}

/// Counts how many of `pred` can be matched to distinct equal elements of `label`.
fn multiset_hits<T: PartialEq>(pred: &[T], label: &[T]) -> usize {
    let mut remaining: Vec<&T> = label.iter().collect();
    pred.iter()
        .filter(|p| match remaining.iter().position(|l| *l == *p) {
            Some(i) => {
                remaining.remove(i);
                true
            }
            None => false,
        })
        .count()
}

/// The official `eval_partial_match`, components in [`COMPONENTS`] order.
pub fn partial_match(pred: &Sql, label: &Sql) -> [ComponentScore; 10] {
    let (pred_select, label_select) = (&pred.select, &label.select);
    let select_hits = multiset_hits(pred_select, label_select);
    let pred_vals: Vec<&ValUnit> = pred_select.iter().map(|(_, v)| v).collect();
    let label_vals: Vec<&ValUnit> = label_select.iter().map(|(_, v)| v).collect();
    let select_no_agg = multiset_hits(&pred_vals, &label_vals);
    let (ps, ls) = (pred_select.len(), label_select.len());

    let (pred_where, label_where) = (&pred.where_.units, &label.where_.units);
    let where_hits = multiset_hits(pred_where, label_where);
    let pred_where_vals: Vec<&ValUnit> = pred_where.iter().map(|u| &u.val_unit).collect();
    let label_where_vals: Vec<&ValUnit> = label_where.iter().map(|u| &u.val_unit).collect();
    let where_no_op = multiset_hits(&pred_where_vals, &label_where_vals);
    let (pw, lw) = (pred_where.len(), label_where.len());

    let column_name = |unit: &ColUnit| match unit.col.split_once('.') {
        Some((_, column)) => column.to_string(),
        None => unit.col.clone(),
    };
    let pred_group: Vec<String> = pred.group_by.iter().map(column_name).collect();
    let label_group: Vec<String> = label.group_by.iter().map(column_name).collect();
    let group_hits = multiset_hits(&pred_group, &label_group);

    [
        scores(select_hits, ps, ls),
        scores(select_no_agg, ps, ls),
        scores(where_hits, pw, lw),
        scores(where_no_op, pw, lw),
        scores(group_hits, pred_group.len(), label_group.len()),
        having_score(pred, label),
        order_score(pred, label),
        and_or_score(pred, label),
        iuen_score(pred, label),
        keywords_score(pred, label),
    ]
}

fn having_score(pred: &Sql, label: &Sql) -> ComponentScore {
    let pred_total = usize::from(!pred.group_by.is_empty());
    let label_total = usize::from(!label.group_by.is_empty());
    let same_columns = pred
        .group_by
        .iter()
        .map(|c| &c.col)
        .eq(label.group_by.iter().map(|c| &c.col));
    let count = usize::from(
        pred_total == 1 && label_total == 1 && same_columns && pred.having == label.having,
    );
    scores(count, pred_total, label_total)
}

fn order_score(pred: &Sql, label: &Sql) -> ComponentScore {
    let pred_total = usize::from(pred.order_by.is_some());
    let label_total = usize::from(label.order_by.is_some());
    let same_limit_presence = pred.limit.is_some() == label.limit.is_some();
    let count = usize::from(
        label.order_by.is_some() && pred.order_by == label.order_by && same_limit_presence,
    );
    scores(count, pred_total, label_total)
}

fn and_or_score(pred: &Sql, label: &Sql) -> ComponentScore {
    let pred_set: HashSet<Connective> = pred.where_.connectives.iter().copied().collect();
    let label_set: HashSet<Connective> = label.where_.connectives.iter().copied().collect();
    if pred_set == label_set {
        return scores(1, 1, 1);
    }
    // The official function returns its two totals swapped; kept for the partial statistics.
    scores(0, label_set.len(), pred_set.len())
}

fn iuen_score(pred: &Sql, label: &Sql) -> ComponentScore {
    let pairs = [
        (&pred.intersect, &label.intersect),
        (&pred.except, &label.except),
        (&pred.union, &label.union),
    ];
    let (mut label_total, mut pred_total, mut count) = (0, 0, 0);
    for (p, l) in pairs {
        pred_total += usize::from(p.is_some());
        label_total += usize::from(l.is_some());
        if let (Some(p), Some(l)) = (p, l) {
            let partial = partial_match(p, l);
            count += usize::from(exact_match(p, l, &partial));
        }
    }
    scores(count, pred_total, label_total)
}

/// The official `get_keywords`.
fn keywords(sql: &Sql) -> HashSet<&'static str> {
    let mut set = HashSet::new();
    let flags = [
        (!sql.where_.is_empty(), "where"),
        (!sql.group_by.is_empty(), "group"),
        (!sql.having.is_empty(), "having"),
        (sql.order_by.is_some(), "order"),
        (sql.limit.is_some(), "limit"),
        (sql.except.is_some(), "except"),
        (sql.union.is_some(), "union"),
        (sql.intersect.is_some(), "intersect"),
    ];
    set.extend(flags.iter().filter(|(on, _)| *on).map(|(_, k)| *k));
    if let Some((direction, _)) = &sql.order_by {
        set.insert(match direction {
            OrderDir::Asc => "asc",
            OrderDir::Desc => "desc",
        });
    }
    let conditions = [&sql.from.conds, &sql.where_, &sql.having];
    if conditions
        .iter()
        .flat_map(|c| &c.connectives)
        .any(|c| *c == Connective::Or)
    {
        set.insert("or");
    }
    let units: Vec<&CondUnit> = conditions.iter().flat_map(|c| &c.units).collect();
    if units.iter().any(|u| u.not) {
        set.insert("not");
    }
    if units.iter().any(|u| u.op == WhereOp::In) {
        set.insert("in");
    }
    if units.iter().any(|u| u.op == WhereOp::Like) {
        set.insert("like");
    }
    set
}

fn keywords_score(pred: &Sql, label: &Sql) -> ComponentScore {
    let (pred_keywords, label_keywords) = (keywords(pred), keywords(label));
    let count = pred_keywords
        .iter()
        .filter(|k| label_keywords.contains(*k))
        .count();
    scores(count, pred_keywords.len(), label_keywords.len())
}

/// The official `eval_exact_match`: every component's F1 is 1 and the sorted FROM units agree.
fn exact_match(pred: &Sql, label: &Sql, partial: &[ComponentScore; 10]) -> bool {
    if partial.iter().any(|c| c.f1 != 1.0) {
        return false;
    }
    if label.from.table_units.is_empty() {
        return true;
    }
    sorted_units(&label.from.table_units) == sorted_units(&pred.from.table_units)
}

/// FROM units in Python's tuple order: sub-queries (`'sql'`) before tables, tables by id.
fn sorted_units(units: &[TableUnit]) -> Vec<&TableUnit> {
    let mut sorted: Vec<&TableUnit> = units.iter().collect();
    sorted.sort_by(|a, b| match (a, b) {
        (TableUnit::Table(x), TableUnit::Table(y)) => x.cmp(y),
        (TableUnit::Sql(_), TableUnit::Table(_)) => std::cmp::Ordering::Less,
        (TableUnit::Table(_), TableUnit::Sql(_)) => std::cmp::Ordering::Greater,
        (TableUnit::Sql(_), TableUnit::Sql(_)) => std::cmp::Ordering::Equal,
    });
    sorted
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::schema::TableEntry;

    fn entry() -> TableEntry {
        serde_json::from_value(serde_json::json!({
            "db_id": "pets",
            "table_names_original": ["Student", "Has_Pet"],
            "column_names_original": [[-1, "*"], [0, "StuID"], [0, "Name"], [1, "StuID"], [1, "PetID"]],
            "foreign_keys": [[3, 1]],
            "primary_keys": [1]
        }))
        .unwrap()
    }

    fn esm(pred: &str, gold: &str) -> bool {
        let entry = entry();
        let schema = Schema::from_tables_json(&entry);
        let kmap = entry.foreign_key_map();
        let gold = official_rebuild(parse_spider(gold, &schema).unwrap(), &schema, kmap);
        let pred = official_rebuild(parse_spider(pred, &schema).unwrap(), &schema, kmap);
        exact_match(&pred, &gold, &partial_match(&pred, &gold))
    }

    fn gold_item(index: usize, sql: &str) -> GoldItem {
        GoldItem {
            index,
            db_id: "pets".into(),
            sql: sql.into(),
            question: None,
            evidence: None,
            difficulty: None,
            skipped: false,
            spider2: None,
            task: None,
        }
    }

    #[test]
    fn a_gold_is_parsed_once_per_item_and_never_read_for_another_text() {
        let entry = entry();
        let schema = Schema::from_tables_json(&entry);
        let kmap = entry.foreign_key_map();
        let metric = ExactSetMatch::default();
        let first = gold_item(0, "SELECT Name FROM Student");
        let parsed = metric.gold(&first, &schema, kmap);
        assert!(Arc::ptr_eq(&parsed, &metric.gold(&first, &schema, kmap)));
        let other = gold_item(0, "SELECT count(*) FROM Has_Pet");
        let reparsed = metric.gold(&other, &schema, kmap);
        let expected = official_rebuild(parse_spider(&other.sql, &schema).unwrap(), &schema, kmap);
        assert_eq!(reparsed.rebuilt, Ok(expected));
        assert_ne!(reparsed.rebuilt, parsed.rebuilt);
        let broken = metric.gold(&gold_item(1, "SELECT Name FROM NoSuchTable"), &schema, kmap);
        assert!(broken.rebuilt.is_err());
    }

    #[test]
    fn foreign_keys_map_to_the_referenced_key() {
        let gold = "SELECT count(*) FROM Student AS T1 JOIN Has_Pet AS T2 ON T1.StuID = T2.StuID GROUP BY T1.StuID";
        let pred = "SELECT count(*) FROM Student AS T1 JOIN Has_Pet AS T2 ON T1.StuID = T2.StuID GROUP BY T2.StuID";
        assert!(esm(pred, gold));
    }

    #[test]
    fn official_blind_spots_are_kept() {
        let gold = "SELECT DISTINCT Name FROM Student WHERE StuID > 3 ORDER BY Name LIMIT 1";
        assert!(esm(
            "SELECT Name FROM Student WHERE StuID > 9 ORDER BY Name LIMIT 5",
            gold
        ));
        let join = "SELECT T1.Name FROM Student AS T1 JOIN Has_Pet AS T2 ON T1.StuID = T2.StuID";
        assert!(esm(
            "SELECT T1.Name FROM Student AS T1 JOIN Has_Pet AS T2 ON T1.StuID = T2.PetID",
            join
        ));
    }

    #[test]
    fn real_differences_are_mismatches() {
        let gold = "SELECT Name FROM Student WHERE StuID > 3";
        assert!(!esm("SELECT Name FROM Student WHERE StuID < 3", gold));
        assert!(!esm("SELECT Name FROM Student", gold));
        assert!(!esm(
            "SELECT Name FROM Student WHERE StuID > 3 ORDER BY Name",
            gold
        ));
        assert!(!esm(
            "SELECT count(Name) FROM Student WHERE StuID > 3",
            gold
        ));
    }

    #[test]
    fn unparseable_predictions_match_nothing() {
        let gold = official_rebuild(
            parse_spider(
                "SELECT Name FROM Student",
                &Schema::from_tables_json(&entry()),
            )
            .unwrap(),
            &Schema::default(),
            &HashMap::new(),
        );
        let empty = Sql::default();
        assert!(!exact_match(&empty, &gold, &partial_match(&empty, &gold)));
    }
}
