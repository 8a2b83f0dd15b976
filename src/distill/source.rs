//! The neighbor queries and gold constants of `src/neighbors.rs`, as distillation's source.

use super::NeighborSource;
use crate::neighbors::Conditions;
use crate::schema::Schema;
use crate::value::Value;

/// Neighbors from sqlgate's neighbor-query generator (seed 000, section 3.1).
pub struct GeneratedNeighbors;

impl NeighborSource for GeneratedNeighbors {
    fn neighbors(&self, gold: &str, schema: &Schema, seed: u64) -> Vec<String> {
        crate::neighbors::neighbors(gold, schema, seed)
    }

    fn constants(&self, gold: &str) -> Vec<Value> {
        crate::neighbors::constants(gold)
    }

    fn conditions(&self, gold: &str) -> Conditions {
        crate::neighbors::conditions(gold)
    }
}
