//! Constants of a query and their close variants (seed 000 section 3.1 (1)-(2)): an integer
//! becomes a random integer or itself +-1, a real a random real or itself +-0.001, a string a
//! random string, a sub-string or a concatenation with a random string, and a LIKE pattern also
//! gains or loses its `%` wildcards.

use super::walk::Role;
use crate::engine::value::Value as Constant;
use fastrand::Rng;
use sqlparser::ast::{Expr, UnaryOperator, Value};

/// Smallest step of a real constant (the paper's epsilon), as decimal places.
const REAL_STEP_DECIMALS: usize = 3;
/// Random numbers are drawn from `[-bound, bound]` with `bound` at least this.
const MIN_RANDOM_BOUND: i64 = 1000;
/// Length of the random strings that replace or extend a string.
const RANDOM_STRING_LEN: usize = 4;

/// A numeric literal: its text without sign, and whether it is negated.
fn number_literal(expr: &Expr) -> Option<(&str, bool)> {
    match expr {
        Expr::Value(value) => match &value.value {
            Value::Number(text, _) => Some((text, false)),
            _ => None,
        },
        Expr::UnaryOp { op, expr } => match (op, &**expr) {
            (UnaryOperator::Minus, Expr::Value(value)) => match &value.value {
                Value::Number(text, _) => Some((text, true)),
                _ => None,
            },
            (UnaryOperator::Plus, inner) => number_literal(inner),
            _ => None,
        },
        _ => None,
    }
}

/// The text of a string literal (single- or double-quoted).
pub(super) fn string_literal(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Value(value) => match &value.value {
            Value::SingleQuotedString(text) | Value::DoubleQuotedString(text) => Some(text),
            _ => None,
        },
        _ => None,
    }
}

/// A parsed number: an integer, or a real with the decimal places it was written with.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Number {
    Int(i64),
    Real(f64, usize),
}

fn parse_number(text: &str, negated: bool) -> Option<Number> {
    let signed = if negated {
        format!("-{text}")
    } else {
        text.to_string()
    };
    if let Ok(int) = signed.parse::<i64>() {
        return Some(Number::Int(int));
    }
    let real: f64 = signed.parse().ok()?;
    let decimals = text
        .split_once('.')
        .map_or(0, |(_, fraction)| fraction.len());
    real.is_finite().then_some(Number::Real(real, decimals))
}

fn number_expr(text: String) -> Expr {
    match text.strip_prefix('-') {
        Some(magnitude) => Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr: Box::new(Expr::value(Value::Number(magnitude.to_string(), false))),
        },
        None => Expr::value(Value::Number(text, false)),
    }
}

/// Variants of a numeric literal, or `None` when `expr` is not one. A LIMIT count only moves by
/// one and stays positive.
pub(super) fn number_variants(expr: &Expr, role: Role, rng: &mut Rng) -> Option<Vec<Expr>> {
    let (text, negated) = number_literal(expr)?;
    let number = parse_number(text, negated)?;
    let texts: Vec<String> = match (number, role) {
        (Number::Int(n), Role::Limit) => [n.checked_sub(1), n.checked_add(1)]
            .into_iter()
            .flatten()
            .filter(|&v| v >= 1)
            .map(|v| v.to_string())
            .collect(),
        (Number::Real(..), Role::Limit) => Vec::new(),
        (Number::Int(n), _) => {
            let bound = n.saturating_abs().saturating_mul(10).max(MIN_RANDOM_BOUND);
            [
                n.checked_add(1),
                n.checked_sub(1),
                Some(rng.i64(-bound..=bound)),
            ]
            .into_iter()
            .flatten()
            .map(|v| v.to_string())
            .collect()
        }
        (Number::Real(x, decimals), _) => {
            let decimals = decimals.max(REAL_STEP_DECIMALS);
            let step = 10f64.powi(-(decimals as i32));
            let bound = (x.abs() * 10.0).max(MIN_RANDOM_BOUND as f64);
            [x + step, x - step, (rng.f64() * 2.0 - 1.0) * bound]
                .into_iter()
                .map(|v| format!("{v:.decimals$}"))
                .collect()
        }
    };
    Some(texts.into_iter().map(number_expr).collect())
}

fn random_string(rng: &mut Rng) -> String {
    (0..RANDOM_STRING_LEN).map(|_| rng.lowercase()).collect()
}

/// A random string, the string without its last or first character, and the string with a
/// random string appended or prepended.
fn text_variants(text: &str, rng: &mut Rng) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut variants = vec![random_string(rng)];
    if chars.len() >= 2 {
        variants.push(chars[..chars.len() - 1].iter().collect());
        variants.push(chars[1..].iter().collect());
    }
    variants.push(format!("{text}{}", random_string(rng)));
    variants.push(format!("{}{text}", random_string(rng)));
    variants
}

/// `%core%` split into (leading `%`, core, trailing `%`).
fn split_wildcards(pattern: &str) -> (bool, &str, bool) {
    let leading = pattern.starts_with('%');
    let trailing = pattern.len() > 1 && pattern.ends_with('%');
    (leading, pattern.trim_matches('%'), trailing)
}

fn wrap(core: &str, leading: bool, trailing: bool) -> String {
    let prefix = if leading { "%" } else { "" };
    let suffix = if trailing { "%" } else { "" };
    format!("{prefix}{core}{suffix}")
}

/// Variants of a LIKE pattern: the other placements of `%` around its core, then the core's
/// text variants under the original wildcards.
fn pattern_variants(pattern: &str, rng: &mut Rng) -> Vec<String> {
    let (leading, core, trailing) = split_wildcards(pattern);
    if core.is_empty() {
        return Vec::new();
    }
    let mut variants: Vec<String> = [(true, true), (false, true), (true, false), (false, false)]
        .into_iter()
        .filter(|&placement| placement != (leading, trailing))
        .map(|(l, t)| wrap(core, l, t))
        .collect();
    variants.extend(
        text_variants(core, rng)
            .into_iter()
            .map(|text| wrap(&text, leading, trailing)),
    );
    variants
}

/// Variants of a string literal, or `None` when `expr` is not one.
pub(super) fn string_variants(expr: &Expr, role: Role, rng: &mut Rng) -> Option<Vec<Expr>> {
    let text = string_literal(expr)?;
    let texts = match role {
        Role::LikePattern => pattern_variants(text, rng),
        Role::Plain | Role::Limit => text_variants(text, rng),
    };
    Some(
        texts
            .into_iter()
            .map(|t| Expr::value(Value::SingleQuotedString(t)))
            .collect(),
    )
}

/// The constants a literal contributes to the random databases: its value, or for a LIKE
/// pattern the pieces of text between its `%` wildcards. LIMIT counts contribute nothing.
pub(super) fn literal_constants(expr: &Expr, role: Role) -> Vec<Constant> {
    if role == Role::Limit {
        return Vec::new();
    }
    if let Some((text, negated)) = number_literal(expr) {
        return match parse_number(text, negated) {
            Some(Number::Int(n)) => vec![Constant::Int(n)],
            Some(Number::Real(x, _)) => vec![Constant::Real(x)],
            None => Vec::new(),
        };
    }
    match (string_literal(expr), role) {
        (Some(pattern), Role::LikePattern) => pattern
            .split('%')
            .filter(|piece| !piece.is_empty())
            .map(|piece| Constant::Text(piece.to_string()))
            .collect(),
        (Some(text), _) => vec![Constant::Text(text.to_string())],
        (None, _) => Vec::new(),
    }
}
