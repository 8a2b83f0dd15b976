//! Dataset files decide every verdict, so a pull request's own versions never do: the gold, the
//! tables file, the databases and Spider 2.0's answers it changes are read as the base commit
//! has them ([`super::base_benchmark`]), and a directory suite must be merged on the base first.
//! In a repair (the pull request's own config runs) every such change is refused. Deleting,
//! moving or replacing one is a change like any other.

use super::base::TrustedBase;
use crate::input::config::{Config, DatasetConfig, SuiteKind};
use crate::util::error::InputError;
use std::path::Path;

/// The files of a dataset that decide its verdicts: the gold, the tables file, the databases
/// and Spider 2.0's answers, as the config names them.
pub(super) fn dataset_paths(dataset: &DatasetConfig) -> Vec<&Path> {
    let mut paths: Vec<&Path> = vec![&dataset.gold];
    let optional = [
        &dataset.databases,
        &dataset.tables,
        &dataset.gold_results,
        &dataset.gold_sql,
        &dataset.eval,
        &dataset.starting_databases,
    ];
    paths.extend(optional.into_iter().flatten().map(|p| p.as_path()));
    paths
}

/// Refuses a pull request that changes a dataset file or a directory suite of any dataset of
/// `config`, naming them (a repair: the pull request's own config runs).
pub fn refuse_dataset_changes(config: &Config, base: &TrustedBase) -> Result<(), InputError> {
    (config.dataset_configs().iter()).try_for_each(|one| {
        let mut paths = dataset_paths(&one.dataset);
        paths.extend(directory_suite(one));
        refuse(one, base, &paths, "the base commit's dataset")
    })
}

/// Refuses a pull request that changes a directory suite of any dataset of `config`: the suite
/// is merged on the base first.
pub(super) fn refuse_suite_changes(config: &Config, base: &TrustedBase) -> Result<(), InputError> {
    (config.dataset_configs().iter()).try_for_each(|one| {
        let suite: Vec<&Path> = directory_suite(one).into_iter().collect();
        refuse(one, base, &suite, "the base commit's suite")
    })
}

/// A directory suite's folder, when the dataset has one.
fn directory_suite(config: &Config) -> Option<&Path> {
    (config.suite.kind == SuiteKind::Directory)
        .then_some(config.suite.path.as_deref())
        .flatten()
}

/// The error naming the files under `paths` the pull request changes, if any.
fn refuse(
    config: &Config,
    base: &TrustedBase,
    paths: &[&Path],
    judged_with: &str,
) -> Result<(), InputError> {
    let mut changed = Vec::new();
    for path in paths {
        changed.extend(base.changed_under(path)?);
    }
    if changed.is_empty() {
        return Ok(());
    }
    Err(InputError::Config {
        path: config.path.clone(),
        message: format!(
            "the pull request changes dataset files ({}); a pull request is judged with \
             {judged_with}, so merge dataset changes on the base branch first",
            changed.join(", ")
        ),
    })
}
