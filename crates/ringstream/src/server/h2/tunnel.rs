//! [`Tunnel`]: one HTTP/2 stream as a byte transport, for a request that
//! opened it with an extended CONNECT (RFC 8441: a WebSocket over
//! HTTP/2) and was answered `2xx`. Reads are the client's DATA frames
//! (their window given back as they are read), writes go out as DATA
//! frames as the client's window allows; shutting down ends the stream.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use bytes::{Buf, Bytes};
use h2::{RecvStream, SendStream};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The two halves of a stream, as `AsyncRead + AsyncWrite`.
pub(super) struct Tunnel {
    recv: RecvStream,
    send: SendStream<Bytes>,
    /// Data received and not yet read.
    unread: Bytes,
}

impl Tunnel {
    pub(super) fn new(recv: RecvStream, send: SendStream<Bytes>) -> Tunnel {
        Tunnel {
            recv,
            send,
            unread: Bytes::new(),
        }
    }
}

fn io_error(e: h2::Error) -> io::Error {
    if e.is_io() {
        return e
            .into_io()
            .unwrap_or_else(|| io::ErrorKind::BrokenPipe.into());
    }
    if e.is_reset() || e.is_go_away() {
        return io::Error::new(io::ErrorKind::ConnectionReset, e);
    }
    io::Error::other(e)
}

impl AsyncRead for Tunnel {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.unread.is_empty() {
            match ready!(this.recv.poll_data(cx)) {
                Some(Ok(data)) => {
                    let _ = this.recv.flow_control().release_capacity(data.len());
                    this.unread = data;
                }
                Some(Err(e)) => return Poll::Ready(Err(io_error(e))),
                // The client ended the stream: end of input.
                None => return Poll::Ready(Ok(())),
            }
        }
        let n = this.unread.len().min(buf.remaining());
        buf.put_slice(&this.unread[..n]);
        this.unread.advance(n);
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Tunnel {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        this.send.reserve_capacity(buf.len());
        let room = loop {
            if this.send.capacity() > 0 {
                break this.send.capacity();
            }
            match ready!(this.send.poll_capacity(cx)) {
                Some(Ok(_)) => continue,
                Some(Err(e)) => return Poll::Ready(Err(io_error(e))),
                None => return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into())),
            }
        };
        let n = room.min(buf.len());
        this.send
            .send_data(Bytes::copy_from_slice(&buf[..n]), false)
            .map_err(io_error)?;
        Poll::Ready(Ok(n))
    }

    /// The connection's task writes what the stream queued.
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        // Already ended or reset: nothing more to say.
        let _ = this.send.send_data(Bytes::new(), true);
        Poll::Ready(Ok(()))
    }
}
