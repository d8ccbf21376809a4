//! `ringstream serve` over HTTPS, through the real binary and a rustls
//! client: the development certificate of `--tls-self-signed` (trusted
//! from the file it writes, checked against the fingerprint it logs),
//! `--tls-cert` / `--tls-key` from a certificate authority, WSS, server-
//! sent events and static files over TLS, client certificates, reloading
//! on SIGHUP, the `--redirect-http` listener, and the errors of bad
//! certificate files.

use crate::common;

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

use common::tls::{Authority, Issued};
use futures_util::{SinkExt, StreamExt};
use rcgen::{CertificateParams, KeyPair};
use ringstream_cli::https::fingerprint;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, RootCertStore};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;
use tokio_tungstenite::tungstenite::Message;

/// How long anything the server is asked for may take.
const WAIT: Duration = Duration::from_secs(20);

/// A running `ringstream serve`, killed when the test ends.
struct Running {
    child: Child,
    /// The HTTPS address.
    addr: SocketAddr,
    /// The plain-HTTP address of `--redirect-http`, when asked for.
    redirect: Option<SocketAddr>,
    /// Its stderr, line by line.
    lines: mpsc::Receiver<String>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Running {
    /// The first stderr line containing `needle`, waiting up to [`WAIT`].
    fn log_line(&self, needle: &str) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.contains(needle) => return line,
                Ok(_) => continue,
                Err(e) => panic!("no log line with {needle:?}: {e}"),
            }
        }
    }

    #[cfg(unix)]
    fn signal(&self, signal: libc::c_int) {
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: sends a signal to the child this test started.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    }

    /// Waits for the process to end (within [`WAIT`]).
    fn wait_exit(&mut self) -> std::process::ExitStatus {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().expect("poll the child") {
                return status;
            }
            assert!(Instant::now() < deadline, "the server did not stop");
            thread::sleep(Duration::from_millis(20));
        }
    }
}

/// `ringstream serve --addr 127.0.0.1:0 --workers 1` with `args` (which
/// may give `--workers` instead), at the default log level; waits for the
/// HTTPS address line (and the redirect line with `--redirect-http`).
fn start(args: &[&str]) -> Running {
    let workers: &[&str] = if args.contains(&"--workers") {
        &[]
    } else {
        &["--workers", "1"]
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_ringstream"))
        .args(["serve", "--addr", "127.0.0.1:0"])
        .args(workers)
        .args(args)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the ringstream binary");
    let stdout = child.stdout.take().expect("stdout");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, lines) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let mut stdout = BufReader::new(stdout);
    let mut line = String::new();
    stdout.read_line(&mut line).expect("read the address line");
    let addr: SocketAddr = line
        .trim()
        .strip_prefix("ringstream listening on https://")
        .unwrap_or_else(|| {
            let log: Vec<String> = lines.try_iter().collect();
            panic!("unexpected first line {line:?}; log: {log:#?}")
        })
        .parse()
        .expect("an address");
    let redirect = args.contains(&"--redirect-http").then(|| {
        let mut line = String::new();
        stdout.read_line(&mut line).expect("read the redirect line");
        let rest = line
            .trim()
            .strip_prefix("ringstream redirecting http://")
            .unwrap_or_else(|| panic!("unexpected second line {line:?}"));
        let (from, to) = rest.split_once(" to port ").expect("the redirect line");
        assert_eq!(to.parse::<u16>().unwrap(), addr.port());
        from.parse().expect("an address")
    });
    Running {
        child,
        addr,
        redirect,
        lines,
    }
}

/// A directory of the test's own under Cargo's temporary directory,
/// emptied.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("tls-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

fn client_builder() -> rustls::ConfigBuilder<ClientConfig, rustls::WantsVerifier> {
    ClientConfig::builder_with_provider(Arc::new(rustls::crypto::aws_lc_rs::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
}

fn roots(anchors: &[CertificateDer<'static>]) -> RootCertStore {
    let mut roots = RootCertStore::empty();
    for anchor in anchors {
        roots.add(anchor.clone()).unwrap();
    }
    roots
}

/// A client that trusts `anchors` alone.
fn client(anchors: &[CertificateDer<'static>]) -> TlsConnector {
    let config = client_builder()
        .with_root_certificates(roots(anchors))
        .with_no_client_auth();
    TlsConnector::from(Arc::new(config))
}

/// A client that trusts `anchors` and shows `identity`.
fn client_with_cert(anchors: &[CertificateDer<'static>], identity: &Issued) -> TlsConnector {
    let chain = vec![CertificateDer::from_pem_slice(identity.cert.as_bytes()).unwrap()];
    let key = PrivateKeyDer::from_pem_slice(identity.key.as_bytes()).unwrap();
    let config = client_builder()
        .with_root_certificates(roots(anchors))
        .with_client_auth_cert(chain, key)
        .unwrap();
    TlsConnector::from(Arc::new(config))
}

async fn connect(
    connector: &TlsConnector,
    addr: SocketAddr,
    name: &str,
) -> std::io::Result<TlsStream<TcpStream>> {
    let tcp = TcpStream::connect(addr).await?;
    let name = ServerName::try_from(name.to_string()).unwrap();
    tokio::time::timeout(WAIT, connector.connect(name, tcp))
        .await
        .expect("the handshake in time")
}

/// The certificate the server presented.
fn presented(stream: &TlsStream<TcpStream>) -> Vec<u8> {
    let certs = stream.get_ref().1.peer_certificates().unwrap();
    certs[0].as_ref().to_vec()
}

/// A `GET` of `path` on a keep-alive connection, and its response.
async fn get(stream: &mut TlsStream<TcpStream>, path: &str) -> common::Parsed {
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    common::read_response(stream, &mut buf, false).await
}

/// Sends text and binary messages to `/ws/echo` over `stream` and checks
/// they come back.
async fn wss_echo(stream: TlsStream<TcpStream>) {
    let (mut ws, response) = tokio_tungstenite::client_async("wss://localhost/ws/echo", stream)
        .await
        .expect("the WebSocket handshake over TLS");
    assert_eq!(response.status(), 101);
    let text = "ringstream over TLS ✓ ".repeat(1000);
    ws.send(Message::text(text.clone())).await.unwrap();
    let next = tokio::time::timeout(WAIT, ws.next()).await.unwrap();
    match next {
        Some(Ok(Message::Text(back))) => assert!(back.as_str() == text, "the text differs"),
        other => panic!("expected the text back, got {other:?}"),
    }
    let blob: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    ws.send(Message::binary(blob.clone())).await.unwrap();
    let next = tokio::time::timeout(WAIT, ws.next()).await.unwrap();
    match next {
        Some(Ok(Message::Binary(back))) => assert!(back.as_ref() == &blob[..], "binary differs"),
        other => panic!("expected the binary back, got {other:?}"),
    }
    ws.close(None).await.unwrap();
}

/// The value of `field=` in a log line (up to the next space).
fn field<'a>(line: &'a str, name: &str) -> &'a str {
    let start = line
        .find(&format!(" {name}="))
        .unwrap_or_else(|| panic!("no {name}= in {line:?}"))
        + name.len()
        + 2;
    line[start..].split(' ').next().unwrap()
}

/// `--tls-self-signed`: the certificate written to the logged file is the
/// one served (its fingerprint as logged), a client that trusts that file
/// gets the dashboard over HTTPS and a WSS echo, for each of the names the
/// certificate is for; the file goes away with the server.
#[tokio::test]
async fn self_signed_serves_https_and_wss_with_the_certificate_it_wrote() {
    let mut server = start(&["--tls-self-signed"]);
    let line = server.log_line("self-signed development certificate");
    let logged_print = field(&line, "sha256").to_string();
    let cert_path = PathBuf::from(field(&line, "cert"));
    let pem = std::fs::read(&cert_path).expect("the written certificate");
    let der = CertificateDer::from_pem_slice(&pem).expect("a PEM certificate");
    assert_eq!(fingerprint(der.as_ref()), logged_print);
    assert!(!String::from_utf8_lossy(&pem).contains("PRIVATE KEY"));

    let trusting = client(std::slice::from_ref(&der));
    let mut stream = connect(&trusting, server.addr, "localhost").await.unwrap();
    assert_eq!(presented(&stream), der.as_ref());
    assert_eq!(stream.get_ref().1.alpn_protocol(), None);
    let page = get(&mut stream, "/").await;
    assert_eq!(page.status, 200);
    assert!(String::from_utf8_lossy(&page.body).contains("<html"));
    // Keep-alive over TLS: a second request on the same connection.
    let json = get(&mut stream, "/api/livedata").await;
    assert_eq!(json.status, 200);
    drop(stream);

    // The certificate names 127.0.0.1 too (and ::1, where there is one).
    let stream = connect(&trusting, server.addr, "127.0.0.1").await.unwrap();
    wss_echo(stream).await;

    // A client that does not trust it is refused by its own side.
    let other = KeyPair::generate().unwrap();
    let stranger = CertificateParams::new(vec!["localhost".to_string()])
        .unwrap()
        .self_signed(&other)
        .unwrap();
    let untrusting = client(&[stranger.der().clone()]);
    assert!(connect(&untrusting, server.addr, "localhost")
        .await
        .is_err());

    #[cfg(unix)]
    {
        server.signal(libc::SIGTERM);
        assert!(server.wait_exit().success());
        assert!(!cert_path.exists(), "{} left behind", cert_path.display());
        assert!(!cert_path.parent().unwrap().exists());
    }
}

/// A browser-like client offering `h2` and `http/1.1` gets HTTP/2: the
/// dashboard and the live data come over it; with `--no-http2` it gets
/// HTTP/1.1.
#[tokio::test]
async fn self_signed_serves_http2_by_alpn_unless_told_not_to() {
    let server = start(&["--tls-self-signed"]);
    let line = server.log_line("self-signed development certificate");
    let pem = std::fs::read(field(&line, "cert")).expect("the written certificate");
    let der = CertificateDer::from_pem_slice(&pem).expect("a PEM certificate");
    let mut config = client_builder()
        .with_root_certificates(roots(std::slice::from_ref(&der)))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let browser_like = TlsConnector::from(Arc::new(config));

    let stream = connect(&browser_like, server.addr, "localhost")
        .await
        .unwrap();
    assert_eq!(stream.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let (client, connection) = h2::client::handshake(stream).await.unwrap();
    tokio::spawn(connection);
    let mut client = client.ready().await.unwrap();
    for (path, needle) in [("/", "<html"), ("/api/livedata", "{")] {
        let request = http::Request::get(format!("https://localhost{path}"))
            .body(())
            .unwrap();
        let (response, _) = client.send_request(request, true).unwrap();
        let response = tokio::time::timeout(WAIT, response).await.unwrap().unwrap();
        assert_eq!(response.status(), 200, "{path}");
        assert_eq!(response.version(), http::Version::HTTP_2);
        let mut body = response.into_body();
        let mut text = Vec::new();
        while let Some(data) = body.data().await {
            let data = data.unwrap();
            let _ = body.flow_control().release_capacity(data.len());
            text.extend_from_slice(&data);
        }
        assert!(String::from_utf8_lossy(&text).contains(needle), "{path}");
        client = client.ready().await.unwrap();
    }
    // The access line says which version served the request.
    let access = server.log_line("/api/livedata");
    assert!(
        access.contains("network.protocol.version=\"2\""),
        "{access}"
    );

    let h1_only = start(&["--tls-self-signed", "--no-http2"]);
    let line = h1_only.log_line("self-signed development certificate");
    let pem = std::fs::read(field(&line, "cert")).expect("the written certificate");
    let der = CertificateDer::from_pem_slice(&pem).expect("a PEM certificate");
    let mut config = client_builder()
        .with_root_certificates(roots(std::slice::from_ref(&der)))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let browser_like = TlsConnector::from(Arc::new(config));
    let mut stream = connect(&browser_like, h1_only.addr, "localhost")
        .await
        .unwrap();
    assert_eq!(stream.get_ref().1.alpn_protocol(), Some(&b"http/1.1"[..]));
    assert_eq!(get(&mut stream, "/api/livedata").await.status, 200);
}

/// `--tls-cert` / `--tls-key` from a certificate authority: HTTPS, WSS,
/// server-sent events and a static file larger than a TLS record.
#[tokio::test]
async fn cert_and_key_from_a_ca_serve_https_wss_events_and_static_files() {
    let dir = scratch("ca");
    let ca = Authority::new();
    let issued = ca.issue(&["localhost"]);
    let (cert, key) = issued.write(&dir);
    let root = dir.join("root");
    std::fs::create_dir(&root).unwrap();
    let file: Vec<u8> = (0..200_000u32).map(|i| (i % 253) as u8).collect();
    std::fs::write(root.join("blob.bin"), &file).unwrap();
    let server = start(&[
        "--tls-cert",
        path_str(&cert),
        "--tls-key",
        path_str(&key),
        "--root",
        path_str(&root),
    ]);
    let trusting = client(&[ca.der()]);

    let mut stream = connect(&trusting, server.addr, "localhost").await.unwrap();
    assert_eq!(presented(&stream), issued.der());
    let got = get(&mut stream, "/static/blob.bin").await;
    assert_eq!(got.status, 200);
    assert!(got.body == file, "the static file differs over TLS");
    let bytes = get(&mut stream, "/bytes/100000").await;
    assert_eq!(bytes.body.len(), 100_000);
    drop(stream);

    // Server-sent events: the head, then the first event.
    let mut stream = connect(&trusting, server.addr, "localhost").await.unwrap();
    stream
        .write_all(b"GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .unwrap();
    let mut seen = Vec::new();
    let read = tokio::time::timeout(WAIT, async {
        let mut chunk = [0u8; 4096];
        while !String::from_utf8_lossy(&seen).contains("\ndata:") {
            let n = stream.read(&mut chunk).await.unwrap();
            assert!(n > 0, "the event stream ended");
            seen.extend_from_slice(&chunk[..n]);
        }
    })
    .await;
    let seen = String::from_utf8_lossy(&seen);
    assert!(read.is_ok(), "no event in time: {seen:?}");
    assert!(seen.starts_with("HTTP/1.1 200 OK\r\n"), "{seen}");
    assert!(seen.contains("text/event-stream"), "{seen}");
    drop(stream);

    let stream = connect(&trusting, server.addr, "localhost").await.unwrap();
    wss_echo(stream).await;

    // Plain HTTP on the HTTPS port gets a plain-text 400 naming https.
    let mut plain = TcpStream::connect(server.addr).await.unwrap();
    plain
        .write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .unwrap();
    let answer = common::read_to_close(&mut plain).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("https"), "{answer}");
}

/// `--tls-client-ca`: a client without a certificate from that CA is
/// refused in the handshake; one with it is served.
#[tokio::test]
async fn a_client_ca_requires_client_certificates() {
    let dir = scratch("client-ca");
    let ca = Authority::new();
    let (cert, key) = ca.issue(&["localhost"]).write(&dir);
    let clients = Authority::new();
    let client_ca = dir.join("clients.pem");
    std::fs::write(&client_ca, clients.pem()).unwrap();
    let server = start(&[
        "--tls-cert",
        path_str(&cert),
        "--tls-key",
        path_str(&key),
        "--tls-client-ca",
        path_str(&client_ca),
    ]);

    let named = client_with_cert(&[ca.der()], &clients.issue(&["client"]));
    let mut stream = connect(&named, server.addr, "localhost").await.unwrap();
    assert_eq!(get(&mut stream, "/bytes/10").await.status, 200);

    // In TLS 1.3 the client learns of the refusal at its first read.
    for connector in [
        client(&[ca.der()]),
        client_with_cert(&[ca.der()], &ca.issue(&["client"])),
    ] {
        let refused = async {
            let mut stream = connect(&connector, server.addr, "localhost").await?;
            stream
                .write_all(b"GET /bytes/10 HTTP/1.1\r\nHost: localhost\r\n\r\n")
                .await?;
            let mut byte = [0u8; 1];
            match stream.read(&mut byte).await? {
                0 => Err(std::io::ErrorKind::UnexpectedEof.into()),
                _ => Ok(()),
            }
        };
        let outcome: std::io::Result<()> = tokio::time::timeout(WAIT, refused).await.unwrap();
        assert!(
            outcome.is_err(),
            "a client without the CA's certificate was served"
        );
    }
}

/// SIGHUP reads the certificate files again: new connections get the new
/// certificate, a connection opened before keeps going; files that do not
/// load are logged and the certificate in use stays.
#[cfg(unix)]
#[tokio::test]
async fn sighup_reloads_the_certificate_and_keeps_the_old_one_on_error() {
    let dir = scratch("sighup");
    let ca = Authority::new();
    let first = ca.issue(&["localhost"]);
    let (cert, key) = first.write(&dir);
    let server = start(&["--tls-cert", path_str(&cert), "--tls-key", path_str(&key)]);
    let trusting = client(&[ca.der()]);
    let mut open = connect(&trusting, server.addr, "localhost").await.unwrap();
    assert_eq!(presented(&open), first.der());

    let second = ca.issue(&["localhost"]);
    second.write(&dir);
    server.signal(libc::SIGHUP);
    let line = server.log_line("SIGHUP");
    assert!(line.contains("reloaded"), "{line}");
    assert!(line.contains(path_str(&cert)), "{line}");
    let stream = connect(&trusting, server.addr, "localhost").await.unwrap();
    assert_eq!(presented(&stream), second.der());
    // The connection opened before the reload is still served.
    let still = get(&mut open, "/bytes/5").await;
    assert_eq!((still.status, still.body.len()), (200, 5));

    // A key that does not fit the certificate: the error names the files
    // and the second certificate stays.
    std::fs::write(&key, ca.issue(&["localhost"]).key).unwrap();
    server.signal(libc::SIGHUP);
    let line = server.log_line("SIGHUP");
    assert!(line.contains("not reloaded"), "{line}");
    assert!(line.contains("ERROR"), "{line}");
    assert!(line.contains("does not fit"), "{line}");
    let stream = connect(&trusting, server.addr, "localhost").await.unwrap();
    assert_eq!(presented(&stream), second.der());

    // A missing file: the error says which.
    std::fs::remove_file(&cert).unwrap();
    server.signal(libc::SIGHUP);
    let line = server.log_line("SIGHUP");
    assert!(line.contains("not reloaded"), "{line}");
    assert!(
        line.contains(&format!("cannot read {}", cert.display())),
        "{line}"
    );
    let stream = connect(&trusting, server.addr, "localhost").await.unwrap();
    assert_eq!(presented(&stream), second.der());
}

/// `--redirect-http`: every request to the plain-HTTP listener gets `308`
/// to the same path and query on the HTTPS port, at the host it asked
/// for; a request without `Host` gets `400`. The redirect leads to the
/// HTTPS server.
#[tokio::test]
async fn redirect_http_answers_308_to_the_https_port() {
    let dir = scratch("redirect");
    let server = start(&[
        "--tls-self-signed",
        "--tls-self-signed-out",
        path_str(&dir),
        "--redirect-http",
        "127.0.0.1:0",
    ]);
    let redirect = server.redirect.expect("the redirect address");
    let https_port = server.addr.port();

    let ask = |request: String| async move {
        let answer = common::roundtrip(redirect, request.as_bytes()).await;
        let mut buf = answer;
        let mut bytes: &[u8] = &[];
        common::read_response(&mut bytes, &mut buf, false).await
    };
    let moved = ask(format!(
        "GET /api/livedata?x=1&y=%20 HTTP/1.1\r\nHost: localhost:{}\r\n\
         Connection: close\r\n\r\n",
        redirect.port()
    ))
    .await;
    assert_eq!(moved.status, 308);
    let location = format!("https://localhost:{https_port}/api/livedata?x=1&y=%20");
    assert_eq!(moved.header("location"), Some(location.as_str()));

    // Any method, and the host as the client wrote it.
    let posted = ask(
        "POST /upload HTTP/1.1\r\nHost: LocalHost\r\nContent-Length: 3\r\n\
         Connection: close\r\n\r\nabc"
            .to_string(),
    )
    .await;
    assert_eq!(posted.status, 308);
    let location = format!("https://LocalHost:{https_port}/upload");
    assert_eq!(posted.header("location"), Some(location.as_str()));

    // HTTP/1.0 may leave Host out: there is nowhere to send it.
    let hostless = ask("GET / HTTP/1.0\r\n\r\n".to_string()).await;
    assert_eq!(hostless.status, 400);
    assert_eq!(hostless.header("location"), None);

    // The redirect leads to the dashboard, with the certificate written to
    // the directory asked for.
    let pem = std::fs::read(dir.join("cert.pem")).expect("the written certificate");
    let der = CertificateDer::from_pem_slice(&pem).unwrap();
    let line = server.log_line("self-signed development certificate");
    assert_eq!(field(&line, "sha256"), fingerprint(der.as_ref()));
    let mut stream = connect(&client(&[der]), server.addr, "localhost")
        .await
        .unwrap();
    let page = get(&mut stream, "/api/livedata?x=1&y=%20").await;
    assert_eq!(page.status, 200);
}

/// `--reuse-port` with TLS and `--redirect-http`: every listener speaks
/// HTTPS with the one certificate, the redirect has its own listener, and
/// SIGTERM stops them all.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn reuse_port_serves_https_on_every_listener_and_redirects() {
    let dir = scratch("reuse-port");
    let mut server = start(&[
        "--workers",
        "2",
        "--reuse-port",
        "--tls-self-signed",
        "--tls-self-signed-out",
        path_str(&dir),
        "--redirect-http",
        "127.0.0.1:0",
    ]);
    let line = server.log_line("one listener per thread");
    assert!(line.contains("listeners=2"), "{line:?}");
    let pem = std::fs::read(dir.join("cert.pem")).expect("the written certificate");
    let der = CertificateDer::from_pem_slice(&pem).unwrap();
    let trusting = client(std::slice::from_ref(&der));
    // Connections from 16 ports, spread over both listeners.
    for _ in 0..16 {
        let mut stream = connect(&trusting, server.addr, "localhost").await.unwrap();
        assert_eq!(presented(&stream), der.as_ref());
        let bytes = get(&mut stream, "/bytes/13").await;
        assert_eq!(bytes.status, 200);
        assert_eq!(bytes.body.len(), 13);
    }
    let redirect = server.redirect.expect("the redirect address");
    let answer = common::roundtrip(
        redirect,
        b"GET /x HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    )
    .await;
    let (mut buf, mut bytes) = (answer, &[][..]);
    let moved = common::read_response(&mut bytes, &mut buf, false).await;
    assert_eq!(moved.status, 308);
    let location = format!("https://localhost:{}/x", server.addr.port());
    assert_eq!(moved.header("location"), Some(location.as_str()));

    server.signal(libc::SIGTERM);
    assert!(server.wait_exit().success());
}

/// The output of `ringstream serve` with `args` that stop it at start:
/// its exit status and stderr.
fn fail_to_start(args: &[&str]) -> (std::process::ExitStatus, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ringstream"))
        .args(["serve", "--addr", "127.0.0.1:0", "--workers", "1"])
        .args(args)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the ringstream binary");
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    (status, stderr)
}

/// A certificate that cannot be loaded stops the server at start with one
/// line that names the file, and a non-zero exit.
#[test]
fn a_bad_certificate_file_is_a_one_line_error_naming_it() {
    let dir = scratch("bad-files");
    let ca = Authority::new();
    let (cert, key) = ca.issue(&["localhost"]).write(&dir);
    let missing = dir.join("missing.pem");
    let garbage = dir.join("garbage.pem");
    std::fs::write(&garbage, "not a certificate\n").unwrap();
    let other_key = dir.join("other-key.pem");
    std::fs::write(&other_key, ca.issue(&["localhost"]).key).unwrap();
    let cases = [
        (missing.as_path(), key.as_path(), "cannot read"),
        (garbage.as_path(), key.as_path(), "garbage.pem"),
        (cert.as_path(), missing.as_path(), "cannot read"),
        (cert.as_path(), other_key.as_path(), "does not fit"),
    ];
    for (cert, key, says) in cases {
        let (status, stderr) =
            fail_to_start(&["--tls-cert", path_str(cert), "--tls-key", path_str(key)]);
        assert_eq!(status.code(), Some(1), "{stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{stderr}");
        let line = lines[0];
        assert!(line.starts_with("error: "), "{line}");
        assert!(line.contains(says), "{says:?} missing from {line}");
        assert!(line.contains(path_str(cert)), "{line}");
        assert!(line.contains(path_str(key)), "{line}");
        assert!(!line.contains("panicked"), "{line}");
    }

    // A client CA file that is not there.
    let (status, stderr) = fail_to_start(&[
        "--tls-self-signed",
        "--tls-self-signed-out",
        path_str(&dir),
        "--tls-client-ca",
        path_str(&missing),
    ]);
    assert_eq!(status.code(), Some(1), "{stderr}");
    let last = stderr.lines().last().unwrap();
    assert!(
        last.starts_with("error: ") && last.contains(&format!("cannot read {}", missing.display())),
        "{stderr}"
    );
}

/// The flags that go together: a certificate needs its key, the
/// development certificate excludes a given one, and the client CA and
/// the redirect need TLS.
#[test]
fn the_tls_flags_go_together() {
    for args in [
        &["--tls-cert", "c.pem"][..],
        &["--tls-key", "k.pem"],
        &[
            "--tls-self-signed",
            "--tls-cert",
            "c.pem",
            "--tls-key",
            "k.pem",
        ],
        &["--tls-client-ca", "ca.pem"],
        &["--redirect-http", "127.0.0.1:0"],
        &["--tls-self-signed-out", "."],
    ] {
        let (status, stderr) = fail_to_start(args);
        assert_eq!(status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    }
}
