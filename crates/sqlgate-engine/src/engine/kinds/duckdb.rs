//! DuckDB as a plugin (`kind: duckdb`, [`crate::engine::duckdb`]): the executor runs it
//! in worker processes on the benchmark's `.duckdb` files (`<databases>/<db_id>/<db_id>.duckdb`), whose
//! data the dataset fingerprint covers; `sqlgate load` writes them from SQLite files.
//!
//! The engine is the cargo feature `duckdb` (on by default): a build without it (the musl
//! release binaries) still knows the name and refuses a config naming it, saying so.

use crate::engine::exec::{Engine, Limits};
use crate::engine::load::types::Server;
use crate::engine::plugin::EngineFactory;
use crate::engine::server::data_digest::DataDigests;
use crate::input::config::{Config, DatabaseFiles, EngineConfig};
use crate::input::dataset::Dataset;
use crate::sql::features::FeatureDialect;
use crate::util::error::InputError;
use std::path::Path;
use std::sync::Arc;

/// DuckDB as a plugin: files under `dataset.databases`, opened read-only and locked down by the
/// engine, written by `sqlgate load` from SQLite files; the trusted file and the DuckDB built
/// into sqlgate decide a tie at a cut.
pub struct DuckdbFactory;

/// Why a build without the `duckdb` feature refuses the engine.
const NOT_BUILT: &str = "`dataset.engine.kind: duckdb`: this sqlgate was built without DuckDB (cargo feature `duckdb`; the release archives and image are static musl builds without it): build sqlgate from source on x86_64 Linux (the Action's `install: source`, or `docker build --target source` for linux/amd64), docs/RELEASING.md";

impl EngineFactory for DuckdbFactory {
    fn name(&self) -> &'static str {
        "duckdb"
    }

    fn dialect(&self) -> FeatureDialect {
        FeatureDialect::Duckdb
    }

    fn planner_breaks_ties(&self) -> bool {
        false
    }

    fn check_keys(&self, section: &EngineConfig) -> Result<(), String> {
        if !cfg!(feature = "duckdb") {
            return Err(NOT_BUILT.into());
        }
        section.refuse_server_keys()?;
        section.refuse_options()
    }

    fn database_files(&self) -> Option<DatabaseFiles> {
        Some(DatabaseFiles {
            extension: "duckdb",
            check: check_file,
            side_files: &[".wal"],
        })
    }

    fn start(
        &self,
        config: &Config,
        _dataset: &Dataset,
        _limits: &Limits,
        threads: usize,
    ) -> Result<Option<Arc<dyn Engine>>, InputError> {
        #[cfg(feature = "duckdb")]
        return {
            let _ = config;
            let engine = crate::engine::duckdb::DuckdbEngine::for_threads(threads);
            Ok(Some(Arc::new(engine)))
        };
        #[cfg(not(feature = "duckdb"))]
        let _ = threads;
        #[cfg(not(feature = "duckdb"))]
        Err(InputError::Config {
            path: config.path.clone(),
            message: NOT_BUILT.into(),
        })
    }

    fn data_digests(
        &self,
        _config: &Config,
        _dataset: &Dataset,
    ) -> Result<Option<DataDigests>, InputError> {
        Ok(None)
    }

    fn load_target(&self) -> Option<Server> {
        Some(Server::Duckdb)
    }
}

/// Checks that the file at `path` looks like a DuckDB database: not empty, not a Git LFS
/// pointer, DuckDB's magic bytes `DUCK` at offset 8. DuckDB itself refuses a damaged file when
/// the engine opens it.
fn check_file(path: &Path) -> Result<(), String> {
    let head = crate::input::database_file::read_head(path)?;
    match head.get(8..12) {
        Some(b"DUCK") => Ok(()),
        _ => Err("is not a DuckDB database (no `DUCK` magic bytes at offset 8)".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(bytes: &[u8]) -> Result<(), String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.duckdb");
        std::fs::write(&path, bytes).unwrap();
        check_file(&path)
    }

    #[test]
    fn a_file_is_checked_for_duckdbs_magic() {
        assert_eq!(written(b"\0\0\0\0\0\0\0\0DUCK\x40\0\0\0"), Ok(()));
        assert!(written(b"").unwrap_err().contains("is empty"));
        let pointer = b"version https://git-lfs.github.com/spec/v1\noid sha256:ab\n";
        assert!(written(pointer).unwrap_err().contains("Git LFS pointer"));
        let sqlite = b"SQLite format 3\0 and the rest of a header";
        assert_eq!(
            written(sqlite).unwrap_err(),
            "is not a DuckDB database (no `DUCK` magic bytes at offset 8)"
        );
    }

    /// A build without the feature refuses the engine when the config loads (run with
    /// `cargo test -p sqlgate-engine --no-default-features`).
    #[cfg(not(feature = "duckdb"))]
    #[test]
    fn a_build_without_duckdb_refuses_it() {
        let mut section = EngineConfig::default();
        section.kind = crate::input::config::EngineName::try_from("duckdb".to_string()).unwrap();
        let error = DuckdbFactory.check_keys(&section).unwrap_err();
        assert!(error.contains("built without DuckDB"), "{error}");
    }

    #[test]
    fn the_factory_describes_its_files_and_its_load_target() {
        let files = DuckdbFactory.database_files().unwrap();
        assert_eq!(files.extension, "duckdb");
        assert!(!DuckdbFactory.reads_sqlite_files());
        assert!(!DuckdbFactory.planner_breaks_ties());
        assert_eq!(DuckdbFactory.load_target(), Some(Server::Duckdb));
    }
}
