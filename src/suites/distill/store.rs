//! The on-disk suite: `<path>/<db_id>/` holds the original database, the kept databases
//! (`<db_id>_r<candidate>.sqlite`) and `manifest.json`, so the folder is also a suite in the
//! official release layout. The manifest records the content hash the suite was built for: the
//! same inputs find it and do no work; the same schema with other gold queries extends it.

use crate::util::error::InputError;
use crate::util::fs::{cannot_write, write_creating_dirs};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Name of the manifest file in each schema folder.
pub const MANIFEST: &str = "manifest.json";

/// The record of one schema's distilled suite.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Content hash of (schema, gold queries, generator version, seed, options).
    pub key: String,
    /// Content hash of everything but the gold queries: suites with the same base extend.
    pub base_key: String,
    /// Candidates examined so far (candidate numbers `0..examined`).
    pub examined: u64,
    /// The original database's copy in the folder, when there is one.
    pub original: Option<OriginalFile>,
    /// Kept random databases, in candidate order.
    pub kept: Vec<KeptFile>,
    /// Per distinct gold query: its neighbors and which stay undistinguished.
    pub golds: Vec<GoldRecord>,
}

/// The copy of the original database (always part of the suite).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OriginalFile {
    /// File name in the folder.
    pub file: String,
    /// Rows over all tables.
    pub rows: u64,
    /// File size.
    pub bytes: u64,
}

/// One kept random database.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct KeptFile {
    /// File name in the folder.
    pub file: String,
    /// The candidate number it was generated from.
    pub candidate: u64,
    /// Rows over all tables.
    pub rows: u64,
    /// File size.
    pub bytes: u64,
    /// A natural database (respects what the original data says about the domain) rather than
    /// one of the free generator.
    #[serde(default)]
    pub natural: bool,
}

/// What distillation found for one gold query.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GoldRecord {
    /// The gold query as in the dataset.
    pub gold: String,
    /// Whether the gold runs on the suite.
    pub runs: bool,
    /// Neighbors that execute.
    pub neighbors: usize,
    /// Neighbors no suite database distinguishes.
    pub undistinguished: Vec<String>,
    /// Whether the gold returns rows on some suite database (seed 000, A.2).
    pub nonempty: bool,
}

/// The folder of one schema's suite.
pub fn schema_folder(root: &Path, db_id: &str) -> PathBuf {
    root.join(db_id)
}

/// Reads a schema's manifest; `None` when absent, unreadable or naming a missing file (a stale
/// or partial suite is rebuilt rather than trusted).
pub fn read_manifest(folder: &Path) -> Option<Manifest> {
    let bytes = std::fs::read(folder.join(MANIFEST)).ok()?;
    let manifest: Manifest = serde_json::from_slice(&bytes).ok()?;
    let files = manifest
        .kept
        .iter()
        .map(|k| k.file.as_str())
        .chain(manifest.original.as_ref().map(|o| o.file.as_str()));
    files
        .into_iter()
        .all(|f| folder.join(f).is_file())
        .then_some(manifest)
}

/// Writes a manifest (pretty JSON, stable key order).
pub fn write_manifest(folder: &Path, manifest: &Manifest) -> Result<(), InputError> {
    let mut text = serde_json::to_string_pretty(manifest).expect("a manifest serialises");
    text.push('\n');
    write_creating_dirs(&folder.join(MANIFEST), text.as_bytes())
}

/// Removes `.sqlite` files of the folder that the manifest does not list (left from an
/// interrupted or older run), so the folder holds exactly the suite.
pub fn remove_unlisted(folder: &Path, manifest: &Manifest) -> Result<(), InputError> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Ok(());
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let listed = manifest.kept.iter().any(|k| k.file == name)
            || manifest.original.as_ref().is_some_and(|o| o.file == name);
        if name.contains(".sqlite") && !listed {
            std::fs::remove_file(entry.path()).map_err(|e| cannot_write(&entry.path(), e))?;
        }
    }
    Ok(())
}
