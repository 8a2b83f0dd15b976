//! The baseline store: every system's per-item results with the metadata needed to refuse a
//! comparison made with other data or settings.

use crate::analysis::records::{records, ItemRecord};
use crate::input::config::{Config, GateConfig};
use crate::metrics::{check_value, Outcome, PARTIAL_CREDIT_KEYS};
use crate::score::evaluation::Evaluation;
use crate::util::error::InputError;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

/// Settings that must agree for two runs to be comparable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// Comparison profile name.
    pub profile: String,
    /// Numeric tolerance.
    pub float_tolerance: f64,
    /// DISTINCT kept (spider-ts).
    pub keep_distinct: bool,
    /// Suite kind.
    pub suite: String,
    /// A distilled suite's knobs (`suite.distill`: seed, random databases, rows), which decide
    /// what the suite can tell apart; absent for other suites and in baselines written before
    /// they were stored (those are judged by the kind alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite_distill: Option<serde_json::Value>,
    /// Difficulty source.
    pub difficulty: String,
    /// Gold values plugged into predictions (the official `--plug_value`).
    #[serde(default)]
    pub plug_value: bool,
    /// The judge model and endpoint (`flex`), when configured.
    #[serde(default)]
    pub judge: Option<String>,
    /// The embedding model and endpoint, when configured.
    #[serde(default)]
    pub embeddings: Option<String>,
    /// QAS's weight w, when `qas` is scored.
    #[serde(default)]
    pub qas_weight: Option<f64>,
    /// R-VES timed runs per item, when `rves` is scored.
    #[serde(default)]
    pub rves_repetitions: Option<usize>,
    /// R-VES timing order and estimator, when `rves` is scored; absent (null) in baselines
    /// written before it was stored, whose R-VES used the official order.
    #[serde(default)]
    pub rves_order: Option<String>,
    /// The version of the official Soft-F1 script, when `soft_f1` is scored; absent (null) in
    /// baselines written before it was stored, whose Soft-F1 is that of version `2024-10`.
    #[serde(default)]
    pub soft_f1_version: Option<String>,
    /// `dataset.post_state`, when `livesql_sound` is scored: the post-state comparison every
    /// item without its own gets (a repair may not drop or change it).
    #[serde(default)]
    pub post_state: Option<serde_json::Value>,
    /// The comparison contract in words ([`crate::engine::profile::Profile::contract`]); empty
    /// in baselines written before it was stored (those are judged by the other settings).
    #[serde(default)]
    pub contract: String,
}

impl Settings {
    /// The comparability settings of a config.
    pub fn of(config: &Config) -> Settings {
        Settings {
            profile: format!("{:?}", config.compare.profile),
            float_tolerance: config.compare.float_tolerance,
            keep_distinct: config.compare.keep_distinct,
            suite: format!("{:?}", config.suite.kind),
            suite_distill: distill_settings(config),
            difficulty: format!("{:?}", config.dataset.difficulty),
            plug_value: config.compare.plug_value,
            judge: config.judge.as_ref().map(provider_identity),
            embeddings: config.embeddings.as_ref().map(provider_identity),
            qas_weight: None,
            rves_repetitions: None,
            rves_order: None,
            soft_f1_version: None,
            post_state: None,
            contract: crate::engine::profile::Profile::new(&config.compare).contract(),
        }
        .with_metric_settings(config)
    }

    /// These settings with those of each metric `config` scores ([`crate::metrics::Metric::settings`]).
    fn with_metric_settings(self, config: &Config) -> Settings {
        let metric_settings: Vec<(&str, serde_json::Value)> = config
            .metrics
            .iter()
            .filter_map(|name| crate::metrics::build(name).ok())
            .flat_map(|metric| metric.settings(config))
            .collect();
        if metric_settings.is_empty() {
            return self;
        }
        let mut json = serde_json::to_value(&self).expect("settings serialise to JSON");
        for (field, value) in metric_settings {
            json[field] = value;
        }
        serde_json::from_value(json).expect("every metric setting is a field of `Settings`")
    }

    /// The settings that differ from `now`, each as `name: baseline vs now`.
    pub fn differences(&self, now: &Settings) -> Vec<String> {
        let (Ok(serde_json::Value::Object(before)), Ok(serde_json::Value::Object(after))) =
            (serde_json::to_value(self), serde_json::to_value(now))
        else {
            return vec![format!("settings {self:?} (baseline) vs {now:?} (now)")];
        };
        before
            .iter()
            .filter(|(name, value)| after.get(*name) != Some(*value))
            // The contract text is derived from the other settings; an older baseline without
            // it is judged by those.
            .filter(|(name, value)| !(name.as_str() == "contract" && value.as_str() == Some("")))
            // Soft-F1 was version 2024-10 before the version was stored.
            .filter(|(name, value)| {
                !(name.as_str() == "soft_f1_version"
                    && value.is_null()
                    && after.get(*name).and_then(|v| v.as_str()) == Some(SOFT_F1_BEFORE_STORED))
            })
            .map(|(name, value)| {
                let now = after.get(name).cloned().unwrap_or_default();
                format!(
                    "{}: {} (baseline) vs {} (now)",
                    config_key(name),
                    shown_setting(value),
                    shown_setting(&now)
                )
            })
            .collect()
    }
}

/// The config key a stored setting comes from, as the user wrote it, in backticks (the
/// comparison contract, which no one key sets, in words).
fn config_key(setting: &str) -> String {
    let key = match setting {
        "profile" | "float_tolerance" | "keep_distinct" | "plug_value" => {
            format!("compare.{setting}")
        }
        "suite" => "suite.kind".into(),
        "suite_distill" => "suite.distill".into(),
        "difficulty" => "dataset.difficulty".into(),
        "qas_weight" => "qas.weight".into(),
        "rves_repetitions" => "rves.repetitions".into(),
        "rves_order" => "rves.order".into(),
        "soft_f1_version" => "soft_f1.version".into(),
        "contract" => return "the comparison contract".into(),
        other => other.to_string(),
    };
    format!("`{key}`")
}

/// A stored setting as the config writes it: an option the baseline stores under its internal
/// name (`SpiderHardness`, `SpiderTs`, `Field("difficulty")`) in the config's spelling
/// (`spider-hardness`, `spider-ts`, `field:difficulty`), other text as it is, the rest as JSON.
fn shown_setting(value: &serde_json::Value) -> String {
    let Some(text) = value.as_str() else {
        return value.to_string();
    };
    if let Some(field) = (text.strip_prefix("Field(\"")).and_then(|rest| rest.strip_suffix("\")")) {
        return format!(
            "field:{}",
            field.replace("\\\"", "\"").replace("\\\\", "\\")
        );
    }
    let internal = text.starts_with(|c: char| c.is_ascii_uppercase())
        && text.chars().all(|c| c.is_ascii_alphanumeric());
    if !internal {
        return text.to_string();
    }
    let mut spelled = String::new();
    let mut previous: Option<char> = None;
    for c in text.chars() {
        if c.is_ascii_uppercase()
            && previous.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit())
        {
            spelled.push('-');
        }
        spelled.push(c.to_ascii_lowercase());
        previous = Some(c);
    }
    spelled
}

/// The knobs of a distilled suite, as the baseline records them.
fn distill_settings(config: &Config) -> Option<serde_json::Value> {
    let distilled = config.suite.kind == crate::input::config::SuiteKind::Distilled;
    let distill = &config.suite.distill;
    distilled.then(|| {
        serde_json::json!({
            "seed": distill.seed,
            "max_random_dbs": distill.max_random_dbs,
            "rows": distill.rows,
        })
    })
}

/// The Soft-F1 version of baselines written before the version was stored.
const SOFT_F1_BEFORE_STORED: &str = "2024-10";

/// Which model answers, and where: a baseline judged by another model is not comparable.
fn provider_identity(provider: &crate::input::provider_config::ProviderConfig) -> String {
    format!("{} at {}", provider.model, provider.base_url)
}

/// A stored baseline.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Baseline {
    /// Version that wrote it.
    pub sqlgate_version: String,
    /// Commit it was made from, when known.
    pub commit: Option<String>,
    /// When it was written (`sqlgate baseline update`), in seconds since 1970 (UTC); absent in
    /// baselines of older versions, whose age is their commit's date when git knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_unix: Option<i64>,
    /// Dataset fingerprint.
    pub dataset_sha256: String,
    /// Each file's digest behind the fingerprint, so a run on other data names the file;
    /// absent in baselines of older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset_digests: Option<crate::input::dataset::DatasetDigests>,
    /// The SHA-256 of every file of a `suite.kind: directory` suite, by its path in the suite
    /// folder: the suite is part of the benchmark, so a run on another one names the files that
    /// differ; absent for other suites and in baselines of older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite_digests: Option<BTreeMap<String, String>>,
    /// SHA-256 of `systems` as compact JSON, checked on load so a
    /// hand-edited or truncated record is refused; absent in baselines of older versions
    /// (accepted, with a note asking to regenerate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub records_sha256: Option<String>,
    /// Metrics it holds.
    pub metrics: Vec<String>,
    /// Comparability settings.
    pub settings: Settings,
    /// The `gate` section of the config it was made with (its metric resolved): what judges a
    /// pull request that repairs a base config that does not load, so that pull request's own
    /// config cannot loosen the gate. Absent in baselines of older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateConfig>,
    /// Per system, its per-item records in gold order.
    pub systems: BTreeMap<String, Vec<ItemRecord>>,
    /// Digests of the judge and embedding cache entries this baseline's run used or wrote
    /// ([`crate::providers::entry_digest`]): in a pull-request run only these entries are
    /// taken from the cache, any other answer is asked for again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub provider_cache: Vec<String>,
    /// Digests of the distilled suite's gold-cache entries this baseline's run used or wrote
    /// ([`crate::suites::gold_cache::entry_digest`]): a later run (a pull request's, or the
    /// next `baseline update`) takes only these entries from the cache and executes every
    /// other gold again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gold_cache: Vec<String>,
    /// Digests of the distilled suite's manifests this baseline's run used: in a pull-request
    /// run a suite folder outside git (restored by `actions/cache`) is reused only when its
    /// manifest is one of these.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suite_manifests: Vec<String>,
    /// On a server engine, the digest of every table the role could read when the baseline was
    /// made ([`crate::engine::server::data_digest`]): a later run, a pull request's above all,
    /// is judged only when the server's data still have these digests ([`crate::score::data`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_digests: Option<crate::engine::server::data_digest::DataDigests>,
    /// Which reviewed gold overrides file and directory suite its run read, named as the config
    /// does: what a pull request that repairs a base config that does not load is scored with,
    /// so its own config cannot point a dataset at another dataset's exclusions or at a weaker
    /// suite. Absent in baselines of older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<RecordedInputs>,
    /// Each gold's measured time in milliseconds, by item index: what gives a slow gold's item
    /// its time budget in later runs ([`crate::score::budget`]). Empty in baselines of older
    /// versions and of merged shards.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub gold_ms: crate::score::budget::GoldTimes,
}

/// The benchmark inputs a baseline's run read beside the dataset files, as paths relative to
/// the config's folder (`/`-separated); `None` where the config named none.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedInputs {
    /// `audit.overrides` of the dataset.
    pub overrides: Option<String>,
    /// `suite.path` of a `suite.kind: directory` suite.
    pub suite: Option<String>,
    /// The `predictions` entries of the dataset (which file is which system); absent in
    /// baselines written before they were recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predictions: Option<Vec<crate::input::config::PredictionSpec>>,
}

impl RecordedInputs {
    /// What `config` (a one-dataset config) reads.
    pub fn of(config: &Config) -> RecordedInputs {
        let relative = |path: &Path| {
            let inside = path.strip_prefix(&config.base_dir).unwrap_or(path);
            (inside.components())
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/")
        };
        let directory = config.suite.kind == crate::input::config::SuiteKind::Directory;
        let predictions = (config.predictions.iter())
            .map(|spec| crate::input::config::PredictionSpec {
                path: relative(Path::new(&spec.path)),
                ..spec.clone()
            })
            .collect();
        RecordedInputs {
            overrides: config.audit.overrides.as_deref().map(relative),
            suite: (config.suite.path.as_deref())
                .filter(|_| directory)
                .map(relative),
            predictions: Some(predictions),
        }
    }
}

impl Baseline {
    /// A baseline holding every system of `evaluation`, made at `commit` (see
    /// `trust::current_commit`).
    pub fn from_evaluation(
        config: &Config,
        evaluation: &Evaluation,
        commit: String,
    ) -> Result<Baseline, InputError> {
        let systems = records(evaluation).into_iter().collect();
        Ok(Baseline {
            sqlgate_version: env!("CARGO_PKG_VERSION").to_string(),
            commit: Some(commit),
            created_unix: now_unix(),
            dataset_sha256: evaluation.dataset.sha256.clone(),
            dataset_digests: Some(evaluation.dataset.digests.clone()),
            suite_digests: evaluation.suite_digests.clone(),
            records_sha256: Some(records_digest(&systems)),
            metrics: evaluation.metrics.clone(),
            settings: Settings::of(config),
            gate: Some(GateConfig {
                metric: Some(config.gate_metric().to_string()),
                ..config.gate.clone()
            }),
            systems,
            provider_cache: evaluation.provider_cache.clone(),
            gold_cache: evaluation.gold_cache.clone(),
            suite_manifests: evaluation.suite_manifests.clone(),
            data_digests: evaluation.data_digests.clone(),
            inputs: Some(RecordedInputs::of(config)),
            gold_ms: evaluation.gold_ms.clone(),
        })
    }

    /// Reads a baseline file.
    pub fn load(path: &Path) -> Result<Baseline, InputError> {
        Self::parse(
            path,
            &crate::util::error::read_bounded(path, crate::util::error::MAX_INPUT_BYTES)?,
        )
    }

    /// Parses baseline JSON that came from `path` (the working tree or a trusted commit), then
    /// checks its records digest and every record: known outcomes, each metric's value finite and
    /// in its range (sub-scores too), no value missing where the outcome says it was scored.
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<Baseline, InputError> {
        let baseline: Baseline = serde_json::from_slice(bytes).map_err(|e| {
            InputError::malformed(path, format!("line {}", e.line()), e.to_string())
        })?;
        if let Some(stored) = &baseline.records_sha256 {
            let raw: serde_json::Value = serde_json::from_slice(bytes)
                .map_err(|e| InputError::malformed(path, "baseline", e.to_string()))?;
            let actual = records_digest(&raw["systems"]);
            if *stored != actual {
                return Err(InputError::malformed(
                    path,
                    "records_sha256",
                    format!(
                        "the records do not match their digest ({} stored, {} computed): the \
                         file was edited or truncated by hand; regenerate it with \
                         `sqlgate baseline update`",
                        short(stored),
                        short(&actual)
                    ),
                ));
            }
        }
        for metric in &baseline.metrics {
            crate::metrics::value_range(metric).ok_or_else(|| {
                InputError::malformed(path, "metrics", format!("unknown metric `{metric}`"))
            })?;
        }
        for (system, items) in &baseline.systems {
            for (position, record) in items.iter().enumerate() {
                baseline.check_record(record).map_err(|message| {
                    InputError::malformed(
                        path,
                        format!(
                            "system `{system}`, record {position} (item {})",
                            record.index
                        ),
                        message,
                    )
                })?;
            }
        }
        Ok(baseline)
    }

    /// One record against the baseline's metrics: one known outcome per metric, one value per
    /// metric (`null` only when not scored), sub-scores only of those metrics, all in range.
    fn check_record(&self, record: &ItemRecord) -> Result<(), String> {
        for metric in &self.metrics {
            let name = record
                .outcome
                .get(metric)
                .ok_or_else(|| format!("no outcome for `{metric}`"))?;
            let outcome = Outcome::parse(name)
                .ok_or_else(|| format!("unknown outcome `{name}` for `{metric}`"))?;
            match record.metrics.get(metric) {
                None => return Err(format!("no value for `{metric}`")),
                Some(None) if outcome.is_scored() => {
                    return Err(format!(
                        "`{metric}` is `null` but its outcome `{name}` says it was scored"
                    ))
                }
                _ => {}
            }
        }
        if let Some(extra) = record.outcome.keys().find(|m| !self.metrics.contains(m)) {
            return Err(format!(
                "an outcome for `{extra}`, which is not in `metrics`"
            ));
        }
        for (key, value) in &record.metrics {
            let metric = match key.split_once('.') {
                Some((metric, sub)) if PARTIAL_CREDIT_KEYS.contains(&sub) => metric,
                Some(_) => return Err(format!("unknown sub-score `{key}`")),
                None => key.as_str(),
            };
            if !self.metrics.iter().any(|m| m == metric) {
                return Err(format!("a value for `{key}`, which is not in `metrics`"));
            }
            match value {
                Some(value) => check_value(metric, *value).map_err(|e| format!("{e} ({key})"))?,
                None if metric != key => return Err(format!("sub-score `{key}` is `null`")),
                None => {}
            }
        }
        Ok(())
    }

    /// Every system holds exactly one record per item of a dataset of `items` items, in gold
    /// order; the error names the system and what is missing, repeated or out of range.
    fn check_coverage(&self, path: &Path, items: usize) -> Result<(), InputError> {
        for (system, records) in &self.systems {
            let fail = |message: String| {
                InputError::malformed(
                    path,
                    format!("system `{system}`"),
                    format!("{message}; regenerate it with `sqlgate baseline update`"),
                )
            };
            let mut seen = vec![false; items];
            for record in records {
                let slot = seen.get_mut(record.index).ok_or_else(|| {
                    fail(format!(
                        "index {} is not an item of the dataset ({items} items)",
                        record.index
                    ))
                })?;
                if std::mem::replace(slot, true) {
                    return Err(fail(format!("item {} has two records", record.index)));
                }
            }
            if let Some(first) = seen.iter().position(|s| !s) {
                return Err(fail(format!(
                    "{} records for {items} items: {} missing (the first is item {first})",
                    records.len(),
                    items - records.len()
                )));
            }
            if records.iter().enumerate().any(|(i, r)| r.index != i) {
                return Err(fail("records are not in gold order".into()));
            }
        }
        Ok(())
    }

    /// Writes the baseline as pretty JSON, atomically.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)? + "\n";
        crate::util::fs::write_atomically(path, text.as_bytes())
    }

    /// Refuses a baseline made with other data or settings, saying what differs.
    pub fn check_compatible(
        &self,
        path: &Path,
        config: &Config,
        evaluation: &Evaluation,
    ) -> Result<(), InputError> {
        let mut differences = Vec::new();
        if self.dataset_sha256 != evaluation.dataset.sha256 {
            let files = match &self.dataset_digests {
                Some(stored) => stored.differences(&evaluation.dataset.digests),
                None => Vec::new(),
            };
            let named = match files.is_empty() {
                true => String::new(),
                false => format!("; the files that differ: {}", files.join(", ")),
            };
            differences.push(format!(
                "dataset sha256 {} (baseline) vs {} (now){named}",
                short(&self.dataset_sha256),
                short(&evaluation.dataset.sha256)
            ));
        }
        if let Some(stored) = &self.suite_digests {
            let now = evaluation.suite_digests.clone().unwrap_or_default();
            let files = crate::score::suite_digest::differences(stored, &now);
            if !files.is_empty() {
                differences.push(format!(
                    "the directory suite's files differ: {}",
                    files.join(", ")
                ));
            }
        }
        let now = Settings::of(config);
        differences.extend(self.settings.differences(&now));
        for metric in [config.reference_metric(), config.gate_metric()] {
            let base_metric = metric.split('.').next().unwrap_or(metric);
            if !self.metrics.iter().any(|m| m == base_metric) {
                differences.push(format!(
                    "metric `{metric}` is not in the baseline ({})",
                    self.metrics.join(", ")
                ));
            }
        }
        if differences.is_empty() {
            return self.check_coverage(path, evaluation.dataset.items.len());
        }
        Err(InputError::malformed(
            path,
            "baseline",
            format!(
                "made with other data or settings: {}; run `sqlgate baseline update`",
                differences.join("; ")
            ),
        ))
    }
}

/// The records digest: hex SHA-256 of the `systems` map as compact JSON, keys in file order. On
/// save the records are hashed; on load the file's own `systems` as written (`preserve_order`),
/// so even `1` for `1.0` counts as an edit.
fn records_digest(value: &impl Serialize) -> String {
    let json = serde_json::to_vec(value).expect("JSON values serialize");
    crate::util::digest::hex(&Sha256::digest(json))
}

fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}

/// Now, in seconds since 1970 (UTC); `None` on a clock set before 1970.
pub fn now_unix() -> Option<i64> {
    let elapsed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    i64::try_from(elapsed.as_secs()).ok()
}

#[cfg(test)]
mod settings_tests {
    use super::*;
    use crate::input::config::{DifficultySource, ProfileName};

    /// The settings of a config scoring `metrics`, with `sections` appended.
    fn settings_with(metrics: &str, sections: &str) -> Settings {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("db")).unwrap();
        let yaml = format!(
            "dataset: {{ gold: gold.sql, databases: db }}\nmetrics: [{metrics}]\n\
             predictions:\n  - {{ name: a, path: a.sql }}\n{sections}"
        );
        Settings::of(
            &Config::parse(
                &yaml,
                &dir.path().join("sqlgate.yml"),
                &crate::engine::registry::Engines,
            )
            .unwrap(),
        )
    }

    fn settings(rves: &str) -> Settings {
        settings_with("ex, rves", rves)
    }

    #[test]
    fn each_metric_with_knobs_sets_its_own_settings_fields() {
        let of = |metrics: &str| settings_with(metrics, "qas: { weight: 0.25 }\n");
        let all = of("ex, qas, rves, soft_f1");
        assert_eq!(all.qas_weight, Some(0.25));
        assert_eq!(
            all.rves_repetitions,
            Some(crate::input::config::RvesConfig::default().repetitions)
        );
        assert_eq!(all.rves_order.as_deref(), Some("Abba"));
        assert_eq!(all.soft_f1_version.as_deref(), Some("2025-06"));
        let none = of("ex, soft_f1_aligned, esm");
        let knobs = (none.qas_weight, none.rves_repetitions);
        assert_eq!(knobs, (None, None));
        assert_eq!((none.rves_order, none.soft_f1_version), (None, None));
    }

    #[test]
    fn settings_differences_use_the_configs_names_and_spelling() {
        let hardness = settings("");
        let by_field = Settings {
            difficulty: format!("{:?}", DifficultySource::Field("level".into())),
            profile: format!("{:?}", ProfileName::Spider2Sound),
            ..hardness.clone()
        };
        let differences = hardness.differences(&by_field);
        assert!(
            differences
                .contains(&"`compare.profile`: spider-ts (baseline) vs spider2-sound (now)".into())
                && differences.contains(
                    &"`dataset.difficulty`: spider-hardness (baseline) vs field:level (now)".into()
                ),
            "{differences:?}"
        );
        assert!(
            !differences.iter().any(|d| d.contains("SpiderHardness")),
            "{differences:?}"
        );
    }

    #[test]
    fn a_baseline_under_another_rves_order_is_not_comparable() {
        let abba = settings("");
        let official = settings("rves: { order: official }\n");
        assert_eq!(abba.rves_order.as_deref(), Some("Abba"));
        assert_eq!(
            official.differences(&abba),
            ["`rves.order`: official (baseline) vs abba (now)"]
        );
        let older = Settings {
            rves_order: None,
            ..abba.clone()
        };
        assert_eq!(older.differences(&abba).len(), 1);
    }

    #[test]
    fn a_baseline_under_another_soft_f1_version_is_not_comparable() {
        let with = |section: &str| settings_with("ex, soft_f1", section);
        let current = with("");
        let pinned = with("soft_f1: { version: 2024-10 }\n");
        assert_eq!(current.soft_f1_version.as_deref(), Some("2025-06"));
        assert_eq!(
            pinned.differences(&current),
            ["`soft_f1.version`: 2024-10 (baseline) vs 2025-06 (now)"]
        );
        let older = Settings {
            soft_f1_version: None,
            ..current.clone()
        };
        assert_eq!(older.differences(&current).len(), 1);
        assert!(older.differences(&pinned).is_empty());
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("db")).unwrap();
        let refused = Config::parse(
            "dataset: { gold: g.sql, databases: db }\npredictions: []\nsoft_f1: { version: 2025 }\n",
            &dir.path().join("sqlgate.yml"),
&crate::engine::registry::Engines,
        )
        .unwrap_err()
        .to_string();
        assert!(refused.contains("soft_f1.version"), "{refused}");
    }
}
