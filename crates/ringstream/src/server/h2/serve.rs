//! One HTTP/2 connection: [`serve_http2`] does the handshake, then
//! serves every stream in this one future, side by side, until the client
//! or the server ends the connection.
//!
//! The future is a struct whose [`poll`](ServeHttp2::poll) reads top to
//! bottom: the handshake; the server stopping or draining; the streams
//! being served; the service asked to be ready, then new streams taken
//! (all that have come, so their answers leave together); the idle
//! timeout and the keep-alive PING. An idle connection is this struct and
//! `h2`'s state alone — no `async` state machine with room for every
//! await — and it lives in a task of its own (see
//! `server::accepted`).
//!
//! `h2` owns the frames, HPACK, flow control and the flood defences; this
//! file only wires them to the service: a stream's request becomes a
//! `Request<Incoming>`, the service's response goes out through
//! [`respond`](super::respond).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use bytes::Bytes;
use futures_util::stream::{FuturesUnordered, StreamExt};
use h2::server::{Builder, Connection, Handshake, SendResponse};
use http::header::HeaderValue;
use http::StatusCode;
use ringstream_core::h1::DateCache;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::futures::OwnedNotified;
use tokio::sync::watch;
use tokio::time::{sleep_until, Instant as Deadline, Sleep, Timeout};

use super::respond::{send_status, ServerFieldValues};
use super::stream::{prepare, serve_stream, RequestLog, StreamEnd, TunnelOffer};
use crate::error::Error;
use crate::server::addr::ConnectionInfo;
use crate::server::config::Config;
use crate::server::metrics::Metrics;
use crate::server::service::HttpService;
use crate::server::slots::unix_millis;
use crate::server::stop::StopSignal;

/// What an HTTP/2 connection is served with: what the HTTP/1.1
/// connection it was recognised on had, or what the TLS handshake's task
/// was given.
pub(crate) struct Http2Connection<S> {
    pub(crate) service: S,
    pub(crate) config: Arc<Config>,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) shutdown: StopSignal,
    pub(crate) info: Option<ConnectionInfo>,
}

/// Serves HTTP/2 on `io`, whose first bytes are the client's preface,
/// until the client closes, the connection idles out, breaks a rule, or
/// the server stops (GOAWAY, then the open streams finish).
pub(crate) fn serve_http2<T, S>(
    io: T,
    connection: Http2Connection<S>,
) -> impl Future<Output = Result<(), Error>>
where
    T: AsyncRead + AsyncWrite + Unpin,
    S: HttpService,
{
    ServeHttp2::new(
        io,
        connection,
        serve_stream::<S::Future, S::ResponseBody, S::Error>,
    )
}

/// Where the connection is: its handshake (boxed: as large as the
/// connection's state, and over once it is done), or served. The served
/// connection is what an idle connection keeps: inline on purpose (a box
/// would add an allocation, not save memory).
#[allow(clippy::large_enum_variant)]
enum Phase<T> {
    Handshake(Pin<Box<Timeout<Handshake<T, Bytes>>>>),
    Serving(Connection<T, Bytes>),
}

/// Whether the service can take a stream.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Readiness {
    /// Not asked since its last call.
    Unknown,
    Ready,
    /// Said it cannot serve: the next stream is answered 503.
    Failed,
}

pin_project_lite::pin_project! {
    /// The future of [`serve_http2`]; `M` makes a stream's future (the
    /// function [`serve_stream`], named as a type parameter so the
    /// streams' futures can be held here without a box each).
    struct ServeHttp2<T, S, M, F> {
        phase: Phase<T>,
        service: S,
        readiness: Readiness,
        make_stream: M,
        streams: FuturesUnordered<Pin<Box<F>>>,
        config: Arc<Config>,
        metrics: Arc<Metrics>,
        shutdown: StopSignal,
        #[pin]
        drain: OwnedNotified,
        info: Option<ConnectionInfo>,
        dates: Dates,
        going_away: bool,
        resets: ResetCount,
        // The idle timeout and the keep-alive PING share one timer, set
        // to the nearer of the two.
        #[pin]
        timer: Sleep,
        idle_at: Deadline,
        ping: Option<h2::PingPong>,
        ping_at: Deadline,
        ping_sent: bool,
    }
}

/// What a stream's future is made of (the arguments of [`serve_stream`]).
type Tunnel = Option<(TunnelOffer, watch::Receiver<bool>)>;

impl<T, S, M, F> ServeHttp2<T, S, M, F>
where
    T: AsyncRead + AsyncWrite + Unpin,
    S: HttpService,
    M: FnMut(
        S::Future,
        SendResponse<Bytes>,
        RequestLog,
        Tunnel,
        ServerFieldValues,
        Arc<Config>,
        Arc<Metrics>,
    ) -> F,
    F: Future<Output = StreamEnd>,
{
    fn new(io: T, connection: Http2Connection<S>, make_stream: M) -> Self {
        let Http2Connection {
            service,
            config,
            metrics,
            shutdown,
            info,
        } = connection;
        let now = Deadline::now();
        let handshake = builder(&config).handshake::<_, Bytes>(io);
        let handshake = Box::pin(tokio::time::timeout_at(
            now + config.head_timeout,
            handshake,
        ));
        ServeHttp2 {
            phase: Phase::Handshake(handshake),
            service,
            readiness: Readiness::Unknown,
            make_stream,
            streams: FuturesUnordered::new(),
            drain: config.drain.started(),
            dates: Dates::new(config.server_header),
            going_away: false,
            resets: ResetCount::default(),
            timer: sleep_until(now + config.idle_timeout),
            idle_at: now + config.idle_timeout,
            ping: None,
            ping_at: now
                + config
                    .http2
                    .keep_alive_interval
                    .unwrap_or(config.idle_timeout),
            ping_sent: false,
            config,
            metrics,
            shutdown,
            info,
        }
    }
}

impl<T, S, M, F> Future for ServeHttp2<T, S, M, F>
where
    T: AsyncRead + AsyncWrite + Unpin,
    S: HttpService,
    M: FnMut(
        S::Future,
        SendResponse<Bytes>,
        RequestLog,
        Tunnel,
        ServerFieldValues,
        Arc<Config>,
        Arc<Metrics>,
    ) -> F,
    F: Future<Output = StreamEnd>,
{
    type Output = Result<(), Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        let mut this = self.project();
        // 1. The handshake: the client's SETTINGS, under the head deadline.
        let conn = match this.phase {
            Phase::Serving(conn) => conn,
            Phase::Handshake(handshake) => {
                let conn = match std::task::ready!(handshake.as_mut().poll(cx)) {
                    Ok(Ok(conn)) => conn,
                    Ok(Err(e)) => return Poll::Ready(Err(Error::Http2(e))),
                    // A client that sends no SETTINGS in time is closed
                    // quietly.
                    Err(_) => return Poll::Ready(Ok(())),
                };
                *this.phase = Phase::Serving(conn);
                let Phase::Serving(conn) = this.phase else {
                    unreachable!("just set")
                };
                this.metrics.record_http2_connection();
                // No stream open: the slot may go to a new client at the cap.
                this.shutdown.slot().set_idle(unix_millis());
                let now = Deadline::now();
                *this.idle_at = now + this.config.idle_timeout;
                if this.config.http2.keep_alive_interval.is_some() {
                    *this.ping = conn.ping_pong();
                }
                conn
            }
        };
        loop {
            // 2. The server stops or drains, or this idle connection's slot
            //    went to a new client: no new streams, the open ones finish.
            if !*this.going_away
                && (this.config.drain.is_draining()
                    || this.drain.as_mut().poll(cx).is_ready()
                    || this.shutdown.poll_stopping(cx).is_ready())
            {
                conn.graceful_shutdown();
                *this.going_away = true;
            }
            // 3. The streams being served: polled before the connection, so
            //    what they queue goes out in step 4's write.
            while let Poll::Ready(Some(end)) = this.streams.poll_next_unpin(cx) {
                if end == StreamEnd::ResetByClient
                    && this.resets.too_many(this.config.http2.max_client_resets)
                {
                    // Streams opened and reset faster than any client needs
                    // (CVE-2023-44487): the connection goes.
                    tracing::debug!("HTTP/2 client resets too many streams: GOAWAY");
                    conn.abrupt_shutdown(h2::Reason::ENHANCE_YOUR_CALM);
                    *this.going_away = true;
                }
                if this.streams.is_empty() {
                    *this.idle_at = Deadline::now() + this.config.idle_timeout;
                    this.shutdown.slot().set_idle(unix_millis());
                }
            }
            // 4. New streams, each once the service is ready for it; all
            //    that have come are taken before any is served (taking one
            //    writes what is queued), so their answers leave together.
            let mut taken = false;
            loop {
                if *this.readiness == Readiness::Unknown {
                    match this.service.poll_ready(cx) {
                        Poll::Ready(Ok(())) => *this.readiness = Readiness::Ready,
                        Poll::Ready(Err(e)) => {
                            let e: crate::error::BoxError = e.into();
                            tracing::error!(error = %e, "service not ready");
                            *this.readiness = Readiness::Failed;
                        }
                        Poll::Pending => break,
                    }
                }
                let (request, respond) = match conn.poll_accept(cx) {
                    Poll::Ready(Some(Ok(stream))) => stream,
                    Poll::Ready(Some(Err(e))) => {
                        tracing::debug!(error = %e, "HTTP/2 connection failed");
                        return Poll::Ready(Err(Error::Http2(e)));
                    }
                    Poll::Ready(None) => return Poll::Ready(Ok(())),
                    Poll::Pending => break,
                };
                taken = true;
                this.metrics.record_http2_request();
                if this.streams.is_empty() && !this.shutdown.slot().set_busy() && !*this.going_away
                {
                    // The slot was promised to a new client just before
                    // this stream came: it is served, and the connection
                    // ends after it.
                    conn.graceful_shutdown();
                    *this.going_away = true;
                }
                let fields = this.dates.now();
                let info = this.info.as_ref();
                let Some(stream) = prepare(request, respond, this.config, info, &fields) else {
                    continue;
                };
                if *this.readiness == Readiness::Failed {
                    send_status(stream.respond, StatusCode::SERVICE_UNAVAILABLE, &fields);
                } else {
                    let future = this.service.call(stream.request);
                    let tunnel = stream.tunnel.map(|offer| (offer, this.shutdown.receiver()));
                    let served = (this.make_stream)(
                        future,
                        stream.respond,
                        stream.log,
                        tunnel,
                        fields,
                        this.config.clone(),
                        this.metrics.clone(),
                    );
                    this.streams.push(Box::pin(served));
                }
                *this.readiness = Readiness::Unknown;
            }
            if taken {
                // The new streams are served before anything else.
                continue;
            }
            if *this.readiness == Readiness::Unknown {
                // The service is not ready: the connection is driven (its
                // frames read and written) without a stream taken.
                match conn.poll_closed(cx) {
                    Poll::Ready(Ok(())) => return Poll::Ready(Ok(())),
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(Error::Http2(e))),
                    Poll::Pending => {}
                }
            }
            // 5. The keep-alive PING's answer.
            if *this.ping_sent {
                if let Some(ping) = this.ping.as_mut() {
                    match ping.poll_pong(cx) {
                        Poll::Ready(Ok(_)) => *this.ping_sent = false,
                        Poll::Ready(Err(_)) => return Poll::Ready(Ok(())),
                        Poll::Pending => {}
                    }
                }
            }
            // 6. The timer: the idle timeout (no stream open) or the next
            //    PING, whichever comes first.
            let idle = this.streams.is_empty() && !*this.going_away;
            let next = match (idle, this.ping.is_some()) {
                (true, true) => (*this.idle_at).min(*this.ping_at),
                (true, false) => *this.idle_at,
                (false, true) => *this.ping_at,
                (false, false) => return Poll::Pending,
            };
            if this.timer.deadline() != next {
                this.timer.as_mut().reset(next);
            }
            if this.timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            let now = Deadline::now();
            if idle && now >= *this.idle_at {
                conn.graceful_shutdown();
                *this.going_away = true;
            }
            if this.ping.is_some() && now >= *this.ping_at {
                if *this.ping_sent {
                    tracing::debug!("HTTP/2 keep-alive PING unanswered: connection closed");
                    return Poll::Ready(Ok(()));
                }
                if let Some(ping) = this.ping.as_mut() {
                    *this.ping_sent = ping.send_ping(h2::Ping::opaque()).is_ok();
                }
                let every = this
                    .config
                    .http2
                    .keep_alive_interval
                    .unwrap_or(this.config.idle_timeout);
                *this.ping_at = now + every;
            }
        }
    }
}

/// The `h2` server with the configured limits.
fn builder(config: &Config) -> Builder {
    let options = &config.http2;
    let mut builder = Builder::new();
    builder
        .max_concurrent_streams(options.max_concurrent_streams)
        .initial_window_size(options.stream_window)
        .initial_connection_window_size(options.connection_window)
        .max_frame_size(options.max_frame_size)
        .max_header_list_size(u32::try_from(config.limits.max_head_len).unwrap_or(u32::MAX))
        .max_send_buffer_size(options.stream_window as usize)
        .max_pending_accept_reset_streams(options.max_pending_reset_streams)
        .max_local_error_reset_streams(Some(options.max_error_resets))
        // Extended CONNECT (RFC 8441): WebSocket over HTTP/2.
        .enable_connect_protocol();
    builder
}

/// Streams the client reset while their service ran, in the current
/// second.
#[derive(Default)]
struct ResetCount {
    second: Option<Instant>,
    count: u32,
}

impl ResetCount {
    /// Counts one more; whether that is more than `max` in a second.
    fn too_many(&mut self, max: u32) -> bool {
        let now = Instant::now();
        match self.second {
            Some(start) if now.duration_since(start).as_secs() < 1 => self.count += 1,
            _ => {
                self.second = Some(now);
                self.count = 1;
            }
        }
        self.count > max
    }
}

/// The `date` value of a connection's responses, made once a second, and
/// its `server` value.
struct Dates {
    cache: DateCache,
    secs: u64,
    date: HeaderValue,
    server: Option<HeaderValue>,
}

impl Dates {
    fn new(server_header: bool) -> Dates {
        Dates {
            cache: DateCache::new(),
            secs: u64::MAX,
            date: HeaderValue::from_static(""),
            server: server_header.then(|| HeaderValue::from_static("ringstream")),
        }
    }

    /// The fields of a response made now.
    fn now(&mut self) -> ServerFieldValues {
        let secs = unix_millis() / 1000;
        if secs != self.secs {
            self.secs = secs;
            let bytes = Bytes::copy_from_slice(self.cache.update(secs));
            // An HTTP-date is visible ASCII and spaces.
            self.date = HeaderValue::from_maybe_shared(bytes)
                .unwrap_or_else(|_| HeaderValue::from_static(""));
        }
        ServerFieldValues {
            date: self.date.clone(),
            server: self.server.clone(),
        }
    }
}
