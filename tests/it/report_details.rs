//! Report details a newcomer read wrong (issue 27, item 5), each a regression test: rows shown
//! as the comparison ran the queries (spider-ts drops DISTINCT), labelled; skipped items counted
//! and named; every changed item in the full report (not the first 200); deltas that add up as
//! printed; the single-system note folded; the full report uploaded by the PR workflow
//! (tests/it/adoption.rs checks the comment links to it).

use crate::common;

use common::{shared_spider, sqlgate_command};
use std::path::{Path, PathBuf};

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/spider-mini")
}

/// Makes a baseline from `base` predictions, then evaluates `candidate` ones against it with
/// `setup` (the dataset and metrics); returns the exit code and the full report.
fn gate(dir: &Path, setup: &str, base: &Path, candidate: &Path) -> (Option<i32>, String) {
    let config = |predictions: &Path| {
        format!(
            "{setup}predictions: [{{ name: model, path: {} }}]\n\
             baseline: {{ path: baseline.json }}\nreport: {{ output: report.md }}\n",
            predictions.display()
        )
    };
    std::fs::write(dir.join("base.yml"), config(base)).unwrap();
    std::fs::write(dir.join("cand.yml"), config(candidate)).unwrap();
    let run = |args: &[&str]| sqlgate_command(args).output().unwrap();
    let base_config = dir.join("base.yml");
    let made = run(&[
        "baseline",
        "update",
        "--config",
        base_config.to_str().unwrap(),
    ]);
    common::assert_exit(&made, 0);
    let candidate_config = dir.join("cand.yml");
    let eval = run(&[
        "eval",
        "--config",
        candidate_config.to_str().unwrap(),
        "--comment",
        "never",
    ]);
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap_or_default();
    (eval.status.code(), report)
}

fn example_dataset() -> String {
    format!(
        "dataset: {{ gold: {e}/dev_gold.sql, tables: {e}/tables.json, databases: {e}/database }}\n",
        e = example().display()
    )
}

#[test]
fn rows_are_shown_as_the_comparison_ran_them_and_the_lone_system_note_is_folded() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let predictions = std::fs::read_to_string(example().join("predictions/C3.txt")).unwrap();
    let mut lines: Vec<&str> = predictions.lines().collect();
    // Item 8's gold is `SELECT DISTINCT country FROM singer WHERE age > 20`: 3 countries as
    // written, 6 rows once spider-ts drops DISTINCT (as the official evaluator does).
    lines[8] = "SELECT name FROM singer";
    std::fs::write(dir.join("candidate.txt"), lines.join("\n") + "\n").unwrap();
    let (code, report) = gate(
        dir,
        &(example_dataset() + "metrics: [ex, esm]\n"),
        &example().join("predictions/C3.txt"),
        &dir.join("candidate.txt"),
    );
    assert_eq!(code, Some(1), "{report}");
    assert!(
        report.contains(
            "-- gold as compared (the spider-ts profile drops DISTINCT; as written: 3 row(s)): \
             6 row(s), first 5\n"
        ),
        "{report}"
    );
    assert!(
        report.contains(
            "-- baseline prediction as compared (the spider-ts profile drops DISTINCT; as \
             written: 3 row(s)): 6 row(s), first 5\n"
        ),
        "{report}"
    );
    common::assert_contains(&report, &["-- prediction: 6 row(s), first 5\n"]);
    assert!(
        report.contains(
            "<details><summary>Notes</summary>\n\nKendall tau-b is left out: it ranks 1 system(s)"
        ),
        "{report}"
    );
}

#[test]
fn skipped_items_are_counted_and_named_and_every_changed_item_is_in_the_full_report() {
    let spider = shared_spider();
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let gold_count = std::fs::read_to_string(spider.join("dev_gold.sql"))
        .unwrap()
        .lines()
        .count();
    std::fs::write(dir.join("constant.txt"), "SELECT 1\n".repeat(gold_count)).unwrap();
    let dataset = format!(
        "dataset: {{ gold: {s}/dev_gold.sql, tables: {s}/tables.json, databases: {s}/database, \
         skip_missing_databases: true }}\nmetrics: [ex]\n",
        s = spider.display()
    );
    let (code, report) = gate(
        dir,
        &dataset,
        &spider.join("predictions/C3.txt"),
        &dir.join("constant.txt"),
    );
    assert_eq!(code, Some(1));
    let skipped: Vec<String> = (429..=490).map(|i| i.to_string()).collect();
    let row = format!(
        "| model | ex | skipped | 62 | {} | database absent |",
        skipped.join(", ")
    );
    common::assert_contains(&report, &[&row]);
    assert!(report.contains(
        "<details><summary>Items not scored: 62 (system, metric) results left out of the \
         accuracies</summary>"
    ));
    let title = report
        .lines()
        .find(|l| l.starts_with("<details open><summary>Regressed items of model"))
        .unwrap();
    let regressed: usize = title
        .rsplit_once('(')
        .unwrap()
        .1
        .trim_end_matches(")</summary>")
        .parse()
        .unwrap();
    assert!(regressed > 700, "{title}");
    assert_eq!(report.matches("\n#### model: item ").count(), regressed);
    assert!(!report.contains("more (see the full report)"));
}

#[test]
fn the_pr_workflow_uploads_the_report_as_the_artifact_the_comment_names() {
    let workflow = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(".github/workflows/sqlgate-pr.yml"),
    )
    .unwrap();
    assert!(
        workflow.contains(
            "        uses: actions/upload-artifact@043fb46d1a93c77aae656e7c1c64a875d1fc6a0a # v7.0.1\n\
             \x20       with:\n\
             \x20         name: sqlgate-report\n\
             \x20         path: |\n\
             \x20           ${{ steps.sqlgate.outputs.report }}\n"
        ),
        "{workflow}"
    );
}

/// "84.2 -> 82.9 (-1.2)": the delta was the unrounded difference. Here the baseline is C3 with
/// item 0 broken (148 / 157 = 94.27 %, printed 94.3) and the pull request breaks item 1 too
/// (147 / 157 = 93.63 %, printed 93.6): the unrounded drop, 0.64, would print as 0.6; the
/// printed values make 0.7, and every place prints that.
#[test]
fn deltas_add_up_as_printed() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let predictions = std::fs::read_to_string(example().join("predictions/C3.txt")).unwrap();
    let broken = |count: usize| {
        let lines: Vec<&str> = predictions
            .lines()
            .enumerate()
            .map(|(i, line)| if i < count { "SELECT 'broken'" } else { line })
            .collect();
        lines.join("\n") + "\n"
    };
    std::fs::write(dir.join("base.txt"), broken(1)).unwrap();
    std::fs::write(dir.join("candidate.txt"), broken(2)).unwrap();
    let (code, report) = gate(
        dir,
        &(example_dataset() + "metrics: [ex]\n"),
        &dir.join("base.txt"),
        &dir.join("candidate.txt"),
    );
    assert_eq!(code, Some(1), "{report}");
    common::assert_contains(
        &report,
        &["ex 94.3 -&gt; 93.6 (-0.7), 1 regressed / 0 fixed"],
    );
    common::assert_contains(&report, &["\nover 157 items: drop 0.7 &gt; allowed 0.0"]);
    common::assert_contains(&report, &["93.6 (-0.7) n=157"]);
    assert!(!report.contains("(-0.6)"), "{report}");
}
