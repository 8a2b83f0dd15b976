//! What a pull request's benchmark change would do once merged: the base commit's own
//! predictions scored with the gate metric on the base's benchmark and overrides and on the ones
//! the pull request proposes, item by item. The pull request itself is judged on the base's benchmark
//! (see `trust::base_benchmark`); this only informs the reviewer, and decides nothing.

use crate::analysis::records::{records, ItemRecord};
use crate::input::config::Config;
use crate::input::trusted::{ProposedBenchmark, Snapshot};
use crate::score::evaluation::{evaluate, Evaluation};
use crate::util::error::InputError;
use serde::Serialize;
use std::collections::BTreeMap;

/// The change a proposed benchmark makes to the base's own systems.
#[derive(Debug, Clone, Serialize)]
pub struct BenchmarkChange {
    /// The repository files the pull request changes.
    pub changed: Vec<String>,
    /// The metric re-scored (the gate's).
    pub metric: String,
    /// Gold items on the base's benchmark and on the proposed one.
    pub items: (usize, usize),
    /// How items of the two benchmarks were paired: `position` (same number of items) or
    /// `question` (the same database and question); `none` when neither holds.
    pub paired_by: &'static str,
    /// One per base system re-scored.
    pub systems: Vec<SystemChange>,
    /// Systems not re-scored, each with why.
    pub skipped: Vec<String>,
}

/// One system's verdicts on the two benchmarks.
#[derive(Debug, Clone, Serialize)]
pub struct SystemChange {
    /// The system's name.
    pub name: String,
    /// Items right on the base's benchmark.
    pub right_on_base: usize,
    /// Items right on the proposed benchmark.
    pub right_on_proposed: usize,
    /// Proposed items (0-based indices) right on the proposed benchmark and not on the base's.
    pub turn_right: Vec<usize>,
    /// Proposed items right on the base's benchmark and not on the proposed one.
    pub turn_wrong: Vec<usize>,
}

/// The change of the dataset of `config` (one dataset's config), when the pull request changes
/// its benchmark. An error when the proposed benchmark does not load or score: once merged, no
/// pull request could be gated with it.
pub fn gather(config: &Config, snapshot: &Snapshot) -> Result<Option<BenchmarkChange>, InputError> {
    let Some(proposed) = (snapshot.proposed_benchmarks.iter())
        .find(|p| p.dataset.as_deref() == config.dataset_name.as_deref())
    else {
        return Ok(None);
    };
    let metric = config.gate_metric().to_string();
    let on_base = base_systems(config, proposed, &metric);
    let mut on_proposed = on_base.clone();
    if let Some(dataset) = &proposed.proposed {
        on_proposed.dataset = dataset.clone();
    }
    let mut with_proposed = snapshot.clone();
    if let Some((path, file)) = &proposed.overrides {
        with_proposed.files.insert(path.clone(), file.clone());
    }
    let before = evaluate(&on_base, snapshot)?;
    let after =
        evaluate(&on_proposed, &with_proposed).map_err(|e| proposed_error(config, proposed, &e))?;
    Ok(Some(compare(proposed, &metric, (&before, &after))))
}

/// `config` scoring the base's own prediction files with the gate metric only.
fn base_systems(config: &Config, proposed: &ProposedBenchmark, metric: &str) -> Config {
    let mut on_base = config.clone();
    on_base.predictions = proposed.base_predictions.clone();
    let scored = metric.split('.').next().unwrap_or(metric);
    on_base.metrics = vec![scored.to_string()];
    on_base
}

/// The error of a proposed benchmark that does not score, naming the files.
fn proposed_error(config: &Config, proposed: &ProposedBenchmark, error: &InputError) -> InputError {
    InputError::Config {
        path: config.path.clone(),
        message: format!(
            "the pull request changes dataset files ({}), and the benchmark it proposes does not \
             score, so once merged no pull request could be gated: {error}",
            proposed.changed.join(", ")
        ),
    }
}

/// Pairs the items of the two evaluations and counts, per system, what turns right or wrong.
fn compare(
    proposed: &ProposedBenchmark,
    metric: &str,
    (before, after): (&Evaluation, &Evaluation),
) -> BenchmarkChange {
    let (paired_by, pairs) = pair_items(before, after);
    let before_records: BTreeMap<String, Vec<ItemRecord>> = records(before).into_iter().collect();
    let systems = records(after)
        .into_iter()
        .filter_map(|(name, now)| {
            let was = before_records.get(&name)?;
            Some(system_change(name, metric, (was, &now), &pairs))
        })
        .collect();
    BenchmarkChange {
        changed: proposed.changed.clone(),
        metric: metric.to_string(),
        items: (before.dataset.items.len(), after.dataset.items.len()),
        paired_by,
        systems,
        skipped: proposed.skipped.clone(),
    }
}

/// Pairs of (base item, proposed item): by position when both benchmarks have as many items,
/// else by database and question when every item has a question and they are unique.
fn pair_items(before: &Evaluation, after: &Evaluation) -> (&'static str, Vec<(usize, usize)>) {
    let (old, new) = (&before.dataset.items, &after.dataset.items);
    if old.len() == new.len() {
        return ("position", (0..old.len()).map(|i| (i, i)).collect());
    }
    let key =
        |item: &crate::input::dataset::GoldItem| Some((item.db_id.clone(), item.question.clone()?));
    let keys: Option<BTreeMap<_, usize>> = old
        .iter()
        .enumerate()
        .map(|(i, item)| Some((key(item)?, i)))
        .collect();
    match keys.filter(|k| k.len() == old.len()) {
        Some(keys) => {
            let pairs = (new.iter().enumerate())
                .filter_map(|(j, item)| Some((*keys.get(&key(item)?)?, j)))
                .collect();
            ("question", pairs)
        }
        None => ("none", Vec::new()),
    }
}

/// One system's counts and the paired items that change verdict.
fn system_change(
    name: String,
    metric: &str,
    (was, now): (&[ItemRecord], &[ItemRecord]),
    pairs: &[(usize, usize)],
) -> SystemChange {
    let right = |record: Option<&ItemRecord>| {
        record.is_some_and(|r| r.metrics.get(metric).copied().flatten() == Some(1.0))
    };
    let mut change = SystemChange {
        name,
        right_on_base: was.iter().filter(|r| right(Some(r))).count(),
        right_on_proposed: now.iter().filter(|r| right(Some(r))).count(),
        turn_right: Vec::new(),
        turn_wrong: Vec::new(),
    };
    for &(old, new) in pairs {
        match (right(record_of(was, old)), right(record_of(now, new))) {
            (false, true) => change.turn_right.push(new),
            (true, false) => change.turn_wrong.push(new),
            _ => {}
        }
    }
    change
}

/// The record of item `index` among `records`.
fn record_of(records: &[ItemRecord], index: usize) -> Option<&ItemRecord> {
    records.iter().find(|r| r.index == index)
}
