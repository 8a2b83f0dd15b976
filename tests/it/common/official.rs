//! BIRD mini-dev's official evaluation loop on a live server, for tests that compare sqlgate's
//! verdicts with it item by item, and the verdicts it gave, recorded in tests/data/bird/servers/.
//!
//! The official code is not in this repository. With `SQLGATE_BIRD_OFFICIAL` naming
//! bird-bench/mini_dev's evaluation/ folder at bee73fe, the loop runs live
//! (tests/bird_official/run, psycopg2 / PyMySQL) and its verdicts must equal the recording;
//! with `SQLGATE_BIRD_RECORD=1` as well, they are written as the new recording instead. Without
//! the variable (CI) the recorded verdicts are used, after checking they were recorded from the
//! same inputs (gold, predictions, databases).

use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The variable naming the official evaluation folder (live runs only).
pub const UPSTREAM_VARIABLE: &str = "SQLGATE_BIRD_OFFICIAL";
/// The variable that makes a live run write the recording (`1`).
pub const RECORD_VARIABLE: &str = "SQLGATE_BIRD_RECORD";

/// One comparison's identity: its recording's name and what its verdicts depend on.
pub struct Comparison<'a> {
    /// The recording's file stem in tests/data/bird/servers/.
    pub name: &'a str,
    /// A digest of the inputs (gold, predictions, database contents).
    pub inputs_sha256: String,
    /// The server's version string (recorded for the reader, not compared).
    pub server: String,
    /// Items whose verdicts may change from run to run, with the reason (found on the live
    /// server): left out of a comparison where they differ.
    pub unstable: BTreeMap<usize, String>,
}

/// The field of a recorded item that may be left out, holding the reason.
pub const UNSTABLE: &str = "left_out_when_different";

/// sqlgate's `metric` of one item (a JSONL line) as the official loop counts it: the loop charges
/// a failing gold to the prediction (score 0), where sqlgate reports it apart.
pub fn as_official(line: &Json, metric: &str) -> Option<f64> {
    match line["outcome"][metric].as_str() {
        Some("gold_error") => Some(0.0),
        _ => line["metrics"][metric].as_f64(),
    }
}

/// The recording of a comparison.
pub fn recording_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/bird/servers")
        .join(format!("{name}.jsonl"))
}

/// The official per-item verdicts (`{index, ex, soft_f1}`) for `comparison`: live when
/// `SQLGATE_BIRD_OFFICIAL` is set (checked against the recording, or recorded), else recorded.
/// `live` runs the official loop. Unstable items are not compared between live and recorded
/// verdicts; they carry `left_out_when_different` and their reason.
pub fn verdicts(comparison: &Comparison, live: impl FnOnce() -> (Vec<Json>, Json)) -> Vec<Json> {
    let upstream = std::env::var(UPSTREAM_VARIABLE).unwrap_or_default();
    if upstream.is_empty() {
        println!("{}: recorded official verdicts", comparison.name);
        return recorded(comparison);
    }
    let mut items = live_checked(comparison, live);
    for item in &mut items {
        if let Some(reason) = comparison.unstable.get(&index(item)) {
            item[UNSTABLE] = Json::from(reason.as_str());
        }
    }
    items
}

/// The live verdicts, recorded or checked against the recording.
fn live_checked(comparison: &Comparison, live: impl FnOnce() -> (Vec<Json>, Json)) -> Vec<Json> {
    let (items, versions) = live();
    if std::env::var(RECORD_VARIABLE).as_deref() == Ok("1") {
        record(comparison, &items, versions);
        println!("{}: official verdicts recorded", comparison.name);
    } else {
        let recording = recorded(comparison);
        let differences = differences(comparison, &items, &recording);
        assert!(
            differences.is_empty(),
            "{}: the live official loop and the recording differ:\n{}",
            comparison.name,
            differences.join("\n")
        );
        let varied = comparison
            .unstable
            .keys()
            .filter(|&&at| {
                ["ex", "soft_f1"]
                    .iter()
                    .any(|m| items[at][m] != recording[at][m])
            })
            .count();
        println!(
            "{}: live official verdicts equal the recording ({} items compared; of the {} left \
             out when different, {varied} differ from the recording)",
            comparison.name,
            items.len() - comparison.unstable.len(),
            comparison.unstable.len()
        );
    }
    items
}

/// The recording's items, after checking its inputs and unstable items match `comparison`.
fn recorded(comparison: &Comparison) -> Vec<Json> {
    let path = recording_path(comparison.name);
    assert!(
        path.is_file(),
        "no recording {}: record it with {UPSTREAM_VARIABLE}=<mini_dev evaluation/ at bee73fe> \
         {RECORD_VARIABLE}=1 (tests/data/bird/servers/README.md)",
        path.display()
    );
    let mut lines = super::read_jsonl(&path).into_iter();
    let header = lines.next().expect("a recording starts with its header");
    assert_eq!(
        header["recording"]["inputs_sha256"].as_str(),
        Some(comparison.inputs_sha256.as_str()),
        "{} was recorded from other inputs (gold, predictions or databases changed): record it \
         again (tests/data/bird/servers/README.md)",
        path.display()
    );
    let items: Vec<Json> = lines.collect();
    let recorded_unstable: BTreeMap<usize, String> = items
        .iter()
        .filter_map(|item| Some((index(item), item[UNSTABLE].as_str()?.to_string())))
        .collect();
    assert_eq!(
        recorded_unstable,
        comparison.unstable,
        "{}: the items left out when different are not the recording's",
        path.display()
    );
    items
}

/// Where live verdicts and the recording disagree (unstable items excepted).
fn differences(comparison: &Comparison, live: &[Json], recording: &[Json]) -> Vec<String> {
    if live.len() != recording.len() {
        return vec![format!(
            "{} live items, {} recorded",
            live.len(),
            recording.len()
        )];
    }
    let mut differences = Vec::new();
    for (item, recorded) in live.iter().zip(recording) {
        let position = index(item);
        if comparison.unstable.contains_key(&position) {
            continue;
        }
        for metric in ["index", "ex", "soft_f1"] {
            if item[metric].as_f64() != recorded[metric].as_f64() {
                differences.push(format!(
                    "item {position} {metric}: live {}, recorded {}",
                    item[metric], recorded[metric]
                ));
            }
        }
    }
    differences
}

/// Writes the recording: a header line, then one line per item (unstable ones with their reason).
fn record(comparison: &Comparison, items: &[Json], versions: Json) {
    let header = json!({"recording": {
        "comparison": comparison.name,
        "official": versions,
        "server": comparison.server,
        "inputs_sha256": comparison.inputs_sha256,
        "items": items.len(),
        "left_out_when_different": comparison.unstable.len(),
    }});
    let mut text = format!("{header}\n");
    for item in items {
        let mut line =
            json!({"index": item["index"], "ex": item["ex"], "soft_f1": item["soft_f1"]});
        if let Some(reason) = comparison.unstable.get(&index(item)) {
            line[UNSTABLE] = Json::from(reason.as_str());
        }
        text.push_str(&format!("{line}\n"));
    }
    let path = recording_path(comparison.name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
}

fn index(item: &Json) -> usize {
    item["index"].as_u64().expect("an item has its index") as usize
}

/// The official loop's per-item `ex` and `soft_f1` (JSON lines `{index, ex, soft_f1}`) for
/// `predicted` (BIRD's predictions JSON) against `gold` (BIRD's `sql<TAB>db_id` lines) on the
/// server `url` reaches, with the versions it ran with; `dialect` is the official `sql_dialect`
/// (`PostgreSQL`, `MySQL`). Needs `SQLGATE_BIRD_OFFICIAL`.
pub fn items(
    dialect: &str,
    predicted: &Path,
    gold: &Path,
    url: &str,
    dir: &Path,
) -> (Vec<Json>, Json) {
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
    let report: Json =
        serde_json::from_slice(&output.stdout).expect("the official loop prints its report");
    (super::read_jsonl(&output_path), report["versions"].clone())
}
