//! Stage 4, score: runs every configured metric over every (system, item) pair, in parallel,
//! and collects the per-item results.
//!
//! Enters: the config, the dataset, the systems, the metric registry. Leaves:
//! [`evaluation::Evaluation`] (per-item [`crate::metrics::Score`]s). May import every stage
//! before it; must not import analysis, report, ci or commands.

pub mod budget;
pub mod data;
pub mod evaluation;
pub mod gold_check;
pub mod stability;
pub mod suite_digest;
pub mod trust;
