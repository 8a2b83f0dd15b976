//! One evaluation run: load everything, score every (system, item) pair in parallel, collect
//! per-item results in a deterministic order.

use crate::engine::exec::{ExecError, Executor, Limits, TimeoutTotals};
use crate::engine::profile::Profile;
use crate::engine::registry::Engines;
use crate::engine::server::data_digest::DataDigests;
use crate::input::config::{Config, SuiteKind, Threads};
use crate::input::dataset::{Dataset, GoldItem};
use crate::input::overrides::GoldOverrides;
use crate::input::predictions::{load_systems, System};
use crate::input::trusted::Snapshot;
use crate::metrics::{self, Env, Metric, Outcome, Score};
use crate::providers::Providers;
use crate::score::stability::{Reasons, StabilityCheck};
use crate::suites::suite::Suite;
use crate::util::error::InputError;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The verdicts of every metric on one (system, item) pair.
#[derive(Debug, Clone)]
pub struct ItemResult {
    /// Index into [`Evaluation::systems`].
    pub system: usize,
    /// Gold item index.
    pub index: usize,
    /// One score per metric, in [`Evaluation::metrics`] order.
    pub scores: Vec<Score>,
    /// Whether a query of this pair met an engine fault (the run then fails closed).
    pub faulted: bool,
    /// Why the pair's verdict could change in another run of the same prediction, when it could.
    pub unstable: Reasons,
}

/// A deterministic slice of the (system, item) work, for spreading a run over several runners.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 0-based shard number.
    pub index: usize,
    /// Number of shards.
    pub count: usize,
}

impl Shard {
    /// Parses `I/N` (1-based, as written on the command line).
    pub fn parse(text: &str) -> Result<Shard, String> {
        let parsed = text.split_once('/').and_then(|(i, n)| {
            Some((
                i.trim().parse::<usize>().ok()?,
                n.trim().parse::<usize>().ok()?,
            ))
        });
        match parsed {
            Some((i, n)) if n >= 1 && (1..=n).contains(&i) => Ok(Shard {
                index: i - 1,
                count: n,
            }),
            _ => Err(format!("--shard takes I/N with 1 <= I <= N, not `{text}`")),
        }
    }

    /// Whether this shard scores `system` on `item`: a stable hash, the same on every machine.
    pub fn owns(&self, system: &str, item: usize) -> bool {
        let digest = Sha256::digest(format!("{system}\0{item}").as_bytes());
        let value = u64::from_le_bytes(digest[..8].try_into().expect("8 bytes"));
        value % self.count as u64 == self.index as u64
    }
}

/// Everything a run produced.
pub struct Evaluation {
    /// The benchmark.
    pub dataset: Dataset,
    /// The scored systems.
    pub systems: Vec<System>,
    /// Metric names, in config order.
    pub metrics: Vec<String>,
    /// Results ordered by system, then item; every pair once, except in a shard's partial run.
    pub results: Vec<ItemResult>,
    /// The executor the run used (its server connections stay open for the report's result
    /// tables); `None` for an evaluation merged from shards.
    pub executor: Option<Executor>,
    /// Digests of the provider cache entries the run used or wrote, which a baseline records
    /// so that pull-request runs may use them ([`crate::providers::entry_digest`]).
    pub provider_cache: Vec<String>,
    /// Digests of the distilled suite's gold-cache entries the run used or wrote, which a
    /// baseline records so that later runs may use them
    /// ([`crate::suites::gold_cache::entry_digest`]); empty without a distilled suite.
    pub gold_cache: Vec<String>,
    /// Digests of the server's tables at start-up, which a baseline records so that later runs
    /// are judged on the same data ([`crate::score::data`]); `None` on SQLite and for merged
    /// shards.
    pub data_digests: Option<DataDigests>,
    /// Digests of the distilled suite's manifests ([`crate::suites::distill::store::manifest_digest`]),
    /// which a baseline records so that pull-request runs may reuse a suite the base branch
    /// cached outside git.
    pub suite_manifests: Vec<String>,
    /// What the run ignored or rebuilt of sqlgate's own state in a pull-request run, for the
    /// report.
    pub notes: Vec<String>,
    /// How long scoring took and how much of it went to timed-out queries.
    pub timing: RunTiming,
    /// The reviewed gold overrides the run applied (`audit.overrides`).
    pub overrides: GoldOverrides,
    /// Each gold's measured time, which a baseline records so that later runs give a slow
    /// gold's item its budget ([`crate::score::budget`]); empty for merged shards.
    pub gold_ms: crate::score::budget::GoldTimes,
    /// A directory suite's files as the run read them ([`crate::score::suite_digest::with_read`]:
    /// the copies the metrics read, and the folder's other files), which a baseline records and
    /// compares; `None` for any other suite.
    pub suite_digests: Option<std::collections::BTreeMap<String, String>>,
}

/// The scoring phase of a run in time: its wall time, its workers, and the timed-out queries
/// (so a report can say why a run was slow). All zero for merged shards.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RunTiming {
    /// Wall time of scoring (suite opening and every metric on every pair), in seconds.
    pub wall_seconds: f64,
    /// Worker threads.
    pub threads: usize,
    /// The queries that hit the time limit and the worker time they took.
    pub timeouts: TimeoutTotals,
}

impl RunTiming {
    /// The share of the workers' time (wall time x threads) that timed-out queries took.
    pub fn timeout_share(&self) -> f64 {
        let capacity = self.wall_seconds * self.threads as f64;
        if capacity > 0.0 {
            (self.timeouts.seconds / capacity).min(1.0)
        } else {
            0.0
        }
    }
}

/// What scoring needs before any query runs: metrics, dataset and predictions.
pub struct Prepared {
    /// The metrics, in config order.
    pub metrics: Vec<Box<dyn Metric>>,
    /// The benchmark.
    pub dataset: Dataset,
    /// The systems.
    pub systems: Vec<System>,
    /// The reviewed gold overrides, already applied to `dataset` (replacements, exclusions).
    pub overrides: GoldOverrides,
}

/// Loads and validates everything a run reads (the reviewed overrides from the trusted
/// `snapshot`).
pub fn prepare(config: &Config, snapshot: &Snapshot) -> Result<Prepared, InputError> {
    let metrics = build_metrics(config)?;
    let mut dataset = Dataset::load_with(
        &config.dataset,
        config.compare.version.unwrap_or_default(),
        &Engines,
    )?;
    config.check_items(dataset.items.len())?;
    let overrides = GoldOverrides::load(config, snapshot, &dataset)?;
    overrides.apply(&mut dataset);
    let systems = load_systems(&config.predictions, &dataset)?;
    Ok(Prepared {
        metrics,
        dataset,
        systems,
        overrides,
    })
}

/// Identifies the inputs of a run (config text and every system's predictions), so shards of
/// different runs are never merged.
pub fn fingerprint(config: &Config, systems: &[System]) -> Result<String, InputError> {
    let mut hasher = Sha256::new();
    hasher.update(config.source_sha256.as_bytes());
    for system in systems {
        hasher.update(system.name.as_bytes());
        for prediction in &system.predictions {
            hasher.update([u8::from(prediction.is_some())]);
            hasher.update(prediction.as_deref().unwrap_or("").as_bytes());
            hasher.update([0]);
        }
    }
    Ok(crate::util::digest::hex(&hasher.finalize()))
}

impl Evaluation {
    /// The results of one system, in item order.
    pub fn system_results(&self, system: usize) -> &[ItemResult] {
        let items = self.dataset.items.len();
        &self.results[system * items..(system + 1) * items]
    }

    /// Items whose gold query failed or timed out under any metric, excluded from every
    /// denominator.
    pub fn gold_failures(&self) -> Vec<usize> {
        self.items_with(Outcome::is_gold_failure)
    }

    /// Items whose gold query failed (not by timing out) under any metric: a dataset defect.
    pub fn gold_errors(&self) -> Vec<usize> {
        self.items_with(|o| o == Outcome::GoldError)
    }

    /// Items whose gold query timed out under any metric.
    pub fn gold_timeouts(&self) -> Vec<usize> {
        self.items_with(|o| o == Outcome::GoldTimeout)
    }

    /// The items with a test-suite counterexample under any metric, per system.
    pub fn flipped_items(&self) -> Vec<Vec<usize>> {
        (0..self.systems.len())
            .map(|system| {
                (self.system_results(system).iter())
                    .filter(|r| {
                        (r.scores.iter()).any(|s| {
                            (s.details.as_ref())
                                .and_then(|d| d.counterexample())
                                .is_some()
                        })
                    })
                    .map(|r| r.index)
                    .collect()
            })
            .collect()
    }

    fn items_with(&self, outcome: impl Fn(Outcome) -> bool) -> Vec<usize> {
        let Some(first) = self.systems.first().map(|_| self.system_results(0)) else {
            return Vec::new();
        };
        first
            .iter()
            .filter(|r| r.scores.iter().any(|s| outcome(s.outcome)))
            .map(|r| r.index)
            .collect()
    }
}

/// Loads the configured dataset and predictions and scores them, with the trusted inputs the
/// trust stage read (`snapshot`).
pub fn evaluate(config: &Config, snapshot: &Snapshot) -> Result<Evaluation, InputError> {
    evaluate_part(config, snapshot, None)
}

/// Like [`evaluate`], but scores only the pairs `shard` owns (all pairs without a shard).
pub fn evaluate_part(
    config: &Config,
    snapshot: &Snapshot,
    shard: Option<Shard>,
) -> Result<Evaluation, InputError> {
    let trust = crate::score::trust::cache_trust(config, snapshot)?;
    score_with(
        (config, snapshot),
        shard,
        &trust,
        DataUse::CheckAgainstBaseline,
    )
}

/// Scores everything for `baseline update`: no provider cache entry is used (see
/// [`crate::score::trust::baseline_cache_trust`]).
pub fn evaluate_for_baseline(
    config: &Config,
    snapshot: &Snapshot,
) -> Result<Evaluation, InputError> {
    let trust = crate::score::trust::baseline_cache_trust();
    score_with((config, snapshot), None, &trust, DataUse::Record)
}

/// What a run does with the digests of the server's data it computes at start-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DataUse {
    /// Refuse to score when they differ from the trusted baseline's (every gated run).
    CheckAgainstBaseline,
    /// Only record them (`baseline update`, which vouches for the data it runs on).
    Record,
}

fn score_with(
    (config, snapshot): (&Config, &Snapshot),
    shard: Option<Shard>,
    trust: &crate::providers::CacheTrust,
    data_use: DataUse,
) -> Result<Evaluation, InputError> {
    let Prepared {
        metrics,
        mut dataset,
        systems,
        overrides,
    } = prepare(config, snapshot)?;
    crate::score::gold_check::settle_difficulty(&config.dataset, &mut dataset, &overrides)?;
    crate::util::memory::install_sqlite_allocator();
    crate::util::memory::PROCESS.set_limit(config.execution.max_memory);
    let started = Instant::now();
    let profile = Profile::new(&config.compare);
    let pool = thread_pool(config.execution.threads, &config.path)?;
    let executor = crate::engine::registry::executor(
        config,
        &dataset,
        Limits::of(&config.execution),
        pool.current_num_threads(),
    )?;
    let data_digests = start_up_digests(config, &dataset, &executor)?;
    let budgets = crate::score::budget::budgets((config, snapshot), executor.limits().timeout)?;
    let data_notes = match data_use {
        DataUse::CheckAgainstBaseline => {
            crate::score::data::check((config, snapshot), data_digests.as_ref())?
        }
        DataUse::Record => Vec::new(),
    };
    let mut rebuilt = None;
    let mut suite_manifests = Vec::new();
    let mut suite_digests = None;
    let (suite, gold_cache) = match (config.suite.kind, &config.suite.path) {
        (SuiteKind::Directory, Some(path)) => {
            let suite = Suite::directory(
                path,
                dataset.databases.keys().map(String::as_str),
                config.dataset.skip_missing_databases,
            )?;
            suite_digests = crate::score::suite_digest::with_read(config, suite.digests())?;
            (Some(suite), None)
        }
        (SuiteKind::Distilled, Some(_)) => {
            let source = crate::suites::distill::source::GeneratedNeighbors;
            let (suite, cache, report) = pool.install(|| {
                let trusted = (config, snapshot);
                crate::suites::distill::open_configured(trusted, &dataset, &profile, &source)
            })?;
            let cache = cache.with_trust(crate::score::trust::gold_cache_trust(config, snapshot)?);
            rebuilt = crate::score::trust::rebuilt_suites(snapshot, &report);
            suite_manifests = report
                .schemas
                .iter()
                .map(|s| crate::suites::distill::store::manifest_digest(&s.manifest))
                .collect();
            (Some(suite), Some(cache))
        }
        _ => (None, None),
    };
    let providers = Providers::new(config.judge.as_ref(), config.embeddings.as_ref(), trust);
    let results = pool.install(|| {
        let env = || {
            Env::new(&dataset, &executor, &profile, suite.as_ref())
                .with_providers(providers.clone())
                .with_qas_weight(config.qas.weight)
                .with_rves_repetitions(config.rves.repetitions)
                .with_rves_order(config.rves.order)
                .with_soft_f1_version(config.soft_f1.version)
                .with_state_budget(&config.execution)
                .with_gold_cache(gold_cache.as_ref())
        };
        // One environment per alternative rank: an environment runs each item's gold once.
        let golds = Golds {
            env: env(),
            alternatives: (0..overrides.most_alternatives()).map(|_| env()).collect(),
            overrides: &overrides,
        };
        let stability =
            StabilityCheck::new(&executor, &config.dataset.engine.kind, dataset.items.len());
        let results = score_all(&golds, &stability, (&systems, &metrics), (shard, &budgets));
        let stops: Vec<String> = std::iter::once(&golds.env)
            .chain(&golds.alternatives)
            .flat_map(Env::stops)
            .collect();
        (results, stops, gold_times(&golds.env))
    });
    let (results, stops, gold_ms) = results;
    if let Some(before) = &data_digests {
        let after = crate::engine::registry::data_digests(config, &dataset)?;
        crate::score::data::unchanged(config, before, after.as_ref())?;
    }
    // Checked in the hold's session before the hold ends; a hold lost meanwhile is named first.
    let alone = executor.check_claim();
    executor
        .release_data()
        .map_err(|message| crate::score::data::hold_lost(config, &message))?;
    alone.map_err(|message| crate::score::data::not_alone(config, &message))?;
    fail_on_official_stops(config, &stops)?;
    fail_on_faults(config, &executor, &systems, &results)?;
    let scored = results.iter().map(|r| (r.index, r.scores.as_slice()));
    crate::score::gold_check::fail_on_gold_errors(config, &dataset, scored)?;
    let timing = RunTiming {
        wall_seconds: started.elapsed().as_secs_f64(),
        threads: pool.current_num_threads(),
        timeouts: executor.timeouts(),
    };
    if let Some(cache) = &gold_cache {
        cache.save()?;
    }
    let untrusted_golds = gold_cache
        .as_ref()
        .and_then(crate::score::trust::untrusted_gold_rows);
    let notes: Vec<String> = rebuilt
        .into_iter()
        .chain(untrusted_golds)
        .chain(data_notes)
        .chain(crate::score::trust::state_notes(
            (config, snapshot),
            &providers,
        )?)
        .chain(crate::score::trust::cache_failure_notes(&providers))
        .collect();
    for note in &notes {
        crate::util::log::note(note);
    }
    let provider_cache = providers
        .configured()
        .flat_map(|(_, provider)| provider.cache_entries())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    Ok(Evaluation {
        metrics: metrics.iter().map(|m| m.name().to_string()).collect(),
        dataset,
        systems,
        results,
        executor: Some(executor),
        provider_cache,
        gold_cache: gold_cache.map(|c| c.recorded()).unwrap_or_default(),
        data_digests,
        suite_manifests,
        notes,
        timing,
        overrides,
        gold_ms,
        suite_digests,
    })
}

/// How long each gold `env` ran took, in milliseconds, by item index: those that returned rows
/// or reached the time limit (a gold read from the on-disk cache, or not run, has no time).
fn gold_times(env: &Env<'_>) -> crate::score::budget::GoldTimes {
    env.dataset
        .items
        .iter()
        .filter_map(|item| {
            let gold = env.executed_gold(item, env.dataset.database_path(item)?)?;
            let timed = matches!(gold.rows, Ok(_) | Err(ExecError::Timeout(_)));
            let elapsed = gold.elapsed.filter(|_| timed)?;
            Some((item.index, elapsed.as_millis().min(u64::MAX as u128) as u64))
        })
        .collect()
}

fn build_metrics(config: &Config) -> Result<Vec<Box<dyn Metric>>, InputError> {
    let config_error = |message: String| InputError::Config {
        path: config.path.clone(),
        message: format!("`metrics`: {message}"),
    };
    if let Some((metric, sub)) = config
        .gate
        .metric
        .as_deref()
        .and_then(|m| m.split_once('.'))
    {
        if !metrics::gives_sub_score(metric, sub) {
            return Err(InputError::Config {
                path: config.path.clone(),
                message: format!(
                    "`gate.metric`: `{metric}` gives no sub-score `{sub}` \
                     (sub-scores are `<sqlmorph technique>.ex|exp|exr|f1`)"
                ),
            });
        }
    }
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

/// The most worker threads a run starts: more than any machine sqlgate runs on can use, and a
/// bound on what a config can ask of the system.
pub const MAX_THREADS: usize = 256;

/// The worker pool, or an input error naming `execution.threads` when the system refuses the
/// threads. `auto` is one worker per CPU; an explicit count is honoured (a server engine waits
/// on the network, so more connections than CPUs can pay; the memory budget, not the count,
/// bounds the run's memory) up to [`MAX_THREADS`].
fn thread_pool(
    threads: Threads,
    config: &std::path::Path,
) -> Result<rayon::ThreadPool, InputError> {
    let count = match threads {
        Threads::Auto => std::thread::available_parallelism().map_or(1, usize::from),
        Threads::Count(n) if n > MAX_THREADS => {
            crate::util::log::note(&format!(
                "`execution.threads: {n}` clamped to {MAX_THREADS} worker threads"
            ));
            MAX_THREADS
        }
        Threads::Count(n) => n,
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(count)
        .build()
        .map_err(|e| InputError::Config {
            path: config.to_path_buf(),
            message: format!("`execution.threads`: cannot start {count} worker threads: {e}"),
        })
}

/// Fails the run as the official script reproduced fails as a whole (`Env::stop_run`), naming
/// where.
fn fail_on_official_stops(config: &Config, stops: &[String]) -> Result<(), InputError> {
    let Some(first) = stops.first() else {
        return Ok(());
    };
    Err(InputError::Config {
        path: config.path.clone(),
        message: format!(
            "{first}{}",
            match stops.len() {
                1 => String::new(),
                n => format!(" (and {} more such stops)", n - 1),
            }
        ),
    })
}

/// Fails the run closed when the engine failed on any query (after its retries on fresh
/// sessions): a lost session or an outside cancel is no verdict on an item, so the run could not
/// evaluate the items it hit, which the error names.
/// The data digests a run starts from: taken inside the engine's hold on its data where it
/// has one (a server: scoring then reads exactly the data digested, whatever another session
/// writes meanwhile), else the factory's (none for files, which the dataset's fingerprint
/// covers).
fn start_up_digests(
    config: &Config,
    dataset: &crate::input::dataset::Dataset,
    executor: &Executor,
) -> Result<Option<DataDigests>, InputError> {
    let held = executor
        .hold_data()
        .map_err(|message| crate::score::data::hold_failed(config, &message))?;
    match held {
        Some(digests) => {
            executor
                .claim_server()
                .map_err(|message| crate::score::data::not_alone(config, &message))?;
            Ok(Some(digests))
        }
        None => crate::engine::registry::data_digests(config, dataset),
    }
}

fn fail_on_faults(
    config: &Config,
    executor: &Executor,
    systems: &[System],
    results: &[ItemResult],
) -> Result<(), InputError> {
    let faults = executor.faults();
    if faults.queries == 0 {
        return Ok(());
    }
    let hit: Vec<String> = results
        .iter()
        .filter(|r| r.faulted)
        .map(|r| format!("`{}` item {}", systems[r.system].name, r.index))
        .collect();
    let shown = hit.iter().take(20).cloned().collect::<Vec<_>>().join(", ");
    Err(InputError::Config {
        path: config.path.clone(),
        message: format!(
            "could not evaluate: the server failed on {} queries even on fresh sessions (a session ended from outside, a lost connection or a cancel that was not sqlgate's deadline), so no verdict is given; items: {}{}; first error: {}",
            faults.queries,
            if shown.is_empty() { "unknown" } else { &shown },
            if hit.len() > 20 { ", ..." } else { "" },
            faults.messages.first().map(String::as_str).unwrap_or_default()
        ),
    })
}

/// The item's gold and the reviewed alternatives to it, each scored in its own environment.
struct Golds<'e, 'o> {
    /// The environment of the items' own golds.
    env: Env<'e>,
    /// One environment per alternative rank (the first alternative of every item, the second...).
    alternatives: Vec<Env<'e>>,
    /// The reviewed overrides.
    overrides: &'o GoldOverrides,
}

impl Golds<'_, '_> {
    /// The metric's score against the item's gold, or against an alternative gold when that
    /// scores higher (any gold matching counts; the details say which one did).
    fn score(&self, metric: &dyn Metric, item: &GoldItem, prediction: Option<&str>) -> Score {
        if self.overrides.excluded(item.index) {
            return Score::unscored(Outcome::Skipped, "excluded by a reviewed gold override");
        }
        let mut best = metric.score(&self.env, item, prediction);
        let value = |score: &Score| score.value.unwrap_or(f64::NEG_INFINITY);
        for (rank, sql) in self.overrides.alternatives(item.index).iter().enumerate() {
            if best.outcome == Outcome::Match {
                break;
            }
            let mut alternative = item.clone();
            alternative.sql = sql.clone();
            let score = metric.score(&self.alternatives[rank], &alternative, prediction);
            if value(&score) > value(&best) {
                best = score;
            }
        }
        best
    }
}

/// Scores every pair (of the shard) on the worker pool. Pairs go out item by item, each item's
/// systems next to each other, so the worker that runs an item's gold query is the one that uses
/// it next (no worker waits for another's gold result) and the item's database stays warm; the
/// results come back ordered by system, then item.
fn score_all(
    golds: &Golds<'_, '_>,
    stability: &StabilityCheck<'_>,
    (systems, metrics): (&[System], &[Box<dyn Metric>]),
    (shard, budgets): (Option<Shard>, &BTreeMap<usize, Duration>),
) -> Vec<ItemResult> {
    let env = &golds.env;
    let count = systems.len();
    let item_major = |pair: usize| (pair % count, pair / count);
    let pairs: Vec<usize> = (0..count * env.dataset.items.len())
        .filter(|&pair| {
            let (system, index) = item_major(pair);
            shard.is_none_or(|s| s.owns(&systems[system].name, index))
        })
        .collect();
    let progress = crate::util::progress::Progress::new(pairs.len());
    let mut results: Vec<ItemResult> = pairs
        .into_par_iter()
        .map(|pair| {
            let (system, index) = item_major(pair);
            let item = &env.dataset.items[index];
            let prediction = systems[system].predictions[index].as_deref();
            let budget = budgets.get(&index).copied();
            let result = crate::engine::exec::with_item_budget(budget, || {
                let faults_before = crate::engine::exec::faults_on_this_thread();
                crate::engine::exec::take_slowest_on_this_thread();
                let unextracted = systems[system].unextracted.get(&index);
                let scores = crate::util::memory::item_scope(|| {
                    metrics
                        .iter()
                        .map(|metric| {
                            extraction_outcome(
                                golds.score(metric.as_ref(), item, prediction),
                                unextracted,
                            )
                        })
                        .collect()
                });
                let slowest = crate::engine::exec::take_slowest_on_this_thread();
                ItemResult {
                    system,
                    index,
                    scores,
                    faulted: crate::engine::exec::faults_on_this_thread() != faults_before,
                    unstable: stability.of_pair(env, item, prediction, slowest),
                }
            });
            progress.tick();
            result
        })
        .collect();
    progress.finish();
    results.sort_unstable_by_key(|r| (r.system, r.index));
    results
}

/// A missing prediction whose raw output held no SQL is an extraction failure, with its reason;
/// an item the metric could not score (gold error, database absent) stays as it was.
fn extraction_outcome(score: Score, unextracted: Option<&String>) -> Score {
    match unextracted {
        Some(why) if score.outcome == Outcome::Missing => {
            Score::wrong(Outcome::ExtractionFailed, why)
        }
        _ => score,
    }
}
