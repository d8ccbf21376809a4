//! ringstream-embedded's HTTP server over tokio `TcpStream`s on 127.0.0.1,
//! through embedded-io-adapters' `FromTokio`: wire tests written as raw
//! bytes, so a reader sees exactly what crosses the socket.
//!
//! Each connection is served in a `spawn_local` task (the server's future
//! has no `Send` bound, as on embassy's executor) with 1 KiB to receive
//! and 512 bytes to transmit, then closed as the pool closes it (FIN, the
//! client's rest read and dropped). Every server poll runs under a
//! counting allocator: each test ends by checking that serving allocated
//! nothing.
//!
//! Time is embassy-time's mock driver, which these tests never advance:
//! the deadlines are tested on the loopback stack, in simulated time.
//!
//! The last test serves a scripted in-memory connection instead of a
//! socket, to feed one wire vector whole, one byte at a time, and split
//! at every offset.

#[path = "support/http_app.rs"]
mod http_app;

// Static assets from flash: `http::Asset`, over the same sockets.
#[path = "tokio_tcp/assets.rs"]
mod assets;

// Server-sent events: `sse::EventStream` and `sse::Broadcaster`.
#[path = "tokio_tcp/sse.rs"]
mod sse;
// WebSocket sessions: `Responder::accept_websocket`, over the same sockets.
#[path = "tokio_tcp/websocket.rs"]
mod websocket;
// The seed's demo (`examples/demo/app.rs`), over the same sockets.
#[path = "tokio_tcp/demo.rs"]
mod demo;
// Responses written in place into a socket-like transmit ring, and what
// the server copies: `serve_connection_in_place`.
#[path = "tokio_tcp/in_place.rs"]
mod in_place;

use ringstream_testkit::alloc;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use embedded_io_adapters::tokio_1::FromTokio;
use http_app::{fnv1a, line, payload_byte, Demo, FNV_START, LINES, LINE_LEN, PAYLOAD_LEN};
use ringstream_core::{Error as CoreError, Limits};
use ringstream_embedded::http::{serve_connection, App, Buffers, Error, HttpHandler};
use ringstream_embedded::{Config, Handler};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

// ---------------------------------------------------------------------------
// Counting allocator: counts allocator calls on this thread while a server
// future is being polled.
// ---------------------------------------------------------------------------

#[global_allocator]
static ALLOCATOR: alloc::Counting = alloc::Counting;

/// A future whose polls are counted.
struct Counted<F>(Pin<Box<F>>);

impl<F: Future> Future for Counted<F> {
    type Output = F::Output;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let _measured = alloc::Measured::new();
        self.0.as_mut().poll(cx)
    }
}

// ---------------------------------------------------------------------------
// The server and its clients
// ---------------------------------------------------------------------------

/// Bytes of request body the test server accepts.
const MAX_BODY: u64 = 1 << 20;

const CONFIG: Config = Config {
    limits: Limits {
        max_body_len: MAX_BODY,
        ..Limits::DEFAULT
    },
    ..Config::DEFAULT
};

/// Serves `app` on every connection `listener` accepts, each in a local
/// task, then closes it the way the pool does.
async fn serve<A: App + 'static>(listener: TcpListener, app: Rc<A>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let app = Rc::clone(&app);
        tokio::task::spawn_local(async move {
            let mut io = FromTokio::new(stream);
            let mut buffers = Buffers::<1024, 512>::new();
            let served = Counted(Box::pin(serve_connection(
                &mut io,
                &*app,
                &mut buffers,
                &CONFIG,
            )));
            // Outside tokio's cooperative budget: a task out of budget has
            // its waker deferred into a list that the runtime grows, an
            // allocation of tokio's own, not the server's.
            let _ = tokio::task::unconstrained(served).await;
            linger_close(io.into_inner()).await;
        });
    }
}

/// FIN, then the client's rest read and dropped until its own FIN, so a
/// reset cannot destroy the last response.
async fn linger_close(mut stream: TcpStream) {
    let _ = stream.shutdown().await;
    let mut sink = [0u8; 1024];
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), async {
        while matches!(stream.read(&mut sink).await, Ok(n) if n > 0) {}
    })
    .await;
}

/// Runs `test` against a fresh server; checks afterwards that the server
/// allocated nothing while serving.
async fn with_server<F, Fut>(test: F)
where
    F: FnOnce(u16, Rc<Demo>) -> Fut,
    Fut: Future<Output = ()>,
{
    with_app(Demo::default(), test).await;
}

/// [`with_server`], serving `app`.
async fn with_app<A, F, Fut>(app: A, test: F)
where
    A: App + 'static,
    F: FnOnce(u16, Rc<A>) -> Fut,
    Fut: Future<Output = ()>,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("local address").port();
    let app = Rc::new(app);
    alloc::reset();
    let local = tokio::task::LocalSet::new();
    local.spawn_local(serve(listener, Rc::clone(&app)));
    local.run_until(test(port, app)).await;
    assert_eq!(alloc::calls(), 0, "the server allocated while serving");
}

async fn connect(port: u16) -> TcpStream {
    TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect")
}

/// Reads until the server closes; a reset after the response (the server
/// closed with bytes of ours unread) ends the read like a FIN.
async fn read_to_close(stream: &mut TcpStream) -> Vec<u8> {
    let mut response = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return response,
            Ok(n) => response.extend_from_slice(&buf[..n]),
        }
    }
}

/// Sends `request` on a new connection and reads until the server closes.
async fn request(port: u16, request: &[u8]) -> Vec<u8> {
    let mut stream = connect(port).await;
    stream.write_all(request).await.expect("send the request");
    read_to_close(&mut stream).await
}

/// Reads exactly `n` bytes.
async fn read_exact(stream: &mut TcpStream, n: usize) -> Vec<u8> {
    let mut buf = vec![0; n];
    stream.read_exact(&mut buf).await.expect("read");
    buf
}

/// A chunked body decoded (test-side), with the size of each chunk.
fn dechunk(mut wire: &[u8]) -> (Vec<u8>, Vec<usize>) {
    let mut body = Vec::new();
    let mut sizes = Vec::new();
    loop {
        let eol = wire
            .windows(2)
            .position(|w| w == b"\r\n")
            .expect("size line");
        let size = usize::from_str_radix(std::str::from_utf8(&wire[..eol]).unwrap(), 16).unwrap();
        wire = &wire[eol + 2..];
        if size == 0 {
            assert_eq!(wire, b"\r\n", "the end of a chunked body");
            return (body, sizes);
        }
        body.extend_from_slice(&wire[..size]);
        sizes.push(size);
        assert_eq!(&wire[size..size + 2], b"\r\n");
        wire = &wire[size + 2..];
    }
}

/// Splits a response into its head (with the blank line) and the rest.
fn split_head(response: &[u8]) -> (&str, &[u8]) {
    let end = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a complete head")
        + 4;
    (
        std::str::from_utf8(&response[..end]).unwrap(),
        &response[end..],
    )
}

const HELLO: &[u8] =
    b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 5\r\n\r\nhello";
const HELLO_CLOSE: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhello";

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

/// RFC 9112 §3.2.2: a server must accept a target in absolute form; it
/// is routed by its path, as the core's `RequestHead::path_and_query`
/// gives it.
#[tokio::test]
async fn absolute_form_targets_are_routed_by_their_path() {
    with_server(|port, _| async move {
        for target in [
            "http://device/hello",
            "HTTP://device:80/hello?x=1",
            "https://elsewhere/hello",
        ] {
            let wire =
                format!("GET {target} HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n");
            assert_eq!(
                request(port, wire.as_bytes()).await,
                HELLO_CLOSE,
                "{target}"
            );
        }
        let wire = b"GET http://device HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n";
        let response = request(port, wire).await;
        assert!(
            response.starts_with(b"HTTP/1.1 404 "),
            "the root is not a route here"
        );
    })
    .await;
}

/// RFC 9112 §9.3: an HTTP/1.1 connection persists; the second request on
/// it is served, and `Connection: close` ends it after its response.
#[tokio::test]
async fn keep_alive_serves_a_second_request_on_the_same_connection() {
    with_server(|port, _| async move {
        let mut stream = connect(port).await;
        stream
            .write_all(b"GET /hello HTTP/1.1\r\nHost: device\r\n\r\n")
            .await
            .unwrap();
        assert_eq!(read_exact(&mut stream, HELLO.len()).await, HELLO);
        stream
            .write_all(b"GET /hello HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        assert_eq!(read_to_close(&mut stream).await, HELLO_CLOSE);
    })
    .await;
}

/// RFC 9112 §9.3.2: three requests sent in one write are answered in
/// order, the second one's body (an echo) kept apart from the third head.
#[tokio::test]
async fn pipelined_requests_are_answered_in_order() {
    with_server(|port, _| async move {
        let response = request(
            port,
            b"GET /hello HTTP/1.1\r\nHost: device\r\n\r\n\
              POST /echo HTTP/1.1\r\nHost: device\r\nContent-Length: 3\r\n\r\nabc\
              GET /hello HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n",
        )
        .await;
        let mut expected = HELLO.to_vec();
        expected.extend_from_slice(b"HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\nabc");
        expected.extend_from_slice(HELLO_CLOSE);
        assert_eq!(
            String::from_utf8_lossy(&response),
            String::from_utf8_lossy(&expected)
        );
    })
    .await;
}

/// RFC 9110 §9.3.2: `HEAD` gets the head a `GET` would get, with the
/// length the core decides to advertise (the known one; none for a body
/// of unknown length), and no body — the printing formatter never runs.
#[tokio::test]
async fn head_sends_no_body() {
    with_server(|port, app| async move {
        let mut stream = connect(port).await;
        stream
            .write_all(b"HEAD /hello HTTP/1.1\r\nHost: device\r\n\r\n")
            .await
            .unwrap();
        let head = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 5\r\n\r\n";
        assert_eq!(read_exact(&mut stream, head.len()).await, head);
        stream
            .write_all(b"HEAD /lines HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        assert_eq!(
            read_to_close(&mut stream).await,
            b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n"
        );
        assert_eq!(app.formatter_runs.get(), 0);
    })
    .await;
}

/// A `Content-Length` body, read in pieces and written back as it is read.
#[tokio::test]
async fn content_length_post_is_echoed() {
    with_server(|port, _| async move {
        let body: Vec<u8> = (0..3000).map(payload_byte).collect();
        let mut wire =
            format!("POST /echo HTTP/1.1\r\nHost: device\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len())
                .into_bytes();
        wire.extend_from_slice(&body);
        let response = request(port, &wire).await;
        let (head, echoed) = split_head(&response);
        assert_eq!(
            head,
            "HTTP/1.1 200 OK\r\ncontent-length: 3000\r\nconnection: close\r\n\r\n"
        );
        assert_eq!(echoed, body);
    })
    .await;
}

/// The firmware-upload case: a chunked body of 100 KiB streams through the
/// 1 KiB receive buffer; the handler counts and hashes it piece by piece.
#[tokio::test]
async fn chunked_upload_of_100_kib_streams_through_a_1_kib_buffer() {
    with_server(|port, _| async move {
        let body: Vec<u8> = (0..100 * 1024).map(|i| payload_byte(i * 7)).collect();
        let mut wire = b"POST /count HTTP/1.1\r\nHost: device\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".to_vec();
        // Chunks of 1..3000 bytes, some larger than the buffer.
        let mut at = 0;
        let mut size = 1;
        while at < body.len() {
            let n = size.min(body.len() - at);
            wire.extend_from_slice(format!("{n:x}\r\n").as_bytes());
            wire.extend_from_slice(&body[at..at + n]);
            wire.extend_from_slice(b"\r\n");
            at += n;
            size = (size * 7 + 13) % 3000 + 1;
        }
        wire.extend_from_slice(b"0\r\n\r\n");
        let mut stream = connect(port).await;
        let (mut reader, mut writer) = stream.split();
        let (response, ()) = tokio::join!(
            async {
                let mut response = Vec::new();
                let _ = reader.read_to_end(&mut response).await;
                response
            },
            async { writer.write_all(&wire).await.expect("send the upload") }
        );
        let (head, chunked) = split_head(&response);
        assert_eq!(
            head,
            "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
        );
        let (text, _) = dechunk(chunked);
        let expected = format!("{} {:016x}", body.len(), fnv1a(FNV_START, &body));
        assert_eq!(String::from_utf8(text).unwrap(), expected);
    })
    .await;
}

/// RFC 9110 §10.1.1: a client that sends `Expect: 100-continue` waits for
/// the invitation, sent when the handler first reads the body.
#[tokio::test]
async fn expect_100_continue_invites_the_body() {
    with_server(|port, _| async move {
        let mut stream = connect(port).await;
        stream
            .write_all(b"POST /echo HTTP/1.1\r\nHost: device\r\nContent-Length: 5\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let invitation = b"HTTP/1.1 100 Continue\r\n\r\n";
        assert_eq!(read_exact(&mut stream, invitation.len()).await, invitation);
        stream.write_all(b"hello").await.unwrap();
        assert_eq!(
            read_to_close(&mut stream).await,
            b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhello"
        );
    })
    .await;
}

/// The seed's page: about 40 KB printed with `write!` in 60-byte lines,
/// length unknown, sent chunked while it is printed — chunks no larger
/// than the 512-byte transmit buffer — with every line's formatter run
/// exactly once.
#[tokio::test]
async fn printed_response_is_chunked_and_each_formatter_runs_once() {
    with_server(|port, app| async move {
        let response = request(
            port,
            b"GET /lines HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n",
        )
        .await;
        let (head, chunked) = split_head(&response);
        assert_eq!(
            head,
            "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
        );
        let (body, sizes) = dechunk(chunked);
        let expected: String = (0..LINES).map(line).collect();
        assert_eq!(body.len(), LINES * LINE_LEN);
        assert_eq!(String::from_utf8(body).unwrap(), expected);
        assert!(sizes.len() > 40, "{} chunks", sizes.len());
        assert!(sizes.iter().all(|&s| s <= 512), "{sizes:?}");
        assert_eq!(app.formatter_runs.get(), LINES, "formatter runs");
        println!(
            "/lines: {} bytes in {} chunks, {} formatter runs for {LINES} lines",
            LINES * LINE_LEN,
            sizes.len(),
            app.formatter_runs.get()
        );
    })
    .await;
}

/// A response of known length larger than the transmit buffer.
#[tokio::test]
async fn known_length_payload_streams_through_the_transmit_buffer() {
    with_server(|port, _| async move {
        let response = request(
            port,
            b"GET /payload HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n",
        )
        .await;
        let (head, body) = split_head(&response);
        assert_eq!(
            head,
            format!(
                "HTTP/1.1 200 OK\r\ncontent-length: {PAYLOAD_LEN}\r\nconnection: close\r\n\r\n"
            )
        );
        assert_eq!(body.len(), PAYLOAD_LEN);
        assert!(body.iter().enumerate().all(|(i, &b)| b == payload_byte(i)));
    })
    .await;
}

/// Every framing rejection of `ringstream serve`'s wire tests
/// (`crates/ringstream-cli/tests/server_wire.rs`,
/// `framing_errors_get_4xx_and_close`), sent to the embedded server: the
/// same status — the core's `Error::status()` for the error its parser or
/// decoder finds, checked against the number `ringstream serve` answers —
/// with `connection: close`, then the connection is closed and the
/// smuggled request that follows is never answered. Two cases of the body
/// limit are added (413).
#[tokio::test]
async fn framing_attacks_get_the_statuses_of_ringstream_serve() {
    let smuggled = "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n";
    let long_target = format!("GET /{} HTTP/1.1\r\nHost: t\r\n\r\n", "a".repeat(9000));
    // Over `ringstream serve`'s 16 KiB head limit too, so both servers
    // refuse it for the same reason.
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
    // `/count` reads its body, as the upload route of `ringstream serve`'s
    // test app does.
    let cases: Vec<(String, CoreError, u16)> = vec![
        // RFC 9112 §6.1, §6.3: CL + TE is rejected (smuggling).
        (format!("POST /count HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n{smuggled}"), CoreError::ContentLengthWithTransferEncoding, 400),
        // RFC 9112 §6.1: chunked applied twice.
        (format!("POST /count HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n{smuggled}"), CoreError::InvalidTransferEncoding, 400),
        // RFC 9112 §6.1: unknown coding.
        (format!("POST /count HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n{smuggled}"), CoreError::UnknownTransferCoding, 501),
        // RFC 9112 §6.1: TE on HTTP/1.0.
        (format!("POST /count HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n{smuggled}"), CoreError::TransferEncodingOnHttp10, 400),
        // RFC 9110 §8.6: Content-Length is 1*DIGIT, one value.
        (format!("POST /count HTTP/1.1\r\nHost: t\r\nContent-Length: +5\r\n\r\nhello{smuggled}"), CoreError::InvalidContentLength, 400),
        (format!("POST /count HTTP/1.1\r\nHost: t\r\nContent-Length: 5, 6\r\n\r\nhello{smuggled}"), CoreError::InvalidContentLength, 400),
        (format!("POST /count HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello{smuggled}"), CoreError::InvalidContentLength, 400),
        (format!("POST /count HTTP/1.1\r\nHost: t\r\nContent-Length: 99999999999999999999999\r\n\r\n{smuggled}"), CoreError::InvalidContentLength, 400),
        // RFC 9112 §5.1: whitespace before the colon.
        (format!("POST /count HTTP/1.1\r\nHost: t\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n{smuggled}"), CoreError::WhitespaceBeforeColon, 400),
        // RFC 9112 §3.2: Host missing / repeated.
        (format!("GET / HTTP/1.1\r\n\r\n{smuggled}"), CoreError::MissingHost, 400),
        (format!("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n{smuggled}"), CoreError::DuplicateHost, 400),
        // RFC 9112 §5.2: obs-fold.
        (format!("GET / HTTP/1.1\r\nHost: t\r\nX-A: 1\r\n  folded\r\n\r\n{smuggled}"), CoreError::ObsFold, 400),
        // RFC 9112 §2.3: unsupported version.
        (format!("GET / HTTP/2.0\r\nHost: t\r\n\r\n{smuggled}"), CoreError::UnsupportedVersion, 505),
        // Limits: target length → 414, head size and field count → 431.
        (long_target, CoreError::TargetTooLong, 414),
        (long_field, CoreError::HeadTooLarge, 431),
        // (Here the fields outgrow the 1 KiB buffer first: 431 either way.)
        (many_fields, CoreError::TooManyFields, 431),
        // RFC 9112 §3: a method longer than any implemented.
        (long_method, CoreError::MethodTooLong, 501),
        // RFC 9112 §7.1: a bad chunk size in the body.
        (format!("POST /count HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n+5\r\nhello\r\n0\r\n\r\n{smuggled}"), CoreError::InvalidChunkSize, 400),
        (format!("POST /count HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n{smuggled}"), CoreError::InvalidChunkSize, 400),
        // RFC 9112 §7.1: chunk data not followed by CRLF.
        (format!("POST /count HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n{smuggled}"), CoreError::MissingChunkCrlf, 400),
        // RFC 9112 §2.2: bare LF in chunked framing.
        (format!("POST /count HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n{smuggled}"), CoreError::BareLf, 400),
        // RFC 9110 §15.5.14: a body over `Limits::max_body_len`, announced
        // or in a chunk.
        (format!("POST /count HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\r\n", MAX_BODY + 1), CoreError::BodyTooLarge, 413),
        (format!("POST /count HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n", MAX_BODY + 1), CoreError::BodyTooLarge, 413),
    ];
    with_server(|port, _| async move {
        for (wire, error, serve_status) in cases {
            assert_eq!(error.status(), serve_status, "{error:?}");
            let shown: String = wire.chars().take(80).collect();
            let response = tokio::time::timeout(
                std::time::Duration::from_secs(10),
                request(port, wire.as_bytes()),
            )
            .await
            .unwrap_or_else(|_| panic!("{shown:?}: no answer"));
            let text = String::from_utf8_lossy(&response);
            assert!(
                text.starts_with(&format!("HTTP/1.1 {serve_status} ")),
                "{shown:?}: expected {serve_status} ({error:?}), got {text:?}"
            );
            assert!(
                text.contains("\r\nconnection: close\r\n"),
                "{shown:?}: {text}"
            );
            assert_eq!(
                text.matches("HTTP/1.1 ").count(),
                1,
                "a smuggled request was answered: {text}"
            );
        }
    })
    .await;
}

/// RFC 9112 §3: bytes that cannot start a request line (a TLS ClientHello
/// sent to the plain-text port, NUL, 0xFF) get 400 as soon as they arrive,
/// as from `ringstream serve` (here time never moves, so a server waiting
/// for its head deadline would never answer).
#[tokio::test]
async fn bytes_that_cannot_start_a_request_get_400_at_once() {
    with_server(|port, _| async move {
        let hello: &[u8] = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03";
        for wire in [hello, b"\x00", b"\xff\xff", b"\r\n\x16"] {
            let response =
                tokio::time::timeout(std::time::Duration::from_secs(10), request(port, wire))
                    .await
                    .unwrap_or_else(|_| panic!("{wire:?}: no answer"));
            assert!(
                response.starts_with(b"HTTP/1.1 400 "),
                "{wire:?} got {:?}",
                String::from_utf8_lossy(&response)
            );
        }
    })
    .await;
}

/// An upload cut short (the client closes before its body ends) is never
/// answered 2xx, and an echo that had started does not look complete.
#[tokio::test]
async fn truncated_upload_is_never_answered_2xx() {
    with_server(|port, _| async move {
        for wire in [
            &b"POST /count HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\nonly a little"[..],
            &b"POST /count HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n100\r\nshort"[..],
            &b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\nonly a little"[..],
            &b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n100\r\nshort"[..],
        ] {
            let mut stream = connect(port).await;
            stream.write_all(wire).await.unwrap();
            stream.shutdown().await.unwrap();
            let response = read_to_close(&mut stream).await;
            let text = String::from_utf8_lossy(&response);
            if text.starts_with("HTTP/1.1 200 ") {
                let (head, body) = split_head(&response);
                if head.contains("content-length: 1000") {
                    assert!(body.len() < 1000, "{text}");
                } else {
                    assert!(!text.ends_with("0\r\n\r\n"), "looked complete: {text}");
                }
            } else {
                assert!(!text.starts_with("HTTP/1.1 2"), "{text}");
            }
        }
    })
    .await;
}

/// The RAM of a connection: the `serve_connection` future for the test app
/// over a tokio connection, beside its buffers, and the pool handler's
/// future, which holds the buffers.
#[tokio::test]
async fn future_sizes() {
    let app = Demo::default();
    let stream = connect_pair().await;
    let mut io = FromTokio::new(stream);
    let mut buffers = Buffers::<1024, 512>::new();
    let future = serve_connection(&mut io, &app, &mut buffers, &CONFIG);
    let serve = std::mem::size_of_val(&future);
    drop(future);
    let handler: HttpHandler<Demo, 1024, 512> = HttpHandler::new(Demo::default(), CONFIG);
    let whole = std::mem::size_of_val(&handler.serve(&mut io));
    println!(
        "serve_connection future: {serve} bytes, beside Buffers<1024, 512>: {} bytes",
        std::mem::size_of::<Buffers<1024, 512>>()
    );
    println!("HttpHandler<_, 1024, 512>::serve future (buffers inside): {whole} bytes");
    // A guard against growth: x86_64 debug figures, larger than a
    // microcontroller's (the README has thumbv7em's, where the whole slot
    // with these buffers is 3,240 bytes).
    assert!(whole <= 6 * 1024, "a connection slot of {whole} bytes");
}

/// A connected `TcpStream` (its peer is dropped: only its type matters).
async fn connect_pair() -> TcpStream {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (client, _) = tokio::join!(connect(port), listener.accept());
    client
}

// ---------------------------------------------------------------------------
// Split points: a scripted connection
// ---------------------------------------------------------------------------

/// An in-memory connection: reads hand out `input` in the pieces `cuts`
/// asks for, writes are kept.
struct Scripted<'a> {
    input: &'a [u8],
    /// Sizes of the successive reads (at most); after them, whole reads.
    cuts: std::collections::VecDeque<usize>,
    output: Vec<u8>,
    /// The sizes of the writes.
    writes: Vec<usize>,
}

impl embedded_io_async::ErrorType for Scripted<'_> {
    type Error = Infallible;
}

impl embedded_io_async::Read for Scripted<'_> {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        let cut = self.cuts.pop_front().unwrap_or(usize::MAX);
        let n = buf.len().min(cut).min(self.input.len());
        buf[..n].copy_from_slice(&self.input[..n]);
        self.input = &self.input[n..];
        Ok(n)
    }
}

impl embedded_io_async::Write for Scripted<'_> {
    async fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        self.output.extend_from_slice(buf);
        self.writes.push(buf.len());
        Ok(buf.len())
    }

    async fn flush(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// Serves `input` cut into reads of `cuts`: what was written, and how
/// the connection ended.
fn serve_scripted(
    input: &[u8],
    cuts: impl IntoIterator<Item = usize>,
) -> (Vec<u8>, Result<(), Error<Infallible>>) {
    let (output, served, _) = serve_scripted_writes(input, cuts);
    (output, served)
}

/// [`serve_scripted`], with the sizes of the server's writes.
fn serve_scripted_writes(
    input: &[u8],
    cuts: impl IntoIterator<Item = usize>,
) -> (Vec<u8>, Result<(), Error<Infallible>>, Vec<usize>) {
    serve_scripted_app(&Demo::default(), input, cuts)
}

/// [`serve_scripted_writes`], serving `app`.
fn serve_scripted_app(
    app: &impl App,
    input: &[u8],
    cuts: impl IntoIterator<Item = usize>,
) -> (Vec<u8>, Result<(), Error<Infallible>>, Vec<usize>) {
    let mut io = Scripted {
        input,
        cuts: cuts.into_iter().collect(),
        output: Vec::new(),
        writes: Vec::new(),
    };
    let mut buffers = Buffers::<1024, 512>::new();
    let served = {
        // The connection never waits: poll the server to its end.
        let mut serve = std::pin::pin!(serve_connection(&mut io, app, &mut buffers, &CONFIG));
        let mut cx = Context::from_waker(std::task::Waker::noop());
        loop {
            if let Poll::Ready(served) = serve.as_mut().poll(&mut cx) {
                break served;
            }
        }
    };
    (io.output, served, io.writes)
}

/// Serves `input` cut into reads of `cuts`, to its end without an error,
/// and returns what was written.
fn serve_scripted_ok(input: &[u8], cuts: impl IntoIterator<Item = usize>) -> Vec<u8> {
    let (output, served) = serve_scripted(input, cuts);
    served.expect("served to the end");
    output
}

/// RFC 9112 §2.2 and §7.1: where the bytes of a request are cut between
/// reads changes nothing — a pipelined chunked echo with an extension and
/// a trailer, a `Content-Length` upload, a `HEAD` and an HTTP/1.0 request
/// (which closes), fed whole, one byte at a time and split at every
/// offset, give the same bytes back.
#[test]
fn any_split_of_the_requests_gives_the_same_responses() {
    let wire: &[u8] = b"POST /echo HTTP/1.1\r\nHost: d\r\nTransfer-Encoding: chunked\r\n\r\n\
        5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nx-t: 1\r\n\r\n\
        POST /count HTTP/1.1\r\nHost: d\r\nContent-Length: 3\r\n\r\nabc\
        HEAD /lines HTTP/1.1\r\nHost: d\r\n\r\n\
        GET /hello HTTP/1.0\r\n\r\n";
    let count = format!("3 {:016x}", fnv1a(FNV_START, b"abc"));
    let expected = [
        "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nb\r\nhello world\r\n0\r\n\r\n",
        &format!(
            "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{count}\r\n0\r\n\r\n",
            count.len()
        ),
        "HTTP/1.1 200 OK\r\n\r\n",
        "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhello",
    ]
    .concat();
    let whole = serve_scripted_ok(wire, []);
    assert_eq!(String::from_utf8_lossy(&whole), expected);
    let byte_by_byte = serve_scripted_ok(wire, std::iter::repeat_n(1, wire.len()));
    assert_eq!(
        String::from_utf8_lossy(&byte_by_byte),
        expected,
        "one byte at a time"
    );
    for at in 1..wire.len() {
        let split = serve_scripted_ok(wire, [at]);
        assert_eq!(String::from_utf8_lossy(&split), expected, "split at {at}");
    }
}

/// A response head larger than half the transmit buffer goes out before
/// the printed body; one larger than the whole buffer cannot be written,
/// and the server answers 500 instead (the core's `OutOfSpace`).
#[test]
fn wide_response_heads() {
    let wide = serve_scripted_ok(
        b"GET /wide HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n",
        [],
    );
    let (head, chunked) = split_head(&wide);
    assert_eq!(
        head,
        format!(
            "HTTP/1.1 200 OK\r\nx-wide: {}\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
            "w".repeat(300)
        )
    );
    let (body, _) = dechunk(chunked);
    let expected: String = (0..20).map(|i| format!("wide {i}\n")).collect();
    assert_eq!(String::from_utf8(body).unwrap(), expected);

    let (too_wide, served) = serve_scripted(b"GET /too-wide HTTP/1.1\r\nHost: d\r\n\r\n", []);
    assert_eq!(served, Err(Error::Response(CoreError::OutOfSpace)));
    let (head, _) = split_head(&too_wide);
    assert!(
        head.starts_with(&format!("HTTP/1.1 {} ", CoreError::OutOfSpace.status())),
        "{head:?}"
    );
    assert!(head.contains("\r\nconnection: close\r\n"), "{head:?}");
}

/// A piece of body as large as the transmit buffer is written from where
/// it lies (one write of its own, never copied through the 512-byte
/// buffer), with the core's framing around it: known length, and chunked
/// between printed lines.
#[test]
fn large_pieces_are_written_from_where_they_lie() {
    use http_app::FLASH;
    let (flash, served, writes) = serve_scripted_writes(
        b"GET /flash HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n",
        [],
    );
    served.unwrap();
    let (head, body) = split_head(&flash);
    assert_eq!(
        head,
        "HTTP/1.1 200 OK\r\ncontent-length: 8192\r\nconnection: close\r\n\r\n"
    );
    assert_eq!(body, FLASH);
    assert_eq!(writes, [head.len(), FLASH.len()]);

    let (chunked, served, writes) = serve_scripted_writes(
        b"GET /flash-chunked HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n",
        [],
    );
    served.unwrap();
    let (head, wire) = split_head(&chunked);
    assert_eq!(
        head,
        "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
    );
    let (body, sizes) = dechunk(wire);
    let mut expected = b"before\n".to_vec();
    expected.extend_from_slice(&FLASH);
    expected.extend_from_slice(b"after\n");
    assert_eq!(body, expected);
    assert_eq!(sizes, [7, FLASH.len(), 6]);
    assert!(writes.contains(&FLASH.len()), "{writes:?}");
}

/// One `write!` is given the room the transmit buffer has left (at least
/// half of it): a 500-byte line in a 512-byte buffer is `Error::Format`,
/// and the response is cut off rather than formatted a second time
/// (nothing of it looks complete).
#[test]
fn a_write_over_half_the_buffer_ends_the_response() {
    let (output, served) = serve_scripted(b"GET /long-line HTTP/1.1\r\nHost: d\r\n\r\n", []);
    assert_eq!(served, Err(Error::Format));
    assert!(!output.ends_with(b"0\r\n\r\n"), "{output:?}");
}

/// RFC 9112 §9.3 with a body the handler never reads, as in
/// `ringstream serve`'s wire tests: a rest within the drain limit is
/// drained and the connection serves the next request (HTTP/1.1, chunked,
/// and HTTP/1.0 kept alive); a rest over it closes the connection, said in
/// the head; a client waiting for `100 Continue` is never invited and the
/// connection closes.
#[test]
fn unread_bodies_are_drained_or_close_the_connection() {
    let not_found = "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n";
    let not_found_close =
        "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
    let hello_close = String::from_utf8(HELLO_CLOSE.to_vec()).unwrap();
    let next = "GET /hello HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";

    let mut wire = b"POST /nope HTTP/1.1\r\nHost: t\r\nContent-Length: 500\r\n\r\n".to_vec();
    wire.extend_from_slice(&[b'x'; 500]);
    wire.extend_from_slice(next.as_bytes());
    let output = serve_scripted_ok(&wire, []);
    assert_eq!(
        String::from_utf8_lossy(&output),
        [not_found, &hello_close].concat()
    );

    let wire = format!(
        "POST /nope HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n\
         300\r\n{}\r\n0\r\n\r\n{next}",
        "y".repeat(0x300)
    );
    let output = serve_scripted_ok(wire.as_bytes(), []);
    assert_eq!(
        String::from_utf8_lossy(&output),
        [not_found, &hello_close].concat()
    );

    let wire = "POST /nope HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 4\r\n\r\nabcd\
                GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n";
    let output = serve_scripted_ok(wire.as_bytes(), []);
    assert_eq!(
        String::from_utf8_lossy(&output),
        "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: keep-alive\r\n\r\n\
         HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 5\r\nconnection: keep-alive\r\n\r\nhello"
    );

    // Over the 16 KiB drain limit: closed, the request behind never read.
    let mut wire = b"POST /nope HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n".to_vec();
    wire.extend_from_slice(&vec![b'x'; 100_000]);
    wire.extend_from_slice(next.as_bytes());
    let output = serve_scripted_ok(&wire, []);
    assert_eq!(String::from_utf8_lossy(&output), not_found_close);

    // Expect: 100-continue, read by an echo: invited once, before the
    // head, and the connection carries the next request.
    let wire = format!(
        "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\nhello{next}"
    );
    let output = serve_scripted_ok(wire.as_bytes(), []);
    assert_eq!(
        String::from_utf8_lossy(&output),
        [
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello",
            &hello_close
        ]
        .concat()
    );

    // Expect: 100-continue, never read: no invitation, and closed.
    let wire = format!(
        "POST /nope HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n{next}"
    );
    let output = serve_scripted_ok(wire.as_bytes(), []);
    assert_eq!(String::from_utf8_lossy(&output), not_found_close);
}
