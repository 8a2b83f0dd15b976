//! Issue 46 in the gate: `dataset.kind: livesql` (the bundled `examples/livesql-mini`, 44 items of
//! the conformance corpus on `school`) through baseline update, `eval`, the comment and
//! `summary.json`: each item judged as the recorded evaluators judged it, per-category cells, a
//! pull request that breaks a Management item's DML failing with the item named, a control and
//! an improvement passing, hostile predictions contained, and no test case run without network
//! isolation.

use crate::common::bird_critic_gate::predict;
use crate::common::{self, arg, repo};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The bundled example.
fn example_folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/livesql-mini")
}

/// The conformance corpus the example comes from.
fn corpus(file: &str) -> Vec<Value> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/livesql");
    common::read_jsonl(&dir.join(file))
}

/// `field` of each corpus line that has an `instance_id`, by instance.
fn by_instance(lines: &[Value], field: &str) -> BTreeMap<String, String> {
    (lines.iter())
        .filter_map(|line| {
            let id = line["instance_id"].as_str()?.to_string();
            Some((id, line[field].as_str()?.to_string()))
        })
        .collect()
}

/// Asserts that every item of the example's per-item `lines` but those at `except` is judged as
/// the corpus records: `livesql` as the official evaluator, `livesql_sound` as `cases.jsonl`
/// says, under its category.
fn assert_as_recorded(lines: &[Value], except: &[usize]) {
    let official = by_instance(&corpus("official_verdicts.jsonl"), "status");
    let sound = by_instance(&corpus("cases.jsonl"), "sound_verdict");
    let items = common::read_jsonl(&example_folder().join("items.jsonl"));
    for (index, (item, line)) in items.iter().zip(lines).enumerate() {
        let id = item["instance_id"].as_str().unwrap();
        if except.contains(&index) {
            continue;
        }
        let matched = |metric: &str| line["outcome"][metric] == "match";
        assert_eq!(line["difficulty"], item["category"], "{id}");
        assert_eq!(matched("livesql"), official[id] == "success", "{id}");
        assert_eq!(matched("livesql_sound"), sound[id] == "pass", "{id}");
    }
}

#[test]
fn the_example_scores_each_item_as_the_recorded_evaluators_did_with_a_cell_per_category() {
    let dir = tempfile::tempdir().unwrap();
    common::copy_tree(&example_folder(), dir.path());
    let summary = dir.path().join("summary.json");
    let lines = common::eval_items(
        &dir.path().join("sqlgate.yml"),
        &["--comment", "never", "--summary", arg(&summary)],
    );
    assert_eq!(lines.len(), 44);
    assert_as_recorded(&lines, &[]);
    let summary: Value = serde_json::from_slice(&std::fs::read(summary).unwrap()).unwrap();
    let model = &summary["systems"]["model"];
    let cells = json!({"Management": 22, "Query": 22, "all": 44});
    assert_eq!(model["counts"], cells);
    let points = |metric: &str, cell: &str| {
        (model["accuracy"][metric][cell].as_f64().unwrap() * 1000.0).round() / 10.0
    };
    let table = [
        ("livesql", "Management", 50.0),
        ("livesql", "Query", 54.5),
        ("livesql_sound", "Management", 45.5),
        ("livesql_sound", "Query", 63.6),
    ];
    for (metric, cell, expected) in table {
        assert_eq!(points(metric, cell), expected, "{metric} {cell}");
    }
    // Where the official profile and the sound one differ: lsq_100 (a TEMP table shadowing the
    // one its test reads) passes only officially; lsq_075 and lsq_078 (DISTINCT and ROUND
    // stripped from the gold) fail only officially.
    let rate = |kind: &str, cell: &str| model[kind]["livesql"][cell].as_f64().unwrap() * 22.0;
    assert_eq!((rate("fp", "Management"), rate("fn", "Query")), (1.0, 2.0));
    assert_profiles_differ_as_recorded(&summary, &dir.path().join("sqlgate-report.md"));
}

/// Asserts that `summary.json` and the report name exactly the example's items where the
/// recorded official and sound verdicts differ, with the denominator.
fn assert_profiles_differ_as_recorded(summary: &Value, report: &Path) {
    let official = by_instance(&corpus("official_verdicts.jsonl"), "status");
    let sound = by_instance(&corpus("cases.jsonl"), "sound_verdict");
    let items = common::read_jsonl(&example_folder().join("items.jsonl"));
    let differing: Vec<usize> = (items.iter().enumerate())
        .filter(|(_, item)| {
            let id = item["instance_id"].as_str().unwrap();
            (official[id] == "success") != (sound[id] == "pass")
        })
        .map(|(index, _)| index)
        .collect();
    assert_eq!(
        differing.len(),
        3,
        "the corpus records three: {differing:?}"
    );
    let pair = &summary["disagreements"]["model"]["livesql/livesql_sound"];
    assert_eq!(pair["items"], 44);
    let named: Vec<u64> = (pair["disagree"].as_array().unwrap().iter())
        .map(|d| d["index"].as_u64().unwrap())
        .collect();
    assert_eq!(
        named,
        differing.iter().map(|&i| i as u64).collect::<Vec<_>>()
    );
    let report = std::fs::read_to_string(report).unwrap();
    let note = "model: `livesql` and `livesql_sound` disagree on 3 of 44 items: item ";
    assert!(report.contains(note), "{report}");
}

/// The example on `main` with a baseline made there, and a pull-request branch `pr` checked out
/// from that commit; the folder and the base commit.
fn gated_example() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    common::copy_tree(&example_folder(), dir.path());
    std::fs::remove_file(dir.path().join("baseline.json")).unwrap();
    let base = repo::gated_main(dir.path());
    common::git(dir.path(), &["checkout", "-qb", "pr"]);
    (dir, base)
}

/// The pull request `change` makes (committed) judged against its base, writing
/// `summary.json`: its exit code, all it said with the comment, and the summary.
fn judged_change(change: impl FnOnce(&Path)) -> (Option<i32>, String, Value) {
    let (dir, base) = gated_example();
    change(dir.path());
    repo::commit_all(dir.path(), "the pull request");
    let run = repo::judged(dir.path(), &base, &["--summary", "summary.json"]);
    let comment = std::fs::read_to_string(dir.path().join("sqlgate-report.md")).unwrap();
    let read = std::fs::read(dir.path().join("summary.json")).unwrap();
    let said = format!("{}\n{comment}", common::text(&run));
    (
        run.status.code(),
        said,
        serde_json::from_slice(&read).unwrap(),
    )
}

/// lsq_081 (item 22): a Management UPDATE the model gets right; lsq_082 (item 23) the same
/// question, which it gets wrong.
const RIGHT_UPDATE: &str = "UPDATE students SET grade = grade + 1 WHERE grade = 12";

/// A pull request of the gate test: its name, its change, its exit code, what its output says,
/// and the regressed and fixed items of its gate cell.
type Case = (
    &'static str,
    Box<dyn FnOnce(&Path)>,
    i32,
    &'static [&'static str],
    (Value, Value),
);

#[test]
fn a_pull_request_breaking_a_management_update_fails_naming_it_and_others_pass() {
    let every_row = "UPDATE students SET grade = grade + 1";
    let cases: [Case; 3] = [
        (
            "regressing",
            Box::new(move |root| predict(root, "lsq_081", &[every_row])),
            1,
            &[
                "item 22",
                "(school, Management)",
                "lsq_081: Test case errors",
                "| model | livesql | 45.5 (-4.5) n=22 | 54.5 (+0.0) n=22 |",
            ],
            (json!([22]), json!([])),
        ),
        (
            "control",
            Box::new(|root| std::fs::write(root.join("NOTES.md"), "notes\n").unwrap()),
            0,
            &["0 regressed / 0 fixed"],
            (json!([]), json!([])),
        ),
        (
            "improving",
            Box::new(|root| predict(root, "lsq_082", &[RIGHT_UPDATE])),
            0,
            &["0 regressed / 1 fixed", "54.5 -> 56.8"],
            (json!([]), json!([23])),
        ),
    ];
    for (name, change, code, said, (regressed, fixed)) in cases {
        let (exit, output, summary) = judged_change(change);
        assert_eq!(exit, Some(code), "{name}: {output}");
        common::assert_contains(&output, said);
        // Every changed item is a Management one: its category's gated cell moves with `all`.
        let cells = summary["gate"]["cells"].as_array().unwrap();
        let named: Vec<&Value> = cells.iter().map(|c| &c["cell"]).collect();
        assert_eq!(named, ["all", "Management", "Query"], "{name}");
        for cell in &cells[..2] {
            assert_eq!((&cell["regressed"], &cell["fixed"]), (&regressed, &fixed));
        }
    }
}

/// The items of the hostile pull request's attacks: lsq_079, 081, 083, 085 and 087, each right
/// in the baseline.
const ATTACKED: [usize; 5] = [20, 22, 24, 26, 28];

#[test]
fn hostile_state_changing_predictions_are_contained_in_the_gate() {
    let endless = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r)";
    let (dir, base) = gated_example();
    let root = dir.path();
    let template = root.join("database/school/school.sqlite");
    let before = std::fs::read(&template).unwrap();
    let outside = root.join("stolen.sqlite");
    let (attach_new, attach_base, vacuum) = (
        format!("ATTACH DATABASE '{}' AS x", outside.display()),
        format!("ATTACH DATABASE '{}' AS base", template.display()),
        format!("VACUUM INTO '{}'", outside.display()),
    );
    let count = format!("{endless} SELECT count(*) FROM r");
    let fill =
        format!("INSERT INTO junk SELECT randomblob(1000000) FROM ({endless} SELECT n FROM r)");
    let attacks: [(&str, Vec<&str>); 5] = [
        ("lsq_079", vec![&attach_new, "CREATE TABLE x.t(a)"]),
        ("lsq_081", vec![&attach_base, "DELETE FROM base.students"]),
        (
            "lsq_083",
            vec![&vacuum, "DELETE FROM enrolments WHERE NOT score >= 60"],
        ),
        ("lsq_085", vec![&count]),
        ("lsq_087", vec!["CREATE TABLE junk(b BLOB)", &fill]),
    ];
    for (instance_id, statements) in &attacks {
        predict(root, instance_id, statements);
    }
    let config = root.join("sqlgate.yml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replace("timeout_ms: 30000", "timeout_ms: 3000"),
    )
    .unwrap();
    repo::commit_all(root, "hostile predictions");
    let run = repo::judged(root, &base, &["--jsonl", "outcomes.jsonl"]);
    let said = common::exited(&run, 1);
    let lines = common::read_jsonl(&root.join("outcomes.jsonl"));
    let outcomes: Vec<(&str, &str)> = (ATTACKED.iter())
        .map(|&index| {
            let outcome = &lines[index]["outcome"];
            (
                outcome["livesql"].as_str().unwrap(),
                outcome["livesql_sound"].as_str().unwrap(),
            )
        })
        .collect();
    // The reaches are refused; the endless query is stopped; the endless insert is stopped by
    // the disk budget or the deadline, whichever this machine reaches first.
    let refused = ("pred_error", "pred_error");
    let stopped = ("pred_timeout", "pred_timeout");
    assert_eq!(
        outcomes[..4],
        [refused, refused, refused, stopped],
        "{said}"
    );
    assert!([refused, stopped].contains(&outcomes[4]), "{said}");
    assert!(!outside.exists(), "{said}");
    assert!(
        std::fs::read(&template).unwrap() == before,
        "the template changed"
    );
    assert_as_recorded(&lines, &ATTACKED);
}

/// The first Management item of the example that both recorded evaluators pass, and its
/// predicted statements.
fn a_right_management_item() -> (usize, String, Vec<String>) {
    let official = by_instance(&corpus("official_verdicts.jsonl"), "status");
    let sound = by_instance(&corpus("cases.jsonl"), "sound_verdict");
    let items = common::read_jsonl(&example_folder().join("items.jsonl"));
    let predictions = common::read_jsonl(&example_folder().join("predictions/model.jsonl"));
    let (index, item) = (items.iter().enumerate())
        .find(|(_, item)| {
            let id = item["instance_id"].as_str().unwrap();
            item["category"] == "Management" && official[id] == "success" && sound[id] == "pass"
        })
        .unwrap();
    let id = item["instance_id"].as_str().unwrap().to_string();
    let prediction = (predictions.iter())
        .find(|line| line["instance_id"] == id.as_str())
        .unwrap();
    let statements = serde_json::from_value(prediction["pred_sqls"].clone()).unwrap();
    (index, id, statements)
}

#[test]
fn the_configured_copy_step_and_time_budgets_decide_where_an_item_is_stopped() {
    let (index, id, right) = a_right_management_item();
    let a_billion_steps_or_more =
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 2000000000) SELECT count(*) FROM r";
    let three_mib = "INSERT INTO junk SELECT randomblob(1048576) FROM (SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3)";
    let two_million_steps =
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 2000000) SELECT count(*) FROM r";
    let mut statements = vec!["CREATE TABLE junk(b BLOB)", three_mib, two_million_steps];
    statements.extend(right.iter().map(String::as_str));
    let cases = [
        ("", ("match", "match"), None),
        (
            ", max_copy_bytes: 2097152",
            ("pred_error", "pred_error"),
            Some("disk is full"),
        ),
        (
            ", max_steps: 1000000",
            ("pred_timeout", "pred_timeout"),
            None,
        ),
        (
            ", max_steps: 10000000000000, item_timeout_ms: 1000",
            ("pred_timeout", "pred_timeout"),
            None,
        ),
    ];
    for (budget, expected, error) in cases {
        let mut statements = statements.clone();
        if budget.contains("item_timeout_ms") {
            statements.insert(2, a_billion_steps_or_more);
        }
        let dir = tempfile::tempdir().unwrap();
        common::copy_tree(&example_folder(), dir.path());
        predict(dir.path(), &id, &statements);
        let config = dir.path().join("sqlgate.yml");
        let text = std::fs::read_to_string(&config).unwrap();
        let budgeted = text.replace("threads: auto }", &format!("threads: auto{budget} }}"));
        std::fs::write(&config, budgeted).unwrap();
        // The example's gate fails the stopped item (exit 1); the per-item lines say how.
        let jsonl = dir.path().join("outcomes.jsonl");
        let run = common::eval(&config, &["--comment", "never", "--jsonl", arg(&jsonl)]);
        assert!(matches!(run.status.code(), Some(0 | 1)), "{run:?}");
        let lines = common::read_jsonl(&jsonl);
        let outcome = &lines[index]["outcome"];
        let got = (
            outcome["livesql"].as_str().unwrap(),
            outcome["livesql_sound"].as_str().unwrap(),
        );
        assert_eq!(got, expected, "{id} with `{budget}`: {}", lines[index]);
        if let Some(error) = error {
            assert!(lines[index].to_string().contains(error), "{}", lines[index]);
        }
        assert_as_recorded(&lines, &[index]);
    }
}

#[test]
fn out_of_range_state_budgets_are_refused_naming_the_key() {
    let cases = [
        (
            "max_copy_bytes: 1000",
            "`execution.max_copy_bytes` must be between",
        ),
        ("max_steps: 0", "`execution.max_steps` must be between"),
        (
            "item_timeout_ms: 999",
            "`execution.item_timeout_ms` must be between",
        ),
    ];
    for (budget, message) in cases {
        let dir = tempfile::tempdir().unwrap();
        common::copy_tree(&example_folder(), dir.path());
        let config = dir.path().join("sqlgate.yml");
        let text = std::fs::read_to_string(&config).unwrap();
        let budgeted = text.replace("threads: auto }", &format!("threads: auto, {budget} }}"));
        std::fs::write(&config, budgeted).unwrap();
        let run = common::eval(&config, &["--comment", "never"]);
        let said = common::exited(&run, 2);
        assert!(said.contains(message), "{said}");
    }
}

/// `command` run where the system's `unshare` is not a program: in a mount namespace of its own
/// with `/dev/null` bound over it (sqlgate takes it from `/usr/bin` or `/bin` only, whatever
/// `PATH` says).
fn without_unshare(command: &std::process::Command) -> std::process::Command {
    let hide = "for p in /usr/bin/unshare /bin/unshare; do [ -f \"$p\" ] && mount --bind /dev/null \"$p\"; done; exec \"$0\" \"$@\"";
    let mut wrapped = std::process::Command::new("/usr/bin/unshare");
    wrapped
        .args([
            "--user",
            "--map-root-user",
            "--mount",
            "--",
            "sh",
            "-c",
            hide,
        ])
        .arg(command.get_program())
        .args(command.get_args());
    for (name, value) in command.get_envs() {
        match value {
            Some(value) => wrapped.env(name, value),
            None => wrapped.env_remove(name),
        };
    }
    if let Some(folder) = command.get_current_dir() {
        wrapped.current_dir(folder);
    }
    wrapped
}

#[test]
fn test_cases_never_run_without_network_isolation() {
    let dir = tempfile::tempdir().unwrap();
    common::copy_tree(&example_folder(), dir.path());
    let command = common::eval_command(&dir.path().join("sqlgate.yml"), &["--comment", "never"]);
    let run = without_unshare(&command).output().unwrap();
    let said = common::exited(&run, 2);
    common::assert_contains(
        &said,
        &[
            "could not judge item ",
            "the test cases need network isolation",
            "never run without it",
        ],
    );
}

#[test]
fn configs_that_do_not_go_with_the_livesql_kinds_are_refused_naming_the_key() {
    use sqlgate::engine::registry::Engines;
    use sqlgate::input::config::Config;
    let example = std::fs::read_to_string(example_folder().join("sqlgate.yml")).unwrap();
    let spider = "dataset: { gold: g.sql, databases: d }\n";
    let cases: [(String, &str); 10] = [
        (
            example.replace("threads: auto }", "threads: auto }\naudit: { overrides: o.jsonl }"),
            "`audit.overrides` and `audit.dialects` do not apply to `dataset.kind: livesql`",
        ),
        (example.replace("field:category", "spider-hardness"), "set `dataset.difficulty: field:category` (a cell per category) or `none`"),
        (example.replace("[livesql, livesql_sound]", "[livesql, livesql_sound, ex]"), "`metrics`: `ex` is not available for `dataset.kind: livesql` (only `livesql`, `livesql_sound`)"),
        (example.replace("kind: livesql\n", "kind: bird-critic\n"), "`metrics`: `livesql` is not available for `dataset.kind: bird-critic` (only `bird_critic`, `bird_critic_sound`)"),
        (example.replace(", format: livesql", ""), "`predictions`: `./predictions/model.jsonl` needs `format: livesql` with `dataset.kind: livesql`"),
        (example.replace("format: livesql", "format: livesql, extract: auto"), "`extract`"),
        (example.replace("threads: auto }", "threads: auto }\ncompare: { keep_distinct: true }"), "do not apply to `dataset.kind: livesql`"),
        (example.replace("databases: database\n", "engine: { kind: postgresql, url_env: X }\n"), "`dataset.kind: livesql` runs on SQLite only"),
        (format!("{spider}predictions: [{{ path: p.txt }}]\nmetrics: [livesql_sound]\n"), "`metrics`: `livesql_sound` needs `dataset.kind: livesql`"),
        (format!("{spider}predictions: [{{ path: p.jsonl, format: livesql }}]\n"), "`./p.jsonl` has `format: livesql`, which needs `dataset.kind: livesql`, `bird-critic` or `evalbench`"),
    ];
    for (text, expected) in cases {
        let path = Path::new("sqlgate.yml");
        let error = Config::parse(&text, path, &Engines)
            .unwrap_err()
            .to_string();
        assert!(error.contains(expected), "{expected:?} not in {error}");
    }
}

#[test]
fn an_absent_prediction_is_a_wrong_item_and_an_unknown_instance_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    common::copy_tree(&example_folder(), dir.path());
    let (config, predictions) = (
        dir.path().join("sqlgate.yml"),
        dir.path().join("predictions/model.jsonl"),
    );
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replace("format: livesql", "format: livesql, allow_missing: true"),
    )
    .unwrap();
    let lines = std::fs::read_to_string(&predictions).unwrap();
    let kept: Vec<&str> = lines
        .lines()
        .filter(|l| !l.contains("\"lsq_081\""))
        .collect();
    std::fs::write(&predictions, kept.join("\n") + "\n").unwrap();
    let jsonl = dir.path().join("outcomes.jsonl");
    let said = common::exited(
        &common::eval(&config, &["--jsonl", arg(&jsonl), "--comment", "never"]),
        1,
    );
    let item = &common::read_jsonl(&jsonl)[22];
    assert_eq!(
        item["outcome"],
        json!({"livesql": "missing", "livesql_sound": "missing"}),
        "{said}"
    );
    std::fs::write(
        &predictions,
        format!(
            "{}\n{{\"instance_id\": \"lsq_999\", \"pred_sqls\": []}}\n",
            kept.join("\n")
        ),
    )
    .unwrap();
    let said = common::exited(&common::eval(&config, &["--comment", "never"]), 2);
    common::assert_contains(
        &said,
        &[
            "model.jsonl",
            "line 44",
            "`instance_id` lsq_999 is not an item of the dataset",
        ],
    );
}

/// Gated on `bird_critic_sound` (the kind's only gate profile), `bird_critic`'s verdicts checked.
#[test]
fn the_bird_critic_kind_gives_the_recorded_verdicts_in_the_gate() {
    let corpus_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/livesql");
    let dir = tempfile::tempdir().unwrap();
    common::databases_from_scripts(&corpus_dir.join("db"), &dir.path().join("database"));
    let bird_critic = corpus_dir.join("bird_critic");
    let config = common::config::write(
        dir.path().join("sqlgate.yml"),
        &format!(
            "dataset: {{ kind: bird-critic, gold: {items}, databases: database, difficulty: none }}\n\
             predictions: [{{ name: model, path: {predictions}, format: livesql }}]\n\
             metrics: [bird_critic, bird_critic_sound]\n\
             reference: bird_critic_sound\n\
             gate: {{ metric: bird_critic_sound }}\n",
            items = bird_critic.join("items_bc.jsonl").display(),
            predictions = bird_critic.join("predictions_bc.jsonl").display(),
        ),
    );
    let lines = common::eval_items(&config, &["--comment", "never"]);
    let recorded = by_instance(&corpus("bird_critic/official_verdicts_bc.jsonl"), "status");
    let items = common::read_jsonl(&bird_critic.join("items_bc.jsonl"));
    // The reaches sqlgate refuses (lsq_201, lsq_202) and the items whose template the ATTACH
    // rewrote upstream (lsq_203, lsq_205): tests/it/livesql.rs, NOT_REPRODUCIBLE_BC.
    let contained = ["lsq_201", "lsq_202", "lsq_203", "lsq_205"];
    let differing: Vec<&str> = (items.iter().zip(&lines))
        .map(|(item, line)| (item["instance_id"].as_str().unwrap(), line))
        .filter(|(id, line)| {
            (line["outcome"]["bird_critic"] == "match") != (recorded[*id] == "success")
        })
        .map(|(id, _)| id)
        .collect();
    assert_eq!(differing, contained);
    let passed = lines
        .iter()
        .filter(|l| l["outcome"]["bird_critic"] == "match");
    assert_eq!(passed.count(), 115);
}
