//! The item's session on its clone, as its own role: each statement as psycopg2 runs it for
//! BIRD-Critic's PostgreSQL evaluator, in a transaction of its own, or (the rollback fast path,
//! [`super::fast`]) in a savepoint of the item's one transaction.

use super::fast::{self, is_blank, FastState};
use super::pg_text;
use crate::engine::livesql::python::{ItemDb, TestsError};
use crate::engine::livesql::session::Stopped;
use crate::engine::livesql::Fault;
use crate::engine::server::tls::PgTarget;
use futures_util::StreamExt;
use postgres::types::Type;
use serde_json::{json, Value as Json};
use std::sync::{Arc, Mutex, PoisonError};
use tokio_postgres::{Client, SimpleQueryMessage};

/// Rows of a statement's result kept (the evaluator's `fetchmany(MAX_ROWS + 1)[:MAX_ROWS]`).
const KEPT_ROWS: usize = 10_000;

/// What `execute_queries` returns: the last rows (protocol form) and the flags.
#[derive(Debug, Default)]
pub(super) struct Ran {
    pub rows: Option<Json>,
    pub exec_error: bool,
    pub timeout: bool,
    pub message: String,
}

impl Ran {
    /// The error's text when a statement failed or timed out, `None` when every one ran.
    pub(super) fn failure(&self) -> Option<&str> {
        (self.exec_error || self.timeout).then_some(self.message.as_str())
    }
}

/// A statement's error: the class psycopg2 raises and the server's text.
#[derive(Debug)]
struct StatementError {
    class: &'static str,
    message: String,
    /// The server's SQLSTATE, empty for an error of the client.
    sqlstate: String,
}

/// The item's session on its clone, as its own role.
pub(super) struct ItemSession {
    client: Client,
    runtime: tokio::runtime::Runtime,
    /// Why the item stopped (the watchdog's reason, or the fast path's refusal).
    pub stop: Arc<Mutex<Option<String>>>,
    max_rows: u64,
    fast: FastState,
}

/// How an item that started on the fast path ended.
#[derive(Debug)]
pub(super) enum FastEnd {
    /// Nothing was written: the transaction is rolled back and the clone's fingerprint read.
    Clean(String),
    /// The item stopped part-way (a budget, the deadline): its verdict stands, its clone is made
    /// again.
    Dirty,
    /// The fast path may not judge the item: its verdict is the slow path's.
    Refused,
}

impl ItemSession {
    /// The role's session on its clone; on the fast path (`fast`) inside one transaction.
    pub(super) fn connect(
        config: &tokio_postgres::Config,
        target: &PgTarget,
        max_rows: u64,
        fast: bool,
    ) -> Result<ItemSession, Fault> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("no runtime for an item's session: {e}"))?;
        let connector = target.connector.clone();
        let client = runtime
            .block_on(async {
                let (client, connection) = config.connect(connector).await?;
                tokio::spawn(connection);
                Ok::<_, tokio_postgres::Error>(client)
            })
            .map_err(|e| format!("cannot connect to an item's clone: {}", pg_text(&e)))?;
        if fast {
            runtime
                .block_on(client.batch_execute("BEGIN"))
                .map_err(|e| format!("cannot begin an item's transaction: {}", pg_text(&e)))?;
        }
        Ok(ItemSession {
            client,
            runtime,
            stop: Arc::default(),
            max_rows,
            fast: FastState {
                on: fast,
                refused: Mutex::default(),
            },
        })
    }

    /// Ends an item that ran on the fast path (`outcome` its verdict or why it stopped):
    /// refused when a text was refused or a transaction id was assigned (something was written),
    /// dirty when it stopped part-way, else rolled back and the clone's fingerprint read.
    pub(super) fn end_fast<T, E>(&self, outcome: &Result<T, E>) -> FastEnd {
        let refused = self
            .fast
            .refused
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if refused.is_some() {
            return FastEnd::Refused;
        }
        if outcome.is_err() {
            return FastEnd::Dirty;
        }
        let read = |sql: &str| {
            self.runtime.block_on(async {
                let messages = self.client.simple_query(sql).await.ok()?;
                messages.iter().find_map(|m| match m {
                    SimpleQueryMessage::Row(row) => Some(row.get(0).map(str::to_string)),
                    _ => None,
                })
            })
        };
        match read("SELECT pg_catalog.txid_current_if_assigned()::text") {
            Some(None) => {}
            // A transaction id: the item wrote, locked or created something.
            Some(Some(_)) => return FastEnd::Refused,
            None => return FastEnd::Dirty,
        }
        let rolled_back = self.runtime.block_on(self.client.batch_execute("ROLLBACK"));
        match (rolled_back, read(fast::FINGERPRINT)) {
            (Ok(()), Some(Some(fingerprint))) => FastEnd::Clean(fingerprint),
            _ => FastEnd::Dirty,
        }
    }

    /// Records why the fast path may not judge the item, and stops it.
    fn refuse(&self, why: String) -> StatementError {
        *self
            .fast
            .refused
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(why.clone());
        *self.stop.lock().unwrap_or_else(PoisonError::into_inner) =
            Some(format!("the fast path ended: {why}"));
        StatementError {
            class: "OperationalError",
            message: why,
            sqlstate: String::new(),
        }
    }

    /// Why the watchdog ended the session, if it did.
    fn stopped(&self) -> Option<Stopped> {
        let stop = self.stop.lock().unwrap_or_else(PoisonError::into_inner);
        stop.clone().map(Stopped)
    }

    /// The statements in order, stopping at the first error (the evaluator's
    /// `execute_queries`).
    pub(super) fn execute_queries(&self, sqls: &[String]) -> Result<Ran, Stopped> {
        self.execute_noting(sqls, None)
    }

    /// [`ItemSession::execute_queries`], each statement's rows or error flags noted in `notes`
    /// when given (the gold-effect comparison reads every statement a test case may run alone).
    pub(super) fn execute_noting(
        &self,
        sqls: &[String],
        mut notes: Option<&mut Vec<String>>,
    ) -> Result<Ran, Stopped> {
        let mut ran = Ran::default();
        for (i, sql) in sqls.iter().enumerate() {
            let result = self.perform(sql);
            if let Some(notes) = notes.as_deref_mut() {
                notes.push(match &result {
                    Ok(rows) => format!("{rows:?}"),
                    Err(error) => format!("{} error", error.class),
                });
            }
            match result {
                Ok(rows) => ran.rows = rows,
                Err(error) => {
                    if let Some(stop) = self.stopped() {
                        return Err(stop);
                    }
                    ran.timeout = error.class == "QueryCanceled";
                    ran.exec_error = !ran.timeout;
                    ran.message = format!(
                        "{} executing query {}: {}",
                        error.class,
                        i + 1,
                        error.message
                    );
                    break;
                }
            }
        }
        Ok(ran)
    }

    /// One statement as the evaluator's `perform_query_on_postgresql_databases` runs it: in a
    /// transaction of its own with the evaluator's `statement_timeout`, committed (rolled back on
    /// an error); its last result's rows, `None` when that result has none.
    fn perform(&self, sql: &str) -> Result<Option<Json>, StatementError> {
        if let Some(stop) = self.stopped() {
            return Err(StatementError {
                class: "OperationalError",
                message: stop.0,
                sqlstate: String::new(),
            });
        }
        let timeout = match sql.to_uppercase().contains("WITH RECURSIVE") {
            true => "15s",
            false => "60s",
        };
        if self.fast.on {
            return self.perform_fast(sql, timeout);
        }
        self.runtime.block_on(async {
            let tags = column_tags(&self.client, sql).await;
            let begin = format!("BEGIN; SET statement_timeout = '{timeout}'");
            self.client
                .batch_execute(&begin)
                .await
                .map_err(statement_error)?;
            match self.last_result(sql, tags).await {
                Ok(rows) => {
                    self.client
                        .batch_execute("COMMIT")
                        .await
                        .map_err(statement_error)?;
                    Ok(rows)
                }
                Err(error) => {
                    let _ = self.client.batch_execute("ROLLBACK").await;
                    Err(error)
                }
            }
        })
    }

    /// One statement on the fast path: a savepoint of the item's transaction stands for the
    /// statement's own transaction (released when it runs, rolled back to on an error), after the
    /// same description and `statement_timeout`. A text [`fast::text_refusal`] refuses, or an
    /// error the outer transaction may cause, refuses the item.
    fn perform_fast(&self, sql: &str, timeout: &str) -> Result<Option<Json>, StatementError> {
        if let Some(why) = fast::text_refusal(sql) {
            return Err(self.refuse(why));
        }
        let savepoint = fast::SAVEPOINT;
        let outcome = self.runtime.block_on(async {
            let open = format!("SAVEPOINT {savepoint}");
            self.client
                .batch_execute(&open)
                .await
                .map_err(statement_error)?;
            let tags = column_tags(&self.client, sql).await;
            let set = match tags {
                Some(_) => format!("SET statement_timeout = '{timeout}'"),
                // A description that failed aborted the savepoint's transaction.
                None => format!(
                    "ROLLBACK TO SAVEPOINT {savepoint}; SET statement_timeout = '{timeout}'"
                ),
            };
            self.client
                .batch_execute(&set)
                .await
                .map_err(statement_error)?;
            match self.last_result(sql, tags).await {
                Ok(rows) => {
                    let release = format!("RELEASE SAVEPOINT {savepoint}");
                    self.client
                        .batch_execute(&release)
                        .await
                        .map_err(statement_error)?;
                    Ok(rows)
                }
                Err(error) => {
                    let undo =
                        format!("ROLLBACK TO SAVEPOINT {savepoint}; RELEASE SAVEPOINT {savepoint}");
                    let _ = self.client.batch_execute(&undo).await;
                    Err(error)
                }
            }
        });
        match outcome {
            Err(error) if fast::outer_may_cause(&error.sqlstate) => Err(self.refuse(format!(
                "an error the item's transaction may cause ({}: {})",
                error.sqlstate, error.message
            ))),
            outcome => outcome,
        }
    }

    /// Runs `sql` by the simple protocol (as psycopg2 does: several statements in one text all
    /// run) and keeps the rows of its last result; a text without a statement (empty, blank, a
    /// comment: [`is_blank`]) is psycopg2's `ProgrammingError`.
    async fn last_result(
        &self,
        sql: &str,
        tags: Option<Vec<&'static str>>,
    ) -> Result<Option<Json>, StatementError> {
        let stream = self
            .client
            .simple_query_raw(sql)
            .await
            .map_err(statement_error)?;
        let mut stream = std::pin::pin!(stream);
        let (mut current, mut last): (Option<(usize, Vec<Json>)>, Option<Json>) = (None, None);
        if is_blank(sql) {
            return Err(StatementError {
                class: "ProgrammingError",
                message: "can't execute an empty query".into(),
                sqlstate: String::new(),
            });
        }
        let mut seen = 0u64;
        while let Some(message) = stream.next().await {
            match message.map_err(statement_error)? {
                SimpleQueryMessage::RowDescription(columns) => {
                    current = Some((columns.len(), Vec::new()))
                }
                SimpleQueryMessage::Row(row) => {
                    seen += 1;
                    if seen > self.max_rows {
                        return Err(StatementError {
                            class: "OperationalError",
                            message: format!(
                                "a statement returned more than {} rows, the item's row budget",
                                self.max_rows
                            ),
                            sqlstate: String::new(),
                        });
                    }
                    if let Some((width, rows)) =
                        current.as_mut().filter(|(_, rows)| rows.len() < KEPT_ROWS)
                    {
                        let cells: Vec<Json> = (0..*width)
                            .map(|i| row.get(i).map_or(Json::Null, Json::from))
                            .collect();
                        rows.push(Json::Array(cells));
                    }
                }
                SimpleQueryMessage::CommandComplete(_) => {
                    last = current.take().map(|(width, rows)| {
                        let tags = tags
                            .clone()
                            .filter(|t| t.len() == width)
                            .unwrap_or_else(|| vec!["text"; width]);
                        json!({ "types": tags, "data": rows })
                    });
                }
                _ => {}
            }
        }
        Ok(last)
    }
}

/// The database side of the PostgreSQL runner's requests.
impl ItemDb for ItemSession {
    fn answer(&self, op: &str, request: &Json) -> Result<Json, TestsError> {
        match op {
            "exec" => {
                let sqls: Vec<String> =
                    serde_json::from_value(request["sqls"].clone()).map_err(|_| {
                        TestsError::Fault("`exec` without a list of texts `sqls`".into())
                    })?;
                let ran = self.execute_queries(&sqls)?;
                Ok(
                    json!({ "rows": ran.rows, "exec_error": ran.exec_error, "timeout": ran.timeout, "message": ran.message }),
                )
            }
            "query" => {
                let sql = request["sql"].as_str().unwrap_or_default();
                let result = self.perform(sql);
                if let Some(stop) = self.stopped() {
                    return Err(stop.into());
                }
                Ok(match result {
                    Ok(rows) => json!({ "rows": rows, "error": null }),
                    Err(e) => {
                        json!({ "rows": null, "error": { "class": e.class, "message": e.message } })
                    }
                })
            }
            other => Err(TestsError::Fault(format!("an unknown request `{other}`"))),
        }
    }
}

/// The psycopg2 casts of a single statement's columns, from the server's description (outside
/// any transaction, so a statement the server cannot describe changes nothing); `None` for a
/// text of several statements or one it cannot describe (every column then arrives as text).
async fn column_tags(client: &Client, sql: &str) -> Option<Vec<&'static str>> {
    let statement = client.prepare(sql).await.ok()?;
    Some(
        statement
            .columns()
            .iter()
            .map(|c| tag_of(c.type_()))
            .collect(),
    )
}

/// psycopg2's cast of a column type, as the runner names it.
fn tag_of(column_type: &Type) -> &'static str {
    match *column_type {
        Type::INT2 | Type::INT4 | Type::INT8 | Type::OID => "int",
        Type::FLOAT4 | Type::FLOAT8 => "float",
        Type::NUMERIC => "decimal",
        Type::BOOL => "bool",
        Type::DATE => "date",
        Type::TIMESTAMP | Type::TIMESTAMPTZ => "timestamp",
        Type::JSON | Type::JSONB => "json",
        Type::BYTEA => "bytea",
        _ => "text",
    }
}

/// The psycopg2 class of a client error, by SQLSTATE class; a lost connection is an
/// `OperationalError`, a closed one an `InterfaceError`.
fn statement_error(error: tokio_postgres::Error) -> StatementError {
    let message = pg_text(&error);
    let Some(code) = error.code() else {
        let class = match error.is_closed() {
            true => "InterfaceError",
            false => "OperationalError",
        };
        return StatementError {
            class,
            message,
            sqlstate: String::new(),
        };
    };
    let code = code.code();
    let class = match &code[..2] {
        _ if code == "57014" => "QueryCanceled",
        "40" => "TransactionRollbackError",
        "08" | "53" | "54" | "55" | "57" | "58" | "F0" | "P0" | "HV" => "OperationalError",
        "22" => "DataError",
        "23" => "IntegrityError",
        "0A" => "NotSupportedError",
        "42" | "26" | "34" | "3D" | "3F" | "2F" | "28" => "ProgrammingError",
        _ => "InternalError",
    };
    StatementError {
        class,
        message,
        sqlstate: code.to_string(),
    }
}
