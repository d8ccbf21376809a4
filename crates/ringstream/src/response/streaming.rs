//! Streaming mode: a bounded ring shared by the handler's
//! [`ResponseWriter`] and the connection's [`ResponseStream`](super::ResponseStream).
//!
//! One `std::sync::Mutex` guards the ring, the two wakers and the end
//! state. Every change that can unblock the other side (bytes written,
//! bytes taken, end, abort, either side dropped) takes the other side's
//! waker under the lock and wakes it after the lock is released, so no
//! wake-up is lost and no waker runs under the lock.

use std::fmt;
use std::future::{poll_fn, Future};
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use ringstream_core::RingBuffer;

/// State shared by the writer and the body.
#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// Bounded: its capacity never changes (until the body is dropped,
    /// when it is released).
    ring: RingBuffer,
    /// The connection, waiting for bytes or for the end.
    reader: Option<Waker>,
    /// The handler, waiting for room or for the ring to drain.
    writer: Option<Waker>,
    /// How the writer side ended, if it did.
    end: End,
    /// The body was dropped: nobody will read again.
    reader_gone: bool,
}

#[derive(Debug)]
enum End {
    /// The writer may still write.
    Open,
    /// The body is complete once the ring drains.
    Finished,
    /// The body failed; the error is handed to the connection once.
    Aborted(Option<io::Error>),
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // No code panics while holding the lock, and every state is
        // consistent between statements, so a poisoned lock is still sound.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stores as many bytes of `data` as fit. Pending when the ring is
    /// full; fails once the body is gone.
    fn poll_write(&self, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        let mut st = self.lock();
        if st.reader_gone {
            return Poll::Ready(Err(broken_pipe()));
        }
        if data.is_empty() {
            return Poll::Ready(Ok(0));
        }
        let n = st.ring.write(data);
        if n == 0 {
            register(&mut st.writer, cx);
            return Poll::Pending;
        }
        let reader = st.reader.take();
        drop(st);
        if let Some(w) = reader {
            w.wake();
        }
        Poll::Ready(Ok(n))
    }

    /// Ready once the connection has taken every byte from the ring.
    fn poll_drained(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut st = self.lock();
        if st.reader_gone {
            return Poll::Ready(Err(broken_pipe()));
        }
        if st.ring.is_empty() {
            return Poll::Ready(Ok(()));
        }
        register(&mut st.writer, cx);
        Poll::Pending
    }

    /// Ends the writer side (once) and wakes the connection.
    fn end(&self, end: End) {
        let mut st = self.lock();
        if !matches!(st.end, End::Open) {
            return;
        }
        if let End::Aborted(_) = end {
            // Nothing buffered will be sent: release it now.
            st.ring.clear();
        }
        st.end = end;
        let reader = st.reader.take();
        drop(st);
        if let Some(w) = reader {
            w.wake();
        }
    }
}

/// Stores the current task's waker in `slot` unless it is already there.
fn register(slot: &mut Option<Waker>, cx: &Context<'_>) {
    match slot {
        Some(w) if w.will_wake(cx.waker()) => {}
        _ => *slot = Some(cx.waker().clone()),
    }
}

/// The error a writer sees once the body has been dropped.
fn broken_pipe() -> io::Error {
    io::Error::new(
        io::ErrorKind::BrokenPipe,
        "response body dropped: the client went away",
    )
}

/// Creates the two halves sharing one bounded ring of `capacity` bytes
/// (at least 1).
pub(super) fn channel(capacity: usize) -> (ResponseWriter, Reader) {
    let capacity = capacity.max(1);
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            ring: RingBuffer::bounded(capacity),
            reader: None,
            writer: None,
            end: End::Open,
            reader_gone: false,
        }),
    });
    let writer = ResponseWriter {
        shared: Arc::clone(&shared),
        staging: Vec::new(),
        staging_keep: capacity,
        closed: false,
    };
    (
        writer,
        Reader {
            shared,
            done: false,
        },
    )
}

/// The connection's side of a streaming body, held by
/// [`ResponseStream`](super::ResponseStream).
#[derive(Debug)]
pub(super) struct Reader {
    shared: Arc<Shared>,
    /// The end (or the error) has been reported.
    done: bool,
}

impl Reader {
    /// Takes everything in the ring as one `Bytes` (one copy), or reports
    /// the error of an abort, or the end.
    pub(super) fn poll_data(&mut self, cx: &mut Context<'_>) -> Poll<Option<io::Result<Bytes>>> {
        if self.done {
            return Poll::Ready(None);
        }
        let mut st = self.shared.lock();
        if let End::Aborted(err) = &mut st.end {
            let err = err
                .take()
                .unwrap_or_else(|| io::Error::other("response body aborted"));
            self.done = true;
            return Poll::Ready(Some(Err(err)));
        }
        if !st.ring.is_empty() {
            let (a, b) = st.ring.as_slices();
            let mut frame = Vec::with_capacity(a.len() + b.len());
            frame.extend_from_slice(a);
            frame.extend_from_slice(b);
            st.ring.clear();
            let writer = st.writer.take();
            drop(st);
            if let Some(w) = writer {
                w.wake();
            }
            // Length equals capacity, so `Bytes` takes the vector over
            // without a further allocation.
            return Poll::Ready(Some(Ok(Bytes::from(frame))));
        }
        if let End::Finished = st.end {
            self.done = true;
            return Poll::Ready(None);
        }
        register(&mut st.reader, cx);
        Poll::Pending
    }

    /// No more data will come.
    pub(super) fn is_end_stream(&self) -> bool {
        if self.done {
            return true;
        }
        let st = self.shared.lock();
        matches!(st.end, End::Finished) && st.ring.is_empty()
    }

    /// The exact remaining length if the writer has finished, else `None`.
    pub(super) fn exact_len(&self) -> Option<u64> {
        if self.done {
            return Some(0);
        }
        let st = self.shared.lock();
        match st.end {
            End::Finished => u64::try_from(st.ring.len()).ok(),
            _ => None,
        }
    }

    /// Bytes waiting in the ring.
    pub(super) fn len(&self) -> usize {
        self.shared.lock().ring.len()
    }

    /// The ring's fixed capacity.
    pub(super) fn capacity(&self) -> usize {
        self.shared.lock().ring.capacity()
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        let mut st = self.shared.lock();
        st.reader_gone = true;
        st.reader = None;
        // Nobody will read the buffered bytes: release the storage now
        // rather than when the writer goes away.
        st.ring = RingBuffer::bounded(0);
        let writer = st.writer.take();
        drop(st);
        if let Some(w) = writer {
            w.wake();
        }
    }
}

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
/// Besides [`write_all`](Self::write_all), `write!(writer, ...).await` works
/// through the inherent [`write_fmt`](Self::write_fmt), and
/// [`tokio::io::AsyncWrite`] is implemented so `tokio::io::copy` can feed
/// the body.
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
    /// Writes all of `data`, waiting for room whenever the ring is full.
    ///
    /// # Errors
    ///
    /// [`io::ErrorKind::BrokenPipe`] if the body has been dropped (the
    /// client went away) or the body was already ended through
    /// [`AsyncWrite::poll_shutdown`](tokio::io::AsyncWrite::poll_shutdown).
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: if the future is dropped before it completes, a
    /// prefix of `data` may already be in the body.
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
    pub async fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        self.check_open()?;
        write_all(&self.shared, data).await
    }

    /// Formats `args` and writes the result, so `write!(writer, ...).await`
    /// works.
    ///
    /// The text is formatted at once into a staging buffer kept by the
    /// writer and reused from call to call; the returned future then writes
    /// it like [`write_all`](Self::write_all). The future is `Send`.
    ///
    /// A task that awaits `write!(writer, "{}", x)` directly is not `Send`,
    /// though: Rust keeps the temporaries of `format_args!` alive until the
    /// end of the statement, across the `.await`, and they are not `Send`.
    /// Inside `tokio::spawn`, use [`awrite!`](crate::awrite) (or bind the
    /// future first: `let w = write!(writer, ...); w.await?`).
    ///
    /// The staging buffer keeps at most the ring's capacity between calls,
    /// so memory stays bounded by the ring plus the largest single
    /// formatted piece.
    ///
    /// # Errors
    ///
    /// As [`write_all`](Self::write_all), plus an error of kind
    /// [`io::ErrorKind::Other`] if a `Display` implementation fails.
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: a dropped future may have written a prefix.
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
    /// write!(writer, "opendtu_uptime {}\n", 42).await.unwrap();
    /// writer.finish();
    /// let bytes = reader.await.unwrap().unwrap().to_bytes();
    /// assert_eq!(bytes, "opendtu_uptime 42\n");
    /// # });
    /// ```
    pub fn write_fmt<'a>(
        &'a mut self,
        args: fmt::Arguments<'_>,
    ) -> impl Future<Output = io::Result<()>> + Send + 'a {
        let open = self.check_open();
        self.staging.clear();
        if self.staging.capacity() > self.staging_keep {
            self.staging.shrink_to(self.staging_keep);
        }
        let formatted = io::Write::write_fmt(&mut self.staging, args);
        let shared = &*self.shared;
        let text = &self.staging[..];
        async move {
            open?;
            formatted?;
            write_all(shared, text).await
        }
    }

    /// Waits until the connection has taken every byte written so far out
    /// of the ring (into its outgoing frames).
    ///
    /// # Errors
    ///
    /// [`io::ErrorKind::BrokenPipe`] if the body has been dropped.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only waits.
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
    pub async fn flush(&mut self) -> io::Result<()> {
        poll_fn(|cx| self.shared.poll_drained(cx)).await
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

/// Writes all of `data` into the shared ring, waiting for room as needed.
async fn write_all(shared: &Shared, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        let n = poll_fn(|cx| shared.poll_write(cx, data)).await?;
        data = data.get(n..).unwrap_or_default();
    }
    Ok(())
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
