//! The demo app driven by a client implementation ringstream does not share
//! code with: hyper's low-level HTTP/1 client over real loopback sockets,
//! plus raw `TcpStream` byte strings where the exact bytes on the wire are
//! the point (an HTTP/1.0 exchange closed by the server).
//!
//! Each case keeps one connection per [`Client`], so "the server kept the
//! connection alive" is checked twice: hyper's sender is bound to its single
//! connection, and the server's `connections_accepted` counter must read 1.

use crate::common;

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{header, HeaderValue, Method, Request, Response, StatusCode, Version};
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use ringstream::server::Config;
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use common::{read_to_close, start_app, TestServer};

/// How long one request/response exchange may take, in seconds.
const EXCHANGE_TIMEOUT_SECS: u64 = 30;

/// A request body: the given chunks in order, each one frame, sent only
/// once `gate` (if any) has opened. Its size is announced (so hyper writes
/// `Content-Length`) unless it was made with [`Frames::chunked`].
struct Frames {
    chunks: VecDeque<Bytes>,
    gate: Option<oneshot::Receiver<()>>,
    exact: bool,
}

impl Frames {
    fn empty() -> Self {
        Frames::full(Bytes::new())
    }

    fn full(data: impl Into<Bytes>) -> Self {
        let data = data.into();
        Frames {
            chunks: if data.is_empty() {
                VecDeque::new()
            } else {
                VecDeque::from([data])
            },
            gate: None,
            exact: true,
        }
    }

    /// Chunks of unannounced total size: hyper sends them chunked.
    fn chunked<I: IntoIterator<Item = Bytes>>(chunks: I) -> Self {
        Frames {
            chunks: chunks.into_iter().collect(),
            gate: None,
            exact: false,
        }
    }

    /// Holds the body back until `gate` fires (or its sender is dropped).
    fn after(mut self, gate: oneshot::Receiver<()>) -> Self {
        self.gate = Some(gate);
        self
    }
}

impl Body for Frames {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if let Some(gate) = self.gate.as_mut() {
            // A dropped sender opens the gate too; the assertions on what
            // was seen catch that case.
            let _ = std::task::ready!(Pin::new(gate).poll(cx));
            self.gate = None;
        }
        Poll::Ready(self.chunks.pop_front().map(|c| Ok(Frame::data(c))))
    }

    fn is_end_stream(&self) -> bool {
        self.gate.is_none() && self.chunks.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        if self.exact {
            SizeHint::with_exact(self.chunks.iter().map(|c| c.len() as u64).sum())
        } else {
            SizeHint::default()
        }
    }
}

/// One hyper client connection to a test server.
struct Client {
    addr: SocketAddr,
    sender: SendRequest<Frames>,
    driver: JoinHandle<hyper::Result<()>>,
}

impl Client {
    async fn connect(addr: SocketAddr) -> Client {
        let tcp = TcpStream::connect(addr).await.expect("connect");
        let (sender, conn) = http1::handshake(TokioIo::new(tcp))
            .await
            .expect("hyper handshake");
        let driver = tokio::spawn(conn);
        Client {
            addr,
            sender,
            driver,
        }
    }

    /// A request to `path` with `Host` set, HTTP/1.1.
    fn request(&self, method: Method, path: &str, body: Frames) -> Request<Frames> {
        Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, self.addr.to_string())
            .body(body)
            .expect("request")
    }

    /// Sends `req` on this connection and reads the whole response.
    async fn send(&mut self, req: Request<Frames>) -> Response<Bytes> {
        let what = format!("{} {}", req.method(), req.uri());
        let exchange = async {
            self.sender.ready().await.expect("connection ready");
            let response = self.sender.send_request(req).await.expect("response");
            let (parts, body) = response.into_parts();
            let body = body.collect().await.expect("response body").to_bytes();
            Response::from_parts(parts, body)
        };
        tokio::time::timeout(Duration::from_secs(EXCHANGE_TIMEOUT_SECS), exchange)
            .await
            .unwrap_or_else(|_| panic!("{what}: no response within {EXCHANGE_TIMEOUT_SECS} s"))
    }

    async fn get(&mut self, path: &str) -> Response<Bytes> {
        let req = self.request(Method::GET, path, Frames::empty());
        self.send(req).await
    }

    /// The connection is still open: hyper's driver has not finished and
    /// the server has accepted exactly one connection so far.
    fn assert_single_open_connection(&self, server: &TestServer) {
        assert!(
            !self.driver.is_finished() && !self.sender.is_closed(),
            "the server closed the keep-alive connection"
        );
        assert_eq!(
            server.metrics.connections_accepted(),
            1,
            "the requests needed more than one connection"
        );
    }
}

/// The body `/bytes/N` serves: `ringstream` repeated, cut at N bytes.
fn bytes_body(n: usize) -> Vec<u8> {
    b"ringstream".iter().copied().cycle().take(n).collect()
}

/// The `/upload` answer for `data`.
fn upload_json(data: &[u8]) -> String {
    format!(
        "{{\"bytes\":{},\"sha256\":\"{}\"}}\n",
        data.len(),
        hex::encode(Sha256::digest(data))
    )
}

/// RFC 9112 §9.3: persistent connections. Five requests go over one
/// connection; each answer has its exact length and none closes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_alive_serves_five_requests_on_one_connection() {
    let server = start_app(Config::default()).await;
    let mut client = Client::connect(server.addr).await;
    for n in 1..=5 {
        let response = client.get(&format!("/bytes/{n}")).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.version(), Version::HTTP_11);
        assert_eq!(response.body().len(), n);
        assert_eq!(response.body().as_ref(), bytes_body(n));
        assert_ne!(
            response.headers().get(header::CONNECTION),
            Some(&HeaderValue::from_static("close"))
        );
        client.assert_single_open_connection(&server);
    }
}

/// RFC 9110 §9.3.2: HEAD gets the GET's `Content-Length` and no body; a
/// missing route is `404`, on the same connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn head_and_404() {
    let server = start_app(Config::default()).await;
    let mut client = Client::connect(server.addr).await;
    let req = client.request(Method::HEAD, "/bytes/1234", Frames::empty());
    let head = client.send(req).await;
    assert_eq!(head.status(), StatusCode::OK);
    assert_eq!(head.version(), Version::HTTP_11);
    assert_eq!(
        head.headers().get(header::CONTENT_LENGTH),
        Some(&HeaderValue::from_static("1234"))
    );
    assert!(head.body().is_empty());

    let missing = client.get("/missing").await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    client.assert_single_open_connection(&server);
}

/// RFC 9112 §9.3: an HTTP/1.0 request without keep-alive is answered in
/// HTTP/1.1 and the connection closed after it — through hyper, and as the
/// exact bytes a raw socket reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http10_request_is_answered_and_closed() {
    let server = start_app(Config::default()).await;
    let mut client = Client::connect(server.addr).await;
    let mut req = client.request(Method::GET, "/bytes/10", Frames::empty());
    *req.version_mut() = Version::HTTP_10;
    let response = client.send(req).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.body().as_ref(), b"ringstream");
    let closed = tokio::time::timeout(Duration::from_secs(10), &mut client.driver).await;
    assert!(
        matches!(closed, Ok(Ok(Ok(())))),
        "the server kept an HTTP/1.0 connection open: {closed:?}"
    );

    let mut socket = TcpStream::connect(server.addr).await.expect("connect");
    socket
        .write_all(b"GET /bytes/10 HTTP/1.0\r\n\r\n")
        .await
        .expect("write");
    let all = read_to_close(&mut socket).await;
    let text = String::from_utf8_lossy(&all);
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    assert!(
        text.to_ascii_lowercase()
            .contains("\r\ncontent-length: 10\r\n"),
        "{text}"
    );
    assert!(text.ends_with("\r\n\r\nringstream"), "{text}");
}

/// RFC 9110 §10.1.1: a 3 MiB upload announced with `Expect: 100-continue`
/// is sent only after the server's `100 Continue`, and its SHA-256 comes
/// back; the same bytes sent chunked to `/echo` come back unchanged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upload_with_100_continue_and_chunked_echo() {
    let server = start_app(Config::default()).await;
    let mut data = vec![0u8; 3 * 1024 * 1024 + 17];
    common::Rng(7).fill(&mut data);
    let data = Bytes::from(data);
    let mut client = Client::connect(server.addr).await;

    let (open, gate) = oneshot::channel();
    let open = Mutex::new(Some(open));
    let informational = Arc::new(Mutex::new(Vec::new()));
    let mut req = client.request(
        Method::POST,
        "/upload",
        Frames::full(data.clone()).after(gate),
    );
    req.headers_mut()
        .insert(header::EXPECT, HeaderValue::from_static("100-continue"));
    let seen = informational.clone();
    hyper::ext::on_informational(&mut req, move |res| {
        seen.lock().unwrap().push(res.status());
        if res.status() == StatusCode::CONTINUE {
            if let Some(open) = open.lock().unwrap().take() {
                let _ = open.send(());
            }
        }
    });
    let uploaded = client.send(req).await;
    assert_eq!(*informational.lock().unwrap(), [StatusCode::CONTINUE]);
    assert_eq!(uploaded.status(), StatusCode::OK);
    assert_eq!(
        std::str::from_utf8(uploaded.body()).expect("utf-8"),
        upload_json(&data)
    );

    // Uneven chunks, so chunk boundaries fall anywhere in the server's
    // reads.
    let mut chunks = Vec::new();
    let mut rest = data.clone();
    let mut rng = common::Rng(11);
    while !rest.is_empty() {
        let take = (1 + rng.below(200_000) as usize).min(rest.len());
        chunks.push(rest.split_to(take));
    }
    let mut req = client.request(Method::POST, "/echo", Frames::chunked(chunks));
    req.headers_mut().insert(
        header::TRANSFER_ENCODING,
        HeaderValue::from_static("chunked"),
    );
    let echoed = client.send(req).await;
    assert_eq!(echoed.status(), StatusCode::OK);
    assert!(echoed.body() == &data, "the echo differs from the upload");
    client.assert_single_open_connection(&server);
}

/// A whole session on one keep-alive connection: downloads of several
/// sizes, the live-data JSON, HEAD, a `Content-Length` upload, a chunked
/// echo and a 404.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_connection_serves_a_mixed_session() {
    let server = start_app(Config::default()).await;
    let mut client = Client::connect(server.addr).await;
    for n in [1, 10, 100_000] {
        let response = client.get(&format!("/bytes/{n}")).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.body().len(), n);
    }

    let live = client.get("/api/livedata").await;
    assert_eq!(live.status(), StatusCode::OK);
    let doc: serde_json::Value = serde_json::from_slice(live.body()).expect("livedata is JSON");
    let inverters = doc["inverters"].as_array().expect("an inverters array");
    assert!(inverters.len() >= 24, "{} inverters", inverters.len());

    let req = client.request(Method::HEAD, "/bytes/77", Frames::empty());
    let head = client.send(req).await;
    assert_eq!(
        head.headers().get(header::CONTENT_LENGTH),
        Some(&HeaderValue::from_static("77"))
    );
    assert!(head.body().is_empty());

    let payload: Vec<u8> = (0..=255u8).cycle().take(256 * 4096).collect();
    let req = client.request(Method::POST, "/upload", Frames::full(payload.clone()));
    let uploaded = client.send(req).await;
    assert_eq!(uploaded.status(), StatusCode::OK);
    assert_eq!(
        std::str::from_utf8(uploaded.body()).expect("utf-8"),
        upload_json(&payload)
    );

    let chunks = [
        Bytes::from_static(b"abc"),
        Bytes::from_static(b"defg"),
        Bytes::from(vec![b'h'; 70_000]),
    ];
    let req = client.request(Method::POST, "/echo", Frames::chunked(chunks));
    let echoed = client.send(req).await;
    let mut expected = b"abcdefg".to_vec();
    expected.extend_from_slice(&[b'h'; 70_000]);
    assert_eq!(echoed.status(), StatusCode::OK);
    assert!(echoed.body().as_ref() == expected, "the echo differs");

    let missing = client.get("/nowhere").await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    assert!(!missing.body().is_empty());
    client.assert_single_open_connection(&server);
}
