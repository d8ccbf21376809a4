//! [`WebSocket`]: messages in and out over a [`Stream`], framed by the
//! core's codec.

use std::future::{poll_fn, Future};
use std::pin::{pin, Pin};
use std::task::{ready, Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use ringstream_core::ws::{
    message_head, CloseCode, ClosePayload, ControlFrame, Decoder, Event, FrameHead, FrameHeader,
    MessageKind, Role, MAX_CLOSE_REASON_LEN,
};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;
use tokio::time::Sleep;

use super::compression::{self, Compression};
use super::{CloseFrame, Config, DeflateParams, Message};
use crate::error::Error;
use crate::server::upgrade::{Io, Upgraded};
use crate::stream::{Stream, StreamOptions};

/// Payloads up to this many bytes are copied into the write buffer behind
/// their frame head; larger ones go out uncopied in one vectored write
/// with it.
const SMALL_PAYLOAD: usize = 4 * 1024;

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
pub struct WebSocket<T = Io> {
    stream: Stream<T>,
    decoder: Decoder,
    config: Config,
    /// The server's stop signal, for a server-side connection.
    stop: Option<watch::Receiver<bool>>,
    /// The message being received.
    incoming: Option<Incoming>,
    /// A frame's payload of this many bytes is being read: the read buffer
    /// is filled until it holds it whole, so that it is handed over in one
    /// piece.
    want: usize,
    /// A Close was sent.
    close_sent: bool,
    /// The peer's Close was received, or the connection failed: nothing
    /// more will be received.
    done: bool,
    /// A Ping was sent for the idle check and not answered yet.
    ping_outstanding: bool,
    /// The deadline of a write that could not complete at once, kept for
    /// the next one.
    write_timer: Option<Pin<Box<Sleep>>>,
    /// The idle check's timer, and when the current wait for the peer
    /// began.
    idle_timer: Option<Pin<Box<Sleep>>>,
    idle_since: Option<tokio::time::Instant>,
    /// Completes when the server begins to shut down (server side only).
    stopping: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    /// What the receive side returns last, once its Close went out.
    last: Option<Last>,
    /// A large payload given to the `Sink` side, and how much of it is
    /// written: it goes out uncopied behind its buffered head.
    outgoing: Option<(Bytes, usize)>,
    /// permessage-deflate, when negotiated.
    compression: Option<Box<Compression>>,
}

/// The last thing the receive side returns.
#[derive(Debug)]
enum Last {
    /// The peer's Close, echoed.
    Message(Message),
    /// A violation, closed with its code.
    Error(ringstream_core::ws::Error),
}

/// A message on its way in.
#[derive(Debug)]
struct Incoming {
    kind: MessageKind,
    data: Gathered,
    /// The message is compressed: its pieces go to the inflater.
    compressed: bool,
}

/// The data of a message so far: one piece (not copied) or several
/// (gathered).
#[derive(Debug)]
enum Gathered {
    Empty,
    One(Bytes),
    Many(BytesMut),
}

impl Gathered {
    fn push(&mut self, piece: Bytes) {
        *self = match std::mem::replace(self, Gathered::Empty) {
            Gathered::Empty => Gathered::One(piece),
            Gathered::One(first) => {
                let mut many = BytesMut::with_capacity(first.len() + piece.len());
                many.extend_from_slice(&first);
                many.extend_from_slice(&piece);
                Gathered::Many(many)
            }
            Gathered::Many(mut many) => {
                many.extend_from_slice(&piece);
                Gathered::Many(many)
            }
        };
    }

    fn into_bytes(self) -> Bytes {
        match self {
            Gathered::Empty => Bytes::new(),
            Gathered::One(one) => one,
            Gathered::Many(many) => many.freeze(),
        }
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

impl WebSocket<Io> {
    /// The server's side of an upgraded connection (without extensions).
    pub fn from_upgraded(upgraded: Upgraded, config: Config) -> WebSocket<Io> {
        WebSocket::from_upgraded_with(upgraded, config, None)
    }

    /// The server's side of an upgraded connection, with permessage-deflate
    /// when `deflate` was negotiated.
    pub(crate) fn from_upgraded_with(
        upgraded: Upgraded,
        config: Config,
        deflate: Option<DeflateParams>,
    ) -> WebSocket<Io> {
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
            close_sent: false,
            done: false,
            ping_outstanding: false,
            write_timer: None,
            idle_timer: None,
            idle_since: None,
            stopping: None,
            last: None,
            outgoing: None,
            compression: None,
        }
    }

    /// The next message; `None` once the connection is closed (after the
    /// peer's Close, which is returned first as [`Message::Close`]).
    ///
    /// Pings are answered with a Pong here, before they are returned. A
    /// protocol violation closes the connection with its close code (1002,
    /// 1007 or 1009) and is returned as [`Error::WebSocket`]. A server-side
    /// connection whose server begins to shut down sends a Close with 1001
    /// (going away) and goes on receiving until the peer's Close.
    ///
    /// # Errors
    ///
    /// [`Error::WebSocket`] for a protocol violation, [`Error::TimedOut`]
    /// when the peer did not answer the idle Ping within
    /// [`Config::idle_timeout`], and I/O errors.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe while it waits for bytes: what was read stays buffered;
    /// a message being gathered is kept.
    pub async fn recv(&mut self) -> Result<Option<Message>, Error> {
        poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// Poll form of [`recv`](Self::recv), which the
    /// [`futures_core::Stream`] implementation uses as well.
    ///
    /// # Errors
    ///
    /// As [`recv`](Self::recv).
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Result<Option<Message>, Error>> {
        loop {
            if self.last.is_some() {
                // A Close to echo, or a violation to close with: it goes
                // out before the message or error is returned.
                ready!(self.stream.poll_flush_all(cx))?;
                let _ = ready!(self.stream.poll_close_write(cx));
                return Poll::Ready(match self.last.take() {
                    Some(Last::Message(message)) => Ok(Some(message)),
                    Some(Last::Error(e)) => Err(Error::WebSocket(e)),
                    None => Ok(None),
                });
            }
            if self.done {
                return Poll::Ready(Ok(None));
            }
            if self.want > 0 && self.stream.buffered().len() < self.want {
                ready!(self.poll_read_more(cx))?;
                continue;
            }
            let decoded = match self.decoder.decode(self.stream.buffered_mut()) {
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
                    // A frame's payload up to the message limit is read
                    // whole before it is decoded, so that it is handed
                    // over in one piece.
                    self.want = len
                        .and_then(|n| usize::try_from(n).ok())
                        .filter(|&n| n <= self.config.limits.max_message_len)
                        .unwrap_or(0);
                }
                Event::Data(range) => {
                    self.want = 0;
                    let piece = self.take(range, decoded.consumed);
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
                        return Poll::Ready(Ok(Some(match kind {
                            MessageKind::Text => Message::Text(data),
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
                    return Poll::Ready(Ok(Some(Message::Ping(payload))));
                }
                Event::Pong(range) => {
                    self.ping_outstanding = false;
                    let payload = self.take(range, decoded.consumed);
                    return Poll::Ready(Ok(Some(Message::Pong(payload))));
                }
                Event::Close { code, reason } => {
                    let reason = self.take(reason, decoded.consumed);
                    let reason = String::from_utf8_lossy(&reason).into_owned();
                    self.done = true;
                    self.incoming = None;
                    // Echo the code (RFC 6455 §5.5.1).
                    self.buffer_close(code.unwrap_or(CloseCode::NORMAL), "");
                    let frame = code.map(|code| CloseFrame { code, reason });
                    self.last = Some(Last::Message(Message::Close(frame)));
                }
            }
        }
    }

    /// The payload to send for a message (compressed when permessage-deflate
    /// is on and the message is worth it) and its frame head.
    fn frame_head(&mut self, kind: MessageKind, data: Bytes) -> (Bytes, FrameHead) {
        match &mut self.compression {
            Some(compression) => {
                let (data, compressed) = compression.compress(data);
                let head = FrameHeader::new(kind.opcode(), data.len() as u64)
                    .with_rsv1(compressed)
                    .encode();
                (data, head)
            }
            None => {
                let head = message_head(kind, data.len() as u64);
                (data, head)
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
            if let Some(stopping) = &mut self.stopping {
                if !self.close_sent && stopping.as_mut().poll(cx).is_ready() {
                    // The server is shutting down: tell the peer, and go on
                    // reading until its Close.
                    self.stopping = None;
                    self.buffer_close(CloseCode::GOING_AWAY, "server shutting down");
                }
            }
            match self.stream.poll_fill_to(cx, self.want) {
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
            if current + idle / 8 < deadline || current > deadline {
                timer.as_mut().reset(deadline);
            }
            if timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            if self.ping_outstanding {
                self.done = true;
                return Poll::Ready(Err(Error::TimedOut("websocket ping")));
            }
            // Silent for the idle time: ask whether the peer is still there.
            self.ping_outstanding = true;
            self.idle_since = Some(now);
            if let Ok(ping) = ControlFrame::ping(b"") {
                self.stream.buffer_write(ping.as_bytes());
            }
        }
    }

    /// Sends `message` and flushes it.
    ///
    /// A peer that does not take it within [`Config::write_timeout`] (one
    /// that stopped reading) fails the send and the connection: a slow
    /// client never holds its task, its slot or its buffers for longer.
    ///
    /// # Errors
    ///
    /// [`Error::Closed`] after a Close was sent; a Ping or Pong over 125
    /// bytes is [`Error::WebSocket`]; [`Error::TimedOut`] at the write
    /// timeout; I/O errors.
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: part of the message may have been sent.
    pub async fn send(&mut self, message: Message) -> Result<(), Error> {
        let mut timer = self.write_timer.take();
        let limit = self.config.write_timeout;
        let sent = bounded(&mut timer, limit, async {
            self.feed(message).await?;
            self.stream.flush().await
        })
        .await;
        self.write_timer = timer;
        if sent.is_err() {
            self.done = true;
        }
        sent
    }

    /// Queues `message` in the write buffer (a large payload is written at
    /// once, with what is buffered before it); [`flush`](Self::flush)
    /// sends the rest. Feeding several messages and flushing once sends
    /// them in as few writes as possible.
    ///
    /// # Errors
    ///
    /// As [`send`](Self::send).
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe.
    pub async fn feed(&mut self, message: Message) -> Result<(), Error> {
        if self.close_sent {
            return Err(Error::Closed);
        }
        match message {
            Message::Text(data) => self.feed_data(MessageKind::Text, data).await,
            Message::Binary(data) => self.feed_data(MessageKind::Binary, data).await,
            Message::Ping(data) => {
                let frame = ControlFrame::ping(&data).map_err(Error::WebSocket)?;
                self.stream.buffer_write(frame.as_bytes());
                Ok(())
            }
            Message::Pong(data) => {
                let frame = ControlFrame::pong(&data).map_err(Error::WebSocket)?;
                self.stream.buffer_write(frame.as_bytes());
                Ok(())
            }
            Message::Close(frame) => {
                let (code, reason) = match &frame {
                    Some(frame) => (frame.code, frame.reason.as_str()),
                    None => (CloseCode::NORMAL, ""),
                };
                self.write_close(code, reason).await
            }
        }
    }

    /// Sends a frame encoded once for many clients (see
    /// [`Broadcaster`](super::Broadcaster)), under the write timeout as
    /// [`send`](Self::send).
    ///
    /// # Errors
    ///
    /// As [`send`](Self::send).
    pub async fn send_frame(&mut self, frame: &super::Frame) -> Result<(), Error> {
        if self.close_sent {
            return Err(Error::Closed);
        }
        let mut timer = self.write_timer.take();
        let limit = self.config.write_timeout;
        let bytes = frame.0.clone();
        let sent = bounded(&mut timer, limit, async {
            if bytes.len() <= SMALL_PAYLOAD {
                self.stream.buffer_write(&bytes);
            } else {
                self.write_uncopied(bytes).await?;
            }
            self.stream.flush().await
        })
        .await;
        self.write_timer = timer;
        if sent.is_err() {
            self.done = true;
        }
        sent
    }

    async fn feed_data(&mut self, kind: MessageKind, data: Bytes) -> Result<(), Error> {
        let (data, head) = self.frame_head(kind, data);
        self.stream.buffer_write(head.as_bytes());
        if data.len() <= SMALL_PAYLOAD {
            self.stream.buffer_write(&data);
            Ok(())
        } else {
            self.write_uncopied(data).await
        }
    }

    /// Writes what is buffered and then `data` in vectored writes: the
    /// payload is never copied into the write buffer.
    async fn write_uncopied(&mut self, data: Bytes) -> Result<(), Error> {
        let mut written = 0;
        while let Some(rest) = data.get(written..).filter(|rest| !rest.is_empty()) {
            let slices = [std::io::IoSlice::new(rest)];
            written += poll_fn(|cx| self.stream.poll_write_unbuffered(cx, &slices)).await?;
        }
        Ok(())
    }

    /// Sends what is buffered.
    ///
    /// # Errors
    ///
    /// I/O errors; [`Error::TimedOut`] when the peer takes nothing for
    /// [`Config::write_timeout`].
    pub async fn flush(&mut self) -> Result<(), Error> {
        let mut timer = self.write_timer.take();
        let limit = self.config.write_timeout;
        let flushed = bounded(&mut timer, limit, self.stream.flush()).await;
        self.write_timer = timer;
        flushed
    }

    /// Starts the close handshake with `code` and `reason` (cut to 123
    /// bytes at a character boundary), then receives until the peer's
    /// Close or the end of the connection, for at most `linger`, and closes
    /// the connection.
    ///
    /// # Errors
    ///
    /// I/O errors while sending the Close.
    pub async fn close(
        &mut self,
        code: CloseCode,
        reason: &str,
        linger: Duration,
    ) -> Result<(), Error> {
        if !self.close_sent {
            self.write_close(code, reason).await?;
        }
        let _ = tokio::time::timeout(linger, async {
            while let Ok(Some(_)) = self.recv().await {}
        })
        .await;
        self.done = true;
        let _ = self.stream.close().await;
        Ok(())
    }

    /// Queues a Close frame (once); it goes out with the next flush.
    fn buffer_close(&mut self, code: CloseCode, reason: &str) {
        if self.close_sent {
            return;
        }
        self.close_sent = true;
        let mut cut = reason.len().min(MAX_CLOSE_REASON_LEN);
        while !reason.is_char_boundary(cut) {
            cut -= 1;
        }
        let reason = reason.get(..cut).unwrap_or_default();
        let payload = ClosePayload::new(code, reason).unwrap_or(ClosePayload::EMPTY);
        self.stream
            .buffer_write(ControlFrame::close(&payload).as_bytes());
    }

    /// Writes and flushes a Close frame (once).
    async fn write_close(&mut self, code: CloseCode, reason: &str) -> Result<(), Error> {
        self.buffer_close(code, reason);
        self.flush().await
    }

    /// Whether the server this connection belongs to is shutting down.
    pub fn is_stopping(&self) -> bool {
        self.stop.as_ref().is_some_and(|stop| *stop.borrow())
    }

    /// The stream under the WebSocket.
    pub fn get_ref(&self) -> &Stream<T> {
        &self.stream
    }

    /// The stream under the WebSocket, mutably: bytes written to it
    /// directly bypass the framing.
    pub fn get_mut(&mut self) -> &mut Stream<T> {
        &mut self.stream
    }
}

/// Runs `write`; when it cannot complete at once, for at most `limit`. The
/// timer is made (and kept in `timer`) only for a write that has to wait,
/// so a write that completes at once costs no timer.
async fn bounded<F>(
    timer: &mut Option<Pin<Box<Sleep>>>,
    limit: Option<Duration>,
    write: F,
) -> Result<(), Error>
where
    F: Future<Output = Result<(), Error>>,
{
    let mut write = pin!(write);
    let mut armed = false;
    poll_fn(|cx| {
        if let Poll::Ready(done) = write.as_mut().poll(cx) {
            return Poll::Ready(done);
        }
        let Some(limit) = limit else {
            return Poll::Pending;
        };
        let deadline = tokio::time::Instant::now() + limit;
        let sleep = timer.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if !armed {
            armed = true;
            sleep.as_mut().reset(deadline);
        }
        match sleep.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(Error::TimedOut("websocket write"))),
            Poll::Pending => Poll::Pending,
        }
    })
    .await
}

impl<T: AsyncRead + AsyncWrite + Unpin> WebSocket<T> {
    /// Writes what the `Sink` side holds: a large payload, then the buffer.
    fn poll_flush_sink(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        while let Some((payload, written)) = &mut self.outgoing {
            let rest = payload.get(*written..).unwrap_or_default();
            if rest.is_empty() {
                self.outgoing = None;
                break;
            }
            let slices = [std::io::IoSlice::new(rest)];
            let n = ready!(self.stream.poll_write_unbuffered(cx, &slices))?;
            *written += n;
        }
        Poll::Ready(Ok(ready!(self.stream.poll_flush_all(cx))?))
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> futures_core::Stream for WebSocket<T> {
    type Item = Result<Message, Error>;

    /// [`poll_recv`](WebSocket::poll_recv): `None` once the connection is
    /// closed. With `futures_util::StreamExt::split` the socket splits into
    /// a receiving and a sending half.
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().poll_recv(cx).map(Result::transpose)
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> futures_sink::Sink<Message> for WebSocket<T> {
    type Error = Error;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        let this = self.get_mut();
        if this.outgoing.is_some() {
            ready!(this.poll_flush_sink(cx))?;
        }
        Poll::Ready(Ok(()))
    }

    /// Queues `message` as [`feed`](WebSocket::feed) does; a large
    /// payload is written by the next flush without a copy.
    fn start_send(self: Pin<&mut Self>, message: Message) -> Result<(), Error> {
        let this = self.get_mut();
        if this.close_sent {
            return Err(Error::Closed);
        }
        if this.outgoing.is_some() {
            // The payload before it has not gone out: `poll_ready` first.
            return Err(Error::Io(std::io::Error::other(
                "start_send without poll_ready",
            )));
        }
        let (kind, data) = match message {
            Message::Text(data) => (MessageKind::Text, data),
            Message::Binary(data) => (MessageKind::Binary, data),
            Message::Ping(payload) => {
                let frame = ControlFrame::ping(&payload).map_err(Error::WebSocket)?;
                this.stream.buffer_write(frame.as_bytes());
                return Ok(());
            }
            Message::Pong(payload) => {
                let frame = ControlFrame::pong(&payload).map_err(Error::WebSocket)?;
                this.stream.buffer_write(frame.as_bytes());
                return Ok(());
            }
            Message::Close(frame) => {
                match frame {
                    Some(frame) => this.buffer_close(frame.code, &frame.reason),
                    None => this.buffer_close(CloseCode::NORMAL, ""),
                }
                return Ok(());
            }
        };
        let (data, head) = this.frame_head(kind, data);
        this.stream.buffer_write(head.as_bytes());
        if data.len() <= SMALL_PAYLOAD {
            this.stream.buffer_write(&data);
        } else {
            this.outgoing = Some((data, 0));
        }
        Ok(())
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        self.get_mut().poll_flush_sink(cx)
    }

    /// Sends a Close (1000) if none was sent, flushes, and ends the
    /// sending side.
    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        let this = self.get_mut();
        this.buffer_close(CloseCode::NORMAL, "");
        ready!(this.poll_flush_sink(cx))?;
        Poll::Ready(Ok(ready!(this.stream.poll_close_write(cx))?))
    }
}
