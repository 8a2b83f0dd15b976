//! The engines, one [`EngineFactory`] per name `dataset.engine.kind` may take, in one registry
//! ([`ENGINES`]): nothing outside an engine's own files names its kind. The config is checked
//! against the registry when it loads ([`Engines`], the catalogue `Config::parse` takes).

use crate::engine::exec::{Executor, Limits};
use crate::engine::plugin::EngineFactory;
use crate::engine::server::data_digest::DataDigests;
use crate::input::config::{Config, DatabaseFiles, EngineCatalog, EngineConfig, EngineName};
use crate::input::dataset::Dataset;
use crate::util::error::InputError;

/// Every engine sqlgate has, the default (`sqlite`) first. Adding one: its factory in a file of
/// `kinds/` (with its `mod` line), and one line here.
pub const ENGINES: &[&dyn EngineFactory] = &[
    &crate::engine::kinds::sqlite::SqliteFactory,
    &crate::engine::kinds::postgres::PostgresFactory,
    &crate::engine::kinds::mysql::MysqlFactory,
    &crate::engine::kinds::duckdb::DuckdbFactory,
    #[cfg(test)]
    &crate::engine::kinds::toy::ToyFactory,
];

/// The registry as the config's catalogue of engines: what `Config::parse` and `Config::load`
/// check `dataset.engine` (and `audit.dialects[].engine`) against.
pub struct Engines;

impl EngineCatalog for Engines {
    fn names(&self) -> Vec<&'static str> {
        ENGINES.iter().map(|factory| factory.name()).collect()
    }

    fn reads_sqlite_files(&self, name: &EngineName) -> Option<bool> {
        find(name).map(|factory| factory.reads_sqlite_files())
    }

    fn check_keys(&self, section: &EngineConfig) -> Result<(), String> {
        match find(&section.kind) {
            Some(factory) => factory.check_keys(section),
            None => Err(crate::input::config::unknown_engine(
                "dataset.engine.kind",
                &section.kind,
                self,
            )),
        }
    }

    fn database_files(&self, name: &EngineName) -> Option<DatabaseFiles> {
        find(name).and_then(|factory| factory.database_files())
    }
}

/// The executor a run uses: on the benchmark's files, or on the engine the factory starts after
/// its start-up checks. Errors name the key (`dataset.engine.*`) and carry no secret.
pub fn executor(
    config: &Config,
    dataset: &Dataset,
    limits: Limits,
    threads: usize,
) -> Result<Executor, InputError> {
    let started = factory(&config.dataset.engine.kind).start(config, dataset, &limits, threads);
    match started? {
        Some(engine) => Ok(Executor::on(engine, limits)),
        None => Ok(Executor::new(limits)),
    }
}

/// The digests of the data the run reads, `None` where the dataset's fingerprint covers the
/// data (files).
pub fn data_digests(config: &Config, dataset: &Dataset) -> Result<Option<DataDigests>, InputError> {
    factory(&config.dataset.engine.kind).data_digests(config, dataset)
}

/// The factory of the engine named `name`, if there is one.
pub fn find(name: &EngineName) -> Option<&'static dyn EngineFactory> {
    (ENGINES.iter().copied()).find(|factory| factory.name() == name.as_str())
}

/// The factory of `kind`, a name from a loaded config: the config was checked against
/// [`Engines`] when it loaded, so one is registered.
pub fn factory(kind: &EngineName) -> &'static dyn EngineFactory {
    find(kind).expect("a loaded config names a registered engine (checked by `Config::parse`)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::features::FeatureDialect;

    fn named(name: &str) -> EngineName {
        EngineName::try_from(name.to_string()).unwrap()
    }

    #[test]
    fn every_engine_has_one_name_and_the_default_is_the_first() {
        let names = Engines.names();
        for name in &names {
            assert_eq!(names.iter().filter(|n| n == &name).count(), 1, "{name}");
            assert_eq!(factory(&named(name)).name(), *name);
        }
        assert_eq!(names[..3], ["sqlite", "postgresql", "mysql"]);
        assert_eq!(ENGINES[0].name(), EngineName::default().as_str());
        assert!(find(&named("oracle")).is_none());
        assert_eq!(Engines.reads_sqlite_files(&named("oracle")), None);
    }

    #[test]
    fn a_file_engine_has_no_server_side() {
        let sqlite = factory(&EngineName::default());
        assert_eq!(sqlite.dialect(), FeatureDialect::Sqlite);
        assert!(sqlite.reads_sqlite_files());
        assert!(!sqlite.planner_breaks_ties());
        assert!(sqlite.load_target().is_none());
        for server in ["postgresql", "mysql"] {
            let server = factory(&named(server));
            assert!(!server.reads_sqlite_files());
            assert!(server.planner_breaks_ties());
            assert!(server.load_target().is_some());
        }
    }
}
