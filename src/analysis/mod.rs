//! Stage 5, analyse: per-item records, the baseline store, accuracies, FP / FN against the
//! reference, Kendall tau across systems, continuous scores on the reference's failures, and the
//! comparison with the baseline the gate judges (cells, paired statistical tests).
//!
//! Enters: an [`crate::score::evaluation::Evaluation`] and a stored baseline. Leaves:
//! [`records::ItemRecord`]s, [`agreement::Analysis`], [`comparison::Comparison`]s. May import
//! every stage before it; must not import judge, report, ci or commands.

pub mod agreement;
pub mod audit;
pub mod baseline;
pub mod comparison;
pub mod datasets;
pub mod failures;
pub mod features;
pub mod freshness;
pub mod records;
pub mod stats;
