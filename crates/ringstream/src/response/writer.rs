//! The handler's end of a streaming body: [`ResponseWriter`].

use std::fmt;
use std::future::{poll_fn, Future};
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::channel::{write_all, End, Shared};
use crate::error::Error;

/// The handler's side of a streaming response body.
///
/// Created by [`ResponseStream::streaming`](super::ResponseStream::streaming)
/// together with the body it feeds. Bytes written here go into a bounded
/// ring; when the ring is full, writes wait until the connection has taken
/// bytes out, so a slow client slows the handler down instead of growing
/// memory.
///
/// The body ends when the writer is [finished](Self::finish) or dropped,
/// and fails when it is [aborted](Self::abort) or dropped during a panic.
/// Once the body has been dropped (the client went away), every write and
/// flush fails with [`io::ErrorKind::BrokenPipe`], and a write that was
/// waiting for room wakes up and fails.
///
/// Besides [`write_all`](Self::write_all), formatted text is written with
/// [`awrite!`](crate::awrite) and [`awriteln!`](crate::awriteln), and
/// [`tokio::io::AsyncWrite`] is implemented so `tokio::io::copy` can feed
/// the body.
///
/// # `awrite!`, not `write!`
///
/// `awrite!(writer, "{x}").await` is how formatted text is written.
/// `write!(writer, "{x}").await` is a compile error whose message names
/// `awrite!`: whatever `write!` returns, the temporaries `format_args!`
/// makes for the arguments (type-erased pointers, not `Send`) live until
/// the end of the statement, across the `.await`, so the task awaiting it
/// would not be `Send` — and `tokio::spawn`, like the server for a
/// service's future, only takes `Send` tasks. Rust would then say only
/// "future cannot be sent between threads safely", pointing at
/// `tokio::spawn`. `awrite!` formats in a statement of its own and yields
/// just the write, a `Send` future.
///
/// ```compile_fail,E0277
/// # use ringstream::ResponseStream;
/// let (mut writer, _body) = ResponseStream::channel();
/// // error: `write!(writer, ...).await` does not compile on a
/// // `ResponseWriter`: use `ringstream::awrite!(writer, ...).await`
/// let task = async move { write!(writer, "{}\n", 42).await };
/// ```
///
/// # Examples
///
/// ```
/// use http_body_util::BodyExt;
/// use ringstream::ResponseStream;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let (mut writer, body) = ResponseStream::streaming(4096);
/// tokio::spawn(async move {
///     for i in 0..3 {
///         ringstream::awrite!(writer, "event {i}\n").await?;
///     }
///     writer.finish();
///     Ok::<_, std::io::Error>(())
/// });
/// let bytes = body.collect().await.unwrap().to_bytes();
/// assert_eq!(bytes, "event 0\nevent 1\nevent 2\n");
/// # });
/// ```
pub struct ResponseWriter {
    shared: Arc<Shared>,
    /// Reused buffer that `write_fmt` formats into before writing.
    staging: Vec<u8>,
    /// The most `staging` keeps between calls: the ring's capacity.
    staging_keep: usize,
    /// `finish`, `abort` or `poll_shutdown` has ended the body.
    closed: bool,
}

impl ResponseWriter {
    /// The writing end of `shared`, whose ring holds `capacity` bytes.
    pub(super) fn new(shared: Arc<Shared>, capacity: usize) -> ResponseWriter {
        ResponseWriter {
            shared,
            staging: Vec::new(),
            staging_keep: capacity,
            closed: false,
        }
    }

    /// Writes all of `data`, waiting for room whenever the ring is full.
    ///
    /// # Examples
    ///
    /// ```
    /// use http_body_util::BodyExt;
    /// use ringstream::ResponseStream;
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let (mut writer, body) = ResponseStream::streaming(8);
    /// let producer = tokio::spawn(async move {
    ///     // 32 bytes through an 8-byte ring: waits for the reader.
    ///     writer.write_all(&[b'x'; 32]).await
    /// });
    /// let bytes = body.collect().await.unwrap().to_bytes();
    /// assert_eq!(bytes.len(), 32);
    /// producer.await.unwrap().unwrap();
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Io`] of kind [`io::ErrorKind::BrokenPipe`] (see
    /// [`Error::kind`]) if the body has been dropped (the client went away) or the body was already ended through
    /// [`AsyncWrite::poll_shutdown`](tokio::io::AsyncWrite::poll_shutdown).
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: if the future is dropped before it completes, a
    /// prefix of `data` may already be in the body.
    pub async fn write_all(&mut self, data: &[u8]) -> Result<(), Error> {
        self.check_open()?;
        Ok(write_all(&self.shared, data).await?)
    }

    /// Formats `args` into the writer's staging buffer, for
    /// [`awrite!`](crate::awrite) to write: `awrite!(writer, ...)` calls
    /// this and then writes the text like [`write_all`](Self::write_all),
    /// in a `Send` future.
    ///
    /// The [`WriteFmt`] it returns cannot be awaited itself, so
    /// `write!(writer, ...).await` is a compile error that names `awrite!`
    /// (see [`ResponseWriter`] for why `write!` cannot work there).
    ///
    /// The staging buffer is reused from call to call and keeps at most the
    /// ring's capacity between calls, so memory stays bounded by the ring
    /// plus the largest single formatted piece.
    ///
    /// # Examples
    ///
    /// ```
    /// use http_body_util::BodyExt;
    /// use ringstream::ResponseStream;
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let (mut writer, body) = ResponseStream::streaming(64);
    /// let reader = tokio::spawn(body.collect());
    /// tokio::spawn(async move {
    ///     ringstream::awrite!(writer, "opendtu_uptime {}\n", 42).await
    /// })
    /// .await
    /// .unwrap()
    /// .unwrap();
    /// let bytes = reader.await.unwrap().unwrap().to_bytes();
    /// assert_eq!(bytes, "opendtu_uptime 42\n");
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// Reported by the write `awrite!` yields: as
    /// [`write_all`](Self::write_all), plus an [`Error::Io`] of kind
    /// [`io::ErrorKind::Other`] if a `Display` implementation fails.
    ///
    /// # Cancel safety
    ///
    /// The write is not cancel safe: a dropped future may have written a
    /// prefix.
    pub fn write_fmt(&mut self, args: fmt::Arguments<'_>) -> WriteFmt<'_> {
        let open = self.check_open();
        self.staging.clear();
        if self.staging.capacity() > self.staging_keep {
            self.staging.shrink_to(self.staging_keep);
        }
        let formatted = io::Write::write_fmt(&mut self.staging, args);
        WriteFmt {
            shared: &self.shared,
            text: &self.staging,
            ready: open.and(formatted),
        }
    }

    /// Waits until the connection has taken every byte written so far out
    /// of the ring (into its outgoing frames).
    ///
    /// # Examples
    ///
    /// ```
    /// use http_body_util::BodyExt;
    /// use ringstream::ResponseStream;
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let (mut writer, body) = ResponseStream::streaming(64);
    /// let reader = tokio::spawn(body.collect());
    /// writer.write_all(b"data: tick\n\n").await.unwrap();
    /// writer.flush().await.unwrap(); // the connection has it now
    /// writer.finish();
    /// reader.await.unwrap().unwrap();
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Io`] of kind [`io::ErrorKind::BrokenPipe`] if the body has
    /// been dropped.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only waits.
    pub async fn flush(&mut self) -> Result<(), Error> {
        Ok(poll_fn(|cx| self.shared.poll_drained(cx)).await?)
    }

    /// Ends the body. The connection sends what is still in the ring, then
    /// ends the response (the final chunk, for chunked framing). Dropping
    /// the writer does the same, except during a panic.
    ///
    /// # Examples
    ///
    /// ```
    /// use http_body::Body as _;
    /// use ringstream::ResponseStream;
    ///
    /// let (writer, body) = ResponseStream::streaming(16);
    /// assert!(!body.is_end_stream());
    /// writer.finish();
    /// assert!(body.is_end_stream());
    /// ```
    pub fn finish(mut self) {
        self.close(End::Finished);
    }

    /// Fails the body with `err`: the connection gets the error instead of
    /// an end, and closes rather than pretend the body completed. Bytes
    /// still in the ring are discarded.
    ///
    /// # Examples
    ///
    /// ```
    /// use http_body_util::BodyExt;
    /// use ringstream::ResponseStream;
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let (writer, body) = ResponseStream::streaming(16);
    /// writer.abort(std::io::Error::other("sensor bus failed"));
    /// let err = body.collect().await.unwrap_err();
    /// assert_eq!(err.to_string(), "sensor bus failed");
    /// # });
    /// ```
    pub fn abort(mut self, err: io::Error) {
        self.close(End::Aborted(Some(err)));
    }

    /// The ring's capacity in bytes: the most this body ever buffers. It
    /// never changes while the body is alive, and is 0 once the body has
    /// been dropped and its ring released.
    ///
    /// # Examples
    ///
    /// ```
    /// let (writer, _body) = ringstream::ResponseStream::streaming(4096);
    /// assert_eq!(writer.capacity(), 4096);
    /// ```
    pub fn capacity(&self) -> usize {
        self.shared.lock().ring.capacity()
    }

    /// Returns `true` once the body has been dropped (the client went
    /// away), so a handler can stop producing before its next write fails.
    ///
    /// # Examples
    ///
    /// ```
    /// let (writer, body) = ringstream::ResponseStream::streaming(16);
    /// assert!(!writer.is_closed());
    /// drop(body);
    /// assert!(writer.is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        self.shared.lock().reader_gone
    }

    fn close(&mut self, end: End) {
        if !self.closed {
            self.closed = true;
            self.shared.end(end);
        }
    }

    fn check_open(&self) -> io::Result<()> {
        if self.closed {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "response body already ended",
            ));
        }
        Ok(())
    }
}

/// Text formatted into a [`ResponseWriter`] by `write_fmt`, waiting to be
/// written: [`awrite!`](crate::awrite) turns it into the write.
///
/// It cannot be awaited itself — its `Future` impl has a bound no type
/// meets — so that `write!(writer, ...).await`, which could never run in a
/// spawned task, fails to compile with a message that names `awrite!`
/// instead of a "not `Send`" error far from the cause. See
/// [`ResponseWriter`].
///
/// # Examples
///
/// ```
/// use http_body_util::BodyExt;
/// use ringstream::ResponseStream;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let (mut writer, body) = ResponseStream::streaming(64);
/// tokio::spawn(async move {
///     for i in 0..3 {
///         ringstream::awriteln!(writer, "line {i}").await?;
///     }
///     Ok::<_, ringstream::Error>(())
/// });
/// let bytes = body.collect().await.unwrap().to_bytes();
/// assert_eq!(bytes, "line 0\nline 1\nline 2\n");
/// # });
/// ```
#[must_use = "nothing is written until `ringstream::awrite!(writer, ...)` is awaited"]
pub struct WriteFmt<'a> {
    shared: &'a Shared,
    text: &'a [u8],
    /// Whether the writer was open and the text formatted.
    ready: io::Result<()>,
}

impl<'a> WriteFmt<'a> {
    /// The write of the formatted text; [`awrite!`](crate::awrite)'s
    /// expansion, not for direct use.
    #[doc(hidden)]
    pub fn __awrite(self) -> impl Future<Output = Result<(), Error>> + Send + 'a {
        let WriteFmt {
            shared,
            text,
            ready,
        } = self;
        async move {
            ready?;
            Ok(write_all(shared, text).await?)
        }
    }
}

impl fmt::Debug for WriteFmt<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WriteFmt")
            .field("len", &self.text.len())
            .field("ready", &self.ready.is_ok())
            .finish()
    }
}

/// Never in effect (no type meets the bound): its only use is the compile
/// error `write!(writer, ...).await` gets, which the bound's trait words.
impl<'a> Future for WriteFmt<'a>
where
    crate::__private::FormatArgs<'a>: crate::__private::SendAcrossAwait,
{
    type Output = Result<(), Error>;

    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Self::Output> {
        Poll::Ready(Err(Error::Io(io::Error::other(
            "write through ringstream::awrite!",
        ))))
    }
}

impl Drop for ResponseWriter {
    /// Ends the body; during a panic it fails the body instead, so a
    /// handler that panics mid-response does not produce a body that looks
    /// complete.
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.close(End::Aborted(Some(io::Error::other(
                "response writer dropped during a panic",
            ))));
        } else {
            self.close(End::Finished);
        }
    }
}

impl fmt::Debug for ResponseWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.shared.lock();
        f.debug_struct("ResponseWriter")
            .field("buffered", &st.ring.len())
            .field("capacity", &st.ring.capacity())
            .field("closed", &self.closed)
            .field("body_dropped", &st.reader_gone)
            .finish()
    }
}

impl tokio::io::AsyncWrite for ResponseWriter {
    /// Stores as many bytes as fit in the ring; pending while it is full.
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.check_open()?;
        self.shared.poll_write(cx, buf)
    }

    /// Pending until the connection has taken everything from the ring,
    /// like [`ResponseWriter::flush`].
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.shared.poll_drained(cx)
    }

    /// Ends the body, like [`ResponseWriter::finish`]; later writes fail.
    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().close(End::Finished);
        Poll::Ready(Ok(()))
    }
}
