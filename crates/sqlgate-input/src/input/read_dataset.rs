//! Loading a benchmark through its dataset kind ([`crate::input::kinds`]): the kind reads the
//! items, `dataset` locates, checks and digests their databases. It sits above both, since a
//! kind builds gold items.

use crate::input::config::{DatasetConfig, EngineCatalog, Spider2Version};
use crate::input::dataset::Dataset;
use crate::util::error::InputError;

impl Dataset {
    /// Loads the dataset described by a config section (a Spider 2.0 layout as the current
    /// `evaluate.py` reads it), its database files as `engines` describe those of
    /// `dataset.engine.kind`.
    pub fn load(
        config: &DatasetConfig,
        engines: &dyn EngineCatalog,
    ) -> Result<Dataset, InputError> {
        Self::load_with(config, Spider2Version::default(), engines)
    }

    /// Loads the dataset described by a config section, a Spider 2.0 layout as the
    /// `evaluate.py` of `version` (`compare.version`) reads it, its database files as `engines`
    /// describe those of `dataset.engine.kind`.
    pub fn load_with(
        config: &DatasetConfig,
        version: Spider2Version,
        engines: &dyn EngineCatalog,
    ) -> Result<Dataset, InputError> {
        let kind = crate::input::kinds::of(config);
        let items = kind.load_items(config, version)?;
        let sqlite_file = |folder: &std::path::Path, db_id: &str, own: Option<&str>| match own {
            Some(extension) => kind.engine_file(folder, db_id, extension),
            None => kind.database_file(folder, db_id),
        };
        Self::assemble(config, items, &sqlite_file, engines)
    }
}
