//! The content digest of a `suite.kind: directory` suite: the SHA-256 of each of its files, by
//! path in the suite folder (`<db_id>/<file>`). The suite is part of the benchmark, and a pull
//! request can reach its files in ways git's list of changed files does not name (a link the
//! base commits, a submodule), so the baseline keeps the digests and a run compares them.

use crate::input::config::{Config, SuiteKind};
use crate::util::error::InputError;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

/// The digests of `config`'s directory suite as the run will read it (links followed, as the
/// suite is read); `None` for any other suite.
pub fn of(config: &Config) -> Result<Option<BTreeMap<String, String>>, InputError> {
    with_read(config, &BTreeMap::new())
}

/// The digests of `config`'s directory suite, those of the files the run read (`read`: the
/// digests of its private copies, by `<db_id>/<file>`) as it read them, and every other file of
/// the folder digested where it lies; `None` for any other suite. The files the metrics read are
/// thus vouched for by the bytes they read, never by a second read that a file swapped back
/// meanwhile would pass.
pub fn with_read(
    config: &Config,
    read: &BTreeMap<String, String>,
) -> Result<Option<BTreeMap<String, String>>, InputError> {
    let (SuiteKind::Directory, Some(folder)) = (config.suite.kind, &config.suite.path) else {
        return Ok(None);
    };
    let mut digests = read.clone();
    for db_folder in sorted_entries(folder)? {
        if !db_folder.is_dir() {
            continue;
        }
        for file in sorted_entries(&db_folder)? {
            let name = relative_name(folder, &file);
            if file.is_file() && !read.contains_key(&name) {
                digests.insert(name, file_digest(&file)?);
            }
        }
    }
    Ok(Some(digests))
}

/// The files whose digests differ between `recorded` and `now`, each named (and said missing
/// or new where one side lacks it).
pub fn differences(
    recorded: &BTreeMap<String, String>,
    now: &BTreeMap<String, String>,
) -> Vec<String> {
    let names: std::collections::BTreeSet<&String> = recorded.keys().chain(now.keys()).collect();
    names
        .into_iter()
        .filter_map(|name| match (recorded.get(name), now.get(name)) {
            (Some(before), Some(after)) if before != after => Some(format!("`{name}`")),
            (Some(_), None) => Some(format!("`{name}` (only in the baseline)")),
            (None, Some(_)) => Some(format!("`{name}` (not in the baseline)")),
            _ => None,
        })
        .collect()
}

/// The entries of `folder`, sorted by name.
fn sorted_entries(folder: &Path) -> Result<Vec<std::path::PathBuf>, InputError> {
    let listed = std::fs::read_dir(folder).map_err(|e| InputError::read(folder, e))?;
    let mut paths = Vec::new();
    for entry in listed {
        paths.push(entry.map_err(|e| InputError::read(folder, e))?.path());
    }
    paths.sort();
    Ok(paths)
}

/// `file`'s path below `folder`, `/`-separated.
fn relative_name(folder: &Path, file: &Path) -> String {
    let inside = file.strip_prefix(folder).unwrap_or(file);
    (inside.components())
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The hex SHA-256 of `file`'s bytes, streamed.
fn file_digest(file: &Path) -> Result<String, InputError> {
    let mut hasher = Sha256::new();
    std::fs::File::open(file)
        .and_then(|mut opened| std::io::copy(&mut opened, &mut hasher))
        .map_err(|e| InputError::read(file, e))?;
    Ok(crate::util::digest::hex(&hasher.finalize()))
}
