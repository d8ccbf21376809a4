//! The seed's demo app (`examples/demo/app.rs`, served on the host by
//! `examples/demo.rs`) over tokio sockets: `/api/livedata` parsed as JSON,
//! its size, its 90 inverters and one formatter run per line; the
//! dashboard with its ETag and 304; the first `/events` event and the
//! first `/ws/live` push after a tick, and their end when the demo closes;
//! 404. Each test runs under the counting allocator of `tokio_tcp.rs`:
//! serving the demo allocates nothing.

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::websocket::{frame, open, read_message};
use super::{connect, dechunk, read_to_close, request, split_head, with_app};

#[path = "../../examples/demo/app.rs"]
pub mod app;

use app::{Demo, LiveTotals, DASHBOARD, INVERTERS, LINES};

/// A moment in daylight (12:00 UTC), so most inverters produce.
const NOON: u64 = 1_765_108_800;

#[tokio::test(flavor = "current_thread")]
async fn livedata_is_40_kb_of_json_printed_once_per_line() {
    with_app(Demo::new(NOON), |port, demo| async move {
        let response = request(
            port,
            b"GET /api/livedata HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n",
        )
        .await;
        let (head, rest) = split_head(&response);
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
        assert!(
            head.contains("content-type: application/json\r\n"),
            "{head}"
        );
        assert!(head.contains("transfer-encoding: chunked\r\n"), "{head}");
        let (body, _) = dechunk(rest);
        assert!(
            (35_000..=45_000).contains(&body.len()),
            "{} bytes",
            body.len()
        );
        let json: serde_json::Value = serde_json::from_slice(&body).expect("valid JSON");
        assert_eq!(json["timestamp"], NOON);
        assert_eq!(json["inverters"].as_array().unwrap().len(), INVERTERS);
        assert_eq!(json["total"]["inverters"], INVERTERS);
        assert_eq!(json["inverters"][89]["name"], "Inverter 90 (roof 3)");
        assert_eq!(body.iter().filter(|&&b| b == b'\n').count(), LINES);
        // The wire is what the same lines print into a string.
        let mut printed = String::new();
        app::write_livedata(&mut printed, NOON).unwrap();
        assert_eq!(std::str::from_utf8(&body).unwrap(), printed);
        // One `write!` per line, each line's formatter run once.
        assert_eq!(demo.formatter_runs.get(), LINES);
    })
    .await;
}

#[test]
fn the_no_std_cosine_matches_std() {
    for step in 0..=1000 {
        let x = f64::from(step) * std::f64::consts::TAU / 1000.0;
        assert!((app::cos(x) - x.cos()).abs() < 1e-12, "cos({x})");
    }
}

#[tokio::test(flavor = "current_thread")]
async fn dashboard_has_an_etag_and_answers_304() {
    with_app(Demo::new(NOON), |port, _| async move {
        let response = request(
            port,
            b"GET / HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n",
        )
        .await;
        let (head, body) = split_head(&response);
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
        assert!(head.contains("content-type: text/html; charset=utf-8\r\n"));
        assert!(head.contains(&format!("etag: {}\r\n", DASHBOARD.etag())));
        assert_eq!(body, DASHBOARD.body());
        let again = format!(
            "GET / HTTP/1.1\r\nHost: device\r\nIf-None-Match: {}\r\nConnection: close\r\n\r\n",
            DASHBOARD.etag()
        );
        let response = request(port, again.as_bytes()).await;
        let (head, body) = split_head(&response);
        assert!(head.starts_with("HTTP/1.1 304 "), "{head}");
        assert!(body.is_empty());
    })
    .await;
}

#[tokio::test(flavor = "current_thread")]
async fn events_stream_the_totals_of_each_tick() {
    with_app(Demo::new(NOON), |port, demo| async move {
        let mut stream = connect(port).await;
        stream
            .write_all(b"GET /events HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut wire = Vec::new();
        while !wire.ends_with(b"\r\n\r\n") {
            wire.push(stream.read_u8().await.expect("the stream's head"));
        }
        let head = String::from_utf8(wire).unwrap();
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
        assert!(
            head.contains("content-type: text/event-stream\r\n"),
            "{head}"
        );
        // Subscribed before its head was sent: the next tick reaches it.
        demo.tick(NOON + 1);
        let expected = format!("data: {}\n\n", LiveTotals::at(NOON + 1));
        let mut wire = Vec::new();
        while !String::from_utf8_lossy(&wire).contains(&expected) {
            let mut buf = [0u8; 256];
            let n = stream.read(&mut buf).await.unwrap();
            assert!(n > 0, "the stream ended early: {wire:?}");
            wire.extend_from_slice(&buf[..n]);
        }
        // Closing the demo ends the stream with the chunked body's end.
        demo.close();
        wire.extend_from_slice(&read_to_close(&mut stream).await);
        let (body, _) = dechunk(&wire);
        assert_eq!(String::from_utf8(body).unwrap(), expected);
    })
    .await;
}

#[tokio::test(flavor = "current_thread")]
async fn ws_live_pushes_the_totals_of_each_tick() {
    with_app(Demo::new(NOON), |port, demo| async move {
        let mut stream = open(port, "/ws/live").await;
        // The session subscribes right after its 101; wait for it.
        while demo.subscribers() == 0 {
            tokio::task::yield_now().await;
        }
        demo.tick(NOON + 2);
        let (opcode, payload, _) = read_message(&mut stream).await;
        assert_eq!(opcode, 1, "a text message");
        let text = String::from_utf8(payload).unwrap();
        assert_eq!(text, LiveTotals::at(NOON + 2).to_string());
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(json["inverters"], INVERTERS);
        // Closing the demo ends the session with 1001; the client's
        // Close answers it and the server closes the connection.
        demo.close();
        let (opcode, payload, _) = read_message(&mut stream).await;
        assert_eq!(opcode, 8, "a close frame");
        assert_eq!(u16::from_be_bytes([payload[0], payload[1]]), 1001);
        stream
            .write_all(&frame(8, true, &1001u16.to_be_bytes(), true))
            .await
            .unwrap();
        assert!(read_to_close(&mut stream).await.is_empty());
    })
    .await;
}

#[tokio::test(flavor = "current_thread")]
async fn other_paths_get_404() {
    with_app(Demo::new(NOON), |port, _| async move {
        let response = request(
            port,
            b"GET /api/nothing HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n",
        )
        .await;
        assert!(response.starts_with(b"HTTP/1.1 404 Not Found\r\n"));
    })
    .await;
}
