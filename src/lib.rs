//! sqlgate: score Text-to-SQL predictions with the metrics the research field trusts, compare
//! them with a stored baseline, and gate pull requests on regressions.
//!
//! The modules follow the pipeline, in order; a module imports only modules listed above it
//! (`tests/it/layout.rs` enforces it, `docs/ARCHITECTURE.md` describes the boundaries).

pub mod util;

pub mod sql;

pub mod input;

pub mod engine;

pub mod providers;

pub mod suites;

pub mod metrics;

pub mod score;

pub mod analysis;

pub mod trust;

pub mod judge;

pub mod evidence;

pub mod report;

pub mod ci;

pub mod commands;
