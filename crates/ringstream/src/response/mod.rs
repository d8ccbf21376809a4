//! [`ResponseStream`]: the response body a handler prints into.
//!
//! A `ResponseStream` is an [`http_body::Body`] of [`Bytes`] frames, backed
//! by a [`RingBuffer`](ringstream_core::RingBuffer). It works in one of two
//! modes, chosen when it is created.
//!
//! # Which mode to use
//!
//! **Buffered** ([`ResponseStream::buffered`],
//! [`ResponseStream::with_capacity`]) for small and medium pages that the
//! handler produces quickly, such as a 40 KB JSON or metrics page printed
//! line by line. The handler writes the whole body with `write!`,
//! [`std::io::Write`] or [`append`](ResponseStream::append), then returns
//! it. The length is then known, so [`size_hint`](Body::size_hint) is exact
//! and the server sends `Content-Length`. The body goes out as one frame
//! built on the buffer's own storage, without a copy. Memory: the body
//! itself plus the growth slack described below, for as long as the
//! response is in flight.
//!
//! **Streaming** ([`ResponseStream::streaming`],
//! [`ResponseStream::channel`]) for large bodies, slow-to-produce bodies,
//! live data and bodies of unknown or unbounded size. The response starts
//! at once; the handler keeps writing through a [`ResponseWriter`] into a
//! bounded ring and waits whenever the ring is full, until the connection
//! has sent some of it. Memory is bounded by the ring's capacity whatever
//! the body's size, and a slow client slows the producer instead of
//! growing a queue. The length is unknown, so the server uses chunked
//! framing on HTTP/1.1 (and ends the body by closing the connection on
//! HTTP/1.0). If the client goes away, the body is dropped and the
//! handler's next write fails with [`std::io::ErrorKind::BrokenPipe`].
//!
//! # Growth policy of a buffered body
//!
//! A buffered body starts at [`DEFAULT_BUFFERED_CAPACITY`] (1 KiB) or at
//! the caller's hint, and never preallocates a worst case. When a write
//! does not fit, the buffer grows to four times its capacity while that is
//! below 16 KiB, and to twice its capacity from then on (or straight to the
//! size needed, if one write is larger). From 1 KiB, a 40 KB page costs four
//! reallocations (1 → 4 → 16 → 32 → 64 KiB), never one per write; unused
//! capacity stays below 12 KiB for bodies under 16 KiB and below half the
//! buffer above that. A hint from [`ResponseStream::with_capacity`] that
//! covers the whole body avoids growth entirely.
//!
//! # Copies
//!
//! - Buffered: the handler's text is copied once, into the buffer. The
//!   frame is `Bytes::from(Vec)` over that same allocation: no copy. (When
//!   the body exactly fills its buffer the hand-off allocates nothing;
//!   otherwise `Bytes` allocates its small shared header.)
//! - Streaming: once into the ring, and once out of it into each frame
//!   (one allocation per frame), which frees the ring for the producer
//!   immediately. A frame holds everything the ring held, at most its
//!   capacity. A connection that writes frames with vectored writes, as
//!   ringstream's server does, sends them with no further copy.
//!
//! # Examples
//!
//! Buffered, with a known length:
//!
//! ```
//! use http_body::Body as _;
//! use http_body_util::BodyExt;
//! use ringstream::ResponseStream;
//!
//! let mut body = ResponseStream::buffered();
//! for (name, value) in [("opendtu_uptime", 42), ("opendtu_heap_free", 123_456)] {
//!     write!(body, "{name} {value}\n").unwrap();
//! }
//! assert_eq!(body.size_hint().exact(), Some(43));
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let bytes = body.collect().await.unwrap().to_bytes();
//! assert_eq!(bytes, "opendtu_uptime 42\nopendtu_heap_free 123456\n");
//! # });
//! ```
//!
//! Streaming, with back-pressure: a 1 MB body through a 16 KiB ring.
//!
//! ```
//! use http_body_util::BodyExt;
//! use ringstream::ResponseStream;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let (mut writer, body) = ResponseStream::channel();
//! tokio::spawn(async move {
//!     for i in 0..100_000 {
//!         ringstream::awrite!(writer, "{:09}\n", i).await?;
//!     }
//!     writer.finish();
//!     Ok::<_, std::io::Error>(())
//! });
//! let bytes = body.collect().await.unwrap().to_bytes();
//! assert_eq!(bytes.len(), 1_000_000);
//! assert!(bytes.starts_with(b"000000000\n000000001\n"));
//! # });
//! ```

mod buffered;
mod channel;
mod reader;
mod writer;

use std::fmt;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

use crate::error::Error;

pub use writer::{ResponseWriter, WriteFmt};

/// Initial capacity, in bytes, of [`ResponseStream::buffered`].
pub const DEFAULT_BUFFERED_CAPACITY: usize = 1024;

/// Ring capacity, in bytes, of [`ResponseStream::channel`]: the most a
/// streaming body buffers.
pub const DEFAULT_STREAMING_CAPACITY: usize = 16 * 1024;

/// A response body that a handler writes into; see the
/// [module documentation](self) for the two modes and when to use each.
///
/// In buffered mode it is written to directly (`write!`,
/// [`std::io::Write`], [`std::fmt::Write`], [`append`](Self::append)) and
/// then returned as the body. In streaming mode it is only the connection's
/// end; the handler writes through the [`ResponseWriter`] that came with it.
///
/// `ResponseStream` is `Send + Sync + Unpin + 'static`, so it can be the
/// body of an `http::Response` served by hyper or axum.
///
/// # Examples
///
/// ```
/// use http_body_util::BodyExt;
/// use ringstream::ResponseStream;
///
/// let mut body = ResponseStream::with_capacity(64);
/// write!(body, "{{\"power\":{}}}", 1500).unwrap();
/// let response = http::Response::new(body);
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let bytes = response.into_body().collect().await.unwrap().to_bytes();
/// assert_eq!(bytes, r#"{"power":1500}"#);
/// # });
/// ```
pub struct ResponseStream {
    kind: Kind,
}

enum Kind {
    Buffered(buffered::Buffered),
    Streaming(reader::Reader),
}

impl ResponseStream {
    /// An empty buffered body starting at [`DEFAULT_BUFFERED_CAPACITY`]
    /// (1 KiB) and growing geometrically as the handler writes.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut body = ringstream::ResponseStream::buffered();
    /// write!(body, "hello").unwrap();
    /// assert_eq!(body.len(), 5);
    /// assert_eq!(body.capacity(), 1024);
    /// ```
    pub fn buffered() -> Self {
        Self::with_capacity(DEFAULT_BUFFERED_CAPACITY)
    }

    /// An empty buffered body with room for `capacity` bytes before it
    /// first grows: a size hint from the caller. A body that fills it
    /// exactly is handed to the connection without any allocation.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut body = ringstream::ResponseStream::with_capacity(40 * 1024);
    /// body.append(&[b' '; 40 * 1024]).unwrap();
    /// assert_eq!(body.capacity(), 40 * 1024); // no growth
    /// ```
    pub fn with_capacity(capacity: usize) -> Self {
        ResponseStream {
            kind: Kind::Buffered(buffered::Buffered::with_capacity(capacity)),
        }
    }

    /// A streaming body over a bounded ring of `capacity` bytes (at least
    /// 1), and the writer that feeds it.
    ///
    /// Return the body in the response at once, and write through the
    /// writer (typically from a spawned task). See [`ResponseWriter`].
    ///
    /// # Examples
    ///
    /// ```
    /// use http_body::Body as _;
    ///
    /// let (writer, body) = ringstream::ResponseStream::streaming(4096);
    /// assert_eq!(writer.capacity(), 4096);
    /// assert_eq!(body.size_hint().exact(), None); // chunked on HTTP/1.1
    /// ```
    pub fn streaming(capacity: usize) -> (ResponseWriter, ResponseStream) {
        let (writer, reader) = channel(capacity);
        let body = ResponseStream {
            kind: Kind::Streaming(reader),
        };
        (writer, body)
    }

    /// A streaming body over a ring of [`DEFAULT_STREAMING_CAPACITY`]
    /// (16 KiB); see [`streaming`](Self::streaming).
    ///
    /// # Examples
    ///
    /// ```
    /// let (writer, _body) = ringstream::ResponseStream::channel();
    /// assert_eq!(writer.capacity(), 16 * 1024);
    /// ```
    pub fn channel() -> (ResponseWriter, ResponseStream) {
        Self::streaming(DEFAULT_STREAMING_CAPACITY)
    }

    /// Returns `true` for a buffered body, `false` for a streaming one.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::ResponseStream;
    ///
    /// assert!(ResponseStream::buffered().is_buffered());
    /// let (_writer, body) = ResponseStream::channel();
    /// assert!(!body.is_buffered());
    /// ```
    pub fn is_buffered(&self) -> bool {
        matches!(self.kind, Kind::Buffered(_))
    }

    /// Appends `data` to a buffered body.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut body = ringstream::ResponseStream::buffered();
    /// body.append(b"<html>").unwrap();
    /// assert_eq!(body.len(), 6);
    /// ```
    ///
    /// # Errors
    ///
    /// An [`Error::Io`] of kind [`io::ErrorKind::Unsupported`] on a
    /// streaming body (write through its [`ResponseWriter`]), and of kind
    /// [`io::ErrorKind::Other`] once the body has been handed to the
    /// connection.
    #[inline]
    pub fn append(&mut self, data: &[u8]) -> Result<(), Error> {
        Ok(self.append_io(data)?)
    }

    /// [`append`](Self::append) for the `io::Write` impl.
    #[inline]
    fn append_io(&mut self, data: &[u8]) -> io::Result<()> {
        match &mut self.kind {
            Kind::Buffered(b) => b.append(data),
            Kind::Streaming(_) => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "a streaming response body is written through its ResponseWriter",
            )),
        }
    }

    /// Formats `args` into a buffered body, so `write!(body, ...)` works
    /// without importing a `Write` trait (and without ambiguity when both
    /// [`std::io::Write`] and [`std::fmt::Write`] are in scope).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut body = ringstream::ResponseStream::buffered();
    /// write!(body, "{} {}\n", "opendtu_uptime", 42).unwrap();
    /// assert_eq!(body.len(), 18);
    /// ```
    ///
    /// # Errors
    ///
    /// As [`append`](Self::append), plus an error of kind
    /// [`io::ErrorKind::Other`] if a `Display` implementation fails.
    pub fn write_fmt(&mut self, args: fmt::Arguments<'_>) -> Result<(), Error> {
        Ok(io::Write::write_fmt(self, args)?)
    }

    /// Bytes written and not yet handed to the connection: the whole body
    /// for a buffered body until it is sent, what is waiting in the ring
    /// for a streaming one.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut body = ringstream::ResponseStream::buffered();
    /// assert!(body.is_empty());
    /// body.append(b"abc").unwrap();
    /// assert_eq!(body.len(), 3);
    /// ```
    pub fn len(&self) -> usize {
        match &self.kind {
            Kind::Buffered(b) => b.len(),
            Kind::Streaming(r) => r.len(),
        }
    }

    /// Returns `true` if [`len`](Self::len) is 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::ResponseStream;
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let (mut writer, body) = ResponseStream::streaming(64);
    /// assert!(body.is_empty());
    /// writer.write_all(b"event").await.unwrap();
    /// // Written into the ring, not yet taken by the connection.
    /// assert!(!body.is_empty());
    /// assert_eq!(body.len(), 5);
    /// # });
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the buffer holds without growing: the current buffer of a
    /// buffered body (0 once sent), the fixed ring of a streaming one.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::ResponseStream;
    ///
    /// let mut body = ResponseStream::with_capacity(4);
    /// body.append(b"grows past 4").unwrap();
    /// assert!(body.capacity() >= 12);
    ///
    /// // A streaming body's ring never grows.
    /// let (_writer, body) = ResponseStream::streaming(4096);
    /// assert_eq!(body.capacity(), 4096);
    /// ```
    pub fn capacity(&self) -> usize {
        match &self.kind {
            Kind::Buffered(b) => b.capacity(),
            Kind::Streaming(r) => r.capacity(),
        }
    }
}

impl Default for ResponseStream {
    /// Same as [`ResponseStream::buffered`].
    fn default() -> Self {
        Self::buffered()
    }
}

impl fmt::Debug for ResponseStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = match self.kind {
            Kind::Buffered(_) => "buffered",
            Kind::Streaming(_) => "streaming",
        };
        f.debug_struct("ResponseStream")
            .field("mode", &mode)
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .finish()
    }
}

impl Body for ResponseStream {
    type Data = Bytes;
    type Error = io::Error;

    /// Buffered: the whole body as one frame, then the end (an empty body
    /// ends at once). Streaming: each poll takes everything in the ring as
    /// one frame and wakes the writer; pending while the ring is empty and
    /// the writer is still open; an error once if the writer aborted.
    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        match &mut self.get_mut().kind {
            Kind::Buffered(b) => Poll::Ready(b.take().map(|data| Ok(Frame::data(data)))),
            Kind::Streaming(r) => r
                .poll_data(cx)
                .map(|next| next.map(|res| res.map(Frame::data))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Buffered(b) => b.len() == 0,
            Kind::Streaming(r) => r.is_end_stream(),
        }
    }

    /// Exact for a buffered body. For a streaming body, unknown while the
    /// writer is open, and exact once it has finished.
    fn size_hint(&self) -> SizeHint {
        let exact = match &self.kind {
            Kind::Buffered(b) => u64::try_from(b.len()).ok(),
            Kind::Streaming(r) => r.exact_len(),
        };
        exact.map_or_else(SizeHint::default, SizeHint::with_exact)
    }
}

impl io::Write for ResponseStream {
    /// Appends all of `buf` to a buffered body; see
    /// [`ResponseStream::append`] for the errors.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.append_io(buf)?;
        Ok(buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.append_io(buf)
    }

    /// Does nothing: a buffered body is sent when it is returned.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl fmt::Write for ResponseStream {
    /// Appends `s` to a buffered body; fails on a streaming body or once
    /// the body has been sent.
    #[inline]
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if let Kind::Buffered(b) = &mut self.kind {
            if b.try_append_fast(s.as_bytes()) {
                return Ok(());
            }
        }
        self.append_out_of_line(s.as_bytes())
    }

    /// One character: as [`write_str`](fmt::Write::write_str), without going
    /// through a `&str`.
    #[inline]
    fn write_char(&mut self, c: char) -> fmt::Result {
        let mut utf8 = [0u8; 4];
        let bytes = c.encode_utf8(&mut utf8).as_bytes();
        if let Kind::Buffered(b) = &mut self.kind {
            if b.try_append_fast(bytes) {
                return Ok(());
            }
        }
        self.append_out_of_line(bytes)
    }
}

impl ResponseStream {
    /// The slow path of `fmt::Write`: growth, a streaming body, or a body
    /// already sent.
    #[inline(never)]
    fn append_out_of_line(&mut self, data: &[u8]) -> fmt::Result {
        self.append_io(data).map_err(|_| fmt::Error)
    }
}

/// Like [`write!`], for a [`ResponseWriter`]: yields the write, a future
/// that can be awaited inside a `Send` task such as `tokio::spawn` (or a
/// service's future).
///
/// `write!(writer, "{}", x).await` cannot be made to work: the
/// temporaries of `format_args!` live until the end of the statement,
/// across the `.await`, and are not `Send`. So it does not compile, with a
/// message naming this macro (see [`ResponseWriter`]). This macro formats
/// in a statement of its own and yields the write future, so nothing but
/// the future crosses the `.await`. With any other type that has a
/// `write_fmt` method (a synchronous one, say) it does what `write!` does.
///
/// # Examples
///
/// ```
/// use http_body_util::BodyExt;
/// use ringstream::ResponseStream;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let (mut writer, body) = ResponseStream::streaming(1024);
/// tokio::spawn(async move {
///     let inverters = vec!["HM-1500"; 4];
///     for (i, name) in inverters.iter().enumerate() {
///         ringstream::awrite!(writer, "inverter{{id=\"{i}\",type=\"{name}\"}} 1\n").await?;
///     }
///     Ok::<_, std::io::Error>(())
/// });
/// let text = body.collect().await.unwrap().to_bytes();
/// assert_eq!(text.iter().filter(|&&b| b == b'\n').count(), 4);
/// # });
/// ```
#[macro_export]
macro_rules! awrite {
    ($dst:expr, $($arg:tt)*) => {{
        #[allow(unused_imports)]
        use $crate::__private::Awrite as _;
        let write = $dst.write_fmt(::core::format_args!($($arg)*));
        write.__awrite()
    }};
}

/// Like [`writeln!`], but the future it returns can be awaited inside a
/// `Send` task; see [`awrite!`](crate::awrite).
///
/// # Examples
///
/// ```
/// use http_body_util::BodyExt;
/// use ringstream::ResponseStream;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let (mut writer, body) = ResponseStream::streaming(1024);
/// tokio::spawn(async move {
///     ringstream::awriteln!(writer, "# TYPE opendtu_uptime gauge").await?;
///     ringstream::awriteln!(writer, "opendtu_uptime {}", 42).await?;
///     ringstream::awriteln!(writer).await
/// });
/// let text = body.collect().await.unwrap().to_bytes();
/// assert_eq!(text, "# TYPE opendtu_uptime gauge\nopendtu_uptime 42\n\n");
/// # });
/// ```
#[macro_export]
macro_rules! awriteln {
    ($dst:expr $(,)?) => {
        $crate::awrite!($dst, "\n")
    };
    ($dst:expr, $($arg:tt)*) => {
        $crate::awrite!($dst, "{}\n", ::core::format_args!($($arg)*))
    };
}

/// The two halves of a streamed body, sharing one bounded ring of
/// `capacity` bytes (at least 1).
fn channel(capacity: usize) -> (ResponseWriter, reader::Reader) {
    let shared = channel::Shared::new(capacity);
    let writer = ResponseWriter::new(std::sync::Arc::clone(&shared), capacity.max(1));
    (writer, reader::Reader::new(shared))
}
