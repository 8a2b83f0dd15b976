//! LiveSQLBench (`dataset.kind: livesql`) and BIRD-Critic (`dataset.kind: bird-critic`) on
//! SQLite: JSONL items whose SQL changes the database (`input::livesql`), judged on a copy per
//! item by the item's test cases. The two read the same files; they differ in the metric that
//! judges them (`livesql` / `livesql_sound`, or `bird_critic`).
//!
//! `bird-critic` runs on PostgreSQL and MariaDB / MySQL too (`dataset.engine.kind: postgresql`
//! or `mysql`, each item on a clone of its db_id's database, judged as BIRD-Critic's PostgreSQL
//! or MySQL evaluator judges), with `dataset.engine.admin_url_env` naming the variable of an
//! administrator that may create databases and roles (users), and `layout: per_db_id`.
//! `livesql` does not: its metrics reproduce LiveSQLBench's SQLite evaluator, and
//! LiveSQLBench's own server evaluators are not reproduced.

use super::{statements, Kind};
use crate::input::config::{
    Config, DatasetConfig, EngineName, Layout, PredictionFormat, Spider2Version,
};
use crate::input::dataset::GoldItem;
use crate::input::livesql::LiveItem;
use crate::input::livesql_post::{post_state, PostState};
use crate::util::error::InputError;
use std::sync::Arc;

/// A LiveSQLBench-style kind: its name and the metrics that judge its items.
pub struct LiveSql {
    /// What `dataset.kind` writes.
    pub name: &'static str,
    /// The metrics it allows (each is one evaluator's profile).
    pub metrics: &'static [&'static str],
    /// Whether its items run on PostgreSQL and MariaDB / MySQL as well (its evaluator's server
    /// forms are reproduced), else why not.
    pub servers: Result<(), &'static str>,
}

/// The engines a kind of this file may run on besides SQLite.
const SERVERS: [&str; 2] = ["postgresql", "mysql"];

/// Every kind of this file, so each can tell its family's settings from another kind's.
pub const FAMILY: [LiveSql; 2] = [
    LiveSql {
        name: "livesql",
        metrics: &["livesql", "livesql_sound"],
        servers: Err("its metrics reproduce LiveSQLBench's SQLite evaluator, and LiveSQLBench's own PostgreSQL evaluator is not reproduced; `dataset.kind: bird-critic` runs on PostgreSQL and MariaDB / MySQL, judged as BIRD-Critic's evaluators judge"),
    },
    LiveSql {
        name: "bird-critic",
        metrics: &["bird_critic", "bird_critic_sound"],
        servers: Ok(()),
    },
];

impl Kind for LiveSql {
    fn name(&self) -> &'static str {
        self.name
    }

    /// One item per JSON line; the gold digest covers the file's bytes.
    fn load_items(
        &self,
        config: &DatasetConfig,
        _version: Spider2Version,
    ) -> Result<(Vec<GoldItem>, Vec<u8>), InputError> {
        let default = post_state_default(config).map_err(|message| InputError::Config {
            path: config.gold.clone(),
            message,
        })?;
        let parse = |path: &std::path::Path, text: &str| {
            let mut items = crate::input::livesql::parse_items(path, text)?;
            for live in items.iter_mut().filter(|live| live.post.state.is_none()) {
                live.post.state.clone_from(&default);
            }
            Ok(items)
        };
        statements::load(config, parse, item)
    }

    fn sqlite_only(&self) -> bool {
        true
    }

    /// PostgreSQL and MariaDB / MySQL where the kind's evaluator's server forms are reproduced.
    fn server_engine(&self, engine: &EngineName) -> Result<(), String> {
        let name = self.name;
        match (SERVERS.contains(&engine.as_str()), self.servers) {
            (true, Ok(())) => Ok(()),
            (true, Err(why)) => Err(format!(
                "`dataset.kind: {name}` runs on SQLite only, not with `dataset.engine.kind: {engine}`: {why}"
            )),
            _ => Err(format!(
                "`dataset.kind: {name}` runs on SQLite{} only, not with `dataset.engine.kind: {engine}`",
                if self.servers.is_ok() { ", PostgreSQL or MariaDB / MySQL" } else { "" }
            )),
        }
    }

    fn reads_statement_lists(&self) -> bool {
        true
    }

    /// Its metrics only, difficulty from a field (`field:category`: per-category cells) or
    /// none, LiveSQLBench prediction files, no test suite, no gold audit settings and none of
    /// `compare`'s knobs.
    fn check(&self, config: &Config) -> Result<(), String> {
        let rules = statements::Rules {
            name: self.name,
            metrics: self.metrics,
            cells: ("category", "a cell per category"),
            prediction_line: "`instance_id` and `pred_sqls` or `response` per line",
            audit: "its golds are statement lists, which the gold audit judges as predictions by its metrics (`gold-self-check`), not by the read-only checks these keys feed",
            decides: "its test cases decide",
        };
        statements::check(config, &rules)?;
        check_post_state(config, self.name)?;
        check_server(config, self.name)
    }

    /// Its metrics and prediction format need its items; `dataset.engine.admin_url_env` is read
    /// by a kind that runs on a server only.
    fn refuse_in_other_kinds(&self, config: &Config) -> Result<(), String> {
        let kind = config.dataset.kind.as_str();
        if FAMILY.iter().any(|own| own.name == kind) {
            return Ok(());
        }
        if config.dataset.engine.admin_url_env.is_some() && self.servers.is_ok() {
            return Err(format!(
                "`dataset.engine.admin_url_env` is read with `dataset.kind: {}` only (its items change the data, each on a clone the administrator makes), not with `dataset.kind: {kind}`",
                self.name
            ));
        }
        if config.dataset.post_state.is_some() {
            return Err(post_state_elsewhere(kind));
        }
        if let Some(metric) = (config.metrics.iter()).find(|m| self.metrics.contains(&m.as_str())) {
            return Err(format!(
                "`metrics`: `{metric}` needs `dataset.kind: {}`",
                self.name
            ));
        }
        let reads_format =
            super::find(&config.dataset.kind).is_some_and(|k| k.reads_statement_lists());
        match config.predictions.iter().find(|p| p.format == PredictionFormat::Livesql) {
            Some(spec) if !reads_format => Err(format!("`predictions`: `{}` has `format: livesql`, which needs `dataset.kind: livesql`, `bird-critic` or `evalbench`", spec.path)),
            _ => Ok(()),
        }
    }
}

/// `dataset.post_state`, where set: read by LiveSQLBench's sound profile only (`dataset.kind:
/// livesql` with the `livesql_sound` metric), and one of the forms an item's `post_state` takes.
fn check_post_state(config: &Config, name: &str) -> Result<(), String> {
    if config.dataset.post_state.is_none() {
        return Ok(());
    }
    if name != "livesql" {
        return Err(post_state_elsewhere(name));
    }
    if !config.metrics.iter().any(|m| m == "livesql_sound") {
        return Err("`dataset.post_state` is compared by the `livesql_sound` metric, which `metrics` does not list".to_string());
    }
    post_state_default(&config.dataset).map(|_| ())
}

/// The error of `dataset.post_state` in a config of `dataset.kind: kind`, which no metric of
/// that kind reads.
fn post_state_elsewhere(kind: &str) -> String {
    format!("`dataset.post_state` is read with `dataset.kind: livesql` only (its `livesql_sound` metric compares post-states), not with `dataset.kind: {kind}`")
}

/// The post-state comparison `dataset.post_state` gives every item without its own.
fn post_state_default(dataset: &DatasetConfig) -> Result<Option<PostState>, String> {
    dataset
        .post_state
        .as_ref()
        .map(|value| post_state(value).map_err(|why| format!("`dataset.post_state`: {why}")))
        .transpose()
}

/// On a server: the administrator's variable (`dataset.engine.admin_url_env`) is required and
/// each db_id is a database of its own (`layout: per_db_id`), which the run clones per item.
fn check_server(config: &Config, name: &str) -> Result<(), String> {
    let engine = &config.dataset.engine;
    let kind = engine.kind.as_str();
    if !SERVERS.contains(&kind) {
        return Ok(());
    }
    if engine.admin_url_env.is_none() {
        return Err(format!("`dataset.engine.admin_url_env` is required with `dataset.kind: {name}` on `dataset.engine.kind: {kind}`: the name of the environment variable holding the URL of an administrator that may create databases and roles, or users on MariaDB / MySQL (each item runs on a clone of its database); `url_env` stays the read-only one's"));
    }
    if engine.layout() != Layout::PerDbId {
        return Err(format!("`dataset.engine.layout`: `dataset.kind: {name}` on `{kind}` needs `per_db_id` (each db_id a database of its own, which the run clones per item)"));
    }
    Ok(())
}

/// One LiveSQLBench item as a gold item: its gold statements, one per line, for display; the
/// item itself on `task` for the metric.
fn item((index, live): (usize, LiveItem)) -> GoldItem {
    GoldItem {
        index,
        db_id: live.db_id.clone(),
        sql: live.sol_sql.join(";\n"),
        question: None,
        evidence: None,
        difficulty: None,
        skipped: false,
        spider2: None,
        task: Some(Arc::new(live)),
    }
}
