//! The config's `audit` section: the other dialects' gold files `sqlgate audit` compares the
//! gold with (BIRD ships SQLite, PostgreSQL and MySQL golds of the same items), and the
//! reviewed gold overrides every run applies (`overrides`, see [`crate::input::overrides`]).

use crate::input::engine::EngineConfig;
use crate::util::workspace::Workspace;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// `audit`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditConfig {
    /// Other dialects' gold files of the same items, each run on its own engine.
    #[serde(default)]
    pub dialects: Vec<DialectConfig>,
    /// The reviewed gold overrides (JSON lines), read as the trusted base has them.
    #[serde(default)]
    pub overrides: Option<PathBuf>,
}

/// One entry of `audit.dialects`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DialectConfig {
    /// Its name in findings (`postgresql`).
    pub name: String,
    /// Its gold file, in the dataset's gold format and item order (same db_ids).
    pub gold: PathBuf,
    /// The engine that runs it on the same data (default: the dataset's engine).
    #[serde(default)]
    pub engine: Option<EngineConfig>,
}

impl AuditConfig {
    /// Resolves relative paths against the config's folder.
    pub fn resolve(&mut self, base: &Path) {
        for dialect in &mut self.dialects {
            dialect.gold = crate::util::workspace::resolve(base, &dialect.gold);
        }
        if let Some(path) = &mut self.overrides {
            *path = crate::util::workspace::resolve(base, &*path);
        }
    }

    /// Every path inside the workspace, every dialect named once.
    pub fn check(&self, workspace: &Workspace) -> Result<(), String> {
        for (number, dialect) in self.dialects.iter().enumerate() {
            let key = format!("audit.dialects[{number}].gold");
            workspace.input_file(&key, &dialect.gold)?;
            if self.dialects[..number]
                .iter()
                .any(|d| d.name == dialect.name)
            {
                return Err(format!(
                    "`audit.dialects[{number}].name`: `{}` is named twice",
                    dialect.name
                ));
            }
        }
        if let Some(path) = &self.overrides {
            workspace.check_pattern("audit.overrides", &path.to_string_lossy())?;
        }
        Ok(())
    }
}
