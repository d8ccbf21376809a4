//! [`Server`]: a listener and the server's settings, before it serves.

use std::sync::Arc;

use tokio::net::{TcpListener, ToSocketAddrs};

use super::config::Config;
use super::listener::{self, Listener};
use super::metrics::Metrics;
#[cfg(feature = "tls")]
use super::tls;
use crate::error::Error;

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
    pub(super) listener: L,
    pub(super) config: Config,
    pub(super) metrics: Arc<Metrics>,
    /// Speaks TLS on every connection when set.
    #[cfg(feature = "tls")]
    pub(super) tls: Option<Arc<tls::Acceptor>>,
}

impl Server {
    /// Binds a TCP listener to `addr`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::io;
    /// use ringstream::server::Server;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// // Port 0: the system picks a free port.
    /// let server = Server::bind("127.0.0.1:0").await.unwrap();
    /// let addr = server.local_addr().unwrap();
    /// assert_ne!(addr.port(), 0);
    ///
    /// // The port is taken while `server` holds it.
    /// let taken = Server::bind(addr).await.unwrap_err();
    /// assert_eq!(taken.kind(), io::ErrorKind::AddrInUse);
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the address cannot be bound.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe. The future waits only while `addr` is resolved (a
    /// host name is looked up on tokio's blocking pool; an IP address is
    /// ready at once); the listener is bound in the poll that completes
    /// it. If it is dropped before then, no socket has been bound and the
    /// address stays free, so the call can simply be made again (a host
    /// name lookup already under way runs to its end and its result is
    /// dropped).
    pub async fn bind(addr: impl ToSocketAddrs) -> Result<Server, Error> {
        Ok(Server::from_listener(TcpListener::bind(addr).await?))
    }

    /// Binds a TCP listener to `addr` and serves HTTPS on it with `tls`
    /// (feature `tls`): [`bind`](Self::bind) then [`tls`](Self::tls).
    ///
    /// # Examples
    ///
    /// A certificate made at run time (with the `rcgen` crate), served on
    /// a free port:
    ///
    /// ```
    /// use ringstream::server::tls::TlsConfig;
    /// use ringstream::server::Server;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    /// let tls = TlsConfig::from_pem(cert.cert.pem().as_bytes(), cert.signing_key.serialize_pem().as_bytes())
    ///     .unwrap();
    /// let server = Server::bind_tls("127.0.0.1:0", tls).await.unwrap();
    /// assert_ne!(server.local_addr().unwrap().port(), 0);
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the address cannot be bound.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe, as [`bind`](Self::bind): a future dropped before it
    /// completes has bound nothing, and drops `tls` (clones of it held
    /// elsewhere are unaffected).
    #[cfg(feature = "tls")]
    pub async fn bind_tls(addr: impl ToSocketAddrs, tls: tls::TlsConfig) -> Result<Server, Error> {
        Ok(Server::bind(addr).await?.tls(tls))
    }

    /// Binds a TCP listener to `addr` with `SO_REUSEPORT`, so that several
    /// listeners — one per thread, each with a runtime of its own — can
    /// share one port. Linux spreads new connections across the listeners
    /// bound to a port by a hash of each connection's addresses, and a
    /// connection stays with the listener that accepted it: each server
    /// has its own connection cap ([`Config::max_connections`]) and its
    /// own graceful shutdown, and when one stops listening, new
    /// connections go to the others. (Other Unix systems accept the
    /// shared bind but may give every connection to one listener; Linux
    /// lets only sockets of the same user share a port this way.)
    ///
    /// Bind the first listener to port 0 to get a free port, then the
    /// others to the address it reports. Servers that should count as
    /// one can share their counters with
    /// [`with_metrics`](Server::with_metrics).
    ///
    /// # Examples
    ///
    /// Two listeners on one port, each served on its own thread and
    /// runtime:
    ///
    /// ```
    /// # #[cfg(target_os = "linux")] {
    /// use std::convert::Infallible;
    /// use std::sync::Arc;
    /// use ringstream::server::{service_fn, Metrics, Server};
    ///
    /// let metrics = Arc::new(Metrics::default());
    /// let (stop, stopped) = tokio::sync::watch::channel(false);
    /// let (bound, addr) = std::sync::mpsc::channel();
    /// let mut threads = Vec::new();
    /// for _ in 0..2 {
    ///     let (metrics, bound, mut stopped) = (metrics.clone(), bound.clone(), stopped.clone());
    ///     // The first listener takes a free port; the second shares it.
    ///     let port = if threads.is_empty() { 0 } else { addr.recv().unwrap() };
    ///     threads.push(std::thread::spawn(move || {
    ///         let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    ///         runtime.block_on(async move {
    ///             let server = Server::bind_reuse_port(("127.0.0.1", port)).await?.with_metrics(metrics);
    ///             bound.send(server.local_addr()?.port()).unwrap();
    ///             server
    ///                 .serve(service_fn(|_req: http::Request<ringstream::Incoming>| async {
    ///                     Ok::<_, Infallible>(http::Response::new(String::from("hi")))
    ///                 }))
    ///                 .with_graceful_shutdown(async move {
    ///                     let _ = stopped.wait_for(|stop| *stop).await;
    ///                 })
    ///                 .await
    ///         })
    ///     }));
    /// }
    /// let port = addr.recv().unwrap();
    /// // ... clients connect to 127.0.0.1:port, served by either ...
    /// # let _ = port;
    /// stop.send(true).unwrap();
    /// for thread in threads {
    ///     thread.join().unwrap().unwrap();
    /// }
    /// assert_eq!(metrics.connections_open(), 0);
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the address cannot be bound (a listener without
    /// `SO_REUSEPORT` holds it, say), or of kind
    /// [`Unsupported`](std::io::ErrorKind::Unsupported) on a platform
    /// without `SO_REUSEPORT` (Windows, Solaris, illumos).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe, as [`bind`](Self::bind): the future waits only while
    /// `addr` is resolved, and binds in the poll that completes it, so a
    /// future dropped earlier leaves no socket bound to the port.
    pub async fn bind_reuse_port(addr: impl ToSocketAddrs) -> Result<Server, Error> {
        let mut failed = None;
        for addr in tokio::net::lookup_host(addr).await? {
            match listener::bind_reuse_port(addr) {
                Ok(listener) => return Ok(Server::from_listener(listener)),
                Err(e) => failed = Some(e),
            }
        }
        Err(failed
            .unwrap_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "could not resolve to any address",
                )
            })
            .into())
    }

    /// Serves on a TCP listener bound elsewhere: by the standard library,
    /// or inherited from a service manager (systemd's socket activation
    /// hands over such a listener). It is made non-blocking here.
    ///
    /// Call it within a tokio runtime.
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
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the listener cannot be made non-blocking or
    /// registered with the runtime.
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
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::server::tls::TlsConfig;
    /// use ringstream::server::Server;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// # let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    /// # let (cert_pem, key_pem) = (cert.cert.pem(), cert.signing_key.serialize_pem());
    /// // `cert_pem` and `key_pem`: a certificate chain and its private key, as PEM.
    /// let tls = TlsConfig::from_pem(cert_pem.as_bytes(), key_pem.as_bytes()).unwrap();
    /// let server = Server::bind("127.0.0.1:0").await.unwrap().tls(tls.clone());
    /// // The server and `tls` share one configuration: a reload through
    /// // `tls` reaches the server's new connections.
    /// tls.reload().unwrap();
    /// # let _ = server;
    /// # });
    /// ```
    #[cfg(feature = "tls")]
    #[must_use]
    pub fn tls(mut self, config: tls::TlsConfig) -> Server<L> {
        self.tls = Some(Arc::new(tls::Acceptor::new(config)));
        self
    }

    /// Replaces the limits and timeouts.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ringstream::server::{Config, Server};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let config = Config { head_timeout: Duration::from_secs(5), max_connections: 100, ..Config::default() };
    /// let mut server = Server::bind("127.0.0.1:0").await.unwrap().with_config(config);
    /// assert_eq!(server.config_mut().max_connections, 100);
    /// # });
    /// ```
    #[must_use]
    pub fn with_config(mut self, config: Config) -> Server<L> {
        self.config = config;
        self
    }

    /// The limits and timeouts, to change in place.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ringstream::server::Server;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let mut server = Server::bind("127.0.0.1:0").await.unwrap();
    /// server.config_mut().idle_timeout = Duration::from_secs(30);
    /// assert_eq!(server.config_mut().idle_timeout, Duration::from_secs(30));
    /// # });
    /// ```
    pub fn config_mut(&mut self) -> &mut Config {
        &mut self.config
    }

    /// The address the listener is bound to.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::server::Server;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let server = Server::bind("127.0.0.1:0").await.unwrap();
    /// let addr = server.local_addr().unwrap();
    /// assert!(addr.ip().is_loopback());
    /// // Clients connect to it.
    /// tokio::net::TcpStream::connect(addr).await.unwrap();
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Io`], as [`Listener::local_addr`].
    pub fn local_addr(&self) -> Result<L::Addr, Error> {
        Ok(self.listener.local_addr()?)
    }

    /// The server's counters, shared with the running server.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::server::Server;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let server = Server::bind("127.0.0.1:0").await.unwrap();
    /// let metrics = server.metrics();
    /// // Read it while the server runs, from any task.
    /// assert_eq!(metrics.requests(), 0);
    /// assert_eq!(metrics.connections_open(), 0);
    /// # drop(server);
    /// # });
    /// ```
    pub fn metrics(&self) -> Arc<Metrics> {
        self.metrics.clone()
    }

    /// Records into `metrics` instead of counters of its own: servers
    /// given the same [`Metrics`] add up into it, and read as one (the
    /// listeners of one port, one per core, say). Call it before
    /// [`metrics`](Self::metrics) and [`serve`](Self::serve).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ringstream::server::{Metrics, Server};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let shared = Arc::new(Metrics::default());
    /// let a = Server::bind("127.0.0.1:0").await.unwrap().with_metrics(shared.clone());
    /// let b = Server::bind("127.0.0.1:0").await.unwrap().with_metrics(shared.clone());
    /// assert!(Arc::ptr_eq(&a.metrics(), &b.metrics()));
    /// # });
    /// ```
    #[must_use]
    pub fn with_metrics(mut self, metrics: Arc<Metrics>) -> Server<L> {
        self.metrics = metrics;
        self
    }
}
