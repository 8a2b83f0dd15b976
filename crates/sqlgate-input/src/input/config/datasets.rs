//! Several datasets in one config (`datasets:`): each entry names a benchmark, its systems and
//! (optionally) its suite; every other section applies to all of them. Internally a config with
//! `dataset:` is a one-dataset list ([`Config::dataset_configs`]), so every command runs each
//! dataset exactly as a one-dataset config.

use super::*;

/// The name a one-dataset config's dataset goes by.
pub const DEFAULT_DATASET_NAME: &str = "default";

/// The JSON key holding the per-dataset sections of the baseline file of a config with
/// `datasets:` (its shape: `crate::analysis::datasets`).
pub const BASELINE_SECTIONS: &str = "datasets";

/// One entry of `datasets:`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(
    expecting = "a `datasets` entry: a map with `name`, `dataset`, `predictions` and optional `suite`, `compare`, `audit`, e.g. `{ name: spider, dataset: { gold: dev_gold.sql, databases: database }, predictions: [{ path: pred.txt }] }`"
)]
pub struct DatasetEntry {
    /// The dataset's name: its heading in the report, its key in `summary.json` and the baseline.
    pub name: String,
    /// The benchmark, as the one-dataset `dataset` section.
    pub dataset: DatasetConfig,
    /// Its systems, as the one-dataset `predictions` section.
    pub predictions: Vec<PredictionSpec>,
    /// Its suite (default: the top-level `suite`).
    #[serde(default)]
    pub suite: Option<SuiteConfig>,
    /// How its result tables are compared (default: the top-level `compare`), e.g. the `bird`
    /// profile for BIRD beside `spider-ts` for Spider.
    #[serde(default)]
    pub compare: Option<CompareConfig>,
    /// Its gold audit settings: reviewed overrides and other dialects' golds name this
    /// dataset's items, so they live in its entry, never at the top level.
    #[serde(default)]
    pub audit: Option<crate::input::audit::AuditConfig>,
}

impl Config {
    /// Whether the config names several datasets (`datasets:`).
    pub fn is_multi(&self) -> bool {
        !self.datasets.is_empty()
    }

    /// The name of this config's dataset: its `datasets` entry's name in a config split out of
    /// `datasets:`, else [`DEFAULT_DATASET_NAME`].
    pub fn dataset_name(&self) -> &str {
        self.dataset_name.as_deref().unwrap_or(DEFAULT_DATASET_NAME)
    }

    /// One config per dataset, in `datasets` order: the config itself when it has `dataset:`,
    /// else a copy per entry holding its `dataset`, `predictions` and suite.
    pub fn dataset_configs(&self) -> Vec<Config> {
        if !self.is_multi() {
            return vec![self.clone()];
        }
        self.datasets
            .iter()
            .map(|entry| {
                let mut one = self.clone();
                one.datasets = Vec::new();
                one.dataset = entry.dataset.clone();
                one.predictions = entry.predictions.clone();
                one.suite = entry.suite.clone().unwrap_or_else(|| self.suite.clone());
                one.compare = (entry.compare.clone()).unwrap_or_else(|| self.compare.clone());
                one.dataset_name = Some(entry.name.clone());
                if let Some(audit) = &entry.audit {
                    one.audit = audit.clone();
                }
                one
            })
            .collect()
    }

    /// The part of the baseline file `bytes` (from `path`) this config's dataset reads: the
    /// whole file in a one-dataset config, else the section of its `datasets` entry (`None` when
    /// the file has none: a new dataset). A file of the other shape is an error saying so.
    pub fn baseline_section(
        &self,
        path: &Path,
        bytes: Vec<u8>,
    ) -> Result<Option<Vec<u8>>, InputError> {
        let Some(name) = &self.dataset_name else {
            return match has_sections(&bytes) {
                false => Ok(Some(bytes)),
                true => Err(InputError::malformed(
                    path,
                    BASELINE_SECTIONS,
                    "this baseline holds several datasets (made by a config with `datasets:`), \
                     but the config names one (`dataset:`); run `sqlgate baseline update`",
                )),
            };
        };
        let value: Option<serde_json::Value> = serde_json::from_slice(&bytes).ok();
        match value
            .as_ref()
            .and_then(|v| v.get(BASELINE_SECTIONS))
            .and_then(|s| s.as_object())
        {
            Some(sections) => Ok(sections
                .get(name)
                .map(|s| serde_json::to_vec(s).expect("JSON values serialize"))),
            None => Err(InputError::malformed(
                path,
                "baseline",
                "this baseline holds one dataset (made by a config with `dataset:`), but the \
                 config names several (`datasets:`); run `sqlgate baseline update`",
            )),
        }
    }

    /// Refuses a command that reads one dataset on a config with `datasets:`.
    pub fn single(&self, command: &str) -> Result<(), InputError> {
        match self.is_multi() {
            false => Ok(()),
            true => Err(InputError::Config {
                path: self.path.clone(),
                message: format!(
                    "`datasets`: `{command}` reads one dataset; write a config with `dataset:` \
                     for it (several datasets are scored by `sqlgate eval` and \
                     `sqlgate baseline update`)"
                ),
            }),
        }
    }

    /// Settles `dataset` / `datasets` right after parsing: exactly one of them, a non-empty
    /// list of uniquely named entries, and no top-level `predictions` or item indexes beside
    /// `datasets` (each entry names its own systems, whose items are numbered per dataset).
    pub(super) fn settle_datasets(&mut self) -> Result<(), String> {
        let macro_drop = self.gate.max_macro_drop_points;
        if macro_drop.is_some_and(|t| !(t.is_finite() && t >= 0.0)) {
            return Err(
                "`gate.max_macro_drop_points` must be a non-negative number of points".into(),
            );
        }
        if macro_drop.is_some() && self.given_datasets.is_none() {
            return Err(
                "`gate.max_macro_drop_points` gates the macro-average over `datasets`; a config \
                 with one `dataset` has none"
                    .into(),
            );
        }
        match (self.given_dataset.take(), self.given_datasets.take()) {
            (Some(_), Some(_)) => Err(
                "`dataset` and `datasets` together: a config names one dataset (`dataset:`) or \
                 several (`datasets:`, each entry with its own `dataset`), not both"
                    .into(),
            ),
            (Some(dataset), None) => {
                self.dataset = dataset;
                Ok(())
            }
            (None, None) => Err(
                "missing `dataset` (or `datasets`): the benchmark to score, e.g. \
                 `dataset: { gold: dev_gold.sql, databases: database }`"
                    .into(),
            ),
            (None, Some(entries)) => {
                self.datasets = entries;
                self.check_entries()
            }
        }
    }

    /// The `datasets` list on its own: not empty, names unique and plain, nothing of one
    /// dataset at the top level.
    fn check_entries(&self) -> Result<(), String> {
        if self.datasets.is_empty() {
            return Err("`datasets` is empty: name at least one dataset, or use `dataset:`".into());
        }
        if !self.predictions.is_empty() {
            return Err(
                "`predictions` beside `datasets`: each `datasets` entry names its own \
                 `predictions`"
                    .into(),
            );
        }
        let gate = &self.gate;
        if !gate.must_pass.is_empty() || !gate.accept.is_empty() {
            return Err(
                "`gate.must_pass` and `gate.accept` name item indexes of one dataset: they are \
                 not available with `datasets`"
                    .into(),
            );
        }
        if self.audit.overrides.is_some() || !self.audit.dialects.is_empty() {
            return Err(
                "`audit.overrides` and `audit.dialects` name items of one dataset: with \
                 `datasets`, give them in that dataset's entry (`datasets[i].audit`)"
                    .into(),
            );
        }
        if self.baseline.as_ref().is_some_and(|b| b.anchor.is_some()) {
            return Err(
                "`baseline.anchor` (the drift guard) is for one dataset: it is not available \
                 with `datasets`"
                    .into(),
            );
        }
        for (index, entry) in self.datasets.iter().enumerate() {
            let plain = |c: char| c.is_ascii_alphanumeric() || "_.-".contains(c);
            if entry.name.is_empty() || !entry.name.chars().all(plain) || entry.name.len() > 64 {
                return Err(format!(
                    "`datasets[{index}].name`: `{}` is not a dataset name (1 to 64 letters, \
                     digits, `_`, `.` or `-`)",
                    entry.name.escape_debug()
                ));
            }
            if let Some(first) = self.datasets[..index]
                .iter()
                .position(|e| e.name == entry.name)
            {
                return Err(format!(
                    "`datasets[{index}].name`: `{}` is already the name of `datasets[{first}]`; \
                     each dataset needs its own name",
                    entry.name
                ));
            }
        }
        Ok(())
    }

    /// Resolves the paths of every `datasets` entry against the config's folder.
    pub(super) fn resolve_entries(&mut self) {
        let base = self.base_dir.clone();
        for entry in &mut self.datasets {
            resolve_dataset(&base, &mut entry.dataset);
            for spec in &mut entry.predictions {
                spec.path = crate::util::workspace::resolve(&base, &spec.path)
                    .to_string_lossy()
                    .into_owned();
            }
            if let Some(path) = entry.suite.as_mut().and_then(|s| s.path.as_mut()) {
                *path = crate::util::workspace::resolve(&base, &*path);
            }
            if let Some(audit) = &mut entry.audit {
                audit.resolve(&base);
            }
        }
    }

    /// Validates each dataset's config, naming the entry in the error.
    pub(super) fn validate_entries(&self, engines: &dyn EngineCatalog) -> Result<(), InputError> {
        for one in self.dataset_configs() {
            one.validate(engines)
                .map_err(|error| in_entry(&one, error))?;
        }
        Ok(())
    }
}

/// Resolves a dataset section's paths against `base`.
pub(super) fn resolve_dataset(base: &Path, dataset: &mut DatasetConfig) {
    dataset.gold = crate::util::workspace::resolve(base, &dataset.gold);
    for path in [
        &mut dataset.databases,
        &mut dataset.tables,
        &mut dataset.gold_results,
        &mut dataset.gold_sql,
        &mut dataset.eval,
        &mut dataset.starting_databases,
    ]
    .into_iter()
    .flatten()
    {
        *path = crate::util::workspace::resolve(base, &*path);
    }
}

/// An error of one dataset's config, prefixed with the `datasets` entry it came from.
pub fn in_entry(one: &Config, error: InputError) -> InputError {
    let Some(name) = &one.dataset_name else {
        return error;
    };
    match error {
        InputError::Config { path, message } => InputError::Config {
            path,
            message: format!("`datasets` entry `{name}`: {message}"),
        },
        other => other,
    }
}

/// Whether a baseline file is the sectioned shape (a top-level `datasets` key). The file is
/// read without building it (the one-dataset case, the common one, then parses it once, in
/// `sqlgate::analysis::baseline::Baseline::parse`); a file that is not a JSON object is not
/// sectioned, and the baseline's own parse says what is wrong with it.
fn has_sections(bytes: &[u8]) -> bool {
    /// The top-level keys that matter here: whether [`BASELINE_SECTIONS`] is present, whatever
    /// it holds (`null` included).
    #[derive(serde::Deserialize)]
    struct TopLevel {
        #[serde(default, deserialize_with = "present")]
        datasets: bool,
    }
    fn present<'de, D: serde::Deserializer<'de>>(value: D) -> Result<bool, D::Error> {
        serde::Deserialize::deserialize(value).map(|_: serde::de::IgnoredAny| true)
    }
    serde_json::from_slice::<TopLevel>(bytes).is_ok_and(|top| top.datasets)
}
