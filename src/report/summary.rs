//! Outputs of a run: per-item JSONL, the `summary.json` aggregates and the human summary.
//!
//! Files are written only after the whole run succeeded, through a temporary file renamed into
//! place, so a failed run leaves no partial output.

use crate::analysis::agreement::Analysis;
use crate::judge::Verdict;
use crate::metrics::esm_plus::Rules;
use crate::metrics::{
    ComponentScore, Components, Details, JudgeTotals, Judgement, Outcome, COMPONENTS,
    PARTIAL_CREDIT_KEYS,
};
use crate::score::evaluation::Evaluation;
use crate::suites::counterexample::Category;
use crate::util::log::log_value;
use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Difficulty labels in the order reports show them; unknown labels follow alphabetically.
const KNOWN_DIFFICULTIES: [&str; 7] = [
    "easy",
    "medium",
    "hard",
    "extra",
    "simple",
    "moderate",
    "challenging",
];

/// Accuracy of one metric in one difficulty cell.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cell {
    /// Sum of the metric's values over scored items.
    pub total: f64,
    /// Scored items (the denominator).
    pub count: usize,
}

impl Cell {
    /// Mean value, `None` when nothing was scored.
    pub fn accuracy(&self) -> Option<f64> {
        (self.count > 0).then(|| self.total / self.count as f64)
    }
}

/// Aggregates of one system.
#[derive(Debug, Clone)]
pub struct SystemSummary {
    /// System name.
    pub name: String,
    /// Items the prediction file gives no answer.
    pub missing: usize,
    /// Items whose answer held no SQL `predictions[].extract` could find (scored
    /// `extraction_failed`), counted apart from the missing ones.
    pub unextracted: usize,
    /// Items scored by every metric, per difficulty (and `all`).
    pub counts: BTreeMap<String, usize>,
    /// Per metric, per difficulty (and `all`).
    pub cells: BTreeMap<String, BTreeMap<String, Cell>>,
    /// Per metric, how many items ended in each outcome.
    pub outcomes: BTreeMap<String, BTreeMap<Outcome, usize>>,
    /// Per metric with per-component details (ESM), per difficulty, per component: the
    /// official partial-match averages.
    pub components: BTreeMap<String, BTreeMap<String, [ComponentCell; 10]>>,
    /// Items the original database accepts and the test suite rejects, by the category of
    /// their counterexample: what moved TS away from EX.
    pub counterexamples: BTreeMap<Category, usize>,
    /// The LLM judge's requests, tokens, cost and categories, when `flex` ran.
    pub judge: Option<JudgeTotals>,
    /// Per metric with `unavailable` items, the reason given for the first of them.
    pub unavailable: BTreeMap<String, String>,
    /// ESM+: per equivalence rule, the items it turned from wrong to right (seed 001 §5.4).
    pub rule_credits: BTreeMap<crate::sql::plus::Rule, usize>,
    /// Per metric with sub-scores (SQLMorph), per sub-score (`ex`, `exp`, `exr`, `f1`), per
    /// difficulty: the mean over scored items.
    pub sub_scores: BTreeMap<String, BTreeMap<&'static str, BTreeMap<String, Cell>>>,
}

/// The official partial-matching aggregate of one component in one difficulty cell: precision
/// averaged over items where the prediction has the component, recall over items where the gold
/// has it, F1 of the two (1 when both are 0, as the official script prints).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ComponentCell {
    acc_sum: f64,
    acc_count: usize,
    rec_sum: f64,
    rec_count: usize,
}

impl ComponentCell {
    fn add(&mut self, score: &ComponentScore) {
        if score.pred_total > 0 {
            self.acc_sum += score.acc;
            self.acc_count += 1;
        }
        if score.label_total > 0 {
            self.rec_sum += score.rec;
            self.rec_count += 1;
        }
    }

    /// (precision, recall, F1) as the official script computes them.
    pub fn scores(&self) -> (f64, f64, f64) {
        let mean = |sum: f64, count: usize| if count == 0 { 0.0 } else { sum / count as f64 };
        let (acc, rec) = (
            mean(self.acc_sum, self.acc_count),
            mean(self.rec_sum, self.rec_count),
        );
        let f1 = if acc == 0.0 && rec == 0.0 {
            1.0
        } else {
            2.0 * acc * rec / (acc + rec)
        };
        (acc, rec, f1)
    }
}

/// Aggregates of a whole run.
#[derive(Debug, Clone)]
pub struct Summary {
    /// Difficulty labels present, in report order, then `all`.
    pub difficulties: Vec<String>,
    /// Per system, in config order.
    pub systems: Vec<SystemSummary>,
}

impl Summary {
    /// Computes the aggregates of an evaluation.
    pub fn of(evaluation: &Evaluation) -> Summary {
        let difficulties = difficulty_order(evaluation);
        let systems = (0..evaluation.systems.len())
            .map(|s| summarize_system(evaluation, s))
            .collect();
        Summary {
            difficulties,
            systems,
        }
    }
}

fn difficulty_order(evaluation: &Evaluation) -> Vec<String> {
    let mut present: Vec<String> = evaluation
        .dataset
        .items
        .iter()
        .filter_map(|i| i.difficulty.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    present.sort_by_key(|d| {
        let rank = KNOWN_DIFFICULTIES.iter().position(|k| k == d);
        (rank.unwrap_or(usize::MAX), d.clone())
    });
    present.push("all".to_string());
    present
}

fn summarize_system(evaluation: &Evaluation, system: usize) -> SystemSummary {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut cells: BTreeMap<String, BTreeMap<String, Cell>> = BTreeMap::new();
    let mut outcomes: BTreeMap<String, BTreeMap<Outcome, usize>> = BTreeMap::new();
    let mut components: BTreeMap<String, BTreeMap<String, [ComponentCell; 10]>> = BTreeMap::new();
    let mut counterexamples: BTreeMap<Category, usize> = BTreeMap::new();
    let mut judge: Option<JudgeTotals> = None;
    let mut unavailable: BTreeMap<String, String> = BTreeMap::new();
    let mut rule_credits: BTreeMap<crate::sql::plus::Rule, usize> = BTreeMap::new();
    let mut sub_scores: BTreeMap<String, BTreeMap<&'static str, BTreeMap<String, Cell>>> =
        BTreeMap::new();
    for result in evaluation.system_results(system) {
        let item = &evaluation.dataset.items[result.index];
        let keys: Vec<&str> = item
            .difficulty
            .as_deref()
            .into_iter()
            .chain(["all"])
            .collect();
        if result.scores.iter().all(|s| s.outcome.is_scored()) {
            for key in &keys {
                *counts.entry(key.to_string()).or_default() += 1;
            }
        }
        for (metric, score) in evaluation.metrics.iter().zip(&result.scores) {
            *outcomes
                .entry(metric.clone())
                .or_default()
                .entry(score.outcome)
                .or_default() += 1;
            if let Some(counterexample) = score.details.as_ref().and_then(Details::counterexample) {
                *counterexamples.entry(counterexample.category).or_default() += 1;
            }
            if let (Outcome::Unavailable, Some(reason)) = (score.outcome, &score.error) {
                unavailable
                    .entry(metric.clone())
                    .or_insert_with(|| reason.clone());
            }
            if let Some(judgement) = (score.details.as_ref()).and_then(Details::get::<Judgement>) {
                judge
                    .get_or_insert_with(JudgeTotals::default)
                    .add(judgement);
            }
            let components_of = (score.details.as_ref()).and_then(Details::get::<Components>);
            if let (Some(Components(scores)), true) = (components_of, score.outcome.is_scored()) {
                for key in &keys {
                    let cells = components
                        .entry(metric.clone())
                        .or_default()
                        .entry(key.to_string())
                        .or_default();
                    for (cell, component) in cells.iter_mut().zip(scores.iter()) {
                        cell.add(component);
                    }
                }
            }
            if let Some(rules) = (score.details.as_ref()).and_then(Details::get::<Rules>) {
                for rule in rules.needed.rules() {
                    *rule_credits.entry(rule).or_default() += 1;
                }
            }
            for sub in PARTIAL_CREDIT_KEYS {
                let Some(value) = score.sub_score(sub) else {
                    continue;
                };
                let by_difficulty = sub_scores
                    .entry(metric.clone())
                    .or_default()
                    .entry(sub)
                    .or_default();
                for key in &keys {
                    let cell = by_difficulty.entry(key.to_string()).or_default();
                    cell.total += value;
                    cell.count += 1;
                }
            }
            let Some(value) = score.value.filter(|_| score.outcome.is_scored()) else {
                continue;
            };
            for key in &keys {
                let cell = cells
                    .entry(metric.clone())
                    .or_default()
                    .entry(key.to_string())
                    .or_default();
                cell.total += value;
                cell.count += 1;
            }
        }
    }
    SystemSummary {
        name: evaluation.systems[system].name.clone(),
        missing: evaluation.systems[system].missing_count(),
        unextracted: evaluation.systems[system].unextracted.len(),
        counts,
        cells,
        outcomes,
        components,
        counterexamples,
        judge,
        unavailable,
        rule_credits,
        sub_scores,
    }
}

/// The `summary.json` document; with a gate run, also FP / FN, their spread and Kendall tau
/// against the reference, and the gate's verdict.
pub fn summary_json(
    evaluation: &Evaluation,
    summary: &Summary,
    gated: Option<(&Analysis, &Verdict)>,
) -> Json {
    let dataset = &evaluation.dataset;
    let mut systems = Map::new();
    for system in &summary.systems {
        let mut entry = system_json(system, &summary.difficulties);
        if let Some(analysis) = gated.and_then(|(analysis, _)| analysis.system(&system.name)) {
            entry["fp"] = ratio_table_json(&analysis.false_positives, &summary.difficulties);
            entry["fn"] = ratio_table_json(&analysis.false_negatives, &summary.difficulties);
            entry["common_counts"] =
                count_table_json(&analysis.common_accuracy, &summary.difficulties);
            if !analysis.failure_scores.is_empty() {
                entry["failure_scores"] = json!(analysis.failure_scores);
            }
        }
        systems.insert(system.name.clone(), entry);
    }
    let mut document = json!({
        "sqlgate_version": env!("CARGO_PKG_VERSION"),
        "dataset": {
            "items": dataset.items.len(),
            "scored": dataset.scored_count() - evaluation.gold_failures().len(),
            "skipped": dataset.items.len() - dataset.scored_count(),
            "gold_errors": evaluation.gold_errors(),
            "gold_timeouts": evaluation.gold_timeouts(),
            "sha256": dataset.sha256,
            "digests": dataset.digests,
        },
        "metrics": evaluation.metrics,
        "systems": systems,
    });
    let gold_notes = dataset.gold_notes();
    if !gold_notes.is_empty() {
        document["gold_notes"] = (gold_notes.iter())
            .map(|(instance, notes)| json!({"instance_id": instance, "notes": notes}))
            .collect();
    }
    if let Some(disagreements) = crate::report::disagreements::disagreements_json(evaluation) {
        document["disagreements"] = disagreements;
    }
    let overrides = crate::report::audit::override_views(&evaluation.overrides);
    if !overrides.is_empty() {
        document["gold_overrides"] = json!(overrides);
    }
    let timing = &evaluation.timing;
    if timing.timeouts.queries > 0 {
        document["timeouts"] = json!({
            "queries": timing.timeouts.queries,
            "worker_seconds": timing.timeouts.seconds,
            "wall_seconds": timing.wall_seconds,
            "threads": timing.threads,
            "share_of_worker_time": timing.timeout_share(),
        });
    }
    if let Some(unstable) = crate::report::unstable::unstable_json(evaluation) {
        document["unstable"] = unstable;
    }
    if let Some((analysis, verdict)) = gated {
        document["reference"] = json!(analysis.reference);
        document["across_systems"] = json!({
            "systems": analysis.systems.len(),
            "fp": spread_json(&analysis.false_positive_spread),
            "fn": spread_json(&analysis.false_negative_spread),
            "kendall_tau_b": analysis.kendall_tau,
        });
        document["gate"] = gate_json(verdict, evaluation);
    }
    document
}

/// The verdict, its headline and every gated cell with the ids of the items that moved.
fn gate_json(verdict: &Verdict, evaluation: &Evaluation) -> Json {
    let in_cell = |index: &usize, cell: &str| {
        cell == "all" || evaluation.dataset.items[*index].difficulty.as_deref() == Some(cell)
    };
    let cells: Vec<Json> = verdict
        .comparisons()
        .iter()
        .flat_map(|c| {
            c.cells.iter().map(move |cell| {
                let ids = |items: &[usize]| -> Vec<usize> {
                    items
                        .iter()
                        .filter(|i| in_cell(i, &cell.difficulty))
                        .copied()
                        .collect()
                };
                json!({
                    "system": c.candidate,
                    "baseline_system": c.baseline,
                    "metric": c.metric,
                    "cell": cell.difficulty,
                    "n": cell.items,
                    "baseline": cell.baseline_accuracy,
                    "candidate": cell.candidate_accuracy,
                    "delta_points": cell.delta_points,
                    "regressed": ids(&c.regressed),
                    "fixed": ids(&c.fixed),
                    "test": cell.test,
                    "p": cell.p_value,
                    "p_adjusted": cell.p_adjusted,
                    "alpha": cell.alpha,
                    "allowed_drop_points": cell.threshold,
                    "verdict": if cell.failed { "fail" } else { "pass" },
                })
            })
        })
        .collect();
    let must_pass: Vec<Json> = verdict
        .comparisons()
        .iter()
        .filter(|c| !c.must_pass_regressions.is_empty())
        .map(|c| json!({"system": c.candidate, "regressed": c.must_pass_regressions}))
        .collect();
    let mut gate = json!({
        "passed": verdict.passed(),
        "headline": verdict.headline(),
        "headline_detail": verdict.headline_detail(),
        "reasons": verdict.reasons(),
        "notes": verdict.notes(),
        "cells": cells,
        "must_pass_regressions": must_pass,
    });
    let unstable = crate::report::unstable::gate_unstable_json(verdict.comparisons());
    if !unstable.is_empty() {
        gate["unstable"] = Json::Array(unstable);
    }
    gate
}

/// The leaderboard document: the ranked rows with what identifies them: the dataset's
/// fingerprint, digests of the suite settings and of the settings that decide scores and verdict
/// (comparison, metrics, gate, reference), the sqlgate version and the baseline commit.
pub fn leaderboard_json(
    analysis: &Analysis,
    evaluation: &Evaluation,
    config: &crate::input::config::Config,
    baseline_commit: Option<&str>,
) -> Json {
    use sha2::{Digest, Sha256};
    let digest = |text: String| crate::util::digest::hex(&Sha256::digest(text.as_bytes()));
    let settings = crate::analysis::baseline::Settings::of(config);
    json!({
        "sqlgate_version": env!("CARGO_PKG_VERSION"),
        "dataset_sha256": evaluation.dataset.sha256,
        "suite_settings_sha256": digest(format!("{:?}", config.suite)),
        "config_settings_sha256": digest(format!(
            "{settings:?}{:?}{:?}{}",
            config.metrics,
            config.gate,
            config.reference_metric()
        )),
        "baseline_commit": baseline_commit,
        "reference": analysis.reference,
        "systems": analysis.leaderboard(),
    })
}

fn ratio_table_json(table: &crate::analysis::agreement::Table, difficulties: &[String]) -> Json {
    let mut out = Map::new();
    for (metric, by_difficulty) in table {
        let cells: Map<String, Json> = difficulties
            .iter()
            .filter_map(|d| Some((d.clone(), json!(by_difficulty.get(d)?.value()?))))
            .collect();
        out.insert(metric.clone(), Json::Object(cells));
    }
    Json::Object(out)
}

/// Metric -> difficulty -> the denominator of each ratio.
fn count_table_json(table: &crate::analysis::agreement::Table, difficulties: &[String]) -> Json {
    let mut out = Map::new();
    for (metric, by_difficulty) in table {
        let cells: Map<String, Json> = difficulties
            .iter()
            .filter_map(|d| Some((d.clone(), json!(by_difficulty.get(d)?.count))))
            .collect();
        out.insert(metric.clone(), Json::Object(cells));
    }
    Json::Object(out)
}

fn spread_json(
    spreads: &BTreeMap<String, BTreeMap<String, crate::analysis::agreement::Spread>>,
) -> Json {
    let mut out = Map::new();
    for (metric, by_difficulty) in spreads {
        let cells: Map<String, Json> = by_difficulty
            .iter()
            .map(|(d, s)| {
                (
                    d.clone(),
                    json!({"mean": s.mean, "std": s.std, "max": s.max}),
                )
            })
            .collect();
        out.insert(metric.clone(), Json::Object(cells));
    }
    Json::Object(out)
}

fn system_json(system: &SystemSummary, difficulties: &[String]) -> Json {
    let ordered = |lookup: &dyn Fn(&str) -> Option<Json>| {
        let mut map = Map::new();
        for d in difficulties {
            if let Some(v) = lookup(d) {
                map.insert(d.clone(), v);
            }
        }
        Json::Object(map)
    };
    let counts = ordered(&|d| system.counts.get(d).map(|c| json!(c)));
    let mut accuracy = Map::new();
    let mut counts_by_metric = Map::new();
    for (metric, cells) in &system.cells {
        accuracy.insert(
            metric.clone(),
            ordered(&|d| cells.get(d).and_then(Cell::accuracy).map(|a| json!(a))),
        );
        counts_by_metric.insert(
            metric.clone(),
            ordered(&|d| cells.get(d).map(|c| json!(c.count))),
        );
    }
    let mut outcomes = Map::new();
    for (metric, by_outcome) in &system.outcomes {
        let counts: Map<String, Json> = by_outcome
            .iter()
            .map(|(outcome, n)| (outcome.as_str().to_string(), json!(n)))
            .collect();
        outcomes.insert(metric.clone(), Json::Object(counts));
    }
    let mut partial = Map::new();
    for (metric, by_difficulty) in &system.components {
        partial.insert(
            metric.clone(),
            ordered(&|d| {
                by_difficulty.get(d).map(|cells| {
                    let table: Map<String, Json> = COMPONENTS
                        .iter()
                        .zip(cells)
                        .map(|(component, cell)| {
                            let (acc, rec, f1) = cell.scores();
                            (
                                component.to_string(),
                                json!({"acc": acc, "rec": rec, "f1": f1}),
                            )
                        })
                        .collect();
                    Json::Object(table)
                })
            }),
        );
    }
    let mut entry = json!({
        "missing": system.missing,
        "unextracted": system.unextracted,
        "counts": counts,
        "counts_by_metric": counts_by_metric,
        "accuracy": accuracy,
        "outcomes": outcomes,
        "partial_match": partial,
    });
    if !system.sub_scores.is_empty() {
        let partial_credit: Map<String, Json> = system
            .sub_scores
            .iter()
            .map(|(metric, by_sub)| {
                let subs: Map<String, Json> = by_sub
                    .iter()
                    .map(|(sub, cells)| {
                        let means =
                            ordered(&|d| cells.get(d).and_then(Cell::accuracy).map(|a| json!(a)));
                        (sub.to_string(), means)
                    })
                    .collect();
                (metric.clone(), Json::Object(subs))
            })
            .collect();
        entry["partial_credit"] = Json::Object(partial_credit);
    }
    if !system.counterexamples.is_empty() {
        entry["ts_counterexamples"] = counterexample_counts_json(&system.counterexamples);
    }
    if let Some(judge) = &system.judge {
        entry["flex_judge"] = judge.to_json();
    }
    if !system.rule_credits.is_empty() {
        let by_name: BTreeMap<&str, usize> = system
            .rule_credits
            .iter()
            .map(|(rule, n)| (rule.name(), *n))
            .collect();
        entry["esm_plus_rules_needed"] = json!(by_name);
    }
    entry
}

fn counterexample_counts_json(counts: &BTreeMap<Category, usize>) -> Json {
    Json::Object(
        counts
            .iter()
            .map(|(category, n)| (category.as_str().to_string(), json!(n)))
            .collect(),
    )
}

/// One line of the stdout table: a label, then `points (count)` per difficulty (the mean as
/// [`crate::analysis::stats::format_points`] prints it).
fn cells_row(
    label: &str,
    width: usize,
    cells: &BTreeMap<String, Cell>,
    summary: &Summary,
) -> String {
    let mut row = format!("  {label:<width$}");
    for d in &summary.difficulties {
        let text = cells
            .get(d)
            .and_then(|c| {
                let points = crate::analysis::stats::format_points;
                c.accuracy().map(|a| format!("{} ({})", points(a), c.count))
            })
            .unwrap_or_else(|| "-".into());
        let _ = write!(row, " {text:>16}");
    }
    row
}

/// What the gold failures of a run mean, when there are any: the items whose gold query
/// failed or timed out, excluded from every denominator rather than charged to the predictions.
pub fn gold_failure_note(evaluation: &Evaluation) -> Option<String> {
    let (errors, timeouts) = (evaluation.gold_errors(), evaluation.gold_timeouts());
    let mut parts = Vec::new();
    if !errors.is_empty() {
        parts.push(format!("fails on items {errors:?}"));
    }
    if !timeouts.is_empty() {
        parts.push(format!("times out on items {timeouts:?}"));
    }
    (!parts.is_empty()).then(|| {
        format!(
            "the gold query {}; they are excluded from every denominator, not charged to the predictions",
            parts.join(" and ")
        )
    })
}

/// How much of the run's time went to queries that hit the time limit, when any did: a run that
/// was slow says why.
pub fn timeout_note(evaluation: &Evaluation) -> Option<String> {
    let timing = &evaluation.timing;
    (timing.timeouts.queries > 0).then(|| {
        let queries = match timing.timeouts.queries {
            1 => "1 query".to_string(),
            n => format!("{n} queries"),
        };
        format!(
            "{queries} hit the time limit and took {:.1} s of worker time: {:.0} % of the run's \
             {:.1} s wall time on {} worker threads",
            timing.timeouts.seconds,
            100.0 * timing.timeout_share(),
            timing.wall_seconds,
            timing.threads
        )
    })
}

/// The human summary printed on stdout; names and reasons that came from a pull request or a
/// provider are escaped with `util::log::log_value` (one line each, no workflow command).
pub fn human(evaluation: &Evaluation, summary: &Summary) -> String {
    let dataset = &evaluation.dataset;
    let skipped = dataset.items.len() - dataset.scored_count();
    let gold_errors = evaluation.gold_errors();
    let gold_timeouts = evaluation.gold_timeouts();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "sqlgate {}: {} items, {} scored, {} skipped (database absent), {} gold errors, {} gold timeouts",
        env!("CARGO_PKG_VERSION"),
        dataset.items.len(),
        dataset.scored_count() - evaluation.gold_failures().len(),
        skipped,
        gold_errors.len(),
        gold_timeouts.len()
    );
    if let Some(warning) = gold_failure_note(evaluation) {
        let _ = writeln!(out, "WARNING: {warning}");
    }
    if let Some(note) = timeout_note(evaluation) {
        let _ = writeln!(out, "{note}");
    }
    let disagreements = crate::report::disagreements::disagreement_notes(evaluation);
    for line in crate::report::unstable::unstable_counts(evaluation)
        .into_iter()
        .chain(disagreements)
    {
        let _ = writeln!(out, "{}", log_value(&line));
    }
    for system in &summary.systems {
        let unextracted = match system.unextracted {
            0 => String::new(),
            1 => ", 1 answer with no SQL extracted".to_string(),
            n => format!(", {n} answers with no SQL extracted"),
        };
        let _ = writeln!(
            out,
            "\n{} ({} missing predictions{unextracted})",
            log_value(&system.name),
            system.missing
        );
        let width = system
            .cells
            .keys()
            .map(String::len)
            .max()
            .unwrap_or(0)
            .max(8);
        let mut header = format!("  {:<width$}", "metric");
        let _ = writeln!(out, "  accuracy in points (items scored), per difficulty");
        for d in &summary.difficulties {
            let _ = write!(header, " {:>16}", d);
        }
        let _ = writeln!(out, "{header}");
        for (metric, cells) in &system.cells {
            let _ = writeln!(out, "{}", cells_row(metric, width, cells, summary));
            let cell_scores = system.sub_scores.get(metric).into_iter().flatten();
            for (sub, cells) in cell_scores.filter(|(sub, _)| **sub != "ex") {
                let label = format!("  .{sub}");
                let _ = writeln!(out, "{}", cells_row(&label, width, cells, summary));
            }
        }
        for (metric, by_outcome) in &system.outcomes {
            let parts: Vec<String> = Outcome::ALL
                .iter()
                .filter_map(|o| by_outcome.get(o).map(|n| format!("{n} {}", o.as_str())))
                .collect();
            let _ = writeln!(out, "  {metric} outcomes: {}", parts.join(", "));
        }
        for (metric, reason) in &system.unavailable {
            let _ = writeln!(out, "  {metric} unavailable: {}", log_value(reason));
        }
        if let Some(judge) = &system.judge {
            let _ = writeln!(out, "  flex judge: {}", judge.describe());
        }
        if !system.counterexamples.is_empty() {
            let parts: Vec<String> = system
                .counterexamples
                .iter()
                .map(|(category, n)| format!("{n} {}", category.as_str()))
                .collect();
            let _ = writeln!(
                out,
                "  right on the original database, wrong on the suite: {}",
                parts.join(", ")
            );
        }
        if !system.rule_credits.is_empty() {
            let parts: Vec<String> = system
                .rule_credits
                .iter()
                .map(|(rule, n)| format!("{} {n}", rule.name()))
                .collect();
            let _ = writeln!(
                out,
                "  esm_plus items each rule turned from wrong to right: {}",
                parts.join(", ")
            );
        }
    }
    out
}
