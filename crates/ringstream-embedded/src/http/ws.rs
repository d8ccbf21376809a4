//! WebSocket (RFC 6455) on an HTTP connection: the handshake answered
//! from an [`App`](super::App) handler, then a [`WebSocket`] session over
//! the same connection and buffers, every decision taken by the core's
//! [`ws`](ringstream_core::ws) codec.

use core::fmt;

use embassy_time::{with_deadline, with_timeout, Duration, Instant};
use embedded_io_async::{Read, Write};
use ringstream_core::ws::{
    accept, check_request, message_head, CloseCode, ClosePayload, ControlFrame, Decoded, Decoder,
    Event, FrameHeader, Limits, MessageKind, OpCode, Role, MAX_CLOSE_REASON_LEN,
    MAX_CONTROL_FRAME_LEN, MAX_HEAD_LEN,
};

use super::{Error, Request, Responder, Sent};

/// Settings of a [`WebSocket`] session.
///
/// # Examples
///
/// ```
/// use embassy_time::Duration;
/// use ringstream_embedded::http::WebSocketConfig;
///
/// let config = WebSocketConfig { idle_timeout: Some(Duration::from_secs(10)), ..WebSocketConfig::DEFAULT };
/// assert_eq!(config.limits.max_frame_len, 16 << 20);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WebSocketConfig {
    /// The core's limits on what the client sends: a larger frame or
    /// message is closed with 1009. They bound sizes, not memory: a
    /// message reaches the application in pieces of at most the receive
    /// buffer, whatever its size. Default: [`Limits::DEFAULT`] (16 MiB).
    pub limits: Limits,
    /// How long the client may stay silent before it is sent a Ping; when
    /// it stays silent as long again, the session is closed with 1001
    /// ([`Error::TimedOut`]). `None`: never. Default: 30 seconds, as the
    /// tokio crate's.
    pub idle_timeout: Option<Duration>,
}

impl WebSocketConfig {
    /// The defaults, usable in `const` contexts.
    pub const DEFAULT: WebSocketConfig = WebSocketConfig {
        limits: Limits::DEFAULT,
        idle_timeout: Some(Duration::from_secs(30)),
    };
}

impl Default for WebSocketConfig {
    fn default() -> Self {
        WebSocketConfig::DEFAULT
    }
}

/// What [`Responder::accept_websocket`] came to.
///
/// # Examples
///
/// A request that is no WebSocket handshake is refused, and answered:
///
/// ```
/// use ringstream_embedded::embedded_io_async::{Read, Write};
/// use ringstream_embedded::http::{
///     serve_connection, App, Buffers, Error, Request, Responder, Sent, Upgrade, WebSocketConfig,
/// };
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
/// struct Ws;
///
/// impl App for Ws {
///     async fn handle<IO: Read + Write>(
///         &self,
///         request: &Request<'_>,
///         responder: &mut Responder<'_, IO>,
///     ) -> Result<Sent, Error<IO::Error>> {
///         match responder.accept_websocket(request, &WebSocketConfig::DEFAULT).await? {
///             Upgrade::Accepted(ws) => Ok(ws.end()),
///             Upgrade::Refused(sent) => Ok(sent),
///         }
///     }
/// }
///
/// // `wire` makes an in-memory connection, as in `serve_connection`'s example.
/// let mut io = wire(b"GET /ws HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n");
/// let mut buffers = Buffers::<1024, 512>::new();
/// block_on(serve_connection(&mut io, &Ws, &mut buffers, &Config::DEFAULT)).unwrap();
/// assert!(io.sent().starts_with(b"HTTP/1.1 426 "));
/// ```
#[derive(Debug)]
pub enum Upgrade<'a, IO: Read + Write> {
    /// `101 Switching Protocols` was sent: the connection is a WebSocket
    /// for the rest of the handler.
    Accepted(WebSocket<'a, IO>),
    /// The request was not a valid WebSocket handshake and was answered
    /// with the core's status (405, 426 or 400); return this.
    Refused(Sent),
}

/// A piece of a data message: the whole message when it fits in the
/// receive buffer, else consecutive pieces of it, the first with `first`
/// and the last with `last` (a last piece may be empty).
///
/// # Examples
///
/// ```
/// use ringstream_embedded::http::Piece;
/// use ringstream_embedded::ringstream_core::ws::MessageKind;
///
/// let whole = Piece { kind: MessageKind::Text, data: b"21.5", first: true, last: true };
/// assert_eq!(whole.as_text(), Some("21.5"));
/// // The first piece of a longer message is not a whole text.
/// let part = Piece { last: false, ..whole };
/// assert_eq!(part.as_text(), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Piece<'a> {
    /// Text or binary.
    pub kind: MessageKind,
    /// The payload bytes, unmasked. In a text message they are valid
    /// UTF-8 so far, but a code point may be split between two pieces;
    /// the whole message is valid UTF-8 once `last` is seen.
    pub data: &'a [u8],
    /// The message's first piece.
    pub first: bool,
    /// The message's last piece.
    pub last: bool,
}

impl<'a> Piece<'a> {
    /// The piece as text, when it is a whole text message.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::http::Piece;
    /// use ringstream_embedded::ringstream_core::ws::MessageKind;
    ///
    /// let text = Piece { kind: MessageKind::Text, data: b"on", first: true, last: true };
    /// assert_eq!(text.as_text(), Some("on"));
    /// let binary = Piece { kind: MessageKind::Binary, ..text };
    /// assert_eq!(binary.as_text(), None);
    /// ```
    pub fn as_text(&self) -> Option<&'a str> {
        match (self.kind, self.first && self.last) {
            (MessageKind::Text, true) => core::str::from_utf8(self.data).ok(),
            _ => None,
        }
    }
}

/// What [`WebSocket::receive`] got.
///
/// # Examples
///
/// ```
/// use ringstream_embedded::http::{Piece, Received};
/// use ringstream_embedded::ringstream_core::ws::{CloseCode, MessageKind};
///
/// fn describe(received: Received<'_>) -> &'static str {
///     match received {
///         Received::Piece(Piece { last: true, .. }) => "a message ended",
///         Received::Piece(_) => "more of the message to come",
///         Received::Closed { code, .. } if code == CloseCode::NORMAL => "closed normally",
///         Received::Closed { .. } => "closed",
///     }
/// }
///
/// let piece = Piece { kind: MessageKind::Binary, data: b"\x01", first: true, last: true };
/// assert_eq!(describe(Received::Piece(piece)), "a message ended");
/// let closed = Received::Closed { code: CloseCode::NORMAL, reason: "" };
/// assert_eq!(describe(closed), "closed normally");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Received<'a> {
    /// A piece of a data message.
    Piece(Piece<'a>),
    /// The client closed the session with this code
    /// ([`CloseCode::NO_STATUS`] when it gave none) and reason; its Close
    /// has been echoed. Return from the handler: the connection closes.
    Closed {
        /// The client's close code.
        code: CloseCode,
        /// The client's reason, possibly empty.
        reason: &'a str,
    },
}

/// A WebSocket session, server side, over the connection (used whole) and
/// the connection's buffers, from [`Responder::accept_websocket`].
///
/// - Receiving: [`receive`](Self::receive) reads frames into the part of
///   the receive buffer that the request head left, decodes them with the
///   core's [`Decoder`] (unmasking, UTF-8 checked incrementally, control
///   frames between fragments) and hands each message over in
///   [`Piece`]s: a message larger than the buffer streams through it. A
///   Ping is answered with a Pong, the client's Close is echoed with its
///   code and reason, and a protocol violation is closed with the core's
///   close code (1002, 1007, 1009) and reported as [`Error::WebSocket`].
/// - Sending: [`send_text`](Self::send_text) and
///   [`send_binary`](Self::send_binary) from a slice (unmasked), or
///   `write!(ws, ...)`, which formats one text message once into the
///   transmit buffer. Sends are not flushed: `receive` flushes before it
///   waits, and [`flush`](Self::flush) does so at once.
/// - Deadlines: each write may stall for
///   [`Config::io_timeout`](crate::Config::io_timeout); a silent client is
///   pinged and then closed ([`WebSocketConfig::idle_timeout`]).
///
/// Nothing is allocated and no trait object is involved: the session
/// borrows what the [`Responder`] holds.
///
/// # Examples
///
/// An echo session: the handshake of RFC 6455 §1.3, the masked "Hello" of
/// §5.7, then the client's Close.
///
/// ```
/// use ringstream_embedded::embedded_io_async::{Read, Write};
/// use ringstream_embedded::http::{
///     serve_connection, App, Buffers, Error, Received, Request, Responder, Sent, Upgrade,
///     WebSocketConfig,
/// };
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
/// struct Echo;
///
/// impl App for Echo {
///     async fn handle<IO: Read + Write>(
///         &self,
///         request: &Request<'_>,
///         responder: &mut Responder<'_, IO>,
///     ) -> Result<Sent, Error<IO::Error>> {
///         let mut ws = match responder.accept_websocket(request, &WebSocketConfig::DEFAULT).await? {
///             Upgrade::Accepted(ws) => ws,
///             Upgrade::Refused(sent) => return Ok(sent),
///         };
///         let mut copy = [0u8; 64];
///         loop {
///             let (kind, len) = match ws.receive().await? {
///                 // A piece borrows the session's buffer: copy it to answer.
///                 Received::Piece(piece) if piece.data.len() <= copy.len() => {
///                     copy[..piece.data.len()].copy_from_slice(piece.data);
///                     (piece.kind, piece.data.len())
///                 }
///                 Received::Piece(_) => continue,
///                 // Echoed already: return, and the connection closes.
///                 Received::Closed { .. } => return Ok(ws.end()),
///             };
///             ws.send(kind, &copy[..len]).await?;
///         }
///     }
/// }
///
/// let mut input = Vec::new();
/// input.extend_from_slice(
///     b"GET /chat HTTP/1.1\r\nHost: device\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
///       Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
/// );
/// input.extend_from_slice(&[0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58]);
/// input.extend_from_slice(&[0x88, 0x82, 0, 0, 0, 0, 0x03, 0xe8]); // Close 1000
/// // `wire` makes an in-memory connection, as in `serve_connection`'s example.
/// let mut io = wire(&input);
/// let mut buffers = Buffers::<1024, 512>::new();
/// block_on(serve_connection(&mut io, &Echo, &mut buffers, &Config::DEFAULT)).unwrap();
/// let sent = io.sent();
/// assert!(sent.starts_with(b"HTTP/1.1 101 Switching Protocols\r\n"));
/// // The unmasked "Hello", then the echoed Close.
/// assert!(sent.ends_with(b"\r\n\r\n\x81\x05Hello\x88\x02\x03\xe8"));
/// ```
pub struct WebSocket<'a, IO: Read + Write> {
    io: &'a mut IO,
    rx: &'a mut [u8],
    /// Decoded up to here in `rx`.
    pos: usize,
    /// Received up to here in `rx`.
    end: usize,
    tx: &'a mut [u8],
    decoder: Decoder,
    io_timeout: Duration,
    idle_timeout: Option<Duration>,
    /// When the client last sent a byte.
    heard: Instant,
    ping_sent: bool,
    close_sent: bool,
    /// The current message: its kind, and whether no piece of it was
    /// handed over yet.
    kind: MessageKind,
    first: bool,
    /// Proof of the `101`, returned by [`end`](Self::end).
    sent: Sent,
}

impl<IO: Read + Write> fmt::Debug for WebSocket<'_, IO> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebSocket")
            .field("buffered", &(self.end - self.pos))
            .field("close_sent", &self.close_sent)
            .field("closed", &self.decoder.is_closed())
            .finish_non_exhaustive()
    }
}

/// Room kept in front of a formatted message for its frame head: the
/// longest head of an unmasked frame, in bytes.
const HEAD_ROOM: usize = MAX_HEAD_LEN - 4;

impl<'c, IO: Read + Write> Responder<'c, IO> {
    /// Answers a WebSocket handshake (RFC 6455 §4.2): checks `request`
    /// with the core's [`check_request`] (a `GET` on HTTP/1.1 asking to
    /// upgrade, without a body) and [`accept`] (its WebSocket fields), then
    /// sends `101 Switching Protocols` with the `Sec-WebSocket-Accept` the
    /// core computes and returns the session; a request that is not a
    /// valid handshake is answered with the core's status (405 with
    /// `allow: GET`; 426 with `upgrade: websocket` and
    /// `sec-websocket-version: 13`; or 400) and a plain-text reason.
    ///
    /// After the `101` the connection carries the WebSocket until the
    /// handler returns, then closes; bytes the client sent after its
    /// request head are the session's first bytes.
    ///
    /// # Examples
    ///
    /// A handler that answers each message with its size, however large
    /// the message (it arrives in pieces):
    ///
    /// ```
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{
    ///     App, Error, Received, Request, Responder, Sent, Upgrade, WebSocketConfig,
    /// };
    ///
    /// struct Sizes;
    ///
    /// impl App for Sizes {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         let config = WebSocketConfig::DEFAULT;
    ///         let mut ws = match responder.accept_websocket(request, &config).await? {
    ///             Upgrade::Accepted(ws) => ws,
    ///             // 405, 426 or 400, already answered.
    ///             Upgrade::Refused(sent) => return Ok(sent),
    ///         };
    ///         let mut len = 0;
    ///         loop {
    ///             match ws.receive().await? {
    ///                 Received::Piece(piece) => {
    ///                     len += piece.data.len();
    ///                     if piece.last {
    ///                         // Formatted once into the transmit buffer.
    ///                         write!(ws, "{len} bytes").await?;
    ///                         len = 0;
    ///                     }
    ///                 }
    ///                 // Echoed already: return, and the connection closes.
    ///                 Received::Closed { .. } => return Ok(ws.end()),
    ///             }
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Misuse`] after a response head; [`Error::Response`] with
    /// [`OutOfSpace`](ringstream_core::Error::OutOfSpace) (answered 500)
    /// when the request head left less than
    /// [`MAX_CONTROL_FRAME_LEN`] bytes of the receive buffer for frames;
    /// an I/O error or [`Error::TimedOut`] when sending the answer.
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe (see [`send`](Self::send)).
    pub async fn accept_websocket(
        &mut self,
        request: &Request<'_>,
        config: &WebSocketConfig,
    ) -> Result<Upgrade<'_, IO>, Error<IO::Error>> {
        // The HTTP side of the handshake, then its WebSocket fields: each
        // rule the core's.
        let checked = check_request(request.method(), &self.exchange)
            .and_then(|()| accept(request.fields().iter().map(|f| (f.name, f.value))));
        let key = match checked {
            Ok(key) => key,
            Err(e) => {
                let status = e.status();
                let text: &[(&str, &[u8])] = &[("content-type", b"text/plain; charset=utf-8")];
                let upgrade: &[(&str, &[u8])] = &[
                    ("content-type", b"text/plain; charset=utf-8"),
                    ("connection", b"upgrade"),
                    ("upgrade", b"websocket"),
                    ("sec-websocket-version", b"13"),
                ];
                let get: &[(&str, &[u8])] = &[
                    ("content-type", b"text/plain; charset=utf-8"),
                    ("allow", b"GET"),
                ];
                let fields = match status {
                    426 => upgrade,
                    405 => get,
                    _ => text,
                };
                let sent = self.send(status, fields, e.as_str().as_bytes()).await?;
                return Ok(Upgrade::Refused(sent));
            }
        };
        if self.rx.len() < MAX_CONTROL_FRAME_LEN {
            return Err(Error::Response(ringstream_core::Error::OutOfSpace));
        }
        // `connection: upgrade` tells the core's head writer to name the
        // option (RFC 9110 §7.8); it writes the `Connection` field itself.
        let fields: [(&str, &[u8]); 3] = [
            ("connection", b"upgrade"),
            ("upgrade", b"websocket"),
            ("sec-websocket-accept", key.as_bytes()),
        ];
        self.start(101, &fields, None).await?;
        let sent = self.finish().await?;
        // Whatever follows the head belongs to the session.
        let (pos, end) = (self.start, self.end);
        self.start = self.end;
        Ok(Upgrade::Accepted(WebSocket {
            io: &mut *self.io,
            rx: &mut *self.rx,
            pos,
            end,
            tx: &mut *self.tx,
            decoder: Decoder::new(Role::Server, config.limits),
            io_timeout: self.config.io_timeout,
            idle_timeout: config.idle_timeout,
            heard: Instant::now(),
            ping_sent: false,
            close_sent: false,
            kind: MessageKind::Binary,
            first: true,
            sent,
        }))
    }
}

/// What one decoding pass found, as ranges of the receive buffer.
enum Step {
    Piece {
        from: usize,
        to: usize,
        last: bool,
    },
    Closed {
        code: CloseCode,
        from: usize,
        to: usize,
    },
}

impl<'a, IO: Read + Write> WebSocket<'a, IO> {
    /// Receives the next piece of a data message, or the client's Close;
    /// Pings are answered and Pongs taken on the way.
    ///
    /// # Examples
    ///
    /// The client sends the masked "Hello" of RFC 6455 §5.7, then closes:
    ///
    /// ```
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{
    ///     serve_connection, App, Buffers, Error, Received, Request, Responder, Sent, Upgrade,
    ///     WebSocketConfig,
    /// };
    /// use ringstream_embedded::ringstream_core::ws::CloseCode;
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
    /// # const HANDSHAKE: &[u8] = b"GET /chat HTTP/1.1\r\nHost: device\r\nUpgrade: websocket\r\n\
    /// #     Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
    /// #     Sec-WebSocket-Version: 13\r\n\r\n";
    ///
    /// struct Listen;
    ///
    /// impl App for Listen {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         let mut ws = match responder.accept_websocket(request, &WebSocketConfig::DEFAULT).await? {
    ///             Upgrade::Accepted(ws) => ws,
    ///             Upgrade::Refused(sent) => return Ok(sent),
    ///         };
    ///         let mut messages = 0;
    ///         loop {
    ///             match ws.receive().await? {
    ///                 Received::Piece(piece) => {
    ///                     assert_eq!(piece.as_text(), Some("Hello"));
    ///                     messages += 1;
    ///                 }
    ///                 Received::Closed { code, .. } => {
    ///                     assert_eq!((code, messages), (CloseCode::NORMAL, 1));
    ///                     return Ok(ws.end());
    ///                 }
    ///             }
    ///         }
    ///     }
    /// }
    ///
    /// // HANDSHAKE is the request of RFC 6455 §1.3.
    /// let mut input = HANDSHAKE.to_vec();
    /// input.extend_from_slice(&[0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58]);
    /// input.extend_from_slice(&[0x88, 0x82, 0, 0, 0, 0, 0x03, 0xe8]); // Close 1000
    /// // `wire` makes an in-memory connection, as in `serve_connection`'s example.
    /// let mut io = wire(&input);
    /// let mut buffers = Buffers::<1024, 512>::new();
    /// block_on(serve_connection(&mut io, &Listen, &mut buffers, &Config::DEFAULT)).unwrap();
    /// // The client's Close, echoed.
    /// assert!(io.sent().ends_with(b"\x88\x02\x03\xe8"));
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::WebSocket`] for a protocol violation (the session was
    /// closed with its close code, [`ringstream_core::ws::Error::close_code`]);
    /// [`Error::Closed`] when the client left without a Close, or when the
    /// session has already closed; [`Error::TimedOut`] when the client
    /// stayed silent through an idle Ping, or a write stalled;
    /// [`Error::Io`].
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: a frame half-answered would be lost.
    pub async fn receive(&mut self) -> Result<Received<'_>, Error<IO::Error>> {
        let step = self.next_step().await?;
        Ok(match step {
            Step::Piece { from, to, last } => {
                let first = self.first;
                self.first = last;
                Received::Piece(Piece {
                    kind: self.kind,
                    data: self.rx.get(from..to).unwrap_or_default(),
                    first,
                    last,
                })
            }
            Step::Closed { code, from, to } => Received::Closed {
                code,
                reason: self
                    .rx
                    .get(from..to)
                    .and_then(|r| core::str::from_utf8(r).ok())
                    .unwrap_or_default(),
            },
        })
    }

    async fn next_step(&mut self) -> Result<Step, Error<IO::Error>> {
        loop {
            if self.decoder.is_closed() {
                return Err(Error::Closed);
            }
            let input = self.rx.get_mut(self.pos..self.end).unwrap_or_default();
            let at = self.pos;
            let decoded = match self.decoder.decode(input) {
                Ok(decoded) => decoded,
                Err(e) => return Err(self.fail(e).await),
            };
            let Decoded { consumed, event } = decoded;
            self.pos += consumed;
            match event {
                None => self.fill().await?,
                Some(Event::MessageStart { kind, .. }) => {
                    self.kind = kind;
                    self.first = true;
                }
                Some(Event::Data(range)) => {
                    // The message ends with this piece when the decoder,
                    // given nothing more, says so.
                    let mut peek = self.decoder.clone();
                    let last = matches!(
                        peek.decode(&mut []),
                        Ok(Decoded {
                            event: Some(Event::MessageEnd),
                            ..
                        })
                    );
                    if last {
                        self.decoder = peek;
                    }
                    return Ok(Step::Piece {
                        from: at + range.start,
                        to: at + range.end,
                        last,
                    });
                }
                Some(Event::MessageEnd) => {
                    return Ok(Step::Piece {
                        from: self.pos,
                        to: self.pos,
                        last: true,
                    })
                }
                Some(Event::Ping(range)) => {
                    let payload = self.rx.get(at + range.start..at + range.end);
                    if let Ok(pong) = ControlFrame::pong(payload.unwrap_or_default()) {
                        self.write(pong.as_bytes()).await?;
                    }
                }
                Some(Event::Pong(_)) => self.ping_sent = false,
                Some(Event::Close { code, reason }) => {
                    let (from, to) = (at + reason.start, at + reason.end);
                    let text = self
                        .rx
                        .get(from..to)
                        .and_then(|r| core::str::from_utf8(r).ok())
                        .unwrap_or_default();
                    if !self.close_sent {
                        let payload = match code {
                            Some(code) => {
                                ClosePayload::new(code, text).unwrap_or(ClosePayload::EMPTY)
                            }
                            None => ClosePayload::EMPTY,
                        };
                        self.close_sent = true;
                        self.write(ControlFrame::close(&payload).as_bytes()).await?;
                    }
                    self.flush().await?;
                    return Ok(Step::Closed {
                        code: code.unwrap_or(CloseCode::NO_STATUS),
                        from,
                        to,
                    });
                }
            }
        }
    }

    /// Reads more bytes, after the ones not yet decoded (moved to the
    /// start of the buffer: at most a frame head or a control frame),
    /// under the idle deadline.
    async fn fill(&mut self) -> Result<(), Error<IO::Error>> {
        if self.pos > 0 {
            self.rx.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
        self.flush().await?;
        loop {
            let room = self.rx.get_mut(self.end..).unwrap_or_default();
            let read = match self.idle_timeout {
                Some(idle) => {
                    let waited = if self.ping_sent { idle + idle } else { idle };
                    match with_deadline(self.heard + waited, self.io.read(room)).await {
                        Ok(read) => read,
                        Err(_) if self.ping_sent => {
                            if !self.close_sent {
                                let _ = self.send_close(CloseCode::GOING_AWAY, "idle").await;
                            }
                            return Err(Error::TimedOut);
                        }
                        Err(_) => {
                            self.ping_sent = true;
                            if let Ok(ping) = ControlFrame::ping(b"") {
                                self.write(ping.as_bytes()).await?;
                            }
                            self.flush().await?;
                            continue;
                        }
                    }
                }
                None => self.io.read(room).await,
            };
            return match read {
                Ok(0) => {
                    let _ = self.decoder.finish_eof();
                    Err(Error::Closed)
                }
                Ok(n) => {
                    self.end += n;
                    self.heard = Instant::now();
                    self.ping_sent = false;
                    Ok(())
                }
                Err(e) => Err(Error::Io(e)),
            };
        }
    }

    /// Closes the session for the protocol violation `e` with its close
    /// code and description.
    async fn fail(&mut self, e: ringstream_core::ws::Error) -> Error<IO::Error> {
        if !self.close_sent {
            let reason = e.as_str();
            let reason = reason
                .get(..reason.len().min(MAX_CLOSE_REASON_LEN))
                .unwrap_or("");
            let payload = ClosePayload::new(e.close_code(), reason).unwrap_or(ClosePayload::EMPTY);
            self.close_sent = true;
            if let Err(io) = self.write(ControlFrame::close(&payload).as_bytes()).await {
                return io;
            }
            if let Err(io) = self.flush().await {
                return io;
            }
        }
        Error::WebSocket(e)
    }

    /// Sends a text message.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{
    ///     serve_connection, App, Buffers, Error, Request, Responder, Sent, Upgrade, WebSocketConfig,
    /// };
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
    /// # const HANDSHAKE: &[u8] = b"GET /chat HTTP/1.1\r\nHost: device\r\nUpgrade: websocket\r\n\
    /// #     Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
    /// #     Sec-WebSocket-Version: 13\r\n\r\n";
    ///
    /// struct Greet;
    ///
    /// impl App for Greet {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         let mut ws = match responder.accept_websocket(request, &WebSocketConfig::DEFAULT).await? {
    ///             Upgrade::Accepted(ws) => ws,
    ///             Upgrade::Refused(sent) => return Ok(sent),
    ///         };
    ///         ws.send_text("hello").await?;
    ///         ws.flush().await?;
    ///         Ok(ws.end())
    ///     }
    /// }
    ///
    /// // HANDSHAKE is the request of RFC 6455 §1.3.
    /// // `wire` makes an in-memory connection, as in `serve_connection`'s example.
    /// let mut io = wire(HANDSHAKE);
    /// let mut buffers = Buffers::<1024, 512>::new();
    /// block_on(serve_connection(&mut io, &Greet, &mut buffers, &Config::DEFAULT)).unwrap();
    /// // One unmasked, final text frame.
    /// assert!(io.sent().ends_with(b"\r\n\r\n\x81\x05hello"));
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Misuse`] after the session's Close was sent; an I/O error
    /// or [`Error::TimedOut`].
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: a message cut off midway breaks the framing.
    pub async fn send_text(&mut self, text: &str) -> Result<(), Error<IO::Error>> {
        self.send(MessageKind::Text, text.as_bytes()).await
    }

    /// Sends a binary message.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{
    ///     serve_connection, App, Buffers, Error, Request, Responder, Sent, Upgrade, WebSocketConfig,
    /// };
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
    /// # const HANDSHAKE: &[u8] = b"GET /chat HTTP/1.1\r\nHost: device\r\nUpgrade: websocket\r\n\
    /// #     Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
    /// #     Sec-WebSocket-Version: 13\r\n\r\n";
    ///
    /// struct Reading;
    ///
    /// impl App for Reading {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         let mut ws = match responder.accept_websocket(request, &WebSocketConfig::DEFAULT).await? {
    ///             Upgrade::Accepted(ws) => ws,
    ///             Upgrade::Refused(sent) => return Ok(sent),
    ///         };
    ///         ws.send_binary(&215u16.to_be_bytes()).await?; // 21.5 °C, in tenths
    ///         ws.flush().await?;
    ///         Ok(ws.end())
    ///     }
    /// }
    ///
    /// // HANDSHAKE is the request of RFC 6455 §1.3.
    /// // `wire` makes an in-memory connection, as in `serve_connection`'s example.
    /// let mut io = wire(HANDSHAKE);
    /// let mut buffers = Buffers::<1024, 512>::new();
    /// block_on(serve_connection(&mut io, &Reading, &mut buffers, &Config::DEFAULT)).unwrap();
    /// assert!(io.sent().ends_with(b"\r\n\r\n\x82\x02\x00\xd7"));
    /// ```
    ///
    /// # Errors
    ///
    /// As [`send_text`](Self::send_text).
    ///
    /// # Cancel safety
    ///
    /// As [`send_text`](Self::send_text).
    pub async fn send_binary(&mut self, data: &[u8]) -> Result<(), Error<IO::Error>> {
        self.send(MessageKind::Binary, data).await
    }

    /// Sends one message, unfragmented and unmasked: head and payload in
    /// one write through the transmit buffer when they fit in it, else
    /// the head, then the payload from where it lies.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{
    ///     serve_connection, App, Buffers, Error, Request, Responder, Sent, Upgrade, WebSocketConfig,
    /// };
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
    /// # const HANDSHAKE: &[u8] = b"GET /chat HTTP/1.1\r\nHost: device\r\nUpgrade: websocket\r\n\
    /// #     Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
    /// #     Sec-WebSocket-Version: 13\r\n\r\n";
    /// use ringstream_embedded::ringstream_core::ws::MessageKind;
    ///
    /// struct Send;
    ///
    /// impl App for Send {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         let mut ws = match responder.accept_websocket(request, &WebSocketConfig::DEFAULT).await? {
    ///             Upgrade::Accepted(ws) => ws,
    ///             Upgrade::Refused(sent) => return Ok(sent),
    ///         };
    ///         ws.send(MessageKind::Text, b"on").await?;
    ///         ws.flush().await?;
    ///         Ok(ws.end())
    ///     }
    /// }
    ///
    /// // HANDSHAKE is the request of RFC 6455 §1.3.
    /// // `wire` makes an in-memory connection, as in `serve_connection`'s example.
    /// let mut io = wire(HANDSHAKE);
    /// let mut buffers = Buffers::<1024, 512>::new();
    /// block_on(serve_connection(&mut io, &Send, &mut buffers, &Config::DEFAULT)).unwrap();
    /// assert!(io.sent().ends_with(b"\r\n\r\n\x81\x02on"));
    /// ```
    ///
    /// # Errors
    ///
    /// As [`send_text`](Self::send_text).
    ///
    /// # Cancel safety
    ///
    /// As [`send_text`](Self::send_text).
    pub async fn send(&mut self, kind: MessageKind, data: &[u8]) -> Result<(), Error<IO::Error>> {
        if self.close_sent {
            return Err(Error::Misuse);
        }
        let head = message_head(kind, data.len() as u64);
        self.send_frame(head.as_bytes(), data).await
    }

    /// Writes a frame head and its payload.
    async fn send_frame(&mut self, head: &[u8], data: &[u8]) -> Result<(), Error<IO::Error>> {
        let whole = head.len() + data.len();
        match self.tx.get_mut(..whole) {
            Some(out) => {
                let (h, d) = out.split_at_mut(head.len());
                h.copy_from_slice(head);
                d.copy_from_slice(data);
                let io_timeout = self.io_timeout;
                write_within(
                    self.io,
                    io_timeout,
                    self.tx.get(..whole).unwrap_or_default(),
                )
                .await
            }
            None => {
                self.write(head).await?;
                self.write(data).await
            }
        }
    }

    /// Formats one text message once into the transmit buffer, after room
    /// for its head, and sends it: `write!(ws, "...").await`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{
    ///     serve_connection, App, Buffers, Error, Request, Responder, Sent, Upgrade, WebSocketConfig,
    /// };
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
    /// # const HANDSHAKE: &[u8] = b"GET /chat HTTP/1.1\r\nHost: device\r\nUpgrade: websocket\r\n\
    /// #     Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
    /// #     Sec-WebSocket-Version: 13\r\n\r\n";
    ///
    /// struct Uptime;
    ///
    /// impl App for Uptime {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         let mut ws = match responder.accept_websocket(request, &WebSocketConfig::DEFAULT).await? {
    ///             Upgrade::Accepted(ws) => ws,
    ///             Upgrade::Refused(sent) => return Ok(sent),
    ///         };
    ///         write!(ws, "up {} s", 42).await?;
    ///         ws.flush().await?;
    ///         Ok(ws.end())
    ///     }
    /// }
    ///
    /// // HANDSHAKE is the request of RFC 6455 §1.3.
    /// // `wire` makes an in-memory connection, as in `serve_connection`'s example.
    /// let mut io = wire(HANDSHAKE);
    /// let mut buffers = Buffers::<1024, 512>::new();
    /// block_on(serve_connection(&mut io, &Uptime, &mut buffers, &Config::DEFAULT)).unwrap();
    /// assert!(io.sent().ends_with(b"\r\n\r\n\x81\x07up 42 s"));
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Format`] when the text does not fit in the transmit buffer
    /// (less 10 bytes for the head) or a `Display` implementation fails:
    /// nothing was sent. Otherwise as [`send_text`](Self::send_text).
    ///
    /// # Cancel safety
    ///
    /// As [`send_text`](Self::send_text).
    pub async fn write_fmt(&mut self, args: fmt::Arguments<'_>) -> Result<(), Error<IO::Error>> {
        if self.close_sent {
            return Err(Error::Misuse);
        }
        let room = self.tx.get_mut(HEAD_ROOM..).ok_or(Error::Format)?;
        let mut out = SliceWriter { buf: room, len: 0 };
        fmt::write(&mut out, args).map_err(|_| Error::Format)?;
        let len = out.len;
        let head = message_head(MessageKind::Text, len as u64);
        let head = head.as_bytes();
        let from = HEAD_ROOM - head.len();
        if let Some(dst) = self.tx.get_mut(from..HEAD_ROOM) {
            dst.copy_from_slice(head);
        }
        let frame = self.tx.get(from..HEAD_ROOM + len).unwrap_or_default();
        write_within(self.io, self.io_timeout, frame).await
    }

    /// Flushes what was sent, within the write deadline.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{
    ///     serve_connection, App, Buffers, Error, Request, Responder, Sent, Upgrade, WebSocketConfig,
    /// };
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
    /// # const HANDSHAKE: &[u8] = b"GET /chat HTTP/1.1\r\nHost: device\r\nUpgrade: websocket\r\n\
    /// #     Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
    /// #     Sec-WebSocket-Version: 13\r\n\r\n";
    ///
    /// struct Flush;
    ///
    /// impl App for Flush {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         let mut ws = match responder.accept_websocket(request, &WebSocketConfig::DEFAULT).await? {
    ///             Upgrade::Accepted(ws) => ws,
    ///             Upgrade::Refused(sent) => return Ok(sent),
    ///         };
    ///         ws.send_text("ready").await?;
    ///         // Out now, not when the session next waits to receive.
    ///         ws.flush().await?;
    ///         Ok(ws.end())
    ///     }
    /// }
    ///
    /// // HANDSHAKE is the request of RFC 6455 §1.3.
    /// // `wire` makes an in-memory connection, as in `serve_connection`'s example.
    /// let mut io = wire(HANDSHAKE);
    /// let mut buffers = Buffers::<1024, 512>::new();
    /// block_on(serve_connection(&mut io, &Flush, &mut buffers, &Config::DEFAULT)).unwrap();
    /// assert!(io.sent().ends_with(b"\x81\x05ready"));
    /// ```
    ///
    /// # Errors
    ///
    /// An I/O error or [`Error::TimedOut`].
    ///
    /// # Cancel safety
    ///
    /// The session keeps no state of its own across the flush, so dropping
    /// it leaves the session usable; what a flush dropped midway leaves in
    /// the connection is up to the connection's own `flush`.
    pub async fn flush(&mut self) -> Result<(), Error<IO::Error>> {
        match with_timeout(self.io_timeout, self.io.flush()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(Error::Io(e)),
            Err(_) => Err(Error::TimedOut),
        }
    }

    /// Closes the session from the server's side: sends a Close with
    /// `code` and `reason` (cut to 123 bytes at a character boundary),
    /// then reads, dropping any data, until the client's Close or for at
    /// most [`Config::io_timeout`](crate::Config::io_timeout).
    ///
    /// # Examples
    ///
    /// The server closes first, and the client answers:
    ///
    /// ```
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{
    ///     serve_connection, App, Buffers, Error, Request, Responder, Sent, Upgrade, WebSocketConfig,
    /// };
    /// use ringstream_embedded::ringstream_core::ws::CloseCode;
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
    /// # const HANDSHAKE: &[u8] = b"GET /chat HTTP/1.1\r\nHost: device\r\nUpgrade: websocket\r\n\
    /// #     Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
    /// #     Sec-WebSocket-Version: 13\r\n\r\n";
    ///
    /// struct Bye;
    ///
    /// impl App for Bye {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         let mut ws = match responder.accept_websocket(request, &WebSocketConfig::DEFAULT).await? {
    ///             Upgrade::Accepted(ws) => ws,
    ///             Upgrade::Refused(sent) => return Ok(sent),
    ///         };
    ///         ws.close(CloseCode::GOING_AWAY, "restart").await?;
    ///         // The client's Close has been read.
    ///         assert!(ws.is_closed());
    ///         Ok(ws.end())
    ///     }
    /// }
    ///
    /// // HANDSHAKE is the request of RFC 6455 §1.3; the client answers the Close.
    /// let mut input = HANDSHAKE.to_vec();
    /// input.extend_from_slice(&[0x88, 0x82, 0, 0, 0, 0, 0x03, 0xe9]); // Close 1001
    /// // `wire` makes an in-memory connection, as in `serve_connection`'s example.
    /// let mut io = wire(&input);
    /// let mut buffers = Buffers::<1024, 512>::new();
    /// block_on(serve_connection(&mut io, &Bye, &mut buffers, &Config::DEFAULT)).unwrap();
    /// assert!(io.sent().ends_with(b"\r\n\r\n\x88\x09\x03\xe9restart"));
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Misuse`] when a Close was sent already; an I/O error or
    /// [`Error::TimedOut`] when sending it. The client's answer is waited
    /// for but not required.
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe.
    pub async fn close(&mut self, code: CloseCode, reason: &str) -> Result<(), Error<IO::Error>> {
        if self.close_sent {
            return Err(Error::Misuse);
        }
        self.send_close(code, reason).await?;
        let deadline = Instant::now() + self.io_timeout;
        let _ = with_deadline(deadline, async {
            loop {
                match self.next_step().await {
                    Ok(Step::Closed { .. }) | Err(_) => return,
                    Ok(Step::Piece { .. }) => {}
                }
            }
        })
        .await;
        Ok(())
    }

    /// Sends a Close with `code` and `reason`, cut to fit, and flushes.
    async fn send_close(&mut self, code: CloseCode, reason: &str) -> Result<(), Error<IO::Error>> {
        let mut cut = reason.len().min(MAX_CLOSE_REASON_LEN);
        while !reason.is_char_boundary(cut) {
            cut -= 1;
        }
        let payload = ClosePayload::new(code, reason.get(..cut).unwrap_or_default())
            .unwrap_or(ClosePayload::EMPTY);
        self.close_sent = true;
        self.write(ControlFrame::close(&payload).as_bytes()).await?;
        self.flush().await
    }

    /// Sends one frame of a fragmented message: the first with `first`
    /// (its opcode says the kind), the last with `last`. A message larger
    /// than any buffer can be sent, or echoed piece by piece, so.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{
    ///     serve_connection, App, Buffers, Error, Request, Responder, Sent, Upgrade, WebSocketConfig,
    /// };
    /// use ringstream_embedded::ringstream_core::ws::MessageKind;
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
    /// # const HANDSHAKE: &[u8] = b"GET /chat HTTP/1.1\r\nHost: device\r\nUpgrade: websocket\r\n\
    /// #     Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
    /// #     Sec-WebSocket-Version: 13\r\n\r\n";
    ///
    /// struct Pieces;
    ///
    /// impl App for Pieces {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         let mut ws = match responder.accept_websocket(request, &WebSocketConfig::DEFAULT).await? {
    ///             Upgrade::Accepted(ws) => ws,
    ///             Upgrade::Refused(sent) => return Ok(sent),
    ///         };
    ///         ws.send_fragment(MessageKind::Text, b"Hel", true, false).await?;
    ///         ws.send_fragment(MessageKind::Text, b"lo", false, true).await?;
    ///         ws.flush().await?;
    ///         Ok(ws.end())
    ///     }
    /// }
    ///
    /// // HANDSHAKE is the request of RFC 6455 §1.3.
    /// // `wire` makes an in-memory connection, as in `serve_connection`'s example.
    /// let mut io = wire(HANDSHAKE);
    /// let mut buffers = Buffers::<1024, 512>::new();
    /// block_on(serve_connection(&mut io, &Pieces, &mut buffers, &Config::DEFAULT)).unwrap();
    /// // The fragments of RFC 6455 §5.7: a text frame without FIN, then a
    /// // final continuation frame.
    /// assert!(io.sent().ends_with(b"\r\n\r\n\x01\x03Hel\x80\x02lo"));
    /// ```
    ///
    /// # Errors
    ///
    /// As [`send_text`](Self::send_text).
    ///
    /// # Cancel safety
    ///
    /// As [`send_text`](Self::send_text).
    pub async fn send_fragment(
        &mut self,
        kind: MessageKind,
        data: &[u8],
        first: bool,
        last: bool,
    ) -> Result<(), Error<IO::Error>> {
        if self.close_sent {
            return Err(Error::Misuse);
        }
        let opcode = if first {
            kind.opcode()
        } else {
            OpCode::Continuation
        };
        let head = FrameHeader::new(opcode, data.len() as u64)
            .with_fin(last)
            .encode();
        self.send_frame(head.as_bytes(), data).await
    }

    /// Whether the client's Close was received (or the session failed).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{
    ///     serve_connection, App, Buffers, Error, Request, Responder, Sent, Upgrade, WebSocketConfig,
    /// };
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
    /// # const HANDSHAKE: &[u8] = b"GET /chat HTTP/1.1\r\nHost: device\r\nUpgrade: websocket\r\n\
    /// #     Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
    /// #     Sec-WebSocket-Version: 13\r\n\r\n";
    /// use ringstream_embedded::http::Received;
    ///
    /// struct Wait;
    ///
    /// impl App for Wait {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         let mut ws = match responder.accept_websocket(request, &WebSocketConfig::DEFAULT).await? {
    ///             Upgrade::Accepted(ws) => ws,
    ///             Upgrade::Refused(sent) => return Ok(sent),
    ///         };
    ///         assert!(!ws.is_closed());
    ///         while let Received::Piece(_) = ws.receive().await? {}
    ///         assert!(ws.is_closed());
    ///         Ok(ws.end())
    ///     }
    /// }
    ///
    /// // HANDSHAKE is the request of RFC 6455 §1.3; the client then closes.
    /// let mut input = HANDSHAKE.to_vec();
    /// input.extend_from_slice(&[0x88, 0x80, 0, 0, 0, 0]); // Close, no code
    /// // `wire` makes an in-memory connection, as in `serve_connection`'s example.
    /// let mut io = wire(&input);
    /// let mut buffers = Buffers::<1024, 512>::new();
    /// block_on(serve_connection(&mut io, &Wait, &mut buffers, &Config::DEFAULT)).unwrap();
    /// ```
    pub fn is_closed(&self) -> bool {
        self.decoder.is_closed() || self.decoder.error().is_some()
    }

    /// Ends the session: the proof of the `101` for the handler to
    /// return; the connection closes after the handler.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{
    ///     serve_connection, App, Buffers, Error, Request, Responder, Sent, Upgrade, WebSocketConfig,
    /// };
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
    /// # const HANDSHAKE: &[u8] = b"GET /chat HTTP/1.1\r\nHost: device\r\nUpgrade: websocket\r\n\
    /// #     Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
    /// #     Sec-WebSocket-Version: 13\r\n\r\n";
    ///
    /// struct Hangup;
    ///
    /// impl App for Hangup {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         match responder.accept_websocket(request, &WebSocketConfig::DEFAULT).await? {
    ///             // The `101` was sent: `end` is the proof to return.
    ///             Upgrade::Accepted(ws) => Ok(ws.end()),
    ///             Upgrade::Refused(sent) => Ok(sent),
    ///         }
    ///     }
    /// }
    ///
    /// // HANDSHAKE is the request of RFC 6455 §1.3.
    /// // `wire` makes an in-memory connection, as in `serve_connection`'s example.
    /// let mut io = wire(HANDSHAKE);
    /// let mut buffers = Buffers::<1024, 512>::new();
    /// block_on(serve_connection(&mut io, &Hangup, &mut buffers, &Config::DEFAULT)).unwrap();
    /// assert!(io.sent().starts_with(b"HTTP/1.1 101 Switching Protocols\r\n"));
    /// ```
    pub fn end(self) -> Sent {
        self.sent
    }

    async fn write(&mut self, bytes: &[u8]) -> Result<(), Error<IO::Error>> {
        write_within(self.io, self.io_timeout, bytes).await
    }
}

async fn write_within<IO: Write>(
    io: &mut IO,
    timeout: Duration,
    bytes: &[u8],
) -> Result<(), Error<IO::Error>> {
    match with_timeout(timeout, io.write_all(bytes)).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(Error::Io(e)),
        Err(_) => Err(Error::TimedOut),
    }
}

/// `fmt::Write` into a slice, failing when it is full.
struct SliceWriter<'b> {
    buf: &'b mut [u8],
    len: usize,
}

impl fmt::Write for SliceWriter<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len.checked_add(s.len()).ok_or(fmt::Error)?;
        let dst = self.buf.get_mut(self.len..end).ok_or(fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}
