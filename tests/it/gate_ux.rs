//! Issue 38's gate ergonomics on the bundled Spider example: SQL extraction from raw model
//! output, the comment policy, the baseline's age and the flag on suspiciously large gains.

use crate::common;

use common::read_jsonl;
use std::fs;
use std::path::{Path, PathBuf};

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/spider-mini")
}

/// The first `count` gold queries of the example.
fn gold(count: usize) -> Vec<String> {
    fs::read_to_string(example().join("dev_gold.sql"))
        .unwrap()
        .lines()
        .take(count)
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect()
}

/// A folder with the example's first five gold items and a config; `predictions` and `extra`
/// are its YAML.
fn setup(predictions: &str, extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let ex = example();
    let lines: Vec<String> = fs::read_to_string(ex.join("dev_gold.sql"))
        .unwrap()
        .lines()
        .take(5)
        .map(str::to_string)
        .collect();
    fs::write(dir.path().join("gold.sql"), lines.join("\n") + "\n").unwrap();
    let yaml = format!(
        "dataset:\n  gold: gold.sql\n  tables: {ex}/tables.json\n  databases: {ex}/database\npredictions:\n{predictions}\n{extra}",
        ex = ex.display()
    );
    fs::write(dir.path().join("sqlgate.yml"), yaml).unwrap();
    dir
}

/// A report's text with the escaping of untrusted text undone (entities, the word joiners that
/// keep a commit id from becoming a link), to compare it with plain sentences.
fn plain(report: &str) -> String {
    report
        .replace("&#96;", "`")
        .replace("&#91;", "[")
        .replace("&#93;", "]")
        .replace("&gt;", ">")
        .replace('\u{2060}', "")
}

/// The report the last run wrote in `dir`, unescaped.
fn report_of(dir: &Path) -> String {
    plain(&fs::read_to_string(dir.join("sqlgate-report.md")).unwrap())
}

/// Runs `sqlgate ARGS` in `dir`; returns (exit code, stdout, stderr).
fn run(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let output = common::sqlgate_command(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Raw model answers for the five items: a fence in prose, a corrected second fence after a
/// Python one, a `SQL:` line, prose without any SQL, and a fence holding broken SQL.
fn raw_answers() -> String {
    let gold = gold(5);
    let answers = [
        format!("To count the singers:\n```sql\n{}\n```\nThis returns one row.", gold[0]),
        format!(
            "First try:\n```sql\nSELECT count(*) FROM stadium\n```\nRun with\n```python\nrun(q)\n```\nCorrected:\n```sql\n{}\n```",
            gold[1]
        ),
        format!("The query orders by age.\nSQL: {}\n\nDone.", gold[2]),
        "I cannot answer this from the schema.".to_string(),
        "```sql\nSELECT avg(agee) FROM singer WHERE country = 'France'\n```".to_string(),
    ];
    answers
        .iter()
        .enumerate()
        .map(|(id, text)| serde_json::json!({"id": id, "sql": text}).to_string() + "\n")
        .collect()
}

#[test]
fn extraction_pulls_sql_from_raw_output_and_counts_failures_apart() {
    let dir = setup(
        "  - { name: llm, path: raw.jsonl, format: jsonl, extract: auto }",
        "",
    );
    fs::write(dir.path().join("raw.jsonl"), raw_answers()).unwrap();
    let (code, stdout, stderr) = run(
        dir.path(),
        &[
            "eval",
            "--config",
            "sqlgate.yml",
            "--jsonl",
            "items.jsonl",
            "--summary",
            "summary.json",
        ],
    );
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let outcomes: Vec<String> = read_jsonl(&dir.path().join("items.jsonl"))
        .iter()
        .map(|line| line["outcome"]["ex"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        outcomes,
        ["match", "match", "match", "extraction_failed", "pred_error"]
    );
    let items = read_jsonl(&dir.path().join("items.jsonl"));
    let error = items[3]["error"]["ex"].as_str().unwrap();
    assert!(error.starts_with("no SQL could be extracted"), "{error}");
    let summary: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.path().join("summary.json")).unwrap()).unwrap();
    let counts = &summary["systems"]["llm"]["outcomes"]["ex"];
    assert_eq!(counts["extraction_failed"], 1, "{counts}");
    // The answer with no SQL in it is not a missing answer: each is counted as what it is.
    let llm = &summary["systems"]["llm"];
    assert_eq!(
        (&llm["missing"], &llm["unextracted"]),
        (&0.into(), &1.into()),
        "{llm}"
    );
    common::assert_contains(
        &stdout,
        &["llm (0 missing predictions, 1 answer with no SQL extracted)"],
    );
    assert_eq!(counts["pred_error"], 1, "{counts}");
    assert_eq!(counts["match"], 3, "{counts}");
    let report = report_of(dir.path());
    assert!(
        report.contains(
            "llm: no SQL could be extracted from the model output of 1 items [3] (outcome \
             `extraction_failed`, scored wrong); apart from them, 1 extracted predictions \
             failed as SQL (`pred_error`)"
        ),
        "{report}"
    );
}

#[test]
fn the_report_shows_the_extracted_sql_of_a_changed_item() {
    let dir = setup(
        "  - { name: llm, path: raw.jsonl, format: jsonl, extract: markdown }",
        "baseline: { path: baseline.json }\n",
    );
    let gold_answers: String = gold(5)
        .iter()
        .enumerate()
        .map(|(id, sql)| {
            serde_json::json!({"id": id, "sql": format!("```sql\n{sql}\n```")}).to_string() + "\n"
        })
        .collect();
    fs::write(dir.path().join("raw.jsonl"), gold_answers).unwrap();
    let (code, stdout, stderr) = run(
        dir.path(),
        &["baseline", "update", "--config", "sqlgate.yml"],
    );
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    fs::write(dir.path().join("raw.jsonl"), raw_answers()).unwrap();
    let (code, _, _) = run(dir.path(), &["eval", "--config", "sqlgate.yml"]);
    assert_eq!(code, Some(1), "items 2, 3 and 4 regressed");
    let report = report_of(dir.path());
    common::assert_contains(
        &report,
        &["```sql\nSELECT avg(agee) FROM singer WHERE country = 'France'\n```"],
    );
    common::assert_contains(&report, &["(no SQL extracted from the model output)"]);
    assert!(
        !report.contains("I cannot answer") && !report.contains("The query orders by age"),
        "the report shows extracted SQL, not raw output: {report}"
    );
}

#[test]
fn extract_on_a_format_without_raw_text_names_the_key() {
    let dir = setup("  - { name: llm, path: preds.sql, extract: auto }", "");
    fs::write(dir.path().join("preds.sql"), gold(5).join("\n")).unwrap();
    let (code, _, stderr) = run(dir.path(), &["eval", "--config", "sqlgate.yml"]);
    assert_eq!(code, Some(2), "{stderr}");
    common::assert_contains(
        &stderr,
        &["`predictions[0].extract: auto`: format `lines` has no raw model output"],
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}

/// Predictions for the five items as `lines`: the gold, with the items in `wrong` broken.
fn lines_with_wrong(wrong: &[usize]) -> String {
    gold(5)
        .iter()
        .enumerate()
        .map(|(i, sql)| {
            if wrong.contains(&i) {
                "SELECT 1".to_string()
            } else {
                sql.clone()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// A folder whose baseline (system `m`) has the items in `wrong` broken; `extra` is more YAML.
fn with_baseline(wrong: &[usize], extra: &str) -> tempfile::TempDir {
    let dir = setup(
        "  - { name: m, path: preds.sql }",
        &format!("baseline: {{ path: baseline.json }}\n{extra}"),
    );
    fs::write(dir.path().join("preds.sql"), lines_with_wrong(wrong)).unwrap();
    let (code, stdout, stderr) = run(
        dir.path(),
        &["baseline", "update", "--config", "sqlgate.yml"],
    );
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    dir
}

/// Runs `eval` as in a GitHub Actions job on pull request `pr` against the fake API; returns
/// (exit code, stdout).
fn eval_in_actions(
    dir: &Path,
    api: &common::github::FakeGitHub,
    pr: u64,
    args: &[&str],
) -> (Option<i32>, String) {
    let payload = serde_json::json!({"pull_request": {"number": pr}});
    let event = common::repo::event(dir.join("event.json"), payload);
    let mut eval = common::eval_command(Path::new("sqlgate.yml"), args);
    let output = common::repo::in_pull_request_job(eval.current_dir(dir), &event)
        .env("GITHUB_API_URL", &api.url)
        .env("GITHUB_TOKEN", common::github::TOKEN)
        .env("GITHUB_OUTPUT", dir.join("outputs.txt"))
        .env("GITHUB_STEP_SUMMARY", dir.join("summary.md"))
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

/// The last value of step output `key`.
fn output(dir: &Path, key: &str) -> String {
    let text = fs::read_to_string(dir.join("outputs.txt")).unwrap();
    let prefix = format!("{key}=");
    text.lines()
        .rev()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no output {key} in {text}"))
        .to_string()
}

#[test]
fn on_failure_posts_only_failing_runs_then_keeps_the_comment_current() {
    let api = common::github::FakeGitHub::start();
    let dir = with_baseline(&[], "comment: on-failure\n");
    let (code, stdout) = eval_in_actions(dir.path(), &api, 1, &[]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(api.comments(1).is_empty(), "a passing run posts nothing");
    common::assert_contains(
        &stdout,
        &["PR comment not posted (the comment policy posts none"],
    );
    assert_eq!(output(dir.path(), "passed"), "true");
    let summary = fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert_eq!(
        summary.matches("<!-- sqlgate:").count(),
        1,
        "the step summary is always written"
    );

    fs::write(dir.path().join("preds.sql"), lines_with_wrong(&[1])).unwrap();
    let (code, stdout) = eval_in_actions(dir.path(), &api, 1, &[]);
    assert_eq!(code, Some(1), "{stdout}");
    assert_eq!(api.comments(1).len(), 1);
    assert!(api.comments(1)[0].contains("❌"), "{:?}", api.comments(1));

    fs::write(dir.path().join("preds.sql"), lines_with_wrong(&[])).unwrap();
    let (code, _) = eval_in_actions(dir.path(), &api, 1, &[]);
    assert_eq!(code, Some(0));
    let comments = api.comments(1);
    assert_eq!(
        comments.len(),
        1,
        "the earlier comment is updated, not a new one"
    );
    assert!(
        comments[0].contains("✅"),
        "no stale failing verdict: {comments:?}"
    );
}

#[test]
fn on_change_posts_a_gain_or_loss_and_the_option_overrides_the_config() {
    let api = common::github::FakeGitHub::start();
    let dir = with_baseline(&[2], "comment: on-change\n");
    let (code, stdout) = eval_in_actions(dir.path(), &api, 2, &[]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        api.comments(2).is_empty(),
        "nothing changed, nothing posted"
    );

    fs::write(dir.path().join("preds.sql"), lines_with_wrong(&[])).unwrap();
    let (code, stdout) = eval_in_actions(dir.path(), &api, 2, &[]);
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(
        api.comments(2).len(),
        1,
        "a fixed item is a change: {stdout}"
    );

    let (code, _) = eval_in_actions(dir.path(), &api, 3, &["--comment", "on-failure"]);
    assert_eq!(code, Some(0));
    assert!(
        api.comments(3).is_empty(),
        "`--comment on-failure` overrides the config"
    );
    let (code, _) = eval_in_actions(dir.path(), &api, 4, &["--comment", "always"]);
    assert_eq!(code, Some(0));
    assert_eq!(
        api.comments(4).len(),
        1,
        "`--comment always` posts a passing run"
    );
    let (_, _) = eval_in_actions(dir.path(), &api, 5, &["--comment", "never"]);
    assert!(api.comments(5).is_empty());
}

#[test]
fn always_posts_every_run() {
    let api = common::github::FakeGitHub::start();
    let dir = with_baseline(&[], "");
    let (code, stdout) = eval_in_actions(dir.path(), &api, 6, &[]);
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(api.comments(6).len(), 1, "the default policy is `always`");
}

/// Rewrites the baseline's `created_unix` to `days` ago (`None`: removes it, as in baselines
/// of older versions); the records digest does not cover it.
fn age_baseline(dir: &Path, days: Option<i64>) {
    let path = dir.join("baseline.json");
    let mut baseline: serde_json::Value =
        serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    let made = baseline["created_unix"]
        .as_i64()
        .expect("a fresh baseline records when");
    let object = baseline.as_object_mut().unwrap();
    match days {
        Some(days) => object.insert("created_unix".into(), (made - days * 86_400).into()),
        None => object.remove("created_unix"),
    };
    fs::write(&path, serde_json::to_vec_pretty(&baseline).unwrap()).unwrap();
}

/// The step outputs naming the baseline: (`baseline-commit`, `baseline-age-days`).
fn baseline_outputs(dir: &Path) -> (String, String) {
    (
        output(dir, "baseline-commit"),
        output(dir, "baseline-age-days"),
    )
}

#[test]
fn a_stale_baseline_warns_or_fails_as_configured() {
    let api = common::github::FakeGitHub::start();
    let never = ["--comment", "never"];
    let commit = "0123456789abcdef0123".to_string();
    let dir = with_baseline(&[], "gate: { max_baseline_age_days: 30 }\n");
    let (code, stdout) = eval_in_actions(dir.path(), &api, 8, &never);
    assert_eq!(code, Some(0), "{stdout}");
    let report = report_of(dir.path());
    common::assert_contains(&report, &["- baseline: commit `0123456789ab`, made "]);
    common::assert_contains(&report, &["(0.0 days ago)"]);
    assert!(!report.contains("older than"), "{report}");
    assert_eq!(baseline_outputs(dir.path()), (commit.clone(), "0.0".into()));

    age_baseline(dir.path(), Some(40));
    let (code, _) = eval_in_actions(dir.path(), &api, 8, &never);
    assert_eq!(code, Some(0), "`warn` passes");
    let report = report_of(dir.path());
    common::assert_contains(&report, &["(40.0 days ago)"]);
    common::assert_contains(&report, &["- warning: the baseline is 40.0 days old, older than `gate.max_baseline_age_days` (30)"]);
    assert_eq!(
        baseline_outputs(dir.path()),
        (commit.clone(), "40.0".into())
    );

    let yaml = fs::read_to_string(dir.path().join("sqlgate.yml"))
        .unwrap()
        .replace(
            "max_baseline_age_days: 30",
            "max_baseline_age_days: { days: 30, action: fail }",
        );
    fs::write(dir.path().join("sqlgate.yml"), yaml).unwrap();
    fs::remove_file(dir.path().join("outputs.txt")).unwrap();
    let (code, stdout) = eval_in_actions(dir.path(), &api, 8, &never);
    assert_eq!(code, Some(1), "{stdout}");
    let report = report_of(dir.path());
    common::assert_contains(
        &report,
        &["## ❌ sqlgate failed: the baseline is 40.0 days old"],
    );
    assert_eq!(output(dir.path(), "passed"), "false");
    assert_eq!(
        baseline_outputs(dir.path()),
        (commit.clone(), "40.0".into())
    );

    age_baseline(dir.path(), None);
    let (code, _) = eval_in_actions(dir.path(), &api, 8, &never);
    assert_eq!(
        code,
        Some(1),
        "an unknown age fails closed under `action: fail`"
    );
    let report = report_of(dir.path());
    common::assert_contains(&report, &["of unknown age"]);
    assert_eq!(baseline_outputs(dir.path()), (commit, String::new()));
}

#[test]
fn baseline_outputs_are_written_on_every_exit_once_a_baseline_is_read() {
    let api = common::github::FakeGitHub::start();
    let never = ["--comment", "never"];
    // No baseline configured: no baseline outputs.
    let dir = setup("  - { name: m, path: preds.sql }", "");
    fs::write(dir.path().join("preds.sql"), lines_with_wrong(&[])).unwrap();
    let (code, stdout) = eval_in_actions(dir.path(), &api, 9, &never);
    assert_eq!(code, Some(0), "{stdout}");
    let outputs = fs::read_to_string(dir.path().join("outputs.txt")).unwrap();
    common::assert_contains(&outputs, &["passed=true"]);
    assert!(!outputs.contains("baseline-"), "{outputs}");

    // A gate that fails on a regression (exit 1) names its baseline.
    let dir = with_baseline(&[], "");
    fs::write(dir.path().join("preds.sql"), lines_with_wrong(&[0, 1])).unwrap();
    let (code, stdout) = eval_in_actions(dir.path(), &api, 9, &never);
    assert_eq!(code, Some(1), "{stdout}");
    assert_eq!(
        baseline_outputs(dir.path()),
        ("0123456789abcdef0123".into(), "0.0".into())
    );

    // A run that stops with exit 2 after reading the baseline (its report template does not
    // render) still names it.
    fs::remove_file(dir.path().join("outputs.txt")).unwrap();
    fs::write(dir.path().join("bad.md.j2"), "{{ headline(").unwrap();
    let yaml = fs::read_to_string(dir.path().join("sqlgate.yml")).unwrap();
    fs::write(
        dir.path().join("sqlgate.yml"),
        yaml + "report: { template: bad.md.j2 }\n",
    )
    .unwrap();
    let (code, stdout) = eval_in_actions(dir.path(), &api, 9, &never);
    assert_eq!(code, Some(2), "{stdout}");
    assert_eq!(
        baseline_outputs(dir.path()),
        ("0123456789abcdef0123".into(), "0.0".into())
    );
}

#[test]
fn a_large_gain_passes_flagged_for_review() {
    let api = common::github::FakeGitHub::start();
    let dir = with_baseline(&[1, 3], "gate: { review_gain_points: 30 }\n");
    fs::write(dir.path().join("preds.sql"), lines_with_wrong(&[])).unwrap();
    let (code, stdout) = eval_in_actions(dir.path(), &api, 7, &[]);
    assert_eq!(code, Some(0), "a gain passes: {stdout}");
    assert_eq!(output(dir.path(), "review"), "true");
    let flag = "review: m: ex on all gained 40.0 points (60.0 -> 100.0 on 5 items; 2 fixed, 0 \
                regressed), more than `gate.review_gain_points` (30.0)";
    assert!(output(dir.path(), "review_reason").starts_with(flag));
    // The heading and the step output `reason` say the pass needs a review; the flag follows the
    // heading, once.
    let comment = plain(&api.comments(7)[0]);
    let lines: Vec<&str> = comment.lines().collect();
    assert_eq!(
        lines[1],
        "## 🔎 sqlgate passed, review the gain: ex 60.0 -> 100.0 (+40.0), 0 regressed / 2 fixed",
        "{comment}"
    );
    assert!(lines[3].starts_with(flag), "{comment}");
    assert_eq!(comment.matches(flag).count(), 1, "{comment}");
    assert_eq!(
        output(dir.path(), "reason"),
        format!(
            "passed, review the gain: ex 60.0 -> 100.0 (+40.0), 0 regressed / 2 fixed; {}",
            lines[3]
        )
    );

    fs::write(dir.path().join("preds.sql"), lines_with_wrong(&[1])).unwrap();
    let (code, _) = eval_in_actions(dir.path(), &api, 7, &[]);
    assert_eq!(code, Some(0));
    assert_eq!(
        output(dir.path(), "review"),
        "false",
        "a 20-point gain is below 30"
    );
}

#[test]
fn bad_policy_values_name_their_key() {
    for (extra, expected) in [
        (
            "comment: sometimes\n",
            "comment: unknown variant `sometimes`, expected one of `always`, `on-change`, \
             `on-failure`",
        ),
        (
            "gate: { max_baseline_age_days: -3 }\n",
            "`gate.max_baseline_age_days` must be a positive number",
        ),
        (
            "gate: { max_baseline_age_days: { days: 3, action: panic } }\n",
            "gate.max_baseline_age_days",
        ),
        (
            "gate: { review_gain_points: -1 }\n",
            "`gate.review_gain_points` must be a non-negative number",
        ),
    ] {
        let dir = setup("  - { name: m, path: preds.sql }", extra);
        fs::write(dir.path().join("preds.sql"), lines_with_wrong(&[])).unwrap();
        let (code, _, stderr) = run(dir.path(), &["eval", "--config", "sqlgate.yml"]);
        assert_eq!(code, Some(2), "{extra}: {stderr}");
        assert!(stderr.contains(expected), "{extra}: {stderr}");
    }
}

/// The features of gold item `index` (0-based) of a gold file, read in `dialect`.
fn gold_features(
    path: &Path,
    index: usize,
    dialect: sqlgate::sql::features::FeatureDialect,
) -> Vec<&'static str> {
    let text = fs::read_to_string(path).unwrap();
    let line = text.lines().nth(index).unwrap();
    let sql = line.split('\t').next().unwrap();
    sqlgate::sql::features::features(sql, dialect)
        .unwrap()
        .into_iter()
        .map(|f| f.as_str())
        .collect()
}

#[test]
fn features_of_hand_checked_spider_and_bird_golds_in_each_dialect() {
    use sqlgate::sql::features::FeatureDialect::{Mysql, Postgresql, Sqlite};
    let spider = common::shared_spider().join("dev_gold.sql");
    for (index, expected) in [
        (0, vec!["aggregate"]),
        (2, vec![]),
        (8, vec!["distinct"]),
        (28, vec!["nested"]),
        (30, vec!["set_operation"]),
        (31, vec!["join", "set_operation"]),
        (39, vec![]),
        (81, vec!["join", "group_by", "aggregate"]),
    ] {
        assert_eq!(
            gold_features(&spider, index, Sqlite),
            expected,
            "Spider item {index}"
        );
    }
    let bird = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/bird/mini_dev");
    let window = vec!["nested", "window"];
    let top_k = vec!["join", "order_limit", "null_test"];
    for (file, dialect) in [
        ("mini_dev_sqlite_gold.sql", Sqlite),
        ("mini_dev_postgresql_gold.sql", Postgresql),
        ("mini_dev_mysql_gold.sql", Mysql),
    ] {
        let path = bird.join(file);
        assert_eq!(
            gold_features(&path, 164, dialect),
            window,
            "{file} item 164"
        );
        assert_eq!(
            gold_features(&path, 249, dialect),
            ["join", "window"],
            "{file} item 249"
        );
        assert_eq!(gold_features(&path, 87, dialect), top_k, "{file} item 87");
    }
    let item = |file: &str, index, dialect| gold_features(&bird.join(file), index, dialect);
    assert_eq!(
        item("mini_dev_sqlite_gold.sql", 38, Sqlite),
        ["join", "case", "string_function", "aggregate"]
    );
    assert_eq!(
        item("mini_dev_sqlite_gold.sql", 19, Sqlite),
        ["join", "date_time", "aggregate"]
    );
    assert_eq!(
        item("mini_dev_postgresql_gold.sql", 83, Postgresql),
        ["join", "date_time", "distinct"]
    );
    assert_eq!(
        item("mini_dev_postgresql_gold.sql", 0, Postgresql),
        ["case", "aggregate"]
    );
    assert_eq!(
        item("mini_dev_mysql_gold.sql", 0, Mysql),
        ["case", "aggregate"]
    );
    assert_eq!(
        item("mini_dev_mysql_gold.sql", 105, Mysql),
        ["join", "date_time", "aggregate"]
    );
}

/// A folder with the first 40 Spider dev items (the example's), a baseline of system `m`
/// right on all of them, and `m` now wrong on the INTERSECT item 30.
fn feature_setup(gate: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let ex = example();
    let lines: Vec<String> = fs::read_to_string(ex.join("dev_gold.sql"))
        .unwrap()
        .lines()
        .take(40)
        .map(str::to_string)
        .collect();
    fs::write(dir.path().join("gold.sql"), lines.join("\n") + "\n").unwrap();
    let yaml = format!(
        "dataset:\n  gold: gold.sql\n  tables: {ex}/tables.json\n  databases: {ex}/database\n\
         predictions:\n  - {{ name: m, path: preds.sql }}\nbaseline: {{ path: baseline.json }}\n{gate}",
        ex = ex.display()
    );
    fs::write(dir.path().join("sqlgate.yml"), yaml).unwrap();
    let sql: Vec<&str> = lines
        .iter()
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    fs::write(dir.path().join("preds.sql"), sql.join("\n") + "\n").unwrap();
    let (code, stdout, stderr) = run(
        dir.path(),
        &["baseline", "update", "--config", "sqlgate.yml"],
    );
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let mut broken = sql.clone();
    broken[30] = "SELECT country FROM singer WHERE age > 40";
    fs::write(dir.path().join("preds.sql"), broken.join("\n") + "\n").unwrap();
    dir
}

#[test]
fn feature_cells_are_reported_and_gated() {
    let dir = feature_setup("gate: { max_drop_points: 5 }\n");
    let args = [
        "eval",
        "--config",
        "sqlgate.yml",
        "--summary",
        "summary.json",
    ];
    let (code, stdout, stderr) = run(dir.path(), &args);
    assert_eq!(
        code,
        Some(0),
        "a 2.5-point drop overall passes: {stdout}{stderr}"
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.path().join("summary.json")).unwrap()).unwrap();
    let set_ops = &summary["features"]["m"]["set_operation"];
    assert_eq!(set_ops["items"], 3, "{set_ops}");
    assert_eq!(set_ops["accuracy"]["ex"]["n"], 3);
    let against = &set_ops["against_baseline"];
    assert_eq!(
        (against["regressed"].as_u64(), against["fixed"].as_u64()),
        (Some(1), Some(0))
    );
    assert!((against["delta_points"].as_f64().unwrap() + 100.0 / 3.0).abs() < 1e-9);
    let p = against["p_value"].as_f64().unwrap();
    assert!(
        (p - 1.0).abs() < 1e-9,
        "McNemar on one discordant item: {p}"
    );
    let join = &summary["features"]["m"]["join"];
    assert_eq!(join["against_baseline"]["regressed"], 0, "{join}");
    assert!(
        summary["features"]["m"].get("window").is_none(),
        "no item has a window"
    );
    let report = report_of(dir.path());
    assert!(
        report.contains(
            "| m | set_operation | 3 | ex 66.7 n=3 | -33.3 | 1 | 0 | 1.0000 (1.0000) | – |"
        ),
        "{report}"
    );

    let gated = feature_setup("gate: { max_drop_points: 5, per_feature: { set_operation: 10 } }\n");
    let (code, stdout, _) = run(gated.path(), &["eval", "--config", "sqlgate.yml"]);
    assert_eq!(code, Some(1), "{stdout}");
    let report = report_of(gated.path());
    assert!(
        report.contains(
            "## ❌ sqlgate failed: ex on `feature:set_operation` 100.0 -> 66.7 (-33.3), 1 \
             regressed / 0 fixed\n\nover 3 items: drop 33.3 > allowed 10.0\n"
        ),
        "{report}"
    );
    // The cell's name is a code span wherever it is shown, so it copies without a word joiner.
    let raw = fs::read_to_string(gated.path().join("sqlgate-report.md")).unwrap();
    assert!(
        raw.contains("| m | m | `feature:set_operation` | 3 |") && !raw.contains('\u{2060}'),
        "{raw}"
    );
}

#[test]
fn an_unknown_feature_names_the_key() {
    let dir = setup(
        "  - { name: m, path: preds.sql }",
        "gate: { per_feature: { windows: 1 } }\n",
    );
    fs::write(dir.path().join("preds.sql"), lines_with_wrong(&[])).unwrap();
    let (code, _, stderr) = run(dir.path(), &["eval", "--config", "sqlgate.yml"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "`gate.per_feature`: unknown feature `windows`; the features are join, nested,"
        ),
        "{stderr}"
    );
}
