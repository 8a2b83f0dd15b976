//! Spider 2.0-DBT as a dataset kind (`dataset.kind: spider2-dbt`, `format: spider2-dbt`,
//! metric `duckdb_match`) through the whole gate: a baseline on `main`, then pull requests that
//! regress one instance (exit 1, named), change nothing (exit 0) or improve one; both profiles'
//! verdicts side by side in the per-item lines; hostile answer files contained.

use crate::common;

use common::repo::{commit_all, commit_baseline, head, init_main, judged};
use common::{arg, exited, read_jsonl};
use serde_json::json;
use sqlgate::engine::duckdb::tables::write_script;
use std::path::{Path, PathBuf};

/// The gold table of every instance.
pub(crate) const GOLD: &str =
    "CREATE TABLE t (a INTEGER, b INTEGER); INSERT INTO t VALUES (1, 2), (3, 4);";
/// The gold's rows with the columns scrambled across rows: official 1, sound 0.
const SCRAMBLED: &str =
    "CREATE TABLE t (a INTEGER, b INTEGER); INSERT INTO t VALUES (1, 4), (3, 2);";
/// A wrong table under both profiles.
pub(crate) const WRONG: &str =
    "CREATE TABLE t (a INTEGER, b INTEGER); INSERT INTO t VALUES (9, 9);";
/// The instances of the fixture.
pub(crate) const INSTANCES: [&str; 3] = ["i1", "i2", "i3"];

/// A repository in `root`: the gold folder (`gold/spider2_eval.jsonl`, `gold/<i>/db.duckdb`),
/// one agent's submission (`sub/results_metadata.jsonl`, `sub/<i>/out.duckdb` from `answers`),
/// and the config (`profile`) with its baseline path.
fn repository(root: &Path, answers: [&str; 3], profile: &str) {
    let mut eval = String::new();
    let mut results = String::new();
    for (instance, answer) in INSTANCES.iter().zip(answers) {
        std::fs::create_dir_all(root.join("gold").join(instance)).unwrap();
        write_script(&root.join(format!("gold/{instance}/db.duckdb")), GOLD).unwrap();
        eval += &format!(
            "{}\n",
            json!({"instance_id": instance, "evaluation": {"func": "duckdb_match", "parameters":
            {"gold": "db.duckdb", "condition_tabs": ["t"], "condition_cols": [[]], "ignore_orders": [true]}}})
        );
        write_answer(root, instance, answer);
        results += &format!(
            "{}\n",
            json!({"instance_id": instance, "answer_type": "file", "answer_or_path": "out.duckdb"})
        );
    }
    std::fs::write(root.join("gold/spider2_eval.jsonl"), eval).unwrap();
    std::fs::write(root.join("sub/results_metadata.jsonl"), results).unwrap();
    std::fs::write(
        root.join("sqlgate.yml"),
        format!(
            "dataset: {{ kind: spider2-dbt, gold: gold/spider2_eval.jsonl, databases: gold, difficulty: none, engine: {{ kind: duckdb }} }}\n\
             predictions: [{{ name: agent, path: sub/results_metadata.jsonl, format: spider2-dbt }}]\n\
             metrics: [duckdb_match]\ncompare: {{ profile: {profile} }}\n\
             baseline: {{ path: baseline.json }}\ngate: {{ max_drop_points: 0.0 }}\n\
             report: {{ output: report.md }}\n"
        ),
    )
    .unwrap();
}

/// The repository's config (in `root`) as a first run (no baseline required), with `extra`
/// added to its `dataset` section (`, key: value`); returns its path.
fn first_run(root: &Path, extra: &str) -> PathBuf {
    let config = root.join("sqlgate.yml");
    let text = std::fs::read_to_string(&config).unwrap();
    let changed = (text.replace("baseline.json }", "baseline.json, required: false }"))
        .replace("difficulty: none", &format!("difficulty: none{extra}"));
    std::fs::write(&config, changed).unwrap();
    config
}

/// Replaces `instance`'s answer file by one built from `sql`.
pub(crate) fn write_answer(root: &Path, instance: &str, sql: &str) {
    let file = root.join(format!("sub/{instance}/out.duckdb"));
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(&file);
    write_script(&file, sql).unwrap();
}

/// A fresh repository `<tmp>/repo` whose `main` holds the fixture (`i3` answered wrong) and its
/// baseline: the folder, the repository and the base commit.
pub(crate) fn gated() -> (tempfile::TempDir, PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    std::fs::create_dir_all(&root).unwrap();
    repository(&root, [GOLD, GOLD, WRONG], "spider2");
    init_main(&root, "spider2-dbt");
    let base = commit_baseline(&root, "baseline");
    (dir, root, base)
}

/// The pull request checked out in `root` (what `change` did to it, committed on a branch)
/// judged against `base`: its exit code, the report, the per-item lines and `summary.json`.
fn pull_request(
    root: &Path,
    base: &str,
    change: impl FnOnce(&Path),
) -> (i32, String, Vec<serde_json::Value>, serde_json::Value) {
    common::git(root, &["checkout", "-qfB", "pr", base]);
    change(root);
    commit_all(root, "pull request");
    assert_ne!(head(root), base);
    let (jsonl, summary) = (root.join("../items.jsonl"), root.join("../summary.json"));
    let output = judged(
        root,
        base,
        &["--jsonl", arg(&jsonl), "--summary", arg(&summary)],
    );
    let code = output.status.code().unwrap_or(-1);
    let report = std::fs::read_to_string(root.join("report.md")).unwrap_or_default();
    let summary = std::fs::read_to_string(&summary).unwrap_or_default();
    let summary = serde_json::from_str(&summary).unwrap_or_default();
    (code, report, read_jsonl(&jsonl), summary)
}

/// The scores of `duckdb_match` per instance in per-item lines.
fn scores(lines: &[serde_json::Value]) -> Vec<Option<f64>> {
    (lines.iter())
        .map(|l| l["metrics"]["duckdb_match"].as_f64())
        .collect()
}

#[test]
fn a_regressing_pull_request_fails_naming_the_instance_a_control_passes_an_improvement_passes() {
    let (_dir, root, base) = gated();
    let baseline: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("baseline.json")).unwrap())
            .unwrap();
    assert!(baseline.to_string().contains("duckdb_match"), "{baseline}");

    let (code, report, lines, summary) =
        pull_request(&root, &base, |root| write_answer(root, "i2", WRONG));
    assert_eq!(code, 1, "{report}");
    assert_eq!(scores(&lines), [Some(1.0), Some(0.0), Some(0.0)]);
    assert!(report.contains("i2/db.duckdb"), "{report}");
    let findings = report.split("<sub>data files").next().unwrap_or_default();
    assert!(!findings.contains("i1/db.duckdb"), "{report}");
    assert!(summary.to_string().contains("duckdb_match"), "{summary}");

    let (code, report, lines, _) = pull_request(&root, &base, |root| {
        std::fs::write(root.join("notes.txt"), "no answer changed\n").unwrap();
    });
    assert_eq!(code, 0, "{report}");
    assert_eq!(scores(&lines), [Some(1.0), Some(1.0), Some(0.0)]);

    let (code, report, lines, _) =
        pull_request(&root, &base, |root| write_answer(root, "i3", GOLD));
    assert_eq!(code, 0, "{report}");
    assert_eq!(scores(&lines), [Some(1.0), Some(1.0), Some(1.0)]);

    // A pull request that changes a gold to fit its broken answer is scored on the base's gold
    // (and the evaluation file inside the gold folder, copied once, stays whole).
    let (code, report, lines, _) = pull_request(&root, &base, |root| {
        write_answer(root, "i1", WRONG);
        std::fs::remove_file(root.join("gold/i1/db.duckdb")).unwrap();
        write_script(&root.join("gold/i1/db.duckdb"), WRONG).unwrap();
    });
    assert_eq!(code, 1, "{report}");
    assert_eq!(scores(&lines), [Some(0.0), Some(1.0), Some(0.0)]);
    assert_eq!(common::git(&root, &["status", "--short"]), "M report.md");
}

#[test]
fn both_profiles_are_side_by_side_and_the_configured_one_decides() {
    let note = "agent: duckdb_match's official and sound profiles disagree on 1 of 3 items: item 0 (`i1/db.duckdb`): official 1 (match), sound 0 (table `t` differs)";
    for (profile, chosen) in [("spider2", 1.0), ("spider2-sound", 0.0)] {
        let dir = tempfile::tempdir().unwrap();
        repository(dir.path(), [SCRAMBLED, GOLD, WRONG], profile);
        let config = first_run(dir.path(), "");
        let (jsonl, summary) = (
            dir.path().join("items.jsonl"),
            dir.path().join("summary.json"),
        );
        let said = exited(
            &common::eval(
                &config,
                &["--jsonl", arg(&jsonl), "--summary", arg(&summary)],
            ),
            0,
        );
        let lines = read_jsonl(&jsonl);
        assert_eq!(
            scores(&lines),
            [Some(chosen), Some(1.0), Some(0.0)],
            "{profile}"
        );
        let both = &lines[0]["duckdb_match_components"];
        assert_eq!(
            (both["official"].as_u64(), both["sound"].as_u64()),
            (Some(1), Some(0)),
            "{both}"
        );
        assert!(said.contains("3 items, 3 scored"), "{said}");
        assert!(said.contains(note), "{said}");
        let report = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
        assert!(report.contains("disagree on 1 of 3 items"), "{report}");
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
        assert_eq!(
            summary["disagreements"]["agent"]["duckdb_match"],
            json!({"items": 3, "disagree": [{"index": 0, "db_id": "i1/db.duckdb",
                "verdicts": "official 1 (match), sound 0 (table `t` differs)"}]})
        );
    }
}

/// What a pull request does to the checkout.
type Change = fn(&Path);

/// Hostile answers a pull request can commit for `i1` (answered right on `main`): each is
/// contained (a wrong item, so the gate fails), never read outside the workspace.
fn hostile_answers() -> Vec<(&'static str, Change)> {
    vec![
        ("a link to a file outside the workspace", |root| {
            let outside = outside_gold(root).join("out.duckdb");
            let answer = root.join("sub/i1/out.duckdb");
            std::fs::remove_file(&answer).unwrap();
            std::os::unix::fs::symlink(outside, answer).unwrap();
        }),
        ("an instance folder linked outside the workspace", |root| {
            let outside = outside_gold(root);
            std::fs::remove_dir_all(root.join("sub/i1")).unwrap();
            std::os::unix::fs::symlink(outside, root.join("sub/i1")).unwrap();
        }),
        ("a file that is not DuckDB", |root| {
            std::fs::write(root.join("sub/i1/out.duckdb"), "hello, not DuckDB\n").unwrap();
        }),
        ("a view reading a file", |root| {
            write_answer(root, "i1", "CREATE VIEW t AS SELECT * FROM (VALUES (1, 2), (3, 4)) v(a, b) WHERE (SELECT count(*) FROM read_csv('/etc/passwd', header = false, sep = '\x01')) > 0;");
        }),
    ]
}

/// A folder outside the repository `root` holding `out.duckdb`, a copy of the gold.
fn outside_gold(root: &Path) -> PathBuf {
    let outside = root.parent().unwrap().join("outside");
    if !outside.exists() {
        std::fs::create_dir_all(&outside).unwrap();
        write_script(&outside.join("out.duckdb"), GOLD).unwrap();
    }
    outside
}

#[test]
fn hostile_answer_files_are_wrong_items_and_the_gate_fails() {
    let (_dir, root, base) = gated();
    for (what, change) in hostile_answers() {
        let (code, report, lines, _) = pull_request(&root, &base, change);
        assert_eq!(code, 1, "{what}: {report}");
        assert_eq!(scores(&lines), [Some(0.0), Some(1.0), Some(0.0)], "{what}");
        let findings = report.split("<sub>data files").next().unwrap_or_default();
        assert!(findings.contains("i1/db.duckdb"), "{what}: {report}");
    }
}

#[test]
fn a_gold_the_starting_database_already_matches_stops_the_run_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    repository(dir.path(), [GOLD, GOLD, WRONG], "spider2");
    for (instance, start) in [("i1", GOLD), ("i2", WRONG)] {
        std::fs::create_dir_all(dir.path().join("examples").join(instance)).unwrap();
        write_script(
            &dir.path().join(format!("examples/{instance}/db.duckdb")),
            start,
        )
        .unwrap();
    }
    let config = first_run(dir.path(), ", starting_databases: examples");
    let said = exited(&common::eval(&config, &[]), 2);
    assert!(
        said.contains("gold-unchanged: the starting database") && said.contains("i1/db.duckdb"),
        "{said}"
    );
    assert!(!said.contains("i2/db.duckdb"), "{said}");
    let config = first_run(dir.path(), ", allow_failing_golds: [0]");
    let jsonl = dir.path().join("items.jsonl");
    let said = exited(&common::eval(&config, &["--jsonl", arg(&jsonl)]), 0);
    assert!(said.contains("3 items, 2 scored"), "{said}");
    let lines = read_jsonl(&jsonl);
    assert_eq!(scores(&lines), [None, Some(1.0), Some(0.0)]);
    assert_eq!(lines[0]["outcome"]["duckdb_match"], "gold_error");
}

#[test]
fn a_config_or_gold_the_kind_cannot_score_is_refused_naming_the_key() {
    let refusals = [
        (
            "engine: { kind: duckdb }",
            "engine: { kind: sqlite }",
            "reads `.duckdb` files",
        ),
        (
            "metrics: [duckdb_match]",
            "metrics: [duckdb_match, ex]",
            "`ex` is not available",
        ),
        ("profile: spider-ts }", "profile: bird }", "not `bird`"),
        (
            "difficulty: none",
            "difficulty: spider-hardness",
            "set `dataset.difficulty: none`",
        ),
        (
            "format: spider2-dbt",
            "format: jsonl",
            "reads `format: spider2-dbt`",
        ),
        (
            "kind: spider2-dbt,",
            "kind: spider,",
            "spider2-dbt` needs `dataset.kind: spider2-dbt`",
        ),
    ];
    for (from, to, expected) in refusals {
        let dir = tempfile::tempdir().unwrap();
        repository(dir.path(), [GOLD, GOLD, GOLD], "spider-ts");
        let config = first_run(dir.path(), "");
        let text = std::fs::read_to_string(&config).unwrap();
        assert!(text.contains(from), "{from}");
        std::fs::write(&config, text.replace(from, to)).unwrap();
        let said = exited(&common::eval(&config, &[]), 2);
        assert!(said.contains(expected), "{to}: {said}");
    }
    let dir = tempfile::tempdir().unwrap();
    repository(dir.path(), [GOLD, GOLD, GOLD], "spider2");
    std::fs::remove_file(dir.path().join("gold/i2/db.duckdb")).unwrap();
    let said = exited(&common::eval(&first_run(dir.path(), ""), &[]), 2);
    assert!(
        said.contains("spider2_eval.jsonl")
            && said.contains("line 2")
            && said.contains("the gold database"),
        "{said}"
    );
}

#[test]
fn a_benchmark_pull_request_rescores_the_base_answer_files_not_the_pull_requests() {
    // `main`: every gold is GOLD, the agent answers [GOLD, GOLD, WRONG] (right on i1, i2). The
    // pull request makes the golds of i1 and i3 WRONG and breaks its own answer of i2. Worked
    // out by hand, and so scored by the official `eval_utils.py` `duckdb_match` run on these
    // files (base [1, 1, 0], proposed [0, 1, 1]): the base's answers on the base's golds
    // are right on i1, i2 (2); on the proposed golds right on i2, i3 (2): i3 turns right, i1
    // turns wrong. The pull request itself is judged on the base's golds: i2 wrong, exit 1.
    let (_dir, root, base) = gated();
    let (code, report, lines, summary) = pull_request(&root, &base, |root| {
        for instance in ["i1", "i3"] {
            let gold = root.join(format!("gold/{instance}/db.duckdb"));
            std::fs::remove_file(&gold).unwrap();
            write_script(&gold, WRONG).unwrap();
        }
        write_answer(root, "i2", WRONG);
    });
    assert_eq!(code, 1, "{report}");
    assert_eq!(scores(&lines), [Some(1.0), Some(0.0), Some(0.0)]);
    let change = &summary["proposed_benchmark"];
    assert_eq!(
        change["changed"],
        json!(["gold/i1/db.duckdb", "gold/i3/db.duckdb"]),
        "{change}"
    );
    assert_eq!(change["items"], json!([3, 3]), "{change}");
    assert_eq!(
        change["systems"],
        json!([{"name": "agent", "right_on_base": 2, "right_on_proposed": 2,
            "turn_right": [2], "turn_wrong": [0]}]),
        "{change}"
    );
    assert!(report.contains("Proposed benchmark"), "{report}");
    assert!(
        report.contains("| 2 / 3 | 2 / 3 |"),
        "the denominators: {report}"
    );
}

/// A fresh repository `<tmp>/repo` whose `main` holds the fixture (`i3` answered wrong) with
/// `dataset.starting_databases: examples` (`starts`: each instance's starting table) and
/// `extra` in its `dataset` section, and its baseline: the folder, the repository and the base.
fn gated_with_starts(starts: [&str; 3], extra: &str) -> (tempfile::TempDir, PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    std::fs::create_dir_all(&root).unwrap();
    repository(&root, [GOLD, GOLD, WRONG], "spider2");
    for (instance, start) in INSTANCES.iter().zip(starts) {
        write_start(&root, instance, start);
    }
    let config = root.join("sqlgate.yml");
    let text = std::fs::read_to_string(&config).unwrap();
    let extra = format!("difficulty: none, starting_databases: examples{extra}");
    std::fs::write(&config, text.replace("difficulty: none", &extra)).unwrap();
    init_main(&root, "spider2-dbt");
    let base = commit_baseline(&root, "baseline");
    (dir, root, base)
}

/// Replaces `instance`'s starting database by one built from `sql`.
fn write_start(root: &Path, instance: &str, sql: &str) {
    let file = root.join(format!("examples/{instance}/db.duckdb"));
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(&file);
    write_script(&file, sql).unwrap();
}

#[test]
fn a_changed_starting_database_changes_the_dataset_digest() {
    // A baseline made with one starting database of i2 does not judge a run with another: the
    // digest covers the starting databases like the evaluation file.
    let (_dir, root, _) = gated_with_starts([WRONG, WRONG, WRONG], "");
    let before = serde_json::from_str::<serde_json::Value>(
        &std::fs::read_to_string(root.join("baseline.json")).unwrap(),
    )
    .unwrap()["dataset_sha256"]
        .clone();
    write_start(&root, "i2", "CREATE TABLE t (a INTEGER, b INTEGER);");
    let said = exited(&common::eval(&root.join("sqlgate.yml"), &[]), 2);
    assert!(
        said.contains("made with other data or settings")
            && said.contains("the files that differ: the gold file"),
        "{said}"
    );
    common::repo::update_baseline(&root);
    let after = serde_json::from_str::<serde_json::Value>(
        &std::fs::read_to_string(root.join("baseline.json")).unwrap(),
    )
    .unwrap()["dataset_sha256"]
        .clone();
    assert_ne!(before, after);
    exited(&common::eval(&root.join("sqlgate.yml"), &[]), 0);
}

#[test]
fn a_pull_request_that_edits_a_starting_database_is_judged_on_the_bases() {
    // On `main` i1's starting database already matches its gold (allowed: item 0 unscored).
    // The pull request edits it so that the finding would go and its own answer of i1 would
    // count: judged on the base's starting database, item 0 stays unscored.
    let (_dir, root, base) = gated_with_starts([GOLD, WRONG, WRONG], ", allow_failing_golds: [0]");
    let (code, report, lines, summary) =
        pull_request(&root, &base, |root| write_start(root, "i1", WRONG));
    assert_eq!(code, 0, "{report}");
    assert_eq!(scores(&lines), [None, Some(1.0), Some(0.0)]);
    assert_eq!(lines[0]["outcome"]["duckdb_match"], "gold_error");
    let change = &summary["proposed_benchmark"];
    assert_eq!(
        change["changed"],
        json!(["examples/i1/db.duckdb"]),
        "{change}"
    );
    // On the proposed benchmark the base's answer of i1 (the gold's table) is scored: right.
    assert_eq!(
        change["systems"],
        json!([{"name": "agent", "right_on_base": 1, "right_on_proposed": 2,
            "turn_right": [0], "turn_wrong": []}]),
        "{change}"
    );
    // The same edit through a link to a file outside the repository is no way around it.
    let (code, report, lines, _) = pull_request(&root, &base, |root| {
        let outside = root.parent().unwrap().join("own-start.duckdb");
        write_script(&outside, WRONG).unwrap();
        std::fs::remove_file(root.join("examples/i1/db.duckdb")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("examples/i1/db.duckdb")).unwrap();
    });
    assert_eq!(code, 0, "{report}");
    assert_eq!(scores(&lines), [None, Some(1.0), Some(0.0)]);
}

#[test]
fn the_baseline_records_duckdb_matchs_contract_and_another_is_a_contract_change() {
    let (_dir, root, _) = gated();
    let path = root.join("baseline.json");
    let mut baseline: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let contract = baseline["settings"]["contract"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        contract.starts_with("spider2 duckdb_match (the official xlang-ai/Spider2 spider2-dbt")
            && contract.contains("condition_tabs")
            && contract.contains("fetchdf()"),
        "{contract}"
    );
    assert!(
        !contract.contains("read_csv"),
        "not Spider 2.0-lite's: {contract}"
    );
    let config = root.join("sqlgate.yml");
    let summary = root.join("../summary.json");
    exited(&common::eval(&config, &["--summary", arg(&summary)]), 0);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    assert_eq!(written["comparison_contract"]["contract"], contract);

    // A baseline recorded under another DBT comparison (here the Spider 2.0-lite contract an
    // older sqlgate recorded for this dataset) is not comparable: the contract is named.
    let lite = "spider2 (evaluate.py version current): every gold column ...";
    baseline["settings"]["contract"] = json!(lite);
    std::fs::write(&path, serde_json::to_string_pretty(&baseline).unwrap()).unwrap();
    let said = exited(&common::eval(&config, &[]), 2);
    assert!(
        said.contains("the comparison contract: spider2 (evaluate.py version current)")
            && said.contains("(baseline) vs spider2 duckdb_match"),
        "{said}"
    );

    // The sound profile's contract is another.
    std::fs::remove_file(&path).unwrap();
    common::repo::update_baseline(&root);
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replace("profile: spider2 }", "profile: spider2-sound }"),
    )
    .unwrap();
    let said = exited(&common::eval(&config, &[]), 2);
    assert!(
        said.contains("the comparison contract: spider2 duckdb_match")
            && said.contains(
                "(baseline) vs spider2-sound duckdb_match: each of the item's condition_tabs"
            ),
        "{said}"
    );
}
