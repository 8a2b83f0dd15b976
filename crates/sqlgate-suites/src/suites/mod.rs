//! Stage 2b, test suites: the databases an item is judged on beyond its original one. Neighbour
//! queries, distillation of random databases (seed 000), the cache of gold results, the
//! shrunk counterexamples that explain a test-suite failure, and the check of a claimed
//! equivalence on random databases of the declared schema (`verify`).
//!
//! Enters: the dataset, the config's suite section, the executor. Leaves: a
//! [`suite::Suite`] (databases per schema), cached gold denotations, counterexamples. May import
//! `util`, `sql`, `input`, `engine`; must not import metrics or anything later.

pub mod counterexample;
pub mod distill;
pub mod domain;
pub mod explain;
pub mod gold_cache;
pub mod neighbors;
pub mod storage_class;
pub mod suite;
pub mod ties;
pub mod verify;
