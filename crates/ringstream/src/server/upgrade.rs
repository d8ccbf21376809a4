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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{oneshot, watch};

use crate::error::Error;
use crate::stream::Stream;

/// The transport of an upgraded connection, boxed so that its type does
/// not depend on the listener.
///
/// # Examples
///
/// Any `AsyncRead + AsyncWrite + Send + Unpin` transport is one:
///
/// ```
/// use ringstream::server::upgrade::UpgradedIo;
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let (a, _b) = tokio::io::duplex(64);
/// let boxed: Box<dyn UpgradedIo> = Box::new(a);
/// # drop(boxed);
/// # });
/// ```
pub trait UpgradedIo: AsyncRead + AsyncWrite + Send + Unpin {}

impl<T: AsyncRead + AsyncWrite + Send + Unpin> UpgradedIo for T {}

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
            stream: stream.map_io(|io| UpgradedTransport {
                io,
                cut: cut.clone(),
                _done: done,
            }),
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

/// Whether an upgraded connection was cut off, and the task to wake when
/// it is.
#[derive(Default)]
struct KillSwitch {
    done: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl KillSwitch {
    fn cut(&self) {
        self.done.store(true, Ordering::Release);
        let waker = self
            .waker
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Runs `op`, an operation on the transport, unless the connection
    /// was cut off. The waker is remembered only when `op` waits: a
    /// connection that keeps moving takes no lock.
    fn guard<R>(
        &self,
        cx: &mut Context<'_>,
        op: impl FnOnce(&mut Context<'_>) -> Poll<io::Result<R>>,
    ) -> Poll<io::Result<R>> {
        if self.done.load(Ordering::Acquire) {
            return Poll::Ready(Err(cut_off()));
        }
        let polled = op(cx);
        if polled.is_pending() {
            let mut waker = self.waker.lock().unwrap_or_else(PoisonError::into_inner);
            crate::wake::register(&mut waker, cx);
            drop(waker);
            // Cut off between the first check and the registration: the
            // cut found no waker to wake.
            if self.done.load(Ordering::Acquire) {
                return Poll::Ready(Err(cut_off()));
            }
        }
        polled
    }
}

fn cut_off() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "the server's shutdown deadline passed",
    )
}

/// The transport of an upgraded connection: the connection's own, boxed.
/// Its reads and writes fail once the server's shutdown deadline has
/// passed; dropping it gives the connection's slot back.
///
/// # Examples
///
/// The raw transport, written to with tokio's I/O traits (bytes the
/// [`Stream`] had buffered would be dropped with it; here there are none):
///
/// ```
/// use std::convert::Infallible;
/// use ringstream::server::upgrade::{self, UpgradedTransport};
/// use ringstream::server::{serve_connection, service_fn, Config};
/// use ringstream::Incoming;
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let service = service_fn(|mut req: http::Request<Incoming>| async move {
///     let on_upgrade = upgrade::on_upgrade(&mut req).unwrap();
///     tokio::spawn(async move {
///         let mut io: UpgradedTransport = on_upgrade.await.unwrap().into_stream().into_inner();
///         io.write_all(b"raw bytes").await.unwrap();
///         io.flush().await.unwrap();
///     });
///     Ok::<_, Infallible>(
///         http::Response::builder()
///             .status(101)
///             .header("connection", "upgrade")
///             .header("upgrade", "raw")
///             .body(String::new())
///             .unwrap(),
///     )
/// });
/// let (mut client, io) = tokio::io::duplex(4096);
/// let served = tokio::spawn(serve_connection(io, service, Config::default()));
/// client
///     .write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\nUpgrade: raw\r\n\r\n")
///     .await
///     .unwrap();
/// let mut received = String::new();
/// client.read_to_string(&mut received).await.unwrap();
/// assert!(received.ends_with("\r\n\r\nraw bytes"));
/// served.await.unwrap().unwrap();
/// # });
/// ```
pub struct UpgradedTransport {
    io: Box<dyn UpgradedIo>,
    cut: Arc<KillSwitch>,
    /// Dropped with the transport: tells the connection's task that its
    /// slot is free.
    _done: oneshot::Sender<()>,
}

impl fmt::Debug for UpgradedTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UpgradedTransport")
            .field("cut_off", &self.cut.done.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl AsyncRead for UpgradedTransport {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        this.cut
            .guard(cx, |cx| Pin::new(&mut this.io).poll_read(cx, buf))
    }
}

impl AsyncWrite for UpgradedTransport {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        this.cut
            .guard(cx, |cx| Pin::new(&mut this.io).poll_write(cx, buf))
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        this.cut.guard(cx, |cx| {
            Pin::new(&mut this.io).poll_write_vectored(cx, bufs)
        })
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        this.cut
            .guard(cx, |cx| Pin::new(&mut this.io).poll_flush(cx))
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}
