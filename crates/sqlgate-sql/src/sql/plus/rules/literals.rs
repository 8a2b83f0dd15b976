//! Rules 11, 15, 19 and 20: rewrites of one comparison, value list or range.

use crate::sql::facts::Affinity;
use crate::sql::plus::form::{canonical_number, comparison, negate, Expr};
use crate::sql::plus::rewrite::Rewriter;
use crate::sql::plus::Rule;

impl Rewriter<'_> {
    /// Rule 11: a string compared with a column becomes a number where SQLite's type affinity
    /// makes the two comparisons equal for every value: with an INTEGER, REAL or NUMERIC column
    /// the string is converted to the number it spells; with a TEXT column the number is
    /// converted to text, so the string must be exactly that text (`'2014'` for `2014`, never
    /// `'2014.0'`); a BLOB (untyped) column converts neither.
    pub(in crate::sql::plus) fn numeric_string(&mut self, column: &Expr, value: &mut Expr) {
        let (Expr::Column(t, c), Expr::Text(text)) = (column, &*value) else {
            return;
        };
        let Some(number) = plain_number(text) else {
            return;
        };
        let converts = match self.facts.affinity.get(&(t.clone(), c.clone())) {
            Some(Affinity::Integer | Affinity::Real | Affinity::Numeric) => true,
            Some(Affinity::Text) => number == *text,
            Some(Affinity::Blob) | None => false,
        };
        if converts && self.allow(Rule::NumericString) {
            *value = Expr::Number(number);
            self.fire(Rule::NumericString);
        }
    }

    /// Rule 15: `c IN (x, y)` is `c = x OR c = y` (`NOT IN`: `c != x AND c != y`); rule 11
    /// applies to the members first, as it would to the comparisons.
    pub(in crate::sql::plus) fn in_list(&mut self, expr: &mut Expr) {
        if let Expr::InList {
            expr: subject,
            list,
            negated,
        } = expr
        {
            for value in list.iter_mut() {
                self.numeric_string(subject, value);
            }
            if self.allow(Rule::InList) {
                let op = if *negated { "!=" } else { "=" };
                let parts: Vec<Expr> = list
                    .iter()
                    .map(|v| comparison(op, (**subject).clone(), v.clone()))
                    .collect();
                *expr = if *negated {
                    Expr::And(parts)
                } else {
                    Expr::Or(parts)
                };
                self.fire(Rule::InList);
            }
        }
    }

    /// Rule 19: `c BETWEEN x AND y` is `c >= x AND c <= y` (rule 11 applies to x and y first).
    pub(in crate::sql::plus) fn between(&mut self, expr: &mut Expr) {
        if let Expr::Between {
            expr: subject,
            low,
            high,
            ..
        } = expr
        {
            self.numeric_string(subject, low);
            self.numeric_string(subject, high);
        }
        if let Expr::Between {
            expr: subject,
            low,
            high,
            negated: false,
        } = expr
        {
            if self.allow(Rule::Between) {
                *expr = Expr::And(vec![
                    comparison(">=", (**subject).clone(), (**low).clone()),
                    comparison("<=", (**subject).clone(), (**high).clone()),
                ]);
                self.fire(Rule::Between);
            }
        }
    }

    /// Rule 20: `NOT c op x` is `c negated-op x`.
    pub(in crate::sql::plus) fn not_comparison(&mut self, expr: &mut Expr) {
        if let Expr::Not(inner) = expr {
            if let Expr::Binary { op, left, right } = &**inner {
                if let Some(negated) = negate(op) {
                    if self.allow(Rule::NotComparison) {
                        *expr = comparison(negated, (**left).clone(), (**right).clone());
                        self.fire(Rule::NotComparison);
                    }
                }
            }
        }
    }
}

/// The canonical number a string spells when it is a plain decimal SQLite reads alike as a
/// number and renders back the same way (no sign but `-`, no leading zero, no exponent or
/// space, at most 15 digits), e.g. `'2014'` -> `2014`, `'2.5'` -> `2.5`, `'2014.0'` -> `2014.0`.
fn plain_number(text: &str) -> Option<String> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let plain = !whole.is_empty()
        && whole.len() + fraction.len() <= 15
        && whole
            .chars()
            .chain(fraction.chars())
            .all(|c| c.is_ascii_digit())
        && (whole == "0" || !whole.starts_with('0'))
        && !digits.ends_with('.');
    plain.then(|| canonical_number(text))
}

#[cfg(test)]
mod tests {
    use crate::sql::plus::test_support::{differ, fires, only_when_verified};
    use crate::sql::plus::Rule;

    #[test]
    fn rule_11_numeric_string_needs_a_typed_column_and_no_leading_zero() {
        let (a, b) = (
            "SELECT name FROM dogs WHERE age = '5'",
            "SELECT name FROM dogs WHERE age = 5",
        );
        only_when_verified(Rule::NumericString, a, b);
        differ(
            "SELECT name FROM dogs WHERE age = '05'",
            "SELECT name FROM dogs WHERE age = 5",
        );
    }

    #[test]
    fn rule_15_in_list_is_a_disjunction() {
        fires(
            Rule::InList,
            "SELECT name FROM dogs WHERE age IN (1, 2)",
            "SELECT name FROM dogs WHERE age = 2 OR age = 1",
        );
    }

    #[test]
    fn rule_19_between() {
        fires(
            Rule::Between,
            "SELECT name FROM dogs WHERE age BETWEEN 1 AND 3",
            "SELECT name FROM dogs WHERE age >= 1 AND age <= 3",
        );
    }

    #[test]
    fn rule_20_not_comparison() {
        fires(
            Rule::NotComparison,
            "SELECT name FROM dogs WHERE NOT age > 3",
            "SELECT name FROM dogs WHERE age <= 3",
        );
    }
}
