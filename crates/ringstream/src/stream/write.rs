//! Writing: buffering, gathered vectored writes, flush and close.

use std::future::poll_fn;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite};

use super::{broken_error, closed_error, write_closed_error, write_zero, Stream};
use crate::error::Error;

/// Caller slices passed along with the write buffer in one vectored write;
/// further slices wait for the next call.
const MAX_GATHER: usize = 31;

impl<T: AsyncRead + AsyncWrite + Unpin> Stream<T> {
    fn check_writable(&self) -> io::Result<()> {
        if self.closed {
            Err(closed_error())
        } else if self.broken {
            Err(broken_error())
        } else if self.write_closed {
            Err(write_closed_error())
        } else {
            Ok(())
        }
    }

    /// The write path shared by the inherent methods and `AsyncWrite`.
    ///
    /// Returns how many of the caller's bytes were accepted (buffered or
    /// sent). Data smaller than `minimum_write_size` is copied into the
    /// write buffer, which is written out once it reaches the threshold.
    /// Larger data goes out uncopied in one vectored write behind the
    /// buffered bytes; the buffer is always sent completely before any
    /// caller byte is counted.
    pub(crate) fn poll_write_gather(
        &mut self,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.check_writable()?;
        let threshold = self.options.minimum_write_size;
        let total = bufs
            .iter()
            .fold(0usize, |sum, b| sum.saturating_add(b.len()));
        if total == 0 {
            return Poll::Ready(Ok(0));
        }
        // Back-pressure: a full buffer goes out before more is accepted.
        if self.pending_write_len() > 0 && self.pending_write_len() >= threshold {
            ready!(self.poll_flush_buffer(cx))?;
        }
        if total < threshold {
            for buf in bufs {
                self.buffer_write(buf);
            }
            if self.pending_write_len() >= threshold {
                // The bytes are accepted; if the transport is not ready the
                // buffer goes out with the next call.
                if let Poll::Ready(Err(e)) = self.poll_flush_buffer(cx) {
                    return Poll::Ready(Err(e));
                }
            }
            return Poll::Ready(Ok(total));
        }
        self.poll_write_unbuffered(cx, bufs)
    }

    /// Writes the pending write buffer and then `bufs` in one vectored
    /// write on the transport, now, whatever their size: `bufs` are never
    /// copied into the write buffer. The count returned refers to the bytes
    /// of `bufs` only, and is non-zero only once the write buffer has been
    /// sent completely.
    ///
    /// This is how a framing layer sends large body pieces (`Bytes` it
    /// does not want copied) behind a head it buffered with
    /// [`buffer_write`](Self::buffer_write).
    ///
    /// # Errors
    ///
    /// A transport error marks the stream [broken](Self::is_broken); a
    /// transport that accepts nothing is [`io::ErrorKind::WriteZero`].
    pub fn poll_write_unbuffered(
        &mut self,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.check_writable()?;
        let total = bufs
            .iter()
            .fold(0usize, |sum, b| sum.saturating_add(b.len()));
        if total == 0 {
            return Poll::Ready(Ok(0));
        }
        loop {
            let pending = self.write_buf.get(self.write_pos..).unwrap_or_default();
            let pending_len = pending.len();
            let mut slices = [IoSlice::new(&[]); MAX_GATHER + 1];
            let mut count = 0;
            if pending_len > 0 {
                slices[0] = IoSlice::new(pending);
                count = 1;
            }
            for buf in bufs.iter().filter(|b| !b.is_empty()).take(MAX_GATHER) {
                slices[count] = IoSlice::new(buf);
                count += 1;
            }
            let slices = slices.get(..count).unwrap_or_default();
            match ready!(Pin::new(&mut self.io).poll_write_vectored(cx, slices)) {
                Ok(0) => return Poll::Ready(Err(self.fail_write(write_zero()))),
                Ok(n) => {
                    self.needs_flush = true;
                    if n < pending_len {
                        self.write_pos += n;
                        continue;
                    }
                    self.write_buf.clear();
                    self.write_pos = 0;
                    let accepted = n - pending_len;
                    if accepted > 0 {
                        return Poll::Ready(Ok(accepted.min(total)));
                    }
                }
                Err(e) => return Poll::Ready(Err(self.fail_write(e))),
            }
        }
    }

    /// Writes all of `data` through the buffering write path.
    async fn write_through(&mut self, data: &[u8]) -> io::Result<()> {
        let mut written = 0;
        while let Some(rest) = data.get(written..).filter(|rest| !rest.is_empty()) {
            let slices = [IoSlice::new(rest)];
            written += poll_fn(|cx| self.poll_write_gather(cx, &slices)).await?;
        }
        Ok(())
    }

    /// Writes all of `data`: returns once every byte is buffered or sent.
    ///
    /// Data is buffered until
    /// [`minimum_write_size`](super::StreamOptions::minimum_write_size)
    /// bytes are pending, then written out; data at least that large is
    /// sent without being copied, in one vectored write together with what
    /// is buffered. Call [`flush`](Self::flush) to push buffered bytes out.
    ///
    /// # Errors
    ///
    /// A transport error marks the stream [broken](Self::is_broken).
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: when cancelled, a prefix of `data` may have been
    /// buffered or sent.
    pub async fn write_all(&mut self, data: &[u8]) -> Result<(), Error> {
        self.check_writable()?;
        Ok(self.write_through(data).await?)
    }

    /// Writes an owned payload. One at least
    /// [`minimum_write_size`](super::StreamOptions::minimum_write_size)
    /// bytes long is sent without being copied into the write buffer, in
    /// one vectored write together with what is buffered; smaller ones are
    /// buffered like [`write_all`](Self::write_all).
    ///
    /// # Examples
    ///
    /// ```
    /// use bytes::Bytes;
    /// use ringstream::Stream;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ringstream::Error> {
    /// let (io, peer) = tokio::io::duplex(1 << 20);
    /// let mut stream = Stream::new(io);
    /// stream.write_all(b"HTTP/1.1 200 OK\r\n\r\n").await?; // buffered
    /// stream.write_bytes(Bytes::from(vec![b'x'; 128 * 1024])).await?; // head + body in one write
    /// assert_eq!(stream.pending_write(), 0);
    /// # drop(peer);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// A transport error marks the stream [broken](Self::is_broken).
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: when cancelled, a prefix of `data` may have been
    /// sent.
    pub async fn write_bytes(&mut self, data: Bytes) -> Result<(), Error> {
        self.check_writable()?;
        Ok(self.write_through(&data).await?)
    }

    /// Writes `line` and a `"\n"`, then [flushes](Self::flush).
    ///
    /// # Errors
    ///
    /// A transport error marks the stream [broken](Self::is_broken).
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: when cancelled, part of the line may have been
    /// buffered or sent.
    pub async fn puts(&mut self, line: &[u8]) -> Result<(), Error> {
        self.check_writable()?;
        self.write_through(line).await?;
        self.write_through(b"\n").await?;
        self.flush().await
    }

    /// Writes out the write buffer and flushes the transport.
    ///
    /// Flushing an empty buffer performs no write.
    ///
    /// # Errors
    ///
    /// A transport error marks the stream [broken](Self::is_broken) and
    /// the unsent data is discarded; it is never reported as sent.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: unsent bytes stay buffered.
    pub async fn flush(&mut self) -> Result<(), Error> {
        Ok(poll_fn(|cx| self.poll_flush_all(cx)).await?)
    }

    pub(crate) fn poll_flush_all(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_flush_buffer(cx))?;
        if self.write_closed {
            return Poll::Ready(Ok(()));
        }
        if let Err(e) = ready!(Pin::new(&mut self.io).poll_flush(cx)) {
            return Poll::Ready(Err(self.fail_write(e)));
        }
        self.needs_flush = false;
        Poll::Ready(Ok(()))
    }

    pub(crate) fn poll_close_write(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.write_closed {
            self.check_open()?;
            return Poll::Ready(Ok(()));
        }
        ready!(self.poll_flush_all(cx))?;
        if let Err(e) = ready!(Pin::new(&mut self.io).poll_shutdown(cx)) {
            return Poll::Ready(Err(self.fail_write(e)));
        }
        self.write_closed = true;
        Poll::Ready(Ok(()))
    }

    /// Flushes, then shuts down the write half: the peer reads end of
    /// file. Reading keeps working; later writes fail with
    /// [`BrokenPipe`](io::ErrorKind::BrokenPipe). Calling it again does
    /// nothing.
    ///
    /// # Errors
    ///
    /// A flush or shutdown error marks the stream [broken](Self::is_broken).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: unsent bytes stay buffered and the call can be
    /// repeated.
    pub async fn close_write(&mut self) -> Result<(), Error> {
        Ok(poll_fn(|cx| self.poll_close_write(cx)).await?)
    }

    /// Closes the stream: flushes, shuts down the write half and releases
    /// both buffers. Afterwards every operation fails with
    /// [`NotConnected`](io::ErrorKind::NotConnected). The transport itself
    /// is dropped with the `Stream` (or returned by
    /// [`into_inner`](Self::into_inner)).
    ///
    /// Idempotent: a second call returns `Ok(())`.
    ///
    /// # Errors
    ///
    /// An error while flushing pending data or shutting down is returned,
    /// so unsent data is never reported as sent; the stream is closed
    /// regardless. Bytes buffered after [`close_write`](Self::close_write)
    /// make it fail with [`BrokenPipe`](io::ErrorKind::BrokenPipe). A
    /// stream already [broken](Self::is_broken) reported its error earlier
    /// and closes without one.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: the stream is closed only when the call completes, and
    /// it can be repeated.
    pub async fn close(&mut self) -> Result<(), Error> {
        if self.closed {
            return Ok(());
        }
        let result = if self.broken {
            Ok(())
        } else if self.write_closed {
            // Bytes buffered after `close_write` can never be sent.
            if self.pending_write_len() > 0 {
                Err(write_closed_error())
            } else {
                Ok(())
            }
        } else {
            match poll_fn(|cx| self.poll_flush_all(cx)).await {
                Ok(()) => match poll_fn(|cx| Pin::new(&mut self.io).poll_shutdown(cx)).await {
                    // Already reset by the peer: nothing left to shut down.
                    Err(e) if e.kind() != io::ErrorKind::NotConnected => Err(e),
                    _ => Ok(()),
                },
                Err(e) => Err(e),
            }
        };
        self.closed = true;
        self.read_buf = bytes::BytesMut::new();
        self.write_buf = Vec::new();
        self.write_pos = 0;
        Ok(result?)
    }
}
