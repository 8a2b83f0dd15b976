//! Writes the folder of the prebuilt DuckDB library (found by `crates/sqlgate-engine/build.rs`,
//! handed on as its `links` metadata) into the rpath of this package's binaries, tests and
//! benches, after `$ORIGIN`: a `sqlgate` binary copied next to its `libduckdb.so` (the Action's
//! `install: source`) or run where it was built finds the library without `LD_LIBRARY_PATH`.

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_SQLGATE_DUCKDB_LIBDIR");
    // Unset without the `duckdb` feature: nothing is linked, no rpath is needed.
    let Ok(folder) = std::env::var("DEP_SQLGATE_DUCKDB_LIBDIR") else {
        return;
    };
    println!("cargo:rustc-link-arg=-Wl,-rpath,$ORIGIN:{folder}");
}
