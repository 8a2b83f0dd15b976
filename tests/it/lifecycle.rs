//! The life of a model repository around the gate, through the binary and real git histories: the
//! pull request that introduces sqlgate passes with its scores and a note that nothing was
//! compared; one that breaks the config or the template fails naming the file and line; one that
//! repairs a base config that does not load is judged with the gate settings the base's baseline
//! recorded, so its own config cannot loosen the gate; on a base whose config loads, loosening it
//! changes nothing.

use crate::common;

use common::repo::{self, gated_main, judged, sqlgate_in};
use common::{break_predictions, git};
use std::path::Path;

/// The pull request in `root` (its working tree) judged against the base commit `base`.
fn judge(root: &Path, base: &str) -> (Option<i32>, String) {
    let run = judged(root, base, &[]);
    let report = std::fs::read_to_string(root.join("sqlgate-report.md")).unwrap_or_default();
    let out = format!(
        "exit {:?}\n{}\n{}\n--- report\n{report}",
        run.status.code(),
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    std::fs::remove_file(root.join("sqlgate-report.md")).ok();
    (run.status.code(), out)
}

/// Rewrites `sqlgate.yml` in `root` with `edit`.
fn edit_config(root: &Path, edit: impl Fn(&str) -> String) {
    let path = root.join("sqlgate.yml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, edit(&text)).unwrap();
}

/// The example's gate loosened until nothing could fail it.
fn loosened(config: &str) -> String {
    config
        .replace("max_drop_points: 0.0", "max_drop_points: 100.0")
        .replace("  significance: { test: mcnemar-exact, alpha: 0.05 }\n", "")
}

/// A config that does not load: a misspelt key on line 18 (as a direct push or a sqlgate upgrade
/// can leave one).
fn misspelt(config: &str) -> String {
    config.replace("max_drop_points: 0.0", "max_drop_point: 0.0")
}

/// `main` whose last commit (pushed directly, around the gate) broke the config; its baseline
/// was made before. Returns the base commit and the working config text.
fn broken_main(root: &Path) -> (String, String) {
    gated_main(root);
    let good = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
    edit_config(root, misspelt);
    let base = repo::commit_base(root, "a direct push that breaks the config", "pr");
    (base, good)
}

#[test]
fn the_pull_request_that_introduces_sqlgate_passes_with_its_scores_and_compares_nothing() {
    let dir = repo::example(false);
    let root = dir.path();
    git(root, &["init", "-q", "-b", "main"]);
    std::fs::write(root.join("README.md"), "a model repository\n").unwrap();
    git(root, &["add", "README.md"]);
    git(root, &["commit", "-qm", "before sqlgate"]);
    let base = repo::head(root);
    git(root, &["checkout", "-qb", "introduce-sqlgate"]);
    repo::commit_all(root, "gate the model with sqlgate");
    let (code, out) = judge(root, &base);
    assert_eq!(code, Some(0), "{out}");
    common::assert_contains(
        &out,
        &[
            "this pull request introduces the gate: the base commit",
            "has no sqlgate.yml and no baseline, so nothing was compared",
        ],
    );
    assert!(
        out.contains("C3") && out.contains("RESDSQL") && out.contains("94.9"),
        "the scores are shown: {out}"
    );
    // The heading says it in one line; the note continues below it, once.
    let report = out.split_once("--- report\n").unwrap().1;
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(
        lines[1],
        "## ✅ sqlgate passed, not gated: this pull request introduces the gate"
    );
    assert!(lines[3].starts_with("the base commit `"), "{report}");
    assert_eq!(report.matches("introduces the gate").count(), 1, "{report}");
}

#[test]
fn a_pull_request_that_breaks_the_config_fails_naming_the_file_and_line() {
    let dir = repo::example(false);
    let root = dir.path();
    let base = gated_main(root);
    git(root, &["checkout", "-qb", "pr"]);
    edit_config(root, misspelt);
    let (code, out) = judge(root, &base);
    assert_eq!(code, Some(2), "{out}");
    common::assert_contains(
        &out,
        &[
            "config sqlgate.yml: this pull request's version of the config does not load",
            "unknown field `max_drop_point`",
            "line 18",
        ],
    );
    std::fs::remove_file(root.join("sqlgate.yml")).unwrap();
    let (code, out) = judge(root, &base);
    assert_eq!(code, Some(2), "deleting the config stops the gate: {out}");
    common::assert_contains(&out, &["cannot read sqlgate.yml"]);
}

#[test]
fn a_pull_request_that_breaks_the_template_fails_naming_the_file_and_line() {
    let dir = repo::example(false);
    let root = dir.path();
    let base = gated_main(root);
    git(root, &["checkout", "-qb", "pr"]);
    edit_config(root, |c| {
        c.replace(
            "report: { output: sqlgate-report.md }",
            "report: { output: sqlgate-report.md, template: comment.md.j2 }",
        )
    });
    std::fs::write(
        root.join("comment.md.j2"),
        "{{ marker }}\n## Results\n{% for x in %}\n",
    )
    .unwrap();
    let (code, out) = judge(root, &base);
    assert_eq!(code, Some(2), "{out}");
    common::assert_contains(
        &out,
        &["report template does not render", "comment.md.j2: line 3"],
    );
}

#[test]
fn a_pull_request_that_repairs_a_broken_base_config_passes() {
    let dir = repo::example(false);
    let root = dir.path();
    let (base, good) = broken_main(root);
    let (code, out) = judge(root, &base);
    assert_eq!(
        code,
        Some(2),
        "the base config does not load, nor does the PR's: {out}"
    );
    common::assert_contains(
        &out,
        &["the config does not load, on the base commit", "line 18"],
    );
    std::fs::write(root.join("sqlgate.yml"), &good).unwrap();
    let (code, out) = judge(root, &base);
    assert_eq!(code, Some(0), "{out}");
    common::assert_contains(
        &out,
        &[
            "sqlgate.yml does not load",
            "unknown field `max_drop_point`",
            "under the gate settings that baseline recorded",
        ],
    );
}

#[test]
fn a_loose_repair_of_a_broken_base_that_regresses_fails() {
    let dir = repo::example(false);
    let root = dir.path();
    let (base, good) = broken_main(root);
    std::fs::write(root.join("sqlgate.yml"), loosened(&good)).unwrap();
    break_predictions(root, "C3", 30);
    let (code, out) = judge(root, &base);
    assert_eq!(code, Some(1), "{out}");
    common::assert_contains(&out, &["gate failed: C3 ex 94.9 -> 77.7"]);
    // Moving the baseline out of the way does not make the base's baseline go away.
    std::fs::write(
        root.join("sqlgate.yml"),
        loosened(&good).replace("path: baseline.json", "path: elsewhere.json"),
    )
    .unwrap();
    let (code, out) = judge(root, &base);
    assert_eq!(code, Some(1), "{out}");
    // Nor does dropping the system that regressed: it is read as the baseline recorded it.
    std::fs::write(
        root.join("sqlgate.yml"),
        loosened(&good).replace("  - { name: C3, path: predictions/C3.txt }\n", ""),
    )
    .unwrap();
    let (code, out) = judge(root, &base);
    assert_eq!(code, Some(1), "{out}");
    common::assert_contains(
        &out,
        &[
            "gate failed: C3 ex 94.9 -> 77.7",
            "read from the prediction files as the base's baseline recorded",
        ],
    );
    // Nor comparing more loosely: the baseline's settings must match.
    std::fs::write(
        root.join("sqlgate.yml"),
        good.replace("profile: spider-ts", "profile: bird"),
    )
    .unwrap();
    let (code, out) = judge(root, &base);
    assert_eq!(code, Some(2), "{out}");
    common::assert_contains(&out, &["made with other data or settings"]);
}

#[test]
fn loosening_the_gate_of_a_working_base_and_regressing_fails() {
    let dir = repo::example(false);
    let root = dir.path();
    let base = gated_main(root);
    git(root, &["checkout", "-qb", "pr"]);
    edit_config(root, loosened);
    break_predictions(root, "C3", 30);
    git(root, &["commit", "-qam", "looser gate, worse model"]);
    let (code, out) = judge(root, &base);
    assert_eq!(code, Some(1), "{out}");
    common::assert_contains(
        &out,
        &[
            "gate failed: C3 ex 94.9 -> 77.7",
            "this pull request changes the config sqlgate.yml",
        ],
    );
}

#[test]
fn a_pull_request_changes_a_prediction_format_and_its_file_together() {
    let dir = repo::example(false);
    let root = dir.path();
    let base = gated_main(root);
    git(root, &["checkout", "-qb", "pr"]);
    let file = root.join("predictions/C3.txt");
    let jsonl: String = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .enumerate()
        .map(|(id, sql)| serde_json::json!({"id": id, "sql": sql}).to_string() + "\n")
        .collect();
    std::fs::write(&file, jsonl).unwrap();
    let (code, out) = judge(root, &base);
    assert_eq!(code, Some(2), "the base config reads it as lines: {out}");
    common::assert_contains(&out, &["set `format: jsonl` on this entry"]);
    edit_config(root, |c| {
        c.replace(
            "{ name: C3, path: predictions/C3.txt }",
            "{ name: C3, path: predictions/C3.txt, format: jsonl }",
        )
    });
    let (code, out) = judge(root, &base);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains(
            "predictions/C3.txt is read as `format: jsonl`, as this pull request's config says"
        ),
        "{out}"
    );
    // The format is all it takes from the pull request's config: the gate stays the base's.
    edit_config(root, loosened);
    break_predictions(root, "RESDSQL", 30);
    let (code, out) = judge(root, &base);
    assert_eq!(code, Some(1), "{out}");
}

#[test]
fn a_baseline_made_from_an_uncommitted_config_says_so() {
    let dir = repo::example(false);
    let root = dir.path();
    gated_main(root);
    edit_config(root, loosened);
    let made = sqlgate_in(
        root,
        &["baseline", "update", "--config", "sqlgate.yml"],
        &[],
    );
    let stderr = String::from_utf8_lossy(&made.stderr);
    assert!(made.status.success(), "{stderr}");
    common::assert_contains(
        &stderr,
        &[
            "warning: the baseline records commit",
            "sqlgate.yml differ from it in the working tree",
        ],
    );
    git(root, &["checkout", "--", "sqlgate.yml"]);
    let clean = sqlgate_in(
        root,
        &["baseline", "update", "--config", "sqlgate.yml"],
        &[],
    );
    assert!(
        !String::from_utf8_lossy(&clean.stderr).contains("warning"),
        "{clean:?}"
    );
}

/// A baseline from an older sqlgate recorded no gate settings: a repair is judged with the
/// strictest gate (no drop, no net regressed item), not with its own.
#[test]
fn a_repair_over_a_baseline_without_gate_settings_meets_the_strictest_gate() {
    let dir = repo::example(false);
    let root = dir.path();
    gated_main(root);
    let path = root.join("baseline.json");
    let mut baseline: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(
        baseline["gate"]["max_drop_points"].is_number(),
        "{baseline}"
    );
    baseline.as_object_mut().unwrap().remove("gate");
    std::fs::write(&path, serde_json::to_string_pretty(&baseline).unwrap()).unwrap();
    git(
        root,
        &["commit", "-qam", "a baseline as an older sqlgate wrote it"],
    );
    let good = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
    edit_config(root, misspelt);
    let base = repo::commit_base(root, "a direct push that breaks the config", "pr");
    std::fs::write(root.join("sqlgate.yml"), loosened(&good)).unwrap();
    break_predictions(root, "C3", 1);
    let (code, out) = judge(root, &base);
    assert_eq!(code, Some(1), "{out}");
    common::assert_contains(&out, &["under the strictest gate"]);
}

/// Two copies of the example (`a/` and `b/`, each one system), gated by one `datasets:` config
/// with `b` excluding its first 30 items through reviewed overrides; `main` holds them and a
/// baseline made on them. Returns the base commit and the config text.
fn two_datasets_main(root: &Path) -> (String, String) {
    let source = repo::example_folder();
    for name in ["a", "b"] {
        common::copy_tree(&source.join("database"), &root.join(name).join("database"));
        for file in ["dev_gold.sql", "tables.json", "predictions/C3.txt"] {
            let target = root.join(name).join(file);
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::copy(source.join(file), target).unwrap();
        }
    }
    let excluded: String = (0..30)
        .map(|index| {
            let line = serde_json::json!({"index": index, "exclude": true, "reason": "reviewed"});
            format!("{line}\n")
        })
        .collect();
    std::fs::write(root.join("b/overrides.jsonl"), excluded).unwrap();
    let entry = |name: &str, audit: &str| {
        format!(
            "  - name: {name}\n    dataset: {{ gold: {name}/dev_gold.sql, tables: {name}/tables.json, databases: {name}/database }}\n    predictions: [{{ name: C3, path: {name}/predictions/C3.txt }}]\n{audit}"
        )
    };
    let config = format!(
        "datasets:\n{}{}metrics: [ex]\ncompare: {{ profile: spider-ts }}\nbaseline: {{ path: baseline.json }}\ngate: {{ metric: ex, max_drop_points: 0.0 }}\nreport: {{ output: sqlgate-report.md }}\n",
        entry("a", ""),
        entry("b", "    audit: { overrides: b/overrides.jsonl }\n")
    );
    std::fs::write(root.join("sqlgate.yml"), &config).unwrap();
    let base = gated_main(root);
    git(root, &["checkout", "-qb", "pr"]);
    (base, config)
}

/// [`two_datasets_main`] whose last commit on `main` (a direct push) broke the config, with the
/// branch `repair` checked out; returns that commit and the working config text.
fn broken_two_datasets_main(root: &Path) -> (String, String) {
    let (_, config) = two_datasets_main(root);
    git(root, &["checkout", "-q", "main"]);
    edit_config(root, |text| {
        text.replace("max_drop_points", "max_drop_point")
    });
    let base = repo::commit_base(root, "a direct push that breaks the config", "repair");
    (base, config)
}

/// Rewrites the first `count` predictions of dataset `name` of [`two_datasets_main`] as wrong.
fn break_dataset(root: &Path, name: &str, count: usize) {
    break_predictions(&root.join(name), "C3", count);
}

#[test]
fn deleting_a_folder_the_base_config_names_is_a_dataset_change_not_a_repair() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (base, config) = two_datasets_main(root);
    break_dataset(root, "a", 30);
    // Dataset `a` regresses; its databases folder goes, and so does `a` from the config: the
    // base's config (which names the folder) must still judge, not this pull request's.
    git(root, &["rm", "-rq", "a/database"]);
    let without_a = config.replacen(
        "  - name: a\n    dataset: { gold: a/dev_gold.sql, tables: a/tables.json, databases: a/database }\n    predictions: [{ name: C3, path: a/predictions/C3.txt }]\n",
        "",
        1,
    );
    assert_ne!(without_a, config);
    std::fs::write(root.join("sqlgate.yml"), without_a).unwrap();
    git(root, &["commit", "-qam", "drop dataset a"]);
    let (code, out) = judge(root, &base);
    assert_eq!(code, Some(2), "{out}");
    common::assert_contains(
        &out,
        &["the pull request changes dataset files", "a/database/"],
    );
}

#[test]
fn a_repair_must_run_every_dataset_of_the_base_baseline_under_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (base, config) = broken_two_datasets_main(root);
    break_dataset(root, "a", 30);
    for (repair, missing) in [
        (
            config.replace("  - name: a\n", "  - name: a-renamed\n"),
            "`a`",
        ),
        (config.replace("name: b\n", "name: b2\n"), "`b`"),
    ] {
        std::fs::write(root.join("sqlgate.yml"), &repair).unwrap();
        let (code, out) = judge(root, &base);
        assert_eq!(code, Some(2), "{out}");
        assert!(
            out.contains(&format!(
                "holds dataset(s) {missing} that this pull request's config does not run"
            )),
            "{out}"
        );
    }
    // Its own names: the regression of `a` is found.
    std::fs::write(root.join("sqlgate.yml"), &config).unwrap();
    let (code, out) = judge(root, &base);
    assert_eq!(code, Some(1), "{out}");
}

#[test]
fn a_repair_cannot_move_one_datasets_overrides_onto_another() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (base, config) = broken_two_datasets_main(root);
    // `a` regresses on exactly the items `b`'s reviewed overrides exclude, and the repair points
    // `a` at them.
    break_dataset(root, "a", 30);
    let moved = config.replace(
        "    predictions: [{ name: C3, path: a/predictions/C3.txt }]\n",
        "    predictions: [{ name: C3, path: a/predictions/C3.txt }]\n    audit: { overrides: b/overrides.jsonl }\n",
    );
    assert_ne!(moved, config);
    std::fs::write(root.join("sqlgate.yml"), moved).unwrap();
    let (code, out) = judge(root, &base);
    assert_eq!(code, Some(1), "{out}");
    common::assert_contains(
        &out,
        &[
            "gold overrides none as the base's baseline recorded",
            "dataset `a`: C3: ex on all dropped 17.2 points",
        ],
    );
}

#[test]
fn a_repair_of_a_config_that_is_not_yaml_cannot_move_the_baseline_away() {
    let dir = repo::example(false);
    let root = dir.path();
    let good = {
        gated_main(root);
        std::fs::read_to_string(root.join("sqlgate.yml")).unwrap()
    };
    std::fs::write(root.join("sqlgate.yml"), format!("{good}\n: [ not yaml\n")).unwrap();
    let base = repo::commit_base(root, "a direct push that breaks the YAML", "repair");
    break_predictions(root, "C3", 30);
    let moved = good.replace("path: baseline.json", "path: elsewhere.json");
    std::fs::write(root.join("sqlgate.yml"), moved).unwrap();
    let (code, out) = judge(root, &base);
    assert_eq!(code, Some(2), "{out}");
    common::assert_contains(
        &out,
        &["names a baseline this run could read, but the base holds baseline.json"],
    );
    // Keeping the path, the regression is found.
    std::fs::write(root.join("sqlgate.yml"), &good).unwrap();
    let (code, out) = judge(root, &base);
    assert_eq!(code, Some(1), "{out}");
}

/// Replaces the folder `folder` of `root` by a symlink to `target` (relative to its parent) and
/// commits it: a pull request's way to make one base path stand for another.
fn link_folder(root: &Path, folder: &str, target: &str) {
    git(root, &["rm", "-rq", folder]);
    std::os::unix::fs::symlink(target, root.join(folder)).unwrap();
    git(root, &["add", folder]);
    git(root, &["commit", "-qm", "a folder replaced by a link"]);
}

#[test]
fn a_folder_replaced_by_a_link_does_not_lend_another_datasets_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (_, config) = two_datasets_main(root);
    git(root, &["checkout", "-q", "main"]);
    // Each dataset's reviewed overrides in a folder of its own (`a` excludes its last item).
    std::fs::create_dir_all(root.join("reviews/a")).unwrap();
    let last = serde_json::json!({"index": 156, "exclude": true, "reason": "reviewed"});
    std::fs::write(root.join("reviews/a/overrides.jsonl"), format!("{last}\n")).unwrap();
    std::fs::create_dir_all(root.join("reviews/b")).unwrap();
    git(
        root,
        &["mv", "b/overrides.jsonl", "reviews/b/overrides.jsonl"],
    );
    let reviewed = config
        .replace("b/overrides.jsonl", "reviews/b/overrides.jsonl")
        .replace(
            "    predictions: [{ name: C3, path: a/predictions/C3.txt }]\n",
            "    predictions: [{ name: C3, path: a/predictions/C3.txt }]\n    audit: { overrides: reviews/a/overrides.jsonl }\n",
        );
    std::fs::write(root.join("sqlgate.yml"), reviewed).unwrap();
    repo::commit_all(root, "each dataset's reviews in its own folder");
    let base = repo::commit_baseline(root, "baseline");
    git(root, &["checkout", "-qb", "hostile"]);
    // `a` regresses on exactly the items `b`'s reviews exclude, and `reviews/a` becomes `b`.
    break_dataset(root, "a", 30);
    git(root, &["commit", "-qam", "a worse model"]);
    link_folder(root, "reviews/a", "b");
    let (code, out) = judge(root, &base);
    assert_eq!(code, Some(1), "{out}");
    common::assert_contains(&out, &["dataset `a`: C3: ex on all dropped"]);
}

/// The example gated with its baseline under `bl/main/` and an anchor pinned under
/// `bl/release/` from a model 30 items worse; returns the base commit and the config text.
fn anchored_main(root: &Path) -> (String, String) {
    edit_config(root, |text| {
        text.replace(
            "baseline: { path: baseline.json }",
            "baseline: { path: bl/main/baseline.json, anchor: bl/release/baseline.json }",
        )
    });
    let config = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
    let good = std::fs::read_to_string(root.join("predictions/C3.txt")).unwrap();
    repo::init_main(root, "example");
    break_predictions(root, "C3", 30);
    repo::update_baseline(root);
    std::fs::create_dir_all(root.join("bl/release")).unwrap();
    std::fs::rename(
        root.join("bl/main/baseline.json"),
        root.join("bl/release/baseline.json"),
    )
    .unwrap();
    std::fs::write(root.join("predictions/C3.txt"), good).unwrap();
    repo::commit_all(root, "the anchor, pinned at a release");
    (repo::commit_baseline(root, "baseline"), config)
}

#[test]
fn a_baseline_folder_replaced_by_a_link_to_the_anchors_is_not_compared_with() {
    let dir = repo::example(false);
    let root = dir.path();
    let (base, _) = anchored_main(root);
    git(root, &["checkout", "-qb", "hostile"]);
    break_predictions(root, "C3", 30);
    git(root, &["commit", "-qam", "back to the release's model"]);
    link_folder(root, "bl/main", "release");
    let (code, out) = judge(root, &base);
    assert_eq!(code, Some(1), "{out}");
    common::assert_contains(&out, &["ex 94.9 -> 77.7"]);
}

#[test]
fn a_repair_of_a_config_that_is_not_yaml_compares_with_the_newest_baseline() {
    let dir = repo::example(false);
    let root = dir.path();
    let (_, good) = anchored_main(root);
    std::fs::write(root.join("sqlgate.yml"), format!("{good}\n: [ not yaml\n")).unwrap();
    let base = repo::commit_base(root, "a direct push that breaks the YAML", "repair");
    break_predictions(root, "C3", 30);
    let anchored = good.replace(
        "path: bl/main/baseline.json, anchor: bl/release/baseline.json",
        "path: bl/release/baseline.json",
    );
    std::fs::write(root.join("sqlgate.yml"), anchored).unwrap();
    let (code, out) = judge(root, &base);
    assert_eq!(code, Some(2), "{out}");
    common::assert_contains(
        &out,
        &["the newest baseline the base holds is bl/main/baseline.json"],
    );
    std::fs::write(root.join("sqlgate.yml"), &good).unwrap();
    let (code, out) = judge(root, &base);
    assert_eq!(code, Some(1), "{out}");
}

#[test]
fn a_repair_cannot_swap_which_prediction_file_is_which_datasets() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (base, config) = broken_two_datasets_main(root);
    // `a` regresses on the items `b`'s reviews exclude; the repair reads `a`'s file as `b`'s.
    break_dataset(root, "a", 30);
    let swapped = config
        .replace("path: a/predictions/C3.txt", "path: SWAP")
        .replace("path: b/predictions/C3.txt", "path: a/predictions/C3.txt")
        .replace("path: SWAP", "path: b/predictions/C3.txt");
    std::fs::write(root.join("sqlgate.yml"), swapped).unwrap();
    let (code, out) = judge(root, &base);
    assert_eq!(code, Some(1), "{out}");
    common::assert_contains(
        &out,
        &[
            "dataset `a`: C3: ex on all dropped",
            "read from the prediction files as the base's baseline recorded",
        ],
    );
}

/// `main` with the example's data in `data/`, a directory test suite in `suites/ts/` (one more
/// `concert_singer` database holding a seventh singer) and the config in `eval/`, naming both
/// through `..`; returns the base commit.
fn dotted_main(root: &Path) -> String {
    let source = repo::example_folder();
    common::copy_tree(&source.join("database"), &root.join("data/database"));
    for file in ["dev_gold.sql", "tables.json"] {
        std::fs::copy(source.join(file), root.join("data").join(file)).unwrap();
    }
    common::copy_tree(&source.join("predictions"), &root.join("eval/predictions"));
    for db in ["concert_singer", "pets_1", "poker_player", "singer"] {
        let folder = root.join("suites/ts").join(db);
        std::fs::create_dir_all(&folder).unwrap();
        let original = root.join(format!("data/database/{db}/{db}.sqlite"));
        std::fs::copy(&original, folder.join(format!("{db}.sqlite"))).unwrap();
    }
    let more = root.join("suites/ts/concert_singer/concert_singer_1.sqlite");
    std::fs::copy(
        root.join("data/database/concert_singer/concert_singer.sqlite"),
        &more,
    )
    .unwrap();
    let conn = rusqlite::Connection::open(&more).unwrap();
    conn.execute(
        "INSERT INTO singer VALUES (99, 'Zed', 'France', 's', '2000', 30, 'T')",
        [],
    )
    .unwrap();
    drop(conn);
    std::fs::write(
        root.join("eval/sqlgate.yml"),
        "dataset: { gold: ../data/dev_gold.sql, tables: ../data/tables.json, databases: ../data/database, difficulty: none }\n\
         suite: { kind: directory, path: ../suites/ts }\n\
         predictions: [{ name: C3, path: predictions/C3.txt }]\n\
         metrics: [ex, ts]\nbaseline: { path: baseline.json }\n\
         gate: { metric: ts, max_drop_points: 0.0 }\nreport: { output: sqlgate-report.md }\n",
    )
    .unwrap();
    repo::init_main(root, "example");
    let made = sqlgate_in(
        root,
        &["baseline", "update", "--config", "eval/sqlgate.yml"],
        &[],
    );
    common::assert_exit(&made, 0);
    repo::commit_all(root, "baseline");
    repo::head(root)
}

#[test]
fn a_dotted_path_through_a_config_folder_replaced_by_a_link_reads_the_base_suite() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let base = dotted_main(root);
    git(root, &["checkout", "-qb", "hostile"]);
    // Two singer counts hard-coded: right on the original database, wrong on the suite's
    // seventh singer. The config's folder moves under `fake/`, beside a copy of the data and a
    // suite of the originals only, and `eval` becomes a link to it.
    let predictions = root.join("eval/predictions/C3.txt");
    let text = std::fs::read_to_string(&predictions).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[0] = "SELECT 6;";
    lines[1] = "SELECT 6;";
    std::fs::write(&predictions, lines.join("\n") + "\n").unwrap();
    std::fs::create_dir_all(root.join("fake")).unwrap();
    git(root, &["mv", "eval", "fake/eval"]);
    std::os::unix::fs::symlink("fake/eval", root.join("eval")).unwrap();
    common::copy_tree(&root.join("data"), &root.join("fake/data"));
    for db in ["concert_singer", "pets_1", "poker_player", "singer"] {
        let folder = root.join("fake/suites/ts").join(db);
        std::fs::create_dir_all(&folder).unwrap();
        let original = root.join(format!("data/database/{db}/{db}.sqlite"));
        std::fs::copy(&original, folder.join(format!("{db}.sqlite"))).unwrap();
    }
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "the config's folder elsewhere"]);
    let run = sqlgate_in(
        root,
        &[
            "eval",
            "--config",
            "eval/sqlgate.yml",
            "--comment",
            "never",
            "--trusted-base",
            &base,
        ],
        &[],
    );
    let out = common::text(&run);
    assert_eq!(run.status.code(), Some(1), "{out}");
    common::assert_contains(&out, &["ts 94.9 -> 93.6"]);
}

/// [`two_datasets_main`] whose baseline was written by an older sqlgate (no `inputs`) and whose
/// config a direct push broke with `break_config`, with the branch `repair` checked out; returns
/// that commit and the working config text.
fn older_broken_two_datasets_main(
    root: &Path,
    break_config: impl Fn(&str) -> String,
) -> (String, String) {
    let (_, config) = two_datasets_main(root);
    git(root, &["checkout", "-q", "main"]);
    let path = root.join("baseline.json");
    let mut baseline: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for section in baseline["datasets"].as_object_mut().unwrap().values_mut() {
        section.as_object_mut().unwrap().remove("inputs");
    }
    std::fs::write(&path, serde_json::to_string_pretty(&baseline).unwrap()).unwrap();
    edit_config(root, break_config);
    let base = repo::commit_base(root, "an older baseline, then a broken config", "repair");
    (base, config)
}

#[test]
fn a_repair_over_an_older_baseline_is_held_to_what_the_base_config_names() {
    let swap = |config: &str| {
        config
            .replace("path: a/predictions/C3.txt", "path: SWAP")
            .replace("path: b/predictions/C3.txt", "path: a/predictions/C3.txt")
            .replace("path: SWAP", "path: b/predictions/C3.txt")
    };
    // The base's text still names each dataset's files: they govern.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let misspelt = |text: &str| text.replace("max_drop_points", "max_drop_point");
    let (base, config) = older_broken_two_datasets_main(root, misspelt);
    break_dataset(root, "a", 30);
    std::fs::write(root.join("sqlgate.yml"), swap(&config)).unwrap();
    let (code, out) = judge(root, &base);
    assert_eq!(code, Some(1), "{out}");
    common::assert_contains(
        &out,
        &[
            "dataset `a`: C3: ex on all dropped",
            "read from the prediction files as the base's config names",
        ],
    );
    // Nothing names them: the repair is refused.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let not_yaml = |text: &str| format!("{text}\n: [ not yaml\n");
    let (base, config) = older_broken_two_datasets_main(root, not_yaml);
    std::fs::write(root.join("sqlgate.yml"), swap(&config)).unwrap();
    let (code, out) = judge(root, &base);
    assert_eq!(code, Some(2), "{out}");
    common::assert_contains(
        &out,
        &["does not record which overrides, suite and prediction files dataset `a`"],
    );
}
