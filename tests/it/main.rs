//! The integration tests, one module per area, in one test binary (one link of the crate
//! instead of one per file). `cargo test --test it lifecycle::` runs one module's tests.

mod common;
mod junit_schema;

mod act;
mod adoption;
mod bad_input;
mod baseline_store;
mod benchmark_checks;
mod benchmark_pr;
mod bird;
mod bounded_reads;
mod bounds;
mod clone_catalogs;
mod comment_layout;
mod conformance;
mod datasets;
mod distill;
#[cfg(feature = "duckdb")]
mod duckdb;
#[cfg(feature = "duckdb")]
mod duckdb_conformance;
#[cfg(feature = "duckdb")]
mod duckdb_worker;
mod engines_bird;
mod engines_types;
mod escaping;
mod esm_plus;
mod esm_plus_soundness;
mod evalbench;
mod flex;
mod fork_comment;
mod gate_trust;
mod gate_ux;
mod github;
mod gold_audit;
mod gold_audit_bird;
mod gold_failures;
mod hostile;
mod hostile_db;
mod hostile_sql;
mod install;
#[cfg(feature = "duckdb")]
mod install_duckdb;
mod judge_cache_trust;
mod layout;
mod lifecycle;
mod livesql;
mod livesql_audit;
mod livesql_gate;
mod livesql_hostile;
mod livesql_my;
mod livesql_my_gate;
mod livesql_pg;
mod livesql_pg_fast;
mod livesql_pg_gate;
mod livesql_post;
mod load;
mod log_injection;
mod many_databases;
mod neighbors;
mod partial_credit;
mod plug_value;
mod properties;
mod providers;
mod readme;
mod redteam10;
mod redteam11;
mod redteam12;
mod redteam13;
mod redteam14;
mod redteam15;
mod redteam16;
mod redteam17;
mod redteam18;
mod redteam19;
mod redteam20;
mod redteam21;
mod redteam22;
mod redteam23;
mod redteam24;
mod redteam25;
mod redteam9;
mod repair;
mod report;
mod report_details;
mod run_limits;
mod server_attacks;
mod server_engines;
mod server_hostile;
mod server_levers;
mod server_midrun;
mod server_order;
mod server_session;
mod server_state;
mod server_tls;
mod server_trust;
mod servers;
mod shard;
mod spider2;
#[cfg(feature = "duckdb")]
mod spider2_dbt;
#[cfg(feature = "duckdb")]
mod spider2_dbt_conformance;
#[cfg(feature = "duckdb")]
mod spider2_dbt_gate;
mod spider2_differential;
mod state_trust;
mod stores;
mod suite_links;
mod suite_trust;
mod terminal;
mod ts;
mod ts_domain;
mod unstable;
mod workspace;
