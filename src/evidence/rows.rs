//! The first result rows of a changed item's gold, baseline and new queries, as the comparison
//! saw them (run by the evidence phase, shown by the report): each query runs as the comparison profile prepares it (`spider-ts` drops DISTINCT
//! unless `keep_distinct`), and a query the profile stripped of DISTINCT is labelled so, with its
//! row count as written, so a 223-row gold beside a matching 924-row prediction explains itself.

use crate::engine::exec::Executor;
use crate::engine::profile::Profile;
use std::path::Path;

/// Result rows shown per query.
const RESULT_ROWS: usize = 5;

/// The queries of one changed item.
pub struct Queries<'a> {
    /// The gold's stored rows (`Ok`, already rendered) or its query (`Err`).
    pub gold: Result<&'a str, &'a str>,
    /// `None`: no baseline system; `Some(None)`: its prediction was not stored.
    pub old: Option<Option<&'a str>>,
    /// The new prediction, if any.
    pub new: Option<&'a str>,
}

/// Which side of the comparison a query is on (the profile prepares them differently).
#[derive(Clone, Copy)]
enum Side {
    Gold,
    Prediction,
}

/// The first rows of a Spider 2.0 item's first gold answer when it is a stored result file, as
/// comment lines; `None` for any other item.
pub fn stored_gold_rows(item: &crate::input::dataset::GoldItem) -> Option<String> {
    let answer = item.spider2.as_ref()?.answers.first()?;
    let crate::input::spider2::AnswerSource::Table(table) = &answer.source else {
        return None;
    };
    let name = answer.file.file_name()?.to_string_lossy();
    let rows = table.rows.iter().cloned();
    Some(rows_text(&format!("gold ({name})"), table.rows.len(), rows))
}

/// `count` rows under a label, the first [`RESULT_ROWS`] of them shown, as comment lines: one line
/// per row whatever its values hold (escaped as in the log: `\n`, `\\`, `\u{..}`).
fn rows_text(label: &str, count: usize, rows: impl Iterator<Item = Vec<String>>) -> String {
    let first = if count > RESULT_ROWS {
        format!(", first {RESULT_ROWS}")
    } else {
        String::new()
    };
    let mut text = format!("-- {label}: {count} row(s){first}\n");
    for cells in rows.take(RESULT_ROWS) {
        let cells: Vec<String> = cells
            .iter()
            .map(|c| crate::util::log::log_value(c))
            .collect();
        text.push_str(&format!("--   {}\n", cells.join(" | ")));
    }
    text
}

/// The text the comparison runs for `sql` on `side`, and the text with DISTINCT kept when the
/// profile dropped it (`None` when it did not).
fn as_compared(profile: &Profile, side: Side, sql: &str) -> (String, Option<String>) {
    let compared = match side {
        Side::Gold => profile.prepare_gold(sql).sql,
        Side::Prediction => profile.prepare_prediction(sql),
    };
    let kept = profile
        .keeping_distinct(sql, sql)
        .map(|(gold, prediction)| match side {
            Side::Gold => gold,
            Side::Prediction => prediction,
        })
        .filter(|kept| *kept != compared);
    (compared, kept)
}

/// The first rows of the gold, old and new queries on the item's database `db`, as the
/// comparison ran them, as comment lines.
pub fn result_rows(
    executor: &Executor,
    profile: &Profile,
    db: &Path,
    queries: &Queries<'_>,
) -> String {
    let run = |label: &str, side: Side, sql: Option<&str>| {
        let Some(sql) = sql else {
            return format!("-- {label}: no query\n");
        };
        let (compared, kept) = as_compared(profile, side, sql);
        let rows = match executor.run(db, &compared) {
            Ok(rows) => rows,
            Err(e) => return format!("-- {label}: error: {e}\n"),
        };
        let label = match kept {
            Some(kept) => format!(
                "{label} as compared (the {} profile drops DISTINCT; as written: {})",
                profile.config().profile.as_str(),
                executor
                    .run(db, &kept)
                    .map_or_else(|e| format!("error: {e}"), |r| format!("{} row(s)", r.len()))
            ),
            None => label.to_string(),
        };
        let cells = rows.iter().map(|row| {
            row.iter()
                .map(|v| match v {
                    crate::engine::value::Value::Null => "NULL".to_string(),
                    other => crate::engine::denotation::python_str(other),
                })
                .collect()
        });
        rows_text(&label, rows.len(), cells)
    };
    let mut text = match queries.gold {
        Ok(stored) => stored.to_string(),
        Err(sql) => run("gold", Side::Gold, Some(sql)),
    };
    match queries.old {
        Some(Some(sql)) => text.push_str(&run("baseline prediction", Side::Prediction, Some(sql))),
        Some(None) => text.push_str("-- baseline prediction: not stored in this baseline\n"),
        None => {}
    }
    text.push_str(&run("prediction", Side::Prediction, queries.new));
    text
}
