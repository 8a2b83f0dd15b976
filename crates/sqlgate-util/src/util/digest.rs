//! Content digests: the cache keys of suites, gold results and provider replies, dataset
//! fingerprints and comment markers all use these, so they live below every stage.

use sha2::{Digest, Sha256};

/// Lower-case hex of a digest.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Hex SHA-256 of length-prefixed parts.
pub fn content_hash<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    hex(&hasher.finalize())
}
