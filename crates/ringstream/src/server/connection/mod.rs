//! One HTTP/1.1 connection, read top to bottom: [`Connection::serve_in_place`]
//! loops over requests and serves each in the order things happen on the
//! wire, in the loop's own future (a keep-alive connection makes no future
//! per request).
//!
//! The connection never parses or frames bytes itself: it asks the core
//! ([`ringstream_core::h1`]) what the bytes mean and what to send — the
//! head parser, the [`Exchange`] rules (keep-alive, `100 Continue`,
//! draining) and the body [`Encoder`](ringstream_core::h1::Encoder) — and
//! it moves bytes and awaits. Requests are served strictly one after
//! another, so pipelined responses go out in request order; while a service
//! runs, the connection feeds its request body (one read block at a time,
//! only when the body asks for more) and, once the response has started,
//! writes the response body with vectored writes that never copy its
//! `Bytes`.
//!
//! Each phase is a file, in the order of an exchange; each takes what it
//! works on as arguments and returns what the next one needs:
//!
//! 1. `head`: bytes in → request head → `http::Request`, under the idle
//!    and head deadlines ([`HeadReader`]);
//! 2. `body`: the request body, fed to the service as it asks
//!    ([`BodyPump`]);
//! 3. `service`: the service's future run to its response;
//! 4. `write`: the response head and body out, through the core's encoder;
//! 5. `close`: rejection, draining and the lingering close.
//!
//! Beside them: `trace` (spans and log lines), `field_names` (the request
//! field names the thread has seen lately) and `reuse` (emptied field maps
//! and lists kept by the thread).

mod body;
mod close;
mod field_names;
mod head;
mod reuse;
mod service;
mod trace;
mod write;

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::sync::Arc;
use std::time::Instant;

use ringstream_core::h1::{Exchange, Next};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;

use super::addr::ConnectionInfo;
use super::config::Config;
use super::metrics::Metrics;
use super::service::HttpService;
use super::slots::Slot;
use super::stop::StopSignal;
use super::upgrade::{self, Pending, UpgradedIo};
use crate::error::{Error, Timeout};
use crate::stream::Stream;
use body::BodyPump;
use head::{HeadOutcome, HeadReader};
use trace::{
    failure_status, log_access, protocol_version, record_response, request_span, LossyText,
};
use write::ResponseDate;

pub(crate) struct Connection<T, S> {
    stream: Stream<T>,
    service: S,
    config: Arc<Config>,
    metrics: Arc<Metrics>,
    shutdown: StopSignal,
    /// The parser, field list and deadline of phase 1.
    head: HeadReader,
    /// The `Date` of the responses, and when the last one was dated.
    date: ResponseDate,
    /// The ends of the connection, given to every request.
    info: Option<ConnectionInfo>,
    /// Boxes the transport for an upgraded connection; `None`: the
    /// transport cannot be handed over (it is not `Send + 'static`), and
    /// no upgrade is offered.
    upgrades: Option<fn(T) -> Box<dyn UpgradedIo>>,
}

/// Holds an upgraded connection's slot until the service drops it.
async fn wait_released(guard: Option<upgrade::UpgradedGuard>) {
    if let Some(mut guard) = guard {
        guard.released().await;
    }
}

/// How [`Connection::serve_in_place`] ended.
pub(crate) enum ConnectionEnd {
    /// The connection is closed (or given back to be closed).
    Closed,
    /// A `101` was written: the connection goes to the service.
    Upgraded(Pending),
    /// The client spoke the HTTP/2 preface: the connection goes to
    /// [`into_http2`](Connection::into_http2).
    #[cfg(feature = "http2")]
    Http2,
}

/// What follows a response.
enum AfterResponse {
    /// Another request may come.
    KeepAlive,
    /// The connection closes.
    Close,
    /// A `101` was written: the connection goes to the service.
    Upgrade(Pending),
}

impl<T, S> Connection<T, S>
where
    T: AsyncRead + AsyncWrite + Unpin,
    S: HttpService,
{
    pub(crate) fn new(
        io: T,
        service: S,
        config: Arc<Config>,
        metrics: Arc<Metrics>,
        shutdown: watch::Receiver<bool>,
        slot: Arc<Slot>,
    ) -> Self {
        Connection {
            stream: Stream::with_options(io, config.stream.clone()),
            service,
            head: HeadReader::new(&config),
            date: ResponseDate::new(config.server_header),
            config,
            metrics,
            shutdown: StopSignal::new(shutdown, slot),
            info: None,
            upgrades: None,
        }
    }

    /// Offers an upgrade to every request that asks for one: the transport
    /// can be handed over to the service.
    pub(crate) fn with_upgrades(mut self) -> Self
    where
        T: Send + 'static,
    {
        self.upgrades = Some(|io| Box::new(io));
        self
    }

    /// Gives every request `info` as an extension.
    pub(crate) fn with_info(mut self, info: ConnectionInfo) -> Self {
        self.info = Some(info);
        self
    }

    /// Serve requests until the peer closes, an error ends the connection,
    /// or the server shuts down; an upgraded connection is held here until
    /// the service lets it go.
    ///
    /// The connection is moved into the future once and served in place
    /// there: an `async fn` that took it by value would hold it twice (as
    /// its argument and as the binding it is moved into), and each future
    /// nested around [`serve_in_place`](Self::serve_in_place) is one more
    /// level every poll goes through.
    pub(crate) fn run(self) -> impl Future<Output = Result<(), Error>> {
        let mut conn = self;
        async move {
            let guard = match conn.serve_in_place().await? {
                ConnectionEnd::Closed => None,
                ConnectionEnd::Upgraded(pending) => conn.hand_over(pending),
                #[cfg(feature = "http2")]
                ConnectionEnd::Http2 => {
                    let (io, http2) = conn.into_http2();
                    // Boxed: only an HTTP/2 connection pays for its state.
                    Box::pin(crate::server::h2::serve_http2(io, http2)).await?;
                    None
                }
            };
            wait_released(guard).await;
            Ok(())
        }
    }

    /// Serves the connection where its caller keeps it (in its own
    /// future, which then holds it once), as [`run`](Self::run) does. An
    /// upgraded connection is then given to [`hand_over`](Self::hand_over).
    pub(crate) async fn serve_in_place(&mut self) -> Result<ConnectionEnd, Error> {
        self.head.await_first(&self.config);
        loop {
            // 1. Bytes in → a request head.
            self.head.start();
            let idle_since = self.date.dated_millis();
            let read = poll_fn(|cx| {
                let (stream, shutdown) = (&mut self.stream, &mut self.shutdown);
                self.head
                    .poll_read(cx, stream, shutdown, &self.config, idle_since)
            });
            let spans = match read.await {
                Ok(spans) => spans,
                Err(HeadOutcome::Closed) => break,
                // Idle with nothing unread: closing sends a plain FIN, and
                // the slot is given back at once for the client waiting.
                Err(HeadOutcome::Evicted) => return Ok(ConnectionEnd::Closed),
                Err(HeadOutcome::Reject(status, why)) => {
                    self.reject(status, &why).await;
                    break;
                }
                #[cfg(feature = "http2")]
                Err(HeadOutcome::Http2) => return Ok(ConnectionEnd::Http2),
            };
            self.metrics.record_request();
            // 2–5. The request served, its response sent: written out here,
            // in the loop's own future, rather than in a future made per
            // request.
            let served = 'exchange: {
                // The level first: with `INFO` off, one load.
                let started = (self.config.access_log
                    && tracing::level_enabled!(tracing::Level::INFO)
                    && tracing::enabled!(target: "ringstream::access", tracing::Level::INFO))
                .then(Instant::now);

                // 1. The head bytes → an `http::Request` sharing them, with its body.
                let head = self.stream.split_buffered(spans.head_len);
                let mut exchange = spans.exchange;
                // 2. The request body, fed by the pump from here on.
                let mut pump = BodyPump::new(&exchange, &self.config);
                let body = pump.body(&exchange);
                let info = self.info.as_ref().filter(|_| self.config.connection_info);
                let mut request = http::Request::new(body);
                if let Err((status, why)) =
                    self.head.build_request(&spans, &head, info, &mut request)
                {
                    drop(request);
                    self.reject(status, &why).await;
                    break 'exchange Ok(AfterResponse::Close);
                }
                // For log lines: the request line as it arrived (the request itself
                // shares these bytes, so keeping them costs nothing).
                let method = LossyText(head.get(spans.method.0..spans.method.0 + spans.method.1));
                let uri = LossyText(head.get(spans.target.0..spans.target.0 + spans.target.1));
                let version = protocol_version(request.version());
                let span = request_span(
                    self.info.as_ref(),
                    request.method(),
                    request.uri(),
                    request.version(),
                );
                // An upgrade is offered when the request asks for one, has no body
                // and the transport can be handed over.
                let mut upgrade = None;
                if exchange.is_upgrade() && pump.complete && self.upgrades.is_some() {
                    let (on_upgrade, pending) = upgrade::offer();
                    request.extensions_mut().insert(on_upgrade);
                    upgrade = Some(pending);
                }

                // 3. The service. It is called here, not in a helper future, so the
                // request and the response are not moved once more per exchange.
                let ready = poll_fn(|cx| self.service.poll_ready(cx))
                    .await
                    .map_err(|e| e.into().to_string());
                if let Err(e) = ready {
                    tracing::error!(error = %e, "service not ready");
                    self.reject(503, &"service not ready").await;
                    break 'exchange Ok(AfterResponse::Close);
                }
                // Pinned where it is made; dropped with this block, once it has
                // answered (as a future that holds something until then expects).
                let outcome = {
                    let future = pin!(self.service.call(request));
                    service::await_response(
                        &mut self.stream,
                        future,
                        &mut pump,
                        &mut exchange,
                        &span,
                    )
                    .await
                };
                let response = match outcome {
                    Ok(Ok(response)) => response,
                    failed => {
                        if let Some((status, why)) =
                            failure_status(failed, &method, &uri, self.config.access_log)
                        {
                            self.reject(status, &why).await;
                        }
                        break 'exchange Ok(AfterResponse::Close);
                    }
                };

                // 4. The response head, through the core: it decides the framing
                // and returns the body's encoder.
                let (mut parts, body) = response.into_parts();
                let mut length = http_body::Body::size_hint(&body).exact();
                // `OPTIONS *` that the service does not know: the server answers.
                let answered_here = exchange.answers_for_service(parts.status.as_u16());
                if answered_here {
                    parts.status = http::StatusCode::OK;
                    parts.headers.clear();
                    length = Some(0);
                }
                let status = parts.status.as_u16();
                let head_written = self.start_response(&mut parts, length, &mut exchange, &pump);
                drop(parts);
                let encoder = match head_written {
                    Ok(encoder) => encoder,
                    Err(e) => {
                        tracing::error!(%method, %uri, status, error = %e, "response head rejected");
                        self.reject(500, &"response head rejected").await;
                        break 'exchange Ok(AfterResponse::Close);
                    }
                };

                // 4. The response body, through the encoder.
                let written = if answered_here {
                    Ok(0)
                } else {
                    let body = pin!(body);
                    let timeout = self.config.write_timeout;
                    let stream = &mut self.stream;
                    match write::write_body(
                        stream,
                        timeout,
                        body,
                        encoder,
                        &mut pump,
                        &mut exchange,
                        &span,
                    )
                    .await
                    {
                        Ok(sent) if encoder.is_close_delimited() => {
                            write::flush_within_deadline(stream, timeout)
                                .await
                                .map(|()| sent)
                        }
                        written => written,
                    }
                };
                let bytes_sent = match written {
                    Ok(n) => n,
                    Err(e) => {
                        tracing::debug!(%method, %uri, status, error = %e, "response aborted");
                        break 'exchange Err(e);
                    }
                };

                // 5. Keep alive, drain what the service left unread, or close.
                let keep_alive =
                    match exchange.after_response(pump.complete, self.config.drain_limit) {
                        Next::KeepAlive => true,
                        Next::Close => false,
                        Next::Drain { limit } => {
                            let timeout = self.config.body_read_timeout;
                            close::drain(&mut self.stream, &mut pump, limit, timeout).await
                        }
                    };
                if !keep_alive || self.stream.buffered().is_empty() {
                    let flushed =
                        write::flush_within_deadline(&mut self.stream, self.config.write_timeout)
                            .await;
                    if let Err(e) = flushed {
                        break 'exchange Err(e);
                    }
                }
                record_response(&span, status, bytes_sent);
                if let Some(at) = started {
                    let _entered = span.enter();
                    let info = self.info.as_ref();
                    log_access(&method, &uri, version, info, status, bytes_sent, at);
                }
                Ok(match upgrade {
                    Some(pending) if status == 101 => AfterResponse::Upgrade(pending),
                    _ if keep_alive => AfterResponse::KeepAlive,
                    _ => AfterResponse::Close,
                })
            };
            match served {
                Ok(AfterResponse::KeepAlive) => {
                    // Fair between connections: a pipelining client whose
                    // next request is already buffered never waits on its
                    // socket (a read from the socket spends tokio's budget
                    // by itself), so each such request spends a unit of the
                    // task's budget and the task yields once it is gone.
                    if !self.stream.buffered().is_empty() {
                        tokio::task::consume_budget().await;
                    }
                    continue;
                }
                Ok(AfterResponse::Close) => break,
                Ok(AfterResponse::Upgrade(pending)) => return Ok(ConnectionEnd::Upgraded(pending)),
                Err(e) => {
                    // A client that stopped reading is not waited for again.
                    if matches!(e, Error::TimedOut(Timeout::ResponseWrite)) {
                        self.metrics.record_write_timeout();
                    } else {
                        let deadline = tokio::time::Instant::now() + self.config.write_timeout;
                        let _ = tokio::time::timeout_at(deadline, self.stream.close()).await;
                    }
                    return Err(e);
                }
            }
        }
        close::linger_close(&mut self.stream, self.config.write_timeout).await;
        Ok(ConnectionEnd::Closed)
    }

    /// Hands the connection to the service that upgraded it. The returned
    /// guard keeps its slot until the service drops it; dropping the guard
    /// (the task that keeps it ended at the shutdown deadline) cuts the
    /// upgraded connection off.
    pub(crate) fn hand_over(self, pending: Pending) -> Option<upgrade::UpgradedGuard> {
        let boxed = self.upgrades?;
        let stop = self.shutdown.receiver();
        // Nothing else of the connection is kept while it is upgraded.
        let Connection { stream, .. } = self;
        pending.complete(stream.map_io(boxed), stop)
    }

    /// The connection, recognised as HTTP/2, for
    /// [`serve_http2`](crate::server::h2::serve_http2): its transport with
    /// the bytes read so far put back in front, and what it is served
    /// with.
    #[cfg(feature = "http2")]
    pub(crate) fn into_http2(
        self,
    ) -> (
        crate::server::rewind::Rewind<T>,
        crate::server::h2::Http2Connection<S>,
    ) {
        let Connection {
            stream,
            service,
            config,
            metrics,
            mut shutdown,
            info,
            ..
        } = self;
        // The HTTP/2 connection may go on in a task of its own.
        shutdown.forget_waker();
        // A copy of the few bytes read (the preface, perhaps the first
        // frames): the read block goes back to the thread's pool with the
        // stream, not kept for the connection's life.
        let read = bytes::Bytes::copy_from_slice(stream.buffered());
        let io = crate::server::rewind::Rewind::new(read, stream.into_inner());
        let http2 = crate::server::h2::Http2Connection {
            service,
            config,
            metrics,
            shutdown,
            info,
        };
        (io, http2)
    }

    /// Everything before the response body: close when the server is
    /// stopping, invite a waiting client that the service still reads, write
    /// the head (`body_length`: the body's exact size, if known) and keep
    /// the response's field map for the next request.
    fn start_response(
        &mut self,
        parts: &mut http::response::Parts,
        body_length: Option<u64>,
        exchange: &mut Exchange,
        pump: &BodyPump,
    ) -> Result<ringstream_core::h1::Encoder, ringstream_core::Error> {
        let status = parts.status.as_u16();
        if self.shutdown.is_stopping() || self.config.drain.is_draining() {
            exchange.close();
        }
        if let Some(invitation) =
            exchange.continue_before_head(pump.state(), self.config.drain_limit)
        {
            self.stream.buffer_write(invitation);
        }
        let encoder = write::write_head(
            &mut self.stream,
            &mut self.date,
            exchange,
            status,
            &parts.headers,
            body_length,
        )?;
        reuse::give(&mut parts.headers);
        self.metrics.record_status(status);
        Ok(encoder)
    }

    /// Answers with a bare error status, sent within the head timeout, and
    /// `Connection: close` (phase 5); `why` goes to the access log.
    async fn reject(&mut self, status: u16, why: &(dyn std::fmt::Display + Sync)) {
        self.metrics.record_status(status);
        let date = self.date.now();
        close::write_rejection(&mut self.stream, status, &date);
        let deadline = tokio::time::Instant::now() + self.config.head_timeout;
        let _ = tokio::time::timeout_at(deadline, self.stream.flush()).await;
        close::log_rejection(status, why, self.config.access_log);
    }
}
