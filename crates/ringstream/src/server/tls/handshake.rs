//! The server side of a TLS handshake: under a deadline and a cap on the
//! handshakes under way, after a look at the first bytes that tells a TLS
//! client from one speaking plain HTTP to the TLS port.

use std::io;
use std::sync::Arc;

use ringstream_core::h1::{write_response_head, ResponseFraming, ResponseHead};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Semaphore;

use super::transport::TlsTransport;

use super::config::TlsConfig;
use crate::server::metrics::Metrics;
use crate::server::refuse::refuse;

/// The first byte of every TLS connection: a handshake record.
const HANDSHAKE_RECORD: u8 = 0x16;

/// The body of the answer to plain HTTP on the TLS port.
const USE_HTTPS: &str = "This port speaks HTTPS: use an https:// address.\n";

/// The answer to plain HTTP on the TLS port: `400` with [`USE_HTTPS`] as
/// its text, its head written by the core.
fn use_https_answer() -> Vec<u8> {
    let mut answer = Vec::with_capacity(160);
    let head = ResponseHead::new(400);
    let fields = [(&b"content-type"[..], &b"text/plain; charset=utf-8"[..])];
    let framing = ResponseFraming::Length(USE_HTTPS.len() as u64);
    // Cannot fail: a `Vec` has room, and the status and field are valid.
    let _ = write_response_head(&mut answer, &head, fields, framing, true);
    answer.extend_from_slice(USE_HTTPS.as_bytes());
    answer
}

/// Accepts the TLS connections of one server.
#[derive(Debug)]
pub(crate) struct Acceptor {
    config: TlsConfig,
    /// One permit per handshake under way.
    handshakes: Arc<Semaphore>,
    /// The current configuration without ALPN `h2`, for a server that does
    /// not speak HTTP/2, made once per configuration: (the configuration it
    /// was made from, the one made).
    #[cfg(feature = "http2")]
    without_h2: std::sync::Mutex<Option<(Arc<rustls::ServerConfig>, Arc<rustls::ServerConfig>)>>,
}

impl Acceptor {
    pub(crate) fn new(config: TlsConfig) -> Acceptor {
        let handshakes = Arc::new(Semaphore::new(config.max_handshakes()));
        Acceptor {
            config,
            handshakes,
            #[cfg(feature = "http2")]
            without_h2: std::sync::Mutex::new(None),
        }
    }

    /// The configuration a handshake starts with now: the current one, or,
    /// when the server does not speak HTTP/2, the current one without
    /// `h2` among its ALPN protocols (so no client negotiates it).
    fn rustls_config(&self, http2: bool) -> Arc<rustls::ServerConfig> {
        let current = self.config.current();
        #[cfg(feature = "http2")]
        if !http2
            && current
                .alpn_protocols
                .iter()
                .any(|p| p == super::config::H2)
        {
            let mut made = self
                .without_h2
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some((from, without)) = made.as_ref() {
                if Arc::ptr_eq(from, &current) {
                    return without.clone();
                }
            }
            let mut without = (*current).clone();
            without.alpn_protocols.retain(|p| p != super::config::H2);
            let without = Arc::new(without);
            *made = Some((current, without.clone()));
            return without;
        }
        #[cfg(not(feature = "http2"))]
        let _ = http2;
        current
    }

    /// The handshake on `socket`: the encrypted stream, or `None` when it
    /// failed, ran out of time, or the client spoke plain HTTP (and was
    /// told to use HTTPS). `http2`: the server speaks HTTP/2 (ALPN `h2` is
    /// offered).
    pub(crate) async fn accept<T>(
        &self,
        socket: T,
        metrics: &Metrics,
        http2: bool,
    ) -> Option<Box<TlsTransport<T>>>
    where
        T: AsyncRead + AsyncWrite + Unpin,
    {
        let deadline = tokio::time::Instant::now() + self.config.handshake_timeout();
        let accepted = tokio::time::timeout_at(deadline, self.handshake(socket, http2)).await;
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

    async fn handshake<T>(&self, socket: T, http2: bool) -> io::Result<Box<TlsTransport<T>>>
    where
        T: AsyncRead + AsyncWrite + Unpin,
    {
        let mut tls = Box::new(TlsTransport::new(self.rustls_config(http2), socket)?);
        // A client that sends nothing holds no handshake place: it waits
        // out the deadline on its connection slot alone. The first read
        // takes a whole ClientHello as a client sends it.
        if tls.read_first().await? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let first = tls.first_byte();
        if first != Some(HANDSHAKE_RECORD) {
            if first.is_some_and(|b| b.is_ascii_uppercase()) {
                // An HTTP method: say what went wrong, in clear text.
                refuse(tls.into_inner(), &use_https_answer()).await;
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
        tls.handshake().await?;
        Ok(tls)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plain_answer_has_the_length_it_says() {
        let answer = use_https_answer();
        let text = std::str::from_utf8(&answer).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{head}");
        assert!(head.contains(&format!("\r\ncontent-length: {}", body.len())));
        assert!(head.contains("\r\nconnection: close"), "{head}");
        assert_eq!(body, USE_HTTPS);
    }
}
