//! Where a connection comes from and where it arrived: [`ConnectionInfo`],
//! given to every request as an extension.

use std::fmt;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use ringstream_core::proxy::Tlvs;

/// The address of one end of a connection.
///
/// # Examples
///
/// ```
/// use ringstream::server::Addr;
///
/// let addr = Addr::from("127.0.0.1:8080".parse::<std::net::SocketAddr>().unwrap());
/// assert_eq!(addr.to_string(), "127.0.0.1:8080");
/// assert_eq!(addr.socket_addr().map(|a| a.port()), Some(8080));
/// assert_eq!(Addr::Unix(None).to_string(), "unix:");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Addr {
    /// A TCP (or TLS over TCP) endpoint.
    Tcp(SocketAddr),
    /// A Unix domain socket: its path, or `None` for an unnamed socket (the
    /// usual client end).
    Unix(Option<Arc<Path>>),
    /// A transport without addresses (an in-memory pipe, say).
    Unknown,
}

impl Addr {
    /// The IP address and port, for a TCP endpoint.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::net::SocketAddr;
    /// use ringstream::server::Addr;
    ///
    /// let tcp: SocketAddr = "[::1]:443".parse().unwrap();
    /// assert_eq!(Addr::Tcp(tcp).socket_addr(), Some(tcp));
    /// assert_eq!(Addr::Unknown.socket_addr(), None);
    /// ```
    pub fn socket_addr(&self) -> Option<SocketAddr> {
        match self {
            Addr::Tcp(addr) => Some(*addr),
            _ => None,
        }
    }

    /// The path, for a named Unix domain socket.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::path::Path;
    /// use std::sync::Arc;
    /// use ringstream::server::Addr;
    ///
    /// let named = Addr::Unix(Some(Arc::from(Path::new("/run/app.sock"))));
    /// assert_eq!(named.unix_path(), Some(Path::new("/run/app.sock")));
    /// assert_eq!(named.to_string(), "unix:/run/app.sock");
    /// // The client end of a Unix socket is usually unnamed.
    /// assert_eq!(Addr::Unix(None).unix_path(), None);
    /// ```
    pub fn unix_path(&self) -> Option<&Path> {
        match self {
            Addr::Unix(path) => path.as_deref(),
            _ => None,
        }
    }
}

impl From<SocketAddr> for Addr {
    fn from(addr: SocketAddr) -> Addr {
        Addr::Tcp(addr)
    }
}

#[cfg(unix)]
impl From<tokio::net::unix::SocketAddr> for Addr {
    fn from(addr: tokio::net::unix::SocketAddr) -> Addr {
        Addr::Unix(addr.as_pathname().map(Arc::from))
    }
}

impl fmt::Display for Addr {
    /// `ip:port`, `unix:path` (`unix:` when unnamed), or `-`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Addr::Tcp(addr) => fmt::Display::fmt(addr, f),
            Addr::Unix(path) => {
                f.write_str("unix:")?;
                match path {
                    Some(path) => fmt::Display::fmt(&path.display(), f),
                    None => Ok(()),
                }
            }
            Addr::Unknown => f.write_str("-"),
        }
    }
}

/// The two ends of the connection a request came on: an extension of
/// every request the server reads (`request.extensions().get::<ConnectionInfo>()`).
///
/// With the `axum` feature, a request over TCP also carries axum's
/// `ConnectInfo<SocketAddr>` with the remote address.
///
/// # Examples
///
/// ```
/// use std::convert::Infallible;
/// use ringstream::server::{service_fn, ConnectionInfo};
///
/// let service = service_fn(|req: http::Request<ringstream::Incoming>| async move {
///     let peer = req
///         .extensions()
///         .get::<ConnectionInfo>()
///         .map(|info| info.remote_addr().to_string())
///         .unwrap_or_default();
///     Ok::<_, Infallible>(http::Response::new(format!("hello, {peer}\n")))
/// });
/// # let _ = service;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionInfo {
    remote: Addr,
    local: Addr,
    /// What a PROXY header said, when the connection came through a
    /// balancer (shared: every request's info is a clone).
    proxy: Option<Arc<Proxied>>,
}

/// A connection relayed by a balancer that sent a PROXY header.
#[derive(Debug, PartialEq, Eq)]
struct Proxied {
    /// The balancer's end of the socket.
    balancer: Addr,
    /// The address the client connected to, on the balancer.
    destination: Option<SocketAddr>,
    /// The header's version 2 extensions, as sent (checked by the core).
    tlvs: Box<[u8]>,
}

impl ConnectionInfo {
    /// Gives a request's `extensions` this info (and, with the `axum`
    /// feature, axum's `ConnectInfo<SocketAddr>` for a TCP peer).
    pub(crate) fn insert_into(&self, extensions: &mut http::Extensions) {
        #[cfg(feature = "axum")]
        if let Some(remote) = self.remote_addr().socket_addr() {
            extensions.insert(axum::extract::ConnectInfo(remote));
        }
        extensions.insert(self.clone());
    }

    /// The ends of a connection: the client's address, then the server's.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::server::{Addr, ConnectionInfo};
    ///
    /// let info = ConnectionInfo::new(Addr::Unix(None), Addr::Unknown);
    /// assert_eq!(info.remote_addr(), &Addr::Unix(None));
    /// assert_eq!(info.local_addr(), &Addr::Unknown);
    /// ```
    pub fn new(remote: impl Into<Addr>, local: impl Into<Addr>) -> ConnectionInfo {
        ConnectionInfo {
            remote: remote.into(),
            local: local.into(),
            proxy: None,
        }
    }

    /// The info of a connection relayed by a balancer whose PROXY header
    /// named `client` (the client's address) and `destination` (where the
    /// client connected), with `tlvs` (its version 2 extensions): the
    /// client becomes the remote end, the balancer is kept beside it.
    pub(crate) fn proxied(
        self,
        client: SocketAddr,
        destination: Option<SocketAddr>,
        tlvs: &[u8],
    ) -> ConnectionInfo {
        let proxied = Proxied {
            balancer: self.remote,
            destination,
            tlvs: tlvs.into(),
        };
        ConnectionInfo {
            remote: Addr::Tcp(client),
            local: self.local,
            proxy: Some(Arc::new(proxied)),
        }
    }

    /// The info of a request relayed by HTTP proxies, whose `Forwarded`
    /// (or `X-Forwarded-For`) names `client`: the client becomes the
    /// remote end, the proxy that connected is kept beside it.
    pub(crate) fn forwarded_for(&self, client: SocketAddr) -> ConnectionInfo {
        let proxied = Proxied {
            balancer: self.remote.clone(),
            destination: None,
            tlvs: Box::default(),
        };
        ConnectionInfo {
            remote: Addr::Tcp(client),
            local: self.local.clone(),
            proxy: Some(Arc::new(proxied)),
        }
    }

    /// The balancer that relayed the connection (the socket's own peer),
    /// when a PROXY header named the client (see
    /// [`Config::proxy_protocol`](super::Config::proxy_protocol)), or the
    /// proxy whose `Forwarded` field did (see
    /// [`ForwardedLayer`](crate::forwarded::ForwardedLayer));
    /// [`remote_addr`](Self::remote_addr) is then the client's.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::server::ConnectionInfo;
    ///
    /// let direct = ConnectionInfo::new("192.0.2.7:50123".parse::<std::net::SocketAddr>().unwrap(), ringstream::server::Addr::Unknown);
    /// assert_eq!(direct.proxied_by(), None);
    /// ```
    pub fn proxied_by(&self) -> Option<&Addr> {
        self.proxy.as_ref().map(|p| &p.balancer)
    }

    /// The address the client connected to, on the balancer, as its PROXY
    /// header says.
    pub fn proxy_destination(&self) -> Option<SocketAddr> {
        self.proxy.as_ref().and_then(|p| p.destination)
    }

    /// The extensions of the connection's PROXY header (version 2):
    /// ALPN, authority, TLS details, cloud endpoint ids. Empty without one.
    pub fn proxy_tlvs(&self) -> Tlvs<'_> {
        let bytes = self.proxy.as_ref().map_or(&[][..], |p| &p.tlvs[..]);
        Tlvs::checked(bytes)
    }

    /// The client's end.
    ///
    /// # Examples
    ///
    /// The server sees the client's address as the client's socket has it:
    ///
    /// ```
    /// use std::convert::Infallible;
    /// use ringstream::server::{self, service_fn, ConnectionInfo};
    /// use tokio::io::{AsyncReadExt, AsyncWriteExt};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let app = service_fn(|req: http::Request<ringstream::Incoming>| async move {
    ///     let info = req.extensions().get::<ConnectionInfo>().unwrap();
    ///     Ok::<_, Infallible>(http::Response::new(info.remote_addr().to_string()))
    /// });
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// let addr = listener.local_addr().unwrap();
    /// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    /// let running = tokio::spawn(server::serve(listener, app).with_graceful_shutdown(async {
    ///     let _ = stopped.await;
    /// }));
    ///
    /// let mut client = tokio::net::TcpStream::connect(addr).await.unwrap();
    /// let me = client.local_addr().unwrap();
    /// client.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await.unwrap();
    /// let mut response = String::new();
    /// client.read_to_string(&mut response).await.unwrap();
    /// assert!(response.ends_with(&format!("\r\n\r\n{me}")));
    /// stop.send(()).unwrap();
    /// running.await.unwrap().unwrap();
    /// # });
    /// ```
    pub fn remote_addr(&self) -> &Addr {
        &self.remote
    }

    /// The server's end (for a listener bound to `0.0.0.0`, the address
    /// the client connected to).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::net::SocketAddr;
    /// use ringstream::server::{Addr, ConnectionInfo};
    ///
    /// let client: SocketAddr = "192.0.2.7:50123".parse().unwrap();
    /// let server: SocketAddr = "192.0.2.1:443".parse().unwrap();
    /// let info = ConnectionInfo::new(client, server);
    /// assert_eq!(info.local_addr(), &Addr::Tcp(server));
    /// assert_eq!(info.local_addr().socket_addr().map(|a| a.port()), Some(443));
    /// ```
    pub fn local_addr(&self) -> &Addr {
        &self.local
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_addresses_show_their_path() {
        let named = Addr::Unix(Some(Arc::from(Path::new("/run/app.sock"))));
        assert_eq!(named.to_string(), "unix:/run/app.sock");
        assert_eq!(named.unix_path(), Some(Path::new("/run/app.sock")));
        assert_eq!(named.socket_addr(), None);
        assert_eq!(Addr::Unknown.to_string(), "-");
    }
}
