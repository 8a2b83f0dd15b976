//! The baseline store: every system's per-item results with the metadata needed to refuse a
//! comparison made with other data or settings.

use crate::analysis::records::{records, ItemRecord};
use crate::input::config::Config;
use crate::score::evaluation::Evaluation;
use crate::util::error::InputError;
use serde::{Deserialize, Serialize};
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
            difficulty: format!("{:?}", config.dataset.difficulty),
            plug_value: config.compare.plug_value,
            judge: config.judge.as_ref().map(provider_identity),
            embeddings: config.embeddings.as_ref().map(provider_identity),
            qas_weight: config
                .metrics
                .iter()
                .any(|m| m == "qas")
                .then_some(config.qas.weight),
            rves_repetitions: config
                .metrics
                .iter()
                .any(|m| m == "rves")
                .then_some(config.rves.repetitions),
            contract: crate::engine::profile::Profile::new(&config.compare).contract(),
        }
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
            .map(|(name, value)| {
                let now = after.get(name).cloned().unwrap_or_default();
                format!("{name}: {value} (baseline) vs {name}: {now} (now)")
            })
            .collect()
    }
}

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
    /// Dataset fingerprint.
    pub dataset_sha256: String,
    /// Metrics it holds.
    pub metrics: Vec<String>,
    /// Comparability settings.
    pub settings: Settings,
    /// Per system, its per-item records in gold order.
    pub systems: BTreeMap<String, Vec<ItemRecord>>,
}

impl Baseline {
    /// A baseline holding every system of `evaluation`.
    pub fn from_evaluation(config: &Config, evaluation: &Evaluation) -> Baseline {
        Baseline {
            sqlgate_version: env!("CARGO_PKG_VERSION").to_string(),
            commit: current_commit(),
            dataset_sha256: evaluation.dataset.sha256.clone(),
            metrics: evaluation.metrics.clone(),
            settings: Settings::of(config),
            systems: records(evaluation).into_iter().collect(),
        }
    }

    /// Reads a baseline file.
    pub fn load(path: &Path) -> Result<Baseline, InputError> {
        Self::parse(path, &crate::util::error::read_bytes(path)?)
    }

    /// Parses baseline JSON that came from `path` (the working tree or a trusted commit).
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<Baseline, InputError> {
        serde_json::from_slice(bytes)
            .map_err(|e| InputError::malformed(path, format!("line {}", e.line()), e.to_string()))
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
            differences.push(format!(
                "dataset sha256 {} (baseline) vs {} (now)",
                short(&self.dataset_sha256),
                short(&evaluation.dataset.sha256)
            ));
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
            return Ok(());
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

fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}

/// `GITHUB_SHA`, or the checkout's `HEAD`, when either is available.
fn current_commit() -> Option<String> {
    if let Ok(sha) = std::env::var("GITHUB_SHA") {
        return Some(sha);
    }
    let output = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
}
