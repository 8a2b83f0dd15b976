//! sqlgate's engines (the stage `engine`: the SQLite executor, the PostgreSQL and MariaDB
//! servers, denotations and comparison profiles, `sqlgate load`), in a crate of its own: it can
//! use only `util`, `sql` and `input` (docs/ARCHITECTURE.md, "Crates"). The modules keep their
//! paths in the gate (`crate::engine::...`).

use sqlgate_input::input;
use sqlgate_sql::sql;
use sqlgate_util::util;

pub mod engine;
