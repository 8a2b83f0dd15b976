//! The audit's findings that compare a gold with other answers to the same question: the scored
//! systems' (`suspect-gold`) and, on Spider 2.0, the gold's own result files
//! (`gold-result-mismatch`).

use super::{rows_shown, shown_db, Context, SUSPECT_MIN_SYSTEMS};
use crate::engine::profile::PreparedGold;
use crate::engine::spider2::{tables_match, Frame, Rules, Semantics};
use crate::engine::value::Row;
use crate::input::dataset::GoldItem;
use crate::input::spider2::{AnswerSource, Spider2Gold};
use crate::input::spider2_select::{answer_conditions, select, Selection};
use std::path::{Path, PathBuf};

/// Evidence when most systems with a prediction (a strict majority, at least two, among at
/// least [`SUSPECT_MIN_SYSTEMS`]) return the same results as each other on every database of
/// the item and differ from the gold on one: for review, never a verdict.
pub(super) fn suspect_gold(
    context: &Context<'_>,
    item: &GoldItem,
    gold: &PreparedGold,
    databases: &[PathBuf],
) -> Option<String> {
    if context.systems.len() < SUSPECT_MIN_SYSTEMS {
        return None;
    }
    let run = |sql: &str| -> Option<Vec<Vec<Row>>> {
        databases
            .iter()
            .map(|db| context.executor.run(db, sql).ok())
            .collect()
    };
    let gold_rows = run(&gold.sql)?;
    let answers: Vec<(&str, Vec<Vec<Row>>)> = context
        .systems
        .iter()
        .filter_map(|system| {
            let prediction = system.predictions.get(item.index)?.as_deref()?;
            let rows = run(&context.profile.prepare_prediction(prediction))?;
            Some((system.name.as_str(), rows))
        })
        .collect();
    let same = |a: &[Vec<Row>], b: &[Vec<Row>]| {
        a.iter()
            .zip(b)
            .all(|(x, y)| context.profile.same_result(x, y, gold.order_matters))
    };
    let (leader, group) = answers
        .iter()
        .map(|(_, rows)| {
            let group: Vec<&str> = answers
                .iter()
                .filter(|(_, other)| same(rows, other))
                .map(|(name, _)| *name)
                .collect();
            (rows, group)
        })
        .max_by_key(|(_, group)| group.len())?;
    if group.len() < 2 || 2 * group.len() <= context.systems.len() || same(&gold_rows, leader) {
        return None;
    }
    let differs = (0..databases.len()).find(|&i| {
        !context
            .profile
            .same_result(&gold_rows[i], &leader[i], gold.order_matters)
    })?;
    Some(format!(
        "{} of {} systems ({}) return the same results on all {} databases, unlike the gold: on \
         {} they return {}, the gold {}",
        group.len(),
        context.systems.len(),
        group.join(", "),
        databases.len(),
        shown_db(&databases[differs]),
        rows_shown(&leader[differs]),
        rows_shown(&gold_rows[differs])
    ))
}

/// Evidence when an instance has gold queries and gold result files and no query's result on
/// the database matches any result file (Spider 2.0's comparison, the profile's semantics).
pub(super) fn spider2_mismatch(
    context: &Context<'_>,
    item: &GoldItem,
    gold: &Spider2Gold,
    db: &Path,
) -> Option<String> {
    let rules = context.profile.spider2_rules().unwrap_or(Rules {
        semantics: Semantics::Official,
        version: Default::default(),
    });
    let conditions = answer_conditions(&gold.condition, gold.answers.len(), gold.multi);
    let tables: Vec<(&std::path::Path, Frame, Vec<usize>)> = gold
        .answers
        .iter()
        .zip(conditions)
        .filter_map(|(answer, condition)| match &answer.source {
            AnswerSource::Table(table) => {
                let frame = Frame::from_csv(table.columns.len(), &table.rows, rules);
                let selection =
                    match condition.and_then(|c| select(&c, frame.width(), rules.version)) {
                        Ok(Selection::Columns(selection)) => selection,
                        _ => return None,
                    };
                Some((answer.file.as_path(), frame, selection))
            }
            AnswerSource::Sql(_) | AnswerSource::Unreadable(_) => None,
        })
        .collect();
    if tables.is_empty() {
        return None;
    }
    let mut evidence = Vec::new();
    for answer in &gold.answers {
        let AnswerSource::Sql(sql) = &answer.source else {
            continue;
        };
        let name = shown_db(&answer.file);
        let result = match context.executor.run_table(db, sql) {
            Ok(result) => result,
            Err(error) => {
                evidence.push(format!("{name} fails: {error}"));
                continue;
            }
        };
        let frame = match Frame::from_rows(&result.columns, &result.rows, rules) {
            Ok(frame) => frame,
            Err(error) => {
                evidence.push(format!("{name}'s result cannot be read back: {error}"));
                continue;
            }
        };
        let matches = tables.iter().any(|(_, table, selection)| {
            tables_match(&frame, table, selection, gold.ignore_order, rules).unwrap_or(false)
        });
        if matches {
            return None;
        }
        evidence.push(format!("{name} returns {}", rows_shown(&result.rows)));
    }
    if evidence.is_empty() {
        return None;
    }
    let files: Vec<String> = tables.iter().map(|(file, ..)| shown_db(file)).collect();
    Some(format!(
        "on {} of {}: {}; it matches none of {}",
        shown_db(db),
        item.db_id,
        evidence.join("; "),
        files.join(", ")
    ))
}
