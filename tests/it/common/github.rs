//! A local fake of the GitHub REST endpoints sqlgate calls for the sticky comment: list, create
//! and update the comments of any pull request of `acme/model`, for the token `t0ken` only.
//! Comments are stored per pull request, authored by a bot, so a test reads what each pull
//! request shows after every run.

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The token the fake accepts.
pub const TOKEN: &str = "t0ken";

/// The comments of each pull request (id and body, in creation order) and every request line.
#[derive(Default)]
pub struct State {
    /// Pull request number to its comments.
    pub comments: BTreeMap<u64, Vec<(u64, String)>>,
    /// `METHOD /path` of every request.
    pub requests: Vec<String>,
    next_id: u64,
}

/// A running fake; stops serving when dropped.
pub struct FakeGitHub {
    /// What the fake holds.
    pub state: Arc<Mutex<State>>,
    /// Its base URL, for `GITHUB_API_URL`.
    pub url: String,
    stop: Arc<AtomicBool>,
}

impl FakeGitHub {
    /// Starts the fake on an ephemeral loopback port.
    pub fn start() -> FakeGitHub {
        let state = Arc::new(Mutex::new(State {
            next_id: 100,
            ..State::default()
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::clone(&state);
        let url = serve(Arc::clone(&stop), move |request| handle(&shared, request));
        FakeGitHub { state, url, stop }
    }

    /// The bodies of pull request `number`'s comments.
    pub fn comments(&self, number: u64) -> Vec<String> {
        let state = self.state.lock().unwrap();
        state
            .comments
            .get(&number)
            .map(|c| c.iter().map(|(_, body)| body.clone()).collect())
            .unwrap_or_default()
    }
}

impl Drop for FakeGitHub {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Serves requests with `handle` on an ephemeral loopback port until `stop` is set; returns the
/// server's base URL.
pub fn serve(
    stop: Arc<AtomicBool>,
    handle: impl Fn(tiny_http::Request) + Send + 'static,
) -> String {
    let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
    let url = format!("http://{}", server.server_addr().to_ip().unwrap());
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            if let Ok(Some(request)) = server.recv_timeout(Duration::from_millis(50)) {
                handle(request);
            }
        }
    });
    url
}

/// Answers `request` with `status` and the JSON `reply`.
pub fn respond(request: tiny_http::Request, status: u16, reply: &Value) {
    let header = tiny_http::Header::from_bytes("Content-Type", "application/json").unwrap();
    let response = tiny_http::Response::from_string(reply.to_string())
        .with_status_code(status)
        .with_header(header);
    let _ = request.respond(response);
}

/// A user as GitHub's REST API returns one: `login` (a bot when it ends in `[bot]`) and `id`.
pub fn user_json(login: &str, id: u64) -> Value {
    let url = "http://127.0.0.1/x";
    json!({
        "login": login, "id": id, "node_id": "u", "avatar_url": url, "gravatar_id": "", "url": url,
        "html_url": url, "followers_url": url, "following_url": url, "gists_url": url,
        "starred_url": url, "subscriptions_url": url, "organizations_url": url, "repos_url": url,
        "events_url": url, "received_events_url": url,
        "type": if login.ends_with("[bot]") { "Bot" } else { "User" }, "site_admin": false
    })
}

/// A comment as GitHub's REST API returns one: `id` and `body`, written by `user` ([`user_json`]).
pub fn comment_json(id: u64, body: &str, user: Value) -> Value {
    let url = "http://127.0.0.1/x";
    json!({
        "id": id, "node_id": "n", "url": url, "html_url": url, "issue_url": url, "body": body,
        "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
        "user": user
    })
}

/// The Actions bot, author of the fake's comments.
fn actions_bot() -> Value {
    user_json("github-actions[bot]", 41898282)
}

/// The pull request number of `/repos/acme/model/issues/N/comments`.
fn issue_number(path: &str) -> Option<u64> {
    path.strip_prefix("/repos/acme/model/issues/")?
        .strip_suffix("/comments")?
        .parse()
        .ok()
}

/// The `body` field of a JSON request body (a comment's text).
pub fn body_of(request_body: &str) -> String {
    serde_json::from_str::<Value>(request_body).unwrap()["body"]
        .as_str()
        .unwrap()
        .to_string()
}

/// What a fake API reads of a request: its body, whether an `Authorization` header satisfies
/// `authorized`, its path (without the query) and its method.
pub fn request_parts(
    request: &mut tiny_http::Request,
    authorized: impl Fn(&str) -> bool,
) -> (String, bool, String, String) {
    let mut body = String::new();
    let _ = request.as_reader().read_to_string(&mut body);
    let authorized = (request.headers().iter())
        .any(|h| h.field.equiv("Authorization") && authorized(h.value.as_str()));
    let path = request.url().split('?').next().unwrap_or("").to_string();
    (
        body,
        authorized,
        path,
        request.method().as_str().to_string(),
    )
}

fn handle(state: &Mutex<State>, mut request: tiny_http::Request) {
    let (body, authorized, path, method) =
        request_parts(&mut request, |value| value.ends_with(TOKEN));
    let mut state = state.lock().unwrap();
    state.requests.push(format!("{method} {path}"));
    let (status, reply) = match (method.as_str(), issue_number(&path)) {
        _ if !authorized => (401, json!({"message": "Bad credentials"})),
        ("GET", Some(number)) => {
            let listed = state.comments.get(&number).cloned().unwrap_or_default();
            let listed = listed
                .iter()
                .map(|(id, b)| comment_json(*id, b, actions_bot()));
            (200, Value::Array(listed.collect()))
        }
        ("POST", Some(number)) => {
            let (id, text) = (state.next_id, body_of(&body));
            state.next_id += 1;
            state
                .comments
                .entry(number)
                .or_default()
                .push((id, text.clone()));
            (201, comment_json(id, &text, actions_bot()))
        }
        ("PATCH", None) if path.starts_with("/repos/acme/model/issues/comments/") => {
            let id: u64 = path.rsplit('/').next().unwrap().parse().unwrap();
            let text = body_of(&body);
            let slot = state
                .comments
                .values_mut()
                .flatten()
                .find(|(i, _)| *i == id)
                .unwrap();
            slot.1 = text.clone();
            (200, comment_json(id, &text, actions_bot()))
        }
        _ => (404, json!({"message": "Not Found"})),
    };
    respond(request, status, &reply);
}
