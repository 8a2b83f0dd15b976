//! A scripted OpenAI-compatible server on 127.0.0.1 for provider, judge and embedding tests.
//!
//! Every request is recorded; a handler chooses the reply from the request and how many
//! identical requests (same path and body) came before it, so scripts such as "first a 429,
//! then success" hold whatever order parallel workers send in.

use serde_json::Value as Json;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// URL path, e.g. `/v1/chat/completions`.
    pub path: String,
    /// The JSON body.
    pub body: Json,
    /// The `Authorization` header, if any.
    pub authorization: Option<String>,
}

/// What the server answers.
#[derive(Debug, Clone)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// Response body.
    pub body: String,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// Wait before answering.
    pub delay: Duration,
}

impl Reply {
    /// 200 with a JSON body.
    pub fn ok(body: Json) -> Reply {
        Reply {
            status: 200,
            body: body.to_string(),
            headers: Vec::new(),
            delay: Duration::ZERO,
        }
    }

    /// A chat completion whose assistant text is `content`, with token usage.
    pub fn chat(content: &str, prompt_tokens: u64, completion_tokens: u64) -> Reply {
        Reply::ok(serde_json::json!({
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens},
        }))
    }

    /// An error status with a JSON error body.
    pub fn status(status: u16) -> Reply {
        Reply {
            status,
            body: format!(r#"{{"error":{{"message":"scripted status {status}"}}}}"#),
            headers: Vec::new(),
            delay: Duration::ZERO,
        }
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Answers only after `delay`.
    pub fn delayed(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }
}

/// Chooses the reply to a request that `seen_before` identical requests preceded.
pub type Handler = dyn Fn(&Recorded, usize) -> Reply + Send + Sync;

/// A running server; stops when dropped.
pub struct Server {
    /// `http://127.0.0.1:PORT/v1`, the `base_url` to configure.
    pub base_url: String,
    server: Arc<tiny_http::Server>,
    log: Arc<Mutex<Vec<Recorded>>>,
    max_in_flight: Arc<AtomicUsize>,
}

impl Server {
    /// Starts a server answering with `handler`, one thread per request.
    pub fn start(handler: impl Fn(&Recorded, usize) -> Reply + Send + Sync + 'static) -> Server {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("bind 127.0.0.1"));
        let port = server.server_addr().to_ip().expect("an IP address").port();
        let log: Arc<Mutex<Vec<Recorded>>> = Arc::default();
        let seen: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
        let in_flight = Arc::new(AtomicUsize::new(0));
        let max_in_flight = Arc::new(AtomicUsize::new(0));
        let handler: Arc<Handler> = Arc::new(handler);
        {
            let (server, log, max_in_flight) = (server.clone(), log.clone(), max_in_flight.clone());
            std::thread::spawn(move || {
                for mut request in server.incoming_requests() {
                    let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                    max_in_flight.fetch_max(now, Ordering::SeqCst);
                    let mut text = String::new();
                    let _ = request.as_reader().read_to_string(&mut text);
                    let recorded = Recorded {
                        path: request.url().to_string(),
                        body: serde_json::from_str(&text).unwrap_or(Json::Null),
                        authorization: request
                            .headers()
                            .iter()
                            .find(|h| h.field.equiv("Authorization"))
                            .map(|h| h.value.to_string()),
                    };
                    let count = {
                        let mut seen = seen.lock().unwrap();
                        let entry = seen
                            .entry(format!("{}\0{text}", recorded.path))
                            .or_default();
                        *entry += 1;
                        *entry - 1
                    };
                    log.lock().unwrap().push(recorded.clone());
                    let (handler, in_flight) = (handler.clone(), in_flight.clone());
                    std::thread::spawn(move || {
                        let reply = handler(&recorded, count);
                        std::thread::sleep(reply.delay);
                        let mut response = tiny_http::Response::from_string(reply.body)
                            .with_status_code(reply.status);
                        for (name, value) in reply.headers {
                            response.add_header(
                                tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes())
                                    .unwrap(),
                            );
                        }
                        in_flight.fetch_sub(1, Ordering::SeqCst);
                        let _ = request.respond(response);
                    });
                }
            });
        }
        Server {
            base_url: format!("http://127.0.0.1:{port}/v1"),
            server,
            log,
            max_in_flight,
        }
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.log.lock().unwrap().clone()
    }

    /// Number of requests received so far.
    pub fn count(&self) -> usize {
        self.log.lock().unwrap().len()
    }

    /// The most requests that were being answered at once.
    pub fn max_in_flight(&self) -> usize {
        self.max_in_flight.load(Ordering::SeqCst)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.server.unblock();
    }
}

/// A deterministic embedding of `text`: its length, its count of vowels and its first byte.
pub fn toy_embedding(text: &str) -> Vec<f32> {
    let vowels = text.chars().filter(|c| "aeiouAEIOU".contains(*c)).count();
    let first = text.bytes().next().unwrap_or(0);
    vec![text.len() as f32, vowels as f32, f32::from(first)]
}

/// An `/embeddings` reply for the request's `input` list, using [`toy_embedding`]; items are
/// listed in reverse order so clients must sort by `index`.
pub fn embeddings_reply(request: &Recorded) -> Reply {
    let inputs = request.body["input"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let data: Vec<Json> = inputs
        .iter()
        .enumerate()
        .rev()
        .map(|(i, text)| {
            serde_json::json!({"object": "embedding", "index": i, "embedding": toy_embedding(text.as_str().unwrap_or(""))})
        })
        .collect();
    Reply::ok(
        serde_json::json!({"object": "list", "data": data, "usage": {"prompt_tokens": inputs.len(), "total_tokens": inputs.len()}}),
    )
}
