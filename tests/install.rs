//! The Action's install paths through `.ci/action-install`, as action.yml runs it: `install:
//! source` builds a local checkout of the Action (this repository; no network beyond crates,
//! here none: its target folder is reused) and reuses the binary a cache restored; `install:
//! url` runs only a file whose SHA-256 matches; `install: release` without a pinned release
//! names the other two. action.yml wires the cache to the key of the Action's commit and
//! Cargo.lock.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `.ci/action-install` with `env`, as action.yml's install step runs it; `dir` holds the
/// step's output file.
fn install(dir: &Path, env: &[(&str, &str)]) -> (Output, String) {
    let outputs = dir.join("outputs");
    let _ = std::fs::remove_file(&outputs);
    let mut command = Command::new("bash");
    command
        .arg(root().join(".ci/action-install"))
        .env("INSTALL_ONLY", "false")
        .env("RUNNER_TEMP", dir)
        .env("GITHUB_OUTPUT", &outputs)
        .env("GITHUB_PATH", dir.join("path"))
        .env_remove("SQLGATE_SHA256_X86_64")
        .env_remove("SQLGATE_SHA256_AARCH64");
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().unwrap();
    (output, std::fs::read_to_string(outputs).unwrap_or_default())
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr)
}

fn sha256(path: &Path) -> String {
    let output = Command::new("sha256sum").arg(path).output().unwrap();
    String::from_utf8_lossy(&output.stdout)[..64].to_string()
}

#[test]
fn install_source_builds_the_actions_checkout_and_reuses_a_cached_build() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let source_dir = dir.join("sqlgate-source");
    let (checkout, target) = (root(), root().join("target"));
    let env = [
        ("INSTALL", "source"),
        ("GITHUB_ACTION_PATH", checkout.to_str().unwrap()),
        ("SQLGATE_SOURCE_DIR", source_dir.to_str().unwrap()),
        ("SQLGATE_SOURCE_PROFILE", "dev"),
        ("CARGO_TARGET_DIR", target.to_str().unwrap()),
    ];
    let (built, outputs) = install(dir, &env);
    assert!(built.status.success(), "{}", text(&built));
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
    assert!(reused.status.success(), "{}", text(&reused));
    assert!(text(&reused).contains("(cache hit): not rebuilt"));
    assert!(outputs.starts_with(&format!("path={}\n", binary.display())));
}

#[test]
fn install_url_runs_only_the_file_whose_checksum_matches() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let staging = dir.join("staging");
    std::fs::create_dir_all(&staging).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_sqlgate"), staging.join("sqlgate")).unwrap();
    let archive = dir.join("sqlgate.tar.gz");
    let packed = Command::new("tar")
        .arg("-czf")
        .arg(&archive)
        .arg("-C")
        .arg(&staging)
        .arg("sqlgate")
        .status()
        .unwrap();
    assert!(packed.success());
    let url = format!("file://{}", archive.display());
    let right = sha256(&archive);
    let (installed, outputs) = install(
        dir,
        &[
            ("INSTALL", "url"),
            ("BINARY_URL", &url),
            ("BINARY_SHA256", &right),
        ],
    );
    assert!(installed.status.success(), "{}", text(&installed));
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
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        text(&refused).contains(&format!(
            "has SHA-256 {right}, binary-sha256 says {wrong}: refusing to run it"
        )),
        "{}",
        text(&refused)
    );
    assert_eq!(outputs, "", "nothing installed");
    let leftover = dir.join(format!("sqlgate-url-{}/sqlgate", &wrong[..16]));
    assert!(!leftover.exists());

    let (unpinned, _) = install(dir, &[("INSTALL", "url"), ("BINARY_URL", &url)]);
    assert_eq!(unpinned.status.code(), Some(2));
    assert!(text(&unpinned).contains("install: url needs binary-sha256"));
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
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        text(&refused).contains("use the input install: source (builds this commit, cached)"),
        "{}",
        text(&refused)
    );
    assert_eq!(outputs, "");
    let (typo, _) = install(work.path(), &[("INSTALL", "sources")]);
    assert_eq!(typo.status.code(), Some(2));
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
    let key_script = steps[0]["run"].as_str().unwrap();
    for part in [
        "ACTION_REF",
        "sha256sum Cargo.lock",
        "RUNNER_OS",
        "RUNNER_ARCH",
    ] {
        assert!(key_script.contains(part), "{part}");
    }
    let install_env = &steps[2]["env"];
    assert_eq!(install_env["INSTALL"], "${{ inputs.install }}");
    assert_eq!(
        install_env["SQLGATE_SOURCE_DIR"],
        "${{ steps.source-key.outputs.dir }}"
    );
    assert_eq!(action["inputs"]["install"]["default"], "release");
}
