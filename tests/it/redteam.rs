//! Red team round (issue 44 re-test): regressing pull requests built as in
//! tests/it/server_levers.rs. Each test asserts what the gate *should* do (not pass); a test that
//! fails with "the regressing pull request was not stopped" is an attack that won (exit 0).
//! The server-state wins of this round (class 3) are fixed and their tests moved to
//! tests/it/server_state.rs and tests/it/server_levers.rs; what remains here is the trust and
//! failure-path attacks, not yet fixed.

use crate::common;

use common::git;
use common::servers;
use common::trust_flow::{repository_with, text, Event, Run, GOLD};

/// A pull request whose `sqlgate.yml` is a committed symlink to `/dev/zero`: the trust stage
/// refuses it (not a regular file, exit 2), then the failure path (`commands::failure`,
/// `report_path`) reads the same path with `std::fs::read_to_string` to find `report.output`,
/// unbounded, when the Action's `report` input is empty (docs/ACTION.md's workflow gives
/// none). Run here under a 2 GiB address-space cap and a 60 s kill so the machine survives:
/// the gate should exit 2 within seconds.
#[test]
fn failure_report_reads_a_config_symlinked_to_dev_zero() {
    let server = servers::postgres();
    let dir = repository_with(server.kind, &GOLD);
    let root = dir.path();
    let base = git(root, &["rev-parse", "HEAD"]);
    git(root, &["checkout", "-qb", "hostile"]);
    std::fs::remove_file(root.join("sqlgate.yml")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", root.join("sqlgate.yml")).unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "config is /dev/zero"]);
    let run = Run {
        server,
        database: "rt_dev_zero",
        event: Event::PullRequest,
        base,
    };
    let mut capped = std::process::Command::new("prlimit");
    capped.args([
        "--as=2147483648",
        "--",
        "/usr/bin/time",
        "-f",
        "max_rss_kib=%M",
    ]);
    capped.args(["timeout", "-s", "KILL", "60"]);
    capped.arg(env!("CARGO_BIN_EXE_sqlgate")).arg("action");
    let mut command = run.command(root, capped);
    command
        .env("INPUT_CONFIG", "sqlgate.yml")
        .env("GITHUB_STEP_SUMMARY", root.join(".git/summary.md"))
        .env("GITHUB_OUTPUT", root.join(".git/outputs"));
    let started = std::time::Instant::now();
    let judged = command.output().unwrap();
    let all = text(&judged);
    eprintln!("{all}");
    let rss: u64 = (all.split("max_rss_kib=").nth(1))
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .unwrap();
    assert!(
        rss < 256 * 1024,
        "the failure path held {rss} KiB: it read /dev/zero"
    );
    assert_eq!(
        judged.status.code(),
        Some(2),
        "after {:?} (signal {:?}): {all}",
        started.elapsed(),
        std::os::unix::process::ExitStatusExt::signal(&judged.status)
    );
}

/// The example's config gated on `ts` over a distilled suite (`distill`: the suite's knobs),
/// with no significance test (one regressed item fails the gate).
fn ts_config(good: &str, suite: &str) -> String {
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

fn judge_pr(root: &std::path::Path, base: &str) -> (Option<i32>, String) {
    let run = common::repo::judged(root, base, &[]);
    let out = format!(
        "exit {:?}\n{}\n{}",
        run.status.code(),
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    (run.status.code(), out)
}

/// A repair of a broken base config is held to the base baseline's gate, datasets, overrides,
/// directory suite and prediction files, but a *distilled* suite's folder and knobs
/// (`suite.path`, `suite.distill`) are the pull request's: a new folder (no manifest on the
/// base) is distilled afresh with one random database whose every table has exactly 6 rows,
/// so `SELECT 6` for `SELECT count(*) FROM singer` is right on every database of the suite and
/// the regression is not seen.
#[test]
fn repair_weakens_the_distilled_suite() {
    let dir = common::repo::example(false);
    let root = dir.path();
    let (base, good) = ts_repair_repository(root);
    let weak = "{ kind: distilled, path: .sqlgate/weak, \
                distill: { max_random_dbs: 1, rows: [6, 6] } }";
    let example_good = good.replace(BASE_SUITE, weak);
    std::fs::write(root.join("sqlgate.yml"), example_good).unwrap();
    let (code, out) = judge_pr(root, &base);
    eprintln!("{out}");
    assert_ne!(code, Some(0), "the regressing repair passed: {out}");
}

/// The control: the same repair with the base's suite exits 1.
#[test]
fn control_repair_with_the_base_suite_is_a_regression() {
    let dir = common::repo::example(false);
    let root = dir.path();
    let (base, good) = ts_repair_repository(root);
    std::fs::write(root.join("sqlgate.yml"), good).unwrap();
    let (code, out) = judge_pr(root, &base);
    assert_eq!(code, Some(1), "{out}");
}

/// A base whose config was deleted (a direct push) but which still holds its baseline: the pull
/// request's config runs, and `refuse_hidden_baseline` runs only when the base *has* a config
/// that does not load (`broken.is_some()` in `trust::lifecycle::proposed_over_base`). A config
/// naming `baseline.path: elsewhere.json` is "introducing the gate": nothing is compared.
#[test]
fn a_base_without_config_but_with_a_baseline_compares_nothing() {
    use common::repo;
    let dir = repo::example(false);
    let root = dir.path();
    repo::gated_main(root);
    let good = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
    git(root, &["rm", "-q", "sqlgate.yml"]);
    let base = repo::commit_base(root, "a direct push that deletes the config", "pr");
    std::fs::write(
        root.join("sqlgate.yml"),
        good.replace("path: baseline.json", "path: elsewhere.json"),
    )
    .unwrap();
    common::break_predictions(root, "C3", 30);
    let (code, out) = judge_pr(root, &base);
    assert_ne!(code, Some(0), "the regressing pull request passed: {out}");
}

/// The control: the same pull request naming the base's baseline exits 1.
#[test]
fn control_a_base_without_config_compares_with_the_named_baseline() {
    use common::repo;
    let dir = repo::example(false);
    let root = dir.path();
    repo::gated_main(root);
    let good = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
    git(root, &["rm", "-q", "sqlgate.yml"]);
    let base = repo::commit_base(root, "a direct push that deletes the config", "pr");
    std::fs::write(root.join("sqlgate.yml"), good).unwrap();
    common::break_predictions(root, "C3", 30);
    let (code, out) = judge_pr(root, &base);
    assert_eq!(code, Some(1), "{out}");
}

/// The repair of a base config that is not YAML may not move the baseline away: the base's
/// baselines are found with `git grep -I` at the base commit. `git grep` reads attributes from
/// the working tree, so a pull request that commits `.gitattributes` with `*.json binary` makes
/// every baseline a binary file `-I` skips: the base "holds no baseline", the repair names
/// `elsewhere.json` and introduces the gate (nothing compared).
#[test]
fn a_repair_hides_the_base_baseline_from_git_grep_with_gitattributes() {
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
    assert_ne!(code, Some(0), "the regressing repair passed: {out}");
}

/// A pull request whose `sqlgate.yml` is a committed symlink to a file outside the workspace
/// (here a one-line secret, as `~/.vault-token`, a mounted `/run/secrets/...` file or any file
/// the runner's user can read): the base config loads, the pull request changed the config, so
/// `check_proposed_config` loads it through the link (`read_bounded` follows it; no workspace
/// rule for the config itself), and the YAML error quotes the file's text ("invalid type:
/// string ..."), which goes to stderr, the `::error` line, the step summary and the PR comment.
#[test]
fn a_config_symlinked_outside_the_workspace_is_quoted_in_the_error() {
    let server = servers::postgres();
    let outside = tempfile::tempdir().unwrap();
    let secret = "s3cr3t-runner-password-4417";
    std::fs::write(outside.path().join("vault-token"), format!("{secret}\n")).unwrap();
    let dir = repository_with(server.kind, &GOLD);
    let root = dir.path();
    let base = git(root, &["rev-parse", "HEAD"]);
    git(root, &["checkout", "-qb", "hostile"]);
    std::fs::remove_file(root.join("sqlgate.yml")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("vault-token"), root.join("sqlgate.yml"))
        .unwrap();
    git(root, &["add", "-A"]);
    git(
        root,
        &["commit", "-qm", "config is a link out of the workspace"],
    );
    let run = Run {
        server,
        database: "rt_config_link",
        event: Event::PullRequest,
        base,
    };
    let mut command = run.command(
        root,
        std::process::Command::new(env!("CARGO_BIN_EXE_sqlgate")),
    );
    command
        .arg("action")
        .env("INPUT_CONFIG", "sqlgate.yml")
        .env("GITHUB_STEP_SUMMARY", root.join(".git/summary.md"))
        .env("GITHUB_OUTPUT", root.join(".git/outputs"));
    let judged = command.output().unwrap();
    let all = text(&judged);
    let summary = std::fs::read_to_string(root.join(".git/summary.md")).unwrap_or_default();
    assert!(
        !all.contains(secret) && !summary.contains(secret),
        "the file behind the link was quoted: {all}\n--- step summary\n{summary}"
    );
}
