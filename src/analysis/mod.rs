//! Stage 5, analyse and gate: per-item records, the baseline store, accuracies, FP / FN against
//! the reference, Kendall tau across systems, continuous scores on the reference's failures, the
//! paired statistical tests and the gate verdict.
//!
//! Enters: an [`crate::score::evaluation::Evaluation`] and a stored baseline. Leaves:
//! [`records::ItemRecord`]s, [`agreement::Analysis`], [`gate::GateResult`]. May import every
//! stage before it; must not import report, ci or commands.

pub mod agreement;
pub mod audit;
pub mod baseline;
pub mod datasets;
pub mod drift;
pub mod failures;
pub mod features;
pub mod freshness;
pub mod gate;
pub mod records;
pub mod review;
pub mod stats;
pub mod verdict;
