//! Stage 8, publish: GitHub Actions (step summary, outputs, the sticky PR comment) and sharded
//! runs (shard files and their merge).
//!
//! Enters: a rendered report and gate verdict, or shard files. Leaves: API calls, files. May
//! import every stage before it; must not import commands.

pub mod annotations;
pub mod fork;
pub mod github;
pub mod shard;
