//! SQL analysis: queries in the Spider clause structure that the official evaluator builds
//! (`process_sql.py`), and the official hardness classifier over it.
//!
//! The structure is what exact set match compares and what hardness counts; it is produced by
//! tokenizing with sqlparser and parsing the way the official recursive-descent parser does, so
//! that it accepts, rejects and resolves queries exactly as the published numbers assume.

pub mod facts;
pub mod hardness;
pub mod ir;
pub mod parse;
pub mod plus;
mod tokens;

/// Why a query has no Spider structure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SqlError(pub String);
