//! Which gold columns Spider 2.0's `condition_cols` selects, exactly as `evaluate.py` reads the
//! value from `spider2lite_eval.jsonl` (docs/METRICS.md, "Spider 2.0").
//!
//! An instance whose only gold file is `<id>.csv` is compared by `compare_pandas_table` with
//! `condition_cols` as written; any other (`<id>_a.csv`, `<id>_b.csv`, ..., even a single one)
//! by `compare_multi_pandas_table`, which first rewrites it: `null`, `[]`, `[[]]` and `[null]`
//! mean every column of every answer; with several answers a list that is not a list of lists
//! is used for every answer; otherwise answer `i` takes element `i`. So with a single `_a` file
//! a flat list `[2, 3]` selects only column 2, and `[0, 3]` every column (0 is false in
//! Python); a list of lists shorter than the answers raises `IndexError` at the first answer
//! without one, and extra lists are never read. Then `compare_pandas_table` (current version)
//! selects every column when the value is false (`None`, `0`, `[]`), else `gold.iloc[:, cols]`
//! (a single index wrapped in a list); version 2025-01 selects every column only for `[]` and
//! passes anything else to `iloc` unwrapped (an index gives a Series, whose scalars fail the
//! comparison unless the gold has no rows). An `Err` is the exception the official code raises
//! there: that answer, and with it the instance, scores 0.

use crate::input::config::Spider2Version;
use serde_json::Value as Json;

/// The gold columns one answer is compared on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// These columns, in this order (possibly repeated).
    Columns(Vec<usize>),
    /// `gold.iloc[:, k]` for one index (version 2025-01): a Series, which matches only when
    /// the gold has no rows and raises otherwise.
    Series,
}

/// Each answer's condition after `compare_multi_pandas_table`'s rewrite (`multi`), or the one
/// condition `compare_pandas_table` gets; `Err` where reading it raises.
pub fn answer_conditions(
    condition: &Json,
    answers: usize,
    multi: bool,
) -> Vec<Result<Json, String>> {
    if !multi {
        return vec![Ok(condition.clone())];
    }
    let all_columns = match condition {
        Json::Null => true,
        Json::Array(list) => {
            list.is_empty()
                || (list.len() == 1 && (list[0].is_null() || list[0] == Json::Array(Vec::new())))
        }
        _ => false,
    };
    if all_columns {
        return vec![Ok(Json::Array(Vec::new())); answers];
    }
    let Json::Array(list) = condition else {
        let error = format!("TypeError: condition_cols {condition} is not a list");
        return vec![Err(error); answers];
    };
    if answers > 1 && !list.iter().all(Json::is_array) {
        return vec![Ok(condition.clone()); answers];
    }
    (0..answers)
        .map(|i| {
            list.get(i).cloned().ok_or_else(|| {
                format!(
                    "IndexError: condition_cols has {} lists for {answers} gold answers",
                    list.len()
                )
            })
        })
        .collect()
}

/// The columns of a gold answer of `width` columns `condition` selects under `version`.
pub fn select(
    condition: &Json,
    width: usize,
    version: Spider2Version,
) -> Result<Selection, String> {
    let all = || Selection::Columns((0..width).collect());
    match version {
        Spider2Version::Current => {
            if !truthy(condition) {
                return Ok(all());
            }
            match condition {
                Json::Array(list) => iloc_list(list, width).map(Selection::Columns),
                single => iloc_list(std::slice::from_ref(single), width).map(Selection::Columns),
            }
        }
        Spider2Version::Jan2025 => match condition {
            Json::Array(list) if list.is_empty() => Ok(all()),
            Json::Array(list) => iloc_list(list, width).map(Selection::Columns),
            Json::Number(n) => match n.as_i64().map(|i| resolve(i, width)) {
                Some(Ok(_)) => Ok(Selection::Series),
                Some(Err(e)) => Err(e),
                None => Err(format!("TypeError: cannot index columns with {n}")),
            },
            other => Err(format!("ValueError: cannot index columns with {other}")),
        },
    }
}

/// Python's truth value of a JSON value.
fn truthy(value: &Json) -> bool {
    match value {
        Json::Null => false,
        Json::Bool(b) => *b,
        Json::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Json::String(s) => !s.is_empty(),
        Json::Array(list) => !list.is_empty(),
        Json::Object(map) => !map.is_empty(),
    }
}

/// `iloc[:, list]`: integer positions (negative from the end; integral floats too), or a
/// boolean mask as long as the columns.
fn iloc_list(list: &[Json], width: usize) -> Result<Vec<usize>, String> {
    if !list.is_empty() && list.iter().all(Json::is_boolean) {
        return match list.len() == width {
            true => Ok((0..width)
                .filter(|&c| list[c] == Json::Bool(true))
                .collect()),
            false => Err(format!(
                "IndexError: boolean index of length {} for {width} columns",
                list.len()
            )),
        };
    }
    list.iter()
        .map(|value| {
            let index = match value {
                Json::Number(n) => n
                    .as_i64()
                    .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64)),
                _ => None,
            };
            let index = index.ok_or_else(|| {
                format!("IndexError: .iloc requires numeric indexers, got {value}")
            })?;
            resolve(index, width)
        })
        .collect()
}

/// A position as `iloc` resolves it.
fn resolve(index: i64, width: usize) -> Result<usize, String> {
    let resolved = if index < 0 {
        width as i64 + index
    } else {
        index
    };
    usize::try_from(resolved)
        .ok()
        .filter(|&c| c < width)
        .ok_or_else(|| {
            format!("IndexError: condition column {index} is out of range for {width} gold columns")
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use Spider2Version::{Current, Jan2025};

    fn conditions(value: Json, answers: usize, multi: bool) -> Vec<Result<Json, String>> {
        answer_conditions(&value, answers, multi)
    }

    #[test]
    fn a_single_alternative_file_takes_only_the_first_index() {
        let per_answer = conditions(json!([2, 3]), 1, true);
        assert_eq!(per_answer, [Ok(json!(2))]);
        assert_eq!(
            select(&json!(2), 4, Current),
            Ok(Selection::Columns(vec![2]))
        );
        let zero = conditions(json!([0, 3]), 1, true);
        assert_eq!(
            select(zero[0].as_ref().unwrap(), 4, Current),
            Ok(Selection::Columns(vec![0, 1, 2, 3]))
        );
        assert_eq!(select(&json!(2), 4, Jan2025), Ok(Selection::Series));
    }

    #[test]
    fn lists_per_answer_shorter_or_longer_than_the_answers() {
        let short = conditions(json!([[1], [3]]), 3, true);
        assert_eq!(short[..2], [Ok(json!([1])), Ok(json!([3]))]);
        assert!(short[2].as_ref().unwrap_err().starts_with("IndexError"));
        assert_eq!(conditions(json!([[1], [2], [0]]), 2, true).len(), 2);
        assert_eq!(
            conditions(json!([1, 2]), 3, true),
            vec![Ok(json!([1, 2])); 3]
        );
        assert_eq!(conditions(json!([[]]), 2, true), vec![Ok(json!([])); 2]);
        assert_eq!(
            conditions(json!([[0], [1]]), 1, false),
            [Ok(json!([[0], [1]]))]
        );
    }

    #[test]
    fn iloc_rules() {
        assert_eq!(
            select(&json!([-1, 0]), 3, Current),
            Ok(Selection::Columns(vec![2, 0]))
        );
        assert!(select(&json!([3]), 3, Current).is_err());
        assert!(select(&json!([[0], [1]]), 3, Current).is_err());
        assert!(select(&json!([null]), 3, Current).is_err());
        assert_eq!(
            select(&json!(null), 2, Current),
            Ok(Selection::Columns(vec![0, 1]))
        );
        assert!(select(&json!(null), 2, Jan2025).is_err());
        assert_eq!(
            select(&json!([0.0]), 2, Current),
            Ok(Selection::Columns(vec![0]))
        );
        assert_eq!(
            select(&json!([false, true]), 2, Current),
            Ok(Selection::Columns(vec![1]))
        );
    }
}
