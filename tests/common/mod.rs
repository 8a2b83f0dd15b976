//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The shared benchmark data (real Spider dev files), beside the repository.
pub fn shared_spider() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/spider");
    assert!(
        path.join("dev_gold.sql").is_file(),
        "the shared Spider data must be at {}",
        path.display()
    );
    path
}

/// Runs the `sqlgate` binary with `args`.
pub fn sqlgate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sqlgate"))
        .args(args)
        .output()
        .expect("the sqlgate binary runs")
}

/// Reads a JSONL file into values.
pub fn read_jsonl(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .expect("jsonl exists")
        .lines()
        .map(|l| serde_json::from_str(l).expect("valid JSON line"))
        .collect()
}

/// Every file below `dir` with its content, for before/after comparisons.
pub fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).expect("readable folder") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).expect("readable file");
                files.push((path, bytes));
            }
        }
    }
    files.sort();
    files
}
