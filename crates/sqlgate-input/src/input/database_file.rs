//! What a benchmark's database file is, read from its first bytes: a checkout without
//! `git lfs pull` leaves pointer files where the databases should be, an interrupted copy leaves
//! empty or truncated files, and each of them would otherwise make every gold query fail and be
//! blamed on the golds. [`check`] names what the file is and what to do; [`missing_tables`]
//! compares a database that opens with the tables `tables.json` declares for it.

use crate::sql::schema::{Schema, TableEntry};
use std::io::Read;
use std::path::Path;

/// The 16 bytes every SQLite 3 database file starts with.
const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// The length of SQLite's database header.
const HEADER_BYTES: usize = 100;

/// The first line of a Git LFS pointer file.
const LFS_POINTER: &[u8] = b"version https://git-lfs.github.com/spec/v1";

/// Checks that the file at `path` is a whole SQLite database; otherwise says what it is (a Git
/// LFS pointer, empty, truncated, not SQLite) and what to do, as the message of an input error.
pub fn check(path: &Path) -> Result<(), String> {
    let size = std::fs::metadata(path)
        .map_err(|e| format!("cannot read it: {e}"))?
        .len();
    let mut head = Vec::with_capacity(HEADER_BYTES);
    std::fs::File::open(path)
        .and_then(|file| file.take(HEADER_BYTES as u64).read_to_end(&mut head))
        .map_err(|e| format!("cannot read it: {e}"))?;
    identify(&head, size)
}

/// The first bytes of another engine's database file at `path` (at most [`HEADER_BYTES`]), for
/// its own check of the format's magic ([`crate::input::engine::DatabaseFiles::check`]); an
/// empty file or a Git LFS pointer is refused here, saying what to do.
pub fn read_head(path: &Path) -> Result<Vec<u8>, String> {
    let mut head = Vec::with_capacity(HEADER_BYTES);
    std::fs::File::open(path)
        .and_then(|file| file.take(HEADER_BYTES as u64).read_to_end(&mut head))
        .map_err(|e| format!("cannot read it: {e}"))?;
    if head.is_empty() {
        return Err("is empty (0 bytes), not the database: restore the file".into());
    }
    if head.starts_with(LFS_POINTER) {
        return Err("is a Git LFS pointer, not the database: run `git lfs pull` (on GitHub Actions, `lfs: true` in `actions/checkout`)".into());
    }
    Ok(head)
}

/// What a file of `size` bytes starting with `head` (its first [`HEADER_BYTES`] or fewer) is,
/// when it is not a whole SQLite database.
fn identify(head: &[u8], size: u64) -> Result<(), String> {
    if size == 0 {
        return Err("is empty (0 bytes), not the database: restore the file".into());
    }
    if head.starts_with(LFS_POINTER) {
        return Err(
            "is a Git LFS pointer, not the database: run `git lfs pull` (on GitHub Actions, \
             `lfs: true` in `actions/checkout`)"
                .into(),
        );
    }
    let shared = head.len().min(SQLITE_HEADER.len());
    if head[..shared] != SQLITE_HEADER[..shared] {
        return Err(
            "is not a SQLite database (it does not start with SQLite's header `SQLite format 3`)"
                .into(),
        );
    }
    if head.len() < HEADER_BYTES {
        return Err(format!(
            "is truncated: {size} bytes, shorter than SQLite's {HEADER_BYTES}-byte header"
        ));
    }
    check_pages(head, size)
}

/// A file with SQLite's header shorter than the pages its header declares (when that count is
/// valid: SQLite's rule, the change counter at offset 24 equals the version-valid-for number at
/// offset 92) is truncated; without a valid count, so is one that is not a whole number of
/// pages (a longer file is what SQLite reads: the pages past the count are ignored).
fn check_pages(head: &[u8], size: u64) -> Result<(), String> {
    let be32 = |at: usize| u32::from_be_bytes(head[at..at + 4].try_into().expect("4 bytes"));
    let page_size = match u16::from_be_bytes([head[16], head[17]]) {
        1 => 65_536,
        n => u64::from(n),
    };
    if !page_size.is_power_of_two() || !(512..=65_536).contains(&page_size) {
        return Err(format!(
            "is not a valid SQLite database (its header declares a page size of {page_size} bytes)"
        ));
    }
    let declared_pages = u64::from(be32(28));
    let count_valid = declared_pages > 0 && be32(24) == be32(92);
    if count_valid && declared_pages * page_size > size {
        return Err(format!(
            "is truncated: {size} bytes, but its header declares {declared_pages} pages of \
             {page_size} bytes ({} bytes)",
            declared_pages * page_size
        ));
    }
    if !count_valid && size % page_size != 0 {
        return Err(format!(
            "is truncated: {size} bytes, not a whole number of its {page_size}-byte pages"
        ));
    }
    Ok(())
}

/// The tables `entry` (the database's tables.json entry) declares that `schema` (read from the
/// file) lacks, compared case-insensitively as SQLite compares names, in tables.json order.
pub fn missing_tables(schema: &Schema, entry: &TableEntry) -> Vec<String> {
    entry
        .table_names_original
        .iter()
        .filter(|table| !schema.has_table(&table.to_lowercase()))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 100-byte SQLite header with the page size, page count and the two counters.
    fn header(page_size: u16, pages: u32, counter: u32, valid_for: u32) -> Vec<u8> {
        let mut head = vec![0u8; HEADER_BYTES];
        head[..16].copy_from_slice(SQLITE_HEADER);
        head[16..18].copy_from_slice(&page_size.to_be_bytes());
        head[24..28].copy_from_slice(&counter.to_be_bytes());
        head[28..32].copy_from_slice(&pages.to_be_bytes());
        head[92..96].copy_from_slice(&valid_for.to_be_bytes());
        head
    }

    #[test]
    fn a_whole_database_passes() {
        assert_eq!(identify(&header(4096, 3, 7, 7), 3 * 4096), Ok(()));
        assert_eq!(identify(&header(1, 1, 7, 7), 65_536), Ok(()));
        // A stale page count (counters differ) is not trusted, as SQLite does not trust it.
        assert_eq!(identify(&header(4096, 9, 7, 6), 4096), Ok(()));
        // Bytes past the declared pages are ignored, as SQLite ignores them.
        assert_eq!(identify(&header(4096, 3, 7, 7), 3 * 4096 + 10), Ok(()));
    }

    #[test]
    fn each_bad_file_is_named() {
        let lfs = b"version https://git-lfs.github.com/spec/v1\noid sha256:ab\nsize 12\n";
        assert_eq!(
            identify(lfs, lfs.len() as u64).unwrap_err(),
            "is a Git LFS pointer, not the database: run `git lfs pull` (on GitHub Actions, \
             `lfs: true` in `actions/checkout`)"
        );
        assert_eq!(
            identify(b"", 0).unwrap_err(),
            "is empty (0 bytes), not the database: restore the file"
        );
        assert_eq!(
            identify(b"SQLite for", 10).unwrap_err(),
            "is truncated: 10 bytes, shorter than SQLite's 100-byte header"
        );
        assert_eq!(
            identify(b"CREATE TABLE t(a);", 18).unwrap_err(),
            "is not a SQLite database (it does not start with SQLite's header `SQLite format 3`)"
        );
        assert_eq!(
            identify(&header(4096, 3, 7, 6), 5000).unwrap_err(),
            "is truncated: 5000 bytes, not a whole number of its 4096-byte pages"
        );
        assert_eq!(
            identify(&header(4096, 3, 7, 7), 5000).unwrap_err(),
            "is truncated: 5000 bytes, but its header declares 3 pages of 4096 bytes (12288 bytes)"
        );
        assert_eq!(
            identify(&header(4096, 3, 7, 7), 8192).unwrap_err(),
            "is truncated: 8192 bytes, but its header declares 3 pages of 4096 bytes (12288 bytes)"
        );
        assert_eq!(
            identify(&header(1000, 3, 7, 7), 3000).unwrap_err(),
            "is not a valid SQLite database (its header declares a page size of 1000 bytes)"
        );
    }
}
