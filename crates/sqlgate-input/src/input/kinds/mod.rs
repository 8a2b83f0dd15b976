//! The dataset kinds, one [`Kind`] per name `dataset.kind` may take, in one registry
//! ([`KINDS`]): how a benchmark's items are read, where its database files lie, and which config
//! keys and settings go with it. Nothing outside a kind's own file names it.

mod evalbench;
mod livesql;
mod plain;
mod spider2;
mod spider2_dbt;
mod statements;

use crate::input::config::{
    Config, DatasetConfig, DatasetKind, EngineCatalog, EngineName, Spider2Version,
};
use crate::input::dataset::GoldItem;
use crate::util::error::InputError;
use std::path::{Path, PathBuf};

/// Every dataset kind sqlgate reads, the default (`spider`) first. Adding one: its [`Kind`] in a
/// file of this folder (with its `mod` line), and one line here.
pub const KINDS: &[&dyn Kind] = &[
    &plain::Plain("spider"),
    &plain::Plain("bird"),
    &plain::Plain("generic"),
    &spider2::Spider2,
    &spider2_dbt::Spider2Dbt,
    &livesql::FAMILY[0],
    &livesql::FAMILY[1],
    &evalbench::EvalBench,
];

/// One benchmark convention: its items, its database layout, its config rules.
pub trait Kind: Send + Sync {
    /// The name `dataset.kind` takes.
    fn name(&self) -> &'static str;

    /// The items, in the order every output numbers them, and the bytes of the gold side the
    /// dataset's digest covers. `version` is the config's `compare.version` (the Spider 2.0
    /// evaluator whose reading of the files applies).
    fn load_items(
        &self,
        config: &DatasetConfig,
        _version: Spider2Version,
    ) -> Result<(Vec<GoldItem>, Vec<u8>), InputError> {
        let bytes = crate::util::error::read_bytes(&config.gold)?;
        Ok((
            crate::input::dataset::parse_gold(&config.gold, &bytes)?,
            bytes,
        ))
    }

    /// Where `db_id`'s SQLite file lies under `dataset.databases`: `<db_id>/<db_id>.sqlite`.
    fn database_file(&self, folder: &Path, db_id: &str) -> PathBuf {
        folder.join(db_id).join(format!("{db_id}.sqlite"))
    }

    /// Where `db_id`'s file lies under `dataset.databases` when the engine reads files of its own
    /// (`extension`, such as `duckdb`): `<db_id>/<db_id>.<extension>`.
    fn engine_file(&self, folder: &Path, db_id: &str, extension: &str) -> PathBuf {
        folder.join(db_id).join(format!("{db_id}.{extension}"))
    }

    /// The extension of the engine's own files the kind's databases are, when they are such
    /// files (an engine on other files, or none, is refused).
    fn database_extension(&self) -> Option<&'static str> {
        None
    }

    /// Whether the kind compares with the Spider 2.0 profiles (`spider2`, `spider2-sound`),
    /// which every other kind refuses.
    fn takes_spider2_profiles(&self) -> bool {
        false
    }

    /// True when the kind's items run on SQLite files (a server engine is refused unless
    /// [`Kind::server_engine`] allows it).
    fn sqlite_only(&self) -> bool {
        false
    }

    /// For a kind on SQLite files ([`Kind::sqlite_only`]): whether it runs on the server engine
    /// `engine` too, else the refusal naming the keys (the default refuses every server).
    fn server_engine(&self, engine: &EngineName) -> Result<(), String> {
        Err(format!(
            "`dataset.kind: {}` runs on SQLite only, not with `dataset.engine.kind: {engine}`",
            self.name()
        ))
    }

    /// True when the kind's predictions are `format: livesql` statement lists keyed by
    /// `instance_id` (its items say their id through `ItemTask::instance_id`).
    fn reads_statement_lists(&self) -> bool {
        false
    }

    /// Refuses, with a message naming the key, a config of this kind whose other settings do
    /// not go with it (an engine, a profile, a metric, a difficulty).
    fn check(&self, _config: &Config) -> Result<(), String> {
        Ok(())
    }

    /// Refuses this kind's own keys and settings in a config of another kind, where nothing
    /// would read them.
    fn refuse_in_other_kinds(&self, _config: &Config) -> Result<(), String> {
        Ok(())
    }
}

/// The kind `dataset.kind` names, if one is registered.
pub fn find(name: &DatasetKind) -> Option<&'static dyn Kind> {
    KINDS
        .iter()
        .copied()
        .find(|kind| kind.name() == name.as_str())
}

/// The kind a loaded config's dataset names: the config was checked against [`KINDS`] when it
/// was read ([`Config::parse`]), so one is registered.
pub fn of(dataset: &DatasetConfig) -> &'static dyn Kind {
    find(&dataset.kind)
        .expect("a loaded config names a registered dataset kind (checked by `Config::parse`)")
}

/// Checks one dataset's config against the registry: `dataset.kind` names a registered kind, a
/// kind that runs on SQLite files only has them (`engines` says which engines read them), and
/// the kind's own rules ([`Kind::check`]) and every other kind's
/// ([`Kind::refuse_in_other_kinds`]) hold. The message names the key.
pub fn check(config: &Config, engines: &dyn EngineCatalog) -> Result<(), String> {
    let name = &config.dataset.kind;
    let Some(own) = find(name) else {
        let names: Vec<String> = KINDS.iter().map(|k| format!("`{}`", k.name())).collect();
        return Err(format!(
            "`dataset.kind`: unknown kind `{}`, expected one of {}",
            crate::util::log::log_value(name.as_str()),
            names.join(", ")
        ));
    };
    let engine = &config.dataset.engine.kind;
    if own.sqlite_only() && engines.reads_sqlite_files(engine) != Some(true) {
        own.server_engine(engine)?;
    }
    let files = engines.database_files(engine).map(|files| files.extension);
    if let Some(extension) = own.database_extension().filter(|&e| files != Some(e)) {
        return Err(format!(
            "`dataset.kind: {name}` reads `.{extension}` files: set `dataset.engine.kind` to the engine on them, not `{engine}`"
        ));
    }
    for kind in KINDS.iter().filter(|kind| kind.name() != own.name()) {
        kind.refuse_in_other_kinds(config)?;
    }
    own.check(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_own_name_and_spider_is_the_default() {
        let names: Vec<&str> = KINDS.iter().map(|k| k.name()).collect();
        let unique: std::collections::BTreeSet<&&str> = names.iter().collect();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        assert_eq!(DatasetKind::default().as_str(), "spider");
        assert_eq!(
            find(&DatasetKind::default()).map(|k| k.name()),
            Some("spider")
        );
    }
}
