//! sqlgate: score Text-to-SQL predictions with the metrics the research field trusts, compare
//! them with a stored baseline, and gate pull requests on regressions.
//!
//! The modules follow the pipeline, in order; a module imports only modules listed above it
//! (`tests/it/layout.rs` enforces it, `docs/ARCHITECTURE.md` describes the boundaries). The
//! first stages are crates of their own under `crates/`, re-exported here under their module
//! names: the compiler keeps each of them from importing a later stage.

pub use sqlgate_util::util;

pub use sqlgate_sql::sql;

pub use sqlgate_input::input;

pub use sqlgate_engine::engine;

pub mod providers;

pub use sqlgate_suites::suites;

pub mod metrics;

pub mod score;

pub mod analysis;

pub mod trust;

pub mod judge;

pub mod evidence;

pub mod report;

pub mod ci;

pub mod commands;
