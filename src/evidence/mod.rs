//! The evidence phase: every query the outputs need runs here, once, after the verdict and before
//! anything is rendered, and leaves plain data: the first result rows of the changed items the
//! report shows (gold, baseline prediction and new prediction, as the comparison profile ran
//! them, in `rows.rs`), and the gold audit of the regressed items and of the test suite's flips.
//! What a pull request's benchmark change would do is scored here too (`proposed.rs`).
//! The report then renders from the evaluation, the analyses, the verdict and this evidence; it
//! runs nothing (`tests/it/layout.rs`).

pub mod proposed;
pub mod rows;

use crate::analysis::audit::Finding;
use crate::analysis::baseline::Baseline;
use crate::engine::exec::Executor;
use crate::engine::profile::Profile;
use crate::judge::Verdict;
use crate::score::evaluation::Evaluation;
use std::collections::{BTreeMap, BTreeSet};

/// Changed items per group whose gold, old and new results are run and shown.
pub const RESULT_ITEM_LIMIT: usize = 20;

/// The changed item a result block belongs to: the system, the baseline system it is compared
/// with, and the item's index.
pub type ChangedItem = (String, String, usize);

/// What the outputs show that only running queries can tell.
#[derive(Debug, Default)]
pub struct Evidence {
    /// The first result rows of each changed item shown with results, as comment lines.
    pub rows: BTreeMap<ChangedItem, String>,
    /// The gold audit's findings on the regressed items and the test suite's flips.
    pub gold_findings: Vec<Finding>,
    /// What the benchmark a pull request proposes would change for the base's own systems,
    /// when it changes the benchmark ([`proposed`]).
    pub benchmark_change: Option<proposed::BenchmarkChange>,
}

/// The queries the run's outputs need, on `executor` as `profile` compares: result rows of the
/// first [`RESULT_ITEM_LIMIT`] regressed and fixed items of each comparison, and the gold audit
/// of every regressed or flipped item on its own database.
pub fn gather(
    evaluation: &Evaluation,
    verdict: &Verdict,
    baseline: Option<&Baseline>,
    (executor, profile): (&Executor, &Profile),
) -> Evidence {
    let mut rows = BTreeMap::new();
    for comparison in verdict.comparisons() {
        let changed = [&comparison.regressed, &comparison.fixed];
        for &index in changed
            .into_iter()
            .flat_map(|items| items.iter().take(RESULT_ITEM_LIMIT))
        {
            let key = (
                comparison.candidate.clone(),
                comparison.baseline.clone(),
                index,
            );
            if let Some(text) = result_rows(evaluation, baseline, (executor, profile), &key) {
                rows.insert(key, text);
            }
        }
    }
    Evidence {
        rows,
        gold_findings: audit_changed(evaluation, verdict, (executor, profile)),
        benchmark_change: None,
    }
}

/// The result rows of one changed item; `None` when its database is absent or the item is a
/// kind's own task (`GoldItem::task`: its gold and answers are not read-only queries).
fn result_rows(
    evaluation: &Evaluation,
    baseline: Option<&Baseline>,
    (executor, profile): (&Executor, &Profile),
    (system, against, index): &ChangedItem,
) -> Option<String> {
    let item = &evaluation.dataset.items[*index];
    if item.task.is_some() {
        return None;
    }
    let db = evaluation.dataset.database_path(item)?;
    let position = evaluation.systems.iter().position(|s| &s.name == system);
    let prediction = position.and_then(|s| evaluation.systems[s].predictions[*index].as_deref());
    let old = Some(baseline.and_then(|stored| {
        (stored.systems.get(against))
            .and_then(|items| items.iter().find(|r| r.index == *index))
            .and_then(|record| record.prediction.as_deref())
    }));
    let stored = rows::stored_gold_rows(item);
    let queries = rows::Queries {
        gold: stored.as_deref().ok_or(item.sql.as_str()),
        old,
        new: prediction,
    };
    Some(rows::result_rows(executor, profile, db, &queries))
}

/// The gold audit of the regressed items and the test suite's flips, on their own databases
/// (no suite, systems or dialects): what the comment flags beside a changed item.
fn audit_changed(
    evaluation: &Evaluation,
    verdict: &Verdict,
    (executor, profile): (&Executor, &Profile),
) -> Vec<Finding> {
    let mut audited: BTreeSet<usize> = (verdict.comparisons().iter())
        .flat_map(|c| c.regressed.iter().copied())
        .collect();
    audited.extend(evaluation.flipped_items().into_iter().flatten());
    let audited: Vec<usize> = audited.into_iter().collect();
    crate::analysis::audit::Context::own_databases(&evaluation.dataset, executor, profile)
        .audit(&audited)
}
