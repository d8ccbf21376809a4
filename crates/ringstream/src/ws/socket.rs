//! [`WebSocket`]: messages in and out over a [`Stream`], framed by the
//! core's codec.

use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::task::{ready, Context, Poll, Waker};

use bytes::Bytes;
use http::HeaderValue;
use ringstream_core::ws::{CloseCode, ControlFrame, Decoder, Event, MessageKind, Role};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;
use tokio::time::Sleep;

use super::compression::{self, Compression};
use super::config::Config;
use super::gather::{Gathered, Incoming};
use super::{CloseFrame, DeflateParams, Message, Utf8Bytes};
use crate::error::{Error, Timeout};
use crate::server::upgrade::{Upgraded, UpgradedTransport};
use crate::stream::{Stream, StreamOptions};

/// Payloads up to this many bytes are copied into the write buffer behind
/// their frame head; larger ones go out uncopied in one vectored write
/// with it.
pub(super) const SMALL_PAYLOAD: usize = 4 * 1024;

/// The read block and write buffer of a WebSocket's stream, in bytes (a
/// larger message is read in a block of its size).
const BLOCK: usize = 32 * 1024;

/// One WebSocket connection (RFC 6455): [`recv`](Self::recv) and
/// [`send`](Self::send) whole messages, with Pings answered, the close
/// handshake done and every protocol violation failed with its close code
/// by the connection itself.
///
/// A message that arrived in one frame is handed over as `Bytes` split off
/// the read block, without a copy (its payload is unmasked where it lies);
/// only a fragmented message is gathered. A large payload is sent in one
/// vectored write with its frame head, without a copy.
///
/// On a server, [`WebSocketUpgrade`](super::WebSocketUpgrade) makes it; it
/// hears the server's graceful shutdown (the peer gets a Close with 1001)
/// and holds the connection's slot under the cap until dropped.
///
/// # Examples
///
/// ```
/// use ringstream::{ws::{Config, Message, Role, WebSocket}, Stream};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let (a, b) = tokio::io::duplex(4096);
/// let mut server = WebSocket::from_stream(Stream::new(a), Role::Server, Config::default());
/// let mut client = WebSocket::from_stream(Stream::new(b), Role::Client, Config::default());
/// server.send(Message::binary(vec![1, 2, 3])).await.unwrap();
/// server.send(Message::Close(None)).await.unwrap();
/// assert_eq!(client.recv().await.unwrap().unwrap(), Message::binary(vec![1, 2, 3]));
/// // The Close is answered (echoed) and returned, and then nothing more.
/// assert!(matches!(client.recv().await, Some(Ok(Message::Close(_)))));
/// assert!(client.recv().await.is_none());
/// # });
/// ```
pub struct WebSocket<T = UpgradedTransport> {
    pub(super) stream: Stream<T>,
    pub(super) decoder: Decoder,
    pub(super) config: Config,
    /// The server's stop signal, for a server-side connection.
    pub(super) stop: Option<watch::Receiver<bool>>,
    /// The message being received.
    incoming: Option<Incoming>,
    /// A frame's payload of this many bytes is being read: the read buffer
    /// is filled until it holds it whole, so that it is handed over in one
    /// piece.
    pub(super) want: usize,
    /// The bytes of that payload already decoded (unmasked, a text
    /// message's UTF-8 checked as they arrived), kept at the front of the
    /// read buffer until the rest arrives.
    held: usize,
    /// A Close was sent.
    pub(super) close_sent: bool,
    /// The peer's Close was received, or the connection failed: nothing
    /// more will be received.
    pub(super) done: bool,
    /// A Ping was sent for the idle check and not answered yet.
    pub(super) ping_outstanding: bool,
    /// The deadline of a write that could not complete at once, kept for
    /// the next one.
    pub(super) write_timer: Option<Pin<Box<Sleep>>>,
    /// The idle check's timer, and when the current wait for the peer
    /// began.
    pub(super) idle_timer: Option<Pin<Box<Sleep>>>,
    pub(super) idle_since: Option<tokio::time::Instant>,
    /// The waker the shutdown signal and the idle timer were last polled
    /// with: while the task waits with the same one, they need not be
    /// polled again (they wake it when they fire).
    waiting_as: Option<Waker>,
    /// Completes when the server begins to shut down (server side only).
    pub(super) stopping: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    /// What the receive side returns last, once its Close went out.
    pub(super) last: Option<Last>,
    /// A large payload given to the `Sink` side, and how much of it is
    /// written: it goes out uncopied behind its buffered head.
    pub(super) outgoing: Option<(Bytes, usize)>,
    /// permessage-deflate, when negotiated.
    pub(super) compression: Option<Box<Compression>>,
    /// The subprotocol the handshake selected (`Sec-WebSocket-Protocol`).
    pub(super) protocol: Option<HeaderValue>,
}

/// The last thing the receive side returns.
#[derive(Debug)]
pub(super) enum Last {
    /// The peer's Close, echoed.
    Message(Message),
    /// A violation, closed with its code.
    Error(ringstream_core::ws::Error),
}

impl<T> WebSocket<T> {
    /// The subprotocol the handshake selected (the `Sec-WebSocket-Protocol`
    /// of the `101`, see [`WebSocketUpgrade::protocols`]), as axum's
    /// `WebSocket::protocol`.
    ///
    /// [`WebSocketUpgrade::protocols`]: super::WebSocketUpgrade::protocols
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::ws::{Config, Role, WebSocket};
    /// use ringstream::Stream;
    ///
    /// let (io, _peer) = tokio::io::duplex(64);
    /// let socket = WebSocket::from_stream(Stream::new(io), Role::Server, Config::default());
    /// assert_eq!(socket.protocol(), None); // no handshake, no subprotocol
    /// ```
    pub fn protocol(&self) -> Option<&HeaderValue> {
        self.protocol.as_ref()
    }

    /// The same as [`protocol`](Self::protocol), under the name of
    /// [`WebSocketUpgrade::selected_protocol`].
    ///
    /// [`WebSocketUpgrade::selected_protocol`]: super::WebSocketUpgrade::selected_protocol
    pub fn selected_protocol(&self) -> Option<&HeaderValue> {
        self.protocol.as_ref()
    }
}

impl<T> std::fmt::Debug for WebSocket<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSocket")
            .field("close_sent", &self.close_sent)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl WebSocket<UpgradedTransport> {
    /// The server's side of an upgraded connection (without extensions).
    pub fn from_upgraded(upgraded: Upgraded, config: Config) -> WebSocket<UpgradedTransport> {
        WebSocket::from_upgraded_with(upgraded, config, None, None)
    }

    /// The server's side of an upgraded connection, with permessage-deflate
    /// when `deflate` was negotiated and the subprotocol `protocol` selected.
    pub(crate) fn from_upgraded_with(
        upgraded: Upgraded,
        config: Config,
        deflate: Option<DeflateParams>,
        protocol: Option<HeaderValue>,
    ) -> WebSocket<UpgradedTransport> {
        let (stream, stop) = upgraded.into_parts();
        let mut socket = WebSocket::from_stream(stream, Role::Server, config);
        if let Some(compression) = compression::for_params(
            deflate.as_ref(),
            Role::Server,
            config.limits.max_message_len,
        ) {
            socket.decoder = Decoder::new(Role::Server, config.limits).with_rsv1(true);
            socket.compression = Some(compression);
        }
        let mut waiting = stop.clone();
        socket.stopping = Some(Box::pin(async move {
            let _ = waiting.wait_for(|stopping| *stopping).await;
        }));
        socket.stop = Some(stop);
        socket.protocol = protocol;
        socket
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> WebSocket<T> {
    /// A WebSocket over `stream`, whose handshake is done, for `role`'s
    /// end (a server reads masked frames, a client unmasked ones). Frames
    /// are sent unmasked, as a server sends them: a client-role socket
    /// reads a server's frames, but what it sends is a server's frame too
    /// (RFC 6455 requires a client to mask its frames), so it suits tests
    /// and peers that accept that.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::ws::{Config, Message, Role, WebSocket};
    /// use ringstream::Stream;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let (a, b) = tokio::io::duplex(4096);
    /// let mut server = WebSocket::from_stream(Stream::new(a), Role::Server, Config::default());
    /// let mut client = WebSocket::from_stream(Stream::new(b), Role::Client, Config::default());
    /// server.send(Message::text("hello")).await.unwrap();
    /// let got = client.recv().await.unwrap().unwrap();
    /// assert_eq!(got.as_text(), Some("hello"));
    /// # });
    /// ```
    pub fn from_stream(mut stream: Stream<T>, role: Role, config: Config) -> WebSocket<T> {
        // Messages come one at a time, and a large one is read in a block
        // of its own size: small blocks keep a connection cheap, and cheap
        // to give back when it idles.
        stream.set_options(StreamOptions {
            minimum_read_size: BLOCK,
            minimum_write_size: BLOCK,
            ..*stream.options()
        });
        WebSocket {
            stream,
            decoder: Decoder::new(role, config.limits),
            config,
            stop: None,
            incoming: None,
            want: 0,
            held: 0,
            close_sent: false,
            done: false,
            ping_outstanding: false,
            write_timer: None,
            idle_timer: None,
            idle_since: None,
            waiting_as: None,
            stopping: None,
            last: None,
            outgoing: None,
            compression: None,
            protocol: None,
        }
    }

    /// The next message, as axum's `WebSocket::recv`: `Some(Ok(message))`,
    /// `Some(Err(error))` once when the connection fails, and `None` once
    /// it is done — after the peer's Close, which is returned first as
    /// [`Message::Close`], or after the error.
    ///
    /// Pings are answered with a Pong here, before they are returned. The
    /// peer's Close is answered with a Close that echoes its code and
    /// reason before it is returned. A protocol violation closes the
    /// connection with its close code (1002, 1007 or 1009) and is returned
    /// as [`Error::WebSocket`]. A server-side connection whose server
    /// begins to shut down sends a Close with 1001 (going away) and goes on
    /// receiving until the peer's Close.
    ///
    /// # Examples
    ///
    /// The loop of axum's examples:
    ///
    /// ```
    /// use ringstream::ws::{Message, WebSocket};
    ///
    /// async fn handle_socket(mut socket: WebSocket) {
    ///     while let Some(msg) = socket.recv().await {
    ///         let Ok(msg) = msg else {
    ///             return; // the client disconnected
    ///         };
    ///         if let Message::Text(text) = &msg {
    ///             println!("got {}", text.as_str());
    ///         }
    ///         if socket.send(msg).await.is_err() {
    ///             return;
    ///         }
    ///     }
    /// }
    /// # let _ = handle_socket;
    /// ```
    ///
    /// # Errors
    ///
    /// `Some(Err(..))`: [`Error::WebSocket`] for a protocol violation,
    /// [`Error::TimedOut`]`(`[`Timeout::WebSocketPing`]`)` when the peer
    /// did not answer the idle Ping
    /// within [`Config::idle_timeout`], [`Error::Closed`] when the peer
    /// ended the connection without a Close, and I/O errors.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe while it waits for bytes: what was read stays buffered;
    /// a message being gathered is kept.
    pub async fn recv(&mut self) -> Option<Result<Message, Error>> {
        poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// Poll form of [`recv`](Self::recv), which the
    /// [`futures_core::Stream`] implementation uses as well.
    ///
    /// # Errors
    ///
    /// As [`recv`](Self::recv).
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Message, Error>>> {
        if self.outgoing.is_some() {
            // A large payload left by a send that was dropped part-way (or
            // by the `Sink` side): it goes out before anything this side
            // queues (a Pong, a Close) lands behind its head.
            if let Err(e) = ready!(self.poll_write_outgoing(cx)) {
                self.done = true;
                return Poll::Ready(Some(Err(e)));
            }
        }
        loop {
            if self.last.is_some() {
                // A Close to echo, or a violation to close with: it goes
                // out before the message or error is returned.
                ready!(self.stream.poll_flush_all(cx))?;
                let _ = ready!(self.stream.poll_close_write(cx));
                return Poll::Ready(match self.last.take() {
                    Some(Last::Message(message)) => Some(Ok(message)),
                    Some(Last::Error(e)) => Some(Err(Error::WebSocket(e))),
                    None => None,
                });
            }
            if self.done {
                return Poll::Ready(None);
            }
            if self.incoming.is_none() {
                if self.stream.buffered().is_empty() && self.decoder.at_frame_start() {
                    ready!(self.poll_read_more(cx))?;
                    continue;
                }
                // A message in one frame, in one step.
                match self.decoder.decode_whole(self.stream.buffered_mut()) {
                    Ok(Some(whole)) => {
                        self.idle_since = None;
                        let data = self.take(whole.payload, whole.consumed);
                        return Poll::Ready(Some(Ok(match whole.kind {
                            MessageKind::Text => Message::Text(Utf8Bytes::from_checked(data)),
                            MessageKind::Binary => Message::Binary(data),
                        })));
                    }
                    Ok(None) => {}
                    Err(e) => {
                        self.fail_with(e);
                        continue;
                    }
                }
            }
            let undecoded = self.stream.buffered_mut().get_mut(self.held..);
            let decoded = match self.decoder.decode(undecoded.unwrap_or_default()) {
                Ok(decoded) => decoded,
                Err(e) => {
                    self.fail_with(e);
                    continue;
                }
            };
            let Some(event) = decoded.event else {
                self.stream.consume(decoded.consumed);
                ready!(self.poll_read_more(cx))?;
                continue;
            };
            self.idle_since = None;
            match event {
                Event::MessageStart {
                    kind,
                    len,
                    compressed,
                } => {
                    self.stream.consume(decoded.consumed);
                    if compressed {
                        if let Some(compression) = &mut self.compression {
                            compression.start(kind == MessageKind::Text);
                        }
                    }
                    self.incoming = Some(Incoming {
                        kind,
                        data: Gathered::Empty,
                        compressed,
                    });
                    // A frame's payload up to the message limit is
                    // gathered whole in the read buffer, so that it is
                    // handed over in one piece.
                    self.want = len
                        .and_then(|n| usize::try_from(n).ok())
                        .filter(|&n| n <= self.config.limits.max_message_len)
                        .unwrap_or(0);
                }
                Event::Data(range) => {
                    // Part of a payload gathered whole: decoded already
                    // (so that invalid UTF-8 fails the connection at once),
                    // it stays where it lies until the rest arrives.
                    if self.held + range.end < self.want {
                        self.held += range.end;
                        continue;
                    }
                    let start = if self.held > 0 { 0 } else { range.start };
                    let piece =
                        self.take(start..self.held + range.end, self.held + decoded.consumed);
                    self.held = 0;
                    self.want = 0;
                    let Some(incoming) = &mut self.incoming else {
                        continue;
                    };
                    if !incoming.compressed {
                        incoming.data.push(piece);
                        continue;
                    }
                    let inflated = match &mut self.compression {
                        Some(compression) => compression.push(&piece),
                        None => Ok(()),
                    };
                    if let Err(e) = inflated {
                        self.fail_with(e);
                    }
                }
                Event::MessageEnd => {
                    self.stream.consume(decoded.consumed);
                    self.want = 0;
                    if let Some(Incoming {
                        kind,
                        data,
                        compressed,
                    }) = self.incoming.take()
                    {
                        let data = match (&mut self.compression, compressed) {
                            (Some(compression), true) => match compression.finish() {
                                Ok(data) => data,
                                Err(e) => {
                                    self.fail_with(e);
                                    continue;
                                }
                            },
                            _ => data.into_bytes(),
                        };
                        return Poll::Ready(Some(Ok(match kind {
                            MessageKind::Text => Message::Text(Utf8Bytes::from_checked(data)),
                            MessageKind::Binary => Message::Binary(data),
                        })));
                    }
                }
                Event::Ping(range) => {
                    let payload = self.take(range, decoded.consumed);
                    if !self.close_sent {
                        // Sent with the next write or before the next read.
                        if let Ok(pong) = ControlFrame::pong(&payload) {
                            self.stream.buffer_write(pong.as_bytes());
                        }
                    }
                    return Poll::Ready(Some(Ok(Message::Ping(payload))));
                }
                Event::Pong(range) => {
                    self.ping_outstanding = false;
                    let payload = self.take(range, decoded.consumed);
                    return Poll::Ready(Some(Ok(Message::Pong(payload))));
                }
                Event::Close { code, reason } => {
                    // The decoder checked the reason's UTF-8 (a Close
                    // with an invalid one fails the connection with 1007).
                    let reason = Utf8Bytes::from_checked(self.take(reason, decoded.consumed));
                    self.done = true;
                    self.incoming = None;
                    // Echo the code and the reason (RFC 6455 §5.5.1); a
                    // Close without a code is answered with one without a
                    // code (1005, "no status", is never sent).
                    self.buffer_close(code.unwrap_or(CloseCode::NO_STATUS), &reason);
                    let frame = code.map(|code| CloseFrame {
                        code: code.as_u16(),
                        reason,
                    });
                    self.last = Some(Last::Message(Message::Close(frame)));
                }
            }
        }
    }

    /// Fails the connection for `e`: its Close goes out, then the error is
    /// returned.
    fn fail_with(&mut self, e: ringstream_core::ws::Error) {
        self.done = true;
        self.incoming = None;
        self.buffer_close(e.close_code(), "");
        self.last = Some(Last::Error(e));
    }

    /// Splits `range` of the buffered bytes off without a copy and drops
    /// the rest of the `consumed` bytes.
    /// Remembers the waker the task waits with (see `waiting_as`).
    fn wait_as(&mut self, cx: &Context<'_>, registered: bool) {
        if !registered {
            self.waiting_as = Some(cx.waker().clone());
        }
    }

    /// Whether the server's shutdown signal changed since the socket was
    /// made (or its sender is gone).
    fn stop_signalled(&self) -> bool {
        self.stop
            .as_ref()
            .is_some_and(|stop| stop.has_changed().unwrap_or(true))
    }

    fn take(&mut self, range: std::ops::Range<usize>, consumed: usize) -> Bytes {
        self.stream.consume(range.start);
        let piece = self.stream.split_buffered(range.len());
        self.stream.consume(consumed - range.end);
        piece
    }

    /// Reads more bytes, under the idle check and the server's shutdown.
    /// A connection with nothing buffered that has to wait for its peer
    /// holds no read block or write buffer meanwhile.
    fn poll_read_more(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        loop {
            let filled = self.stream.poll_fill_to(cx, self.want);
            let registered = self
                .waiting_as
                .as_ref()
                .is_some_and(|waker| waker.will_wake(cx.waker()));
            // The shutdown signal is polled when the connection starts to
            // wait with a new waker, or once it has changed (an atomic
            // load): a busy connection polls no future for it.
            if (filled.is_pending() && !registered) || self.stop_signalled() {
                if let Some(stopping) = &mut self.stopping {
                    if !self.close_sent && stopping.as_mut().poll(cx).is_ready() {
                        // The server is shutting down: tell the peer, and go
                        // on reading until its Close.
                        self.stopping = None;
                        self.buffer_close(CloseCode::GOING_AWAY, "server shutting down");
                        if filled.is_pending() {
                            // The next fill sends the Close first.
                            continue;
                        }
                    }
                }
            }
            match filled {
                Poll::Ready(Ok(0)) => {
                    self.done = true;
                    return Poll::Ready(match self.decoder.finish_eof() {
                        Ok(()) if self.close_sent => Ok(()),
                        Ok(()) => Err(Error::Closed),
                        Err(e) => Err(Error::WebSocket(e)),
                    });
                }
                Poll::Ready(Ok(_)) => return Poll::Ready(Ok(())),
                Poll::Ready(Err(e)) => {
                    self.done = true;
                    return Poll::Ready(Err(Error::Io(e)));
                }
                Poll::Pending => {}
            }
            if self.stream.buffered().is_empty() {
                self.stream.release_idle_buffers();
            }
            let Some(idle) = self.config.idle_timeout else {
                self.wait_as(cx, registered);
                return Poll::Pending;
            };
            // The idle deadline is set when the wait begins, not pushed
            // back by every message: a busy connection touches no timer.
            let now = tokio::time::Instant::now();
            let since = *self.idle_since.get_or_insert(now);
            let deadline = since + idle;
            let timer = self
                .idle_timer
                .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
            // Coarse: moved only once it is an eighth of the idle time off,
            // so a busy connection rarely touches the timer wheel.
            let current = timer.deadline();
            let moved = current + idle / 8 < deadline || current > deadline;
            if moved {
                timer.as_mut().reset(deadline);
            }
            // A timer polled with this waker wakes the task when it fires:
            // it is polled again only when moved or due.
            let due = now >= timer.deadline();
            if registered && !moved && !due {
                return Poll::Pending;
            }
            if timer.as_mut().poll(cx).is_pending() {
                self.wait_as(cx, registered);
                return Poll::Pending;
            }
            if self.ping_outstanding {
                self.done = true;
                return Poll::Ready(Err(Error::TimedOut(Timeout::WebSocketPing)));
            }
            // Silent for the idle time: ask whether the peer is still there.
            self.ping_outstanding = true;
            self.idle_since = Some(now);
            if let Ok(ping) = ControlFrame::ping(b"") {
                self.stream.buffer_write(ping.as_bytes());
            }
        }
    }
}
