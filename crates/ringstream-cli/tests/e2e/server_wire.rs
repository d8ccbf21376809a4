//! The server over real sockets, written as raw bytes so a reader sees
//! exactly what crosses the wire.

use crate::common;

use std::convert::Infallible;
use std::time::Duration;

use common::{read_response, read_to_close, roundtrip, start, start_app, status_of, Rng};
use ringstream::server::{service_fn, Config};
use ringstream::{Incoming, ResponseStream};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn config() -> Config {
    Config::default()
}

/// RFC 9112 §9.3: persistent connections — 200 requests on one connection.
#[tokio::test]
async fn keep_alive_serves_200_sequential_requests() {
    let server = start_app(config()).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    let mut buf = Vec::new();
    for i in 0..200u32 {
        let n = i % 50 + 1;
        let request = format!("GET /bytes/{n} HTTP/1.1\r\nHost: test\r\n\r\n");
        socket.write_all(request.as_bytes()).await.unwrap();
        let response = read_response(&mut socket, &mut buf, false).await;
        assert_eq!(response.status, 200);
        assert_eq!(response.body.len(), n as usize);
        assert!(!response.closes());
    }
    assert_eq!(server.metrics.requests(), 200);
    assert_eq!(server.metrics.snapshot().requests, 200);
    assert_eq!(server.metrics.status_count(200), 200);
}

/// RFC 9112 §9.3.2: pipelined requests are answered in request order.
#[tokio::test]
async fn pipelined_requests_are_answered_in_order() {
    let server = start_app(config()).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    let mut wire = Vec::new();
    for n in [3, 1, 2, 5000, 7] {
        wire.extend_from_slice(format!("GET /bytes/{n} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes());
    }
    wire.extend_from_slice(b"POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc");
    wire.extend_from_slice(b"GET /nope HTTP/1.1\r\nHost: t\r\n\r\n");
    socket.write_all(&wire).await.unwrap();
    let mut buf = Vec::new();
    for n in [3, 1, 2, 5000, 7] {
        let response = read_response(&mut socket, &mut buf, false).await;
        assert_eq!(response.status, 200);
        assert_eq!(response.body.len(), n);
    }
    let upload = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(upload.status, 200);
    let body = String::from_utf8(upload.body).unwrap();
    assert!(body.contains("\"bytes\":3"), "{body}");
    assert!(
        body.contains("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        "{body}"
    );
    let missing = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(missing.status, 404);
}

/// RFC 9110 §10.1.1: `Expect: 100-continue` gets `100 Continue` once the
/// handler reads the body, then the final response.
#[tokio::test]
async fn expect_continue_sends_100_before_the_body() {
    let server = start_app(config()).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    socket
        .write_all(b"POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
        .await
        .unwrap();
    let mut buf = Vec::new();
    let interim = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(interim.status, 100);
    socket.write_all(b"hello").await.unwrap();
    let response = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(response.status, 200);
    let body = String::from_utf8(response.body).unwrap();
    assert!(
        body.contains("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"),
        "{body}"
    );
}

/// A handler that answers without reading the body never sends 100 and
/// closes the connection (the client may or may not send the body).
#[tokio::test]
async fn expect_continue_without_reading_closes() {
    let server = start_app(config()).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    socket
        .write_all(
            b"POST /nope HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n",
        )
        .await
        .unwrap();
    let all = read_to_close(&mut socket).await;
    let text = String::from_utf8_lossy(&all);
    assert!(text.starts_with("HTTP/1.1 404 "), "{text}");
    assert!(!text.contains("100 Continue"), "{text}");
    assert!(
        text.to_ascii_lowercase().contains("connection: close"),
        "{text}"
    );
}

/// A service that refuses a body it never reads (413) before the client
/// was invited: no `100 Continue` ever goes out, the refusal says
/// `connection: close`, and the server closes without waiting for a body
/// the client may never send (nor answering a request queued behind it).
#[tokio::test]
async fn expect_continue_refused_unread_gets_no_100_and_closes() {
    let service = service_fn(|req: http::Request<Incoming>| async move {
        drop(req.into_body());
        let mut response = http::Response::new(String::from("too large\n"));
        *response.status_mut() = http::StatusCode::PAYLOAD_TOO_LARGE;
        Ok::<_, Infallible>(response)
    });
    let server = start(service, config()).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    socket
        .write_all(
            b"PUT /big HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\
              Expect: 100-continue\r\n\r\n",
        )
        .await
        .unwrap();
    let all = read_to_close(&mut socket).await;
    let text = String::from_utf8_lossy(&all);
    assert!(text.starts_with("HTTP/1.1 413 "), "{text}");
    assert_eq!(text.matches("HTTP/1.1 ").count(), 1, "{text}");
    assert!(!text.contains("100 Continue"), "{text}");
    assert!(text.contains("\r\nconnection: close\r\n"), "{text}");
    assert!(text.ends_with("\r\n\r\ntoo large\n"), "{text}");
}

/// A service that still holds the body when it answers (an echo streams
/// it back) gets the client invited before the final head, exactly once,
/// and the connection then carries the next request.
#[tokio::test]
async fn expect_continue_with_a_held_body_invites_before_the_head() {
    let server = start_app(config()).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    socket
        .write_all(
            b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\
              Expect: 100-continue\r\n\r\n",
        )
        .await
        .unwrap();
    let mut buf = Vec::new();
    let interim = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(interim.status, 100);
    socket.write_all(b"hello").await.unwrap();
    let echoed = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(echoed.status, 200);
    assert_eq!(echoed.body, b"hello");
    assert!(!echoed.closes());
    socket
        .write_all(b"GET /bytes/3 HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let next = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(next.status, 200);
    assert_eq!(next.body.len(), 3);
    assert!(buf.is_empty(), "{:?}", String::from_utf8_lossy(&buf));
}

/// HTTP/1.0 kept alive: a body the service leaves unread is drained, the
/// answer says `connection: keep-alive` after its length, and the next
/// request on the same socket is served.
#[tokio::test]
async fn http10_keep_alive_survives_an_unread_body() {
    let server = start_app(config()).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    let mut buf = Vec::new();
    socket
        .write_all(
            b"POST /nope HTTP/1.0\r\nConnection: keep-alive\r\n\
              Content-Length: 4\r\n\r\nabcd",
        )
        .await
        .unwrap();
    let missing = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(missing.status, 404);
    assert_eq!(missing.header("connection"), Some("keep-alive"));
    assert!(missing.header("content-length").is_some());
    socket
        .write_all(b"GET /bytes/5 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        .await
        .unwrap();
    let next = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(next.status, 200);
    assert_eq!(next.body, b"rings");
    assert_eq!(next.header("connection"), Some("keep-alive"));
}

/// RFC 9110 §7.8, §15.2.2: a `101` the service answers to an upgrade
/// request carries `connection: upgrade` with its `Upgrade`, and nothing
/// after it is read as HTTP (the server has no new protocol to hand the
/// connection to, so it closes).
#[tokio::test]
async fn switching_protocols_says_upgrade_and_ends_http() {
    let service = service_fn(|_req: http::Request<Incoming>| async move {
        let mut response = http::Response::new(String::new());
        *response.status_mut() = http::StatusCode::SWITCHING_PROTOCOLS;
        let headers = response.headers_mut();
        headers.insert(
            http::header::UPGRADE,
            http::HeaderValue::from_static("test"),
        );
        headers.insert(
            http::header::CONNECTION,
            http::HeaderValue::from_static("Upgrade"),
        );
        Ok::<_, Infallible>(response)
    });
    let server = start(service, config()).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    socket
        .write_all(
            b"GET / HTTP/1.1\r\nHost: t\r\nConnection: upgrade\r\nUpgrade: test\r\n\r\n\
              GET / HTTP/1.1\r\nHost: t\r\n\r\n",
        )
        .await
        .unwrap();
    let all = read_to_close(&mut socket).await;
    let text = String::from_utf8_lossy(&all);
    assert!(
        text.starts_with("HTTP/1.1 101 Switching Protocols\r\n"),
        "{text}"
    );
    assert!(
        text.ends_with("upgrade: test\r\nconnection: upgrade\r\n\r\n"),
        "{text}"
    );
    assert_eq!(text.matches("HTTP/1.1 ").count(), 1, "{text}");
}

/// RFC 9110 §9.3.2: HEAD gets the GET's headers and no body.
#[tokio::test]
async fn head_gets_headers_without_body() {
    let server = start_app(config()).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    let mut buf = Vec::new();
    socket
        .write_all(b"HEAD /bytes/1000 HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let head = read_response(&mut socket, &mut buf, true).await;
    assert_eq!(head.status, 200);
    assert_eq!(head.header("content-length"), Some("1000"));
    // The connection stays usable: the next response follows directly.
    socket
        .write_all(b"GET /bytes/4 HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let next = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(next.body.len(), 4);
    assert!(buf.is_empty(), "HEAD response carried body bytes");
}

/// RFC 9112 §9.3: HTTP/1.0 closes unless keep-alive is asked for.
#[tokio::test]
async fn http10_closes_unless_keep_alive_is_asked() {
    let server = start_app(config()).await;
    let all = roundtrip(server.addr, b"GET /bytes/5 HTTP/1.0\r\n\r\n").await;
    let text = String::from_utf8_lossy(&all);
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    assert!(text.ends_with("\r\n\r\nrings"), "{text}");
    assert!(
        !text.to_ascii_lowercase().contains("transfer-encoding"),
        "{text}"
    );

    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    let mut buf = Vec::new();
    for _ in 0..3 {
        socket
            .write_all(b"GET /bytes/5 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            .await
            .unwrap();
        let response = read_response(&mut socket, &mut buf, false).await;
        assert_eq!(response.status, 200);
        assert_eq!(response.header("connection"), Some("keep-alive"));
    }
}

/// HTTP/1.0 with a body of unknown length: close-delimited, never chunked.
#[tokio::test]
async fn http10_streaming_body_is_close_delimited() {
    let service = service_fn(|_req: http::Request<Incoming>| async {
        let (mut writer, body) = ResponseStream::streaming(1024);
        tokio::spawn(async move {
            for i in 0..100 {
                writer
                    .write_all(format!("line {i}\n").as_bytes())
                    .await
                    .unwrap();
            }
        });
        Ok::<_, Infallible>(http::Response::new(body))
    });
    let server = start(service, config()).await;
    let all = roundtrip(server.addr, b"GET / HTTP/1.0\r\n\r\n").await;
    let text = String::from_utf8_lossy(&all);
    assert!(
        !text.to_ascii_lowercase().contains("transfer-encoding"),
        "{text}"
    );
    assert!(text.ends_with("line 99\n"), "{text}");
    let chunked = roundtrip(
        server.addr,
        b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
    )
    .await;
    let text = String::from_utf8_lossy(&chunked);
    assert!(
        text.to_ascii_lowercase()
            .contains("transfer-encoding: chunked"),
        "{text}"
    );
    assert!(text.ends_with("0\r\n\r\n"), "{text}");
}

/// A service that answers with `Connection: close` (among few fields or
/// many) gets exactly one `connection: close` and the connection closes.
#[tokio::test]
async fn a_close_asked_by_the_service_closes_the_connection() {
    let service = service_fn(|req: http::Request<Incoming>| async move {
        let mut response = http::Response::new(ResponseStream::buffered());
        let headers = response.headers_mut();
        if req.uri().path() == "/many" {
            for i in 0..12 {
                headers.insert(
                    http::HeaderName::from_bytes(format!("x-field-{i}").as_bytes()).unwrap(),
                    http::HeaderValue::from_static("1"),
                );
            }
        }
        headers.insert(
            http::header::CONNECTION,
            http::HeaderValue::from_static("keep-alive, Close"),
        );
        Ok::<_, Infallible>(response)
    });
    let server = start(service, config()).await;
    for path in ["/few", "/many"] {
        let mut socket = TcpStream::connect(server.addr).await.unwrap();
        let wire =
            format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\nGET / HTTP/1.1\r\nHost: t\r\n\r\n");
        socket.write_all(wire.as_bytes()).await.unwrap();
        let bytes = read_to_close(&mut socket).await;
        let text = String::from_utf8_lossy(&bytes);
        assert_eq!(text.matches("HTTP/1.1 200").count(), 1, "{path}: {text}");
        assert_eq!(
            text.matches("connection: close\r\n").count(),
            1,
            "{path}: {text}"
        );
        assert!(!text.contains("keep-alive"), "{path}: {text}");
    }
}

/// RFC 9112 §3.2.2: absolute-form targets are accepted.
#[tokio::test]
async fn absolute_form_target_is_served() {
    let server = start_app(config()).await;
    let all = roundtrip(
        server.addr,
        b"GET http://example.test/bytes/3 HTTP/1.1\r\nHost: example.test\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert_eq!(status_of(&all), Some(200));
    assert!(all.ends_with(b"\r\n\r\nrin"));
}

/// Every framing rejection of the core, over the wire: the right status,
/// `Connection: close`, then the connection is closed and nothing that
/// follows (a smuggled request) is ever answered.
#[tokio::test]
async fn framing_errors_get_4xx_and_close() {
    let server = start_app(config()).await;
    let smuggled = "GET /bytes/1 HTTP/1.1\r\nHost: t\r\n\r\n";
    let long_target = format!("GET /{} HTTP/1.1\r\nHost: t\r\n\r\n", "a".repeat(9000));
    let long_field = format!(
        "GET / HTTP/1.1\r\nHost: t\r\nX-Big: {}\r\n\r\n",
        "b".repeat(200_000)
    );
    let long_method = format!("{} / HTTP/1.1\r\nHost: t\r\n\r\n", "A".repeat(100_000));
    let many_fields = format!(
        "GET / HTTP/1.1\r\nHost: t\r\n{}\r\n",
        (0..150)
            .map(|i| format!("X-{i}: v\r\n"))
            .collect::<String>()
    );
    let cases: Vec<(String, u16)> = vec![
        // RFC 9112 §6.1, §6.3: CL + TE is rejected (smuggling).
        (format!("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n{smuggled}"), 400),
        // RFC 9112 §6.1: chunked applied twice.
        (format!("POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n{smuggled}"), 400),
        // RFC 9112 §6.1: unknown coding → 501.
        (format!("POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n{smuggled}"), 501),
        // RFC 9112 §6.1: TE on HTTP/1.0.
        (format!("POST /upload HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n{smuggled}"), 400),
        // RFC 9110 §8.6: Content-Length is 1*DIGIT.
        (format!("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: +5\r\n\r\nhello{smuggled}"), 400),
        (format!("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 5, 6\r\n\r\nhello{smuggled}"), 400),
        (format!("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 99999999999999999999999\r\n\r\n{smuggled}"), 400),
        // RFC 9112 §5.1: whitespace before the colon.
        (format!("POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n{smuggled}"), 400),
        // RFC 9112 §3.2: Host missing / repeated.
        (format!("GET / HTTP/1.1\r\n\r\n{smuggled}"), 400),
        (format!("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n{smuggled}"), 400),
        // RFC 9112 §5.2: obs-fold.
        (format!("GET / HTTP/1.1\r\nHost: t\r\nX-A: 1\r\n  folded\r\n\r\n{smuggled}"), 400),
        // RFC 9112 §2.3: unsupported version.
        (format!("GET / HTTP/2.0\r\nHost: t\r\n\r\n{smuggled}"), 505),
        // Limits: target length → 414, head size and field count → 431.
        (long_target, 414),
        (long_field, 431),
        (many_fields, 431),
        // RFC 9112 §3: a method longer than any implemented → 501.
        (long_method, 501),
        // RFC 9112 §7.1: a bad chunk size in the body.
        (format!("POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n+5\r\nhello\r\n0\r\n\r\n{smuggled}"), 400),
        // RFC 9112 §7.1: chunk data not followed by CRLF.
        (format!("POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n{smuggled}"), 400),
        // RFC 9112 §2.2: bare LF in chunked framing.
        (format!("POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n{smuggled}"), 400),
    ];
    for (request, expected) in cases {
        let all = roundtrip(server.addr, request.as_bytes()).await;
        let text = String::from_utf8_lossy(&all);
        let shown: String = request.chars().take(80).collect();
        assert_eq!(
            status_of(&all),
            Some(expected),
            "request {shown:?} got {text:?}"
        );
        assert!(
            text.to_ascii_lowercase().contains("connection: close"),
            "{shown:?}: {text}"
        );
        assert_eq!(
            text.matches("HTTP/1.1 ").count(),
            1,
            "a smuggled request was answered: {text}"
        );
    }
}

/// An upload cut short (EOF before Content-Length) is never answered 2xx.
#[tokio::test]
async fn truncated_upload_is_never_answered_2xx() {
    let server = start_app(config()).await;
    for request in [
        &b"POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\nonly a little"[..],
        &b"POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n100\r\nshort"[..],
        &b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\nonly a little"[..],
    ] {
        let mut socket = TcpStream::connect(server.addr).await.unwrap();
        socket.write_all(request).await.unwrap();
        socket.shutdown().await.unwrap();
        let all = read_to_close(&mut socket).await;
        if let Some(status) = status_of(&all) {
            if status == 200 {
                // A streaming echo may have started its response; it must not
                // look complete: no full Content-Length body / last chunk.
                let text = String::from_utf8_lossy(&all);
                assert!(
                    !text.ends_with("0\r\n\r\n"),
                    "truncated body looked complete: {text}"
                );
                assert!(!text.contains("\"bytes\""), "{text}");
            } else {
                assert!(!(200..300).contains(&status), "got {status}");
            }
        }
    }
}

/// A 100 MB chunked upload with random chunk sizes and random write splits
/// echoes back byte-identical.
#[tokio::test]
async fn large_chunked_echo_is_byte_identical() {
    const TOTAL: usize = 100 * 1024 * 1024;
    let server = start_app(config()).await;
    let socket = TcpStream::connect(server.addr).await.unwrap();
    let (mut rd, mut wr) = socket.into_split();
    let writer = tokio::spawn(async move {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut wire = Vec::with_capacity(1 << 20);
        wr.write_all(b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
            .await
            .unwrap();
        let mut sent = 0usize;
        let mut data = vec![0u8; 300_000];
        let mut hasher = Crc(0);
        while sent < TOTAL {
            let size = (rng.below(200_000) as usize + 1).min(TOTAL - sent);
            rng.fill(&mut data[..size]);
            hasher.update(&data[..size]);
            wire.extend_from_slice(format!("{size:x}\r\n").as_bytes());
            wire.extend_from_slice(&data[..size]);
            wire.extend_from_slice(b"\r\n");
            sent += size;
            if wire.len() > 512 * 1024 || sent == TOTAL {
                if sent == TOTAL {
                    wire.extend_from_slice(b"0\r\n\r\n");
                }
                let mut at = 0;
                while at < wire.len() {
                    let n = (rng.below(70_000) as usize + 1).min(wire.len() - at);
                    wr.write_all(&wire[at..at + n]).await.unwrap();
                    at += n;
                }
                wire.clear();
            }
        }
        (hasher.0, wr)
    });
    let mut buf = Vec::new();
    let mut received = Crc(0);
    let mut total = 0usize;
    let mut head_done = false;
    let mut decoder = ringstream::ringstream_core::h1::Decoder::chunked(
        ringstream::ringstream_core::Limits::DEFAULT,
    );
    let mut chunk = vec![0u8; 256 * 1024];
    loop {
        let n = tokio::time::timeout(Duration::from_secs(60), rd.read(&mut chunk))
            .await
            .unwrap()
            .unwrap();
        assert!(n > 0, "server closed early after {total} bytes");
        buf.extend_from_slice(&chunk[..n]);
        if !head_done {
            let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                continue;
            };
            let head = String::from_utf8_lossy(&buf[..at]).to_ascii_lowercase();
            assert!(head.starts_with("http/1.1 200"), "{head}");
            assert!(head.contains("transfer-encoding: chunked"), "{head}");
            buf.drain(..at + 4);
            head_done = true;
        }
        let mut finished = false;
        loop {
            let progress = decoder.decode(&buf).unwrap();
            received.update(&buf[progress.data.clone()]);
            total += progress.data.len();
            buf.drain(..progress.consumed);
            if progress.finished {
                finished = true;
                break;
            }
            if progress.consumed == 0 || buf.is_empty() {
                break;
            }
        }
        if finished {
            break;
        }
    }
    let (sent_crc, _wr) = writer.await.unwrap();
    assert_eq!(total, TOTAL);
    assert_eq!(received.0, sent_crc);
}

/// A simple rolling checksum (FNV-1a, 64-bit) to compare streams.
struct Crc(u64);

impl Crc {
    fn update(&mut self, data: &[u8]) {
        if self.0 == 0 {
            self.0 = 0xcbf2_9ce4_8422_2325;
        }
        for &b in data {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// 64 concurrent clients each fetch `/api/livedata` 50 times and all get
/// complete, identical bodies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_clients_get_complete_identical_livedata() {
    let server = start_app(config()).await;
    let addr = server.addr;
    let mut clients = Vec::new();
    for _ in 0..64 {
        clients.push(tokio::spawn(async move {
            let mut socket = TcpStream::connect(addr).await.unwrap();
            let mut buf = Vec::new();
            let mut bodies = Vec::new();
            for _ in 0..50 {
                socket
                    .write_all(b"GET /api/livedata HTTP/1.1\r\nHost: t\r\n\r\n")
                    .await
                    .unwrap();
                let response = read_response(&mut socket, &mut buf, false).await;
                assert_eq!(response.status, 200);
                assert_eq!(response.header("content-type"), Some("application/json"));
                bodies.push(response.body);
            }
            bodies
        }));
    }
    let mut reference: Option<Vec<u8>> = None;
    for client in clients {
        for body in client.await.unwrap() {
            assert!(body.len() > 30_000, "short body: {}", body.len());
            assert!(body.ends_with(b"}}\n"));
            match &reference {
                Some(r) => assert_eq!(&body, r),
                None => reference = Some(body),
            }
        }
    }
}

/// RFC 9112 §3: bytes that cannot start a request line (a TLS ClientHello
/// sent to the plain-text port, NUL, 0xFF) get 400 as soon as they arrive,
/// not 408 once the head timeout has passed.
#[tokio::test]
async fn bytes_that_cannot_start_a_request_get_400_at_once() {
    let config = Config {
        head_timeout: Duration::from_secs(30),
        ..config()
    };
    let server = start_app(config).await;
    let hello: &[u8] = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03";
    for request in [hello, b"\x00", b"\xff\xff", b"\r\n\x16"] {
        let started = std::time::Instant::now();
        let all = roundtrip(server.addr, request).await;
        assert_eq!(
            status_of(&all),
            Some(400),
            "{request:?} got {:?}",
            String::from_utf8_lossy(&all)
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{request:?} answered after {:?}",
            started.elapsed()
        );
    }
}

/// A slow client (slowloris) gets 408 and is closed.
#[tokio::test]
async fn slowloris_gets_408() {
    let config = Config {
        head_timeout: Duration::from_millis(300),
        ..config()
    };
    let server = start_app(config).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    socket
        .write_all(b"GET / HTTP/1.1\r\nHost: t\r\n")
        .await
        .unwrap();
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(150)).await;
        if socket.write_all(b"X-Slow: 1\r\n").await.is_err() {
            break;
        }
    }
    let all = read_to_close(&mut socket).await;
    assert_eq!(
        status_of(&all),
        Some(408),
        "{}",
        String::from_utf8_lossy(&all)
    );
}

/// An idle keep-alive connection is closed quietly after the idle timeout.
#[tokio::test]
async fn idle_connection_is_closed_quietly() {
    let config = Config {
        idle_timeout: Duration::from_millis(200),
        ..config()
    };
    let server = start_app(config).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    let mut buf = Vec::new();
    socket
        .write_all(b"GET /bytes/1 HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    assert_eq!(
        read_response(&mut socket, &mut buf, false).await.status,
        200
    );
    let rest = read_to_close(&mut socket).await;
    assert!(rest.is_empty(), "{}", String::from_utf8_lossy(&rest));
}

/// A body that stops arriving fails with a timeout and closes.
#[tokio::test]
async fn stalled_body_times_out() {
    let config = Config {
        body_read_timeout: Duration::from_millis(300),
        ..config()
    };
    let server = start_app(config).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    socket
        .write_all(b"POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nabc")
        .await
        .unwrap();
    let all = read_to_close(&mut socket).await;
    assert_eq!(
        status_of(&all),
        Some(408),
        "{}",
        String::from_utf8_lossy(&all)
    );
}

/// A handler that panics gets a 500 and the server goes on.
#[tokio::test]
async fn panicking_handler_gets_500_and_server_goes_on() {
    let service = service_fn(|req: http::Request<Incoming>| async move {
        if req.uri().path() == "/panic" {
            panic!("handler failure under test");
        }
        Ok::<_, Infallible>(http::Response::new(String::from("fine")))
    });
    let server = start(service, config()).await;
    let all = roundtrip(server.addr, b"GET /panic HTTP/1.1\r\nHost: t\r\n\r\n").await;
    assert_eq!(status_of(&all), Some(500));
    let all = roundtrip(
        server.addr,
        b"GET /ok HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert_eq!(status_of(&all), Some(200));
    assert!(all.ends_with(b"fine"));
}

/// Maximum connections: at the cap, a new client is served at once in the
/// slot of the connection idle the longest, which is closed cleanly
/// between requests.
#[tokio::test]
async fn a_client_over_the_limit_takes_the_idle_connections_slot() {
    let config = Config {
        max_connections: 1,
        ..config()
    };
    let server = start_app(config).await;
    let mut first = TcpStream::connect(server.addr).await.unwrap();
    let mut buf = Vec::new();
    first
        .write_all(b"GET /bytes/1 HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    assert_eq!(read_response(&mut first, &mut buf, false).await.status, 200);
    let mut second = TcpStream::connect(server.addr).await.unwrap();
    second
        .write_all(b"GET /bytes/2 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let all = tokio::time::timeout(Duration::from_secs(5), read_to_close(&mut second))
        .await
        .expect("the new client is served while the first sits idle");
    assert_eq!(status_of(&all), Some(200));
    // The idle connection was closed with a FIN, nothing sent on it.
    let mut rest = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(5), first.read_to_end(&mut rest))
        .await
        .expect("the idle connection is closed");
    assert!(matches!(closed, Ok(0)), "{closed:?} {rest:?}");
    assert_eq!(server.metrics.connections_evicted(), 1);
}

/// Graceful shutdown lets an in-flight 100 MB download finish.
#[tokio::test]
async fn graceful_shutdown_finishes_inflight_download() {
    const SIZE: usize = 100 * 1024 * 1024;
    let mut server = start_app(config()).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    socket
        .write_all(format!("GET /bytes/{SIZE} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut first = vec![0u8; 4096];
    let n = socket.read(&mut first).await.unwrap();
    assert!(n > 0);
    let stopped = server.begin_shutdown();
    // New connections are refused once the listener is gone.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(server.addr).await.is_ok() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "new connections still accepted 10 s into the shutdown"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut total = n;
    let mut chunk = vec![0u8; 1 << 20];
    loop {
        let n = tokio::time::timeout(Duration::from_secs(30), socket.read(&mut chunk))
            .await
            .unwrap()
            .unwrap();
        if n == 0 {
            break;
        }
        total += n;
    }
    let head_len = first.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    assert_eq!(total - head_len, SIZE);
    stopped.await.unwrap().unwrap();
}

/// A client that disconnects mid-response cancels the handler's streaming
/// body: its next write fails instead of blocking forever.
#[tokio::test]
async fn client_disconnect_cancels_streaming_body() {
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<std::io::ErrorKind>();
    let done_tx = std::sync::Arc::new(std::sync::Mutex::new(Some(done_tx)));
    let service = service_fn(move |_req: http::Request<Incoming>| {
        let done_tx = done_tx.clone();
        async move {
            let (mut writer, body) = ResponseStream::streaming(4096);
            tokio::spawn(async move {
                let block = vec![b'x'; 4096];
                let err = loop {
                    if let Err(e) = writer.write_all(&block).await {
                        break e.kind();
                    }
                };
                if let Some(tx) = done_tx.lock().unwrap().take() {
                    let _ = tx.send(err);
                }
            });
            Ok::<_, Infallible>(http::Response::new(body))
        }
    });
    let server = start(service, config()).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    socket
        .write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let mut some = vec![0u8; 64 * 1024];
    let _ = socket.read(&mut some).await.unwrap();
    drop(socket);
    let kind = tokio::time::timeout(Duration::from_secs(10), done_rx)
        .await
        .expect("handler cancelled")
        .unwrap();
    assert_eq!(kind, std::io::ErrorKind::BrokenPipe);
}

/// A body the handler drops unread: a small remainder is drained and the
/// connection reused; a remainder over the drain limit closes it.
#[tokio::test]
async fn unread_body_is_drained_within_limit_or_closes() {
    let config = Config {
        drain_limit: 1024,
        ..config()
    };
    let server = start_app(config).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    let mut buf = Vec::new();
    // 404 handler never reads the 500-byte body: drained, connection kept.
    let mut request = b"POST /nope HTTP/1.1\r\nHost: t\r\nContent-Length: 500\r\n\r\n".to_vec();
    request.extend_from_slice(&[b'x'; 500]);
    socket.write_all(&request).await.unwrap();
    let response = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(response.status, 404);
    assert!(!response.closes());
    socket
        .write_all(b"GET /bytes/2 HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    assert_eq!(
        read_response(&mut socket, &mut buf, false).await.body.len(),
        2
    );

    // A 100 KB body over the 1 KiB drain limit: the connection closes.
    let socket = TcpStream::connect(server.addr).await.unwrap();
    let mut request = b"POST /nope HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n".to_vec();
    request.extend_from_slice(&vec![b'x'; 100_000]);
    let (mut rd, mut wr) = socket.into_split();
    let writer = tokio::spawn(async move {
        let _ = wr.write_all(&request).await;
        wr
    });
    let mut all = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), rd.read_to_end(&mut all))
        .await
        .expect("closed");
    let text = String::from_utf8_lossy(&all);
    assert!(text.starts_with("HTTP/1.1 404"), "{text}");
    assert!(
        text.to_ascii_lowercase().contains("connection: close"),
        "{text}"
    );
    let _ = writer.await;
}

/// Requests with many fields reach the service whole, in order, up to the
/// `max_fields` limit (100 by default, the `Host` field included), past the
/// number parsed on the stack; one more is 431.
#[tokio::test]
async fn every_field_up_to_the_limit_reaches_the_service() {
    let service = service_fn(|req: http::Request<Incoming>| async move {
        let names: Vec<&str> = req.headers().keys().map(|n| n.as_str()).collect();
        let last = req
            .headers()
            .get("x-field-last")
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .unwrap_or_default();
        Ok::<_, Infallible>(http::Response::new(format!("{} {last}", names.len())))
    });
    let server = start(service, config()).await;
    for count in [1usize, 21, 22, 23, 60, 98] {
        let mut head = String::from("GET / HTTP/1.1\r\nHost: t\r\n");
        for i in 0..count - 1 {
            head.push_str(&format!("X-Field-{i}: value {i}\r\n"));
        }
        head.push_str(&format!(
            "X-Field-Last: {count}\r\nConnection: close\r\n\r\n"
        ));
        let all = roundtrip(server.addr, head.as_bytes()).await;
        assert_eq!(status_of(&all), Some(200), "{count} fields");
        // Host, the X- fields and Connection.
        let expected = format!("\r\n\r\n{} {count}", count + 2);
        assert!(
            all.ends_with(expected.as_bytes()),
            "{count}: {:?}",
            String::from_utf8_lossy(&all)
        );
    }
    let mut head = String::from("GET / HTTP/1.1\r\nHost: t\r\n");
    for i in 0..100 {
        head.push_str(&format!("X-Field-{i}: v\r\n"));
    }
    head.push_str("\r\n");
    let all = roundtrip(server.addr, head.as_bytes()).await;
    assert_eq!(status_of(&all), Some(431));
}
