//! Running the binary under a watch: its peak memory and a time limit.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `command` to completion and returns its output with its peak resident memory (KiB),
/// sampled from `/proc` while it runs; fails after `limit`.
pub fn run_measured(mut command: Command, limit: Duration) -> (Output, u64) {
    let dir = tempfile::tempdir().unwrap();
    let (out, err) = (dir.path().join("out"), dir.path().join("err"));
    command
        .stdout(Stdio::from(std::fs::File::create(&out).unwrap()))
        .stderr(Stdio::from(std::fs::File::create(&err).unwrap()));
    let mut child = command.spawn().unwrap();
    let started = Instant::now();
    let mut peak = 0;
    let status = loop {
        let status_file = format!("/proc/{}/status", child.id());
        if let Ok(status) = std::fs::read_to_string(status_file) {
            let hwm = status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
            peak = peak.max(hwm.unwrap_or(0));
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            child.kill().unwrap();
            panic!("still running after {limit:?}, {peak} KiB");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let output = Output {
        status,
        stdout: std::fs::read(out).unwrap(),
        stderr: std::fs::read(err).unwrap(),
    };
    (output, peak)
}
