//! The comment ordered by what a reviewer needs (issue 45), on the bundled example: the
//! regressed items first among the folded sections and open, the feature table only with the
//! cells the gate judges or that changed, and a failing comment over two datasets that shows its
//! verdict, reasons and tables on one screen before its first fold.

use crate::common;

use common::repo;
use std::path::Path;

/// Runs `sqlgate eval` of `dir`'s `sqlgate.yml` outside Actions, asserting exit `code`; returns
/// the report it wrote at `report`.
fn eval(dir: &Path, code: i32, report: &str) -> String {
    let output = repo::sqlgate_in(dir, &repo::EVAL, &[]);
    common::assert_exit(&output, code);
    std::fs::read_to_string(dir.join(report)).unwrap()
}

/// The line of `report` each `<details` element starts on, in order.
fn folds(report: &str) -> Vec<&str> {
    (report.lines())
        .filter(|l| l.starts_with("<details"))
        .collect()
}

/// The rows of the report's feature table: `| system | feature |`.
fn feature_rows(report: &str) -> Vec<String> {
    let Some(table) = report.split("<summary>Feature cells").nth(1) else {
        return Vec::new();
    };
    let table = table.split("</details>").next().unwrap();
    (table.lines())
        .filter(|l| l.starts_with("| ") && !l.starts_with("| system"))
        .map(|l| l.split(" | ").take(2).collect::<Vec<_>>().join(" | ") + " |")
        .collect()
}

#[test]
fn regressed_items_come_first_and_open_and_unchanged_feature_cells_are_left_out() {
    let dir = repo::example(true);
    let unchanged = eval(dir.path(), 0, "sqlgate-report.md");
    assert!(!unchanged.contains("<details open>"), "{unchanged}");
    assert!(
        !unchanged.contains("Feature cells"),
        "no feature is gated or changed: {unchanged}"
    );

    common::break_predictions(dir.path(), "C3", 2);
    let failed = eval(dir.path(), 1, "sqlgate-report.md");
    let folds = folds(&failed);
    assert_eq!(
        folds[0], "<details open><summary>Regressed items of C3 (vs baseline C3) (2)</summary>",
        "{failed}"
    );
    assert_eq!(
        folds
            .iter()
            .filter(|f| f.starts_with("<details open>"))
            .count(),
        1,
        "only the regressed items are open: {folds:?}"
    );
    // Items 0 and 1 both count rows: only the aggregate cell of C3 moved.
    assert_eq!(feature_rows(&failed), ["| C3 | aggregate |"], "{failed}");
    common::assert_contains(
        &failed,
        &[
            "13 cells the gate does not judge and whose accuracy did not change at this rounding \
           are left out; `summary.json` (`features`) has every cell.",
        ],
    );

    // A feature the gate judges is shown for every system, changed or not.
    let config = dir.path().join("sqlgate.yml");
    let text = std::fs::read_to_string(&config).unwrap();
    let gated = text.replace(
        "  per_difficulty: { extra: 2.0 }\n",
        "  per_difficulty: { extra: 2.0 }\n  per_feature: { join: 50.0 }\n",
    );
    assert_ne!(gated, text);
    std::fs::write(&config, gated).unwrap();
    let judged = eval(dir.path(), 1, "sqlgate-report.md");
    assert_eq!(
        feature_rows(&judged),
        ["| C3 | join |", "| C3 | aggregate |", "| RESDSQL | join |"],
        "{judged}"
    );
}

/// Two datasets, each the bundled example (`spider` and `spider-copy`), in a repository whose
/// baseline holds both.
fn two_datasets(root: &Path) {
    for name in ["a", "b"] {
        common::copy_tree(&repo::example_folder(), &root.join(name));
        std::fs::remove_file(root.join(name).join("baseline.json")).unwrap();
        std::fs::remove_file(root.join(name).join("sqlgate.yml")).unwrap();
    }
    let entry = |name: &str, folder: &str| {
        format!(
            "  - name: {name}\n    dataset: {{ gold: {folder}/dev_gold.sql, tables: \
             {folder}/tables.json, databases: {folder}/database, difficulty: spider-hardness }}\n    \
             predictions: [{{ name: C3, path: {folder}/predictions/C3.txt }}, {{ name: RESDSQL, \
             path: {folder}/predictions/RESDSQL.txt }}]\n"
        )
    };
    let config = format!(
        "datasets:\n{}{}metrics: [ex, esm]\ncompare: {{ profile: spider-ts }}\n\
         baseline: {{ path: baseline.json }}\ngate: {{ metric: ex, max_drop_points: 0.0, \
         per_difficulty: {{ extra: 2.0 }}, significance: {{ test: mcnemar-exact, alpha: 0.05 }} \
         }}\nreport: {{ output: report.md }}\n",
        entry("spider", "a"),
        entry("spider-copy", "b")
    );
    std::fs::write(root.join("sqlgate.yml"), config).unwrap();
    repo::gated_main(root);
}

#[test]
fn a_failing_comment_over_two_datasets_fits_one_screen_before_its_folds() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path();
    two_datasets(root);
    common::break_predictions(&root.join("a"), "C3", 6);
    common::break_predictions(&root.join("b"), "C3", 6);
    let report = eval(root, 1, "report.md");
    let lines: Vec<&str> = report.lines().collect();
    let first_fold = lines
        .iter()
        .position(|l| l.starts_with("<details"))
        .unwrap();
    assert!(
        first_fold <= 50,
        "{first_fold} lines before the first fold:\n{}",
        lines[..first_fold].join("\n")
    );
    assert_eq!(
        lines[first_fold],
        "<details open><summary>Regressed items of C3 (vs baseline C3) (6)</summary>"
    );
    // Before it: the verdict, its reasons, the macro-average and the first dataset's accuracy.
    let screen = lines[..first_fold].join("\n");
    common::assert_contains(
        &screen,
        &[
            "## ❌ sqlgate failed: dataset `spider`: C3: ex on all dropped 3.8 points (and 1 more \
             below)",
            "- dataset `spider-copy`: C3: ex on all dropped 3.8 points",
            "| C3 | 91.1 | 91.1 | 91.1 | 94.9 | -3.8 | 0.0625 | ✅ |",
            "### Dataset `spider`",
            "| C3 | ex | 90.0 (-6.7) n=30 |",
        ],
    );
    // Every section outside a fold, both datasets' included, is about a screen too.
    let mut depth = 0;
    let mut outside = 0;
    for line in &lines {
        depth += usize::from(line.starts_with("<details"));
        outside += usize::from(depth == 0 && !line.is_empty());
        depth -= usize::from(line.contains("</details>"));
    }
    assert!(
        outside <= 50,
        "{outside} lines outside the folds:\n{report}"
    );
}
