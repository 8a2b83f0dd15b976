//! One PostgreSQL session on `tokio-postgres` with its own current-thread runtime, so that every
//! call runs under a deadline the client enforces whatever the server does.
//!
//! A query's deadline ([`Session::within`]): at the soft deadline a cancel request is sent, and
//! sent again every [`CANCEL_EVERY`] (a backend idle between two `FETCH`es, or computing in a
//! function that checks no interrupt, ignores one); at the hard deadline the client stops
//! waiting and the session is abandoned: dropped (never reused), its backend asked to terminate
//! from a fresh session of the same role ([`terminate_backend`]), and reported on stderr when
//! it does not stop.

use crate::engine::server::CONNECT_TIMEOUT;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_postgres::{Client, Config};
use tokio_postgres_rustls::MakeRustlsConnect;

/// How often a query past its soft deadline is sent a cancel request again.
pub const CANCEL_EVERY: Duration = Duration::from_millis(200);

/// A PostgreSQL session: the client, the runtime that drives its connection, and its backend's
/// process id.
pub struct Session {
    /// The client (dropped before the runtime that drives its connection); shared with the
    /// query futures that use it.
    pub client: Arc<Client>,
    /// The backend's process id (`pg_backend_pid()`).
    pub pid: i32,
    runtime: tokio::runtime::Runtime,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("pid", &self.pid).finish()
    }
}

/// Why a session could not be opened: the client's error, or the connect timeout.
#[derive(Debug)]
pub enum ConnectError {
    /// The client's or the server's error.
    Client(tokio_postgres::Error),
    /// The server did not answer within [`CONNECT_TIMEOUT`].
    TimedOut,
    /// The runtime could not start.
    Runtime(std::io::Error),
}

impl Session {
    /// Opens a session with `config` over `connector` and runs `setup` on it.
    pub fn connect(
        config: &Config,
        connector: &MakeRustlsConnect,
        setup: &str,
    ) -> Result<Session, ConnectError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(ConnectError::Runtime)?;
        let deadline = Instant::now() + CONNECT_TIMEOUT;
        let connect = async {
            let (client, connection) = config.connect(connector.clone()).await?;
            super::exclusive::opened();
            tokio::spawn(connection);
            let pid: i32 = client
                .query_one("SELECT pg_backend_pid()", &[])
                .await?
                .get(0);
            client.batch_execute(setup).await?;
            Ok::<_, tokio_postgres::Error>((client, pid))
        };
        let opened = runtime.block_on(async {
            match tokio::time::timeout_at(deadline.into(), connect).await {
                Ok(opened) => opened.map_err(Some),
                Err(_) => Err(None),
            }
        });
        match opened {
            Ok((client, pid)) => Ok(Session {
                client: Arc::new(client),
                pid,
                runtime,
            }),
            Err(Some(error)) => Err(ConnectError::Client(error)),
            Err(None) => Err(ConnectError::TimedOut),
        }
    }

    /// Runs `work` (a query of this session's client) until it ends, sending cancel requests
    /// from `deadline` on (`fired` is set before the first); `None` when it has not ended at
    /// `hard`: the caller must then drop the session ([`abandon`]).
    pub fn within<T>(
        &self,
        deadline: Instant,
        hard: Instant,
        connector: &MakeRustlsConnect,
        fired: &Arc<AtomicBool>,
        work: impl Future<Output = T>,
    ) -> Option<T> {
        let token = self.client.cancel_token();
        let (tls, flag) = (connector.clone(), Arc::clone(fired));
        let canceller = self.runtime.spawn(async move {
            tokio::time::sleep_until(deadline.into()).await;
            loop {
                flag.store(true, Ordering::SeqCst);
                let _ = tokio::time::timeout(CANCEL_EVERY, token.cancel_query(tls.clone())).await;
                tokio::time::sleep(CANCEL_EVERY).await;
            }
        });
        let result = self
            .runtime
            .block_on(async { tokio::time::timeout_at(hard.into(), work).await.ok() });
        canceller.abort();
        result
    }

    /// Runs housekeeping `work` (a rollback, a reset) until `until`; `None` when it did not
    /// end in time or failed.
    pub fn housekeep<F, T>(&self, until: Instant, work: F) -> Option<T>
    where
        F: Future<Output = Result<T, tokio_postgres::Error>>,
    {
        self.runtime.block_on(async {
            tokio::time::timeout_at(until.into(), work)
                .await
                .ok()
                .and_then(Result::ok)
        })
    }

    /// Whether the connection is closed.
    pub fn is_closed(&self) -> bool {
        self.client.is_closed()
    }
}

/// Drops a session whose query did not stop at its hard deadline and asks the server, from a
/// fresh session of the same role, to terminate its backend; reports the stuck backend.
pub fn abandon(session: Session, config: &Config, connector: &MakeRustlsConnect, timeout_ms: u128) {
    let pid = session.pid;
    drop(session);
    let (config, connector) = (config.clone(), connector.clone());
    let spawned = std::thread::Builder::new()
        .name("sqlgate-terminate".into())
        .spawn(move || {
            let terminated = terminate_backend(&config, &connector, pid);
            crate::util::log::note(&format!(
                "warning: a PostgreSQL backend (pid {pid}) did not stop at its {timeout_ms} ms deadline despite cancel requests; sqlgate dropped its session and {}",
                match terminated {
                    true => "asked the server to terminate the backend (it may run on until it next checks for interrupts)",
                    false => "could not ask the server to terminate the backend: it may still be running",
                }
            ));
        });
    if spawned.is_err() {
        crate::util::log::note(&format!(
            "warning: a PostgreSQL backend (pid {pid}) did not stop at its deadline; sqlgate dropped its session"
        ));
    }
}

/// Asks the server to terminate backend `pid` (one of this run's own, so the same role may).
fn terminate_backend(config: &Config, connector: &MakeRustlsConnect, pid: i32) -> bool {
    let Ok(session) = Session::connect(config, connector, "SET statement_timeout = 5000") else {
        return false;
    };
    session
        .housekeep(
            Instant::now() + CONNECT_TIMEOUT,
            session
                .client
                .query_one("SELECT pg_terminate_backend($1)", &[&pid]),
        )
        .is_some_and(|row| row.get::<_, bool>(0))
}
