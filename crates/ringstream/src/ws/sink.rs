//! [`WebSocket`] as a futures `Stream` of messages and a `Sink` of them,
//! so that the ecosystem's combinators (`split`, `forward`, `select`) work
//! with it.

use std::pin::Pin;
use std::task::{ready, Context, Poll};

use ringstream_core::ws::{CloseCode, ControlFrame, MessageKind};
use tokio::io::{AsyncRead, AsyncWrite};

use super::socket::SMALL_PAYLOAD;
use super::{Message, WebSocket};
use crate::error::Error;

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
        self.get_mut().poll_recv(cx)
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> futures_core::FusedStream for WebSocket<T> {
    /// Whether the receiving side is done: [`poll_recv`](WebSocket::poll_recv)
    /// returns `None` from now on.
    fn is_terminated(&self) -> bool {
        self.done && self.last.is_none()
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
            Message::Text(text) => (MessageKind::Text, text.into_bytes()),
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
                    Some(frame) => this.buffer_close(frame.close_code(), &frame.reason),
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
