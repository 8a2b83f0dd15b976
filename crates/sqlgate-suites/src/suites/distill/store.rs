//! The on-disk suite: `<path>/<db_id>/` holds the original database, the kept databases
//! (`<db_id>_r<candidate>.sqlite`) and `manifest.json`, so the folder is also a suite in the
//! official release layout. The manifest records the content hash the suite was built for: the
//! same inputs find it and do no work; the same schema with other gold queries extends it.
//!
//! The manifest also records each file's SHA-256, checked before a file is used: a database
//! that does not match stops the run naming it, so an edited suite never turns into prediction
//! mismatches. In a pull-request run the manifest is the base commit's, or one the base's
//! baseline recorded the digest of (a suite cached outside git); the pull request's copy is
//! never read otherwise, so a trimmed or forged manifest changes nothing.

use crate::suites::distill::SuiteTrust;
use crate::util::error::InputError;
use crate::util::state::StateDir;
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
    /// SHA-256 of the file, checked before the file is used.
    pub sha256: String,
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
    /// SHA-256 of the file, checked before the file is used.
    pub sha256: String,
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

/// Largest manifest read (a schema with thousands of gold queries stays far below it).
const MANIFEST_LIMIT: u64 = 64 << 20;

impl Manifest {
    /// Every file of the suite with its recorded size and digest: the original first, then the
    /// kept databases in candidate order.
    pub fn files(&self) -> impl Iterator<Item = (&str, u64, &str)> {
        self.original
            .iter()
            .map(|o| (o.file.as_str(), o.bytes, o.sha256.as_str()))
            .chain(
                self.kept
                    .iter()
                    .map(|k| (k.file.as_str(), k.bytes, k.sha256.as_str())),
            )
    }
}

/// A schema's file below the suite root.
pub fn relative(db_id: &str, file: &str) -> PathBuf {
    Path::new(db_id).join(file)
}

/// The digest a baseline records of a manifest: SHA-256 of the JSON sqlgate writes for it.
pub fn manifest_digest(manifest: &Manifest) -> String {
    use sha2::Digest;
    crate::util::digest::hex(&sha2::Sha256::digest(manifest_text(manifest)))
}

fn manifest_text(manifest: &Manifest) -> String {
    let mut text = serde_json::to_string_pretty(manifest).expect("a manifest serialises");
    text.push('\n');
    text
}

/// The manifest a schema's suite is checked against (see [`SuiteTrust`]), with words saying
/// where it came from. `None` when there is none the trust admits, or it does not parse (a
/// stale suite is rebuilt rather than trusted); an error when the folder's manifest is not a
/// regular file below real folders.
pub fn read_manifest(
    state: &StateDir,
    db_id: &str,
    trust: &SuiteTrust,
) -> Result<Option<(Manifest, String)>, InputError> {
    let path = relative(db_id, MANIFEST);
    let parse = |bytes: Vec<u8>| serde_json::from_slice::<Manifest>(&bytes).ok();
    let shown = state.path(&path).display().to_string();
    let Some(base) = &trust.base else {
        let manifest = state.read(&path, MANIFEST_LIMIT)?.and_then(parse);
        return Ok(manifest.map(|m| (m, format!("its manifest {shown}"))));
    };
    if let Some(bytes) = base.read(&state.path(&path)) {
        let source = format!(
            "the base commit's manifest ({})",
            crate::input::config::short_commit(&base.commit)
        );
        return Ok(parse(bytes).map(|m| (m, source)));
    }
    let recorded = state
        .read(&path, MANIFEST_LIMIT)?
        .and_then(parse)
        .filter(|m| trust.recorded.contains(&manifest_digest(m)));
    Ok(recorded.map(|m| {
        (
            m,
            format!("its manifest {shown}, recorded by the base's baseline"),
        )
    }))
}

/// What checking a suite's files against its manifest found.
#[derive(Debug, PartialEq, Eq)]
pub enum Check {
    /// Every file is there with its recorded content.
    Complete,
    /// This file is absent (an interrupted run): the suite is rebuilt.
    Missing(String),
}

/// Checks every file of a schema's suite against the manifest's size and SHA-256; a file that
/// differs (or is a symlink, or not a regular file) is an error naming it. `trusted` says where
/// the manifest came from, for the message.
pub fn verify(
    state: &StateDir,
    db_id: &str,
    manifest: &Manifest,
    trusted: &str,
) -> Result<Check, InputError> {
    for (file, bytes, sha256) in manifest.files() {
        let path = relative(db_id, file);
        let Some((actual, size)) = state.digest(&path, bytes)? else {
            return Ok(Check::Missing(file.to_string()));
        };
        if size != bytes || actual != sha256 {
            let found = if actual.is_empty() {
                format!("{size} bytes")
            } else {
                format!("SHA-256 {actual}")
            };
            return Err(InputError::malformed(
                &state.path(&path),
                "suite",
                format!(
                    "does not match {trusted} ({found}; recorded {bytes} bytes, SHA-256 \
                     {sha256}): the suite database was changed after sqlgate wrote it, so its \
                     verdicts cannot be trusted; restore it, or delete the schema's folder to \
                     distill it again"
                ),
            ));
        }
    }
    Ok(Check::Complete)
}

/// Writes one file of a schema's suite.
pub fn write_file(
    state: &StateDir,
    db_id: &str,
    file: &str,
    bytes: &[u8],
) -> Result<(), InputError> {
    state.write(&relative(db_id, file), bytes)
}

/// Writes a manifest (pretty JSON, stable key order).
pub fn write_manifest(
    state: &StateDir,
    db_id: &str,
    manifest: &Manifest,
) -> Result<(), InputError> {
    write_file(state, db_id, MANIFEST, manifest_text(manifest).as_bytes())
}

/// Removes the regular `.sqlite` files of the schema's folder that the manifest does not list
/// (left from an interrupted or older run), so the folder holds exactly the suite; symlinks
/// are left alone, so nothing outside the folder is ever deleted.
pub fn remove_unlisted(
    state: &StateDir,
    db_id: &str,
    manifest: &Manifest,
) -> Result<(), InputError> {
    state.remove_files(Path::new(db_id), |name| {
        name.contains(".sqlite") && !manifest.files().any(|(file, _, _)| file == name)
    })
}
