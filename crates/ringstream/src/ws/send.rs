//! The sending side of a [`WebSocket`]: messages framed (and compressed
//! when permessage-deflate is on), written under the write timeout, and the
//! close handshake.

use std::future::{poll_fn, Future};
use std::task::{ready, Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use ringstream_core::ws::{
    message_head, CloseCode, ClosePayload, ControlFrame, FrameHead, FrameHeader, MessageKind,
    MAX_CLOSE_REASON_LEN,
};
use tokio::io::{AsyncRead, AsyncWrite};

use super::socket::SMALL_PAYLOAD;
use super::{Message, WebSocket};
use crate::error::{Error, Timeout};
use crate::stream::Stream;

impl<T: AsyncRead + AsyncWrite + Unpin> WebSocket<T> {
    /// The payload to send for a message (compressed when permessage-deflate
    /// is on and the message is worth it) and its frame head.
    pub(super) fn frame_head(&mut self, kind: MessageKind, data: Bytes) -> (Bytes, FrameHead) {
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

    /// Sends `message` and flushes it.
    ///
    /// A peer that does not take it within [`Config::write_timeout`](super::Config::write_timeout) (one
    /// that stopped reading) fails the send and the connection: a slow
    /// client never holds its task, its slot or its buffers for longer.
    ///
    /// The future is a few words: a handler that awaits `send` in its
    /// loop (as axum's examples do) keeps its task small while it waits in
    /// [`recv`](Self::recv).
    ///
    /// # Errors
    ///
    /// [`Error::Closed`] after a Close was sent; a Ping or Pong over 125
    /// bytes is [`Error::WebSocket`];
    /// [`Error::TimedOut`]`(`[`Timeout::WebSocketWrite`]`)` at the write
    /// timeout; I/O errors.
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe, but dropping it never sends part of a message
    /// alone or cuts a frame. The message is queued whole in one step:
    /// framed into the socket's write buffer (a payload over 4 KiB kept
    /// aside, to be written uncopied behind its head), in the first poll,
    /// or, when a payload queued earlier is still being written, in the
    /// poll that finishes it. Dropped before that step, nothing of the
    /// message is sent. Dropped after it, the message stays queued, and
    /// what of it was not written yet goes out, in order, with the next
    /// [`send`](Self::send), [`feed`](Self::feed),
    /// [`send_frame`](Self::send_frame), [`flush`](Self::flush),
    /// [`close`](Self::close) or [`recv`](Self::recv) (which writes what
    /// is queued before it reads): do not send it again. The write timeout
    /// starts afresh with each call.
    pub async fn send(&mut self, message: Message) -> Result<(), Error> {
        let mut message = Some(message);
        let mut armed = false;
        let sent =
            poll_fn(|cx| self.poll_send_with(cx, &mut message, &mut armed, Self::queue)).await;
        if sent.is_err() {
            self.done = true;
        }
        sent
    }

    /// Queues `message` in the write buffer (a large payload is written at
    /// once, with what is buffered before it); [`flush`](Self::flush)
    /// sends the rest. Feeding several messages and flushing once sends
    /// them in as few writes as possible. A Close is flushed at once.
    ///
    /// # Errors
    ///
    /// As [`send`](Self::send).
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe, but dropping it never cuts a frame. Dropped while
    /// a payload queued earlier is being written, nothing of the message
    /// is queued; after that, the message is queued whole, and what of it
    /// was not written yet goes out, in order, with the next write, flush
    /// or receive, as with [`send`](Self::send).
    pub async fn feed(&mut self, message: Message) -> Result<(), Error> {
        if self.close_sent {
            return Err(Error::Closed);
        }
        let close = matches!(message, Message::Close(_));
        poll_fn(|cx| self.poll_write_outgoing(cx)).await?;
        self.queue(message)?;
        poll_fn(|cx| self.poll_write_outgoing(cx)).await?;
        if close {
            self.flush().await?;
        }
        Ok(())
    }

    /// Sends a frame encoded once for many clients (see
    /// [`Broadcaster`](super::Broadcaster)), under the write timeout as
    /// [`send`](Self::send).
    ///
    /// # Errors
    ///
    /// As [`send`](Self::send).
    ///
    /// # Cancel safety
    ///
    /// As [`send`](Self::send): not cancel safe, but dropping it never
    /// cuts the frame. The frame is queued whole in one step (copied into
    /// the write buffer, or over 4 KiB kept aside uncopied), in the first
    /// poll or in the one that finishes writing a payload queued earlier.
    /// Dropped before that step, nothing of it is sent; dropped after it,
    /// what of it was not written yet goes out, in order, with the next
    /// write, flush or receive: do not send it again.
    pub async fn send_frame(&mut self, frame: &super::Frame) -> Result<(), Error> {
        if self.close_sent {
            return Err(Error::Closed);
        }
        let mut frame = Some(frame);
        let mut armed = false;
        let sent = poll_fn(|cx| {
            self.poll_send_with(cx, &mut frame, &mut armed, |this, frame| {
                this.queue_payload(frame.0.clone());
                Ok(())
            })
        })
        .await;
        if sent.is_err() {
            self.done = true;
        }
        sent
    }

    /// Frames `message` into the write buffer: a payload up to
    /// [`SMALL_PAYLOAD`] bytes is copied behind its head, a larger one is
    /// kept in `outgoing`, to be written uncopied behind the buffered
    /// bytes ([`poll_write_outgoing`](Self::poll_write_outgoing)). The
    /// caller has written any earlier `outgoing` first.
    pub(super) fn queue(&mut self, message: Message) -> Result<(), Error> {
        if self.close_sent {
            return Err(Error::Closed);
        }
        let (kind, data) = match message {
            Message::Text(text) => (MessageKind::Text, text.into_bytes()),
            Message::Binary(data) => (MessageKind::Binary, data),
            Message::Ping(payload) => {
                let frame = ControlFrame::ping(&payload).map_err(Error::WebSocket)?;
                self.stream.buffer_write(frame.as_bytes());
                return Ok(());
            }
            Message::Pong(payload) => {
                let frame = ControlFrame::pong(&payload).map_err(Error::WebSocket)?;
                self.stream.buffer_write(frame.as_bytes());
                return Ok(());
            }
            Message::Close(frame) => {
                match frame {
                    Some(frame) => self.buffer_close(frame.close_code(), &frame.reason),
                    None => self.buffer_close(CloseCode::NORMAL, ""),
                }
                return Ok(());
            }
        };
        let (data, head) = self.frame_head(kind, data);
        self.stream.buffer_write(head.as_bytes());
        self.queue_payload(data);
        Ok(())
    }

    /// Queues bytes that follow what is buffered: copied when small, else
    /// kept in `outgoing` to go out uncopied.
    fn queue_payload(&mut self, data: Bytes) {
        if data.len() <= SMALL_PAYLOAD {
            self.stream.buffer_write(&data);
        } else {
            self.outgoing = Some((data, 0));
        }
    }

    /// The body of [`send`](Self::send) and
    /// [`send_frame`](Self::send_frame): anything queued earlier is written
    /// first, then `pending` is queued (once) and everything flushed, all
    /// under one write deadline.
    fn poll_send_with<M>(
        &mut self,
        cx: &mut Context<'_>,
        pending: &mut Option<M>,
        armed: &mut bool,
        queue: fn(&mut Self, M) -> Result<(), Error>,
    ) -> Poll<Result<(), Error>> {
        if pending.is_some() {
            if self.outgoing.is_some() {
                ready!(self.poll_bounded(cx, armed, Self::poll_write_outgoing))?;
            }
            if let Some(message) = pending.take() {
                queue(self, message)?;
            }
        }
        self.poll_bounded(cx, armed, Self::poll_flush_sink)
    }

    /// Writes the large payload kept aside (`outgoing`), behind what is
    /// buffered before it, in vectored writes: it is never copied.
    pub(super) fn poll_write_outgoing(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        while let Some((payload, written)) = &mut self.outgoing {
            let rest = payload.get(*written..).unwrap_or_default();
            if rest.is_empty() {
                break;
            }
            let slices = [std::io::IoSlice::new(rest)];
            match ready!(self.stream.poll_write_unbuffered(cx, &slices)) {
                Ok(n) => *written += n,
                Err(e) => {
                    // The stream is broken: nothing more will go out.
                    self.outgoing = None;
                    return Poll::Ready(Err(e.into()));
                }
            }
        }
        self.outgoing = None;
        Poll::Ready(Ok(()))
    }

    /// Writes everything queued (the payload kept aside, then the buffer)
    /// and flushes the transport.
    pub(super) fn poll_flush_sink(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        ready!(self.poll_write_outgoing(cx))?;
        Poll::Ready(Ok(ready!(self.stream.poll_flush_all(cx))?))
    }

    /// Polls `write` under [`Config::write_timeout`](super::Config::write_timeout):
    /// the deadline is set when it first has to wait (`armed`), so a write
    /// that completes at once costs no timer; the timer is kept for the
    /// next write that waits.
    fn poll_bounded(
        &mut self,
        cx: &mut Context<'_>,
        armed: &mut bool,
        write: fn(&mut Self, &mut Context<'_>) -> Poll<Result<(), Error>>,
    ) -> Poll<Result<(), Error>> {
        if let Poll::Ready(done) = write(self, cx) {
            return Poll::Ready(done);
        }
        let Some(limit) = self.config.write_timeout else {
            return Poll::Pending;
        };
        if !*armed {
            *armed = true;
            let deadline = tokio::time::Instant::now() + limit;
            match &mut self.write_timer {
                Some(timer) => timer.as_mut().reset(deadline),
                None => self.write_timer = Some(Box::pin(tokio::time::sleep_until(deadline))),
            }
        }
        let Some(timer) = &mut self.write_timer else {
            return Poll::Pending;
        };
        ready!(timer.as_mut().poll(cx));
        Poll::Ready(Err(Error::TimedOut(Timeout::WebSocketWrite)))
    }

    /// Sends what is queued.
    ///
    /// # Errors
    ///
    /// I/O errors; [`Error::TimedOut`]`(`[`Timeout::WebSocketWrite`]`)`
    /// when the peer takes nothing for
    /// [`Config::write_timeout`](super::Config::write_timeout).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: nothing is lost or cut. What was not written stays
    /// queued, in order, and goes out with the next write, flush or
    /// receive; the write timeout starts afresh with the next call.
    pub async fn flush(&mut self) -> Result<(), Error> {
        let mut armed = false;
        poll_fn(|cx| self.poll_bounded(cx, &mut armed, Self::poll_flush_sink)).await
    }

    /// Starts the close handshake with `code` and `reason` (cut to 123
    /// bytes at a character boundary), then receives until the peer's
    /// Close or the end of the connection, for at most `linger`, and closes
    /// the connection.
    ///
    /// # Errors
    ///
    /// I/O errors while sending the Close.
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: dropped part-way, the connection is left half
    /// closed, never with a frame cut. Dropped while the Close goes out,
    /// the Close stays queued and goes out with the next write, flush or
    /// receive; it is queued once, so calling `close` again does not send
    /// a second one and goes on to wait for the peer's. Dropped while it
    /// waits for the peer's Close, the messages that arrived meanwhile were
    /// discarded (as `close` discards them) and the connection is still
    /// open: call `close` again, with the time left to wait, or drop the
    /// socket. Dropped while the stream is being shut down, the stream
    /// stays open ([`Stream::close`] is cancel safe) until a later `close`
    /// completes or the socket is dropped.
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
            while let Some(Ok(_)) = self.recv().await {}
        })
        .await;
        self.done = true;
        let _ = self.stream.close().await;
        Ok(())
    }

    /// Queues a Close frame (once); it goes out with the next flush.
    pub(super) fn buffer_close(&mut self, code: CloseCode, reason: &str) {
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
        // A payload kept aside goes out before the Close is queued behind
        // its head.
        if self.outgoing.is_some() {
            let mut armed = false;
            poll_fn(|cx| self.poll_bounded(cx, &mut armed, Self::poll_write_outgoing)).await?;
        }
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
