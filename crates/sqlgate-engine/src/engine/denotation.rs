//! Result ("denotation") comparison under the three profiles.
//!
//! `SpiderTs` is the official test-suite-sql-eval `result_eq`, including its row-sorting
//! quick-reject; where the official code samples rows to prune column permutations, this one
//! searches them exactly and deterministically. `Bird` is BIRD's set equality; `Strict` is bag
//! (or sequence) equality with a fixed column order. A positive `float_tolerance` makes numbers
//! within the tolerance equal in every profile.

use crate::engine::value::{Key, Row, Value};
use std::collections::{HashMap, HashSet};

/// Which comparison semantics apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// The official Spider / test-suite semantics.
    SpiderTs,
    /// BIRD's `set(pred) == set(gold)`.
    Bird,
    /// Bags of rows, fixed column order.
    Strict,
}

/// Comparison settings.
#[derive(Debug, Clone, Copy)]
pub struct CompareOptions {
    /// The semantics.
    pub profile: Profile,
    /// Relative and absolute tolerance for numbers; 0 compares exactly.
    pub float_tolerance: f64,
}

/// Most rows the exact matching fallback of tolerant comparison examines; beyond it, results
/// that sorting cannot align are reported unequal (never wrongly equal).
const MAX_TOLERANT_MATCHING_ROWS: usize = 5_000;

/// Whether `pred` is the same denotation as `gold`.
pub fn denotations_equal(
    gold: &[Row],
    pred: &[Row],
    order_matters: bool,
    options: &CompareOptions,
) -> bool {
    let equal = Equality::new(options.float_tolerance);
    match options.profile {
        Profile::SpiderTs => spider_ts_equal(gold, pred, order_matters, &equal),
        Profile::Bird => equal.row_sets(gold, pred),
        Profile::Strict if order_matters => equal.row_sequences(gold, pred),
        Profile::Strict => equal.row_bags(gold, pred),
    }
}

/// Python's `str(x)` of a value, as the official quick-reject sorts by it.
pub fn python_str(value: &Value) -> String {
    match value {
        Value::Null => "None".into(),
        Value::Int(i) => i.to_string(),
        Value::Real(f) => python_float_repr(*f),
        Value::Text(s) => s.clone(),
        Value::Blob(b) => python_bytes_repr(b),
        Value::Py(value) => value.python_str(),
    }
}

fn spider_ts_equal(gold: &[Row], pred: &[Row], order_matters: bool, equal: &Equality) -> bool {
    if gold.is_empty() && pred.is_empty() {
        return true;
    }
    if gold.len() != pred.len() {
        return false;
    }
    let columns = gold[0].len();
    if pred[0].len() != columns {
        return false;
    }
    if equal.exact() && !quick_accept(gold, pred, order_matters) {
        return false;
    }
    if columns == 1 {
        // The only permutation: the search would compare the rows themselves.
        return match order_matters {
            true => equal.row_sequences(gold, pred),
            false => equal.row_bags(gold, pred),
        };
    }
    PermutationSearch::new(gold, pred, order_matters, equal).exists()
}

/// The official `quick_rej`: each row's values sorted by `str(x) + str(type(x))`, then the rows
/// compared as sequences (order matters) or as sets.
fn quick_accept(gold: &[Row], pred: &[Row], order_matters: bool) -> bool {
    fn unordered(rows: &[Row]) -> Vec<Vec<&Value>> {
        rows.iter()
            .map(|row| {
                if row.len() < 2 {
                    return row.iter().collect();
                }
                let mut keyed: Vec<(String, &Value)> = row
                    .iter()
                    .map(|v| (python_str(v) + v.python_type_name(), v))
                    .collect();
                keyed.sort_by(|a, b| a.0.cmp(&b.0));
                keyed.into_iter().map(|(_, v)| v).collect()
            })
            .collect()
    }
    let (sorted_gold, sorted_pred) = (unordered(gold), unordered(pred));
    if order_matters {
        sorted_gold == sorted_pred
    } else {
        let gold_set: HashSet<&Vec<&Value>> = sorted_gold.iter().collect();
        let pred_set: HashSet<&Vec<&Value>> = sorted_pred.iter().collect();
        gold_set == pred_set
    }
}

/// Exact search for a column permutation under which `pred` equals `gold`.
struct PermutationSearch<'a> {
    gold: &'a [Row],
    pred: &'a [Row],
    order_matters: bool,
    equal: &'a Equality,
    /// `candidates[i]`: predicted columns whose values can stand for gold column `i`.
    candidates: Vec<Vec<usize>>,
}

impl<'a> PermutationSearch<'a> {
    fn new(gold: &'a [Row], pred: &'a [Row], order_matters: bool, equal: &'a Equality) -> Self {
        let columns = gold[0].len();
        let column = |rows: &[Row], i: usize| -> Vec<Row> {
            rows.iter().map(|r| vec![r[i].clone()]).collect()
        };
        let pred_columns: Vec<Vec<Row>> = (0..columns).map(|j| column(pred, j)).collect();
        let candidates = (0..columns)
            .map(|i| {
                let gold_column = column(gold, i);
                (0..columns)
                    .filter(|&j| {
                        if order_matters {
                            equal.row_sequences(&gold_column, &pred_columns[j])
                        } else {
                            equal.row_bags(&gold_column, &pred_columns[j])
                        }
                    })
                    .collect()
            })
            .collect();
        PermutationSearch {
            gold,
            pred,
            order_matters,
            equal,
            candidates,
        }
    }

    fn exists(&self) -> bool {
        if self.candidates.iter().any(Vec::is_empty) {
            return false;
        }
        let mut assigned = Vec::with_capacity(self.candidates.len());
        let mut used = vec![false; self.candidates.len()];
        self.extend(&mut assigned, &mut used)
    }

    /// Backtracking: `assigned[i]` is the predicted column for gold column `i`. The rows projected
    /// onto the assigned columns must already agree; among interchangeable predicted columns
    /// (identical values) only the first is tried.
    fn extend(&self, assigned: &mut Vec<usize>, used: &mut [bool]) -> bool {
        if !self.prefix_agrees(assigned) {
            return false;
        }
        let depth = assigned.len();
        if depth == self.candidates.len() {
            return true;
        }
        let mut tried: Vec<usize> = Vec::new();
        for &j in &self.candidates[depth] {
            if used[j] || tried.iter().any(|&t| self.same_pred_column(t, j)) {
                continue;
            }
            tried.push(j);
            used[j] = true;
            assigned.push(j);
            if self.extend(assigned, used) {
                return true;
            }
            assigned.pop();
            used[j] = false;
        }
        false
    }

    fn same_pred_column(&self, a: usize, b: usize) -> bool {
        self.pred.iter().all(|row| row[a].key() == row[b].key())
    }

    fn prefix_agrees(&self, assigned: &[usize]) -> bool {
        if assigned.len() <= 1 || self.order_matters {
            // Single columns were checked when building candidates; with order, column-wise
            // sequence equality already implies row-wise equality.
            return true;
        }
        let project = |rows: &[Row], columns: &mut dyn Iterator<Item = usize>| -> Vec<Row> {
            let columns: Vec<usize> = columns.collect();
            rows.iter()
                .map(|r| columns.iter().map(|&c| r[c].clone()).collect())
                .collect()
        };
        let gold = project(self.gold, &mut (0..assigned.len()));
        let pred = project(self.pred, &mut assigned.iter().copied());
        self.equal.row_bags(&gold, &pred)
    }
}

/// Value equality: Python's, or numbers within a tolerance.
struct Equality {
    tolerance: f64,
}

impl Equality {
    fn new(tolerance: f64) -> Self {
        Equality { tolerance }
    }

    fn exact(&self) -> bool {
        self.tolerance == 0.0
    }

    fn values(&self, a: &Value, b: &Value) -> bool {
        match (a.as_f64(), b.as_f64()) {
            (Some(x), Some(y)) if !self.exact() => {
                let difference = (x - y).abs();
                difference <= self.tolerance || difference <= self.tolerance * x.abs().max(y.abs())
            }
            _ => a.key() == b.key(),
        }
    }

    fn rows(&self, a: &[Value], b: &[Value]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| self.values(x, y))
    }

    fn row_sequences(&self, gold: &[Row], pred: &[Row]) -> bool {
        gold.len() == pred.len() && gold.iter().zip(pred).all(|(g, p)| self.rows(g, p))
    }

    fn row_bags(&self, gold: &[Row], pred: &[Row]) -> bool {
        if gold.len() != pred.len() {
            return false;
        }
        if self.exact() {
            return counts(gold) == counts(pred);
        }
        self.tolerant_matching(gold, pred)
    }

    fn row_sets(&self, gold: &[Row], pred: &[Row]) -> bool {
        if self.exact() {
            return row_set(gold) == row_set(pred);
        }
        let covered =
            |from: &[Row], to: &[Row]| from.iter().all(|a| to.iter().any(|b| self.rows(a, b)));
        covered(gold, pred) && covered(pred, gold)
    }

    /// Bag equality under tolerance: rows sorted canonically and compared in order; if that does
    /// not align them, an exact bipartite matching (augmenting paths) decides.
    fn tolerant_matching(&self, gold: &[Row], pred: &[Row]) -> bool {
        let sorted = |rows: &[Row]| -> Vec<Row> {
            let mut rows = rows.to_vec();
            rows.sort_by(|a, b| canonical_order(a, b));
            rows
        };
        let (sorted_gold, sorted_pred) = (sorted(gold), sorted(pred));
        if self.row_sequences(&sorted_gold, &sorted_pred) {
            return true;
        }
        if gold.len() > MAX_TOLERANT_MATCHING_ROWS {
            return false;
        }
        let neighbours: Vec<Vec<usize>> = gold
            .iter()
            .map(|g| {
                (0..pred.len())
                    .filter(|&p| self.rows(g, &pred[p]))
                    .collect()
            })
            .collect();
        perfect_matching(&neighbours, pred.len())
    }
}

/// Whether every left vertex can be matched to a distinct right vertex (Kuhn's algorithm).
pub(crate) fn perfect_matching(neighbours: &[Vec<usize>], right_count: usize) -> bool {
    fn augment(
        left: usize,
        neighbours: &[Vec<usize>],
        seen: &mut [bool],
        owner: &mut [Option<usize>],
    ) -> bool {
        for &right in &neighbours[left] {
            if std::mem::replace(&mut seen[right], true) {
                continue;
            }
            if owner[right].is_none_or(|other| augment(other, neighbours, seen, owner)) {
                owner[right] = Some(left);
                return true;
            }
        }
        false
    }
    let mut owner = vec![None; right_count];
    (0..neighbours.len())
        .all(|left| augment(left, neighbours, &mut vec![false; right_count], &mut owner))
}

fn row_key(row: &[Value]) -> Vec<Key<'_>> {
    row.iter().map(Value::key).collect()
}

fn row_set(rows: &[Row]) -> HashSet<Vec<Key<'_>>> {
    rows.iter().map(|r| row_key(r)).collect()
}

fn counts(rows: &[Row]) -> HashMap<Vec<Key<'_>>, usize> {
    let mut counts = HashMap::with_capacity(rows.len());
    for row in rows {
        *counts.entry(row_key(row)).or_insert(0) += 1;
    }
    counts
}

/// A total order on rows that puts numerically close numbers next to each other.
fn canonical_order(a: &[Value], b: &[Value]) -> std::cmp::Ordering {
    let rank = |v: &Value| match v {
        Value::Null => 0,
        Value::Int(_) | Value::Real(_) => 1,
        Value::Py(value) if value.as_f64().is_some() => 1,
        Value::Text(_) => 2,
        Value::Blob(_) => 3,
        Value::Py(_) => 4,
    };
    for (x, y) in a.iter().zip(b) {
        let ordering = rank(x).cmp(&rank(y)).then_with(|| match (x, y) {
            (Value::Text(s), Value::Text(t)) => s.cmp(t),
            (Value::Blob(s), Value::Blob(t)) => s.cmp(t),
            (Value::Py(s), Value::Py(t)) if rank(x) == 4 => s.identity().cmp(&t.identity()),
            _ => match (x.as_f64(), y.as_f64()) {
                (Some(p), Some(q)) => p.total_cmp(&q),
                _ => std::cmp::Ordering::Equal,
            },
        });
        if ordering.is_ne() {
            return ordering;
        }
    }
    a.len().cmp(&b.len())
}

/// Python's `repr(float)`: shortest round-trip digits, fixed notation for exponents in
/// [-4, 16), scientific (`1e+16`, `1.5e-05`) otherwise.
fn python_float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let scientific = format!("{:e}", f.abs());
    let (mantissa, exponent) = scientific.split_once('e').expect("{:e} has an exponent");
    let exponent: i32 = exponent.parse().expect("an integer exponent");
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if f.is_sign_negative() { "-" } else { "" };
    if (-4..16).contains(&exponent) {
        let point = exponent + 1;
        let text = if point <= 0 {
            format!("0.{}{}", "0".repeat((-point) as usize), digits)
        } else if point as usize >= digits.len() {
            format!("{}{}.0", digits, "0".repeat(point as usize - digits.len()))
        } else {
            format!(
                "{}.{}",
                &digits[..point as usize],
                &digits[point as usize..]
            )
        };
        format!("{sign}{text}")
    } else {
        let mantissa = if digits.len() > 1 {
            format!("{}.{}", &digits[..1], &digits[1..])
        } else {
            digits
        };
        let exponent_sign = if exponent < 0 { '-' } else { '+' };
        format!("{sign}{mantissa}e{exponent_sign}{:02}", exponent.abs())
    }
}

/// Python's `repr(bytes)`.
fn python_bytes_repr(bytes: &[u8]) -> String {
    let quote = if bytes.contains(&b'\'') && !bytes.contains(&b'"') {
        '"'
    } else {
        '\''
    };
    let mut out = format!("b{quote}");
    for &b in bytes {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            _ if b as char == quote => {
                out.push('\\');
                out.push(quote);
            }
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use Value::{Blob, Int, Null, Real, Text};

    fn t(s: &str) -> Value {
        Text(s.into())
    }

    fn options(profile: Profile) -> CompareOptions {
        CompareOptions {
            profile,
            float_tolerance: 0.0,
        }
    }

    fn spider(gold: &[Row], pred: &[Row], order: bool) -> bool {
        denotations_equal(gold, pred, order, &options(Profile::SpiderTs))
    }

    #[test]
    fn python_repr_of_floats() {
        let cases = [
            (1.0, "1.0"),
            (0.1, "0.1"),
            (1.5, "1.5"),
            (-0.0, "-0.0"),
            (1e16, "1e+16"),
            (1.5e-5, "1.5e-05"),
            (0.0001, "0.0001"),
            (123456789.125, "123456789.125"),
            (1e15, "1000000000000000.0"),
            (2.5e-310, "2.5e-310"),
            (f64::INFINITY, "inf"),
        ];
        for (value, expected) in cases {
            assert_eq!(python_float_repr(value), expected);
        }
    }

    #[test]
    fn python_repr_of_bytes_and_others() {
        assert_eq!(
            python_str(&Blob(b"a'b\x00\\".to_vec())),
            "b\"a'b\\x00\\\\\""
        );
        assert_eq!(python_str(&Blob(b"ab".to_vec())), "b'ab'");
        assert_eq!(python_str(&Null), "None");
        assert_eq!(python_str(&Int(-3)), "-3");
    }

    #[test]
    fn empty_results_are_equal_and_sizes_must_agree() {
        assert!(spider(&[], &[], true));
        assert!(!spider(&[vec![Int(1)]], &[], false));
        assert!(!spider(
            &[vec![Int(1)]],
            &[vec![Int(1)], vec![Int(1)]],
            false
        ));
        assert!(!spider(&[vec![Int(1)]], &[vec![Int(1), Int(2)]], false));
    }

    #[test]
    fn spider_permits_column_and_row_permutations_with_bag_semantics() {
        let gold = vec![
            vec![Int(1), t("a")],
            vec![Int(2), t("b")],
            vec![Int(2), t("b")],
        ];
        let pred = vec![
            vec![t("b"), Int(2)],
            vec![t("a"), Int(1)],
            vec![t("b"), Int(2)],
        ];
        assert!(spider(&gold, &pred, false));
        assert!(!spider(&gold, &pred, true));
        let fewer_duplicates = vec![
            vec![t("b"), Int(2)],
            vec![t("a"), Int(1)],
            vec![t("a"), Int(1)],
        ];
        assert!(!spider(&gold, &fewer_duplicates, false));
    }

    #[test]
    fn spider_needs_one_permutation_for_all_rows() {
        let gold = vec![vec![Int(1), Int(2)], vec![Int(3), Int(4)]];
        let swapped_in_one_row = vec![vec![Int(2), Int(1)], vec![Int(3), Int(4)]];
        assert!(!spider(&gold, &swapped_in_one_row, false));
    }

    #[test]
    fn values_compare_like_python() {
        assert!(spider(&[vec![Int(1)]], &[vec![Real(1.0)]], false));
        assert!(spider(&[vec![Null]], &[vec![Null]], false));
        assert!(!spider(&[vec![Int(1)]], &[vec![t("1")]], false));
        assert!(!spider(
            &[vec![t("a")]],
            &[vec![Blob(b"a".to_vec())]],
            false
        ));
    }

    #[test]
    fn the_official_quick_reject_quirk_is_reproduced() {
        // str-sorting puts int 1 after 1.5 ("1<class" > "1.5<cl") but float 1.0 before it.
        let gold = vec![vec![Int(1), Real(1.5)]];
        let pred = vec![vec![Real(1.0), Real(1.5)]];
        assert!(!spider(&gold, &pred, false));
        assert!(denotations_equal(
            &gold,
            &pred,
            false,
            &options(Profile::Strict)
        ));
    }

    #[test]
    fn bird_is_set_equality_with_fixed_columns() {
        let bird = |g: &[Row], p: &[Row]| denotations_equal(g, p, false, &options(Profile::Bird));
        let gold = vec![vec![Int(1), t("a")], vec![Int(1), t("a")]];
        assert!(bird(&gold, &[vec![Int(1), t("a")]]));
        assert!(!bird(&gold, &[vec![t("a"), Int(1)]]));
        assert!(bird(&[], &[]));
    }

    #[test]
    fn strict_is_bags_with_fixed_columns() {
        let strict =
            |g: &[Row], p: &[Row], o| denotations_equal(g, p, o, &options(Profile::Strict));
        let gold = vec![vec![Int(1)], vec![Int(2)], vec![Int(2)]];
        assert!(strict(
            &gold,
            &[vec![Int(2)], vec![Int(1)], vec![Int(2)]],
            false
        ));
        assert!(!strict(
            &gold,
            &[vec![Int(2)], vec![Int(1)], vec![Int(2)]],
            true
        ));
        assert!(!strict(
            &gold,
            &[vec![Int(1)], vec![Int(2)], vec![Int(1)]],
            false
        ));
        assert!(!strict(
            &[vec![Int(1), Int(2)]],
            &[vec![Int(2), Int(1)]],
            false
        ));
    }

    #[test]
    fn tolerance_applies_to_every_profile() {
        for profile in [Profile::SpiderTs, Profile::Bird, Profile::Strict] {
            let tolerant = CompareOptions {
                profile,
                float_tolerance: 1e-6,
            };
            let gold = vec![vec![Real(1.0), t("a")], vec![Real(2.0), t("b")]];
            let close = vec![
                vec![Real(2.000_000_1), t("b")],
                vec![Real(1.000_000_1), t("a")],
            ];
            let far = vec![vec![Real(2.1), t("b")], vec![Real(1.0), t("a")]];
            assert!(
                denotations_equal(&gold, &close, false, &tolerant),
                "{profile:?}"
            );
            assert!(
                !denotations_equal(&gold, &far, false, &tolerant),
                "{profile:?}"
            );
        }
    }

    #[test]
    fn tolerant_matching_finds_alignments_sorting_misses() {
        let tolerant = CompareOptions {
            profile: Profile::Strict,
            float_tolerance: 1e-3,
        };
        let gold = vec![vec![Real(1.0), t("a")], vec![Real(1.0001), t("b")]];
        let pred = vec![vec![Real(1.0), t("b")], vec![Real(1.0001), t("a")]];
        assert!(denotations_equal(&gold, &pred, false, &tolerant));
    }

    /// A tiny deterministic generator for the permutation property.
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self, bound: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) % bound as u64) as usize
        }
    }

    #[test]
    fn shuffled_rows_and_columns_stay_equal() {
        let mut rng = Lcg(7);
        for _ in 0..200 {
            let (rows, columns) = (1 + rng.next(12), 1 + rng.next(5));
            let gold: Vec<Row> = (0..rows)
                .map(|_| (0..columns).map(|_| Int(rng.next(3) as i64)).collect())
                .collect();
            let mut order: Vec<usize> = (0..columns).collect();
            for i in (1..columns).rev() {
                order.swap(i, rng.next(i + 1));
            }
            let mut pred: Vec<Row> = gold
                .iter()
                .map(|r| order.iter().map(|&c| r[c].clone()).collect())
                .collect();
            for i in (1..rows).rev() {
                pred.swap(i, rng.next(i + 1));
            }
            assert!(spider(&gold, &pred, false), "{gold:?} vs {pred:?}");
            pred[0][0] = Int(9);
            assert!(!spider(&gold, &pred, false));
        }
    }

    #[test]
    fn many_identical_columns_do_not_explode() {
        let row: Row = (0..20).map(|_| Int(1)).collect();
        let mut gold: Vec<Row> = (0..1000).map(|_| row.clone()).collect();
        let pred = gold.clone();
        assert!(spider(&gold, &pred, false));
        gold[999][19] = Int(2);
        assert!(!spider(&gold, &pred, false));
    }
}
