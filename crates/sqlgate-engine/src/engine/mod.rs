//! Stage 2, execute and compare: the locked-down SQLite executor, result values and rows, and the
//! denotation comparison profiles (`spider-ts`, `bird`, `strict`, `spider2`) with the official text
//! rewrites.
//!
//! Enters: SQL text and a database file. Leaves: [`value::Row`]s (a denotation), timeouts and
//! errors, and the verdict of a [`profile::Profile`] on two denotations. May import `util`,
//! `sql` and `input`; must not import suites, metrics or anything later.

pub mod denotation;
#[cfg(feature = "duckdb")]
pub mod duckdb;
pub mod evalbench;
pub mod exec;
pub mod kinds;
pub mod livesql;
pub mod load;
pub mod plugin;
pub mod profile;
pub mod pyset;
pub mod pyvalue;
pub mod read_csv;
pub mod registry;
pub mod server;
pub mod spider2;
#[cfg(feature = "duckdb")]
pub mod spider2_dbt;
pub mod sqlite;
pub mod state;
pub mod to_csv;
pub mod value;
