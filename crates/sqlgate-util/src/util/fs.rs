//! Writing files: atomic replacement for reports and stores (unique temporary names), a lock
//! file for stores with one writer at a time, and plain writes that name the file on failure.

use crate::util::error::InputError;
use std::path::{Path, PathBuf};

/// Writes `content` to `path` atomically (temporary file, then rename).
pub fn write_atomically(path: &Path, content: &[u8]) -> std::io::Result<()> {
    write_file_atomically(path, |out| out.write_all(content))
}

/// Creates `path` atomically from what `fill` writes into a buffered temporary file, so large
/// outputs stream to disk instead of being built in memory first. The temporary file sits in
/// the same folder under a name no other writer uses (process id and a random suffix), is
/// created fresh (never through an existing file or symlink) and is removed when writing fails.
pub fn write_file_atomically(
    path: &Path,
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    let temporary = path.with_file_name(format!(
        ".{file_name}.{}.{:016x}.tmp",
        std::process::id(),
        fastrand::u64(..)
    ));
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temporary)?;
    let written = (|| {
        let mut out = std::io::BufWriter::new(file);
        fill(&mut out)?;
        out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// A lock file held while one process writes a store (the baseline): created with
/// `create_new`, so a second writer fails instead of racing, and removed when dropped.
#[derive(Debug)]
pub struct LockFile {
    path: PathBuf,
}

impl LockFile {
    /// Takes the lock `<folder>/.<file name>.lock` beside `path`, or says who holds it.
    pub fn acquire(path: &Path) -> Result<LockFile, InputError> {
        let file_name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "output".into());
        let lock = path.with_file_name(format!(".{file_name}.lock"));
        let created = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&lock);
        match created {
            Ok(mut file) => {
                use std::io::Write;
                // The holder's process id, for the message a second writer gets.
                let _ = writeln!(file, "{}", std::process::id());
                Ok(LockFile { path: lock })
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let holder = std::fs::read_to_string(&lock).unwrap_or_default();
                Err(InputError::malformed(
                    path,
                    "lock",
                    format!(
                        "another sqlgate (process {}) is writing this file: the lock {} exists; \
                         wait for it to finish, or remove the lock if no sqlgate is running",
                        holder.trim(),
                        lock.display()
                    ),
                ))
            }
            Err(e) => Err(InputError::malformed(
                path,
                "lock",
                format!("cannot create the lock {}: {e}", lock.display()),
            )),
        }
    }
}

impl Drop for LockFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Creates the missing folders above `path`, returning the ones it created, deepest first, so a
/// command that then fails can remove them with [`remove_empty`] and leave nothing behind.
pub fn create_parents(path: &Path) -> Result<Vec<PathBuf>, InputError> {
    let missing: Vec<PathBuf> = path
        .ancestors()
        .skip(1)
        .filter(|folder| !folder.as_os_str().is_empty())
        .take_while(|folder| !folder.exists())
        .map(Path::to_path_buf)
        .collect();
    if let Some(top) = missing.first() {
        std::fs::create_dir_all(top)
            .map_err(|e| InputError::malformed(top, "folder", format!("cannot create: {e}")))?;
    }
    Ok(missing)
}

/// Removes each of `folders` (deepest first) that is empty; a folder holding anything stays.
pub fn remove_empty(folders: &[PathBuf]) {
    for folder in folders {
        let _ = std::fs::remove_dir(folder);
    }
}

/// The error of a failed write into a state folder (a suite or a cache).
pub fn cannot_write(path: &Path, error: std::io::Error) -> InputError {
    InputError::malformed(path, "state", format!("cannot write: {error}"))
}
