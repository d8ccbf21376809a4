//! HTTP/1.1 Upgrade (RFC 9110 §7.8) over a real socket: a service answers
//! `101` and takes the connection over with the bytes that followed the
//! head; the upgraded connection keeps its slot under the cap, hears the
//! graceful shutdown, and is cut off at its deadline.

use crate::common;

use std::convert::Infallible;
use std::time::Duration;

use common::{read_response, start};
use ringstream::server::upgrade::{self, Upgraded};
use ringstream::server::{service_fn, Config};
use ringstream::Incoming;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

const UPGRADE: &[u8] =
    b"GET /chat HTTP/1.1\r\nHost: t\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n";

/// Upgrades requests that ask for it and sends each upgraded connection
/// to `upgraded`; answers others with whether they were offered one.
fn upgrading(
    upgraded: mpsc::UnboundedSender<Upgraded>,
) -> impl tower_service::Service<
    http::Request<Incoming>,
    Response = http::Response<String>,
    Error = Infallible,
    Future = impl Send,
> + Clone
       + Send
       + 'static {
    service_fn(move |mut req: http::Request<Incoming>| {
        let upgraded = upgraded.clone();
        async move {
            let Some(on_upgrade) = upgrade::on_upgrade(&mut req) else {
                return Ok(http::Response::new(String::from("no upgrade offered")));
            };
            if req.uri().path() == "/decline" {
                tokio::spawn(async move {
                    let declined = on_upgrade.await;
                    assert!(matches!(declined, Err(ringstream::Error::Closed)));
                });
                return Ok(http::Response::new(String::from("declined")));
            }
            tokio::spawn(async move {
                if let Ok(connection) = on_upgrade.await {
                    let _ = upgraded.send(connection);
                }
            });
            Ok(http::Response::builder()
                .status(101)
                .header("connection", "upgrade")
                .header("upgrade", "echo")
                .body(String::new())
                .unwrap())
        }
    })
}

/// Reads the `101` head off `socket` and returns it with what followed.
async fn read_switching(socket: &mut TcpStream) -> (String, Vec<u8>) {
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = got.split_off(end + 4);
            return (String::from_utf8(got).unwrap(), rest);
        }
        let n = tokio::time::timeout(Duration::from_secs(10), socket.read(&mut buf))
            .await
            .expect("a response head")
            .unwrap();
        assert!(n > 0, "closed before the head");
        got.extend_from_slice(&buf[..n]);
    }
}

#[tokio::test]
async fn the_service_takes_the_connection_with_the_bytes_after_the_head() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let server = start(upgrading(tx), Config::default()).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    // The new protocol's first bytes come in the same write as the head.
    let mut first = UPGRADE.to_vec();
    first.extend_from_slice(b"early line\n");
    socket.write_all(&first).await.unwrap();

    let (head, rest) = read_switching(&mut socket).await;
    assert!(
        head.starts_with("HTTP/1.1 101 Switching Protocols\r\n"),
        "{head}"
    );
    assert!(head.contains("connection: upgrade\r\n"), "{head}");
    assert!(head.contains("upgrade: echo\r\n"), "{head}");
    assert!(!head.contains("content-length"), "{head}");
    assert!(rest.is_empty());

    let mut upgraded = rx.recv().await.unwrap();
    let line = upgraded.stream().gets(1024).await.unwrap().unwrap();
    assert_eq!(&line[..], b"early line\n");
    // Both ways, as a plain byte stream.
    socket.write_all(b"later line\n").await.unwrap();
    let line = upgraded.stream().gets(1024).await.unwrap().unwrap();
    assert_eq!(&line[..], b"later line\n");
    upgraded.write_all(b"from the server\n").await.unwrap();
    upgraded.flush().await.unwrap();
    let mut buf = [0u8; 64];
    let n = socket.read(&mut buf).await.unwrap();
    assert_eq!(&buf[..n], b"from the server\n");
    assert_eq!(server.metrics.connections_open(), 1);

    // Dropping the upgraded connection closes it and frees its slot.
    drop(upgraded);
    assert_eq!(socket.read(&mut buf).await.unwrap(), 0);
    common::poll_until(|| server.metrics.connections_open() == 0).await;
}

#[tokio::test]
async fn a_request_without_upgrade_is_offered_none_and_a_declined_one_stays_http() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let server = start(upgrading(tx), Config::default()).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    let mut buf = Vec::new();
    socket
        .write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let plain = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(plain.body, b"no upgrade offered");

    // An upgrade the service declines: a plain response, and the
    // connection goes on with HTTP.
    socket
        .write_all(
            b"GET /decline HTTP/1.1\r\nHost: t\r\nConnection: upgrade\r\nUpgrade: echo\r\n\r\n",
        )
        .await
        .unwrap();
    let declined = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(declined.status, 200);
    assert_eq!(declined.body, b"declined");
    socket
        .write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    assert_eq!(
        read_response(&mut socket, &mut buf, false).await.status,
        200
    );
}

#[tokio::test]
async fn an_upgraded_connection_holds_its_slot_under_the_cap() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let config = Config {
        max_connections: 1,
        ..Config::default()
    };
    let server = start(upgrading(tx), config).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    socket.write_all(UPGRADE).await.unwrap();
    read_switching(&mut socket).await;
    let upgraded = rx.recv().await.unwrap();

    // Busy, not idle: a new client is refused rather than evicting it.
    let mut other = TcpStream::connect(server.addr).await.unwrap();
    let mut refused = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), other.read_to_end(&mut refused))
        .await
        .unwrap()
        .unwrap();
    assert!(
        refused.starts_with(b"HTTP/1.1 503 "),
        "{}",
        String::from_utf8_lossy(&refused)
    );

    drop(upgraded);
    common::poll_until(|| server.metrics.connections_open() == 0).await;
    let mut buf = Vec::new();
    let mut third = TcpStream::connect(server.addr).await.unwrap();
    third
        .write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    assert_eq!(read_response(&mut third, &mut buf, false).await.status, 200);
}

#[tokio::test]
async fn shutdown_tells_an_upgraded_connection_and_cuts_it_off_at_the_deadline() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let config = Config {
        shutdown_timeout: Duration::from_millis(500),
        ..Config::default()
    };
    let mut server = start(upgrading(tx), config).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    socket.write_all(UPGRADE).await.unwrap();
    read_switching(&mut socket).await;
    let mut upgraded = rx.recv().await.unwrap();
    assert!(!upgraded.is_stopping());

    let stopping = server.begin_shutdown();
    tokio::time::timeout(Duration::from_secs(5), upgraded.stopping())
        .await
        .expect("the upgraded connection hears the shutdown");
    // It keeps working within the grace period...
    socket.write_all(b"still here\n").await.unwrap();
    let line = upgraded.stream().gets(1024).await.unwrap().unwrap();
    assert_eq!(&line[..], b"still here\n");
    // ...and a read waiting past the deadline fails.
    let cut = tokio::time::timeout(Duration::from_secs(5), upgraded.stream().gets(1024))
        .await
        .expect("cut off at the deadline");
    assert!(cut.is_err(), "{cut:?}");
    stopping.await.unwrap().unwrap();
}
