//! Helpers every stage shares: typed input errors, file reading and atomic writing, content
//! digests, progress bars, the workspace rule for configured paths, credential scrubbing, the
//! symlink-proof state folders (suites, caches), and the guarded constructor of every SQLite
//! connection with its watchdog and its bounded replacements for quadratic SQL functions.
//!
//! Enters: nothing of sqlgate's. Leaves: [`error::InputError`], byte and text readers, writers,
//! hex digests, the Actions-log escaping of untrusted text ([`log`]). Must not import any other sqlgate module.

pub mod digest;
pub mod error;
pub mod fs;
pub mod like;
pub mod log;
pub mod memory;
pub mod progress;
pub mod scrub;
pub mod sqlite;
pub mod sqlite_functions;
pub mod state;
pub mod watchdog;
pub mod workspace;
