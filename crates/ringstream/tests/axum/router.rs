//! An axum `Router` runs on ringstream's server unchanged (the router of
//! `examples/axum.rs`), checked over a real socket.

#[path = "../../examples/axum.rs"]
#[allow(dead_code)]
mod example;

use crate::common::{read_response, start};
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

/// `ConnectInfo<SocketAddr>` works on ringstream without
/// `into_make_service_with_connect_info`.
#[tokio::test]
async fn connect_info_gives_the_clients_address() {
    let server = start(example::router(), Config::default()).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    let me = socket.local_addr().unwrap();
    let mut buf = Vec::new();
    socket
        .write_all(b"GET /whoami HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let response = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(response.status, 200);
    assert_eq!(response.body, format!("you are {me}\n").into_bytes());
}

/// A handler takes `Incoming` and reads lines that span the chunks they
/// arrived in; the `ResponseStream` it returns goes out as the response.
#[tokio::test]
async fn a_handler_reads_the_body_line_by_line() {
    let server = start(example::router(), Config::default()).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    let mut buf = Vec::new();
    socket
        .write_all(
            b"POST /lines HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n\
              6\r\none\ntw\r\n7\r\no\nthree\r\n3\r\n\nx\n\r\n2\r\nyz\r\n0\r\n\r\n",
        )
        .await
        .unwrap();
    let response = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(response.status, 200);
    assert_eq!(
        String::from_utf8(response.body).unwrap(),
        "1: one\n2: two\n3: three\n4: x\n5: yz\n"
    );
}

/// axum's `DefaultBodyLimit` holds for a body read through `Incoming`: the
/// read that crosses it fails and the handler's error becomes `413`.
#[tokio::test]
async fn the_default_body_limit_holds_for_incoming() {
    let server = start(example::router(), Config::default()).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    let mut buf = Vec::new();
    let mut request =
        b"POST /lines HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    let line = vec![b'a'; 64 * 1023];
    for _ in 0..20 {
        request.extend_from_slice(format!("{:x}\r\n", line.len() + 1).as_bytes());
        request.extend_from_slice(&line);
        request.extend_from_slice(b"\n\r\n");
    }
    request.extend_from_slice(b"0\r\n\r\n");
    socket.write_all(&request).await.unwrap();
    let response = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(response.status, 413);
}

/// `EventStream` and `Incoming` are axum responses as they are.
#[tokio::test]
async fn ringstream_bodies_are_axum_responses() {
    let server = start(example::router(), Config::default()).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    let mut buf = Vec::new();
    socket
        .write_all(b"GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let events = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(events.status, 200);
    assert_eq!(events.header("content-type"), Some("text/event-stream"));
    let text = String::from_utf8(events.body).unwrap();
    assert!(text.contains("id: 3\ndata: tick 3\n\n"), "{text}");

    socket
        .write_all(b"POST /echo-incoming HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello")
        .await
        .unwrap();
    let echo = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(echo.status, 200);
    assert_eq!(echo.body, b"hello");
}

/// ringstream's `WebSocketUpgrade` is an axum extractor: an independent
/// client's messages come back.
#[tokio::test]
async fn a_websocket_route_in_an_axum_router_echoes() {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;

    let server = start(example::router(), Config::default()).await;
    let tcp = TcpStream::connect(server.addr).await.unwrap();
    let url = format!("ws://{}/ws/echo", server.addr);
    let (mut client, response) = tokio_tungstenite::client_async(url, tcp).await.unwrap();
    assert_eq!(response.status(), 101);
    client.send(Message::text("over axum")).await.unwrap();
    let back = client.next().await.unwrap().unwrap();
    assert_eq!(back.into_text().unwrap().as_str(), "over axum");
    client.close(None).await.unwrap();

    // A plain GET to the route is refused by the extractor.
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    let mut buf = Vec::new();
    socket
        .write_all(b"GET /ws/echo HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let refused = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(refused.status, 426);
}
