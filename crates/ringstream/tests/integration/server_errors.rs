//! Every error answer the server writes itself — to a malformed or
//! oversized head, an unsupported framing or version, a body over the
//! limit, a slow client, a failing or panicking service — is a complete
//! response a client can show: its status, `content-type: text/plain;
//! charset=utf-8`, a `content-length` that matches its text, and
//! `connection: close`.

use crate::common;

use std::time::Duration;

use common::{roundtrip, start};
use http::{Request, Response};
use ringstream::ringstream_core::Limits;
use ringstream::server::{service_fn, Config};
use ringstream::Incoming;

async fn app(req: Request<Incoming>) -> Result<Response<String>, std::io::Error> {
    match req.uri().path() {
        "/fail" => Err(std::io::Error::other("the service failed")),
        "/panic" => panic!("the service panicked"),
        _ => {
            let mut body = req.into_body();
            let mut n = 0;
            while let Some(chunk) = body
                .read_partial(64 * 1024)
                .await
                .map_err(std::io::Error::other)?
            {
                n += chunk.len();
            }
            Ok(Response::new(format!("{n} bytes\n")))
        }
    }
}

/// Checks one error answer and returns its status.
fn check(request: &str, wire: &[u8]) -> u16 {
    let text = String::from_utf8_lossy(wire);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no whole head for {request:?}: {text:?}"));
    let lower = format!("{}\r\n", head.to_ascii_lowercase());
    assert!(
        lower.contains("\r\ncontent-type: text/plain; charset=utf-8\r\n"),
        "no content-type for {request:?}:\n{head}"
    );
    assert!(
        lower.contains(&format!("\r\ncontent-length: {}\r\n", body.len())),
        "content-length does not match the text for {request:?}:\n{text}"
    );
    assert!(!body.is_empty(), "no text for {request:?}");
    assert!(
        lower.contains("\r\nconnection: close\r\n"),
        "not closing for {request:?}:\n{head}"
    );
    head[9..12].parse().unwrap()
}

#[tokio::test]
async fn every_error_answer_has_a_content_type_a_length_and_closes() {
    let config = Config {
        limits: Limits {
            max_head_len: 1024,
            max_target_len: 256,
            max_body_len: 16,
            ..Limits::DEFAULT
        },
        head_timeout: Duration::from_millis(300),
        ..Config::default()
    };
    let server = start(service_fn(app), config).await;
    let long_target = format!("GET /{} HTTP/1.1\r\nHost: t\r\n\r\n", "a".repeat(300));
    let long_head = format!(
        "GET / HTTP/1.1\r\nHost: t\r\nX-Big: {}\r\n\r\n",
        "b".repeat(2000)
    );
    let cases: Vec<(String, u16)> = vec![
        ("GET / HTTP/1.1\r\nHost t\r\n\r\n".into(), 400),
        ("GET /\x01 HTTP/1.1\r\nHost: t\r\n\r\n".into(), 400),
        ("GET / HTTP/1.1\r\n\r\n".into(), 400),
        (long_target, 414),
        (long_head, 431),
        (
            "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n".into(),
            501,
        ),
        ("GET / HTTP/2.0\r\nHost: t\r\n\r\n".into(), 505),
        (
            "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 17\r\n\r\n0123456789abcdefg".into(),
            413,
        ),
        ("GET /fail HTTP/1.1\r\nHost: t\r\n\r\n".into(), 500),
        ("GET /panic HTTP/1.1\r\nHost: t\r\n\r\n".into(), 500),
        // A head that stops half-way: the head deadline answers.
        ("GET / HTTP/1.1\r\nHost: t\r\n".into(), 408),
    ];
    for (request, status) in cases {
        let wire = roundtrip(server.addr, request.as_bytes()).await;
        assert_eq!(check(&request, &wire), status, "{request:?}");
    }
}

/// Every byte value inside a field value: the server either refuses the
/// head with a 400 or gives the service the value exactly as sent. The
/// server builds field values without checking them a second time (the
/// core's parser has), so this pins down that the parser lets through
/// only bytes a `HeaderValue` may hold — a debug build checks each such
/// value again and would fail the request with a 500.
#[tokio::test]
async fn every_byte_in_a_field_value_is_refused_or_kept_as_sent() {
    let service = service_fn(|req: Request<Incoming>| async move {
        let value = req.headers().get("x-probe").map(|v| v.as_bytes().to_vec());
        Ok::<_, std::convert::Infallible>(Response::new(format!("{value:?}")))
    });
    let server = start(service, Config::default()).await;
    for byte in 0..=255u8 {
        let mut request = b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\nX-Probe: a".to_vec();
        request.push(byte);
        request.extend_from_slice(b"b\r\n\r\n");
        let wire = roundtrip(server.addr, &request).await;
        let text = String::from_utf8_lossy(&wire);
        let status = &text[9..12];
        let allowed = byte == b'\t' || (byte >= b' ' && byte != 0x7f);
        if allowed {
            assert_eq!(status, "200", "byte {byte:#04x}: {text:?}");
            let expected = format!("{:?}", Some(vec![b'a', byte, b'b']));
            assert!(text.ends_with(&expected), "byte {byte:#04x}: {text:?}");
        } else {
            assert_eq!(status, "400", "byte {byte:#04x}: {text:?}");
        }
    }
}
