//! The `sqlgate.yml` configuration: typed, strict (unknown keys are errors), with relative paths
//! resolved against the config file's folder.
//!
//! YAML is read with `serde_norway`, the maintained fork of the deprecated `serde_yaml`
//! (`serde_yml` carries an unsoundness advisory and `serde_yaml_ng` depends on an unmaintained
//! crate); its errors carry the line and column, which we pass on to the user.

pub use crate::input::engine::{
    unknown_engine, DatabaseFiles, EngineCatalog, EngineConfig, EngineName, Layout,
};
pub use crate::input::limits::{DistillConfig, ExecutionConfig, Threads};
use crate::input::provider_config::{ProviderConfig, ProviderKind};
use crate::util::error::InputError;
use crate::util::workspace::Workspace;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

mod compare;
mod datasets;
mod validate;
pub use validate::{SQLITE_ONLY_METRICS, SUITE_METRICS};

pub use compare::{CompareConfig, ProfileName, Spider2Version};
pub use datasets::{in_entry, DatasetEntry, BASELINE_SECTIONS, DEFAULT_DATASET_NAME};

/// The whole configuration file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(
    expecting = "a sqlgate config: a map with `dataset` (or `datasets`), `predictions`, `metrics` and the optional sections of docs/CONFIG.md"
)]
pub struct Config {
    /// `dataset:` as written; moved to `dataset` once parsed.
    #[serde(default, rename = "dataset")]
    given_dataset: Option<DatasetConfig>,
    /// `datasets:` as written; moved to `datasets` once parsed.
    #[serde(default, rename = "datasets")]
    given_datasets: Option<Vec<DatasetEntry>>,
    /// The benchmark: gold queries, schemas, databases, difficulty labels (empty in a config
    /// with `datasets:`, whose [`Config::dataset_configs`] each hold one).
    #[serde(skip)]
    pub dataset: DatasetConfig,
    /// Several named datasets, each scored as a one-dataset config (empty with `dataset:`).
    #[serde(skip)]
    pub datasets: Vec<DatasetEntry>,
    /// The name of the `datasets` entry this config was split from.
    #[serde(skip)]
    pub dataset_name: Option<String>,
    /// Which databases each item is executed on.
    #[serde(default)]
    pub suite: SuiteConfig,
    /// The systems to score (inside each entry with `datasets:`).
    #[serde(default)]
    pub predictions: Vec<PredictionSpec>,
    /// Metric names, in report order.
    #[serde(default = "default_metrics")]
    pub metrics: Vec<String>,
    /// How result tables are compared.
    #[serde(default)]
    pub compare: CompareConfig,
    /// Execution limits and parallelism.
    #[serde(default)]
    pub execution: ExecutionConfig,
    /// The metric treated as ground truth for false positives / negatives (default: the first).
    #[serde(default)]
    pub reference: Option<String>,
    /// Where the stored baseline lives.
    #[serde(default)]
    pub baseline: Option<BaselineConfig>,
    /// When a run fails the check.
    #[serde(default)]
    pub gate: GateConfig,
    /// The Markdown report.
    #[serde(default)]
    pub report: ReportConfig,
    /// When the sticky PR comment is posted (the Action input `comment` overrides it).
    #[serde(default)]
    pub comment: crate::input::policy::CommentPolicy,
    /// QAS settings.
    #[serde(default)]
    pub qas: QasConfig,
    /// R-VES settings.
    #[serde(default)]
    pub rves: RvesConfig,
    /// Soft-F1 settings: the official script's version.
    #[serde(default)]
    pub soft_f1: crate::input::soft_f1::SoftF1Config,
    /// The OpenAI-compatible chat endpoint of the LLM judge (metric `flex`).
    #[serde(default)]
    pub judge: Option<ProviderConfig>,
    /// The OpenAI-compatible embedding endpoint of the semantic metrics.
    #[serde(default)]
    pub embeddings: Option<ProviderConfig>,
    /// The gold audit's other dialects and the reviewed gold overrides.
    #[serde(default)]
    pub audit: crate::input::audit::AuditConfig,
    /// The folder of the config file; relative paths were resolved against it.
    #[serde(skip)]
    pub base_dir: PathBuf,
    /// The config file itself, for messages.
    #[serde(skip)]
    pub path: PathBuf,
    /// The folder every configured path must stay inside (set by [`Config::load`]).
    #[serde(skip)]
    pub workspace: Workspace,
    /// SHA-256 of the config text this run uses (the base commit's in a pull-request run), so
    /// shards name the config without reading the working tree's file again.
    #[serde(skip)]
    pub source_sha256: String,
}

/// Dataset section.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(
    expecting = "the `dataset` section: a map with `gold`, `databases` and optional keys such as `tables` (docs/CONFIG.md)"
)]
pub struct DatasetConfig {
    /// Which benchmark conventions apply.
    #[serde(default)]
    pub kind: DatasetKind,
    /// Gold queries: Spider `SQL<TAB>db_id` lines, or a Spider / BIRD JSON list.
    pub gold: PathBuf,
    /// Spider-style tables.json (schemas, keys); needed when a database file is absent.
    #[serde(default)]
    pub tables: Option<PathBuf>,
    /// Folder holding `<db_id>/<db_id>.sqlite` (SQLite engine only, where it is required).
    #[serde(default)]
    pub databases: Option<PathBuf>,
    /// The engine that runs the queries (default: SQLite files under `databases`).
    #[serde(default)]
    pub engine: EngineConfig,
    /// How items get a difficulty label.
    #[serde(default)]
    pub difficulty: DifficultySource,
    /// Score items whose database is absent as "skipped" instead of failing.
    #[serde(default)]
    pub skip_missing_databases: bool,
    /// Items (0-based gold indexes) whose gold query is known to fail on the benchmark's data:
    /// reported as gold errors and left unscored, where any other failing gold stops the run.
    #[serde(default)]
    pub allow_failing_golds: Vec<usize>,
    /// Spider 2.0: the folder of gold results (`<instance_id>.csv`, `<instance_id>_a.csv`, ...).
    #[serde(default)]
    pub gold_results: Option<PathBuf>,
    /// Spider 2.0: the folder of gold queries (`<instance_id>.sql`, `<instance_id>_a.sql`, ...),
    /// for instances without a result file.
    #[serde(default)]
    pub gold_sql: Option<PathBuf>,
    /// Spider 2.0: the evaluation settings (`spider2lite_eval.jsonl`).
    #[serde(default)]
    pub eval: Option<PathBuf>,
    /// Spider 2.0-DBT: the task folder (`spider2-dbt/examples`), whose
    /// `<instance_id>/<gold file name>` is each instance's starting database.
    #[serde(default)]
    pub starting_databases: Option<PathBuf>,
    /// LiveSQLBench's sound profile: the post-state comparison (`"all"`, `"touched"` or a list
    /// of tables) of every item that states none of its own (`input::livesql_post`).
    #[serde(default)]
    pub post_state: Option<serde_json::Value>,
}

impl DatasetConfig {
    /// The Spider 2.0 files and folders that are configured: (key, path, is a folder).
    pub fn spider2_paths(&self) -> Vec<(&'static str, &Path, bool)> {
        [
            ("dataset.gold_results", &self.gold_results, true),
            ("dataset.gold_sql", &self.gold_sql, true),
            ("dataset.eval", &self.eval, false),
        ]
        .into_iter()
        .filter_map(|(key, path, dir)| path.as_deref().map(|p| (key, p, dir)))
        .collect()
    }
}

/// `dataset.kind` as written: the name of a dataset kind of the registry
/// (`crate::input::kinds::KINDS`), checked against it when the config is read
/// ([`Config::parse`]); the kind itself is `crate::input::kinds::of(dataset)`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct DatasetKind(String);

impl DatasetKind {
    /// The kind named `name` (checked against the registry when a config holding it is read).
    pub fn named(name: &str) -> DatasetKind {
        DatasetKind(name.to_string())
    }

    /// The name as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for DatasetKind {
    fn default() -> Self {
        DatasetKind::named("spider")
    }
}

impl std::fmt::Display for DatasetKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where difficulty labels come from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum DifficultySource {
    /// Spider's official easy / medium / hard / extra classifier over the parsed gold query.
    #[default]
    SpiderHardness,
    /// A field of each gold item (e.g. BIRD's `difficulty`).
    Field(String),
    /// No difficulty: everything is reported under `all`.
    None,
}

impl<'de> Deserialize<'de> for DifficultySource {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        match text.as_str() {
            "spider-hardness" => Ok(Self::SpiderHardness),
            "none" => Ok(Self::None),
            _ => match text.strip_prefix("field:") {
                Some(name) if !name.is_empty() => Ok(Self::Field(name.to_string())),
                _ => Err(serde::de::Error::custom(format!(
                    "unknown difficulty `{text}`, expected `spider-hardness`, `field:NAME` or `none`"
                ))),
            },
        }
    }
}

/// A parse error of the config with the Rust type names serde says (`expected f64`,
/// `expected usize`) in the words of the config (`expected a number`, `expected a whole number
/// of 0 or more`): the user wrote YAML, not Rust.
pub fn user_types(message: &str) -> String {
    let names = [
        ("f64", "a number"),
        ("f32", "a number"),
        ("usize", "a whole number of 0 or more"),
        ("u64", "a whole number of 0 or more"),
        ("u32", "a whole number of 0 or more"),
        ("u16", "a whole number of 0 or more"),
        ("u8", "a whole number of 0 or more"),
        ("i64", "a whole number"),
        ("i32", "a whole number"),
    ];
    let mut told = message.to_string();
    for (rust, config) in names {
        told = replace_word(
            &told,
            &format!("expected {rust}"),
            &format!("expected {config}"),
        );
    }
    told
}

/// `text` with every `from` that ends at a word boundary replaced by `to`.
fn replace_word(text: &str, from: &str, to: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(from) {
        let end = at + from.len();
        let whole = !rest[end..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
        out.push_str(&rest[..at]);
        out.push_str(if whole { to } else { from });
        rest = &rest[end..];
    }
    out + rest
}

/// The first line of every report sqlgate writes (the sticky comment's marker).
pub const REPORT_MARKER: &str = "<!-- sqlgate:";
/// A key every baseline file sqlgate writes holds near its start.
pub const BASELINE_MARKER: &str = "\"sqlgate_version\"";

/// Suite section: which databases each item is executed on.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "the `suite` section: a map with `kind` and optional `path`")]
pub struct SuiteConfig {
    /// The suite kind.
    #[serde(default)]
    pub kind: SuiteKind,
    /// The suite folder (`directory`, `distilled`): `<path>/<db_id>/*.sqlite`.
    #[serde(default)]
    pub path: Option<PathBuf>,
    /// Distillation settings (`distilled`).
    #[serde(default)]
    pub distill: DistillConfig,
}

/// Suite kinds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[serde(expecting = "`suite.kind`: one of the suite kinds in docs/CONFIG.md")]
pub enum SuiteKind {
    /// Only the item's own database.
    #[default]
    Original,
    /// An existing folder of databases per db_id (e.g. the official released test suite).
    Directory,
    /// A suite distilled by sqlgate (`sqlgate distill`) and cached in `path`.
    Distilled,
}

impl SuiteKind {
    /// The name as written in the config.
    pub fn as_str(self) -> &'static str {
        match self {
            SuiteKind::Original => "original",
            SuiteKind::Directory => "directory",
            SuiteKind::Distilled => "distilled",
        }
    }
}

/// One entry of `predictions:`; its path may be a glob naming several systems.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(
    expecting = "a `predictions` entry: a map with `path` and optional `name`, `format`, `allow_missing`, `extract`, e.g. `{ name: my-model, path: predictions/dev.sql }`"
)]
pub struct PredictionSpec {
    /// System name; defaults to the file stem. Not allowed when the glob matches several files.
    #[serde(default)]
    pub name: Option<String>,
    /// File path or glob (resolved against the config's folder).
    pub path: String,
    /// File format.
    #[serde(default)]
    pub format: PredictionFormat,
    /// Tolerate fewer predictions than gold items (the absent ones are scored wrong).
    #[serde(default)]
    pub allow_missing: bool,
    /// How the SQL is pulled out of raw model output (`jsonl` and `bird-json` only).
    #[serde(default)]
    pub extract: crate::input::extract::ExtractMode,
}

/// Prediction file formats.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[serde(
    expecting = "a prediction `format`: `lines`, `tsv`, `jsonl`, `bird-json`, `spider2-dbt` or `livesql`"
)]
pub enum PredictionFormat {
    /// One SQL per line aligned with gold; a tab and anything after it are ignored.
    #[default]
    Lines,
    /// `index<TAB>SQL` per line (0-based gold index).
    Tsv,
    /// `{"id": index, "sql": "..."}` per line.
    Jsonl,
    /// BIRD's JSON map `{"0": "SQL\t----- bird -----\tdb_id", ...}`.
    BirdJson,
    /// Spider 2.0-DBT's `results_metadata.jsonl`, naming each instance's `.duckdb` answer file
    /// (`dataset.kind: spider2-dbt`).
    Spider2Dbt,
    /// LiveSQLBench's `{"instance_id", "pred_sqls"}` (or `"response"`) lines, each item's
    /// statements kept as a list (`dataset.kind: livesql` and `bird-critic`).
    Livesql,
}

impl PredictionFormat {
    /// The format's name as the config spells it, for messages.
    pub fn as_str(self) -> &'static str {
        match self {
            PredictionFormat::Lines => "lines",
            PredictionFormat::Tsv => "tsv",
            PredictionFormat::Jsonl => "jsonl",
            PredictionFormat::BirdJson => "bird-json",
            PredictionFormat::Spider2Dbt => "spider2-dbt",
            PredictionFormat::Livesql => "livesql",
        }
    }
}

/// Baseline section.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(
    expecting = "the `baseline` section: a map with `path` and optional `required`, e.g. `{ path: .sqlgate/baseline.json }`"
)]
pub struct BaselineConfig {
    /// The baseline JSON file (written by `sqlgate baseline update`).
    pub path: PathBuf,
    /// Whether the file must exist (default). `false` declares a first run: without the file the
    /// report says that nothing was compared, and the gate passes; with `true` a missing file is
    /// an input error, so a typo in `path` can never pass the gate unmeasured.
    #[serde(default = "default_true")]
    pub required: bool,
    /// The anchored baseline of the drift guard: one pinned at a reviewed point (a release),
    /// never refreshed after merges, against which `gate.max_drift_points` gates the cumulative
    /// drop that a rolling baseline lets through one small step at a time.
    #[serde(default)]
    pub anchor: Option<PathBuf>,
}

fn default_true() -> bool {
    true
}

/// Gate section.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "the `gate` section: a map such as `{ metric: ex, max_drop_points: 0.0 }`")]
pub struct GateConfig {
    /// The gated metric (default: the reference metric).
    #[serde(default)]
    pub metric: Option<String>,
    /// Largest tolerated overall drop, in accuracy points.
    #[serde(default)]
    pub max_drop_points: f64,
    /// Largest tolerated drop per difficulty, in points (only the listed difficulties are gated).
    #[serde(default)]
    pub per_difficulty: std::collections::BTreeMap<String, f64>,
    /// When set, a drop fails the gate only if it is also significant.
    #[serde(default)]
    pub significance: Option<SignificanceConfig>,
    /// Item indexes that may never regress.
    #[serde(default)]
    pub must_pass: Vec<usize>,
    /// Baseline system every candidate is compared with (default: the one with the same name).
    #[serde(default)]
    pub against: Option<String>,
    /// Most net regressed items (regressed minus fixed) a cell tolerates whatever the test says.
    /// Unset: 0 for a cell whose allowed drop is 0 (so `max_drop_points: 0` means no regressed
    /// item without a fixed one), no limit for the others.
    #[serde(default)]
    pub max_regressed_items: Option<usize>,
    /// Known regressions accepted by a reviewed line of the base config: these items do not
    /// count against any cell while they stay worse than the baseline.
    #[serde(default)]
    pub accept: Vec<AcceptedRegression>,
    /// The drift guard: the largest cumulative drop, in points, against `baseline.anchor`.
    #[serde(default)]
    pub max_drift_points: Option<f64>,
    /// The oldest baseline tolerated, with what an older one does (warn or fail).
    #[serde(default)]
    pub max_baseline_age_days: Option<crate::input::policy::BaselineAge>,
    /// A gain above this many points passes but is flagged for review.
    #[serde(default)]
    pub review_gain_points: Option<f64>,
    /// Largest tolerated drop per SQL feature of the gold, in points (`sql::features` names).
    #[serde(default)]
    pub per_feature: std::collections::BTreeMap<String, f64>,
    /// With `datasets`: largest tolerated drop of the macro-average over the datasets, in
    /// points (default: `max_drop_points`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_macro_drop_points: Option<f64>,
}

/// A known regression accepted in the base config (`gate.accept`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
#[serde(
    expecting = "a `gate.accept` entry: a map with `items` and `reason`, e.g. `{ items: [812], reason: \"gold is ambiguous, see #41\" }`"
)]
pub struct AcceptedRegression {
    /// The 0-based gold item indexes.
    pub items: Vec<usize>,
    /// Why, for the reviewer and the report.
    pub reason: String,
}

/// QAS section (seed 003).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "the `qas` section: a map (docs/CONFIG.md)")]
pub struct QasConfig {
    /// w in `QAS = w * S_T + (1 - w) * S_C`: the weight of result-table similarity.
    #[serde(default = "default_qas_weight")]
    pub weight: f64,
}

impl Default for QasConfig {
    fn default() -> Self {
        QasConfig {
            weight: default_qas_weight(),
        }
    }
}

fn default_qas_weight() -> f64 {
    0.5
}

/// R-VES section (BIRD's reward-based valid efficiency score).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "the `rves` section: a map (docs/CONFIG.md)")]
pub struct RvesConfig {
    /// Timed runs of gold and prediction per item: BIRD's official script uses 100; the default,
    /// 10, is ten times cheaper and its noise is reported per item.
    #[serde(default = "default_rves_repetitions")]
    pub repetitions: usize,
    /// The order of the timed runs and the estimator that reads them.
    #[serde(default)]
    pub order: RvesOrder,
}

impl Default for RvesConfig {
    fn default() -> Self {
        RvesConfig {
            repetitions: default_rves_repetitions(),
            order: RvesOrder::default(),
        }
    }
}

/// How R-VES times gold and prediction (docs/METRICS.md explains both).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RvesOrder {
    /// Gold, prediction, prediction, gold per repetition, geometric mean of the ratios, and a
    /// ratio within its noise of 1 counted as equal speed: gold against itself scores 100.
    #[default]
    Abba,
    /// `evaluation_ves.py`'s order (prediction, then gold) and its mean of ratios, with the
    /// bias that order brings.
    Official,
}

/// BIRD's official number of timed runs per item (`iterate_num` of `evaluation_ves.py`).
pub const OFFICIAL_RVES_REPETITIONS: usize = 100;

fn default_rves_repetitions() -> usize {
    10
}

/// Significance test settings.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
#[serde(
    expecting = "`gate.significance`: a map with `test` and `alpha`, e.g. `{ test: mcnemar-exact, alpha: 0.05 }`"
)]
pub struct SignificanceConfig {
    /// The paired test.
    #[serde(default)]
    pub test: SignificanceTest,
    /// Family-wise error rate (Holm-corrected across the gated cells).
    #[serde(default = "default_alpha")]
    pub alpha: f64,
}

/// Paired tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
#[serde(expecting = "`gate.significance.test`: one of the tests in docs/CONFIG.md")]
pub enum SignificanceTest {
    /// Exact McNemar on discordant items (binary metrics).
    #[default]
    McnemarExact,
    /// Paired bootstrap of the mean difference (any metric).
    Bootstrap,
}

/// Report section.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(
    expecting = "the `report` section: a map with optional `output`, `template` (docs/CONFIG.md)"
)]
pub struct ReportConfig {
    /// A minijinja template replacing the built-in one.
    #[serde(default)]
    pub template: Option<PathBuf>,
    /// Where the full Markdown report is written.
    #[serde(default)]
    pub output: Option<PathBuf>,
}

fn default_alpha() -> f64 {
    0.05
}

fn default_metrics() -> Vec<String> {
    vec!["ex".to_string()]
}

impl Config {
    /// The reference metric: `reference`, or the first metric.
    pub fn reference_metric(&self) -> &str {
        self.reference.as_deref().unwrap_or(&self.metrics[0])
    }

    /// The gated metric: `gate.metric`, or the reference metric.
    pub fn gate_metric(&self) -> &str {
        self.gate
            .metric
            .as_deref()
            .unwrap_or_else(|| self.reference_metric())
    }

    /// Settles the workspace and checks every configured path against it: what the working tree
    /// holds, which [`Config::parse`] never reads.
    pub fn inside_workspace(mut self) -> Result<Config, InputError> {
        let fail = |message: String| InputError::Config {
            path: self.path.clone(),
            message,
        };
        self.workspace = Workspace::detect(&self.base_dir).map_err(fail)?;
        for one in self.dataset_configs() {
            let named = |message: String| match &one.dataset_name {
                Some(name) => format!("`datasets` entry `{name}`: {message}"),
                None => message,
            };
            one.check_workspace().map_err(named).map_err(fail)?;
        }
        Ok(self)
    }

    /// The Markdown report's path: `report.output`, else `sqlgate-report.md` beside the config.
    pub fn report_path(&self) -> PathBuf {
        self.report
            .output
            .clone()
            .unwrap_or_else(|| self.base_dir.join("sqlgate-report.md"))
    }

    /// Every configured path inside the workspace: inputs are regular files (or folders),
    /// outputs stay out of `.git` and never replace a file sqlgate did not write.
    fn check_workspace(&self) -> Result<(), String> {
        let ws = &self.workspace;
        ws.input_file("dataset.gold", &self.dataset.gold)?;
        if let Some(tables) = &self.dataset.tables {
            ws.input_file("dataset.tables", tables)?;
        }
        if let Some(databases) = &self.dataset.databases {
            ws.input_dir("dataset.databases", databases)?;
        }
        if let Some(starting) = &self.dataset.starting_databases {
            ws.input_dir("dataset.starting_databases", starting)?;
        }
        for (key, path, dir) in self.dataset.spider2_paths() {
            if dir {
                ws.input_dir(key, path)?;
            } else {
                ws.input_file(key, path)?;
            }
        }
        for (index, spec) in self.predictions.iter().enumerate() {
            let key = format!("predictions[{index}].path");
            ws.check_pattern(&key, &spec.path)?;
            let matches = glob::glob(&spec.path).map_err(|e| format!("`{key}`: {e}"))?;
            for path in matches.filter_map(Result::ok) {
                ws.input_file(&key, &path)?;
            }
        }
        if let Some(template) = &self.report.template {
            ws.input_file("report.template", template)?;
        }
        self.audit.check(ws)?;
        ws.output_file("report.output", &self.report_path(), &[REPORT_MARKER])?;
        if let Some(baseline) = &self.baseline {
            ws.output_file("baseline.path", &baseline.path, &[BASELINE_MARKER])?;
            if let Some(anchor) = &baseline.anchor {
                ws.output_file("baseline.anchor", anchor, &[BASELINE_MARKER])?;
            }
        }
        if let Some(path) = &self.suite.path {
            match self.suite.kind {
                SuiteKind::Directory => ws.input_dir("suite.path", path).map(drop)?,
                _ => ws.output_dir("suite.path", path)?,
            }
        }
        for (kind, provider) in [
            (ProviderKind::Judge, &self.judge),
            (ProviderKind::Embeddings, &self.embeddings),
        ] {
            if let Some(dir) = provider.as_ref().and_then(|p| p.cache_dir.as_ref()) {
                ws.output_dir(&format!("{}.cache_dir", kind.key()), dir)?;
            }
        }
        Ok(())
    }

    /// Parses config text that came from `path` (used for messages and relative paths), checking
    /// the engines it names against `engines`; the dataset kinds are checked above this module
    /// ([`Config::parse`], in `input::read_config`), whose registry reads config sections.
    pub(crate) fn parse_text(
        text: &str,
        path: &Path,
        engines: &dyn EngineCatalog,
    ) -> Result<Config, InputError> {
        let parsed =
            crate::input::engine::parsing_against(engines, || serde_norway::from_str(text));
        let mut config: Config = parsed.map_err(|e: serde_norway::Error| InputError::Config {
            path: path.to_path_buf(),
            message: user_types(&e.to_string()),
        })?;
        config.path = path.to_path_buf();
        config
            .settle_datasets()
            .map_err(|message| InputError::Config {
                path: path.to_path_buf(),
                message,
            })?;
        config.source_sha256 = crate::util::digest::content_hash([text.as_bytes()]);
        config.base_dir = folder_of(path).to_path_buf();
        config.resolve_paths();
        match config.is_multi() {
            true => config.validate_entries(engines)?,
            false => config.validate(engines)?,
        }
        Ok(config)
    }

    fn resolve_paths(&mut self) {
        let base = self.base_dir.clone();
        if !self.is_multi() {
            datasets::resolve_dataset(&base, &mut self.dataset);
        }
        self.resolve_entries();
        for spec in &mut self.predictions {
            spec.path = crate::util::workspace::resolve(&base, &spec.path)
                .to_string_lossy()
                .into_owned();
        }
        if let Some(path) = &mut self.suite.path {
            *path = crate::util::workspace::resolve(&base, &*path);
        }
        self.audit.resolve(&base);
        if let Some(baseline) = &mut self.baseline {
            baseline.path = crate::util::workspace::resolve(&base, &baseline.path);
            baseline.anchor = baseline
                .anchor
                .as_ref()
                .map(|anchor| crate::util::workspace::resolve(&base, anchor));
        }
        for path in [&mut self.report.template, &mut self.report.output]
            .into_iter()
            .flatten()
        {
            *path = crate::util::workspace::resolve(&base, &*path);
        }
        for (kind, provider) in [
            (ProviderKind::Judge, &mut self.judge),
            (ProviderKind::Embeddings, &mut self.embeddings),
        ] {
            if let Some(provider) = provider {
                let default = Path::new(".sqlgate/cache").join(kind.key());
                let dir = provider.cache_dir.take().unwrap_or(default);
                provider.cache_dir = Some(crate::util::workspace::resolve(&base, dir));
            }
        }
    }

    /// Whether `gate.metric: name` names a configured metric, or a sub-score of one (which
    /// sub-scores a metric gives is the metric registry's to check, when metrics are built).
    fn gates_on(&self, name: &str) -> bool {
        match name.split_once('.') {
            Some((metric, _sub)) => self.metrics.iter().any(|m| m == metric),
            None => self.metrics.iter().any(|m| m == name),
        }
    }
}

/// The folder of the config file at `path`, which its relative paths are resolved against
/// (`.` for a bare file name).
pub fn folder_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The first 12 characters of a commit, for messages.
pub fn short_commit(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}
