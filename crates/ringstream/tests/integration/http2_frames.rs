//! HTTP/2 bad input, frame by frame from a raw client: malformed request
//! heads, a body that disagrees with its `content-length`, an HPACK bomb,
//! and the floods (rapid reset, CONTINUATION, empty DATA, PING,
//! SETTINGS). Each ends in the stream or connection error RFC 9113 names
//! (or in bounded back-pressure), never a hang, and other clients keep
//! being served meanwhile.
#![cfg(feature = "http2")]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use crate::common::{h2_frame, hpack_int, literal_block};
use ringstream::ringstream_core::h1::HTTP2_PREFACE;
use ringstream::server::{self, service_fn, Config};
use ringstream::Incoming;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const DATA: u8 = 0;
const HEADERS: u8 = 1;
const RST_STREAM: u8 = 3;
const SETTINGS: u8 = 4;
const PING: u8 = 6;
const GOAWAY: u8 = 7;
const CONTINUATION: u8 = 9;

const END_STREAM: u8 = 0x1;
const ACK: u8 = 0x1;
const END_HEADERS: u8 = 0x4;

const PROTOCOL_ERROR: u32 = 0x1;
const ENHANCE_YOUR_CALM: u32 = 0xb;

/// How long a test waits for the server's answer.
const WAIT: Duration = Duration::from_secs(5);

/// `/slow` answers after a second; `/echo` reads its body whole (and
/// answers 400 when the read fails); anything else answers "ok".
async fn start(config: Config) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = service_fn(|mut req: http::Request<Incoming>| async move {
        match req.uri().path() {
            "/slow" => tokio::time::sleep(Duration::from_secs(1)).await,
            "/echo" => {
                if let Ok(body) = req.body_mut().read_all().await {
                    return Ok::<_, Infallible>(http::Response::new(
                        String::from_utf8_lossy(&body).into_owned(),
                    ));
                }
                let mut refused = http::Response::new(String::new());
                *refused.status_mut() = http::StatusCode::BAD_REQUEST;
                return Ok(refused);
            }
            _ => {}
        }
        Ok::<_, Infallible>(http::Response::new(String::from("ok")))
    });
    tokio::spawn(server::serve(listener, app).with_config(config));
    addr
}

/// A frame read from the server.
#[derive(Debug)]
struct Frame {
    kind: u8,
    flags: u8,
    stream: u32,
    payload: Vec<u8>,
}

impl Frame {
    /// The error code of a RST_STREAM or GOAWAY frame.
    fn error_code(&self) -> u32 {
        let at = if self.kind == GOAWAY { 4 } else { 0 };
        u32::from_be_bytes(self.payload[at..at + 4].try_into().unwrap())
    }
}

/// An HTTP/2 client that writes frames by hand.
struct Raw {
    tcp: TcpStream,
}

impl Raw {
    /// Connected, the preface and an empty SETTINGS sent.
    async fn connect(addr: SocketAddr) -> Raw {
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        tcp.set_nodelay(true).unwrap();
        tcp.write_all(HTTP2_PREFACE).await.unwrap();
        let mut raw = Raw { tcp };
        raw.send(SETTINGS, 0, 0, &[]).await;
        raw
    }

    /// Writes a frame; a connection the server closed is found out by the
    /// next read.
    async fn send(&mut self, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
        let frame = h2_frame(kind, flags, stream, payload);
        let _ = self.tcp.write_all(&frame).await;
    }

    /// The next frame, `None` once the server closed (or reset) the
    /// connection.
    async fn next(&mut self) -> Option<Frame> {
        let read = async {
            let mut head = [0u8; 9];
            self.tcp.read_exact(&mut head).await.ok()?;
            let len =
                (usize::from(head[0]) << 16) | (usize::from(head[1]) << 8) | usize::from(head[2]);
            let mut payload = vec![0u8; len];
            self.tcp.read_exact(&mut payload).await.ok()?;
            let stream = u32::from_be_bytes(head[5..9].try_into().unwrap()) & 0x7fff_ffff;
            Some(Frame {
                kind: head[3],
                flags: head[4],
                stream,
                payload,
            })
        };
        tokio::time::timeout(WAIT, read)
            .await
            .expect("the server answered in time")
    }

    /// Reads until a frame `wanted` accepts (returned), or the end of the
    /// connection (`None`). SETTINGS are acknowledged on the way.
    async fn until(&mut self, wanted: impl Fn(&Frame) -> bool) -> Option<Frame> {
        loop {
            let frame = self.next().await?;
            if frame.kind == SETTINGS && frame.flags & ACK == 0 {
                self.send(SETTINGS, ACK, 0, &[]).await;
            }
            if wanted(&frame) {
                return Some(frame);
            }
        }
    }

    /// The server's GOAWAY error code; `None` when it closed without one.
    async fn goaway(&mut self) -> Option<u32> {
        self.until(|f| f.kind == GOAWAY)
            .await
            .map(|f| f.error_code())
    }

    /// What the server sent first for `stream`: its response HEADERS or
    /// a RST_STREAM.
    async fn answer(&mut self, stream: u32) -> Frame {
        self.until(|f| f.stream == stream && (f.kind == HEADERS || f.kind == RST_STREAM))
            .await
            .unwrap_or_else(|| panic!("the connection closed before stream {stream} was answered"))
    }

    /// A GET of `path` on `stream`, whole.
    async fn get(&mut self, stream: u32, path: &str) {
        let block = literal_block(&[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", path),
            (":authority", "t"),
        ]);
        self.send(HEADERS, END_HEADERS | END_STREAM, stream, &block)
            .await;
    }
}

/// The first byte of a response head that says `:status 200` (index 8
/// of HPACK's static table).
const STATUS_200: u8 = 0x88;

/// Another client, on HTTP/1.1, is answered in time.
async fn others_are_served(addr: SocketAddr) {
    let exchange = async {
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        tcp.write_all(b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut answer = String::new();
        tcp.read_to_string(&mut answer).await.unwrap();
        answer
    };
    let answer = tokio::time::timeout(Duration::from_secs(2), exchange)
        .await
        .expect("another client was served in time");
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
}

/// Each malformed head is a PROTOCOL_ERROR: of its stream (RST_STREAM,
/// and the connection serves on), or of the connection (GOAWAY: `h2`
/// treats a field name in upper case so, as RFC 9113 §5.4.1 allows for
/// any stream error).
#[tokio::test]
async fn a_malformed_request_head_is_a_protocol_error() {
    let addr = start(Config::default()).await;
    let malformed: [&[(&str, &str)]; 5] = [
        // No `:path`.
        &[(":method", "GET"), (":scheme", "http"), (":authority", "t")],
        // A field name in upper case.
        &[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            ("X-Upper", "1"),
        ],
        // A connection-specific field.
        &[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            ("connection", "keep-alive"),
        ],
        // `te` other than `trailers`.
        &[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            ("te", "gzip"),
        ],
        // A pseudo-field after a regular one.
        &[
            (":method", "GET"),
            (":scheme", "http"),
            ("accept", "*/*"),
            (":path", "/"),
        ],
    ];
    for (i, fields) in malformed.iter().enumerate() {
        let mut raw = Raw::connect(addr).await;
        raw.send(HEADERS, END_HEADERS | END_STREAM, 1, &literal_block(fields))
            .await;
        let answer = raw
            .until(|f| {
                (f.stream == 1 && (f.kind == HEADERS || f.kind == RST_STREAM)) || f.kind == GOAWAY
            })
            .await
            .unwrap_or_else(|| panic!("case {i}: closed without an error code"));
        assert!(
            answer.kind == RST_STREAM || answer.kind == GOAWAY,
            "case {i}: {answer:?}"
        );
        assert_eq!(answer.error_code(), PROTOCOL_ERROR, "case {i}");
        if answer.kind == RST_STREAM {
            raw.get(3, "/").await;
            let answer = raw.answer(3).await;
            assert_eq!(answer.kind, HEADERS, "case {i}");
            assert_eq!(answer.payload[0], STATUS_200, "case {i}");
        }
    }
    others_are_served(addr).await;
}

#[tokio::test]
async fn a_body_shorter_than_its_content_length_never_reaches_the_service_whole() {
    let addr = start(Config::default()).await;
    let mut raw = Raw::connect(addr).await;
    let block = literal_block(&[
        (":method", "POST"),
        (":scheme", "http"),
        (":path", "/echo"),
        (":authority", "t"),
        ("content-length", "10"),
    ]);
    raw.send(HEADERS, END_HEADERS, 1, &block).await;
    raw.send(DATA, END_STREAM, 1, b"12345").await;
    let answer = raw.answer(1).await;
    assert_ne!(
        answer.payload.first(),
        Some(&STATUS_200),
        "a short body was echoed: {answer:?}"
    );
    if answer.kind == RST_STREAM {
        assert_eq!(answer.error_code(), PROTOCOL_ERROR);
    }
    others_are_served(addr).await;
}

#[tokio::test]
async fn an_hpack_bomb_is_refused_within_the_header_limit() {
    let addr = start(Config::default()).await;
    let mut raw = Raw::connect(addr).await;
    // A 4 KiB field put in the dynamic table once, then named 1,000 times
    // by its index (62): 4 MB of fields from 8 KB of block.
    let mut block = literal_block(&[
        (":method", "GET"),
        (":scheme", "http"),
        (":path", "/"),
        (":authority", "t"),
    ]);
    block.push(0x40);
    hpack_int(&mut block, 0, 7, 6);
    block.extend_from_slice(b"x-bomb");
    let value = "b".repeat(4000);
    hpack_int(&mut block, 0, 7, value.len());
    block.extend_from_slice(value.as_bytes());
    block.extend(std::iter::repeat_n(0xbe, 1000));
    raw.send(HEADERS, END_HEADERS | END_STREAM, 1, &block).await;
    // Refused: a response other than 200, a reset, or a GOAWAY.
    let answer = raw
        .until(|f| {
            (f.stream == 1 && (f.kind == HEADERS || f.kind == RST_STREAM)) || f.kind == GOAWAY
        })
        .await;
    if let Some(answer) = answer {
        assert_ne!(answer.payload.first(), Some(&STATUS_200), "{answer:?}");
    }
    others_are_served(addr).await;
}

#[tokio::test]
async fn rapid_reset_ends_in_goaway_enhance_your_calm() {
    let addr = start(Config::default()).await;
    let mut raw = Raw::connect(addr).await;
    // Streams opened, seen by the server (the PING's answer comes after
    // it has read them), then reset while their service works: 50 at a
    // time, faster than the 200 a second allowed.
    let mut stream = 1;
    let mut code = None;
    'batches: for _ in 0..20 {
        let first = stream;
        for _ in 0..50 {
            raw.get(stream, "/slow").await;
            stream += 2;
        }
        raw.send(PING, 0, 0, &[7; 8]).await;
        if raw
            .until(|f| f.kind == PING && f.flags & ACK != 0 || f.kind == GOAWAY)
            .await
            .is_none()
        {
            break;
        }
        for reset in (first..stream).step_by(2) {
            raw.send(RST_STREAM, 0, reset, &8u32.to_be_bytes()).await;
        }
        tokio::task::yield_now().await;
        // A GOAWAY may be waiting already.
        if let Ok(Some(frame)) = tokio::time::timeout(Duration::from_millis(20), raw.next()).await {
            if frame.kind == GOAWAY {
                code = Some(frame.error_code());
                break 'batches;
            }
        }
    }
    let code = match code {
        Some(code) => Some(code),
        None => raw.goaway().await,
    };
    assert_eq!(code, Some(ENHANCE_YOUR_CALM));
    others_are_served(addr).await;
}

#[tokio::test]
async fn a_continuation_flood_is_cut_off() {
    let addr = start(Config::default()).await;
    let mut raw = Raw::connect(addr).await;
    let block = literal_block(&[
        (":method", "GET"),
        (":scheme", "http"),
        (":path", "/"),
        (":authority", "t"),
    ]);
    raw.send(HEADERS, END_STREAM, 1, &block).await;
    // CONTINUATION frames that never end the head: the server stops
    // reading them long before they run out.
    let piece = h2_frame(CONTINUATION, 0, 1, &literal_block(&[("x-flood", "1")]));
    let mut sent = 0;
    for _ in 0..100_000 {
        let written =
            tokio::time::timeout(Duration::from_millis(500), raw.tcp.write_all(&piece)).await;
        match written {
            Ok(Ok(())) => sent += 1,
            _ => break,
        }
    }
    assert!(sent < 100_000, "the server read {sent} CONTINUATION frames");
    // Then a GOAWAY, or a plain close: either way the connection ends.
    let _ = raw.goaway().await;
    others_are_served(addr).await;
}

#[tokio::test]
async fn an_empty_data_flood_ends_in_goaway() {
    let addr = start(Config::default()).await;
    let mut raw = Raw::connect(addr).await;
    let block = literal_block(&[
        (":method", "POST"),
        (":scheme", "http"),
        (":path", "/echo"),
        (":authority", "t"),
    ]);
    raw.send(HEADERS, END_HEADERS, 1, &block).await;
    for _ in 0..1000 {
        let empty = h2_frame(DATA, 0, 1, &[]);
        if raw.tcp.write_all(&empty).await.is_err() {
            break;
        }
    }
    let code = raw.goaway().await;
    assert_eq!(code, Some(ENHANCE_YOUR_CALM));
    others_are_served(addr).await;
}

#[tokio::test]
async fn a_ping_and_settings_flood_is_held_back_and_the_connection_still_serves() {
    let addr = start(Config::default()).await;
    let mut raw = Raw::connect(addr).await;
    // 20,000 PINGs and SETTINGS written without reading a byte of the
    // answers: the server answers as the client reads (one PING answer
    // pending at a time), so what it holds stays bounded.
    let flood = tokio::time::timeout(Duration::from_secs(3), async {
        for i in 0..20_000u32 {
            let (kind, payload) = if i % 2 == 0 {
                (PING, vec![1; 8])
            } else {
                (SETTINGS, Vec::new())
            };
            raw.send(kind, 0, 0, &payload).await;
        }
    })
    .await;
    others_are_served(addr).await;
    if flood.is_ok() {
        // All written: the connection still answers a request (or has
        // said GOAWAY).
        raw.get(1, "/").await;
        let answer = raw
            .until(|f| (f.stream == 1 && f.kind == HEADERS) || f.kind == GOAWAY)
            .await;
        if let Some(answer) = answer.filter(|f| f.kind == HEADERS) {
            assert_eq!(answer.payload[0], STATUS_200);
        }
    }
}
