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

use std::collections::VecDeque;
use std::fmt;
use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{ready, Context, Poll, Waker};

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue};
use http_body::{Body, Frame, SizeHint};
use ringstream_core::h1::{BodyFraming, Decoder};
use ringstream_core::Limits;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::error::Error;
use crate::stream::Stream;

/// A request body: data frames, then (for chunked bodies) a trailers frame.
///
/// `Incoming` implements [`http_body::Body`] with `Data = Bytes`, so it can be
/// handed to any code of the `http` ecosystem (axum extractors, hyper
/// clients, `http_body_util::BodyExt`), and it offers the reading methods of
/// [`Stream`]: [`read_partial`](Incoming::read_partial),
/// [`read_up_to`](Incoming::read_up_to) and [`read_all`](Incoming::read_all).
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

/// One step of body data pulled off a source.
pub(crate) enum Pulled {
    Data(Bytes),
    End(Option<HeaderMap>),
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

    /// A body read straight off `stream`, delimited by `framing`; a
    /// [`BodyFraming::None`] framing reads until the peer closes.
    ///
    /// The body owns the stream; chunked bodies use the default
    /// [`Limits`] (see [`from_stream_with_limits`](Self::from_stream_with_limits)).
    pub fn from_stream<T>(stream: Stream<T>, framing: BodyFraming) -> Incoming
    where
        T: AsyncRead + AsyncWrite + Unpin + Send + Sync + 'static,
    {
        Incoming::from_stream_with_limits(stream, framing, Limits::DEFAULT)
    }

    /// Like [`from_stream`](Self::from_stream), with explicit limits for
    /// chunk extensions and trailers.
    pub fn from_stream_with_limits<T>(
        stream: Stream<T>,
        framing: BodyFraming,
        limits: Limits,
    ) -> Incoming
    where
        T: AsyncRead + AsyncWrite + Unpin + Send + Sync + 'static,
    {
        let (decoder, length) = match framing {
            BodyFraming::None => (Decoder::eof(), None),
            BodyFraming::Length(n) => (Decoder::length(n), Some(n)),
            BodyFraming::Chunked => (Decoder::chunked(limits), None),
        };
        let source = BodyReader { stream, decoder };
        Incoming::with_kind(Kind::Direct(Box::new(source)), length)
    }

    pub(crate) fn channel(shared: Arc<Shared>, length: Option<u64>) -> Incoming {
        Incoming::with_kind(Kind::Channel(shared), length)
    }

    /// Bytes of body data delivered so far.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// The trailer fields, once the body has been read to its end (chunked
    /// bodies only). Reading with [`Body::poll_frame`] returns them as the
    /// last frame instead.
    pub fn trailers(&self) -> Option<&HeaderMap> {
        self.trailers.as_deref()
    }

    fn poll_pull(&mut self, cx: &mut Context<'_>) -> Poll<Result<Pulled, Error>> {
        if self.ended {
            return Poll::Ready(Ok(Pulled::End(None)));
        }
        let pulled = match &mut self.kind {
            Kind::Empty => Pulled::End(None),
            Kind::Channel(shared) => ready!(shared.poll_pull(cx))?,
            Kind::Direct(source) => ready!(source.poll_pull(cx))?,
        };
        match &pulled {
            Pulled::Data(data) => self.received += data.len() as u64,
            Pulled::End(_) => self.ended = true,
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
                Pulled::Data(data) => self.leftover = data,
                Pulled::End(trailers) => {
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
    /// # Errors
    ///
    /// A body cut short by the peer is an [`io::ErrorKind::UnexpectedEof`]
    /// error; a framing violation is [`io::ErrorKind::InvalidData`].
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

    /// The rest of the body.
    ///
    /// # Errors
    ///
    /// As [`read_partial`](Self::read_partial).
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe.
    pub async fn read_all(&mut self) -> Result<Bytes, Error> {
        let mut pieces: VecDeque<Bytes> = VecDeque::new();
        let mut total = 0usize;
        while let Some(piece) = self.read_partial(usize::MAX).await? {
            total += piece.len();
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
            Ok(Pulled::Data(data)) => Poll::Ready(Some(Ok(Frame::data(data)))),
            Ok(Pulled::End(Some(trailers))) => Poll::Ready(Some(Ok(Frame::trailers(trailers)))),
            Ok(Pulled::End(None)) => Poll::Ready(None),
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

/// Something a body can pull data from.
trait DirectSource: Send + Sync {
    fn poll_pull(&mut self, cx: &mut Context<'_>) -> Poll<Result<Pulled, Error>>;
}

/// A stream and the decoder for the body on it.
pub(crate) struct BodyReader<T> {
    pub(crate) stream: Stream<T>,
    pub(crate) decoder: Decoder,
}

impl<T> DirectSource for BodyReader<T>
where
    T: AsyncRead + AsyncWrite + Unpin + Send + Sync,
{
    fn poll_pull(&mut self, cx: &mut Context<'_>) -> Poll<Result<Pulled, Error>> {
        poll_body(&mut self.stream, &mut self.decoder, cx)
    }
}

/// Largest read, in bytes, that reading a long body asks of the transport
/// (a body's pieces are never larger than this or the stream's
/// `maximum_read_size`; shorter bodies use the stream's normal block).
pub const LARGE_BODY_READ: usize = 512 * 1024;

/// Pull the next piece of body data off `stream` through `decoder`.
///
/// Data is split off the stream's read block without a copy; framing bytes
/// are dropped. At the end of the body the trailers (if any) are returned.
pub(crate) fn poll_body<T>(
    stream: &mut Stream<T>,
    decoder: &mut Decoder,
    cx: &mut Context<'_>,
) -> Poll<Result<Pulled, Error>>
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    loop {
        if decoder.is_finished() {
            return Poll::Ready(Ok(Pulled::End(trailers_of(decoder)?)));
        }
        if !stream.buffered().is_empty() {
            let progress = decoder.decode(stream.buffered())?;
            if !progress.data.is_empty() {
                stream.consume(progress.data.start);
                let data = stream.split_buffered(progress.data.len());
                stream.consume(progress.consumed - progress.data.end);
                return Poll::Ready(Ok(Pulled::Data(data)));
            }
            stream.consume(progress.consumed);
            if progress.finished || decoder.is_finished() {
                return Poll::Ready(Ok(Pulled::End(trailers_of(decoder)?)));
            }
            if progress.consumed > 0 && !stream.buffered().is_empty() {
                continue;
            }
        }
        // A long body is read in larger pieces (fewer system calls and
        // wake-ups): when a known remainder is large, or when the last read
        // came back full (the peer is sending faster than we read).
        let left = decoder.remaining_hint().unwrap_or(0);
        let want = if stream.last_read_full() {
            LARGE_BODY_READ
        } else {
            left.min(LARGE_BODY_READ as u64) as usize
        };
        if ready!(stream.poll_fill_to(cx, want))? == 0 {
            decoder.finish_eof()?;
            return Poll::Ready(Ok(Pulled::End(trailers_of(decoder)?)));
        }
    }
}

fn trailers_of(decoder: &Decoder) -> Result<Option<HeaderMap>, Error> {
    let mut map: Option<HeaderMap> = None;
    for (name, value) in decoder.trailers() {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| Error::Protocol(ringstream_core::Error::InvalidTrailer))?;
        let value = HeaderValue::from_bytes(value)
            .map_err(|_| Error::Protocol(ringstream_core::Error::InvalidTrailer))?;
        map.get_or_insert_with(HeaderMap::new).append(name, value);
    }
    Ok(map)
}

/// The hand-over slot between a server connection (which owns the stream)
/// and the request's [`Incoming`] (owned by the service).
///
/// It holds at most one piece of data: the connection reads the stream only
/// when the body asks for more, so a body nobody reads costs nothing and
/// memory is bounded by one read block.
#[derive(Default)]
pub(crate) struct Shared {
    state: Mutex<Slot>,
}

#[derive(Default)]
struct Slot {
    item: Option<Result<Pulled, Error>>,
    /// The body is waiting for data.
    wanted: bool,
    /// The body was dropped: nobody will read any more.
    dropped: bool,
    /// The end of the body, or an error, was handed over.
    finished: bool,
    body_waker: Option<Waker>,
    conn_waker: Option<Waker>,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Slot> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn poll_pull(&self, cx: &mut Context<'_>) -> Poll<Result<Pulled, Error>> {
        let mut slot = self.lock();
        if let Some(item) = slot.item.take() {
            slot.wanted = false;
            return Poll::Ready(item);
        }
        slot.wanted = true;
        if !slot
            .body_waker
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            slot.body_waker = Some(cx.waker().clone());
        }
        let conn = slot.conn_waker.take();
        drop(slot);
        if let Some(w) = conn {
            w.wake();
        }
        Poll::Pending
    }

    /// Whether the body is waiting for data (and the slot is free). Registers
    /// the connection's waker to hear when that changes.
    pub(crate) fn poll_wanted(&self, cx: &mut Context<'_>) -> bool {
        let mut slot = self.lock();
        if slot.wanted && slot.item.is_none() && !slot.dropped {
            return true;
        }
        if !slot
            .conn_waker
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            slot.conn_waker = Some(cx.waker().clone());
        }
        false
    }

    /// Whether the body has been dropped.
    pub(crate) fn is_dropped(&self) -> bool {
        self.lock().dropped
    }

    /// Hand a piece of data (or the end, or an error) to the body, from the
    /// task polling `cx`. The body's task is woken unless it is that same
    /// task: the connection polls the body again right after handing data
    /// over, so waking itself would only schedule a redundant poll.
    pub(crate) fn put_from(&self, item: Result<Pulled, Error>, cx: &Context<'_>) {
        self.hand_over(item, Some(cx));
    }

    /// Hand a piece of data (or the end, or an error) to the body.
    pub(crate) fn put(&self, item: Result<Pulled, Error>) {
        self.hand_over(item, None);
    }

    fn hand_over(&self, item: Result<Pulled, Error>, cx: Option<&Context<'_>>) {
        let mut slot = self.lock();
        if slot.finished {
            return;
        }
        slot.finished = !matches!(item, Ok(Pulled::Data(_)));
        slot.item = Some(item);
        slot.wanted = false;
        let waker = slot.body_waker.take();
        drop(slot);
        if let Some(w) = waker {
            if !cx.is_some_and(|cx| w.will_wake(cx.waker())) {
                w.wake();
            }
        }
    }

    fn body_dropped(&self) {
        let mut slot = self.lock();
        slot.dropped = true;
        slot.item = None;
        let waker = slot.conn_waker.take();
        drop(slot);
        if let Some(w) = waker {
            w.wake();
        }
    }
}

/// The connection's end of a [`Shared`] slot. Dropping it before the end of
/// the body was handed over (the connection failed or closed) gives the body
/// an error instead of leaving its reader waiting forever.
pub(crate) struct BodySender {
    pub(crate) shared: Arc<Shared>,
}

impl Drop for BodySender {
    fn drop(&mut self) {
        let closed = io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "connection closed before the end of the body",
        );
        self.shared.put(Err(Error::Io(closed)));
    }
}

impl Drop for Incoming {
    fn drop(&mut self) {
        if let Kind::Channel(shared) = &self.kind {
            shared.body_dropped();
        }
    }
}
