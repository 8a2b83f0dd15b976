//! One evaluation run: load everything, score every (system, item) pair in parallel, collect
//! per-item results in a deterministic order.

use crate::config::{Config, Threads};
use crate::dataset::Dataset;
use crate::error::InputError;
use crate::exec::{Executor, Limits};
use crate::metrics::{self, Env, Metric, Outcome, Score};
use crate::predictions::{load_systems, System};
use crate::profile::Profile;
use rayon::prelude::*;
use std::time::Duration;

/// The verdicts of every metric on one (system, item) pair.
#[derive(Debug, Clone)]
pub struct ItemResult {
    /// Index into [`Evaluation::systems`].
    pub system: usize,
    /// Gold item index.
    pub index: usize,
    /// One score per metric, in [`Evaluation::metrics`] order.
    pub scores: Vec<Score>,
}

/// Everything a run produced.
pub struct Evaluation {
    /// The benchmark.
    pub dataset: Dataset,
    /// The scored systems.
    pub systems: Vec<System>,
    /// Metric names, in config order.
    pub metrics: Vec<String>,
    /// Results ordered by system, then item.
    pub results: Vec<ItemResult>,
}

impl Evaluation {
    /// The results of one system, in item order.
    pub fn system_results(&self, system: usize) -> &[ItemResult] {
        let items = self.dataset.items.len();
        &self.results[system * items..(system + 1) * items]
    }

    /// Items whose gold query failed under any metric (a dataset defect).
    pub fn gold_errors(&self) -> Vec<usize> {
        let Some(first) = self.systems.first().map(|_| self.system_results(0)) else {
            return Vec::new();
        };
        first
            .iter()
            .filter(|r| r.scores.iter().any(|s| s.outcome == Outcome::GoldError))
            .map(|r| r.index)
            .collect()
    }
}

/// Loads the configured dataset and predictions and scores them.
pub fn evaluate(config: &Config) -> Result<Evaluation, InputError> {
    let metrics = build_metrics(config)?;
    let dataset = Dataset::load(&config.dataset)?;
    let systems = load_systems(&config.predictions, &dataset)?;
    let executor = Executor::new(Limits {
        timeout: Duration::from_millis(config.execution.timeout_ms),
        max_rows: config.execution.max_rows,
        max_bytes: config.execution.max_result_bytes,
    });
    let profile = Profile::new(&config.compare);
    let pool = thread_pool(config.execution.threads);
    let results = pool.install(|| {
        let env = Env::new(&dataset, &executor, &profile);
        score_all(&env, &systems, &metrics)
    });
    Ok(Evaluation {
        metrics: metrics.iter().map(|m| m.name().to_string()).collect(),
        dataset,
        systems,
        results,
    })
}

fn build_metrics(config: &Config) -> Result<Vec<Box<dyn Metric>>, InputError> {
    let config_error = |message: String| InputError::Config {
        path: config.path.clone(),
        message: format!("`metrics`: {message}"),
    };
    let mut seen = std::collections::BTreeSet::new();
    config
        .metrics
        .iter()
        .map(|name| {
            if !seen.insert(name.as_str()) {
                return Err(config_error(format!("metric `{name}` is listed twice")));
            }
            metrics::build(name).map_err(config_error)
        })
        .collect()
}

fn thread_pool(threads: Threads) -> rayon::ThreadPool {
    let count = match threads {
        Threads::Auto => 0,
        Threads::Count(n) => n,
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(count)
        .build()
        .expect("a rayon pool with a valid thread count")
}

fn score_all(env: &Env<'_>, systems: &[System], metrics: &[Box<dyn Metric>]) -> Vec<ItemResult> {
    let items = env.dataset.items.len();
    (0..systems.len() * items)
        .into_par_iter()
        .map(|pair| {
            let (system, index) = (pair / items, pair % items);
            let item = &env.dataset.items[index];
            let prediction = systems[system].predictions[index].as_deref();
            let scores = metrics
                .iter()
                .map(|metric| metric.score(env, item, prediction))
                .collect();
            ItemResult {
                system,
                index,
                scores,
            }
        })
        .collect()
}
