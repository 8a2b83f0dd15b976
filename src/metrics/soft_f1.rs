//! BIRD mini-dev's Soft-F1 (`evaluation/evaluation_f1.py`), and a variant that pairs rows by an
//! optimal assignment.
//!
//! The official computation: both results are reduced to their distinct rows, and row `i` of the
//! gold list is paired with row `i` of the predicted list. For a pair, with `c` the gold row's
//! width: `tp += m / c` (`m`: predicted values that occur in the gold row), `fp += (predicted
//! values not in the gold row) / c`, `fn += (gold values not in the predicted row) / c`; an
//! unpaired gold row adds 1 to `fn`, an unpaired predicted row 1 to `fp`. Precision
//! `tp / (tp + fp)`, recall `tp / (tp + fn)`, F1 their harmonic mean; two empty results score 1;
//! a query that fails scores 0. Values are compared with Python's `==` (1 equals 1.0, NULL
//! equals NULL); column order inside a row does not matter.
//!
//! Which order the distinct rows keep depends on the script's version (`soft_f1.version`):
//! the current one (bee73fe, `2025-06`) keeps each row's first occurrence in the order the query
//! returned it (`dict.fromkeys`); the earlier one (47f116d, `2024-10`) goes through `set()`, so
//! rows pair in CPython's set order ([`crate::engine::pyset`], `PYTHONHASHSEED=0`), an arbitrary
//! pairing under which two results with the same rows can score below 1 (bird-bench/mini_dev#15).
//! Both pair by position, so the same rows in another order still score below 1 under the
//! current version. `soft_f1_aligned` keeps the official row score and formula but pairs the
//! distinct rows by the assignment with the most matching cells (Jonker-Volgenant), so the score
//! depends on neither version's order: equal row sets score 1 and a reordering of either result
//! never changes the value.

use super::resultset::best_assignment;
use super::{gold_and_prediction, prediction_failure, Env, Metric, Outcome, Score};
use crate::engine::pyset::set_order;
use crate::engine::value::{Key, Row, Value};
use crate::input::config::Config;
use crate::input::dataset::GoldItem;
use crate::input::soft_f1::SoftF1Version;
use std::collections::HashSet;

/// Most distinct rows on either side that `soft_f1_aligned` pairs (the assignment is cubic).
pub const MAX_ALIGNED_ROWS: usize = 2000;

/// The `soft_f1` (official pairing) and `soft_f1_aligned` metrics.
pub struct SoftF1 {
    /// Pair rows by an optimal assignment instead of the official set order.
    pub aligned: bool,
}

impl Metric for SoftF1 {
    fn name(&self) -> &'static str {
        if self.aligned {
            "soft_f1_aligned"
        } else {
            "soft_f1"
        }
    }

    fn continuous_scores(&self) -> Vec<String> {
        vec![self.name().to_string()]
    }

    /// The official script's version, for `soft_f1` (the aligned variant pairs rows its own way).
    fn settings(&self, config: &Config) -> Vec<(&'static str, serde_json::Value)> {
        match self.aligned {
            true => Vec::new(),
            false => vec![("soft_f1_version", config.soft_f1.version.name().into())],
        }
    }

    fn score(&self, env: &Env<'_>, item: &GoldItem, prediction: Option<&str>) -> Score {
        let (run, prediction) = match gold_and_prediction(env, item, prediction) {
            Ok(pair) => pair,
            Err(unscored) => return unscored,
        };
        let predicted = match env
            .executor
            .run(run.db, &env.profile.prepare_prediction(prediction))
        {
            Ok(rows) => rows,
            Err(e) => return prediction_failure(e),
        };
        let value = if self.aligned {
            match soft_f1_aligned(&predicted, run.rows()) {
                Some(value) => value,
                None => {
                    return Score::unscored(
                        Outcome::Unavailable,
                        format!("more than {MAX_ALIGNED_ROWS} distinct rows to align"),
                    )
                }
            }
        } else {
            soft_f1_official(&predicted, run.rows(), env.soft_f1_version)
        };
        Score {
            value: Some(value),
            outcome: if value == 1.0 {
                Outcome::Match
            } else {
                Outcome::Mismatch
            },
            error: None,
            details: None,
        }
    }
}

/// The official `calculate_f1_score(predicted, ground_truth)` of `version`, row pairing included.
pub fn soft_f1_official(predicted: &[Row], gold: &[Row], version: SoftF1Version) -> f64 {
    if predicted.is_empty() && gold.is_empty() {
        return 1.0;
    }
    let (predicted, gold) = match version {
        SoftF1Version::Ordered2025 => (distinct(predicted), distinct(gold)),
        SoftF1Version::Set2024 => (in_set_order(predicted), in_set_order(gold)),
    };
    let pairs: Vec<(usize, usize)> = (0..gold.len().min(predicted.len()))
        .map(|i| (i, i))
        .collect();
    f1_of_pairing(&predicted, &gold, &pairs)
}

/// The distinct rows in the order of `list(set(rows))` (CPython 3.12, `PYTHONHASHSEED=0`).
fn in_set_order(rows: &[Row]) -> Vec<&Row> {
    set_order(rows).into_iter().map(|i| &rows[i]).collect()
}

/// Soft-F1 with the distinct rows paired by the assignment of most matching cells; `None` when
/// either side has more than [`MAX_ALIGNED_ROWS`] distinct rows.
pub fn soft_f1_aligned(predicted: &[Row], gold: &[Row]) -> Option<f64> {
    if predicted.is_empty() && gold.is_empty() {
        return Some(1.0);
    }
    let (predicted, gold) = (distinct(predicted), distinct(gold));
    if predicted.len().max(gold.len()) > MAX_ALIGNED_ROWS {
        return None;
    }
    let similarity: Vec<Vec<f64>> = gold
        .iter()
        .map(|g| {
            predicted
                .iter()
                .map(|p| row_match(p, g).0 / g.len().max(1) as f64)
                .collect()
        })
        .collect();
    let mut pairs = best_assignment(&similarity);
    pairs.sort_unstable();
    Some(f1_of_pairing(&predicted, &gold, &pairs))
}

/// Distinct rows (Python equality), first occurrences in order: `list(dict.fromkeys(rows))`.
fn distinct(rows: &[Row]) -> Vec<&Row> {
    let mut seen = HashSet::new();
    rows.iter()
        .filter(|r| seen.insert(r.iter().map(Value::key).collect::<Vec<Key<'_>>>()))
        .collect()
}

/// `calculate_row_match`: (matches, predicted-only, gold-only) counts, before dividing by the
/// gold row's width.
fn row_match(predicted: &[Value], gold: &[Value]) -> (f64, f64, f64) {
    let contains = |row: &[Value], v: &Value| row.iter().any(|x| x.key() == v.key());
    let matches = predicted.iter().filter(|v| contains(gold, v)).count();
    let gold_only = gold.iter().filter(|v| !contains(predicted, v)).count();
    (
        matches as f64,
        (predicted.len() - matches) as f64,
        gold_only as f64,
    )
}

/// The official accumulation for a pairing `(gold row, predicted row)`, in gold order; unpaired
/// gold rows count as missed, unpaired predicted rows as extra.
fn f1_of_pairing(predicted: &[&Row], gold: &[&Row], pairs: &[(usize, usize)]) -> f64 {
    let mut match_scores = Vec::new();
    let mut pred_only_scores = Vec::new();
    let mut truth_only_scores = Vec::new();
    let mut paired = vec![None; gold.len()];
    for &(g, p) in pairs {
        paired[g] = Some(p);
    }
    for (g, gold_row) in gold.iter().enumerate() {
        match paired[g] {
            Some(p) => {
                let width = gold_row.len() as f64;
                let (matches, pred_only, gold_only) = row_match(predicted[p], gold_row);
                match_scores.push(Summand::Float(matches / width));
                pred_only_scores.push(Summand::Float(pred_only / width));
                truth_only_scores.push(Summand::Float(gold_only / width));
            }
            None => {
                match_scores.push(Summand::Int(0));
                truth_only_scores.push(Summand::Int(1));
            }
        }
    }
    for _ in pairs.len()..predicted.len() {
        match_scores.push(Summand::Int(0));
        pred_only_scores.push(Summand::Int(1));
        truth_only_scores.push(Summand::Int(0));
    }
    let (tp, fp, fn_) = (
        python_sum_mixed(&match_scores),
        python_sum_mixed(&pred_only_scores),
        python_sum_mixed(&truth_only_scores),
    );
    let precision = if tp + fp > 0.0 { tp / (tp + fp) } else { 0.0 };
    let recall = if tp + fn_ > 0.0 { tp / (tp + fn_) } else { 0.0 };
    if precision + recall > 0.0 {
        2.0 * precision * recall / (precision + recall)
    } else {
        0.0
    }
}

/// One entry of the official Soft-F1's score lists: a `float` (a row's share, from `/`) or an
/// `int` (the `0` and `1` it appends for an unpaired row), which Python 3.12's `sum()` adds
/// differently.
#[derive(Debug, Clone, Copy)]
enum Summand {
    Int(i64),
    Float(f64),
}

/// Python 3.12's `sum()` of ints and floats from the start value 0 (Python/bltinmodule.c):
/// ints add exactly until the first float; from there floats are compensated (Neumaier) and
/// ints are added to the running float uncompensated.
fn python_sum_mixed(values: &[Summand]) -> f64 {
    let mut rest = values.iter();
    let mut integer = 0i64;
    let mut sum = loop {
        match rest.next() {
            None => return integer as f64,
            Some(Summand::Int(i)) => integer += i,
            Some(Summand::Float(x)) => break integer as f64 + x,
        }
    };
    let mut compensation = 0.0f64;
    for value in rest {
        match *value {
            Summand::Int(i) => sum += i as f64,
            Summand::Float(x) => neumaier_add(&mut sum, &mut compensation, x),
        }
    }
    if compensation != 0.0 && compensation.is_finite() {
        sum += compensation;
    }
    sum
}

/// Python 3.12's `sum()` of floats: Neumaier-compensated.
pub(crate) fn python_sum(values: &[f64]) -> f64 {
    let (mut sum, mut compensation) = (0.0f64, 0.0f64);
    for &x in values {
        neumaier_add(&mut sum, &mut compensation, x);
    }
    if compensation != 0.0 && compensation.is_finite() {
        sum += compensation;
    }
    sum
}

/// One step of CPython 3.12's compensated float sum: adds `x` to `sum` and the rounding error
/// lost doing so to `compensation`.
fn neumaier_add(sum: &mut f64, compensation: &mut f64, x: f64) {
    let t = *sum + x;
    if sum.abs() >= x.abs() {
        *compensation += (*sum - t) + x;
    } else {
        *compensation += (x - t) + *sum;
    }
    *sum = t;
}

#[cfg(test)]
mod tests {
    use super::*;
    use Value::{Int, Text};

    fn t(s: &str) -> Value {
        Text(s.into())
    }

    #[test]
    fn aligned_pairing_scores_equal_row_sets_one() {
        let gold: Vec<Row> = (0..30).map(|i| vec![t(&format!("r{i}"))]).collect();
        let mut predicted = gold.clone();
        predicted.reverse();
        assert_eq!(soft_f1_aligned(&predicted, &gold), Some(1.0));
        assert_eq!(soft_f1_aligned(&[], &[]), Some(1.0));
        assert_eq!(soft_f1_aligned(&[vec![Int(1)]], &[]), Some(0.0));
    }

    #[test]
    fn sums_add_ints_uncompensated_as_python_312_does() {
        use Summand::{Float, Int};
        // `sum([1, 1, 2/3, 1, 2/3, 1/3, 0.25])` under CPython 3.12.1, printed with repr().
        let values = [
            Int(1),
            Int(1),
            Float(2.0 / 3.0),
            Int(1),
            Float(2.0 / 3.0),
            Float(1.0 / 3.0),
            Float(0.25),
        ];
        assert_eq!(python_sum_mixed(&values).to_string(), "4.916666666666666");
        let floats: Vec<f64> = values
            .iter()
            .map(|v| match *v {
                Int(i) => i as f64,
                Float(x) => x,
            })
            .collect();
        assert_ne!(python_sum(&floats), python_sum_mixed(&values));
        assert_eq!(python_sum_mixed(&[Int(0), Int(1)]), 1.0);
    }

    #[test]
    fn row_score_counts_membership() {
        let gold = vec![vec![Int(1), t("a")]];
        let predicted = vec![vec![t("a"), Int(2), Int(1)]];
        // tp = 2/2, fp = 1/2, fn = 0: precision 2/3, recall 1.
        for version in [SoftF1Version::Ordered2025, SoftF1Version::Set2024] {
            let f1 = soft_f1_official(&predicted, &gold, version);
            assert!((f1 - 0.8).abs() < 1e-12, "{f1}");
        }
    }

    #[test]
    fn the_current_version_pairs_rows_in_the_order_they_come() {
        // The two examples: the right rows in another order, and columns permuted.
        let rows = |pairs: &[(i64, &str)]| -> Vec<Row> {
            pairs.iter().map(|&(i, s)| vec![Int(i), t(s)]).collect()
        };
        let gold = rows(&[(1, "a"), (2, "b"), (3, "c")]);
        // Rotated, no row meets its own gold row: 0. Reversed, the middle row still does.
        let rotated = rows(&[(2, "b"), (3, "c"), (1, "a")]);
        let reversed = rows(&[(3, "c"), (2, "b"), (1, "a")]);
        let current = SoftF1Version::Ordered2025;
        assert_eq!(soft_f1_official(&rotated, &gold, current), 0.0);
        assert!((soft_f1_official(&reversed, &gold, current) - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(
            soft_f1_official(&reversed, &gold, SoftF1Version::Set2024),
            1.0
        );
        assert_eq!(soft_f1_official(&gold, &gold, current), 1.0);
        let permuted: Vec<Row> = gold
            .iter()
            .map(|r| vec![r[1].clone(), r[0].clone()])
            .collect();
        assert_eq!(soft_f1_official(&permuted, &gold, current), 1.0);
        // Duplicates keep their first position: [a, b, a, c] is [a, b, c].
        let mut repeated = gold.clone();
        repeated.insert(2, gold[0].clone());
        assert_eq!(soft_f1_official(&repeated, &gold, current), 1.0);
        // 1 and 1.0 are one key, as for `dict.fromkeys`.
        let floats = vec![vec![Value::Real(1.0)], vec![Int(1)], vec![Int(2)]];
        assert_eq!(
            soft_f1_official(&floats, &[vec![Int(1)], vec![Int(2)]], current),
            1.0
        );
    }
}
