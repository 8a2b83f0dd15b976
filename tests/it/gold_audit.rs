//! The gold audit and reviewed gold overrides through the binary, on the bundled example (four
//! Spider databases, two systems): `sqlgate audit` writes its findings, an alternative gold
//! turns a prediction right, a pull request cannot bring its own overrides (to its run or to
//! `audit --trusted-base`), an override naming an item the dataset lacks is an input error,
//! `summary.json` lists the overrides, an excluded item never regresses, and the comment of a
//! pull request that regresses an item whose gold ties at its LIMIT cut says so.

use crate::common;
use common::text;

use common::git;
use common::repo::{self, judged, sqlgate_in};
use std::path::Path;

/// A copy of the example (with its baseline), its config reading `overrides.jsonl` (empty), in
/// a git repository.
fn example() -> tempfile::TempDir {
    let dir = repo::example(true);
    let root = dir.path();
    let config = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
    std::fs::write(
        root.join("sqlgate.yml"),
        config + "audit: { overrides: overrides.jsonl }\n",
    )
    .unwrap();
    std::fs::write(root.join("overrides.jsonl"), "").unwrap();
    repo::init_main(root, "example");
    dir
}

/// An item whose gold the audit finds tied at its LIMIT cut (`limit-tie`) and C3 gets right.
fn tied_match(root: &Path) -> usize {
    let findings = audit(root);
    let outcomes = ex_outcomes(root, "C3", None);
    findings
        .iter()
        .find(|(i, kind)| kind == "limit-tie" && outcomes[*i] == "match")
        .map(|(i, _)| *i)
        .expect("the example has a gold tied at its LIMIT cut that C3 gets right")
}

/// Per-item EX outcomes of `system` from an eval's `--jsonl` (`trusted_base`: the PR's base).
fn ex_outcomes(root: &Path, system: &str, trusted_base: Option<&str>) -> Vec<String> {
    let mut args = [&repo::EVAL[..], &["--jsonl", "items.jsonl"]].concat();
    if let Some(base) = trusted_base {
        args.extend(["--trusted-base", base]);
    }
    let output = sqlgate_in(root, &args, &[]);
    assert!(
        output.status.code().is_some_and(|c| c <= 1),
        "{}",
        text(&output)
    );
    std::fs::read_to_string(root.join("items.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["system"] == system)
        .map(|v| v["outcome"]["ex"].as_str().unwrap().to_string())
        .collect()
}

fn prediction(root: &Path, system: &str, index: usize) -> String {
    let path = root.join(format!("predictions/{system}.txt"));
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .nth(index)
        .unwrap()
        .to_string()
}

/// The first item C3 gets wrong (a mismatch), with C3's prediction for it.
fn first_wrong(root: &Path) -> (usize, String) {
    let index = ex_outcomes(root, "C3", None)
        .iter()
        .position(|o| o == "mismatch")
        .expect("C3 gets an item wrong");
    (index, prediction(root, "C3", index))
}

fn alternative(index: usize, sql: &str) -> String {
    serde_json::json!({"index": index, "alternatives": [sql], "reason": "reviewed: also right"})
        .to_string()
        + "\n"
}

#[test]
fn an_alternative_gold_turns_a_matching_prediction_right() {
    let dir = example();
    let root = dir.path();
    let (index, sql) = first_wrong(root);
    std::fs::write(root.join("overrides.jsonl"), alternative(index, &sql)).unwrap();
    let outcomes = ex_outcomes(root, "C3", None);
    assert_eq!(outcomes[index], "match");
    // An exclusion leaves the item unscored.
    let excluded = serde_json::json!({"index": index, "exclude": true, "reason": "ambiguous"});
    std::fs::write(root.join("overrides.jsonl"), format!("{excluded}\n")).unwrap();
    assert_eq!(ex_outcomes(root, "C3", None)[index], "skipped");
}

#[test]
fn a_pull_request_cannot_bring_its_own_overrides() {
    let dir = example();
    let root = dir.path();
    let (index, sql) = first_wrong(root);
    let base = repo::commit_baseline(root, "baseline");
    git(root, &["checkout", "-qb", "pr"]);
    std::fs::write(root.join("overrides.jsonl"), alternative(index, &sql)).unwrap();
    git(root, &["commit", "-qam", "my prediction is a gold too"]);
    assert_eq!(ex_outcomes(root, "C3", Some(&base))[index], "mismatch");
    let report = std::fs::read_to_string(root.join("sqlgate-report.md")).unwrap();
    assert!(
        report.contains("this pull request changes the gold overrides"),
        "the comment says the pull request's overrides were not used: {report}"
    );
    // What the overrides would change once merged is shown: the base's C3 re-scored with them.
    common::assert_contains(&report, &["Proposed benchmark", "changes overrides.jsonl"]);
    let args = [
        &repo::EVAL[..],
        &["--trusted-base", &base, "--summary", "s.json"],
    ]
    .concat();
    common::exited(&sqlgate_in(root, &args, &[]), 0);
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("s.json")).unwrap()).unwrap();
    let change = &summary["proposed_benchmark"];
    assert_eq!(change["changed"], serde_json::json!(["overrides.jsonl"]));
    let c3 = (change["systems"].as_array().unwrap().iter())
        .find(|s| s["name"] == "C3")
        .unwrap();
    assert_eq!(c3["turn_right"], serde_json::json!([index]), "{change}");
    assert_eq!(c3["turn_wrong"], serde_json::json!([]), "{change}");
    assert_eq!(ex_outcomes(root, "C3", None)[index], "match");
}

#[test]
fn an_override_naming_an_item_the_dataset_lacks_is_an_input_error() {
    let dir = example();
    let root = dir.path();
    let lines = alternative(0, "SELECT 1")
        + &serde_json::json!({"index": 100000, "exclude": true, "reason": "x"}).to_string();
    std::fs::write(root.join("overrides.jsonl"), lines).unwrap();
    let output = sqlgate_in(root, &repo::EVAL, &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    common::assert_exit(&output, 2);
    common::assert_contains(&stderr, &["overrides.jsonl", "line 2"]);
    common::assert_contains(&stderr, &["item 100000 is not in the dataset"]);
}

/// Runs `sqlgate audit --jsonl audit.jsonl --report audit.md` (`trusted_base`: the pull
/// request's base); its stdout and both files.
fn audit_run(root: &Path, trusted_base: Option<&str>) -> (String, String, String) {
    let mut args = vec![
        "audit",
        "--config",
        "sqlgate.yml",
        "--jsonl",
        "audit.jsonl",
        "--report",
        "audit.md",
    ];
    if let Some(base) = trusted_base {
        args.extend(["--trusted-base", base]);
    }
    let output = sqlgate_in(root, &args, &[]);
    common::assert_exit(&output, 0);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    common::assert_contains(&stdout, &["gold audit: "]);
    let read = |name: &str| std::fs::read_to_string(root.join(name)).unwrap();
    (stdout, read("audit.jsonl"), read("audit.md"))
}

/// `sqlgate audit --jsonl` of the example: (index, kind) per finding.
fn audit(root: &Path) -> Vec<(usize, String)> {
    let (_, jsonl, report) = audit_run(root, None);
    assert!(report.starts_with("## Gold audit"));
    jsonl
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert!(v["db_id"].is_string() && v["evidence"].is_string(), "{l}");
            (
                v["index"].as_u64().unwrap() as usize,
                v["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn the_comment_of_a_pull_request_regressing_a_tied_gold_says_so() {
    let dir = example();
    let root = dir.path();
    let index = tied_match(root);
    let base = repo::commit_baseline(root, "baseline");
    git(root, &["checkout", "-qb", "pr"]);
    common::break_prediction(root, "C3", index);
    git(root, &["commit", "-qam", "one item worse"]);
    let output = judged(root, &base, &[]);
    assert!(
        output.status.code().is_some_and(|c| c <= 1),
        "{}",
        text(&output)
    );
    let report = std::fs::read_to_string(root.join("sqlgate-report.md")).unwrap();
    let expected = format!(
        "- item {index} regressed, but its gold is flagged `limit-tie` by the gold audit: on "
    );
    common::assert_contains(&report, &[&expected]);
}

#[test]
fn a_pull_requests_own_overrides_do_not_change_its_audit() {
    let dir = example();
    let root = dir.path();
    let base = repo::head(root);
    let (_, base_jsonl, base_report) = audit_run(root, Some(&base));
    assert!(
        !base_report.contains("Reviewed gold overrides"),
        "{base_report}"
    );
    git(root, &["checkout", "-qb", "pr"]);
    let replaced = serde_json::json!({
        "index": 0, "replace": "SELECT nope FROM nowhere", "reason": "my gold now"
    });
    std::fs::write(root.join("overrides.jsonl"), format!("{replaced}\n")).unwrap();
    git(root, &["commit", "-qam", "a gold of my own"]);

    // Read from the working tree, the pull request's override changes the audit...
    let (_, jsonl, report) = audit_run(root, None);
    assert!(
        jsonl.starts_with("{\"index\":0,\"db_id\":\"concert_singer\",\"kind\":\"gold-error\""),
        "{jsonl}"
    );
    common::assert_contains(
        &report,
        &[
            "### Reviewed gold overrides",
            "| 0 | replaced | my gold now |",
        ],
    );
    // ...read from the base commit, it does not, and the audit says it was not used.
    let (stdout, jsonl, report) = audit_run(root, Some(&base));
    assert_eq!(jsonl, base_jsonl);
    assert_eq!(report, base_report);
    common::assert_contains(
        &stdout,
        &[
            "note: this pull request changes the gold overrides",
            "trusted inputs (config, gold overrides) read from the base",
        ],
    );
}

#[test]
fn overrides_are_listed_in_the_summary_and_an_excluded_item_never_regresses() {
    let dir = example();
    let root = dir.path();
    let tied = tied_match(root);
    let (wrong, sql) = first_wrong(root);
    repo::commit_baseline(root, "baseline");
    // The base reviews two golds after its baseline was made: one excluded, one given an
    // alternative.
    let excluded = serde_json::json!({"index": tied, "exclude": true, "reason": "tied at the cut"});
    let lines = [excluded.to_string(), alternative(wrong, &sql)];
    std::fs::write(root.join("overrides.jsonl"), lines.join("\n")).unwrap();
    let base = repo::commit_base(root, "reviewed golds", "pr");
    common::break_prediction(root, "C3", tied);
    git(root, &["commit", "-qam", "the excluded item worse"]);
    let output = judged(root, &base, &["--summary", "summary.json"]);
    common::assert_exit(&output, 0);
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("summary.json")).unwrap()).unwrap();
    let db_id = |index: usize| {
        let gold = std::fs::read_to_string(root.join("dev_gold.sql")).unwrap();
        let line = gold.lines().nth(index).unwrap().to_string();
        line.rsplit('\t').next().unwrap().trim().to_string()
    };
    let mut expected = vec![
        serde_json::json!({"index": tied, "db_id": db_id(tied), "action": "excluded", "reason": "tied at the cut"}),
        serde_json::json!({"index": wrong, "db_id": db_id(wrong), "action": "alternatives", "reason": "reviewed: also right"}),
    ];
    expected.sort_by_key(|v| v["index"].as_u64());
    assert_eq!(summary["gold_overrides"], serde_json::json!(expected));
    let cells: Vec<&serde_json::Value> = (summary["gate"]["cells"].as_array().unwrap())
        .iter()
        .filter(|c| c["system"] == "C3")
        .collect();
    assert!(!cells.is_empty(), "{summary}");
    for cell in cells {
        assert_eq!(cell["regressed"], serde_json::json!([]), "{cell}");
        assert_eq!(cell["verdict"], "pass", "{cell}");
    }
    let report = std::fs::read_to_string(root.join("sqlgate-report.md")).unwrap();
    assert!(
        !report.contains(&format!("item {tied} regressed")),
        "{report}"
    );
    common::assert_contains(
        &report,
        &[&format!("| {tied} | excluded | tied at the cut |")],
    );
}
