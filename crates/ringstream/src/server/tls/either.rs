//! A connection's transport when the server may speak TLS: the socket
//! itself, or TLS over it.

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::transport::TlsTransport;

/// A connection's transport: plain, or TLS over it. One type for both, so
/// that a server with TLS serves either through the same connection code
/// (a task is as large as the largest transport's future).
pub(crate) enum Transport<T> {
    Plain(T),
    Tls(Box<TlsTransport<T>>),
}

impl<T: AsyncRead + AsyncWrite + Unpin> Transport<T> {
    /// Whether TLS negotiated HTTP/2 by ALPN (never over plain TCP: there
    /// the preface says).
    #[cfg(feature = "http2")]
    pub(crate) fn negotiated_http2(&self) -> bool {
        match self {
            Transport::Plain(_) => false,
            Transport::Tls(tls) => tls.negotiated_http2(),
        }
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> AsyncRead for Transport<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Transport::Plain(io) => Pin::new(io).poll_read(cx, buf),
            Transport::Tls(tls) => Pin::new(&mut **tls).poll_read(cx, buf),
        }
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> AsyncWrite for Transport<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Transport::Plain(io) => Pin::new(io).poll_write(cx, buf),
            Transport::Tls(tls) => Pin::new(&mut **tls).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Transport::Plain(io) => Pin::new(io).poll_write_vectored(cx, bufs),
            Transport::Tls(tls) => Pin::new(&mut **tls).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Transport::Plain(io) => io.is_write_vectored(),
            Transport::Tls(_) => true,
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Transport::Plain(io) => Pin::new(io).poll_flush(cx),
            Transport::Tls(tls) => Pin::new(&mut **tls).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Transport::Plain(io) => Pin::new(io).poll_shutdown(cx),
            Transport::Tls(tls) => Pin::new(&mut **tls).poll_shutdown(cx),
        }
    }
}
