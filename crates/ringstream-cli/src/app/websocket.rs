//! The demo's WebSockets: `/ws/echo`, `/ws/live` and `/ws/broadcast`,
//! and their counters ([`WebSockets`]).
//!
//! `/ws/echo` sends every text and binary message back as it came (up to
//! 16 MiB a message).
//!
//! `/ws/live` pushes a text message once a second (at first; the page may
//! change the pace), the first at once:
//!
//! ```json
//! {"type":"stats","seq":1,"interval_ms":1000,
//!  "stats":{"requests":12,"requests_per_second":3.0,"bytes_in":1520,"bytes_out":48211,
//!           "connections_open":2,"errors":0,"rss_bytes":9371648},
//!  "live":{"timestamp":1750000000,"power":41234.5,"yield_day":268.024,"inverters":90}}
//! ```
//!
//! `stats` is the data of an `/events` `stats` event (its
//! `requests_per_second` measured since the previous push), `live` the
//! `total` of `/api/livedata` at that moment. It takes commands as JSON text
//! messages, each answered with one text message:
//!
//! | command | answer |
//! |---|---|
//! | `{"cmd":"ping"}`, with an optional `"id"` of any JSON value | `{"type":"pong","id":…,"time_ms":…}` (the id as given, the server's clock in unix milliseconds) |
//! | `{"cmd":"interval","ms":N}`, `N` in 200..=10000 | `{"type":"interval","ms":N}`; the next push comes `N` ms later, the others every `N` ms |
//! | anything else: an unknown command, an `ms` out of bounds, JSON that is not an object with a `cmd`, text that is not JSON, a binary message | `{"type":"error","error":"…"}` (with `"cmd"` when there was one); the connection stays open |
//!
//! A client that sends more than [`MAX_COMMANDS_PER_SECOND`] commands
//! within a second is closed with 1008 (policy violation); a command over
//! [`MAX_COMMAND_LEN`] bytes is closed with 1009 (message too big).
//!
//! `/ws/broadcast` sends every text and binary message a client sends to
//! every client connected to it, the sender included, through one
//! [`ws::Broadcaster`]: the frame is encoded once for all of them, and the
//! last [`BROADCAST_HISTORY`] frames are kept in one ring that every client
//! reads at its own pace. A client more than that many frames behind skips
//! the oldest ones ([`OverflowPolicy::DropOldest`], counted in `/metrics`);
//! one that takes nothing for the write timeout (30 s) is closed. A
//! message over [`MAX_BROADCAST_LEN`] bytes closes the connection with
//! 1009. The frames go out uncompressed (they are encoded once for every
//! client), so the route does not negotiate permessage-deflate.
//!
//! [`WebSockets`] counts the connections open on each route and writes
//! them, with the broadcaster's counters, into `/metrics`.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http::{header, HeaderValue, Request, Response};
use ringstream::sse::OverflowPolicy;
use ringstream::ws::{self, CloseCode, Message, WebSocket, WebSocketUpgrade};
use ringstream::Incoming;
use serde_json::{json, Value};
use tokio::time::{Instant, MissedTickBehavior};

use super::dashboard::{stats_json, Rate};
use super::prometheus::{self, BroadcastCounters};
use super::{App, AppBody, LiveTotals};

/// The push interval of `/ws/live` until the client asks for another.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);

/// The push intervals a client may ask for, in milliseconds.
pub const INTERVAL_MS: std::ops::RangeInclusive<u64> = 200..=10_000;

/// More commands than this within one second close `/ws/live` with 1008.
pub const MAX_COMMANDS_PER_SECOND: u32 = 20;

/// The largest command `/ws/live` takes, in bytes; a larger message
/// closes it with 1009.
pub const MAX_COMMAND_LEN: usize = 4096;

/// How long a connection closed for flooding waits for the client's Close.
const CLOSE_LINGER: Duration = Duration::from_secs(1);

/// Frames `/ws/broadcast` keeps for clients that fall behind: one that is
/// more than this many behind skips the oldest.
pub const BROADCAST_HISTORY: usize = 256;

/// The largest message `/ws/broadcast` takes, in bytes; a larger one
/// closes the connection with 1009. With [`BROADCAST_HISTORY`] it bounds
/// the ring at 1 MiB of frames.
pub const MAX_BROADCAST_LEN: usize = 4096;

/// The demo's WebSocket routes, in the order of [`WebSockets`]' counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WsRoute {
    Echo,
    Live,
    Broadcast,
}

impl WsRoute {
    const ALL: [WsRoute; 3] = [WsRoute::Echo, WsRoute::Live, WsRoute::Broadcast];

    fn path(self) -> &'static str {
        match self {
            WsRoute::Echo => "/ws/echo",
            WsRoute::Live => "/ws/live",
            WsRoute::Broadcast => "/ws/broadcast",
        }
    }
}

/// What the demo's WebSockets share: the broadcaster of `/ws/broadcast`
/// and the number of connections open on each route.
#[derive(Debug)]
pub struct WebSockets {
    broadcast: ws::Broadcaster,
    open: [AtomicUsize; 3],
}

impl Default for WebSockets {
    fn default() -> Self {
        WebSockets::new()
    }
}

impl WebSockets {
    /// No connection yet, and an empty `/ws/broadcast` ring of
    /// [`BROADCAST_HISTORY`] frames.
    pub fn new() -> WebSockets {
        WebSockets {
            broadcast: ws::Broadcaster::new(BROADCAST_HISTORY, OverflowPolicy::DropOldest),
            open: Default::default(),
        }
    }

    /// The broadcaster of `/ws/broadcast`.
    pub fn broadcaster(&self) -> &ws::Broadcaster {
        &self.broadcast
    }

    /// WebSocket connections open now on `path` (0 for a path that is no
    /// WebSocket route).
    pub fn open(&self, path: &str) -> usize {
        WsRoute::ALL
            .iter()
            .position(|route| route.path() == path)
            .map_or(0, |i| self.open[i].load(Relaxed))
    }

    /// Counts a connection open on `route` until the guard is dropped.
    fn opened(self: &Arc<Self>, route: WsRoute) -> OpenConnection {
        self.open[route as usize].fetch_add(1, Relaxed);
        OpenConnection {
            sockets: self.clone(),
            route,
        }
    }

    /// The connections open on each route and the counters of the
    /// broadcaster, as Prometheus text.
    ///
    /// # Errors
    ///
    /// Only what `out` returns.
    pub fn write_prometheus<W: fmt::Write>(&self, out: &mut W) -> fmt::Result {
        prometheus::write_broadcasters(
            out,
            "ringstream_ws_broadcast",
            "WebSocket",
            &[(
                WsRoute::Broadcast.path(),
                BroadcastCounters::of_ws(&self.broadcast),
            )],
        )?;
        prometheus::write_family(
            out,
            "ringstream_ws_connections_open",
            "WebSocket connections open now, by route.",
            "gauge",
            WsRoute::ALL
                .iter()
                .map(|&route| (route.path(), self.open[route as usize].load(Relaxed) as u64)),
        )
    }
}

/// One connection counted open on its route while it lives.
struct OpenConnection {
    sockets: Arc<WebSockets>,
    route: WsRoute,
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.sockets.open[self.route as usize].fetch_sub(1, Relaxed);
    }
}

/// The answer to a request for `/ws/echo`: `101` and an echo, or the
/// handshake's refusal.
pub(super) fn echo(mut req: Request<Incoming>, sockets: &Arc<WebSockets>) -> Response<AppBody> {
    let upgrade = match WebSocketUpgrade::from_request(&mut req) {
        Ok(upgrade) => upgrade,
        Err(refused) => return into_app(refused.into_response()),
    };
    let sockets = sockets.clone();
    into_app(upgrade.on_upgrade(move |mut socket| async move {
        let _open = sockets.opened(WsRoute::Echo);
        loop {
            let message = match socket.recv().await {
                Some(Ok(message)) => message,
                None => break,
                Some(Err(e)) => {
                    tracing::debug!(error = %e, "/ws/echo ended");
                    break;
                }
            };
            // Once the server is shutting down, the socket has sent its
            // Close and refuses to send: it goes on receiving until the
            // client's Close.
            if message.is_data() && socket.send(message).await.is_err() && !socket.is_stopping() {
                break;
            }
        }
    }))
}

/// The answer to a request for `/ws/live`: `101` and the pushes, or the
/// handshake's refusal.
pub(super) fn live(mut req: Request<Incoming>, app: App) -> Response<AppBody> {
    let upgrade = match WebSocketUpgrade::from_request(&mut req) {
        Ok(upgrade) => upgrade,
        Err(refused) => return into_app(refused.into_response()),
    };
    let config = ws::Config {
        limits: ws::Limits {
            max_message_len: MAX_COMMAND_LEN,
            max_frame_len: MAX_COMMAND_LEN,
        },
        ..ws::Config::default()
    };
    into_app(
        upgrade
            .config(config)
            .on_upgrade(move |socket| serve_live(socket, app)),
    )
}

/// The answer to a request for `/ws/broadcast`: `101` and the broadcast,
/// or the handshake's refusal.
pub(super) fn broadcast(
    mut req: Request<Incoming>,
    sockets: &Arc<WebSockets>,
) -> Response<AppBody> {
    let upgrade = match WebSocketUpgrade::from_request(&mut req) {
        Ok(upgrade) => upgrade,
        Err(refused) => return into_app(refused.into_response()),
    };
    let config = ws::Config {
        limits: ws::Limits {
            max_message_len: MAX_BROADCAST_LEN,
            max_frame_len: MAX_BROADCAST_LEN,
        },
        // The frames are encoded once for every client, uncompressed.
        deflate: None,
        ..ws::Config::default()
    };
    let sockets = sockets.clone();
    into_app(
        upgrade
            .config(config)
            .on_upgrade(move |socket| serve_broadcast(socket, sockets)),
    )
}

/// One `/ws/broadcast` connection until it closes: what the client sends
/// goes to the broadcaster, what the broadcaster has goes to the client.
async fn serve_broadcast(mut socket: WebSocket, sockets: Arc<WebSockets>) {
    let _open = sockets.opened(WsRoute::Broadcast);
    let broadcaster = sockets.broadcaster();
    let mut subscription = broadcaster.subscribe();
    loop {
        tokio::select! {
            received = socket.recv() => match received {
                Some(Ok(message)) => {
                    if message.is_data() {
                        broadcaster.send(&message);
                    }
                }
                None => break,
                Some(Err(e)) => {
                    tracing::debug!(error = %e, "/ws/broadcast ended");
                    break;
                }
            },
            frame = subscription.recv(), if !socket.is_stopping() => {
                // `None`: the broadcaster is closed.
                let Some(frame) = frame else { break };
                // Once the server is shutting down, the socket has sent its
                // Close and refuses to send: it goes on receiving until the
                // client's Close.
                if socket.send_frame(&frame).await.is_err() && !socket.is_stopping() {
                    break;
                }
            }
        }
    }
}

/// A handshake's response as one of the app's (a refusal's reason as
/// plain text).
fn into_app(response: Response<String>) -> Response<AppBody> {
    let (mut parts, body) = response.into_parts();
    let body = if body.is_empty() {
        AppBody::Full(None)
    } else {
        parts.headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        AppBody::Full(Some(Bytes::from(body)))
    };
    Response::from_parts(parts, body)
}

/// The pushes and commands of one `/ws/live` connection, until it closes.
async fn serve_live(mut socket: WebSocket, app: App) {
    let _open = app.inner.websockets.opened(WsRoute::Live);
    let metrics = app.inner.metrics.clone();
    let mut period = DEFAULT_INTERVAL;
    let mut ticker = pushes_every(period, Instant::now());
    let mut rate = Rate::new(&metrics);
    let mut seq = 0u64;
    let mut flood = Flood::default();
    loop {
        let outgoing = tokio::select! {
            received = socket.recv() => {
                let message = match received {
                    Some(Ok(message)) => message,
                    None => break,
                    Some(Err(e)) => {
                        tracing::debug!(error = %e, "/ws/live ended");
                        break;
                    }
                };
                if !message.is_data() {
                    // Pings are answered by the socket, a Close too.
                    continue;
                }
                if flood.too_many(Instant::now()) {
                    let reason = format!("more than {MAX_COMMANDS_PER_SECOND} commands a second");
                    let _ = socket
                        .close(CloseCode::POLICY_VIOLATION, &reason, CLOSE_LINGER)
                        .await;
                    break;
                }
                let (reply, interval) = command(&message);
                if let Some(new) = interval {
                    period = new;
                    ticker = pushes_every(period, Instant::now() + period);
                }
                reply.to_string()
            }
            _ = ticker.tick(), if !socket.is_stopping() => {
                seq += 1;
                let per_second = rate.sample(&metrics);
                format!(
                    "{{\"type\":\"stats\",\"seq\":{seq},\"interval_ms\":{},\"stats\":{},\"live\":{}}}",
                    period.as_millis(),
                    stats_json(&metrics, per_second),
                    LiveTotals::at(app.now()).to_json(),
                )
            }
        };
        // Once the server is shutting down, the socket has sent its Close
        // and refuses to send more: it goes on receiving until the
        // client's Close.
        if socket.send(Message::text(outgoing)).await.is_err() && !socket.is_stopping() {
            break;
        }
    }
}

/// A ticker of pushes every `period`, the first at `start`.
fn pushes_every(period: Duration, start: Instant) -> tokio::time::Interval {
    let mut ticker = tokio::time::interval_at(start, period);
    ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
    ticker
}

/// The answer to one message from a `/ws/live` client, and the new push
/// interval if it asked for one.
fn command(message: &Message) -> (Value, Option<Duration>) {
    let Some(text) = message.as_text() else {
        return (error(None, "commands are JSON text messages"), None);
    };
    let command: Value = match serde_json::from_str(text) {
        Ok(command) => command,
        Err(e) => return (error(None, &format!("invalid JSON: {e}")), None),
    };
    let Some(cmd) = command.get("cmd").and_then(Value::as_str) else {
        return (
            error(None, "a command is a JSON object with a string \"cmd\""),
            None,
        );
    };
    match cmd {
        "ping" => {
            let mut pong = json!({"type": "pong", "time_ms": unix_millis()});
            if let Some(id) = command.get("id") {
                pong["id"] = id.clone();
            }
            (pong, None)
        }
        "interval" => match command.get("ms").and_then(Value::as_u64) {
            Some(ms) if INTERVAL_MS.contains(&ms) => (
                json!({"type": "interval", "ms": ms}),
                Some(Duration::from_millis(ms)),
            ),
            _ => (
                error(
                    Some(cmd),
                    &format!(
                        "\"ms\" must be a whole number of milliseconds in {}..={}",
                        INTERVAL_MS.start(),
                        INTERVAL_MS.end()
                    ),
                ),
                None,
            ),
        },
        _ => (
            error(
                Some(cmd),
                &format!("unknown command {cmd:?}; known: \"ping\", \"interval\""),
            ),
            None,
        ),
    }
}

/// An error answer.
fn error(cmd: Option<&str>, message: &str) -> Value {
    let mut error = json!({"type": "error", "error": message});
    if let Some(cmd) = cmd {
        error["cmd"] = Value::from(cmd);
    }
    error
}

/// The server's clock in unix milliseconds.
fn unix_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Counts a client's commands in windows of one second, each from the
/// first command after the previous window.
#[derive(Debug, Default)]
struct Flood {
    window_start: Option<Instant>,
    count: u32,
}

impl Flood {
    /// Counts one command at `now`: whether it is one too many.
    fn too_many(&mut self, now: Instant) -> bool {
        match self.window_start {
            Some(start) if now.duration_since(start) < Duration::from_secs(1) => {}
            _ => {
                self.window_start = Some(now);
                self.count = 0;
            }
        }
        self.count += 1;
        self.count > MAX_COMMANDS_PER_SECOND
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(text: &str) -> (Value, Option<Duration>) {
        command(&Message::text(text))
    }

    #[test]
    fn ping_is_answered_with_its_id() {
        let (reply, interval) = answer(r#"{"cmd":"ping","id":{"n":7}}"#);
        assert_eq!(reply["type"], "pong");
        assert_eq!(reply["id"], json!({"n": 7}));
        assert!(reply["time_ms"].as_u64().unwrap() > 1_700_000_000_000);
        assert_eq!(interval, None);
        let (reply, _) = answer(r#"{"cmd":"ping"}"#);
        assert_eq!(reply.get("id"), None);
    }

    #[test]
    fn interval_takes_whole_milliseconds_within_bounds() {
        for ms in [200, 1000, 10_000] {
            let (reply, interval) = answer(&format!(r#"{{"cmd":"interval","ms":{ms}}}"#));
            assert_eq!(reply, json!({"type": "interval", "ms": ms}));
            assert_eq!(interval, Some(Duration::from_millis(ms)));
        }
        for bad in [
            r#"{"cmd":"interval","ms":199}"#,
            r#"{"cmd":"interval","ms":10001}"#,
            r#"{"cmd":"interval","ms":-5}"#,
            r#"{"cmd":"interval","ms":500.5}"#,
            r#"{"cmd":"interval","ms":"500"}"#,
            r#"{"cmd":"interval"}"#,
        ] {
            let (reply, interval) = answer(bad);
            assert_eq!(reply["type"], "error", "{bad}");
            assert_eq!(reply["cmd"], "interval", "{bad}");
            assert_eq!(interval, None, "{bad}");
        }
    }

    #[test]
    fn anything_else_is_an_error() {
        for bad in [
            "not json",
            "",
            "[1,2]",
            r#"{"cmd":5}"#,
            r#"{"command":"ping"}"#,
            r#"{"cmd":"reboot"}"#,
        ] {
            let (reply, interval) = answer(bad);
            assert_eq!(reply["type"], "error", "{bad}");
            assert!(reply["error"].as_str().is_some_and(|e| !e.is_empty()));
            assert_eq!(interval, None);
        }
        let (reply, _) = answer(r#"{"cmd":"reboot"}"#);
        assert_eq!(reply["cmd"], "reboot");
        let (reply, _) = command(&Message::binary(&b"{\"cmd\":\"ping\"}"[..]));
        assert_eq!(reply["type"], "error");
    }

    #[test]
    fn more_than_the_limit_within_a_second_is_a_flood() {
        let start = Instant::now();
        let mut flood = Flood::default();
        assert!(!flood.too_many(start));
        for _ in 1..MAX_COMMANDS_PER_SECOND {
            assert!(!flood.too_many(start + Duration::from_millis(900)));
        }
        assert!(flood.too_many(start + Duration::from_millis(950)));
        // A new second, a new count.
        let mut flood = Flood::default();
        for i in 0..3 * MAX_COMMANDS_PER_SECOND {
            let at = start + Duration::from_millis(u64::from(i) * 60);
            assert!(!flood.too_many(at), "command {i}");
        }
    }
}
