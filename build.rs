//! Writes the folder of the prebuilt DuckDB library (found by `crates/sqlgate-engine/build.rs`,
//! handed on as its `links` metadata) into the rpath of this package's binaries, tests and
//! benches, after `$ORIGIN`: a `sqlgate` binary copied next to its `libduckdb.so` (the Action's
//! `install: source`) or run where it was built finds the library without `LD_LIBRARY_PATH`.
//!
//! With `SQLGATE_RPATH_ORIGIN_ONLY=1` (the release build of the `x86_64-unknown-linux-gnu`
//! archive, docs/RELEASING.md "DuckDB") the rpath is `$ORIGIN` alone: a released binary names no
//! folder of the machine that built it, and loads only the `libduckdb.so` shipped beside it.

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_SQLGATE_DUCKDB_LIBDIR");
    println!("cargo:rerun-if-env-changed=SQLGATE_RPATH_ORIGIN_ONLY");
    // Unset without the `duckdb` feature: nothing is linked, no rpath is needed.
    let Ok(folder) = std::env::var("DEP_SQLGATE_DUCKDB_LIBDIR") else {
        return;
    };
    match std::env::var("SQLGATE_RPATH_ORIGIN_ONLY").as_deref() {
        Ok("1") => println!("cargo:rustc-link-arg=-Wl,-rpath,$ORIGIN"),
        Ok("") | Err(_) => println!("cargo:rustc-link-arg=-Wl,-rpath,$ORIGIN:{folder}"),
        Ok(other) => panic!("SQLGATE_RPATH_ORIGIN_ONLY must be 1 or unset, not {other:?}"),
    }
}
