//! Helpers for ringstream's wire tests: start a server on loopback and talk
//! to it over raw sockets. Used by the tests of `ringstream` and
//! `ringstream-cli`; not published.
#![allow(missing_docs)]

pub mod alloc;
pub mod tls;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http::{Request, Response};
use http_body::Body;
use ringstream::server::{self, Config, Metrics};
use ringstream::{BoxError, Error, Incoming};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tower_service::Service;

/// A server running on 127.0.0.1 on a free port.
pub struct TestServer {
    pub addr: SocketAddr,
    pub metrics: Arc<Metrics>,
    stop: Option<oneshot::Sender<()>>,
    handle: Option<JoinHandle<Result<(), Error>>>,
}

impl TestServer {
    /// Ask for a graceful shutdown and wait until the server has stopped.
    pub async fn shutdown(mut self) -> Result<(), Error> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.handle.take() {
            Some(handle) => handle.await.expect("server task"),
            None => Ok(()),
        }
    }

    /// Begin a graceful shutdown without waiting for it.
    pub fn begin_shutdown(&mut self) -> JoinHandle<Result<(), Error>> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.handle.take().expect("server still running")
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(handle) = self.handle.take() {
            handle.abort();
        }
    }
}

/// Start any service with `config`, through `server::serve`.
pub async fn start<S, B>(service: S, config: Config) -> TestServer
where
    S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    start_with(config, |_| service).await
}

/// Start the service `make` builds from the server's counters, with
/// `config`, through `server::serve`.
pub async fn start_with<S, B>(config: Config, make: impl FnOnce(Arc<Metrics>) -> S) -> TestServer
where
    S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let server = server::Server::bind("127.0.0.1:0")
        .await
        .expect("bind")
        .with_config(config);
    let addr = server.local_addr().expect("local addr");
    let metrics = server.metrics();
    let serve = server.serve(make(metrics.clone()));
    let (stop, stopped) = oneshot::channel::<()>();
    let handle = tokio::spawn(serve.with_graceful_shutdown(async {
        let _ = stopped.await;
    }));
    TestServer {
        addr,
        metrics,
        stop: Some(stop),
        handle: Some(handle),
    }
}

/// Send `request` on a fresh connection and read until the server closes
/// (or 10 s pass).
pub async fn roundtrip(addr: SocketAddr, request: &[u8]) -> Vec<u8> {
    let mut socket = TcpStream::connect(addr).await.expect("connect");
    socket.write_all(request).await.expect("write");
    read_to_close(&mut socket).await
}

/// Read until EOF (or an error such as a reset) within 10 s.
pub async fn read_to_close(socket: &mut (impl tokio::io::AsyncRead + Unpin)) -> Vec<u8> {
    let mut out = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), async {
        let mut buf = [0u8; 16 * 1024];
        loop {
            match socket.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(
        read.is_ok(),
        "server did not close the connection; got {:?}",
        String::from_utf8_lossy(&out)
    );
    out
}

/// One parsed response.
#[derive(Debug)]
pub struct Parsed {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Parsed {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn closes(&self) -> bool {
        self.header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"))
    }
}

/// Read one response (Content-Length or chunked body, or none for HEAD and
/// bodiless statuses) from `socket`, using `buf` for leftover bytes.
pub async fn read_response(
    socket: &mut (impl tokio::io::AsyncRead + Unpin),
    buf: &mut Vec<u8>,
    head_request: bool,
) -> Parsed {
    tokio::time::timeout(
        Duration::from_secs(30),
        read_response_inner(socket, buf, head_request),
    )
    .await
    .expect("response within 30 s")
}

async fn fill(socket: &mut (impl tokio::io::AsyncRead + Unpin), buf: &mut Vec<u8>) {
    let mut chunk = [0u8; 64 * 1024];
    let n = socket.read(&mut chunk).await.expect("read");
    assert!(
        n > 0,
        "unexpected EOF; buffered: {:?}",
        String::from_utf8_lossy(buf)
    );
    buf.extend_from_slice(&chunk[..n]);
}

async fn read_response_inner(
    socket: &mut (impl tokio::io::AsyncRead + Unpin),
    buf: &mut Vec<u8>,
    head_request: bool,
) -> Parsed {
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        fill(socket, buf).await;
    };
    let head = String::from_utf8(buf[..head_end].to_vec()).expect("utf-8 head");
    buf.drain(..head_end);
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap();
    let status: u16 = status_line.split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (n, v) = l.split_once(':').expect("field line");
            (n.trim().to_string(), v.trim().to_string())
        })
        .collect();
    let mut parsed = Parsed {
        status,
        headers,
        body: Vec::new(),
    };
    if head_request || status < 200 || status == 204 || status == 304 {
        return parsed;
    }
    if let Some(len) = parsed.header("content-length") {
        let len: usize = len.parse().unwrap();
        while buf.len() < len {
            fill(socket, buf).await;
        }
        parsed.body = buf.drain(..len).collect();
    } else if parsed.header("transfer-encoding").is_some() {
        let mut decoder = ringstream::ringstream_core::h1::Decoder::chunked(
            ringstream::ringstream_core::Limits::DEFAULT,
        );
        loop {
            let progress = decoder.decode(buf).expect("valid chunked response");
            parsed.body.extend_from_slice(&buf[progress.data.clone()]);
            buf.drain(..progress.consumed);
            if progress.finished {
                break;
            }
            if progress.consumed == 0 || buf.is_empty() {
                fill(socket, buf).await;
            }
        }
    }
    parsed
}

/// Parse every response in `bytes` (a whole conversation read to close).
pub fn status_of(bytes: &[u8]) -> Option<u16> {
    let text = std::str::from_utf8(bytes.get(..12)?).ok()?;
    text.get(9..12)?.parse().ok()
}

/// A deterministic pseudo-random generator (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    pub fn fill(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
}

/// Polls `done` every few milliseconds until it holds; panics after 10 s.
pub async fn poll_until(mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "condition not met within 10 s"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Everything a log subscriber writes, shared with the test that reads it
/// (`tracing_subscriber::fmt().with_writer(move || captured.clone())`).
#[derive(Clone, Default)]
pub struct Captured(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("log buffer").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    /// What was written so far, as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().expect("log buffer")).into_owned()
    }
}
