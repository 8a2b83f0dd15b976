//! The release archive with DuckDB (`x86_64-unknown-linux-gnu`: `sqlgate` and `libduckdb.so`),
//! built from this test build's own binary and the pinned libduckdb it links, no release build:
//! - `.ci/package-release` packs it only from a binary whose run path is `$ORIGIN` alone, that
//!   links libduckdb, with the pinned library, needing no glibc newer than the floor;
//! - the Action's `install: url` and `install: release` both install the binary and the library
//!   from that archive, and the installed binary evaluates a `.duckdb` item with the library it
//!   came with (no `LD_LIBRARY_PATH`, nothing from the build).

use crate::common;
use crate::duckdb::loaded_shop;
use crate::install::{install, install_release_x86_64, root, serve, sha256};
use common::{assert_exit, text};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::Ordering;

const TARGET: &str = "x86_64-unknown-linux-gnu";

/// The libduckdb.so this test build links (the engine crate's build script copies the pinned one
/// into the profile's `deps` folder).
fn built_library() -> PathBuf {
    let profile = Path::new(env!("CARGO_BIN_EXE_sqlgate")).parent().unwrap();
    profile.join("deps/libduckdb.so")
}

/// A stripped copy of the test build's `sqlgate` at `to` (so packing it takes seconds); with
/// `origin_only`, its run path cut to its first entry, `$ORIGIN` (what `chrpath` does: the
/// string ends earlier), as `SQLGATE_RPATH_ORIGIN_ONLY=1` builds it.
fn test_binary(to: &Path, origin_only: bool) -> PathBuf {
    std::fs::copy(env!("CARGO_BIN_EXE_sqlgate"), to).unwrap();
    assert!(Command::new("strip").arg(to).status().unwrap().success());
    if origin_only {
        let mut bytes = std::fs::read(to).unwrap();
        let start = bytes.windows(9).position(|w| w == b"$ORIGIN:/").unwrap() + 7;
        let end = start + bytes[start..].iter().position(|&b| b == 0).unwrap();
        bytes[start..end].fill(0);
        std::fs::write(to, bytes).unwrap();
    }
    to.to_path_buf()
}

/// `.ci/package-release x86_64-unknown-linux-gnu 0.1.0 BINARY LIBRARY` from a copy of the script
/// in `folder`, so `dist/` is written there; `glibc_floor` sets `SQLGATE_GLIBC_FLOOR`.
fn package(folder: &Path, binary: &Path, library: &Path, glibc_floor: Option<&str>) -> Output {
    std::fs::create_dir_all(folder.join(".ci")).unwrap();
    let script = folder.join(".ci/package-release");
    std::fs::copy(root().join(".ci/package-release"), &script).unwrap();
    let mut command = Command::new("bash");
    command
        .arg(&script)
        .args([TARGET, "0.1.0"])
        .args([binary, library]);
    if let Some(floor) = glibc_floor {
        command.env("SQLGATE_GLIBC_FLOOR", floor);
    }
    command.output().unwrap()
}

/// The members of a gzipped tarball, with their modes, as `tar -tv` lists them.
fn members(archive: &Path) -> Vec<String> {
    let listing = Command::new("tar")
        .arg("-tvzf")
        .arg(archive)
        .output()
        .unwrap();
    String::from_utf8_lossy(&listing.stdout)
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            format!("{} {} {}", fields[0], fields[1], fields[fields.len() - 1])
        })
        .collect()
}

#[test]
fn package_release_packs_the_gnu_build_with_libduckdb_and_refuses_what_would_not_run_elsewhere() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let origin = test_binary(&dir.join("origin"), true);
    let dev = test_binary(&dir.join("dev"), false);
    let library = built_library();
    let other_library = dir.join("libduckdb.so");
    let mut bytes = std::fs::read(&library).unwrap();
    bytes.push(0);
    std::fs::write(&other_library, bytes).unwrap();
    let without_duckdb = Path::new("/bin/true");
    let refusals: [(&Path, &Path, Option<&str>, &str); 4] = [
        (
            dev.as_path(),
            library.as_path(),
            None,
            "not $ORIGIN alone (build it with SQLGATE_RPATH_ORIGIN_ONLY=1)",
        ),
        (
            without_duckdb,
            library.as_path(),
            None,
            "does not link libduckdb.so",
        ),
        (
            origin.as_path(),
            other_library.as_path(),
            None,
            "not the pinned libduckdb.so 1.5.6",
        ),
        (
            origin.as_path(),
            library.as_path(),
            Some("2.17"),
            ", newer than the floor 2.17",
        ),
    ];
    for (binary, library, floor, reason) in refusals {
        let packer = tempfile::tempdir().unwrap();
        let refused = package(packer.path(), binary, library, floor);
        assert_exit(&refused, 1);
        assert!(
            text(&refused).contains(reason),
            "{reason}: {}",
            text(&refused)
        );
        assert!(
            !packer.path().join("dist").exists(),
            "{reason}: nothing packed"
        );
    }

    let packed = package(dir, &origin, &library, None);
    assert_exit(&packed, 0);
    let name = format!("sqlgate-0.1.0-{TARGET}.tar.gz");
    let archive = dir.join("dist").join(&name);
    assert_eq!(
        String::from_utf8_lossy(&packed.stdout)
            .lines()
            .last()
            .unwrap(),
        format!("{}  {name}", sha256(&archive))
    );
    assert_eq!(
        std::fs::read_to_string(dir.join(format!("dist/{name}.sha256"))).unwrap(),
        format!("{}  {name}\n", sha256(&archive))
    );
    assert_eq!(
        members(&archive),
        ["-rwxr-xr-x 0/0 sqlgate", "-rw-r--r-- 0/0 libduckdb.so"]
    );
    assert!(
        !dir.join("dist/linux-amd64").exists(),
        "the image stays musl"
    );
}

/// The gnu archive packed from the test build into `dir/dist`; its SHA-256.
fn gnu_archive(dir: &Path) -> String {
    let binary = test_binary(&dir.join("sqlgate-origin"), true);
    let packed = package(dir, &binary, &built_library(), None);
    assert_exit(&packed, 0);
    sha256(&dir.join(format!("dist/sqlgate-0.1.0-{TARGET}.tar.gz")))
}

/// The installed binary scores the loaded `shop` database in `dataset` on DuckDB: the first
/// item matches, the second does not.
fn evaluates_a_duckdb_dataset(installed: &Path, dataset: &Path) {
    let jsonl = dataset.join("items.jsonl");
    let config = dataset.join("sqlgate.yml");
    let args = [
        "eval",
        "--config",
        common::arg(&config),
        "--jsonl",
        common::arg(&jsonl),
    ];
    let output = common::sqlgate_command_at(installed, &args)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    assert_exit(&output, 0);
    let outcomes: Vec<String> = common::read_jsonl(&jsonl)
        .iter()
        .map(|item| item["outcome"]["ex"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(outcomes, ["match", "mismatch"], "{}", text(&output));
}

#[test]
fn install_url_and_release_install_sqlgate_with_its_libduckdb_and_evaluate_a_duckdb_item() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let dataset = dir.join("dataset");
    loaded_shop(&dataset);
    let gold =
        "SELECT name FROM item WHERE id = 1\tshop\nSELECT name FROM item WHERE id = 2\tshop\n";
    let predicted = "SELECT name FROM item WHERE id = 1\nSELECT name FROM item WHERE id = 3\n";
    for (name, lines) in [("gold.sql", gold), ("pred.txt", predicted)] {
        std::fs::write(dataset.join(name), lines).unwrap();
    }
    let sum = gnu_archive(dir);

    let (base, stop) = serve(&dir.join("dist"));
    let url = format!("{base}/sqlgate-0.1.0-{TARGET}.tar.gz");
    let (from_url, _) = install(
        dir,
        &[
            ("INSTALL", "url"),
            ("BINARY_URL", &url),
            ("BINARY_SHA256", &sum),
        ],
    );
    stop.store(true, Ordering::Relaxed);
    assert_exit(&from_url, 0);
    let from_release = install_release_x86_64(dir, ["", sum.as_str()], Some("glibc 2.35"));
    assert_exit(&from_release, 0);

    for folder in [
        dir.join(format!("sqlgate-url-{}", &sum[..16])),
        dir.join(format!("sqlgate-0.1.0-{TARGET}")),
    ] {
        assert_eq!(
            sha256(&folder.join("libduckdb.so")),
            sha256(&built_library())
        );
        let installed = folder.join("sqlgate");
        evaluates_a_duckdb_dataset(&installed, &dataset);
        // The library it ran with is the one installed beside it: without it, it does not start.
        std::fs::remove_file(folder.join("libduckdb.so")).unwrap();
        let alone = Command::new(&installed)
            .arg("--version")
            .env_remove("LD_LIBRARY_PATH")
            .output()
            .unwrap();
        assert!(
            text(&alone).contains("libduckdb.so: cannot open shared object file"),
            "{}",
            text(&alone)
        );
    }
}
