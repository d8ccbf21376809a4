//! Where a server's connections come from: the [`Listener`] trait, with
//! implementations for TCP and Unix domain sockets.

use std::future::Future;
use std::io;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;

use super::addr::ConnectionInfo;

/// A source of connections for [`serve`](super::serve): TCP
/// ([`tokio::net::TcpListener`]), Unix domain sockets
/// ([`tokio::net::UnixListener`]), or a transport of your own (a listener
/// handed over by a service manager, a test harness).
///
/// Whatever the listener, the server keeps its connection cap, timeouts,
/// graceful shutdown and metrics.
///
/// # Examples
///
/// A listener that wraps another and counts what it accepts:
///
/// ```
/// use std::io;
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use std::sync::Arc;
/// use ringstream::server::{ConnectionInfo, Listener};
/// use tokio::net::TcpListener;
///
/// struct Counting {
///     inner: TcpListener,
///     accepted: Arc<AtomicU64>,
/// }
///
/// impl Listener for Counting {
///     type Io = tokio::net::TcpStream;
///     type Addr = std::net::SocketAddr;
///
///     async fn accept(&mut self) -> io::Result<(Self::Io, ConnectionInfo)> {
///         let accepted = self.inner.accept().await;
///         self.accepted.fetch_add(1, Ordering::Relaxed);
///         let (socket, peer) = accepted?;
///         let info = ConnectionInfo::new(peer, socket.local_addr()?);
///         Ok((socket, info))
///     }
///
///     fn local_addr(&self) -> io::Result<Self::Addr> {
///         self.inner.local_addr()
///     }
/// }
/// ```
pub trait Listener: Send + 'static {
    /// The transport of one connection.
    type Io: AsyncRead + AsyncWrite + Unpin + Send + 'static;
    /// The listener's own address.
    type Addr;

    /// Waits for the next connection and says where it comes from.
    ///
    /// # Errors
    ///
    /// An error the server logs (at most every 5 s) before it tries again
    /// after a short pause: running out of file descriptors, say. The
    /// listener stays usable.
    ///
    /// # Cancel safety
    ///
    /// Required: the server awaits it in a `tokio::select!` beside its
    /// shutdown signal and its connections' tasks, and drops it whenever
    /// one of those is ready first, so a connection must not be lost when
    /// the future is dropped before it returns. The implementations for
    /// TCP and Unix domain sockets are cancel safe (tokio's `accept` is,
    /// and nothing is awaited after it).
    fn accept(&mut self) -> impl Future<Output = io::Result<(Self::Io, ConnectionInfo)>> + Send;

    /// The address the listener is bound to.
    ///
    /// # Errors
    ///
    /// As the operating system's call that reads it.
    fn local_addr(&self) -> io::Result<Self::Addr>;

    /// Sets the length of the listen queue, for
    /// [`Config::listen_backlog`](super::Config::listen_backlog). The
    /// default does nothing: a listener without a kernel queue has none to
    /// set.
    ///
    /// # Errors
    ///
    /// When the queue cannot be changed (the server logs it and goes on).
    fn set_backlog(&self, backlog: u32) -> io::Result<()> {
        let _ = backlog;
        Ok(())
    }
}

impl Listener for TcpListener {
    type Io = tokio::net::TcpStream;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> io::Result<(Self::Io, ConnectionInfo)> {
        let (socket, peer) = TcpListener::accept(self).await?;
        // Responses go out whole, in as few writes as possible: no waiting
        // for the acknowledgement of the previous segment.
        let _ = socket.set_nodelay(true);
        let local = socket.local_addr()?;
        Ok((socket, ConnectionInfo::new(peer, local)))
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        TcpListener::local_addr(self)
    }

    fn set_backlog(&self, backlog: u32) -> io::Result<()> {
        listen_again(socket2::SockRef::from(self), backlog)
    }
}

#[cfg(unix)]
impl Listener for tokio::net::UnixListener {
    type Io = tokio::net::UnixStream;
    type Addr = tokio::net::unix::SocketAddr;

    async fn accept(&mut self) -> io::Result<(Self::Io, ConnectionInfo)> {
        let (socket, peer) = tokio::net::UnixListener::accept(self).await?;
        let local = socket.local_addr()?;
        Ok((socket, ConnectionInfo::new(peer, local)))
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        tokio::net::UnixListener::local_addr(self)
    }

    fn set_backlog(&self, backlog: u32) -> io::Result<()> {
        listen_again(socket2::SockRef::from(self), backlog)
    }
}

/// A TCP listener on `addr` with `SO_REUSEPORT` (and `SO_REUSEADDR`, as
/// tokio's own `TcpListener::bind` sets on Unix): other listeners with the
/// option may bind the same address.
#[cfg(all(
    unix,
    not(any(target_os = "solaris", target_os = "illumos", target_os = "cygwin"))
))]
pub(super) fn bind_reuse_port(addr: std::net::SocketAddr) -> io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.set_reuseport(true)?;
    socket.bind(addr)?;
    // tokio's default; the server sets `Config::listen_backlog` when it
    // starts.
    socket.listen(1024)
}

/// `SO_REUSEPORT` is not available here.
#[cfg(not(all(
    unix,
    not(any(target_os = "solaris", target_os = "illumos", target_os = "cygwin"))
)))]
pub(super) fn bind_reuse_port(_addr: std::net::SocketAddr) -> io::Result<TcpListener> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "SO_REUSEPORT is not available on this platform",
    ))
}

/// Listening again on a listening socket changes only its queue length.
fn listen_again(socket: socket2::SockRef<'_>, backlog: u32) -> io::Result<()> {
    socket.listen(i32::try_from(backlog).unwrap_or(i32::MAX))
}
