//! Checks of a parsed config that a typo could make nonsensical; every error names the key.

use super::*;

/// Metrics that need the benchmark's SQLite files (test suites, schemas read from the file).
/// Config validation runs before (and below) the metrics module, so it keeps this copy of what
/// each metric says (`sqlgate::metrics::Metric::needs_sqlite_files`, in the gate); a test
/// there checks the two agree.
pub const SQLITE_ONLY_METRICS: [&str; 3] = ["ts", "esm", "esm_plus"];

/// Metrics that need a test suite (`suite.kind` other than `original`); a copy of what each metric
/// says (`sqlgate::metrics::Metric::needs_suite`), checked as [`SQLITE_ONLY_METRICS`] is.
pub const SUITE_METRICS: [&str; 1] = ["ts"];

impl Config {
    /// Refuses values that make no sense together or alone, naming the key. It reads the text
    /// alone, never the working tree (what the tree holds is [`Config::check_workspace`]'s), so a
    /// pull request cannot make the base's config "not load" by deleting a folder it names.
    /// The engines it may name are `engines`'.
    pub(super) fn validate(&self, engines: &dyn EngineCatalog) -> Result<(), InputError> {
        let fail = |message: String| {
            Err(InputError::Config {
                path: self.path.clone(),
                message,
            })
        };
        if self.predictions.is_empty() {
            return fail("`predictions` must name at least one system".into());
        }
        if let Err(message) = self.check_extract() {
            return fail(message);
        }
        if self.metrics.is_empty() {
            return fail("`metrics` must name at least one metric".into());
        }
        let tolerance = self.compare.float_tolerance;
        if !(tolerance.is_finite() && tolerance >= 0.0) {
            return fail(format!(
                "`compare.float_tolerance` must be a non-negative number, not {tolerance}"
            ));
        }
        if let Err(message) = self.execution.check().and(self.suite.distill.check()) {
            return fail(message);
        }
        if let Some(name) = self
            .reference
            .as_ref()
            .filter(|n| !self.metrics.contains(n))
        {
            return fail(format!(
                "`reference`: `{name}` is not one of the configured `metrics`"
            ));
        }
        if let Some(name) = self.gate.metric.as_ref().filter(|n| !self.gates_on(n)) {
            return fail(format!(
                "`gate.metric`: `{name}` is not one of the configured `metrics` \
                 (or `<sqlmorph technique>.ex|exp|exr|f1`)"
            ));
        }
        if !(0.0..=1.0).contains(&self.qas.weight) {
            return fail(format!(
                "`qas.weight` must be between 0 and 1, not {}",
                self.qas.weight
            ));
        }
        if !(1..=10_000).contains(&self.rves.repetitions) {
            return fail(format!(
                "`rves.repetitions` must be between 1 and 10000 (the official script uses {OFFICIAL_RVES_REPETITIONS}), not {}",
                self.rves.repetitions
            ));
        }
        let thresholds = std::iter::once(self.gate.max_drop_points)
            .chain(self.gate.per_difficulty.values().copied())
            .chain(self.gate.per_feature.values().copied());
        if let Some(name) = (self.gate.per_feature.keys())
            .find(|name| crate::sql::features::Feature::parse(name).is_none())
        {
            let known: Vec<&str> = crate::sql::features::Feature::ALL
                .iter()
                .map(|f| f.as_str())
                .collect();
            return fail(format!(
                "`gate.per_feature`: unknown feature `{name}`; the features are {}",
                known.join(", ")
            ));
        }
        if thresholds.into_iter().any(|t| !(t.is_finite() && t >= 0.0)) {
            return fail("`gate` drop thresholds must be non-negative numbers of points".into());
        }
        if let Some(drift) = self.gate.max_drift_points {
            if !(drift.is_finite() && drift >= 0.0) {
                return fail("`gate.max_drift_points` must be a non-negative number".into());
            }
            if self
                .baseline
                .as_ref()
                .and_then(|b| b.anchor.as_ref())
                .is_none()
            {
                return fail(
                    "`gate.max_drift_points` needs `baseline.anchor`, the pinned baseline the \
                     cumulative drop is measured against"
                        .into(),
                );
            }
        }
        let gate = &self.gate;
        if let Err(message) = crate::input::policy::check(
            gate.max_baseline_age_days.as_ref(),
            gate.review_gain_points,
        ) {
            return fail(message);
        }
        if let Some(significance) = &self.gate.significance {
            if !(significance.alpha > 0.0 && significance.alpha < 1.0) {
                return fail("`gate.significance.alpha` must be between 0 and 1".into());
            }
        }
        for (kind, provider) in [
            (ProviderKind::Judge, &self.judge),
            (ProviderKind::Embeddings, &self.embeddings),
        ] {
            if let Some(Err(message)) = provider.as_ref().map(|p| p.validate(kind.key())) {
                return fail(message);
            }
        }
        if let Err(message) = self.check_engine(engines) {
            return fail(message);
        }
        if self.suite.kind == SuiteKind::Directory && self.suite.path.is_none() {
            return fail("`suite.path` must name a folder when `suite.kind` is `directory`".into());
        }
        if self.suite.kind == SuiteKind::Distilled && self.suite.path.is_none() {
            return fail(
                "`suite.path` must name the cache folder when `suite.kind` is `distilled`".into(),
            );
        }
        if let Some(metric) = self
            .metrics
            .iter()
            .find(|m| SUITE_METRICS.contains(&m.as_str()))
            .filter(|_| self.suite.kind == SuiteKind::Original)
        {
            return fail(format!(
                "metric `{metric}` needs a test suite: set `suite.kind: directory` or \
                 `distilled`, and `suite.path`"
            ));
        }
        Ok(())
    }

    /// `extract` reads raw model output, which only the formats holding free text carry: a
    /// `lines` or `tsv` file has one query per line, so a fenced answer cannot be in it.
    fn check_extract(&self) -> Result<(), String> {
        use crate::input::extract::ExtractMode;
        let raw_text = [PredictionFormat::Jsonl, PredictionFormat::BirdJson];
        match self
            .predictions
            .iter()
            .enumerate()
            .find(|(_, spec)| spec.extract != ExtractMode::None && !raw_text.contains(&spec.format))
        {
            Some((index, spec)) => Err(format!(
                "`predictions[{index}].extract: {}`: format `{}` has no raw model output (one \
                 query per line); extraction reads `format: jsonl` (the `sql` field) or \
                 `bird-json` values: convert the file, or drop `extract`",
                spec.extract.as_str(),
                spec.format.as_str()
            )),
            None => Ok(()),
        }
    }

    /// The engine must be one of `engines`, with its keys; an engine on files (SQLite's or its
    /// own, [`EngineCatalog::database_files`]) needs their databases folder, a server needs none;
    /// every engine but SQLite runs only what does not depend on SQLite files (no test suites,
    /// ESM, ESM+ or Spider 2.0 layout).
    fn check_engine(&self, engines: &dyn EngineCatalog) -> Result<(), String> {
        let dataset = &self.dataset;
        let kind = &dataset.engine.kind;
        dataset.engine.check()?;
        // The parse refused a name no engine has (with its line); this keeps the check whole.
        let Some(reads_sqlite_files) = engines.reads_sqlite_files(kind) else {
            return Err(unknown_engine("dataset.engine.kind", kind, engines));
        };
        engines.check_keys(&dataset.engine)?;
        if reads_sqlite_files {
            return match &dataset.databases {
                None => Err("`dataset.databases` is required with the SQLite engine: the folder holding `<db_id>/<db_id>.sqlite`".into()),
                Some(_) => Ok(()),
            };
        }
        match (engines.database_files(kind), &dataset.databases) {
            (Some(files), None) => return Err(format!("`dataset.databases` is required with `dataset.engine.kind: {kind}`: the folder holding `<db_id>/<db_id>.{}`", files.extension)),
            (Some(_), Some(_)) => {}
            (None, Some(_)) => return Err(format!("`dataset.databases` is for the engines on files only; with `dataset.engine.kind: {kind}` the server holds the databases (load them with `sqlgate load`)")),
            (None, None) if dataset.skip_missing_databases => return Err(format!("`dataset.skip_missing_databases` is for the engines on files only; with `dataset.engine.kind: {kind}` every db_id's tables must be on the server")),
            (None, None) => {}
        }
        if self.suite.kind != SuiteKind::Original {
            return Err(format!("`suite.kind: {}` (test suites) is SQLite-only: not available with `dataset.engine.kind: {kind}`", self.suite.kind.as_str()));
        }
        match self.metrics.iter().find(|m| SQLITE_ONLY_METRICS.contains(&m.as_str())) {
            Some(metric) => Err(format!("`metrics`: `{metric}` is SQLite-only ({} need SQLite files); it is not available with `dataset.engine.kind: {kind}`", quoted_list(&SQLITE_ONLY_METRICS))),
            None => Ok(()),
        }
    }

    /// Refuses a `gate.must_pass`, `gate.accept` or `dataset.allow_failing_golds` index the
    /// dataset does not have (the gold items are numbered from 0 in gold order): one out of range
    /// would never be checked, yet read as protected (or accepted, or allowed).
    pub fn check_items(&self, item_count: usize) -> Result<(), InputError> {
        let must_pass = self.gate.must_pass.iter().map(|i| ("gate.must_pass", *i));
        let accepted =
            (self.gate.accept.iter()).flat_map(|a| a.items.iter().map(|i| ("gate.accept", *i)));
        let allowed =
            (self.dataset.allow_failing_golds.iter()).map(|i| ("dataset.allow_failing_golds", *i));
        match must_pass
            .chain(accepted)
            .chain(allowed)
            .find(|(_, index)| *index >= item_count)
        {
            Some((key, index)) => Err(InputError::Config {
                path: self.path.clone(),
                message: format!(
                    "`{key}`: item {index} does not exist: the dataset has {item_count} \
                     items, numbered 0 to {} in gold order; remove it or fix the index",
                    item_count.saturating_sub(1)
                ),
            }),
            None => Ok(()),
        }
    }
}

/// `names` quoted and joined as prose: "`a`, `b` and `c`".
fn quoted_list(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sqlite_only_message_names_the_metrics_as_prose() {
        assert_eq!(
            quoted_list(&SQLITE_ONLY_METRICS),
            "`ts`, `esm` and `esm_plus`"
        );
        assert_eq!(quoted_list(&SUITE_METRICS), "`ts`");
    }
}
