//! The OpenAI-compatible provider client against a scripted server on 127.0.0.1: retries on
//! 429 (honouring Retry-After), 5xx and timeouts, no retry on other errors, the shared
//! concurrency limit, the on-disk cache, embedding batches, and unavailability without a key.

use crate::common;

use common::openai::{embeddings_reply, toy_embedding, Reply, Server};
use sqlgate::input::provider_config::{ProviderConfig, ProviderKind};
use sqlgate::providers::{Message, Provider, ProviderError, Providers, Usage};
use std::time::Duration;

fn config(server: &Server, extra: &str) -> ProviderConfig {
    let yaml = format!(
        "{{base_url: '{}', model: test-model, backoff_ms: 10, {extra}}}",
        server.base_url
    );
    serde_norway::from_str(&yaml).unwrap()
}

fn provider(server: &Server, extra: &str, cache: &tempfile::TempDir) -> Provider {
    Provider::new(ProviderKind::Judge, &config(server, extra), cache.path()).unwrap()
}

fn question() -> Vec<Message> {
    vec![
        Message::system("You judge SQL."),
        Message::user("Is it right?"),
    ]
}

#[test]
fn a_429_with_retry_after_and_a_503_are_retried_then_the_answer_is_cached() {
    // The key is read from the process's environment: set for a process of this test's own,
    // never in the shared test process (other tests' threads read the environment).
    if !common::in_own_process(
        "providers::a_429_with_retry_after_and_a_503_are_retried_then_the_answer_is_cached",
        &[("SQLGATE_TEST_KEY_RETRY", "sk-test")],
    ) {
        return;
    }
    let server = Server::start(|_, seen| match seen {
        0 => Reply::status(429).header("Retry-After", "1"),
        1 => Reply::status(503),
        _ => Reply::chat("fine", 120, 7),
    });
    let cache = tempfile::tempdir().unwrap();
    let judge = provider(&server, "api_key_env: SQLGATE_TEST_KEY_RETRY", &cache);
    let reply = judge.chat(&question()).unwrap();
    assert_eq!(reply.text, "fine");
    assert_eq!(reply.requests, 3);
    assert!(!reply.cached);
    assert_eq!(
        reply.usage,
        Usage {
            prompt_tokens: 120,
            completion_tokens: 7
        }
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let sent = &requests[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.authorization.as_deref(), Some("Bearer sk-test"));
    assert_eq!(sent.body["model"], "test-model");
    assert_eq!(sent.body["temperature"], 0);
    assert_eq!(sent.body["messages"][1]["content"], "Is it right?");
    assert!(requests.iter().all(|r| r.body == sent.body));

    let again = provider(&server, "api_key_env: SQLGATE_TEST_KEY_RETRY", &cache)
        .chat(&question())
        .unwrap();
    assert_eq!(server.count(), 3, "the cached answer needs no request");
    assert!(again.cached && again.requests == 0);
    assert_eq!((again.text.as_str(), again.usage), ("fine", reply.usage));
    let changed = [
        Message::system("You judge SQL."),
        Message::user("Is it right??"),
    ];
    assert_eq!(judge.chat(&changed).unwrap().requests, 3);
    assert_eq!(
        server.count(),
        6,
        "a different request is sent (429, 503, answer)"
    );
}

#[test]
fn a_reply_slower_than_the_timeout_is_retried() {
    let server = Server::start(|_, seen| {
        if seen == 0 {
            Reply::chat("late", 1, 1).delayed(Duration::from_secs(3))
        } else {
            Reply::chat("on time", 5, 2)
        }
    });
    let cache = tempfile::tempdir().unwrap();
    let reply = provider(&server, "timeout_ms: 300", &cache)
        .chat(&question())
        .unwrap();
    assert_eq!((reply.text.as_str(), reply.requests), ("on time", 2));
    assert_eq!(server.count(), 2);
}

#[test]
fn retries_run_out_and_client_errors_are_not_retried() {
    let server = Server::start(|request, _| {
        if request.body["messages"][1]["content"] == "Is it right?" {
            Reply::status(500)
        } else {
            Reply::status(401)
        }
    });
    let cache = tempfile::tempdir().unwrap();
    let judge = provider(&server, "max_retries: 2", &cache);
    match judge.chat(&question()).unwrap_err() {
        ProviderError::Status {
            status,
            requests,
            excerpt,
            ..
        } => {
            assert_eq!((status, requests), (500, 3));
            common::assert_contains(&excerpt, &["scripted status 500"]);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(server.count(), 3);
    let unauthorized = judge.chat(&[Message::user("other")]).unwrap_err();
    assert!(
        matches!(
            unauthorized,
            ProviderError::Status {
                status: 401,
                requests: 1,
                ..
            }
        ),
        "{unauthorized:?}"
    );
    assert_eq!(server.count(), 4);
    assert!(
        std::fs::read_dir(cache.path()).unwrap().next().is_none(),
        "failures are not cached"
    );
}

#[test]
fn a_refused_connection_is_retried_then_reported() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config: ProviderConfig = serde_norway::from_str(&format!(
        "{{base_url: 'http://127.0.0.1:{port}/v1', model: m, backoff_ms: 1, max_retries: 1}}"
    ))
    .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let error = Provider::new(ProviderKind::Judge, &config, cache.path())
        .unwrap()
        .chat(&question())
        .unwrap_err();
    assert!(
        matches!(error, ProviderError::Transport { requests: 2, .. }),
        "{error:?}"
    );
}

#[test]
fn concurrent_requests_never_exceed_the_limit() {
    let server = Server::start(|request, _| {
        Reply::chat(
            request.body["messages"][0]["content"].as_str().unwrap(),
            1,
            1,
        )
        .delayed(Duration::from_millis(150))
    });
    let cache = tempfile::tempdir().unwrap();
    let judge = provider(&server, "concurrency: 2", &cache);
    std::thread::scope(|scope| {
        for i in 0..8 {
            let judge = &judge;
            scope.spawn(move || {
                let reply = judge.chat(&[Message::user(format!("q{i}"))]).unwrap();
                assert_eq!(reply.text, format!("q{i}"));
            });
        }
    });
    assert_eq!(server.count(), 8);
    assert!(server.max_in_flight() <= 2, "{}", server.max_in_flight());
    assert_eq!(judge.stats().requests, 8);
}

#[test]
fn embeddings_are_batched_deduplicated_ordered_and_cached_per_text() {
    let server = Server::start(|request, _| embeddings_reply(request));
    let cache = tempfile::tempdir().unwrap();
    let embedder = Provider::new(
        ProviderKind::Embeddings,
        &config(&server, "batch_size: 2"),
        cache.path(),
    )
    .unwrap();
    let texts: Vec<String> = ["singer", "concert", "singer", "stadium", "age"]
        .map(String::from)
        .to_vec();
    let vectors = embedder.embed(&texts).unwrap();
    let expected: Vec<Vec<f32>> = texts.iter().map(|t| toy_embedding(t)).collect();
    assert_eq!(vectors, expected);
    let batches: Vec<serde_json::Value> = server
        .requests()
        .iter()
        .map(|r| r.body["input"].clone())
        .collect();
    assert_eq!(
        batches,
        [
            serde_json::json!(["singer", "concert"]),
            serde_json::json!(["stadium", "age"])
        ]
    );
    assert!(server
        .requests()
        .iter()
        .all(|r| r.path == "/v1/embeddings" && r.body["model"] == "test-model"));

    let more: Vec<String> = ["age", "name", "singer"].map(String::from).to_vec();
    assert_eq!(
        embedder.embed(&more).unwrap(),
        more.iter().map(|t| toy_embedding(t)).collect::<Vec<_>>()
    );
    assert_eq!(server.count(), 3);
    assert_eq!(
        server.requests()[2].body["input"],
        serde_json::json!(["name"])
    );

    let fresh = Provider::new(
        ProviderKind::Embeddings,
        &config(&server, "batch_size: 2"),
        cache.path(),
    )
    .unwrap();
    assert_eq!(fresh.embed(&texts).unwrap(), expected);
    assert_eq!(server.count(), 3, "a re-run is served from the cache");
    assert_eq!(fresh.stats().requests, 0);
    assert!(fresh.embed(&[]).unwrap().is_empty());
}

#[test]
fn without_a_block_or_a_key_the_provider_is_unavailable_with_the_reason() {
    let none = Providers::new(None, None, &sqlgate::providers::CacheTrust::All);
    assert_eq!(
        none.judge().unwrap_err(),
        "no `judge:` provider is configured"
    );
    assert_eq!(
        none.embeddings().unwrap_err(),
        "no `embeddings:` provider is configured"
    );
    let block: ProviderConfig = serde_norway::from_str(
        "{base_url: 'http://127.0.0.1:9/v1', model: m, api_key_env: SQLGATE_TEST_KEY_NEVER_SET}",
    )
    .unwrap();
    let keyless = Providers::new(
        Some(&block),
        Some(&block),
        &sqlgate::providers::CacheTrust::All,
    );
    assert_eq!(
        keyless.judge().unwrap_err(),
        "environment variable `SQLGATE_TEST_KEY_NEVER_SET` (named by `judge.api_key_env`) is not set"
    );
    assert!(keyless
        .embeddings()
        .unwrap_err()
        .contains("`embeddings.api_key_env`"));
}

#[test]
fn config_blocks_resolve_their_cache_beside_the_config_and_reject_unknown_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sqlgate.yml");
    let base = "dataset: { gold: g.sql, databases: . }\npredictions: [{ path: p.txt }]\n";
    let text = format!(
        "{base}judge: {{ base_url: 'http://127.0.0.1:1/v1', model: gpt-4o, api_key_env: K, concurrency: 8 }}\n\
         embeddings: {{ base_url: 'http://127.0.0.1:1/v1', model: e, cache_dir: /tmp/emb }}\n"
    );
    use sqlgate::engine::registry::Engines;
    use sqlgate::input::config::Config;
    let config = Config::parse(&text, &path, &Engines).unwrap();
    let judge = config.judge.as_ref().unwrap();
    assert_eq!(
        judge.cache_dir.as_deref(),
        Some(dir.path().join(".sqlgate/cache/judge").as_path())
    );
    assert_eq!(
        (judge.concurrency, judge.max_retries, judge.timeout_ms),
        (8, 4, 60_000)
    );
    assert_eq!(
        config.embeddings.unwrap().cache_dir.unwrap(),
        std::path::Path::new("/tmp/emb")
    );
    let unknown = format!("{base}judge: {{ base_url: 'http://x/v1', model: m, temperature: 1 }}\n");
    let error = Config::parse(&unknown, &path, &Engines).unwrap_err();
    common::assert_contains(&error.to_string(), &["unknown field `temperature`"]);
    let bad = format!("{base}judge: {{ base_url: 'http://x/v1', model: m, concurrency: 0 }}\n");
    let error = Config::parse(&bad, &path, &Engines).unwrap_err();
    common::assert_contains(&error.to_string(), &["`judge.concurrency`"]);
}

#[test]
fn a_success_status_with_a_body_outside_the_protocol_is_an_error_and_not_cached() {
    let server = Server::start(|_, _| Reply::ok(serde_json::json!({"choices": []})));
    let cache = tempfile::tempdir().unwrap();
    let judge = provider(&server, "", &cache);
    let error = judge.chat(&question()).unwrap_err();
    assert!(
        matches!(&error, ProviderError::Protocol { requests: 1, message, .. } if message.contains("choices[0].message.content")),
        "{error:?}"
    );
    judge.chat(&question()).unwrap_err();
    assert_eq!(server.count(), 2);
}
