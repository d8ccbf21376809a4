//! The HTTP/1.1 server: serves any `tower_service::Service` over TCP (or any
//! other transport) with keep-alive, pipelining, `Expect: 100-continue`,
//! strict framing, limits, timeouts and graceful shutdown.
//!
//! There are two entry points, shaped like axum's:
//!
//! * [`serve(listener, service)`](serve) (or [`Server::serve`], for a
//!   server made with [`Server::bind`]) returns a [`Serve`]: `.await` it to
//!   serve until the process ends, or call
//!   [`with_graceful_shutdown`](Serve::with_graceful_shutdown) first;
//!   [`with_config`](Serve::with_config) sets the limits and timeouts.
//! * [`serve_connection`] serves one connection over any transport.
//!
//! Both fail with the same [`Error`].
//!
//! # Examples
//!
//! ```no_run
//! use std::convert::Infallible;
//! use std::time::Duration;
//! use ringstream::server::{self, service_fn, Config};
//! use ringstream::{Incoming, ResponseStream};
//!
//! # async fn run() -> Result<(), ringstream::Error> {
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! let service = service_fn(|_req: http::Request<Incoming>| async {
//!     let mut body = ResponseStream::buffered();
//!     std::fmt::Write::write_str(&mut body, "hello\n").unwrap();
//!     Ok::<_, Infallible>(http::Response::new(body))
//! });
//! let config = Config { head_timeout: Duration::from_secs(5), ..Config::default() };
//! server::serve(listener, service)
//!     .with_config(config)
//!     .with_graceful_shutdown(async {
//!         let _ = tokio::time::sleep(Duration::from_secs(60)).await;
//!     })
//!     .await
//! # }
//! ```

mod config;
mod conn;
mod counted;
mod metrics;
mod service;
mod stop;

use std::fmt;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use http::{Request, Response};
use http_body::Body;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinSet;
use tower_service::Service;

pub use config::Config;
pub use metrics::{Metrics, MetricsSnapshot};
pub use service::{service_fn, ServiceFn};

use crate::error::{BoxError, Error};
use crate::Incoming;
use conn::Connection;
use counted::Counted;

/// An HTTP/1.1 server bound to a TCP listener, before it serves.
///
/// Each connection runs in its own task, so a slow handler never stalls the
/// others; at most [`Config::max_connections`] run at once (further clients
/// wait to be accepted).
///
/// # Examples
///
/// ```no_run
/// use std::convert::Infallible;
/// use ringstream::server::{service_fn, Server};
///
/// # async fn run() -> Result<(), ringstream::Error> {
/// let server = Server::bind("127.0.0.1:0").await?;
/// println!("listening on {}", server.local_addr()?);
/// let metrics = server.metrics();
/// server
///     .serve(service_fn(|_req: http::Request<ringstream::Incoming>| async {
///         Ok::<_, Infallible>(http::Response::new(String::from("hi")))
///     }))
///     .with_graceful_shutdown(async {
///         let _ = tokio::time::sleep(std::time::Duration::from_secs(1)).await;
///     })
///     .await?;
/// println!("{} requests", metrics.requests());
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    config: Config,
    metrics: Arc<Metrics>,
}

impl Server {
    /// Binds a listener to `addr`.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the address cannot be bound.
    pub async fn bind(addr: impl ToSocketAddrs) -> Result<Server, Error> {
        Ok(Server::from_listener(TcpListener::bind(addr).await?))
    }

    /// Serves on an existing listener.
    pub fn from_listener(listener: TcpListener) -> Server {
        Server {
            listener,
            config: Config::default(),
            metrics: Arc::new(Metrics::default()),
        }
    }

    /// Replaces the limits and timeouts.
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
    /// [`Error::Io`], as [`TcpListener::local_addr`].
    pub fn local_addr(&self) -> Result<SocketAddr, Error> {
        Ok(self.listener.local_addr()?)
    }

    /// The server's counters, shared with the running server.
    pub fn metrics(&self) -> Arc<Metrics> {
        self.metrics.clone()
    }

    /// Serves `service`: the returned [`Serve`] does the work once
    /// awaited, until the process ends or, with
    /// [`with_graceful_shutdown`](Serve::with_graceful_shutdown), until a
    /// signal.
    pub fn serve<S, B>(self, service: S) -> Serve<S>
    where
        S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
        S::Future: Send,
        S::Error: Into<BoxError>,
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        Serve {
            metrics: self.metrics.clone(),
            start: Start::new(self, service, std::future::pending()),
        }
    }
}

/// Serves `service` on `listener` with the default [`Config`]; `.await` the
/// result, after [`with_config`](Serve::with_config) or
/// [`with_graceful_shutdown`](Serve::with_graceful_shutdown) if needed.
///
/// # Examples
///
/// ```
/// use std::convert::Infallible;
/// use ringstream::server::{self, service_fn};
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// let addr = listener.local_addr().unwrap();
/// let service = service_fn(|_req: http::Request<ringstream::Incoming>| async {
///     Ok::<_, Infallible>(http::Response::new(String::from("hi")))
/// });
/// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
/// let running = tokio::spawn(
///     server::serve(listener, service).with_graceful_shutdown(async {
///         let _ = stopped.await;
///     }),
/// );
///
/// let mut client = tokio::net::TcpStream::connect(addr).await.unwrap();
/// client.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await.unwrap();
/// let mut response = String::new();
/// client.read_to_string(&mut response).await.unwrap();
/// assert!(response.ends_with("\r\n\r\nhi"));
///
/// stop.send(()).unwrap();
/// running.await.unwrap().unwrap();
/// # });
/// ```
pub fn serve<S, B>(listener: TcpListener, service: S) -> Serve<S>
where
    S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    Server::from_listener(listener).serve(service)
}

/// A server about to serve a service, made by [`serve`] or
/// [`Server::serve`]. It is a future: awaiting (or spawning) it serves
/// until the process ends.
///
/// Nothing happens until it is first polled, so it can still be
/// configured with [`with_config`](Self::with_config) or given a shutdown
/// signal with [`with_graceful_shutdown`](Self::with_graceful_shutdown).
///
/// # Errors
///
/// The future never fails in practice: accept errors (such as running out
/// of file descriptors) are logged and retried. Its error type is the
/// [`Error`] of [`serve_connection`].
#[must_use = "a Serve does nothing until it is awaited"]
pub struct Serve<S> {
    metrics: Arc<Metrics>,
    start: Start<S, std::future::Pending<()>>,
}

impl<S> Serve<S> {
    /// Replaces the limits and timeouts. Call it before the first poll:
    /// a server already running keeps its configuration.
    pub fn with_config(mut self, config: Config) -> Serve<S> {
        if let Some((server, _, _)) = &mut self.start.parts {
            server.config = config;
        }
        self
    }

    /// The server's counters, shared with the running server.
    pub fn metrics(&self) -> Arc<Metrics> {
        self.metrics.clone()
    }

    /// Serves until `signal` completes, then shuts down gracefully: stops
    /// accepting, lets in-flight requests finish within
    /// [`Config::shutdown_timeout`], closes idle connections at once, and
    /// closes whatever is still running at the deadline.
    ///
    /// A server already running (polled before this call) keeps running
    /// without the signal.
    pub fn with_graceful_shutdown<F>(self, signal: F) -> WithGracefulShutdown<S, F>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let start = match self.start.parts {
            Some((server, service, _)) => Start::new(server, service, signal),
            None => Start {
                parts: None,
                running: self.start.running,
            },
        };
        WithGracefulShutdown {
            metrics: self.metrics,
            start,
        }
    }
}

// The service is moved into a boxed future before that future is polled;
// it is never pinned in place.
impl<S> Unpin for Serve<S> {}

impl<S> fmt::Debug for Serve<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Serve")
            .field("running", &self.start.running.is_some())
            .finish_non_exhaustive()
    }
}

impl<S, B> Future for Serve<S>
where
    S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Output = Result<(), Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.get_mut().start.poll(cx)
    }
}

/// A [`Serve`] that shuts down gracefully once its signal completes, made
/// by [`Serve::with_graceful_shutdown`]; a future like `Serve`.
///
/// # Errors
///
/// As [`Serve`].
#[must_use = "a WithGracefulShutdown does nothing until it is awaited"]
pub struct WithGracefulShutdown<S, F> {
    metrics: Arc<Metrics>,
    start: Start<S, F>,
}

impl<S, F> WithGracefulShutdown<S, F> {
    /// The server's counters, shared with the running server.
    pub fn metrics(&self) -> Arc<Metrics> {
        self.metrics.clone()
    }
}

// The service and the signal are moved into a boxed future before that
// future is polled; they are never pinned in place.
impl<S, F> Unpin for WithGracefulShutdown<S, F> {}

impl<S, F> fmt::Debug for WithGracefulShutdown<S, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WithGracefulShutdown")
            .field("running", &self.start.running.is_some())
            .finish_non_exhaustive()
    }
}

impl<S, B, F> Future for WithGracefulShutdown<S, F>
where
    S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
    F: Future<Output = ()> + Send + 'static,
{
    type Output = Result<(), Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.get_mut().start.poll(cx)
    }
}

/// The running server, boxed: its type cannot be named.
type Running = Pin<Box<dyn Future<Output = Result<(), Error>> + Send>>;

/// What a [`Serve`] needs to start, and then the server it started.
struct Start<S, F> {
    parts: Option<(Server, S, F)>,
    running: Option<Running>,
}

impl<S, F> Start<S, F> {
    fn new(server: Server, service: S, signal: F) -> Self {
        Start {
            parts: Some((server, service, signal)),
            running: None,
        }
    }

    fn poll<B>(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>>
    where
        S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
        S::Future: Send,
        S::Error: Into<BoxError>,
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
        F: Future<Output = ()> + Send + 'static,
    {
        if let Some((server, service, signal)) = self.parts.take() {
            self.running = Some(Box::pin(run(server, service, signal)));
        }
        let Some(running) = &mut self.running else {
            // Polled again after it completed.
            return Poll::Ready(Ok(()));
        };
        let result = ready!(running.as_mut().poll(cx));
        self.running = None;
        Poll::Ready(result)
    }
}

/// Accepts and serves until `signal`, then shuts down gracefully.
async fn run<S, B, F>(server: Server, service: S, signal: F) -> Result<(), Error>
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
        metrics.record_connection_opened();
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
            metrics.record_connection_closed();
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

/// Serve one connection over any transport (a Unix socket, a TLS stream, an
/// in-memory `tokio::io::duplex` pipe) until it closes.
///
/// # Errors
///
/// When the connection ends with an I/O error or a broken response body:
/// the same [`Error`] as [`serve`]'s.
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
