//! The equivalence rules of seed 001 Table 1, one file per rule or family of rules. Each file
//! adds its rules' methods to [`Rewriter`](super::rewrite::Rewriter), which calls them in a
//! fixed order, and holds their tests. Rule 14 (table aliases) has no method: the resolver
//! applies it (see `resolve.rs`).

mod anti_join;
mod distinct;
mod exists;
mod extremes;
mod group_by_key;
mod joins;
mod literals;
mod nulls;
mod self_in;
mod set_ops;
mod star;
