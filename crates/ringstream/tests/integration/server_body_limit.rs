//! The request-body limit (`Limits::max_body_len`) over a real socket: a
//! `Content-Length` above it is answered `413` with `connection: close`
//! before the service runs or a body byte is read (no `100 Continue`
//! either); a chunked body that grows past it fails the service's read and
//! gets `413` and a close; a body of exactly the limit is served. And the
//! cap of `Incoming::read_all` in a plain service.

use crate::common;

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{read_response, read_to_close, start, status_of};
use http::{Request, Response};
use ringstream::ringstream_core::{self, Limits};
use ringstream::server::{service_fn, Config};
use ringstream::{Error, Incoming};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

/// The body limit of these tests, in bytes.
const LIMIT: u64 = 1000;

fn limited() -> Config {
    Config {
        limits: Limits {
            max_body_len: LIMIT,
            ..Limits::DEFAULT
        },
        ..Config::default()
    }
}

/// Reads the whole body and answers its length; counts its calls.
fn counting_reader(
    calls: Arc<AtomicUsize>,
) -> impl tower_service::Service<
    Request<Incoming>,
    Response = Response<String>,
    Error = Infallible,
    Future = impl Send,
> + Clone
       + Send
       + 'static {
    service_fn(move |req: Request<Incoming>| {
        let calls = calls.clone();
        async move {
            calls.fetch_add(1, Ordering::SeqCst);
            let mut body = req.into_body();
            let text = match body.read_all_limited(usize::MAX).await {
                Ok(data) => format!("read {}", data.len()),
                Err(e) => format!("failed: {e}"),
            };
            Ok::<_, Infallible>(Response::new(text))
        }
    })
}

/// The chunked coding of `sizes`, each chunk of `x`s, and the last chunk.
fn chunked(sizes: &[usize]) -> Vec<u8> {
    let mut wire = Vec::new();
    for &n in sizes {
        wire.extend_from_slice(format!("{n:x}\r\n").as_bytes());
        wire.extend(std::iter::repeat_n(b'x', n));
        wire.extend_from_slice(b"\r\n");
    }
    wire.extend_from_slice(b"0\r\n\r\n");
    wire
}

/// A `Content-Length` over the limit is refused as soon as the head is in:
/// the client sends no body at all and still gets `413` and a close, and
/// the service is never called.
#[tokio::test]
async fn content_length_over_the_limit_is_413_before_the_body_is_read() {
    let calls = Arc::new(AtomicUsize::new(0));
    let server = start(counting_reader(calls.clone()), limited()).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\r\n",
        LIMIT + 1
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    // No body byte is sent: the answer cannot have waited for one.
    let mut buf = Vec::new();
    let response = tokio::time::timeout(
        Duration::from_secs(5),
        read_response(&mut socket, &mut buf, false),
    )
    .await
    .expect("answered without the body");
    assert_eq!(response.status, 413);
    assert!(response.closes(), "{response:?}");
    assert_eq!(response.body, b"Content Too Large\n");
    let rest = read_to_close(&mut socket).await;
    assert!(rest.is_empty(), "{:?}", String::from_utf8_lossy(&rest));
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the service was called");
}

/// A client waiting on `Expect: 100-continue` is refused without being
/// invited: the only response is the `413`.
#[tokio::test]
async fn expect_continue_over_the_limit_gets_413_and_no_100() {
    let calls = Arc::new(AtomicUsize::new(0));
    let server = start(counting_reader(calls.clone()), limited()).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "PUT /file HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: {}\r\n\r\n",
        LIMIT * 1000
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    let all = read_to_close(&mut socket).await;
    let text = String::from_utf8_lossy(&all);
    assert!(
        text.starts_with("HTTP/1.1 413 Content Too Large\r\n"),
        "{text}"
    );
    assert!(!text.contains("100 Continue"), "{text}");
    assert!(text.contains("\r\nconnection: close\r\n"), "{text}");
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the service was called");

    // At the limit, the same client is invited and served.
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "PUT /file HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: {LIMIT}\r\n\r\n"
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    assert_eq!(
        read_response(&mut socket, &mut buf, false).await.status,
        100
    );
    socket.write_all(&vec![b'x'; LIMIT as usize]).await.unwrap();
    let response = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(response.status, 200);
    assert_eq!(response.body, format!("read {LIMIT}").as_bytes());
}

/// A body of exactly the limit is served, chunked or not, and the
/// connection is kept.
#[tokio::test]
async fn a_body_of_exactly_the_limit_is_served() {
    let calls = Arc::new(AtomicUsize::new(0));
    let server = start(counting_reader(calls.clone()), limited()).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    let mut buf = Vec::new();

    let mut request =
        format!("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: {LIMIT}\r\n\r\n").into_bytes();
    request.extend(std::iter::repeat_n(b'x', LIMIT as usize));
    socket.write_all(&request).await.unwrap();
    let response = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(response.status, 200);
    assert_eq!(response.body, format!("read {LIMIT}").as_bytes());
    assert!(!response.closes());

    let mut request = b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    request.extend(chunked(&[600, 399, 1]));
    socket.write_all(&request).await.unwrap();
    let response = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(response.status, 200);
    assert_eq!(response.body, format!("read {LIMIT}").as_bytes());
    assert!(!response.closes());
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

/// A chunked body that grows past the limit: the service's read fails with
/// the core's `BodyTooLarge` (status 413) after the data within the limit —
/// never a clean end of a shortened body — and the client gets `413` and a
/// close.
#[tokio::test]
async fn a_chunked_body_over_the_limit_fails_the_read_and_gets_413() {
    let (seen_tx, mut seen) = mpsc::unbounded_channel::<(u64, Result<(), Error>)>();
    let service = service_fn(move |req: Request<Incoming>| {
        let seen_tx = seen_tx.clone();
        async move {
            // The body is read in a task of its own, which outlives the
            // exchange, so the test can see what its reads returned.
            let reader = tokio::spawn(async move {
                let mut body = req.into_body();
                let result = loop {
                    match body.read_partial(usize::MAX).await {
                        Ok(Some(_)) => continue,
                        Ok(None) => break Ok(()),
                        Err(e) => break Err(e),
                    }
                };
                let _ = seen_tx.send((body.received(), result));
            });
            let _ = reader.await;
            Ok::<_, Infallible>(Response::new(String::from("complete")))
        }
    });
    let server = start(service, limited()).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    let mut request = b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    // 600 + 401: the second chunk takes the body one byte past the limit.
    request.extend(chunked(&[600, 401]));
    socket.write_all(&request).await.unwrap();
    let all = read_to_close(&mut socket).await;
    let text = String::from_utf8_lossy(&all);
    assert_eq!(status_of(&all), Some(413), "{text}");
    assert!(text.contains("\r\nconnection: close\r\n"), "{text}");
    assert!(!text.contains("complete"), "{text}");

    let (received, result) = tokio::time::timeout(Duration::from_secs(5), seen.recv())
        .await
        .expect("the reader finished")
        .expect("the reader reported");
    assert_eq!(received, 600, "the data within the limit, not more");
    let err = result.expect_err("the read fails");
    assert!(
        matches!(err, Error::Protocol(ringstream_core::Error::BodyTooLarge)),
        "{err:?}"
    );
    assert_eq!(err.status(), Some(413));
    assert_eq!(err.kind(), std::io::ErrorKind::FileTooLarge);
}

/// A service reading the body inline is never handed a shortened body as
/// complete: the server answers `413` in its place.
#[tokio::test]
async fn an_inline_reader_never_answers_for_a_body_over_the_limit() {
    let calls = Arc::new(AtomicUsize::new(0));
    let server = start(counting_reader(calls.clone()), limited()).await;
    let mut request = b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    request.extend(chunked(&[1000, 1]));
    let all = common::roundtrip(server.addr, &request).await;
    let text = String::from_utf8_lossy(&all);
    assert_eq!(status_of(&all), Some(413), "{text}");
    assert!(!text.contains("read "), "{text}");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

/// Once the response has started (an echo), a body growing past the limit
/// ends the connection: the response is cut off, never completed.
#[tokio::test]
async fn a_body_over_the_limit_during_the_response_closes_the_connection() {
    let service = service_fn(|req: Request<Incoming>| async move {
        Ok::<_, Infallible>(Response::new(req.into_body()))
    });
    let server = start(service, limited()).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    socket
        .write_all(b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
        .await
        .unwrap();
    socket.write_all(b"5\r\nhello\r\n").await.unwrap();
    // The echo of the first chunk: the response has started.
    let mut seen = Vec::new();
    let mut chunk = [0u8; 4096];
    while !seen.windows(5).any(|w| w == b"hello") {
        let n = tokio::time::timeout(Duration::from_secs(5), socket.read(&mut chunk))
            .await
            .expect("the echo starts")
            .unwrap();
        assert!(n > 0, "{:?}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&chunk[..n]);
    }
    assert!(seen.starts_with(b"HTTP/1.1 200 OK\r\n"));
    socket
        .write_all(format!("{:x}\r\n", LIMIT).as_bytes())
        .await
        .unwrap();
    let rest = read_to_close(&mut socket).await;
    seen.extend_from_slice(&rest);
    let text = String::from_utf8_lossy(&seen);
    assert!(
        !text.ends_with("0\r\n\r\n"),
        "the response looks complete: {text}"
    );
    assert!(!text.contains("413"), "{text}");
}

/// A plain service that buffers bodies with `read_all` holds at most
/// `READ_ALL_LIMIT` (2 MiB) of one, even under a larger server limit: a
/// longer body is a `BodyTooLarge` error (413) — at once when its
/// `Content-Length` says so, as it arrives when it is chunked.
#[tokio::test]
async fn read_all_in_a_service_is_capped() {
    let service = service_fn(|req: Request<Incoming>| async move {
        let mut body = req.into_body();
        let response = match body.read_all().await {
            Ok(data) => Response::new(format!("read {}", data.len())),
            Err(e) => {
                let mut response = Response::new(format!("{e}"));
                *response.status_mut() =
                    http::StatusCode::from_u16(e.status().unwrap_or(400)).expect("a status code");
                response
            }
        };
        Ok::<_, Infallible>(response)
    });
    let server = start(service, Config::default()).await;
    let cap = ringstream::body::READ_ALL_LIMIT;
    let mut buf = Vec::new();

    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    // Declared over the cap: refused before the body is sent.
    let head = format!(
        "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\r\n",
        cap + 1
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    let response = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(response.status, 413);
    assert_eq!(
        String::from_utf8_lossy(&response.body),
        format!("body longer than the {cap} bytes its reader buffers")
    );

    // Exactly the cap, chunked: served.
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    let mut request = b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    request.extend(chunked(&[cap / 2, cap / 2]));
    socket.write_all(&request).await.unwrap();
    let response = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(response.status, 200);
    assert_eq!(response.body, format!("read {cap}").as_bytes());

    // One byte over, chunked: refused once the data passes the cap.
    let mut request = b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    request.extend(chunked(&[cap / 2, cap / 2, 1]));
    socket.write_all(&request).await.unwrap();
    let response = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(response.status, 413);
}
