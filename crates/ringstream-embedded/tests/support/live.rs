//! The application of the long-lived scenarios of the loopback test: a
//! WebSocket echo, a server-sent event stream fed by a broadcaster, a
//! 1 MiB download; every other route is [`Demo`]'s.
//!
//! - `GET /ws`: a WebSocket session under [`Live::ws`] (its idle
//!   deadline), echoing every piece as it comes: a whole message as one
//!   frame, the pieces of a larger one as fragments.
//! - `GET /events`: an event stream forwarding [`Live::events`], with a
//!   keep-alive comment after [`Live::keep_alive`] idle; `503` when every
//!   subscriber place is taken.
//! - `GET /mib`: [`MIB`] bytes of [`payload_byte`], known length, written
//!   in 256-byte pieces.
//!
//! How each session or stream ended, and when, is kept in
//! [`Live::ws_ended`] and [`Live::sse_ended`] for the test to check.

use core::cell::Cell;

use embassy_time::{Duration, Instant};
use ringstream_embedded::embedded_io_async::{Read, Write};
use ringstream_embedded::http::{
    App, Error, Received, Request, Responder, Sent, Upgrade, WebSocketConfig,
};
use ringstream_embedded::sse::{Broadcaster, Ended, EventStream, OverflowPolicy, LAST_EVENT_ID};

use super::http_app::{payload_byte, Demo};

/// Length of `/mib` in bytes.
pub const MIB: usize = 1 << 20;

/// The ring of `/events`: 8 events, 4 KiB, 2 subscribers.
pub type Events = Broadcaster<8, 4096, 2>;

/// Longest event `/events` forwards, in bytes.
pub const SCRATCH: usize = 600;

/// How a WebSocket session or an event stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// By the rules: the client's Close echoed, or the broadcaster closed.
    Clean,
    /// A deadline: the idle WebSocket closed with 1001, or a write that
    /// stalled past `io_timeout`.
    TimedOut,
    /// The client left without a Close.
    Closed,
    /// The connection failed (a reset).
    Io,
    /// Anything else (a protocol violation, a misuse).
    Other,
}

impl End {
    fn of<E>(outcome: &Result<Sent, Error<E>>) -> End {
        match outcome {
            Ok(_) => End::Clean,
            Err(Error::TimedOut) => End::TimedOut,
            Err(Error::Closed) => End::Closed,
            Err(Error::Io(_)) => End::Io,
            Err(_) => End::Other,
        }
    }
}

/// The application.
pub struct Live {
    /// The routes of the other HTTP scenarios.
    pub demo: Demo,
    /// What `/events` forwards.
    pub events: Events,
    /// The settings of `/ws` sessions.
    pub ws: WebSocketConfig,
    /// The keep-alive interval of `/events`.
    pub keep_alive: Duration,
    /// How the last `/ws` session ended, and when.
    pub ws_ended: Cell<Option<(End, Instant)>>,
    /// How the last `/events` stream ended, and when.
    pub sse_ended: Cell<Option<(End, Instant)>>,
}

impl Live {
    pub fn new(ws_idle: Duration, keep_alive: Duration) -> Live {
        Live {
            demo: Demo::default(),
            events: Broadcaster::new(OverflowPolicy::DropOldest),
            ws: WebSocketConfig {
                idle_timeout: Some(ws_idle),
                ..WebSocketConfig::DEFAULT
            },
            keep_alive,
            ws_ended: Cell::new(None),
            sse_ended: Cell::new(None),
        }
    }

    async fn echo<IO: Read + Write>(
        &self,
        request: &Request<'_>,
        responder: &mut Responder<'_, IO>,
    ) -> Result<Sent, Error<IO::Error>> {
        let mut ws = match responder.accept_websocket(request, &self.ws).await? {
            Upgrade::Accepted(ws) => ws,
            Upgrade::Refused(sent) => return Ok(sent),
        };
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

    async fn stream<IO: Read + Write>(
        &self,
        request: &Request<'_>,
        responder: &mut Responder<'_, IO>,
    ) -> Result<Sent, Error<IO::Error>> {
        let Some(mut subscriber) = self.events.subscribe(request.field(LAST_EVENT_ID)) else {
            return responder.send(503, &[("retry-after", b"1")], b"").await;
        };
        let mut stream = EventStream::start(responder, &[])
            .await?
            .with_keep_alive(self.keep_alive);
        let mut scratch = [0u8; SCRATCH];
        match stream.forward(&mut subscriber, &mut scratch).await? {
            Ended::Closed | Ended::NoBody | Ended::Behind { .. } => stream.finish().await,
        }
    }
}

impl App for Live {
    async fn handle<IO: Read + Write>(
        &self,
        request: &Request<'_>,
        responder: &mut Responder<'_, IO>,
    ) -> Result<Sent, Error<IO::Error>> {
        match (request.method(), request.path()) {
            ("GET", "/ws") => {
                let outcome = self.echo(request, responder).await;
                self.ws_ended.set(Some((End::of(&outcome), Instant::now())));
                outcome
            }
            ("GET", "/events") => {
                let outcome = self.stream(request, responder).await;
                self.sse_ended
                    .set(Some((End::of(&outcome), Instant::now())));
                outcome
            }
            ("GET", "/mib") => {
                responder.start(200, &[], Some(MIB as u64)).await?;
                let mut piece = [0u8; 256];
                let mut sent = 0;
                while sent < MIB {
                    for (k, b) in piece.iter_mut().enumerate() {
                        *b = payload_byte(sent + k);
                    }
                    responder.write_all(&piece).await?;
                    sent += piece.len();
                }
                responder.finish().await
            }
            _ => self.demo.handle(request, responder).await,
        }
    }
}
