//! Each engine kind's factory ([`crate::engine::plugin::EngineFactory`]), one file each, listed
//! in [`crate::engine::registry::ENGINES`].

pub mod duckdb;
pub mod mysql;
pub mod mysql_clones;
pub mod postgres;
pub mod postgres_clones;
pub mod sqlite;
#[cfg(test)]
pub mod toy;
pub mod with_clones;
