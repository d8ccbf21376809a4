//! The [`Responder`]: the response side of one exchange (its request-body
//! side is in `body.rs`).
//!
//! # The transmit buffer
//!
//! The response head is written by the core into the transmit buffer.
//! Body bytes follow it, copied or formatted straight into the buffer,
//! after a gap as long as the longest chunk-size line the buffer could
//! need. When the buffer is half full (or the body ends) the pending bytes
//! are sealed — the core's [`Encoder`] frames them, its chunk-size line
//! copied into the end of the gap and its CRLF after the data — and sent in
//! one write. A head still in the buffer is moved up to meet the
//! chunk-size line (a few dozen bytes, once per response), so a chunk goes
//! out in one piece.
//!
//! A `write!` formats into the free half of the buffer, so every formatter
//! runs exactly once: nothing is measured first and nothing is formatted
//! again when the buffer fills. The price is a bound: one `write!` may
//! produce as much as the buffer has room for, which is always at least
//! half of it (less two bytes); larger output is
//! written with [`Responder::write_all`], which has no bound (and writes a
//! piece as large as the buffer from where it lies, without copying it
//! into the buffer).
//!
//! # In place
//!
//! Over a connection that lends its own transmit buffer
//! ([`WriteInPlace`](crate::WriteInPlace), served by
//! [`serve_connection_in_place`](super::serve_connection_in_place)), body
//! bytes skip the transmit buffer above: `write!` formats straight into the
//! connection's free transmit space. A chunk is built there across
//! `write!`s, behind a chunk-size line reserved at its start and padded
//! with leading zeros (its size is known only when it is sent), and sent
//! when the free space is full or the response flushes or ends; the output
//! of a `write!` that overflows the free space goes to the transmit buffer
//! above as the next chunk, and is copied once. Only the head, those
//! overflows and a few framing bytes are copied: [`Responder::copied`]
//! counts them.

use core::fmt;

use embassy_time::with_timeout;
use embedded_io_async::{Read, Write};
use ringstream_core::h1::CRLF;
use ringstream_core::h1::{BodyState, ChunkedEncoder, Decoder, Encoder, Exchange, ResponseHead};
use ringstream_core::SliceBuf;

mod in_place;

use super::Error;
use crate::in_place::PollInPlace;
use crate::Config;

/// Proof that a response was written to its end: only
/// [`Responder::finish`] and [`Responder::send`] make one, and
/// [`App::handle`](super::App::handle) returns it.
///
/// # Examples
///
/// ```
/// use ringstream_embedded::embedded_io_async::{Read, Write};
/// use ringstream_embedded::http::{serve_connection, App, Buffers, Error, Request, Responder, Sent};
/// use ringstream_embedded::Config;
/// # use core::convert::Infallible;
/// # use ringstream_embedded::embedded_io_async::ErrorType;
/// # /// A connection that was given `input` and keeps what is written to it.
/// # struct Wire<'a> { input: &'a [u8], output: [u8; 1024], written: usize }
/// # fn wire(input: &[u8]) -> Wire<'_> { Wire { input, output: [0; 1024], written: 0 } }
/// # impl Wire<'_> { fn sent(&self) -> &[u8] { &self.output[..self.written] } }
/// # impl ErrorType for Wire<'_> { type Error = Infallible; }
/// # impl Read for Wire<'_> {
/// #     async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
/// #         let n = buf.len().min(self.input.len());
/// #         buf[..n].copy_from_slice(&self.input[..n]);
/// #         self.input = &self.input[n..];
/// #         Ok(n)
/// #     }
/// # }
/// # impl Write for Wire<'_> {
/// #     async fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
/// #         let n = buf.len().min(self.output.len() - self.written);
/// #         self.output[self.written..self.written + n].copy_from_slice(&buf[..n]);
/// #         self.written += n;
/// #         Ok(n)
/// #     }
/// #     async fn flush(&mut self) -> Result<(), Infallible> { Ok(()) }
/// # }
/// # /// This connection never waits: poll the future to its end.
/// # fn block_on<F: core::future::Future>(f: F) -> F::Output {
/// #     let mut f = core::pin::pin!(f);
/// #     let mut cx = core::task::Context::from_waker(std::task::Waker::noop());
/// #     loop {
/// #         if let core::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; }
/// #     }
/// # }
///
/// struct NoContent;
///
/// impl App for NoContent {
///     async fn handle<IO: Read + Write>(
///         &self,
///         _request: &Request<'_>,
///         responder: &mut Responder<'_, IO>,
///     ) -> Result<Sent, Error<IO::Error>> {
///         // Writing a whole response is the only way to get a `Sent`.
///         responder.send(204, &[], b"").await
///     }
/// }
///
/// // `wire` makes an in-memory connection, as in `serve_connection`'s example.
/// let mut io = wire(b"GET / HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n");
/// let mut buffers = Buffers::<1024, 512>::new();
/// block_on(serve_connection(&mut io, &NoContent, &mut buffers, &Config::DEFAULT)).unwrap();
/// assert!(io.sent().starts_with(b"HTTP/1.1 204 No Content\r\n"));
/// ```
#[derive(Debug)]
pub struct Sent(());

/// Where the response stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// No head written yet.
    Head,
    /// The head is written; body bytes may follow. `discard`: the
    /// response has no body (`HEAD`, `204`, `304`, or one the server
    /// answered itself) and body bytes are dropped.
    Body { encoder: Encoder, discard: bool },
    /// The response is complete.
    Done,
}

/// Reads the request body and writes the response of one exchange.
///
/// The handler gets one for each request from
/// [`serve_connection`](super::serve_connection). It reads the body with
/// [`read_body`](Self::read_body) or [`body_chunk`](Self::body_chunk) (in
/// pieces, through the receive buffer, however large the body) and answers
/// with [`send`](Self::send) (a whole body of known length) or with
/// [`start`](Self::start), any number of [`write_all`](Self::write_all) and
/// `write!` calls, and [`finish`](Self::finish). Reading and writing may
/// interleave (an echo reads a piece and writes it back).
///
/// The connection's rules are the core's: [`Exchange`] says when `100
/// Continue` is due, how the response is framed (`Content-Length`, chunked
/// when the length is unknown, nothing on `HEAD`) and whether the
/// connection stays open.
///
/// # Examples
///
/// An echo: each piece of the request body, taken in place in the receive
/// buffer, is written back before the next is read; the response has the
/// request's length, or is chunked when the request was.
///
/// ```
/// use ringstream_embedded::embedded_io_async::{Read, Write};
/// use ringstream_embedded::http::{App, Error, Request, Responder, Sent};
///
/// struct Echo;
///
/// impl App for Echo {
///     async fn handle<IO: Read + Write>(
///         &self,
///         request: &Request<'_>,
///         responder: &mut Responder<'_, IO>,
///     ) -> Result<Sent, Error<IO::Error>> {
///         let mut piece = [0u8; 128];
///         // Read first: a client waiting for `100 Continue` is invited.
///         let mut n = responder.read_body(&mut piece).await?;
///         responder.start(200, &[], request.content_length()).await?;
///         while n > 0 {
///             responder.write_all(&piece[..n]).await?;
///             n = responder.read_body(&mut piece).await?;
///         }
///         responder.finish().await
///     }
/// }
/// ```
pub struct Responder<'c, IO: Read + Write> {
    pub(super) io: &'c mut IO,
    pub(super) config: &'c Config,
    pub(super) exchange: Exchange,
    // ---- request body (body.rs) ----
    /// The receive buffer after the request head.
    pub(super) rx: &'c mut [u8],
    /// Received bytes not yet given to the decoder: `rx[start..end]`.
    pub(super) start: usize,
    pub(super) end: usize,
    /// Body data decoded and not yet handed out: `rx[pending]`.
    pub(super) pending: core::ops::Range<usize>,
    pub(super) decoder: Decoder,
    /// The body was read to its end.
    pub(super) body_done: bool,
    /// The handler asked for the body.
    pub(super) body_wanted: bool,
    /// The client closed its side.
    pub(super) eof: bool,
    // ---- response ----
    pub(super) tx: &'c mut [u8],
    /// Bytes ready to send: `tx[out_start..committed]`.
    out_start: usize,
    committed: usize,
    /// Body data not yet framed: `tx[data_start..fill]`, after a gap for
    /// the chunk-size line.
    data_start: usize,
    fill: usize,
    /// Length of the gap: the longest chunk-size line for this buffer.
    gap: usize,
    state: State,
    /// The connection's own transmit space, when it lends it.
    in_place: Option<PollInPlace<IO>>,
    /// A chunk written in place and not sent yet. While there is one, the
    /// transmit buffer is empty and nothing else is written to the
    /// connection.
    open: Option<Open>,
    /// Bytes copied on their way out, for [`copied`](Self::copied).
    copied: usize,
}

/// A chunk being built in the connection's free transmit space: `len`
/// bytes written from address `at` — `lead` bytes that were ready before
/// it (a head), then `prefix` bytes kept for its size line, then its data;
/// at most `cap` bytes in all (what the size line can count).
#[derive(Debug, Clone, Copy)]
struct Open {
    at: usize,
    len: usize,
    lead: usize,
    prefix: usize,
    cap: usize,
}

/// Body output to write in place.
enum Output<'a, 'f> {
    /// A `write!`: formatted once, its overflow into the transmit buffer.
    Fmt(fmt::Arguments<'f>),
    /// Bytes, as many as there is room for.
    Bytes(&'a [u8]),
    /// Nothing: send the open chunk.
    Seal,
}

/// What one in-place write did.
#[derive(Debug, Clone, Copy, Default)]
struct Filled {
    /// The free space was too small to start a chunk in; nothing was done.
    too_small: bool,
    /// Bytes of [`Output::Bytes`] taken.
    taken: usize,
    /// Bytes of [`Output::Fmt`] that overflowed into the transmit buffer.
    spilled: usize,
}

/// Why an in-place write failed.
enum FillError {
    Response(ringstream_core::Error),
    Format,
    /// The connection lent free space without the bytes kept in it.
    Lost,
}

/// The fewest data bytes worth starting a chunk in place for.
const MIN_IN_PLACE: usize = 32;

impl<'c, IO: Read + Write> Responder<'c, IO> {
    /// A responder for the exchange `exchange`, with `received` bytes
    /// already in `rx` (the start of the body, or pipelined requests).
    pub(super) fn new(
        io: &'c mut IO,
        config: &'c Config,
        exchange: Exchange,
        rx: &'c mut [u8],
        received: usize,
        tx: &'c mut [u8],
        in_place: Option<PollInPlace<IO>>,
    ) -> Self {
        let decoder = exchange.decoder(config.limits);
        let gap = ChunkedEncoder::new()
            .chunk_prefix(tx.len() as u64)
            .map_or(0, |p| p.len());
        Responder {
            io,
            config,
            body_done: decoder.is_finished(),
            decoder,
            exchange,
            rx,
            start: 0,
            end: received,
            pending: 0..0,
            body_wanted: false,
            eof: false,
            tx,
            out_start: 0,
            committed: 0,
            data_start: gap,
            fill: gap,
            gap,
            state: State::Head,
            in_place,
            open: None,
            copied: 0,
        }
    }

    /// Bytes of this response the server has copied on their way out so
    /// far: from its transmit buffer into the connection (the head, body
    /// bytes, framing), from the slices given to
    /// [`write_all`](Self::write_all), and within its buffers. Bytes that
    /// `write!` formatted straight into the connection's own transmit
    /// space ([`WriteInPlace`](crate::WriteInPlace)) are not among them;
    /// nor are the copies the connection makes itself, into its packets.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ringstream_embedded::embedded_io_async::{Read, Write};
    /// # use ringstream_embedded::http::{App, Error, Request, Responder, Sent};
    /// struct Counted;
    ///
    /// impl App for Counted {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         _request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         responder.start(200, &[], None).await?;
    ///         write!(responder, "{}", 42).await?;
    ///         let sent = responder.finish().await?;
    ///         // Over a connection that lends its transmit buffer, the
    ///         // head and the framing; over any other, every byte once.
    ///         assert!(responder.copied() > 0);
    ///         Ok(sent)
    ///     }
    /// }
    /// ```
    pub fn copied(&self) -> usize {
        self.copied
    }

    /// Whether the response head has been written.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{serve_connection, App, Buffers, Error, Request, Responder, Sent};
    /// use ringstream_embedded::Config;
    /// # use core::convert::Infallible;
    /// # use ringstream_embedded::embedded_io_async::ErrorType;
    /// # /// A connection that was given `input` and keeps what is written to it.
    /// # struct Wire<'a> { input: &'a [u8], output: [u8; 1024], written: usize }
    /// # fn wire(input: &[u8]) -> Wire<'_> { Wire { input, output: [0; 1024], written: 0 } }
    /// # impl Wire<'_> { fn sent(&self) -> &[u8] { &self.output[..self.written] } }
    /// # impl ErrorType for Wire<'_> { type Error = Infallible; }
    /// # impl Read for Wire<'_> {
    /// #     async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
    /// #         let n = buf.len().min(self.input.len());
    /// #         buf[..n].copy_from_slice(&self.input[..n]);
    /// #         self.input = &self.input[n..];
    /// #         Ok(n)
    /// #     }
    /// # }
    /// # impl Write for Wire<'_> {
    /// #     async fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
    /// #         let n = buf.len().min(self.output.len() - self.written);
    /// #         self.output[self.written..self.written + n].copy_from_slice(&buf[..n]);
    /// #         self.written += n;
    /// #         Ok(n)
    /// #     }
    /// #     async fn flush(&mut self) -> Result<(), Infallible> { Ok(()) }
    /// # }
    /// # /// This connection never waits: poll the future to its end.
    /// # fn block_on<F: core::future::Future>(f: F) -> F::Output {
    /// #     let mut f = core::pin::pin!(f);
    /// #     let mut cx = core::task::Context::from_waker(std::task::Waker::noop());
    /// #     loop {
    /// #         if let core::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; }
    /// #     }
    /// # }
    ///
    /// struct Once;
    ///
    /// impl App for Once {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         _request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         assert!(!responder.is_started());
    ///         responder.start(200, &[], Some(2)).await?;
    ///         assert!(responder.is_started());
    ///         responder.write_all(b"ok").await?;
    ///         responder.finish().await
    ///     }
    /// }
    ///
    /// // `wire` makes an in-memory connection, as in `serve_connection`'s example.
    /// let mut io = wire(b"GET / HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n");
    /// let mut buffers = Buffers::<1024, 512>::new();
    /// block_on(serve_connection(&mut io, &Once, &mut buffers, &Config::DEFAULT)).unwrap();
    /// assert!(io.sent().ends_with(b"\r\n\r\nok"));
    /// ```
    pub fn is_started(&self) -> bool {
        self.state != State::Head
    }

    /// Writes a whole response: `status`, `fields` and `body`, with
    /// `content-length` (on `HEAD`, the head alone).
    ///
    /// `fields` are `(name, value)` pairs; the core writes the framing and
    /// `Connection` fields itself and skips any among `fields`.
    ///
    /// # Examples
    ///
    /// See [`App`](super::App).
    ///
    /// # Errors
    ///
    /// Those of [`start`](Self::start), [`write_all`](Self::write_all) and
    /// [`finish`](Self::finish).
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: dropped midway, the response is cut off (the
    /// server drops it only with the whole connection).
    pub async fn send(
        &mut self,
        status: u16,
        fields: &[(&str, &[u8])],
        body: &[u8],
    ) -> Result<Sent, Error<IO::Error>> {
        self.start(status, fields, Some(body.len() as u64)).await?;
        self.write_all(body).await?;
        self.finish().await
    }

    /// Writes the response head: `status`, `fields`, and the framing the
    /// core decides from `length` — `content-length` when it is known,
    /// chunked when it is `None` (close-delimited for an HTTP/1.0 client),
    /// no body for `HEAD`, `204` or `304`.
    ///
    /// The head goes into the transmit buffer and leaves with the first
    /// body bytes. A client waiting for `100 Continue` is invited first if
    /// the handler has asked for the body; if not, it is never invited
    /// and the connection closes after the response.
    ///
    /// # Examples
    ///
    /// A body of unknown length, sent chunked:
    ///
    /// ```
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{serve_connection, App, Buffers, Error, Request, Responder, Sent};
    /// use ringstream_embedded::Config;
    /// # use core::convert::Infallible;
    /// # use ringstream_embedded::embedded_io_async::ErrorType;
    /// # /// A connection that was given `input` and keeps what is written to it.
    /// # struct Wire<'a> { input: &'a [u8], output: [u8; 1024], written: usize }
    /// # fn wire(input: &[u8]) -> Wire<'_> { Wire { input, output: [0; 1024], written: 0 } }
    /// # impl Wire<'_> { fn sent(&self) -> &[u8] { &self.output[..self.written] } }
    /// # impl ErrorType for Wire<'_> { type Error = Infallible; }
    /// # impl Read for Wire<'_> {
    /// #     async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
    /// #         let n = buf.len().min(self.input.len());
    /// #         buf[..n].copy_from_slice(&self.input[..n]);
    /// #         self.input = &self.input[n..];
    /// #         Ok(n)
    /// #     }
    /// # }
    /// # impl Write for Wire<'_> {
    /// #     async fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
    /// #         let n = buf.len().min(self.output.len() - self.written);
    /// #         self.output[self.written..self.written + n].copy_from_slice(&buf[..n]);
    /// #         self.written += n;
    /// #         Ok(n)
    /// #     }
    /// #     async fn flush(&mut self) -> Result<(), Infallible> { Ok(()) }
    /// # }
    /// # /// This connection never waits: poll the future to its end.
    /// # fn block_on<F: core::future::Future>(f: F) -> F::Output {
    /// #     let mut f = core::pin::pin!(f);
    /// #     let mut cx = core::task::Context::from_waker(std::task::Waker::noop());
    /// #     loop {
    /// #         if let core::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; }
    /// #     }
    /// # }
    ///
    /// struct Greeting;
    ///
    /// impl App for Greeting {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         _request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         responder.start(200, &[("content-type", &b"text/plain"[..])], None).await?;
    ///         responder.write_all(b"hello, ").await?;
    ///         responder.write_all(b"world").await?;
    ///         responder.finish().await
    ///     }
    /// }
    ///
    /// // `wire` makes an in-memory connection, as in `serve_connection`'s example.
    /// let mut io = wire(b"GET / HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n");
    /// let mut buffers = Buffers::<1024, 512>::new();
    /// block_on(serve_connection(&mut io, &Greeting, &mut buffers, &Config::DEFAULT)).unwrap();
    /// let sent = core::str::from_utf8(io.sent()).unwrap();
    /// assert!(sent.contains("\r\ntransfer-encoding: chunked\r\n"));
    /// assert!(sent.ends_with("\r\n0\r\n\r\n"));
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Misuse`] for a second head; [`Error::Response`] for a field
    /// the core refuses or a head that does not fit in an empty transmit
    /// buffer ([`OutOfSpace`](ringstream_core::Error::OutOfSpace)); an
    /// I/O error or [`Error::TimedOut`] when sending what the buffer held.
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe (see [`send`](Self::send)).
    pub async fn start(
        &mut self,
        status: u16,
        fields: &[(&str, &[u8])],
        length: Option<u64>,
    ) -> Result<(), Error<IO::Error>> {
        self.start_with(status, fields.iter().copied(), length)
            .await
    }

    /// [`start`](Self::start) with the fields given by an iterator, so a
    /// caller can join field lists without a buffer (a static asset's own
    /// fields and the application's); it is walked again when the head is
    /// written a second time into an emptied buffer.
    pub(crate) async fn start_with<'f, F>(
        &mut self,
        status: u16,
        fields: F,
        length: Option<u64>,
    ) -> Result<(), Error<IO::Error>>
    where
        F: Iterator<Item = (&'f str, &'f [u8])> + Clone,
    {
        if self.state != State::Head {
            return Err(Error::Misuse);
        }
        let body = if self.body_done {
            BodyState::Complete
        } else {
            BodyState::Unread {
                held: self.body_wanted,
                remaining: self.decoder.remaining_hint(),
            }
        };
        if let Some(invitation) = self
            .exchange
            .continue_before_head(body, self.config.drain_limit)
        {
            self.put(invitation)?;
        }
        // `OPTIONS *` that the application does not know: the server
        // answers for it (RFC 9110 §9.3.7), as the core says.
        let answered_here = self.exchange.answers_for_service(status);
        let (status, length) = if answered_here {
            (200, Some(0))
        } else {
            (status, length)
        };
        let head = ResponseHead::new(status);
        let encoder = loop {
            let fields = fields
                .clone()
                .filter(|_| !answered_here)
                .map(|(n, v)| (n.as_bytes(), v));
            let room = self.tx.get_mut(self.committed..).unwrap_or_default();
            let mut out = SliceBuf::new(room);
            match self.exchange.write_head(&mut out, &head, fields, length) {
                Ok(encoder) => {
                    self.committed += out.len();
                    break encoder;
                }
                Err(ringstream_core::Error::OutOfSpace) if self.committed > 0 => {
                    self.send_committed().await?;
                }
                Err(e) => return Err(Error::Response(e)),
            }
        };
        self.data_start = self.committed + self.gap;
        self.fill = self.data_start;
        self.state = State::Body {
            encoder,
            discard: answered_here || !encoder.sends_body(),
        };
        Ok(())
    }

    /// Writes body bytes, any length; on a response without a body
    /// (`HEAD`) they are dropped.
    ///
    /// Bytes fewer than the transmit buffer holds are copied into it and
    /// sent as it fills, coalesced with what is around them. A piece at
    /// least as large as the buffer is not copied there: what the buffer
    /// holds is sent, then the core's framing for the piece (a chunk-size
    /// line, or nothing), then the piece itself, from where it lies — a
    /// page in flash goes to the connection in one write.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{serve_connection, App, Buffers, Error, Request, Responder, Sent};
    /// use ringstream_embedded::Config;
    /// # use core::convert::Infallible;
    /// # use ringstream_embedded::embedded_io_async::ErrorType;
    /// # /// A connection that was given `input` and keeps what is written to it.
    /// # struct Wire<'a> { input: &'a [u8], output: [u8; 1024], written: usize }
    /// # fn wire(input: &[u8]) -> Wire<'_> { Wire { input, output: [0; 1024], written: 0 } }
    /// # impl Wire<'_> { fn sent(&self) -> &[u8] { &self.output[..self.written] } }
    /// # impl ErrorType for Wire<'_> { type Error = Infallible; }
    /// # impl Read for Wire<'_> {
    /// #     async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
    /// #         let n = buf.len().min(self.input.len());
    /// #         buf[..n].copy_from_slice(&self.input[..n]);
    /// #         self.input = &self.input[n..];
    /// #         Ok(n)
    /// #     }
    /// # }
    /// # impl Write for Wire<'_> {
    /// #     async fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
    /// #         let n = buf.len().min(self.output.len() - self.written);
    /// #         self.output[self.written..self.written + n].copy_from_slice(&buf[..n]);
    /// #         self.written += n;
    /// #         Ok(n)
    /// #     }
    /// #     async fn flush(&mut self) -> Result<(), Infallible> { Ok(()) }
    /// # }
    /// # /// This connection never waits: poll the future to its end.
    /// # fn block_on<F: core::future::Future>(f: F) -> F::Output {
    /// #     let mut f = core::pin::pin!(f);
    /// #     let mut cx = core::task::Context::from_waker(std::task::Waker::noop());
    /// #     loop {
    /// #         if let core::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; }
    /// #     }
    /// # }
    ///
    /// struct Hello;
    ///
    /// impl App for Hello {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         _request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         responder.start(200, &[], Some(11)).await?;
    ///         responder.write_all(b"hello").await?;
    ///         responder.write_all(b" world").await?;
    ///         responder.finish().await
    ///     }
    /// }
    ///
    /// // `wire` makes an in-memory connection, as in `serve_connection`'s example.
    /// let mut io = wire(b"GET / HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n");
    /// let mut buffers = Buffers::<1024, 512>::new();
    /// block_on(serve_connection(&mut io, &Hello, &mut buffers, &Config::DEFAULT)).unwrap();
    /// assert_eq!(
    ///     io.sent(),
    ///     b"HTTP/1.1 200 OK\r\ncontent-length: 11\r\nconnection: close\r\n\r\nhello world"
    /// );
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Misuse`] before [`start`](Self::start) or after
    /// [`finish`](Self::finish); [`Error::Response`] with
    /// [`BodyOverflow`](ringstream_core::Error::BodyOverflow) for more
    /// bytes than the `content-length`; an I/O error or
    /// [`Error::TimedOut`] when sending.
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe (see [`send`](Self::send)).
    pub async fn write_all(&mut self, mut data: &[u8]) -> Result<(), Error<IO::Error>> {
        if self.discards()? {
            return Ok(());
        }
        if let Some(poll) = self.in_place {
            while !data.is_empty() {
                let filled = self.fill_in_place(poll, Output::Bytes(data)).await?;
                let taken = if filled.too_small {
                    // Too little contiguous room (the end of a ring): this
                    // piece goes through the transmit buffer.
                    self.flush_body().await?;
                    let n = data.len().min(self.tx.len() - CRLF.len() - self.fill);
                    self.buffer(data.get(..n).unwrap_or_default());
                    self.flush_body().await?;
                    n
                } else {
                    filled.taken
                };
                data = data.get(taken..).unwrap_or_default();
            }
            return Ok(());
        }
        if data.len() >= self.tx.len() {
            return self.write_through(data).await;
        }
        while !data.is_empty() {
            let limit = self.tx.len() - CRLF.len();
            if self.fill >= limit {
                self.flush_body().await?;
            }
            let n = data.len().min(limit - self.fill);
            let (now, rest) = data.split_at(n);
            self.buffer(now);
            data = rest;
        }
        Ok(())
    }

    /// Copies body bytes into the transmit buffer, where they wait to be
    /// framed; the caller made room for them.
    fn buffer(&mut self, data: &[u8]) {
        if let Some(dst) = self.tx.get_mut(self.fill..self.fill + data.len()) {
            dst.copy_from_slice(data);
            self.fill += data.len();
            self.copied += data.len();
        }
    }

    /// Formats body text straight into the transmit buffer: the target of
    /// `write!(responder, ...).await`.
    ///
    /// The formatter runs exactly once, into the free half of the buffer
    /// (the buffer is sent first when it is half full); it never runs on a
    /// response without a body.
    ///
    /// # Examples
    ///
    /// See [`App`](super::App).
    ///
    /// # Errors
    ///
    /// [`Error::Format`] if one `write!` produces more than the room the
    /// transmit buffer has left — always at least half of it, less two
    /// bytes, so output up to that size never fails — or a `Display`
    /// implementation fails: the response cannot go on. Otherwise those of
    /// [`write_all`](Self::write_all).
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe (see [`send`](Self::send)).
    pub async fn write_fmt(&mut self, args: fmt::Arguments<'_>) -> Result<(), Error<IO::Error>> {
        if self.discards()? {
            return Ok(());
        }
        if let Some(poll) = self.in_place {
            if !self.fill_in_place(poll, Output::Fmt(args)).await?.too_small {
                return Ok(());
            }
            // Too little contiguous room to start a chunk in: formatted
            // into the transmit buffer instead.
        }
        if self.fill > self.tx.len() / 2 {
            self.flush_body().await?;
        }
        let limit = self.tx.len() - CRLF.len();
        let room = self.tx.get_mut(self.fill..limit).unwrap_or_default();
        let mut out = SliceBuf::new(room);
        let formatted = fmt::write(&mut out, args);
        self.fill += out.len();
        formatted.map_err(|fmt::Error| Error::Format)
    }

    /// Sends at once what the response holds so far (a chunk of the body
    /// written, the head), instead of waiting for the transmit buffer to
    /// fill: a server-sent event leaves as soon as it is written.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{serve_connection, App, Buffers, Error, Request, Responder, Sent};
    /// use ringstream_embedded::Config;
    /// # use core::convert::Infallible;
    /// # use ringstream_embedded::embedded_io_async::ErrorType;
    /// # /// A connection that was given `input` and keeps what is written to it.
    /// # struct Wire<'a> { input: &'a [u8], output: [u8; 1024], written: usize }
    /// # fn wire(input: &[u8]) -> Wire<'_> { Wire { input, output: [0; 1024], written: 0 } }
    /// # impl Wire<'_> { fn sent(&self) -> &[u8] { &self.output[..self.written] } }
    /// # impl ErrorType for Wire<'_> { type Error = Infallible; }
    /// # impl Read for Wire<'_> {
    /// #     async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
    /// #         let n = buf.len().min(self.input.len());
    /// #         buf[..n].copy_from_slice(&self.input[..n]);
    /// #         self.input = &self.input[n..];
    /// #         Ok(n)
    /// #     }
    /// # }
    /// # impl Write for Wire<'_> {
    /// #     async fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
    /// #         let n = buf.len().min(self.output.len() - self.written);
    /// #         self.output[self.written..self.written + n].copy_from_slice(&buf[..n]);
    /// #         self.written += n;
    /// #         Ok(n)
    /// #     }
    /// #     async fn flush(&mut self) -> Result<(), Infallible> { Ok(()) }
    /// # }
    /// # /// This connection never waits: poll the future to its end.
    /// # fn block_on<F: core::future::Future>(f: F) -> F::Output {
    /// #     let mut f = core::pin::pin!(f);
    /// #     let mut cx = core::task::Context::from_waker(std::task::Waker::noop());
    /// #     loop {
    /// #         if let core::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; }
    /// #     }
    /// # }
    ///
    /// struct Progress;
    ///
    /// impl App for Progress {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         _request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         responder.start(200, &[], None).await?;
    ///         responder.write_all(b"step 1\n").await?;
    ///         // Sent now, while step 2 runs.
    ///         responder.flush().await?;
    ///         responder.write_all(b"step 2\n").await?;
    ///         responder.finish().await
    ///     }
    /// }
    ///
    /// // `wire` makes an in-memory connection, as in `serve_connection`'s example.
    /// let mut io = wire(b"GET / HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n");
    /// let mut buffers = Buffers::<1024, 512>::new();
    /// block_on(serve_connection(&mut io, &Progress, &mut buffers, &Config::DEFAULT)).unwrap();
    /// assert!(io.sent().ends_with(b"7\r\nstep 1\n\r\n7\r\nstep 2\n\r\n0\r\n\r\n"));
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Misuse`] before [`start`](Self::start) or after
    /// [`finish`](Self::finish); an I/O error or [`Error::TimedOut`] when
    /// sending.
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe (see [`send`](Self::send)).
    pub async fn flush(&mut self) -> Result<(), Error<IO::Error>> {
        if self.discards()? {
            return self.send_committed().await;
        }
        self.seal_in_place().await?;
        self.flush_body().await
    }

    /// Ends the response: the last body bytes, the end of a chunked body,
    /// everything sent.
    ///
    /// # Examples
    ///
    /// A body shorter than the length its head announced is an error:
    ///
    /// ```
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{serve_connection, App, Buffers, Error, Request, Responder, Sent};
    /// use ringstream_embedded::Config;
    /// # use core::convert::Infallible;
    /// # use ringstream_embedded::embedded_io_async::ErrorType;
    /// # /// A connection that was given `input` and keeps what is written to it.
    /// # struct Wire<'a> { input: &'a [u8], output: [u8; 1024], written: usize }
    /// # fn wire(input: &[u8]) -> Wire<'_> { Wire { input, output: [0; 1024], written: 0 } }
    /// # impl Wire<'_> { fn sent(&self) -> &[u8] { &self.output[..self.written] } }
    /// # impl ErrorType for Wire<'_> { type Error = Infallible; }
    /// # impl Read for Wire<'_> {
    /// #     async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
    /// #         let n = buf.len().min(self.input.len());
    /// #         buf[..n].copy_from_slice(&self.input[..n]);
    /// #         self.input = &self.input[n..];
    /// #         Ok(n)
    /// #     }
    /// # }
    /// # impl Write for Wire<'_> {
    /// #     async fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
    /// #         let n = buf.len().min(self.output.len() - self.written);
    /// #         self.output[self.written..self.written + n].copy_from_slice(&buf[..n]);
    /// #         self.written += n;
    /// #         Ok(n)
    /// #     }
    /// #     async fn flush(&mut self) -> Result<(), Infallible> { Ok(()) }
    /// # }
    /// # /// This connection never waits: poll the future to its end.
    /// # fn block_on<F: core::future::Future>(f: F) -> F::Output {
    /// #     let mut f = core::pin::pin!(f);
    /// #     let mut cx = core::task::Context::from_waker(std::task::Waker::noop());
    /// #     loop {
    /// #         if let core::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; }
    /// #     }
    /// # }
    ///
    /// struct Short;
    ///
    /// impl App for Short {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         _request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         responder.start(200, &[], Some(5)).await?;
    ///         responder.write_all(b"hel").await?;
    ///         responder.finish().await
    ///     }
    /// }
    ///
    /// // `wire` makes an in-memory connection, as in `serve_connection`'s example.
    /// let mut io = wire(b"GET / HTTP/1.1\r\nHost: device\r\n\r\n");
    /// let mut buffers = Buffers::<1024, 512>::new();
    /// let served = block_on(serve_connection(&mut io, &Short, &mut buffers, &Config::DEFAULT));
    /// assert!(served.is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Misuse`] before [`start`](Self::start) or twice;
    /// [`Error::Response`] with
    /// [`BodyUnderflow`](ringstream_core::Error::BodyUnderflow) for fewer
    /// bytes than the `content-length`; an I/O error or
    /// [`Error::TimedOut`] when sending.
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe (see [`send`](Self::send)).
    pub async fn finish(&mut self) -> Result<Sent, Error<IO::Error>> {
        let State::Body { discard, .. } = self.state else {
            return Err(Error::Misuse);
        };
        if !discard {
            self.seal_in_place().await?;
            self.seal()?;
        }
        let State::Body { mut encoder, .. } = self.state else {
            return Err(Error::Misuse);
        };
        loop {
            let room = self.tx.get_mut(self.committed..).unwrap_or_default();
            let mut out = SliceBuf::new(room);
            match encoder.finish([], &mut out) {
                Ok(()) => {
                    self.committed += out.len();
                    break;
                }
                Err(ringstream_core::Error::OutOfSpace) if self.committed > 0 => {
                    self.send_committed().await?;
                }
                Err(e) => return Err(Error::Response(e)),
            }
        }
        self.send_committed().await?;
        self.state = State::Done;
        Ok(Sent(()))
    }

    /// Writes a large piece of body from where it lies: the pending bytes
    /// and the core's frame prefix from the transmit buffer, then the
    /// piece; its suffix joins the bytes ready to send.
    async fn write_through(&mut self, data: &[u8]) -> Result<(), Error<IO::Error>> {
        self.seal()?;
        let State::Body { encoder, .. } = &mut self.state else {
            return Err(Error::Misuse);
        };
        let frame = encoder.encode(data.len()).map_err(Error::Response)?;
        if self.put(frame.prefix()).is_err() {
            self.send_committed().await?;
            self.put(frame.prefix())?;
        }
        self.send_committed().await?;
        match with_timeout(self.config.io_timeout, self.io.write_all(data)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(Error::Io(e)),
            Err(_) => return Err(Error::TimedOut),
        }
        self.copied += data.len();
        self.put(frame.suffix())?;
        self.data_start = self.committed + self.gap;
        self.fill = self.data_start;
        Ok(())
    }

    /// Whether the response started has a body that is sent (not `HEAD`,
    /// `204` or `304`).
    pub(crate) fn sends_body(&self) -> bool {
        matches!(self.state, State::Body { discard: false, .. })
    }

    /// Whether body bytes are dropped; [`Error::Misuse`] outside the body.
    fn discards(&self) -> Result<bool, Error<IO::Error>> {
        match self.state {
            State::Body { discard, .. } => Ok(discard),
            State::Head | State::Done => Err(Error::Misuse),
        }
    }

    /// Seals the pending body bytes and sends everything.
    async fn flush_body(&mut self) -> Result<(), Error<IO::Error>> {
        self.seal()?;
        self.send_committed().await
    }

    /// Frames the pending body bytes with the core's encoder: its prefix at
    /// the end of the gap (the bytes before it moved up to meet it), its
    /// suffix after the data. They join the bytes ready to send.
    fn seal(&mut self) -> Result<(), Error<IO::Error>> {
        let len = self.fill - self.data_start;
        let State::Body { encoder, .. } = &mut self.state else {
            return Err(Error::Misuse);
        };
        if len == 0 {
            return Ok(());
        }
        let frame = encoder.encode(len).map_err(Error::Response)?;
        let (prefix, suffix) = (frame.prefix(), frame.suffix());
        // The gap fits the longest prefix for this buffer, and the limit
        // of the data leaves room for the suffix.
        let prefix_at = self.data_start - prefix.len();
        let shift = prefix_at - self.committed;
        if shift > 0 && self.committed > self.out_start {
            self.tx
                .copy_within(self.out_start..self.committed, self.out_start + shift);
            self.copied += self.committed - self.out_start;
        }
        if let Some(p) = self.tx.get_mut(prefix_at..self.data_start) {
            p.copy_from_slice(prefix);
        }
        let end = self.fill + suffix.len();
        if let Some(s) = self.tx.get_mut(self.fill..end) {
            s.copy_from_slice(suffix);
        }
        self.out_start += shift;
        self.committed = end;
        self.data_start = end + self.gap;
        self.fill = self.data_start;
        Ok(())
    }

    /// Appends `bytes` to the bytes ready to send (before any body).
    fn put(&mut self, bytes: &[u8]) -> Result<(), Error<IO::Error>> {
        let end = self.committed + bytes.len();
        let dst = self
            .tx
            .get_mut(self.committed..end)
            .ok_or(Error::Response(ringstream_core::Error::OutOfSpace))?;
        dst.copy_from_slice(bytes);
        self.committed = end;
        Ok(())
    }

    /// Sends the bytes ready to send, within the write deadline; the
    /// buffer is empty afterwards.
    async fn send_committed(&mut self) -> Result<(), Error<IO::Error>> {
        let ready = self
            .tx
            .get(self.out_start..self.committed)
            .unwrap_or_default();
        if !ready.is_empty() {
            match with_timeout(self.config.io_timeout, self.io.write_all(ready)).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(Error::Io(e)),
                Err(_) => return Err(Error::TimedOut),
            }
            self.copied += ready.len();
        }
        self.out_start = 0;
        self.committed = 0;
        self.data_start = self.gap;
        self.fill = self.gap;
        Ok(())
    }
}
