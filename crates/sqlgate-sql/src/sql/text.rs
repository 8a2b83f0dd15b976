//! The official Spider / test-suite scorer's text rewrites, reproduced for the `spider-ts`
//! profile (taoyds/test-suite-sql-eval: `evaluation.py`, `exec_eval.py`, `parse.py`).
//!
//! They exist only to reproduce published numbers: `value` placeholders become `1`, spaced
//! comparison operators are joined, DISTINCT is removed through python-sqlparse's tokenizer (which
//! also keeps only the first statement), `YEAR(CURDATE())` becomes 2020, and with `plug_value` the
//! gold query's values are plugged into the prediction's value slots in every possible way.

use regex::Regex;
use std::sync::OnceLock;

/// The official `p_str.replace("value", "1")`, applied to predictions only.
pub fn replace_value_placeholder(sql: &str) -> String {
    sql.replace("value", "1")
}

/// The official `postprocess`: `> =`, `< =`, `! =` become `>=`, `<=`, `!=`.
pub fn normalize_spaced_operators(sql: &str) -> String {
    sql.replace("> =", ">=")
        .replace("< =", "<=")
        .replace("! =", "!=")
}

/// The official `replace_cur_year`: `YEAR ( CURDATE ( ) )` and the white space after it become
/// `2020`, case-insensitively.
pub fn replace_cur_year(sql: &str) -> String {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    let pattern = PATTERN.get_or_init(|| {
        Regex::new(r"(?i)YEAR\s*\(\s*CURDATE\s*\(\s*\)\s*\)\s*").expect("a valid pattern")
    });
    pattern.replace_all(sql, "2020").into_owned()
}

/// The official order test: `'order by' in gold.lower()`.
pub fn order_matters(gold: &str) -> bool {
    gold.to_lowercase().contains("order by")
}

/// The official `remove_distinct`: tokenize with python-sqlparse, keep the first statement, drop
/// every token whose lower-cased text is `distinct`, and join the rest unchanged.
pub fn remove_distinct(sql: &str) -> String {
    drop_distinct(sql, false)
}

/// [`remove_distinct`] limited to the DISTINCT of a projection (`SELECT DISTINCT`): the one
/// the official removal exists to forgive (Spider's annotations are inconsistent about it),
/// while DISTINCT inside an aggregate (`count(DISTINCT x)`) changes what is counted and stays.
pub fn remove_select_distinct(sql: &str) -> String {
    drop_distinct(sql, true)
}

/// The first statement of `sql` without its `distinct` tokens: every one, or with
/// `after_select_only` those whose previous word is `select`.
fn drop_distinct(sql: &str, after_select_only: bool) -> String {
    let tokens = tokenize(sql);
    let end = first_statement_end(sql, &tokens);
    let mut kept = String::with_capacity(end);
    let mut previous_word = String::new();
    for token in tokens.iter().take_while(|t| t.start < end) {
        let text = &sql[token.start..token.end];
        let lower = text.to_lowercase();
        if lower == "distinct" && (!after_select_only || previous_word == "select") {
            previous_word = lower;
            continue;
        }
        if token.kind != Kind::Space {
            previous_word = lower;
        }
        kept.push_str(text);
    }
    kept
}

/// Whether `sql` has a DISTINCT that [`remove_select_distinct`] keeps (inside an aggregate).
pub fn has_aggregate_distinct(sql: &str) -> bool {
    let kept = remove_select_distinct(sql);
    let tokens = tokenize(&kept);
    tokens
        .iter()
        .any(|t| kept[t.start..t.end].eq_ignore_ascii_case("distinct"))
}

/// The official `VALUE_NUM_SYMBOL`, lower-cased as the value slots of a prediction are.
const VALUE_SLOT: &str = "valuerare";

/// The official `--plug_value` alternatives of a prediction: its value slots (string and number
/// literals, as the official `extract_query_values` finds them) filled with the gold's values in
/// every possible way, in a fixed order. `Err(count)` when there would be more than `limit`.
pub fn plug_gold_values(gold: &str, prediction: &str, limit: usize) -> Result<Vec<String>, usize> {
    let (_, gold_values) = extract_query_values(gold);
    let gold_values: Vec<String> = gold_values.into_iter().collect();
    let (tokens, _) = extract_query_values(prediction);
    let slots: Vec<usize> = (0..tokens.len())
        .filter(|&i| tokens[i] == VALUE_SLOT)
        .collect();
    let count = u32::try_from(slots.len())
        .ok()
        .and_then(|n| gold_values.len().checked_pow(n))
        .unwrap_or(usize::MAX);
    if count > limit {
        return Err(count);
    }
    let mut alternatives = Vec::with_capacity(count);
    let mut choice = vec![0usize; slots.len()];
    for _ in 0..count {
        let mut filled = tokens.clone();
        for (slot, &value) in slots.iter().zip(&choice) {
            filled[*slot] = gold_values[value].clone();
        }
        alternatives.push(filled.join(" "));
        for digit in choice.iter_mut().rev() {
            *digit += 1;
            if *digit < gold_values.len() {
                break;
            }
            *digit = 0;
        }
    }
    Ok(alternatives)
}

/// The official `extract_query_values`: the query's tokens with every value replaced by
/// [`VALUE_SLOT`] (lower-cased, `T1.x` split at its dot), and the set of values.
fn extract_query_values(sql: &str) -> (Vec<String>, std::collections::BTreeSet<String>) {
    static ALIAS_DOT: OnceLock<Regex> = OnceLock::new();
    let alias_dot = ALIAS_DOT.get_or_init(|| Regex::new(r"(T\d+\.)\s").expect("a valid pattern"));
    let reformatted = reformat_query(sql);
    let (keywords, values) = strip_query(&alias_dot.replace_all(&reformatted, "$1"));
    (keywords, values.into_iter().collect())
}

/// The official `reformat_query`: `;` and tabs dropped, sqlparse's tokens joined by one space
/// (white space dropped), `t1.*` and the like turned into `*`.
fn reformat_query(sql: &str) -> String {
    let sql = sql.trim().replace([';', '\t'], "");
    let joined = tokenize(&sql)
        .iter()
        .filter(|t| t.kind != Kind::Space)
        .map(|t| &sql[t.start..t.end])
        .collect::<Vec<_>>()
        .join(" ");
    ["t1.*", "t2.*", "t3.*", "T1.*", "T2.*", "T3.*"]
        .iter()
        .fold(joined, |query, star| query.replace(star, "*"))
}

/// The official `strip_query`: string literals, then tokens that are floats, then tokens that are
/// integers (as its regular expressions find them) become value slots.
fn strip_query(query: &str) -> (Vec<String>, Vec<String>) {
    static FLOAT: OnceLock<Regex> = OnceLock::new();
    static INTEGER: OnceLock<Regex> = OnceLock::new();
    static ALIAS: OnceLock<Regex> = OnceLock::new();
    let float = FLOAT.get_or_init(|| Regex::new(r"[-+]?\d*\.\d+").expect("a valid pattern"));
    let integer = INTEGER.get_or_init(|| Regex::new(r"[^tT]\d+").expect("a valid pattern"));
    let alias = ALIAS.get_or_init(|| Regex::new(r"[Tt]\d+\.").expect("a valid pattern"));
    let symbol = VALUE_SLOT.to_uppercase();
    let mut values: Vec<String> = tokenize(query)
        .iter()
        .filter(|t| t.kind == Kind::Text)
        .map(|t| query[t.start..t.end].to_string())
        .collect();
    let mut query = query.to_string();
    for value in &values {
        query = query.replace(value.trim(), &symbol);
    }
    let floats: Vec<&str> = float.find_iter(&query).map(|m| m.as_str()).collect();
    let mut tokens: Vec<String> = query.split_whitespace().map(str::to_string).collect();
    replace_numbers(&mut tokens, &floats, &mut values, &symbol);
    let joined = tokens.join(" ");
    let integers: Vec<&str> = integer
        .find_iter(&joined)
        .map(|m| m.as_str().trim())
        .collect();
    replace_numbers(&mut tokens, &integers, &mut values, &symbol);
    let keywords = tokens
        .iter()
        .flat_map(|token| {
            if token.contains('.') && alias.is_match(token) {
                token
                    .replace('.', " . ")
                    .split_whitespace()
                    .map(str::to_lowercase)
                    .collect()
            } else {
                vec![token.to_lowercase()]
            }
        })
        .collect();
    (keywords, values)
}

/// Tokens equal to one of `numbers` become value slots, and are added to `values`.
fn replace_numbers(tokens: &mut [String], numbers: &[&str], values: &mut Vec<String>, slot: &str) {
    for token in tokens.iter_mut() {
        if numbers.contains(&token.as_str()) {
            values.push(std::mem::replace(token, slot.to_string()));
        }
    }
}

/// The token classes that matter for DISTINCT removal, statement splitting and value slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A run of word characters that sqlparse reads as a keyword or a name.
    Word,
    /// A word attached to a sigil (`@x`, `:x`, `$x`, `#x`) or after a dot: never a keyword.
    Name,
    /// A `'..'` or `".."` literal: sqlparse's `String.Single` / `String.Symbol`, a value.
    Text,
    /// A number as sqlparse's lexer delimits it (a leading `-` included).
    Number,
    /// A run of comparison or arithmetic operator characters (`>=`, `!=`, `||`, `::`).
    Operator,
    /// Backquoted or bracketed identifier, or block comment: opaque.
    Opaque,
    /// A single-line comment, which sqlparse keeps with the statement it ends.
    LineComment,
    /// White space.
    Space,
    /// Any other single character.
    Other,
}

#[derive(Debug, Clone, Copy)]
struct Token {
    kind: Kind,
    start: usize,
    end: usize,
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Splits `sql` into tokens the way python-sqlparse's lexer delimits them, as far as DISTINCT
/// removal and statement splitting can tell.
fn tokenize(sql: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut position = 0;
    while position < sql.len() {
        let rest = &sql[position..];
        let (kind, length) = next_token(sql, position, rest);
        tokens.push(Token {
            kind,
            start: position,
            end: position + length,
        });
        position += length;
    }
    tokens
}

fn next_token(sql: &str, position: usize, rest: &str) -> (Kind, usize) {
    let first = rest.chars().next().expect("rest is not empty");
    let previous = sql[..position].chars().next_back();
    if rest.starts_with("--") || rest.starts_with("# ") {
        let length = rest.find('\n').map_or(rest.len(), |i| i + 1);
        return (Kind::LineComment, length);
    }
    if let Some(body) = rest.strip_prefix("/*") {
        if let Some(close) = body.find("*/") {
            return (Kind::Opaque, close + 4);
        }
    }
    if first.is_whitespace() {
        let length = rest
            .find(|c: char| !c.is_whitespace())
            .unwrap_or(rest.len());
        return (Kind::Space, length);
    }
    if let Some(length) = quoted_length(rest, first, previous) {
        let kind = if matches!(first, '\'' | '"') {
            Kind::Text
        } else {
            Kind::Opaque
        };
        return (kind, length);
    }
    if rest.starts_with(":=") || rest.starts_with("::") {
        return (Kind::Operator, 2);
    }
    if matches!(first, '@' | ':' | '$' | '?' | '#') && rest[1..].starts_with(is_word_char) {
        return (Kind::Name, 1 + word_length(&rest[1..]));
    }
    if let Some(length) = number_length(rest) {
        return (Kind::Number, length);
    }
    if let Some(length) = operator_length(rest) {
        return (Kind::Operator, length);
    }
    if is_word_char(first) {
        let kind = if previous == Some('.') {
            Kind::Name
        } else {
            Kind::Word
        };
        return (kind, word_length(rest));
    }
    (Kind::Other, first.len_utf8())
}

/// sqlparse's `[_A-ZÀ-Ü]` under IGNORECASE: what may not touch a number.
fn is_letter(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn digits(text: &str) -> usize {
    text.find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len())
}

/// Length of a number at the start of `rest`, tried as sqlparse's patterns are, in order:
/// `-?0x[0-9A-F]+`, `-?\d+(\.\d+)?E-?\d+`, `-?(\d+(\.\d*)|\.\d+)` and `-?\d+`, the last two
/// only where no letter follows (with the regex engine's backtracking).
fn number_length(rest: &str) -> Option<usize> {
    let sign = usize::from(rest.starts_with('-'));
    let body = &rest[sign..];
    let not_letter_at = |end: usize| !body[end..].chars().next().is_some_and(is_letter);
    let whole = digits(body);
    if whole > 0 && body.starts_with("0") && body[1..].starts_with(['x', 'X']) {
        let hex = body[2..]
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(body.len() - 2);
        if hex > 0 {
            return Some(sign + 2 + hex);
        }
    }
    if whole > 0 {
        if let Some(length) = exponent_length(body, whole) {
            return Some(sign + length);
        }
        if body[whole..].starts_with('.') {
            let fraction = digits(&body[whole + 1..]);
            if let Some(k) = (0..=fraction).rev().find(|k| not_letter_at(whole + 1 + k)) {
                return Some(sign + whole + 1 + k);
            }
        }
    } else if let Some(after_dot) = body.strip_prefix('.') {
        let fraction = digits(after_dot);
        if fraction > 0 && not_letter_at(1 + fraction) {
            return Some(sign + 1 + fraction);
        }
    }
    (whole > 0 && not_letter_at(whole)).then_some(sign + whole)
}

/// `\d+(\.\d+)?E-?\d+` after `whole` integer digits, if it matches.
fn exponent_length(body: &str, whole: usize) -> Option<usize> {
    let mut end = whole;
    if body[end..].starts_with('.') && digits(&body[end + 1..]) > 0 {
        end += 1 + digits(&body[end + 1..]);
    }
    let after_e = body[end..].strip_prefix(['e', 'E'])?;
    let sign = usize::from(after_e.starts_with('-'));
    let exponent = digits(&after_e[sign..]);
    (exponent > 0).then_some(end + 1 + sign + exponent)
}

/// Length of a run of `[<>=~!]+` or `[+/@#%^&|-]+` at the start of `rest`.
fn operator_length(rest: &str) -> Option<usize> {
    for class in ["<>=~!", "+/@#%^&|-"] {
        let length = rest
            .find(|c: char| !class.contains(c))
            .unwrap_or(rest.len());
        if length > 0 {
            return Some(length);
        }
    }
    None
}

/// Length of a run of `\w[$#\w]*`.
fn word_length(text: &str) -> usize {
    text.find(|c: char| !(is_word_char(c) || c == '$' || c == '#'))
        .unwrap_or(text.len())
}

/// Length of a quoted token starting at `rest`, if it is one: `'..'` and `".."` (doubled quote or
/// backslash escapes, as sqlparse's patterns), `` `..` `` and `[..]` (not right after a word,
/// `]` or `)`).
fn quoted_length(rest: &str, first: char, previous: Option<char>) -> Option<usize> {
    match first {
        '\'' | '"' => {
            closing_quote(rest, first, true).or_else(|| closing_quote(rest, first, false))
        }
        '`' => closing_quote(rest, '`', false),
        '[' if !previous.is_some_and(|p| is_word_char(p) || p == ']' || p == ')') => {
            let close = rest[1..].find([']', '['])?;
            (rest[1 + close..].starts_with(']') && close > 0).then_some(close + 2)
        }
        _ => None,
    }
}

/// Finds the quote closing `rest`'s opening `quote`; doubled quotes (and, when
/// `backslash_escapes`, backslash-quote pairs) stay inside.
fn closing_quote(rest: &str, quote: char, backslash_escapes: bool) -> Option<usize> {
    let bytes = rest.as_bytes();
    let quote = quote as u8;
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if backslash_escapes && bytes.get(i + 1) == Some(&quote) => i += 2,
            b if b == quote && bytes.get(i + 1) == Some(&quote) => i += 2,
            b if b == quote => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// Where sqlparse's statement splitter ends the first statement: after the first `;` at nesting
/// level <= 0 (parentheses raise the level, the keyword END lowers it) and the white space and
/// single-line comments that follow it.
fn first_statement_end(sql: &str, tokens: &[Token]) -> usize {
    let mut level = 0i64;
    let mut tokens = tokens.iter().peekable();
    while let Some(token) = tokens.next() {
        let text = &sql[token.start..token.end];
        match (token.kind, text) {
            (Kind::Other, "(") => level += 1,
            (Kind::Other, ")") => level -= 1,
            (Kind::Word, word)
                if word.eq_ignore_ascii_case("end") && !followed_by_paren(sql, token.end) =>
            {
                level -= 1
            }
            (Kind::Other, ";") if level <= 0 => {
                let mut end = token.end;
                while let Some(next) =
                    tokens.next_if(|t| matches!(t.kind, Kind::Space | Kind::LineComment))
                {
                    end = next.end;
                }
                return end;
            }
            _ => {}
        }
    }
    sql.len()
}

/// sqlparse reads a word directly before `(` as a function name, not a keyword.
fn followed_by_paren(sql: &str, end: usize) -> bool {
    sql[end..].starts_with('(')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_placeholder_is_replaced_everywhere() {
        assert_eq!(
            replace_value_placeholder("WHERE a = value AND b = 'values'"),
            "WHERE a = 1 AND b = '1s'"
        );
    }

    #[test]
    fn spaced_operators_are_joined() {
        assert_eq!(
            normalize_spaced_operators("a > = 1 AND b ! = 2 AND c < = 3"),
            "a >= 1 AND b != 2 AND c <= 3"
        );
    }

    #[test]
    fn current_year_becomes_2020() {
        assert_eq!(
            replace_cur_year("SELECT year(  curdate ( ) )  - age"),
            "SELECT 2020- age"
        );
        assert_eq!(replace_cur_year("SELECT YEAR(CURDATE())"), "SELECT 2020");
    }

    #[test]
    fn order_test_is_a_plain_substring() {
        assert!(order_matters("SELECT a FROM t ORDER BY a"));
        assert!(!order_matters("SELECT a FROM t ORDER  BY a"));
        assert!(order_matters("SELECT 'order by' FROM t"));
    }

    #[test]
    fn distinct_words_are_removed_and_white_space_kept() {
        assert_eq!(
            remove_distinct("SELECT DISTINCT name FROM t"),
            "SELECT  name FROM t"
        );
        assert_eq!(
            remove_distinct("SELECT count(DISTINCT x) FROM t"),
            "SELECT count( x) FROM t"
        );
        assert_eq!(
            remove_distinct("SELECT distinct(x) FROM t"),
            "SELECT (x) FROM t"
        );
        assert_eq!(
            remove_distinct("SELECT t.distinct FROM t"),
            "SELECT t. FROM t"
        );
    }

    #[test]
    fn only_the_projection_distinct_is_removed_for_suites() {
        assert_eq!(
            remove_select_distinct("SELECT DISTINCT name FROM t"),
            "SELECT  name FROM t"
        );
        assert_eq!(
            remove_select_distinct("select  distinct(x), count(DISTINCT y) FROM t"),
            "select  (x), count(DISTINCT y) FROM t"
        );
        assert!(has_aggregate_distinct("SELECT count(DISTINCT y) FROM t"));
        assert!(!has_aggregate_distinct(
            "SELECT DISTINCT a FROM t WHERE b IN (SELECT DISTINCT b FROM u)"
        ));
        assert!(!has_aggregate_distinct("SELECT 'distinct' FROM t"));
    }

    #[test]
    fn distinct_inside_names_strings_and_comments_stays() {
        for sql in [
            "SELECT distinct_id FROM t",
            "SELECT a FROM t WHERE b = 'distinct'",
            "SELECT \"distinct\" FROM t",
            "SELECT `distinct` FROM t",
            "SELECT [distinct] FROM t",
            "SELECT a FROM t -- distinct",
            "SELECT a /* distinct */ FROM t",
            "SELECT a FROM t WHERE b = 'it''s distinct'",
            "SELECT a FROM t WHERE b = @distinct",
        ] {
            assert_eq!(remove_distinct(sql), sql, "{sql}");
        }
    }

    #[test]
    fn only_the_first_statement_survives() {
        assert_eq!(remove_distinct("SELECT 1; DROP TABLE t"), "SELECT 1; ");
        assert_eq!(remove_distinct("SELECT 1;"), "SELECT 1;");
        assert_eq!(remove_distinct("SELECT ';' ; SELECT 2"), "SELECT ';' ; ");
        assert_eq!(
            remove_distinct("SELECT CASE WHEN a THEN 1 END FROM t; SELECT 2"),
            "SELECT CASE WHEN a THEN 1 END FROM t; "
        );
        assert_eq!(remove_distinct("SELECT (1;2)"), "SELECT (1;2)");
    }

    #[test]
    fn gold_values_fill_every_value_slot_in_every_way() {
        let gold = "SELECT name FROM singer WHERE age > 20 AND country = 'France'";
        let prediction = "SELECT name FROM singer WHERE age > 30 AND country = 'Spain'";
        let stem = "select name from singer where age >";
        assert_eq!(
            plug_gold_values(gold, prediction, 100).unwrap(),
            [
                format!("{stem} 'France' and country = 'France'"),
                format!("{stem} 'France' and country = 20"),
                format!("{stem} 20 and country = 'France'"),
                format!("{stem} 20 and country = 20"),
            ]
        );
        assert_eq!(plug_gold_values(gold, prediction, 3), Err(4));
    }

    #[test]
    fn value_slots_are_found_as_the_official_extractor_finds_them() {
        let slots = |sql: &str| extract_query_values(sql);
        let (tokens, values) =
            slots("SELECT T1.name FROM singer AS T1 WHERE T1.age >= -5 AND T1.w < 3.5 AND c = \"x y\" LIMIT 1");
        assert_eq!(
            tokens.join(" "),
            "select t1 . name from singer as t1 where t1 . age >= valuerare and t1 . w < valuerare and c = valuerare limit valuerare"
        );
        assert_eq!(
            values.into_iter().collect::<Vec<_>>(),
            ["\"x y\"", "-5", "1", "3.5"]
        );
        assert_eq!(
            plug_gold_values("SELECT 1", "SELECT count(*) FROM singer", 10).unwrap(),
            ["select count ( * ) from singer"]
        );
        assert!(
            plug_gold_values("SELECT a FROM t", "SELECT a FROM t WHERE b = 2", 10)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn numbers_and_operators_are_delimited_as_sqlparse_does() {
        let texts = |sql: &str| -> Vec<(Kind, String)> {
            tokenize(sql)
                .iter()
                .filter(|t| t.kind != Kind::Space)
                .map(|t| (t.kind, sql[t.start..t.end].to_string()))
                .collect()
        };
        assert_eq!(
            texts("a>=-5 b<>1.5e3 c||'x' 2nd 0x1F 1.e"),
            [
                (Kind::Word, "a".into()),
                (Kind::Operator, ">=".into()),
                (Kind::Number, "-5".into()),
                (Kind::Word, "b".into()),
                (Kind::Operator, "<>".into()),
                (Kind::Number, "1.5e3".into()),
                (Kind::Word, "c".into()),
                (Kind::Operator, "||".into()),
                (Kind::Text, "'x'".into()),
                (Kind::Word, "2nd".into()),
                (Kind::Number, "0x1F".into()),
                (Kind::Number, "1".into()),
                (Kind::Other, ".".into()),
                (Kind::Name, "e".into()),
            ]
        );
    }

    #[test]
    fn unterminated_quotes_do_not_swallow_the_query() {
        assert_eq!(
            remove_distinct("SELECT DISTINCT a FROM t WHERE b = 'x"),
            "SELECT  a FROM t WHERE b = 'x"
        );
        assert_eq!(
            remove_distinct("SELECT 'a\\' DISTINCT'"),
            "SELECT 'a\\' DISTINCT'"
        );
    }
}
