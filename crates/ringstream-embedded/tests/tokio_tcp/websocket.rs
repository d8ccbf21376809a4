//! WebSocket (RFC 6455) over tokio sockets, with frames written by hand
//! so a reader sees exactly what crosses the socket: the handshake and
//! its refusal (426 with content-type), echo of text and binary, a
//! fragmented message with a Ping between its fragments, a message larger
//! than the receive buffer streamed through it, Ping → Pong, the client's
//! Close echoed with its code and reason, 1002 for an unmasked client
//! frame, 1007 for invalid UTF-8, and a push of messages the client never
//! asked for. Each test runs under the counting allocator of
//! `tokio_tcp.rs`: a session allocates nothing.

use ringstream_core::ws::CloseCode;
use ringstream_embedded::embedded_io_async::{Read, Write};
use ringstream_embedded::http::{
    serve_connection, App, Buffers, Error, Received, Request, Responder, Sent, Upgrade, WebSocket,
    WebSocketConfig,
};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{connect, connect_pair, read_to_close, request, split_head, with_app, CONFIG};

/// Messages `/ws/push` sends.
const PUSHED: usize = 100;

/// `/ws/echo` echoes every piece as it comes (a whole message as one
/// frame, the pieces of a larger one as fragments); `/ws/push` sends
/// [`PUSHED`] messages unprompted, then closes.
struct Sockets;

impl App for Sockets {
    async fn handle<IO: Read + Write>(
        &self,
        request: &Request<'_>,
        responder: &mut Responder<'_, IO>,
    ) -> Result<Sent, Error<IO::Error>> {
        let push = match request.path() {
            "/ws/echo" => false,
            "/ws/push" => true,
            _ => return responder.send(404, &[], b"").await,
        };
        let mut ws = match responder
            .accept_websocket(request, &WebSocketConfig::DEFAULT)
            .await?
        {
            Upgrade::Accepted(ws) => ws,
            Upgrade::Refused(sent) => return Ok(sent),
        };
        if push {
            for i in 0..PUSHED {
                write!(ws, "message {i}").await?;
            }
            ws.close(CloseCode::NORMAL, "done").await?;
            return Ok(ws.end());
        }
        let mut copy = [0u8; 1024];
        loop {
            let (kind, n, first, last) = match ws.receive().await? {
                Received::Piece(p) => {
                    let n = p.data.len();
                    copy[..n].copy_from_slice(p.data);
                    (p.kind, n, p.first, p.last)
                }
                Received::Closed { .. } => return Ok(ws.end()),
            };
            if first && last {
                ws.send(kind, &copy[..n]).await?;
            } else {
                ws.send_fragment(kind, &copy[..n], first, last).await?;
            }
        }
    }
}

/// The key and accept value of RFC 6455 §1.3.
const KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";
const ACCEPT: &str = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";

const MASK: [u8; 4] = [0x37, 0xfa, 0x21, 0x3d];

/// A client frame: masked with [`MASK`] when `masked`.
pub(super) fn frame(opcode: u8, fin: bool, payload: &[u8], masked: bool) -> Vec<u8> {
    let mut out = vec![opcode | if fin { 0x80 } else { 0 }];
    let bit = if masked { 0x80 } else { 0 };
    match payload.len() {
        n if n < 126 => out.push(bit | n as u8),
        n if n <= 0xffff => {
            out.push(bit | 126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(bit | 127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    if masked {
        out.extend_from_slice(&MASK);
        out.extend(payload.iter().enumerate().map(|(i, b)| b ^ MASK[i % 4]));
    } else {
        out.extend_from_slice(payload);
    }
    out
}

/// Opens a WebSocket on `path`: the `101` with the right accept value.
/// Returns the stream.
pub(super) async fn open(port: u16, path: &str) -> TcpStream {
    let mut stream = connect(port).await;
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: device\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        head.push(stream.read_u8().await.expect("the 101 head"));
    }
    let head = String::from_utf8(head).unwrap();
    assert!(head.starts_with("HTTP/1.1 101 "), "{head}");
    let lower = head.to_ascii_lowercase();
    assert!(lower.contains("\r\nupgrade: websocket\r\n"), "{head}");
    assert!(lower.contains("\r\nconnection: upgrade\r\n"), "{head}");
    assert!(
        head.contains(&format!("\r\nsec-websocket-accept: {ACCEPT}\r\n")),
        "{head}"
    );
    stream
}

/// Reads one server frame: (fin, opcode, payload). Server frames are
/// never masked.
async fn read_frame<R: AsyncRead + Unpin>(stream: &mut R) -> (bool, u8, Vec<u8>) {
    let b0 = stream.read_u8().await.expect("a frame");
    let b1 = stream.read_u8().await.expect("a frame");
    assert_eq!(b1 & 0x80, 0, "a masked server frame");
    let len = match b1 & 0x7f {
        126 => stream.read_u16().await.unwrap() as usize,
        127 => stream.read_u64().await.unwrap() as usize,
        n => n as usize,
    };
    let mut payload = vec![0; len];
    stream.read_exact(&mut payload).await.unwrap();
    (b0 & 0x80 != 0, b0 & 0x0f, payload)
}

/// Reads one data message, its fragments joined: (opcode, payload,
/// frames).
pub(super) async fn read_message<R: AsyncRead + Unpin>(stream: &mut R) -> (u8, Vec<u8>, usize) {
    let (mut fin, opcode, mut payload) = read_frame(stream).await;
    let mut frames = 1;
    while !fin {
        let (f, op, more) = read_frame(stream).await;
        assert_eq!(op, 0, "a continuation");
        payload.extend_from_slice(&more);
        fin = f;
        frames += 1;
    }
    (opcode, payload, frames)
}

/// Expects the server's Close with `code`, then the end of the
/// connection.
async fn expect_close(stream: &mut TcpStream, code: u16) -> Vec<u8> {
    let (fin, opcode, payload) = read_frame(stream).await;
    assert!(fin);
    assert_eq!(opcode, 8, "a close frame, payload {payload:?}");
    assert_eq!(u16::from_be_bytes([payload[0], payload[1]]), code);
    assert!(read_to_close(stream).await.is_empty());
    payload[2..].to_vec()
}

/// RFC 6455 §5.6: text and binary messages come back unchanged; §5.5.1:
/// the client's Close is echoed with its code and reason.
#[tokio::test]
async fn echo_of_text_and_binary_then_close_echoed() {
    with_app(Sockets, |port, _| async move {
        let mut ws = open(port, "/ws/echo").await;
        ws.write_all(&frame(1, true, "héllo".as_bytes(), true))
            .await
            .unwrap();
        assert_eq!(
            read_message(&mut ws).await,
            (1, "héllo".as_bytes().to_vec(), 1)
        );
        ws.write_all(&frame(2, true, &[0, 1, 2, 255], true))
            .await
            .unwrap();
        assert_eq!(read_message(&mut ws).await, (2, vec![0, 1, 2, 255], 1));
        // An empty message.
        ws.write_all(&frame(1, true, b"", true)).await.unwrap();
        assert_eq!(read_message(&mut ws).await, (1, vec![], 1));
        let mut close = 4000u16.to_be_bytes().to_vec();
        close.extend_from_slice(b"custom reason");
        ws.write_all(&frame(8, true, &close, true)).await.unwrap();
        assert_eq!(expect_close(&mut ws, 4000).await, b"custom reason");
    })
    .await;
}

/// Bytes sent right behind the handshake's head are the session's first.
#[tokio::test]
async fn frames_behind_the_handshake_head_are_served() {
    with_app(Sockets, |port, _| async move {
        let mut stream = connect(port).await;
        let mut wire = format!(
            "GET /ws/echo HTTP/1.1\r\nHost: device\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        .into_bytes();
        wire.extend_from_slice(&frame(1, true, b"early", true));
        stream.write_all(&wire).await.unwrap();
        let mut head = Vec::new();
        while !head.ends_with(b"\r\n\r\n") {
            head.push(stream.read_u8().await.unwrap());
        }
        assert!(head.starts_with(b"HTTP/1.1 101 "));
        assert_eq!(read_message(&mut stream).await, (1, b"early".to_vec(), 1));
    })
    .await;
}

/// RFC 6455 §5.4: a fragmented message, with a Ping between its
/// fragments answered at once (§5.5.2), and a code point split between
/// the fragments.
#[tokio::test]
async fn fragmented_message_with_a_ping_between_fragments() {
    with_app(Sockets, |port, _| async move {
        let mut ws = open(port, "/ws/echo").await;
        let text = "Hé".as_bytes(); // 'é' is two bytes: split it.
        ws.write_all(&frame(1, false, &text[..2], true))
            .await
            .unwrap();
        ws.write_all(&frame(9, true, b"between", true))
            .await
            .unwrap();
        ws.write_all(&frame(0, true, &text[2..], true))
            .await
            .unwrap();
        assert_eq!(read_frame(&mut ws).await, (false, 1, text[..2].to_vec()));
        assert_eq!(read_frame(&mut ws).await, (true, 10, b"between".to_vec()));
        assert_eq!(read_frame(&mut ws).await, (true, 0, text[2..].to_vec()));
    })
    .await;
}

/// A message of 64 KiB through a receive buffer of 1 KiB: not refused
/// for its size, handed over in pieces, echoed whole.
#[tokio::test]
async fn message_larger_than_the_receive_buffer_streams_through_it() {
    with_app(Sockets, |port, _| async move {
        let mut ws = open(port, "/ws/echo").await;
        let message: Vec<u8> = (0..64 * 1024).map(|i| (i * 7 % 251) as u8).collect();
        let wire = frame(2, true, &message, true);
        let (mut rx, mut tx) = ws.split();
        let ((opcode, echoed, frames), ()) = tokio::join!(read_message(&mut rx), async {
            tx.write_all(&wire).await.unwrap();
        });
        assert_eq!(opcode, 2);
        assert!(echoed == message, "the echo differs");
        assert!(frames > 64, "{frames} pieces: not streamed through 1 KiB");
    })
    .await;
}

/// RFC 6455 §5.5.2: a Ping is answered with a Pong carrying its payload.
#[tokio::test]
async fn ping_is_answered_with_pong() {
    with_app(Sockets, |port, _| async move {
        let mut ws = open(port, "/ws/echo").await;
        ws.write_all(&frame(9, true, b"are you there", true))
            .await
            .unwrap();
        assert_eq!(
            read_frame(&mut ws).await,
            (true, 10, b"are you there".to_vec())
        );
        ws.write_all(&frame(8, true, &1000u16.to_be_bytes(), true))
            .await
            .unwrap();
        assert_eq!(expect_close(&mut ws, 1000).await, b"");
    })
    .await;
}

/// RFC 6455 §5.1: a client frame must be masked; an unmasked one fails
/// the session with 1002.
#[tokio::test]
async fn unmasked_client_frame_is_closed_1002() {
    with_app(Sockets, |port, _| async move {
        let mut ws = open(port, "/ws/echo").await;
        ws.write_all(&frame(1, true, b"plain", false))
            .await
            .unwrap();
        expect_close(&mut ws, 1002).await;
    })
    .await;
}

/// RFC 6455 §8.1: a text message that is not UTF-8 fails the session
/// with 1007.
#[tokio::test]
async fn invalid_utf8_is_closed_1007() {
    with_app(Sockets, |port, _| async move {
        let mut ws = open(port, "/ws/echo").await;
        ws.write_all(&frame(1, true, b"ok \xff\xfe", true))
            .await
            .unwrap();
        expect_close(&mut ws, 1007).await;
    })
    .await;
}

/// The server pushes messages the client never asked for, each printed
/// with `write!` once into the transmit buffer; they arrive in order,
/// then the server's Close, which the client answers.
#[tokio::test]
async fn pushed_messages_arrive_in_order() {
    with_app(Sockets, |port, _| async move {
        let mut ws = open(port, "/ws/push").await;
        for i in 0..PUSHED {
            let expected = format!("message {i}").into_bytes();
            assert_eq!(read_message(&mut ws).await, (1, expected, 1));
        }
        let (_, opcode, payload) = read_frame(&mut ws).await;
        assert_eq!(opcode, 8);
        assert_eq!(&payload[..], b"\x03\xe8done");
        ws.write_all(&frame(8, true, &payload, true)).await.unwrap();
        assert!(read_to_close(&mut ws).await.is_empty());
    })
    .await;
}

/// RFC 6455 §4.2.2, §4.4: a GET that is not a handshake gets 426 with
/// `Upgrade` and the supported version; a bad key gets 400. Both in plain
/// text.
#[tokio::test]
async fn non_websocket_requests_are_refused_with_the_cores_status() {
    with_app(Sockets, |port, _| async move {
        let response = request(
            port,
            b"GET /ws/echo HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n",
        )
        .await;
        let (head, body) = split_head(&response);
        assert!(head.starts_with("HTTP/1.1 426 "), "{head}");
        assert!(
            head.contains("\r\ncontent-type: text/plain; charset=utf-8"),
            "{head}"
        );
        assert!(head.contains("\r\nupgrade: websocket"), "{head}");
        assert!(head.contains("\r\nsec-websocket-version: 13"), "{head}");
        assert!(!body.is_empty());

        let old = b"GET /ws/echo HTTP/1.1\r\nHost: device\r\nUpgrade: websocket\r\n\
            Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
            Sec-WebSocket-Version: 8\r\nConnection: close\r\n\r\n";
        let response = request(port, old).await;
        let (head, _) = split_head(&response);
        assert!(head.starts_with("HTTP/1.1 426 "), "{head}");

        let bad_key = b"GET /ws/echo HTTP/1.1\r\nHost: device\r\nUpgrade: websocket\r\n\
            Connection: Upgrade\r\nSec-WebSocket-Key: short\r\n\
            Sec-WebSocket-Version: 13\r\nConnection: close\r\n\r\n";
        let response = request(port, bad_key).await;
        let (head, _) = split_head(&response);
        assert!(head.starts_with("HTTP/1.1 400 "), "{head}");
        assert!(
            head.contains("\r\ncontent-type: text/plain; charset=utf-8"),
            "{head}"
        );
    })
    .await;
}

/// RFC 6455 §4.1: a handshake is a `GET` on HTTP/1.1 without a body, as
/// the core's `ws::check_request` says — a `POST` or `HEAD` gets 405 with
/// `Allow: GET`, HTTP/1.0 gets 400, and a handshake with a body (whose
/// bytes would otherwise be read as frames) gets 400: never 101.
#[tokio::test]
async fn handshakes_that_are_not_a_bodiless_http11_get_are_refused() {
    with_app(Sockets, |port, _| async move {
        let fields = "Host: device\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
            Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n";
        let cases: [(String, &str); 5] = [
            (format!("POST /ws/echo HTTP/1.1\r\n{fields}Content-Length: 0\r\n\r\n"), "405"),
            (format!("HEAD /ws/echo HTTP/1.1\r\n{fields}\r\n"), "405"),
            (format!("GET /ws/echo HTTP/1.0\r\n{fields}\r\n"), "400"),
            (format!("GET /ws/echo HTTP/1.1\r\n{fields}Content-Length: 5\r\n\r\nhello"), "400"),
            (
                format!("GET /ws/echo HTTP/1.1\r\n{fields}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"),
                "400",
            ),
        ];
        for (wire, status) in cases {
            let mut stream = connect(port).await;
            stream.write_all(wire.as_bytes()).await.unwrap();
            stream.shutdown().await.unwrap();
            let response = read_to_close(&mut stream).await;
            let (head, _) = split_head(&response);
            assert!(head.starts_with(&format!("HTTP/1.1 {status} ")), "{wire}\n{head}");
            if status == "405" {
                assert!(head.contains("\r\nallow: GET\r\n"), "{head}");
            }
        }
    })
    .await;
}

/// The RAM of a WebSocket connection: the `serve_connection` future for
/// this app (the session lives in it) and the session itself.
#[tokio::test]
async fn websocket_future_sizes() {
    let stream = connect_pair().await;
    let mut io = embedded_io_adapters::tokio_1::FromTokio::new(stream);
    let mut buffers = Buffers::<1024, 512>::new();
    let future = serve_connection(&mut io, &Sockets, &mut buffers, &CONFIG);
    let serve = std::mem::size_of_val(&future);
    drop(future);
    let session =
        std::mem::size_of::<WebSocket<'_, embedded_io_adapters::tokio_1::FromTokio<TcpStream>>>();
    println!(
        "serve_connection future with a WebSocket app: {serve} bytes (its handler holds a 1 KiB copy buffer), WebSocket session: {session} bytes, beside Buffers<1024, 512>"
    );
}

/// The server's frames after its `101` head, parsed whole: data messages
/// with their fragments joined, control frames as they are.
fn messages(output: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let head_end = output
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head")
        + 4;
    assert!(output.starts_with(b"HTTP/1.1 101 "));
    let mut rest = &output[head_end..];
    let mut out = Vec::new();
    let mut joining: Option<(u8, Vec<u8>)> = None;
    while !rest.is_empty() {
        let (fin, opcode) = (rest[0] & 0x80 != 0, rest[0] & 0x0f);
        let (len, at) = match rest[1] & 0x7f {
            126 => (u16::from_be_bytes([rest[2], rest[3]]) as usize, 4),
            127 => (
                u64::from_be_bytes(rest[2..10].try_into().unwrap()) as usize,
                10,
            ),
            n => (n as usize, 2),
        };
        let payload = rest[at..at + len].to_vec();
        rest = &rest[at + len..];
        if opcode >= 8 {
            out.push((opcode, payload));
            continue;
        }
        let (kind, mut data) = joining.take().unwrap_or((opcode, Vec::new()));
        data.extend_from_slice(&payload);
        if fin {
            out.push((kind, data));
        } else {
            joining = Some((kind, data));
        }
    }
    out
}

/// Where the client's bytes are cut between reads changes no message:
/// the handshake, a text message with a two-byte code point, a Ping, a
/// 300-byte binary message and a Close, fed whole, one byte at a time and
/// split at every offset.
#[test]
fn any_split_of_the_frames_gives_the_same_messages() {
    let mut wire = format!(
        "GET /ws/echo HTTP/1.1\r\nHost: d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    .into_bytes();
    let binary: Vec<u8> = (0..300).map(|i| i as u8).collect();
    wire.extend_from_slice(&frame(1, true, "héllo".as_bytes(), true));
    wire.extend_from_slice(&frame(9, true, b"p", true));
    wire.extend_from_slice(&frame(2, true, &binary, true));
    wire.extend_from_slice(&frame(8, true, b"\x03\xe8bye", true));
    let expected = vec![
        (1, "héllo".as_bytes().to_vec()),
        (10, b"p".to_vec()),
        (2, binary.clone()),
        (8, b"\x03\xe8bye".to_vec()),
    ];
    let check = |cuts: Vec<usize>| {
        let (output, served, _) = super::serve_scripted_app(&Sockets, &wire, cuts.clone());
        served.expect("served to the end");
        assert_eq!(messages(&output), expected, "cuts {cuts:?}");
    };
    check(vec![]);
    check(vec![1; wire.len()]);
    for at in 1..wire.len() {
        check(vec![at]);
    }
}
