//! A newcomer adopts sqlgate in a fresh model repository by following README.md's five-minute
//! page in order (its config block, its `git` and `sqlgate` commands, its workflow file), then
//! opens pull requests that change nothing, regress, improve, delete the predictions and edit
//! the baseline. Each runs `sqlgate action` as the Action's gate step does (a `pull_request`
//! event, the base commit's trusted inputs) against a local fake of the GitHub API, and each
//! pull request shows the right sticky comment; the run that cannot evaluate replaces the
//! earlier ✅ with the reason.

use crate::common;
use common::repo;

use common::comment_html::{comment_html, keep_for_screenshot, tags, COMMENT_ELEMENTS};
use common::github::{FakeGitHub, TOKEN};
use common::{git, shell, sqlgate_command};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The five-minute page of README.md.
fn five_minute_page() -> String {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let start = readme
        .find("## Gate your model repository in five minutes")
        .unwrap();
    let end = start + readme[start..].find("\n## Commands").unwrap();
    readme[start..end].to_string()
}

/// A fresh model repository (`git init`, nothing committed) holding the bundled example's
/// benchmark and C3's predictions where the README's config names them.
fn fresh_repository(dir: &Path) {
    let example = root().join("examples/spider-mini");
    git(dir, &["init", "--quiet", "--initial-branch=main"]);
    for folder in ["data", "predictions"] {
        std::fs::create_dir_all(dir.join(folder)).unwrap();
    }
    for (from, to) in [
        ("dev_gold.sql", "data/dev_gold.sql"),
        ("tables.json", "data/tables.json"),
        ("predictions/C3.txt", "predictions/dev.sql"),
    ] {
        std::fs::copy(example.join(from), dir.join(to)).unwrap();
    }
    for entry in std::fs::read_dir(example.join("database")).unwrap() {
        let db_id = entry.unwrap().file_name();
        let target = dir.join("data/database").join(&db_id);
        std::fs::create_dir_all(&target).unwrap();
        let file = format!("{}.sqlite", db_id.to_string_lossy());
        std::fs::copy(
            example.join("database").join(&db_id).join(&file),
            target.join(&file),
        )
        .unwrap();
    }
}

/// Follows the five-minute page in order: the config block becomes `sqlgate.yml`, the workflow
/// block `.github/workflows/sqlgate-pr.yml` (committed with the next command), and every shell
/// line runs (`cargo install` aside: the test build of sqlgate stands for it).
fn follow_the_readme(dir: &Path) {
    let mut ran = Vec::new();
    for (language, body) in common::markdown::fenced_blocks(&five_minute_page()) {
        match language.as_str() {
            "yaml" if body.starts_with("dataset:") => {
                std::fs::write(dir.join("sqlgate.yml"), &body).unwrap();
            }
            "yaml" => {
                std::fs::create_dir_all(dir.join(".github/workflows")).unwrap();
                std::fs::write(dir.join(".github/workflows/sqlgate-pr.yml"), &body).unwrap();
                git(dir, &["add", ".github"]);
                git(dir, &["commit", "--quiet", "-m", "sqlgate workflow"]);
            }
            "sh" => {
                for line in body.lines().filter(|l| !l.starts_with("cargo install")) {
                    let output = readme_command(line).current_dir(dir).output().unwrap();
                    assert!(
                        output.status.success(),
                        "README line `{line}`:\n{}{}",
                        String::from_utf8_lossy(&output.stdout),
                        String::from_utf8_lossy(&output.stderr)
                    );
                    ran.push(line.to_string());
                }
            }
            other => panic!("unexpected block {other} in the five-minute page"),
        }
    }
    assert!(
        ran.iter().any(|l| l.starts_with("sqlgate baseline update"))
            && ran.iter().any(|l| l.starts_with("git commit")),
        "{ran:?}"
    );
}

/// A README line as the newcomer's shell runs it: `sqlgate` is the test build, without
/// `GITHUB_SHA` (the commit comes from the repository).
fn readme_command(line: &str) -> std::process::Command {
    match line.strip_prefix("sqlgate ") {
        Some(arguments) => {
            let arguments: Vec<&str> = arguments.split_whitespace().collect();
            let mut command = sqlgate_command(&arguments);
            command.env_remove("GITHUB_SHA");
            command
        }
        None => shell(line),
    }
}

/// What one run of the gate step left: exit code, stdout, and the step outputs it wrote.
struct Run {
    code: Option<i32>,
    stdout: String,
    outputs: String,
    summary: String,
}

/// The Action's gate step on pull request `number` whose head is checked out in `repo` and
/// whose base is `main`: `sqlgate action` with the variables GitHub and action.yml set.
fn gate_step(repo: &Path, api: &FakeGitHub, number: u64) -> Run {
    let scratch = tempfile::tempdir().unwrap();
    let event = scratch.path().join("event.json");
    let base = git(repo, &["rev-parse", "main"]);
    let payload = json!({"pull_request": {"number": number, "base": {"sha": base}}});
    std::fs::write(&event, payload.to_string()).unwrap();
    let (outputs, summary) = (
        scratch.path().join("outputs"),
        scratch.path().join("summary"),
    );
    let output = sqlgate_command(&["action"])
        .current_dir(repo)
        .env_remove("SQLGATE_WORKSPACE")
        .env("GITHUB_SHA", repo::head(repo))
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_EVENT_NAME", "pull_request")
        .env("GITHUB_EVENT_PATH", &event)
        .env("GITHUB_WORKSPACE", repo)
        .env("GITHUB_REPOSITORY", "acme/model")
        .env("GITHUB_SERVER_URL", "https://github.com")
        .env("GITHUB_RUN_ID", "4242")
        .env("GITHUB_API_URL", &api.url)
        .env("GITHUB_OUTPUT", &outputs)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("SQLGATE_GITHUB_TOKEN", TOKEN)
        .env("INPUT_CONFIG", "sqlgate.yml")
        .env("INPUT_COMMENT", "true")
        .env("INPUT_FAIL-ON-REGRESSION", "true")
        .output()
        .unwrap();
    Run {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        outputs: std::fs::read_to_string(&outputs).unwrap_or_default(),
        summary: std::fs::read_to_string(&summary).unwrap_or_default(),
    }
}

/// Commits `change` on branch `branch` (created from `main` when new) as one push; the report
/// the gate writes stays untracked.
fn push(repo: &Path, branch: &str, change: impl FnOnce(&Path)) {
    let exists = !git(repo, &["branch", "--list", branch]).is_empty();
    if exists {
        git(repo, &["checkout", "--quiet", branch]);
    } else {
        git(repo, &["checkout", "--quiet", "-b", branch, "main"]);
    }
    change(repo);
    git(repo, &["add", "-A", "--", ".", ":!sqlgate-report.md"]);
    git(repo, &["commit", "--quiet", "--allow-empty", "-m", branch]);
}

/// The ex verdict per item of the newcomer's system in the baseline at `path`.
fn baseline_right(path: &Path) -> Vec<bool> {
    let baseline: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    baseline["systems"]["my-model"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["metrics"]["ex"] == json!(1.0))
        .collect()
}

/// Rewrites the prediction lines at `indices` with `replace(index)`.
fn rewrite_predictions(repo: &Path, indices: &[usize], replace: impl Fn(usize) -> String) {
    let path = repo.join("predictions/dev.sql");
    let mut lines: Vec<String> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    for &index in indices {
        lines[index] = replace(index);
    }
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
}

fn gold_sql(index: usize) -> String {
    let gold = std::fs::read_to_string(root().join("examples/spider-mini/dev_gold.sql")).unwrap();
    let line = gold.lines().nth(index).unwrap();
    line.split('\t').next().unwrap().to_string()
}

/// The one sticky comment of pull request `number`.
fn sticky(api: &FakeGitHub, number: u64) -> String {
    let comments = api.comments(number);
    assert_eq!(comments.len(), 1, "one sticky comment on #{number}");
    comments[0].clone()
}

fn headline(comment: &str) -> &str {
    comment.lines().nth(1).unwrap_or_default()
}

/// Checks `comment` as GitHub renders it (comrak, GitHub's extensions): only the elements
/// sqlgate's markup makes (nothing dropped as unsafe), its first heading starting with `heading`
/// and each of `elements` present; keeps the page as `name` for `.ci/screenshot-comments`.
fn check_rendering(name: &str, comment: &str, heading: &str, elements: &[&str]) {
    let html = comment_html(comment);
    let rendered = tags(&html);
    let foreign: Vec<&String> = rendered
        .iter()
        .filter(|tag| !COMMENT_ELEMENTS.contains(&tag.as_str()))
        .collect();
    assert!(foreign.is_empty(), "{foreign:?} in\n{html}");
    assert!(!html.contains("raw HTML omitted"), "{html}");
    common::assert_contains(&html, &[&format!("<h2>{heading}")]);
    for element in elements {
        assert!(rendered.contains(*element), "no <{element}> in\n{html}");
    }
    keep_for_screenshot(name, comment);
}

#[test]
fn a_newcomer_adopts_sqlgate_and_every_pull_request_gets_the_right_comment() {
    let work = tempfile::tempdir().unwrap();
    let repo = work.path();
    fresh_repository(repo);
    follow_the_readme(repo);
    assert_eq!(
        git(repo, &["status", "--porcelain", "--untracked-files=no"]),
        "",
        "the README's steps leave nothing tracked uncommitted"
    );
    let api = FakeGitHub::start();
    let right = baseline_right(&repo.join(".sqlgate/baseline.json"));
    let right_items: Vec<usize> = (0..right.len()).filter(|&i| right[i]).collect();
    let wrong_items: Vec<usize> = (0..right.len()).filter(|&i| !right[i]).collect();
    assert_eq!((right_items.len(), wrong_items.len()), (149, 8));

    // 1. A pull request that changes no prediction.
    push(repo, "docs", |repo| {
        std::fs::write(repo.join("NOTES.md"), "notes\n").unwrap();
    });
    let run = gate_step(repo, &api, 1);
    assert_eq!(run.code, Some(0), "{}", run.stdout);
    assert!(
        headline(&sticky(&api, 1))
            .starts_with("## ✅ sqlgate passed: ex 94.9 -&gt; 94.9 (+0.0), 0 regressed / 0 fixed"),
        "{}",
        sticky(&api, 1)
    );
    assert!(run.outputs.contains("passed=true\n"), "{}", run.outputs);
    assert!(sticky(&api, 1).contains(
        " · [full report: artifact `sqlgate-report`](https://github.com/acme/model/actions/runs/4242)</sub>"
    ));

    // 2. A pull request that breaks five items the baseline had right (McNemar p = 0.062: not
    // significant, yet `max_drop_points: 0.0` reads as zero tolerance, and is).
    push(repo, "regress", |repo| {
        rewrite_predictions(repo, &right_items[..5], |_| "SELECT 'regressed'".into());
    });
    let run = gate_step(repo, &api, 2);
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    let comment = sticky(&api, 2);
    assert_eq!(
        headline(&comment),
        "## ❌ sqlgate failed: ex 94.9 -&gt; 91.7 (-3.2), 5 regressed / 0 fixed",
        "{comment}"
    );
    check_rendering(
        "comment-failing",
        &comment,
        "❌ sqlgate failed: ex 94.9 -&gt; 91.7 (-3.2), 5 regressed / 0 fixed",
        &["table", "details", "summary", "pre", "code", "a", "sub"],
    );
    assert!(run.outputs.contains("passed=false\n"), "{}", run.outputs);
    assert!(run.outputs.contains("delta=-3.2\n"), "{}", run.outputs);

    // 3. A pull request that fixes three items the baseline had wrong and breaks one it had
    // right: more fixed than regressed, so it passes (what a real improvement looks like).
    push(repo, "improve", |repo| {
        rewrite_predictions(repo, &wrong_items[..3], gold_sql);
        rewrite_predictions(repo, &right_items[..1], |_| "SELECT 'regressed'".into());
    });
    let run = gate_step(repo, &api, 3);
    assert_eq!(run.code, Some(0), "{}", run.stdout);
    assert!(
        headline(&sticky(&api, 3))
            .starts_with("## ✅ sqlgate passed: ex 94.9 -&gt; 96.2 (+1.3), 1 regressed / 3 fixed"),
        "{}",
        sticky(&api, 3)
    );
    assert!(run.outputs.contains("delta=+1.3\n"), "{}", run.outputs);
    check_rendering(
        "comment-passing",
        &sticky(&api, 3),
        "✅ sqlgate passed: ex 94.9 -&gt; 96.2 (+1.3), 1 regressed / 3 fixed",
        &["table", "a", "sub"],
    );

    // 4. A pull request that first passes, then deletes the predictions: the ✅ is replaced by
    // the reason, in the comment, the `::error` line, the step summary and the step outputs.
    push(repo, "cleanup", |_| {});
    assert_eq!(gate_step(repo, &api, 4).code, Some(0));
    assert!(headline(&sticky(&api, 4)).starts_with("## ✅ sqlgate passed"));
    push(repo, "cleanup", |repo| {
        std::fs::remove_file(repo.join("predictions/dev.sql")).unwrap();
    });
    let run = gate_step(repo, &api, 4);
    assert_eq!(run.code, Some(2), "{}", run.stdout);
    let comment = sticky(&api, 4);
    assert!(
        headline(&comment).starts_with("## ⚠️ sqlgate could not evaluate: ")
            && comment.contains("predictions/dev.sql"),
        "{comment}"
    );
    assert!(
        headline(&comment).chars().count() <= 100 + "## ".len(),
        "{comment}"
    );
    assert!(!comment.contains("✅"), "{comment}");
    check_rendering(
        "comment-could-not-evaluate",
        &comment,
        "⚠️ sqlgate could not evaluate: ",
        &["p"],
    );
    assert!(
        run.stdout.lines().any(
            |l| l.starts_with("::error title=sqlgate could not evaluate::")
                && l.contains("predictions/dev.sql")
        ),
        "{}",
        run.stdout
    );
    assert!(run.summary.contains("⚠️ sqlgate could not evaluate"));
    for line in ["exit-code=2", "passed=false"] {
        assert!(run.outputs.lines().any(|l| l == line), "{}", run.outputs);
    }
    assert!(
        run.outputs
            .lines()
            .any(|l| l.starts_with("reason=") && l.contains("predictions/dev.sql")),
        "{}",
        run.outputs
    );
    // The report file the workflow uploads is the reason too (it held the last pass before),
    // written where the config puts it although the Action's `report` input is empty.
    let report = std::fs::read_to_string(repo.join("sqlgate-report.md")).unwrap();
    assert!(
        report.contains("## ⚠️ sqlgate could not evaluate: ") && !report.contains("✅"),
        "{report}"
    );
    assert!(
        (run.outputs.lines()).any(|l| l.starts_with("report=") && l.ends_with("sqlgate-report.md")),
        "{}",
        run.outputs
    );

    // 5. A pull request that edits the baseline (to hide a regression): the gate uses the base
    // commit's baseline, fails, and says the edit was ignored.
    push(repo, "rebaseline", |repo| {
        rewrite_predictions(repo, &right_items[..8], |_| "SELECT 'regressed'".into());
        let path = repo.join(".sqlgate/baseline.json");
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("\"ex\": 1.0", "\"ex\": 0.0")).unwrap();
    });
    let run = gate_step(repo, &api, 5);
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    let comment = sticky(&api, 5);
    assert!(
        headline(&comment).starts_with("## ❌ sqlgate failed"),
        "{comment}"
    );
    assert!(
        comment.contains(
            "this pull request changes the baseline `./.sqlgate/baseline.json`; the gate used the \
             base commit's version"
        ),
        "{comment}"
    );
    squash_merged_baseline(repo, &api, &wrong_items);
}

/// A baseline made on a branch that is then squash-merged records a commit main never has: the
/// next pull request is told so, with the command that fixes it; run on main and committed, the
/// fix turns the same pull request's ⚠️ into a verdict.
fn squash_merged_baseline(repo: &Path, api: &FakeGitHub, wrong_items: &[usize]) {
    push(repo, "refresh", |repo| {
        rewrite_predictions(repo, wrong_items, gold_sql);
    });
    let update = |repo: &Path| {
        let made = readme_command("sqlgate baseline update --config sqlgate.yml")
            .current_dir(repo)
            .output()
            .unwrap();
        assert!(made.status.success());
    };
    update(repo);
    git(repo, &["add", ".sqlgate/baseline.json"]);
    git(repo, &["commit", "--quiet", "-m", "refresh the baseline"]);
    git(repo, &["checkout", "--quiet", "main"]);
    git(repo, &["merge", "--quiet", "--squash", "refresh"]);
    git(repo, &["commit", "--quiet", "-m", "refresh (squashed)"]);
    push(repo, "after-squash", |_| {});
    let run = gate_step(repo, api, 6);
    assert_eq!(run.code, Some(2), "{}", run.stdout);
    let comment = sticky(api, 6);
    assert!(
        comment.contains("squash- or rebase-merged")
            && comment.contains(
                "fix: on the base branch run `sqlgate baseline update --config sqlgate.yml`"
            ),
        "{comment}"
    );
    assert!(
        headline(&comment).chars().count() <= 100 + "## ".len(),
        "{comment}"
    );
    git(repo, &["checkout", "--quiet", "main"]);
    update(repo);
    git(repo, &["add", ".sqlgate/baseline.json"]);
    git(repo, &["commit", "--quiet", "-m", "baseline at main"]);
    git(repo, &["checkout", "--quiet", "after-squash"]);
    git(repo, &["merge", "--quiet", "--no-edit", "main"]);
    let run = gate_step(repo, api, 6);
    assert_eq!(run.code, Some(0), "{}", run.stdout);
    assert!(
        headline(&sticky(api, 6)).starts_with(
            "## ✅ sqlgate passed: ex 100.0 -&gt; 100.0 (+0.0), 0 regressed / 0 fixed"
        ),
        "{}",
        sticky(api, 6)
    );
}

#[test]
fn baseline_update_before_the_first_commit_says_commit_first_and_writes_nothing() {
    let work = tempfile::tempdir().unwrap();
    let repo = work.path();
    fresh_repository(repo);
    let config = common::markdown::fenced_blocks(&five_minute_page())
        .into_iter()
        .find(|(language, body)| language == "yaml" && body.starts_with("dataset:"))
        .unwrap()
        .1;
    std::fs::write(repo.join("sqlgate.yml"), config).unwrap();
    let update = || {
        readme_command("sqlgate baseline update --config sqlgate.yml")
            .current_dir(repo)
            .output()
            .unwrap()
    };
    let refused = update();
    common::assert_exit(&refused, 2);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    common::assert_contains(
        &stderr,
        &[
            "no commit to record in the baseline ./.sqlgate/baseline.json",
            "commit first (`git add -A && git commit`)",
        ],
    );
    assert!(!repo.join(".sqlgate").exists(), "nothing is left behind");

    // Committed, but the predictions lack a line: scoring fails after the folder was made, and
    // the folder goes again.
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "--quiet", "-m", "first"]);
    let predictions = repo.join("predictions/dev.sql");
    let text = std::fs::read_to_string(&predictions).unwrap();
    let (head, _) = text.trim_end().rsplit_once('\n').unwrap();
    std::fs::write(&predictions, format!("{head}\n")).unwrap();
    let refused = update();
    common::assert_exit(&refused, 2);
    assert!(!repo.join(".sqlgate").exists(), "nothing is left behind");
    std::fs::write(&predictions, text).unwrap();
    let made = update();
    assert!(made.status.success());
    assert!(repo.join(".sqlgate/baseline.json").is_file());
}

/// The worked example of docs/OUTPUTS.md ("Choosing the gate"): a rolling baseline that
/// tolerates up to 3 net regressed items when the drop is not significant lets two PRs of two
/// regressed items each through one at a time; the drift guard, against the anchor pinned before
/// them, fails the second. A regression accepted by a reviewed `gate.accept` line passes with a
/// note.
#[test]
fn small_regressions_merged_one_at_a_time_meet_the_drift_guard_and_accepting_one_is_reviewed() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let example = root().join("examples/spider-mini");
    let predictions = dir.join("dev.sql");
    std::fs::copy(example.join("predictions/C3.txt"), &predictions).unwrap();
    let write_config = |gate: &str| {
        std::fs::write(
            dir.join("sqlgate.yml"),
            format!(
                "dataset: {{ gold: {e}/dev_gold.sql, tables: {e}/tables.json, databases: {e}/database }}\n\
                 predictions: [{{ name: my-model, path: dev.sql }}]\nmetrics: [ex]\n\
                 baseline: {{ path: baseline.json, anchor: anchor.json }}\ngate: {gate}\n",
                e = example.display()
            ),
        )
        .unwrap();
    };
    let sqlgate = |args: &[&str]| {
        let output = sqlgate_command(args).current_dir(dir).output().unwrap();
        let text = String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr);
        (output.status.code(), text)
    };
    let eval = || sqlgate(&repo::EVAL);
    let merge = || {
        assert_eq!(
            sqlgate(&["baseline", "update", "--config", "sqlgate.yml"]).0,
            Some(0)
        )
    };
    write_config(
        "{ metric: ex, max_drop_points: 0.0, max_regressed_items: 3, \
         significance: { test: mcnemar-exact, alpha: 0.05 }, max_drift_points: 2.0 }",
    );
    merge();
    std::fs::copy(dir.join("baseline.json"), dir.join("anchor.json")).unwrap();
    let right: Vec<usize> = baseline_right(&dir.join("baseline.json"))
        .iter()
        .enumerate()
        .filter_map(|(i, &r)| r.then_some(i))
        .collect();
    let regress = |items: &[usize]| {
        let mut lines: Vec<String> = std::fs::read_to_string(&predictions)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        for &i in items {
            lines[i] = "SELECT 'regressed'".into();
        }
        std::fs::write(&predictions, lines.join("\n") + "\n").unwrap();
    };

    regress(&right[..2]);
    let (code, out) = eval();
    assert_eq!(code, Some(0), "{out}");
    common::assert_contains(
        &out,
        &["my-model: ex 94.9 -> 93.6 (-1.3) on 157 items against the anchored baseline"],
    );
    merge();
    regress(&right[2..4]);
    let (code, out) = eval();
    assert_eq!(code, Some(1), "{out}");
    common::assert_contains(&out, &["gate failed: my-model: ex 94.9 -> 92.4 (-2.5) on 157 items against the anchored baseline"]);
    assert!(out.contains("a cumulative drop past the 2.0 points `gate.max_drift_points` allows"));
    assert!(
        !out.contains("on all dropped"),
        "the rolling baseline alone passes this step: {out}"
    );

    // Zero tolerance, and one reviewed acceptance.
    write_config("{ metric: ex, max_drop_points: 0.0 }");
    std::fs::copy(example.join("predictions/C3.txt"), &predictions).unwrap();
    merge();
    regress(&right[..1]);
    let (code, out) = eval();
    assert_eq!(code, Some(1), "{out}");
    common::assert_contains(&out, &["1 regressed / 0 fixed, drop 0.6 > allowed 0.0"]);
    write_config(&format!(
        "{{ metric: ex, max_drop_points: 0.0, accept: [{{ items: [{}], reason: \"gold is ambiguous, see #41\" }}] }}",
        right[0]
    ));
    let (code, out) = eval();
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains(&format!(
            "my-model: regressed items [{}] are accepted by `gate.accept` in the base config (gold is ambiguous, see #41)",
            right[0]
        )),
        "{out}"
    );
}
