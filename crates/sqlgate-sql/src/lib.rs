//! sqlgate's SQL front end (the stage `sql`: schemas, Spider's parse and hardness, schema
//! facts, ESM+'s canonical form), in a crate of its own: it can use only `util`
//! (docs/ARCHITECTURE.md, "Crates"). The modules keep their paths in the gate (`crate::sql::...`).

use sqlgate_util::util;

pub mod sql;
