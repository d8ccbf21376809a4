//! Fair at the connection cap: idle connections (a kept-alive one between
//! requests, or a new one that has sent nothing) make room for a new
//! client, the longest-idle first; when every connection is busy a new
//! client gets a prompt `503` with `Retry-After`, never silence.

use crate::common;

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{read_response, read_to_close, start, status_of, TestServer};
use http::{Request, Response};
use ringstream::server::{service_fn, Config};
use ringstream::Incoming;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Notify;

/// Answers `hello`; `/slow` first waits for `release` (counting itself in
/// `waiting`).
fn service(
    waiting: Arc<AtomicUsize>,
    release: Arc<Notify>,
) -> impl tower_service::Service<
    Request<Incoming>,
    Response = Response<String>,
    Error = Infallible,
    Future = impl Send,
> + Clone
       + Send
       + 'static {
    service_fn(move |req: Request<Incoming>| {
        let waiting = waiting.clone();
        let release = release.clone();
        async move {
            if req.uri().path() == "/slow" {
                let released = release.notified();
                waiting.fetch_add(1, Ordering::SeqCst);
                released.await;
            }
            Ok::<_, Infallible>(Response::new(String::from("hello")))
        }
    })
}

fn capped(max_connections: usize) -> Config {
    Config {
        max_connections,
        head_timeout: Duration::from_secs(30),
        idle_timeout: Duration::from_secs(60),
        ..Config::default()
    }
}

async fn start_capped(max_connections: usize) -> (TestServer, Arc<AtomicUsize>, Arc<Notify>) {
    let waiting = Arc::new(AtomicUsize::new(0));
    let release = Arc::new(Notify::new());
    let server = start(
        service(waiting.clone(), release.clone()),
        capped(max_connections),
    )
    .await;
    (server, waiting, release)
}

/// Waits (up to 10 s) until `done` holds.
async fn until(mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// One keep-alive request on `socket`; its status.
async fn get(socket: &mut TcpStream, path: &str) -> u16 {
    socket
        .write_all(format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut buf = Vec::new();
    read_response(socket, &mut buf, false).await.status
}

/// Whether the server closed `socket` (EOF within 5 s, nothing sent).
async fn closed_quietly(socket: &mut TcpStream) -> bool {
    let mut rest = Vec::new();
    matches!(
        tokio::time::timeout(Duration::from_secs(5), socket.read_to_end(&mut rest)).await,
        Ok(Ok(0))
    )
}

/// A new client is served at once (within 5 s) and sees `status`.
async fn served_promptly(addr: std::net::SocketAddr, path: &str) -> Vec<u8> {
    let mut client = TcpStream::connect(addr).await.unwrap();
    client
        .write_all(
            format!("GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(5), read_to_close(&mut client))
        .await
        .expect("answered promptly")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_cap_of_idle_keep_alives_makes_room_longest_idle_first() {
    let (server, _, _) = start_capped(3).await;
    let mut idle = Vec::new();
    for _ in 0..3 {
        let mut socket = TcpStream::connect(server.addr).await.unwrap();
        assert_eq!(get(&mut socket, "/").await, 200);
        idle.push(socket);
        // Idle times are kept to the millisecond.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The middle one is used again: the first is now idle the longest.
    assert_eq!(get(&mut idle[0], "/").await, 200);
    tokio::time::sleep(Duration::from_millis(20)).await;

    let answer = served_promptly(server.addr, "/").await;
    assert_eq!(status_of(&answer), Some(200));
    assert!(
        closed_quietly(&mut idle[1]).await,
        "the longest-idle one closed"
    );
    assert_eq!(server.metrics.connections_evicted(), 1);
    // The others keep their connections.
    assert_eq!(get(&mut idle[0], "/").await, 200);
    assert_eq!(get(&mut idle[2], "/").await, 200);
    assert_eq!(server.metrics.connections_refused(), 0);
}

#[tokio::test]
async fn silent_new_connections_at_the_cap_make_room() {
    let (server, _, _) = start_capped(4).await;
    let mut silent = Vec::new();
    for _ in 0..4 {
        silent.push(TcpStream::connect(server.addr).await.unwrap());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let metrics = server.metrics.clone();
    until(|| metrics.connections_open() == 4).await;

    let answer = served_promptly(server.addr, "/").await;
    assert_eq!(status_of(&answer), Some(200));
    assert!(closed_quietly(&mut silent[0]).await, "the first to connect");
    assert_eq!(server.metrics.connections_evicted(), 1);
}

/// Waves of sockets that send nothing, far more than the cap: each evicts
/// the oldest of them, and a real client still gets in at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_silent_connections_cannot_lock_a_client_out() {
    let (server, _, _) = start_capped(8).await;
    let mut silent = Vec::new();
    for _ in 0..100 {
        silent.push(TcpStream::connect(server.addr).await.unwrap());
    }
    // Each one over the cap evicted an older one, or (arriving while
    // every slot was still being given back) was refused.
    let metrics = server.metrics.clone();
    until(|| metrics.connections_evicted() + metrics.connections_refused() >= 92).await;
    assert!(
        metrics.connections_evicted() > 0,
        "{:?}",
        metrics.snapshot()
    );
    for _ in 0..3 {
        let answer = served_promptly(server.addr, "/").await;
        assert_eq!(status_of(&answer), Some(200));
    }
    assert!(server.metrics.connections_open() <= 8);
}

#[tokio::test]
async fn a_full_cap_of_busy_connections_gets_a_prompt_503() {
    let (server, waiting, release) = start_capped(2).await;
    let mut busy = Vec::new();
    for _ in 0..2 {
        let mut socket = TcpStream::connect(server.addr).await.unwrap();
        socket
            .write_all(b"GET /slow HTTP/1.1\r\nHost: t\r\n\r\n")
            .await
            .unwrap();
        busy.push(socket);
    }
    until(|| waiting.load(Ordering::SeqCst) == 2).await;

    let answer = served_promptly(server.addr, "/").await;
    let text = String::from_utf8_lossy(&answer);
    assert_eq!(status_of(&answer), Some(503), "{text}");
    assert!(text.contains("\r\nretry-after: 1\r\n"), "{text}");
    assert!(text.contains("\r\nconnection: close\r\n"), "{text}");
    assert_eq!(server.metrics.connections_refused(), 1);
    assert_eq!(server.metrics.connections_evicted(), 0);

    // The busy ones finish undisturbed, and then there is room again.
    release.notify_waiters();
    for socket in &mut busy {
        let mut buf = Vec::new();
        assert_eq!(read_response(socket, &mut buf, false).await.status, 200);
    }
    drop(busy);
    let metrics = server.metrics.clone();
    until(|| metrics.connections_open() == 0).await;
    let answer = served_promptly(server.addr, "/").await;
    assert_eq!(status_of(&answer), Some(200));
}

/// Connections stuck inside a request head (slowloris) are busy, not
/// idle: a new client is refused promptly rather than left waiting.
#[tokio::test]
async fn slowloris_at_the_cap_gets_new_clients_a_prompt_503() {
    let (server, _, _) = start_capped(2).await;
    let mut partial = Vec::new();
    for _ in 0..2 {
        let mut socket = TcpStream::connect(server.addr).await.unwrap();
        socket.write_all(b"GET / HTTP/1.1\r\nHo").await.unwrap();
        partial.push(socket);
    }
    let metrics = server.metrics.clone();
    until(|| metrics.bytes_in() >= 2 * 18).await;
    let answer = served_promptly(server.addr, "/").await;
    assert_eq!(status_of(&answer), Some(503));
    assert_eq!(server.metrics.connections_refused(), 1);
}

/// `OPTIONS *` asks about the server, not a resource: a service that
/// answers it 404 (as a router of paths does) is answered for by the
/// server, and a service that answers it itself is left alone.
#[tokio::test]
async fn options_asterisk_is_answered_by_the_server_when_the_service_does_not() {
    let not_found = service_fn(|_req: Request<Incoming>| async {
        let mut response = Response::new(String::from("no such page"));
        *response.status_mut() = http::StatusCode::NOT_FOUND;
        Ok::<_, Infallible>(response)
    });
    let server = start(not_found, Config::default()).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    socket
        .write_all(b"OPTIONS * HTTP/1.1\r\nHost: t\r\n\r\nGET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut buf = Vec::new();
    let options = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(options.status, 200);
    assert!(options.body.is_empty());
    // The connection goes on: the next request gets the service's 404.
    let next = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(next.status, 404);
    assert_eq!(next.body, b"no such page");

    let own = service_fn(|req: Request<Incoming>| async move {
        assert_eq!(req.method(), http::Method::OPTIONS);
        let mut response = Response::new(String::new());
        *response.status_mut() = http::StatusCode::NO_CONTENT;
        response
            .headers_mut()
            .insert(http::header::ALLOW, "GET, OPTIONS".parse().unwrap());
        Ok::<_, Infallible>(response)
    });
    let server = start(own, Config::default()).await;
    let answer = common::roundtrip(
        server.addr,
        b"OPTIONS * HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
    )
    .await;
    let text = String::from_utf8_lossy(&answer);
    assert_eq!(status_of(&answer), Some(204), "{text}");
    assert!(text.contains("\r\nallow: GET, OPTIONS\r\n"), "{text}");
}
