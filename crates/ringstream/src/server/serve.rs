//! The futures that run a server: [`Serve`] and [`WithGracefulShutdown`].

use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use super::accept::run;
use super::bind::Server;
use super::config::Config;
use super::drain::Drain;
use super::listener::Listener;
use super::make::{IntoMakeService, MakeService};
use super::metrics::Metrics;
use crate::error::Error;

impl<L: Listener> Server<L> {
    /// Serves `app`: the returned [`Serve`] does the work once
    /// awaited, until the process ends or, with
    /// [`with_graceful_shutdown`](Serve::with_graceful_shutdown), until a
    /// signal.
    ///
    /// `app` is an [`HttpService`](super::HttpService) (an axum `Router`,
    /// a [`service_fn`](super::service_fn)), which each connection gets a
    /// clone of, or, with the `axum` feature, axum's
    /// `router.into_make_service()` or
    /// `router.into_make_service_with_connect_info::<C>()`
    /// ([`IntoMakeService`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::convert::Infallible;
    /// use ringstream::server::{service_fn, Server};
    /// use tokio::io::{AsyncReadExt, AsyncWriteExt};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let server = Server::bind("127.0.0.1:0").await.unwrap();
    /// let addr = server.local_addr().unwrap();
    /// let app = service_fn(|req: http::Request<ringstream::Incoming>| async move {
    ///     Ok::<_, Infallible>(http::Response::new(format!("you asked for {}", req.uri().path())))
    /// });
    /// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    /// let running = tokio::spawn(server.serve(app).with_graceful_shutdown(async {
    ///     let _ = stopped.await;
    /// }));
    ///
    /// let mut client = tokio::net::TcpStream::connect(addr).await.unwrap();
    /// client.write_all(b"GET /items HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await.unwrap();
    /// let mut response = String::new();
    /// client.read_to_string(&mut response).await.unwrap();
    /// assert!(response.starts_with("HTTP/1.1 200 OK\r\n"));
    /// assert!(response.ends_with("\r\n\r\nyou asked for /items"));
    ///
    /// stop.send(()).unwrap();
    /// running.await.unwrap().unwrap();
    /// # });
    /// ```
    ///
    /// # Cancel safety
    ///
    /// As [`Serve`]'s: dropping the future stops the server at once.
    pub fn serve<A, Marker>(self, app: A) -> Serve<L, A::MakeService>
    where
        A: IntoMakeService<Marker>,
    {
        Serve {
            metrics: self.metrics.clone(),
            drain: self.config.drain.clone(),
            start: Start::new(self, app.into_make_service(), std::future::pending()),
        }
    }
}

/// Serves `app` on `listener` (TCP, a Unix domain socket, or any other
/// [`Listener`]) with the default [`Config`]; `.await` the result, after
/// [`with_config`](Serve::with_config) or
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
///
/// # Cancel safety
///
/// As [`Serve`]'s: dropping the future stops the server at once.
pub fn serve<L, A, Marker>(listener: L, app: A) -> Serve<L, A::MakeService>
where
    L: Listener,
    A: IntoMakeService<Marker>,
{
    Server::from_listener(listener).serve(app)
}

/// A server about to serve a service, made by [`serve`](super::serve) or
/// [`Server::serve`](super::Server::serve). It is a future: awaiting (or spawning) it serves
/// until the process ends.
///
/// Nothing happens until it is first polled, so it can still be
/// configured with [`with_config`](Self::with_config) or given a shutdown
/// signal with [`with_graceful_shutdown`](Self::with_graceful_shutdown).
/// Dropping it (or aborting the task it was spawned on) stops the server
/// at once, and the connections it serves with it.
///
/// # Examples
///
/// ```
/// use std::convert::Infallible;
/// use std::time::Duration;
/// use ringstream::server::{self, service_fn, Config};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// let app = service_fn(|_req: http::Request<ringstream::Incoming>| async {
///     Ok::<_, Infallible>(http::Response::new(String::from("hi")))
/// });
/// // Configured before it is first polled; nothing is served yet.
/// let serve = server::serve(listener, app)
///     .with_config(Config { idle_timeout: Duration::from_secs(30), ..Config::default() });
/// let addr = serve.local_addr().unwrap();
/// let metrics = serve.metrics();
///
/// let running = tokio::spawn(serve);
/// let _client = tokio::net::TcpStream::connect(addr).await.unwrap();
/// while metrics.connections_accepted() == 0 {
///     tokio::task::yield_now().await;
/// }
/// // Without a shutdown signal, it serves until stopped from outside.
/// running.abort();
/// assert!(running.await.unwrap_err().is_cancelled());
/// # });
/// ```
///
/// # Errors
///
/// The future never fails in practice: accept errors (such as running out
/// of file descriptors) are logged and retried. Its error type is the
/// [`Error`] of [`serve_connection`](super::serve_connection).
///
/// # Cancel safety
///
/// Polled by reference (`&mut serve` in a `tokio::select!` loop), nothing
/// is lost: from its first poll the server runs in a task of its own and
/// goes on between polls; awaiting it again waits for that task. Dropping
/// it is no graceful stop: the server's task is aborted, and every
/// connection's task with it (requests in flight are cut unanswered). To
/// stop gracefully, give the signal to
/// [`with_graceful_shutdown`](Self::with_graceful_shutdown) rather than
/// racing the future against it.
#[must_use = "a Serve does nothing until it is awaited"]
pub struct Serve<L, S> {
    pub(super) metrics: Arc<Metrics>,
    /// The drain of the configuration the server runs with.
    pub(super) drain: Drain,
    pub(super) start: Start<L, S, std::future::Pending<()>>,
}

impl<L, S> Serve<L, S> {
    /// Replaces the limits and timeouts. Call it before the first poll:
    /// a server already running keeps its configuration.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::convert::Infallible;
    /// use std::time::Duration;
    /// use ringstream::server::{self, service_fn, Config};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// let app = service_fn(|_req: http::Request<ringstream::Incoming>| async {
    ///     Ok::<_, Infallible>(http::Response::new(String::new()))
    /// });
    /// let config = Config {
    ///     head_timeout: Duration::from_secs(5),
    ///     shutdown_timeout: Duration::from_secs(10),
    ///     ..Config::default()
    /// };
    /// let serve = server::serve(listener, app).with_config(config);
    /// // An immediate shutdown signal: it starts, then stops at once.
    /// serve.with_graceful_shutdown(async {}).await.unwrap();
    /// # });
    /// ```
    pub fn with_config(mut self, config: Config) -> Serve<L, S> {
        if let Some((server, _, _)) = &mut self.start.parts {
            self.drain = config.drain.clone();
            server.config = config;
        }
        self
    }

    /// The server's [`Drain`] (its configuration's: take it after
    /// [`with_config`](Self::with_config)).
    pub fn drain(&self) -> Drain {
        self.drain.clone()
    }

    /// The server's counters, shared with the running server.
    pub fn metrics(&self) -> Arc<Metrics> {
        self.metrics.clone()
    }

    /// The address the server listens on (as axum's `Serve::local_addr`).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::convert::Infallible;
    /// use ringstream::server::{self, service_fn};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// let bound = listener.local_addr().unwrap();
    /// let service = service_fn(|_req: http::Request<ringstream::Incoming>| async {
    ///     Ok::<_, Infallible>(http::Response::new(String::new()))
    /// });
    /// let serve = server::serve(listener, service);
    /// assert_eq!(serve.local_addr().unwrap(), bound);
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// The listener's error, or [`io::ErrorKind::Other`] once the server
    /// runs (it was polled, and its listener moved into the running
    /// server).
    pub fn local_addr(&self) -> io::Result<L::Addr>
    where
        L: Listener,
    {
        self.start.local_addr()
    }

    /// Serves until `signal` completes, then shuts down gracefully: stops
    /// accepting, lets in-flight requests finish within
    /// [`Config::shutdown_timeout`], closes idle connections at once, and
    /// closes whatever is still running at the deadline.
    ///
    /// A server already running (polled before this call) keeps running
    /// without the signal.
    ///
    /// # Examples
    ///
    /// A request in flight when the signal comes is answered before the
    /// server stops:
    ///
    /// ```
    /// use std::convert::Infallible;
    /// use std::sync::Arc;
    /// use ringstream::server::{self, service_fn};
    /// use tokio::io::{AsyncReadExt, AsyncWriteExt};
    /// use tokio::sync::Notify;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// let addr = listener.local_addr().unwrap();
    /// let started = Arc::new(Notify::new());
    /// let app = service_fn({
    ///     let started = started.clone();
    ///     move |_req: http::Request<ringstream::Incoming>| {
    ///         let started = started.clone();
    ///         async move {
    ///             started.notify_one();
    ///             tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    ///             Ok::<_, Infallible>(http::Response::new(String::from("done")))
    ///         }
    ///     }
    /// });
    /// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    /// let running = tokio::spawn(server::serve(listener, app).with_graceful_shutdown(async {
    ///     let _ = stopped.await;
    /// }));
    ///
    /// let mut client = tokio::net::TcpStream::connect(addr).await.unwrap();
    /// client.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
    /// started.notified().await;
    /// stop.send(()).unwrap();
    ///
    /// let mut response = String::new();
    /// client.read_to_string(&mut response).await.unwrap();
    /// assert!(response.ends_with("\r\n\r\ndone"));
    /// running.await.unwrap().unwrap();
    /// # });
    /// ```
    pub fn with_graceful_shutdown<F>(self, signal: F) -> WithGracefulShutdown<L, S, F>
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
            drain: self.drain,
            start,
        }
    }
}

// The service is moved into a boxed future before that future is polled;
// it is never pinned in place.
impl<L, S> Unpin for Serve<L, S> {}

impl<L, S> fmt::Debug for Serve<L, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Serve")
            .field("running", &self.start.running.is_some())
            .finish_non_exhaustive()
    }
}

impl<L, S> Future for Serve<L, S>
where
    L: Listener,
    S: MakeService,
{
    type Output = Result<(), Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.get_mut().start.poll(cx)
    }
}

/// A [`Serve`] that shuts down gracefully once its signal completes, made
/// by [`Serve::with_graceful_shutdown`]; a future like `Serve`.
///
/// # Examples
///
/// ```
/// use std::convert::Infallible;
/// use ringstream::server::{service_fn, Server};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let app = service_fn(|_req: http::Request<ringstream::Incoming>| async {
///     Ok::<_, Infallible>(http::Response::new(String::new()))
/// });
/// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
/// let serve = Server::bind("127.0.0.1:0")
///     .await
///     .unwrap()
///     .serve(app)
///     .with_graceful_shutdown(async {
///         let _ = stopped.await;
///     });
/// assert!(serve.local_addr().unwrap().ip().is_loopback());
/// let metrics = serve.metrics();
///
/// let running = tokio::spawn(serve);
/// stop.send(()).unwrap();
/// running.await.unwrap().unwrap();
/// assert_eq!(metrics.requests(), 0);
/// # });
/// ```
///
/// # Errors
///
/// As [`Serve`].
///
/// # Cancel safety
///
/// As [`Serve`]: dropping it aborts the server and its connections at
/// once, without the graceful shutdown its signal would start.
#[must_use = "a WithGracefulShutdown does nothing until it is awaited"]
pub struct WithGracefulShutdown<L, S, F> {
    metrics: Arc<Metrics>,
    drain: Drain,
    start: Start<L, S, F>,
}

impl<L, S, F> WithGracefulShutdown<L, S, F> {
    /// The server's counters, shared with the running server.
    pub fn metrics(&self) -> Arc<Metrics> {
        self.metrics.clone()
    }

    /// The server's [`Drain`], as [`Serve::drain`].
    pub fn drain(&self) -> Drain {
        self.drain.clone()
    }

    /// The address the server listens on, as [`Serve::local_addr`].
    ///
    /// # Errors
    ///
    /// As [`Serve::local_addr`].
    pub fn local_addr(&self) -> io::Result<L::Addr>
    where
        L: Listener,
    {
        self.start.local_addr()
    }
}

// The service and the signal are moved into a boxed future before that
// future is polled; they are never pinned in place.
impl<L, S, F> Unpin for WithGracefulShutdown<L, S, F> {}

impl<L, S, F> fmt::Debug for WithGracefulShutdown<L, S, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WithGracefulShutdown")
            .field("running", &self.start.running.is_some())
            .finish_non_exhaustive()
    }
}

impl<L, S, F> Future for WithGracefulShutdown<L, S, F>
where
    L: Listener,
    S: MakeService,
    F: Future<Output = ()> + Send + 'static,
{
    type Output = Result<(), Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.get_mut().start.poll(cx)
    }
}

/// The running server: a task of the runtime's own, so that the accept
/// loop runs on a worker beside its connections' tasks whatever thread
/// awaits the [`Serve`]. (Awaited in `block_on`, the loop would wake a
/// second thread for every connection it starts and every one that
/// ends.) Dropping it stops the server: the task is aborted, and the
/// connections' tasks with it.
struct Running(tokio::task::JoinHandle<Result<(), Error>>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// What a [`Serve`] needs to start, and then the server it started.
pub(super) struct Start<L, S, F> {
    parts: Option<(Server<L>, S, F)>,
    running: Option<Running>,
}

impl<L, S, F> Start<L, S, F> {
    pub(super) fn new(server: Server<L>, service: S, signal: F) -> Self {
        Start {
            parts: Some((server, service, signal)),
            running: None,
        }
    }

    fn local_addr(&self) -> io::Result<L::Addr>
    where
        L: Listener,
    {
        match &self.parts {
            Some((server, _, _)) => server.listener.local_addr(),
            None => Err(io::Error::other(
                "the server is running: its listener is no longer at hand",
            )),
        }
    }

    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>>
    where
        L: Listener,
        S: MakeService,
        F: Future<Output = ()> + Send + 'static,
    {
        if let Some((server, service, signal)) = self.parts.take() {
            self.running = Some(Running(tokio::spawn(run(server, service, signal))));
        }
        let Some(running) = &mut self.running else {
            // Polled again after it completed.
            return Poll::Ready(Ok(()));
        };
        let joined = ready!(Pin::new(&mut running.0).poll(cx));
        self.running = None;
        Poll::Ready(match joined {
            Ok(result) => result,
            // The accept loop does not panic on its own; a panic there is
            // the caller's to see, as if it had run in the caller's task.
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            // Cancelled: the runtime is shutting down.
            Err(_) => Ok(()),
        })
    }
}
