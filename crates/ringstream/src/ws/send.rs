//! The sending side of a [`WebSocket`]: messages framed (and compressed
//! when permessage-deflate is on), written under the write timeout, and the
//! close handshake.

use std::future::{poll_fn, Future};
use std::pin::{pin, Pin};
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use ringstream_core::ws::{
    message_head, CloseCode, ClosePayload, ControlFrame, FrameHead, FrameHeader, MessageKind,
    MAX_CLOSE_REASON_LEN,
};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::Sleep;

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
    /// # Errors
    ///
    /// [`Error::Closed`] after a Close was sent; a Ping or Pong over 125
    /// bytes is [`Error::WebSocket`];
    /// [`Error::TimedOut`]`(`[`Timeout::WebSocketWrite`]`)` at the write
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
            Message::Text(text) => self.feed_data(MessageKind::Text, text.into_bytes()).await,
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
                    Some(frame) => (frame.close_code(), frame.reason.as_str()),
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
    /// I/O errors; [`Error::TimedOut`]`(`[`Timeout::WebSocketWrite`]`)`
    /// when the peer takes nothing for
    /// [`Config::write_timeout`](super::Config::write_timeout).
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
            Poll::Ready(()) => Poll::Ready(Err(Error::TimedOut(Timeout::WebSocketWrite))),
            Poll::Pending => Poll::Pending,
        }
    })
    .await
}
