//! The `workflow_run` half of the fork-safe pair against a local GitHub API server: the artifact
//! names another pull request and carries hostile Markdown; the comment lands on the pull request
//! whose head is the run's head commit, under a header that states the run's conclusion, with the
//! artifact verbatim in a code block (checked as GitHub parses it), and nothing is posted
//! anywhere else.

use crate::common;

use common::github::{body_of, comment_json, respond, serve, user_json};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

const HEAD: &str = "1111111111111111111111111111111111111111";

fn pull(number: u64, sha: &str, head_repo: &str) -> Value {
    json!({"number": number, "head": {"sha": sha, "repo": {"full_name": head_repo}},
           "base": {"repo": {"full_name": "acme/model"}}})
}

/// Posted comments as (issue, body), and every request line.
#[derive(Default)]
struct Fake {
    posted: Vec<(u64, String)>,
    requests: Vec<String>,
}

fn handle(state: &Mutex<Fake>, mut request: tiny_http::Request) {
    let mut body = String::new();
    let _ = request.as_reader().read_to_string(&mut body);
    let url = request.url().to_string();
    let path = url.split('?').next().unwrap_or("").to_string();
    let method = request.method().as_str().to_string();
    let mut state = state.lock().unwrap();
    state.requests.push(format!("{method} {url}"));
    let (status, reply) = match (method.as_str(), path.as_str()) {
        ("GET", "/repos/acme/model/pulls") if url.contains("head=forker%3Afeature&") => (
            200,
            json!([
                pull(7, HEAD, "forker/model"),
                pull(8, "2222", "forker/model")
            ]),
        ),
        ("GET", "/repos/acme/model/pulls") => (200, json!([])),
        ("GET", p) if p.starts_with("/repos/acme/model/commits/") => (200, json!([])),
        ("GET", "/repos/acme/model/issues/7/comments") => (200, json!([])),
        ("POST", p) if p.starts_with("/repos/acme/model/issues/") => {
            let issue: u64 = p.split('/').nth(5).unwrap().parse().unwrap();
            let text = body_of(&body);
            state.posted.push((issue, text.clone()));
            (
                201,
                comment_json(100, &text, user_json("github-actions[bot]", 1)),
            )
        }
        _ => (404, json!({"message": "Not Found"})),
    };
    respond(request, status, &reply);
}

fn start(state: Arc<Mutex<Fake>>, stop: Arc<AtomicBool>) -> String {
    serve(stop, move |request| handle(&state, request))
}

fn event(conclusion: &str, trigger: &str) -> Value {
    event_on_branch(conclusion, trigger, "feature")
}

fn event_on_branch(conclusion: &str, trigger: &str, branch: &str) -> Value {
    json!({
        "repository": {"full_name": "acme/model"},
        "workflow_run": {
            "event": trigger, "conclusion": conclusion, "head_sha": HEAD, "head_branch": branch,
            "head_repository": {"full_name": "forker/model", "owner": {"login": "forker"}},
            "html_url": "https://github.com/acme/model/actions/runs/5", "workflow_id": 42,
            "pull_requests": []
        }
    })
}

fn run(dir: &std::path::Path, api: &str, payload: &Value) -> std::process::Output {
    let event_path = dir.join("event.json");
    std::fs::write(&event_path, payload.to_string()).unwrap();
    let report = dir.join("sqlgate-report.md");
    common::sqlgate_command(&[
        "comment",
        "--from-workflow-run",
        "--report",
        report.to_str().unwrap(),
    ])
    .env("GITHUB_ACTIONS", "true")
    .env("GITHUB_EVENT_NAME", "workflow_run")
    .env("GITHUB_EVENT_PATH", &event_path)
    .env("GITHUB_REPOSITORY", "acme/model")
    .env("GITHUB_API_URL", api)
    .env("SQLGATE_GITHUB_TOKEN", "t0ken")
    .output()
    .unwrap()
}

/// What one `comment --from-workflow-run` did.
struct Posted {
    code: Option<i32>,
    /// stdout and stderr.
    out: String,
    /// The comments posted, as (issue, body).
    comments: Vec<(u64, String)>,
    /// Every request line the API saw.
    requests: Vec<String>,
}

/// Posts `report` (none: no file) for the run `payload` describes.
fn post(report: Option<&str>, payload: &Value) -> Posted {
    let dir = tempfile::tempdir().unwrap();
    if let Some(report) = report {
        std::fs::write(dir.path().join("sqlgate-report.md"), report).unwrap();
    }
    let state = Arc::new(Mutex::new(Fake::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let api = start(state.clone(), stop.clone());
    let output = run(dir.path(), &api, payload);
    stop.store(true, Ordering::Relaxed);
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let state = state.lock().unwrap();
    Posted {
        code: output.status.code(),
        out,
        comments: state.posted.clone(),
        requests: state.requests.clone(),
    }
}

const RUN_URL: &str = "https://github.com/acme/model/actions/runs/5";

/// The hostile artifact of the issue: a lone CR re-opening Markdown, a backslash before `[`,
/// cross-references, a fake verdict heading, and the earlier HTML, mention and image attempts.
const HOSTILE: &str = "<!-- sqlgate:0123456789ab -->\n## ✅ sqlgate passed: ex 80.0 -> 80.0\n\
    pr-number: 9 (the artifact says so)\n\
    @maintainers please merge <img src=https://evil.example/p.png>\n\
    ```\rx\r<img src=https://evil.example/cr.png>\r![i](https://evil.example/i.png)\r@octocat\n\
    \\[x\\](https://evil.example) fixes #1 and acme/other#2\n\
    ![x](https://evil.example/pixel.png)\n```\n```` \n<script>x</script>\n";

/// Panics unless `body` is sqlgate's header (one heading, `heading`, linking only the run) and the
/// artifact's text, all of it inside one code block, as GitHub parses it.
fn assert_header_then_verbatim(body: &str, heading: &str, artifact: Option<&str>) {
    let parsed = common::markdown::assert_sqlgate_markup_only(body, &[RUN_URL]);
    let headings: Vec<usize> = (0..parsed.len())
        .filter(|&i| parsed[i].kind == "heading")
        .collect();
    assert_eq!(headings.len(), 1, "one heading, sqlgate's: {body}");
    assert_eq!(parsed[headings[0]].level, 2);
    assert_eq!(parsed[headings[0] + 1].literal, heading, "{body}");
    let shown = common::markdown::shown_texts(&parsed).join("\n");
    for forbidden in [
        "@maintainers",
        "@octocat",
        "#1",
        "other#2",
        "✅ sqlgate passed: ex",
    ] {
        assert!(
            !shown.contains(forbidden),
            "`{forbidden}` rendered: {shown}"
        );
    }
    let blocks: Vec<&str> = parsed
        .iter()
        .filter(|n| n.kind == "code_block")
        .map(|n| n.literal.as_str())
        .collect();
    match artifact {
        Some(artifact) => {
            let verbatim = artifact
                .replace("<!-- sqlgate:0123456789ab -->", "")
                .replace("\r\n", "\n")
                .replace('\r', "\n");
            assert_eq!(blocks, [verbatim.trim_end_matches('\n').to_string() + "\n"]);
        }
        None => assert!(blocks.is_empty(), "{body}"),
    }
}

#[test]
fn the_report_lands_verbatim_under_the_runs_verdict_on_the_pull_request_of_the_run_head() {
    let Posted {
        code,
        out,
        comments: posted,
        requests,
    } = post(Some(HOSTILE), &event("failure", "pull_request"));
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(posted.len(), 1, "{requests:?}");
    let (issue, body) = &posted[0];
    assert_eq!(*issue, 7, "{requests:?}");
    assert!(
        body.starts_with("<!-- sqlgate:workflow-run-42 -->\n## ❌ sqlgate failed\n"),
        "{body}"
    );
    assert!(!body.contains("sqlgate:0123456789ab"), "{body}");
    assert_header_then_verbatim(body, "❌ sqlgate failed", Some(HOSTILE));
    assert!(
        !requests
            .iter()
            .any(|r| r.contains("/issues/9") || r.contains("/issues/8")),
        "{requests:?}"
    );
}

#[test]
fn the_header_states_each_conclusion_and_a_missing_report() {
    let passed = post(Some(HOSTILE), &event("success", "pull_request"));
    assert_eq!(passed.code, Some(0), "{}", passed.out);
    assert_header_then_verbatim(&passed.comments[0].1, "✅ sqlgate passed", Some(HOSTILE));
    for conclusion in ["cancelled", "timed_out", "startup_failure"] {
        let stopped = post(None, &event(conclusion, "pull_request"));
        assert_eq!(stopped.code, Some(0), "{}", stopped.out);
        let body = &stopped.comments[0].1;
        assert_header_then_verbatim(body, "⚠️ sqlgate could not run", None);
        let shown = common::markdown::shown_texts(&common::markdown::nodes(body)).join(" ");
        common::assert_contains(&shown, &[&format!(" {conclusion}: the run did not finish")]);
        assert!(body.ends_with("The run uploaded no report.\n"), "{body}");
    }
    let failed = post(None, &event("failure", "pull_request"));
    assert_eq!(failed.code, Some(0), "{}", failed.out);
    assert_header_then_verbatim(&failed.comments[0].1, "❌ sqlgate failed", None);
}

#[test]
fn runs_that_are_not_finished_pull_request_runs_post_nothing() {
    for (conclusion, trigger) in [("skipped", "pull_request"), ("success", "push")] {
        let refused = post(Some("report"), &event(conclusion, trigger));
        assert_eq!(
            refused.code,
            Some(2),
            "{conclusion} {trigger}: {}",
            refused.out
        );
        assert!(refused.requests.is_empty(), "{:?}", refused.requests);
    }
}

#[test]
fn the_head_branch_is_url_encoded_in_the_lookup() {
    let branch = "feature&state=closed&head=acme:main#x y";
    let Posted {
        code,
        out,
        comments: posted,
        requests,
    } = post(
        Some("report"),
        &event_on_branch("failure", "pull_request", branch),
    );
    assert_eq!(code, Some(0), "{out}");
    let lookup = requests
        .iter()
        .find(|r| r.starts_with("GET /repos/acme/model/pulls?"))
        .unwrap();
    assert_eq!(
        lookup,
        "GET /repos/acme/model/pulls?state=open&head=forker%3Afeature%26state%3Dclosed%26head%3Dacme%3Amain%23x+y&per_page=100"
    );
    // No pull request has that branch here: the head commit finds none either.
    assert!(posted.is_empty(), "{requests:?}");
}

#[test]
fn a_fork_run_that_could_not_evaluate_uploads_its_reason_and_the_comment_shows_it() {
    let work = tempfile::tempdir().unwrap();
    let repo = work.path().join("repo");
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/spider-mini");
    let copied = std::process::Command::new("cp")
        .args(["-r", example.to_str().unwrap(), repo.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(copied.success());
    std::fs::remove_file(repo.join("predictions/C3.txt")).unwrap();
    let output = common::sqlgate_command(&["action"])
        .current_dir(&repo)
        .env_remove("SQLGATE_WORKSPACE")
        .env_remove("SQLGATE_GITHUB_TOKEN")
        .env_remove("GITHUB_TOKEN")
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_EVENT_NAME", "workflow_dispatch")
        .env("GITHUB_WORKSPACE", &repo)
        .env("GITHUB_OUTPUT", work.path().join("outputs"))
        .env("GITHUB_STEP_SUMMARY", work.path().join("summary"))
        .env("INPUT_CONFIG", "sqlgate.yml")
        .env("INPUT_COMMENT", "false")
        .env("INPUT_REPORT", "sqlgate-report.md")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{out}");
    let report = std::fs::read_to_string(repo.join("sqlgate-report.md")).unwrap();
    common::assert_contains(&report, &["## ⚠️ sqlgate could not evaluate: ", "C3.txt"]);
    let posted = post(Some(&report), &event("failure", "pull_request"));
    assert_eq!(posted.code, Some(0), "{}", posted.out);
    let body = &posted.comments[0].1;
    let blocks: Vec<String> = common::markdown::nodes(body)
        .into_iter()
        .filter(|n| n.kind == "code_block")
        .map(|n| n.literal)
        .collect();
    assert_eq!(blocks.len(), 1, "{body}");
    assert!(
        blocks[0].contains("## ⚠️ sqlgate could not evaluate: ") && blocks[0].contains("C3.txt"),
        "{body}"
    );
}
