//! A server-sent events clock: every second the time goes out to every client
//! subscribed at `/clock`.
//!
//! ```text
//! cargo run -p ringstream --example sse_clock [ADDR]
//! curl -N http://127.0.0.1:PORT/clock
//! ```
//!
//! One [`Broadcaster`] encodes each tick once and shares it with all clients;
//! a client that stops reading skips ticks instead of holding the others
//! back. A reconnecting browser's `Last-Event-ID` resumes from the ticks
//! still retained. Ctrl-C stops the server.

use std::convert::Infallible;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::{Request, Response, StatusCode};
use http_body_util::{Either, Full};
use ringstream::server::{service_fn, Server};
use ringstream::sse::{last_event_id, Broadcaster, Event, EventStream, OverflowPolicy};
use ringstream::Incoming;

/// Ticks kept for slow or reconnecting clients.
const RETAINED_TICKS: usize = 60;

type Body = Either<EventStream, Full<bytes::Bytes>>;

#[tokio::main]
async fn main() -> Result<(), ringstream::Error> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".into());
    let server = Server::bind(addr.as_str()).await?;
    println!("SSE clock on http://{}/clock", server.local_addr()?);

    let broadcaster =
        Broadcaster::new(RETAINED_TICKS, OverflowPolicy::DropOldest).with_drop_reports(true);
    let ticker = broadcaster.clone();
    tokio::spawn(async move {
        let mut interval = tokio::time::interval(Duration::from_secs(1));
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            interval.tick().await;
            let secs = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            let (h, m, s) = (secs / 3600 % 24, secs / 60 % 60, secs % 60);
            ticker.send(
                Event::new()
                    .id(secs.to_string())
                    .event("tick")
                    .data(format!("{h:02}:{m:02}:{s:02} UTC")),
            );
        }
    });

    let service = service_fn(move |req: Request<Incoming>| {
        let response: Response<Body> = if req.uri().path() == "/clock" {
            broadcaster
                .subscribe(last_event_id(req.headers()))
                .into_http_response()
                .map(Either::Left)
        } else {
            let mut response = Response::new(Either::Right(Full::from("try /clock\n")));
            *response.status_mut() = StatusCode::NOT_FOUND;
            response
        };
        async move { Ok::<_, Infallible>(response) }
    });
    server
        .serve(service)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
}
