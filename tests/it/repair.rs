//! The repair path and a base without a config (issue 44, class 2; red team re-run #4): what
//! the base holds governs what is compared, whatever the pull request's config names. Each
//! test is a regressing pull request that exits non-zero; its control (the same pull request
//! without the lever) shows the regression is real.

use crate::common;

use common::git;

/// The example's config gated on `ts` over a distilled suite (`distill`: the suite's knobs),
/// with no significance test (one regressed item fails the gate).
pub(crate) fn ts_config(good: &str, suite: &str) -> String {
    good.replace("metrics: [ex, esm]", "metrics: [ex, ts]")
        .replace("reference: ex", &format!("reference: ex\nsuite: {suite}"))
        .replace("  metric: ex\n", "  metric: ts\n")
        .replace("  per_difficulty: { extra: 2.0 }\n", "")
        .replace("  significance: { test: mcnemar-exact, alpha: 0.05 }\n", "")
}

const BASE_SUITE: &str =
    "{ kind: distilled, path: .sqlgate/suite, distill: { max_random_dbs: 20 } }";

/// `main` gated on `ts` over [`BASE_SUITE`], then a direct push that breaks the config (a
/// misspelt key); C3's first prediction replaced by the constant the original database gives
/// (`SELECT 6` for `SELECT count(*) FROM singer`): right there, wrong on a random database.
/// Returns the base commit and the good config text.
fn ts_repair_repository(root: &std::path::Path) -> (String, String) {
    use common::repo;
    let example = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
    let good = ts_config(&example, BASE_SUITE);
    std::fs::write(root.join("sqlgate.yml"), &good).unwrap();
    repo::gated_main(root);
    std::fs::write(
        root.join("sqlgate.yml"),
        good.replace("max_drop_points: 0.0", "max_drop_point: 0.0"),
    )
    .unwrap();
    let base = repo::commit_base(root, "a direct push that breaks the config", "pr");
    let predictions = root.join("predictions/C3.txt");
    let text = std::fs::read_to_string(&predictions).unwrap();
    let (_, rest) = text.split_once('\n').unwrap();
    std::fs::write(&predictions, format!("SELECT 6\n{rest}")).unwrap();
    (base, good)
}

/// A fresh copy of the example (no baseline), the pull request `build` makes in it (returning the
/// base commit), judged: the exit code and the output.
pub(crate) fn judged_example(
    build: impl FnOnce(&std::path::Path) -> String,
) -> (Option<i32>, String) {
    let dir = common::repo::example(false);
    let base = build(dir.path());
    judge_pr(dir.path(), &base)
}

/// The pull request `build(root, lever)` makes, with its lever (`true`) and without it (the
/// control): the lever must not let the regression pass (exit 2, or non-zero where `exit_2` is
/// false), and the control shows it (exit 1). Returns the lever's output for further checks.
pub(crate) fn lever_and_control(
    exit_2: bool,
    build: impl Fn(&std::path::Path, bool) -> String,
) -> String {
    let (control, out) = judged_example(|root| build(root, false));
    assert_eq!(control, Some(1), "the control: {out}");
    let (code, out) = judged_example(|root| build(root, true));
    match exit_2 {
        true => assert_eq!(code, Some(2), "the regressing pull request passed: {out}"),
        false => assert!(
            !matches!(code, Some(0)),
            "the regressing pull request passed: {out}"
        ),
    }
    out
}

pub(crate) fn judge_pr(root: &std::path::Path, base: &str) -> (Option<i32>, String) {
    let run = common::repo::judged(root, base, &[]);
    let out = format!(
        "exit {:?}\n{}\n{}",
        run.status.code(),
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    (run.status.code(), out)
}

/// A repair of a broken base config may not weaken a distilled suite: distilled afresh with one
/// random database whose every table has exactly 6 rows, `SELECT 6` for `SELECT count(*) FROM
/// singer` would be right on every database of the suite. The baseline records the suite's
/// knobs (`suite.distill`), so a run under others is not comparable (exit 2, naming them).
#[test]
fn a_repair_cannot_weaken_the_distilled_suite() {
    let weak = "{ kind: distilled, path: .sqlgate/weak, \
                distill: { max_random_dbs: 1, rows: [6, 6] } }";
    let (code, out) = repaired_with(|good| good.replace(BASE_SUITE, weak));
    assert_eq!(code, Some(2), "the regressing repair passed: {out}");
    common::assert_contains(&out, &["`suite.distill`: {", "(baseline) vs {"]);
}

/// [`ts_repair_repository`] judged with the pull request's config `repair` (given the good one).
fn repaired_with(repair: impl Fn(&str) -> String) -> (Option<i32>, String) {
    judged_example(|root| {
        let (base, good) = ts_repair_repository(root);
        std::fs::write(root.join("sqlgate.yml"), repair(&good)).unwrap();
        base
    })
}

/// The control: the same repair with the base's suite exits 1.
#[test]
fn control_repair_with_the_base_suite_is_a_regression() {
    let (code, out) = repaired_with(str::to_string);
    assert_eq!(code, Some(1), "{out}");
}

/// The gated example whose config a direct push then deleted, and a pull request restoring it
/// with `config` (its text given the example's) and C3 regressing on 30 items: the exit code and
/// the output.
pub(crate) fn restored_config(config: impl Fn(&str) -> String) -> (Option<i32>, String) {
    use common::repo;
    let dir = repo::example(false);
    let root = dir.path();
    repo::gated_main(root);
    let good = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
    git(root, &["rm", "-q", "sqlgate.yml"]);
    let base = repo::commit_base(root, "a direct push that deletes the config", "pr");
    std::fs::write(root.join("sqlgate.yml"), config(&good)).unwrap();
    common::break_predictions(root, "C3", 30);
    judge_pr(root, &base)
}

/// A base whose config was deleted (a direct push) but which still holds its baseline: the pull
/// request's config may not name another baseline path and be "introducing the gate" (exit 2,
/// naming the base's baseline).
#[test]
fn a_base_without_a_config_still_holds_the_pull_request_to_its_baseline() {
    let (code, out) =
        restored_config(|good| good.replace("path: baseline.json", "path: elsewhere.json"));
    assert_eq!(code, Some(2), "the regressing pull request passed: {out}");
    common::assert_contains(&out, &["but the base holds baseline.json"]);
}

/// The control: the same pull request naming the base's baseline exits 1.
#[test]
fn control_a_base_without_config_compares_with_the_named_baseline() {
    let (code, out) = restored_config(str::to_string);
    assert_eq!(code, Some(1), "{out}");
}

/// The repair of a base config that is not YAML may not move the baseline away, and a
/// `.gitattributes` the pull request commits (`*.json binary`) cannot hide the base's baselines
/// from the search for them: git reads the base with no working-tree attributes, and searches
/// every file as text.
#[test]
fn gitattributes_cannot_hide_the_bases_baselines_from_a_repair() {
    use common::repo;
    let dir = repo::example(false);
    let root = dir.path();
    repo::gated_main(root);
    let good = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
    std::fs::write(root.join("sqlgate.yml"), format!("{good}\n: [ not yaml\n")).unwrap();
    let base = repo::commit_base(root, "a direct push that breaks the YAML", "repair");
    common::break_predictions(root, "C3", 30);
    std::fs::write(
        root.join("sqlgate.yml"),
        good.replace("path: baseline.json", "path: elsewhere.json"),
    )
    .unwrap();
    std::fs::write(root.join(".gitattributes"), "*.json binary\n").unwrap();
    repo::commit_all(root, "a repair, and json is binary");
    let (code, out) = judge_pr(root, &base);
    assert_eq!(code, Some(2), "the regressing repair passed: {out}");
    common::assert_contains(&out, &["but the base holds baseline.json"]);
}
