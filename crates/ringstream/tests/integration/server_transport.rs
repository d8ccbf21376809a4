//! Transports and lifecycle: the client's and the server's addresses reach
//! every request; the server runs on TCP, a listener bound by the standard
//! library and a Unix domain socket with its cap, metrics and graceful
//! shutdown; a connection served on its own shuts down gracefully too.

use crate::common;

use std::convert::Infallible;
use std::time::Duration;

use common::{read_response, read_to_close, start};
use ringstream::server::{
    self, serve_connection, service_fn, Addr, Config, ConnectionInfo, Server,
};
use ringstream::{Incoming, ResponseStream};
use tokio::io::{AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

/// Answers with the two ends of the connection, `remote local`.
fn echo_addresses() -> impl tower_service::Service<
    http::Request<Incoming>,
    Response = http::Response<String>,
    Error = Infallible,
    Future = impl Send,
> + Clone
       + Send
       + 'static {
    service_fn(|req: http::Request<Incoming>| async move {
        let text = match req.extensions().get::<ConnectionInfo>() {
            Some(info) => format!("{} {}", info.remote_addr(), info.local_addr()),
            None => String::from("none"),
        };
        Ok::<_, Infallible>(http::Response::new(text))
    })
}

#[tokio::test]
async fn every_request_knows_both_ends_of_its_tcp_connection() {
    let server = start(echo_addresses(), Config::default()).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    let client = socket.local_addr().unwrap();
    let mut buf = Vec::new();
    for _ in 0..2 {
        socket
            .write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
            .await
            .unwrap();
        let response = read_response(&mut socket, &mut buf, false).await;
        assert_eq!(
            String::from_utf8(response.body).unwrap(),
            format!("{client} {}", server.addr)
        );
    }
}

#[tokio::test]
async fn a_listener_bound_by_the_standard_library_is_served() {
    let bound = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = bound.local_addr().unwrap();
    let server = Server::from_std(bound).unwrap();
    assert_eq!(server.local_addr().unwrap(), addr);
    let metrics = server.metrics();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(
        server
            .serve(echo_addresses())
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            }),
    );

    let mut socket = TcpStream::connect(addr).await.unwrap();
    socket
        .write_all(b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let response = read_to_close(&mut socket).await;
    assert!(response.starts_with(b"HTTP/1.1 200 OK\r\n"));
    assert_eq!(metrics.requests(), 1);
    stop.send(()).unwrap();
    running.await.unwrap().unwrap();
}

/// A Unix domain socket keeps what TCP has: addresses, the connection cap
/// (a busy cap answers 503), metrics and the graceful shutdown.
#[cfg(unix)]
#[tokio::test]
async fn a_unix_socket_listener_keeps_the_cap_metrics_and_shutdown() {
    use tokio::net::{UnixListener, UnixStream};

    let dir = std::env::temp_dir().join(format!("ringstream-unix-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("server.sock");
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path).unwrap();

    // One slot, held by a request that waits for `release`.
    let (release, released) = tokio::sync::watch::channel(false);
    let service = service_fn(move |req: http::Request<Incoming>| {
        let mut released = released.clone();
        async move {
            if req.uri().path() == "/slow" {
                let _ = released.wait_for(|r| *r).await;
            }
            let info = req.extensions().get::<ConnectionInfo>().cloned();
            let info = info.expect("a unix request has connection info");
            let text = format!("{} {}", info.remote_addr(), info.local_addr());
            Ok::<_, Infallible>(http::Response::new(text))
        }
    });
    let config = Config {
        max_connections: 1,
        ..Config::default()
    };
    let serve = server::serve(listener, service).with_config(config);
    let metrics = serve.metrics();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(serve.with_graceful_shutdown(async {
        let _ = stopped.await;
    }));

    let mut first = UnixStream::connect(&path).await.unwrap();
    first
        .write_all(b"GET /slow HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    common::poll_until(|| metrics.requests() == 1).await;

    // The cap is full of a busy connection: a prompt 503.
    let mut second = UnixStream::connect(&path).await.unwrap();
    let refused = read_all(&mut second).await;
    assert!(
        refused.starts_with(b"HTTP/1.1 503 Service Unavailable\r\n"),
        "{}",
        String::from_utf8_lossy(&refused)
    );

    // The shutdown lets the request under way finish, with `close`.
    stop.send(()).unwrap();
    release.send(true).unwrap();
    let answer = String::from_utf8(read_all(&mut first).await).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(answer.contains("connection: close\r\n"), "{answer}");
    assert!(
        answer.ends_with(&format!("\r\n\r\nunix: unix:{}", path.display())),
        "{answer}"
    );
    running.await.unwrap().unwrap();
    assert_eq!(metrics.connections_refused(), 1);
    assert_eq!(metrics.connections_open(), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
async fn read_all(socket: &mut tokio::net::UnixStream) -> Vec<u8> {
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), socket.read_to_end(&mut out))
        .await
        .expect("the server closes")
        .unwrap();
    out
}

/// Writes `request` and reads what comes back until the server closes.
async fn exchange_on<T: AsyncReadExt + AsyncWrite + Unpin>(io: &mut T, request: &[u8]) -> String {
    io.write_all(request).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), io.read_to_end(&mut out))
        .await
        .expect("the connection closes")
        .unwrap();
    String::from_utf8(out).unwrap()
}

#[tokio::test]
async fn a_connection_served_on_its_own_closes_at_its_shutdown_signal() {
    let (mut client, io) = tokio::io::duplex(4096);
    let service = service_fn(|_req: http::Request<Incoming>| async {
        Ok::<_, Infallible>(http::Response::new(String::from("hi")))
    });
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(
        serve_connection(io, service, Config::default()).with_graceful_shutdown(async {
            let _ = stopped.await;
        }),
    );
    client
        .write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let mut buf = [0u8; 512];
    let n = client.read(&mut buf).await.unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200 OK\r\n"));
    // Idle between requests: the signal closes it at once.
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(5), served)
        .await
        .expect("closed at the signal")
        .unwrap()
        .unwrap();
    assert_eq!(client.read(&mut buf).await.unwrap(), 0);
}

#[tokio::test]
async fn a_request_under_way_at_the_signal_is_answered_with_close() {
    let (mut client, io) = tokio::io::duplex(4096);
    let (release, released) = tokio::sync::watch::channel(false);
    let service = service_fn(move |_req: http::Request<Incoming>| {
        let mut released = released.clone();
        async move {
            let _ = released.wait_for(|r| *r).await;
            Ok::<_, Infallible>(http::Response::new(String::from("late")))
        }
    });
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(
        serve_connection(io, service, Config::default()).with_graceful_shutdown(async {
            let _ = stopped.await;
        }),
    );
    client
        .write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    stop.send(()).unwrap();
    release.send(true).unwrap();
    let answer = exchange_on(&mut client, b"").await;
    assert!(answer.contains("connection: close\r\n"), "{answer}");
    assert!(answer.ends_with("\r\n\r\nlate"), "{answer}");
    served.await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_connection_still_busy_at_the_shutdown_deadline_is_closed() {
    let (mut client, io) = tokio::io::duplex(4096);
    let service = service_fn(|_req: http::Request<Incoming>| async {
        // A response that never ends.
        let (writer, body) = ResponseStream::channel();
        std::mem::forget(writer);
        Ok::<_, Infallible>(http::Response::new(body))
    });
    let config = Config {
        shutdown_timeout: Duration::from_secs(3),
        ..Config::default()
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(
        serve_connection(io, service, config).with_graceful_shutdown(async {
            let _ = stopped.await;
        }),
    );
    client
        .write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let mut buf = [0u8; 512];
    let n = client.read(&mut buf).await.unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200 OK\r\n"));
    let signalled = tokio::time::Instant::now();
    stop.send(()).unwrap();
    served.await.unwrap().unwrap();
    assert!(signalled.elapsed() >= Duration::from_secs(3));
    assert!(signalled.elapsed() < Duration::from_secs(4));
}

#[tokio::test]
async fn addresses_display_for_logs() {
    let tcp = Addr::from("[::1]:80".parse::<std::net::SocketAddr>().unwrap());
    assert_eq!(tcp.to_string(), "[::1]:80");
    let info = ConnectionInfo::new(tcp.clone(), Addr::Unknown);
    assert_eq!(info.remote_addr().socket_addr().unwrap().port(), 80);
}

/// The server runs as a task of the runtime's own: dropping the `Serve`
/// future stops it, its listener and its connections.
#[tokio::test]
async fn dropping_the_serve_future_stops_the_server_and_its_connections() {
    let server = Server::bind("127.0.0.1:0").await.unwrap();
    let addr = server.local_addr().unwrap();
    let metrics = server.metrics();
    let running = tokio::spawn(server.serve(echo_addresses()));
    let mut open = TcpStream::connect(addr).await.unwrap();
    open.write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let mut buf = Vec::new();
    read_response(&mut open, &mut buf, false).await;
    assert_eq!(metrics.connections_open(), 1);

    running.abort();
    let _ = running.await;
    // The open connection is closed, and nothing listens any more.
    let mut rest = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), open.read_to_end(&mut rest))
        .await
        .expect("the connection closes");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    common::poll_until(|| metrics.connections_open() == 0).await;
    assert!(TcpStream::connect(addr).await.is_err());
}

#[tokio::test]
async fn idle_connections_close_at_once_when_the_server_stops() {
    let server = Server::bind("127.0.0.1:0").await.unwrap();
    let addr = server.local_addr().unwrap();
    let config = Config {
        shutdown_timeout: Duration::from_secs(30),
        ..Config::default()
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(
        server
            .serve(echo_addresses())
            .with_config(config)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            }),
    );
    // Idle keep-alive connections after one request each, and one that
    // has sent nothing yet.
    let mut idle = Vec::new();
    for _ in 0..3 {
        let mut socket = TcpStream::connect(addr).await.unwrap();
        socket
            .write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
            .await
            .unwrap();
        let mut buf = Vec::new();
        read_response(&mut socket, &mut buf, false).await;
        idle.push(socket);
    }
    idle.push(TcpStream::connect(addr).await.unwrap());
    tokio::time::sleep(Duration::from_millis(50)).await;

    let asked = std::time::Instant::now();
    stop.send(()).unwrap();
    for socket in &mut idle {
        let mut rest = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(5), socket.read_to_end(&mut rest))
            .await
            .expect("an idle connection closes at the stop, not at the deadline");
        assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    }
    tokio::time::timeout(Duration::from_secs(5), running)
        .await
        .expect("the server ends without waiting out its 30 s")
        .unwrap()
        .unwrap();
    assert!(asked.elapsed() < Duration::from_secs(5));
}
