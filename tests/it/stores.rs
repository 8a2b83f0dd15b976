//! Baselines and shards are validated on load, through the binary: a hand edit fails their
//! digest; with the digest recomputed, values out of range, `null` where scored, unknown
//! outcomes, indexes outside the dataset and missing or repeated records are still refused,
//! naming the file, the system and the record.

use crate::common;

use common::sqlgate;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Output;

/// A copy of the spider-mini example (157 items, systems C3 and RESDSQL, a baseline).
fn example(dir: &Path) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/spider-mini");
    copy_dir(&source, dir);
    dir.join("sqlgate.yml")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// An edit of a JSON document, and what the refusal must say.
type Edit = Box<dyn FnOnce(&mut Value)>;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn eval(config: &Path) -> Output {
    common::eval(config, &[])
}

fn assert_refused(output: &Output, needles: &[&str]) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "stderr: {stderr}");
    for needle in needles {
        assert!(stderr.contains(needle), "`{needle}` not in: {stderr}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
}

fn first(baseline: &mut Value) -> &mut Value {
    &mut baseline["systems"]["C3"][0]
}

/// Rewrites the baseline through `edit`, recomputing its records digest as sqlgate does
/// (SHA-256 of `systems` as compact JSON), so only the record checks can refuse it.
fn edit_baseline(path: &Path, original: &Value, edit: impl FnOnce(&mut Value)) {
    let mut baseline = original.clone();
    edit(&mut baseline);
    let digest = hex(&Sha256::digest(
        serde_json::to_string(&baseline["systems"]).unwrap(),
    ));
    baseline["records_sha256"] = Value::String(digest);
    std::fs::write(path, serde_json::to_string_pretty(&baseline).unwrap()).unwrap();
}

#[test]
fn baselines_are_validated_on_load() {
    let dir = tempfile::tempdir().unwrap();
    let config = example(dir.path());
    let path = dir.path().join("baseline.json");
    let shipped = std::fs::read_to_string(&path).unwrap();
    let output = eval(&config);
    common::assert_exit(&output, 0);

    let hand_edited = shipped.replacen("\"ex\": 0.0", "\"ex\": 1.0", 1);
    assert_ne!(hand_edited, shipped);
    std::fs::write(&path, hand_edited).unwrap();
    assert_refused(
        &eval(&config),
        &["baseline.json", "records_sha256", "digest"],
    );

    let original: Value = serde_json::from_str(&shipped).unwrap();
    let cases: Vec<(Edit, Vec<&str>)> = vec![
        (
            Box::new(|b| first(b)["metrics"]["ex"] = 7.5.into()),
            vec!["system `C3`, record 0", "`ex` value 7.5 is outside [0, 1]"],
        ),
        (
            Box::new(|b| first(b)["metrics"]["ex"] = (-3).into()),
            vec!["system `C3`, record 0", "outside [0, 1]"],
        ),
        (
            Box::new(|b| first(b)["metrics"]["ex"] = Value::Null),
            vec!["`ex` is `null` but its outcome `match` says it was scored"],
        ),
        (
            Box::new(|b| first(b)["outcome"]["esm"] = "great".into()),
            vec!["unknown outcome `great`"],
        ),
        (
            Box::new(|b| first(b)["index"] = 1_000_000_000_000u64.into()),
            vec![
                "system `C3`",
                "index 1000000000000 is not an item",
                "157 items",
            ],
        ),
        (
            Box::new(|b| {
                b["systems"]["C3"]
                    .as_array_mut()
                    .unwrap()
                    .retain(|r| r["index"].as_u64().unwrap() % 3 == 0 || r["index"] == 1)
            }),
            vec!["system `C3`", "54 records for 157 items: 103 missing"],
        ),
        (
            Box::new(|b| {
                let records = b["systems"]["RESDSQL"].as_array_mut().unwrap();
                records.truncate(57);
            }),
            vec!["system `RESDSQL`", "57 records for 157 items: 100 missing"],
        ),
        (
            Box::new(|b| {
                let records = b["systems"]["C3"].as_array_mut().unwrap();
                records[5] = records[4].clone();
            }),
            vec!["system `C3`", "item 4 has two records"],
        ),
    ];
    for (edit, needles) in cases {
        edit_baseline(&path, &original, edit);
        assert_refused(&eval(&config), &needles);
    }

    let mut old = original.clone();
    old.as_object_mut().unwrap().remove("records_sha256");
    std::fs::write(&path, serde_json::to_string_pretty(&old).unwrap()).unwrap();
    let output = eval(&config);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    common::assert_contains(&stdout, &["carries no records digest"]);
}

/// Rewrites line `line` of a shard through `edit` and recomputes its digest trailer.
fn edit_shard(path: &Path, original: &str, line: usize, edit: impl FnOnce(&mut Value)) {
    let mut lines: Vec<String> = original.lines().map(str::to_string).collect();
    lines.pop();
    let mut record: Value = serde_json::from_str(&lines[line]).unwrap();
    edit(&mut record);
    lines[line] = serde_json::to_string(&record).unwrap();
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let trailer = serde_json::json!({ "sqlgate_shard_sha256": hex(&Sha256::digest(&body)) });
    std::fs::write(path, format!("{body}{trailer}\n")).unwrap();
}

#[test]
fn shards_are_validated_on_merge() {
    let dir = tempfile::tempdir().unwrap();
    let config = example(dir.path());
    let config = config.to_str().unwrap();
    let shard = |i: usize| dir.path().join(format!("shard{i}.jsonl"));
    for i in 1..=2 {
        let output = sqlgate(&[
            "eval",
            "--config",
            config,
            "--shard",
            &format!("{i}/2"),
            "--jsonl",
            shard(i).to_str().unwrap(),
        ]);
        common::assert_exit(&output, 0);
    }
    let (first, second) = (shard(1), shard(2));
    let merge = || {
        sqlgate(&[
            "merge",
            "--config",
            config,
            first.to_str().unwrap(),
            second.to_str().unwrap(),
        ])
    };
    let output = merge();
    common::assert_exit(&output, 0);

    let original = std::fs::read_to_string(&first).unwrap();
    let mismatch = original
        .lines()
        .position(|l| l.contains("\"ex\":\"mismatch\""))
        .expect("a mismatch in shard 1");
    let flipped = original
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let l = if i == mismatch {
                l.replace("\"ex\":\"mismatch\"", "\"ex\":\"match\"")
                    .replace("\"ex\":0,", "\"ex\":1,")
            } else {
                l.to_string()
            };
            l + "\n"
        })
        .collect::<String>();
    std::fs::write(&first, flipped).unwrap();
    assert_refused(&merge(), &["shard1.jsonl", "does not match its digest"]);

    let truncated: String = original
        .lines()
        .take(10)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&first, truncated).unwrap();
    assert_refused(&merge(), &["shard1.jsonl", "no digest trailer"]);

    let cases: Vec<(Edit, Vec<&str>)> = vec![
        (
            Box::new(|r| r["metrics"]["ex"] = 55.0.into()),
            vec!["`ex` value 55 is outside [0, 1]"],
        ),
        (
            Box::new(|r| r["metrics"]["ex"] = 7.5.into()),
            vec!["outside [0, 1]"],
        ),
        (
            Box::new(|r| r["metrics"]["esm"] = (-3).into()),
            vec!["`esm` value -3 is outside [0, 1]"],
        ),
        (
            Box::new(|r| r["metrics"]["ex"] = Value::Null),
            vec!["`ex` is `null` but its outcome"],
        ),
        (
            Box::new(|r| r["metrics"]["ex"] = "1".into()),
            vec!["not a number"],
        ),
        (
            Box::new(|r| r["outcome"]["ex"] = "great".into()),
            vec!["unknown outcome `great`"],
        ),
        (
            Box::new(|r| r["index"] = 1_000_000_000_000u64.into()),
            vec!["`index` 1000000000000 is not an item of the dataset (157 items)"],
        ),
    ];
    for (edit, needles) in cases {
        edit_shard(&first, &original, 1, edit);
        let mut expected = vec!["shard1.jsonl", "line 2"];
        expected.extend(needles);
        assert_refused(&merge(), &expected);
    }
    edit_shard(&first, &original, 2, |r| {
        *r = serde_json::from_str(original.lines().nth(1).unwrap()).unwrap()
    });
    assert_refused(
        &merge(),
        &["shard1.jsonl", "line 3", "already in another shard"],
    );
}

#[test]
fn concurrent_baseline_updates_never_report_success_over_another_writers_content() {
    let dir = tempfile::tempdir().unwrap();
    let config = example(dir.path());
    let path = dir.path().join("baseline.json");
    let mut refused = 0;
    for round in 0..4 {
        let update = |commit: &str| {
            common::sqlgate_command(&["baseline", "update", "--config", config.to_str().unwrap()])
                .env("GITHUB_SHA", commit)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (a, b) = (update("aaaa"), update("bbbb"));
        let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
        let stored: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
            .unwrap_or_else(|e| panic!("round {round}: the baseline is not valid JSON: {e}"));
        let commit = stored["commit"].as_str().unwrap();
        for (output, other) in [(&a, &b), (&b, &a)] {
            let stderr = String::from_utf8_lossy(&output.stderr);
            match output.status.code() {
                Some(0) => {}
                Some(2) => {
                    refused += 1;
                    common::assert_contains(&stderr, &["another sqlgate"]);
                    assert!(other.status.success(), "one of the two writers succeeds");
                }
                code => panic!("round {round}: exit {code:?}: {stderr}"),
            }
        }
        if !(a.status.success() && b.status.success()) {
            let winner = if a.status.success() { "aaaa" } else { "bbbb" };
            assert_eq!(
                commit, winner,
                "round {round}: the file holds the loser's content"
            );
        }
        assert_eq!(eval(&config).status.code(), Some(0), "round {round}");
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp") || n.ends_with(".lock"))
            .collect();
        assert!(leftovers.is_empty(), "round {round}: {leftovers:?}");
    }
    assert!(refused > 0, "the writers never overlapped in 4 rounds");
}

#[test]
fn a_baseline_of_other_data_names_the_file_that_differs() {
    let dir = tempfile::tempdir().unwrap();
    let config = example(dir.path());
    let update = sqlgate(&["baseline", "update", "--config", config.to_str().unwrap()]);
    assert!(update.status.success(), "{update:?}");
    let baseline: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("baseline.json")).unwrap()).unwrap();
    let digests = &baseline["dataset_digests"];
    let singer = dir.path().join("database/singer/singer.sqlite");
    assert_eq!(
        digests["databases"]["singer"],
        hex(&Sha256::digest(std::fs::read(&singer).unwrap()))
    );
    let gold = std::fs::read(dir.path().join("dev_gold.sql")).unwrap();
    assert_eq!(digests["gold"], hex(&Sha256::digest(gold)));
    assert_eq!(digests["databases"].as_object().unwrap().len(), 4);

    let summary = dir.path().join("summary.json");
    let output = common::eval(&config, &["--summary", summary.to_str().unwrap()]);
    assert!(output.status.success(), "{output:?}");
    let written: Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    assert_eq!(written["dataset"]["digests"], *digests);

    let connection = rusqlite::Connection::open(&singer).unwrap();
    connection
        .execute_batch("UPDATE singer SET Net_Worth_Millions = Net_Worth_Millions + 1")
        .unwrap();
    drop(connection);
    assert_refused(
        &eval(&config),
        &["dataset sha256", "the files that differ: database `singer`"],
    );
}
