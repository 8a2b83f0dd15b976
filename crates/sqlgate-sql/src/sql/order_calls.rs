//! Calls whose result depends on the order rows reach them in, where the query does not fix that
//! order (issue 44, red team round 7): an aggregate that strings its input together (PostgreSQL
//! `string_agg`, `array_agg`, `json_agg`, `xmlagg`, ...; MySQL / MariaDB `GROUP_CONCAT`,
//! `JSON_ARRAYAGG`, `JSON_OBJECTAGG`; SQLite `group_concat`, `json_group_array`, ...), a window
//! function that reads rows by position (`row_number`, `ntile`, `first_value`, `lag`, ...; any
//! `ROWS` frame), PostgreSQL's `DISTINCT ON` and `ARRAY(SELECT ...)`, and `any_value`. Statistics, a table rewrite or a join order
//! change that order with no row changed, and no LIMIT is involved, so [`crate::sql::cuts`] does
//! not see it (docs/METRICS.md, "Unstable verdicts").
//!
//! The check reads tokens, so it needs no parse (a query sqlparser does not read is still
//! checked) and fails closed: a call is determined only when its own ORDER BY (or its window's)
//! lists every value it strings together, so rows that tie on all its keys give the same value.
//! `row_number` and `ntile` number rows that may tie, `DISTINCT ON` keeps one row of a group
//! whose order may tie, a `ROWS` frame counts rows that may tie, a named window is not looked
//! up, `ARRAY(SELECT ...)` strings a sub-query's rows in their order (its ORDER BY's ties are not
//! read) and `any_value` returns any row's: each of those is held undetermined. Only a text naming one of these words pays
//! for the tokenizer.

use crate::sql::cuts::matching_paren;
use crate::sql::features::FeatureDialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, Tokenizer};

/// Aggregates whose value strings their input rows together in the order they arrive.
const STRINGING_AGGREGATES: &[&str] = &[
    "string_agg",
    "array_agg",
    "json_agg",
    "jsonb_agg",
    "json_agg_strict",
    "jsonb_agg_strict",
    "json_object_agg",
    "jsonb_object_agg",
    "json_object_agg_strict",
    "jsonb_object_agg_strict",
    "json_object_agg_unique",
    "jsonb_object_agg_unique",
    "json_object_agg_unique_strict",
    "jsonb_object_agg_unique_strict",
    "xmlagg",
    "group_concat",
    "json_arrayagg",
    "json_objectagg",
    "json_group_array",
    "json_group_object",
];

/// Window functions that read a value at a row's position: determined when the window's ORDER
/// BY lists every value they read (tied rows then hold the same values).
pub(crate) const POSITION_WINDOWS: &[&str] =
    &["first_value", "last_value", "nth_value", "lag", "lead"];

/// Window functions that number rows: rows tied on the window's ORDER BY get different numbers in
/// an order the plan picks, which no token tells apart from a unique key.
const NUMBERING_WINDOWS: &[&str] = &["row_number", "ntile"];

/// Calls that return any row's value (PostgreSQL 16's and MySQL's `any_value`): whichever row
/// the plan reads first.
const ARBITRARY: &[&str] = &["any_value"];

/// Whether `sql` (read in `dialect`) has a call whose result depends on an undetermined row
/// order (see the module's documentation). A text the tokenizer refuses is held undetermined
/// when it names such a call.
pub fn depends_on_order(sql: &str, dialect: FeatureDialect) -> bool {
    let lower = sql.to_ascii_lowercase();
    let named = STRINGING_AGGREGATES
        .iter()
        .chain(POSITION_WINDOWS)
        .chain(NUMBERING_WINDOWS)
        .chain(ARBITRARY)
        .chain(&["distinct", "rows", "array"])
        .any(|word| lower.contains(word));
    if !named {
        return false;
    }
    let dialect = super::cuts::parser_dialect(dialect);
    let Ok(tokens) = Tokenizer::new(dialect.as_ref(), sql).tokenize() else {
        return true;
    };
    let tokens: Vec<Token> = tokens
        .into_iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect();
    (0..tokens.len()).any(|at| undetermined_at(&tokens, at))
}

/// Whether the token at `at` starts an undetermined call, `DISTINCT ON` or a `ROWS` frame.
fn undetermined_at(tokens: &[Token], at: usize) -> bool {
    let Token::Word(word) = &tokens[at] else {
        return false;
    };
    let next = tokens.get(at + 1);
    match word.keyword {
        Keyword::DISTINCT if word.quote_style.is_none() => {
            return matches!(next, Some(Token::Word(w)) if w.keyword == Keyword::ON)
        }
        Keyword::ROWS if word.quote_style.is_none() => {
            // A frame: `ROWS BETWEEN ...` or `ROWS UNBOUNDED PRECEDING` / `ROWS n PRECEDING`.
            return matches!(next, Some(Token::Word(w)) if matches!(w.keyword, Keyword::BETWEEN | Keyword::UNBOUNDED | Keyword::CURRENT))
                || matches!(next, Some(Token::Number(..)))
                    && matches!(tokens.get(at + 2), Some(Token::Word(w)) if w.keyword == Keyword::PRECEDING);
        }
        _ => {}
    }
    if next != Some(&Token::LParen) {
        return false;
    }
    let name = word.value.to_ascii_lowercase();
    if ARBITRARY.contains(&name.as_str()) {
        return true;
    }
    if word.keyword == Keyword::ARRAY {
        // `ARRAY(SELECT ...)` strings the sub-query's rows together in the order they come.
        return matches!(tokens.get(at + 2), Some(Token::Word(w)) if matches!(w.keyword, Keyword::SELECT | Keyword::WITH));
    }
    let Some(close) = matching_paren(tokens, at + 1) else {
        return true;
    };
    let call = &tokens[at + 2..close];
    if STRINGING_AGGREGATES.contains(&name.as_str()) {
        let (values, keys) = split_order_by(call);
        return !keys_cover(&values, &keys);
    }
    let numbering = NUMBERING_WINDOWS.contains(&name.as_str());
    if !numbering && !POSITION_WINDOWS.contains(&name.as_str()) {
        return false;
    }
    let Some(window) = window_after(tokens, close) else {
        // A named window (`OVER w`), which is not looked up; or not a window call at all.
        return is_over(tokens.get(close + 1));
    };
    if numbering {
        return true;
    }
    let (_, keys) = split_order_by(window);
    let (values, _) = split_order_by(call);
    !keys_cover(&values, &keys)
}

/// Whether `token` is the word OVER.
fn is_over(token: Option<&Token>) -> bool {
    matches!(token, Some(Token::Word(w)) if w.keyword == Keyword::OVER)
}

/// The tokens inside the parenthesised window that follows the call closing at `close` (`OVER
/// (...)`); `None` when no window follows or it is named (`OVER w`).
fn window_after(tokens: &[Token], close: usize) -> Option<&[Token]> {
    if !is_over(tokens.get(close + 1)) || tokens.get(close + 2) != Some(&Token::LParen) {
        return None;
    }
    let end = matching_paren(tokens, close + 2)?;
    Some(&tokens[close + 3..end])
}

/// A call's (or a window's) tokens split at their own `ORDER BY`: the arguments before it, each
/// in its normal form ([`normal`], a leading DISTINCT or ALL dropped, literals left out), and the
/// sort keys after it (up to MySQL's `SEPARATOR` or a frame), each without ASC / DESC / NULLS.
fn split_order_by(tokens: &[Token]) -> (Vec<String>, Vec<String>) {
    let top = top_level(tokens);
    let order = top
        .iter()
        .position(|&i| matches!(&tokens[i], Token::Word(w) if w.keyword == Keyword::ORDER));
    let (before, after) = match order {
        Some(o) => (&top[..o], &top[o..]),
        None => (&top[..], &[][..]),
    };
    let arguments = pieces(tokens, before);
    let values = arguments
        .iter()
        .filter(|piece| !is_literal(piece))
        .map(|piece| normal(strip_quantifier(piece)))
        .collect();
    let key_end = after.iter().position(|&i| {
        matches!(&tokens[i], Token::Word(w) if matches!(w.keyword, Keyword::SEPARATOR | Keyword::ROWS | Keyword::RANGE | Keyword::GROUPS))
    });
    let after = &after[..key_end.unwrap_or(after.len())];
    let keys = match after.get(2) {
        // Skip `ORDER BY` itself.
        Some(_) => pieces(tokens, &after[2..])
            .iter()
            .map(|piece| normal(strip_direction(piece)))
            .collect(),
        None => Vec::new(),
    };
    (values, keys)
}

/// Whether every value is one of the keys: rows tied on every key then give the same values.
fn keys_cover(values: &[String], keys: &[String]) -> bool {
    values.iter().all(|value| keys.contains(value))
}

/// The positions in `tokens` outside any parenthesis of theirs, each a range of tokens that
/// starts there and reaches the next such position (a nested parenthesis is kept whole).
fn top_level(tokens: &[Token]) -> Vec<usize> {
    let mut depth = 0usize;
    let mut starts = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        if depth == 0 {
            starts.push(i);
        }
        match token {
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    starts
}

/// The comma-separated pieces among the top-level positions `at`, each as its tokens (a nested
/// parenthesis kept whole, to the next top-level position).
fn pieces<'t>(tokens: &'t [Token], at: &[usize]) -> Vec<&'t [Token]> {
    let (Some(&first), Some(&last)) = (at.first(), at.last()) else {
        return Vec::new();
    };
    let end = next_top(tokens, last);
    let mut found = Vec::new();
    let mut start = first;
    for &i in at.iter().filter(|&&i| tokens[i] == Token::Comma) {
        found.push(&tokens[start..i]);
        start = i + 1;
    }
    found.push(&tokens[start.min(end)..end]);
    found
}

/// The end (exclusive) of the top-level item starting at `at`: past its parenthesis, if it opens one.
fn next_top(tokens: &[Token], at: usize) -> usize {
    match tokens[at] {
        Token::LParen => matching_paren(tokens, at).map_or(tokens.len(), |close| close + 1),
        _ => at + 1,
    }
}

/// Whether a piece is one literal (a separator such as `','`, a number): not a value of a row.
fn is_literal(piece: &[Token]) -> bool {
    matches!(
        piece,
        [Token::SingleQuotedString(_)
            | Token::DoubleQuotedString(_)
            | Token::EscapedStringLiteral(_)
            | Token::NationalStringLiteral(_)
            | Token::Number(..)]
    )
}

/// A piece without a leading DISTINCT or ALL.
fn strip_quantifier(piece: &[Token]) -> &[Token] {
    match piece.split_first() {
        Some((Token::Word(w), rest)) if matches!(w.keyword, Keyword::DISTINCT | Keyword::ALL) => {
            rest
        }
        _ => piece,
    }
}

/// A sort key without its trailing ASC / DESC / NULLS FIRST / NULLS LAST.
fn strip_direction(piece: &[Token]) -> &[Token] {
    let mut end = piece.len();
    while end > 0 {
        match &piece[end - 1] {
            Token::Word(w)
                if w.quote_style.is_none()
                    && matches!(
                        w.keyword,
                        Keyword::ASC
                            | Keyword::DESC
                            | Keyword::NULLS
                            | Keyword::FIRST
                            | Keyword::LAST
                    ) =>
            {
                end -= 1
            }
            _ => break,
        }
    }
    &piece[..end]
}

/// A piece's text to compare by: its tokens joined, unquoted words lower-cased.
fn normal(piece: &[Token]) -> String {
    piece
        .iter()
        .map(|token| match token {
            Token::Word(w) if w.quote_style.is_none() => w.value.to_ascii_lowercase(),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests;
