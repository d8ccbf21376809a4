//! An axum `Router` runs on ringstream's server unchanged (the router of
//! `examples/axum.rs`), checked over a real socket.

#[path = "../examples/axum.rs"]
#[allow(dead_code)]
mod example;

mod common;

use common::{read_response, start};
use ringstream::server::Config;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

#[tokio::test]
async fn axum_router_serves_over_ringstream() {
    let server = start(example::router(), Config::default()).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    let mut buf = Vec::new();

    socket
        .write_all(b"GET /hello/ring HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let hello = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(hello.status, 200);
    assert_eq!(hello.body, b"hello, ring\n");

    socket
        .write_all(b"POST /count HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n")
        .await
        .unwrap();
    let count = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(count.status, 200);
    assert_eq!(count.body, b"7 bytes\n");

    socket
        .write_all(b"GET /stream HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let stream = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(stream.status, 200);
    let text = String::from_utf8(stream.body).unwrap();
    assert!(
        text.starts_with("line 0\nline 1\n") && text.ends_with("line 99\n"),
        "{text}"
    );

    socket
        .write_all(b"GET /missing HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let missing = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(missing.status, 404);
}
