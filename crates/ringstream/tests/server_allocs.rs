//! What the server allocates per request of its own, over a real socket:
//! a keep-alive or pipelining client and a service whose own allocations
//! are not counted, so the count is the server's alone.
//!
//! The request's `HeaderMap` is the service's to keep or drop, so the
//! server must make one per request; it makes it out of the last
//! response's field map, which costs nothing when the service answered
//! with a field of its own, and two allocations (the map's index and its
//! entries) when it answered with none. `ConnectionInfo` in the request's
//! extensions costs three more (`http::Extensions`' map, its table and the
//! boxed value), and one more with the `axum` feature (axum's
//! `ConnectInfo`, boxed too); `Config::connection_info = false` turns them
//! off.

use std::convert::Infallible;
use std::future::Ready;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use http::{HeaderValue, Request, Response};
use http_body_util::Full;
use ringstream::server::{serve, service_fn, Config};
use ringstream::Incoming;
use ringstream_testkit::alloc::{self as counting, Counting, Uncounted};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[global_allocator]
static GLOBAL: Counting = Counting;

// ---- the services ---------------------------------------------------------

type Answer = Ready<Result<Response<Full<Bytes>>, Infallible>>;

/// A request carried axum's `ConnectInfo` (the tests are built with
/// ringstream's `axum` feature when the workspace's are).
static AXUM_INFO: AtomicBool = AtomicBool::new(false);

fn note_extensions(req: &Request<Incoming>) {
    let connect_info = req
        .extensions()
        .get::<axum::extract::ConnectInfo<SocketAddr>>();
    if connect_info.is_some() {
        AXUM_INFO.store(true, Ordering::Relaxed);
    }
}

/// A static body and no field: the service allocates nothing.
fn bare(req: Request<Incoming>) -> Answer {
    note_extensions(&req);
    drop(req);
    std::future::ready(Ok(Response::new(Full::new(Bytes::from_static(
        b"hello, world!",
    )))))
}

/// A static body and a `Content-Type`, its field map not counted.
fn typed(req: Request<Incoming>) -> Answer {
    let _uncounted = Uncounted::new();
    note_extensions(&req);
    drop(req);
    let mut response = Response::new(Full::new(Bytes::from_static(b"hello, world!")));
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain"),
    );
    std::future::ready(Ok(response))
}

// ---- the client -----------------------------------------------------------

const GET: &[u8] = b"GET /hello HTTP/1.1\r\nHost: test\r\n\r\n";
const POST: &[u8] =
    b"POST /hello HTTP/1.1\r\nHost: test\r\nContent-Length: 13\r\n\r\nhello, world!";

/// Sends `request` `depth` times in one write, `rounds` times, and reads
/// the answers: `response_len` bytes each, all of the same length (the
/// `Date` value has a fixed width). Allocates nothing once `batch` and
/// `buf` have their size.
async fn exchange(socket: &mut TcpStream, batch: &[u8], buf: &mut [u8], rounds: usize) {
    for _ in 0..rounds {
        socket.write_all(batch).await.unwrap();
        socket.read_exact(buf).await.unwrap();
    }
}

/// The length of one response to `request`, and a check that it is a 200.
async fn response_len(socket: &mut TcpStream, request: &[u8]) -> usize {
    socket.write_all(request).await.unwrap();
    let mut got = Vec::new();
    let mut chunk = [0u8; 1024];
    loop {
        let n = socket.read(&mut chunk).await.unwrap();
        assert!(n > 0, "the server closed the connection");
        got.extend_from_slice(&chunk[..n]);
        if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
            assert!(head.starts_with("http/1.1 200 ok\r\n"), "{head}");
            let length: usize = head
                .split("\r\n")
                .find_map(|line| line.strip_prefix("content-length: "))
                .expect("a content-length")
                .parse()
                .unwrap();
            if got.len() == end + 4 + length {
                return got.len();
            }
        }
    }
}

/// Allocations per request of a server running `service` with
/// `connection_info`, for `request` sent `depth` at a time, all counted on
/// this thread (a current-thread runtime runs the server and the client).
fn per_request<S>(service: S, connection_info: bool, request: &'static [u8], depth: usize) -> f64
where
    S: FnMut(Request<Incoming>) -> Answer + Clone + Send + 'static,
{
    let config = Config {
        connection_info,
        ..Config::default()
    };
    per_request_with(service, config, b"", request, depth)
}

/// As [`per_request`], with `config`, the connection opened with `first`
/// (a PROXY header, say).
fn per_request_with<S>(
    service: S,
    config: Config,
    first: &'static [u8],
    request: &'static [u8],
    depth: usize,
) -> f64
where
    S: FnMut(Request<Incoming>) -> Answer + Clone + Send + 'static,
{
    const ROUNDS: usize = 400;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(serve(listener, service_fn(service)).with_config(config));
        let mut socket = TcpStream::connect(addr).await.unwrap();
        socket.set_nodelay(true).unwrap();
        socket.write_all(first).await.unwrap();
        let one = response_len(&mut socket, request).await;
        let batch = request.repeat(depth);
        let mut buf = vec![0u8; one * depth];
        // Warm-up: the connection's blocks, the thread's pools, the timer.
        exchange(&mut socket, &batch, &mut buf, 50).await;
        counting::start();
        exchange(&mut socket, &batch, &mut buf, ROUNDS).await;
        counting::stop() as f64 / (ROUNDS * depth) as f64
    })
}

/// The user problem: a server that allocates per request spends CPU on the
/// allocator whatever the service does. With a service that answers with
/// a field of its own, the next request's field map is made out of that
/// response's: the server allocates nothing per request.
#[test]
fn keep_alive_requests_cost_the_server_no_allocation() {
    let allocs = per_request(typed, false, GET, 1);
    assert_eq!(allocs, 0.0, "server allocations per request");
}

/// Pipelined requests, parsed and answered out of one read, cost no more.
#[test]
fn pipelined_requests_cost_the_server_no_allocation() {
    let allocs = per_request(typed, false, GET, 16);
    assert_eq!(allocs, 0.0, "server allocations per request");
}

/// A request body handed to the service through the connection's slot,
/// which the thread keeps for the next body, costs nothing either.
#[test]
fn a_request_body_costs_the_server_no_allocation() {
    assert_eq!(per_request(typed, false, POST, 1), 0.0);
    assert_eq!(per_request(typed, false, POST, 16), 0.0);
}

/// A service that answers without a field gives no map back: the request's
/// map is made new, its index and its entries (as hyper does).
#[test]
fn a_bare_service_costs_the_request_field_map() {
    assert_eq!(per_request(bare, false, GET, 1), 2.0);
    assert_eq!(per_request(bare, false, POST, 16), 2.0);
}

/// `ConnectionInfo` (on by default) costs three allocations a request:
/// `http::Extensions` boxes its map, allocates the map's table and boxes
/// the value; axum's `ConnectInfo` beside it is boxed too.
#[test]
fn connection_info_costs_three_allocations() {
    let typed_allocs = per_request(typed, true, GET, 1);
    let bare_allocs = per_request(bare, true, GET, 16);
    let axum = f64::from(u8::from(AXUM_INFO.load(Ordering::Relaxed)));
    assert_eq!(typed_allocs, 3.0 + axum);
    assert_eq!(bare_allocs, 5.0 + axum);
}

/// Behind a balancer: the PROXY header is read once per connection, and a
/// keep-alive request then costs what it costs without one (its
/// `ConnectionInfo` names the client through a shared pointer).
#[test]
fn a_proxy_header_costs_no_allocation_per_request() {
    let header: &[u8] = b"PROXY TCP4 203.0.113.7 192.0.2.1 51000 443\r\n";
    let with = |connection_info| Config {
        connection_info,
        proxy_protocol: Some(ringstream::server::ProxyProtocol::from(["127.0.0.0/8"
            .parse()
            .unwrap()])),
        ..Config::default()
    };
    assert_eq!(per_request_with(typed, with(false), header, GET, 1), 0.0);
    assert_eq!(per_request_with(typed, with(false), header, GET, 16), 0.0);
    let axum = f64::from(u8::from(AXUM_INFO.load(Ordering::Relaxed)));
    let typed_allocs = per_request_with(typed, with(true), header, GET, 1);
    assert!(
        typed_allocs == 3.0 || typed_allocs == 3.0 + axum.max(1.0),
        "{typed_allocs}"
    );
}
