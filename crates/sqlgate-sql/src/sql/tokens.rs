//! The official tokenizer (`process_sql.tokenize`): single quotes become double quotes, quoted
//! values become opaque tokens, the rest is split by NLTK's `word_tokenize` rules and
//! lower-cased, and `!`/`>`/`<` followed by a separate `=` are joined.
//!
//! NLTK does not split on `=`, `+`, `-` or `/`, so `age=20` stays one token and the official
//! parser rejects it; reproducing that is why this is not a general SQL tokenizer.

use super::SqlError;
use regex::Regex;
use std::collections::HashMap;
use std::sync::OnceLock;

/// Tokens as the official parser sees them.
pub fn tokenize(query: &str) -> Result<Vec<String>, SqlError> {
    let text = query.replace('\'', "\"");
    let quotes: Vec<usize> = text.match_indices('"').map(|(i, _)| i).collect();
    if quotes.len() % 2 != 0 {
        return Err(SqlError("unexpected quote".into()));
    }
    let mut values: HashMap<String, String> = HashMap::new();
    let mut masked = String::with_capacity(text.len());
    let mut last = 0;
    for pair in quotes.chunks(2) {
        let (open, close) = (pair[0], pair[1]);
        let key = format!("__val_{open}_{close}__");
        masked.push_str(&text[last..open]);
        masked.push_str(&key);
        values.insert(key, text[open..=close].to_string());
        last = close + 1;
    }
    masked.push_str(&text[last..]);
    let tokens = word_tokenize(&masked)
        .into_iter()
        .map(|t| {
            let lower = t.to_lowercase();
            values.get(&lower).cloned().unwrap_or(lower)
        })
        .collect();
    Ok(join_comparisons(tokens))
}

/// `["!", "="]` -> `["!="]` (also `>=`, `<=`), scanning from the end as the official code does.
fn join_comparisons(mut tokens: Vec<String>) -> Vec<String> {
    let mut index = tokens.len();
    while index > 1 {
        index -= 1;
        if tokens[index] == "=" && matches!(tokens[index - 1].as_str(), "!" | ">" | "<") {
            let joined = format!("{}=", tokens[index - 1]);
            tokens.splice(index - 1..=index, [joined]);
            index -= 1;
        }
    }
    tokens
}

/// NLTK's `word_tokenize` (Treebank rules, no sentence splitting) on text without quotes.
fn word_tokenize(text: &str) -> Vec<String> {
    static RULES: OnceLock<Vec<(Regex, &'static str)>> = OnceLock::new();
    let rules = RULES.get_or_init(|| {
        [
            (r#"([^\.])(\.)([\]\)}>"']*)\s*$"#, "$1 $2 $3 "),
            (r"([:,])([^\d])", " $1 $2"),
            (r"([:,])$", " $1 "),
            (r"\.{2,}", " $0 "),
            (r"[;@#$%&]", " $0 "),
            (r"[?!]", " $0 "),
            (r"[*]", " $0 "),
            (r"[\]\[\(\)\{\}<>]", " $0 "),
            (r"--", " -- "),
            (r"(?i)\b(can)(not)\b", " $1 $2 "),
            (r"(?i)\b(gim)(me)\b", " $1 $2 "),
            (r"(?i)\b(gon)(na)\b", " $1 $2 "),
            (r"(?i)\b(got)(ta)\b", " $1 $2 "),
            (r"(?i)\b(lem)(me)\b", " $1 $2 "),
            (r"(?i)\b(wan)(na)(\s)", " $1 $2 $3"),
        ]
        .into_iter()
        .map(|(pattern, replacement)| (Regex::new(pattern).expect("a valid pattern"), replacement))
        .collect()
    });
    let mut spaced = format!(" {text} ");
    for (pattern, replacement) in rules {
        spaced = pattern.replace_all(&spaced, *replacement).into_owned();
    }
    spaced.split_whitespace().map(str::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(query: &str) -> Vec<String> {
        tokenize(query).unwrap()
    }

    #[test]
    fn splits_like_the_official_tokenizer() {
        assert_eq!(
            tokens("SELECT count(*) FROM singer AS T1 WHERE T1.age >= 20"),
            [
                "select", "count", "(", "*", ")", "from", "singer", "as", "t1", "where", "t1.age",
                ">=", "20"
            ]
        );
        // The official pairing splits a doubled quote into two adjacent values, which then
        // form one unknown token.
        assert_eq!(
            tokens("a != 'Bob''s'"),
            ["a", "!=", "__val_5_9____val_10_12__"]
        );
    }

    #[test]
    fn equals_sign_is_not_split() {
        assert_eq!(tokens("WHERE age=20"), ["where", "age=20"]);
        assert_eq!(tokens("WHERE a>=20"), ["where", "a", ">", "=20"]);
        assert_eq!(
            tokens("WHERE name = \"Bob\""),
            ["where", "name", "=", "\"Bob\""]
        );
    }

    #[test]
    fn commas_before_digits_stay() {
        assert_eq!(tokens("IN (1,2)"), ["in", "(", "1,2", ")"]);
        assert_eq!(tokens("SELECT a,b"), ["select", "a", ",", "b"]);
    }

    #[test]
    fn unpaired_quotes_are_errors() {
        assert!(tokenize("WHERE a = 'x").is_err());
    }
}
