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

/// A folder sqlgate makes for one run under the system's temporary folder: created new (an
/// existing one is an error, never reused) and readable by its owner alone, so nothing a pull
/// request committed or a step of its workflow wrote is inside it; removed with everything in it
/// when dropped.
#[derive(Debug)]
pub struct RunFolder {
    /// The folder.
    pub folder: PathBuf,
}

impl RunFolder {
    /// A new, empty folder `sqlgate-<purpose>-<process>-<time>` under the temporary folder.
    pub fn create(purpose: &str) -> Result<RunFolder, InputError> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let folder = std::env::temp_dir().join(format!(
            "sqlgate-{purpose}-{}-{nanos}-{:08x}",
            std::process::id(),
            fastrand::u32(..)
        ));
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder
            .create(&folder)
            .map_err(|e| InputError::read(&folder, e))?;
        Ok(RunFolder { folder })
    }
}

impl Drop for RunFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.folder);
    }
}

/// Copies the regular file `source` to the new file `target` and returns the SHA-256 of the
/// copy's bytes, read back from the copy: what is digested is what a reader of `target` reads,
/// whatever happens to `source` afterwards. The copy is the kernel's (`copy_file_range`), a
/// reflink where the file system shares blocks (Btrfs, XFS), else a copy of the bytes.
pub fn copy_digested(source: &Path, target: &Path) -> std::io::Result<[u8; 32]> {
    use sha2::Digest;
    let mut from = std::fs::File::open(source)?;
    if !from.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut to = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(target)?;
    std::io::copy(&mut from, &mut to)?;
    drop(to);
    let mut hasher = sha2::Sha256::new();
    std::io::copy(&mut std::fs::File::open(target)?, &mut hasher)?;
    Ok(hasher.finalize().into())
}
