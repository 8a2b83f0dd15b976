//! OpenAI-compatible HTTP providers shared by the metrics that need a model: chat completions
//! for the LLM judge (`judge:`) and embeddings for the semantic metrics (`embeddings:`).
//!
//! A provider is a blocking `ureq` client with a per-request timeout, retries with exponential
//! backoff on 429 / 408 / 5xx / timeouts / connection errors (honouring `Retry-After`), a limit
//! on concurrent requests shared by every worker thread, and an on-disk cache keyed by a SHA-256
//! of what is sent, so an unchanged re-run makes no HTTP call at all. The cache folder is
//! state a pull request can edit (or an `actions/cache` restore can bring from another branch),
//! so its entries are trusted only when [`CacheTrust`] says so: in a pull-request run, only
//! entries whose digest the base commit's baseline recorded are used, and the provider is asked
//! again for any other. A provider that is not
//! configured, or whose API key variable is absent, is [`Providers`]' reason string: the metric
//! reports `unavailable` with it, never an approximation.

mod cache;

use crate::input::provider_config::{ProviderConfig, ProviderKind};
use cache::Cache;
pub use cache::{entry_digest, CacheTrust, Failures};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value as Json};
use sha2::{Digest, Sha256};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Longest wait between two attempts, whatever `Retry-After` or the backoff asks for.
const MAX_WAIT: Duration = Duration::from_secs(60);
/// Largest response body read (a big embedding batch is a few MiB).
const MAX_RESPONSE_BYTES: u64 = 64 << 20;
/// How much of an error response is quoted in messages.
const ERROR_EXCERPT_CHARS: usize = 300;

/// The cost of `usage` at the prices `config` sets; `None` when it sets no price. (A function,
/// not a method: `ProviderConfig` is the input crate's, and the prices mean something here.)
pub fn cost(config: &ProviderConfig, usage: Usage) -> Option<f64> {
    if config.price_per_million_prompt_tokens.is_none()
        && config.price_per_million_completion_tokens.is_none()
    {
        return None;
    }
    let per_token = |price: Option<f64>| price.unwrap_or(0.0) / 1e6;
    Some(
        usage.prompt_tokens as f64 * per_token(config.price_per_million_prompt_tokens)
            + usage.completion_tokens as f64
                * per_token(config.price_per_million_completion_tokens),
    )
}

/// Token counts as the provider reported them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    /// Input tokens.
    pub prompt_tokens: u64,
    /// Output tokens.
    pub completion_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
    }
}

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Message {
    /// `system`, `user` or `assistant`.
    pub role: &'static str,
    /// The text.
    pub content: String,
}

impl Message {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Message {
        Message {
            role: "system",
            content: content.into(),
        }
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Message {
        Message {
            role: "user",
            content: content.into(),
        }
    }

    /// An assistant message (a previous reply, when asking for a correction).
    pub fn assistant(content: impl Into<String>) -> Message {
        Message {
            role: "assistant",
            content: content.into(),
        }
    }
}

/// A chat completion.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatReply {
    /// The assistant's text.
    pub text: String,
    /// Tokens the provider reported for this completion (also for a cached one).
    pub usage: Usage,
    /// True when the reply came from the on-disk cache (nothing was sent or billed).
    pub cached: bool,
    /// HTTP requests made for it (0 when cached; more than 1 after retries).
    pub requests: u32,
}

/// Why a provider call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProviderError {
    /// The server answered with an error status that retrying does not fix (or retries ran out).
    #[error("{url} answered HTTP {status} after {requests} request(s): {excerpt}")]
    Status {
        /// Endpoint.
        url: String,
        /// HTTP status.
        status: u16,
        /// Requests made.
        requests: u32,
        /// Start of the response body.
        excerpt: String,
    },
    /// No usable answer: timeouts or connection errors until retries ran out, or a fatal
    /// transport error.
    #[error("{url}: {message} after {requests} request(s)")]
    Transport {
        /// Endpoint.
        url: String,
        /// What went wrong last.
        message: String,
        /// Requests made.
        requests: u32,
    },
    /// The response is not what the OpenAI protocol promises.
    #[error("{url}: unexpected response: {message}")]
    Protocol {
        /// Endpoint.
        url: String,
        /// What is missing or wrong.
        message: String,
        /// Requests made.
        requests: u32,
    },
}

impl ProviderError {
    /// HTTP requests the failed call made.
    pub fn requests(&self) -> u32 {
        match self {
            ProviderError::Status { requests, .. }
            | ProviderError::Transport { requests, .. }
            | ProviderError::Protocol { requests, .. } => *requests,
        }
    }
}

/// Counters of one provider over a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProviderStats {
    /// HTTP requests sent (retries included).
    pub requests: u64,
    /// Answers served from the cache.
    pub cache_hits: u64,
}

/// An OpenAI-compatible endpoint with its key, limits and cache.
pub struct Provider {
    config: ProviderConfig,
    api_key: Option<String>,
    agent: ureq::Agent,
    permits: Semaphore,
    cache: Cache,
    requests: AtomicU64,
    cache_hits: AtomicU64,
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Provider")
            .field("base_url", &self.config.base_url)
            .field("model", &self.config.model)
            .finish_non_exhaustive()
    }
}

impl Provider {
    /// A provider for `config` whose cache lives in `cache_dir`; `Err` is why it is unavailable
    /// (its API key variable is absent or empty).
    pub fn new(
        kind: ProviderKind,
        config: &ProviderConfig,
        cache_dir: &Path,
    ) -> Result<Self, String> {
        let api_key = match &config.api_key_env {
            None => None,
            Some(var) => match std::env::var(var) {
                Ok(key) if !key.trim().is_empty() => Some(key.trim().to_string()),
                _ => {
                    return Err(format!(
                        "environment variable `{var}` (named by `{}.api_key_env`) is not set",
                        kind.key()
                    ))
                }
            },
        };
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_millis(config.timeout_ms)))
            .http_status_as_error(false)
            .user_agent(concat!("sqlgate/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Ok(Provider {
            config: config.clone(),
            api_key,
            agent,
            permits: Semaphore::new(config.concurrency),
            cache: Cache::new(cache_dir),
            requests: AtomicU64::new(0),
            cache_hits: AtomicU64::new(0),
        })
    }

    /// The same provider, using only the cache entries `trust` admits.
    pub fn with_cache_trust(mut self, trust: CacheTrust) -> Self {
        self.cache.set_trust(trust);
        self
    }

    /// The digests of every cache entry this run used or wrote (see [`entry_digest`]): what a
    /// baseline records so that pull-request runs may use those entries.
    pub fn cache_entries(&self) -> BTreeSet<String> {
        self.cache.entries()
    }

    /// Cache entries found but not used, because `CacheTrust` did not admit them or they were
    /// not regular files of the cache folder; the provider was asked instead.
    pub fn untrusted_entries(&self) -> u64 {
        self.cache.untrusted()
    }

    /// Cache entries that could not be read (symlinks, not regular files, over the bound) and
    /// those that could not be written, each counted with the first one's error, so a run
    /// reports them in one line each.
    pub fn cache_failures(&self) -> (Failures, Failures) {
        self.cache.failures()
    }

    /// The configuration this provider was built from.
    pub fn config(&self) -> &ProviderConfig {
        &self.config
    }

    /// Requests sent and cache hits so far.
    pub fn stats(&self) -> ProviderStats {
        ProviderStats {
            requests: self.requests.load(Ordering::Relaxed),
            cache_hits: self.cache_hits.load(Ordering::Relaxed),
        }
    }

    /// A chat completion at temperature 0 (`/chat/completions`), from the cache when the
    /// same request was answered before.
    pub fn chat(&self, messages: &[Message]) -> Result<ChatReply, ProviderError> {
        let url = self.endpoint("chat/completions");
        let body = json!({
            "model": self.config.model,
            "messages": messages,
            "temperature": 0,
        });
        let body = serde_json::to_string(&body).expect("a JSON value serializes");
        let key = cache_key(&url, &body);
        if let Some(reply) = self.cache.get(&key).and_then(|t| parse_chat(&t).ok()) {
            self.cache_hits.fetch_add(1, Ordering::Relaxed);
            return Ok(ChatReply {
                cached: true,
                requests: 0,
                ..reply
            });
        }
        let (text, requests) = self.post(&url, &body)?;
        let reply = parse_chat(&text).map_err(|message| ProviderError::Protocol {
            url: url.clone(),
            message,
            requests,
        })?;
        self.cache.put(&key, &text);
        Ok(ChatReply { requests, ..reply })
    }

    /// One embedding per text (`/embeddings`), in order. Each text is cached on its own (keyed
    /// by the single-text request body), so only texts never embedded before are sent, in
    /// batches of `batch_size`, each distinct text once.
    pub fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ProviderError> {
        let url = self.endpoint("embeddings");
        let key_of = |text: &str| {
            let single = json!({"model": self.config.model, "input": [text]});
            cache_key(&url, &single.to_string())
        };
        let mut known: HashMap<&str, Vec<f32>> = HashMap::new();
        let mut missing: Vec<&str> = Vec::new();
        let mut seen: HashSet<&str> = HashSet::new();
        for text in texts {
            if !seen.insert(text.as_str()) {
                continue;
            }
            let cached = self
                .cache
                .get(&key_of(text))
                .and_then(|t| serde_json::from_str::<Vec<f32>>(&t).ok());
            match cached {
                Some(vector) => {
                    self.cache_hits.fetch_add(1, Ordering::Relaxed);
                    known.insert(text, vector);
                }
                None => missing.push(text),
            }
        }
        for batch in missing.chunks(self.config.batch_size) {
            let body = json!({"model": self.config.model, "input": batch}).to_string();
            let (text, requests) = self.post(&url, &body)?;
            let vectors = parse_embeddings(&text, batch.len()).map_err(|message| {
                ProviderError::Protocol {
                    url: url.clone(),
                    message,
                    requests,
                }
            })?;
            for (input, vector) in batch.iter().zip(vectors) {
                let stored = serde_json::to_string(&vector).expect("floats serialize");
                self.cache.put(&key_of(input), &stored);
                known.insert(input, vector);
            }
        }
        Ok(texts.iter().map(|t| known[t.as_str()].clone()).collect())
    }

    fn endpoint(&self, path: &str) -> String {
        format!("{}/{path}", self.config.base_url.trim_end_matches('/'))
    }

    /// POSTs `body` with retries; returns the response text and the number of requests made.
    fn post(&self, url: &str, body: &str) -> Result<(String, u32), ProviderError> {
        let mut requests = 0;
        loop {
            requests += 1;
            let attempt = {
                let _permit = self.permits.acquire();
                self.requests.fetch_add(1, Ordering::Relaxed);
                self.send_once(url, body)
            };
            let failure = match attempt {
                Ok(text) => return Ok((text, requests)),
                Err(failure) => failure,
            };
            let retries_left = requests <= self.config.max_retries;
            match failure {
                Failure::Retryable { retry_after, .. } if retries_left => {
                    std::thread::sleep(
                        retry_after
                            .unwrap_or_else(|| self.backoff(requests))
                            .min(MAX_WAIT),
                    );
                }
                Failure::Retryable {
                    status: Some(status),
                    message,
                    ..
                }
                | Failure::Fatal {
                    status: Some(status),
                    message,
                } => {
                    return Err(ProviderError::Status {
                        url: url.to_string(),
                        status,
                        requests,
                        excerpt: message,
                    })
                }
                Failure::Retryable { message, .. } | Failure::Fatal { message, .. } => {
                    return Err(ProviderError::Transport {
                        url: url.to_string(),
                        message,
                        requests,
                    })
                }
            }
        }
    }

    /// The exponential backoff before retry number `retry` (1-based), with jitter in [50%, 100%].
    fn backoff(&self, retry: u32) -> Duration {
        let base =
            self.config.backoff_ms as f64 * 2f64.powi(retry.saturating_sub(1).min(16) as i32);
        Duration::from_secs_f64(base * (0.5 + 0.5 * fastrand::f64()) / 1000.0)
    }

    fn send_once(&self, url: &str, body: &str) -> Result<String, Failure> {
        let mut request = self
            .agent
            .post(url)
            .header("Content-Type", "application/json");
        if let Some(key) = &self.api_key {
            request = request.header("Authorization", &format!("Bearer {key}"));
        }
        let mut response = request.send(body).map_err(Failure::from_transport)?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let text = response
            .body_mut()
            .with_config()
            .limit(MAX_RESPONSE_BYTES)
            .read_to_string()
            .map_err(Failure::from_transport)?;
        let text = crate::util::scrub::scrub(&text);
        if (200..300).contains(&status) {
            return Ok(text);
        }
        let message = excerpt(&text);
        if status == 429 || status == 408 || status >= 500 {
            Err(Failure::Retryable {
                status: Some(status),
                message,
                retry_after,
            })
        } else {
            Err(Failure::Fatal {
                status: Some(status),
                message,
            })
        }
    }
}

/// One failed attempt.
enum Failure {
    /// Worth another attempt (rate limit, server error, timeout, connection problem).
    Retryable {
        status: Option<u16>,
        message: String,
        retry_after: Option<Duration>,
    },
    /// Retrying cannot help (bad request, authentication, TLS, bad URL).
    Fatal {
        status: Option<u16>,
        message: String,
    },
}

impl Failure {
    fn from_transport(error: ureq::Error) -> Failure {
        let message = match &error {
            ureq::Error::Timeout(_) => "timed out".to_string(),
            other => crate::util::scrub::scrub_cut(&other.to_string(), ERROR_EXCERPT_CHARS),
        };
        let retryable = matches!(
            error,
            ureq::Error::Timeout(_)
                | ureq::Error::Io(_)
                | ureq::Error::ConnectionFailed
                | ureq::Error::HostNotFound
                | ureq::Error::Protocol(_)
                | ureq::Error::BodyStalled
        );
        if retryable {
            Failure::Retryable {
                status: None,
                message,
                retry_after: None,
            }
        } else {
            Failure::Fatal {
                status: None,
                message,
            }
        }
    }
}

/// `Retry-After` as seconds or as an HTTP date.
fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(std::time::SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

fn excerpt(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(ERROR_EXCERPT_CHARS) {
        Some((cut, _)) => format!("{}...", &flat[..cut]),
        None => flat,
    }
}

/// The assistant text and usage of a `/chat/completions` response.
fn parse_chat(text: &str) -> Result<ChatReply, String> {
    let json: Json = serde_json::from_str(text).map_err(|e| format!("not JSON ({e})"))?;
    let content = json
        .pointer("/choices/0/message/content")
        .and_then(Json::as_str)
        .ok_or("no `choices[0].message.content` text")?;
    Ok(ChatReply {
        text: content.to_string(),
        usage: parse_usage(&json),
        cached: false,
        requests: 0,
    })
}

/// Token counts of a response; absent counts (some local servers omit them) are 0.
fn parse_usage(json: &Json) -> Usage {
    let count = |key: &str| {
        json.pointer(&format!("/usage/{key}"))
            .and_then(Json::as_u64)
            .unwrap_or(0)
    };
    Usage {
        prompt_tokens: count("prompt_tokens"),
        completion_tokens: count("completion_tokens"),
    }
}

/// The vectors of an `/embeddings` response, ordered by their `index`.
fn parse_embeddings(text: &str, expected: usize) -> Result<Vec<Vec<f32>>, String> {
    #[derive(Deserialize)]
    struct Item {
        index: usize,
        embedding: Vec<f32>,
    }
    #[derive(Deserialize)]
    struct Response {
        data: Vec<Item>,
    }
    let response: Response =
        serde_json::from_str(text).map_err(|e| format!("not an embeddings response ({e})"))?;
    let mut slots: Vec<Option<Vec<f32>>> = vec![None; expected];
    for item in response.data {
        match slots.get_mut(item.index) {
            Some(slot @ None) if !item.embedding.is_empty() => *slot = Some(item.embedding),
            _ => return Err(format!("bad or repeated embedding index {}", item.index)),
        }
    }
    slots
        .into_iter()
        .enumerate()
        .map(|(i, v)| v.ok_or_else(|| format!("no embedding for input {i} of {expected}")))
        .collect()
}

/// SHA-256 of the endpoint and the exact request body (which names the model).
fn cache_key(url: &str, body: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(url.as_bytes());
    hasher.update([0]);
    hasher.update(body.as_bytes());
    crate::util::digest::hex(&hasher.finalize())
}

/// A counting semaphore: at most `capacity` holders at once, across threads.
struct Semaphore {
    free: Mutex<usize>,
    released: Condvar,
}

/// A held slot of a [`Semaphore`], returned on drop.
struct Permit<'a>(&'a Semaphore);

impl Semaphore {
    fn new(capacity: usize) -> Self {
        Semaphore {
            free: Mutex::new(capacity),
            released: Condvar::new(),
        }
    }

    fn acquire(&self) -> Permit<'_> {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        while *free == 0 {
            free = self.released.wait(free).unwrap_or_else(|p| p.into_inner());
        }
        *free -= 1;
        Permit(self)
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        self.0.released.notify_one();
    }
}

/// The configured providers of a run, each ready or with the reason it is unavailable.
#[derive(Debug, Clone)]
pub struct Providers {
    judge: Result<Arc<Provider>, String>,
    embeddings: Result<Arc<Provider>, String>,
}

impl Default for Providers {
    fn default() -> Self {
        Providers {
            judge: Err(not_configured(ProviderKind::Judge)),
            embeddings: Err(not_configured(ProviderKind::Embeddings)),
        }
    }
}

fn not_configured(kind: ProviderKind) -> String {
    format!("no `{}:` provider is configured", kind.key())
}

impl Providers {
    /// Builds the providers a config names, using the cache entries `trust` admits. Cache
    /// folders come from `cache_dir`, which [`crate::input::config::Config`] resolves (default
    /// `.sqlgate/cache/<kind>` beside the config).
    pub fn new(
        judge: Option<&ProviderConfig>,
        embeddings: Option<&ProviderConfig>,
        trust: &CacheTrust,
    ) -> Providers {
        let build = |kind: ProviderKind, config: Option<&ProviderConfig>| {
            let config = config.ok_or_else(|| not_configured(kind))?;
            let default_dir = Path::new(".sqlgate/cache").join(kind.key());
            let dir = config.cache_dir.as_deref().unwrap_or(&default_dir);
            Provider::new(kind, config, dir).map(|p| Arc::new(p.with_cache_trust(trust.clone())))
        };
        Providers {
            judge: build(ProviderKind::Judge, judge),
            embeddings: build(ProviderKind::Embeddings, embeddings),
        }
    }

    /// The judge, or why it is unavailable.
    pub fn judge(&self) -> Result<&Provider, &str> {
        self.judge.as_deref().map_err(String::as_str)
    }

    /// The embedding provider, or why it is unavailable.
    pub fn embeddings(&self) -> Result<&Provider, &str> {
        self.embeddings.as_deref().map_err(String::as_str)
    }

    /// The configured providers with their kinds.
    pub fn configured(&self) -> impl Iterator<Item = (ProviderKind, &Provider)> {
        [
            (ProviderKind::Judge, &self.judge),
            (ProviderKind::Embeddings, &self.embeddings),
        ]
        .into_iter()
        .filter_map(|(kind, provider)| Some((kind, provider.as_deref().ok()?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_takes_seconds_or_a_date() {
        assert_eq!(parse_retry_after("2"), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after(" 0.5 "), Some(Duration::from_millis(500)));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon"), None);
        assert_eq!(parse_retry_after("-1"), None);
    }

    #[test]
    fn embeddings_are_ordered_by_index_and_checked() {
        let text = r#"{"data":[{"index":1,"embedding":[2.0]},{"index":0,"embedding":[1.0,0.5]}]}"#;
        assert_eq!(
            parse_embeddings(text, 2).unwrap(),
            vec![vec![1.0, 0.5], vec![2.0]]
        );
        assert!(parse_embeddings(text, 3).unwrap_err().contains("input 2"));
        assert!(parse_embeddings(r#"{"data":[{"index":5,"embedding":[1]}]}"#, 1).is_err());
    }

    #[test]
    fn cost_needs_a_price() {
        let mut config: ProviderConfig =
            serde_norway::from_str("{base_url: 'http://x/v1', model: m}").unwrap();
        let usage = Usage {
            prompt_tokens: 2_000_000,
            completion_tokens: 1_000_000,
        };
        assert_eq!(cost(&config, usage), None);
        config.price_per_million_prompt_tokens = Some(2.5);
        config.price_per_million_completion_tokens = Some(10.0);
        assert_eq!(cost(&config, usage), Some(15.0));
        assert!(config.validate("judge").is_ok());
        config.base_url = "localhost:1234".into();
        assert!(config
            .validate("judge")
            .unwrap_err()
            .contains("judge.base_url"));
    }
}
