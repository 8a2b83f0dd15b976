//! Helpers every benchmark shares (each bench includes this file with `mod common;` and uses the
//! ones it needs): where the Spider data is, the process's CPU time and peak memory, a median.
// Each bench is its own crate and uses only some of these.
#![allow(dead_code)]

use std::path::PathBuf;

/// The Spider dev folder: `SQLGATE_SPIDER`, else the shared data next to the repository.
pub fn spider_dir() -> PathBuf {
    std::env::var_os("SQLGATE_SPIDER")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/spider"))
}

/// CPU time (user + system) of this process and its finished threads, in seconds.
pub fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok());
    match (ticks(11), ticks(12)) {
        (Some(user), Some(system)) => (user + system) / 100.0,
        _ => f64::NAN,
    }
}

/// Peak resident memory of this process so far, in MiB.
pub fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

/// The middle value of `values` (the upper one of an even count; NaN sorts last).
pub fn median<T: PartialOrd + Copy>(mut values: Vec<T>) -> T {
    values.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Greater));
    values[values.len() / 2]
}
