//! The server side of a TLS handshake: under a deadline and a cap on the
//! handshakes under way, after a look at the first bytes that tells a TLS
//! client from one speaking plain HTTP to the TLS port.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};
use tokio::sync::Semaphore;
use tokio_rustls::server::TlsStream;

use super::TlsConfig;
use crate::server::Metrics;

/// The first byte of every TLS connection: a handshake record.
const HANDSHAKE_RECORD: u8 = 0x16;

/// The answer to plain HTTP on the TLS port.
const USE_HTTPS: &[u8] = b"HTTP/1.1 400 Bad Request\r\n\
Content-Type: text/plain; charset=utf-8\r\n\
Content-Length: 49\r\n\
Connection: close\r\n\
\r\n\
This port speaks HTTPS: use an https:// address.\n";

/// Accepts the TLS connections of one server.
#[derive(Debug)]
pub(crate) struct Acceptor {
    config: TlsConfig,
    /// One permit per handshake under way.
    handshakes: Arc<Semaphore>,
}

impl Acceptor {
    pub(crate) fn new(config: TlsConfig) -> Acceptor {
        let handshakes = Arc::new(Semaphore::new(config.max_handshakes()));
        Acceptor { config, handshakes }
    }

    /// The handshake on `socket`: the encrypted stream, or `None` when it
    /// failed, ran out of time, or the client spoke plain HTTP (and was
    /// told to use HTTPS).
    pub(crate) async fn accept<T>(
        &self,
        socket: T,
        metrics: &Metrics,
    ) -> Option<TlsStream<Sniffed<T>>>
    where
        T: AsyncRead + AsyncWrite + Unpin,
    {
        let deadline = tokio::time::Instant::now() + self.config.handshake_timeout();
        let accepted = tokio::time::timeout_at(deadline, self.handshake(socket)).await;
        match accepted {
            Ok(Ok(stream)) => {
                metrics.record_tls_handshake();
                Some(stream)
            }
            Ok(Err(e)) => {
                metrics.record_tls_handshake_failure();
                tracing::debug!(error = %e, "TLS handshake failed");
                None
            }
            Err(_) => {
                metrics.record_tls_handshake_failure();
                tracing::debug!("TLS handshake timed out");
                None
            }
        }
    }

    async fn handshake<T>(&self, mut socket: T) -> io::Result<TlsStream<Sniffed<T>>>
    where
        T: AsyncRead + AsyncWrite + Unpin,
    {
        // A client that sends nothing holds no handshake place: it waits
        // out the deadline on its connection slot alone.
        // The first read takes a whole ClientHello as a client sends it
        // (with a post-quantum key share, about 1.8 KB), handed to rustls
        // from memory: no second read, and the buffer lives only through
        // the handshake.
        let mut first = vec![0u8; SNIFFED].into_boxed_slice();
        let n = socket.read(&mut first).await?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        if first.first() != Some(&HANDSHAKE_RECORD) {
            if first.first().is_some_and(u8::is_ascii_uppercase) {
                // An HTTP method: say what went wrong, in clear text.
                crate::server::admit::refuse(socket, USE_HTTPS).await;
            }
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "not TLS (plain HTTP on the TLS port?)",
            ));
        }
        let _permit = self
            .handshakes
            .acquire()
            .await
            .map_err(|_| io::Error::other("handshakes closed"))?;
        let acceptor = tokio_rustls::TlsAcceptor::from(self.config.current());
        acceptor.accept(Sniffed::new(first, n, socket)).await
    }
}

/// The most bytes read to tell TLS from plain HTTP: room for a whole
/// ClientHello in one read.
const SNIFFED: usize = 4096;

/// A transport that first gives back the bytes read from it to tell TLS
/// from plain HTTP.
#[derive(Debug)]
pub(crate) struct Sniffed<T> {
    /// The bytes read first, until they are all given back.
    first: Option<Box<[u8]>>,
    start: usize,
    end: usize,
    io: T,
}

impl<T> Sniffed<T> {
    fn new(first: Box<[u8]>, len: usize, io: T) -> Sniffed<T> {
        let end = len.min(first.len());
        Sniffed {
            first: Some(first),
            start: 0,
            end,
            io,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Sniffed<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if let Some(first) = &this.first {
            let rest = first.get(this.start..this.end).unwrap_or_default();
            let n = rest.len().min(buf.remaining());
            buf.put_slice(rest.get(..n).unwrap_or_default());
            this.start += n;
            if this.start >= this.end {
                // All given back: the buffer goes.
                this.first = None;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Sniffed<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    #[test]
    fn the_plain_answer_has_the_length_it_says() {
        let text = std::str::from_utf8(USE_HTTPS).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.contains(&format!("Content-Length: {}", body.len())));
    }

    #[tokio::test]
    async fn the_sniffed_bytes_come_first_then_the_rest() {
        let (io, mut peer) = tokio::io::duplex(64);
        peer.write_all(b"defgh").await.unwrap();
        let mut first = vec![0u8; SNIFFED].into_boxed_slice();
        first[..3].copy_from_slice(b"abc");
        let mut sniffed = Sniffed::new(first, 3, io);
        let mut two = [0u8; 2];
        sniffed.read_exact(&mut two).await.unwrap();
        assert_eq!(&two, b"ab");
        let mut rest = [0u8; 6];
        sniffed.read_exact(&mut rest).await.unwrap();
        assert_eq!(&rest, b"cdefgh");
        assert!(sniffed.first.is_none(), "the first bytes' buffer is freed");
    }
}
