//! `AsyncRead`, `AsyncBufRead` and `AsyncWrite` for [`Stream`], so it
//! composes with tokio's utilities (`tokio::io::copy`, `read_line`, ...).

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::io::{AsyncBufRead, AsyncRead, AsyncWrite, ReadBuf};

use super::Stream;

impl<T: AsyncRead + AsyncWrite + Unpin> AsyncRead for Stream<T> {
    /// Copies buffered bytes out; with nothing buffered and a destination
    /// of at least `minimum_read_size` bytes, reads straight into it so no
    /// byte is copied twice.
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.check_open()?;
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        if this.read_buf.is_empty() {
            if this.eof {
                return Poll::Ready(Ok(()));
            }
            if buf.remaining() >= this.options.minimum_read_size {
                ready!(this.poll_flush_before_read(cx))?;
                let before = buf.filled().len();
                ready!(Pin::new(&mut this.io).poll_read(cx, buf))?;
                if buf.filled().len() == before {
                    this.eof = true;
                }
                return Poll::Ready(Ok(()));
            }
            ready!(this.poll_fill_hint(cx, 0))?;
        }
        let n = buf.remaining().min(this.read_buf.len());
        buf.put_slice(this.read_buf.get(..n).unwrap_or_default());
        bytes::Buf::advance(&mut this.read_buf, n);
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> AsyncBufRead for Stream<T> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        let this = self.get_mut();
        this.check_open()?;
        if this.read_buf.is_empty() {
            ready!(this.poll_fill_hint(cx, 0))?;
        }
        Poll::Ready(Ok(&this.read_buf))
    }

    /// Consumes `amt` bytes, or everything buffered if `amt` is larger.
    fn consume(self: Pin<&mut Self>, amt: usize) {
        let this = self.get_mut();
        let n = amt.min(this.read_buf.len());
        bytes::Buf::advance(&mut this.read_buf, n);
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> AsyncWrite for Stream<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().poll_write_gather(cx, &[IoSlice::new(buf)])
    }

    /// Gathers the pending write buffer and `bufs` into one vectored write
    /// on the transport when the data is at least `minimum_write_size`
    /// bytes; smaller data is buffered. The count returned refers to the
    /// bytes of `bufs` only, and is non-zero only once the write buffer
    /// has been sent completely.
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().poll_write_gather(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().poll_flush_all(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().poll_close_write(cx)
    }
}
