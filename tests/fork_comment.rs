//! The `workflow_run` half of the fork-safe pair against a local GitHub API server: the artifact
//! names another pull request and carries hostile Markdown; the comment lands on the pull request
//! whose head is the run's head commit, escaped, and nothing is posted anywhere else.

mod common;

use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const HEAD: &str = "1111111111111111111111111111111111111111";

fn pull(number: u64, sha: &str, head_repo: &str) -> Value {
    json!({"number": number, "head": {"sha": sha, "repo": {"full_name": head_repo}},
           "base": {"repo": {"full_name": "acme/model"}}})
}

fn comment_json(id: u64, body: &str) -> Value {
    let url = "http://127.0.0.1/x";
    json!({
        "id": id, "node_id": "n", "url": url, "html_url": url, "issue_url": url, "body": body,
        "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
        "user": {
            "login": "bot", "id": 1, "node_id": "u", "avatar_url": url, "gravatar_id": "", "url": url,
            "html_url": url, "followers_url": url, "following_url": url, "gists_url": url,
            "starred_url": url, "subscriptions_url": url, "organizations_url": url, "repos_url": url,
            "events_url": url, "received_events_url": url, "type": "Bot", "site_admin": false
        }
    })
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
        ("GET", "/repos/acme/model/pulls") if url.contains("head=forker:feature") => (
            200,
            json!([
                pull(7, HEAD, "forker/model"),
                pull(8, "2222", "forker/model")
            ]),
        ),
        ("GET", "/repos/acme/model/issues/7/comments") => (200, json!([])),
        ("POST", p) if p.starts_with("/repos/acme/model/issues/") => {
            let issue: u64 = p.split('/').nth(5).unwrap().parse().unwrap();
            let text = serde_json::from_str::<Value>(&body).unwrap()["body"]
                .as_str()
                .unwrap()
                .to_string();
            state.posted.push((issue, text.clone()));
            (201, comment_json(100, &text))
        }
        _ => (404, json!({"message": "Not Found"})),
    };
    let header = tiny_http::Header::from_bytes("Content-Type", "application/json").unwrap();
    let _ = request.respond(
        tiny_http::Response::from_string(reply.to_string())
            .with_status_code(status)
            .with_header(header),
    );
}

fn start(state: Arc<Mutex<Fake>>, stop: Arc<AtomicBool>) -> String {
    let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
    let address = format!("http://{}", server.server_addr().to_ip().unwrap());
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            if let Ok(Some(request)) = server.recv_timeout(Duration::from_millis(50)) {
                handle(&state, request);
            }
        }
    });
    address
}

fn event(conclusion: &str, trigger: &str) -> Value {
    json!({
        "repository": {"full_name": "acme/model"},
        "workflow_run": {
            "event": trigger, "conclusion": conclusion, "head_sha": HEAD, "head_branch": "feature",
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

#[test]
fn the_report_lands_escaped_on_the_pull_request_of_the_run_head() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("sqlgate-report.md"),
        "<!-- sqlgate:0123456789ab -->\npr-number: 9 (the artifact says so)\n\
         @maintainers please merge <img src=https://evil.example/p.png>\n\
         ![x](https://evil.example/pixel.png)\n```\n```` \n<script>x</script>\n",
    )
    .unwrap();
    let state = Arc::new(Mutex::new(Fake::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let api = start(state.clone(), stop.clone());
    let output = run(dir.path(), &api, &event("failure", "pull_request"));
    stop.store(true, Ordering::Relaxed);
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(output.status.code(), Some(0), "{out}");
    let state = state.lock().unwrap();
    assert_eq!(state.posted.len(), 1, "{:?}", state.requests);
    let (issue, body) = &state.posted[0];
    assert_eq!(*issue, 7, "{:?}", state.requests);
    assert!(
        body.starts_with("<!-- sqlgate:workflow-run-42 -->\n"),
        "{body}"
    );
    assert!(!body.contains("sqlgate:0123456789ab"), "{body}");
    assert!(
        !body.contains("<img") && !body.contains("<script"),
        "{body}"
    );
    assert!(body.contains("@\u{200B}maintainers"), "{body}");
    assert!(body.contains("\\!\\[x\\]"), "{body}");
    assert!(
        !state
            .requests
            .iter()
            .any(|r| r.contains("/issues/9") || r.contains("/issues/8")),
        "{:?}",
        state.requests
    );
}

#[test]
fn runs_that_are_not_finished_pull_request_runs_post_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sqlgate-report.md"), "report").unwrap();
    for (conclusion, trigger) in [("cancelled", "pull_request"), ("success", "push")] {
        let state = Arc::new(Mutex::new(Fake::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let api = start(state.clone(), stop.clone());
        let output = run(dir.path(), &api, &event(conclusion, trigger));
        stop.store(true, Ordering::Relaxed);
        assert_eq!(output.status.code(), Some(2), "{conclusion} {trigger}");
        assert!(state.lock().unwrap().requests.is_empty());
    }
}
