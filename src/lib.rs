//! sqlgate: score Text-to-SQL predictions with the metrics the research field trusts, compare
//! them with a stored baseline, and gate pull requests on regressions.

pub mod analysis;
pub mod baseline;
pub mod config;
pub mod counterexample;
pub mod dataset;
pub mod denotation;
pub mod distill;
pub mod error;
pub mod exec;
pub mod gate;
pub mod github;
pub mod gold_cache;
pub mod metrics;
pub mod neighbors;
pub mod output;
pub mod pipeline;
pub mod predictions;
pub mod profile;
pub mod progress;
pub mod provider;
pub mod report;
pub mod run;
pub mod scatter;
pub mod schema;
pub mod shard;
pub mod spider_text;
pub mod sql;
pub mod stats;
pub mod suite;
pub mod value;
