//! Google's EvalBench on SQLite (issue 46): an item judged as EvalBench's `SQLExecWork` runs it
//! and its `exact_match` scorer scores it, on a private copy of the item's database
//! (`livesql::copy`) through the guarded read-write session (`livesql::session`: no ATTACH, no
//! file outside the copy, a deadline and step budget over the whole item).
//!
//! As EvalBench (at the commit its recorded verdicts name) runs an item ([`Sides::Shared`]): the
//! prediction first, then the gold, on the same database and connection. What the prediction
//! leaves there (a `COMMIT`, a temporary view named as the gold's table, a temporary trigger on
//! it) reaches the gold, so the prediction can choose the gold's answer (red team round 25): the
//! gate judges with [`Sides::Apart`] instead, each side on its own fresh copy.
//! - `dql`: the first statement only, in a transaction rolled back; rows compared.
//! - `dml`: every statement then the `eval_query`, in one transaction rolled back (`run`); the
//!   `eval_query` rows compared when the gold's are not empty, else the statements' rows.
//! - `ddl`: the database reset first (every table dropped and the setup's tables and indexes
//!   made again, without rows; views survive, as EvalBench's reset leaves them), every
//!   statement run and committed, then the schema read (`schema`); schemas compared when the
//!   gold's is not empty, else the statements' rows.
//!
//! An error on either side fails the item. Rows compare as Python compares lists of dicts
//! (order and column names count; a later column of the same name hides an earlier one).

pub mod run;
pub mod schema;

use crate::engine::livesql::copy::ItemCopy;
use crate::engine::livesql::session::{Session, Stopped};
use crate::engine::livesql::{Budget, Profile};
use crate::input::evalbench::{EvalItem, QueryType};
use crate::input::livesql::split_statements;
use run::{execute, same_rows, Ran};
use schema::{metadata, Schema};
use std::path::Path;

/// One item's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// EvalBench's `exact_match` gives 100.
    Pass,
    /// Both sides ran; the compared results differ (what differs).
    Differs(String),
    /// The prediction failed (its error).
    PredError(String),
    /// The gold failed, after the prediction ran on the same database (its error).
    GoldError(String),
    /// The item's deadline, step or row budget ran out.
    Stopped(String),
    /// The prediction holds no statement.
    Empty,
}

/// Where the two sides of an item run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sides {
    /// EvalBench's order: the prediction, then the gold, on one copy and one connection (the
    /// `evalbench` metric, verdict for verdict).
    Shared,
    /// Each side on a fresh copy and connection of its own, so nothing the prediction does
    /// reaches the gold (the `evalbench_sound` metric, which the gate can trust).
    Apart,
}

/// What one side left to compare.
struct Side {
    ran: Ran,
    schema: Schema,
}

/// Judges `item` with `prediction` (statements, each split again at its `;`) on fresh copies of
/// `template`, one for both sides or one each (`sides`). An `Err` is a fault of the harness (no
/// copy, no session), never a verdict.
pub fn judge(
    item: &EvalItem,
    prediction: &[String],
    template: &Path,
    budget: &Budget,
    sides: Sides,
) -> Result<Verdict, String> {
    let predicted: Vec<String> = prediction.iter().flat_map(|s| statements(s)).collect();
    if predicted.is_empty() {
        return Ok(Verdict::Empty);
    }
    let gold = statements(&item.golden_sql);
    let eval = item
        .eval_query
        .as_deref()
        .map(statements)
        .unwrap_or_default();
    let shared = (sides == Sides::Shared)
        .then(|| OpenCopy::make(template, budget))
        .transpose()?;
    let side = |statements: &[String]| -> Result<Result<Side, Stopped>, String> {
        let own;
        let copy = match &shared {
            Some(copy) => copy,
            None => {
                own = OpenCopy::make(template, budget)?;
                &own
            }
        };
        Ok(run_side(copy, item.query_type, statements, &eval))
    };
    let outcome = match side(&predicted)? {
        Ok(pred) => side(&gold)?.map(|gold| (pred, gold)),
        Err(stopped) => Err(stopped),
    };
    match outcome {
        Ok((pred, gold)) => Ok(compare(&pred, &gold)),
        Err(Stopped(why)) => Ok(Verdict::Stopped(why)),
    }
}

/// A fresh copy of an item's database, open in the guarded session, with the setup statements
/// read from it before anything ran.
struct OpenCopy {
    session: Session,
    setup: Vec<String>,
    /// Kept so the copy outlives the session that reads it.
    _copy: ItemCopy,
}

impl OpenCopy {
    /// Copies `template` and opens the copy under the item's `budget`.
    fn make(template: &Path, budget: &Budget) -> Result<OpenCopy, String> {
        let copy = ItemCopy::make(template)?;
        let session = Session::open(copy.path(), budget, Profile::Official)
            .map_err(|e| format!("opening an item's copy: {e}"))?;
        let setup = setup_statements(session.connection())
            .map_err(|e| format!("reading the setup of {}: {e}", template.display()))?;
        Ok(OpenCopy {
            session,
            setup,
            _copy: copy,
        })
    }
}

/// The statements of `text` as `sqlparse.split` finds them: split at each `;` outside strings,
/// names and comments, the pieces of one `CREATE TRIGGER ... BEGIN ...; END` joined again
/// (SQLite's `sqlite3_complete` says where a statement ends).
pub fn statements(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut open = false;
    for piece in split_statements(text) {
        match (open, out.last_mut()) {
            (true, Some(last)) => *last = format!("{last}; {piece}"),
            _ => out.push(piece),
        }
        open = out.last().is_some_and(|last| !complete(last));
    }
    out
}

/// Whether `sql` followed by `;` is a whole statement.
fn complete(sql: &str) -> bool {
    let Ok(text) = std::ffi::CString::new(format!("{sql};")) else {
        return true;
    };
    // SAFETY: `text` is a NUL-terminated string that outlives the call, which only reads it.
    unsafe { rusqlite::ffi::sqlite3_complete(text.as_ptr()) != 0 }
}

/// One side as `SQLExecWork._evaluate_execution_results` runs it.
fn run_side(
    copy: &OpenCopy,
    query_type: QueryType,
    statements: &[String],
    eval: &[String],
) -> Result<Side, Stopped> {
    let (session, setup) = (&copy.session, &copy.setup);
    let mut schema = Schema::new();
    let ran = match query_type {
        QueryType::Dql => execute(session, &statements[..statements.len().min(1)], &[], true)?,
        QueryType::Dml => execute(session, statements, eval, true)?,
        QueryType::Ddl => {
            if let Err(error) = reset(session, setup)? {
                let error = Some(format!(
                    "Was not able to run DDL due to setup_error {error}"
                ));
                return Ok(Side {
                    ran: Ran {
                        error,
                        ..Ran::default()
                    },
                    schema,
                });
            }
            let ran = execute(session, statements, &[], false)?;
            schema = metadata(session.connection()).unwrap_or_default();
            ran
        }
    };
    Ok(Side { ran, schema })
}

/// `exact_match`: an error on either side fails; the gold's `eval_query` rows (or schema), when
/// not empty, are compared, else the statements' rows.
fn compare(pred: &Side, gold: &Side) -> Verdict {
    if let Some(error) = &pred.ran.error {
        return Verdict::PredError(error.clone());
    }
    if let Some(error) = &gold.ran.error {
        return Verdict::GoldError(error.clone());
    }
    let same = if !gold.schema.is_empty() {
        (pred.schema == gold.schema)
            .then_some(())
            .ok_or("the schemas (tables, columns, types) differ")
    } else if !gold.ran.eval_rows.is_empty() {
        same_rows(&pred.ran.eval_rows, &gold.ran.eval_rows)
            .then_some(())
            .ok_or("the eval_query results differ")
    } else {
        same_rows(&pred.ran.rows, &gold.ran.rows)
            .then_some(())
            .ok_or("the results differ")
    };
    match same {
        Ok(()) => Verdict::Pass,
        Err(what) => Verdict::Differs(what.into()),
    }
}

/// The template's tables and indexes (their `CREATE` statements, in schema order): what
/// EvalBench's setup script makes, read from the copy before anything ran on it.
fn setup_statements(conn: &rusqlite::Connection) -> rusqlite::Result<Vec<String>> {
    let mut statement = conn.prepare(
        "SELECT sql FROM sqlite_master WHERE type IN ('table', 'index') AND sql IS NOT NULL \
         AND name NOT LIKE 'sqlite~_%' ESCAPE '~' ORDER BY rowid",
    )?;
    let rows = statement.query_map([], |row| row.get(0))?;
    rows.collect()
}

/// EvalBench's `resetup_database(force=True)` with no data: `DROP TABLE <name>` for every table
/// (each committed on its own; the first error ends the drops), then the setup statements (the
/// first error is the reset's error). Views and other objects survive.
fn reset(session: &Session, setup: &[String]) -> Result<Result<(), String>, Stopped> {
    let conn = session.connection();
    let tables: Vec<String> = match conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .and_then(|mut s| s.query_map([], |row| row.get(0))?.collect())
    {
        Ok(tables) => tables,
        Err(error) => return Ok(Err(error.to_string())),
    };
    for table in &tables {
        if conn.execute_batch(&format!("DROP TABLE {table};")).is_err() {
            session.check_budget()?;
            break;
        }
    }
    for statement in setup {
        if let Err(error) = conn.execute_batch(statement) {
            session.check_budget()?;
            return Ok(Err(error.to_string()));
        }
    }
    Ok(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trigger_body_stays_one_statement() {
        let text = "CREATE TABLE a (x); CREATE TRIGGER t AFTER INSERT ON a BEGIN INSERT INTO a VALUES (1); DELETE FROM a; END; SELECT ';'";
        assert_eq!(
            statements(text),
            [
                "CREATE TABLE a (x)",
                "CREATE TRIGGER t AFTER INSERT ON a BEGIN INSERT INTO a VALUES (1); DELETE FROM a; END",
                "SELECT ';'"
            ]
        );
    }
}
