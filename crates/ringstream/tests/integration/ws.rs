//! WebSocket over a real socket: the handshake and its refusals, echo with
//! an independent client (tokio-tungstenite), and the protocol rules with
//! raw frames — every violation closed with its RFC 6455 code.

use crate::common;

use std::convert::Infallible;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use ringstream::server::{service_fn, Config};
use ringstream::ws::{self, CloseCode, WebSocketUpgrade};
use ringstream::Incoming;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite;

/// Echoes every text and binary message; small message limit (1 KiB) and
/// a short idle time for the tests.
fn echo() -> impl tower_service::Service<
    http::Request<Incoming>,
    Response = http::Response<String>,
    Error = Infallible,
    Future = impl Send,
> + Clone
       + Send
       + 'static {
    service_fn(|mut req: http::Request<Incoming>| async move {
        let upgrade = match WebSocketUpgrade::from_request(&mut req) {
            Ok(upgrade) => upgrade,
            Err(refused) => return Ok::<_, Infallible>(refused.into_response()),
        };
        let config = ws::Config {
            limits: ws::Limits {
                max_message_len: 1024,
                max_frame_len: 1024,
            },
            idle_timeout: Some(Duration::from_millis(300)),
            write_timeout: Some(Duration::from_millis(300)),
            ..ws::Config::default()
        };
        Ok(upgrade.config(config).on_upgrade(|mut socket| async move {
            while let Some(Ok(message)) = socket.recv().await {
                if message.is_data() && socket.send(message).await.is_err() {
                    break;
                }
            }
        }))
    })
}

const HANDSHAKE: &[u8] =
    b"GET /ws HTTP/1.1\r\nHost: t\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n";

/// A raw connection past the handshake.
async fn raw(addr: std::net::SocketAddr) -> TcpStream {
    let mut socket = TcpStream::connect(addr).await.unwrap();
    socket.write_all(HANDSHAKE).await.unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        socket.read_exact(&mut byte).await.unwrap();
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    assert!(
        head.starts_with("HTTP/1.1 101 Switching Protocols\r\n"),
        "{head}"
    );
    assert!(
        head.contains("sec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"),
        "{head}"
    );
    assert!(head.contains("upgrade: websocket\r\n"), "{head}");
    socket
}

/// A masked client frame.
fn frame(first: u8, payload: &[u8]) -> Vec<u8> {
    let key = [0x37, 0xfa, 0x21, 0x3d];
    let mut out = vec![first];
    match payload.len() {
        n if n < 126 => out.push(0x80 | n as u8),
        n if n < 65536 => {
            out.push(0x80 | 126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(0x80 | 127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(&key);
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ key[i % 4]));
    out
}

/// Reads one unmasked server frame: (first byte, payload).
async fn read_frame(socket: &mut TcpStream) -> (u8, Vec<u8>) {
    let read = async {
        let mut head = [0u8; 2];
        socket.read_exact(&mut head).await.unwrap();
        assert_eq!(head[1] & 0x80, 0, "server frames are not masked");
        let len = match head[1] & 0x7f {
            126 => {
                let mut n = [0u8; 2];
                socket.read_exact(&mut n).await.unwrap();
                u16::from_be_bytes(n) as usize
            }
            127 => {
                let mut n = [0u8; 8];
                socket.read_exact(&mut n).await.unwrap();
                u64::from_be_bytes(n) as usize
            }
            n => n as usize,
        };
        let mut payload = vec![0u8; len];
        socket.read_exact(&mut payload).await.unwrap();
        (head[0], payload)
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .expect("a frame from the server")
}

/// The close code of a Close frame's payload.
fn close_code(payload: &[u8]) -> u16 {
    u16::from_be_bytes([payload[0], payload[1]])
}

/// After a Close, the server ends the connection.
async fn closes(socket: &mut TcpStream) {
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), socket.read_to_end(&mut rest))
        .await
        .expect("the server closes")
        .ok();
}

#[tokio::test]
async fn an_independent_client_gets_its_messages_echoed() {
    let server = common::start(echo(), Config::default()).await;
    let url = format!("ws://{}/ws", server.addr);
    let tcp = TcpStream::connect(server.addr).await.unwrap();
    let (mut client, response) = tokio_tungstenite::client_async(url, tcp).await.unwrap();
    assert_eq!(response.status(), 101);

    client
        .send(tungstenite::Message::text("hello"))
        .await
        .unwrap();
    let text = client.next().await.unwrap().unwrap();
    assert_eq!(text.into_text().unwrap().as_str(), "hello");

    let blob: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8).collect();
    client
        .send(tungstenite::Message::binary(blob.clone()))
        .await
        .unwrap();
    let binary = client.next().await.unwrap().unwrap();
    assert_eq!(binary.into_data().as_ref(), &blob[..]);

    client.close(None).await.unwrap();
    // The server answers the Close and ends the connection.
    while let Some(Ok(message)) = client.next().await {
        assert!(message.is_close(), "{message:?}");
    }
}

#[tokio::test]
async fn fragments_pings_and_the_close_handshake_follow_rfc_6455() {
    let server = common::start(echo(), Config::default()).await;
    let mut socket = raw(server.addr).await;
    // A text message in three fragments, a Ping between them.
    let mut wire = frame(0x01, b"hel");
    wire.extend(frame(0x89, b"are you there"));
    wire.extend(frame(0x00, b"lo, "));
    wire.extend(frame(0x80, "wörld".as_bytes()));
    socket.write_all(&wire).await.unwrap();
    let (first, pong) = read_frame(&mut socket).await;
    assert_eq!((first, &pong[..]), (0x8a, &b"are you there"[..]));
    let (first, echo) = read_frame(&mut socket).await;
    assert_eq!(first, 0x81);
    assert_eq!(echo, "hello, wörld".as_bytes());

    // Close with a code and reason: the server echoes the code and closes.
    let mut close = 1000u16.to_be_bytes().to_vec();
    close.extend_from_slice(b"done");
    socket.write_all(&frame(0x88, &close)).await.unwrap();
    let (first, payload) = read_frame(&mut socket).await;
    assert_eq!(first, 0x88);
    assert_eq!(close_code(&payload), 1000);
    assert_eq!(&payload[2..], b"done", "the reason is echoed too");
    closes(&mut socket).await;
}

/// Each violation gets the close code RFC 6455 requires, then the end of
/// the connection.
#[tokio::test]
async fn violations_are_closed_with_their_codes() {
    let server = common::start(echo(), Config::default()).await;
    let mut unmasked = vec![0x81, 0x02];
    unmasked.extend_from_slice(b"hi");
    let cases: Vec<(&str, Vec<u8>, u16)> = vec![
        ("unmasked client frame", unmasked, 1002),
        ("reserved bit without an extension", frame(0xc1, b"x"), 1002),
        ("unknown opcode", frame(0x83, b""), 1002),
        (
            "control frame over 125 bytes",
            frame(0x89, &[0u8; 126]),
            1002,
        ),
        ("fragmented control frame", frame(0x09, b""), 1002),
        ("continuation without a message", frame(0x80, b"x"), 1002),
        ("invalid UTF-8", frame(0x81, &[0xce, 0xba, 0xff]), 1007),
        ("message over the limit", frame(0x82, &[0u8; 2048]), 1009),
        ("close with one byte", frame(0x88, &[3]), 1002),
        (
            "close with a reserved code",
            frame(0x88, &1005u16.to_be_bytes()),
            1002,
        ),
    ];
    for (what, wire, code) in cases {
        let mut socket = raw(server.addr).await;
        socket.write_all(&wire).await.unwrap();
        let (first, payload) = read_frame(&mut socket).await;
        assert_eq!(first, 0x88, "{what}: a Close");
        assert_eq!(close_code(&payload), code, "{what}");
        closes(&mut socket).await;
    }
}

/// Invalid UTF-8 in the part of a text frame that has arrived fails the
/// connection at once, before the rest of the frame (Autobahn|Testsuite
/// cases 6.4.3 and 6.4.4); a valid text frame that arrives in pieces is
/// echoed whole.
#[tokio::test]
async fn invalid_utf8_fails_a_text_frame_before_its_end() {
    let server = common::start(echo(), Config::default()).await;
    // "κόσμε", then U+110000 (invalid at its second byte), then "edited".
    let payload = b"\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xf4\x90\x80\x80edited";
    let wire = frame(0x81, payload);
    let head = wire.len() - payload.len();
    for valid_part in [11, 12] {
        let mut socket = raw(server.addr).await;
        socket.write_all(&wire[..head + valid_part]).await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        socket
            .write_all(&wire[head + valid_part..head + 13])
            .await
            .unwrap();
        // The rest of the frame is never sent.
        let (first, close) = tokio::time::timeout(Duration::from_secs(2), read_frame(&mut socket))
            .await
            .expect("a Close before the end of the frame");
        assert_eq!(first, 0x88, "{valid_part}: a Close, not {close:?}");
        assert_eq!(close_code(&close), 1007, "{valid_part}");
        closes(&mut socket).await;
    }
    let text = "κόσμε edited ".repeat(20);
    let wire = frame(0x81, text.as_bytes());
    let mut socket = raw(server.addr).await;
    for piece in wire.chunks(37) {
        socket.write_all(piece).await.unwrap();
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assert_eq!(read_frame(&mut socket).await, (0x81, text.into_bytes()));
}

#[tokio::test]
async fn a_silent_peer_is_pinged_then_dropped() {
    let server = common::start(echo(), Config::default()).await;
    let mut socket = raw(server.addr).await;
    // Idle for 300 ms: a Ping; no answer for as long again: closed.
    let (first, payload) = read_frame(&mut socket).await;
    assert_eq!(first, 0x89);
    assert!(payload.is_empty());
    closes(&mut socket).await;
    common::poll_until(|| server.metrics.connections_open() == 0).await;
}

#[tokio::test]
async fn shutdown_closes_websockets_with_going_away() {
    let mut server = common::start(echo(), Config::default()).await;
    let mut socket = raw(server.addr).await;
    socket.write_all(&frame(0x81, b"ping me")).await.unwrap();
    read_frame(&mut socket).await;
    let stopping = server.begin_shutdown();
    let (first, payload) = read_frame(&mut socket).await;
    assert_eq!(first, 0x88);
    assert_eq!(close_code(&payload), CloseCode::GOING_AWAY.0);
    // The client answers; the server ends the connection and stops.
    socket
        .write_all(&frame(0x88, &1001u16.to_be_bytes()))
        .await
        .unwrap();
    closes(&mut socket).await;
    tokio::time::timeout(Duration::from_secs(10), stopping)
        .await
        .expect("the server stops once its websockets closed")
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn handshakes_that_are_not_websocket_ones_are_refused() {
    let server = common::start(echo(), Config::default()).await;
    let old = String::from_utf8(HANDSHAKE.to_vec())
        .unwrap()
        .replace("Version: 13", "Version: 8");
    let cases: Vec<(String, u16)> = vec![
        (old, 426),
        (
            String::from_utf8(HANDSHAKE.to_vec())
                .unwrap()
                .replace("dGhlIHNhbXBsZSBub25jZQ==", "short"),
            400,
        ),
        (
            String::from_utf8(HANDSHAKE.to_vec())
                .unwrap()
                .replace("GET", "POST"),
            405,
        ),
        ("GET /ws HTTP/1.1\r\nHost: t\r\n\r\n".to_string(), 426),
        // RFC 6455 §4.1, as the core's `ws::check_request` says: HTTP/1.1,
        // and no body (its bytes would be read as frames).
        (
            String::from_utf8(HANDSHAKE.to_vec())
                .unwrap()
                .replace("HTTP/1.1", "HTTP/1.0"),
            400,
        ),
        (
            String::from_utf8(HANDSHAKE.to_vec())
                .unwrap()
                .replace("\r\n\r\n", "\r\nContent-Length: 5\r\n\r\nhello"),
            400,
        ),
        (
            String::from_utf8(HANDSHAKE.to_vec()).unwrap().replace(
                "\r\n\r\n",
                "\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
            ),
            400,
        ),
    ];
    for (request, status) in cases {
        let mut socket = TcpStream::connect(server.addr).await.unwrap();
        socket.write_all(request.as_bytes()).await.unwrap();
        let mut buf = Vec::new();
        let response = common::read_response(&mut socket, &mut buf, false).await;
        assert_eq!(response.status, status, "{request}");
        assert_eq!(
            response.header("content-type"),
            Some("text/plain; charset=utf-8"),
            "{request}"
        );
        assert!(
            !response.body.is_empty(),
            "{request}: the reason as the body"
        );
        if status == 426 {
            // RFC 9110 §7.8: `Upgrade` goes with the `upgrade` option.
            assert_eq!(response.header("upgrade"), Some("websocket"));
            assert_eq!(response.header("connection"), Some("upgrade"));
        }
        if status == 426 && request.contains("Version: 8") {
            assert_eq!(response.header("sec-websocket-version"), Some("13"));
        }
    }
}

/// A message far larger than a read block arrives in many reads and is
/// still one message; one within a block comes back whole.
#[tokio::test]
async fn large_messages_cross_read_blocks() {
    let service = service_fn(|mut req: http::Request<Incoming>| async move {
        let upgrade = WebSocketUpgrade::from_request(&mut req).unwrap();
        Ok::<_, Infallible>(upgrade.on_upgrade(|mut socket| async move {
            while let Some(Ok(message)) = socket.recv().await {
                if message.is_data() {
                    let _ = socket.send(message).await;
                }
            }
        }))
    });
    let server = common::start(service, Config::default()).await;
    let url = format!("ws://{}/ws", server.addr);
    let tcp = TcpStream::connect(server.addr).await.unwrap();
    let (mut client, _) = tokio_tungstenite::client_async(url, tcp).await.unwrap();
    for size in [64usize, 16 * 1024, 1024 * 1024] {
        let blob: Vec<u8> = (0..size).map(|i| (i % 253) as u8).collect();
        client
            .send(tungstenite::Message::binary(blob.clone()))
            .await
            .unwrap();
        let back = client.next().await.unwrap().unwrap().into_data();
        assert_eq!(back.len(), size);
        assert!(back.as_ref() == &blob[..], "{size} bytes differ");
    }
}

/// A client that stops reading cannot hold the server's task: the send
/// that cannot complete fails at the write timeout and the connection ends.
#[tokio::test]
async fn a_client_that_stops_reading_is_given_up_at_the_write_timeout() {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let service =
        service_fn(move |mut req: http::Request<Incoming>| {
            let tx = tx.clone();
            async move {
                let upgrade = WebSocketUpgrade::from_request(&mut req).unwrap();
                let config = ws::Config {
                    write_timeout: Some(Duration::from_millis(300)),
                    ..ws::Config::default()
                };
                Ok::<_, Infallible>(upgrade.config(config).on_upgrade(
                    move |mut socket| async move {
                        let blob = bytes::Bytes::from(vec![7u8; 1 << 20]);
                        let mut sent = 0u32;
                        let failure = loop {
                            match socket.send(ws::Message::Binary(blob.clone())).await {
                                Ok(()) => sent += 1,
                                Err(e) => break e,
                            }
                            if sent > 10_000 {
                                panic!("the client never stopped taking bytes");
                            }
                        };
                        let _ = tx.send((sent, failure));
                    },
                ))
            }
        });
    let server = common::start(service, Config::default()).await;
    let _socket = raw(server.addr).await;
    let (sent, failure) = tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("the send fails")
        .unwrap();
    assert!(
        matches!(
            failure,
            ringstream::Error::TimedOut(ringstream::error::Timeout::WebSocketWrite)
        ),
        "{failure} after {sent}"
    );
    assert_eq!(failure.to_string(), "websocket write timed out");
    common::poll_until(|| server.metrics.connections_open() == 0).await;
}

/// One broadcast reaches every reading client in order, encoded once;
/// clients that never read are given up at the write timeout, without
/// holding the others back.
#[tokio::test]
async fn a_broadcast_reaches_readers_and_drops_clients_that_never_read() {
    use ringstream::sse::OverflowPolicy;
    use ringstream::ws::Broadcaster;

    let broadcaster = Broadcaster::new(512, OverflowPolicy::DropOldest);
    let hub = broadcaster.clone();
    let service = service_fn(move |mut req: http::Request<Incoming>| {
        let hub = hub.clone();
        async move {
            let upgrade = WebSocketUpgrade::from_request(&mut req).unwrap();
            let config = ws::Config {
                write_timeout: Some(Duration::from_millis(300)),
                ..ws::Config::default()
            };
            Ok::<_, Infallible>(upgrade.config(config).on_upgrade(move |mut socket| async move {
                let mut subscription = hub.subscribe();
                loop {
                    tokio::select! {
                        frame = subscription.recv() => match frame {
                            Some(frame) => {
                                if socket.send_frame(&frame).await.is_err() {
                                    break;
                                }
                            }
                            None => {
                                let _ = socket
                                    .close(CloseCode::NORMAL, "done", Duration::from_secs(1))
                                    .await;
                                break;
                            }
                        },
                        message = socket.recv() => if !matches!(message, Some(Ok(_))) { break },
                    }
                }
            }))
        }
    });
    let server = common::start(service, Config::default()).await;
    let mut readers = Vec::new();
    for _ in 0..8 {
        let tcp = TcpStream::connect(server.addr).await.unwrap();
        let url = format!("ws://{}/ws", server.addr);
        let (client, _) = tokio_tungstenite::client_async(url, tcp).await.unwrap();
        readers.push(client);
    }
    let mut silent = Vec::new();
    for _ in 0..5 {
        silent.push(raw(server.addr).await);
    }
    common::poll_until(|| broadcaster.subscriber_count() == 13).await;
    // Every reader reads as the messages come.
    let readers: Vec<_> = readers
        .into_iter()
        .map(|mut reader| {
            tokio::spawn(async move {
                let mut next = 0u32;
                while let Some(Ok(message)) = reader.next().await {
                    if message.is_close() {
                        break;
                    }
                    let data = message.into_data();
                    assert_eq!(data.len(), 64 * 1024);
                    assert_eq!(
                        u32::from_be_bytes([data[0], data[1], data[2], data[3]]),
                        next
                    );
                    next += 1;
                }
                next
            })
        })
        .collect();

    let payload = vec![b'x'; 64 * 1024];
    let count = 300;
    for i in 0..count {
        let mut data = payload.clone();
        data[..4].copy_from_slice(&(i as u32).to_be_bytes());
        broadcaster.send(&ws::Message::binary(data));
        tokio::task::yield_now().await;
    }
    // The silent clients (19 MiB each, never read) are given up while
    // the readers go on.
    common::poll_until(|| broadcaster.subscriber_count() <= 8).await;
    broadcaster.close();
    for reader in readers {
        assert_eq!(
            reader.await.unwrap(),
            count as u32,
            "a reader missed messages"
        );
    }
    common::poll_until(|| broadcaster.subscriber_count() == 0).await;
    drop(silent);
}

/// `WebSocket` is a `Stream` of messages and a `Sink` of them: split into
/// halves, one task forwards what the other receives, large payloads
/// included.
#[tokio::test]
async fn a_websocket_is_a_stream_and_a_sink_and_splits_into_halves() {
    use ringstream::ws::{Message, Role, WebSocket};
    use ringstream::Stream;

    let (a, b) = tokio::io::duplex(64 * 1024);
    let server = WebSocket::from_stream(Stream::new(a), Role::Server, ws::Config::default());
    let (sink, stream) = futures_util::StreamExt::split(server);
    let echo = tokio::spawn(async move {
        let echoed = futures_util::StreamExt::filter(stream, |m| {
            std::future::ready(m.as_ref().is_ok_and(Message::is_data))
        });
        futures_util::StreamExt::forward(echoed, sink).await
    });

    // The client side masks its frames; the codec's client role reads the
    // server's unmasked ones.
    let mut client = WebSocket::from_stream(Stream::new(b), Role::Client, ws::Config::default());
    for size in [5usize, 100 * 1024] {
        let payload = vec![b'z'; size];
        send_masked(&mut client, &payload).await;
        match client.recv().await.unwrap().unwrap() {
            Message::Binary(back) => assert_eq!(back.len(), size),
            other => panic!("{other:?}"),
        }
    }
    drop(client);
    let _ = echo.await;
}

/// Sends one masked binary frame from a client-role socket's stream (the
/// library's own sends are unmasked, as a server's are).
async fn send_masked<T>(client: &mut ringstream::ws::WebSocket<T>, payload: &[u8])
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let frame = frame(0x82, payload);
    let stream = client.get_mut();
    stream.write_all(&frame).await.unwrap();
    stream.flush().await.unwrap();
}

/// permessage-deflate (RFC 7692) over a real socket: negotiated in the
/// handshake, a compressed message inflated and echoed compressed, a short
/// one sent as it is, and a decompression bomb closed with 1009.
#[cfg(feature = "deflate")]
#[tokio::test]
async fn permessage_deflate_is_negotiated_and_used_both_ways() {
    use ringstream::ws::{DeflateParams, Deflater, Inflater, Role};

    let server = common::start(echo(), Config::default()).await;
    let handshake = String::from_utf8(HANDSHAKE.to_vec()).unwrap().replace(
        "\r\n\r\n",
        "\r\nSec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n\r\n",
    );
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    socket.write_all(handshake.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        socket.read_exact(&mut byte).await.unwrap();
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    let extension = head
        .lines()
        .find_map(|l| l.strip_prefix("sec-websocket-extensions: "))
        .unwrap_or_else(|| panic!("no extension accepted: {head}"));
    assert!(extension.starts_with("permessage-deflate"), "{extension}");
    let params = DeflateParams::parse(extension.as_bytes()).unwrap();

    // RFC 7692 §7.2.3.1: "Hello" compressed, in one frame with RSV1.
    let hello = [0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00];
    socket.write_all(&frame(0xc1, &hello)).await.unwrap();
    let (first, payload) = read_frame(&mut socket).await;
    // Too short to be worth compressing on the way back.
    assert_eq!((first, &payload[..]), (0x81, &b"Hello"[..]));

    // A longer text, compressed by the client, comes back compressed.
    let text = "ringstream streams bytes at memory speed. ".repeat(20);
    let mut deflater = Deflater::new(&params, Role::Client);
    let compressed = deflater.compress(text.as_bytes());
    assert!(compressed.len() < text.len() / 4);
    socket.write_all(&frame(0xc1, &compressed)).await.unwrap();
    let (first, payload) = read_frame(&mut socket).await;
    assert_eq!(first, 0xc1, "text, compressed");
    let mut inflater = Inflater::new(&params, Role::Client, 1 << 20);
    inflater.push(&payload).unwrap();
    assert_eq!(&inflater.finish().unwrap()[..], text.as_bytes());

    // 4 MiB of zeros in a few KiB, against the 1 KiB message limit.
    let bomb = Deflater::new(&params, Role::Client).compress(&vec![0u8; 4 << 20]);
    assert!(bomb.len() < 8 * 1024);
    socket.write_all(&frame(0xc2, &bomb)).await.unwrap();
    let (first, payload) = read_frame(&mut socket).await;
    assert_eq!(first, 0x88);
    assert_eq!(close_code(&payload), 1009);
    closes(&mut socket).await;
}

/// Answers a WebSocket handshake with what `configure` makes of its
/// upgrade; every other request with the refusal.
fn upgrading<F>(
    configure: F,
) -> impl tower_service::Service<
    http::Request<Incoming>,
    Response = http::Response<String>,
    Error = Infallible,
    Future = impl Send,
> + Clone
       + Send
       + 'static
where
    F: Fn(WebSocketUpgrade) -> http::Response<String> + Clone + Send + Sync + 'static,
{
    service_fn(move |mut req: http::Request<Incoming>| {
        let configure = configure.clone();
        async move {
            Ok::<_, Infallible>(match WebSocketUpgrade::from_request(&mut req) {
                Ok(upgrade) => configure(upgrade),
                Err(refused) => refused.into_response(),
            })
        }
    })
}

/// The peer's Close is answered with a Close that carries its code and
/// its reason (RFC 6455 §5.5.1), seen by an independent client; the
/// server's handler gets the same code and reason as a `CloseFrame`.
#[tokio::test]
async fn the_close_reply_echoes_the_peers_code_and_reason() {
    use ringstream::ws::{close_code, CloseFrame, Message, Utf8Bytes};
    use tungstenite::protocol::frame::coding::CloseCode as TsCode;

    let (seen, mut closes_seen) = tokio::sync::mpsc::unbounded_channel();
    let server = common::start(
        upgrading(move |upgrade| {
            let seen = seen.clone();
            upgrade.on_upgrade(move |mut socket| async move {
                while let Some(Ok(message)) = socket.recv().await {
                    if let Message::Close(frame) = message {
                        let _ = seen.send(frame);
                    }
                }
            })
        }),
        Config::default(),
    )
    .await;

    let cases = [
        (4001u16, "bye now"),
        (close_code::NORMAL, ""),
        (close_code::AWAY, "κόσμε, tab closed"),
        (3000, &"r".repeat(123)[..]),
    ];
    for (code, reason) in cases {
        let url = format!("ws://{}/ws", server.addr);
        let tcp = TcpStream::connect(server.addr).await.unwrap();
        let (mut client, _) = tokio_tungstenite::client_async(url, tcp).await.unwrap();
        client
            .close(Some(tungstenite::protocol::CloseFrame {
                code: TsCode::from(code),
                reason: reason.into(),
            }))
            .await
            .unwrap();
        let reply = match client.next().await {
            Some(Ok(tungstenite::Message::Close(frame))) => frame,
            Some(Ok(other)) => panic!("{code}: {other:?}"),
            Some(Err(e)) => panic!("{code}: {e}"),
            None => panic!("{code}: no Close in reply"),
        };
        let reply = reply.expect("a code in the reply");
        assert_eq!(u16::from(reply.code), code);
        assert_eq!(reply.reason.as_str(), reason);
        let got = tokio::time::timeout(Duration::from_secs(10), closes_seen.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            got,
            Some(CloseFrame {
                code,
                reason: Utf8Bytes::from(reason),
            })
        );
    }

    // A Close without a code: reported as `None`, answered without one
    // (1005, "no status", is never sent).
    let mut socket = raw(server.addr).await;
    socket.write_all(&frame(0x88, b"")).await.unwrap();
    let (first, payload) = read_frame(&mut socket).await;
    assert_eq!(first, 0x88);
    assert!(payload.is_empty(), "{payload:?}");
    closes(&mut socket).await;
    let got = tokio::time::timeout(Duration::from_secs(10), closes_seen.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(got, None);
}

/// `protocols` selects the first of the server's subprotocols that the
/// client offered; the `101` names it and the socket reports it. Nothing
/// offered that the server speaks: none is named.
#[tokio::test]
async fn subprotocols_are_selected_by_the_servers_preference() {
    use ringstream::ws::Message;
    use tungstenite::client::IntoClientRequest;

    let server = common::start(
        upgrading(|upgrade| {
            let requested: Vec<String> = upgrade
                .requested_protocols()
                .map(|p| p.to_str().unwrap().to_owned())
                .collect();
            let upgrade = upgrade.protocols(["v2.chat", "chat"]);
            let selected = upgrade.selected_protocol().cloned();
            upgrade.on_upgrade(move |mut socket| async move {
                assert_eq!(socket.protocol(), selected.as_ref());
                assert_eq!(socket.selected_protocol(), selected.as_ref());
                let report = format!(
                    "{} of {}",
                    socket.protocol().map_or("none", |p| p.to_str().unwrap()),
                    requested.join(","),
                );
                let _ = socket.send(Message::text(report)).await;
                while let Some(Ok(_)) = socket.recv().await {}
            })
        }),
        Config::default(),
    )
    .await;

    let url = format!("ws://{}/ws", server.addr);
    let mut request = url.into_client_request().unwrap();
    request.headers_mut().insert(
        "sec-websocket-protocol",
        http::HeaderValue::from_static("chat, v1.chat,v2.chat"),
    );
    let tcp = TcpStream::connect(server.addr).await.unwrap();
    let (mut client, response) = tokio_tungstenite::client_async(request, tcp).await.unwrap();
    assert_eq!(response.headers()["sec-websocket-protocol"], "v2.chat");
    let report = client.next().await.unwrap().unwrap();
    assert_eq!(
        report.into_text().unwrap().as_str(),
        "v2.chat of chat,v1.chat,v2.chat"
    );
    client.close(None).await.unwrap();

    // No subprotocol the server speaks, or none offered: none selected.
    for offer in ["Sec-WebSocket-Protocol: mqtt\r\n", ""] {
        let handshake = String::from_utf8(HANDSHAKE.to_vec())
            .unwrap()
            .replace("\r\n\r\n", &format!("\r\n{offer}\r\n"));
        let mut socket = TcpStream::connect(server.addr).await.unwrap();
        socket.write_all(handshake.as_bytes()).await.unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            socket.read_exact(&mut byte).await.unwrap();
            head.push(byte[0]);
        }
        let head = String::from_utf8(head).unwrap();
        assert!(head.starts_with("HTTP/1.1 101 "), "{head}");
        assert!(!head.contains("sec-websocket-protocol"), "{head}");
        let (first, payload) = read_frame(&mut socket).await;
        let expected = format!(
            "none of {}",
            offer.trim().trim_start_matches("Sec-WebSocket-Protocol: ")
        );
        assert_eq!((first, payload), (0x81, expected.into_bytes()));
    }
}

/// `max_message_size` and `max_frame_size` set the connection's limits: a
/// frame or a message over them is closed with 1009.
#[tokio::test]
async fn max_message_and_frame_sizes_limit_what_is_taken() {
    use ringstream::ws::Message;

    let server = common::start(
        upgrading(|upgrade| {
            upgrade
                .max_message_size(100)
                .max_frame_size(50)
                .on_upgrade(|mut socket| async move {
                    while let Some(Ok(message)) = socket.recv().await {
                        if let Message::Binary(data) = message {
                            let _ = socket.send(Message::Binary(data)).await;
                        }
                    }
                })
        }),
        Config::default(),
    )
    .await;

    // Two fragments of 40 bytes: within both limits.
    let mut socket = raw(server.addr).await;
    let mut wire = frame(0x02, &[1; 40]);
    wire.extend(frame(0x80, &[2; 40]));
    socket.write_all(&wire).await.unwrap();
    let (first, payload) = read_frame(&mut socket).await;
    assert_eq!((first, payload.len()), (0x82, 80));

    // One frame of 60 bytes: over the frame limit.
    socket.write_all(&frame(0x82, &[3; 60])).await.unwrap();
    let (first, payload) = read_frame(&mut socket).await;
    assert_eq!((first, close_code(&payload)), (0x88, 1009));
    closes(&mut socket).await;

    // Three fragments of 40 bytes: over the message limit.
    let mut socket = raw(server.addr).await;
    let mut wire = frame(0x02, &[1; 40]);
    wire.extend(frame(0x00, &[2; 40]));
    wire.extend(frame(0x80, &[3; 40]));
    socket.write_all(&wire).await.unwrap();
    let (first, payload) = read_frame(&mut socket).await;
    assert_eq!((first, close_code(&payload)), (0x88, 1009));
    closes(&mut socket).await;
}

/// When the connection cannot be handed over after `on_upgrade` (here the
/// service answers something else than its `101`), the
/// `on_failed_upgrade` callback gets the error and the socket's callback
/// never runs.
#[tokio::test]
async fn a_failed_upgrade_calls_on_failed_upgrade() {
    let (failed, mut failures) = tokio::sync::mpsc::unbounded_channel();
    let (upgraded, mut upgrades) = tokio::sync::mpsc::unbounded_channel::<()>();
    let service = service_fn(move |mut req: http::Request<Incoming>| {
        let failed = failed.clone();
        let upgraded = upgraded.clone();
        async move {
            let upgrade = WebSocketUpgrade::from_request(&mut req).unwrap();
            let switching = upgrade
                .on_failed_upgrade(move |error: ringstream::Error| {
                    let _ = failed.send(error.to_string());
                })
                .on_upgrade(move |_socket| async move {
                    let _ = upgraded.send(());
                });
            assert_eq!(switching.status(), 101);
            // A middleware that answers otherwise, say.
            Ok::<_, Infallible>(http::Response::new(String::from(
                "no websocket after all\n",
            )))
        }
    });
    let server = common::start(service, Config::default()).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    socket.write_all(HANDSHAKE).await.unwrap();
    let mut buf = Vec::new();
    let response = common::read_response(&mut socket, &mut buf, false).await;
    assert_eq!(response.status, 200);
    drop(socket);
    let error = tokio::time::timeout(Duration::from_secs(10), failures.recv())
        .await
        .expect("on_failed_upgrade is called")
        .unwrap();
    assert!(!error.is_empty());
    assert!(
        upgrades.try_recv().is_err(),
        "the socket callback never ran"
    );
}

/// A received text message is `Utf8Bytes` over the bytes the core checked
/// as they arrived (not checked again): whole, gathered from fragments
/// split inside a character, or inflated, it reads back as the text sent.
#[tokio::test]
async fn received_text_reads_back_as_sent_from_every_path() {
    use ringstream::ws::Message;

    let (seen, mut texts) = tokio::sync::mpsc::unbounded_channel::<String>();
    let server = common::start(
        upgrading(move |upgrade| {
            let seen = seen.clone();
            upgrade.on_upgrade(move |mut socket| async move {
                while let Some(Ok(message)) = socket.recv().await {
                    if let Message::Text(text) = message {
                        let _ = seen.send(format!("{}|{}", text.as_str(), &*text));
                    }
                }
            })
        }),
        Config::default(),
    )
    .await;
    let text = "κόσμε 🦀 wörld";
    let bytes = text.as_bytes();
    let mut socket = raw(server.addr).await;
    // In one frame.
    socket.write_all(&frame(0x81, bytes)).await.unwrap();
    // In three fragments, the cuts inside "κ" and inside "🦀".
    let crab = text.find('🦀').unwrap() + 2;
    let mut wire = frame(0x01, &bytes[..1]);
    wire.extend(frame(0x00, &bytes[1..crab]));
    wire.extend(frame(0x80, &bytes[crab..]));
    socket.write_all(&wire).await.unwrap();
    #[allow(unused_mut)]
    let mut paths = vec!["one frame", "fragments"];
    // The connections stay open until their texts are seen.
    #[allow(unused_mut)]
    let mut kept: Vec<TcpStream> = vec![socket];
    // Compressed (permessage-deflate), in two fragments.
    #[cfg(feature = "deflate")]
    {
        use ringstream::ws::{DeflateParams, Deflater, Role};

        let handshake = String::from_utf8(HANDSHAKE.to_vec()).unwrap().replace(
            "\r\n\r\n",
            "\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n",
        );
        let mut socket = TcpStream::connect(server.addr).await.unwrap();
        socket.write_all(handshake.as_bytes()).await.unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            socket.read_exact(&mut byte).await.unwrap();
            head.push(byte[0]);
        }
        let head = String::from_utf8(head).unwrap();
        let extension = head
            .lines()
            .find_map(|l| l.strip_prefix("sec-websocket-extensions: "))
            .unwrap_or_else(|| panic!("no extension accepted: {head}"));
        let params = DeflateParams::parse(extension.as_bytes()).unwrap();
        let compressed = Deflater::new(&params, Role::Client).compress(bytes);
        let (first, rest) = compressed.split_at(compressed.len() / 2);
        let mut wire = frame(0x41, first);
        wire.extend(frame(0x80, rest));
        socket.write_all(&wire).await.unwrap();
        paths.push("compressed");
        kept.push(socket);
    }
    for path in paths {
        let got = tokio::time::timeout(Duration::from_secs(10), texts.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(got, format!("{text}|{text}"), "{path}");
    }
    drop(kept);
}

/// A send dropped part-way (as `select!` drops the branch that lost)
/// never cuts its frame: the rest of the message goes out, in order,
/// before the next message.
#[tokio::test]
async fn a_send_dropped_part_way_never_cuts_its_frame() {
    use ringstream::ws::Message;

    const LEN: usize = 8 << 20;
    let payload: bytes::Bytes = (0..LEN).map(|i| (i % 251) as u8).collect::<Vec<_>>().into();
    let sent = payload.clone();
    let service = upgrading(move |upgrade| {
        let sent = sent.clone();
        upgrade.on_upgrade(move |mut socket| async move {
            // Polled once: more than the sockets can hold goes out only
            // in part before the send is dropped.
            tokio::select! {
                biased;
                _ = socket.send(Message::Binary(sent)) => panic!("8 MiB sent at once"),
                () = std::future::ready(()) => {}
            }
            socket.send(Message::text("after")).await.unwrap();
            while let Some(Ok(_)) = socket.recv().await {}
        })
    });
    let server = common::start(service, Config::default()).await;
    let client = tokio::net::TcpSocket::new_v4().unwrap();
    client.set_recv_buffer_size(4096).unwrap();
    let mut socket = client.connect(server.addr).await.unwrap();
    socket.write_all(HANDSHAKE).await.unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        socket.read_exact(&mut byte).await.unwrap();
        head.push(byte[0]);
    }
    assert!(head.starts_with(b"HTTP/1.1 101 "));
    // The large message whole: FIN + binary, a 64-bit length, the payload.
    let mut frame_head = [0u8; 10];
    socket.read_exact(&mut frame_head).await.unwrap();
    assert_eq!(frame_head[..2], [0x82, 127]);
    assert_eq!(
        u64::from_be_bytes(frame_head[2..].try_into().unwrap()),
        LEN as u64
    );
    let mut got = vec![0u8; LEN];
    socket.read_exact(&mut got).await.unwrap();
    assert!(got == payload[..], "the payload arrived changed");
    // Then the next message.
    let mut next = [0u8; 7];
    socket.read_exact(&mut next).await.unwrap();
    assert_eq!(&next, b"\x81\x05after");
}
