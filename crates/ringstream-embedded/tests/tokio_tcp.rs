//! The same `Handler` the embassy-net pool serves, here over tokio
//! `TcpStream`s on 127.0.0.1 through embedded-io-adapters' `FromTokio`:
//! real sockets, so later HTTP tests can use the workspace's Rust clients
//! (and curl, or a browser, can reach a demo served this way).
//!
//! Each connection is served in a `spawn_local` task: the handler's
//! future has no `Send` bound, as on embassy's executor.

#[path = "support/app.rs"]
mod app;

use app::{payload_byte, App, PAYLOAD_LEN};
use embedded_io_adapters::tokio_1::FromTokio;
use ringstream_embedded::Handler;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Accepts connections for ever, each served by `App` in a local task.
async fn serve(listener: TcpListener) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        tokio::task::spawn_local(async move {
            let mut io = FromTokio::new(stream);
            // The connection closes when `io` is dropped.
            let _ = App.serve(&mut io).await;
        });
    }
}

/// Sends `request` on a new connection and reads until the server closes.
async fn request(port: u16, request: &[u8]) -> Vec<u8> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect");
    stream.write_all(request).await.expect("send the request");
    let mut response = Vec::new();
    stream
        .read_to_end(&mut response)
        .await
        .expect("read the response");
    response
}

#[tokio::test]
async fn handler_over_tokio_tcp_stream() {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1");
    let port = listener.local_addr().expect("local address").port();
    let local = tokio::task::LocalSet::new();
    local.spawn_local(serve(listener));
    local
        .run_until(async move {
            assert_eq!(
                request(port, b"GET /hello HTTP/1.1\r\nHost: h\r\n\r\n").await,
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello"
            );

            assert_eq!(
                request(
                    port,
                    b"POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nping"
                )
                .await,
                b"HTTP/1.1 200 \r\nContent-Length: 4\r\nConnection: close\r\n\r\nping"
            );

            // A head that arrives in pieces is parsed where it ends.
            let mut stream = TcpStream::connect(("127.0.0.1", port))
                .await
                .expect("connect");
            for piece in [
                &b"GET /hel"[..],
                b"lo HTTP/1.1\r\nHo",
                b"st: h\r\n\r",
                b"\n",
            ] {
                stream.write_all(piece).await.expect("send a piece");
                stream.flush().await.expect("flush");
                tokio::task::yield_now().await;
            }
            let mut response = Vec::new();
            stream.read_to_end(&mut response).await.expect("read");
            assert!(response.ends_with(b"\r\n\r\nhello"));

            let response = request(port, b"GET /payload HTTP/1.1\r\nHost: h\r\n\r\n").await;
            let head = format!(
                "HTTP/1.1 200 \r\nContent-Length: {PAYLOAD_LEN}\r\nConnection: close\r\n\r\n"
            );
            assert!(response.starts_with(head.as_bytes()));
            let body = &response[head.len()..];
            assert_eq!(body.len(), PAYLOAD_LEN);
            assert!(body.iter().enumerate().all(|(i, &b)| b == payload_byte(i)));

            // The core's parser decides the status of a bad head: an
            // HTTP/1.1 request without Host is 400 (RFC 9112 §3.2).
            assert_eq!(
                request(port, b"GET /hello HTTP/1.1\r\n\r\n").await,
                b"HTTP/1.1 400 \r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            assert_eq!(
                request(port, b"GET /nowhere HTTP/1.1\r\nHost: h\r\n\r\n").await,
                b"HTTP/1.1 404 \r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
        })
        .await;
}
