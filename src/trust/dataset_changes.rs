//! Dataset files decide every verdict, so a pull request may not change them: the gold, the
//! tables file, the databases, Spider 2.0's answers and a directory suite must be merged on the
//! base first. Deleting, moving or replacing one is a change like any other.

use super::base::TrustedBase;
use crate::input::config::{Config, SuiteKind};
use crate::util::error::InputError;
use std::path::Path;

/// Refuses a pull request that changes a dataset file of any dataset of `config`, naming them.
pub fn refuse_dataset_changes(config: &Config, base: &TrustedBase) -> Result<(), InputError> {
    (config.dataset_configs().iter()).try_for_each(|one| refuse_own(one, base))
}

/// [`refuse_dataset_changes`] for the one dataset of `config`.
fn refuse_own(config: &Config, base: &TrustedBase) -> Result<(), InputError> {
    let dataset = &config.dataset;
    let mut paths: Vec<&Path> = vec![&dataset.gold];
    let optional = [
        &dataset.databases,
        &dataset.tables,
        &dataset.gold_results,
        &dataset.gold_sql,
        &dataset.eval,
    ];
    paths.extend(optional.into_iter().flatten().map(|p| p.as_path()));
    if config.suite.kind == SuiteKind::Directory {
        paths.extend(config.suite.path.as_deref());
    }
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
            "the pull request changes dataset files ({}); a pull request is judged with the \
             base commit's dataset, so merge dataset changes on the base branch first",
            changed.join(", ")
        ),
    })
}
