//! Stage 0, SQL analysis (used by every later stage): schemas (`tables.json` and SQLite files),
//! Spider's official text rewrites, queries in the Spider clause structure that the official
//! evaluator builds (`process_sql.py`), the official hardness classifier over it, the facts a
//! schema declares, and ESM+'s canonical form with its equivalence rules (`plus`).
//!
//! The structure is what exact set match compares and what hardness counts; it is produced by
//! tokenizing with sqlparser and parsing the way the official recursive-descent parser does, so
//! that it accepts, rejects and resolves queries exactly as the published numbers assume.
//!
//! Enters: SQL text and schemas. Leaves: [`ir::Sql`], hardness, [`plus::Query`]. May import
//! `util` only; must not import input, engine or any later stage.

pub mod cuts;
pub mod facts;
pub mod features;
pub mod hardness;
pub mod ir;
pub mod order_calls;
pub mod parse;
pub mod plus;
pub mod schema;
pub mod text;
mod tokens;
pub mod value_choices;

/// Why a query has no Spider structure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SqlError(pub String);
