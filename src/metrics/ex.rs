//! Execution accuracy (EX): run gold and prediction on the item's database and compare the
//! results under the configured profile.

use super::{gold_and_prediction, gold_failure, prediction_failure, Env, Metric, Outcome, Score};
use crate::engine::spider2::{tables_match, Frame, Rules, Semantics};
use crate::input::config::Spider2Version;
use crate::input::dataset::GoldItem;
use crate::input::spider2::{AnswerSource, GoldAnswer, Spider2Gold};
use crate::input::spider2_select::{answer_conditions, select, Selection};

/// The `ex` metric.
pub struct ExecutionAccuracy;

impl Metric for ExecutionAccuracy {
    fn name(&self) -> &'static str {
        "ex"
    }

    fn score(&self, env: &Env<'_>, item: &GoldItem, prediction: Option<&str>) -> Score {
        if let Some(gold) = &item.spider2 {
            return score_spider2(env, item, gold, prediction);
        }
        let (run, prediction) = match gold_and_prediction(env, item, prediction) {
            Ok(pair) => pair,
            Err(unscored) => return unscored,
        };
        let variants = match env.profile.prediction_variants(&item.sql, prediction) {
            Ok(variants) => variants,
            Err(e) => return Score::wrong(Outcome::PredError, e),
        };
        let most_rows = env.profile.most_matching_rows(run.rows().len());
        let score = |sql: &str| match env.executor.run_at_most(run.db, sql, most_rows) {
            Ok(Some(rows)) => Score::binary(env.profile.same_result(
                run.rows(),
                &rows,
                run.gold.prepared.order_matters,
            )),
            Ok(None) => Score::binary(false),
            Err(e) => prediction_failure(e),
        };
        // The plugged variants are tried until one matches; one that times out ends the search,
        // so a prediction holds its worker for about one timeout, not one per variant.
        let first = score(&variants[0]);
        if first.outcome == Outcome::Match || first.outcome == Outcome::PredTimeout {
            return first;
        }
        for sql in &variants[1..] {
            match score(sql).outcome {
                Outcome::Match => return Score::binary(true),
                Outcome::PredTimeout => break,
                _ => {}
            }
        }
        first
    }
}

/// Spider 2.0: right when the prediction matches any of the item's gold answers under its
/// `condition_cols` and `ignore_order`, as `evaluate.py` decides (`input::spider2_select`): a
/// step where the official code raises (an unreadable gold file, a missing condition list, a
/// column out of range) scores 0 there, answers after it unread; where the 2025-01 script
/// raises outside its `try` (once the prediction ran: reading the predicted result or any gold
/// file, and every step of `compare_multi_pandas_table`, answer by answer), the run stops
/// ([`Env::stop_run`]). A gold query that fails leaves the item unscored unless another answer
/// matches (or the prediction itself fails while some answer ran).
fn score_spider2(
    env: &Env<'_>,
    item: &GoldItem,
    gold: &Spider2Gold,
    prediction: Option<&str>,
) -> Score {
    let Some(db) = env.dataset.database_path(item) else {
        return Score::unscored(Outcome::Skipped, "database absent");
    };
    let rules = env.profile.spider2_rules().unwrap_or(Rules {
        semantics: Semantics::Official,
        version: Default::default(),
    });
    let mut unscored = None;
    let mut answers = Vec::with_capacity(gold.answers.len());
    for (number, answer) in gold.answers.iter().enumerate() {
        match gold_frame(env, item, number, answer, db, rules) {
            Ok(frame) => answers.push(Some(frame)),
            Err(score) => {
                unscored = unscored.or(Some(score));
                answers.push(None);
            }
        }
    }
    let Some(prediction) = prediction else {
        return unscored
            .filter(|_| answers.iter().all(Option::is_none))
            .unwrap_or_else(Score::missing);
    };
    let table = match env.executor.run_table(db, prediction) {
        Ok(table) => table,
        Err(e) if answers.iter().any(Option::is_some) || unscored.is_none() => {
            return prediction_failure(e)
        }
        Err(_) => return unscored.unwrap_or_else(Score::missing),
    };
    // Where the official code raises: inside its `try` (0), or, for 2025-01, outside it.
    let jan = rules.version == Spider2Version::Jan2025;
    let raise = |outside_try: bool, reason: &str| match outside_try {
        true => official_stop(env, gold, reason),
        false => official_exception(reason),
    };
    let predicted = match Frame::from_rows(&table.columns, &table.rows, rules) {
        Ok(frame) => frame,
        Err(reason) => return raise(jan, &format!("the predicted result: {reason}")),
    };
    drop(table);
    if answers.is_empty() {
        return official_exception("No matching gold file found");
    }
    if let Some(Err(reason)) = answers.iter().flatten().find(|a| a.is_err()) {
        return raise(jan, reason);
    }
    if let (true, Some(key)) = (jan, gold.absent_settings.first()) {
        return raise(
            gold.multi,
            &format!("KeyError: the eval line has no `{key}`"),
        );
    }
    let conditions = answer_conditions(&gold.condition, gold.answers.len(), gold.multi);
    for ((frame, condition), answer) in answers.iter().zip(conditions).zip(&gold.answers) {
        let Some(Ok(frame)) = frame else {
            continue;
        };
        let selection = match condition.and_then(|c| select(&c, frame.width(), rules.version)) {
            Ok(Selection::Columns(selection)) => selection,
            Ok(Selection::Series) if frame.height() == 0 => return Score::binary(true),
            Ok(Selection::Series) => {
                let reason = "TypeError: a single condition column gives a Series";
                return raise(jan && gold.multi, reason);
            }
            Err(reason) => {
                let reason = format!("{}: condition_cols: {reason}", answer.file.display());
                return raise(jan && gold.multi, &reason);
            }
        };
        match tables_match(&predicted, frame, &selection, gold.ignore_order, rules) {
            Ok(true) => return Score::binary(true),
            Ok(false) => {}
            Err(reason) => {
                unscored = unscored.or(Some(Score::unscored(Outcome::Unavailable, reason)))
            }
        }
    }
    unscored.unwrap_or_else(|| Score::binary(false))
}

/// Where the 2025-01 `evaluate.py` raises outside its `try` and so stops the whole run: the
/// run is stopped ([`Env::stop_run`]), the item scored 0 meanwhile.
fn official_stop(env: &Env<'_>, gold: &Spider2Gold, reason: &str) -> Score {
    env.stop_run(format!(
        "`{}`: {reason} (compare.version 2025-01 stops here, as that evaluate.py does)",
        gold.instance_id
    ));
    official_exception(reason)
}

/// Where `evaluate.py` scores 0 without a comparison (an exception inside its `try`, no gold file).
fn official_exception(reason: &str) -> Score {
    Score::wrong(
        Outcome::Mismatch,
        format!("evaluate.py scores 0 here: {reason}"),
    )
}

/// One gold answer's result as the official comparison sees it: its stored table, or its query
/// run on the item's database (once for every system).
fn gold_frame(
    env: &Env<'_>,
    item: &GoldItem,
    number: usize,
    answer: &GoldAnswer,
    db: &std::path::Path,
    rules: Rules,
) -> Result<Result<Frame, String>, Score> {
    match &answer.source {
        AnswerSource::Table(table) => {
            Ok(Ok(Frame::from_csv(table.columns.len(), &table.rows, rules)))
        }
        AnswerSource::Unreadable(reason) => Ok(Err(format!("{}: {reason}", answer.file.display()))),
        AnswerSource::Sql(sql) => {
            let result = env.gold_answer(item, number, sql, db);
            match &result.rows {
                Ok(rows) => Ok(Frame::from_rows(&result.columns, rows, rules)),
                Err(e) => Err(gold_failure(e)),
            }
        }
    }
}
