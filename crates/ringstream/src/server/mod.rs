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

mod accept;
mod addr;
mod admit;
mod config;
mod conn;
mod connection;
mod counted;
mod listener;
mod metrics;
mod serve;
mod service;
mod slots;
mod stop;
#[cfg(feature = "tls")]
#[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
pub mod tls;
pub mod upgrade;

use std::sync::Arc;

use http::{Request, Response};
use http_body::Body;
use tokio::net::{TcpListener, ToSocketAddrs};
use tower_service::Service;

pub use addr::{Addr, ConnectionInfo};
pub use config::Config;
pub use connection::{
    serve_connection, serve_connection_with_info, GracefulConnection, ServeConnection,
};
pub use listener::Listener;
pub use metrics::{Metrics, MetricsSnapshot};
use serve::Start;
pub use serve::{Serve, WithGracefulShutdown};
pub use service::{service_fn, ServiceFn};

use crate::error::{BoxError, Error};
use crate::Incoming;

/// An HTTP/1.1 server with its [`Listener`] (TCP unless said otherwise),
/// before it serves.
///
/// Each connection runs in its own task, so a slow handler never stalls the
/// others; at most [`Config::max_connections`] run at once (see there what
/// a client arriving at the cap gets).
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
pub struct Server<L = TcpListener> {
    listener: L,
    config: Config,
    metrics: Arc<Metrics>,
    /// Speaks TLS on every connection when set.
    #[cfg(feature = "tls")]
    tls: Option<Arc<tls::Acceptor>>,
}

impl Server {
    /// Binds a TCP listener to `addr`.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the address cannot be bound.
    pub async fn bind(addr: impl ToSocketAddrs) -> Result<Server, Error> {
        Ok(Server::from_listener(TcpListener::bind(addr).await?))
    }

    /// Binds a TCP listener to `addr` and serves HTTPS on it with `tls`
    /// (feature `tls`): [`bind`](Self::bind) then [`tls`](Self::tls).
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the address cannot be bound.
    #[cfg(feature = "tls")]
    pub async fn bind_tls(addr: impl ToSocketAddrs, tls: tls::TlsConfig) -> Result<Server, Error> {
        Ok(Server::bind(addr).await?.tls(tls))
    }

    /// Serves on a TCP listener bound elsewhere: by the standard library,
    /// or inherited from a service manager (systemd's socket activation
    /// hands over such a listener). It is made non-blocking here.
    ///
    /// Call it within a tokio runtime.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the listener cannot be made non-blocking or
    /// registered with the runtime.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::server::Server;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let bound = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    /// let addr = bound.local_addr().unwrap();
    /// let server = Server::from_std(bound).unwrap();
    /// assert_eq!(server.local_addr().unwrap(), addr);
    /// # });
    /// ```
    pub fn from_std(listener: std::net::TcpListener) -> Result<Server, Error> {
        listener.set_nonblocking(true)?;
        Ok(Server::from_listener(TcpListener::from_std(listener)?))
    }
}

impl<L: Listener> Server<L> {
    /// Serves on `listener`: a TCP listener, a Unix domain socket
    /// listener, or any other [`Listener`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # #[cfg(unix)]
    /// # async fn run() -> Result<(), ringstream::Error> {
    /// use ringstream::server::Server;
    ///
    /// let listener = tokio::net::UnixListener::bind("/tmp/app.sock")?;
    /// let server = Server::from_listener(listener);
    /// # Ok(())
    /// # }
    /// ```
    pub fn from_listener(listener: L) -> Server<L> {
        Server {
            listener,
            config: Config::default(),
            metrics: Arc::new(Metrics::default()),
            #[cfg(feature = "tls")]
            tls: None,
        }
    }

    /// Speaks TLS on every connection, with `config` (feature `tls`): see
    /// [the `tls` module](crate::server::tls). The handshake has its own deadline
    /// and takes one of a limited number of places
    /// ([`TlsConfigBuilder::max_handshakes`](tls::TlsConfigBuilder::max_handshakes));
    /// the connection then counts and is served as any other.
    #[cfg(feature = "tls")]
    #[must_use]
    pub fn tls(mut self, config: tls::TlsConfig) -> Server<L> {
        self.tls = Some(Arc::new(tls::Acceptor::new(config)));
        self
    }

    /// Replaces the limits and timeouts.
    #[must_use]
    pub fn with_config(mut self, config: Config) -> Server<L> {
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
    /// [`Error::Io`], as [`Listener::local_addr`].
    pub fn local_addr(&self) -> Result<L::Addr, Error> {
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
    pub fn serve<S, B>(self, service: S) -> Serve<L, S>
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

/// Serves `service` on `listener` (TCP, a Unix domain socket, or any other
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
pub fn serve<L, S, B>(listener: L, service: S) -> Serve<L, S>
where
    L: Listener,
    S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    Server::from_listener(listener).serve(service)
}
