//! An item's private copy of its database's template file: made in a fresh folder of its own
//! (mode 0700, a name no other item or the template shares), removed with everything in it
//! when the item ends, whatever happened. The template is only ever read.

use std::path::{Path, PathBuf};

/// One item's copy; dropping it removes the copy, its journal and its folder.
pub struct ItemCopy {
    /// Held so that dropping the copy removes its folder.
    _folder: tempfile::TempDir,
    path: PathBuf,
    template: PathBuf,
}

impl ItemCopy {
    /// Copies `template` (a regular file) into a new private folder. `std::fs::copy` uses
    /// `copy_file_range` on Linux, which shares the extents instead of copying the bytes where
    /// the file system can (a reflink on Btrfs / XFS). An error is a fault of the harness, never
    /// a verdict.
    pub fn make(template: &Path) -> Result<ItemCopy, String> {
        let regular = std::fs::symlink_metadata(template).is_ok_and(|m| m.file_type().is_file());
        if !regular {
            return Err(format!(
                "the template {} is not a regular file",
                template.display()
            ));
        }
        let folder = tempfile::Builder::new()
            .prefix("sqlgate-item-")
            .tempdir()
            .map_err(|e| format!("no private folder for an item's copy: {e}"))?;
        let path = folder.path().join("item.sqlite");
        std::fs::copy(template, &path).map_err(|e| {
            format!(
                "copying the template {} for an item: {e}",
                template.display()
            )
        })?;
        Ok(ItemCopy {
            _folder: folder,
            path,
            template: template.to_path_buf(),
        })
    }

    /// The file the copy was made from.
    pub fn template(&self) -> &Path {
        &self.template
    }

    /// The copy's file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}
