//! End to end in "GitHub Actions": the binary reads the event payload and posts to a local HTTP
//! server implementing the GitHub endpoints it calls. The first run creates the comment, the
//! second updates the same one; without a token nothing is posted and the report file exists;
//! `$GITHUB_OUTPUT` and `$GITHUB_STEP_SUMMARY` are written. Only a comment the token's own
//! identity wrote is ever updated.

use crate::common;

use common::github::{body_of, comment_json, request_parts, respond, serve, user_json};
use common::openai::{Reply, Server};
use common::sqlgate_command;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The login of the Actions `GITHUB_TOKEN`'s comments.
const ACTIONS_BOT: &str = "github-actions[bot]";

/// Comments stored by the fake server (id, body, author), and every request line it saw.
#[derive(Default)]
struct FakeGitHub {
    comments: Vec<(u64, String, String)>,
    requests: Vec<String>,
    /// Refuse every request with a 403 whose message echoes the `Authorization` header.
    echo_refusal: bool,
    /// The login `GET /user` answers with; `None` refuses it with a 403, as GitHub does for an
    /// installation token (the Actions `GITHUB_TOKEN`).
    user: Option<String>,
}

fn handle(state: &Mutex<FakeGitHub>, mut request: tiny_http::Request) {
    let (body, authorized, path, method) =
        request_parts(&mut request, |value| value.contains("t0ken"));
    let mut state = state.lock().unwrap();
    state.requests.push(format!("{method} {path}"));
    let credentials = request
        .headers()
        .iter()
        .find(|h| h.field.equiv("Authorization"))
        .map(|h| h.value.as_str().to_string())
        .unwrap_or_default();
    let (status, reply) = match (method.as_str(), path.as_str()) {
        _ if state.echo_refusal => (
            403,
            json!({"message": format!("{} is not allowed here; {}", credentials, "x".repeat(5000))}),
        ),
        _ if !authorized => (401, json!({"message": "Bad credentials"})),
        ("GET", "/user") => match &state.user {
            Some(login) => (200, user_json(login, 1)),
            None => (
                403,
                json!({"message": "Resource not accessible by integration"}),
            ),
        },
        ("GET", "/repos/acme/model/issues/7/comments") => (
            200,
            Value::Array(
                state
                    .comments
                    .iter()
                    .map(|(id, b, author)| comment_json(*id, b, user_json(author, 1)))
                    .collect(),
            ),
        ),
        ("POST", "/repos/acme/model/issues/7/comments") => {
            let text = body_of(&body);
            let id = 100 + state.comments.len() as u64;
            let author = state.user.clone().unwrap_or(ACTIONS_BOT.into());
            state.comments.push((id, text.clone(), author.clone()));
            (201, comment_json(id, &text, user_json(&author, 1)))
        }
        ("PATCH", p) if p.starts_with("/repos/acme/model/issues/comments/") => {
            let id: u64 = p.rsplit('/').next().unwrap().parse().unwrap();
            let text = body_of(&body);
            let slot = state
                .comments
                .iter_mut()
                .find(|(i, _, _)| *i == id)
                .unwrap();
            slot.1 = text.clone();
            let author = slot.2.clone();
            (200, comment_json(id, &text, user_json(&author, 1)))
        }
        _ => (404, json!({"message": "Not Found"})),
    };
    respond(request, status, &reply);
}

/// Serves on an ephemeral loopback port until `stop` is set (bounded by the test's lifetime).
/// A fake GitHub API serving from a fresh state: the state, the flag that stops it, its URL.
fn start_server() -> (Arc<Mutex<FakeGitHub>>, Arc<AtomicBool>, String) {
    let state = Arc::new(Mutex::new(FakeGitHub::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let served = Arc::clone(&state);
    let api = serve(Arc::clone(&stop), move |request| handle(&served, request));
    (state, stop, api)
}

fn example() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/spider-mini")
}

fn write_config(dir: &Path, predictions: &str) -> std::path::PathBuf {
    let ex = example();
    let name = predictions.replace(['/', '.'], "_");
    let entry = format!("{{ name: model, path: {}/{predictions} }}", ex.display());
    common::config::example_gate(dir, &name, &ex.join("dev_gold.sql"), &entry, "ex, esm")
}

#[test]
fn comment_is_created_then_updated_and_never_posted_without_token() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let (state, stop, api) = start_server();
    let base_config = write_config(dir, "predictions/C3.txt");
    let update = sqlgate_command(&[
        "baseline",
        "update",
        "--config",
        base_config.to_str().unwrap(),
    ])
    .output()
    .unwrap();
    common::assert_exit(&update, 0);
    let config = write_config(dir, "predictions/RESDSQL.txt");
    let event = common::repo::event(
        dir.join("event.json"),
        json!({"pull_request": {"number": 7}}),
    );
    let (outputs, summary) = (dir.join("outputs.txt"), dir.join("summary.md"));
    let junit = dir.join("junit.xml");

    let run = |token: Option<&str>| {
        let mut command = common::eval_command(&config, &["--junit", common::arg(&junit)]);
        common::repo::in_pull_request_job(&mut command, &event)
            .env("GITHUB_WORKSPACE", example())
            .env("GITHUB_API_URL", &api)
            .env("GITHUB_OUTPUT", &outputs)
            .env("GITHUB_STEP_SUMMARY", &summary);
        if let Some(token) = token {
            command.env("GITHUB_TOKEN", token);
        }
        let output = command.output().unwrap();
        assert!(
            matches!(output.status.code(), Some(0 | 1)),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    };

    let first = run(Some("t0ken"));
    common::assert_contains(&first, &["created PR comment 100"]);
    assert_regressions_are_annotated(&first, dir);
    let second = run(Some("t0ken"));
    common::assert_contains(&second, &["updated PR comment 100"]);
    {
        let state = state.lock().unwrap();
        assert_eq!(state.comments.len(), 1, "one sticky comment");
        assert!(state.comments[0].1.starts_with("<!-- sqlgate:"));
        assert!(state.comments[0].1.contains("| model | ex |"));
        let posts = state
            .requests
            .iter()
            .filter(|r| r.starts_with("POST"))
            .count();
        let patches = state
            .requests
            .iter()
            .filter(|r| r.starts_with("PATCH"))
            .count();
        assert_eq!((posts, patches), (1, 1), "{:?}", state.requests);
    }

    std::fs::remove_file(dir.join("report.md")).unwrap();
    let requests_before = state.lock().unwrap().requests.len();
    let third = run(None);
    common::assert_contains(&third, &["PR comment not posted (no token"]);
    assert!(
        third.contains("<!-- sqlgate:"),
        "the comment is printed instead"
    );
    assert!(dir.join("report.md").is_file());
    assert_eq!(
        state.lock().unwrap().requests.len(),
        requests_before,
        "nothing was sent"
    );
    stop.store(true, Ordering::Relaxed);

    let outputs = std::fs::read_to_string(&outputs).unwrap();
    for key in ["passed=", "score=", "delta=", "report=", "junit="] {
        assert_eq!(
            outputs.lines().filter(|l| l.starts_with(key)).count(),
            3,
            "{key} in {outputs}"
        );
    }
    assert!(outputs.contains("passed=true") || outputs.contains("passed=false"));
    let summary = std::fs::read_to_string(&summary).unwrap();
    assert_eq!(summary.matches("<!-- sqlgate:").count(), 3);
}

/// A token planted in `SQLGATE_GITHUB_TOKEN` (not in a known token shape, so only its literal
/// value can be recognised).
const PLANTED: &str = "t0ken-PLANTED-5e3c9a1f77d2";

#[test]
fn a_planted_token_never_appears_in_any_output() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let (state, stop, api) = start_server();
    // A hostile judge: echoes what it was sent and the planted token in its error bodies.
    let judge = Server::start(|request, _| Reply {
        status: 400,
        body: format!(
            "I saw {:?} and {PLANTED}; also Bearer {PLANTED} and ghp_{}",
            request.authorization,
            "A".repeat(36)
        ),
        headers: Vec::new(),
        delay: Duration::ZERO,
    });
    let ex = example();
    let event = common::repo::event(
        dir.join("event.json"),
        json!({"pull_request": {"number": 7}}),
    );
    let gold = json!([
        {"db_id": "concert_singer", "question": "How many singers are there?", "query": "SELECT count(*) FROM singer"},
        {"db_id": "concert_singer", "question": "List the singer names.", "query": "SELECT name FROM singer"},
    ]);
    std::fs::write(dir.join("gold.json"), gold.to_string()).unwrap();
    std::fs::write(
        dir.join("pred.txt"),
        "SELECT count(*) FROM stadium\nSELECT name FROM singer WHERE age > 30\n",
    )
    .unwrap();
    let write = |judge_key: &str| {
        let config = dir.join("sqlgate.yml");
        std::fs::write(
            &config,
            format!(
                "dataset: {{ gold: {dir}/gold.json, databases: {ex}/database, difficulty: none }}\n\
                 predictions: [{{ name: model, path: {dir}/pred.txt }}]\n\
                 metrics: [ex, flex]\n\
                 judge: {{ base_url: '{}', model: m, api_key_env: {judge_key}, max_retries: 0, timeout_ms: 2000 }}\n\
                 report: {{ output: {dir}/report.md }}\n",
                judge.base_url,
                ex = ex.display(),
                dir = dir.display()
            ),
        )
        .unwrap();
        config
    };
    let (outputs, summary) = (dir.join("outputs.txt"), dir.join("step-summary.md"));
    let run = |config: &Path| {
        let (items, summary_json) = (dir.join("items.jsonl"), dir.join("summary.json"));
        let args = [
            "--jsonl",
            common::arg(&items),
            "--summary",
            common::arg(&summary_json),
        ];
        common::repo::in_pull_request_job(&mut common::eval_command(config, &args), &event)
            .env("GITHUB_API_URL", &api)
            .env("GITHUB_OUTPUT", &outputs)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("SQLGATE_GITHUB_TOKEN", PLANTED)
            .env("JUDGE_API_KEY", "judge-key-0123456789")
            .output()
            .unwrap()
    };
    let assert_clean = |what: &str, text: &str| {
        assert!(!text.contains(PLANTED), "the token is in {what}: {text}");
        assert!(
            !text.contains("judge-key-0123456789"),
            "the judge key is in {what}"
        );
        assert!(
            !text.contains(&format!("ghp_{}", "A".repeat(36))),
            "a token shape is in {what}"
        );
    };

    let refused = run(&write("SQLGATE_GITHUB_TOKEN"));
    common::assert_exit(&refused, 2);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    common::assert_contains(&stderr, &["`judge.api_key_env`"]);
    assert_clean("stderr", &stderr);
    assert_eq!(judge.count(), 0, "nothing was sent to the judge");
    for name in [
        "GITHUB_TOKEN",
        "ACTIONS_RUNTIME_TOKEN",
        "RUNNER_TEMP",
        "GITHUB_ANYTHING",
    ] {
        let refused = run(&write(name));
        assert_eq!(refused.status.code(), Some(2), "{name} is refused");
    }

    let config = write("JUDGE_API_KEY");
    let posted = run(&config);
    assert!(
        matches!(posted.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&posted.stderr)
    );
    assert!(judge.count() > 0, "the judge was asked");
    state.lock().unwrap().echo_refusal = true;
    let refused = run(&config);
    let stdout = String::from_utf8_lossy(&refused.stdout);
    common::assert_contains(&stdout, &["the GitHub API refused: 403"]);
    assert!(stdout.len() < 200_000);
    stop.store(true, Ordering::Relaxed);

    for output in [&posted, &refused] {
        assert_clean("stdout", &String::from_utf8_lossy(&output.stdout));
        assert_clean("stderr", &String::from_utf8_lossy(&output.stderr));
    }
    let state = state.lock().unwrap();
    assert_eq!(state.comments.len(), 1, "{:?}", state.requests);
    assert_clean("the posted comment", &state.comments[0].1);
    for file in [
        "report.md",
        "items.jsonl",
        "summary.json",
        "outputs.txt",
        "step-summary.md",
    ] {
        assert_clean(file, &std::fs::read_to_string(dir.join(file)).unwrap());
    }
    let everything: String = ["report.md", "items.jsonl", "summary.json"]
        .iter()
        .map(|f| std::fs::read_to_string(dir.join(f)).unwrap())
        .chain([String::from_utf8_lossy(&posted.stdout).into_owned()])
        .collect();
    assert!(
        everything.contains("[redacted]"),
        "the judge's echo arrived, scrubbed: {everything}"
    );
}

/// Each item the baseline (C3) had right and RESDSQL has wrong is a `::warning` on its 1-based
/// line of the prediction file, relative to the workspace; the verdict decides the `::error`.
fn assert_regressions_are_annotated(stdout: &str, dir: &Path) {
    let summary_path = dir.join("check-summary.json");
    let config = dir.join("predictions_RESDSQL_txt.yml");
    let output = common::eval_command(
        &config,
        &[
            "--summary",
            common::arg(&summary_path),
            "--comment",
            "never",
        ],
    )
    .output()
    .unwrap();
    assert!(matches!(output.status.code(), Some(0 | 1)));
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(&summary_path).unwrap()).unwrap();
    let regressed: Vec<u64> = summary["gate"]["cells"][0]["regressed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert!(!regressed.is_empty(), "the example has regressed items");
    let warnings: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("::warning "))
        .collect();
    assert_eq!(warnings.len(), regressed.len().min(50), "{stdout}");
    for (warning, index) in warnings.iter().zip(&regressed) {
        let expected = format!(
            "::warning file=predictions/RESDSQL.txt,line={},title=sqlgate%3A ex regressed::model: item {index} ",
            index + 1
        );
        assert!(warning.starts_with(&expected), "{warning} vs {expected}");
    }
    let failed = summary["gate"]["passed"] == false;
    assert_eq!(
        stdout
            .lines()
            .any(|l| l.starts_with("::error title=sqlgate::failed: ")),
        failed,
        "{stdout}"
    );
}

/// A comment holding the marker written by anyone but the token's own identity (another bot, a
/// person) is never updated: sqlgate creates its own and updates only that. The identity is the
/// token's user when `GET /user` answers (a personal token), else `SQLGATE_COMMENT_AUTHOR` (a
/// GitHub App's bot), else `github-actions[bot]`.
#[test]
fn only_comments_of_the_tokens_own_identity_are_updated() {
    let work = tempfile::tempdir().unwrap();
    let marker = "<!-- sqlgate:0123456789ab -->";
    let report = work.path().join("report.md");
    std::fs::write(&report, format!("{marker}\n## ✅ sqlgate passed\n")).unwrap();
    let (state, stop, api) = start_server();
    let planted = [
        (1, "other-app[bot]"),
        (2, "mallory"),
        (3, "github-actions"),
        (4, "sqlgate-user"),
        (5, "my-app[bot]"),
    ];
    state.lock().unwrap().comments = planted
        .iter()
        .map(|(id, author)| {
            (
                *id,
                format!("{marker}\nplanted by {author}"),
                author.to_string(),
            )
        })
        .collect();
    let run = |author: Option<&str>| {
        let mut command = sqlgate_command(&["comment", "--report", report.to_str().unwrap()]);
        command
            .args(["--pr", "7"])
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_REPOSITORY", "acme/model")
            .env("GITHUB_API_URL", &api)
            .env("GITHUB_TOKEN", "t0ken");
        if let Some(author) = author {
            command.env("SQLGATE_COMMENT_AUTHOR", author);
        }
        let output = command.output().unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let first = run(None);
    common::assert_contains(&first, &["created PR comment 105"]);
    let second = run(None);
    common::assert_contains(&second, &["updated PR comment 105"]);
    state.lock().unwrap().user = Some("sqlgate-user".into());
    let personal = run(Some("my-app[bot]"));
    common::assert_contains(&personal, &["updated PR comment 4"]);
    state.lock().unwrap().user = None;
    let app = run(Some("my-app[bot]"));
    common::assert_contains(&app, &["updated PR comment 5"]);
    // The input `comment-author` left empty (its default) is no author: github-actions[bot].
    let unset = run(Some(""));
    common::assert_contains(&unset, &["updated PR comment 105"]);
    stop.store(true, Ordering::Relaxed);
    let state = state.lock().unwrap();
    for (id, author) in &planted[..3] {
        let (_, body, _) = state.comments.iter().find(|(i, _, _)| i == id).unwrap();
        assert_eq!(
            body,
            &format!("{marker}\nplanted by {author}"),
            "comment {id}"
        );
    }
    let edited = state
        .requests
        .iter()
        .filter(|r| r.starts_with("PATCH"))
        .collect::<Vec<_>>();
    assert_eq!(
        edited,
        [
            "PATCH /repos/acme/model/issues/comments/105",
            "PATCH /repos/acme/model/issues/comments/4",
            "PATCH /repos/acme/model/issues/comments/5",
            "PATCH /repos/acme/model/issues/comments/105"
        ]
    );
}

/// action.yml's input `comment-author` reaches `sqlgate action` as `SQLGATE_COMMENT_AUTHOR`
/// (empty by default: no author, as above).
#[test]
fn action_yml_hands_the_comment_author_input_to_the_gate() {
    let action = common::action_yml();
    assert_eq!(action["inputs"]["comment-author"]["default"], "");
    let gate = common::action_step(&action, "gate");
    assert_eq!(
        gate["env"]["SQLGATE_COMMENT_AUTHOR"],
        "${{ inputs.comment-author }}"
    );
    assert!(gate["run"]
        .as_str()
        .unwrap()
        .contains("\"$SQLGATE_BIN\" action"));
}

/// One regressing cell (the example's C3 with its first five predictions broken, against C3)
/// prints the same three numbers, in points, wherever a person reads them: the stdout table
/// and verdict, the `::error` annotation, the JUnit failure, the printed comment, the report
/// file, the step summary and the `score` / `delta` step outputs; `summary.json` keeps the
/// fractions.
#[test]
fn one_regressing_cell_prints_the_same_numbers_everywhere() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    std::fs::create_dir(dir.join("predictions")).unwrap();
    std::fs::copy(
        example().join("predictions/C3.txt"),
        dir.join("predictions/C3.txt"),
    )
    .unwrap();
    common::break_predictions(dir, "C3", 5);
    let gold = example().join("dev_gold.sql");
    let entry = |folder: &Path| {
        format!(
            "{{ name: C3, path: {}/predictions/C3.txt }}",
            folder.display()
        )
    };
    let base = common::config::example_gate(dir, "base", &gold, &entry(&example()), "ex");
    let config = common::config::example_gate(dir, "cand", &gold, &entry(dir), "ex");
    common::assert_exit(
        &sqlgate_command(&["baseline", "update", "--config", common::arg(&base)])
            .output()
            .unwrap(),
        0,
    );
    let event = common::repo::event(
        dir.join("event.json"),
        json!({"pull_request": {"number": 7}}),
    );
    let [outputs, step_summary, junit, summary] = [
        "outputs.txt",
        "step-summary.md",
        "junit.xml",
        "summary.json",
    ]
    .map(|f| dir.join(f));
    let mut command = common::eval_command(
        &config,
        &[
            "--junit",
            common::arg(&junit),
            "--summary",
            common::arg(&summary),
        ],
    );
    common::repo::in_pull_request_job(&mut command, &event)
        .env("GITHUB_WORKSPACE", dir)
        .env("GITHUB_OUTPUT", &outputs)
        .env("GITHUB_STEP_SUMMARY", &step_summary);
    let output = command.output().unwrap();
    common::assert_exit(&output, 1);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let read = |path: &Path| std::fs::read_to_string(path).unwrap();

    let change = "ex 94.9 -> 91.7 (-3.2)";
    let ex_row = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("ex "))
        .unwrap();
    assert!(ex_row.trim_end().ends_with(" 91.7 (157)"), "{stdout}");
    let error = stdout.lines().find(|l| l.starts_with("::error ")).unwrap();
    common::assert_contains(error, &[change]);
    let verdict = stdout
        .lines()
        .find(|l| l.starts_with("gate failed: "))
        .unwrap();
    common::assert_contains(verdict, &[change]);
    common::assert_contains(&read(&junit), &["94.9 -&gt; 91.7 (-3.2 points)"]);
    let escaped = "ex 94.9 -&gt; 91.7 (-3.2)";
    let gate_row = "| all | 157 | 94.9 | 91.7 | -3.2 |";
    for comment in [
        stdout.clone(),
        read(&dir.join("report.md")),
        read(&step_summary),
    ] {
        common::assert_contains(&comment, &[escaped, gate_row]);
    }
    let outputs = read(&outputs);
    assert_eq!(
        ["score=", "delta="].map(|key| outputs.lines().find(|l| l.starts_with(key)).unwrap()),
        ["score=91.7", "delta=-3.2"]
    );
    let summary: Value = serde_json::from_str(&read(&summary)).unwrap();
    let cell = &summary["gate"]["cells"][0];
    assert_eq!(
        (&cell["baseline"], &cell["candidate"]),
        (&json!(149.0 / 157.0), &json!(144.0 / 157.0))
    );
}
