//! Spider 2.0-DBT (`dataset.kind: spider2-dbt`): `dataset.gold` is the evaluation file
//! (`spider2_eval.jsonl`, one `duckdb_match` per instance), `dataset.databases` the gold folder
//! (`<instance_id>/<gold>.duckdb`), read by the DuckDB engine; each item's task is its
//! [`DbtInstance`], compared by the metric `duckdb_match` under `spider2` (the official
//! `eval_utils.py`, the default) or `spider2-sound`.

use super::Kind;
use crate::input::config::{
    Config, DatasetConfig, DifficultySource, PredictionFormat, ProfileName, Spider2Version,
};
use crate::input::dataset::GoldItem;
use crate::input::spider2_dbt::{load_eval_file, DbtInstance, StartingDatabase};
use crate::util::error::InputError;
use crate::util::fs::RunFolder;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The kind's name, as `dataset.kind` writes it.
const NAME: &str = "spider2-dbt";
/// The one metric that reads the kind's items.
const METRIC: &str = "duckdb_match";

/// The Spider 2.0-DBT kind.
pub struct Spider2Dbt;

impl Kind for Spider2Dbt {
    fn name(&self) -> &'static str {
        NAME
    }

    /// The instances of the evaluation file, their gold files under `dataset.databases`; the
    /// digest covers the evaluation file (the gold files are digested as the databases) and,
    /// with `dataset.starting_databases`, each instance's starting database (its copy's
    /// SHA-256, or that it has none), so a changed starting database is a changed benchmark.
    fn load_items(
        &self,
        config: &DatasetConfig,
        _version: Spider2Version,
    ) -> Result<(Vec<GoldItem>, Vec<u8>), InputError> {
        let mut bytes = crate::util::error::read_bytes(&config.gold)?;
        let text = std::str::from_utf8(&bytes).map_err(|e| {
            InputError::malformed(&config.gold, "the file", format!("invalid UTF-8: {e}"))
        })?;
        let folder = config.databases.as_deref().unwrap_or(Path::new("."));
        let mut instances = load_eval_file(&config.gold, text, folder)?;
        if let Some(starting) = &config.starting_databases {
            bytes.extend(copy_starting_databases(starting, &mut instances)?);
        }
        Ok((instances.into_iter().enumerate().map(item).collect(), bytes))
    }

    /// A gold file lies where its line says: the db_id is `<instance_id>/<gold>`.
    fn engine_file(&self, folder: &Path, db_id: &str, _extension: &str) -> PathBuf {
        folder.join(db_id)
    }

    fn database_extension(&self) -> Option<&'static str> {
        Some("duckdb")
    }

    fn takes_spider2_profiles(&self) -> bool {
        true
    }

    /// Difficulty `none`, the metric `duckdb_match` alone, the profile `spider2` (or unset) or
    /// `spider2-sound`, none of the other profiles' knobs.
    fn check(&self, config: &Config) -> Result<(), String> {
        if config.dataset.difficulty != DifficultySource::None {
            return Err(format!(
                "`dataset.kind: {NAME}` has no difficulty labels: set `dataset.difficulty: none`"
            ));
        }
        let compare = &config.compare;
        if !matches!(
            compare.profile,
            ProfileName::SpiderTs | ProfileName::Spider2 | ProfileName::Spider2Sound
        ) {
            return Err(format!(
                "`dataset.kind: {NAME}` compares with `compare.profile: spider2` (the official `duckdb_match`, the default) or `spider2-sound`, not `{}`",
                compare.profile.as_str()
            ));
        }
        if compare.float_tolerance != 0.0
            || compare.keep_distinct
            || compare.plug_value
            || compare.version.is_some()
        {
            return Err(format!("`compare.float_tolerance`, `keep_distinct`, `plug_value` and `version` do not apply to `dataset.kind: {NAME}` (duckdb_match's tolerance is fixed at 1e-2)"));
        }
        if let Some(index) =
            (config.predictions.iter()).position(|spec| spec.format != PredictionFormat::Spider2Dbt)
        {
            return Err(format!("`predictions[{index}].format`: `dataset.kind: {NAME}` reads `format: spider2-dbt` (a submission's `results_metadata.jsonl`)"));
        }
        match config.metrics.iter().find(|m| *m != METRIC) {
            Some(other) => Err(format!(
                "`metrics`: `{other}` is not available for `dataset.kind: {NAME}` (only `{METRIC}`)"
            )),
            None => Ok(()),
        }
    }

    /// `duckdb_match`, `format: spider2-dbt` and `dataset.starting_databases` read this kind's
    /// items only.
    fn refuse_in_other_kinds(&self, config: &Config) -> Result<(), String> {
        if config.dataset.starting_databases.is_some() {
            return Err(format!(
                "`dataset.starting_databases` is for `dataset.kind: {NAME}` only"
            ));
        }
        if let Some(index) =
            (config.predictions.iter()).position(|spec| spec.format == PredictionFormat::Spider2Dbt)
        {
            return Err(format!(
                "`predictions[{index}].format: spider2-dbt` needs `dataset.kind: {NAME}`"
            ));
        }
        match config.metrics.iter().any(|m| m == METRIC) {
            true => Err(format!(
                "`metrics`: `{METRIC}` needs `dataset.kind: {NAME}` (its `.duckdb` answers)"
            )),
            false => Ok(()),
        }
    }
}

/// The instance's starting database under `starting`, `<instance_id>/<gold file name>`: a
/// regular file inside that folder, else none (the finding is then not looked for).
fn starting_database(starting: &Path, instance: &DbtInstance) -> Option<PathBuf> {
    let file = starting
        .join(&instance.instance_id)
        .join(instance.gold.file_name()?);
    let regular = std::fs::symlink_metadata(&file).is_ok_and(|m| m.file_type().is_file());
    let inside = (file.canonicalize().ok())
        .zip(starting.canonicalize().ok())
        .is_some_and(|(file, folder)| file.starts_with(folder));
    (regular && inside).then_some(file)
}

/// Points each instance at a copy of its starting database under `starting` (in a run folder
/// of their own) and returns what the dataset digest covers of them: after a NUL (which no
/// evaluation file holds), `<instance_id> NUL <the copy's SHA-256, or "absent">` per instance.
fn copy_starting_databases(
    starting: &Path,
    instances: &mut [DbtInstance],
) -> Result<Vec<u8>, InputError> {
    let copies = Arc::new(RunFolder::create("starting-databases")?);
    let mut digested = String::from("\0starting databases\n");
    for instance in instances {
        let found = starting_database(starting, instance);
        let copied = found
            .map(|file| copy_starting(file, &copies, instance))
            .transpose()?;
        let shown = copied.as_ref().map_or("absent", |(_, hex)| hex.as_str());
        digested += &format!("{}\0{shown}\n", instance.instance_id);
        instance.start = copied.map(|(start, _)| start);
    }
    Ok(digested.into_bytes())
}

/// The copy of `instance`'s starting database `file` in `copies`, and its hex SHA-256.
fn copy_starting(
    file: PathBuf,
    copies: &Arc<RunFolder>,
    instance: &DbtInstance,
) -> Result<(StartingDatabase, String), InputError> {
    let folder = copies.folder.join(&instance.instance_id);
    std::fs::create_dir_all(&folder).map_err(|e| InputError::read(&folder, e))?;
    let copy = folder.join(file.file_name().unwrap_or_default());
    let sha256 =
        crate::util::fs::copy_digested(&file, &copy).map_err(|e| InputError::read(&file, e))?;
    let start = StartingDatabase {
        file,
        copy,
        copies: Arc::clone(copies),
    };
    Ok((start, crate::util::digest::hex(&sha256)))
}

/// One instance as a gold item: no gold query; its database is its gold file.
fn item((index, instance): (usize, DbtInstance)) -> GoldItem {
    let gold_name = instance
        .gold
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    GoldItem {
        index,
        db_id: format!("{}/{gold_name}", instance.instance_id),
        sql: String::new(),
        question: None,
        evidence: None,
        difficulty: None,
        skipped: false,
        spider2: None,
        task: Some(Arc::new(instance)),
    }
}
