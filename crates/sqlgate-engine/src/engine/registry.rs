//! The engines, one [`EngineFactory`] per `dataset.engine.kind` in one registry ([`ENGINES`]):
//! nothing outside an engine's own files matches on its kind.

use crate::engine::exec::{Executor, Limits};
use crate::engine::plugin::EngineFactory;
use crate::engine::server::data_digest::{self, DataDigests};
use crate::engine::server::StartError;
use crate::input::config::{Config, EngineKind};
use crate::input::dataset::Dataset;
use crate::util::error::InputError;

/// Every engine sqlgate has. Adding one: its factory in a file of `kinds/` (with its `mod` line),
/// and one line here.
pub const ENGINES: &[&dyn EngineFactory] = &[
    &crate::engine::kinds::sqlite::SqliteFactory,
    &crate::engine::kinds::postgres::PostgresFactory,
    &crate::engine::kinds::mysql::MysqlFactory,
    &crate::engine::kinds::duckdb::DuckdbFactory,
];

/// The executor a run uses: on the benchmark's files, or on the configured server after its
/// start-up checks. Errors name the key (`dataset.engine.*`) and carry no secret.
pub fn executor(
    config: &Config,
    dataset: &Dataset,
    limits: Limits,
    threads: usize,
) -> Result<Executor, InputError> {
    let Some(settings) = crate::engine::server::settings(config, dataset, threads)? else {
        let on_files = factory(config.dataset.engine.kind).start_on_files(&limits);
        return Ok(match on_files {
            Some(engine) => Executor::on(engine, limits),
            None => Executor::new(limits),
        });
    };
    let fail = |error: StartError| InputError::Config {
        path: config.path.clone(),
        message: error.0,
    };
    let started = factory(config.dataset.engine.kind).start(settings, &limits);
    match started.map_err(fail)? {
        Some(engine) => Ok(Executor::on(engine, limits)),
        None => Ok(Executor::new(limits)),
    }
}

/// The digests of every table the configured server's role can read in the databases the run
/// uses, `None` where the dataset's fingerprint covers the data (files).
pub fn data_digests(config: &Config, dataset: &Dataset) -> Result<Option<DataDigests>, InputError> {
    let Some((url, databases)) = data_digest::targets(config, dataset)? else {
        return Ok(None);
    };
    let engine = factory(config.dataset.engine.kind);
    (engine.data_digests(&url, &databases))
        .map_err(|message| data_digest::failure(config, &message))
}

/// The factory of `kind`; every kind has one (a test below checks it).
pub fn factory(kind: EngineKind) -> &'static dyn EngineFactory {
    (ENGINES.iter().copied())
        .find(|factory| factory.kind() == kind)
        .expect("every engine kind is registered (registry::tests)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::features::FeatureDialect;

    /// Each kind of the config once: a new kind fails to compile here until it is listed.
    fn every_kind() -> Vec<EngineKind> {
        let listed = [
            EngineKind::Sqlite,
            EngineKind::Postgresql,
            EngineKind::Mysql,
            EngineKind::Duckdb,
        ];
        for kind in listed {
            match kind {
                EngineKind::Sqlite
                | EngineKind::Postgresql
                | EngineKind::Mysql
                | EngineKind::Duckdb => {}
            }
        }
        listed.to_vec()
    }

    #[test]
    fn every_kind_has_exactly_one_factory() {
        for kind in every_kind() {
            let found = ENGINES.iter().filter(|f| f.kind() == kind).count();
            assert_eq!(found, 1, "{}", kind.as_str());
            assert_eq!(factory(kind).kind(), kind);
        }
        assert_eq!(ENGINES.len(), every_kind().len());
    }

    #[test]
    fn a_file_engine_has_no_server_side() {
        let sqlite = factory(EngineKind::Sqlite);
        assert_eq!(sqlite.dialect(), FeatureDialect::Sqlite);
        assert!(!sqlite.planner_breaks_ties());
        assert!(sqlite.load_target().is_none());
        assert_eq!(sqlite.data_digests("unused", &[]), Ok(None));
        let duckdb = factory(EngineKind::Duckdb);
        assert!(!duckdb.planner_breaks_ties());
        assert_eq!(duckdb.data_digests("unused", &[]), Ok(None));
        assert!(duckdb.load_target().is_some());
        for server in [EngineKind::Postgresql, EngineKind::Mysql] {
            assert!(factory(server).planner_breaks_ties());
            assert!(factory(server).load_target().is_some());
        }
    }
}
