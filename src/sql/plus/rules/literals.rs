//! Rules 11, 15, 19 and 20: rewrites of one comparison, value list or range.

use crate::sql::plus::form::{canonical_number, comparison, negate, Expr};
use crate::sql::plus::rewrite::Rewriter;
use crate::sql::plus::Rule;

impl Rewriter<'_> {
    /// Rule 11: a number-valued string compared with a typed column becomes the number.
    pub(in crate::sql::plus) fn numeric_string(&mut self, column: &Expr, value: &mut Expr) {
        let (Expr::Column(t, c), Expr::Text(text)) = (column, &*value) else {
            return;
        };
        let is_number = text.parse::<f64>().is_ok_and(f64::is_finite)
            && !text.starts_with('0')
            && !text.starts_with("-0")
            && text.trim() == text
            && !text.contains(['e', 'E', '+', 'x', 'X'])
            && !text.eq_ignore_ascii_case("inf")
            && !text.eq_ignore_ascii_case("nan");
        let zero = text == "0";
        if (is_number || zero)
            && self.facts.typed.contains(&(t.clone(), c.clone()))
            && self.allow(Rule::NumericString)
        {
            *value = Expr::Number(canonical_number(text));
            self.fire(Rule::NumericString);
        }
    }

    /// Rule 15: `c IN (x, y)` is `c = x OR c = y` (`NOT IN`: `c != x AND c != y`).
    pub(in crate::sql::plus) fn in_list(&mut self, expr: &mut Expr) {
        if let Expr::InList {
            expr: subject,
            list,
            negated,
        } = expr
        {
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

    /// Rule 19: `c BETWEEN x AND y` is `c >= x AND c <= y`.
    pub(in crate::sql::plus) fn between(&mut self, expr: &mut Expr) {
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
