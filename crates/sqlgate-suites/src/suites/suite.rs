//! Test suites: the databases each item runs on for test-suite accuracy (seed 000).
//!
//! `suite.kind: directory` reads the official release layout unchanged: `<path>/<db_id>/` holds
//! the item's databases, every file whose name contains `.sqlite` (the official rule). Each file
//! is copied into a folder of the run's own and digested there, and the metrics read the copies:
//! a file renamed over or rewritten in the working tree while the run reads it changes nothing
//! the run scores, and the digests say what it did read.

use crate::util::error::InputError;
use crate::util::fs::RunFolder;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Databases per db_id.
#[derive(Debug, Clone, Default)]
pub struct Suite {
    databases: BTreeMap<String, Vec<PathBuf>>,
    /// A directory suite's run-private copies, held so they last as long as the suite.
    copies: Option<Arc<RunFolder>>,
    /// A directory suite's files as the run read them: the hex SHA-256 of each copy, by
    /// `<db_id>/<file>`.
    digests: BTreeMap<String, String>,
}

impl Suite {
    /// Reads a suite folder for the given db_ids, copying each database into a run-private
    /// folder; a db_id without a folder has no databases (its items are skipped by `ts`) when
    /// `allow_missing`, and is an error otherwise.
    pub fn directory<'a>(
        root: &Path,
        db_ids: impl IntoIterator<Item = &'a str>,
        allow_missing: bool,
    ) -> Result<Suite, InputError> {
        let copies = RunFolder::create("suite")?;
        let mut suite = Suite::default();
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
            let mut copied = Vec::with_capacity(files.len());
            for file in &files {
                copied.push(suite.copy_in(&copies.folder, db_id, (&folder, file))?);
            }
            suite.databases.insert(db_id.to_string(), copied);
        }
        suite.copies = Some(Arc::new(copies));
        Ok(suite)
    }

    /// Checks suite database `file` of `db_id` (in `folder`) against the workspace rule, copies
    /// it into `<copies>/<db_id>/` under its own name, records the copy's digest and returns the
    /// copy's path.
    fn copy_in(
        &mut self,
        copies: &Path,
        db_id: &str,
        (folder, file): (&Path, &Path),
    ) -> Result<PathBuf, InputError> {
        let refuse =
            |message| InputError::malformed(file, format!("suite database of `{db_id}`"), message);
        crate::util::workspace::check_database(
            folder,
            file,
            crate::util::workspace::SQLITE_SIDE_FILES,
        )
        .map_err(refuse)?;
        let into = copies.join(db_id);
        if !into.exists() {
            std::fs::create_dir(&into).map_err(|e| InputError::read(&into, e))?;
        }
        let name = file.file_name().unwrap_or_default();
        let copy = into.join(name);
        let sha256 = crate::util::fs::copy_digested(file, &copy)
            .map_err(|e| refuse(format!("cannot copy it for the run: {e}")))?;
        let key = format!("{db_id}/{}", name.to_string_lossy());
        self.digests.insert(key, crate::util::digest::hex(&sha256));
        Ok(copy)
    }

    /// A distilled suite: exactly the databases its manifests list (checked against their
    /// digests by the caller), never whatever else lies in the folders.
    pub fn listed(databases: impl IntoIterator<Item = (String, Vec<PathBuf>)>) -> Suite {
        let mut databases: BTreeMap<String, Vec<PathBuf>> = databases.into_iter().collect();
        for files in databases.values_mut() {
            files.sort();
        }
        Suite {
            databases,
            ..Suite::default()
        }
    }

    /// A directory suite's files as the run read them: the hex SHA-256 of each copy, by
    /// `<db_id>/<file>`; empty for a distilled suite.
    pub fn digests(&self) -> &BTreeMap<String, String> {
        &self.digests
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
