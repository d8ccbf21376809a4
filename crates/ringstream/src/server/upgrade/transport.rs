//! The transport of an upgraded connection: the connection's own, boxed,
//! behind the kill switch that cuts it off at the server's shutdown
//! deadline.

use std::fmt;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::oneshot;

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

/// Whether an upgraded connection was cut off, and the task to wake when
/// it is.
#[derive(Default)]
pub(super) struct KillSwitch {
    done: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl KillSwitch {
    pub(super) fn cut(&self) {
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
/// [`Stream`](crate::Stream) had buffered would be dropped with it; here there are none):
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

impl UpgradedTransport {
    /// `io` behind `cut`; `done` is dropped with the transport.
    pub(super) fn new(
        io: Box<dyn UpgradedIo>,
        cut: Arc<KillSwitch>,
        done: oneshot::Sender<()>,
    ) -> UpgradedTransport {
        UpgradedTransport {
            io,
            cut,
            _done: done,
        }
    }
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
