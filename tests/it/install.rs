//! The Action's install paths through `.ci/action-install`, as action.yml runs it, each end to
//! end and cheap enough for every CI run:
//! - `install: source` runs the real `cargo build --locked` of a local checkout of the Action
//!   (this repository) on a warm target folder, the way a restored cache gives it one: the test
//!   build's compiled dependencies serve it because `cargo build` resolves the same features as
//!   `cargo test` (checked here), then reuses the binary a cache restored without running cargo;
//! - the cache key (`.ci/action-source-key`) changes with the sources and the lock file, not
//!   with where the checkout lies;
//! - `install: url` runs only a file whose SHA-256 matches, served by a local HTTP server;
//! - `install: release` without a pinned release names the other two.

use crate::common;
use common::text;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The repository root, where `.ci/` and `action.yml` are.
pub(crate) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The target folder the test build wrote (the one holding `debug/sqlgate`), wherever
/// `CARGO_TARGET_DIR` put it.
fn warm_target() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_sqlgate"))
        .ancestors()
        .nth(2)
        .unwrap()
        .to_path_buf()
}

/// The cargo profile the test build used (`dev`, or `release` under `cargo test --release`), so
/// the source build finds its compiled dependencies.
fn test_profile() -> &'static str {
    let folder = Path::new(env!("CARGO_BIN_EXE_sqlgate")).parent().unwrap();
    if folder.ends_with("release") {
        "release"
    } else {
        "dev"
    }
}

/// Whether `name` is a variable cargo sets for this test process (the package's name, version
/// and folder, the binaries' paths: "Environment variables Cargo sets for crates"), which a
/// runner does not have. A nested cargo must not see them: build scripts that watch one (ring
/// watches `CARGO_PKG_NAME` and `CARGO_MANIFEST_DIR`) would run again, and with them everything
/// built on their crate.
fn set_by_cargo_for_tests(name: &str) -> bool {
    name.starts_with("CARGO_PKG_")
        || name.starts_with("CARGO_BIN_EXE_")
        || name.starts_with("CARGO_MANIFEST_")
        || matches!(
            name,
            "CARGO_CRATE_NAME"
                | "CARGO_BIN_NAME"
                | "CARGO_TARGET_TMPDIR"
                | "CARGO_PRIMARY_PACKAGE"
                | "CARGO_RUSTC_CURRENT_DIR"
                | "OUT_DIR"
        )
}

/// `.ci/action-install` with `env`, as action.yml's install step runs it on a runner (no
/// `LD_LIBRARY_PATH`, which `cargo test` sets to its `deps` folder); `dir` holds the step's output
/// file.
pub(crate) fn install(dir: &Path, env: &[(&str, &str)]) -> (Output, String) {
    let outputs = dir.join("outputs");
    let _ = std::fs::remove_file(&outputs);
    let mut command = Command::new("bash");
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(set_by_cargo_for_tests) {
            command.env_remove(name);
        }
    }
    command
        .arg(root().join(".ci/action-install"))
        .env("INSTALL_ONLY", "false")
        .env("RUNNER_TEMP", dir)
        .env("GITHUB_OUTPUT", &outputs)
        .env("GITHUB_PATH", dir.join("path"))
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("SQLGATE_SHA256_X86_64")
        .env_remove("SQLGATE_SHA256_X86_64_GNU")
        .env_remove("SQLGATE_SHA256_AARCH64");
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().unwrap();
    (output, std::fs::read_to_string(outputs).unwrap_or_default())
}

/// The file's SHA-256, as lowercase hex.
pub(crate) fn sha256(path: &Path) -> String {
    let output = Command::new("sha256sum").arg(path).output().unwrap();
    String::from_utf8_lossy(&output.stdout)[..64].to_string()
}

#[test]
fn install_source_builds_the_actions_checkout_and_reuses_a_cached_build() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let source_dir = dir.join("sqlgate-source");
    let (checkout, target) = (root(), warm_target());
    let env = [
        ("INSTALL", "source"),
        ("GITHUB_ACTION_PATH", checkout.to_str().unwrap()),
        ("SQLGATE_SOURCE_DIR", source_dir.to_str().unwrap()),
        ("SQLGATE_SOURCE_PROFILE", test_profile()),
        ("CARGO_TARGET_DIR", target.to_str().unwrap()),
    ];
    let (built, outputs) = install(dir, &env);
    common::assert_exit(&built, 0);
    assert!(
        text(&built).contains(&format!("Finished `{}` profile", test_profile())),
        "cargo built: {}",
        text(&built)
    );
    let binary = source_dir.join("bin/sqlgate");
    assert_eq!(
        outputs,
        format!(
            "path={}\nversion={}\n",
            binary.display(),
            env!("CARGO_PKG_VERSION")
        )
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("path")).unwrap(),
        format!("{}\n", source_dir.join("bin").display())
    );
    let version = Command::new(&binary).arg("--version").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("sqlgate {}", env!("CARGO_PKG_VERSION"))
    );
    // A cache hit restores bin/ only; no cargo runs (an unusable CARGO_TARGET_DIR proves it).
    let cached = [
        env[0],
        env[1],
        env[2],
        env[3],
        ("CARGO_TARGET_DIR", "/nonexistent/unwritable"),
    ];
    let (reused, outputs) = install(dir, &cached);
    common::assert_exit(&reused, 0);
    assert!(text(&reused).contains("(cache hit): not rebuilt"));
    assert!(outputs.starts_with(&format!("path={}\n", binary.display())));
}

/// Every package `cargo tree` shows for `edges`, with its features, one line each.
fn resolved(edges: &str) -> BTreeSet<String> {
    let output = Command::new(env!("CARGO"))
        .current_dir(root())
        .args(["tree", "--locked", "--offline", "--prefix", "none"])
        .args(["-e", edges, "-f", "{p} {f}"])
        .output()
        .unwrap();
    common::assert_exit(&output, 0);
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| line.trim_end_matches(" (*)").to_string())
        .collect()
}

/// Why the source build above compiles nothing on a target folder `cargo test` filled: no
/// dependency of `cargo build` gets other features than under `cargo test`, whose
/// dev-dependencies could turn more on (Cargo.toml's `bitflags` line); with one that differs,
/// it and all that depends on it would be compiled again (minutes).
#[test]
fn cargo_build_resolves_the_features_cargo_test_does() {
    let build = resolved("normal,build");
    let test = resolved("normal,build,dev");
    let differing: Vec<&String> = build.difference(&test).collect();
    assert!(build.iter().any(|p| p.starts_with("rusqlite ")));
    assert!(
        differing.is_empty(),
        "features of `cargo build` that `cargo test` resolves otherwise: {differing:?}"
    );
}

/// `.ci/action-source-key` run on the checkout `path` as action.yml runs it: the `key` and
/// `dir` it writes.
fn source_key(path: &Path, action_ref: &str) -> (String, String) {
    let work = tempfile::tempdir().unwrap();
    let outputs = work.path().join("outputs");
    let output = Command::new("bash")
        .arg(root().join(".ci/action-source-key"))
        .env("GITHUB_ACTION_PATH", path)
        .env("ACTION_REF", action_ref)
        .env("RUNNER_OS", "Linux")
        .env("RUNNER_ARCH", "X64")
        .env("RUNNER_TEMP", "/runner/temp")
        .env("GITHUB_OUTPUT", &outputs)
        .output()
        .unwrap();
    common::assert_exit(&output, 0);
    let written = std::fs::read_to_string(outputs).unwrap();
    let value = |name: &str| {
        written
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}=")))
            .unwrap()
            .to_string()
    };
    (value("key"), value("dir"))
}

/// A checkout holding the files the key digests, with `main_rs` as src/main.rs.
fn fake_checkout(path: &Path, main_rs: &str, lock: &str) {
    std::fs::create_dir_all(path.join("src/report")).unwrap();
    std::fs::create_dir_all(path.join("crates/sqlgate-sql/src")).unwrap();
    std::fs::create_dir_all(path.join("templates")).unwrap();
    std::fs::create_dir_all(path.join("docs")).unwrap();
    std::fs::write(path.join("Cargo.toml"), "[package]\nname = \"sqlgate\"\n").unwrap();
    std::fs::write(path.join("Cargo.lock"), lock).unwrap();
    std::fs::write(path.join("src/main.rs"), main_rs).unwrap();
    std::fs::write(path.join("src/report/mod.rs"), "//! report\n").unwrap();
    std::fs::write(path.join("crates/sqlgate-sql/src/lib.rs"), "//! sql\n").unwrap();
    std::fs::write(path.join("templates/comment.md.j2"), "{{ x }}\n").unwrap();
    std::fs::write(path.join("docs/README.md"), "docs\n").unwrap();
}

#[test]
fn the_source_cache_key_follows_sources_lock_file_and_ref_not_the_checkouts_folder() {
    let work = tempfile::tempdir().unwrap();
    let (one, two) = (work.path().join("one"), work.path().join("elsewhere/two"));
    fake_checkout(&one, "fn main() {}\n", "version = 4\n");
    fake_checkout(&two, "fn main() {}\n", "version = 4\n");
    let (key, dir) = source_key(&one, "v1");
    assert_eq!(dir, "/runner/temp/sqlgate-source");
    let parts: Vec<&str> = key.split('-').collect();
    assert_eq!(parts[..5], ["sqlgate", "source", "Linux", "X64", "v1"]);
    assert!(parts[5..]
        .iter()
        .all(|p| p.len() == 16 && p.chars().all(|c| c.is_ascii_hexdigit())));
    assert_eq!(
        source_key(&two, "v1").0,
        key,
        "same files elsewhere: same key"
    );

    std::fs::write(two.join("docs/README.md"), "other docs\n").unwrap();
    assert_eq!(source_key(&two, "v1").0, key, "docs are not built");
    std::fs::write(two.join("src/report/mod.rs"), "//! changed\n").unwrap();
    let changed_source = source_key(&two, "v1").0;
    assert_ne!(changed_source, key);
    assert_eq!(
        changed_source[..changed_source.len() - 16],
        key[..key.len() - 16]
    );
    std::fs::write(two.join("crates/sqlgate-sql/src/lib.rs"), "//! changed\n").unwrap();
    let changed_crate = source_key(&two, "v1").0;
    assert_ne!(
        changed_crate, changed_source,
        "a crate's source is built too"
    );
    assert_eq!(changed_crate[..key.len() - 16], key[..key.len() - 16]);
    fake_checkout(&two, "fn main() {}\n", "version = 4\n# other\n");
    let changed_lock = source_key(&two, "v1").0;
    assert_ne!(changed_lock.split('-').nth(5), key.split('-').nth(5));
    std::fs::rename(two.join("src/main.rs"), two.join("src/bin.rs")).unwrap();
    fake_checkout(&one, "fn main() {}\n", "version = 4\n# other\n");
    assert_ne!(
        source_key(&two, "v1").0,
        source_key(&one, "v1").0,
        "a renamed file changes the key"
    );

    let (odd_ref, _) = source_key(&one, "feature/x y$(z)");
    assert!(
        odd_ref.starts_with("sqlgate-source-Linux-X64-feature_x_y__z_-"),
        "{odd_ref}"
    );
    let (real, _) = source_key(&root(), "0123abcd");
    assert!(
        real.starts_with("sqlgate-source-Linux-X64-0123abcd-"),
        "{real}"
    );
}

/// A loopback HTTP server answering every GET of `/<name>` with the file `dir/<name>`, 404
/// otherwise; stops when the returned flag is set.
pub(crate) fn serve(dir: &Path) -> (String, Arc<AtomicBool>) {
    let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
    let url = format!("http://{}", server.server_addr().to_ip().unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let (stopped, dir) = (Arc::clone(&stop), dir.to_path_buf());
    std::thread::spawn(move || {
        while !stopped.load(Ordering::Relaxed) {
            let Ok(Some(request)) = server.recv_timeout(Duration::from_millis(50)) else {
                continue;
            };
            let name = request.url().trim_start_matches('/').to_string();
            let _ = match std::fs::File::open(dir.join(&name)) {
                Ok(file) if !name.contains('/') => {
                    request.respond(tiny_http::Response::from_file(file))
                }
                _ => request.respond(tiny_http::Response::empty(404)),
            };
        }
    });
    (url, stop)
}

#[test]
fn install_url_runs_only_the_file_whose_checksum_matches() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let served = dir.join("served");
    std::fs::create_dir_all(&served).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_sqlgate"), served.join("sqlgate")).unwrap();
    let packed = Command::new("sh")
        .arg("-c")
        .arg("tar -cf - -C \"$1\" sqlgate | gzip -1 > \"$1/sqlgate.tar.gz\"")
        .arg("sh")
        .arg(&served)
        .status()
        .unwrap();
    assert!(packed.success());
    let (base, stop) = serve(&served);
    let url = format!("{base}/sqlgate.tar.gz");
    let right = sha256(&served.join("sqlgate.tar.gz"));
    let (installed, outputs) = install(
        dir,
        &[
            ("INSTALL", "url"),
            ("BINARY_URL", &url),
            ("BINARY_SHA256", &right),
        ],
    );
    common::assert_exit(&installed, 0);
    let binary = dir.join(format!("sqlgate-url-{}/sqlgate", &right[..16]));
    assert_eq!(
        outputs,
        format!(
            "path={}\nversion={}\n",
            binary.display(),
            env!("CARGO_PKG_VERSION")
        )
    );
    assert!(text(&installed).contains(&format!("(SHA-256 {right}) installed from {url}")));

    let bare_url = format!("{base}/sqlgate");
    let bare = sha256(&served.join("sqlgate"));
    let (installed, outputs) = install(
        dir,
        &[
            ("INSTALL", "url"),
            ("BINARY_URL", &bare_url),
            ("BINARY_SHA256", &bare),
        ],
    );
    common::assert_exit(&installed, 0);
    assert!(outputs.ends_with(&format!("version={}\n", env!("CARGO_PKG_VERSION"))));

    let wrong = "0".repeat(64);
    let (refused, outputs) = install(
        dir,
        &[
            ("INSTALL", "url"),
            ("BINARY_URL", &url),
            ("BINARY_SHA256", &wrong),
        ],
    );
    common::assert_exit(&refused, 2);
    assert!(
        text(&refused).contains(&format!(
            "{url} has SHA-256 {right}, binary-sha256 says {wrong}: refusing to run it"
        )),
        "{}",
        text(&refused)
    );
    assert_eq!(outputs, "", "nothing installed");
    let refused_dir = dir.join(format!("sqlgate-url-{}", &wrong[..16]));
    assert_eq!(
        std::fs::read_dir(&refused_dir).unwrap().count(),
        0,
        "nothing kept"
    );

    let (missing, outputs) = install(
        dir,
        &[
            ("INSTALL", "url"),
            ("BINARY_URL", &format!("{base}/absent.tar.gz")),
            ("BINARY_SHA256", &right),
        ],
    );
    common::assert_exit(&missing, 2);
    assert!(text(&missing).contains(&format!("cannot download {base}/absent.tar.gz")));
    assert_eq!(outputs, "");
    stop.store(true, Ordering::Relaxed);

    let (unpinned, _) = install(dir, &[("INSTALL", "url"), ("BINARY_URL", &url)]);
    common::assert_exit(&unpinned, 2);
    assert!(text(&unpinned).contains("install: url needs binary-sha256"));
    for remote in [
        "http://example.com/sqlgate",
        "http://127.0.0.1.example.com/sqlgate",
    ] {
        let (plain, _) = install(
            dir,
            &[
                ("INSTALL", "url"),
                ("BINARY_URL", remote),
                ("BINARY_SHA256", &right),
            ],
        );
        common::assert_exit(&plain, 2);
        assert!(
            text(&plain).contains("http:// only to the runner itself"),
            "{remote}: {}",
            text(&plain)
        );
    }
}

#[test]
fn an_unpinned_release_names_the_install_paths_that_work_today() {
    let work = tempfile::tempdir().unwrap();
    let (refused, outputs) = install(
        work.path(),
        &[
            ("RUNNER_OS", "Linux"),
            ("RUNNER_ARCH", "X64"),
            ("SQLGATE_REPOSITORY", "OWNER/sqlgate"),
            ("SQLGATE_VERSION", "0.1.0"),
        ],
    );
    common::assert_exit(&refused, 2);
    assert!(
        text(&refused).contains("use the input install: source (builds this commit, cached)"),
        "{}",
        text(&refused)
    );
    assert_eq!(outputs, "");
    let (typo, _) = install(work.path(), &[("INSTALL", "sources")]);
    common::assert_exit(&typo, 2);
    let (mac, _) = install(
        work.path(),
        &[("RUNNER_OS", "macOS"), ("RUNNER_ARCH", "ARM64")],
    );
    common::assert_exit(&mac, 2);
    assert!(
        text(&mac).contains(
            "this runner is macOS: use a Linux runner, or the input install: source (builds this \
             commit with the runner's cargo)"
        ),
        "{}",
        text(&mac)
    );
    assert!(!text(&mac).contains("container"));
}

#[test]
fn action_yml_caches_the_source_build_under_the_commit_and_cargo_lock_key() {
    let action: serde_json::Value =
        serde_norway::from_str(&std::fs::read_to_string(root().join("action.yml")).unwrap())
            .unwrap();
    let steps = action["runs"]["steps"].as_array().unwrap();
    let names: Vec<&str> = steps.iter().filter_map(|s| s["id"].as_str()).collect();
    assert_eq!(names[..2], ["source-key", "install"]);
    let cache = &steps[1];
    assert!(cache["uses"]
        .as_str()
        .unwrap()
        .starts_with("actions/cache@0057852bfaa89a56745cba8c7296529d2fc39830"));
    assert_eq!(cache["if"], "inputs.install == 'source'");
    assert_eq!(cache["with"]["key"], "${{ steps.source-key.outputs.key }}");
    assert_eq!(
        cache["with"]["path"],
        "${{ steps.source-key.outputs.dir }}/bin"
    );
    assert_eq!(
        steps[0]["run"],
        "bash \"$GITHUB_ACTION_PATH/.ci/action-source-key\""
    );
    assert_eq!(steps[0]["env"]["ACTION_REF"], "${{ github.action_ref }}");
    let install_env = &steps[2]["env"];
    assert_eq!(install_env["INSTALL"], "${{ inputs.install }}");
    assert_eq!(
        install_env["SQLGATE_SOURCE_DIR"],
        "${{ steps.source-key.outputs.dir }}"
    );
    assert_eq!(action["inputs"]["install"]["default"], "release");
}

/// Until action.yml pins a release's checksums, `install: release` cannot work, so every shipped
/// workflow that uses the Action builds it from source (README's five-minute page copies them).
#[test]
fn every_shipped_workflow_installs_a_way_that_works_before_a_release() {
    let install = common::action_step(&common::action_yml(), "install");
    let pinned = install["env"]["SQLGATE_SHA256_X86_64"] != "";
    let mut uses = 0;
    for entry in std::fs::read_dir(root().join(".github/workflows")).unwrap() {
        let path = entry.unwrap().path();
        let workflow: serde_json::Value =
            serde_norway::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for (job, body) in workflow["jobs"].as_object().unwrap() {
            for step in body["steps"].as_array().into_iter().flatten() {
                let sqlgate = step["uses"]
                    .as_str()
                    .is_some_and(|u| u.starts_with("OWNER/sqlgate@"));
                if sqlgate {
                    uses += 1;
                    let how = step["with"]["install"].as_str().unwrap_or("release");
                    assert!(
                        pinned || how == "source",
                        "{} job {job}: install: {how} before a release is pinned",
                        path.display()
                    );
                }
            }
        }
    }
    assert!(uses >= 7, "{uses} uses of the Action");
}

/// `root/dist/sqlgate-0.1.0-TARGET.tar.gz` holding `members` (name, shell script), with its
/// `.sha256` file, as a release serves it; returns the archive's SHA-256.
fn release_asset(root: &Path, target: &str, members: &[(&str, &str)]) -> String {
    let (stage, dist) = (root.join(format!("stage-{target}")), root.join("dist"));
    std::fs::create_dir_all(&stage).unwrap();
    std::fs::create_dir_all(&dist).unwrap();
    for (name, body) in members {
        std::fs::write(stage.join(name), body).unwrap();
    }
    let name = format!("sqlgate-0.1.0-{target}.tar.gz");
    let names: Vec<&str> = members.iter().map(|(name, _)| *name).collect();
    let packed = common::shell("chmod 0755 ./*; tar -cf - \"$@\" | gzip -1 > \"$DIST/$ASSET\"")
        .current_dir(&stage)
        .arg("sh")
        .args(&names)
        .env("DIST", &dist)
        .env("ASSET", &name)
        .status()
        .unwrap();
    assert!(packed.success());
    let sum = sha256(&dist.join(&name));
    std::fs::write(
        dist.join(format!("{name}.sha256")),
        format!("{sum}  {name}\n"),
    )
    .unwrap();
    sum
}

/// `.ci/action-install`'s `install: release` on an x86_64 runner, with `getconf` answering
/// `libc` (a failing `getconf` when `None`, as on musl), against the release in `root/dist`.
pub(crate) fn install_release_x86_64(root: &Path, sums: [&str; 2], libc: Option<&str>) -> Output {
    let bin = root.join(format!("bin-{}", libc.unwrap_or("none").replace(' ', "-")));
    std::fs::create_dir_all(&bin).unwrap();
    let getconf = match libc {
        Some(answer) => format!("#!/bin/sh\necho '{answer}'\n"),
        None => {
            "#!/bin/sh\necho 'getconf: GNU_LIBC_VERSION: unknown variable' >&2\nexit 1\n".into()
        }
    };
    std::fs::write(bin.join("getconf"), getconf).unwrap();
    let made = common::shell("chmod 0755 \"$0\"")
        .arg(bin.join("getconf"))
        .status();
    assert!(made.unwrap().success());
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let release = format!("file://{}", root.join("dist").display());
    install(
        root,
        &[
            ("PATH", &path),
            ("RUNNER_OS", "Linux"),
            ("RUNNER_ARCH", "X64"),
            ("SQLGATE_REPOSITORY", "OWNER/sqlgate"),
            ("SQLGATE_VERSION", "0.1.0"),
            ("SQLGATE_SHA256_X86_64", sums[0]),
            ("SQLGATE_SHA256_X86_64_GNU", sums[1]),
            ("SQLGATE_RELEASE_URL", &release),
        ],
    )
    .0
}

/// On x86_64, `install: release` installs the glibc archive (sqlgate with DuckDB and
/// libduckdb.so) where glibc is 2.35 or newer and its binary runs; elsewhere (an older glibc, a
/// C library that is not glibc, no libstdc++) the static musl binary, saying why.
#[test]
fn install_release_picks_the_glibc_archive_only_where_it_runs() {
    let version = "#!/bin/sh\necho 'sqlgate 0.1.0'\n";
    let cases: [(&str, Option<&str>, &str, &str); 5] = [
        (version, Some("glibc 2.35"), "gnu", ""),
        (version, Some("glibc 2.39"), "gnu", ""),
        (
            version,
            Some("glibc 2.4"),
            "musl",
            "not glibc 2.35 or newer",
        ),
        (version, None, "musl", "not glibc 2.35 or newer"),
        (
            "#!/bin/sh\nexit 127\n",
            Some("glibc 2.39"),
            "musl",
            "does not run on this runner",
        ),
    ];
    for (gnu_sqlgate, libc, chosen, said) in cases {
        let work = tempfile::tempdir().unwrap();
        let root = work.path();
        let musl = release_asset(root, "x86_64-unknown-linux-musl", &[("sqlgate", version)]);
        let gnu = release_asset(
            root,
            "x86_64-unknown-linux-gnu",
            &[("sqlgate", gnu_sqlgate), ("libduckdb.so", "ELF\n")],
        );
        let installed = install_release_x86_64(root, [musl.as_str(), gnu.as_str()], libc);
        common::assert_exit(&installed, 0);
        let folder = root.join(format!("sqlgate-0.1.0-x86_64-unknown-linux-{chosen}"));
        let outputs = std::fs::read_to_string(root.join("outputs")).unwrap();
        assert_eq!(
            outputs,
            format!("path={}\nversion=0.1.0\n", folder.join("sqlgate").display()),
            "{libc:?}: {}",
            text(&installed)
        );
        assert_eq!(folder.join("libduckdb.so").is_file(), chosen == "gnu");
        let notice = if said.is_empty() { "::" } else { said };
        assert_eq!(
            text(&installed).contains(notice),
            !said.is_empty(),
            "{libc:?}: {}",
            text(&installed)
        );
    }
}

/// `.ci/pin-action binaries` on a copy of the repository's action.yml with `sums` as
/// SHA256SUMS: its output and the rewritten action.yml's text.
fn pin_binaries(sums: &str) -> (Output, String, String) {
    let work = tempfile::tempdir().unwrap();
    let copy = work.path();
    std::fs::create_dir_all(copy.join(".ci")).unwrap();
    std::fs::copy(root().join(".ci/pin-action"), copy.join(".ci/pin-action")).unwrap();
    let before = std::fs::read_to_string(root().join("action.yml")).unwrap();
    std::fs::write(copy.join("action.yml"), &before).unwrap();
    std::fs::write(copy.join("SHA256SUMS"), sums).unwrap();
    let output = Command::new("bash")
        .arg(copy.join(".ci/pin-action"))
        .args(["binaries", "acme/sqlgate", "1.2.3"])
        .arg(copy.join("SHA256SUMS"))
        .output()
        .unwrap();
    let after = std::fs::read_to_string(copy.join("action.yml")).unwrap();
    (output, before, after)
}

/// The pinned block names the three release archives; a SHA256SUMS missing any of them leaves
/// action.yml as it was.
#[test]
fn pin_action_pins_the_three_archives_and_refuses_sums_missing_one() {
    let archives = [
        ("x86_64-unknown-linux-musl", "SQLGATE_SHA256_X86_64", "1"),
        ("aarch64-unknown-linux-musl", "SQLGATE_SHA256_AARCH64", "2"),
        ("x86_64-unknown-linux-gnu", "SQLGATE_SHA256_X86_64_GNU", "3"),
    ];
    let line = |(target, _, digit): &(&str, &str, &str)| {
        format!("{}  sqlgate-1.2.3-{target}.tar.gz\n", digit.repeat(64))
    };
    let all: String = archives.iter().map(line).collect();
    let (pinned, _, after) = pin_binaries(&all);
    common::assert_exit(&pinned, 0);
    let action: serde_json::Value = serde_norway::from_str(&after).unwrap();
    let env = &common::action_step(&action, "install")["env"];
    assert_eq!(env["SQLGATE_REPOSITORY"], "acme/sqlgate");
    assert_eq!(env["SQLGATE_VERSION"], "1.2.3");
    for (_, variable, digit) in archives {
        assert_eq!(env[variable], digit.repeat(64), "{variable}");
    }
    for missing in &archives {
        let sums: String = archives
            .iter()
            .filter(|a| a != &missing)
            .map(line)
            .collect();
        let (refused, before, after) = pin_binaries(&sums);
        common::assert_exit(&refused, 2);
        let name = format!("sqlgate-1.2.3-{}.tar.gz", missing.0);
        assert!(
            text(&refused).contains(&format!("no SHA-256 for {name} in")),
            "{}",
            text(&refused)
        );
        assert_eq!(after, before, "action.yml unchanged");
    }
}
