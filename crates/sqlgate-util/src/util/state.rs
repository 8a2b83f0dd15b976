//! The folders sqlgate keeps its own state in (a distilled suite, its gold-result cache, the
//! judge and embedding caches). A pull request can commit anything there, symlinks included, so
//! every path below a state folder's root is checked name by name without following symlinks:
//! each folder on the way must be a real folder, a file read must be a regular file of bounded
//! size, a write replaces the file (never writes through a symlink) and a delete removes only
//! regular files. The root itself is a configured path, checked by the workspace rule.

use crate::util::error::InputError;
use sha2::{Digest, Sha256};
use std::path::{Component, Path, PathBuf};

/// A state folder: its root and the checked paths below it.
#[derive(Debug, Clone)]
pub struct StateDir {
    root: PathBuf,
}

/// What stands at a path below the root, looked at without following symlinks.
enum Entry {
    Absent,
    Folder,
    File(u64),
    Other(&'static str),
}

impl StateDir {
    /// The state folder at `root` (which need not exist yet).
    pub fn new(root: &Path) -> StateDir {
        StateDir {
            root: root.to_path_buf(),
        }
    }

    /// The root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `relative` below the root; only plain names are allowed (no `..`, no absolute path).
    pub fn path(&self, relative: &Path) -> PathBuf {
        self.root.join(relative)
    }

    fn entry(path: &Path) -> Result<Entry, InputError> {
        match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Entry::Absent),
            Err(e) => Err(InputError::read(path, e)),
            Ok(m) if m.file_type().is_symlink() => Ok(Entry::Other("a symlink")),
            Ok(m) if m.is_dir() => Ok(Entry::Folder),
            Ok(m) if m.is_file() => Ok(Entry::File(m.len())),
            Ok(_) => Ok(Entry::Other("a device, FIFO or socket")),
        }
    }

    /// Checks the folders from the root down to `relative`'s parent: each must be a real
    /// folder or absent. Returns whether they all exist.
    fn check_parents(&self, relative: &Path) -> Result<bool, InputError> {
        let mut path = self.root.clone();
        let names: Vec<Component> = relative.components().collect();
        let Some((_, parents)) = names.split_last() else {
            return Err(refused(&self.root, "an empty name"));
        };
        for component in names.iter() {
            if !matches!(component, Component::Normal(_)) {
                return Err(refused(
                    &self.path(relative),
                    "a name that leaves its folder",
                ));
            }
        }
        for component in parents {
            path.push(component);
            match Self::entry(&path)? {
                Entry::Folder => {}
                Entry::Absent => return Ok(false),
                Entry::File(_) => return Err(refused(&path, "a file where a folder belongs")),
                Entry::Other(what) => return Err(refused(&path, what)),
            }
        }
        Ok(true)
    }

    /// Checks that `relative` is a real folder of the state, or absent.
    pub fn check_folder(&self, relative: &Path) -> Result<(), InputError> {
        if !self.check_parents(relative)? {
            return Ok(());
        }
        let path = self.path(relative);
        match Self::entry(&path)? {
            Entry::Folder | Entry::Absent => Ok(()),
            Entry::File(_) => Err(refused(&path, "a file where a folder belongs")),
            Entry::Other(what) => Err(refused(&path, what)),
        }
    }

    /// The size of the regular file `relative`; `None` when it is absent, an error naming it
    /// when it (or a folder on its way) is a symlink or not a regular file.
    fn file_size(&self, relative: &Path) -> Result<Option<u64>, InputError> {
        if !self.check_parents(relative)? {
            return Ok(None);
        }
        let path = self.path(relative);
        match Self::entry(&path)? {
            Entry::Absent => Ok(None),
            Entry::File(size) => Ok(Some(size)),
            Entry::Folder => Err(refused(&path, "a folder where a file belongs")),
            Entry::Other(what) => Err(refused(&path, what)),
        }
    }

    /// Reads the state file `relative`: `None` when absent; an error naming it when it is not
    /// a regular file below real folders, or holds more than `limit` bytes.
    pub fn read(&self, relative: &Path, limit: u64) -> Result<Option<Vec<u8>>, InputError> {
        if self.file_size(relative)?.is_none() {
            return Ok(None);
        }
        crate::util::error::read_bounded(&self.path(relative), limit).map(Some)
    }

    /// The hex SHA-256 and size of the state file `relative`, streamed; `None` when absent.
    /// A file whose size is not `expected` is not read (its digest is left empty), so a huge
    /// file costs nothing.
    pub fn digest(
        &self,
        relative: &Path,
        expected: u64,
    ) -> Result<Option<(String, u64)>, InputError> {
        let Some(size) = self.file_size(relative)? else {
            return Ok(None);
        };
        if size != expected {
            return Ok(Some((String::new(), size)));
        }
        let path = self.path(relative);
        let mut file = std::fs::File::open(&path).map_err(|e| InputError::read(&path, e))?;
        let mut hasher = Sha256::new();
        std::io::copy(&mut file, &mut hasher).map_err(|e| InputError::read(&path, e))?;
        Ok(Some((crate::util::digest::hex(&hasher.finalize()), size)))
    }

    /// Writes the state file `relative` atomically, creating its folders; an existing symlink
    /// at its path is replaced, never written through, and a symlink on the way is refused.
    pub fn write(&self, relative: &Path, bytes: &[u8]) -> Result<(), InputError> {
        self.check_parents(relative)?;
        // The root is a configured folder, checked against the workspace when the config loads.
        std::fs::create_dir_all(&self.root)
            .map_err(|e| crate::util::fs::cannot_write(&self.root, e))?;
        let mut path = self.root.clone();
        let names: Vec<Component> = relative.components().collect();
        for component in &names[..names.len() - 1] {
            path.push(component);
            match std::fs::create_dir(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                    return Err(crate::util::fs::cannot_write(&path, e))
                }
                _ => {}
            }
            if !matches!(Self::entry(&path)?, Entry::Folder) {
                return Err(refused(&path, "not a real folder"));
            }
        }
        let path = self.path(relative);
        if matches!(Self::entry(&path)?, Entry::Folder) {
            return Err(refused(&path, "a folder where a file belongs"));
        }
        crate::util::fs::write_atomically(&path, bytes)
            .map_err(|e| crate::util::fs::cannot_write(&path, e))
    }

    /// Removes the regular files of the folder `relative` whose names `unwanted` accepts;
    /// symlinks, folders and anything else are left alone, so nothing outside is touched.
    pub fn remove_files(
        &self,
        relative: &Path,
        unwanted: impl Fn(&str) -> bool,
    ) -> Result<(), InputError> {
        self.check_folder(relative)?;
        let folder = self.path(relative);
        let Ok(entries) = std::fs::read_dir(&folder) else {
            return Ok(());
        };
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            let regular = entry.file_type().is_ok_and(|t| t.is_file());
            if regular && unwanted(&name) {
                std::fs::remove_file(entry.path())
                    .map_err(|e| crate::util::fs::cannot_write(&entry.path(), e))?;
            }
        }
        Ok(())
    }
}

fn refused(path: &Path, what: &str) -> InputError {
    InputError::malformed(
        path,
        "state",
        format!(
            "is {what}; sqlgate keeps its state (suites, caches) only in regular files of real \
             folders, so it neither reads nor writes through it"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn symlinks_below_the_root_are_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let (root, outside) = (dir.path().join("state"), dir.path().join("outside"));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("victim.sqlite"), "v").unwrap();
        symlink(&outside, root.join("linked")).unwrap();
        let state = StateDir::new(&root);
        let linked = Path::new("linked/victim.sqlite");
        assert!(state.read(linked, 10).is_err());
        assert!(state.write(linked, b"x").is_err());
        assert!(state.remove_files(Path::new("linked"), |_| true).is_err());
        assert!(state.check_folder(Path::new("linked")).is_err());
        symlink(outside.join("victim.sqlite"), root.join("file.sqlite")).unwrap();
        assert!(state.read(Path::new("file.sqlite"), 10).is_err());
        state.remove_files(Path::new("."), |_| true).unwrap_err();
        std::fs::create_dir(root.join("real")).unwrap();
        symlink(outside.join("victim.sqlite"), root.join("real/v.sqlite")).unwrap();
        state.remove_files(Path::new("real"), |_| true).unwrap();
        state.write(Path::new("real/v.sqlite"), b"mine").unwrap();
        assert_eq!(std::fs::read(outside.join("victim.sqlite")).unwrap(), b"v");
        assert_eq!(std::fs::read(root.join("real/v.sqlite")).unwrap(), b"mine");
        state.write(Path::new("new/deeper/f"), b"12345").unwrap();
        assert_eq!(
            state.read(Path::new("new/deeper/f"), 5).unwrap().unwrap(),
            b"12345"
        );
        assert!(state.read(Path::new("new/deeper/f"), 4).is_err());
        assert!(state.read(Path::new("absent/f"), 4).unwrap().is_none());
        symlink("/dev/zero", root.join("zero")).unwrap();
        assert!(state.read(Path::new("zero"), 1 << 20).is_err());
    }
}
