//! A pull request that changes the benchmark (a gold, the tables file, a database, Spider 2.0's
//! answers) or its reviewed gold overrides has a path to merge: its predictions are scored on the
//! base commit's benchmark and overrides, as they would be without the change, and the pull
//! request passes or fails on them as usual. The base's versions of the dataset's files are
//! copied into a folder of the run's own (files the pull request left alone from the working
//! tree, the rest from git), the governing config reads them there (the overrides are read from
//! the base by the trust stage anyway), and what the pull request proposes is kept, so the
//! evidence phase can score the base's own predictions both ways and the report can show what
//! merging it would change. The proposed benchmark must load (once merged, every later pull
//! request is judged with it).

use super::base::TrustedBase;
use super::dataset_changes::dataset_paths;
use crate::input::config::{Config, DatasetConfig, PredictionFormat, PredictionSpec};
use crate::input::trusted::{ProposedBenchmark, TrustedFile};
use crate::util::error::InputError;
use crate::util::fs::RunFolder;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The base's benchmark copies the governing config now reads, and what the pull request
/// proposes for each dataset it changes.
#[derive(Default)]
pub struct BaseBenchmark {
    /// The folder of the copies; `None` when the pull request changes no benchmark.
    pub copies: Option<Arc<RunFolder>>,
    /// One per dataset whose benchmark the pull request changes.
    pub proposed: Vec<ProposedBenchmark>,
}

/// `config` (the base's, parsed) checked against the working tree, with every dataset whose
/// files the pull request changes pointed at copies of the base commit's files, after checking
/// that the proposed files load as a benchmark.
pub(super) fn judge_on_base_benchmark(
    config: Config,
    base: &TrustedBase,
) -> Result<(Config, BaseBenchmark), InputError> {
    let mut found = BaseBenchmark::default();
    let mut on_base = Vec::new();
    for one in config.dataset_configs() {
        let benchmark = changed_files(&one.dataset, base)?;
        let overrides = proposed_overrides(&one, base)?;
        if benchmark.is_empty() && overrides.is_none() {
            continue;
        }
        if !benchmark.is_empty() {
            check_proposed_loads(&one, &benchmark)?;
        }
        let mut changed = benchmark.clone();
        if let Some((path, _)) = &overrides {
            changed.extend(base.repo_path(path)?);
        }
        let copies = match &found.copies {
            Some(copies) => Arc::clone(copies),
            None => Arc::new(RunFolder::create("base-benchmark")?),
        };
        found.copies = Some(Arc::clone(&copies));
        let into = copies.folder.join(format!("{}", found.proposed.len()));
        let (base_predictions, skipped) = copy_predictions(&one.predictions, base, &into)?;
        if !benchmark.is_empty() {
            let mut copied = one.dataset.clone();
            copy_dataset(&mut copied, base, (&into, &benchmark))?;
            on_base.push((one.dataset_name.clone(), copied));
        }
        found.proposed.push(ProposedBenchmark {
            dataset: one.dataset_name.clone(),
            changed,
            proposed: (!benchmark.is_empty()).then(|| one.dataset.clone()),
            overrides,
            base_predictions,
            skipped,
        });
    }
    let mut config = config.inside_workspace()?;
    for (name, copied) in on_base {
        *dataset_mut(&mut config, name.as_deref()) = copied;
    }
    Ok((config, found))
}

/// The pull request's version of the dataset's reviewed gold overrides, when it changes them:
/// read bounded, as a regular file of the repository (never through a link), `bytes: None` when
/// it deletes them.
fn proposed_overrides(
    one: &Config,
    base: &TrustedBase,
) -> Result<Option<(PathBuf, TrustedFile)>, InputError> {
    let Some(path) = &one.audit.overrides else {
        return Ok(None);
    };
    if !base.changes(path)? {
        return Ok(None);
    }
    let key = crate::input::trusted::absolute(path);
    let Ok(metadata) = std::fs::symlink_metadata(path) else {
        return Ok(Some((key, TrustedFile::default())));
    };
    if metadata.file_type().is_symlink() {
        return Err(InputError::Config {
            path: one.path.clone(),
            message: format!(
                "`audit.overrides`: this pull request's {} is a symbolic link; a pull request's \
                 overrides are read only as a regular file of the repository",
                path.display()
            ),
        });
    }
    let bytes = crate::util::error::read_bounded(path, crate::util::error::MAX_INPUT_BYTES)?;
    let file = TrustedFile {
        bytes: Some(bytes),
        changed: false,
    };
    Ok(Some((key, file)))
}

/// The files of `dataset` the pull request changes, sorted.
fn changed_files(dataset: &DatasetConfig, base: &TrustedBase) -> Result<Vec<String>, InputError> {
    let mut changed = Vec::new();
    for path in dataset_paths(dataset) {
        changed.extend(base.changed_under(path)?);
    }
    changed.sort();
    changed.dedup();
    Ok(changed)
}

/// The proposed benchmark must pass the workspace rule and have every file the config names
/// (a pull request that deletes the databases folder proposes a benchmark no later pull request
/// could be judged with); its gold and databases are loaded when the evidence phase scores it.
fn check_proposed_loads(one: &Config, changed: &[String]) -> Result<(), InputError> {
    let missing = dataset_paths(&one.dataset)
        .into_iter()
        .find(|path| std::fs::symlink_metadata(path).is_err());
    let failure = match missing {
        Some(path) => Some(format!("{} does not exist", path.display())),
        None => one.clone().inside_workspace().err().map(|e| e.to_string()),
    };
    match failure {
        None => Ok(()),
        Some(why) => Err(InputError::Config {
            path: one.path.clone(),
            message: format!(
                "the pull request changes dataset files ({}), and the benchmark it proposes \
                 does not load, so once merged no pull request could be gated: {why}",
                changed.join(", ")
            ),
        }),
    }
}

/// The dataset section of `config` named `name` (`None`: the one dataset).
fn dataset_mut<'a>(config: &'a mut Config, name: Option<&str>) -> &'a mut DatasetConfig {
    match config
        .datasets
        .iter_mut()
        .find(|e| Some(e.name.as_str()) == name)
    {
        Some(entry) => &mut entry.dataset,
        None => &mut config.dataset,
    }
}

/// Copies the base's version of every file `dataset` names below `into` and points the section
/// at the copies. `changed` lists what the pull request changed (those come from git).
fn copy_dataset(
    dataset: &mut DatasetConfig,
    base: &TrustedBase,
    (into, changed): (&Path, &[String]),
) -> Result<(), InputError> {
    let copy = |path: &mut PathBuf| copy_path(path, base, (into, changed)).map(|c| *path = c);
    copy(&mut dataset.gold)?;
    let optional = [
        &mut dataset.databases,
        &mut dataset.tables,
        &mut dataset.gold_results,
        &mut dataset.gold_sql,
        &mut dataset.eval,
        &mut dataset.starting_databases,
    ];
    for path in optional.into_iter().flatten() {
        copy(path)?;
    }
    Ok(())
}

/// The copy of the base's `path` (a file or a folder) below `into`, with every file the base
/// commit has there; the copy's path (absent when the base has nothing there).
fn copy_path(
    path: &Path,
    base: &TrustedBase,
    (into, changed): (&Path, &[String]),
) -> Result<PathBuf, InputError> {
    let Some(name) = base.repo_path(path)? else {
        return Ok(path.to_path_buf());
    };
    for file in base.files_below(&base.commit, &name)? {
        copy_file(&file, base, (into, changed))?;
    }
    Ok(into.join(&name))
}

/// Copies the base's repository file `name` to `into/name`: the working tree's file when the
/// pull request left it alone (a regular file, hard-linked where the file system allows),
/// else the base commit's blob.
fn copy_file(
    name: &str,
    base: &TrustedBase,
    (into, changed): (&Path, &[String]),
) -> Result<(), InputError> {
    let target = into.join(name);
    if std::fs::symlink_metadata(&target).is_ok() {
        // Below two configured paths (Spider 2.0-DBT's evaluation file in its gold folder):
        // copied once. Copying again onto the hard link would truncate the working tree's file.
        return Ok(());
    }
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent).map_err(|e| InputError::read(parent, e))?;
    }
    let source = base.root.join(name);
    let unchanged = !changed.iter().any(|c| c == name)
        && std::fs::symlink_metadata(&source).is_ok_and(|m| m.is_file());
    if unchanged
        && (std::fs::hard_link(&source, &target).is_ok() || std::fs::copy(&source, &target).is_ok())
    {
        return Ok(());
    }
    let _ = std::fs::remove_file(&target);
    base.write_blob(name, &target)
}

/// The base commit's prediction files of `specs`, copied below `into/predictions` (the base's
/// own systems, re-scored on both benchmarks), and the systems left out with why.
fn copy_predictions(
    specs: &[PredictionSpec],
    base: &TrustedBase,
    into: &Path,
) -> Result<(Vec<PredictionSpec>, Vec<String>), InputError> {
    let mut copied = Vec::new();
    let mut skipped = Vec::new();
    for spec in specs {
        let shown = spec.name.clone().unwrap_or_else(|| spec.path.clone());
        if spec.path.contains(['*', '?', '[']) {
            skipped.push(format!("{shown} (a glob)"));
            continue;
        }
        let path = Path::new(&spec.path);
        let Some(name) = base.repo_path(path)? else {
            skipped.push(format!("{shown} (outside the repository)"));
            continue;
        };
        let Some(bytes) = base.read(path)? else {
            skipped.push(format!("{shown} (not on the base commit)"));
            continue;
        };
        let target = into.join("predictions").join(&name);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| InputError::read(parent, e))?;
        }
        std::fs::write(&target, &bytes).map_err(|e| InputError::read(&target, e))?;
        if spec.format == PredictionFormat::Spider2Dbt {
            copy_answer_files((&target, &bytes), &name, base, into)?;
        }
        copied.push(PredictionSpec {
            path: target.to_string_lossy().into_owned(),
            ..spec.clone()
        });
    }
    Ok((copied, skipped))
}

/// Copies below `into/predictions` the base commit's answer files that the base's
/// `results_metadata.jsonl` (`metadata`: its copy and bytes; `name`: its repository path)
/// names (`format: spider2-dbt`), so its answers read in the copy as in the base's tree. Only
/// a regular file of the base commit inside its instance folder is copied, up to the answer
/// file limit: a link, a path out of the folder or a larger file stays absent, a wrong answer
/// as the base's own run scores it.
fn copy_answer_files(
    (metadata, bytes): (&Path, &[u8]),
    name: &str,
    base: &TrustedBase,
    into: &Path,
) -> Result<(), InputError> {
    use crate::input::spider2_dbt::{named_answer_files, MAX_ANSWER_BYTES};
    let text = std::str::from_utf8(bytes)
        .map_err(|e| InputError::malformed(metadata, "the file", format!("invalid UTF-8: {e}")))?;
    let folder = name.rsplit_once('/').map_or("", |(folder, _)| folder);
    for answer in named_answer_files(metadata, text)? {
        let answer = match folder {
            "" => answer,
            _ => format!("{folder}/{answer}"),
        };
        let target = into.join("predictions").join(&answer);
        let fits = base
            .regular_file_size(&answer)?
            .is_some_and(|size| size <= MAX_ANSWER_BYTES);
        if !fits || std::fs::symlink_metadata(&target).is_ok() {
            continue;
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| InputError::read(parent, e))?;
        }
        base.write_blob(&answer, &target)?;
    }
    Ok(())
}
