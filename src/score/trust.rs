//! sqlgate's own state in a pull-request run: which provider cache entries the run may use
//! (those the base commit's baseline recorded; none in `baseline update`), which gold-cache
//! entries (the same, and none outside a pull-request run), and the notes that tell the reader
//! which state files the pull request changed and that the run did not use them.

use crate::input::config::Config;
use crate::input::provider_config::ProviderKind;
use crate::input::trusted::Snapshot;
use crate::providers::{CacheTrust, Providers};
use crate::util::error::InputError;
use serde::Deserialize;
use std::collections::HashSet;

/// How many changed file names a note lists before it only counts them.
const LISTED_FILES: usize = 5;

/// The provider cache entries a run may use: all of them outside a pull-request run; in one,
/// only those whose digests the base commit's baseline recorded (none without a baseline).
pub fn cache_trust(config: &Config, snapshot: &Snapshot) -> Result<CacheTrust, InputError> {
    if !snapshot.is_pull_request() {
        return Ok(CacheTrust::All);
    }
    let recorded = recorded::<RecordedProviders>(config, snapshot, "provider_cache")?;
    Ok(CacheTrust::Recorded(
        recorded.map(|r| r.provider_cache).unwrap_or_default(),
    ))
}

/// The provider cache entries `baseline update` may use: none, so every provider is asked
/// again and the baseline records only replies its own run got. Trusting the entries the
/// replaced baseline recorded let a merged pull request that forged cache entries and wrote
/// their digests (anyone can compute them) into `baseline.json` carry them into every later
/// baseline (red team round 41, on the gold cache; the judge cache is the same).
pub fn baseline_cache_trust() -> CacheTrust {
    CacheTrust::Recorded(HashSet::new())
}

/// The distilled suite's gold-cache entries a run may use: in a pull-request run, those whose
/// digests ([`crate::suites::gold_cache::entry_digest`]) the base commit's baseline records
/// (`gold_cache`); in any other run (`baseline update` included) none, so every gold is
/// executed and the baseline it writes records rows computed by the run itself. A key anyone
/// can compute vouches for no rows, and neither does a digest anyone can compute written into
/// a baseline a merged pull request changed (red team round 41): at worst that lasts until the
/// next `baseline update`, like any score such a pull request forged.
pub fn gold_cache_trust(
    config: &Config,
    snapshot: &Snapshot,
) -> Result<HashSet<String>, InputError> {
    if !snapshot.is_pull_request() {
        return Ok(HashSet::new());
    }
    let recorded = recorded::<RecordedGolds>(config, snapshot, "gold_cache")?;
    Ok(recorded.map(|r| r.gold_cache).unwrap_or_default())
}

/// The `provider_cache` field of a baseline.
#[derive(Deserialize)]
struct RecordedProviders {
    #[serde(default)]
    provider_cache: HashSet<String>,
}

/// The `gold_cache` field of a baseline.
#[derive(Deserialize)]
struct RecordedGolds {
    #[serde(default)]
    gold_cache: HashSet<String>,
}

/// The field `key` of the run's baseline (the base commit's in a pull-request run), read as
/// `T`; `None` without a baseline, exit 2 naming the file and `key` when it is malformed.
fn recorded<T: serde::de::DeserializeOwned>(
    config: &Config,
    snapshot: &Snapshot,
    key: &str,
) -> Result<Option<T>, InputError> {
    let Some(section) = &config.baseline else {
        return Ok(None);
    };
    let Some(bytes) = snapshot.read(&section.path)?.bytes else {
        return Ok(None);
    };
    let recorded = serde_json::from_slice(&bytes)
        .map_err(|e| InputError::malformed(&section.path, key, e.to_string()))?;
    Ok(Some(recorded))
}

/// The note naming the gold-cache entries a run needed but did not use, because no baseline it
/// trusts records them (forged, brought by a merged pull request, or any cache without a
/// baseline) or they did not decode: their gold queries were executed again.
pub fn untrusted_gold_rows(cache: &crate::suites::gold_cache::GoldCache) -> Option<String> {
    let untrusted = cache.untrusted();
    let first = untrusted.first()?;
    Some(format!(
        "{} entries of {} are not recorded by the baseline this run trusts (or there is none), \
         so their gold queries were executed again; the first: {first}",
        untrusted.len(),
        cache.path().display()
    ))
}

/// Notes of a pull-request run on sqlgate's state: suite and cache files the pull request
/// changes (never used), and provider cache entries that were not the base's (asked again).
pub fn state_notes(
    (config, snapshot): (&Config, &Snapshot),
    providers: &Providers,
) -> Result<Vec<String>, InputError> {
    if !snapshot.is_pull_request() {
        return Ok(Vec::new());
    }
    let mut notes = Vec::new();
    if let Some(root) = &config.suite.path {
        if config.suite.kind != crate::input::config::SuiteKind::Directory {
            let changed = snapshot.changed_under(root)?;
            if !changed.is_empty() {
                notes.push(format!(
                    "this pull request changes the distilled suite ({}); the run did not use \
                     them: every suite file was checked against the base commit's manifests and \
                     gold results were taken only from the base commit's cache entries its \
                     baseline records",
                    listed(&changed)
                ));
            }
        }
    }
    for (kind, provider) in providers.configured() {
        let dir = provider_dir(config, kind);
        let changed = match &dir {
            Some(dir) => snapshot.changed_under(dir)?,
            None => Vec::new(),
        };
        if !changed.is_empty() {
            notes.push(format!(
                "this pull request changes the {} cache ({}); entries the base commit's baseline \
                 did not record were not used",
                kind.key(),
                listed(&changed)
            ));
        }
        let untrusted = provider.untrusted_entries();
        if untrusted > 0 {
            notes.push(format!(
                "{untrusted} {} cache entries were not written by a base-branch run (the base \
                 commit's baseline does not record them, or they are not regular files of the \
                 cache folder), so the provider was asked again",
                kind.key()
            ));
        }
    }
    Ok(notes)
}

/// One note per provider whose cache held entries that could not be read (symlinks, not
/// regular files, over the bound) and one for entries that could not be written: how many,
/// and why the first one failed, so a cache folder of symlinks costs one stderr line, not one
/// per entry.
pub fn cache_failure_notes(providers: &Providers) -> Vec<String> {
    let mut notes = Vec::new();
    for (kind, provider) in providers.configured() {
        let (unreadable, unwritable) = provider.cache_failures();
        let kind = kind.key();
        if unreadable.count > 0 {
            notes.push(format!(
                "{} {kind} cache entries could not be read and were not used (the provider was \
                 asked again); the first: {}",
                unreadable.count, unreadable.first
            ));
        }
        if unwritable.count > 0 {
            notes.push(format!(
                "{} {kind} cache entries could not be written (later runs ask the provider \
                 again); the first: {}",
                unwritable.count, unwritable.first
            ));
        }
    }
    notes
}

/// In a pull-request run, the note naming the schemas whose suite was distilled again because
/// the base commit holds none for these inputs (or lacks one of its files).
pub fn rebuilt_suites(
    snapshot: &Snapshot,
    report: &crate::suites::distill::report::SuiteReport,
) -> Option<String> {
    snapshot.base_commit.as_ref()?;
    let rebuilt: Vec<String> = report
        .schemas
        .iter()
        .filter(|s| s.reuse != crate::suites::distill::report::Reuse::Cached)
        .map(|s| format!("`{}`", s.db_id))
        .collect();
    (!rebuilt.is_empty()).then(|| {
        format!(
            "the base commit holds no complete distilled suite for {} (the inputs changed, or a \
             file is missing), so it was distilled again for this run",
            rebuilt.join(", ")
        )
    })
}

fn provider_dir(config: &Config, kind: ProviderKind) -> Option<std::path::PathBuf> {
    let provider = match kind {
        ProviderKind::Judge => config.judge.as_ref(),
        ProviderKind::Embeddings => config.embeddings.as_ref(),
    };
    provider.and_then(|p| p.cache_dir.clone())
}

fn listed(files: &[String]) -> String {
    let shown: Vec<&str> = files
        .iter()
        .take(LISTED_FILES)
        .map(String::as_str)
        .collect();
    match files.len() - shown.len() {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}
