//! sqlgate's test suites (the stage `suites`: neighbour queries, distillation, domain
//! databases, the gold cache, counterexamples), in a crate of its own: it can use only `util`,
//! `sql`, `input` and `engine`, never a metric, the gate or the report (docs/ARCHITECTURE.md,
//! "Crates"). The modules keep their paths in the gate (`crate::suites::...`).

use sqlgate_engine::engine;
use sqlgate_input::input;
use sqlgate_sql::sql;
use sqlgate_util::util;

pub mod suites;
