//! Conformance with the official Spider / test-suite evaluator: on the four published systems'
//! predictions and on the gold itself, every non-skipped item's `ex` verdict equals the official
//! `exec`, its `esm` verdict the official `exact`, its parse acceptance the official `parsed`, and
//! its difficulty the official `hardness`. No allowlist.

use crate::common;

use common::{eval_items, read_jsonl, shared_spider};
use serde_json::Value;
use std::collections::HashMap;

const SYSTEMS: [&str; 5] = ["C3", "Claude", "GPT4Turbo", "RESDSQL", "gold"];

fn official_verdicts(system: &str) -> Vec<Value> {
    read_jsonl(&shared_spider().join(format!("reference/official-{system}.jsonl")))
}

#[test]
fn ex_esm_and_hardness_match_the_official_evaluator_item_for_item() {
    let work = tempfile::tempdir().unwrap();
    let config = common::config::shared_systems(work.path(), "ex, esm");
    let ours: HashMap<(String, u64), Value> = eval_items(&config, &[])
        .into_iter()
        .map(|r| {
            (
                (
                    r["system"].as_str().unwrap().to_string(),
                    r["index"].as_u64().unwrap(),
                ),
                r,
            )
        })
        .collect();
    let mut disagreements = Vec::new();
    let mut compared = 0;
    for system in SYSTEMS {
        for official in official_verdicts(system) {
            let index = official["i"].as_u64().unwrap();
            let mine = &ours[&(system.to_string(), index)];
            if official.get("skipped").is_some() {
                assert_eq!(mine["outcome"]["ex"], "skipped", "{system} item {index}");
                assert_ne!(
                    mine["outcome"]["esm"], "skipped",
                    "esm scores {system} item {index} from tables.json"
                );
                continue;
            }
            compared += 1;
            if mine["metrics"]["ex"] != official["exec"] {
                disagreements.push(format!(
                    "{system} #{index}: ex {} vs official {}",
                    mine["metrics"]["ex"], official["exec"]
                ));
            }
            if mine["metrics"]["esm"] != official["exact"] {
                disagreements.push(format!(
                    "{system} #{index}: esm {} vs official {}",
                    mine["metrics"]["esm"], official["exact"]
                ));
            }
            let parsed = mine["outcome"]["esm"] != "pred_error";
            if official["parsed"] != parsed {
                disagreements.push(format!(
                    "{system} #{index}: parsed {parsed} vs official {}",
                    official["parsed"]
                ));
            }
            if mine["difficulty"] != official["hardness"] {
                disagreements.push(format!(
                    "{system} #{index}: hardness {} vs official {}",
                    mine["difficulty"], official["hardness"]
                ));
            }
        }
    }
    assert_eq!(compared, 5 * 972);
    assert!(
        disagreements.is_empty(),
        "{} disagreements:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
}
