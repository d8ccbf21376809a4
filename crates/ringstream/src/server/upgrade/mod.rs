//! HTTP/1.1 Upgrade (RFC 9110 §7.8): a service answers an upgrade request
//! with `101 Switching Protocols` and takes the connection over as an
//! [`Upgraded`] stream, with whatever the client sent after the request
//! head still buffered in it.
//!
//! The server offers the upgrade as a request extension, [`OnUpgrade`],
//! taken with [`on_upgrade`]; it resolves once the `101` has been written.
//! The connection keeps its place under the connection cap while it is
//! upgraded, hears the server's graceful shutdown through
//! [`Upgraded::stopping`], and is cut off (its reads and writes fail) when
//! the shutdown deadline passes.

use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{oneshot, watch};

use crate::error::Error;
use crate::stream::Stream;

mod transport;
use transport::KillSwitch;
pub use transport::{UpgradedIo, UpgradedTransport};

/// A connection that left HTTP after a `101 Switching Protocols`: a
/// [`Stream`] (so `read_partial`, `gets`, `write_all` hand over and take
/// `Bytes` as on any stream), holding any bytes the client sent after its
/// request head.
///
/// Its reads and writes fail once the server's shutdown deadline has
/// passed; [`stopping`](Self::stopping) tells when the graceful shutdown
/// begins, so that the protocol can close in its own way first.
///
/// # Examples
///
/// A line echoed back over the upgraded connection:
///
/// ```
/// use std::convert::Infallible;
/// use ringstream::server::{serve_connection, service_fn, upgrade, Config};
/// use ringstream::Incoming;
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let service = service_fn(|mut req: http::Request<Incoming>| async move {
///     let on_upgrade = upgrade::on_upgrade(&mut req).expect("an upgrade request");
///     tokio::spawn(async move {
///         let mut upgraded = on_upgrade.await.unwrap();
///         // "hello\n" came with the request head: it is buffered already.
///         let line = upgraded.stream().gets(1024).await.unwrap().unwrap();
///         upgraded.stream().write_all(&line).await.unwrap();
///         upgraded.stream().flush().await.unwrap();
///     });
///     Ok::<_, Infallible>(
///         http::Response::builder()
///             .status(101)
///             .header("connection", "upgrade")
///             .header("upgrade", "echo")
///             .body(String::new())
///             .unwrap(),
///     )
/// });
/// let (mut client, io) = tokio::io::duplex(4096);
/// let served = tokio::spawn(serve_connection(io, service, Config::default()));
/// client
///     .write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\nUpgrade: echo\r\n\r\nhello\n")
///     .await
///     .unwrap();
/// let mut received = String::new();
/// client.read_to_string(&mut received).await.unwrap();
/// assert!(received.starts_with("HTTP/1.1 101 Switching Protocols\r\n"));
/// assert!(received.ends_with("\r\n\r\nhello\n"));
/// served.await.unwrap().unwrap();
/// # });
/// ```
pub struct Upgraded {
    stream: Stream<UpgradedTransport>,
    stop: watch::Receiver<bool>,
}

impl Upgraded {
    /// The upgraded connection as a [`Stream`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::convert::Infallible;
    /// use ringstream::server::{serve_connection, service_fn, upgrade, Config};
    /// use ringstream::Incoming;
    /// use tokio::io::{AsyncReadExt, AsyncWriteExt};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let service = service_fn(|mut req: http::Request<Incoming>| async move {
    ///     let on_upgrade = upgrade::on_upgrade(&mut req).unwrap();
    ///     tokio::spawn(async move {
    ///         let mut upgraded = on_upgrade.await.unwrap();
    ///         // A length-prefixed message, answered in upper case.
    ///         let len = upgraded.stream().read_exactly(1).await.unwrap()[0];
    ///         let message = upgraded.stream().read_exactly(len.into()).await.unwrap();
    ///         upgraded.stream().write_all(&message.to_ascii_uppercase()).await.unwrap();
    ///         upgraded.stream().flush().await.unwrap();
    ///     });
    ///     Ok::<_, Infallible>(
    ///         http::Response::builder()
    ///             .status(101)
    ///             .header("connection", "upgrade")
    ///             .header("upgrade", "shout")
    ///             .body(String::new())
    ///             .unwrap(),
    ///     )
    /// });
    /// let (mut client, io) = tokio::io::duplex(4096);
    /// let served = tokio::spawn(serve_connection(io, service, Config::default()));
    /// client
    ///     .write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\nUpgrade: shout\r\n\r\n")
    ///     .await
    ///     .unwrap();
    /// client.write_all(b"\x05hello").await.unwrap();
    /// let mut received = String::new();
    /// client.read_to_string(&mut received).await.unwrap();
    /// assert!(received.ends_with("\r\n\r\nHELLO"));
    /// served.await.unwrap().unwrap();
    /// # });
    /// ```
    pub fn stream(&mut self) -> &mut Stream<UpgradedTransport> {
        &mut self.stream
    }

    /// The stream alone, for a protocol that does not need to hear the
    /// graceful shutdown. The connection's slot is given back when it is
    /// dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::convert::Infallible;
    /// use ringstream::server::{serve_connection, service_fn, upgrade, Config};
    /// use ringstream::Incoming;
    /// use tokio::io::{AsyncReadExt, AsyncWriteExt};
    /// use ringstream::server::upgrade::UpgradedTransport;
    /// use ringstream::Stream;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let service = service_fn(|mut req: http::Request<Incoming>| async move {
    ///     let on_upgrade = upgrade::on_upgrade(&mut req).expect("an upgrade request");
    ///     tokio::spawn(async move {
    ///         let mut upgraded = on_upgrade.await.unwrap();
    ///         let mut stream: Stream<UpgradedTransport> = upgraded.into_stream();
    ///         let line = stream.gets(1024).await.unwrap().unwrap();
    ///         stream.write_all(&line).await.unwrap();
    ///         stream.flush().await.unwrap();
    ///         // Dropping the stream ends the connection.
    ///     });
    ///     Ok::<_, Infallible>(
    ///         http::Response::builder()
    ///             .status(101)
    ///             .header("connection", "upgrade")
    ///             .header("upgrade", "echo")
    ///             .body(String::new())
    ///             .unwrap(),
    ///     )
    /// });
    /// let (mut client, io) = tokio::io::duplex(4096);
    /// let served = tokio::spawn(serve_connection(io, service, Config::default()));
    /// client
    ///     .write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\nUpgrade: echo\r\n\r\nhello\n")
    ///     .await
    ///     .unwrap();
    /// let mut received = String::new();
    /// client.read_to_string(&mut received).await.unwrap();
    /// assert!(received.ends_with("\r\n\r\nhello\n"));
    /// served.await.unwrap().unwrap();
    /// # });
    /// ```
    pub fn into_stream(self) -> Stream<UpgradedTransport> {
        self.stream
    }

    /// The stream and the server's stop signal.
    pub(crate) fn into_parts(self) -> (Stream<UpgradedTransport>, watch::Receiver<bool>) {
        (self.stream, self.stop)
    }

    /// Whether the server has begun a graceful shutdown.
    pub fn is_stopping(&self) -> bool {
        *self.stop.borrow()
    }

    /// Completes when the server begins a graceful shutdown (at once if it
    /// has). The connection is cut off at the shutdown deadline.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::convert::Infallible;
    /// use ringstream::server::{serve_connection, service_fn, upgrade, Config};
    /// use ringstream::Incoming;
    /// use tokio::io::{AsyncReadExt, AsyncWriteExt};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let service = service_fn(|mut req: http::Request<Incoming>| async move {
    ///     let on_upgrade = upgrade::on_upgrade(&mut req).expect("an upgrade request");
    ///     tokio::spawn(async move {
    ///         let mut upgraded = on_upgrade.await.unwrap();
    ///         // The protocol says goodbye in its own way before the deadline.
    ///         upgraded.stopping().await;
    ///         assert!(upgraded.is_stopping());
    ///         upgraded.stream().write_all(b"bye\n").await.unwrap();
    ///         upgraded.stream().flush().await.unwrap();
    ///     });
    ///     Ok::<_, Infallible>(
    ///         http::Response::builder()
    ///             .status(101)
    ///             .header("connection", "upgrade")
    ///             .header("upgrade", "echo")
    ///             .body(String::new())
    ///             .unwrap(),
    ///     )
    /// });
    /// let (mut client, io) = tokio::io::duplex(4096);
    /// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    /// let served = tokio::spawn(
    ///     serve_connection(io, service, Config::default()).with_graceful_shutdown(async {
    ///         let _ = stopped.await;
    ///     }),
    /// );
    /// client
    ///     .write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\nUpgrade: echo\r\n\r\n")
    ///     .await
    ///     .unwrap();
    /// let mut head = [0; 12];
    /// client.read_exact(&mut head).await.unwrap();
    /// assert_eq!(&head, b"HTTP/1.1 101");
    /// stop.send(()).unwrap();
    /// let mut received = String::new();
    /// client.read_to_string(&mut received).await.unwrap();
    /// assert!(received.ends_with("\r\n\r\nbye\n"));
    /// served.await.unwrap().unwrap();
    /// # });
    /// ```
    ///
    /// # Cancel safety
    ///
    /// Cancel safe.
    pub async fn stopping(&mut self) {
        let _ = self.stop.wait_for(|stopping| *stopping).await;
    }
}

impl fmt::Debug for Upgraded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Upgraded")
            .field("buffered", &self.stream.buffered().len())
            .field("stopping", &self.is_stopping())
            .finish_non_exhaustive()
    }
}

impl AsyncRead for Upgraded {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Upgraded {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// The upgrade offered with a request (an extension of every request that
/// asks for one, `Connection: upgrade` with `Upgrade`): a future of the
/// [`Upgraded`] connection, ready once the service's `101` response has
/// been written.
///
/// Clones share the one connection: the first to await it gets it.
///
/// # Examples
///
/// A service that declines the upgrade: whoever awaits it learns so.
///
/// ```
/// use std::convert::Infallible;
/// use ringstream::server::{serve_connection, service_fn, upgrade, Config};
/// use ringstream::{Error, Incoming};
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let (outcome, result) = tokio::sync::oneshot::channel();
/// let mut outcome = Some(outcome);
/// let service = service_fn(move |mut req: http::Request<Incoming>| {
///     let on_upgrade = upgrade::on_upgrade(&mut req).unwrap();
///     let outcome = outcome.take().unwrap();
///     tokio::spawn(async move {
///         let _ = outcome.send(on_upgrade.await);
///     });
///     async { Ok::<_, Infallible>(http::Response::new(String::from("no, thanks"))) }
/// });
/// let (mut client, io) = tokio::io::duplex(4096);
/// let served = tokio::spawn(serve_connection(io, service, Config::default()));
/// client
///     .write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\nUpgrade: echo\r\n\r\n")
///     .await
///     .unwrap();
/// client.shutdown().await.unwrap();
/// let mut response = String::new();
/// client.read_to_string(&mut response).await.unwrap();
/// assert!(response.starts_with("HTTP/1.1 200 OK\r\n"));
/// assert!(matches!(result.await.unwrap(), Err(Error::Closed)));
/// served.await.unwrap().unwrap();
/// # });
/// ```
///
/// # Errors
///
/// [`Error::Closed`] when the response was not a `101`, the connection
/// ended before it was written, or a clone took the connection.
///
/// # Cancel safety
///
/// Cancel safe while it is awaited again (by reference) or a clone is
/// left: the connection is taken only when returned. Dropping the last
/// clone before it is ready gives the connection up: the server, finding
/// no one to hand it to, closes it.
#[derive(Clone)]
pub struct OnUpgrade {
    receiver: Arc<Mutex<oneshot::Receiver<Upgraded>>>,
}

impl Future for OnUpgrade {
    type Output = Result<Upgraded, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut receiver = self.receiver.lock().unwrap_or_else(PoisonError::into_inner);
        Pin::new(&mut *receiver)
            .poll(cx)
            .map(|r| r.map_err(|_| Error::Closed))
    }
}

impl fmt::Debug for OnUpgrade {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OnUpgrade").finish_non_exhaustive()
    }
}

/// Takes the upgrade offered with `request`, if it asks for one and the
/// server can hand its connection over.
///
/// # Examples
///
/// ```
/// use std::convert::Infallible;
/// use ringstream::server::{service_fn, upgrade};
/// use ringstream::Incoming;
///
/// let service = service_fn(|mut req: http::Request<Incoming>| async move {
///     let Some(on_upgrade) = upgrade::on_upgrade(&mut req) else {
///         return Ok::<_, Infallible>(
///             http::Response::builder().status(426).body(String::new()).unwrap(),
///         );
///     };
///     tokio::spawn(async move {
///         if let Ok(mut upgraded) = on_upgrade.await {
///             // Speak the new protocol: here, echo one line.
///             if let Ok(Some(line)) = upgraded.stream().gets(1024).await {
///                 let _ = upgraded.stream().write_all(&line).await;
///                 let _ = upgraded.stream().flush().await;
///             }
///         }
///     });
///     Ok(http::Response::builder()
///         .status(101)
///         .header("connection", "upgrade")
///         .header("upgrade", "echo")
///         .body(String::new())
///         .unwrap())
/// });
/// # let _ = service;
/// ```
pub fn on_upgrade<B>(request: &mut http::Request<B>) -> Option<OnUpgrade> {
    request.extensions_mut().remove::<OnUpgrade>()
}

/// The connection's side of an offered upgrade.
pub(crate) struct Pending {
    sender: oneshot::Sender<Upgraded>,
}

/// Makes the extension and the connection's side of an upgrade.
pub(crate) fn offer() -> (OnUpgrade, Pending) {
    let (sender, receiver) = oneshot::channel();
    let receiver = Arc::new(Mutex::new(receiver));
    (OnUpgrade { receiver }, Pending { sender })
}

impl Pending {
    /// Hands `stream` over. `None` when nobody awaits the upgrade any more;
    /// else the connection's hold on the upgraded stream: it completes when
    /// the [`Upgraded`] is dropped, and cuts it off when itself dropped.
    pub(crate) fn complete(
        self,
        stream: Stream<Box<dyn UpgradedIo>>,
        stop: watch::Receiver<bool>,
    ) -> Option<UpgradedGuard> {
        let cut = Arc::new(KillSwitch::default());
        let (done, released) = oneshot::channel();
        let upgraded = Upgraded {
            stream: stream.map_io(|io| UpgradedTransport::new(io, cut.clone(), done)),
            stop,
        };
        self.sender.send(upgraded).ok()?;
        Some(UpgradedGuard { released, cut })
    }
}

/// The connection task's hold on an upgraded connection.
pub(crate) struct UpgradedGuard {
    released: oneshot::Receiver<()>,
    cut: Arc<KillSwitch>,
}

impl UpgradedGuard {
    /// Completes when the [`Upgraded`] is dropped.
    pub(crate) async fn released(&mut self) {
        let _ = (&mut self.released).await;
    }
}

impl Drop for UpgradedGuard {
    /// The connection's task ends (the shutdown deadline passed): the
    /// upgraded connection's reads and writes fail from now on.
    fn drop(&mut self) {
        self.cut.cut();
    }
}
