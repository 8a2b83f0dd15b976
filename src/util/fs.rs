//! Writing files: atomic replacement for reports and stores, and plain writes that name the file
//! on failure.

use crate::util::error::InputError;
use std::path::Path;

/// Writes `content` to `path` atomically (temporary file, then rename).
pub fn write_atomically(path: &Path, content: &[u8]) -> std::io::Result<()> {
    write_file_atomically(path, |out| out.write_all(content))
}

/// Creates `path` atomically from what `fill` writes into a buffered temporary file, so large
/// outputs stream to disk instead of being built in memory first.
pub fn write_file_atomically(
    path: &Path,
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    let temporary = path.with_file_name(format!(".{file_name}.tmp"));
    let mut out = std::io::BufWriter::new(std::fs::File::create(&temporary)?);
    fill(&mut out)?;
    out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    std::fs::rename(&temporary, path)
}

/// Writes `bytes` to `path`, creating its folder, naming the file on failure.
pub fn write_creating_dirs(path: &Path, bytes: &[u8]) -> Result<(), InputError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| cannot_write(parent, e))?;
    }
    std::fs::write(path, bytes).map_err(|e| cannot_write(path, e))
}

/// The error of a failed write into a cache or suite folder.
pub fn cannot_write(path: &Path, error: std::io::Error) -> InputError {
    InputError::malformed(path, "suite", format!("cannot write: {error}"))
}
