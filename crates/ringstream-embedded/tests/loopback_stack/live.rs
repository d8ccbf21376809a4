//! The long-lived connections of the loopback test, on a third pool (the
//! HTTP server with [`Live`], two workers): a WebSocket whose client goes
//! silent, one whose client answers and talks, an idle event stream and
//! its keep-alive comments, an event stream whose client stops reading,
//! and a 1 MiB download and upload beside small requests. Every deadline
//! is checked in simulated time, and each time the other worker is shown
//! to keep serving.

use std::cell::Cell;

use embassy_net::tcp::TcpSocket;
use embassy_net::Stack;
use embassy_time::{with_timeout, Duration, Instant, Timer};
use ringstream_embedded::embedded_io_async::{Read, Write};
use ringstream_embedded::http::HttpHandler;
use ringstream_embedded::pool::{Config, Pool};
use ringstream_embedded::sse::Event;

use super::support::http_app::{fnv1a, payload_byte, FNV_START};
use super::support::live::{End, Live, MIB};
use super::support::{connect, join, request, Client, CLIENT_RX};
use super::{read_n, PATIENCE};

/// The port of the third pool.
pub const LIVE_PORT: u16 = 8081;
/// Its sockets and workers: two workers, one queue place, one socket kept
/// for refusals.
pub const LIVE_SOCKETS: usize = 4;
pub const LIVE_WORKERS: usize = 2;
/// How long a WebSocket client may stay silent before it is pinged (and
/// as long again before it is closed), in simulated time.
pub const WS_IDLE: Duration = Duration::from_millis(500);
/// The idle interval after which an event stream sends a keep-alive.
pub const KEEP_ALIVE: Duration = Duration::from_millis(300);
/// The third pool's write deadline: a client that stops reading is cut
/// after this long.
pub const LIVE_IO_TIMEOUT: Duration = Duration::from_secs(2);
/// The longest a small request may wait beside a long transfer.
const BESIDE: Duration = Duration::from_millis(100);

pub type LivePool = Pool<'static, LIVE_SOCKETS>;
/// The HTTP server of the third pool: 1 KiB to receive, 512 bytes to
/// transmit, as the second's.
pub type LiveHttp = HttpHandler<Live, 1024, 512>;

/// The server's settings for the third pool.
pub fn server_config() -> ringstream_embedded::Config {
    ringstream_embedded::Config {
        io_timeout: LIVE_IO_TIMEOUT,
        ..ringstream_embedded::Config::DEFAULT
    }
}

#[embassy_executor::task(pool_size = LIVE_WORKERS)]
pub async fn live_worker(pool: &'static LivePool, http: &'static LiveHttp) {
    pool.run_http_worker(http).await;
}

#[embassy_executor::task]
pub async fn live_listener(pool: &'static LivePool) {
    pool.run_listener().await;
}

const HELLO: &[u8] = b"GET /hello HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n";

/// Whether `after` is at `mark`, or at most `slack` later.
fn near(after: Duration, mark: Duration, slack: Duration) -> bool {
    after >= mark && after < mark + slack
}

/// A `/hello` on a new connection, answered: how long it took.
async fn hello_beside(stack: Stack<'static>) -> Duration {
    let asked = Instant::now();
    let response = with_timeout(PATIENCE, request(stack, LIVE_PORT, HELLO))
        .await
        .expect("a small request within the patience")
        .expect("a small request");
    assert!(
        response.ends_with(b"\r\n\r\nhello"),
        "{}",
        String::from_utf8_lossy(&response)
    );
    asked.elapsed()
}

/// Waits for the connections before to be closed (the pool's linger).
async fn settle() {
    Timer::after(Config::new(LIVE_PORT).linger).await;
}

// WebSocket, client side: frames written and read by hand.

/// The key and accept value of RFC 6455 §1.3.
const KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";
const ACCEPT: &str = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";
const MASK: [u8; 4] = [0x37, 0xfa, 0x21, 0x3d];

/// Opcodes.
const TEXT: u8 = 1;
const CLOSE: u8 = 8;
const PING: u8 = 9;
const PONG: u8 = 10;

/// A final, masked client frame of fewer than 126 bytes.
fn frame(opcode: u8, payload: &[u8]) -> Vec<u8> {
    assert!(payload.len() < 126);
    let mut out = vec![0x80 | opcode, 0x80 | payload.len() as u8];
    out.extend_from_slice(&MASK);
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ MASK[i % 4]));
    out
}

/// Sends `/ws`'s handshake and reads the `101`.
async fn open_ws(socket: &mut TcpSocket<'_>) {
    let handshake = format!(
        "GET /ws HTTP/1.1\r\nHost: device\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    );
    socket
        .write_all(handshake.as_bytes())
        .await
        .expect("the handshake");
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        socket.read_exact(&mut byte).await.expect("the 101 head");
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    assert!(head.starts_with("HTTP/1.1 101 "), "{head}");
    assert!(
        head.contains(&format!("\r\nsec-websocket-accept: {ACCEPT}\r\n")),
        "{head}"
    );
}

/// Reads one whole server frame: its opcode and payload (server frames
/// are unmasked and, here, final); `None` at the end of the connection.
async fn read_frame(socket: &mut TcpSocket<'_>) -> Option<(u8, Vec<u8>)> {
    let mut head = [0u8; 2];
    socket.read_exact(&mut head).await.ok()?;
    assert_eq!(head[0] & 0x80, 0x80, "a fragment: {head:?}");
    assert_eq!(head[1] & 0x80, 0, "a masked server frame");
    let len = match head[1] & 0x7f {
        126 => {
            let mut len = [0u8; 2];
            socket.read_exact(&mut len).await.ok()?;
            usize::from(u16::from_be_bytes(len))
        }
        127 => panic!("a server frame of 64 KiB or more"),
        n => usize::from(n),
    };
    let mut payload = vec![0; len];
    socket.read_exact(&mut payload).await.ok()?;
    Some((head[0] & 0x0f, payload))
}

/// Sends `bytes` and flushes them.
async fn send(socket: &mut TcpSocket<'_>, bytes: &[u8]) {
    socket.write_all(bytes).await.expect("send");
    socket.flush().await.expect("flush");
}

/// A client opens a WebSocket and goes silent: at the idle deadline it is
/// pinged, and when it stays silent as long again, the server closes the
/// session with 1001 (`idle`) and the connection ends; meanwhile the other
/// worker answers small requests at once.
pub async fn ws_silent_client(stack: Stack<'static>, live: &'static LiveHttp) {
    settle().await;
    live.app().ws_ended.take();
    let mut client = Client::new();
    let mut ws = client.socket(stack);
    connect(&mut ws, LIVE_PORT).await.expect("connect");
    // The session's idle clock starts at its `101`, after this.
    let asked = Instant::now();
    open_ws(&mut ws).await;
    let silent = async {
        let ping = read_frame(&mut ws).await;
        let ping_at = asked.elapsed();
        let close = read_frame(&mut ws).await;
        let close_at = asked.elapsed();
        let end = read_frame(&mut ws).await;
        ws.close();
        let _ = ws.flush().await;
        (ping, ping_at, close, close_at, end)
    };
    let beside = async {
        let mut took = Vec::new();
        for at in [WS_IDLE / 2, WS_IDLE * 3 / 2] {
            Timer::at(asked + at).await;
            took.push(hello_beside(stack).await);
        }
        took
    };
    let ((ping, ping_at, close, close_at, end), took) =
        with_timeout(PATIENCE, join(silent, beside))
            .await
            .expect("the silent WebSocket was never closed");
    let slack = Duration::from_millis(50);
    assert_eq!(ping, Some((PING, Vec::new())));
    assert!(
        near(ping_at, WS_IDLE, slack),
        "pinged after {} ms",
        ping_at.as_millis()
    );
    let mut going_away = 1001u16.to_be_bytes().to_vec();
    going_away.extend_from_slice(b"idle");
    assert_eq!(close, Some((CLOSE, going_away)));
    assert!(
        near(close_at, WS_IDLE * 2, slack),
        "closed after {} ms",
        close_at.as_millis()
    );
    assert_eq!(end, None, "a frame after the Close");
    let (end, at) = live.app().ws_ended.get().expect("the session ended");
    assert_eq!(end, End::TimedOut);
    assert!(
        near(at - asked, WS_IDLE * 2, slack),
        "ended after {} ms",
        (at - asked).as_millis()
    );
    for t in &took {
        assert!(
            *t < BESIDE,
            "a small request beside it took {} ms",
            t.as_millis()
        );
    }
    let took: Vec<u64> = took.iter().map(|t| t.as_millis()).collect();
    println!(
        "websocket silent client: pinged after {} ms, closed 1001 after {} ms; beside it, served in {took:?} ms",
        ping_at.as_millis(),
        close_at.as_millis()
    );
}

/// A client that answers every Ping with a Pong, then one that talks more
/// often than the idle deadline: neither is cut, long past twice the
/// deadline; its Close is echoed and the session ends cleanly.
pub async fn ws_live_client(stack: Stack<'static>, live: &'static LiveHttp) {
    settle().await;
    live.app().ws_ended.take();
    let mut client = Client::new();
    let mut ws = client.socket(stack);
    connect(&mut ws, LIVE_PORT).await.expect("connect");
    let started = Instant::now();
    let mut heard = started;
    open_ws(&mut ws).await;
    let slack = Duration::from_millis(50);
    let session = async {
        // Three Pings, each a deadline after the client's last frame,
        // each answered.
        for i in 0..3 {
            let ping = read_frame(&mut ws).await;
            let gap = heard.elapsed();
            assert_eq!(ping, Some((PING, Vec::new())), "ping {i}");
            assert!(
                near(gap, WS_IDLE, slack),
                "ping {i} after {} ms",
                gap.as_millis()
            );
            // The server hears the Pong before the client's flush returns
            // (on its acknowledgement).
            heard = Instant::now();
            send(&mut ws, &frame(PONG, b"")).await;
        }
        // Messages a little more often than the deadline: each echoed,
        // never a Ping between them.
        for i in 0..3 {
            Timer::after(WS_IDLE * 4 / 5).await;
            let text = format!("tick {i}");
            send(&mut ws, &frame(TEXT, text.as_bytes())).await;
            assert_eq!(read_frame(&mut ws).await, Some((TEXT, text.into_bytes())));
        }
        let mut bye = 1000u16.to_be_bytes().to_vec();
        bye.extend_from_slice(b"bye");
        send(&mut ws, &frame(CLOSE, &bye)).await;
        assert_eq!(read_frame(&mut ws).await, Some((CLOSE, bye)));
        assert_eq!(read_frame(&mut ws).await, None);
        ws.close();
        let _ = ws.flush().await;
    };
    with_timeout(PATIENCE, session)
        .await
        .expect("the live WebSocket within the patience");
    let lasted = started.elapsed();
    assert!(
        lasted > WS_IDLE * 4,
        "the session lasted {} ms",
        lasted.as_millis()
    );
    let (end, _) = live.app().ws_ended.get().expect("the session ended");
    assert_eq!(end, End::Clean);
    println!(
        "websocket live client: 3 pings answered, 3 messages echoed, closed cleanly after {} ms",
        lasted.as_millis()
    );
}

// Server-sent events.

/// The head of every event stream.
const STREAM_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
    cache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n";

/// The data of the next chunk of a chunked body, read whole (its size
/// line may have leading zeros: the server reserves it before it knows
/// the chunk's size).
async fn read_chunk(socket: &mut TcpSocket<'_>) -> Vec<u8> {
    let mut line = Vec::new();
    while !line.ends_with(b"\r\n") {
        let byte = read_n(socket, 1).await;
        assert_eq!(byte.len(), 1, "the connection ended within a size line");
        line.extend_from_slice(&byte);
    }
    let size = std::str::from_utf8(&line[..line.len() - 2]).expect("a size line");
    let size = usize::from_str_radix(size, 16).expect("a hex size");
    let mut data = read_n(socket, size + 2).await;
    assert!(data.ends_with(b"\r\n"), "a chunk ends with CRLF");
    data.truncate(size);
    data
}

/// Opens `/events` and reads the stream's head.
async fn open_events(socket: &mut TcpSocket<'_>) {
    send(socket, b"GET /events HTTP/1.1\r\nHost: device\r\n\r\n").await;
    let head = read_n(socket, STREAM_HEAD.len()).await;
    assert_eq!(
        String::from_utf8_lossy(&head),
        String::from_utf8_lossy(STREAM_HEAD)
    );
}

/// An idle event stream gets a keep-alive comment every interval; an
/// event restarts the interval; the other worker answers beside it; a
/// client that resets is noticed at the next keep-alive, and its
/// subscriber place freed.
pub async fn sse_keep_alive(stack: Stack<'static>, live: &'static LiveHttp) {
    settle().await;
    let app = live.app();
    app.sse_ended.take();
    let keep_alive = b": keep-alive\n\n";
    let slack = Duration::from_millis(30);
    let mut client = Client::new();
    let mut socket = client.socket(stack);
    connect(&mut socket, LIVE_PORT).await.expect("connect");
    // The stream's idle clock starts after its head, so after this.
    let mut last = Instant::now();
    open_events(&mut socket).await;
    let stream = async {
        let mut gaps = Vec::new();
        for i in 0..3 {
            let got = read_chunk(&mut socket).await;
            assert_eq!(got, keep_alive, "keep-alive {i}");
            gaps.push(last.elapsed());
            last = Instant::now();
        }
        Timer::after(KEEP_ALIVE / 2).await;
        let event = Event::new().try_id("1").unwrap().data("21.5");
        let mut wire = [0u8; 64];
        let n = event.encode_into(&mut wire).unwrap();
        let published = Instant::now();
        app.events.publish(&event).unwrap();
        assert_eq!(read_chunk(&mut socket).await, &wire[..n]);
        let delivered = published.elapsed();
        assert_eq!(read_chunk(&mut socket).await, keep_alive);
        let next = published.elapsed();
        (gaps, delivered, next)
    };
    let beside = async {
        Timer::after(KEEP_ALIVE * 3 / 2).await;
        hello_beside(stack).await
    };
    let ((gaps, delivered, next), took) = with_timeout(PATIENCE, join(stream, beside))
        .await
        .expect("the keep-alive comments");
    for gap in &gaps {
        assert!(
            near(*gap, KEEP_ALIVE, slack),
            "a keep-alive after {} ms",
            gap.as_millis()
        );
    }
    assert!(
        delivered < slack,
        "the event took {} ms",
        delivered.as_millis()
    );
    assert!(
        near(next, KEEP_ALIVE, slack),
        "a keep-alive {next} after the event"
    );
    assert!(
        took < BESIDE,
        "the request beside took {} ms",
        took.as_millis()
    );
    assert_eq!(app.sse_ended.get(), None);

    socket.abort();
    let _ = socket.flush().await;
    let left = Instant::now();
    let ended = with_timeout(PATIENCE, async {
        loop {
            if let Some(ended) = app.sse_ended.get() {
                return ended;
            }
            Timer::after(Duration::from_millis(1)).await;
        }
    })
    .await
    .expect("the stream of a client gone ended");
    assert_eq!(ended.0, End::Io);
    assert!(
        ended.1 - left <= KEEP_ALIVE + slack,
        "the stream ended {} after the client left",
        ended.1 - left
    );
    assert_eq!(app.events.subscriber_count(), 0);
    let gaps: Vec<u64> = gaps.iter().map(|g| g.as_millis()).collect();
    println!(
        "sse keep-alive: comments after {gaps:?} ms, an event in {} ms then a comment {} ms later; beside it, served in {} ms; a reset noticed after {} ms",
        delivered.as_millis(),
        next.as_millis(),
        took.as_millis(),
        (ended.1 - left).as_millis()
    );
}

/// A client opens an event stream and stops reading while events keep
/// coming: once its receive window is full the server's write stalls, and
/// the stream is cut at the write deadline; meanwhile the other worker
/// answers at once, and the pool serves normally afterwards.
pub async fn sse_stalled_reader(stack: Stack<'static>, live: &'static LiveHttp) {
    settle().await;
    let app = live.app();
    app.sse_ended.take();
    let mut client = Client::new();
    let mut socket = client.socket(stack);
    connect(&mut socket, LIVE_PORT).await.expect("connect");
    open_events(&mut socket).await;
    // 40 events of 400 bytes, one every 20 ms, never read: about four
    // times what the client's window and the server's buffers hold.
    let data = "x".repeat(400);
    let mut full_at = None;
    for i in 0..40 {
        let id = i.to_string();
        app.events
            .publish(&Event::new().try_id(&id).unwrap().data(&data))
            .unwrap();
        for _ in 0..20 {
            Timer::after(Duration::from_millis(1)).await;
            if full_at.is_none() && socket.recv_queue() == CLIENT_RX {
                full_at = Some(Instant::now());
            }
        }
    }
    let full_at = full_at.expect("the client's window never filled");
    // Stalled, not yet cut: the other worker answers.
    let took = hello_beside(stack).await;
    assert!(
        took < BESIDE,
        "the request beside took {} ms",
        took.as_millis()
    );
    assert_eq!(app.sse_ended.get(), None, "cut before the deadline");
    let (end, at) = with_timeout(PATIENCE, async {
        loop {
            if let Some(ended) = app.sse_ended.get() {
                return ended;
            }
            Timer::after(Duration::from_millis(1)).await;
        }
    })
    .await
    .expect("the stalled stream was never cut");
    let stalled = at - full_at;
    assert_eq!(end, End::TimedOut);
    // The write that stalled started shortly before the window closed, or
    // shortly after (once the server's own buffers filled too).
    assert!(
        stalled + Duration::from_millis(100) >= LIVE_IO_TIMEOUT
            && stalled < LIVE_IO_TIMEOUT + Duration::from_millis(200),
        "cut {stalled} after the window closed"
    );
    assert_eq!(app.events.subscriber_count(), 0);
    // What the client holds ends short of what was published.
    let mut got = 0;
    let mut buf = [0u8; 1024];
    with_timeout(PATIENCE, async {
        while let Ok(n @ 1..) = socket.read(&mut buf).await {
            got += n;
        }
    })
    .await
    .expect("the stalled connection ends");
    assert!((CLIENT_RX..40 * 400).contains(&got), "{got} bytes");
    socket.close();
    let _ = socket.flush().await;
    drop(socket);
    let after = hello_beside(stack).await;
    assert!(
        after < BESIDE,
        "the request afterwards took {} ms",
        after.as_millis()
    );
    println!(
        "sse stalled reader: window full, cut {} ms later; beside it served in {} ms; it got {got} bytes",
        stalled.as_millis(),
        took.as_millis()
    );
}

// Fairness.

/// Small requests every 200 ms while `transfer` runs on the other
/// worker: each answered within [`BESIDE`], each while the transfer is
/// still going on. How long the transfer took and the small latencies.
async fn beside_transfer<T>(
    stack: Stack<'static>,
    transfer: impl std::future::Future<Output = T>,
) -> (T, Duration, Vec<Duration>) {
    let done = Cell::new(false);
    let started = Instant::now();
    let big = async {
        let out = transfer.await;
        done.set(true);
        (out, started.elapsed())
    };
    let smalls = async {
        let mut took = Vec::new();
        for _ in 0..5 {
            Timer::after(Duration::from_millis(200)).await;
            let t = hello_beside(stack).await;
            assert!(!done.get(), "the transfer ended before a small request");
            took.push(t);
        }
        took
    };
    let ((out, lasted), took) = with_timeout(PATIENCE, join(big, smalls))
        .await
        .expect("the transfers within the patience");
    (out, lasted, took)
}

/// A 1 MiB download, then a 1 MiB upload, each through the server's
/// 1 KiB buffers, do not starve the other worker: small requests beside
/// them are answered within [`BESIDE`] while they go on; both arrive
/// intact.
pub async fn fairness(stack: Stack<'static>) {
    settle().await;
    let download = request(
        stack,
        LIVE_PORT,
        b"GET /mib HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n",
    );
    let (response, down_took, down_beside) = beside_transfer(stack, download).await;
    let response = response.expect("the download");
    let split = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head")
        + 4;
    let head = String::from_utf8_lossy(&response[..split]);
    assert!(
        head.starts_with("HTTP/1.1 200 OK\r\n")
            && head.contains(&format!("\r\ncontent-length: {MIB}\r\n")),
        "{head}"
    );
    let body = &response[split..];
    assert_eq!(body.len(), MIB);
    if let Some(i) = (0..MIB).find(|&i| body[i] != payload_byte(i)) {
        panic!("downloaded byte {i} differs");
    }

    settle().await;
    let mut upload = format!(
        "POST /count HTTP/1.1\r\nHost: device\r\nContent-Length: {MIB}\r\nConnection: close\r\n\r\n"
    )
    .into_bytes();
    let body: Vec<u8> = (0..MIB).map(payload_byte).collect();
    upload.extend_from_slice(&body);
    let (response, up_took, up_beside) =
        beside_transfer(stack, request(stack, LIVE_PORT, &upload)).await;
    let response = response.expect("the upload");
    let text = String::from_utf8_lossy(&response);
    let counted = format!("{MIB} {:016x}", fnv1a(FNV_START, &body));
    assert!(
        text.starts_with("HTTP/1.1 200 OK\r\n") && text.contains(&counted),
        "{text}"
    );
    for t in down_beside.iter().chain(&up_beside) {
        assert!(*t < BESIDE, "a small request took {} ms", t.as_millis());
    }
    let ms = |v: &[Duration]| v.iter().map(|t| t.as_millis()).collect::<Vec<_>>();
    println!(
        "fairness: 1 MiB down in {} ms, small requests beside in {:?} ms; 1 MiB up in {} ms, beside in {:?} ms",
        down_took.as_millis(),
        ms(&down_beside),
        up_took.as_millis(),
        ms(&up_beside)
    );
}
