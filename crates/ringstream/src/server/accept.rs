//! The accept loop: connections up to the cap, one task each, and the
//! graceful shutdown.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http::{Request, Response};
use http_body::Body;
use tokio::net::TcpListener;
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tower_service::Service;

use super::conn::Connection;
use super::counted::Counted;
use super::{Metrics, Server};
use crate::body::Incoming;
use crate::error::{BoxError, Error};

/// Accepts and serves until `signal`, then shuts down gracefully.
pub(super) async fn run<S, B, F>(server: Server, service: S, signal: F) -> Result<(), Error>
where
    S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
    F: Future<Output = ()>,
{
    let Server {
        listener,
        config,
        metrics,
    } = server;
    let config = Arc::new(config);
    let permits = Arc::new(Semaphore::new(config.max_connections.max(1)));
    let (stop, stopped) = watch::channel(false);
    let mut tasks = JoinSet::new();
    let mut signal = std::pin::pin!(signal);
    let mut accept_errors = ErrorLog::default();
    loop {
        let accepted = tokio::select! {
            biased;
            () = &mut signal => break,
            Some(joined) = tasks.join_next(), if !tasks.is_empty() => {
                if let Err(e) = joined {
                    if e.is_panic() {
                        tracing::error!("connection task panicked");
                    }
                }
                continue;
            }
            accepted = accept(&listener, &permits) => accepted,
        };
        let (socket, peer, permit) = match accepted {
            Ok(a) => a,
            Err(e) => {
                accept_errors.record(&e);
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = socket.set_nodelay(true);
        metrics.record_connection_opened();
        let conn = Connection::new(
            Counted::new(socket, metrics.clone()),
            service.clone(),
            config.clone(),
            metrics.clone(),
            stopped.clone(),
        );
        tasks.spawn(serve_one(conn, metrics.clone(), peer, permit));
    }
    drop(listener);
    let _ = stop.send(true);
    finish(tasks, config.shutdown_timeout).await;
    Ok(())
}

/// How often a failing accept is logged (at most once per this period,
/// with the count of failures in between).
const ACCEPT_ERROR_LOG_PERIOD: Duration = Duration::from_secs(5);

/// Rate-limited logging of accept errors: at file-descriptor exhaustion
/// accept fails every time it is retried.
#[derive(Default)]
struct ErrorLog {
    last: Option<std::time::Instant>,
    suppressed: u64,
}

impl ErrorLog {
    fn record(&mut self, e: &io::Error) {
        let now = std::time::Instant::now();
        if self
            .last
            .is_some_and(|at| now.duration_since(at) < ACCEPT_ERROR_LOG_PERIOD)
        {
            self.suppressed += 1;
            return;
        }
        tracing::warn!(error = %e, suppressed = self.suppressed, "accept failed");
        self.last = Some(now);
        self.suppressed = 0;
    }
}

/// Serves one accepted connection to its end, then gives its slot back.
async fn serve_one<T, S, B>(
    conn: Connection<T, S>,
    metrics: Arc<Metrics>,
    peer: SocketAddr,
    permit: OwnedSemaphorePermit,
) where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    S: Service<Request<Incoming>, Response = Response<B>>,
    S::Error: Into<BoxError>,
    B: Body,
    B::Error: Into<BoxError>,
{
    // Counted closed however the task ends: at its end, aborted at the
    // shutdown deadline, or unwound by a panicking service.
    let _open = OpenConnection {
        metrics,
        _permit: permit,
    };
    if let Err(e) = conn.run().await {
        tracing::debug!(%peer, error = %e, "connection ended with an error");
    }
}

/// A served connection's slot and its place in `connections_open`, both
/// given back when dropped.
struct OpenConnection {
    metrics: Arc<Metrics>,
    _permit: OwnedSemaphorePermit,
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.metrics.record_connection_closed();
    }
}

/// Lets the connections finish within `grace`, then closes the rest.
async fn finish(mut tasks: JoinSet<()>, grace: Duration) {
    let drained =
        tokio::time::timeout(grace, async { while tasks.join_next().await.is_some() {} }).await;
    if drained.is_err() {
        tracing::warn!(
            open = tasks.len(),
            "shutdown deadline passed; closing connections"
        );
        tasks.shutdown().await;
    }
}

async fn accept(
    listener: &TcpListener,
    permits: &Arc<Semaphore>,
) -> io::Result<(
    tokio::net::TcpStream,
    SocketAddr,
    tokio::sync::OwnedSemaphorePermit,
)> {
    let permit = permits
        .clone()
        .acquire_owned()
        .await
        .map_err(io::Error::other)?;
    let (socket, peer) = listener.accept().await?;
    Ok((socket, peer, permit))
}
