//! Settings of the model providers (`judge:` and `embeddings:` blocks): what the config says,
//! validated; the HTTP clients that use them live in `sqlgate::providers` (the gate).

use serde::Deserialize;
use std::path::PathBuf;

/// One `judge:` or `embeddings:` block of the config.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(
    expecting = "a model provider section: a map with `base_url`, `model` and `api_key_env` (docs/CONFIG.md)"
)]
pub struct ProviderConfig {
    /// API root including the version path, e.g. `https://api.openai.com/v1` or
    /// `http://localhost:11434/v1`; `/chat/completions` and `/embeddings` are appended.
    pub base_url: String,
    /// Model name sent with every request.
    pub model: String,
    /// Environment variable holding the API key (sent as a bearer token); omitted: no key is
    /// sent (local servers).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Limit per HTTP request, connection to last byte.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// Retries after the first attempt on 429, 408, 5xx, timeouts and connection errors.
    #[serde(default = "default_max_retries")]
    pub max_retries: u32,
    /// Wait before the first retry; doubled for each further one (with jitter), unless the
    /// server sends `Retry-After`.
    #[serde(default = "default_backoff_ms")]
    pub backoff_ms: u64,
    /// Most requests in flight at once, across all worker threads.
    #[serde(default = "default_concurrency")]
    pub concurrency: usize,
    /// Texts per `/embeddings` request.
    #[serde(default = "default_batch_size")]
    pub batch_size: usize,
    /// Cache folder; default `.sqlgate/cache/<judge|embeddings>` beside the config file.
    #[serde(default)]
    pub cache_dir: Option<PathBuf>,
    /// Price of one million prompt (input) tokens, for the cost totals.
    #[serde(default)]
    pub price_per_million_prompt_tokens: Option<f64>,
    /// Price of one million completion (output) tokens, for the cost totals.
    #[serde(default)]
    pub price_per_million_completion_tokens: Option<f64>,
}

fn default_timeout_ms() -> u64 {
    60_000
}

fn default_max_retries() -> u32 {
    4
}

fn default_backoff_ms() -> u64 {
    500
}

fn default_concurrency() -> usize {
    4
}

fn default_batch_size() -> usize {
    64
}

impl ProviderConfig {
    /// Checks the values a typo could make nonsensical; `key` is the block's name for messages.
    pub fn validate(&self, key: &str) -> Result<(), String> {
        let scheme_ok = ["http://", "https://"]
            .iter()
            .any(|s| self.base_url.starts_with(s));
        if !scheme_ok {
            return Err(format!(
                "`{key}.base_url` must start with http:// or https://, not `{}`",
                self.base_url
            ));
        }
        if let Some(name) = self
            .api_key_env
            .as_deref()
            .filter(|n| is_reserved_variable(n))
        {
            return Err(format!(
                "`{key}.api_key_env`: `{name}` holds a GitHub or runner credential, which is never \
                 sent to a provider; name a variable holding the provider's own key"
            ));
        }
        if self.model.trim().is_empty() {
            return Err(format!("`{key}.model` must not be empty"));
        }
        if self.timeout_ms == 0 || self.concurrency == 0 || self.batch_size == 0 {
            return Err(format!(
                "`{key}.timeout_ms`, `{key}.concurrency` and `{key}.batch_size` must be positive"
            ));
        }
        let prices = [
            self.price_per_million_prompt_tokens,
            self.price_per_million_completion_tokens,
        ];
        if prices
            .iter()
            .flatten()
            .any(|p| !(p.is_finite() && *p >= 0.0))
        {
            return Err(format!("`{key}` token prices must be non-negative numbers"));
        }
        Ok(())
    }
}

/// Whether `name` is a GitHub or runner variable a provider key may not be read from.
fn is_reserved_variable(name: &str) -> bool {
    let upper = name.trim().to_ascii_uppercase();
    upper == "GITHUB_TOKEN"
        || upper == "SQLGATE_GITHUB_TOKEN"
        || ["ACTIONS_", "GITHUB_", "RUNNER_"]
            .iter()
            .any(|prefix| upper.starts_with(prefix))
}

/// Which service a provider is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    /// Chat completions for the LLM judge.
    Judge,
    /// Embeddings for semantic metrics.
    Embeddings,
}

impl ProviderKind {
    /// The config key (and default cache folder name).
    pub fn key(self) -> &'static str {
        match self {
            ProviderKind::Judge => "judge",
            ProviderKind::Embeddings => "embeddings",
        }
    }
}
