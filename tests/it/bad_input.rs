//! Bad input gets a one-line cause naming the file, line, key or item, exit code 2, and no
//! partial output; every prediction format loads and aligns with the gold.

use crate::common;

use common::{read_jsonl, sqlgate};
use std::fs;
use std::path::{Path, PathBuf};

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/spider-mini")
}

/// A temp folder with a config whose dataset is the bundled example; `extra` is appended.
struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new(predictions: &str, extra: &str) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let ex = example();
        let yaml = format!(
            "dataset:\n  gold: {ex}/dev_gold.sql\n  tables: {ex}/tables.json\n  databases: {ex}/database\npredictions:\n{predictions}\n{extra}",
            ex = ex.display()
        );
        fs::write(dir.path().join("sqlgate.yml"), yaml).unwrap();
        Setup { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn write(&self, name: &str, content: impl AsRef<[u8]>) {
        fs::write(self.path(name), content).unwrap();
    }

    /// Runs `eval` with a JSONL output; returns (exit code, stderr).
    fn eval(&self) -> (Option<i32>, String) {
        let output = common::eval(
            &self.path("sqlgate.yml"),
            &["--jsonl", common::arg(&self.path("out.jsonl"))],
        );
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }

    fn assert_input_error(&self, expected: &[&str]) {
        let (code, stderr) = self.eval();
        assert_eq!(code, Some(2), "stderr: {stderr}");
        for fragment in expected {
            assert!(stderr.contains(fragment), "`{fragment}` not in: {stderr}");
        }
        assert_eq!(stderr.trim().lines().count(), 1, "one-line cause: {stderr}");
        assert!(!self.path("out.jsonl").exists(), "partial output written");
    }
}

fn gold_lines() -> Vec<String> {
    fs::read_to_string(example().join("dev_gold.sql"))
        .unwrap()
        .lines()
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect()
}

const PREDS: &str = "  - { name: mine, path: preds.txt }";

#[test]
fn unknown_key_names_the_key_and_line() {
    let setup = Setup::new(PREDS, "colour: blue\n");
    setup.write("preds.txt", gold_lines().join("\n"));
    setup.assert_input_error(&["unknown field `colour`", "line 7"]);
}

#[test]
fn wrong_type_names_the_key() {
    let setup = Setup::new(PREDS, "execution: { timeout_ms: soon }\n");
    setup.write("preds.txt", gold_lines().join("\n"));
    setup.assert_input_error(&["execution.timeout_ms", "invalid type"]);
}

#[test]
fn wrong_types_are_named_in_the_configs_words_not_rusts() {
    for (extra, expected) in [
        (
            "execution: { timeout_ms: soon }\n",
            "execution.timeout_ms: invalid type: string \"soon\", expected a whole number of 0 or \
             more at line",
        ),
        (
            "gate: { max_drop_points: lots }\n",
            "gate.max_drop_points: invalid type: string \"lots\", expected a number at line",
        ),
        (
            "gate: { max_regressed_items: -3 }\n",
            "gate.max_regressed_items: invalid type: integer `-3`, expected a whole number of 0 or \
             more at line",
        ),
    ] {
        let setup = Setup::new(PREDS, extra);
        setup.write("preds.txt", gold_lines().join("\n"));
        setup.assert_input_error(&[expected]);
        let (_, stderr) = setup.eval();
        for rust in ["f64", "u64", "usize"] {
            assert!(!stderr.contains(rust), "{stderr}");
        }
    }
}

#[test]
fn missing_config_and_prediction_files_are_named() {
    let setup = Setup::new(PREDS, "");
    setup.assert_input_error(&[
        "preds.txt",
        "this prediction file does not exist: fix `path` of this `predictions` entry",
    ]);
    let glob = Setup::new("  - { path: 'preds/*.txt' }", "");
    glob.assert_input_error(&["preds/*.txt", "no prediction file matches this glob"]);
    let output = sqlgate(&["eval", "--config", "/nonexistent/sqlgate.yml"]);
    common::assert_exit(&output, 2);
    common::assert_contains(&common::stderr(&output), &["/nonexistent/sqlgate.yml"]);
}

#[test]
fn unknown_metric_is_named() {
    let setup = Setup::new(PREDS, "metrics: [ex, bleu]\n");
    setup.write("preds.txt", gold_lines().join("\n"));
    setup.assert_input_error(&["unknown metric `bleu`"]);
}

#[test]
fn prediction_count_mismatch_is_an_error_unless_allowed() {
    let mut lines = gold_lines();
    lines.truncate(100);
    let setup = Setup::new(PREDS, "");
    setup.write("preds.txt", lines.join("\n"));
    setup.assert_input_error(&["100 predictions for 157 gold items", "allow_missing"]);

    let allowed = Setup::new(
        "  - { name: mine, path: preds.txt, allow_missing: true }",
        "",
    );
    allowed.write("preds.txt", lines.join("\n"));
    let (code, stderr) = allowed.eval();
    assert_eq!(code, Some(0), "{stderr}");
    let results = read_jsonl(&allowed.path("out.jsonl"));
    let missing = results
        .iter()
        .filter(|r| r["outcome"]["ex"] == "missing")
        .count();
    assert_eq!(missing, 57);
    assert!(results[100..].iter().all(|r| r["metrics"]["ex"] == 0));
}

#[test]
fn too_many_predictions_is_an_error() {
    let mut lines = gold_lines();
    lines.push("SELECT 1".into());
    let setup = Setup::new(
        "  - { name: mine, path: preds.txt, allow_missing: true }",
        "",
    );
    setup.write("preds.txt", lines.join("\n"));
    setup.assert_input_error(&["158 predictions for 157 gold items"]);
}

#[test]
fn invalid_utf8_names_file_and_line() {
    let mut content = gold_lines().join("\n").into_bytes();
    let third_line = content
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .nth(1)
        .unwrap()
        .0
        + 1;
    content.insert(third_line + 3, 0xff);
    let setup = Setup::new(PREDS, "");
    setup.write("preds.txt", content);
    setup.assert_input_error(&["preds.txt", "line 3", "invalid UTF-8"]);
}

#[test]
fn misaligned_db_id_after_tab_is_an_error() {
    let mut lines = gold_lines();
    lines[5] = format!("{}\tpets_1", lines[5]);
    let setup = Setup::new(PREDS, "");
    setup.write("preds.txt", lines.join("\n"));
    setup.assert_input_error(&["line 6", "misaligned"]);
}

#[test]
fn missing_database_is_named_unless_skipped() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("db")).unwrap();
    fs::write(dir.path().join("gold.sql"), "SELECT 1\tabsent_db\n").unwrap();
    fs::write(dir.path().join("p.txt"), "SELECT 1\n").unwrap();
    let config = dir.path().join("sqlgate.yml");
    let base = "dataset: { gold: gold.sql, databases: db, difficulty: none";
    fs::write(
        &config,
        format!("{base} }}\npredictions: [{{ path: p.txt }}]\n"),
    )
    .unwrap();
    let output = common::eval(&config, &[]);
    common::assert_exit(&output, 2);
    let stderr = String::from_utf8_lossy(&output.stderr);
    common::assert_contains(&stderr, &["absent_db", "1 items"]);

    fs::write(
        &config,
        format!("{base}, skip_missing_databases: true }}\npredictions: [{{ path: p.txt }}]\n"),
    )
    .unwrap();
    let jsonl = dir.path().join("out.jsonl");
    let output = common::eval(&config, &["--jsonl", common::arg(&jsonl)]);
    common::assert_exit(&output, 0);
    assert_eq!(read_jsonl(&jsonl)[0]["outcome"]["ex"], "skipped");
}

#[test]
fn every_prediction_format_aligns_with_gold() {
    let lines = gold_lines();
    let reference = Setup::new(PREDS, "");
    reference.write("preds.txt", lines.join("\n"));
    assert_eq!(reference.eval().0, Some(0));
    let expected: Vec<_> = read_jsonl(&reference.path("out.jsonl"))
        .iter()
        .map(|r| r["metrics"]["ex"].clone())
        .collect();
    assert!(
        expected.iter().all(|v| v == 1),
        "gold against itself is all correct"
    );

    let reversed: Vec<usize> = (0..lines.len()).rev().collect();
    let tsv: String = std::iter::once("id\tsql\n".to_string())
        .chain(reversed.iter().map(|&i| format!("{i}\t{}\n", lines[i])))
        .collect();
    let jsonl: String = reversed
        .iter()
        .map(|&i| format!("{}\n", serde_json::json!({"id": i, "sql": lines[i]})))
        .collect();
    let bird: serde_json::Map<String, serde_json::Value> = reversed
        .iter()
        .map(|&i| {
            (
                i.to_string(),
                serde_json::json!(format!("{}\t----- bird -----\tx", lines[i])),
            )
        })
        .collect();
    for (format, content) in [
        ("tsv", tsv),
        ("jsonl", jsonl),
        ("bird-json", serde_json::Value::Object(bird).to_string()),
    ] {
        let setup = Setup::new(
            &format!("  - {{ name: mine, path: preds.{format}, format: {format} }}"),
            "",
        );
        setup.write(&format!("preds.{format}"), content);
        let (code, stderr) = setup.eval();
        assert_eq!(code, Some(0), "{format}: {stderr}");
        let got: Vec<_> = read_jsonl(&setup.path("out.jsonl"))
            .iter()
            .map(|r| r["metrics"]["ex"].clone())
            .collect();
        assert_eq!(got, expected, "{format}");
    }
}

#[test]
fn duplicate_keyed_ids_are_named() {
    let setup = Setup::new("  - { name: mine, path: p.jsonl, format: jsonl }", "");
    setup.write(
        "p.jsonl",
        "{\"id\": 0, \"sql\": \"SELECT 1\"}\n{\"id\": 0, \"sql\": \"SELECT 2\"}\n",
    );
    setup.assert_input_error(&["line 2", "id 0 appears twice"]);
}

#[test]
fn json_predictions_read_as_lines_name_the_format_to_set() {
    let setup = Setup::new(PREDS, "");
    let jsonl: Vec<String> = gold_lines()
        .iter()
        .enumerate()
        .map(|(id, sql)| serde_json::json!({"id": id, "sql": sql}).to_string())
        .collect();
    setup.write("preds.txt", jsonl.join("\n"));
    setup.assert_input_error(&[
        "preds.txt: line 1",
        "JSON, not SQL",
        "set `format: jsonl` on this entry of `predictions`",
    ]);
    let bird: serde_json::Map<String, serde_json::Value> = gold_lines()
        .iter()
        .enumerate()
        .map(|(id, sql)| (id.to_string(), format!("{sql}\t----- bird -----\tx").into()))
        .collect();
    setup.write(
        "preds.txt",
        serde_json::to_string_pretty(&serde_json::Value::Object(bird)).unwrap(),
    );
    setup.assert_input_error(&["preds.txt: line 1", "set `format: bird-json`"]);
}

#[test]
fn a_must_pass_item_the_dataset_lacks_is_refused() {
    let setup = Setup::new(PREDS, "gate: { must_pass: [3, 5000] }\n");
    setup.write("preds.txt", gold_lines().join("\n"));
    setup.assert_input_error(&[
        "sqlgate.yml",
        "`gate.must_pass`: item 5000 does not exist: the dataset has 157 items, numbered 0 to 156",
    ]);
}

#[test]
fn a_yaml_type_error_names_the_section_not_an_internal_type() {
    for (yaml, expected) in [
        ("dataset: data/gold.sql\npredictions: [{ path: p.txt }]\n", "the `dataset` section: a map with `gold`, `databases`"),
        ("dataset: { gold: g.sql, databases: d }\npredictions: [p.txt]\n", "a `predictions` entry: a map with `path`"),
        ("dataset: { gold: g.sql, databases: d }\npredictions: [{ path: p.txt }]\nbaseline: b.json\n", "the `baseline` section: a map with `path`"),
        ("dataset: { gold: g.sql, databases: d }\npredictions: [{ path: p.txt }]\ngate: { significance: mcnemar }\n", "`gate.significance`: a map with `test` and `alpha`"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("sqlgate.yml");
        fs::write(&config, yaml).unwrap();
        let output = common::eval(&config, &[]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(expected), "`{expected}` not in {stderr}");
        assert!(
            !stderr.contains("Config") && !stderr.contains("Spec"),
            "an internal type name in {stderr}"
        );
    }
}

/// A line removed or added in the middle shifts every later prediction onto another item: the
/// error points at the first line whose query reads a table its item's database lacks, not at
/// the end of the file.
#[test]
fn a_line_count_error_points_where_the_predictions_shift() {
    let gold = fs::read_to_string(example().join("dev_gold.sql")).unwrap();
    let rows: Vec<(&str, &str)> = gold.lines().map(|l| l.split_once('\t').unwrap()).collect();
    let boundary = (1..rows.len())
        .find(|&i| rows[i].1 != rows[i - 1].1)
        .unwrap();
    assert!(boundary > 4);
    let sqls = || {
        rows.iter()
            .map(|(sql, _)| sql.to_string())
            .collect::<Vec<_>>()
    };
    let mut removed = sqls();
    removed.remove(3);
    let setup = Setup::new(PREDS, "");
    setup.write("preds.txt", removed.join("\n"));
    setup.assert_input_error(&[
        &format!(
            "line {boundary}: 156 predictions for 157 gold items; line {boundary} is the first"
        ),
        "a line was likely added or removed above it",
    ]);
    let mut added = sqls();
    added.insert(3, "SELECT 1".into());
    setup.write("preds.txt", added.join("\n"));
    let line = boundary + 1;
    setup.assert_input_error(&[&format!(
        "line {line}: 158 predictions for 157 gold items; line {line} is the first"
    )]);
}
