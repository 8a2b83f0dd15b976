//! The neighbor queries and gold constants of `src/neighbors.rs`, as distillation's source.

use super::NeighborSource;
use crate::engine::value::Value;
use crate::sql::schema::Schema;
use crate::suites::neighbors::Conditions;

/// Neighbors from sqlgate's neighbor-query generator (seed 000, section 3.1).
pub struct GeneratedNeighbors;

impl NeighborSource for GeneratedNeighbors {
    fn neighbors(&self, gold: &str, schema: &Schema, seed: u64) -> Vec<String> {
        crate::suites::neighbors::neighbors(gold, schema, seed)
    }

    fn constants(&self, gold: &str) -> Vec<Value> {
        crate::suites::neighbors::constants(gold)
    }

    fn conditions(&self, gold: &str) -> Conditions {
        crate::suites::neighbors::conditions(gold)
    }
}
