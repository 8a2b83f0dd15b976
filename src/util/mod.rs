//! Helpers every stage shares: typed input errors, file reading and atomic writing, content
//! digests, progress bars, the workspace rule for configured paths, credential scrubbing, the
//! symlink-proof state folders (suites, caches), and the guarded constructor of every SQLite connection.
//!
//! Enters: nothing of sqlgate's. Leaves: [`error::InputError`], byte and text readers, writers,
//! hex digests. Must not import any other sqlgate module.

pub mod digest;
pub mod error;
pub mod fs;
pub mod progress;
pub mod scrub;
pub mod sqlite;
pub mod state;
pub mod workspace;
