//! Every file sqlgate reads whole is a bounded read of a regular file: a dataset file (gold,
//! tables.json) that is a FIFO (never opened, so the run cannot hang) or larger than the bound
//! (refused before it is read), or a report `sqlgate comment` posts that is a symlink to
//! `/dev/zero` or larger than its bound, stops the run with exit 2 naming it, memory bounded.

use crate::common;

use common::measure::run_measured;
use common::sqlgate_command;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::Duration;

/// Peak memory (KiB) a refused read may cost: the binary's own, far below what reading
/// `/dev/zero` until a bound of hundreds of MiB would take.
const PEAK_KIB: u64 = 200 * 1024;

/// A Spider config over the bundled example whose `gold` and `tables` are `gold` and `tables`.
fn write_config(dir: &Path, gold: &Path, tables: &Path) -> std::path::PathBuf {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/spider-mini");
    std::fs::write(dir.join("m.txt"), "SELECT 1\n").unwrap();
    let config = dir.join("sqlgate.yml");
    std::fs::write(
        &config,
        format!(
            "dataset: {{ gold: {gold}, tables: {tables}, databases: {ex}/database }}\n\
             predictions: [{{ path: {dir}/m.txt }}]\n\
             metrics: [ex]\n\
             report: {{ output: {dir}/report.md }}\n",
            gold = gold.display(),
            tables = tables.display(),
            ex = example.display(),
            dir = dir.display(),
        ),
    )
    .unwrap();
    config
}

/// Runs `args` under a watch and returns exit code, stderr and peak memory (KiB).
fn measured(args: &[&str]) -> (Option<i32>, String, u64) {
    let (output, peak) = run_measured(sqlgate_command(args), Duration::from_secs(60));
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        peak,
    )
}

#[test]
fn a_fifo_or_oversized_dataset_file_stops_the_run_naming_it() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/spider-mini");
    let fifo = dir.join("fifo-gold.sql");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let config = write_config(dir, &fifo, &example.join("tables.json"));
    let (code, stderr, peak) = measured(&["eval", "--config", config.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stderr}");
    common::assert_contains(&stderr, &["fifo-gold.sql", "not a regular file"]);
    assert!(peak < PEAK_KIB, "peak RSS {peak} KiB: {stderr}");

    std::fs::write(dir.join("gold.sql"), "SELECT 1\tconcert_singer\n").unwrap();
    let tables = dir.join("huge-tables.json");
    std::fs::File::create(&tables)
        .unwrap()
        .set_len(sqlgate::util::error::MAX_INPUT_BYTES + 1)
        .unwrap();
    let config = write_config(dir, &dir.join("gold.sql"), &tables);
    let (code, stderr, peak) = measured(&["eval", "--config", config.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("huge-tables.json")
            && stderr.contains(&format!(
                "larger than {} bytes",
                sqlgate::util::error::MAX_INPUT_BYTES
            )),
        "{stderr}"
    );
    assert!(peak < PEAK_KIB, "peak RSS {peak} KiB: {stderr}");
}

#[test]
fn a_comment_report_that_is_dev_zero_or_too_large_is_refused_naming_it() {
    let work = tempfile::tempdir().unwrap();
    let report = work.path().join("report.md");
    symlink("/dev/zero", &report).unwrap();
    let (code, stderr, peak) = measured(&["comment", "--report", report.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stderr}");
    common::assert_contains(&stderr, &["report.md", "not a regular file"]);
    assert!(peak < PEAK_KIB, "peak RSS {peak} KiB: {stderr}");

    let large = work.path().join("large.md");
    let marker = "<!-- sqlgate:gate -->\n";
    let mut body = marker.to_string();
    body.push_str(&"x".repeat((sqlgate::ci::fork::MAX_REPORT_BYTES as usize) + 1 - marker.len()));
    std::fs::write(&large, body).unwrap();
    let (code, stderr, _) = measured(&["comment", "--report", large.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("large.md")
            && stderr.contains(&format!(
                "larger than {} bytes",
                sqlgate::ci::fork::MAX_REPORT_BYTES
            )),
        "{stderr}"
    );
}
