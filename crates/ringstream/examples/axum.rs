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
//! ```

use axum::body::Body;
use axum::extract::Path;
use axum::routing::{get, post};
use axum::Router;
use ringstream::server::Server;
use ringstream::sse::{Broadcaster, Event, OverflowPolicy};
use ringstream::ResponseStream;

/// The application: plain axum handlers, plus ringstream's bodies used as
/// axum bodies: a `ResponseStream` page, an SSE `EventStream`, and the
/// request's own `Incoming` body streamed back.
pub fn router() -> Router {
    Router::new()
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
