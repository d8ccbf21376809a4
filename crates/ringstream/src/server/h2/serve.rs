//! One HTTP/2 connection, read top to bottom: [`serve_http2`] does the
//! handshake, then loops over what happens next — the server stops, a
//! stream finishes, a new stream arrives, the connection idles out — and
//! serves every stream in this task, side by side, until the client or
//! the server ends the connection.
//!
//! `h2` owns the frames, HPACK, flow control and the flood defences; this
//! file only wires them to the service: a stream's request becomes a
//! `Request<Incoming>`, the service's response goes out through
//! [`respond`](super::respond).

use std::future::poll_fn;
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Instant;

use bytes::Bytes;
use futures_util::stream::{FuturesUnordered, StreamExt};
use h2::server::Builder;
use http::header::HeaderValue;
use http::StatusCode;
use ringstream_core::h1::DateCache;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::{sleep_until, Instant as Deadline};

use super::respond::{send_status, ServerFieldValues};
use super::stream::{prepare, serve_stream, StreamEnd};
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
pub(crate) async fn serve_http2<T, S>(io: T, connection: Http2Connection<S>) -> Result<(), Error>
where
    T: AsyncRead + AsyncWrite + Unpin,
    S: HttpService,
{
    let Http2Connection {
        mut service,
        config,
        metrics,
        mut shutdown,
        info,
    } = connection;
    let handshake = builder(&config).handshake::<_, Bytes>(io);
    let deadline = Deadline::now() + config.head_timeout;
    let mut conn = match tokio::time::timeout_at(deadline, handshake).await {
        Ok(Ok(conn)) => conn,
        Ok(Err(e)) => return Err(Error::Http2(e)),
        // A client that sends no SETTINGS in time is closed quietly.
        Err(_) => return Ok(()),
    };
    metrics.record_http2_connection();
    // No stream open: the slot may go to a new client at the cap.
    shutdown.slot().set_idle(unix_millis());
    let mut dates = Dates::new(config.server_header);
    // Each stream's future boxed: the set's own stub entry is sized by
    // the future it holds, and would cost an idle connection ~3 KB.
    let mut streams = FuturesUnordered::new();
    let mut idle = pin!(sleep_until(Deadline::now() + config.idle_timeout));
    let mut going_away = false;
    let mut resets = ResetCount::default();
    // Keep-alive: a PING every interval, and the connection closed when
    // one goes unanswered for as long.
    let interval = config.http2.keep_alive_interval;
    let mut ping_pong = interval.and_then(|_| conn.ping_pong());
    let ping_every = interval.unwrap_or(config.idle_timeout);
    let mut ping_due = pin!(sleep_until(Deadline::now() + ping_every));
    let mut ping_sent = false;
    loop {
        tokio::select! {
            biased;
            () = config.drain.started(), if !going_away => {
                // Draining: no new streams here, the open ones finish.
                conn.graceful_shutdown();
                going_away = true;
            }
            () = poll_fn(|cx| shutdown.poll_stopping(cx)), if !going_away => {
                // The server stops, or this idle connection's slot went to
                // a new client: no new streams, the open ones finish.
                conn.graceful_shutdown();
                going_away = true;
            }
            Some(end) = streams.next(), if !streams.is_empty() => {
                if end == StreamEnd::ResetByClient && resets.too_many(config.http2.max_client_resets) {
                    // Streams opened and reset faster than any client
                    // needs (CVE-2023-44487): the connection goes.
                    tracing::debug!("HTTP/2 client resets too many streams: GOAWAY");
                    conn.abrupt_shutdown(h2::Reason::ENHANCE_YOUR_CALM);
                    going_away = true;
                }
                if streams.is_empty() {
                    idle.as_mut().reset(Deadline::now() + config.idle_timeout);
                    shutdown.slot().set_idle(unix_millis());
                }
            }
            accepted = conn.accept() => {
                let mut next = accepted;
                loop {
                    let (request, respond) = match next {
                        Some(Ok(stream)) => stream,
                        Some(Err(e)) => {
                            tracing::debug!(error = %e, "HTTP/2 connection failed");
                            return Err(Error::Http2(e));
                        }
                        None => return Ok(()),
                    };
                    metrics.record_http2_request();
                    if streams.is_empty() && !shutdown.slot().set_busy() && !going_away {
                        // The slot was promised to a new client just
                        // before this stream came: it is served, and the
                        // connection ends after it.
                        conn.graceful_shutdown();
                        going_away = true;
                    }
                    let fields = dates.now();
                    if let Some(stream) = prepare(request, respond, &config, info.as_ref(), &fields) {
                        let ready = poll_fn(|cx| service.poll_ready(cx))
                            .await
                            .map_err(|e| e.into().to_string());
                        match ready {
                            Ok(()) => {
                                let future = service.call(stream.request);
                                let tunnel = stream.tunnel.map(|offer| (offer, shutdown.receiver()));
                                streams.push(Box::pin(serve_stream(future, stream.respond, stream.log, tunnel, fields, &config, &metrics)));
                            }
                            Err(e) => {
                                tracing::error!(error = %e, "service not ready");
                                send_status(stream.respond, StatusCode::SERVICE_UNAVAILABLE, &fields);
                            }
                        }
                    }
                    // The streams that came with it are taken before any
                    // is served (taking one writes what is queued), so
                    // their responses leave together.
                    match poll_fn(|cx| Poll::Ready(conn.poll_accept(cx))).await {
                        Poll::Ready(more) => next = more,
                        Poll::Pending => break,
                    }
                }
            }
            () = &mut idle, if streams.is_empty() && !going_away => {
                conn.graceful_shutdown();
                going_away = true;
            }
            pong = poll_fn(|cx| poll_pong(ping_pong.as_mut(), cx)), if ping_sent => {
                if pong.is_err() {
                    return Ok(());
                }
                ping_sent = false;
            }
            () = &mut ping_due, if ping_pong.is_some() => {
                if ping_sent {
                    tracing::debug!("HTTP/2 keep-alive PING unanswered: connection closed");
                    return Ok(());
                }
                if let Some(ping_pong) = ping_pong.as_mut() {
                    ping_sent = ping_pong.send_ping(h2::Ping::opaque()).is_ok();
                }
                ping_due.as_mut().reset(Deadline::now() + ping_every);
            }
        }
    }
}

/// The answer to the keep-alive PING (pending without one).
fn poll_pong(
    ping_pong: Option<&mut h2::PingPong>,
    cx: &mut std::task::Context<'_>,
) -> std::task::Poll<Result<h2::Pong, h2::Error>> {
    match ping_pong {
        Some(ping_pong) => ping_pong.poll_pong(cx),
        None => std::task::Poll::Pending,
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
