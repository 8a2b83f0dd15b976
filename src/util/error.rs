//! Typed errors at the library boundary.
//!
//! Every problem a user can fix (bad config, missing file, malformed predictions) is an
//! [`InputError`]; the binary maps it to exit code 2 with a one-line cause that names the file,
//! line, key or item involved.

use std::path::{Path, PathBuf};

/// A user-fixable problem with the configuration or the input files.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A file's content is malformed; `location` is a line, key or item.
    #[error("{path}: {location}: {message}")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// Where in the file (e.g. "line 12", "item 3", "key `dataset.gold`").
        location: String,
        /// What is wrong.
        message: String,
    },
    /// The configuration is inconsistent or asks for something unsupported.
    #[error("config {path}: {message}")]
    Config {
        /// The config file.
        path: PathBuf,
        /// What is wrong, naming the key.
        message: String,
    },
}

impl InputError {
    /// Shorthand for [`InputError::Read`].
    pub fn read(path: &Path, source: std::io::Error) -> Self {
        InputError::Read {
            path: path.to_path_buf(),
            source,
        }
    }

    /// Shorthand for [`InputError::Malformed`].
    pub fn malformed(path: &Path, location: impl Into<String>, message: impl Into<String>) -> Self {
        InputError::Malformed {
            path: path.to_path_buf(),
            location: location.into(),
            message: message.into(),
        }
    }
}

/// Reads a whole file as bytes, naming the file on failure.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, InputError> {
    std::fs::read(path).map_err(|e| InputError::read(path, e))
}

/// Reads a whole file as UTF-8, naming the file and line of the first invalid byte.
pub fn read_utf8(path: &Path) -> Result<String, InputError> {
    let bytes = read_bytes(path)?;
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..valid]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        InputError::malformed(path, format!("line {line}"), "invalid UTF-8")
    })
}
