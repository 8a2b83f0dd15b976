//! Stage 1, load: the config, the gold items of a dataset with their schemas and difficulties,
//! and the systems' predictions.
//!
//! Enters: files named by the user (`sqlgate.yml`, gold, `tables.json`, database folders,
//! prediction files). Leaves: [`config::Config`], [`dataset::Dataset`] of
//! [`dataset::GoldItem`]s, [`predictions::System`]s of predictions. May import `util` and `sql`
//! (schemas, hardness); must not import execution, metrics or anything later.

pub mod audit;
pub mod config;
pub mod csv;
pub mod database_file;
pub mod dataset;
pub mod engine;
pub mod evalbench;
pub mod extract;
pub mod kinds;
pub mod limits;
pub mod livesql;
pub mod livesql_post;
pub mod overrides;
pub mod policy;
pub mod predictions;
pub mod provider_config;
pub mod read_config;
pub mod read_dataset;
pub mod soft_f1;
pub mod spider2;
pub mod spider2_dbt;
pub mod spider2_select;
pub mod trusted;
