//! A 4-way sharded run of the shared systems merges to exactly what the unsharded run writes;
//! missing, repeated or foreign shards are refused (edited ones: tests/it/stores.rs), and so are
//! shards another Actions run wrote.

use crate::common;

use common::{shared_spider, sqlgate};
use std::path::Path;

fn write_config(dir: &Path, metrics: &str) -> String {
    let spider = shared_spider();
    let path = dir.join(format!("sqlgate-{}.yml", metrics.replace([',', ' '], "")));
    std::fs::write(
        &path,
        format!(
            "dataset: {{ gold: {s}/dev_gold.sql, tables: {s}/tables.json, databases: {s}/database, skip_missing_databases: true }}\n\
             predictions: [{{ path: '{s}/predictions/*.txt' }}]\nmetrics: [{metrics}]\nreport: {{ output: report.md }}\n",
            s = spider.display()
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

fn run_ok(args: &[&str]) {
    let output = sqlgate(args);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn four_shards_merge_to_the_unsharded_run() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let config = write_config(
        dir,
        "ex, esm, exact_column_and_partial_cell, no_column_and_partial_cell, qas",
    );
    let out = |name: &str| dir.join(name).to_str().unwrap().to_string();
    run_ok(&[
        "eval",
        "--config",
        &config,
        "--summary",
        &out("single.json"),
        "--jsonl",
        &out("single.jsonl"),
    ]);
    std::fs::rename(dir.join("report.md"), dir.join("single.md")).unwrap();
    let mut shards = Vec::new();
    for i in 1..=4 {
        let shard = out(&format!("shard{i}.jsonl"));
        run_ok(&[
            "eval",
            "--config",
            &config,
            "--shard",
            &format!("{i}/4"),
            "--jsonl",
            &shard,
        ]);
        shards.push(shard);
    }
    let merged_json = out("merged.json");
    let merged_jsonl = out("merged.jsonl");
    let mut merge = vec!["merge", "--config", &config, "--summary", &merged_json];
    merge.extend(["--jsonl", &merged_jsonl]);
    merge.extend(shards.iter().map(String::as_str));
    run_ok(&merge);
    let read = |name: &str| std::fs::read(dir.join(name)).unwrap();
    assert_eq!(read("merged.json"), read("single.json"), "summary differs");
    assert_eq!(
        read("merged.jsonl"),
        read("single.jsonl"),
        "per-item results differ"
    );
    assert_eq!(read("report.md"), read("single.md"), "report differs");
    // Unstable verdicts (Spider dev's 60 golds unstable by order: 46 tied at a cut, 14 tied in
    // the order the comparison reads; a prediction unstable too adds its own reason) travel
    // through the shards too.
    let single = String::from_utf8(read("single.jsonl")).unwrap();
    assert_eq!(single.matches("\"unstable\":\"gold-order").count(), 4 * 60);
    let sizes: Vec<usize> = shards
        .iter()
        .map(|s| std::fs::read_to_string(s).unwrap().lines().count() - 2)
        .collect();
    assert_eq!(sizes.iter().sum::<usize>(), 4 * 1034);
    assert!(
        sizes.iter().all(|&n| n > 800),
        "shards are balanced: {sizes:?}"
    );

    let refused = |args: Vec<&str>, expected: &str| {
        let output = sqlgate(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(expected), "`{expected}` not in {stderr}");
    };
    refused(
        vec![
            "merge", "--config", &config, &shards[0], &shards[1], &shards[2],
        ],
        "shards [4] of 4 are missing",
    );
    refused(
        vec![
            "merge", "--config", &config, &shards[0], &shards[0], &shards[1], &shards[2],
        ],
        "is given twice",
    );
    let other = write_config(dir, "ex");
    refused(
        vec![
            "merge", "--config", &other, &shards[0], &shards[1], &shards[2], &shards[3],
        ],
        "another config",
    );
    let single = out("single.jsonl");
    refused(
        vec!["merge", "--config", &config, &single],
        "not a sqlgate shard",
    );
}

/// `sqlgate ARGS` as a job of the Actions run `run` of `owner/repo` (`None`: outside Actions).
fn in_run(args: &[&str], run: Option<&str>) -> std::process::Output {
    let mut command = common::sqlgate_command(args);
    if let Some(run) = run {
        command
            .env("GITHUB_REPOSITORY", "owner/repo")
            .env("GITHUB_RUN_ID", run);
    }
    command.output().unwrap()
}

#[test]
fn a_merge_takes_only_the_shards_its_own_actions_run_wrote() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    common::copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/spider-mini"),
        dir,
    );
    let config = dir.join("sqlgate.yml");
    let config = config.to_str().unwrap();
    let shard = |i: usize| dir.join(format!("shard{i}.jsonl"));
    for i in 1..=2 {
        let path = shard(i);
        let args = ["eval", "--config", config, "--shard", &format!("{i}/2")];
        let mut args = args.to_vec();
        args.extend(["--jsonl", path.to_str().unwrap()]);
        let written = in_run(&args, Some("41"));
        assert_eq!(written.status.code(), Some(0), "{written:?}");
    }
    let (one, two) = (shard(1), shard(2));
    let merge = ["merge", "--config", config, one.to_str().unwrap()];
    let mut merge = merge.to_vec();
    merge.push(two.to_str().unwrap());
    for (run, expected) in [
        (
            Some("42"),
            "written by owner/repo/41, this merge runs in owner/repo/42",
        ),
        (
            None,
            "written by owner/repo/41, this merge runs in no Actions run",
        ),
    ] {
        let refused = in_run(&merge, run);
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(expected), "`{expected}` not in {stderr}");
    }
    let merged = in_run(&merge, Some("41"));
    assert_eq!(
        merged.status.code(),
        Some(0),
        "its own run's shards merge: {merged:?}"
    );
}
