//! The HTTPS load client of the `https` scenario: a run's certificate,
//! rustls client configurations that trust exactly that certificate, and
//! an HTTP/1.1 connection that sends a fixed request and reads the
//! response by its `Content-Length`, checking the body when asked.
//!
//! The client trusts the run's certificate by its bytes, with no chain to
//! walk. Like wrk and h2load, it does not check the handshake's signature
//! unless asked to (`verify`): the server signs either way, and the
//! client's core, which a full handshake keeps as busy as the server's, is
//! spared the verification.

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::Resumption;
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

/// The name the certificate is for, and the client asks for (SNI).
pub const SERVER_NAME: &str = "localhost";

/// A certificate and its key, made for one run (ECDSA P-256, self-signed,
/// for `localhost`) and written as PEM files to a directory of their own,
/// removed on drop.
pub struct RunCertificate {
    dir: PathBuf,
    /// The certificate's PEM file.
    pub cert_path: PathBuf,
    /// The private key's PEM file.
    pub key_path: PathBuf,
    /// The certificate, DER.
    pub der: CertificateDer<'static>,
}

impl RunCertificate {
    /// Make one under the system's temporary directory.
    pub fn generate() -> anyhow::Result<RunCertificate> {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)?;
        let cert =
            rcgen::CertificateParams::new(vec![SERVER_NAME.to_owned()])?.self_signed(&key)?;
        let dir =
            std::env::temp_dir().join(format!("ringstream-bench-https-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let made = RunCertificate {
            cert_path: dir.join("cert.pem"),
            key_path: dir.join("key.pem"),
            der: cert.der().clone(),
            dir,
        };
        std::fs::write(&made.cert_path, cert.pem())?;
        std::fs::write(&made.key_path, key.serialize_pem())?;
        Ok(made)
    }
}

impl Drop for RunCertificate {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A client configuration on the aws-lc-rs provider (TLS 1.2 and 1.3,
/// ALPN `http/1.1`) that trusts `cert` alone, and checks the handshake's
/// signature with its key when `verify`; with `resume`, sessions are kept
/// (in memory, shared by every connection made with the returned
/// configuration) and offered again, otherwise every handshake is full.
pub fn client_config(
    cert: &CertificateDer<'static>,
    resume: bool,
    verify: bool,
) -> anyhow::Result<Arc<ClientConfig>> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let verifier = Arc::new(Pinned {
        cert: cert.clone(),
        algorithms: provider.signature_verification_algorithms,
        verify,
    });
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    config.resumption = if resume {
        Resumption::in_memory_sessions(1024)
    } else {
        Resumption::disabled()
    };
    Ok(Arc::new(config))
}

/// Trusts one certificate, byte for byte, and checks the handshake's
/// signatures with its key when `verify`.
#[derive(Debug)]
struct Pinned {
    cert: CertificateDer<'static>,
    algorithms: WebPkiSupportedAlgorithms,
    verify: bool,
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if end_entity.as_ref() == self.cert.as_ref() {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::UnknownIssuer,
            ))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        if !self.verify {
            return Ok(HandshakeSignatureValid::assertion());
        }
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        if !self.verify {
            return Ok(HandshakeSignatureValid::assertion());
        }
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// A TCP connection to `addr` (no Nagle delay), then a TLS handshake on it
/// with `config`.
pub async fn connect_tls(
    addr: SocketAddr,
    config: &Arc<ClientConfig>,
) -> io::Result<TlsStream<TcpStream>> {
    let tcp = TcpStream::connect(addr).await?;
    tcp.set_nodelay(true)?;
    let name = ServerName::try_from(SERVER_NAME).map_err(io::Error::other)?;
    tokio_rustls::TlsConnector::from(config.clone())
        .connect(name, tcp)
        .await
}

/// A plain TCP connection to `addr`, without Nagle delay.
pub async fn connect_plain(addr: SocketAddr) -> io::Result<TcpStream> {
    let tcp = TcpStream::connect(addr).await?;
    tcp.set_nodelay(true)?;
    Ok(tcp)
}

/// `GET path` on a keep-alive connection, as wrk sends it.
pub fn get(path: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: {SERVER_NAME}\r\n\r\n").into_bytes()
}

/// `GET path`, asking the server to close the connection after answering.
pub fn get_and_close(path: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: {SERVER_NAME}\r\nConnection: close\r\n\r\n").into_bytes()
}

/// The body `/bytes/{n}` answers, for `path` of that form.
pub fn expected_body(path: &str) -> Option<Vec<u8>> {
    let n: usize = path.strip_prefix("/bytes/")?.parse().ok()?;
    let block = ringstream_cli::app::pattern_block();
    (n <= block.len()).then(|| block[..n].to_vec())
}

/// An HTTP/1.1 client connection over `S` (a TLS stream or a TCP socket)
/// that reads into one buffer of its own.
pub struct HttpConn<S> {
    io: S,
    buf: Box<[u8]>,
    start: usize,
    end: usize,
}

impl<S: AsyncRead + AsyncWrite + Unpin> HttpConn<S> {
    /// Wrap `io`, reading at most `buf_len` bytes at a time.
    pub fn new(io: S, buf_len: usize) -> HttpConn<S> {
        HttpConn {
            io,
            buf: vec![0; buf_len.max(1024)].into_boxed_slice(),
            start: 0,
            end: 0,
        }
    }

    /// Send `request`, then read its response whole: a `200` whose body
    /// is `Content-Length` bytes long, equal to `expected` when given.
    /// Returns the body's length.
    pub async fn request(&mut self, request: &[u8], expected: Option<&[u8]>) -> io::Result<usize> {
        self.io.write_all(request).await?;
        self.io.flush().await?;
        self.response(expected).await
    }

    async fn response(&mut self, expected: Option<&[u8]>) -> io::Result<usize> {
        let head_len = loop {
            let window = &self.buf[self.start..self.end];
            if let Some(at) = window.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            if self.end == self.buf.len() {
                return Err(bad("response head larger than the buffer"));
            }
            self.fill().await?;
        };
        let head = &self.buf[self.start..self.start + head_len];
        if !head.starts_with(b"HTTP/1.1 200 ") {
            let text = String::from_utf8_lossy(head).into_owned();
            return Err(bad(&format!("not a 200: {text}")));
        }
        let length = content_length(head).ok_or_else(|| bad("no Content-Length"))?;
        self.start += head_len;
        if let Some(expected) = expected {
            if expected.len() != length {
                return Err(bad(&format!(
                    "body of {length} bytes, {} expected",
                    expected.len()
                )));
            }
        }
        let mut done = 0;
        while done < length {
            if self.start == self.end {
                self.start = 0;
                self.end = 0;
                self.fill().await?;
            }
            let take = (length - done).min(self.end - self.start);
            if let Some(expected) = expected {
                if self.buf[self.start..self.start + take] != expected[done..done + take] {
                    return Err(bad("body differs from the pattern"));
                }
            }
            self.start += take;
            done += take;
        }
        Ok(length)
    }

    /// Read until the server closes the connection (a TLS stream that
    /// ends without `close_notify` counts as closed too).
    pub async fn read_to_close(&mut self) -> io::Result<()> {
        loop {
            self.start = 0;
            self.end = 0;
            match self.io.read(&mut self.buf).await {
                Ok(0) => return Ok(()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(()),
                Err(e) => return Err(e),
            }
        }
    }

    async fn fill(&mut self) -> io::Result<()> {
        let n = self.io.read(&mut self.buf[self.end..]).await?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        self.end += n;
        Ok(())
    }
}

/// The value of the `Content-Length` header in `head`.
fn content_length(head: &[u8]) -> Option<usize> {
    head.split(|&b| b == b'\n').find_map(|line| {
        let (name, value) = line.split_at(line.iter().position(|&b| b == b':')?);
        if !name.eq_ignore_ascii_case(b"content-length") {
            return None;
        }
        std::str::from_utf8(&value[1..]).ok()?.trim().parse().ok()
    })
}

fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_length_is_found_in_any_case() {
        let head = b"HTTP/1.1 200 OK\r\nserver: x\r\ncontent-length: 13\r\n\r\n";
        assert_eq!(content_length(head), Some(13));
        let head = b"HTTP/1.1 200 OK\r\nContent-Length:40960\r\n\r\n";
        assert_eq!(content_length(head), Some(40960));
        assert_eq!(content_length(b"HTTP/1.1 200 OK\r\n\r\n"), None);
    }

    #[tokio::test]
    async fn a_response_is_read_by_its_length_and_checked() {
        let (client, mut server) = tokio::io::duplex(1 << 16);
        let mut conn = HttpConn::new(client, 1024);
        let body = expected_body("/bytes/3000").unwrap();
        let mut answer =
            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes();
        answer.extend_from_slice(&body);
        server.write_all(&answer).await.unwrap();
        server.write_all(&answer).await.unwrap();
        assert_eq!(
            conn.request(b"GET / HTTP/1.1\r\n\r\n", Some(&body))
                .await
                .unwrap(),
            3000
        );
        assert_eq!(
            conn.request(b"GET / HTTP/1.1\r\n\r\n", None).await.unwrap(),
            3000
        );
        let mut wrong = body.clone();
        wrong[2999] ^= 1;
        let mut answer = b"HTTP/1.1 200 OK\r\nContent-Length: 3000\r\n\r\n".to_vec();
        answer.extend_from_slice(&wrong);
        server.write_all(&answer).await.unwrap();
        assert!(conn
            .request(b"GET / HTTP/1.1\r\n\r\n", Some(&body))
            .await
            .is_err());
    }
}
