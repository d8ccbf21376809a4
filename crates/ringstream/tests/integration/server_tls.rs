//! HTTPS and WSS over real sockets with a rustls client: the handshake and
//! ALPN, a certificate per server name (SNI), reloading certificates while
//! a connection is open, client certificates, the handshake deadline and
//! its cap, and the answers to the wrong protocol on either port.
#![cfg(feature = "tls")]

use crate::common;

use common::tls::{Authority, Issued};

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use ringstream::server::tls::TlsConfig;
use ringstream::server::{service_fn, Config, Metrics, Server};
use ringstream::ws::WebSocketUpgrade;
use ringstream::Incoming;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, RootCertStore};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

/// TLS clients that trust a test's own authority.
trait Clients {
    fn roots(&self) -> RootCertStore;
    fn client(&self, alpn: &[&[u8]]) -> TlsConnector;
    fn client_with_cert(&self, issued: &Issued) -> TlsConnector;
}

impl Clients for Authority {
    fn roots(&self) -> RootCertStore {
        let mut roots = RootCertStore::empty();
        roots.add(self.der()).unwrap();
        roots
    }

    fn client(&self, alpn: &[&[u8]]) -> TlsConnector {
        let mut config = ClientConfig::builder()
            .with_root_certificates(self.roots())
            .with_no_client_auth();
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        TlsConnector::from(Arc::new(config))
    }

    fn client_with_cert(&self, issued: &Issued) -> TlsConnector {
        let chain = vec![CertificateDer::from_pem_slice(issued.cert.as_bytes()).unwrap()];
        let key = PrivateKeyDer::from_pem_slice(issued.key.as_bytes()).unwrap();
        let config = ClientConfig::builder()
            .with_root_certificates(self.roots())
            .with_client_auth_cert(chain, key)
            .unwrap();
        TlsConnector::from(Arc::new(config))
    }
}

use rustls::pki_types::pem::PemObject;

/// Answers with the path, echoes the body of `/echo`, or upgrades `/ws`
/// to a WebSocket echo.
fn app() -> impl tower_service::Service<
    http::Request<Incoming>,
    Response = http::Response<String>,
    Error = Infallible,
    Future = impl Send,
> + Clone
       + Send
       + 'static {
    service_fn(|mut req: http::Request<Incoming>| async move {
        if req.uri().path() == "/ws" {
            let upgrade = match WebSocketUpgrade::from_request(&mut req) {
                Ok(upgrade) => upgrade,
                Err(refused) => return Ok::<_, Infallible>(refused.into_response()),
            };
            return Ok(upgrade.on_upgrade(|mut socket| async move {
                while let Some(Ok(message)) = socket.recv().await {
                    if message.is_data() && socket.send(message).await.is_err() {
                        break;
                    }
                }
            }));
        }
        if req.uri().path() == "/echo" {
            let body = req.body_mut().read_all().await.unwrap_or_default();
            return Ok(http::Response::new(
                String::from_utf8(body.to_vec()).unwrap(),
            ));
        }
        Ok(http::Response::new(format!("path {}", req.uri().path())))
    })
}

/// A running HTTPS server.
struct Running {
    addr: SocketAddr,
    metrics: Arc<Metrics>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

async fn start_tls(tls: TlsConfig, config: Config) -> Running {
    let server = Server::bind("127.0.0.1:0")
        .await
        .unwrap()
        .with_config(config)
        .tls(tls);
    let addr = server.local_addr().unwrap();
    let metrics = server.metrics();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(server.serve(app()).with_graceful_shutdown(async {
        let _ = stopped.await;
    }));
    Running {
        addr,
        metrics,
        _stop: stop,
    }
}

/// A new authority, and a server with its certificate for `localhost`
/// and the default configuration.
async fn localhost() -> (Authority, Running) {
    let ca = Authority::new();
    let issued = ca.issue(&["localhost"]);
    let tls = TlsConfig::from_pem(issued.cert.as_bytes(), issued.key.as_bytes()).unwrap();
    let server = start_tls(tls, Config::default()).await;
    (ca, server)
}

async fn connect(
    connector: &TlsConnector,
    addr: SocketAddr,
    name: &str,
) -> std::io::Result<TlsStream<TcpStream>> {
    let tcp = TcpStream::connect(addr).await?;
    let name = ServerName::try_from(name.to_string()).unwrap();
    connector.connect(name, tcp).await
}

/// One keep-alive request and its whole response (head and body).
async fn get<T: AsyncRead + AsyncWrite + Unpin>(stream: &mut T, path: &str) -> String {
    let request = format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    let response = common::read_response(stream, &mut buf, false).await;
    String::from_utf8(response.body).unwrap()
}

fn end_entity(stream: &TlsStream<TcpStream>) -> Vec<u8> {
    let certs = stream.get_ref().1.peer_certificates().unwrap();
    certs[0].as_ref().to_vec()
}

#[tokio::test]
async fn https_with_alpn_http_1_1_serves_keep_alive_requests() {
    let (ca, server) = localhost().await;

    let mut stream = connect(&ca.client(&[b"http/1.1"]), server.addr, "localhost")
        .await
        .unwrap();
    assert_eq!(stream.get_ref().1.alpn_protocol(), Some(&b"http/1.1"[..]));
    assert_eq!(get(&mut stream, "/a").await, "path /a");
    assert_eq!(get(&mut stream, "/b").await, "path /b");
    assert_eq!(server.metrics.tls_handshakes(), 1);
    assert_eq!(server.metrics.requests(), 2);

    // A client that offers only another protocol is refused by ALPN.
    let refused = connect(&ca.client(&[b"spdy/3.1"]), server.addr, "localhost").await;
    assert!(refused.is_err());
}

/// A client offering both versions gets HTTP/2 by ALPN, and its requests
/// (several streams at once, a body echoed) are served over it; with
/// HTTP/2 turned off, the same client gets HTTP/1.1.
#[cfg(feature = "http2")]
#[tokio::test]
async fn https_with_alpn_h2_serves_http2_unless_it_is_turned_off() {
    let (ca, server) = localhost().await;
    let stream = connect(&ca.client(&[b"h2", b"http/1.1"]), server.addr, "localhost")
        .await
        .unwrap();
    assert_eq!(stream.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let (mut client, connection) = h2::client::handshake(stream).await.unwrap();
    tokio::spawn(connection);
    let mut answers = Vec::new();
    for i in 0..5 {
        let request = http::Request::get(format!("https://localhost/s{i}"))
            .body(())
            .unwrap();
        let (response, _) = client.send_request(request, true).unwrap();
        answers.push(response);
    }
    for (i, response) in answers.into_iter().enumerate() {
        let response = response.await.unwrap();
        assert_eq!(response.version(), http::Version::HTTP_2);
        let body = common::h2_body(response.into_body()).await;
        assert_eq!(body, format!("path /s{i}").as_bytes());
    }
    let request = http::Request::post("https://localhost/echo")
        .body(())
        .unwrap();
    let (response, mut send) = client.send_request(request, false).unwrap();
    send.send_data(bytes::Bytes::from_static(b"over h2"), true)
        .unwrap();
    let body = common::h2_body(response.await.unwrap().into_body()).await;
    assert_eq!(body, b"over h2");
    assert_eq!(server.metrics.requests(), 6);

    let issued = ca.issue(&["localhost"]);
    let tls = TlsConfig::from_pem(issued.cert.as_bytes(), issued.key.as_bytes()).unwrap();
    let mut config = Config::default();
    config.http2.enabled = false;
    let h1_only = start_tls(tls, config).await;
    let mut stream = connect(&ca.client(&[b"h2", b"http/1.1"]), h1_only.addr, "localhost")
        .await
        .unwrap();
    assert_eq!(stream.get_ref().1.alpn_protocol(), Some(&b"http/1.1"[..]));
    assert_eq!(get(&mut stream, "/a").await, "path /a");
}

#[tokio::test]
async fn each_server_name_gets_its_own_certificate() {
    let ca = Authority::new();
    let a = ca.issue(&["a.test"]);
    let b = ca.issue(&["b.test", "*.b.test"]);
    let fallback = ca.issue(&["localhost"]);
    let tls = TlsConfig::builder()
        .certificate_pem(fallback.cert.as_bytes(), fallback.key.as_bytes())
        .sni_pem("a.test", a.cert.as_bytes(), a.key.as_bytes())
        .sni_pem("B.test", b.cert.as_bytes(), b.key.as_bytes())
        .sni_pem("*.b.test", b.cert.as_bytes(), b.key.as_bytes())
        .build()
        .unwrap();
    let server = start_tls(tls, Config::default()).await;
    let client = ca.client(&[]);
    for (name, issued) in [
        ("a.test", &a),
        ("b.test", &b),
        ("x.b.test", &b),
        ("localhost", &fallback),
    ] {
        let mut stream = connect(&client, server.addr, name).await.unwrap();
        assert_eq!(end_entity(&stream), issued.der(), "{name}");
        assert_eq!(get(&mut stream, "/").await, "path /");
    }
}

#[tokio::test]
async fn a_reload_serves_new_connections_the_new_certificate_and_keeps_open_ones() {
    let dir = std::env::temp_dir().join(format!("ringstream-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let ca = Authority::new();
    let old = ca.issue(&["localhost"]);
    std::fs::write(&cert, &old.cert).unwrap();
    std::fs::write(&key, &old.key).unwrap();
    let tls = TlsConfig::from_pem_files(&cert, &key).unwrap();
    let server = start_tls(tls.clone(), Config::default()).await;
    let client = ca.client(&[]);

    let mut open = connect(&client, server.addr, "localhost").await.unwrap();
    assert_eq!(end_entity(&open), old.der());
    assert_eq!(get(&mut open, "/before").await, "path /before");

    // A broken file: the reload fails and the certificate in use stays.
    std::fs::write(&key, "not a key").unwrap();
    assert!(tls.reload().is_err());
    let same = connect(&client, server.addr, "localhost").await.unwrap();
    assert_eq!(end_entity(&same), old.der());

    let new = ca.issue(&["localhost"]);
    std::fs::write(&cert, &new.cert).unwrap();
    std::fs::write(&key, &new.key).unwrap();
    tls.reload().unwrap();
    let fresh = connect(&client, server.addr, "localhost").await.unwrap();
    assert_eq!(end_entity(&fresh), new.der());
    // The connection opened before the reload goes on.
    assert_eq!(get(&mut open, "/after").await, "path /after");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn client_certificates_are_required_when_asked_for() {
    let ca = Authority::new();
    let server_cert = ca.issue(&["localhost"]);
    let client_cert = ca.issue(&["client"]);
    let ca_pem = ca.pem();
    let tls = TlsConfig::builder()
        .certificate_pem(server_cert.cert.as_bytes(), server_cert.key.as_bytes())
        .client_auth_pem(ca_pem.as_bytes(), true)
        .build()
        .unwrap();
    let server = start_tls(tls, Config::default()).await;

    let mut with = connect(&ca.client_with_cert(&client_cert), server.addr, "localhost")
        .await
        .unwrap();
    assert_eq!(get(&mut with, "/").await, "path /");

    // Without a certificate, TLS 1.3 fails the handshake at the server
    // after the client's Finished: the first read sees the alert or EOF.
    let outcome = async {
        let mut without = connect(&ca.client(&[]), server.addr, "localhost").await?;
        without
            .write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
            .await?;
        let mut buf = [0u8; 64];
        without.read(&mut buf).await
    };
    match tokio::time::timeout(Duration::from_secs(5), outcome)
        .await
        .unwrap()
    {
        Ok(0) | Err(_) => {}
        Ok(n) => panic!("a client without a certificate read {n} bytes"),
    }
    common::poll_until(|| server.metrics.tls_handshake_failures() == 1).await;
}

#[tokio::test]
async fn a_stalled_handshake_is_cut_at_its_deadline_and_others_go_on() {
    let ca = Authority::new();
    let issued = ca.issue(&["localhost"]);
    let tls = TlsConfig::builder()
        .certificate_pem(issued.cert.as_bytes(), issued.key.as_bytes())
        .handshake_timeout(Duration::from_millis(400))
        .max_handshakes(2)
        .build()
        .unwrap();
    let server = start_tls(tls, Config::default()).await;
    let client = ca.client(&[]);
    let mut established = connect(&client, server.addr, "localhost").await.unwrap();

    // More stalled handshakes than there are places: the start of a
    // record, then nothing.
    let mut stalled = Vec::new();
    for _ in 0..6 {
        let mut socket = TcpStream::connect(server.addr).await.unwrap();
        socket.write_all(&[0x16, 0x03, 0x01]).await.unwrap();
        stalled.push(socket);
    }
    // The established connection is served meanwhile.
    let started = Instant::now();
    assert_eq!(get(&mut established, "/busy").await, "path /busy");
    assert!(started.elapsed() < Duration::from_millis(300));

    // Each stalled one is closed once its deadline passes.
    for mut socket in stalled {
        let mut buf = [0u8; 16];
        let read = tokio::time::timeout(Duration::from_secs(3), socket.read(&mut buf))
            .await
            .expect("closed at the handshake deadline");
        assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    }
    assert_eq!(server.metrics.tls_handshake_failures(), 6);
    // And new handshakes succeed.
    let mut later = connect(&client, server.addr, "localhost").await.unwrap();
    assert_eq!(get(&mut later, "/later").await, "path /later");
}

#[tokio::test]
async fn plain_http_on_the_tls_port_is_told_to_use_https() {
    let (_ca, server) = localhost().await;
    let started = Instant::now();
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    socket
        .write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let response = common::read_to_close(&mut socket).await;
    let response = String::from_utf8(response).unwrap();
    assert!(
        response.starts_with("HTTP/1.1 400 Bad Request\r\n"),
        "{response}"
    );
    assert!(response
        .to_ascii_lowercase()
        .contains("\r\nconnection: close\r\n"));
    assert!(response.contains("https://"));
    assert!(started.elapsed() < Duration::from_secs(2));
    drop(socket);
    common::poll_until(|| server.metrics.tls_handshake_failures() == 1).await;
}

#[tokio::test]
async fn tls_on_the_plain_port_gets_an_immediate_400() {
    let server = common::start(app(), Config::default()).await;
    let ca = Authority::new();
    let started = Instant::now();
    let tcp = TcpStream::connect(server.addr).await.unwrap();
    // A real ClientHello, as a browser sends to an https:// address on
    // the wrong port; the client then waits for the server's hello.
    let name = ServerName::try_from("localhost").unwrap();
    let handshake = ca.client(&[]).connect(name, tcp).await;
    assert!(handshake.is_err());
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "answered after {:?}",
        started.elapsed()
    );
    let mut raw = TcpStream::connect(server.addr).await.unwrap();
    raw.write_all(&[0x16, 0x03, 0x01, 0x00, 0x05])
        .await
        .unwrap();
    let response = tokio::time::timeout(Duration::from_secs(2), common::read_to_close(&mut raw))
        .await
        .expect("answered before the head timeout");
    assert!(
        response.starts_with(b"HTTP/1.1 400 "),
        "{:?}",
        String::from_utf8_lossy(&response)
    );
}

#[tokio::test]
async fn websocket_echoes_over_tls() {
    let (ca, server) = localhost().await;
    let stream = connect(&ca.client(&[]), server.addr, "localhost")
        .await
        .unwrap();
    let (mut ws, response) = tokio_tungstenite::client_async("wss://localhost/ws", stream)
        .await
        .unwrap();
    assert_eq!(response.status(), 101);
    use tokio_tungstenite::tungstenite::Message;
    for text in ["one", "two"] {
        ws.send(Message::text(text)).await.unwrap();
        let echoed = ws.next().await.unwrap().unwrap();
        assert_eq!(echoed, Message::text(text));
    }
    let big = vec![7u8; 100_000];
    ws.send(Message::binary(big.clone())).await.unwrap();
    assert_eq!(ws.next().await.unwrap().unwrap(), Message::binary(big));
    ws.close(None).await.unwrap();
}

/// A body of `len` letters.
fn letters(len: usize) -> String {
    (0..len)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect()
}

#[tokio::test]
async fn large_bodies_cross_tls_whole_both_ways() {
    let (ca, server) = localhost().await;
    let mut stream = connect(&ca.client(&[]), server.addr, "localhost")
        .await
        .unwrap();
    // Records of 16 KiB in, bodies larger than a write's 64 KiB out; the
    // request's head and body in one write, then in many small ones.
    for len in [1, 16 * 1024 + 1, 1024 * 1024 + 7] {
        let body = letters(len);
        let request =
            format!("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: {len}\r\n\r\n{body}");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut buf = Vec::new();
        let response = common::read_response(&mut stream, &mut buf, false).await;
        assert_eq!(response.body.len(), len);
        assert!(
            response.body == body.as_bytes(),
            "the echo of {len} bytes differs"
        );
    }
    let body = letters(3000);
    let head = format!(
        "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    for chunk in body.as_bytes().chunks(7) {
        stream.write_all(chunk).await.unwrap();
        stream.flush().await.unwrap();
    }
    let mut buf = Vec::new();
    let response = common::read_response(&mut stream, &mut buf, false).await;
    assert!(response.body == body.as_bytes());
}

#[tokio::test]
async fn tls_1_2_and_resumed_handshakes_serve_requests() {
    let (ca, server) = localhost().await;

    let tls12 = ClientConfig::builder_with_protocol_versions(&[&rustls::version::TLS12])
        .with_root_certificates(ca.roots())
        .with_no_client_auth();
    let mut stream = connect(
        &TlsConnector::from(Arc::new(tls12)),
        server.addr,
        "localhost",
    )
    .await
    .unwrap();
    assert_eq!(
        stream.get_ref().1.protocol_version(),
        Some(rustls::ProtocolVersion::TLSv1_2)
    );
    assert_eq!(get(&mut stream, "/twelve").await, "path /twelve");

    // The same client twice: the second handshake resumes the first's
    // session from the ticket the server sent after its handshake.
    let client = ca.client(&[]);
    for (round, kind) in [rustls::HandshakeKind::Full, rustls::HandshakeKind::Resumed]
        .into_iter()
        .enumerate()
    {
        let mut stream = connect(&client, server.addr, "localhost").await.unwrap();
        assert_eq!(get(&mut stream, "/again").await, "path /again");
        assert_eq!(
            stream.get_ref().1.handshake_kind(),
            Some(kind),
            "handshake {round}"
        );
    }
    assert_eq!(server.metrics.tls_handshakes(), 3);
}

#[tokio::test]
async fn the_server_ends_a_connection_with_close_notify() {
    let (ca, server) = localhost().await;
    let mut stream = connect(&ca.client(&[]), server.addr, "localhost")
        .await
        .unwrap();
    stream
        .write_all(b"GET /bye HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    // A read to the end fails with UnexpectedEof unless the server sent
    // its close_notify before closing.
    let mut all = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut all))
        .await
        .expect("the server closes")
        .expect("a clean TLS close");
    assert!(String::from_utf8_lossy(&all).ends_with("path /bye"));
}

#[tokio::test]
async fn a_forged_record_gets_an_alert_and_the_connection_ends() {
    let (ca, server) = localhost().await;
    let mut stream = connect(&ca.client(&[]), server.addr, "localhost")
        .await
        .unwrap();
    assert_eq!(get(&mut stream, "/first").await, "path /first");
    // An application-data record the client's keys did not seal.
    let mut forged = vec![0x17, 0x03, 0x03, 0x00, 0x40];
    forged.extend_from_slice(&[0x5a; 0x40]);
    stream.get_mut().0.write_all(&forged).await.unwrap();
    let mut rest = Vec::new();
    let ended = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut rest))
        .await
        .expect("the server ends the connection at once");
    let error = ended.expect_err("the server's alert, not a clean close");
    assert!(
        error.to_string().contains("BadRecordMac"),
        "the client hears why: {error}"
    );
    // Others are served on.
    let mut other = connect(&ca.client(&[]), server.addr, "localhost")
        .await
        .unwrap();
    assert_eq!(get(&mut other, "/other").await, "path /other");
}
