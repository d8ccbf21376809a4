//! One connection served on its own, over any transport:
//! [`serve_connection`], with a graceful shutdown of its own.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;
use tokio::time::Sleep;

use super::addr::ConnectionInfo;
use super::config::Config;
use super::connection::Connection;
use super::metrics::Metrics;
use super::service::HttpService;
use super::slots::Slot;
use crate::error::Error;

/// Serves one connection over any transport (a Unix socket, a TLS stream,
/// an in-memory `tokio::io::duplex` pipe) until it closes (or until a
/// service that upgraded it lets it go: see [`upgrade`](super::upgrade)); `.await` the
/// returned [`ServeConnection`], or call
/// [`with_graceful_shutdown`](ServeConnection::with_graceful_shutdown)
/// first.
///
/// Its requests carry no [`ConnectionInfo`]: use
/// [`serve_connection_with_info`] to give them one.
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
///
/// # Errors
///
/// When the connection ends with an I/O error or a broken response body:
/// the same [`Error`] as [`serve`](super::serve)'s.
pub fn serve_connection<T, S>(
    io: T,
    service: S,
    config: Config,
) -> ServeConnection<impl Future<Output = Result<(), Error>>>
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    S: HttpService,
{
    start(io, None, service, config)
}

/// As [`serve_connection`], with `info` as the [`ConnectionInfo`]
/// extension of every request.
///
/// # Examples
///
/// ```
/// use std::convert::Infallible;
/// use ringstream::server::{serve_connection_with_info, service_fn, Addr, Config, ConnectionInfo};
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let (mut client, server) = tokio::io::duplex(4096);
/// let service = service_fn(|req: http::Request<ringstream::Incoming>| async move {
///     let info = req.extensions().get::<ConnectionInfo>().unwrap();
///     Ok::<_, Infallible>(http::Response::new(info.remote_addr().to_string()))
/// });
/// let peer: std::net::SocketAddr = "192.0.2.7:4000".parse().unwrap();
/// let info = ConnectionInfo::new(peer, Addr::Unknown);
/// tokio::spawn(serve_connection_with_info(server, info, service, Config::default()));
/// client.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await.unwrap();
/// let mut response = String::new();
/// client.read_to_string(&mut response).await.unwrap();
/// assert!(response.ends_with("\r\n\r\n192.0.2.7:4000"));
/// # });
/// ```
///
/// # Errors
///
/// As [`serve_connection`].
pub fn serve_connection_with_info<T, S>(
    io: T,
    info: ConnectionInfo,
    service: S,
    config: Config,
) -> ServeConnection<impl Future<Output = Result<(), Error>>>
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    S: HttpService,
{
    start(io, Some(info), service, config)
}

fn start<T, S>(
    io: T,
    info: Option<ConnectionInfo>,
    service: S,
    config: Config,
) -> ServeConnection<impl Future<Output = Result<(), Error>>>
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    S: HttpService,
{
    let (stop, stopped) = watch::channel(false);
    let shutdown_timeout = config.shutdown_timeout;
    let slot = Slot::standalone();
    let mut connection = Connection::new(
        io,
        service,
        Arc::new(config),
        Arc::new(Metrics::default()),
        stopped,
        slot.clone(),
    )
    .with_upgrades();
    if let Some(info) = info {
        connection = connection.with_info(info);
    }
    ServeConnection {
        running: Box::pin(connection.run()),
        stop,
        slot,
        shutdown_timeout,
    }
}

/// One connection being served, made by [`serve_connection`]: a future
/// that completes when the connection closes.
///
/// # Examples
///
/// Two requests on one connection; it ends when the client closes it:
///
/// ```
/// use std::convert::Infallible;
/// use ringstream::server::{serve_connection, service_fn, Config};
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let (mut client, server) = tokio::io::duplex(4096);
/// let service = service_fn(|req: http::Request<ringstream::Incoming>| async move {
///     Ok::<_, Infallible>(http::Response::new(req.uri().path().to_owned()))
/// });
/// let served = tokio::spawn(serve_connection(server, service, Config::default()));
///
/// client.write_all(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
/// client.shutdown().await.unwrap();
/// let mut responses = String::new();
/// client.read_to_string(&mut responses).await.unwrap();
/// assert_eq!(responses.matches("HTTP/1.1 200 OK").count(), 2);
/// assert!(responses.ends_with("\r\n\r\n/b"));
/// served.await.unwrap().unwrap();
/// # });
/// ```
///
/// # Errors
///
/// As [`serve_connection`].
///
/// # Cancel safety
///
/// The connection is served inside the future, in the task that polls it.
/// Polled by reference (`&mut served` in a `tokio::select!` loop), nothing
/// is lost: the connection waits while the future is not polled and goes
/// on when it is again. Dropping it closes the connection at once, a
/// request in flight unanswered; for a graceful end, use
/// [`with_graceful_shutdown`](Self::with_graceful_shutdown).
#[must_use = "a ServeConnection does nothing until it is awaited"]
pub struct ServeConnection<F> {
    running: Pin<Box<F>>,
    stop: watch::Sender<bool>,
    /// The connection's slot, woken after the stop is sent (a waiting
    /// connection looks at the stop only then).
    slot: Arc<Slot>,
    shutdown_timeout: Duration,
}

impl<F> ServeConnection<F> {
    /// Serves until `signal` completes, then shuts down gracefully: an
    /// idle connection closes at once, a request under way is answered
    /// with `connection: close` within [`Config::shutdown_timeout`], and
    /// at that deadline the connection is closed whatever it is doing.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::convert::Infallible;
    /// use ringstream::server::{serve_connection, service_fn, Config};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let (_client, server) = tokio::io::duplex(4096);
    /// let service = service_fn(|_req: http::Request<ringstream::Incoming>| async {
    ///     Ok::<_, Infallible>(http::Response::new(String::from("hi")))
    /// });
    /// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    /// let served = tokio::spawn(
    ///     serve_connection(server, service, Config::default()).with_graceful_shutdown(async {
    ///         let _ = stopped.await;
    ///     }),
    /// );
    /// stop.send(()).unwrap();
    /// // The idle connection closes at once.
    /// served.await.unwrap().unwrap();
    /// # });
    /// ```
    pub fn with_graceful_shutdown<G>(self, signal: G) -> GracefulConnection<F, G>
    where
        G: Future<Output = ()>,
    {
        GracefulConnection {
            running: self.running,
            stop: self.stop,
            slot: self.slot,
            signal: Some(Box::pin(signal)),
            deadline: None,
            shutdown_timeout: self.shutdown_timeout,
        }
    }
}

impl<F: Future<Output = Result<(), Error>>> Future for ServeConnection<F> {
    type Output = Result<(), Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.running.as_mut().poll(cx)
    }
}

impl<F> fmt::Debug for ServeConnection<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServeConnection").finish_non_exhaustive()
    }
}

/// A [`ServeConnection`] that shuts down gracefully once its signal
/// completes, made by [`ServeConnection::with_graceful_shutdown`].
///
/// # Examples
///
/// A request under way when the signal comes is answered, with
/// `connection: close`, and the connection ends:
///
/// ```
/// use std::convert::Infallible;
/// use std::time::Duration;
/// use ringstream::server::{serve_connection, service_fn, Config};
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let (mut client, server) = tokio::io::duplex(4096);
/// let (started, is_started) = tokio::sync::oneshot::channel::<()>();
/// let mut started = Some(started);
/// let service = service_fn(move |_req: http::Request<ringstream::Incoming>| {
///     let started = started.take();
///     async move {
///         if let Some(started) = started {
///             let _ = started.send(());
///         }
///         tokio::time::sleep(Duration::from_millis(20)).await;
///         Ok::<_, Infallible>(http::Response::new(String::from("done")))
///     }
/// });
/// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
/// let served = tokio::spawn(
///     serve_connection(server, service, Config::default()).with_graceful_shutdown(async {
///         let _ = stopped.await;
///     }),
/// );
///
/// client.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
/// is_started.await.unwrap();
/// stop.send(()).unwrap();
/// let mut response = String::new();
/// client.read_to_string(&mut response).await.unwrap();
/// assert!(response.to_ascii_lowercase().contains("\r\nconnection: close\r\n"));
/// assert!(response.ends_with("\r\n\r\ndone"));
/// served.await.unwrap().unwrap();
/// # });
/// ```
///
/// # Errors
///
/// As [`serve_connection`]; a connection closed at the shutdown deadline
/// ends with `Ok`.
///
/// # Cancel safety
///
/// As [`ServeConnection`]: polled by reference nothing is lost; dropped,
/// the connection closes at once, without the graceful shutdown.
#[must_use = "a GracefulConnection does nothing until it is awaited"]
pub struct GracefulConnection<F, G> {
    running: Pin<Box<F>>,
    stop: watch::Sender<bool>,
    slot: Arc<Slot>,
    signal: Option<Pin<Box<G>>>,
    deadline: Option<Pin<Box<Sleep>>>,
    shutdown_timeout: Duration,
}

impl<F, G> Future for GracefulConnection<F, G>
where
    F: Future<Output = Result<(), Error>>,
    G: Future<Output = ()>,
{
    type Output = Result<(), Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if let Some(signal) = &mut this.signal {
            if signal.as_mut().poll(cx).is_ready() {
                this.signal = None;
                this.stop.send_replace(true);
                this.slot.wake();
                let deadline = tokio::time::Instant::now() + this.shutdown_timeout;
                this.deadline = Some(Box::pin(tokio::time::sleep_until(deadline)));
            }
        }
        if let Poll::Ready(result) = this.running.as_mut().poll(cx) {
            return Poll::Ready(result);
        }
        match this.deadline.as_mut().map(|d| d.as_mut().poll(cx)) {
            Some(Poll::Ready(())) => Poll::Ready(Ok(())),
            _ => Poll::Pending,
        }
    }
}

impl<F, G> fmt::Debug for GracefulConnection<F, G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GracefulConnection")
            .field("stopping", &self.signal.is_none())
            .finish_non_exhaustive()
    }
}
