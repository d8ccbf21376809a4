//! The HTTP/1.1 server: serves any `tower_service::Service` over TCP (or any
//! other transport) with keep-alive, pipelining, `Expect: 100-continue`,
//! strict framing, limits, timeouts and graceful shutdown.
//!
//! # Examples
//!
//! ```no_run
//! use std::convert::Infallible;
//! use ringstream::server::{service_fn, Server};
//! use ringstream::{Incoming, ResponseStream};
//!
//! # async fn run() -> std::io::Result<()> {
//! let server = Server::bind("127.0.0.1:8080").await?;
//! server
//!     .serve(service_fn(|_req: http::Request<Incoming>| async {
//!         let mut body = ResponseStream::buffered();
//!         std::fmt::Write::write_str(&mut body, "hello\n").unwrap();
//!         Ok::<_, Infallible>(http::Response::new(body))
//!     }))
//!     .await
//! # }
//! ```

mod config;
mod conn;
mod counted;
mod metrics;
mod service;
mod stop;

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use http::{Request, Response};
use http_body::Body;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinSet;
use tower_service::Service;

pub use config::Config;
pub use metrics::Metrics;
pub use service::{service_fn, ServiceFn};

use crate::error::{BoxError, Error};
use crate::Incoming;
use conn::Connection;
use counted::Counted;

/// An HTTP/1.1 server bound to a TCP listener.
///
/// Each connection runs in its own task, so a slow handler never stalls the
/// others; at most [`Config::max_connections`] run at once (further clients
/// wait to be accepted).
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    config: Config,
    metrics: Arc<Metrics>,
}

impl Server {
    /// Bind a listener to `addr`.
    ///
    /// # Errors
    ///
    /// When the address cannot be bound.
    pub async fn bind(addr: impl ToSocketAddrs) -> io::Result<Server> {
        Ok(Server::from_listener(TcpListener::bind(addr).await?))
    }

    /// Serve on an existing listener.
    pub fn from_listener(listener: TcpListener) -> Server {
        Server {
            listener,
            config: Config::default(),
            metrics: Arc::new(Metrics::default()),
        }
    }

    /// Replace the limits and timeouts.
    #[must_use]
    pub fn with_config(mut self, config: Config) -> Server {
        self.config = config;
        self
    }

    /// The limits and timeouts, to change in place.
    pub fn config_mut(&mut self) -> &mut Config {
        &mut self.config
    }

    /// The address the listener is bound to.
    ///
    /// # Errors
    ///
    /// As [`TcpListener::local_addr`].
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The server's counters, shared with the running server.
    pub fn metrics(&self) -> Arc<Metrics> {
        self.metrics.clone()
    }

    /// Serve `service` until the process ends.
    ///
    /// # Errors
    ///
    /// Never in practice: accept errors (such as running out of file
    /// descriptors) are logged and retried.
    pub async fn serve<S, B>(self, service: S) -> io::Result<()>
    where
        S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
        S::Future: Send,
        S::Error: Into<BoxError>,
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        self.serve_with_shutdown(service, std::future::pending())
            .await
    }

    /// Serve `service` until `signal` completes, then shut down gracefully:
    /// stop accepting, let in-flight requests finish within
    /// [`Config::shutdown_timeout`], close idle connections at once, and
    /// close whatever is still running at the deadline.
    ///
    /// # Errors
    ///
    /// As [`serve`](Self::serve).
    pub async fn serve_with_shutdown<S, B, F>(self, service: S, signal: F) -> io::Result<()>
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
        } = self;
        let config = Arc::new(config);
        let permits = Arc::new(Semaphore::new(config.max_connections.max(1)));
        let (stop, stopped) = watch::channel(false);
        let mut tasks = JoinSet::new();
        let mut signal = std::pin::pin!(signal);
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
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let _ = socket.set_nodelay(true);
            metrics.connections_accepted.fetch_add(1, Relaxed);
            metrics.connections_open.fetch_add(1, Relaxed);
            let io = Counted::new(socket, metrics.clone());
            let conn = Connection::new(
                io,
                service.clone(),
                config.clone(),
                metrics.clone(),
                stopped.clone(),
            );
            let metrics = metrics.clone();
            tasks.spawn(async move {
                if let Err(e) = conn.run().await {
                    tracing::debug!(%peer, error = %e, "connection ended with an error");
                }
                metrics.connections_open.fetch_sub(1, Relaxed);
                drop(permit);
            });
        }
        drop(listener);
        let _ = stop.send(true);
        let drained = tokio::time::timeout(config.shutdown_timeout, async {
            while tasks.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            tracing::warn!(
                open = tasks.len(),
                "shutdown deadline passed; closing connections"
            );
            tasks.shutdown().await;
        }
        Ok(())
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

/// Serve `service` on `listener` with the default [`Config`].
///
/// # Errors
///
/// As [`Server::serve`].
pub async fn serve<S, B>(listener: TcpListener, service: S) -> io::Result<()>
where
    S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    Server::from_listener(listener).serve(service).await
}

/// Serve one connection over any transport (a Unix socket, a TLS stream, an
/// in-memory `tokio::io::duplex` pipe) until it closes.
///
/// # Errors
///
/// When the connection ends with an I/O error or a broken response body.
///
/// # Examples
///
/// ```
/// use std::convert::Infallible;
/// use ringstream::server::{serve_connection, service_fn, Config};
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let (mut client, server) = tokio::io::duplex(4096);
/// let service = service_fn(|_req: http::Request<ringstream::Incoming>| async {
///     Ok::<_, Infallible>(http::Response::new(String::from("hi")))
/// });
/// tokio::spawn(serve_connection(server, service, Config::default()));
/// client.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await.unwrap();
/// let mut response = String::new();
/// client.read_to_string(&mut response).await.unwrap();
/// assert!(response.starts_with("HTTP/1.1 200 OK\r\n"));
/// assert!(response.ends_with("\r\n\r\nhi"));
/// # });
/// ```
pub async fn serve_connection<T, S, B>(io: T, service: S, config: Config) -> Result<(), Error>
where
    T: AsyncRead + AsyncWrite + Unpin,
    S: Service<Request<Incoming>, Response = Response<B>>,
    S::Error: Into<BoxError>,
    B: Body,
    B::Error: Into<BoxError>,
{
    let (_stop, stopped) = watch::channel(false);
    let metrics = Arc::new(Metrics::default());
    Connection::new(io, service, Arc::new(config), metrics, stopped)
        .run()
        .await
}
