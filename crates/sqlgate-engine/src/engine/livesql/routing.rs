//! Which side a sound profile's unmarked test-case request goes to, shared by SQLite's twin
//! (`twin.rs`) and the servers' (`python::ServerSides`): a request whose statements are, once
//! normalised, all the gold's and not all the prediction's is the gold's (a test that rebuilt
//! the gold's text with a Python operation the mark does not survive, red team round 27, win A).

use serde_json::Value as Json;
use std::collections::BTreeSet;

/// The gold's and the prediction's statements of one item, normalised ([`normalised`]).
pub struct GoldTexts {
    gold: BTreeSet<String>,
    prediction: BTreeSet<String>,
}

impl GoldTexts {
    /// The texts of `gold` and `prediction`.
    pub fn new(gold: &[String], prediction: &[String]) -> Self {
        let texts = |sqls: &[String]| sqls.iter().map(|sql| normalised(sql)).collect();
        GoldTexts {
            gold: texts(gold),
            prediction: texts(prediction),
        }
    }

    /// Whether an unmarked request `op` of the runner is the gold's: every statement is one of
    /// the gold's, once normalised, and one at least is not also the prediction's (a statement
    /// both share stays on the prediction's side, so a prediction cannot send its own
    /// statements to the twin by repeating the gold's).
    pub fn is_gold(&self, op: &str, request: &Json) -> bool {
        let texts: Vec<String> = (request_texts(op, request).iter())
            .map(|sql| normalised(sql))
            .collect();
        !texts.is_empty()
            && texts.iter().all(|text| self.gold.contains(text))
            && texts.iter().any(|text| !self.prediction.contains(text))
    }
}

/// The statements of a runner request (`exec`'s list, `query`'s one, `cost`'s two lists).
fn request_texts(op: &str, request: &Json) -> Vec<String> {
    let list = |key: &str| -> Vec<String> {
        serde_json::from_value(request[key].clone()).unwrap_or_default()
    };
    match op {
        "exec" => list("sqls"),
        "query" => request["sql"]
            .as_str()
            .map(str::to_string)
            .into_iter()
            .collect(),
        "cost" => [list("old"), list("new")].concat(),
        _ => Vec::new(),
    }
}

/// A statement's text as the gold's and the prediction's are matched: trimmed, without
/// trailing semicolons, whitespace runs as one space, ASCII letters in lower case.
fn normalised(sql: &str) -> String {
    let trimmed = sql
        .trim()
        .trim_end_matches(|c: char| c == ';' || c.is_whitespace());
    let words: Vec<&str> = trimmed.split_whitespace().collect();
    words.join(" ").to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::{normalised, GoldTexts};
    use serde_json::json;

    #[test]
    fn statements_match_whatever_their_spacing_case_and_trailing_semicolons() {
        let gold = normalised("SELECT name,  gpa\nFROM students ;; ");
        assert_eq!(gold, "select name, gpa from students");
        assert_eq!(normalised(" select name, gpa from students"), gold);
        assert_ne!(normalised("SELECT name, gpa FROM students LIMIT 1"), gold);
    }

    #[test]
    fn a_request_of_the_golds_words_alone_is_the_golds() {
        let texts = GoldTexts::new(&["SELECT 1".into()], &["SELECT 2".into()]);
        assert!(texts.is_gold("query", &json!({"sql": "select  1;"})));
        assert!(!texts.is_gold("query", &json!({"sql": "SELECT 2"})));
        assert!(!texts.is_gold("exec", &json!({"sqls": ["SELECT 1", "SELECT 2"]})));
        assert!(!texts.is_gold("exec", &json!({"sqls": []})));
    }
}
