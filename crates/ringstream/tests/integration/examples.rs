//! The examples in `examples/`, run over real sockets: what each one shows
//! works as its comments say. (The tracing example's test is in
//! `server_tracing.rs`, whose tests all set a subscriber: a test here that
//! logs nothing could otherwise have a callsite registered, with no
//! subscriber to want it, while that test's subscriber is being set.)

#[cfg(unix)]
#[path = "../../examples/unix_socket.rs"]
#[allow(dead_code)]
mod unix_socket;

use crate::common;

use std::time::Duration;

use common::{read_response, start};
use ringstream::server::service_fn;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[cfg(unix)]
#[tokio::test]
async fn the_unix_socket_example_serves_and_stops() {
    let dir = std::env::temp_dir().join(format!("ringstream-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("example.sock");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = {
        let path = path.clone();
        tokio::spawn(async move {
            unix_socket::serve_at(&path, async {
                let _ = stopped.await;
            })
            .await
        })
    };
    common::poll_until(|| path.exists()).await;
    let mut socket = tokio::net::UnixStream::connect(&path).await.unwrap();
    socket
        .write_all(b"GET /where HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = String::new();
    tokio::time::timeout(Duration::from_secs(10), socket.read_to_string(&mut answer))
        .await
        .unwrap()
        .unwrap();
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(
        answer.ends_with(&format!(
            "GET /where\nfrom unix: to unix:{}\n",
            path.display()
        )),
        "{answer}"
    );
    stop.send(()).unwrap();
    serving.await.unwrap().unwrap();
    assert!(!path.exists(), "the socket file is removed at the end");
    let _ = std::fs::remove_dir_all(&dir);
}

#[path = "../../examples/upload.rs"]
#[allow(dead_code)]
mod upload;

/// The upload example counts a body within its limit and refuses one over
/// it before reading it.
#[tokio::test]
async fn the_upload_example_counts_within_the_limit_and_refuses_beyond() {
    let server = start(service_fn(upload::count), upload::config()).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    let mut buf = Vec::new();
    socket
        .write_all(b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello")
        .await
        .unwrap();
    let counted = read_response(&mut socket, &mut buf, false).await;
    assert!(counted.body.starts_with(b"5 bytes in "), "{counted:?}");

    let over = format!(
        "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\r\n",
        upload::MAX_UPLOAD + 1
    );
    socket.write_all(over.as_bytes()).await.unwrap();
    let refused = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(refused.status, 413);
    assert!(refused.closes());
}
