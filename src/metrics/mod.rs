//! Metrics: one trait, one registry.
//!
//! Adding a metric means one new file implementing [`Metric`] and one line in [`REGISTRY`].
//! Work that does not depend on the system (running a gold query) is shared through
//! [`Env::gold_result`], computed once per item however many systems are scored.

mod esm;
pub mod esm_plus;
mod evalbench;
mod ex;
mod flex;
mod livesql;
mod outcome;
mod qas;
mod resultset;
mod rves;
mod soft_f1;
#[cfg(feature = "duckdb")]
pub(crate) mod spider2_dbt;
mod sqlmorph;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod toy;
mod ts;

use crate::engine::exec::{ExecError, Executor};
use crate::engine::profile::{PreparedGold, Profile};
use crate::engine::value::Row;
use crate::input::config::Config;
use crate::input::dataset::{Dataset, GoldItem};
pub use esm::{ComponentScore, Components, COMPONENTS};
pub use flex::{markdown_table, JudgeTotals, Judgement};
pub use outcome::Outcome;
pub use resultset::table_similarity;
pub use rves::{official_reward, Timing};
pub use sqlmorph::{gives_sub_score, CellScores, PartialCredit, Technique, PARTIAL_CREDIT_KEYS};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Makes a fresh instance of a metric.
type Constructor = fn() -> Box<dyn Metric>;

/// Every metric sqlgate knows, by name.
const REGISTRY: &[(&str, Constructor)] = &[
    ("ex", || Box::new(ex::ExecutionAccuracy)),
    ("esm", || Box::new(esm::ExactSetMatch::default())),
    ("esm_plus", || Box::<esm_plus::EsmPlus>::default()),
    ("ts", || Box::new(ts::TestSuiteAccuracy)),
    ("flex", || Box::<flex::Flex>::default()),
    ("execution_accuracy", || {
        Box::new(Technique::ExecutionAccuracy)
    }),
    ("exact_column_and_exact_cell", || {
        Box::new(Technique::ExactColumnExactCell)
    }),
    ("exact_column_and_partial_cell", || {
        Box::new(Technique::ExactColumnPartialCell)
    }),
    ("semantic_column_and_exact_cell", || {
        Box::new(Technique::SemanticColumnExactCell)
    }),
    ("semantic_column_and_partial_cell", || {
        Box::new(Technique::SemanticColumnPartialCell)
    }),
    ("no_column_and_partial_cell", || {
        Box::new(Technique::NoColumnPartialCell)
    }),
    ("unified_column_and_semantic_row", || {
        Box::new(Technique::UnifiedColumnSemanticRow)
    }),
    ("qas", || Box::new(qas::QueryAccuracyScore)),
    ("rves", || Box::new(rves::RewardVes)),
    ("soft_f1", || Box::new(soft_f1::SoftF1 { aligned: false })),
    ("soft_f1_aligned", || {
        Box::new(soft_f1::SoftF1 { aligned: true })
    }),
    #[cfg(feature = "duckdb")]
    ("duckdb_match", || Box::new(spider2_dbt::DuckdbMatch)),
    ("livesql", || {
        Box::new(livesql::LiveSql(crate::engine::livesql::Profile::Official))
    }),
    ("livesql_sound", || {
        Box::new(livesql::LiveSql(crate::engine::livesql::Profile::Sound))
    }),
    ("evalbench", || {
        Box::new(evalbench::EvalBench(
            crate::engine::evalbench::Sides::Shared,
        ))
    }),
    ("evalbench_sound", || {
        Box::new(evalbench::EvalBench(crate::engine::evalbench::Sides::Apart))
    }),
    ("bird_critic", || {
        Box::new(livesql::LiveSql(
            crate::engine::livesql::Profile::BirdCritic,
        ))
    }),
    ("bird_critic_sound", || {
        Box::new(livesql::LiveSql(
            crate::engine::livesql::Profile::BirdCriticSound,
        ))
    }),
    #[cfg(test)]
    ("toy", || Box::new(toy::Toy)),
];

/// The sound profile of metric `official` (`evalbench_sound` of `evalbench`, `livesql_sound` of
/// `livesql`), when it has one: the official order runs its gold on what the prediction left,
/// so only the sound profile may be gated on (`judge::rules::sound_gate`).
pub fn sound_profile_for(official: &str) -> Option<&'static str> {
    REGISTRY
        .iter()
        .map(|(_, make)| make())
        .find(|metric| metric.sound_profile_of() == Some(official))
        .map(|sound| sound.name())
}

/// Builds the metric called `name`, or says which names exist.
pub fn build(name: &str) -> Result<Box<dyn Metric>, String> {
    REGISTRY
        .iter()
        .find(|(known, _)| *known == name)
        .map(|(_, make)| make())
        .ok_or_else(|| {
            let known: Vec<&str> = REGISTRY.iter().map(|(n, _)| *n).collect();
            format!("unknown metric `{name}` (available: {})", known.join(", "))
        })
}

/// The values metric `name` (or any of its sub-scores) can take ([`Metric::value_range`]),
/// `None` for an unknown name. Stored results (baselines, shards) are checked against it on load.
pub fn value_range(name: &str) -> Option<std::ops::RangeInclusive<f64>> {
    let (low, high) = build(name).ok()?.value_range();
    Some(low..=high)
}

/// The continuous per-item scores metric `name` gives, as record keys
/// ([`Metric::continuous_scores`]); empty for an unknown name.
pub fn continuous_scores(name: &str) -> Vec<String> {
    build(name).map_or_else(|_| Vec::new(), |metric| metric.continuous_scores())
}

/// Whether metric `name` (a headline or `<metric>.<sub-score>`) reads query results
/// ([`Metric::reads_results`]); an unknown name is presumed to, so its unstable verdicts are
/// never trusted.
pub fn reads_results(name: &str) -> bool {
    let metric = name.split('.').next().unwrap_or(name);
    build(metric).map_or(true, |metric| metric.reads_results())
}

/// The metric that metric `name` is the sound profile of ([`Metric::sound_profile_of`]);
/// `None` for an unknown name or any other metric.
pub fn sound_profile_of(name: &str) -> Option<&'static str> {
    build(name).ok()?.sound_profile_of()
}

/// Checks one stored value of metric `name` (headline or sub-score): finite and inside
/// [`value_range`], allowing for rounding (1e-9); the error says what is wrong.
pub fn check_value(name: &str, value: f64) -> Result<(), String> {
    let range = value_range(name).ok_or_else(|| format!("unknown metric `{name}`"))?;
    let slack = 1e-9;
    if value.is_finite() && value >= range.start() - slack && value <= range.end() + slack {
        return Ok(());
    }
    Err(format!(
        "`{name}` value {value} is outside [{}, {}]",
        range.start(),
        range.end()
    ))
}

/// A way of scoring one prediction against its gold item.
pub trait Metric: Send + Sync {
    /// The name used in configs, JSONL and reports.
    fn name(&self) -> &'static str;
    /// Scores one prediction (`None`: missing). A metric that needs the database file reports
    /// [`Outcome::Skipped`] when it is absent.
    fn score(&self, env: &Env<'_>, item: &GoldItem, prediction: Option<&str>) -> Score;
    /// The values the metric (and each of its sub-scores) can take, as (lowest, highest):
    /// a share in [0, 1] unless the metric says otherwise.
    fn value_range(&self) -> (f64, f64) {
        (0.0, 1.0)
    }
    /// The continuous per-item scores the metric gives, as record keys (`<name>` or
    /// `<name>.<sub>`); none for a binary verdict.
    fn continuous_scores(&self) -> Vec<String> {
        Vec::new()
    }
    /// The metric's settings in `config` that a baseline must share to be comparable, each as
    /// the baseline's settings field and its value; none unless the metric has knobs.
    fn settings(&self, _config: &Config) -> Vec<(&'static str, serde_json::Value)> {
        Vec::new()
    }
    /// Whether the metric needs the benchmark's SQLite files (so no server engine).
    fn needs_sqlite_files(&self) -> bool {
        false
    }
    /// Whether the metric needs a test suite (`suite.kind` other than `original`).
    fn needs_suite(&self) -> bool {
        false
    }
    /// Reads back the per-item detail this metric wrote as `<name>_components` (or as its
    /// value object); `None` when the JSON is not this metric's detail. A metric without detail
    /// reads none.
    fn read_details(&self, _json: &serde_json::Value) -> Option<Details> {
        None
    }
    /// Whether the metric's verdict reads query results, so an undetermined order or a query
    /// near the time limit can change it ([`crate::score::stability`]); true unless the metric
    /// only compares SQL texts.
    fn reads_results(&self) -> bool {
        true
    }
    /// The metric this one is the sound profile of (`livesql_sound` of `livesql`): the same
    /// checks with the official scorer's quirks fixed, so reports name the items where the two
    /// differ (`report::disagreements`); `None` for any other metric.
    fn sound_profile_of(&self) -> Option<&'static str> {
        None
    }
}

/// One metric's verdict on one item.
#[derive(Debug, Clone, PartialEq)]
pub struct Score {
    /// The value; `None` when the item is not scored (skipped, gold error).
    pub value: Option<f64>,
    /// How the item ended.
    pub outcome: Outcome,
    /// The error text, when there is one.
    pub error: Option<String>,
    /// Metric-specific detail, written as `<metric>_components` in the JSONL.
    pub details: Option<Details>,
}

/// Metric-specific detail of one verdict: a value of the metric's own type (declared in its
/// file, implementing [`Detail`]), written as JSON by that type and read back by the metric
/// ([`Metric::read_details`]), so a metric with detail of its own touches no shared type.
#[derive(Debug, Clone)]
pub struct Details(Arc<dyn Detail>);

/// What a metric's per-item detail must do: write itself as JSON (`<metric>_components` in the
/// per-item lines, or the metric's value object there).
pub trait Detail: AsAny + std::fmt::Debug + Send + Sync {
    /// The JSON written to `<metric>_components` (or as the value, see
    /// [`Detail::is_value_object`]).
    fn to_json(&self) -> serde_json::Value;

    /// Whether this detail is the metric's value object in the JSONL (SQLMorph) rather than a
    /// `<metric>_components` entry.
    fn is_value_object(&self) -> bool {
        false
    }

    /// When the metric also gives a second verdict on the item (another comparison profile's)
    /// and it disagrees with the one scored: both in words, for the report's list of
    /// disagreements (`report::disagreements`). `None` otherwise.
    fn disagreement(&self) -> Option<String> {
        None
    }
}

/// A detail as [`std::any::Any`], so a reader that knows a metric's detail type can find it
/// ([`Details::get`]); implemented for every type.
pub trait AsAny {
    /// `self` as `Any`.
    fn as_any(&self) -> &dyn std::any::Any;
}

impl<T: std::any::Any> AsAny for T {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Details {
    /// Wraps a metric's detail.
    pub fn new(detail: impl Detail + 'static) -> Details {
        Details(Arc::new(detail))
    }

    /// The detail, when it is of type `T`.
    pub fn get<T: 'static>(&self) -> Option<&T> {
        let detail: &dyn Detail = self.0.as_ref();
        detail.as_any().downcast_ref::<T>()
    }

    /// The JSON the detail writes.
    pub fn to_json(&self) -> serde_json::Value {
        self.0.to_json()
    }

    /// Whether the detail is the metric's value object in the JSONL.
    pub fn is_value_object(&self) -> bool {
        self.0.is_value_object()
    }

    /// The second verdict that disagrees with the one scored, in words ([`Detail::disagreement`]).
    pub fn disagreement(&self) -> Option<String> {
        self.0.disagreement()
    }

    /// The TS counterexample this detail carries, if any.
    pub fn counterexample(&self) -> Option<&crate::suites::counterexample::Counterexample> {
        self.get::<ts::Distinguishing>()?.counterexample.as_deref()
    }
}

/// Two details are equal when they write the same JSON (what a baseline or a shard keeps).
impl PartialEq for Details {
    fn eq(&self, other: &Details) -> bool {
        self.to_json() == other.to_json()
    }
}

impl Score {
    /// A binary verdict.
    pub fn binary(correct: bool) -> Score {
        Score {
            value: Some(if correct { 1.0 } else { 0.0 }),
            outcome: if correct {
                Outcome::Match
            } else {
                Outcome::Mismatch
            },
            error: None,
            details: None,
        }
    }

    /// A wrong verdict with an outcome and a reason.
    pub fn wrong(outcome: Outcome, error: impl Into<String>) -> Score {
        Score {
            value: Some(0.0),
            outcome,
            error: Some(error.into()),
            details: None,
        }
    }

    /// No prediction given.
    pub fn missing() -> Score {
        Score::wrong(Outcome::Missing, "no prediction")
    }

    /// A named continuous sub-score of this verdict (`ex`, `exp`, `exr`, `f1` of SQLMorph), for
    /// reports and the gate.
    pub fn sub_score(&self, name: &str) -> Option<f64> {
        match (&self.details, self.outcome.is_scored()) {
            (Some(details), true) => details.get::<PartialCredit>()?.get(name),
            _ => None,
        }
    }

    /// Not scored at all.
    pub fn unscored(outcome: Outcome, reason: impl Into<String>) -> Score {
        Score {
            value: None,
            outcome,
            error: Some(reason.into()),
            details: None,
        }
    }
}

/// A gold query's result on the item's database, shared by every system.
#[derive(Debug)]
pub struct GoldResult {
    /// The prepared gold query.
    pub prepared: PreparedGold,
    /// Its rows, or why it failed.
    pub rows: Result<Vec<Row>, ExecError>,
    /// Its column names (empty when it failed).
    pub columns: Vec<String>,
    /// How long it ran; `None` when read from the on-disk gold cache.
    pub elapsed: Option<std::time::Duration>,
}

/// What metrics may use: the dataset, the executor, the comparison profile, the test suites and
/// shared gold results.
pub struct Env<'a> {
    /// The benchmark.
    pub dataset: &'a Dataset,
    /// Runs queries safely.
    pub executor: &'a Executor,
    /// The comparison profile.
    pub profile: &'a Profile,
    /// Test-suite databases per db_id, when a suite is configured.
    pub suite: Option<&'a crate::suites::suite::Suite>,
    /// The judge and embedding endpoints, or why each is unavailable.
    pub providers: crate::providers::Providers,
    /// QAS's w: the weight of table similarity S_T (1 - w goes to S_C).
    pub qas_weight: f64,
    /// R-VES: timed runs of gold and prediction per item.
    pub rves_repetitions: usize,
    /// R-VES: the order of the timed runs and the estimator that reads them.
    pub rves_order: crate::input::config::RvesOrder,
    /// Soft-F1: the version of the official script reproduced.
    pub soft_f1_version: crate::input::soft_f1::SoftF1Version,
    /// State-changing items: what each item may spend (`execution.max_copy_bytes`,
    /// `max_steps`, `item_timeout_ms`).
    pub state_budget: crate::engine::livesql::Budget,
    gold: Mutex<HashMap<(usize, usize, PathBuf), GoldSlot>>,
    gold_cache: Option<&'a crate::suites::gold_cache::GoldCache>,
    /// Memory-budget bytes the shared gold results keep charged, given back with the `Env`.
    gold_bytes: AtomicUsize,
    /// Where the official script being reproduced stops the whole run (`stop_run`).
    stops: Mutex<Vec<String>>,
}

impl Drop for Env<'_> {
    fn drop(&mut self) {
        crate::util::memory::PROCESS.release(*self.gold_bytes.get_mut());
    }
}

/// A gold result computed on first use.
type GoldSlot = Arc<OnceLock<Arc<GoldResult>>>;

impl<'a> Env<'a> {
    /// An environment with an empty gold cache.
    pub fn new(
        dataset: &'a Dataset,
        executor: &'a Executor,
        profile: &'a Profile,
        suite: Option<&'a crate::suites::suite::Suite>,
    ) -> Self {
        Env {
            dataset,
            executor,
            profile,
            suite,
            providers: crate::providers::Providers::default(),
            qas_weight: crate::input::config::QasConfig::default().weight,
            rves_repetitions: crate::input::config::RvesConfig::default().repetitions,
            rves_order: crate::input::config::RvesOrder::default(),
            soft_f1_version: crate::input::soft_f1::SoftF1Version::default(),
            state_budget: crate::engine::livesql::Budget {
                deadline: executor.limits().timeout,
                ..Default::default()
            },
            gold: Mutex::new(HashMap::new()),
            gold_cache: None,
            gold_bytes: AtomicUsize::new(0),
            stops: Mutex::new(Vec::new()),
        }
    }

    /// The same environment with the run's configured providers (none by default).
    pub fn with_providers(mut self, providers: crate::providers::Providers) -> Self {
        self.providers = providers;
        self
    }

    /// The same environment with QAS weight `w`.
    pub fn with_qas_weight(mut self, qas_weight: f64) -> Self {
        self.qas_weight = qas_weight;
        self
    }

    /// The same environment with `repetitions` timed runs per R-VES item.
    pub fn with_rves_repetitions(mut self, rves_repetitions: usize) -> Self {
        self.rves_repetitions = rves_repetitions;
        self
    }

    /// The same environment with R-VES timed in `rves_order`.
    pub fn with_rves_order(mut self, rves_order: crate::input::config::RvesOrder) -> Self {
        self.rves_order = rves_order;
        self
    }

    /// The same environment with state-changing items' budgets from the `execution` section.
    pub fn with_state_budget(mut self, execution: &crate::input::config::ExecutionConfig) -> Self {
        self.state_budget.max_steps = execution.max_steps;
        self.state_budget.disk_bytes = execution.max_copy_bytes;
        self.state_budget.deadline = execution.item_deadline(self.state_budget.deadline);
        self
    }

    /// The same environment with Soft-F1 computed as `version` of the official script does.
    pub fn with_soft_f1_version(mut self, version: crate::input::soft_f1::SoftF1Version) -> Self {
        self.soft_f1_version = version;
        self
    }

    /// Records that the official script this run reproduces stops the whole run at an item
    /// (`reason` names it): the run then gives no verdict ([`Env::stops`]).
    pub fn stop_run(&self, reason: String) {
        let mut stops = self.stops.lock().unwrap_or_else(|p| p.into_inner());
        stops.push(reason);
    }

    /// The recorded run stops, sorted.
    pub fn stops(&self) -> Vec<String> {
        let mut stops = self.stops.lock().unwrap_or_else(|p| p.into_inner()).clone();
        stops.sort();
        stops
    }

    /// The embedding provider as the semantic metrics use it, or why it is unavailable.
    pub fn embedder(&self) -> Result<&dyn Embedder, &str> {
        self.providers.embeddings().map(|p| p as &dyn Embedder)
    }

    /// Takes gold results from (and adds them to) an on-disk cache.
    pub fn with_gold_cache(
        mut self,
        cache: Option<&'a crate::suites::gold_cache::GoldCache>,
    ) -> Self {
        self.gold_cache = cache;
        self
    }

    /// A gold query prepared otherwise than the profile's own way (a test suite's texts,
    /// [`crate::engine::profile::Profile::suite_texts`]) run on `db`, not cached.
    pub fn run_gold(&self, prepared: &PreparedGold, db: &Path) -> GoldResult {
        let started = std::time::Instant::now();
        let (rows, columns) = match self.executor.run_table(db, &prepared.sql) {
            Ok(table) => (Ok(table.rows), table.columns),
            Err(e) => (Err(e), Vec::new()),
        };
        GoldResult {
            prepared: prepared.clone(),
            rows,
            columns,
            elapsed: Some(started.elapsed()),
        }
    }

    /// The item's gold result on database `db` when a metric already ran it (nothing runs here):
    /// the stability check probes only the golds the run executed.
    pub fn executed_gold(&self, item: &GoldItem, db: &Path) -> Option<Arc<GoldResult>> {
        let slots = self
            .gold
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let slot = slots.get(&(item.index, 0, db.to_path_buf()))?;
        slot.get().cloned()
    }

    /// The item's gold result on database `db`, run once however many systems ask.
    pub fn gold_result(&self, item: &GoldItem, db: &Path) -> Arc<GoldResult> {
        self.gold_answer(item, 0, &item.sql, db)
    }

    /// The result of the item's gold answer number `answer` (query `sql`; answer 0 is the
    /// item's own `sql`) on database `db`, run once however many systems ask.
    pub fn gold_answer(
        &self,
        item: &GoldItem,
        answer: usize,
        sql: &str,
        db: &Path,
    ) -> Arc<GoldResult> {
        let slot = {
            let mut slots = self
                .gold
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            Arc::clone(
                slots
                    .entry((item.index, answer, db.to_path_buf()))
                    .or_default(),
            )
        };
        Arc::clone(slot.get_or_init(|| {
            let (result, kept) = crate::util::memory::retained(|| self.compute_gold(sql, db));
            self.gold_bytes.fetch_add(kept, Ordering::Relaxed);
            result
        }))
    }

    /// Runs (or reads from the on-disk cache) the gold query `sql` on `db`.
    fn compute_gold(&self, sql: &str, db: &Path) -> Arc<GoldResult> {
        let prepared = self.profile.prepare_gold(sql);
        let cached = self
            .gold_cache
            .and_then(|cache| Some((cache, cache.key(db, &prepared.sql)?)));
        if let Some(rows) = cached.as_ref().and_then(|(cache, key)| cache.get(key)) {
            let columns = self
                .executor
                .column_names(db, &prepared.sql)
                .unwrap_or_default();
            return Arc::new(GoldResult {
                prepared,
                rows: Ok(rows),
                columns,
                elapsed: None,
            });
        }
        let started = std::time::Instant::now();
        let (rows, columns) = match self.executor.run_table(db, &prepared.sql) {
            Ok(table) => (Ok(table.rows), table.columns),
            Err(e) => (Err(e), Vec::new()),
        };
        if let (Some((cache, key)), Ok(rows)) = (cached, &rows) {
            cache.put(key, rows);
        }
        Arc::new(GoldResult {
            prepared,
            rows,
            columns,
            elapsed: Some(started.elapsed()),
        })
    }
}

/// An item's database with a gold result that ran: where every execution metric starts.
pub(crate) struct GoldRun<'e> {
    /// The item's database.
    pub db: &'e Path,
    /// The gold result; its rows are `Ok` (checked by [`gold_run`]).
    pub gold: Arc<GoldResult>,
}

impl GoldRun<'_> {
    /// The gold rows.
    pub fn rows(&self) -> &[Row] {
        self.gold.rows.as_deref().unwrap_or_default()
    }
}

/// The item's database and gold result, or the verdict that leaves the item unscored: the
/// database is absent (skipped) or the gold query failed (gold error).
pub(crate) fn gold_run<'e>(env: &'e Env<'_>, item: &GoldItem) -> Result<GoldRun<'e>, Score> {
    let Some(db) = env.dataset.database_path(item) else {
        return Err(Score::unscored(Outcome::Skipped, "database absent"));
    };
    let gold = env.gold_result(item, db);
    if let Err(e) = &gold.rows {
        return Err(gold_failure(e));
    }
    Ok(GoldRun { db, gold })
}

/// The verdict on an item whose gold query did not run: not scored, with the reason;
/// `gold_timeout` when it hit the time limit, `gold_error` otherwise.
pub(crate) fn gold_failure(error: &ExecError) -> Score {
    match error {
        ExecError::Timeout(_) => {
            Score::unscored(Outcome::GoldTimeout, format!("gold query {error}"))
        }
        _ => Score::unscored(Outcome::GoldError, format!("gold query failed: {error}")),
    }
}

/// The gold run and the prediction of an item that can be scored; otherwise the verdict that
/// leaves it unscored (database absent, gold failed) or scores it as missing.
pub(crate) fn gold_and_prediction<'e, 'p>(
    env: &'e Env<'_>,
    item: &GoldItem,
    prediction: Option<&'p str>,
) -> Result<(GoldRun<'e>, &'p str), Score> {
    let run = gold_run(env, item)?;
    let prediction = prediction.ok_or_else(Score::missing)?;
    Ok((run, prediction))
}

/// The verdict on a prediction that did not run: a timeout or an error, with the message.
pub(crate) fn prediction_failure(error: ExecError) -> Score {
    let outcome = match error {
        ExecError::Timeout(_) => Outcome::PredTimeout,
        _ => Outcome::PredError,
    };
    Score::wrong(outcome, error.to_string())
}

/// Text embeddings for the semantic metrics; the configured `embeddings:` provider is one, and
/// tests plug in fixed vectors.
pub trait Embedder: Send + Sync {
    /// One vector per text, in order; `Err` says why the provider did not answer.
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String>;
}

impl Embedder for crate::providers::Provider {
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        crate::providers::Provider::embed(self, texts).map_err(|e| e.to_string())
    }
}
