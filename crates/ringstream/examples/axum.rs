//! An axum `Router` served by ringstream's server, unchanged.
//!
//! Run with `cargo run -p ringstream --example axum`, then:
//!
//! ```text
//! curl http://127.0.0.1:3000/hello/world
//! curl -d 'some text' http://127.0.0.1:3000/count
//! curl http://127.0.0.1:3000/stream
//! curl -N http://127.0.0.1:3000/ticks
//! curl -d 'echo me' http://127.0.0.1:3000/echo
//! curl http://127.0.0.1:3000/whoami
//! printf 'one\ntwo\nthree\n' | curl --data-binary @- http://127.0.0.1:3000/lines
//! websocat ws://127.0.0.1:3000/ws/echo
//! ```
//!
//! Needs the `axum` feature (on for the workspace's tests and examples).

use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Path};
use axum::routing::{get, post};
use axum::Router;
use ringstream::server::Server;
use ringstream::sse::{Broadcaster, Event, EventStream, OverflowPolicy};
use ringstream::{Incoming, ResponseStream};

/// The client's address, from axum's `ConnectInfo` (no
/// `into_make_service_with_connect_info` needed on ringstream).
async fn whoami(ConnectInfo(peer): ConnectInfo<SocketAddr>) -> String {
    format!("you are {peer}\n")
}

/// Reads the body line by line with ringstream's `gets` (each line that
/// arrived in one piece is handed over without a copy) and answers with a
/// numbered list, as a `ResponseStream` returned directly.
async fn lines(mut body: Incoming) -> Result<ResponseStream, ringstream::Error> {
    let mut out = ResponseStream::buffered();
    let mut n = 0;
    while let Some(line) = body.gets(64 * 1024).await? {
        n += 1;
        let text = String::from_utf8_lossy(&line);
        std::fmt::Write::write_fmt(&mut out, format_args!("{n}: {}\n", text.trim_end()))
            .expect("a buffered body takes any text");
    }
    Ok(out)
}

/// A WebSocket echo, with ringstream's `WebSocketUpgrade` as the extractor
/// (it works as axum's own does).
async fn ws_echo(ws: ringstream::ws::WebSocketUpgrade) -> http::Response<String> {
    ws.on_upgrade(|mut socket| async move {
        while let Some(Ok(message)) = socket.recv().await {
            if message.is_data() && socket.send(message).await.is_err() {
                break;
            }
        }
    })
}

/// Three events, as an `EventStream` returned directly.
async fn ticks() -> EventStream {
    let events = Broadcaster::new(8, OverflowPolicy::DropOldest);
    let stream = events.subscribe(None);
    for i in 1..=3 {
        events.send(Event::new().id(i.to_string()).data(format!("tick {i}")));
    }
    // Dropping the last broadcaster ends the stream after the queued events.
    drop(events);
    stream
}

/// The application: plain axum handlers, plus ringstream's bodies used as
/// axum bodies: a `ResponseStream` page, an SSE `EventStream`, the
/// request's own `Incoming` body streamed back, the body read line by line
/// (under a 1 MiB `DefaultBodyLimit`) and the client's address.
pub fn router() -> Router {
    Router::new()
        .route("/whoami", get(whoami))
        .route(
            "/lines",
            post(lines).layer(DefaultBodyLimit::max(1024 * 1024)),
        )
        .route("/events", get(ticks))
        .route("/ws/echo", get(ws_echo))
        .route(
            "/hello/{name}",
            get(|Path(name): Path<String>| async move { format!("hello, {name}\n") }),
        )
        .route(
            "/count",
            post(|body: axum::body::Bytes| async move { format!("{} bytes\n", body.len()) }),
        )
        .route(
            "/stream",
            get(|| async {
                let mut page = ResponseStream::buffered();
                for i in 0..100 {
                    std::fmt::Write::write_fmt(&mut page, format_args!("line {i}\n")).unwrap();
                }
                Body::new(page)
            }),
        )
        .route(
            "/ticks",
            get(|| async {
                let events = Broadcaster::new(8, OverflowPolicy::DropOldest);
                let stream = events.subscribe(None);
                for i in 1..=3 {
                    events.send(Event::new().id(i.to_string()).data(format!("tick {i}")));
                }
                // Dropping the last broadcaster ends the stream after the
                // queued events.
                drop(events);
                ([("content-type", "text/event-stream")], Body::new(stream))
            }),
        )
        .route(
            "/echo",
            post(|request: axum::extract::Request| async move { Body::new(request.into_body()) }),
        )
        .route("/echo-incoming", post(|body: Incoming| async move { body }))
}

#[tokio::main]
async fn main() -> Result<(), ringstream::Error> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3000".into());
    let server = Server::bind(&addr).await?;
    println!("axum on ringstream: http://{}", server.local_addr()?);
    server.serve(router()).await
}
