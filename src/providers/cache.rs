//! The on-disk cache of provider answers: one file per key (a SHA-256 of what was sent) below
//! the cache folder, read and written through [`crate::util::state::StateDir`] (no symlink is
//! followed), and used only when [`CacheTrust`] admits the entry.

use crate::util::error::InputError;
use crate::util::state::StateDir;
use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Which cache entries a run may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheTrust {
    /// Every entry (a run on the base branch, a local run).
    All,
    /// Only entries with these digests ([`entry_digest`]): those the base commit's baseline
    /// recorded, in a pull-request run.
    Recorded(HashSet<String>),
}

/// The digest that identifies one cache entry: SHA-256 of its key and its stored text, so an
/// entry someone else wrote under the same key has another digest.
pub fn entry_digest(key: &str, text: &str) -> String {
    crate::util::digest::content_hash([key.as_bytes(), text.as_bytes()])
}

/// Responses on disk, one file per key, written atomically, never through a symlink.
pub(super) struct Cache {
    state: StateDir,
    trust: CacheTrust,
    used: Mutex<BTreeSet<String>>,
    untrusted: AtomicU64,
    unreadable: Mutex<Failures>,
    unwritable: Mutex<Failures>,
}

/// Cache entries that could not be read or written (a symlink on the way, not a regular file,
/// over the size bound, a full disk): counted and reported once per run, naming the first,
/// instead of one stderr line each.
#[derive(Debug, Default, Clone)]
pub struct Failures {
    /// How many entries failed.
    pub count: u64,
    /// Why the first of them failed.
    pub first: String,
}

impl Failures {
    /// Counts one more failure, keeping the first one's reason.
    fn add(failures: &Mutex<Failures>, error: &InputError) {
        let mut failures = failures.lock().unwrap_or_else(|p| p.into_inner());
        if failures.count == 0 {
            failures.first = error.to_string();
        }
        failures.count += 1;
    }
}

impl Cache {
    /// The cache in `dir`, trusting every entry until told otherwise.
    pub(super) fn new(dir: &Path) -> Cache {
        Cache {
            state: StateDir::new(dir),
            trust: CacheTrust::All,
            used: Mutex::default(),
            untrusted: AtomicU64::new(0),
            unreadable: Mutex::default(),
            unwritable: Mutex::default(),
        }
    }

    /// Uses only the entries `trust` admits from now on.
    pub(super) fn set_trust(&mut self, trust: CacheTrust) {
        self.trust = trust;
    }

    /// Digests of the entries used or written so far.
    pub(super) fn entries(&self) -> BTreeSet<String> {
        self.used.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Entries found but not used (not admitted, or not regular files of the folder).
    pub(super) fn untrusted(&self) -> u64 {
        self.untrusted.load(Ordering::Relaxed)
    }

    /// The entries that could not be read, and those that could not be written, so far.
    pub(super) fn failures(&self) -> (Failures, Failures) {
        let snapshot = |f: &Mutex<Failures>| f.lock().unwrap_or_else(|p| p.into_inner()).clone();
        (snapshot(&self.unreadable), snapshot(&self.unwritable))
    }

    fn relative(key: &str) -> PathBuf {
        Path::new(&key[..2]).join(format!("{key}.json"))
    }

    /// The stored text under `key`, when there is one the trust admits.
    pub(super) fn get(&self, key: &str) -> Option<String> {
        let bytes = match self
            .state
            .read(&Self::relative(key), super::MAX_RESPONSE_BYTES)
        {
            Ok(bytes) => bytes?,
            Err(e) => {
                Failures::add(&self.unreadable, &e);
                self.untrusted.fetch_add(1, Ordering::Relaxed);
                return None;
            }
        };
        let text = String::from_utf8(bytes).ok()?;
        let digest = entry_digest(key, &text);
        let admitted = match &self.trust {
            CacheTrust::All => true,
            CacheTrust::Recorded(digests) => digests.contains(&digest),
        };
        if !admitted {
            self.untrusted.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        self.used
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(digest);
        Some(text)
    }

    /// Stores `text`; a cache that cannot be written only costs a future request, so the
    /// failure is counted (reported once per run) and the run goes on.
    pub(super) fn put(&self, key: &str, text: &str) {
        let relative = Self::relative(key);
        if let Err(e) = self.state.write(&relative, text.as_bytes()) {
            Failures::add(&self.unwritable, &e);
            return;
        }
        self.used
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(entry_digest(key, text));
    }
}
