//! `Incoming`: request bodies read from a [`Stream`] through the core's
//! decoders.
//!
//! A body is delimited by `Content-Length`, by the chunked coding, or by the
//! end of the connection (RFC 9112 §6.3). The framing is decided by the core
//! ([`ringstream_core::h1`]); this module only moves bytes: body data is split
//! off the stream's read block and handed over as [`Bytes`] without a copy,
//! one block at a time, so memory stays constant whatever the chunk sizes —
//! a single 1 GiB chunk streams through in blocks, never held whole.
//!
//! A body that ends early (EOF before `Content-Length` bytes or before the
//! last chunk) is an error, never a clean end.
//!
//! Reading a whole body into memory is bounded:
//! [`read_all`](Incoming::read_all) buffers at most [`READ_ALL_LIMIT`]
//! (2 MiB), [`read_all_limited`](Incoming::read_all_limited) at most the
//! limit it is given, and a longer body fails the read with
//! [`Error::BodyTooLarge`] rather than come back cut short.

use std::collections::VecDeque;
use std::fmt;
use std::future::poll_fn;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use bytes::Bytes;
use http::HeaderMap;
use http_body::{Body, Frame, SizeHint};
use ringstream_core::h1::{BodyFraming, Decoder};
use ringstream_core::Limits;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::error::Error;
use crate::stream::Stream;

mod channel;
mod deadline;
mod foreign;
#[cfg(feature = "http2")]
mod h2;
mod piece;
mod scan;
mod source;

pub(crate) use channel::{BodySender, Shared};
pub(crate) use deadline::BodyDeadlines;
pub(crate) use piece::BodyPiece;
use source::DirectSource;
pub use source::LARGE_BODY_READ;
pub(crate) use source::{poll_body, BodyReader};

/// The most [`Incoming::read_all`] buffers, in bytes: 2 MiB (the default of
/// axum's `DefaultBodyLimit`). A longer body fails the read with
/// [`Error::BodyTooLarge`]; read it with
/// [`read_all_limited`](Incoming::read_all_limited) to choose another
/// limit, or piece by piece to stream it.
pub const READ_ALL_LIMIT: usize = 2 * 1024 * 1024;

/// A request body: data frames, then (for chunked bodies) a trailers frame.
///
/// `Incoming` implements [`http_body::Body`] with `Data = Bytes`, so it can be
/// handed to any code of the `http` ecosystem (axum extractors, hyper
/// clients, `http_body_util::BodyExt`), and it offers the reading methods of
/// [`Stream`]: [`read_partial`](Incoming::read_partial),
/// [`read_up_to`](Incoming::read_up_to) and [`read_all`](Incoming::read_all)
/// (which, unlike `Stream`'s, buffers at most [`READ_ALL_LIMIT`]; see
/// [`read_all_limited`](Incoming::read_all_limited)).
///
/// The server creates one for every request. A body can also be read
/// directly off a [`Stream`] with [`Incoming::from_stream`].
///
/// # Examples
///
/// ```
/// use ringstream::{Incoming, Stream};
/// use ringstream::ringstream_core::h1::BodyFraming;
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let wire: &[u8] = b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
/// let (mut client, server) = tokio::io::duplex(64);
/// tokio::io::AsyncWriteExt::write_all(&mut client, wire).await.unwrap();
/// drop(client);
///
/// let mut body = Incoming::from_stream(Stream::new(server), BodyFraming::Chunked);
/// assert_eq!(&body.read_all().await.unwrap()[..], b"hello world");
/// # });
/// ```
pub struct Incoming {
    kind: Kind,
    /// Data received but not yet returned (by `read`/`read_partial`).
    leftover: Bytes,
    /// The trailers, once the body has ended and they were not yet returned
    /// (boxed: rare, and a `HeaderMap` inline would more than double the
    /// size of every request).
    trailers: Option<Box<HeaderMap>>,
    /// The declared length, if any (for `size_hint`).
    length: Option<u64>,
    /// Body bytes delivered so far.
    received: u64,
    ended: bool,
}

enum Kind {
    Empty,
    Channel(Arc<Shared>),
    Direct(Box<dyn DirectSource>),
}

impl fmt::Debug for Incoming {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            Kind::Empty => "empty",
            Kind::Channel(_) => "connection",
            Kind::Direct(_) => "stream",
        };
        f.debug_struct("Incoming")
            .field("kind", &kind)
            .field("length", &self.length)
            .field("received", &self.received)
            .field("ended", &self.ended)
            .finish()
    }
}

impl Default for Incoming {
    fn default() -> Self {
        Incoming::empty()
    }
}

impl Incoming {
    /// An empty body (a request without one).
    ///
    /// # Examples
    ///
    /// ```
    /// use http_body::Body;
    ///
    /// let body = ringstream::Incoming::empty();
    /// assert!(body.is_end_stream());
    /// ```
    pub fn empty() -> Incoming {
        Incoming::with_kind(Kind::Empty, Some(0))
    }

    fn with_kind(kind: Kind, length: Option<u64>) -> Incoming {
        let ended = matches!(kind, Kind::Empty);
        Incoming {
            kind,
            leftover: Bytes::new(),
            trailers: None,
            length,
            received: 0,
            ended,
        }
    }

    /// A body read straight off `stream`, delimited by `framing`:
    /// [`BodyFraming::None`] is an empty body, and
    /// [`BodyFraming::CloseDelimited`] reads until the peer closes.
    ///
    /// The body owns the stream; chunked bodies use the default
    /// [`Limits`] (see [`from_stream_with_limits`](Self::from_stream_with_limits)).
    ///
    /// # Examples
    ///
    /// A body of `Content-Length: 5`, read off a client's connection:
    ///
    /// ```
    /// use ringstream::ringstream_core::h1::BodyFraming;
    /// use ringstream::{Incoming, Stream};
    /// use tokio::io::AsyncWriteExt;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let (mut client, server) = tokio::io::duplex(64);
    /// client.write_all(b"hello").await.unwrap();
    ///
    /// let mut body = Incoming::from_stream(Stream::new(server), BodyFraming::Length(5));
    /// assert_eq!(&body.read_all().await.unwrap()[..], b"hello");
    /// assert_eq!(body.received(), 5);
    ///
    /// // No framing, no body: nothing is read.
    /// let (_client, server) = tokio::io::duplex(64);
    /// let mut empty = Incoming::from_stream(Stream::new(server), BodyFraming::None);
    /// assert_eq!(empty.read_partial(10).await.unwrap(), None);
    /// # });
    /// ```
    pub fn from_stream<T>(stream: Stream<T>, framing: BodyFraming) -> Incoming
    where
        T: AsyncRead + AsyncWrite + Unpin + Send + Sync + 'static,
    {
        Incoming::from_stream_with_limits(stream, framing, Limits::DEFAULT)
    }

    /// Like [`from_stream`](Self::from_stream), with explicit limits for
    /// chunk extensions and trailers.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::ringstream_core::h1::BodyFraming;
    /// use ringstream::ringstream_core::Limits;
    /// use ringstream::{Incoming, Stream};
    /// use tokio::io::AsyncWriteExt;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let (mut client, server) = tokio::io::duplex(256);
    /// client.write_all(b"3;name=a-long-extension\r\nabc\r\n0\r\n\r\n").await.unwrap();
    ///
    /// // Chunk extensions of at most 8 bytes: this one is longer.
    /// let limits = Limits { max_chunk_ext_len: 8, ..Limits::DEFAULT };
    /// let mut body = Incoming::from_stream_with_limits(Stream::new(server), BodyFraming::Chunked, limits);
    /// assert!(body.read_all().await.is_err());
    /// # });
    /// ```
    pub fn from_stream_with_limits<T>(
        stream: Stream<T>,
        framing: BodyFraming,
        limits: Limits,
    ) -> Incoming
    where
        T: AsyncRead + AsyncWrite + Unpin + Send + Sync + 'static,
    {
        if framing.is_empty() {
            return Incoming::empty();
        }
        let decoder = Decoder::new(framing, limits);
        let source = BodyReader { stream, decoder };
        Incoming::with_kind(Kind::Direct(Box::new(source)), framing.length())
    }

    pub(crate) fn channel(shared: Arc<Shared>, length: Option<u64>) -> Incoming {
        Incoming::with_kind(Kind::Channel(shared), length)
    }

    /// Bytes of body data delivered so far.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::Incoming;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let mut body = Incoming::from_body(String::from("hello world"));
    /// assert_eq!(body.received(), 0);
    /// body.read_all().await.unwrap();
    /// assert_eq!(body.received(), 11);
    /// # });
    /// ```
    pub fn received(&self) -> u64 {
        self.received
    }

    /// The trailer fields, once the body has been read to its end (chunked
    /// bodies only). Reading with [`Body::poll_frame`] returns them as the
    /// last frame instead.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::ringstream_core::h1::BodyFraming;
    /// use ringstream::{Incoming, Stream};
    /// use tokio::io::AsyncWriteExt;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let (mut client, server) = tokio::io::duplex(256);
    /// client.write_all(b"2\r\nhi\r\n0\r\nChecksum: 1234\r\n\r\n").await.unwrap();
    ///
    /// let mut body = Incoming::from_stream(Stream::new(server), BodyFraming::Chunked);
    /// assert!(body.trailers().is_none());
    /// assert_eq!(&body.read_all().await.unwrap()[..], b"hi");
    /// assert_eq!(body.trailers().unwrap()["checksum"], "1234");
    /// # });
    /// ```
    pub fn trailers(&self) -> Option<&HeaderMap> {
        self.trailers.as_deref()
    }

    fn poll_pull(&mut self, cx: &mut Context<'_>) -> Poll<Result<BodyPiece, Error>> {
        if self.ended {
            return Poll::Ready(Ok(BodyPiece::End(None)));
        }
        let pulled = match &mut self.kind {
            Kind::Empty => BodyPiece::End(None),
            Kind::Channel(shared) => ready!(shared.poll_pull(cx))?,
            Kind::Direct(source) => ready!(source.poll_pull(cx))?,
        };
        match &pulled {
            BodyPiece::Data(data) => self.received += data.len() as u64,
            BodyPiece::End(_) => self.ended = true,
        }
        Poll::Ready(Ok(pulled))
    }

    /// Poll for the next piece of data, at most `max` bytes; `None` at the
    /// end of the body (trailers are kept for [`trailers`](Self::trailers)).
    fn poll_partial(
        &mut self,
        cx: &mut Context<'_>,
        max: usize,
    ) -> Poll<Result<Option<Bytes>, Error>> {
        if self.leftover.is_empty() {
            match ready!(self.poll_pull(cx))? {
                BodyPiece::Data(data) => self.leftover = data,
                BodyPiece::End(trailers) => {
                    if trailers.is_some() {
                        self.trailers = trailers.map(Box::new);
                    }
                    return Poll::Ready(Ok(None));
                }
            }
        }
        let n = max.min(self.leftover.len());
        Poll::Ready(Ok(Some(self.leftover.split_to(n))))
    }

    /// Up to `n` bytes of what has arrived, waiting only when nothing has;
    /// `None` at the end of the body.
    ///
    /// # Examples
    ///
    /// Half of a 10-byte body has arrived: it is returned without waiting
    /// for the rest.
    ///
    /// ```
    /// use ringstream::ringstream_core::h1::BodyFraming;
    /// use ringstream::{Incoming, Stream};
    /// use tokio::io::AsyncWriteExt;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let (mut client, server) = tokio::io::duplex(64);
    /// let mut body = Incoming::from_stream(Stream::new(server), BodyFraming::Length(10));
    /// client.write_all(b"hello").await.unwrap();
    /// assert_eq!(&body.read_partial(1024).await.unwrap().unwrap()[..], b"hello");
    ///
    /// client.write_all(b"world").await.unwrap();
    /// assert_eq!(&body.read_partial(3).await.unwrap().unwrap()[..], b"wor");
    /// assert_eq!(&body.read_partial(3).await.unwrap().unwrap()[..], b"ld");
    /// assert_eq!(body.read_partial(3).await.unwrap(), None);
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// A body cut short by the peer is an [`std::io::ErrorKind::UnexpectedEof`]
    /// error; a framing violation is [`std::io::ErrorKind::InvalidData`].
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: no data is taken before the future completes.
    pub async fn read_partial(&mut self, n: usize) -> Result<Option<Bytes>, Error> {
        if n == 0 {
            return Ok(Some(Bytes::new()));
        }
        poll_fn(|cx| self.poll_partial(cx, n)).await
    }

    /// `n` bytes, or fewer at the end of the body; `None` at the end with
    /// nothing left. Data that arrived in one piece is returned without a
    /// copy.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::ringstream_core::h1::BodyFraming;
    /// use ringstream::{Incoming, Stream};
    /// use tokio::io::AsyncWriteExt;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let (mut client, server) = tokio::io::duplex(64);
    /// let mut body = Incoming::from_stream(Stream::new(server), BodyFraming::Length(9));
    /// let sender = tokio::spawn(async move {
    ///     // Two writes: `read_up_to` waits for, and joins, both.
    ///     client.write_all(b"abc").await.unwrap();
    ///     tokio::task::yield_now().await;
    ///     client.write_all(b"defghi").await.unwrap();
    /// });
    /// assert_eq!(&body.read_up_to(6).await.unwrap().unwrap()[..], b"abcdef");
    /// // Fewer than asked for at the end of the body; then `None`.
    /// assert_eq!(&body.read_up_to(6).await.unwrap().unwrap()[..], b"ghi");
    /// assert_eq!(body.read_up_to(6).await.unwrap(), None);
    /// sender.await.unwrap();
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// As [`read_partial`](Self::read_partial).
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: data gathered before cancellation is lost when it
    /// spans several pieces.
    pub async fn read_up_to(&mut self, n: usize) -> Result<Option<Bytes>, Error> {
        let Some(first) = self.read_partial(n).await? else {
            return Ok(None);
        };
        if first.len() == n {
            return Ok(Some(first));
        }
        let mut out = bytes::BytesMut::with_capacity(n);
        out.extend_from_slice(&first);
        while out.len() < n {
            match self.read_partial(n - out.len()).await? {
                Some(more) => out.extend_from_slice(&more),
                None => break,
            }
        }
        Ok(Some(out.freeze()))
    }

    /// The rest of the body, at most [`READ_ALL_LIMIT`] (2 MiB) of it:
    /// [`read_all_limited`](Self::read_all_limited) with that limit. A
    /// service that buffers whole bodies this way cannot be made to hold
    /// more than that per request.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::error::Error;
    /// use ringstream::Incoming;
    /// use ringstream::body::READ_ALL_LIMIT;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let mut body = Incoming::from_body(String::from("name=ringstream"));
    /// assert_eq!(&body.read_all().await.unwrap()[..], b"name=ringstream");
    ///
    /// // Longer than the limit: an error (413), never a truncated body.
    /// let large = vec![b'x'; READ_ALL_LIMIT + 1];
    /// let mut large = Incoming::from_body(http_body_util::Full::new(bytes::Bytes::from(large)));
    /// let err = large.read_all().await.unwrap_err();
    /// assert!(matches!(err, Error::BodyTooLarge { .. }));
    /// assert_eq!(err.status(), Some(413));
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// As [`read_all_limited`](Self::read_all_limited).
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe.
    pub async fn read_all(&mut self) -> Result<Bytes, Error> {
        self.read_all_limited(READ_ALL_LIMIT).await
    }

    /// The rest of the body, if it is at most `limit` bytes long. Data that
    /// arrived in one piece is returned without a copy; several pieces are
    /// gathered into one buffer.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::{Error, Incoming, Stream};
    /// use ringstream::ringstream_core::h1::BodyFraming;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let wire: &[u8] = b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
    /// let body = |wire: &'static [u8]| {
    ///     let (mut client, server) = tokio::io::duplex(64);
    ///     tokio::spawn(async move {
    ///         tokio::io::AsyncWriteExt::write_all(&mut client, wire).await
    ///     });
    ///     Incoming::from_stream(Stream::new(server), BodyFraming::Chunked)
    /// };
    ///
    /// let mut exact = body(wire);
    /// assert_eq!(&exact.read_all_limited(11).await.unwrap()[..], b"hello world");
    ///
    /// // One byte over: an error, never the first 10 bytes.
    /// let err = body(wire).read_all_limited(10).await.unwrap_err();
    /// assert!(matches!(err, Error::BodyTooLarge { limit: 10 }));
    /// assert_eq!(err.status(), Some(413));
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::BodyTooLarge`] (status 413) when the body is longer than
    /// `limit`: at once, before reading, when its `Content-Length` says so,
    /// otherwise as soon as the data read goes past the limit. The body is
    /// then partly read and of no further use (drop it: the server reads
    /// and discards the rest, or closes the connection). Otherwise as
    /// [`read_partial`](Self::read_partial).
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe.
    pub async fn read_all_limited(&mut self, limit: usize) -> Result<Bytes, Error> {
        let too_large = Error::BodyTooLarge {
            limit: limit as u64,
        };
        let declared = self.size_hint().exact();
        if declared.is_some_and(|n| n > limit as u64) {
            return Err(too_large);
        }
        let mut pieces: VecDeque<Bytes> = VecDeque::new();
        let mut total = 0usize;
        while let Some(piece) = self.read_partial(usize::MAX).await? {
            total = total.saturating_add(piece.len());
            if total > limit {
                return Err(too_large);
            }
            pieces.push_back(piece);
        }
        if pieces.len() == 1 {
            return Ok(pieces.pop_front().unwrap_or_default());
        }
        let mut out = bytes::BytesMut::with_capacity(total);
        for piece in pieces {
            out.extend_from_slice(&piece);
        }
        Ok(out.freeze())
    }
}

impl Body for Incoming {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        let this = self.get_mut();
        if !this.leftover.is_empty() {
            return Poll::Ready(Some(Ok(Frame::data(std::mem::take(&mut this.leftover)))));
        }
        if let Some(trailers) = this.trailers.take() {
            return Poll::Ready(Some(Ok(Frame::trailers(*trailers))));
        }
        match ready!(this.poll_pull(cx)) {
            Ok(BodyPiece::Data(data)) => Poll::Ready(Some(Ok(Frame::data(data)))),
            Ok(BodyPiece::End(Some(trailers))) => Poll::Ready(Some(Ok(Frame::trailers(trailers)))),
            Ok(BodyPiece::End(None)) => Poll::Ready(None),
            Err(e) => Poll::Ready(Some(Err(e))),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.ended && self.leftover.is_empty() && self.trailers.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        match self.length {
            Some(n) => {
                SizeHint::with_exact(n.saturating_sub(self.received) + self.leftover.len() as u64)
            }
            None => SizeHint::default(),
        }
    }
}

impl Drop for Incoming {
    #[inline]
    fn drop(&mut self) {
        if let Kind::Channel(shared) = &self.kind {
            shared.body_dropped();
        }
    }
}
