//! What an upgraded WebSocket that has not spoken keeps, over a real
//! socket: no read block or write buffer, and nothing of the HTTP
//! connection it came from — the same whether its client sent the upgrade
//! request at once or let the server wait for it first, as a browser may.
//! (The HTTP connection's task ends at the upgrade; a waker of it kept
//! anywhere would keep its whole allocation for the WebSocket's life.)
//!
//! Server and clients run on the test's one thread (a current-thread
//! runtime), whose net bytes allocated the counting allocator keeps: the
//! difference between two readings is what the connections in between
//! hold. No clock is read: each step waits for the server's counters.

use std::convert::Infallible;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ringstream::server::{service_fn, Metrics, Server};
use ringstream::ws::WebSocketUpgrade;
use ringstream::Incoming;
use ringstream_testkit::alloc::{live_bytes, Counting};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Connections held at once in a measurement.
const CONNECTIONS: usize = 32;

const HANDSHAKE: &[u8] =
    b"GET /ws HTTP/1.1\r\nHost: t\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n";

/// An echo server; `started` counts the sockets whose handler has begun
/// (it then waits for a message in the same poll).
async fn start(started: Arc<AtomicUsize>) -> (SocketAddr, Arc<Metrics>) {
    let service = service_fn(move |mut req: http::Request<Incoming>| {
        let started = started.clone();
        async move {
            let upgrade = match WebSocketUpgrade::from_request(&mut req) {
                Ok(upgrade) => upgrade,
                Err(refused) => return Ok::<_, Infallible>(refused.into_response()),
            };
            Ok(upgrade.on_upgrade(move |mut socket| async move {
                started.fetch_add(1, Ordering::Relaxed);
                while let Some(Ok(message)) = socket.recv().await {
                    if message.is_data() && socket.send(message).await.is_err() {
                        break;
                    }
                }
            }))
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let server = Server::from_listener(listener);
    let addr = server.local_addr().unwrap();
    let metrics = server.metrics();
    tokio::spawn(
        server
            .serve(service)
            .with_graceful_shutdown(std::future::pending::<()>()),
    );
    (addr, metrics)
}

/// Yields to the server's tasks until `done`.
async fn until(done: impl Fn() -> bool) {
    while !done() {
        tokio::task::yield_now().await;
    }
}

/// One WebSocket, upgraded and waiting for its first message. `late`: the
/// server's connection has waited for the upgrade request; else the
/// request was there before the server first read the connection.
async fn upgraded(
    addr: SocketAddr,
    metrics: &Metrics,
    started: &AtomicUsize,
    late: bool,
) -> TcpStream {
    let accepted = metrics.connections_accepted();
    let handlers = started.load(Ordering::Relaxed);
    // A blocking connect and write: the request is in the server's socket
    // before this task lets the server run.
    let mut socket = std::net::TcpStream::connect(addr).unwrap();
    if !late {
        socket.write_all(HANDSHAKE).unwrap();
    }
    socket.set_nonblocking(true).unwrap();
    let mut socket = TcpStream::from_std(socket).unwrap();
    // The connection's task has run: its first read found the request, or
    // it waits for it.
    until(|| metrics.connections_accepted() > accepted).await;
    if late {
        socket.write_all(HANDSHAKE).await.unwrap();
    }
    let mut head = [0u8; 512];
    let mut len = 0;
    while !head[..len].ends_with(b"\r\n\r\n") {
        let n = socket.read(&mut head[len..]).await.unwrap();
        assert!(n > 0, "the server closed the connection");
        len += n;
    }
    assert!(head.starts_with(b"HTTP/1.1 101 "), "{:?}", &head[..len]);
    until(|| started.load(Ordering::Relaxed) > handlers).await;
    socket
}

/// Bytes kept for [`CONNECTIONS`] upgraded WebSockets that have not
/// spoken, per connection; they are closed again before it returns.
async fn held_per_connection(
    addr: SocketAddr,
    metrics: &Metrics,
    started: &AtomicUsize,
    late: bool,
) -> isize {
    let mut sockets = Vec::with_capacity(CONNECTIONS);
    let before = live_bytes();
    for _ in 0..CONNECTIONS {
        sockets.push(upgraded(addr, metrics, started, late).await);
    }
    let held = live_bytes() - before;
    drop(sockets);
    until(|| metrics.connections_open() == 0).await;
    held / CONNECTIONS as isize
}

#[tokio::test]
async fn a_silent_websocket_keeps_nothing_of_the_http_connection_it_came_from() {
    let started = Arc::new(AtomicUsize::new(0));
    let (addr, metrics) = start(started.clone()).await;
    // Once each way first: the thread's block pool, the server's tables
    // and the runtime's lists have their size from then on.
    for late in [false, true, false, true] {
        held_per_connection(addr, &metrics, &started, late).await;
    }
    let at_once = held_per_connection(addr, &metrics, &started, false).await;
    let late = held_per_connection(addr, &metrics, &started, true).await;
    eprintln!(
        "per silent WebSocket: {at_once} bytes (request at once), {late} bytes (request late)"
    );
    // No read block or write buffer (32 KiB each) is held while it waits.
    assert!(at_once < 16 * 1024, "{at_once} bytes per connection");
    // A connection that waited on HTTP keeps no more: its task, ended,
    // is freed. Exactly no more: a debug build's tokio boxes a large
    // task's future, so the task's own allocation that a stray waker would
    // keep is only a hundred bytes or so here (3 KiB in a release build).
    assert!(
        late <= at_once,
        "{late} bytes per connection whose request came late, {at_once} for one whose came at once"
    );
}
