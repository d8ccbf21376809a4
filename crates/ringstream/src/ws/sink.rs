//! [`WebSocket`] as a futures `Stream` of messages and a `Sink` of them,
//! so that the ecosystem's combinators (`split`, `forward`, `select`) work
//! with it.

use std::pin::Pin;
use std::task::{ready, Context, Poll};

use ringstream_core::ws::CloseCode;
use tokio::io::{AsyncRead, AsyncWrite};

use super::{Message, WebSocket};
use crate::error::Error;

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
        this.queue(message)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        self.get_mut().poll_flush_sink(cx)
    }

    /// Sends a Close (1000) if none was sent, flushes, and ends the
    /// sending side.
    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        let this = self.get_mut();
        // A payload kept aside goes out before the Close is queued behind
        // its head.
        ready!(this.poll_write_outgoing(cx))?;
        this.buffer_close(CloseCode::NORMAL, "");
        ready!(this.poll_flush_sink(cx))?;
        Poll::Ready(Ok(ready!(this.stream.poll_close_write(cx))?))
    }
}
