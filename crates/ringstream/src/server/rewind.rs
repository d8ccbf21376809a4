//! [`Rewind`]: a transport with bytes already read from it put back in
//! front: what followed a PROXY header in the same read, and the HTTP/2
//! preface the HTTP/1.1 reader saw.

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// `io`, read from `read_back` first.
pub(crate) struct Rewind<T> {
    read_back: Bytes,
    io: T,
}

impl<T> Rewind<T> {
    pub(crate) fn new(read_back: Bytes, io: T) -> Rewind<T> {
        Rewind { read_back, io }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Rewind<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.read_back.is_empty() {
            let n = this.read_back.len().min(buf.remaining());
            buf.put_slice(&this.read_back[..n]);
            this.read_back.advance(n);
            if this.read_back.is_empty() {
                // Emptied: let go of the block it was cut from.
                this.read_back = Bytes::new();
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Rewind<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn the_bytes_put_back_come_first_then_the_transport() {
        let (mut client, server) = tokio::io::duplex(64);
        let mut rewound = Rewind::new(Bytes::from_static(b"PRI "), server);
        client.write_all(b"rest").await.unwrap();
        drop(client);
        let mut all = Vec::new();
        let mut small = [0u8; 3];
        let n = rewound.read(&mut small).await.unwrap();
        all.extend_from_slice(&small[..n]);
        rewound.read_to_end(&mut all).await.unwrap();
        assert_eq!(all, b"PRI rest");
    }
}
