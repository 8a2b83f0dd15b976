//! Credential scrubbing for every text that came from a remote server or from SQLite before
//! sqlgate prints, writes or posts it: known token shapes (`ghp_`, `gho_`, `ghs_`, `ghu_`,
//! `ghr_`, `github_pat_`, `sk-`), bearer strings, database URLs (`postgresql://...`,
//! `mysql://...`), the literal values of the sensitive environment variables present in this
//! process, and every secret registered with [`register_secret`] (a server URL read from
//! `dataset.engine.url_env`, its password) are replaced by `[redacted]`.

use regex::Regex;
use std::sync::{OnceLock, RwLock};

/// What replaces a credential.
pub const REDACTED: &str = "[redacted]";

/// Environment variables whose values are secrets wherever they appear.
const SENSITIVE_VARIABLES: [&str; 4] = [
    "GITHUB_TOKEN",
    "SQLGATE_GITHUB_TOKEN",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
];

/// Name fragments that mark other variables as secret (an `api_key_env`, say).
const SENSITIVE_FRAGMENTS: [&str; 5] = ["TOKEN", "SECRET", "PASSWORD", "API_KEY", "APIKEY"];

/// Values shorter than this are not scrubbed literally (they would redact ordinary words).
const MIN_SECRET_CHARS: usize = 6;

fn token_pattern() -> &'static Regex {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    PATTERN.get_or_init(|| {
        Regex::new(
            r"(?i:bearer|token)\s+[A-Za-z0-9._~+/=-]{8,}|(?:gh[pousr]_|github_pat_)[A-Za-z0-9_]+|sk-[A-Za-z0-9_-]{8,}|(?i:postgres(?:ql)?|mysql|mariadb)://\S+",
        )
        .expect("valid token pattern")
    })
}

/// The values of the sensitive environment variables present, longest first.
fn secret_values() -> &'static [String] {
    static VALUES: OnceLock<Vec<String>> = OnceLock::new();
    VALUES.get_or_init(|| {
        let mut values: Vec<String> = std::env::vars()
            .filter(|(name, _)| {
                let upper = name.to_ascii_uppercase();
                SENSITIVE_VARIABLES.contains(&upper.as_str())
                    || SENSITIVE_FRAGMENTS.iter().any(|f| upper.contains(f))
            })
            .map(|(_, value)| value.trim().to_string())
            .filter(|value| value.chars().count() >= MIN_SECRET_CHARS)
            .collect();
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        values.dedup();
        values
    })
}

/// Secrets learnt at run time (not from a variable name), longest first.
fn registered() -> &'static RwLock<Vec<String>> {
    static REGISTERED: OnceLock<RwLock<Vec<String>>> = OnceLock::new();
    REGISTERED.get_or_init(|| RwLock::new(Vec::new()))
}

/// Adds a secret that every later [`scrub`] redacts wherever it appears: a server URL read from
/// the variable `dataset.engine.url_env` names, and its password. Like variable values, a
/// secret shorter than six characters is not redacted literally (it would redact ordinary words
/// and numbers); URLs are redacted whole by their shape anyway.
pub fn register_secret(secret: &str) {
    if secret.chars().count() < MIN_SECRET_CHARS {
        return;
    }
    let mut secrets = registered().write().unwrap_or_else(|e| e.into_inner());
    if !secrets.iter().any(|s| s == secret) {
        secrets.push(secret.to_string());
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }
}

/// `text` without anything that looks like a credential.
pub fn scrub(text: &str) -> String {
    let mut clean = token_pattern().replace_all(text, REDACTED).into_owned();
    let learnt = registered().read().unwrap_or_else(|e| e.into_inner());
    for value in secret_values().iter().chain(learnt.iter()) {
        if clean.contains(value.as_str()) {
            clean = clean.replace(value.as_str(), REDACTED);
        }
    }
    clean
}

/// `text` scrubbed and cut to `max_chars` characters (an ellipsis marks the cut).
pub fn scrub_cut(text: &str, max_chars: usize) -> String {
    let clean = scrub(text);
    match clean.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}...", &clean[..cut]),
        None => clean,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_shapes_are_redacted() {
        let text = "a ghp_abcDEF123 b github_pat_11AA_bb c sk-proj-abcdefgh12 \
                    Authorization: Bearer abc.def-ghi_jkl ok";
        let clean = scrub(text);
        for secret in ["ghp_", "github_pat_", "sk-proj", "abc.def"] {
            assert!(!clean.contains(secret), "{clean}");
        }
        assert!(clean.starts_with("a [redacted] b"));
        assert!(clean.ends_with(" ok"));
        assert_eq!(scrub("{\"a\": \"ghs_x1\"}"), "{\"a\": \"[redacted]\"}");
    }

    #[test]
    fn server_urls_and_registered_secrets_are_redacted() {
        let clean = scrub("cannot reach postgresql://bird:s3cr3t@db:5432/bird now");
        assert_eq!(clean, "cannot reach [redacted] now");
        register_secret("pw9-long");
        register_secret("pw9");
        assert_eq!(
            scrub("password pw9-long rejected"),
            "password [redacted] rejected"
        );
        assert_eq!(scrub("pw9"), "pw9");
    }

    #[test]
    fn long_text_is_cut() {
        assert_eq!(scrub_cut("abcdef", 3), "abc...");
        assert_eq!(scrub_cut("abc", 3), "abc");
    }
}
