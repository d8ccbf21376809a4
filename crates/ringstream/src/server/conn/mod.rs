//! One HTTP/1.1 connection: head → body → service → encode → keep-alive.
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
//! - `read`: the request head, under the idle and head deadlines;
//! - `dispatch`: the service call, and the request body fed to it;
//! - `write`: the response head and body;
//! - `close`: rejection, draining and the lingering close;
//! - `names`: the request field names the thread has seen lately.

mod close;
mod dispatch;
mod names;
mod read;
mod spare;
mod trace;
mod write;

use std::future::poll_fn;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use http_body::Body;
use ringstream_core::h1::{DateCache, HeadParser, Next};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;
use tokio::time::{sleep_until, Sleep};

use super::metrics::Metrics;
use super::service::HttpService;
use super::slots::Slot;
use super::stop::StopSignal;
use super::upgrade::{self, Pending, UpgradedIo};
use super::{Config, ConnectionInfo};
use crate::error::{Error, Timeout};
use crate::stream::Stream;
use read::{HeadOutcome, HeadSpans, Span};
use trace::{failure_status, log_access, record_response, request_span, Shown};

pub(crate) struct Connection<T, S> {
    stream: Stream<T>,
    service: S,
    config: Arc<Config>,
    metrics: Arc<Metrics>,
    shutdown: StopSignal,
    parser: HeadParser,
    fields: Vec<(Span, Span)>,
    date: DateCache,
    /// The idle and head-read deadline of this connection.
    timer: Pin<Box<Sleep>>,
    /// No request has been read yet: the first one is awaited under the
    /// head deadline set at the start.
    awaiting_first: bool,
    /// The ends of the connection, given to every request.
    info: Option<ConnectionInfo>,
    /// When the last response was dated, in milliseconds since the Unix
    /// epoch: the time the connection went idle.
    dated_millis: u64,
    /// Boxes the transport for an upgraded connection; `None`: the
    /// transport cannot be handed over (it is not `Send + 'static`), and
    /// no upgrade is offered.
    upgrades: Option<fn(T) -> Box<dyn UpgradedIo>>,
}

/// Holds an upgraded connection's slot until the service drops it.
async fn wait_released(hold: Option<upgrade::Hold>) {
    if let Some(mut hold) = hold {
        hold.released().await;
    }
}

/// What follows an exchange.
/// How [`Connection::serve_in_place`] ended.
pub(crate) enum Served {
    /// The connection is closed (or given back to be closed).
    Ended,
    /// A `101` was written: the connection goes to the service.
    Upgraded(Pending),
}

enum After {
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
            parser: HeadParser::new(config.limits),
            config,
            metrics,
            shutdown: StopSignal::new(shutdown, slot),
            fields: Vec::new(),
            date: DateCache::new(),
            timer: Box::pin(sleep_until(tokio::time::Instant::now())),
            awaiting_first: true,
            info: None,
            dated_millis: 0,
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
    pub(crate) async fn run(self) -> Result<(), Error> {
        let hold = self.serve().await?;
        wait_released(hold).await;
        Ok(())
    }

    /// As [`run`](Self::run), but an upgraded connection is returned as
    /// its [`Hold`](upgrade::Hold) at once: the caller keeps the slot with
    /// a task far smaller than this one.
    pub(crate) async fn serve(self) -> Result<Option<upgrade::Hold>, Error> {
        let mut conn = self;
        match conn.serve_in_place().await? {
            Served::Ended => Ok(None),
            Served::Upgraded(pending) => Ok(conn.hand_over(pending)),
        }
    }

    /// [`serve`](Self::serve) on a connection its caller keeps in its own
    /// future, which then holds it once: an `async fn` that takes it by
    /// value holds it twice (as its argument and as the binding it is
    /// moved into). An upgraded connection is then given to
    /// [`hand_over`](Self::hand_over).
    pub(crate) async fn serve_in_place(&mut self) -> Result<Served, Error> {
        // A new connection is given the head timeout, not the idle timeout,
        // to send its first request: a socket that connects and stays
        // silent holds a slot no longer than a slow head would.
        let first_deadline = tokio::time::Instant::now() + self.config.head_timeout;
        self.timer.as_mut().reset(first_deadline);
        self.awaiting_first = true;
        loop {
            let spans = match self.read_head().await {
                Ok(spans) => spans,
                Err(HeadOutcome::Closed) => break,
                // Idle with nothing unread: closing sends a plain FIN, and
                // the slot is given back at once for the client waiting.
                Err(HeadOutcome::Evicted) => return Ok(Served::Ended),
                Err(HeadOutcome::Reject(status, why)) => {
                    self.reject(status, &why).await;
                    break;
                }
            };
            self.awaiting_first = false;
            self.metrics.record_request();
            match self.exchange(spans).await {
                Ok(After::KeepAlive) => {
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
                Ok(After::Close) => break,
                Ok(After::Upgrade(pending)) => return Ok(Served::Upgraded(pending)),
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
        self.linger_close().await;
        Ok(Served::Ended)
    }

    /// Hands the connection to the service that upgraded it. The returned
    /// hold keeps its slot until the service drops it; dropping the hold
    /// (the task that keeps it ended at the shutdown deadline) cuts the
    /// upgraded connection off.
    pub(crate) fn hand_over(self, pending: Pending) -> Option<upgrade::Hold> {
        let boxed = self.upgrades?;
        let stop = self.shutdown.receiver();
        // Nothing else of the connection is kept while it is upgraded.
        let Connection { stream, .. } = self;
        pending.complete(stream.map_io(boxed), stop)
    }

    /// Serve one request.
    async fn exchange(&mut self, spans: HeadSpans) -> Result<After, Error> {
        let started = (self.config.access_log
            && tracing::enabled!(target: "ringstream::access", tracing::Level::INFO))
        .then(Instant::now);
        let head = self.stream.split_buffered(spans.head_len);
        let request = match self.build_request(&spans, &head) {
            Ok(request) => request,
            Err((status, why)) => {
                self.reject(status, &why).await;
                return Ok(After::Close);
            }
        };
        // For log lines: the request line as it arrived (the request itself
        // shares these bytes, so keeping them costs nothing).
        let method = Shown(head.get(spans.method.0..spans.method.0 + spans.method.1));
        let uri = Shown(head.get(spans.target.0..spans.target.0 + spans.target.1));
        let span = request_span(self.info.as_ref(), request.method(), request.uri());
        let mut exchange = spans.exchange;
        let (body, mut pump) = self.body_for(&exchange);
        let mut request = request.map(|()| body);
        // An upgrade is offered when the request asks for one, has no body
        // and the transport can be handed over.
        let mut upgrade = None;
        if exchange.is_upgrade() && pump.complete && self.upgrades.is_some() {
            let (on_upgrade, pending) = upgrade::offer();
            request.extensions_mut().insert(on_upgrade);
            upgrade = Some(pending);
        }

        // The service is called here, not in a helper future, so the request
        // and the response are not moved once more per exchange.
        let ready = poll_fn(|cx| self.service.poll_ready(cx))
            .await
            .map_err(|e| e.into().to_string());
        if let Err(e) = ready {
            tracing::error!(error = %e, "service not ready");
            self.reject(503, &"service not ready").await;
            return Ok(After::Close);
        }
        let future = self.service.call(request);
        let outcome = self
            .await_response(future, &mut pump, &mut exchange, &span)
            .await;
        let response = match outcome {
            Ok(Ok(response)) => response,
            failed => {
                if let Some((status, why)) =
                    failure_status(failed, &method, &uri, self.config.access_log)
                {
                    self.reject(status, &why).await;
                }
                return Ok(After::Close);
            }
        };
        let (mut parts, body) = response.into_parts();
        let mut length = body.size_hint().exact();
        // `OPTIONS *` that the service does not know: the server answers.
        let answered_here = exchange.answers_for_service(parts.status.as_u16());
        if answered_here {
            parts.status = http::StatusCode::OK;
            parts.headers.clear();
            length = Some(0);
        }
        let status = parts.status.as_u16();
        let encoder = match self.start_response(parts, length, &mut exchange, &pump) {
            Ok(encoder) => encoder,
            Err(e) => {
                tracing::error!(%method, %uri, status, error = %e, "response head rejected");
                self.reject(500, &"response head rejected").await;
                return Ok(After::Close);
            }
        };
        let written = if answered_here {
            Ok(0)
        } else {
            self.write_body(body, encoder, &mut pump, &mut exchange, &span)
                .await
        };
        let bytes_sent = match written {
            Ok(n) => n,
            Err(e) => {
                tracing::debug!(%method, %uri, status, error = %e, "response aborted");
                return Err(e);
            }
        };

        let keep_alive = match exchange.after_response(pump.complete, self.config.drain_limit) {
            Next::KeepAlive => true,
            Next::Close => false,
            Next::Drain { limit } => self.drain(&mut pump, limit).await,
        };
        if !keep_alive || self.stream.buffered().is_empty() {
            self.flush_within_deadline().await?;
        }
        record_response(&span, status, bytes_sent);
        if let Some(at) = started {
            let _entered = span.enter();
            log_access(&method, &uri, self.info.as_ref(), status, bytes_sent, at);
        }
        Ok(match upgrade {
            Some(pending) if status == 101 => After::Upgrade(pending),
            _ if keep_alive => After::KeepAlive,
            _ => After::Close,
        })
    }

    /// Everything before the response body: close when the server is
    /// stopping, invite a waiting client that the service still reads, write
    /// the head (`body_length`: the body's exact size, if known) and keep
    /// the response's field map for the next request.
    fn start_response(
        &mut self,
        parts: http::response::Parts,
        body_length: Option<u64>,
        exchange: &mut ringstream_core::h1::Exchange,
        pump: &dispatch::BodyPump,
    ) -> Result<ringstream_core::h1::Encoder, ringstream_core::Error> {
        let status = parts.status.as_u16();
        if self.shutdown.is_stopping() {
            exchange.close();
        }
        if let Some(invitation) =
            exchange.continue_before_head(pump.state(), self.config.drain_limit)
        {
            self.stream.buffer_write(invitation);
        }
        let encoder = self.write_head(exchange, status, &parts.headers, body_length)?;
        spare::give(parts.headers);
        self.metrics.record_status(status);
        Ok(encoder)
    }
}
