//! Test suites: the databases each item runs on for test-suite accuracy (seed 000).
//!
//! `suite.kind: directory` reads the official release layout unchanged: `<path>/<db_id>/` holds
//! the item's databases, every file whose name contains `.sqlite` (the official rule).

use crate::util::error::InputError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Databases per db_id.
#[derive(Debug, Clone, Default)]
pub struct Suite {
    databases: BTreeMap<String, Vec<PathBuf>>,
}

impl Suite {
    /// Reads a suite folder for the given db_ids; a db_id without a folder has no databases
    /// (its items are skipped by `ts`) when `allow_missing`, and is an error otherwise.
    pub fn directory<'a>(
        root: &Path,
        db_ids: impl IntoIterator<Item = &'a str>,
        allow_missing: bool,
    ) -> Result<Suite, InputError> {
        let mut databases = BTreeMap::new();
        for db_id in db_ids {
            let folder = root.join(db_id);
            let files = match std::fs::read_dir(&folder) {
                Ok(entries) => {
                    let mut files: Vec<PathBuf> = entries
                        .filter_map(Result::ok)
                        .map(|e| e.path())
                        .filter(|p| p.file_name().is_some_and(is_database_name))
                        .collect();
                    files.sort();
                    for file in &files {
                        crate::util::workspace::check_database(
                            &folder,
                            file,
                            crate::util::workspace::SQLITE_SIDE_FILES,
                        )
                        .map_err(|message| {
                            InputError::malformed(
                                file,
                                format!("suite database of `{db_id}`"),
                                message,
                            )
                        })?;
                    }
                    files
                }
                Err(_) if allow_missing => Vec::new(),
                Err(e) => {
                    return Err(InputError::malformed(
                        &folder,
                        format!("suite for `{db_id}`"),
                        format!(
                            "{e} (set `dataset.skip_missing_databases: true` to skip its items)"
                        ),
                    ))
                }
            };
            databases.insert(db_id.to_string(), files);
        }
        Ok(Suite { databases })
    }

    /// A distilled suite: exactly the databases its manifests list (checked against their
    /// digests by the caller), never whatever else lies in the folders.
    pub fn listed(databases: impl IntoIterator<Item = (String, Vec<PathBuf>)>) -> Suite {
        let mut databases: BTreeMap<String, Vec<PathBuf>> = databases.into_iter().collect();
        for files in databases.values_mut() {
            files.sort();
        }
        Suite { databases }
    }

    /// The suite databases of a db_id, in file-name order.
    pub fn databases(&self, db_id: &str) -> &[PathBuf] {
        self.databases.get(db_id).map_or(&[], Vec::as_slice)
    }
}

/// Whether a file of a suite folder is a database: `.sqlite` in its name, and not one of
/// SQLite's side files (`-wal`, `-shm`, `-journal`), which are refused beside a database.
fn is_database_name(name: &std::ffi::OsStr) -> bool {
    let name = name.to_string_lossy();
    name.contains(".sqlite")
        && !["-wal", "-shm", "-journal"]
            .iter()
            .any(|s| name.ends_with(s))
}
