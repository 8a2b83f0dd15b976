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

/// Reads a whole input file (gold, tables.json, an answer file, an event payload) as bytes: a
/// regular file of at most [`MAX_INPUT_BYTES`] (see [`read_bounded`]), naming the file on
/// failure, so a symlink to `/dev/zero` or a huge file stops the run instead of filling memory.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, InputError> {
    read_bounded(path, MAX_INPUT_BYTES)
}

/// Largest text input sqlgate reads from a file a pull request can touch (a config, a template,
/// predictions, a baseline, a manifest, a cache, a shard): far above any real one, far below
/// what would exhaust a runner's memory.
pub const MAX_INPUT_BYTES: u64 = 512 << 20;

/// Largest SQLite database file read whole into memory (to distill a test suite from it): above
/// any Spider or BIRD database, below what would exhaust a runner's memory.
pub const MAX_DATABASE_BYTES: u64 = 4 << 30;

/// Reads a regular file of at most `limit` bytes (symlinks are followed, so the caller checks
/// where it may point), naming the file when it is a device, FIFO or folder (`/dev/zero`
/// behind a symlink is refused, not read forever) or when it holds more than `limit` bytes.
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    use std::io::Read;
    let not_regular = || {
        InputError::malformed(
            path,
            "file",
            "not a regular file (a device, FIFO or folder); sqlgate reads only regular files",
        )
    };
    // Checked before opening too: opening a FIFO would wait for a writer.
    if !std::fs::metadata(path)
        .map_err(|e| InputError::read(path, e))?
        .is_file()
    {
        return Err(not_regular());
    }
    let too_large = || {
        InputError::malformed(
            path,
            "file",
            format!("larger than {limit} bytes, the most sqlgate reads from one file"),
        )
    };
    let file = std::fs::File::open(path).map_err(|e| InputError::read(path, e))?;
    let metadata = file.metadata().map_err(|e| InputError::read(path, e))?;
    if !metadata.is_file() {
        return Err(not_regular());
    }
    // A file already over the bound is refused before any byte is read into memory.
    if metadata.len() > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| InputError::read(path, e))?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// Reads a whole text file as UTF-8 (at most [`MAX_INPUT_BYTES`], a regular file), naming the
/// file and line of the first invalid byte.
pub fn read_utf8(path: &Path) -> Result<String, InputError> {
    let bytes = read_bounded(path, MAX_INPUT_BYTES)?;
    String::from_utf8(bytes).map_err(|e| invalid_utf8(path, e.as_bytes(), e.utf8_error()))
}

/// `bytes` (the contents of `path`) as text, for readers that already hold the bytes; an error
/// names the line of the first invalid byte.
pub fn utf8_or_line_error<'a>(path: &Path, bytes: &'a [u8]) -> Result<&'a str, InputError> {
    std::str::from_utf8(bytes).map_err(|e| invalid_utf8(path, bytes, e))
}

/// The error for `bytes` of `path` that stop being UTF-8 where `error` says, naming that line.
fn invalid_utf8(path: &Path, bytes: &[u8], error: std::str::Utf8Error) -> InputError {
    let valid = &bytes[..error.valid_up_to()];
    let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
    InputError::malformed(path, format!("line {line}"), "invalid UTF-8")
}
