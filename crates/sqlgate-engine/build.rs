//! Finds the prebuilt DuckDB library the `duckdb` engine links (docs/DEVELOPMENT.md, "DuckDB"):
//! `DUCKDB_LIB_DIR` when set (a folder holding `libduckdb.so`), else the `libduckdb.so` of the npm
//! package `@duckdb/node-bindings-linux-x64` at the pinned version, downloaded once into a cache
//! outside the source tree and checked against the pinned npm integrity hash before use. Compiling
//! DuckDB's C++ instead took 19 minutes of a cold build.
//!
//! Only with the cargo feature `duckdb` (on by default): a build without it (the musl release
//! binaries) fetches and links nothing.
//!
//! It tells the linker where the library is, copies it into the profile's `deps` folder (which
//! `cargo test` and `cargo run` put on the library path), and hands the folder to the root
//! package's build script (`links` metadata `libdir`), which writes it into the binary's rpath.

use sha2::{Digest, Sha512};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The npm package's tarball: DuckDB 1.5.6, the C API `libduckdb-sys` =1.10506.0 binds.
const TARBALL_URL: &str =
    "https://registry.npmjs.org/@duckdb/node-bindings-linux-x64/-/node-bindings-linux-x64-1.5.6-r.1.tgz";
/// `npm view @duckdb/node-bindings-linux-x64@1.5.6-r.1 dist.integrity`.
const TARBALL_SHA512_BASE64: &str =
    "IXcrZJE6kEqM0Z4wwdVnGBHX/frOS33VPNAwDXQ/Q+Fs84b058Qe94chrCCIcNJlG8Y3UHIUU4eBeCQxW5mN1Q==";
/// The cache folder's name: a new pin gets a new folder.
const CACHE_NAME: &str = "libduckdb-1.5.6-r.1";
/// The library inside the tarball.
const LIBRARY_IN_TARBALL: &str = "package/libduckdb.so";
/// The library's file name.
const LIBRARY: &str = "libduckdb.so";

fn main() {
    if std::env::var_os("CARGO_FEATURE_DUCKDB").is_none() {
        return;
    }
    for variable in [
        "DUCKDB_LIB_DIR",
        "SQLGATE_DUCKDB_CACHE",
        "XDG_CACHE_HOME",
        "HOME",
    ] {
        println!("cargo:rerun-if-env-changed={variable}");
    }
    let folder = match std::env::var_os("DUCKDB_LIB_DIR") {
        Some(folder) => PathBuf::from(folder),
        None => cached_library().unwrap_or_else(|error| panic!("libduckdb: {error}")),
    };
    println!("cargo:rustc-link-search=native={}", folder.display());
    println!("cargo:libdir={}", folder.display());
    if let Err(error) = copy_to_deps(&folder) {
        panic!("libduckdb: cannot copy {LIBRARY} into the profile's deps folder: {error}");
    }
}

/// The cache folder holding the checked library, filled on first use.
fn cached_library() -> Result<PathBuf, String> {
    let target = std::env::var("TARGET").unwrap_or_default();
    if target != "x86_64-unknown-linux-gnu" {
        return Err(format!("the pinned npm package holds the x86_64-unknown-linux-gnu library, not one for {target}: set DUCKDB_LIB_DIR to a folder holding libduckdb 1.5.6 for it"));
    }
    let folder = cache_root()?.join(CACHE_NAME);
    if folder.join(LIBRARY).is_file() {
        return Ok(folder);
    }
    std::fs::create_dir_all(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
    let tarball = download()?;
    check_integrity(&tarball)?;
    let library = extract(&tarball)?;
    let partial = folder.join(format!("{LIBRARY}.partial-{}", std::process::id()));
    std::fs::write(&partial, library).map_err(|e| format!("{}: {e}", partial.display()))?;
    std::fs::rename(&partial, folder.join(LIBRARY)).map_err(|e| format!("{e}"))?;
    Ok(folder)
}

/// `SQLGATE_DUCKDB_CACHE`, else `$XDG_CACHE_HOME/sqlgate`, else `$HOME/.cache/sqlgate`.
fn cache_root() -> Result<PathBuf, String> {
    let from = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(folder) = from("SQLGATE_DUCKDB_CACHE") {
        return Ok(folder);
    }
    if let Some(folder) = from("XDG_CACHE_HOME") {
        return Ok(folder.join("sqlgate"));
    }
    match from("HOME") {
        Some(home) => Ok(home.join(".cache").join("sqlgate")),
        None => Err("no cache folder: set SQLGATE_DUCKDB_CACHE, XDG_CACHE_HOME or HOME, or DUCKDB_LIB_DIR to a folder holding libduckdb.so".into()),
    }
}

/// The tarball, by `curl` (the system's certificate store and proxy settings apply).
fn download() -> Result<Vec<u8>, String> {
    let output = std::process::Command::new("curl")
        .args(["--silent", "--show-error", "--fail", "--location", "--retry", "3"])
        .args(["--max-time", "600", TARBALL_URL])
        .output()
        .map_err(|e| format!("cannot run curl to download {TARBALL_URL} ({e}): install curl, or set DUCKDB_LIB_DIR to a folder holding libduckdb.so 1.5.6"))?;
    if !output.status.success() {
        let reason = String::from_utf8_lossy(&output.stderr);
        return Err(format!("downloading {TARBALL_URL}: {}", reason.trim()));
    }
    Ok(output.stdout)
}

/// The tarball's SHA-512 against the pinned npm integrity value.
fn check_integrity(tarball: &[u8]) -> Result<(), String> {
    let digest = base64(&Sha512::digest(tarball));
    if digest == TARBALL_SHA512_BASE64 {
        return Ok(());
    }
    Err(format!(
        "{TARBALL_URL} has SHA-512 {digest}, not the pinned {TARBALL_SHA512_BASE64}: refused"
    ))
}

/// Standard base64 with padding, as npm's `sha512-...` integrity strings write a digest.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut text = String::new();
    for chunk in bytes.chunks(3) {
        let word =
            chunk.iter().fold(0u32, |word, &b| (word << 8) | b as u32) << (8 * (3 - chunk.len()));
        for index in 0..4 {
            if index <= chunk.len() {
                text.push(ALPHABET[(word >> (18 - 6 * index) & 63) as usize] as char);
            } else {
                text.push('=');
            }
        }
    }
    text
}

/// The library's bytes from the gzipped tarball.
fn extract(tarball: &[u8]) -> Result<Vec<u8>, String> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(tarball));
    let entries = archive.entries().map_err(|e| format!("tarball: {e}"))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| format!("tarball: {e}"))?;
        let path = entry.path().map_err(|e| format!("tarball: {e}"))?;
        if path == Path::new(LIBRARY_IN_TARBALL) {
            let mut bytes = Vec::new();
            entry
                .read_to_end(&mut bytes)
                .map_err(|e| format!("tarball: {e}"))?;
            return Ok(bytes);
        }
    }
    Err(format!("the tarball holds no {LIBRARY_IN_TARBALL}"))
}

/// Copies the library into `<target>/<profile>/deps`, on the library path of `cargo test` and
/// `cargo run` (and next to the test binaries), when it is not there with the same size.
fn copy_to_deps(folder: &Path) -> std::io::Result<()> {
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let Some(deps) = out_dir
        .ancestors()
        .nth(3)
        .map(|profile| profile.join("deps"))
    else {
        return Ok(());
    };
    let source = folder.join(LIBRARY);
    let target = deps.join(LIBRARY);
    let same = |a: &Path, b: &Path| match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.len() == b.len(),
        _ => false,
    };
    if same(&source, &target) {
        return Ok(());
    }
    std::fs::create_dir_all(&deps)?;
    let partial = deps.join(format!("{LIBRARY}.partial-{}", std::process::id()));
    std::fs::copy(&source, &partial)?;
    std::fs::rename(&partial, &target)
}
