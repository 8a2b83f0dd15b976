//! Reading a config: its text parsed and checked against the engines
//! ([`crate::input::engine::EngineCatalog`]) and the dataset kinds ([`crate::input::kinds`]).
//! It sits above both `config` and `kinds`, since a kind's rules read config sections.

use crate::input::config::{in_entry, Config, EngineCatalog};
use crate::util::error::InputError;
use std::path::Path;

impl Config {
    /// Reads, validates and resolves a config file, then applies the workspace rule to every
    /// path it names (see [`crate::util::workspace`]); the engines it may name are `engines`'.
    pub fn load(path: &Path, engines: &dyn EngineCatalog) -> Result<Config, InputError> {
        let text = crate::util::error::read_utf8(path)?;
        Self::parse(&text, path, engines)?.inside_workspace()
    }

    /// Parses config text that came from `path` (used for messages and relative paths), checking
    /// the engines it names against `engines` (the engine crate's registry,
    /// `engine::registry::Engines`) and each dataset's `dataset.kind` against the kinds'.
    pub fn parse(
        text: &str,
        path: &Path,
        engines: &dyn EngineCatalog,
    ) -> Result<Config, InputError> {
        let config = Self::parse_text(text, path, engines)?;
        for one in config.dataset_configs() {
            crate::input::kinds::check(&one, engines)
                .map_err(|message| InputError::Config {
                    path: path.to_path_buf(),
                    message,
                })
                .map_err(|error| in_entry(&one, error))?;
        }
        Ok(config)
    }
}
