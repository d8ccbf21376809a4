//! The demo's WebSockets over real sockets, with an independent client
//! (tokio-tungstenite): `/ws/echo` sends text and binary back, `/ws/live`
//! pushes the counters and takes commands, `/ws/broadcast` sends every
//! message to every client and counts the ones a client that never reads
//! skips, `/metrics` reports its counters, and a `GET` that is no
//! handshake gets `426`.

use crate::common;

use std::time::Duration;

use common::{read_response, roundtrip, start_app, TestServer};
use futures_util::{SinkExt, StreamExt};
use ringstream::server::Config;
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpSocket, TcpStream};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

type Client = WebSocketStream<TcpStream>;

/// How long any one message may take to arrive.
const WAIT: Duration = Duration::from_secs(10);

/// A client past the handshake on `path`.
async fn connect(server: &TestServer, path: &str) -> Client {
    let url = format!("ws://{}{path}", server.addr);
    let tcp = TcpStream::connect(server.addr).await.unwrap();
    let (client, response) = tokio_tungstenite::client_async(url, tcp).await.unwrap();
    assert_eq!(response.status(), 101);
    client
}

/// The next message, within [`WAIT`]; `None` when the connection ended.
async fn next(client: &mut Client) -> Option<Message> {
    tokio::time::timeout(WAIT, client.next())
        .await
        .expect("a message from the server in time")
        .map(|message| message.expect("a well-formed message"))
}

/// The next text message as JSON (Pings and Pongs skipped).
async fn next_json(client: &mut Client) -> Value {
    loop {
        match next(client).await {
            Some(Message::Text(text)) => {
                return serde_json::from_str(text.as_str())
                    .unwrap_or_else(|e| panic!("{e}: {}", text.as_str()))
            }
            Some(Message::Ping(_) | Message::Pong(_)) => continue,
            other => panic!("expected a text message, got {other:?}"),
        }
    }
}

/// The next answer to a command: the next message that is not a push.
async fn next_answer(client: &mut Client) -> Value {
    loop {
        let message = next_json(client).await;
        if message["type"] != "stats" {
            return message;
        }
    }
}

/// The next push.
async fn next_push(client: &mut Client) -> Value {
    loop {
        let message = next_json(client).await;
        if message["type"] == "stats" {
            return message;
        }
    }
}

async fn send_text(client: &mut Client, text: &str) {
    client.send(Message::text(text)).await.unwrap();
}

/// The client closes with 1000 and a reason; the server answers the Close,
/// echoing both, and ends the connection.
async fn close(mut client: Client) {
    let frame = tokio_tungstenite::tungstenite::protocol::CloseFrame {
        code: CloseCode::Normal,
        reason: "done".into(),
    };
    client.close(Some(frame)).await.unwrap();
    let mut answered = false;
    while let Some(Ok(message)) = tokio::time::timeout(WAIT, client.next())
        .await
        .expect("the server ends the connection")
    {
        match message {
            Message::Close(frame) => {
                let frame = frame.expect("a code in the answer");
                assert_eq!(frame.code, CloseCode::Normal);
                assert_eq!(frame.reason.as_str(), "done");
                answered = true;
            }
            // Pushes sent before the server saw the Close.
            Message::Text(_) => {}
            other => panic!("after the Close: {other:?}"),
        }
    }
    assert!(answered, "the server answered the Close");
}

#[tokio::test]
async fn echo_sends_text_and_binary_back() {
    let server = start_app(Config::default()).await;
    let mut client = connect(&server, "/ws/echo").await;
    for size in [64usize, 64 * 1024] {
        let text: String = "ringstream ✓ "
            .chars()
            .cycle()
            .take(size / 2)
            .collect::<String>();
        send_text(&mut client, &text).await;
        match next(&mut client).await {
            Some(Message::Text(back)) => assert!(back.as_str() == text, "{size}: text differs"),
            other => panic!("{size}: expected text, got {other:?}"),
        }
        let blob: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
        client.send(Message::binary(blob.clone())).await.unwrap();
        match next(&mut client).await {
            Some(Message::Binary(back)) => {
                assert_eq!(back.len(), size);
                assert!(back.as_ref() == &blob[..], "{size}: binary differs");
            }
            other => panic!("{size}: expected binary, got {other:?}"),
        }
    }
    // An empty message too.
    client.send(Message::binary(Vec::new())).await.unwrap();
    assert_eq!(next(&mut client).await, Some(Message::binary(Vec::new())));
    close(client).await;
}

/// A `GET` that is no handshake gets the handshake's refusal: `426` with
/// the `Upgrade` it requires; other methods get `405` with the route's
/// `Allow`, and the connection goes on.
#[tokio::test]
async fn a_plain_get_is_426_upgrade_required() {
    let server = start_app(Config::default()).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    let mut buf = Vec::new();
    for path in ["/ws/echo", "/ws/live", "/ws/broadcast"] {
        let request = format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n");
        socket.write_all(request.as_bytes()).await.unwrap();
        let response = read_response(&mut socket, &mut buf, false).await;
        assert_eq!(response.status, 426, "{path}: {response:?}");
        assert_eq!(response.header("upgrade"), Some("websocket"), "{path}");
        assert_eq!(response.header("sec-websocket-version"), Some("13"));
        assert!(!response.closes(), "{response:?}");
        assert!(!response.body.is_empty());

        // An old protocol version: 426 and the version the server speaks.
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: t\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
             Sec-WebSocket-Version: 8\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
        );
        socket.write_all(request.as_bytes()).await.unwrap();
        let response = read_response(&mut socket, &mut buf, false).await;
        assert_eq!(response.status, 426, "{path}: {response:?}");
        assert_eq!(response.header("sec-websocket-version"), Some("13"));

        // A key that is not 16 bytes of base64: 400.
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: t\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
             Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: short\r\n\r\n"
        );
        socket.write_all(request.as_bytes()).await.unwrap();
        let response = read_response(&mut socket, &mut buf, false).await;
        assert_eq!(response.status, 400, "{path}: {response:?}");
    }
    // The connection still serves the other routes.
    socket
        .write_all(b"GET /bytes/3 HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let response = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(response.status, 200);
}

fn assert_push(push: &Value) {
    assert_eq!(push["type"], "stats", "{push}");
    assert!(push["seq"].as_u64().is_some_and(|n| n >= 1), "{push}");
    assert!(push["interval_ms"].is_u64(), "{push}");
    for key in [
        "requests",
        "requests_per_second",
        "bytes_in",
        "bytes_out",
        "connections_open",
        "errors",
        "rss_bytes",
    ] {
        assert!(push["stats"][key].is_number(), "no `stats.{key}`: {push}");
    }
    // The demo's clock is fixed in the tests.
    assert_eq!(push["live"]["timestamp"], 1_750_000_000, "{push}");
    assert_eq!(push["live"]["inverters"], 90, "{push}");
    assert!(
        push["live"]["power"].as_f64().is_some_and(|p| p > 0.0),
        "{push}"
    );
    assert!(push["live"]["yield_day"].is_number(), "{push}");
}

/// The first push comes at once, the next a second later, with the
/// `/events` counters and the array's totals.
#[tokio::test]
async fn live_pushes_the_counters_every_second() {
    let server = start_app(Config::default()).await;
    let started = Instant::now();
    let mut client = connect(&server, "/ws/live").await;
    let first = next_push(&mut client).await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "first push late"
    );
    assert_push(&first);
    assert_eq!(first["seq"], 1);
    assert_eq!(first["interval_ms"], 1000);
    // The handshake was a request, and this connection is open.
    assert!(first["stats"]["requests"].as_u64().unwrap() >= 1, "{first}");
    assert!(
        first["stats"]["connections_open"].as_u64().unwrap() >= 1,
        "{first}"
    );
    let second = next_push(&mut client).await;
    let gap = started.elapsed();
    assert_push(&second);
    assert_eq!(second["seq"], 2);
    assert!(
        (Duration::from_millis(800)..Duration::from_secs(3)).contains(&gap),
        "second push after {gap:?}"
    );
    // `/events`' JSON and the push's `stats` have the same fields.
    let stats = second["stats"].as_object().unwrap();
    assert_eq!(stats.len(), 7, "{second}");
    close(client).await;
}

#[tokio::test]
async fn live_answers_ping_with_its_id() {
    let server = start_app(Config::default()).await;
    let mut client = connect(&server, "/ws/live").await;
    send_text(&mut client, r#"{"cmd":"ping","id":"a-17"}"#).await;
    let pong = next_answer(&mut client).await;
    assert_eq!(pong["type"], "pong", "{pong}");
    assert_eq!(pong["id"], "a-17", "{pong}");
    assert!(pong["time_ms"].as_u64().is_some(), "{pong}");
    send_text(&mut client, r#"{"cmd":"ping"}"#).await;
    let pong = next_answer(&mut client).await;
    assert_eq!(pong["type"], "pong", "{pong}");
    assert!(pong.get("id").is_none(), "{pong}");
    close(client).await;
}

/// Waits for `n` pushes and returns the time between the first and the
/// last, divided by `n - 1`.
async fn pace(client: &mut Client, n: u32) -> Duration {
    let first = next_push(client).await;
    let start = Instant::now();
    let mut last = first;
    for _ in 1..n {
        let push = next_push(client).await;
        assert_eq!(
            push["seq"].as_u64().unwrap(),
            last["seq"].as_u64().unwrap() + 1
        );
        last = push;
    }
    start.elapsed() / (n - 1)
}

/// `interval` changes the pace of the pushes, within 200..=10000 ms;
/// out of bounds is an error and the pace stays.
#[tokio::test]
async fn live_interval_changes_the_pace() {
    let server = start_app(Config::default()).await;
    let mut client = connect(&server, "/ws/live").await;
    next_push(&mut client).await;

    send_text(&mut client, r#"{"cmd":"interval","ms":200}"#).await;
    assert_eq!(
        next_answer(&mut client).await,
        json!({"type": "interval", "ms": 200})
    );
    let fast = pace(&mut client, 6).await;
    assert!(
        (Duration::from_millis(150)..Duration::from_millis(450)).contains(&fast),
        "pushes every {fast:?} after interval 200"
    );
    assert_eq!(next_push(&mut client).await["interval_ms"], 200);

    for bad in [
        r#"{"cmd":"interval","ms":100}"#,
        r#"{"cmd":"interval","ms":20000}"#,
        r#"{"cmd":"interval","ms":"fast"}"#,
    ] {
        send_text(&mut client, bad).await;
        let answer = next_answer(&mut client).await;
        assert_eq!(answer["type"], "error", "{bad}: {answer}");
        assert_eq!(answer["cmd"], "interval", "{bad}: {answer}");
    }
    assert_eq!(next_push(&mut client).await["interval_ms"], 200);

    send_text(&mut client, r#"{"cmd":"interval","ms":1500}"#).await;
    let answered = loop {
        let message = next_json(&mut client).await;
        if message["type"] == "interval" {
            assert_eq!(message["ms"], 1500);
            break Instant::now();
        }
    };
    // The next push comes one new interval after the answer.
    let push = next_push(&mut client).await;
    let after = answered.elapsed();
    assert_eq!(push["interval_ms"], 1500, "{push}");
    assert!(
        (Duration::from_millis(1200)..Duration::from_millis(3000)).contains(&after),
        "push {after:?} after interval 1500"
    );
    close(client).await;
}

/// Bad input gets an error answer and the connection stays open.
#[tokio::test]
async fn live_answers_bad_input_without_closing() {
    let server = start_app(Config::default()).await;
    let mut client = connect(&server, "/ws/live").await;
    for bad in [
        "this is not JSON",
        "{\"cmd\":",
        "[\"ping\"]",
        "{\"cmd\":42}",
        "{\"cmd\":\"reboot\"}",
    ] {
        send_text(&mut client, bad).await;
        let answer = next_answer(&mut client).await;
        assert_eq!(answer["type"], "error", "{bad}: {answer}");
        assert!(
            answer["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{bad}: {answer}"
        );
    }
    client
        .send(Message::binary(&b"{\"cmd\":\"ping\"}"[..]))
        .await
        .unwrap();
    let answer = next_answer(&mut client).await;
    assert_eq!(answer["type"], "error", "binary: {answer}");
    // Still open: a ping is answered and the pushes go on.
    send_text(&mut client, r#"{"cmd":"ping","id":1}"#).await;
    assert_eq!(next_answer(&mut client).await["type"], "pong");
    assert_push(&next_push(&mut client).await);
    close(client).await;
}

/// More than 20 commands within a second: closed with 1008.
#[tokio::test]
async fn live_closes_a_flood_with_1008() {
    let server = start_app(Config::default()).await;
    let mut client = connect(&server, "/ws/live").await;
    for i in 0..50 {
        client
            .feed(Message::text(format!(r#"{{"cmd":"ping","id":{i}}}"#)))
            .await
            .unwrap();
    }
    client.flush().await.unwrap();
    let mut pongs = 0;
    let code = loop {
        match next(&mut client).await {
            Some(Message::Text(text)) => {
                let message: Value = serde_json::from_str(text.as_str()).unwrap();
                if message["type"] == "pong" {
                    pongs += 1;
                }
            }
            Some(Message::Close(frame)) => break frame.map(|f| f.code),
            Some(_) => {}
            None => panic!("the connection ended without a Close"),
        }
    };
    assert_eq!(code, Some(CloseCode::Policy));
    assert_eq!(pongs, 20, "answered before the close");
}

/// A command over 4 KiB: closed with 1009.
#[tokio::test]
async fn live_closes_an_oversized_command_with_1009() {
    let server = start_app(Config::default()).await;
    let mut client = connect(&server, "/ws/live").await;
    let big = format!(r#"{{"cmd":"ping","id":"{}"}}"#, "x".repeat(5000));
    send_text(&mut client, &big).await;
    let code = loop {
        match next(&mut client).await {
            Some(Message::Close(frame)) => break frame.map(|f| f.code),
            Some(_) => {}
            None => panic!("the connection ended without a Close"),
        }
    };
    assert_eq!(code, Some(CloseCode::Size));
}

/// The server's graceful shutdown closes `/ws/live` with 1001 (going
/// away), and the server stops once the client has answered.
#[tokio::test]
async fn shutdown_closes_live_with_going_away() {
    let mut server = start_app(Config::default()).await;
    let mut client = connect(&server, "/ws/live").await;
    next_push(&mut client).await;
    let stopping = server.begin_shutdown();
    let code = loop {
        match next(&mut client).await {
            Some(Message::Close(frame)) => break frame.map(|f| f.code),
            Some(_) => {}
            None => panic!("the connection ended without a Close"),
        }
    };
    assert_eq!(code, Some(CloseCode::Away));
    // tungstenite answers the Close; the server ends the connection.
    while let Some(Ok(_)) = tokio::time::timeout(WAIT, client.next())
        .await
        .expect("the server ends the connection")
    {}
    tokio::time::timeout(WAIT, stopping)
        .await
        .expect("the server stops once its websockets closed")
        .unwrap()
        .unwrap();
}

/// The `/metrics` page.
async fn metrics(server: &TestServer) -> String {
    let response = roundtrip(
        server.addr,
        b"GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
    )
    .await;
    let text = String::from_utf8(response).expect("metrics are text");
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    text
}

/// The value of the sample `name{route="route"}` in a `/metrics` page.
fn sample(page: &str, name: &str, route: &str) -> u64 {
    let key = format!("{name}{{route=\"{route}\"}} ");
    let line = page
        .lines()
        .find(|line| line.starts_with(&key))
        .unwrap_or_else(|| panic!("no {key} in {page}"));
    line[key.len()..].parse().expect("a whole number")
}

/// Polls `/metrics` until `done` holds of it; panics after 10 s.
async fn metrics_until(server: &TestServer, done: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + WAIT;
    loop {
        let page = metrics(server).await;
        if done(&page) {
            return page;
        }
        assert!(Instant::now() < deadline, "not met within 10 s: {page}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The next data message, Pings and Pongs skipped.
async fn next_data(client: &mut Client) -> Message {
    loop {
        match next(client).await {
            Some(Message::Ping(_) | Message::Pong(_)) => continue,
            Some(message) => return message,
            None => panic!("the connection ended"),
        }
    }
}

/// Every message a client sends to `/ws/broadcast` reaches every client
/// connected, the sender too; `/metrics` counts the subscribers, the
/// messages and the connections open on each WebSocket route.
#[tokio::test]
async fn broadcast_reaches_every_client_and_is_counted() {
    let server = start_app(Config::default()).await;
    let page = metrics(&server).await;
    for route in ["/ws/echo", "/ws/live", "/ws/broadcast"] {
        assert_eq!(sample(&page, "ringstream_ws_connections_open", route), 0);
    }
    assert_eq!(
        sample(
            &page,
            "ringstream_ws_broadcast_subscribers",
            "/ws/broadcast"
        ),
        0
    );
    // The `/events` broadcaster's counters are there too.
    for name in [
        "ringstream_sse_broadcast_subscribers",
        "ringstream_sse_broadcast_sent_total",
        "ringstream_sse_broadcast_dropped_total",
        "ringstream_sse_broadcast_lag_closed_total",
    ] {
        sample(&page, name, "/events");
    }

    let mut a = connect(&server, "/ws/broadcast").await;
    let mut b = connect(&server, "/ws/broadcast").await;
    let echo = connect(&server, "/ws/echo").await;
    let page = metrics_until(&server, |page| {
        sample(page, "ringstream_ws_broadcast_subscribers", "/ws/broadcast") == 2
            && sample(page, "ringstream_ws_connections_open", "/ws/echo") == 1
    })
    .await;
    assert_eq!(
        sample(&page, "ringstream_ws_connections_open", "/ws/broadcast"),
        2
    );
    assert_eq!(
        sample(&page, "ringstream_ws_connections_open", "/ws/live"),
        0
    );

    send_text(&mut a, "from a").await;
    b.send(Message::binary(&b"from b"[..])).await.unwrap();
    for client in [&mut a, &mut b] {
        assert_eq!(next_data(client).await, Message::text("from a"));
        assert_eq!(next_data(client).await, Message::binary(&b"from b"[..]));
    }
    let page = metrics(&server).await;
    assert_eq!(
        sample(&page, "ringstream_ws_broadcast_sent_total", "/ws/broadcast"),
        2
    );
    assert_eq!(
        sample(
            &page,
            "ringstream_ws_broadcast_dropped_total",
            "/ws/broadcast"
        ),
        0
    );

    close(a).await;
    close(echo).await;
    metrics_until(&server, |page| {
        sample(page, "ringstream_ws_broadcast_subscribers", "/ws/broadcast") == 1
            && sample(page, "ringstream_ws_connections_open", "/ws/broadcast") == 1
            && sample(page, "ringstream_ws_connections_open", "/ws/echo") == 0
    })
    .await;
    close(b).await;
}

/// A client of `/ws/broadcast` that never reads: once its socket's
/// buffers are full it falls behind the ring and skips the oldest
/// messages, which `/metrics` counts, while a client that reads gets
/// every message; nothing is closed for lag under the drop-oldest policy.
#[tokio::test]
async fn a_broadcast_client_that_never_reads_is_counted_dropping() {
    let server = start_app(Config::default()).await;
    // A small receive buffer, so that the kernel holds little for it.
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let tcp = socket.connect(server.addr).await.unwrap();
    let url = format!("ws://{}/ws/broadcast", server.addr);
    let (stalled, response) = tokio_tungstenite::client_async(url, tcp).await.unwrap();
    assert_eq!(response.status(), 101);
    let mut reader = connect(&server, "/ws/broadcast").await;
    metrics_until(&server, |page| {
        sample(page, "ringstream_ws_broadcast_subscribers", "/ws/broadcast") == 2
    })
    .await;

    // 4 KiB messages (the route's largest) until the stalled client has
    // skipped some; the reader takes each back before sending the next.
    let payload: Vec<u8> = (0..4096).map(|i| (i % 251) as u8).collect();
    let mut sent = 0u64;
    let page = loop {
        for _ in 0..100 {
            reader.send(Message::binary(payload.clone())).await.unwrap();
            assert_eq!(
                next_data(&mut reader).await,
                Message::binary(payload.clone())
            );
            sent += 1;
        }
        let page = metrics(&server).await;
        if sample(
            &page,
            "ringstream_ws_broadcast_dropped_total",
            "/ws/broadcast",
        ) > 0
        {
            break page;
        }
        assert!(
            sent < 20_000,
            "nothing dropped after {sent} messages: {page}"
        );
    };
    assert_eq!(
        sample(&page, "ringstream_ws_broadcast_sent_total", "/ws/broadcast"),
        sent
    );
    assert_eq!(
        sample(
            &page,
            "ringstream_ws_broadcast_lag_closed_total",
            "/ws/broadcast"
        ),
        0
    );
    assert_eq!(
        sample(
            &page,
            "ringstream_ws_broadcast_subscribers",
            "/ws/broadcast"
        ),
        2
    );
    // The stalled client's drops grow with every message past the ring.
    let before = sample(
        &page,
        "ringstream_ws_broadcast_dropped_total",
        "/ws/broadcast",
    );
    for _ in 0..10 {
        reader.send(Message::binary(payload.clone())).await.unwrap();
        next_data(&mut reader).await;
    }
    let page = metrics(&server).await;
    assert_eq!(
        sample(
            &page,
            "ringstream_ws_broadcast_dropped_total",
            "/ws/broadcast"
        ),
        before + 10
    );
    drop(stalled);
    close(reader).await;
}
