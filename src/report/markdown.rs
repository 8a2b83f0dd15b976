//! The Markdown report (the PR comment): minijinja templates whose `text` and `fence` filters
//! are `report::escape`'s (untrusted text cannot change the comment's structure or ping anyone),
//! and shortening to fit GitHub's comment limit while the full report is written to a file.

use crate::analysis::agreement::{Analysis, Ratio};
use crate::analysis::baseline::Baseline;
use crate::evidence::{Evidence, RESULT_ITEM_LIMIT};
use crate::judge::Verdict;
use crate::report::escape;
use crate::score::evaluation::Evaluation;
use crate::suites::counterexample::{Category, Counterexample};
use minijinja::{context, Environment};
use serde::Serialize;
use std::collections::BTreeMap;

/// The built-in template; `report.template` replaces it.
pub const DEFAULT_TEMPLATE: &str = include_str!("../../templates/comment.md.j2");
/// GitHub's comment size limit, in characters.
pub const GITHUB_COMMENT_LIMIT: usize = 65_536;
/// Items listed per group in a full report that would pass [`MAX_REPORT_BYTES`] listing all.
const FULL_ITEM_LIMIT: usize = 200;
/// Fewest systems a Kendall tau table is shown for: over two systems tau is only ±1.
const MIN_TAU_SYSTEMS: usize = 3;

/// Everything the report shows.
pub struct ReportInput<'a> {
    /// The run.
    pub evaluation: &'a Evaluation,
    /// Analyses of the current systems and the leaderboard.
    pub analysis: &'a Analysis,
    /// Analyses of the baseline systems, for deltas.
    pub baseline_analysis: Option<&'a Analysis>,
    /// The gate's verdict.
    pub verdict: &'a Verdict,
    /// Gated metric.
    pub gate_metric: &'a str,
    /// Hidden marker that identifies this config's comment.
    pub marker: &'a str,
    /// The stored baseline: its commit, and the old predictions and outcomes of changed items.
    pub baseline: Option<&'a Baseline>,
    /// The Actions run page whose `sqlgate-report` artifact holds the full report, if any.
    pub run_url: Option<&'a str>,
    /// Where the full report is written.
    pub report_file: &'a str,
    /// What the evidence phase ran: the first result rows of changed items, the gold audit of
    /// the regressed items and the test suite's flips.
    pub evidence: &'a Evidence,
    /// Per system, the cells of the gold's SQL features, when analysed.
    pub features: Option<&'a crate::analysis::features::FeatureTable>,
}

/// Template instructions one rendering may execute (a template looping over `range(100000)`
/// twice runs out instead of exhausting the runner's memory).
const TEMPLATE_FUEL: u64 = 50_000_000;
/// The largest full report a template may produce.
const MAX_REPORT_BYTES: usize = 16 << 20;

/// Renders the report: the full text, and the comment (the same text, shortened if needed).
pub fn render(
    input: &ReportInput<'_>,
    template: &str,
) -> Result<(String, String), minijinja::Error> {
    let mut environment = Environment::new();
    environment.set_fuel(Some(TEMPLATE_FUEL));
    environment.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    environment.add_filter("text", |s: String| escape::markdown_inline(&s));
    environment.add_filter("message", |s: String| escape::markdown_message(&s));
    environment.add_filter("cell", |s: String| escape::markdown_cell(&s));
    environment.add_filter("summary", |s: String| escape::html_summary(&s));
    // `name`, the gate cell's filter of older templates: a table cell.
    environment.add_filter("name", |s: String| escape::markdown_cell(&s));
    environment.add_filter("fence", |s: String| escape::markdown_code_block(&s, "sql"));
    environment.add_template("report", template)?;
    let template = environment.get_template("report")?;
    let mut full = template.render(build_context(input, usize::MAX, false))?;
    if full.len() > MAX_REPORT_BYTES {
        full = template.render(build_context(input, FULL_ITEM_LIMIT, false))?;
    }
    if full.len() > MAX_REPORT_BYTES {
        return Err(minijinja::Error::new(
            minijinja::ErrorKind::InvalidOperation,
            format!("the report is larger than {MAX_REPORT_BYTES} bytes"),
        ));
    }
    if full.chars().count() <= GITHUB_COMMENT_LIMIT {
        return Ok((full.clone(), full));
    }
    for limit in [20, 5, 0] {
        let short = template.render(build_context(input, limit, true))?;
        if short.chars().count() <= GITHUB_COMMENT_LIMIT {
            return Ok((full, short));
        }
    }
    let note = "\n\n> The comment was cut to fit GitHub's limit; see the full report file.\n";
    let budget = GITHUB_COMMENT_LIMIT - note.len();
    let cut: String = full.chars().take(budget).collect();
    let cut = cut
        .rsplit_once('\n')
        .map_or(cut.as_str(), |(head, _)| head)
        .to_string();
    Ok((full, cut + note))
}

/// A finished report cut (at a line) to fit one GitHub comment, with a note when cut.
pub fn fit_comment(report: &str) -> String {
    if report.chars().count() <= GITHUB_COMMENT_LIMIT {
        return report.to_string();
    }
    let note = "\n\n> The comment was cut to fit GitHub's limit; see the full report file.\n";
    let cut: String = report
        .chars()
        .take(GITHUB_COMMENT_LIMIT - note.len())
        .collect();
    let cut = cut
        .rsplit_once('\n')
        .map_or(cut.as_str(), |(head, _)| head)
        .to_string();
    cut + note
}

fn percent(value: Option<f64>) -> String {
    value.map_or_else(|| "–".into(), crate::analysis::stats::format_points)
}

#[derive(Serialize)]
struct Row {
    system: String,
    metric: String,
    kind: String,
    cells: Vec<String>,
}

#[derive(Serialize)]
struct ItemView {
    system: String,
    index: usize,
    /// 1-based line of the prediction in its file.
    line: Option<usize>,
    db_id: String,
    difficulty: String,
    question: Option<String>,
    gold: String,
    prediction: String,
    outcome: Option<String>,
    error: Option<String>,
    /// The baseline system, its prediction and outcome (regressed and fixed items).
    baseline: Option<BaselineView>,
    /// First rows of gold, old and new results, as one text block.
    results: Option<String>,
    counterexample: Option<String>,
}

#[derive(Serialize)]
struct BaselineView {
    system: String,
    prediction: Option<String>,
    outcome: Option<String>,
}

#[derive(Serialize)]
struct ItemGroup {
    title: String,
    /// Whether the group is shown open and first among the folded sections (the regressed
    /// items: what a reviewer needs next).
    open: bool,
    /// Whether the first items show their results.
    with_results: bool,
    total: usize,
    hidden: usize,
    items: Vec<ItemView>,
}

fn build_context(input: &ReportInput<'_>, item_limit: usize, truncated: bool) -> minijinja::Value {
    let analysis = input.analysis;
    let difficulties = &analysis.difficulties;
    let current: Vec<_> = analysis
        .systems
        .iter()
        .filter(|s| !s.from_baseline)
        .collect();
    let accuracy_cell = |system: &str, metric: &str, difficulty: &str, ratio: Option<&Ratio>| {
        let Some(ratio) = ratio.filter(|r| r.count > 0) else {
            return ("–".to_string(), None);
        };
        let base = input.baseline_analysis.and_then(|b| {
            b.system(&baseline_name(input, system))?
                .accuracy
                .get(metric)?
                .get(difficulty)?
                .value()
        });
        let delta = ratio
            .value()
            .zip(base)
            .map(|(now, before)| crate::analysis::stats::shown_delta(before, now));
        let shown = delta.map_or_else(String::new, |d| {
            format!(" ({})", crate::analysis::stats::format_delta(d))
        });
        (
            format!("{}{shown} n={}", percent(ratio.value()), ratio.count),
            delta,
        )
    };
    let mut accuracy_rows = Vec::new();
    let mut unchanged_rows = Vec::new();
    for system in &current {
        for metric in &analysis.metrics {
            let (cells, deltas): (Vec<String>, Vec<Option<f64>>) = difficulties
                .iter()
                .map(|d| {
                    accuracy_cell(
                        &system.name,
                        metric,
                        d,
                        system.accuracy.get(metric).and_then(|m| m.get(d)),
                    )
                })
                .unzip();
            let row = Row {
                system: system.name.clone(),
                metric: metric.clone(),
                kind: String::new(),
                cells,
            };
            // A row is unchanged when every cell has a baseline and moved by less than 0.05.
            let unchanged = input.baseline_analysis.is_some()
                && deltas.iter().all(|d| d.is_some_and(|d| d.abs() < 0.05));
            if unchanged {
                unchanged_rows.push(row);
            } else {
                accuracy_rows.push(row);
            }
        }
    }
    let partial_credit_rows = partial_credit_rows(&current, &analysis.metrics, difficulties);
    let failure_rows = failure_rows(&current);
    let mut fp_rows = Vec::new();
    for system in &current {
        for (kind, table) in [
            ("FP", &system.false_positives),
            ("FN", &system.false_negatives),
        ] {
            for (metric, by_difficulty) in table {
                let cells = difficulties
                    .iter()
                    .map(|d| percent(by_difficulty.get(d).and_then(Ratio::value)))
                    .collect();
                fp_rows.push(Row {
                    system: system.name.clone(),
                    metric: metric.clone(),
                    kind: kind.into(),
                    cells,
                });
            }
        }
    }
    let mut spread_rows = Vec::new();
    if analysis.systems.len() > 1 {
        for (kind, spreads) in [
            ("FP", &analysis.false_positive_spread),
            ("FN", &analysis.false_negative_spread),
        ] {
            for (metric, by_difficulty) in spreads {
                let cells = difficulties
                    .iter()
                    .map(|d| {
                        by_difficulty.get(d).map_or_else(
                            || "–".into(),
                            |s| {
                                format!(
                                    "{:.1} ± {:.1} (max {:.1})",
                                    100.0 * s.mean,
                                    100.0 * s.std,
                                    100.0 * s.max
                                )
                            },
                        )
                    })
                    .collect();
                spread_rows.push(Row {
                    system: String::new(),
                    metric: metric.clone(),
                    kind: kind.into(),
                    cells,
                });
            }
        }
    }
    let tau_rows: Vec<Row> = analysis
        .kendall_tau
        .iter()
        .filter(|_| analysis.systems.len() >= MIN_TAU_SYSTEMS)
        .map(|(metric, by_difficulty)| Row {
            system: String::new(),
            metric: metric.clone(),
            kind: String::new(),
            cells: difficulties
                .iter()
                .map(|d| {
                    by_difficulty
                        .get(d)
                        .copied()
                        .flatten()
                        .map_or("–".into(), |t| format!("{t:.3}"))
                })
                .collect(),
        })
        .collect();
    let gate_rows: Vec<BTreeMap<&str, String>> = input
        .verdict
        .comparisons()
        .iter()
        .flat_map(|c| {
            c.cells.iter().map(move |cell| {
                BTreeMap::from([
                    ("system", c.candidate.clone()),
                    ("baseline", c.baseline.clone()),
                    ("cell", cell.difficulty.clone()),
                    ("items", cell.items.to_string()),
                    (
                        "baseline_accuracy",
                        crate::analysis::stats::format_points(cell.baseline_accuracy),
                    ),
                    (
                        "candidate_accuracy",
                        crate::analysis::stats::format_points(cell.candidate_accuracy),
                    ),
                    (
                        "delta",
                        crate::analysis::stats::format_delta(cell.shown_delta()),
                    ),
                    ("regressed", cell.regressed.to_string()),
                    ("fixed", cell.fixed.to_string()),
                    (
                        "p",
                        cell.p_adjusted.map_or("–".into(), |p| format!("{p:.4}")),
                    ),
                    ("threshold", format!("{:.1}", cell.threshold)),
                    (
                        "verdict",
                        if cell.failed { "❌ fail" } else { "✅ ok" }.into(),
                    ),
                ])
            })
        })
        .collect();
    let mut item_groups: Vec<ItemGroup> = input
        .verdict
        .comparisons()
        .iter()
        .flat_map(|c| {
            [
                (
                    format!(
                        "Regressed items of {} (vs baseline {})",
                        c.candidate, c.baseline
                    ),
                    &c.regressed,
                    true,
                ),
                (
                    format!(
                        "Fixed items of {} (vs baseline {})",
                        c.candidate, c.baseline
                    ),
                    &c.fixed,
                    false,
                ),
            ]
            .into_iter()
            .filter(|(_, items, _)| !items.is_empty())
            .map(|(title, items, open)| ItemGroup {
                open,
                title,
                with_results: true,
                total: items.len(),
                hidden: items.len().saturating_sub(item_limit),
                items: items
                    .iter()
                    .take(item_limit)
                    .enumerate()
                    .map(|(n, &i)| {
                        item_view(
                            input,
                            &c.candidate,
                            i,
                            Some(&c.baseline),
                            n < RESULT_ITEM_LIMIT,
                        )
                    })
                    .collect(),
            })
        })
        .collect();
    item_groups.extend(counterexample_groups(input, item_limit));
    let leaderboard: Vec<Row> = analysis
        .leaderboard()
        .into_iter()
        .map(|row| Row {
            system: row.system.clone() + if row.from_baseline { " (baseline)" } else { "" },
            metric: row.rank.map_or("–".into(), |r| r.to_string()),
            kind: String::new(),
            cells: analysis
                .metrics
                .iter()
                .map(|m| {
                    let standing = row.metrics[m];
                    match (standing.accuracy, standing.rank) {
                        (Some(a), Some(r)) => format!("{:.1} (#{r})", 100.0 * a),
                        _ => "–".into(),
                    }
                })
                .collect(),
        })
        .collect();
    let common_items = common_items(analysis);
    let (unstable_rows, unstable_total) =
        crate::report::unstable::unstable_rows(input.verdict.comparisons(), item_limit);
    let (feature_rows, features_left_out) = (input.features)
        .map(|table| crate::report::features::feature_rows(table, input.verdict.comparisons()))
        .unwrap_or_default();
    let dataset_sha = &input.evaluation.dataset.sha256;
    context! {
        marker => input.marker,
        passed => input.verdict.passed(),
        review => input.verdict.passed_with_review(),
        reasons => input.verdict.reasons_below(),
        notes => input.verdict.notes_below().into_iter().chain(crate::report::summary::gold_failure_note(input.evaluation)).chain(crate::report::summary::timeout_note(input.evaluation)).chain(crate::report::extraction::extraction_notes(input.evaluation)).chain(crate::report::disagreements::disagreement_notes(input.evaluation)).collect::<Vec<_>>(),
        gate_metric => input.gate_metric,
        headline => input.verdict.headline(),
        headline_detail => input.verdict.headline_detail(),
        unchanged_rows => unchanged_rows,
        gold_notes => input.evaluation.dataset.gold_notes().iter().map(|(instance, notes)| context! { instance => instance, notes => notes.join("; ") }).collect::<Vec<_>>(),
        unscored_rows => crate::report::unscored::unscored_rows(input.evaluation, if truncated { RESULT_ITEM_LIMIT } else { usize::MAX }),
        tau_omitted => !analysis.kendall_tau.is_empty() && analysis.systems.len() < MIN_TAU_SYSTEMS,
        min_tau_systems => MIN_TAU_SYSTEMS,
        reference => analysis.reference,
        difficulties => difficulties,
        accuracy_rows => accuracy_rows,
        partial_credit_rows => partial_credit_rows,
        failure_rows => failure_rows,
        histogram_bins => crate::analysis::failures::HISTOGRAM_BINS,
        gate_rows => gate_rows,
        unstable_counts => crate::report::unstable::unstable_counts(input.evaluation),
        unstable_rows => unstable_rows,
        unstable_total => unstable_total,
        unstable_verdicts => input.evaluation.results.iter().filter(|r| !r.unstable.is_empty()).count(),
        unstable_share => format!("{:.0}", 100.0 * crate::score::stability::TIMING_SHARE),
        feature_rows => feature_rows,
        features_left_out => features_left_out,
        fp_rows => fp_rows,
        spread_rows => spread_rows,
        tau_rows => tau_rows,
        counterexample_rows => counterexample_rows(input),
        counterexample_categories => Category::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
        leaderboard_size => analysis.systems.len(),
        common_items => common_items,
        leaderboard => leaderboard,
        metrics => analysis.metrics,
        item_groups => item_groups,
        truncated => truncated,
        report_file => input.report_file,
        run_url => input.run_url,
        version => env!("CARGO_PKG_VERSION"),
        dataset_sha => &dataset_sha[..dataset_sha.len().min(12)],
        data_files => data_files(&input.evaluation.dataset.digests),
        data_files_folded => input.evaluation.dataset.digests.databases.len() > MOST_INLINE_DATABASES,
        commit => std::env::var("GITHUB_SHA").ok().map(|s| s.chars().take(12).collect::<String>()),
        baseline_commit => input.baseline.and_then(|b| b.commit.as_deref()).map(|s| s.chars().take(12).collect::<String>()),
        result_item_limit => RESULT_ITEM_LIMIT,
        gold_overrides => crate::report::audit::override_views(&input.evaluation.overrides),
        proposed_benchmark => input.evidence.benchmark_change.as_ref().map(crate::report::proposed::view),
        flagged_regressions => crate::report::audit::flagged_views(&regressed_findings(input), &input.evaluation.overrides),
        ts_flip_splits => crate::report::audit::flip_splits(input.evaluation, &input.evidence.gold_findings),
    }
}

/// Most databases whose digests the footer lists on its line; more are folded in a table.
const MOST_INLINE_DATABASES: usize = 3;

/// The footer's digest of each benchmark file (the gold, the tables file, each database's),
/// its first 12 hex digits, so a reader sees which data a score was computed on, file by file.
fn data_files(digests: &crate::input::dataset::DatasetDigests) -> Vec<minijinja::Value> {
    let short = |sha: &str| sha.chars().take(12).collect::<String>();
    let gold = std::iter::once(("gold".to_string(), short(&digests.gold)));
    let tables = (digests.tables.iter()).map(|sha| ("tables".to_string(), short(sha)));
    let databases =
        (digests.databases.iter()).map(|(db_id, sha)| (format!("`{db_id}`"), short(sha)));
    gold.chain(tables)
        .chain(databases)
        .map(|(file, sha)| context! { file => file, sha => sha })
        .collect()
}

/// Per metric other than the reference, the items it and the reference both scored (overall),
/// as `esm: n = 972` (a range when systems differ): what FP / FN, tau and ranks are computed on.
fn common_items(analysis: &Analysis) -> Vec<String> {
    analysis
        .metrics
        .iter()
        .filter(|m| **m != analysis.reference)
        .filter_map(|metric| {
            let counts: Vec<usize> = analysis
                .systems
                .iter()
                .filter_map(|s| Some(s.common_accuracy.get(metric)?.get("all")?.count))
                .collect();
            let (low, high) = (counts.iter().min()?, counts.iter().max()?);
            let n = if low == high {
                low.to_string()
            } else {
                format!("{low}–{high}")
            };
            Some(format!("{metric}: n = {n}"))
        })
        .collect()
}

/// One row per system, SQLMorph technique and cell score (EXP, EXR, F1; EX is the technique's
/// accuracy row): means per difficulty.
fn partial_credit_rows(
    systems: &[&crate::analysis::agreement::SystemAnalysis],
    metrics: &[String],
    difficulties: &[String],
) -> Vec<Row> {
    let mut rows = Vec::new();
    for system in systems {
        for metric in metrics {
            for sub in ["exp", "exr", "f1"] {
                let Some(by_difficulty) = system.sub_scores.get(&format!("{metric}.{sub}")) else {
                    continue;
                };
                let cells = difficulties
                    .iter()
                    .map(|d| match by_difficulty.get(d).and_then(Ratio::value) {
                        Some(mean) => format!("{mean:.3} n={}", by_difficulty[d].count),
                        None => "–".into(),
                    })
                    .collect();
                rows.push(Row {
                    system: system.name.clone(),
                    metric: metric.clone(),
                    kind: sub.to_uppercase(),
                    cells,
                });
            }
        }
    }
    rows
}

/// One row per system and continuous score: n, mean, the five numbers and the histogram of the
/// score over the items the reference marks wrong.
fn failure_rows(systems: &[&crate::analysis::agreement::SystemAnalysis]) -> Vec<Row> {
    let mut rows = Vec::new();
    for system in systems {
        for (key, scores) in &system.failure_scores {
            let numbers = [scores.mean, scores.min, scores.q1, scores.median, scores.q3];
            let histogram = &scores.histogram;
            let cells = std::iter::once(scores.n.to_string())
                .chain(
                    numbers
                        .iter()
                        .chain([&scores.max])
                        .map(|v| format!("{v:.3}")),
                )
                .chain([format!(
                    "`{}` [{}, {}]",
                    histogram.sparkline(),
                    histogram.lower,
                    histogram.upper
                )])
                .collect();
            rows.push(Row {
                system: system.name.clone(),
                metric: key.clone(),
                kind: String::new(),
                cells,
            });
        }
    }
    rows
}

fn baseline_name(input: &ReportInput<'_>, system: &str) -> String {
    input
        .verdict
        .comparisons()
        .iter()
        .find(|c| c.candidate == system)
        .map_or_else(|| system.to_string(), |c| c.baseline.clone())
}

/// One item of `system`, with `against`'s old prediction and outcome when given, and the first
/// result rows when `with_results`.
fn item_view(
    input: &ReportInput<'_>,
    system: &str,
    index: usize,
    against: Option<&str>,
    with_results: bool,
) -> ItemView {
    let evaluation = input.evaluation;
    let item = &evaluation.dataset.items[index];
    let position = evaluation.systems.iter().position(|s| s.name == system);
    let metric_index = evaluation
        .metrics
        .iter()
        .position(|m| m == gate_base_metric(input.gate_metric));
    let score = position
        .zip(metric_index)
        .map(|(s, m)| &evaluation.system_results(s)[index].scores[m]);
    let baseline = against.map(|name| {
        let record = input
            .baseline
            .and_then(|b| b.systems.get(name))
            .and_then(|items| items.iter().find(|r| r.index == index));
        BaselineView {
            system: name.to_string(),
            prediction: record.and_then(|r| r.prediction.clone()),
            outcome: record
                .and_then(|r| r.outcome.get(gate_base_metric(input.gate_metric)).cloned()),
        }
    });
    let results = (against.filter(|_| with_results))
        .and_then(|against| {
            let key = (system.to_string(), against.to_string(), index);
            input.evidence.rows.get(&key)
        })
        .cloned();
    ItemView {
        system: system.to_string(),
        index,
        line: position.and_then(|s| evaluation.systems[s].lines[index]),
        db_id: item.db_id.clone(),
        difficulty: item.difficulty.clone().unwrap_or_default(),
        question: item.question.clone(),
        gold: item.sql.clone(),
        prediction: position.map_or_else(
            || "(no prediction)".into(),
            |s| crate::report::extraction::shown_prediction(evaluation, s, index),
        ),
        outcome: score.map(|s| s.outcome.as_str().to_string()),
        error: score.and_then(|s| s.error.clone()),
        baseline,
        results,
        counterexample: position.and_then(|s| counterexample_text(evaluation, s, index)),
    }
}

/// The gated metric without its sub-score (`tech.f1` is scored by `tech`).
fn gate_base_metric(metric: &str) -> &str {
    metric.split('.').next().unwrap_or(metric)
}

/// The rendered TS counterexample of one system's item, when its prediction is right on the
/// original database and wrong on the suite.
fn counterexample_text(evaluation: &Evaluation, system: usize, index: usize) -> Option<String> {
    evaluation.system_results(system)[index]
        .scores
        .iter()
        .find_map(|s| s.details.as_ref()?.counterexample())
        .map(Counterexample::to_text)
}

/// Per current system, how many items each counterexample category moved from right (original
/// database) to wrong (test suite); empty when no item moved.
/// The gold audit's findings on items some comparison regressed.
fn regressed_findings(input: &ReportInput<'_>) -> Vec<crate::analysis::audit::Finding> {
    let regressed = |index: usize| {
        input
            .verdict
            .comparisons()
            .iter()
            .any(|c| c.regressed.contains(&index))
    };
    (input.evidence.gold_findings.iter())
        .filter(|f| regressed(f.index))
        .cloned()
        .collect()
}

fn counterexample_rows(input: &ReportInput<'_>) -> Vec<Row> {
    let evaluation = input.evaluation;
    (0..evaluation.systems.len())
        .filter_map(|system| {
            let mut counts: BTreeMap<Category, usize> = BTreeMap::new();
            for result in evaluation.system_results(system) {
                for score in &result.scores {
                    if let Some(c) = score.details.as_ref().and_then(|d| d.counterexample()) {
                        *counts.entry(c.category).or_default() += 1;
                    }
                }
            }
            (!counts.is_empty()).then(|| Row {
                system: evaluation.systems[system].name.clone(),
                metric: counts.values().sum::<usize>().to_string(),
                kind: String::new(),
                cells: Category::ALL
                    .iter()
                    .map(|c| counts.get(c).copied().unwrap_or(0).to_string())
                    .collect(),
            })
        })
        .collect()
}

/// Per current system, the items right on the original database and wrong on the suite, each
/// with its counterexample, so a reader can judge the TS verdict.
fn counterexample_groups(input: &ReportInput<'_>, item_limit: usize) -> Vec<ItemGroup> {
    let evaluation = input.evaluation;
    (0..evaluation.systems.len())
        .filter_map(|system| {
            let items: Vec<usize> = evaluation
                .system_results(system)
                .iter()
                .filter(|r| {
                    r.scores.iter().any(|s| {
                        s.details
                            .as_ref()
                            .and_then(|d| d.counterexample())
                            .is_some()
                    })
                })
                .map(|r| r.index)
                .collect();
            let name = &evaluation.systems[system].name;
            (!items.is_empty()).then(|| ItemGroup {
                open: false,
                title: format!(
                    "Items of {name} right on the original database, wrong on the test suite"
                ),
                with_results: false,
                total: items.len(),
                hidden: items.len().saturating_sub(item_limit),
                items: items
                    .iter()
                    .take(item_limit)
                    .map(|&i| item_view(input, name, i, None, false))
                    .collect(),
            })
        })
        .collect()
}
