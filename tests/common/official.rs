//! BIRD mini-dev's official evaluation loop (tests/bird_official/, run with psycopg2 / PyMySQL)
//! on a live server, for tests that compare sqlgate's verdicts with it item by item.

use serde_json::Value as Json;
use std::path::Path;

/// The official loop's per-item `ex` and `soft_f1` (JSON lines `{index, ex, soft_f1}`) for
/// `predicted` (BIRD's predictions JSON) against `gold` (BIRD's `sql<TAB>db_id` lines) on the
/// server `url` reaches; `dialect` is the official `sql_dialect` (`PostgreSQL`, `MySQL`).
pub fn items(dialect: &str, predicted: &Path, gold: &Path, url: &str, dir: &Path) -> Vec<Json> {
    let output_path = dir.join("official.jsonl");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bird_official/run");
    let output = std::process::Command::new("bash")
        .arg(script)
        .args(["--dialect", dialect, "--num-cpus", "4"])
        .arg("--predicted")
        .arg(predicted)
        .arg("--gold")
        .arg(gold)
        .arg("--output")
        .arg(&output_path)
        .env("BIRD_OFFICIAL_URL", url)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the official loop failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    super::read_jsonl(&output_path)
}
