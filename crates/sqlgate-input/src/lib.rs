//! sqlgate's inputs (the stage `input`: the config, datasets and their gold items, predictions,
//! the trusted inputs as data), in a crate of its own: it can use only `util` and `sql`
//! (docs/ARCHITECTURE.md, "Crates"). The modules keep their paths in the gate
//! (`crate::input::...`).

use sqlgate_sql::sql;
use sqlgate_util::util;

pub mod input;
